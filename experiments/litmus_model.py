"""The litmus checker: every output an S2 program may print under SC, TSO or PSO, found by
enumerating all its executions on an operational model of each (docs/consistency.md).

It interprets the S2 instructions itself, independently of the engines (simulator/), and reuses
isa/ only to decode the program's words:

- sc:  one memory, one instruction of one core at a time (every interleaving).
- tso: each core has an unbounded FIFO store buffer. A store enters its tail; the oldest entry may
       drain to memory at any step; a load takes the newest buffered store to its address, else
       memory. `fence`, `xchg`, `sync` and the output traps wait until their core's buffer is empty.
- pso: as tso, but the buffer is FIFO per address: any entry with no older entry to the same
       address may drain.

An unbounded buffer allows every execution a bounded one does, so the engines' outputs with any
`store_buffer_entries` must be among these. Two reductions keep each bundled test well under a
second: a core's instructions that touch neither memory nor output (ALU, moves, jumps) run at once,
which changes no reachable output because no other core can see them; and every state is visited
once (a spin loop re-reaches a state it has seen and stops there).

    from s2mc.experiments.litmus_model import allowed_outputs
    allowed_outputs(program, cores=2, model="tso").outputs   # frozenset({'0 0\\n', '0 1\\n', ...})
"""
from __future__ import annotations

from dataclasses import dataclass

from s2mc.common.errors import S2mcError
from s2mc.isa import Program
from s2mc.isa.instructions import (NUM_REGS, TRAP_HALT, TRAP_PRINT_CHAR, TRAP_PRINT_INT, TRAP_PRINT_STR,
                                   decode)

MODELS = ("sc", "tso", "pso")
#: Beyond this many states the program is no litmus test: the checker stops with an error.
MAX_STATES = 2_000_000
#: Instructions one core may run without touching memory before the checker calls it a loop.
MAX_LOCAL_STEPS = 100_000

RUNNING, AT_BARRIER, HALTED = 0, 1, 2
_MASK = 0xFFFFFFFF


def _s32(v: int) -> int:
    v &= _MASK
    return v - (1 << 32) if v >> 31 else v


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return _s32(-q if (a < 0) != (b < 0) else q)


def _mod(a: int, b: int) -> int:
    r = abs(a) % abs(b)
    return _s32(-r if a < 0 else r)


#: The ALU operations by mnemonic (docs/isa.md): a, b are signed 32-bit values.
_ALU = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "div": _div, "mod": _mod, "and": lambda a, b: a & b, "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b, "eq": lambda a, b: int(a == b), "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(a < b), "le": lambda a, b: int(a <= b), "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b), "shl": lambda a, b: a << (b & 31), "shr": lambda a, b: a >> (b & 31),
}


@dataclass(frozen=True)
class Allowed:
    """What the checker found: the outputs of every complete execution, and how many states it saw."""
    model: str
    outputs: frozenset
    states: int


