"""A cycle-stepped reference model of docs/timing-model.md, written for clarity, not speed.

It advances the whole machine one cycle at a time, in the order the rules are stated, so each rule
can be checked by reading it. It shares no code with the engines except the instruction decoder
derived from the ISA table and the declaration of the machine parameters (defaults and ranges,
simulator/params.toml); property tests compare it with the `fast` engine on random programs.

Within one cycle c:
  1. each core whose next instruction issues at c issues it, in core-id order: a non-memory
     instruction takes effect now; a memory instruction becomes a bus request made at c;
     sync marks an arrival at c; trap 0 halts the core (finish cycle c + 1);
  2. if the bus is free at c, the arbiter grants one of the cores whose request was made at or
     before c; the access takes effect at c, the bus is busy for c .. c+L-1 and the core's next
     instruction issues at c + L;
  3. if some cores wait at a barrier and every core that has not halted has arrived, the barrier
     completes at c and the waiting cores issue again at c + 1.
The first fault met (lowest cycle, then lowest core id) stops the run. With declared stacks, a
memory instruction whose address lies in another core's stack region faults at issue (rule 6).
"""
from __future__ import annotations

from s2mc.isa.instructions import decode

from .counters import engine_counters
from .params import DEFAULTS, check

#: burst4: grants in a row after which the last grantee goes last (the C++ engines' BURST_LIMIT).
BURST_LIMIT = 4

def _s32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


ALU = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": _trunc_div,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
    "eq": lambda a, b: int(a == b),
    "ne": lambda a, b: int(a != b),
    "lt": lambda a, b: int(a < b),
    "le": lambda a, b: int(a <= b),
    "gt": lambda a, b: int(a > b),
    "ge": lambda a, b: int(a >= b),
    "shl": lambda a, b: a << (b & 31),
    "shr": lambda a, b: a >> (b & 31),
    "mod": lambda a, b: a - _trunc_div(a, b) * b,
}


class RefFault(Exception):
    def __init__(self, kind: str, core: int, pc: int, cycle: int, address: int = 0):
        super().__init__(kind)
        self.kind, self.core, self.pc, self.cycle, self.address = kind, core, pc, cycle, address


class _Core:
    def __init__(self, cid: int, entry: int):
        self.id = cid
        self.r = [0] * 32
        self.pc = entry
        self.next_issue = 0           # cycle at which the next instruction issues
        self.state = "run"            # run | request | sync | halted
        self.request_cycle = 0
        self.request = None           # decoded memory instruction waiting for the bus
        self.stats = dict.fromkeys(engine_counters(cached=False), 0)   # simulator/counters.toml

    def set(self, reg: int, value: int) -> None:
        if reg:
            self.r[reg] = _s32(value)


