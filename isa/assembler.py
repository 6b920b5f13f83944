"""Two-pass assembler for S2 assembly (s23 / grandfather-s21 syntax, docs/isa.md).

    .symbol            following lines are `name value` definitions (constants, register names)
    .code N            following lines are instructions placed in the program image from N
    .data N            following lines are words placed in shared data memory from N
    .stacks B W N      N per-core stack regions of W words from B (core c's: B + c*W ..): the
                       simulator faults stack_overflow on a core's access to another's (docs/isa.md)
    .end               end of source
    .file "NAME"       debug information (compile -g; isa/debuginfo.py, docs/isa.md): the source
    .func NAME LINE F P  file, a function from here (declared at LINE; its entry code moves fp up
                       F words, 0: none; its first P .vars are its parameters) to the next .func or the
    .body              segment's end, where its body starts, the source line of the instructions
    .line N            from here on (0: none), and a variable's place: in a .func a register or
    .var NAME PLACE    @D (the word at fp + D), outside one a data label and its size in words
    :label             defines label at the current location (may precede an instruction)
    .word v ...        raw words, in .code too: the disassembler writes every word that is no
                       instruction (or would not reassemble to itself) this way
    .space n           n zero words (the disassembler writes runs of zeros this way)
    ; comment          to end of line

Operands: registers r0..r31 or a .symbol name bound to a register number; `#n` immediates,
`@d r` displacement, `+r r` index, plain addresses. Numbers are decimal or 0x hex (our addition);
leading zeros never mean octal (010 is ten); any number may be a symbol. Everything is
case-insensitive. A segment may not run past address 2^22 - 1, the last one a 22-bit field names.
Every error names file:line and quotes (an excerpt of) the offending text.
"""
from __future__ import annotations

import re

from s2mc.common.errors import S2mcError, excerpt

from .debuginfo import DebugInfo, Func, Var
from .instructions import ADS_MAX, BY_MNEMONIC, IMM_MAX, IMM_MIN, MOV_MAX, MOV_MIN, Instr, encode
from .program import (ADDRESSES, NAME as _NAME, REGISTER_NAME as _REGISTER_NAME, Program, Segment, Stacks,
                      Symbol, stacks_problem)

_NUMBER = re.compile(r"([+-]?)(?:0x([0-9a-f]+)|([0-9]+))")
_IN_SEGMENT = (".word", ".space")   # the directives that place words in a .code or .data segment
_DEBUG = (".file", ".func", ".body", ".line", ".var")   # debug information (isa/debuginfo.py)
_FILE = re.compile(r'\s*\.file\s+"([^";]*)"\s*(;.*)?$', re.I)
_MAX_DIGITS = 24                 # more than any field needs; keeps int() off 5000-digit strings


def literal(tok: str) -> int | None:
    """The value of a decimal or 0x-hex number token (leading zeros allowed, never octal), or None.
    Absurdly long numbers come back as a value outside every field's range instead of reaching int()
    (Python refuses to convert more than 4300 decimal digits)."""
    m = _NUMBER.fullmatch(tok)
    if not m:
        return None
    sign, hexdigits, decimal = m.groups()
    digits = (hexdigits or decimal).lstrip("0") or "0"
    v = 1 << 80 if len(digits) > _MAX_DIGITS else int(digits, 16 if hexdigits else 10)
    return -v if sign == "-" else v


class AsmError(S2mcError):
    pass


class _Line:
    __slots__ = ("lineno", "text", "tokens")

    def __init__(self, lineno: int, text: str, tokens: list[str]):
        self.lineno, self.text, self.tokens = lineno, text, tokens


