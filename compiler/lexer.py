"""The Rz lexer: source text to tokens, with Python-style INDENT/DEDENT for blocks.

Tokens: NUM (decimal or 0x hex, 0 .. 2^32-1), ID, STR ("..." with \\n \\t \\0 \\\\ \\" escapes),
OP (operators and punctuation), KW (if else while return print), NEWLINE, INDENT, DEDENT, EOF.
`//` starts a comment. Blank and comment-only lines are ignored. Inside ( ) [ ] { } newlines and
indentation are ignored, so long argument lists and array initialisers may span lines. A tab in
indentation advances to the next multiple of 8 columns.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import CompileError

KEYWORDS = {"if", "else", "while", "return", "print"}
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
        if c.isdigit():
            j = i
            if source.startswith(("0x", "0X"), i):
                j = i + 2
                while j < n and (source[j].isalnum() or source[j] == "_"):
                    j += 1
                text = source[i:j]
                try:
                    value = int(text[2:], 16)
                except ValueError:
                    raise err(line, col, f"bad hex number '{text}'") from None
            else:
                while j < n and (source[j].isalnum() or source[j] == "_"):
                    j += 1
                text = source[i:j]
                if not text.isdigit():
                    raise err(line, col, f"bad number '{text}'")
                value = int(text)
            if value > NUM_MAX:
                raise err(line, col, f"number {text} is out of range (the largest is 4294967295 = "
                                     "0xFFFFFFFF; numbers are 32-bit)")
            toks.append(Token("NUM", value, line, col))
            i = j
            continue
        if c.isalpha() or c == "_":
            j = i
            while j < n and (source[j].isalnum() or source[j] == "_"):
                j += 1
            word = source[i:j]
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
                    if esc not in ESCAPES:
                        raise err(line, j - line_start + 1, f"unknown escape '\\{esc}' in string "
                                                            "(use \\n \\t \\0 \\\\ or \\\")")
                    chars.append(ESCAPES[esc])
                    j += 2
                    continue
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
        raise err(line, col, f"unexpected character '{c}'")
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
