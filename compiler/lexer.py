"""The Rz lexer: source text to tokens, with Python-style INDENT/DEDENT for blocks.

Tokens: NUM (decimal or 0x hex, 0 .. 2^32-1), ID, STR ("..." with \\n \\t \\0 \\\\ \\" escapes),
OP (operators and punctuation), KW (if else while return print), NEWLINE, INDENT, DEDENT, EOF.
`//` starts a comment. Blank and comment-only lines are ignored. Inside ( ) [ ] { } newlines and
indentation are ignored, so long argument lists and array initialisers may span lines. A tab in
indentation advances to the next multiple of 8 columns.

Names and numbers are ASCII (docs/rz.md): a name is a letter or '_' then letters, digits and '_',
at most MAX_NAME characters, so that it is a valid S2 assembly label as it stands. Any other
character outside strings and comments is an error at its line:col. String characters are
U+0000..U+00FF: print writes each one as one byte (trap #2 prints the low 8 bits).
"""
from __future__ import annotations

import string
from dataclasses import dataclass

from s2mc.common.errors import excerpt

from .errors import CompileError

KEYWORDS = {"if", "else", "while", "return", "print"}
DIGITS = frozenset(string.digits)
HEX_DIGITS = frozenset(string.hexdigits)
NAME_START = frozenset(string.ascii_letters + "_")
NAME_CHARS = NAME_START | DIGITS
MAX_NAME = 64                 # keeps labels readable and every message that quotes two names short
MAX_STRING_CHAR = 0xFF
OPERATORS_2 = {"<<", ">>", "<=", ">=", "==", "!=", "&&", "||"}
OPERATORS_1 = set("+-*/%&|^~!<>=()[]{},")
ESCAPES = {"n": "\n", "t": "\t", "0": "\0", "\\": "\\", '"': '"', "r": "\r"}
NUM_MAX = (1 << 32) - 1


@dataclass(frozen=True)
class Token:
    kind: str       # NUM ID STR OP KW NEWLINE INDENT DEDENT EOF
    value: object   # int for NUM, str otherwise
    line: int
    col: int

    def __str__(self) -> str:
        if self.kind in ("OP", "KW", "ID"):
            return f"'{self.value}'"
        if self.kind == "NUM":
            return f"number {self.value}"
        if self.kind == "STR":
            return "a string"
        return {"NEWLINE": "end of line", "INDENT": "indentation", "DEDENT": "end of block",
                "EOF": "end of file"}[self.kind]


def shown(c: str) -> str:
    """A character as an error message quotes it: its code point, and itself if printable."""
    return f"'{c}' (U+{ord(c):04X})" if c.isprintable() and c != "'" else f"U+{ord(c):04X}"


def _number(text: str, hex_: bool) -> int | None:
    """The value of a literal's digits, or None when they are not all digits; absurdly long
    numbers come back as 2^32 (out of range) rather than reach int()."""
    digits = text[2:] if hex_ else text
    if not digits or not set(digits) <= (HEX_DIGITS if hex_ else DIGITS):
        return None
    significant = digits.lstrip("0")
    if len(significant) > (8 if hex_ else 10):
        return NUM_MAX + 1
    return int(significant or "0", 16 if hex_ else 10)


