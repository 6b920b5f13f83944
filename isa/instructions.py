"""The S2 instruction table, read from isa/instructions.toml: the single source of truth for the ISA.

Everything else is derived from the table: the Python assembler and disassembler, the generated
C++ header the simulators decode with (isa/gen_header.py), the compiler's register read/write sets
(compiler/ir.py), the random test programs (tests/s2gen.py) and docs/isa.md. instructions.toml
explains the columns: formats, operand shapes, operand roles and bus classes.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files

BUS_CLASSES = ("none", "read", "write", "swap", "string", "trap")
KINDS = ("alu", "mem", "jump", "trap", "sync", "misc")
FIELDS = ("r1", "r2", "r3")


@dataclass(frozen=True)
class Instr:
    key: str          # unique name of this encoding, e.g. "ld.disp"; C++ enum is OP_<KEY>
    mnemonic: str     # assembly mnemonic shared by the encodings of one instruction
    fmt: str          # "L", "D" or "X"
    code: int         # primary opcode (L, D) or xop (X)
    shape: str        # operand shape (instructions.toml)
    kind: str         # instruction group: alu, mem, jump, trap, sync, misc
    reads: tuple[str, ...]    # register fields it may read ("r1", "r2", "r3")
    writes: tuple[str, ...]   # register fields it may write
    bus: str          # bus-access class (BUS_CLASSES); "trap": that of the trap number
    semantics: str    # one line, for docs/isa.md

    @property
    def operand_fields(self) -> tuple[str, ...]:
        """The field each operand of the shape fills: r1..r3, ads, disp, imm or t (in r2)."""
        out, regs = [], iter(FIELDS)
        for tok in self.shape.split():
            if tok in ("r", "+r"):
                out.append(next(regs))
            elif tok == "#t":
                next(regs)            # the trap number sits in the r2 field
                out.append("t")
            else:
                out.append({"a": "ads", "@d": "disp"}.get(tok, "imm"))
        return tuple(out)

    @property
    def register_fields(self) -> tuple[str, ...]:
        return tuple(f for f in self.operand_fields if f in FIELDS)

    def matches(self, tokens) -> bool:
        """Whether assembly operand tokens have this encoding's shape (# @ + prefixes decide)."""
        want = self.shape.split()
        if len(want) != len(tokens):
            return False
        for w, tok in zip(want, tokens):
            prefix = w[0] if w[0] in "#@+" else ""
            if (tok[:1] if tok[:1] in "#@+" else "") != prefix:
                return False
        return True


@dataclass(frozen=True)
class Trap:
    number: int
    name: str
    bus: str
    semantics: str


def _rows(data: dict, columns: str, rows: str) -> list[dict]:
    return [dict(zip(data[columns], row, strict=True)) for row in data[rows]]


def _require(ok: bool, row) -> None:
    if not ok:
        raise ValueError(f"isa/instructions.toml: inconsistent row {row}")


def _load() -> dict:
    data = tomllib.loads(files(__package__).joinpath("instructions.toml").read_text(encoding="utf-8"))
    table = [Instr(r["key"], r["mnemonic"], r["format"], r["code"], r["shape"], r["kind"],
                   tuple(r["reads"]), tuple(r["writes"]), r["bus"], r["semantics"])
             for r in _rows(data, "columns", "instructions")]
    traps = [Trap(**r) for r in _rows(data, "trap_columns", "traps")]
    for ins in table:             # the invariants everything derived from the table relies on
        _require(ins.fmt in ("L", "D", "X") and ins.kind in KINDS and ins.bus in BUS_CLASSES, ins)
        _require(set(ins.reads) | set(ins.writes) <= set(ins.register_fields), ins)
        _require((ins.kind == "mem") == (ins.bus in ("read", "write", "swap")), ins)
        _require((ins.kind == "trap") == (ins.bus == "trap"), ins)
    for t in traps:
        _require(t.bus in BUS_CLASSES and t.bus != "trap" and 0 <= t.number < 32, t)
    return {"x_opcode": data["x_opcode"], "table": table, "traps": traps}


_DATA = _load()
X_OPCODE: int = _DATA["x_opcode"]
INSTRUCTIONS: list[Instr] = _DATA["table"]
TRAPS: dict[int, Trap] = {t.number: t for t in _DATA["traps"]}
BY_KEY = {i.key: i for i in INSTRUCTIONS}
BY_MNEMONIC: dict[str, list[Instr]] = {}
for _i in INSTRUCTIONS:
    BY_MNEMONIC.setdefault(_i.mnemonic, []).append(_i)
BY_OPCODE = {i.code: i for i in INSTRUCTIONS if i.fmt != "X"}
BY_XOP = {i.code: i for i in INSTRUCTIONS if i.fmt == "X"}
_require(len(BY_KEY) == len(BY_OPCODE) + len(BY_XOP) == len(INSTRUCTIONS), "(a key or code twice)")

_TRAP_NUMBER = {t.name: t.number for t in TRAPS.values()}
TRAP_HALT, TRAP_PRINT_INT = _TRAP_NUMBER["halt"], _TRAP_NUMBER["print_int"]
TRAP_PRINT_CHAR, TRAP_PRINT_STR = _TRAP_NUMBER["print_char"], _TRAP_NUMBER["print_str"]

# Field widths and immediate ranges.
ADS_BITS, DISP_BITS = 22, 17
ADS_MAX = (1 << ADS_BITS) - 1                     # absolute addresses and jump targets, unsigned
MOV_MIN, MOV_MAX = -(1 << 21), (1 << 21) - 1      # mov #m, 22-bit signed
IMM_MIN, IMM_MAX = -(1 << 16), (1 << 16) - 1      # disp and ALU #n, 17-bit signed
NUM_REGS = 32


def sign_extend(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def encode(ins: Instr, r1: int = 0, r2: int = 0, r3: int = 0, imm: int = 0) -> int:
    """Pack fields into a 32-bit word (imm is the ads, disp or #n field, already range-checked)."""
    if ins.fmt == "L":
        return (ins.code << 27) | (r1 << 22) | (imm & ADS_MAX)
    if ins.fmt == "D":
        return (ins.code << 27) | (r1 << 22) | (r2 << 17) | (imm & ((1 << DISP_BITS) - 1))
    return (X_OPCODE << 27) | (r1 << 22) | (r2 << 17) | (r3 << 12) | ins.code


@dataclass(frozen=True)
class Decoded:
    ins: Instr | None   # None: undefined opcode
    r1: int
    r2: int
    r3: int
    imm: int            # ads (unsigned), mov #m (signed 22), disp/#n (signed 17); 0 for X

    @property
    def bus(self) -> str:
        """This instruction's bus-access class; a trap takes its number's (the r2 field)."""
        if self.ins is None:
            return "none"
        if self.ins.bus == "trap":
            t = TRAPS.get(self.r2)
            return t.bus if t else "none"
        return self.ins.bus


def decode(word: int) -> Decoded:
    word &= 0xFFFFFFFF
    op, r1, r2, r3 = word >> 27, (word >> 22) & 31, (word >> 17) & 31, (word >> 12) & 31
    if op == X_OPCODE:
        return Decoded(BY_XOP.get(word & 0xFFF), r1, r2, r3, 0)
    ins = BY_OPCODE.get(op)
    if ins is None:
        return Decoded(None, r1, r2, r3, 0)
    if ins.fmt == "L":
        ads = word & ADS_MAX
        return Decoded(ins, r1, 0, 0, sign_extend(ads, ADS_BITS) if ins.key == "mov.imm" else ads)
    return Decoded(ins, r1, r2, 0, sign_extend(word, DISP_BITS))
