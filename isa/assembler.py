"""Two-pass assembler for S2 assembly (s23 / grandfather-s21 syntax, docs/isa.md).

    .symbol            following lines are `name value` definitions (constants, register names)
    .code N            following lines are instructions placed in the program image from N
    .data N            following lines are words placed in shared data memory from N
    .end               end of source
    :label             defines label at the current location (may precede an instruction)
    ; comment          to end of line

Operands: registers r0..r31 or a .symbol name bound to a register number; `#n` immediates,
`@d r` displacement, `+r r` index, plain addresses. Numbers are decimal or 0x hex (our addition);
any number may be a symbol. Everything is case-insensitive. Every error names file:line and quotes
the offending text.
"""
from __future__ import annotations

import re

from .errors import S2mcError
from .instructions import ADS_MAX, BY_MNEMONIC, IMM_MAX, IMM_MIN, MOV_MAX, MOV_MIN, Instr, encode
from .program import Program, Segment, Symbol

_NUMBER = re.compile(r"[+-]?(0x[0-9a-f]+|[0-9]+)$")
_NAME = re.compile(r"[a-z_.$][a-z0-9_.$]*$")


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

    def error(self, line: _Line, msg: str) -> AsmError:
        return AsmError(f"{self.filename}:{line.lineno}: {msg}: '{line.text.strip()}'")

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
            if toks[0] == ".end":
                break
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
            if toks[0].startswith("."):
                raise self.error(line, f"unknown directive '{toks[0]}'")
            if section == "symbol":
                if len(toks) != 2 or not _NAME.match(toks[0]):
                    raise self.error(line, "expected 'name value' in .symbol")
                self.define(line, toks[0])
                self.consts[toks[0]] = self.number(line, toks[1], -(1 << 31), (1 << 32) - 1, "value")
                continue
            while toks and toks[0].startswith(":"):
                name = toks[0][1:]
                if not _NAME.match(name):
                    raise self.error(line, f"bad label name '{toks[0]}'")
                if section not in ("code", "data"):
                    raise self.error(line, "label outside .code or .data")
                self.define(line, name)
                self.labels[name] = (loc, section)
                toks = toks[1:]
            if not toks:
                continue
            if section not in ("code", "data"):
                raise self.error(line, "instruction or data outside .code or .data")
            items.append((section, loc, line, toks))
            loc += 1 if section == "code" else len(toks)
        return self._pass2(items)

    def define(self, line: _Line, name: str) -> None:
        if name in self.consts or name in self.labels:
            raise self.error(line, f"'{name}' is defined twice")
        if re.fullmatch(r"r([0-9]|[12][0-9]|3[01])", name):
            raise self.error(line, f"'{name}' is a register name")

    # -- pass 2: encode ---------------------------------------------------------------------------
    def _pass2(self, items) -> Program:
        prog = Program()
        seg: Segment | None = None
        for section, loc, line, toks in items:
            if not toks:
                seg = Segment(section, loc)
                prog.segments.append(seg)
                continue
            if section == "code":
                seg.words.append(self.instruction(line, toks))
            else:
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
        return prog

    def instruction(self, line: _Line, toks: list[str]) -> int:
        mnemonic, ops = toks[0], toks[1:]
        candidates = BY_MNEMONIC.get(mnemonic)
        if candidates is None:
            raise self.error(line, f"unknown instruction '{mnemonic}'")
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
            n = int(m.group(1))
        elif tok in self.consts:
            n = self.consts[tok]
        elif _NUMBER.match(tok):
            n = int(tok, 0)
        else:
            raise self.error(line, f"'{tok}' is not a register")
        if not 0 <= n <= 31:
            raise self.error(line, f"register '{tok}' out of range r0..r31")
        return n

    def number(self, line: _Line, tok: str, lo: int, hi: int, what: str) -> int:
        if _NUMBER.match(tok):
            v = int(tok, 0)
        elif tok in self.consts:
            v = self.consts[tok]
        elif tok in self.labels:
            v = self.labels[tok][0]
        elif _NAME.match(tok):
            raise self.error(line, f"undefined symbol '{tok}'")
        else:
            raise self.error(line, f"bad {what} '{tok}'")
        if not lo <= v <= hi:
            raise self.error(line, f"{what} {v} out of range {lo}..{hi}")
        return v


def assemble(source: str, filename: str = "<input>") -> Program:
    """Assemble S2 source text into a Program; raises AsmError (file:line: message: 'text')."""
    return Assembler(filename).assemble(source)