class _Checker:
    def __init__(self, program: Program, cores: int, model: str, mem_words: int | None = None):
        if model not in MODELS:
            raise S2mcError(f"litmus checker: model {model!r} is not one of {', '.join(MODELS)}")
        self.model, self.cores = model, cores
        self.code = [decode(w) for w in program.code_image]
        self.mem_size = max(program.top("data"), mem_words or 1)
        self.initial_mem = tuple(program.data_image + [0] * (self.mem_size - program.top("data")))
        self.entry = program.entry
        self.local_at = [d.ins is not None and self.is_local(d) for d in self.code]

    # -- helpers -------------------------------------------------------------------------------
    def fail(self, core: int, pc: int, why: str) -> S2mcError:
        return S2mcError(f"litmus checker: core {core} pc {pc}: {why}")

    def fetch(self, core: int, pc: int):
        if not 0 <= pc < len(self.code) or self.code[pc].ins is None:
            raise self.fail(core, pc, "no instruction there (outside the program or undefined)")
        return self.code[pc]

    def address(self, core: int, pc: int, a: int) -> int:
        if not 0 <= a < self.mem_size:
            raise self.fail(core, pc, f"address {a} is outside the program's data 0..{self.mem_size - 1} "
                                      "(the checker models the data a litmus program declares)")
        return a

    @staticmethod
    def forwarded(buf, a: int, mem) -> int:
        for addr, v in reversed(buf):
            if addr == a:
                return v
        return mem[a]

    def is_local(self, d) -> bool:
        """Neither memory, output, the barrier, nor a fence: invisible to the other cores."""
        return d.bus == "none" and d.ins.kind not in ("trap", "sync") and d.ins.mnemonic != "fence"

    def local(self, core: int, pc: int, regs: list, d) -> int:
        """Run one local instruction on regs; the next pc."""
        m, key = d.ins.mnemonic, d.ins.key
        r = regs

        def put(v):
            if d.r1:
                r[d.r1] = _s32(v)
        if m == "nop":
            return pc + 1
        if key == "mov.imm":
            put(d.imm)
        elif key == "mov.reg":
            put(r[d.r2])
        elif m == "not":
            put(-1 if r[d.r2] == 0 else 0)
        elif m == "cid":
            put(core)
        elif m == "ncore":
            put(self.cores)
        elif m == "jmp":
            return d.imm
        elif m == "jal":
            put(pc + 1)
            return d.imm
        elif m == "jt":
            return d.imm if r[d.r1] else pc + 1
        elif m == "jf":
            return pc + 1 if r[d.r1] else d.imm
        elif m == "ret":
            return r[d.r1] & _MASK
        elif m in _ALU:
            b = d.imm if key.endswith(".imm") else r[d.r3]
            if m in ("div", "mod") and b == 0:
                raise self.fail(core, pc, "division by zero")
            put(_ALU[m](r[d.r2], b))
        else:
            raise self.fail(core, pc, f"the checker does not model {m!r}")
        return pc + 1

    # -- the state graph -----------------------------------------------------------------------
    def normalise(self, cores: list, mem, out, changed=None):
        """Run the local instructions of every core (of core `changed` only: the others have run
        theirs) and release the barrier when all running cores wait at it; the state as a
        hashable tuple."""
        for c in range(len(cores)) if changed is None else (changed,):
            pc, regs, status, buf = cores[c]
            if status != RUNNING or not (0 <= pc < len(self.code) and self.local_at[pc]):
                continue
            r = list(regs)
            for _ in range(MAX_LOCAL_STEPS):
                if not (0 <= pc < len(self.code) and self.local_at[pc]):
                    break
                pc = self.local(c, pc, r, self.code[pc])
            else:
                raise self.fail(c, pc, f"{MAX_LOCAL_STEPS} instructions without a memory access: "
                                       "a loop that cannot end")
            cores[c] = (pc, tuple(r), status, buf)
        live = [c for c in cores if c[2] != HALTED]
        if live and all(c[2] == AT_BARRIER for c in live):
            cores = [(pc + 1, regs, RUNNING, buf) if s == AT_BARRIER else (pc, regs, s, buf)
                     for pc, regs, s, buf in cores]
            return self.normalise(cores, mem, out)
        return (tuple(cores), mem, out)

    def successors(self, state):
        cores, mem, out = state
        for c, (pc, regs, status, buf) in enumerate(cores):
            if buf:                                   # a buffered store drains
                firsts = [0] if self.model == "tso" else \
                    [i for i, (a, _) in enumerate(buf) if all(b[0] != a for b in buf[:i])]
                for i in firsts:
                    a, v = buf[i]
                    m2 = mem[:a] + (v,) + mem[a + 1:]
                    yield self._with(cores, c, (pc, regs, status, buf[:i] + buf[i + 1:]), m2, out)
            if status == RUNNING:
                step = self.step(c, pc, regs, buf, mem, out)
                if step is not None:
                    core, m2, o2 = step
                    yield self._with(cores, c, core, m2, o2)

    def _with(self, cores, c, core, mem, out):
        cs = list(cores)
        cs[c] = core
        return self.normalise(cs, mem, out, c)

    def step(self, c: int, pc: int, regs, buf, mem, out):
        """One memory, output, barrier or fence instruction of core c: (core, mem, out), or None
        while it must wait for its store buffer to drain."""
        d = self.fetch(c, pc)
        m, key = d.ins.mnemonic, d.ins.key
        r = list(regs)
        drains = m in ("fence", "xchg", "sync") or (m == "trap" and d.r2 != TRAP_HALT)
        if drains and buf:
            return None
        if m == "fence":
            return (pc + 1, regs, RUNNING, buf), mem, out
        if m == "sync":
            return (pc, regs, AT_BARRIER, buf), mem, out
        if m == "trap":
            if d.r2 == TRAP_HALT:
                return (pc, regs, HALTED, buf), mem, out
            if d.r2 == TRAP_PRINT_INT:
                out += str(r[d.r1])
            elif d.r2 == TRAP_PRINT_CHAR:
                out += chr(r[d.r1] & 255)
            elif d.r2 == TRAP_PRINT_STR:
                a = r[d.r1]
                while mem[self.address(c, pc, a)]:
                    out += chr(mem[a] & 255)
                    a += 1
            return (pc + 1, regs, RUNNING, buf), mem, out
        if m == "xchg":
            a = self.address(c, pc, r[d.r2])
            old = mem[a]
            mem = mem[:a] + (r[d.r1],) + mem[a + 1:]
            if d.r1:
                r[d.r1] = old
            return (pc + 1, tuple(r), RUNNING, buf), mem, out
        if m in ("ld", "pop"):
            a = {"ld.abs": d.imm, "ld.disp": d.imm + r[d.r2], "ld.index": r[d.r2] + r[d.r3],
                 "pop": r[d.r1]}[key]
            v = self.forwarded(buf, self.address(c, pc, a), mem)
            if key == "pop":
                r[d.r1] = _s32(r[d.r1] - 1)
                target = d.r2
            else:
                target = d.r1
            if target:
                r[target] = v
            return (pc + 1, tuple(r), RUNNING, buf), mem, out
        if m in ("st", "push"):
            if key == "push":
                a, v = r[d.r1] + 1, r[d.r2]
                if d.r1:
                    r[d.r1] = _s32(a)
            else:
                a = {"st.abs": d.imm, "st.disp": d.imm + r[d.r2], "st.index": r[d.r2] + r[d.r3]}[key]
                v = r[d.r1]
            a = self.address(c, pc, a)
            if self.model == "sc":
                return (pc + 1, tuple(r), RUNNING, buf), mem[:a] + (v,) + mem[a + 1:], out
            return (pc + 1, tuple(r), RUNNING, buf + ((a, v),)), mem, out
        raise self.fail(c, pc, f"the checker does not model {m!r}")

    def run(self) -> Allowed:
        start = self.normalise([(self.entry, (0,) * NUM_REGS, RUNNING, ())] * self.cores,
                               self.initial_mem, "")
        seen, todo, outputs = {start}, [start], set()
        while todo:
            state = todo.pop()
            cores, _, out = state
            if all(s == HALTED and not buf for _, _, s, buf in cores):
                outputs.add(out)
                continue
            nexts = list(self.successors(state))
            if not nexts:
                where = ", ".join(f"core {c} pc {pc}" for c, (pc, _, s, _) in enumerate(cores) if s != HALTED)
                raise S2mcError(f"litmus checker: an execution deadlocks ({where} can never go on)")
            for n in nexts:
                if n not in seen:
                    if len(seen) >= MAX_STATES:
                        raise S2mcError(f"litmus checker: more than {MAX_STATES} states: "
                                        "too large for a litmus test")
                    seen.add(n)
                    todo.append(n)
        return Allowed(self.model, frozenset(outputs), len(seen))


def allowed_outputs(program: Program, cores: int, model: str, mem_words: int | None = None) -> Allowed:
    """Every output `program` may print on `cores` cores under `model` (sc, tso or pso); its
    memory is the program's data, or `mem_words` words when that is more."""
    return _Checker(program, cores, model, mem_words).run()
