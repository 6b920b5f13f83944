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

With caches (docs/timing-model.md, "Caches and coherence") step 1 also looks a data access up in
the core's own cache: a hit takes effect at c and the next instruction issues at c + H; a miss (or
a write to a line it may not write) becomes a bus request, and step 2 decides at the grant which
transaction it is, from the states at that cycle, applies it to every cache, and keeps the bus for
its bus time D. The caches hold states only: `mem` always holds the current value of every word.
Misses are classified (docs/timing-model.md, "Miss classification") the direct way: every write
adds its word to the new words of every other cache that ever held the line, every access moves
its line up a per-cache OrderedDict standing for the fully associative shadow cache.

With store buffers (consistency tso or pso; docs/timing-model.md, "Store buffers") step 1 puts a
store into the core's buffer instead of requesting the bus, serves a load from the newest buffered
store to its address, and holds back a store to a full buffer and a fence, xchg, sync or trap
while the buffer is not empty (the instruction issues in the first cycle its condition holds).
After every core's issue, each core whose drain port is free starts draining one entry (tso: the
oldest; pso: the lowest address among the oldest entries of each address): with caches a write hit
takes effect at once, else the entry requests the bus. In step 2 a core competes with its own
request, or its drain's when it has none or when its last grant went to its own request while
the drain waited (the two take turns).
"""
from __future__ import annotations

from collections import OrderedDict
from contextlib import contextmanager

from s2mc.common.errors import S2mcError
from s2mc.isa.instructions import decode

from .counters import engine_counters
from .params import DEFAULTS, check

#: burst4: grants in a row after which the last grantee goes last (the C++ engines' BURST_LIMIT).
BURST_LIMIT = 4

#: Per-core counters of the caches (simulator/counters.toml), kept only when caches are on.
CACHE_STATS = tuple(k for k in engine_counters(cached=True) if k not in engine_counters(cached=False))
#: Per-core counters of the store buffers, kept only with consistency tso or pso.
BUFFER_STATS = tuple(k for k in engine_counters(cached=False, buffered=True)
                     if k not in engine_counters(cached=False))

#: The states in which a line is dirty (memory may be stale: evicting it writes it back).
DIRTY = ("M", "O", "Sm")
#: Per protocol: the states a read hits in, the states a write or xchg hits in (E -> M silently).
READ_HITS = {"msi": ("M", "S"), "mesi": ("M", "E", "S"), "moesi": ("M", "O", "E", "S"),
             "dragon": ("M", "Sm", "E", "Sc")}
WRITE_HITS = {"msi": ("M",), "mesi": ("M", "E"), "moesi": ("M", "E"), "dragon": ("M", "E")}

class _Store:
    """What the cache model needs of a buffered store's drain: a write (decoded stores carry more)."""
    bus = "write"


_STORE = _Store()


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
        self.since = None             # the cycle the instruction at pc began to wait for the store buffer
        # The store buffer (tso, pso): entries [address, value, pc of the store, the cycle it
        # entered], oldest first; the
        # entry whose drain waits for the bus, and since when; the first cycle the drain port is free.
        self.buf: list[list[int]] = []
        self.drain = None
        self.drain_cycle = 0
        self.drain_free = 0
        # the core's last grant went to its own request while its drain waited: the drain goes next
        self.own_last = False

    def set(self, reg: int, value: int) -> None:
        if reg:
            self.r[reg] = _s32(value)


class _Line:
    """One way of a cache: which memory line it holds (None: invalid), its state, its last use, and
    whether it is the copy of a coherence miss that has not yet read a word new to its core."""
    def __init__(self):
        self.line, self.state, self.use = None, "I", 0
        self.undecided = False