class ReferenceMachine:
    def __init__(self, code: list[int], data: list[int], entry: int = 0, cores: int = DEFAULTS["cores"],
                 mem_latency: int = DEFAULTS["mem_latency"], arbitration: str = DEFAULTS["arbitration"],
                 max_cycles: int = DEFAULTS["max_cycles"], mem_words: int = DEFAULTS["mem_words"],
                 trace: bool = False, stacks: tuple[int, int, int] | None = None,
                 cache: str = DEFAULTS["cache"], cache_lines: int = DEFAULTS["cache_lines"],
                 cache_ways: int = DEFAULTS["cache_ways"], line_words: int = DEFAULTS["line_words"],
                 cache_hit_latency: int = DEFAULTS["cache_hit_latency"]):
        """stacks: the program's declared stack regions (base, words, count), or None."""
        check(cores=cores, mem_latency=mem_latency, arbitration=arbitration, max_cycles=max_cycles,
              mem_words=mem_words, cache=cache, cache_lines=cache_lines, cache_ways=cache_ways,
              line_words=line_words, cache_hit_latency=cache_hit_latency)
        if cache != "none":   # the caches' rules: docs/timing-model.md, "Caches and coherence"
            raise NotImplementedError("the reference model does not model caches yet")
        self.code = [w & 0xFFFFFFFF for w in code]
        self.mem = [0] * mem_words
        self.mem[:len(data)] = [_s32(w) for w in data]
        self.cores = [_Core(i, entry) for i in range(cores)]
        self.L, self.arbitration, self.max_cycles = mem_latency, arbitration, max_cycles
        self.stacks = stacks
        self.bus_free = 0
        self.last_grant = -1
        self.streak = 0               # grants in a row to last_grant (burst4)
        self.output: list[tuple[int, int, str]] = []
        self.cycles = 0
        self.now = 0                  # the next cycle step() simulates (tests stop the model there)
        # With trace=True, the --trace events (cycle, core, pc, event, wait, address, before, after)
        # in the order they happen; run() returns them ordered by cycle, then core.
        self.trace: list[tuple] | None = [] if trace else None

    def log(self, c: int, core: _Core, event: str, wait: int = 0, address: int = 0, before: int = 0,
            after: int = 0) -> None:
        """address: of a bus request or grant; before, after: the word there around a granted access."""
        if self.trace is not None:
            self.trace.append((c, core.id, core.pc, event, wait, address, before, after))

    # -- step 1: issue --------------------------------------------------------------------------
    def issue(self, core: _Core, c: int) -> None:
        if core.pc >= len(self.code):
            raise RefFault("pc_out_of_range", core.id, core.pc, c)
        d = decode(self.code[core.pc])
        if d.ins is None:
            raise RefFault("undefined_opcode", core.id, core.pc, c)
        name, key, r = d.ins.mnemonic, d.ins.key, core.r
        if d.bus != "none":         # the table's bus class (a trap takes its number's)
            address = self.address(core, d)
            if not 0 <= address < len(self.mem):
                raise RefFault("address_out_of_range", core.id, core.pc, c, address & 0xFFFFFFFF)
            if self.stacks and self.foreign_stack(core.id, address):
                raise RefFault("stack_overflow", core.id, core.pc, c, address)
            core.stats["instructions"] += 1
            core.state, core.request_cycle, core.request = "request", c, (d, address)
            self.log(c, core, "request", 0, address)
            return
        core.stats["instructions"] += 1
        nxt = core.pc + 1
        self.log(c, core, "sync" if key == "sync" else "halt" if key == "trap" and d.r2 == 0 else "issue")
        if key.endswith(".imm") and name in ALU or key.endswith(".reg") and name in ALU:
            b = d.imm if key.endswith(".imm") else r[d.r3]
            if name in ("div", "mod") and b == 0:
                core.stats["instructions"] -= 1
                raise RefFault("division_by_zero", core.id, core.pc, c)
            core.set(d.r1, ALU[name](r[d.r2], b))
        elif key == "mov.imm":
            core.set(d.r1, d.imm)
        elif key == "mov.reg":
            core.set(d.r1, r[d.r2])
        elif key == "not":
            core.set(d.r1, -1 if r[d.r2] == 0 else 0)
        elif key == "jmp":
            nxt = d.imm
        elif key == "jal":
            core.set(d.r1, core.pc + 1)
            nxt = d.imm
        elif key == "jt":
            nxt = d.imm if r[d.r1] != 0 else nxt
        elif key == "jf":
            nxt = d.imm if r[d.r1] == 0 else nxt
        elif key == "ret":
            nxt = r[d.r1] & 0xFFFFFFFF
        elif key == "cid":
            core.set(d.r1, core.id)
        elif key == "ncore":
            core.set(d.r1, len(self.cores))
        elif key == "sync":
            core.state, core.request_cycle = "sync", c
        elif key == "trap":
            if d.r2 == 0:
                core.state = "halted"
                core.stats["finish_cycle"] = c + 1
                return
            if d.r2 == 1:
                self.output.append((c, core.id, str(r[d.r1])))
            elif d.r2 == 2:
                self.output.append((c, core.id, chr(r[d.r1] & 0xFF)))
        core.pc = nxt
        core.next_issue = c + 1

    def foreign_stack(self, core: int, address: int) -> bool:
        """Rule 6: the address is in the declared stack area, in a region that is not the core's
        (region c is base + c*words .. base + (c+1)*words - 1, for c < count)."""
        base, words, count = self.stacks
        if not base <= address < base + words * count:
            return False
        return (address - base) // words != core

    @staticmethod
    def address(core: _Core, d) -> int:
        r = core.r
        return {
            "ld.abs": d.imm, "st.abs": d.imm,
            "ld.disp": d.imm + r[d.r2], "st.disp": d.imm + r[d.r2],
            "ld.index": r[d.r2] + r[d.r3], "st.index": r[d.r2] + r[d.r3],
            "push": r[d.r1] + 1, "pop": r[d.r1], "xchg": r[d.r2], "trap": r[d.r1],
        }[d.ins.key]

    # -- step 2: the bus ------------------------------------------------------------------------
    def arbitrate(self, c: int) -> None:
        if self.bus_free > c:
            return
        waiting = [k for k in self.cores if k.state == "request" and k.request_cycle <= c]
        if not waiting:
            return
        n = len(self.cores)
        if self.arbitration == "fifo":
            win = min(waiting, key=lambda k: (k.request_cycle, k.id))
        elif self.arbitration == "fixed":
            win = min(waiting, key=lambda k: k.id)
        elif self.arbitration == "burst4":     # fixed, but after BURST_LIMIT grants in a row the
            # last grantee goes last
            win = min(waiting, key=lambda k: (k.id == self.last_grant and self.streak >= BURST_LIMIT, k.id))
        else:
            win = min(waiting, key=lambda k: (k.id - self.last_grant - 1) % n)
        self.access(win, c)

    def access(self, core: _Core, g: int) -> None:
        d, a = core.request
        key, r, m, s = d.ins.key, core.r, self.mem, core.stats
        before = m[a]
        if key.startswith("ld"):
            core.set(d.r1, m[a]); s["mem_reads"] += 1
        elif key.startswith("st"):
            m[a] = r[d.r1]; s["mem_writes"] += 1
        elif key == "push":
            core.set(d.r1, a); m[a] = r[d.r2]; s["mem_writes"] += 1
        elif key == "pop":
            core.set(d.r2, m[a]); core.set(d.r1, a - 1); s["mem_reads"] += 1
        elif key == "xchg":
            old = m[a]; m[a] = r[d.r1]; core.set(d.r1, old)
            s["mem_reads"] += 1; s["mem_writes"] += 1
        else:  # bus class "string" (trap #3): the string at a
            text = []
            while a < len(m) and m[a] != 0:
                text.append(chr(m[a] & 0xFF)); a += 1
            self.output.append((core.request_cycle, core.id, "".join(text)))
            s["mem_reads"] += 1
        a = core.request[1]
        self.log(g, core, "grant", g - core.request_cycle, a, before, m[a])
        s["mem_accesses"] += 1
        s["bus_wait_cycles"] += g - core.request_cycle
        s["bus_busy_cycles"] += self.L
        core.pc += 1
        core.state, core.next_issue = "run", g + self.L
        self.bus_free = g + self.L
        self.streak = self.streak + 1 if core.id == self.last_grant else 1
        self.last_grant = core.id

    # -- step 3: the barrier --------------------------------------------------------------------
    def barrier(self, c: int) -> None:
        live = [k for k in self.cores if k.state != "halted"]
        if live and all(k.state == "sync" for k in live):
            for k in live:
                k.stats["sync_wait_cycles"] += c - k.request_cycle
                k.state, k.next_issue = "run", c + 1
                self.log(c + 1, k, "resume", c - k.request_cycle)

    def step(self) -> bool:
        """Simulates cycle `now` and moves on to the next; False (and nothing done) once every
        core has halted."""
        c = self.now
        if all(k.state == "halted" for k in self.cores):
            return False
        if c >= self.max_cycles:
            k = next(k for k in self.cores if k.state != "halted")
            raise RefFault("cycle_limit", k.id, k.pc, self.max_cycles)
        for k in self.cores:
            if k.state == "run" and k.next_issue == c:
                self.issue(k, c)
        self.arbitrate(c)
        self.barrier(c)
        self.now = c + 1
        return True

    def run(self) -> dict:
        while self.step():
            pass
        self.output.sort(key=lambda e: (e[0], e[1]))
        if self.trace is not None:
            self.trace.sort(key=lambda e: (e[0], e[1]))   # stable: a core's events keep their order
        return {
            "cycles": max(k.stats["finish_cycle"] for k in self.cores),
            "cores": [dict(k.stats) for k in self.cores],
            "output": self.output,
            "bus_busy_cycles": sum(k.stats["bus_busy_cycles"] for k in self.cores),
        }
