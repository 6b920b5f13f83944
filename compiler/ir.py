"""The compiler's assembly IR, shared by the code generator (codegen.py) and the peephole pass
(optimiser.py): one Ins per assembly line, the register conventions, and what each instruction
reads and writes, taken from the ISA table (isa/instructions.toml) rather than restated here.

An Ins is an S2 instruction (op is its mnemonic, args its operand tokens as the assembler reads
them: "r5", "#12", "@3", "+r4", a label, or a FrameSlot), a label (op "label") or a line of raw
assembly (op "asm", from inline asm and comments). `mem` tells the optimiser which memory an ld or
st touches: (region, key), where region is "g:<global>", "a:<array>", "f" (the frame) or "p" (any,
through a pointer) and key identifies the address when it is known, else None.
"""
from __future__ import annotations

import re
from functools import lru_cache

from s2mc.isa.instructions import BY_MNEMONIC, FIELDS, Instr

# Register conventions (docs/rz.md, "Code generation").
RETVAL, FP, RADS, SP = "retval", "fp", "rads", "sp"
SPECIAL = {RETVAL: 28, FP: 29, RADS: 30, SP: 31}      # .symbol names for r28..r31
SAVED_O1 = [f"r{i}" for i in range(1, 20)]           # -O1: callee-saved
SCRATCH_O1 = [f"r{i}" for i in range(20, 28)]        # -O1: a call may clobber them
ARG_REGS = SCRATCH_O1                                # -O1: up to 8 arguments travel in r20..r27
ALL_O0 = [f"r{i}" for i in range(1, 28)]             # -O0: every register is callee-saved

_UNKNOWN = object()
_REG = re.compile(r"(r([0-9]|[12][0-9]|3[01])|retval|fp|sp|rads)$")


class Ins:
    """One assembly line: an instruction, a label (op 'label'), or raw asm text (op 'asm').
    Passes make a new Ins rather than change one (its table row is looked up once), with
    `derived`, which keeps where it came from: `line`, the Rz line (None: no statement, like an
    epilogue), and `prologue`, part of the function's entry code (the debug info, compile -g)."""
    __slots__ = ("op", "args", "mem", "comment", "line", "prologue", "_row")

    def __init__(self, op: str, args=(), mem=None, comment: str = "", line: int | None = None,
                 prologue: bool = False):
        self.op, self.args, self.mem, self.comment = op, list(args), mem, comment
        self.line, self.prologue = line, prologue
        self._row = _UNKNOWN

    def derived(self, op: str, args, mem=None, comment: str = "") -> "Ins":
        """A new instruction in this one's place: same line, same part of the function."""
        return Ins(op, args, mem, comment, self.line, self.prologue)

    def render(self) -> str:
        if self.op == "label":
            return f":{self.args[0]}"
        if self.op == "asm":
            return f"  {self.args[0]}"
        text = "  " + " ".join([self.op, *map(str, self.args)])
        if self.comment:
            text = f"{text:<28}; {self.comment}"
        return text

    def __repr__(self) -> str:
        return self.render().strip()


class FrameSlot:
    """A displacement from fp that is only known once the frame is laid out (`frame.slot_disp`)."""

    def __init__(self, frame, kind: str, index: int):
        self.frame, self.kind, self.index = frame, kind, index

    def __str__(self) -> str:
        return f"@{self.frame.slot_disp(self.kind, self.index)}"

    def __eq__(self, other):
        return isinstance(other, FrameSlot) and (self.kind, self.index) == (other.kind, other.index)

    def __hash__(self):
        return hash((self.kind, self.index))


def is_reg(x) -> bool:
    return isinstance(x, str) and bool(_REG.match(x))


def _prefix(arg) -> str:
    s = "@" if isinstance(arg, FrameSlot) else str(arg)
    return s[0] if s[:1] in ("#", "@", "+") else "x"


@lru_cache(maxsize=None)
def _encoding(op: str, prefixes: tuple[str, ...]) -> Instr:
    for ins in BY_MNEMONIC.get(op, ()):
        if ins.matches(prefixes):
            return ins
    raise AssertionError(f"no S2 encoding for {op} with operands shaped {prefixes}")


def encoding(ins: Ins) -> Instr | None:
    """The table row of an instruction (None for labels and asm lines)."""
    if ins._row is _UNKNOWN:
        ins._row = (None if ins.op in ("label", "asm")
                    else _encoding(ins.op, tuple(_prefix(a) for a in ins.args)))
    return ins._row


@lru_cache(maxsize=None)
def _roles(row: Instr) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Operand positions of the register fields the row reads and writes, in field order."""
    pos = {f: i for i, f in enumerate(row.operand_fields) if f in FIELDS}
    return tuple(pos[f] for f in row.reads), tuple(pos[f] for f in row.writes)


def _reg(arg) -> str:
    return arg[1:] if arg.startswith("+") else arg


def reads_writes(ins: Ins) -> tuple[list[str], list[str]]:
    """(registers read, registers written) by one instruction, as the ISA table declares them."""
    row = encoding(ins)
    if row is None:
        return [], []
    reads, writes = _roles(row)
    return [_reg(ins.args[i]) for i in reads], [_reg(ins.args[i]) for i in writes]


def read_only_positions(ins: Ins) -> list[int]:
    """Positions in ins.args of registers the instruction reads and does not write (renamable)."""
    row = encoding(ins)
    if row is None:
        return []
    reads, writes = _roles(row)
    return [i for i in reads if i not in writes]


def has_no_side_effect(ins: Ins) -> bool:
    """Whether the instruction does nothing but write its registers (and maybe read memory): it
    may go when nothing reads what it writes."""
    row = encoding(ins)
    return (row is not None and bool(row.writes) and row.bus in ("none", "read")
            and row.kind not in ("jump", "trap", "sync"))