class Assembler:
    def __init__(self, filename: str = "<input>"):
        self.filename = filename
        self.consts: dict[str, int] = {}
        self.labels: dict[str, tuple[int, str]] = {}
        self.stacks: tuple[_Line, list[str]] | None = None   # the .stacks line, read after pass 1
        # debug information: any directive of it makes program.debug
        self.debug_seen = False
        self.file = None
        self.rows: list[tuple[int, int]] = []
        self.funcs: list[list] = []            # [name, line, lo, body, hi]
        self.vars: list[tuple[str | None, _Line, list[str]]] = []   # scope, line, operands

    def error(self, line: _Line, msg: str) -> AsmError:
        return AsmError(f"{self.filename}:{line.lineno}: {msg}: '{excerpt(line.text.strip())}'")

    # -- pass 1: lay out sections and collect symbols -------------------------------------------
    def assemble(self, source: str) -> Program:
        items: list[tuple[str, int, _Line, list[str]]] = []   # (section, address, line, tokens)
        section, loc = None, 0
        for lineno, raw in enumerate(source.splitlines(), 1):
            text = raw.split(";", 1)[0].strip().lower()
            if not text:
                continue
            line = _Line(lineno, raw, text.split())
            toks = line.tokens
            if toks[0] in (".end", ".code", ".data"):
                self._close_func(loc)
            if toks[0] == ".end":
                break
            if toks[0] in _DEBUG:
                self.debug_directive(line, raw, section, loc)
                continue
            if toks[0] in (".code", ".data"):
                if len(toks) != 2:
                    raise self.error(line, f"{toks[0]} takes one address")
                section, loc = toks[0][1:], self.number(line, toks[1], 0, ADS_MAX, "address")
                items.append((section, loc, line, []))   # marks a new segment
                continue
            if toks[0] == ".symbol":
                if len(toks) != 1:
                    raise self.error(line, ".symbol takes no operands")
                section = "symbol"
                continue
            if toks[0] == ".stacks":
                if len(toks) != 4:
                    raise self.error(line, ".stacks takes a base address, a size in words and a count")
                if self.stacks is not None:
                    raise self.error(line, ".stacks declared twice")
                self.stacks = (line, toks[1:])   # its operands may name labels defined later
                continue
            if toks[0].startswith(".") and (toks[0] not in _IN_SEGMENT or section == "symbol"):
                raise self.error(line, f"unknown directive '{excerpt(toks[0])}'" if toks[0] not in _IN_SEGMENT
                                 else f"{toks[0]} outside .code or .data")
            if section == "symbol":
                if len(toks) != 2 or not _NAME.fullmatch(toks[0]):
                    raise self.error(line, "expected 'name value' in .symbol")
                self.define(line, toks[0])
                self.consts[toks[0]] = self.number(line, toks[1], -(1 << 31), (1 << 32) - 1, "value")
                continue
            while toks and toks[0].startswith(":"):
                name = toks[0][1:]
                if not _NAME.fullmatch(name):
                    raise self.error(line, f"bad label name '{excerpt(toks[0])}'")
                if section not in ("code", "data"):
                    raise self.error(line, "label outside .code or .data")
                self.define(line, name)
                self.labels[name] = (loc, section)
                toks = toks[1:]
            if not toks:
                continue
            if section not in ("code", "data"):
                raise self.error(line, "instruction or data outside .code or .data")
            if toks[0] == ".word":
                if len(toks) == 1:
                    raise self.error(line, ".word takes one or more values")
                size = len(toks) - 1
            elif toks[0] == ".space":
                if len(toks) != 2:
                    raise self.error(line, ".space takes one count")
                size = self.number(line, toks[1], 1, ADDRESSES, "count")
                toks = [".space", size]
            elif toks[0].startswith("."):     # a directive after a label
                raise self.error(line, f"unknown directive '{excerpt(toks[0])}'")
            else:
                size = 1 if section == "code" else len(toks)
            if loc + size > ADDRESSES:
                raise self.error(line, f".{section} segment runs past the last address {ADS_MAX}")
            items.append((section, loc, line, toks))
            loc += size
        self._close_func(loc)
        return self._pass2(items)

    # -- debug information ------------------------------------------------------------------------
    def debug_directive(self, line: _Line, raw: str, section, loc: int) -> None:
        toks = line.tokens
        self.debug_seen = True
        if toks[0] == ".file":
            m = _FILE.match(raw)
            if not m:
                raise self.error(line, '.file takes one quoted name (no " or ; in it)')
            if self.file is not None:
                raise self.error(line, ".file given twice")
            self.file = m.group(1)
            return
        if toks[0] == ".var":
            if len(toks) not in (3, 4) or not _NAME.fullmatch(toks[1]):
                raise self.error(line, ".var takes a name and a place (a register, @D, or a data label and words)")
            open_ = self.funcs and self.funcs[-1][4] is None
            self.vars.append((self.funcs[-1][0] if open_ else None, line, toks[1:]))
            return
        if section != "code":
            raise self.error(line, f"{toks[0]} outside .code")
        if toks[0] == ".func":
            if len(toks) != 5 or not _NAME.fullmatch(toks[1]):
                raise self.error(line, ".func takes a name, its source line, its frame's size and "
                                       "its number of parameters")
            self._close_func(loc)
            self.funcs.append([toks[1], self.number(line, toks[2], 0, ADDRESSES, "line"), loc, None, None,
                               self.number(line, toks[3], 0, ADDRESSES, "frame size"),
                               self.number(line, toks[4], 0, ADDRESSES, "parameters")])
        elif toks[0] == ".body":
            if len(toks) != 1 or not self.funcs or self.funcs[-1][4] is not None or self.funcs[-1][3] is not None:
                raise self.error(line, ".body once in each .func, without operands")
            self.funcs[-1][3] = loc
        else:   # .line
            if len(toks) != 2:
                raise self.error(line, ".line takes one line number")
            n = self.number(line, toks[1], 0, ADDRESSES, "line")
            if self.rows and self.rows[-1][0] == loc:
                self.rows.pop()                  # nothing came from the line before
            if not self.rows or self.rows[-1][1] != n:
                self.rows.append((loc, n))

    def _close_func(self, loc: int) -> None:
        if self.funcs and self.funcs[-1][4] is None:
            f = self.funcs[-1]
            f[4] = loc
            if f[3] is None:
                f[3] = f[2]

    def _debug_info(self) -> DebugInfo | None:
        if not self.debug_seen:
            return None
        out = []
        for scope, line, toks in self.vars:
            if scope is not None:
                if len(toks) != 2:
                    raise self.error(line, ".var in a .func takes a register or @D")
                if toks[1].startswith("@"):
                    disp = self.number(line, toks[1][1:], IMM_MIN, IMM_MAX, "displacement")
                    out.append(Var(scope, toks[0], "frame", disp))
                else:
                    out.append(Var(scope, toks[0], "reg", self.register(line, toks[1])))
                continue
            if len(toks) != 3 or (toks[1] in self.labels and self.labels[toks[1]][1] != "data"):
                raise self.error(line, ".var outside a .func takes a data label (or address) and a size in words")
            out.append(Var(None, toks[0], "mem", self.number(line, toks[1], 0, ADS_MAX, "address"),
                           self.number(line, toks[2], 1, ADDRESSES, "words")))
        return DebugInfo(self.file or "", list(self.rows), [Func(*f) for f in self.funcs], out)

    def define(self, line: _Line, name: str) -> None:
        if name in self.consts or name in self.labels:
            raise self.error(line, f"'{excerpt(name)}' is defined twice")
        if _REGISTER_NAME.fullmatch(name):
            raise self.error(line, f"'{name}' is a register name")

    # -- pass 2: encode ---------------------------------------------------------------------------
    def _pass2(self, items) -> Program:
        prog = Program(debug=self._debug_info())
        seg: Segment | None = None
        for section, loc, line, toks in items:
            if not toks:
                seg = Segment(section, loc)
                prog.segments.append(seg)
                continue
            if toks[0] == ".space":
                seg.words.extend([0] * toks[1])
                continue
            if toks[0] == ".word":
                toks = toks[1:]
            elif section == "code":
                seg.words.append(self.instruction(line, toks))
                continue
            seg.words.extend(self.number(line, t, -(1 << 31), (1 << 32) - 1, "word") for t in toks)
        for seg in prog.segments:
            seg.words = [w - (1 << 32) if w >= (1 << 31) else w for w in seg.words]
        for name, value in self.consts.items():
            prog.symbols[name] = Symbol(name, value, "const")
        for name, (value, section) in self.labels.items():
            prog.symbols[name] = Symbol(name, value, section)
        prog.segments = [s for s in prog.segments if s.words]
        code = [s for s in prog.segments if s.kind == "code"]
        prog.entry = code[0].addr if code else 0
        if self.stacks is not None:
            line, toks = self.stacks
            values = [self.number(line, t, lo, hi, what) for t, lo, hi, what in
                      zip(toks, (0, 1, 1), (ADS_MAX, ADDRESSES, ADDRESSES),
                          ("stack base", "stack words", "stack count"))]
            problem = stacks_problem(*values)
            if problem:
                raise self.error(line, problem)
            prog.stacks = Stacks(*values)
        return prog

    def instruction(self, line: _Line, toks: list[str]) -> int:
        mnemonic, ops = toks[0], toks[1:]
        candidates = BY_MNEMONIC.get(mnemonic)
        if candidates is None:
            raise self.error(line, f"unknown instruction '{excerpt(mnemonic)}'")
        for ins in candidates:
            if ins.matches(ops):
                return self.encode_operands(line, ins, ops)
        forms = " or ".join(f"'{(mnemonic + ' ' + c.shape).strip()}'" for c in candidates)
        raise self.error(line, f"wrong operands for {mnemonic}: expected {forms}")

    def encode_operands(self, line: _Line, ins: Instr, ops: list[str]) -> int:
        r = []          # registers in operand order
        imm = 0
        for want, tok in zip(ins.shape.split(), ops):
            if want == "r":
                r.append(self.register(line, tok))
            elif want == "+r":
                r.append(self.register(line, tok[1:]))
            elif want == "a":
                imm = self.number(line, tok, 0, ADS_MAX, "address")
            elif want == "@d":
                imm = self.number(line, tok[1:], IMM_MIN, IMM_MAX, "displacement")
            elif want == "#m":
                imm = self.number(line, tok[1:], MOV_MIN, MOV_MAX, "immediate")
            elif want == "#n":
                imm = self.number(line, tok[1:], IMM_MIN, IMM_MAX, "immediate")
            elif want == "#t":
                r.append(self.number(line, tok[1:], 0, 31, "trap number"))
        r += [0] * (3 - len(r))
        return encode(ins, r[0], r[1], r[2], imm)

    def register(self, line: _Line, tok: str) -> int:
        m = re.fullmatch(r"r([0-9]+)", tok)
        if m:
            n = literal(m.group(1))
        elif tok in self.consts:
            n = self.consts[tok]
        else:
            n = literal(tok)
            if n is None:
                raise self.error(line, f"'{excerpt(tok)}' is not a register")
        if not 0 <= n <= 31:
            raise self.error(line, f"register '{excerpt(tok)}' out of range r0..r31")
        return n

    def number(self, line: _Line, tok: str, lo: int, hi: int, what: str) -> int:
        shown = excerpt(tok)
        v = literal(tok)
        if v is not None:
            value = shown            # the text as written: str() of a huge int would fail too
        elif tok in self.consts or tok in self.labels:
            v = self.consts[tok] if tok in self.consts else self.labels[tok][0]
            value = f"{shown} = {v}"
        elif _NAME.fullmatch(tok):
            raise self.error(line, f"undefined symbol '{shown}'")
        else:
            raise self.error(line, f"bad {what} '{shown}'")
        if not lo <= v <= hi:
            raise self.error(line, f"{what} {value} out of range {lo}..{hi}")
        return v


def assemble(source: str, filename: str = "<input>") -> Program:
    """Assemble S2 source text into a Program; raises AsmError (file:line: message: 'text')."""
    return Assembler(filename).assemble(source)