class _Cache:
    """A core's private cache: sets of ways, and what the miss classification needs to remember
    (docs/timing-model.md, "Miss classification")."""
    def __init__(self, lines: int, ways: int):
        self.sets = [[_Line() for _ in range(ways)] for _ in range(lines // ways)]
        self.uses = 0                 # accesses so far (hits and fills): the LRU clock
        # every line this cache ever held -> how it last left: "evicted", "invalidated" (None: never)
        self.left: dict[int, str | None] = {}
        # every line this cache ever held -> the words of it that are new to this core: written by
        # another core, and not yet read by this core in a copy of the line
        self.news: dict[int, set[int]] = {}
        # a fully associative LRU cache of the same size, seeing the same accesses, never invalidated:
        # the lines it holds, least recently used first
        self.shadow: OrderedDict[int, None] = OrderedDict()
        self.capacity = lines

    def find(self, line: int) -> _Line | None:
        for way in self.sets[line % len(self.sets)]:
            if way.line == line:
                return way
        return None

    def touch(self, way: _Line) -> None:
        self.uses += 1
        way.use = self.uses

    def victim(self, line: int) -> _Line:
        """The way a fill of `line` takes: the lowest-numbered invalid way, else the least recently used."""
        ways = self.sets[line % len(self.sets)]
        free = [w for w in ways if w.line is None]
        return free[0] if free else min(ways, key=lambda w: w.use)


class ReferenceMachine:
    def __init__(self, code: list[int], data: list[int], entry: int = 0, cores: int = DEFAULTS["cores"],
                 mem_latency: int = DEFAULTS["mem_latency"], arbitration: str = DEFAULTS["arbitration"],
                 max_cycles: int = DEFAULTS["max_cycles"], mem_words: int = DEFAULTS["mem_words"],
                 trace: bool = False, stacks: tuple[int, int, int] | None = None,
                 cache: str = DEFAULTS["cache"], cache_lines: int = DEFAULTS["cache_lines"],
                 cache_ways: int = DEFAULTS["cache_ways"], line_words: int = DEFAULTS["line_words"],
                 cache_hit_latency: int = DEFAULTS["cache_hit_latency"],
                 consistency: str = DEFAULTS["consistency"],
                 store_buffer_entries: int = DEFAULTS["store_buffer_entries"],
                 interconnect: str = DEFAULTS["interconnect"], coherence: str = DEFAULTS["coherence"],
                 link_latency: int = DEFAULTS["link_latency"], router_latency: int = DEFAULTS["router_latency"],
                 flit_words: int = DEFAULTS["flit_words"]):
        """stacks: the program's declared stack regions (base, words, count), or None."""
        check(cores=cores, mem_latency=mem_latency, arbitration=arbitration, max_cycles=max_cycles,
              mem_words=mem_words, cache=cache, cache_lines=cache_lines, cache_ways=cache_ways,
              line_words=line_words, cache_hit_latency=cache_hit_latency, consistency=consistency,
              store_buffer_entries=store_buffer_entries, interconnect=interconnect, coherence=coherence,
              link_latency=link_latency, router_latency=router_latency, flit_words=flit_words)
        if coherence == "directory" and type(self) is ReferenceMachine:
            raise S2mcError("coherence directory: the reference model of a ring or a mesh is "
                            "s2mc.simulator.directory.DirectoryMachine (or s2mc.simulator.run_reference)")
        self.code = [w & 0xFFFFFFFF for w in code]
        self.mem = [0] * mem_words
        self.mem[:len(data)] = [_s32(w) for w in data]
        self.cores = [_Core(i, entry) for i in range(cores)]
        self.L, self.arbitration, self.max_cycles = mem_latency, arbitration, max_cycles
        self.stacks = stacks
        self.protocol, self.W, self.H = cache, line_words, cache_hit_latency
        self.caches = [_Cache(cache_lines, cache_ways) for _ in self.cores] if cache != "none" else None
        for k in self.cores if self.caches else ():
            k.stats.update(dict.fromkeys(CACHE_STATS, 0))
        self.consistency, self.E = consistency, store_buffer_entries
        self.interconnect, self.link_latency = interconnect, link_latency
        self.router_latency, self.flit_words = router_latency, flit_words
        self.buffered = consistency != "sc"
        for k in self.cores if self.buffered else ():
            k.stats.update(dict.fromkeys(BUFFER_STATS, 0))
        # Each core's stall cycles counted by the rule (bus_wait + Σ(D − 1) + hits × (H − 1)) as they
        # happen, with or without caches: an oracle for the Result's derived stall_cycles.
        self.stalls = [0] * cores
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
        if self.buffered and self.buffer_issue(core, d, c):
            return
        if d.bus != "none":         # the table's bus class (a trap takes its number's)
            address = self.address(core, d)
            if not 0 <= address < len(self.mem):
                raise RefFault("address_out_of_range", core.id, core.pc, c, address & 0xFFFFFFFF)
            if self.stacks and self.foreign_stack(core.id, address):
                raise RefFault("stack_overflow", core.id, core.pc, c, address)
            core.stats["instructions"] += 1
            if self.caches and d.bus != "string" and self.lookup(core, d, address, c):
                return
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

    # -- step 1 with store buffers ---------------------------------------------------------------
    def buffer_issue(self, core: _Core, d, c: int) -> bool:
        """The store buffer's part of issuing d at c: True when it is done with the instruction
        (held back, buffered or forwarded), False when it issues as without a buffer."""
        key = d.ins.key
        drains = key in ("fence", "xchg", "sync", "trap")      # these wait until the buffer is empty
        store = d.bus == "write"
        if drains and core.buf or store and len(core.buf) >= self.E:
            if core.since is None:
                core.since = c
            core.next_issue = c + 1                            # tries again in the next cycle
            return True
        if core.since is not None:                             # the wait is over: it issues now
            counter = "store_buffer_full_stalls" if store else "fence_stall_cycles"
            core.stats[counter] += c - core.since
            self.stalls[core.id] += c - core.since
            core.since = None
        if store or d.bus == "read":
            address = self.address(core, d)
            if not 0 <= address < len(self.mem):
                raise RefFault("address_out_of_range", core.id, core.pc, c, address & 0xFFFFFFFF)
            if self.stacks and self.foreign_stack(core.id, address):
                raise RefFault("stack_overflow", core.id, core.pc, c, address)
            if store:
                if key == "push":                               # R[r1] first: push r r stores the new pointer
                    core.set(d.r1, address)
                value = core.r[d.r2] if key == "push" else core.r[d.r1]
                core.buf.append([address, value, core.pc, c])
                if self.trace is not None:
                    self.log(c, core, "buffer", len(core.buf), address, self.word(address), value)
            else:
                newest = [e for e in core.buf if e[0] == address]
                if not newest:
                    return False                               # memory, cache or bus, as without
                value = newest[-1][1]
                core.set(d.r2 if key == "pop" else d.r1, value)
                if key == "pop":
                    core.set(d.r1, address - 1)
                core.stats["store_forwards"] += 1
                core.stats["mem_reads"] += 1
                self.log(c, core, "forward", 0, address, value, value)
            core.stats["instructions"] += 1
            core.pc += 1
            core.next_issue = c + 1
            return True
        if key == "fence":
            core.stats["instructions"] += 1
            self.log(c, core, "issue")
            core.pc += 1
            core.next_issue = c + 1
            return True
        return False

    def start_drains(self, c: int) -> None:
        """After step 1: each core with a free drain port starts draining one entry that entered
        before c (tso: the oldest; pso: the lowest address among the oldest entries of each
        address). With caches a write hit takes effect now, else the entry requests the bus."""
        for core in self.cores:
            if not core.buf or core.drain is not None or core.drain_free > c:
                continue
            entry = self.choose_drain(core, c)
            if entry is None:
                continue
            if self.caches:
                way = self.caches[core.id].find(entry[0] // self.W)
                if way is not None and way.state in WRITE_HITS[self.protocol]:
                    self.write_entry(core, entry, c, "drain hit", 0)
                    self.use(core, way, _STORE, entry[0])
                    core.stats["cache_hits"] += 1
                    if way.state == "E":
                        with self.acting_for(core, entry):
                            self.change(c, core, core, way, "M", "PrWr")
                    core.drain_free = c + self.H
                    continue
            core.drain, core.drain_cycle = entry, c

    def choose_drain(self, core: _Core, c: int) -> list[int] | None:
        """The entry a drain starting at c takes (rule 5), or None: tso the oldest, pso the lowest
        address among the oldest entries of each address; either only if it entered before c."""
        firsts = {}
        for e in core.buf:
            firsts.setdefault(e[0], e)
        ready = [e for e in firsts.values() if e[3] < c]
        if not ready:
            return None
        entry = core.buf[0] if self.consistency == "tso" else min(ready, key=lambda e: e[0])
        return entry if entry[3] < c else None

    @contextmanager
    def acting_for(self, core: _Core, entry: list[int]):
        """While a drain's cache changes are made, the core's pc is the store's: state events name
        the instruction whose access caused them."""
        pc, core.pc = core.pc, entry[2]
        try:
            yield
        finally:
            core.pc = pc

    def write_entry(self, core: _Core, entry: list[int], c: int, event: str, wait: int) -> None:
        """A buffered store takes effect in memory at c and leaves the buffer."""
        a, value, pc, _ = entry
        before = self.mem[a]
        self.mem[a] = _s32(value)
        core.buf.remove(entry)
        core.stats["store_drains"] += 1
        core.stats["mem_writes"] += 1
        if self.trace is not None:
            self.trace.append((c, core.id, pc, event, wait, a, before, self.mem[a]))

    def drain_access(self, core: _Core, g: int) -> None:
        """Core's drain request is granted at g: its entry's write, a bus transaction of D cycles
        (L without caches) that the core does not wait for."""
        entry, wait = core.drain, g - core.drain_cycle
        a, s = entry[0], core.stats
        if self.caches:
            with self.acting_for(core, entry):
                name, D, events = self.transaction(core, _STORE, a, g)
                self.write_entry(core, entry, g, f"drain {name} {D}", wait)
                for way, new, why in events:
                    if why != "evict" and way.line is None:
                        way.line = a // self.W
                    self.change(g, core, core, way, new, why)
            self.use(core, self.caches[core.id].find(a // self.W), _STORE, a)
        else:
            D = self.L
            self.write_entry(core, entry, g, "drain", wait)
        s["mem_accesses"] += 1
        s["bus_busy_cycles"] += D
        s["drain_bus_accesses"] += 1
        s["drain_bus_cycles"] += D
        core.drain, core.drain_free = None, g + D
        self.bus_free = g + D
        self.streak = self.streak + 1 if core.id == self.last_grant else 1
        self.last_grant = core.id

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
        # each core's candidate: its own request, else its store buffer's drain request; when both
        # wait they take turns (a core spinning on loads still drains its stores)
        asked = {k.id: k.request_cycle for k in self.cores if k.state == "request" and k.request_cycle <= c}
        drains = {k.id: k.drain_cycle for k in self.cores
                  if k.drain is not None and k.drain_cycle <= c and (k.id not in asked or k.own_last)}
        since = {**asked, **drains}
        waiting = [k for k in self.cores if k.id in since]
        if not waiting:
            return
        n = len(self.cores)
        if self.arbitration == "fifo":
            win = min(waiting, key=lambda k: (since[k.id], k.id))
        elif self.arbitration == "fixed":
            win = min(waiting, key=lambda k: k.id)
        elif self.arbitration == "burst4":     # fixed, but after BURST_LIMIT grants in a row the
            # last grantee goes last
            win = min(waiting, key=lambda k: (k.id == self.last_grant and self.streak >= BURST_LIMIT, k.id))
        else:
            win = min(waiting, key=lambda k: (k.id - self.last_grant - 1) % n)
        if win.id in drains:
            win.own_last = False
            self.drain_access(win, c)
        else:
            win.own_last = win.drain is not None
            self.access(win, c)

    # -- the caches: lookup at issue (step 1), transactions at the grant (step 2) -----------------
    def lookup(self, core: _Core, d, a: int, c: int) -> bool:
        """Looks the access up in the core's cache at its issue cycle c; on a hit it takes effect now
        (True). A miss, or a write to a line this core may not write without the bus, is False."""
        cache, line = self.caches[core.id], a // self.W
        way = cache.find(line)
        hits = READ_HITS if d.bus == "read" else WRITE_HITS
        if way is None or way.state not in hits[self.protocol]:
            return False
        self.use(core, way, d, a)
        before, after = self.perform(core, d, a)
        s = core.stats
        s["cache_hits"] += 1
        s["hit_stall_cycles"] += self.H - 1
        self.stalls[core.id] += self.H - 1
        self.log(c, core, "hit", 0, a, before, after)
        if d.bus != "read" and way.state == "E":      # the first write to an exclusive line
            self.change(c, core, core, way, "M", "PrWr")
        core.pc += 1
        core.next_issue = c + self.H
        return True

    def change(self, c: int, owner: _Core, cause: _Core, way: _Line, new: str, why: str) -> None:
        """Sets a line of owner's cache to `new`, logging the change under the owner's id: wait =
        the core whose access caused it, address = the line's base, before/after = the states."""
        old = way.state
        if old == new:
            return
        if self.trace is not None:
            self.trace.append((c, owner.id, cause.pc, f"state {why}", cause.id,
                               way.line * self.W, old, new))
        way.state = new
        if new == "I":
            way.line = None

    def use(self, core: _Core, way: _Line, d, a: int) -> None:
        """Core's access to word a takes effect in its cache's `way` (a hit, an upgrade or update, or
        the access of a fill): the LRU clocks, then what it reads and writes for the classification."""
        cache, line, word = self.caches[core.id], a // self.W, a % self.W
        cache.touch(way)
        cache.shadow[line] = None
        cache.shadow.move_to_end(line)
        if len(cache.shadow) > cache.capacity:
            cache.shadow.popitem(last=False)
        news = cache.news[line]
        if d.bus in ("read", "swap") and word in news:    # the copy brings this core a new word
            news.clear()                                   # ... and with it every new word of the line
            if way.undecided:
                core.stats["true_sharing_misses"] += 1
                way.undecided = False
        if d.bus in ("write", "swap"):
            news.discard(word)                             # the core's own value now
            for other in self.caches:
                if other is not cache and line in other.news:
                    other.news[line].add(word)

    def end_copy(self, core: _Core, way: _Line, how: str) -> None:
        """The copy in `way` leaves core's cache (evicted or invalidated): a coherence miss's copy
        that never read a new word was a false-sharing miss."""
        if way.undecided:
            core.stats["false_sharing_misses"] += 1
            way.undecided = False
        self.caches[core.id].left[way.line] = how

    def classify(self, core: _Core, line: int) -> bool:
        """Counts the class of core's miss on `line`; True for a coherence miss."""
        cache, s = self.caches[core.id], core.stats
        if line not in cache.left:
            s["cold_misses"] += 1
            cache.left[line], cache.news[line] = None, set()
        elif cache.left[line] == "invalidated":
            s["coherence_misses"] += 1
            return True
        elif line in cache.shadow:
            s["conflict_misses"] += 1
        else:
            s["capacity_misses"] += 1
        return False

    def transaction(self, core: _Core, d, a: int, g: int) -> tuple[str, int, list]:
        """Decides and applies, at the grant g, the transaction of core's cached access to word a:
        states of every cache, supplier, write-backs and counters. Returns (name, bus time D, the
        requester's own changes): those are logged by the caller, after its grant."""
        P, W, L, s = self.protocol, self.W, self.L, core.stats
        line = a // W
        mine = self.caches[core.id]
        way = mine.find(line)
        others = [(k, self.caches[k.id].find(line)) for k in self.cores if k is not core]
        others = [(k, w) for k, w in others if w is not None]
        events: list[tuple] = []        # the requester's own changes, logged after its grant
        if way is not None:             # present: an upgrade (S/O -> M) or a Dragon update
            s["cache_hits"] += 1
            if P == "dragon":
                name, D = "BusUpd", 1
                s["bus_upd"] += 1
                for k, w in others:
                    self.change(g, k, core, w, "Sc", name)
                events.append((way, "Sm" if others else "M", name))
            else:
                name, D = "BusUpgr", 1
                s["bus_upgr"] += 1
                self.invalidate(core, others, g, name)
                events.append((way, "M", name))
            return name, D, events
        # absent: a fill, after making room
        s["cache_misses"] += 1
        D = 0
        victim = mine.victim(line)
        if victim.line is not None:
            if victim.state in DIRTY:
                s["writebacks"] += 1
                D += L + W - 1
            self.end_copy(core, victim, "evicted")
            events.append((victim, "I", "evict"))
        victim.undecided = self.classify(core, line)
        write = d.bus != "read"
        dirty = [(k, w) for k, w in others if w.state in DIRTY]
        if P == "dragon":
            name = "BusRd+BusUpd" if write else "BusRd"
            supplier = dirty[0][0] if dirty else None
            after = {"M": "Sm", "E": "Sc", "Sm": "Sm", "Sc": "Sc"}
            for k, w in others:
                self.change(g, k, core, w, "Sc" if write else after[w.state], name)
            new = ("Sm" if others else "M") if write else ("Sc" if others else "E")
            s["bus_rd"] += 1
            if write and others:
                s["bus_upd"] += 1
                D += 1
        elif write:
            name = "BusRdX"
            supplier = dirty[0][0] if dirty else None
            if supplier is not None and P != "moesi":
                supplier.stats["writebacks"] += 1     # a flush that memory picks up
            self.invalidate(core, others, g, name)
            new = "M"
            s["bus_rdx"] += 1
        else:
            name = "BusRd"
            supplier = dirty[0][0] if dirty else None
            if P == "moesi":
                after = {"M": "O", "O": "O", "E": "S", "S": "S"}
            else:
                after = {"M": "S", "E": "S", "S": "S"}
                if supplier is not None:
                    supplier.stats["writebacks"] += 1
            for k, w in others:
                self.change(g, k, core, w, after[w.state], name)
            new = "S" if P == "msi" or others else "E"
            s["bus_rd"] += 1
        if supplier is not None:
            s["cache_to_cache"] += 1
            D += W
        else:
            D += L + W - 1
        events.append((victim, new, name))
        return name, D, events

    def invalidate(self, core: _Core, others: list, g: int, name: str) -> None:
        """Every other copy of the line -> I, each remembering who took it (coherence misses)."""
        for k, w in others:
            self.end_copy(k, w, "invalidated")
            self.change(g, k, core, w, "I", name)
            k.stats["invalidations_received"] += 1

    def perform(self, core: _Core, d, a: int) -> tuple[int, int]:
        """The data effect of a memory instruction on word a; returns the word before and after."""
        key, r, s = d.ins.key, core.r, core.stats
        m, w = self.cell(core, a) if d.bus != "string" else (self.mem, a)
        before = m[w]
        if key.startswith("ld"):
            core.set(d.r1, m[w]); s["mem_reads"] += 1
        elif key.startswith("st"):
            m[w] = r[d.r1]; s["mem_writes"] += 1
        elif key == "push":
            core.set(d.r1, a); m[w] = r[d.r2]; s["mem_writes"] += 1
        elif key == "pop":
            core.set(d.r2, m[w]); core.set(d.r1, a - 1); s["mem_reads"] += 1
        elif key == "xchg":
            old = m[w]; m[w] = r[d.r1]; core.set(d.r1, old)
            s["mem_reads"] += 1; s["mem_writes"] += 1
        else:  # bus class "string" (trap #3): the string at a
            text, i = [], a
            while i < len(m) and m[i] != 0:
                text.append(chr(m[i] & 0xFF)); i += 1
            self.output.append((core.request_cycle, core.id, "".join(text)))
            s["mem_reads"] += 1
        return before, m[w]

    def word(self, a: int) -> int:
        """The coherent value of word a now: memory's on the bus (always current there)."""
        return self.mem[a]

    def cell(self, core: _Core, a: int) -> tuple[list[int], int]:
        """Where the word a core's access to address a reads and writes lives: (list, index). Here
        always memory (the bus model's caches hold states only); the directory's copies hold words."""
        return self.mem, a

    def memory(self) -> list[int]:
        """The data memory's words at the end of the run (with caches too: memory is always current)."""
        return list(self.mem)

    def access(self, core: _Core, g: int) -> None:
        d, a = core.request
        s, wait = core.stats, g - core.request_cycle
        if self.caches and d.bus != "string":
            name, D, events = self.transaction(core, d, a, g)
            before, after = self.perform(core, d, a)
            self.log(g, core, f"grant {name} {D}", wait, a, before, after)
            for way, new, why in events:
                if why != "evict" and way.line is None:       # the fill: the way now holds the line
                    way.line = a // self.W
                self.change(g, core, core, way, new, why)
            self.use(core, self.caches[core.id].find(a // self.W), d, a)
        else:
            D = self.L
            before, after = self.perform(core, d, a)
            self.log(g, core, "grant", wait, a, before, after)
        self.stalls[core.id] += wait + D - 1
        s["mem_accesses"] += 1
        s["bus_wait_cycles"] += wait
        s["bus_busy_cycles"] += D
        core.pc += 1
        core.state, core.next_issue = "run", g + D
        self.bus_free = g + D
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

    def running(self, c: int) -> bool:
        """False once every core has halted; a core still running at max_cycles is a fault."""
        if all(k.state == "halted" for k in self.cores):
            return False
        if c >= self.max_cycles:
            k = next(k for k in self.cores if k.state != "halted")
            raise RefFault("cycle_limit", k.id, k.pc, self.max_cycles)
        return True

    def issue_all(self, c: int) -> None:
        """Step 1: every core whose next instruction issues at c issues it, in core-id order."""
        for k in self.cores:
            if k.state == "run" and k.next_issue == c:
                self.issue(k, c)

    def step(self) -> bool:
        """Simulates cycle `now` and moves on to the next; False (and nothing done) once every
        core has halted."""
        c = self.now
        if not self.running(c):
            return False
        self.issue_all(c)
        if self.buffered:
            self.start_drains(c)
        self.arbitrate(c)
        self.barrier(c)
        self.now = c + 1
        return True

    def run(self) -> dict:
        while self.step():
            pass
        for core in self.cores if self.caches else ():    # the copies still held end with the run
            for way in (w for ways in self.caches[core.id].sets for w in ways if w.line is not None):
                self.end_copy(core, way, "held at the end")
        self.output.sort(key=lambda e: (e[0], e[1]))
        if self.trace is not None:
            self.trace.sort(key=lambda e: (e[0], e[1]))   # stable: a core's events keep their order
        return {
            "cycles": max(k.stats["finish_cycle"] for k in self.cores),
            "cores": [dict(k.stats) for k in self.cores],
            "stall_cycles": list(self.stalls),
            "output": self.output,
            "bus_busy_cycles": sum(k.stats["bus_busy_cycles"] for k in self.cores),
        }