def tokenize(source: str, filename: str = "<input>") -> list[Token]:
    """The whole token list of `source`; raises CompileError on a lexical error."""
    toks: list[Token] = []
    indents = [0]
    depth = 0                  # nesting of ( [ {
    opened: list[tuple[str, int, int]] = []
    line, i, n = 1, 0, len(source)
    at_line_start = True

    def err(ln: int, col: int, msg: str) -> CompileError:
        return CompileError(filename, ln, col, msg)

    line_start = 0
    while i < n:
        if at_line_start and depth == 0:
            # measure indentation of this physical line
            width, j = 0, i
            while j < n and source[j] in " \t":
                width = (width // 8 + 1) * 8 if source[j] == "\t" else width + 1
                j += 1
            if j >= n or source[j] in "\r\n" or source.startswith("//", j):
                # blank or comment-only line: skip to end of line
                while j < n and source[j] != "\n":
                    j += 1
                i = j + 1
                line += 1
                line_start = i
                continue
            col = j - line_start + 1
            if width > indents[-1]:
                indents.append(width)
                toks.append(Token("INDENT", width, line, col))
            elif width < indents[-1]:
                while width < indents[-1]:
                    indents.pop()
                    toks.append(Token("DEDENT", width, line, col))
                if width != indents[-1]:
                    raise err(line, col, "bad indentation: this line does not line up with any "
                                         "enclosing block")
            i = j
            at_line_start = False
        c = source[i]
        col = i - line_start + 1
        if c == "\n":
            if depth == 0:
                toks.append(Token("NEWLINE", "\n", line, col))
                at_line_start = True
            i += 1
            line += 1
            line_start = i
            continue
        if c in " \t\r":
            i += 1
            continue
        if source.startswith("//", i):
            while i < n and source[i] != "\n":
                i += 1
            continue
        if c in DIGITS:
            j = i + 1
            while j < n and source[j] in NAME_CHARS:
                j += 1
            text = source[i:j]
            hex_ = text[:2] in ("0x", "0X")
            value = _number(text, hex_)
            if value is None:
                raise err(line, col, f"bad {'hex ' * hex_}number '{excerpt(text)}'")
            if value > NUM_MAX:
                raise err(line, col, f"number {excerpt(text, 20)} is out of range (the largest is "
                                     "4294967295 = 0xFFFFFFFF; numbers are 32-bit)")
            toks.append(Token("NUM", value, line, col))
            i = j
            continue
        if c in NAME_START:
            j = i + 1
            while j < n and source[j] in NAME_CHARS:
                j += 1
            word = source[i:j]
            if len(word) > MAX_NAME:
                raise err(line, col, f"name '{word[:20]}...' is too long ({len(word)} "
                                     f"characters; at most {MAX_NAME})")
            toks.append(Token("KW" if word in KEYWORDS else "ID", word, line, col))
            i = j
            continue
        if c == '"':
            j, chars = i + 1, []
            while True:
                if j >= n or source[j] == "\n":
                    raise err(line, col, "unterminated string (a string must end with \" on the "
                                         "same line)")
                ch = source[j]
                if ch == '"':
                    break
                if ch == "\\":
                    esc = source[j + 1] if j + 1 < n else ""
                    if esc in ("", "\n"):
                        j += 1                 # a backslash at the end of the line
                        continue
                    if esc not in ESCAPES:
                        raise err(line, j - line_start + 1, f"unknown escape '\\{excerpt(esc)}' in "
                                                            "string (use \\n \\t \\0 \\\\ or \\\")")
                    chars.append(ESCAPES[esc])
                    j += 2
                    continue
                if ord(ch) > MAX_STRING_CHAR:
                    raise err(line, j - line_start + 1, f"character {shown(ch)} cannot be in a "
                                                        "string: print writes one byte per "
                                                        "character (U+0000..U+00FF)")
                chars.append(ch)
                j += 1
            toks.append(Token("STR", "".join(chars), line, col))
            i = j + 1
            continue
        two = source[i:i + 2]
        if two in OPERATORS_2:
            toks.append(Token("OP", two, line, col))
            i += 2
            continue
        if c in OPERATORS_1:
            if c in "([{":
                depth += 1
                opened.append((c, line, col))
            elif c in ")]}":
                depth = max(0, depth - 1)
                if opened:
                    opened.pop()
            toks.append(Token("OP", c, line, col))
            i += 1
            continue
        hint = "; names are ASCII letters, digits and '_'" if not c.isascii() else ""
        raise err(line, col, f"unexpected character {shown(c)}{hint}")
    if opened:
        c, ln, col = opened[-1]
        raise err(ln, col, f"'{c}' is never closed")
    col = i - line_start + 1
    if toks and toks[-1].kind not in ("NEWLINE", "INDENT", "DEDENT"):
        toks.append(Token("NEWLINE", "\n", line, col))
    while len(indents) > 1:
        indents.pop()
        toks.append(Token("DEDENT", 0, line, col))
    toks.append(Token("EOF", None, line, col))
    return toks
