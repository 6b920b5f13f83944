"""Debug information of a program: which source line each instruction comes from, where each
function's code lies, and where its variables live (docs/isa.md, "Debug information").

The Rz compiler writes it with `s2mc compile -g` as assembler directives; the assembler puts it in
the Program (program.debug) and the object file carries it, so a debugger finds the same facts in
a .rz, a .s and a .obj. A program without it has program.debug None and loads as before.

    file    the source file's name, as the compiler was given it
    rows    the line table: (pc, line) sorted by pc, each the start of a run of instructions from
            one source line (line 0: code of no statement, like an epilogue: stepping passes it)
    funcs   each function: its name, declaration line, first pc, the pc where its body starts
            (after the entry code that saves registers and takes the parameters), one past its last,
            how far its entry code moves fp (then its return address is at fp + 0 in its body), and
            how many parameters it takes (its first variables)
    vars    each variable: its function (None: a global), name and place: a register ("reg", n),
            a word at fp + n ("frame", n), or words of memory ("mem", address, words)
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Func:
    name: str
    line: int        # where it is declared
    lo: int          # its first pc (its label)
    body: int        # the first pc of its body
    hi: int          # one past its last pc
    frame: int = 0   # words its entry code moves fp up (0: it keeps the caller's fp and rads)
    params: int = 0  # its first `params` variables are its parameters


@dataclass(frozen=True)
class Var:
    scope: str | None    # the function, or None for a global
    name: str
    kind: str            # "reg", "frame" or "mem"
    where: int           # register number, displacement from fp, or address
    words: int = 1       # "mem": how many words (an array's size)

    def place(self) -> str:
        """Where it lives, as a person reads it."""
        if self.kind == "reg":
            return f"r{self.where}"
        if self.kind == "frame":
            return f"fp{self.where:+d}"
        return f"address {self.where}" + (f" ({self.words} words)" if self.words != 1 else "")


VAR_KINDS = ("reg", "frame", "mem")


@dataclass
class DebugInfo:
    file: str = ""
    rows: list[tuple[int, int]] = field(default_factory=list)
    funcs: list[Func] = field(default_factory=list)
    vars: list[Var] = field(default_factory=list)

    # -- lookups --------------------------------------------------------------------------------
    def _row_index(self, pc: int) -> int:
        return bisect.bisect_right(self.rows, (pc, float("inf"))) - 1

    def line_at(self, pc: int) -> int | None:
        """The source line of the instruction at pc (None: before the table, or line 0)."""
        i = self._row_index(pc)
        return self.rows[i][1] or None if i >= 0 else None

    def row_start(self, pc: int) -> bool:
        """Whether pc starts a run of one line's instructions (where a step stops)."""
        i = self._row_index(pc)
        return i >= 0 and self.rows[i][0] == pc and self.rows[i][1] != 0

    def func_at(self, pc: int) -> Func | None:
        for f in self.funcs:
            if f.lo <= pc < f.hi:
                return f
        return None

    def function(self, name: str) -> Func | None:
        name = name.lower()
        return next((f for f in self.funcs if f.name == name), None)

    def lines(self) -> list[int]:
        """The lines that have code, ascending."""
        return sorted({line for _, line in self.rows if line})

    def locations(self, line: int) -> tuple[int, list[int]]:
        """Where a breakpoint on `line` goes: the line itself if it has code, else the next one
        that has, and the first pc of every run of that line's instructions. (0, []) past the
        last line with code."""
        after = [n for n in self.lines() if n >= line]
        if not after:
            return 0, []
        target = after[0]
        return target, [pc for pc, n in self.rows if n == target]

    def variable(self, name: str, func: Func | None) -> Var | None:
        """A local of `func` by that name, else a global (as Rz scopes them)."""
        name = name.lower()
        scope = func.name if func is not None else None
        local = next((v for v in self.vars if v.scope is not None and v.scope == scope and v.name == name), None)
        return local or next((v for v in self.vars if v.scope is None and v.name == name), None)

    def locals(self, func: Func) -> list[Var]:
        return [v for v in self.vars if v.scope == func.name]

    def globals(self) -> list[Var]:
        return [v for v in self.vars if v.scope is None]
