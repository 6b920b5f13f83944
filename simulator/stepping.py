"""Stepping a machine: pause it at a cycle, at a breakpoint or after a watched write, look inside,
go on to the end (docs/debugger.md).

    from s2mc.simulator.stepping import Stepper
    s = Stepper(program, cores=4)
    s.add_break("acquire", core=1)
    stop = s.cont()             # core 1 is about to issue the instruction at `acquire`
    s.registers(1), s.bus(), s.cores()
    s.step(10)                  # ten more cycles
    result = s.finish()         # the Result Machine.run() gives, counters and output alike

What "at cycle C" means (the machine's state when it pauses): every event of the cycles before C
has happened and nothing of cycle C or later, exactly the state of the cycle-stepped reference
model (simulator/reference.py) after it simulated cycles 0 .. C-1. A core is then `running` (it
issues the instruction at its pc in cycle C), on the `bus` (its access took effect at its grant,
the bus stays busy until grant + L - 1, and it issues again at grant + L), `waiting` for the bus
(since its request cycle), at a barrier (`sync`), `halted` or `stopped` (after a fault). With store
buffers (consistency tso, pso) a core can also be `held`: held back at its pc since some cycle, a
fence, xchg, sync or trap until its buffer is empty, a store until the buffer has room; it tries
again in cycle C. `store_buffer(core)` shows a core's buffer.

A breakpoint at pc stops the machine at the cycle in which a core would issue that instruction,
before it does; a watch stops it after a write (st, push, xchg; even of the same value) to its
address: at the start of the cycle after the grant. With store buffers memory changes when a
store drains, not when it enters the buffer, so a watch stops after the drain (Write.drain); a held
core does not stop again at a breakpoint on the instruction it is held at. An advance stops at
whichever comes first of its target cycle, a breakpoint and a watched write, and never again at a
breakpoint a core stands on when it starts (so `cont` goes past the breakpoint it stopped at).

A core can also advance by instructions: `step_instruction(core)` runs until that core is about
to issue its next instruction, `finish_call(core)` until the function it is in has returned.

Reverse stepping (`history` bytes > 0): the stepper keeps copies of the whole machine (checkpoints)
every so many cycles and can go back to any earlier cycle exactly: `goto(cycle)` restores the
latest checkpoint at or before it and runs forward to it (the machine is deterministic, so the
state is the one the forward run had). `last_before(scan, cycle)` finds the last cycle before
`cycle` at which a forward scan stops, by scanning windows that widen backwards. When the
checkpoints would pass `history` bytes, every other one goes and the spacing doubles.

A ring or a mesh with directory coherence (interconnect ring|mesh) steps the same way on the fast
engine's networked machine; a core is then `waiting` for its miss (since it issued it) or `hit`
(its access hit its cache, it issues again at next_issue), and `line(ADDR)`, `directory()`,
`messages()`, `home_queue(tile)` and `stalled(core)` show the directory and the network
(docs/debugger.md, "A ring or a mesh").

Only the fast engine steps: the SystemC engine runs in a child process from start to end.
"""
from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

from s2mc.isa import Program
from s2mc.common.errors import S2mcError
from s2mc.isa.instructions import decode

from . import Machine, Result, SimFault, _network_report, build_result, code_label

NEVER = (1 << 64) - 1    # the engine's "no pause"
FIRST_SPACING = 1 << 16  # cycles between checkpoints at first, at least (doubles as the history fills)
MIN_CHECKPOINTS = 4      # kept whatever the history's size
def _mnemonic(word: int) -> str:
    ins = decode(word).ins       # None for data in the code image
    return ins.mnemonic if ins is not None else ""


_PLACE = re.compile(r"^([A-Za-z_.][\w.]*)?\s*([+-]\s*(?:0x[0-9a-fA-F]+|\d+))?$")


@dataclass(frozen=True)
class CoreState:
    """One core at the current cycle. `since`: when the state began (running: the current cycle;
    bus: the grant; waiting: the request; sync: the arrival; halted: the halting trap)."""
    core: int
    state: str              # running | bus | hit | waiting | sync | held | halted | stopped
    pc: int
    since: int
    next_issue: int | None  # running and bus: the cycle its next instruction issues
    address: int | None     # waiting: the data address it asks for
    counters: dict = field(repr=False, default_factory=dict)


@dataclass(frozen=True)
class BusState:
    """The bus at the current cycle: who holds it (granted before now, busy until `free_at` - 1)
    and who waits for it, in request order (core, request cycle, address)."""
    holder: int | None
    granted: int | None
    free_at: int
    waiting: list[tuple[int, int, int]]
    drain: bool = False     # the holder's grant is a drain of its store buffer, not its pc's access


@dataclass(frozen=True)
class Write:
    """A watched write: granted in `cycle` to core `core` at `pc`; the word before and after.
    `drain`: core's store buffer drained it (pc: the store's), in `cycle`."""
    cycle: int
    core: int
    pc: int
    address: int
    before: int
    after: int
    drain: bool = False


@dataclass(frozen=True)
class BufferedStore:
    """A store in a store buffer: its address, value, pc, the cycle it entered, and `state`:
    "bus" (its drain waits for the bus since `drain_since`), "next" (the next drain takes it,
    from `drain_since`, when the drain port is free) or "" (later)."""
    address: int
    value: int
    pc: int
    since: int
    state: str = ""
    drain_since: int | None = None


@dataclass(frozen=True)
class LineState:
    """A line of a ring or mesh machine now (docs/debugger.md, `dir`): its number and first word,
    its home tile and the directory entry there (state, S^D the transient one; the owner of an M
    line; the sharers), every core's copy (core, state: transient ones too, and a copy in its
    eviction buffer marked "evicting"), and the home: the first cycle it is free and its queue,
    oldest first, as (type, source, destination, line, requester), of every line it is home to."""
    line: int
    address: int
    home: int
    state: str
    owner: int | None
    sharers: tuple[int, ...]
    copies: tuple[tuple[int, str, str], ...]     # (core, state, "cache" | "evicting")
    home_free: int
    queue: tuple[tuple[str, int, int, int, int], ...]


@dataclass(frozen=True)
class InFlight:
    """A protocol message in the network now (docs/debugger.md, `net`): its type, source and
    destination tiles, line and requester, the router it is at, and either the output port it waits
    for there (from `ready`, the cycle it may go) or, with `delivered`, the cycle its last flit
    arrives at its destination tile (port "")."""
    kind: str
    src: int
    dst: int
    line: int
    requester: int
    router: int
    port: str
    ready: int
    delivered: int

    @property
    def arriving(self) -> bool:
        return bool(self.delivered)


@dataclass(frozen=True)
class Stop:
    """Where an advance stopped: the cycle, and why (any of "cycle": the target cycle, "break",
    "watch", "end": the run ended, "request": Stepper.request_stop). `breaks` lists (breakpoint
    number, core, pc) a core stands on."""
    cycle: int
    reasons: tuple[str, ...]
    breaks: tuple[tuple[int, int, int], ...] = ()
    watches: tuple[tuple[int, Write], ...] = ()

    @property
    def interrupted(self) -> bool:
        """It stopped for a breakpoint, a watch, the end or a request (not only for its target)."""
        return bool(self.breaks or self.watches or "end" in self.reasons or "request" in self.reasons)


class Stepper:
    """A machine (Machine's options; the fast engine) that runs in steps. See the module's doc."""

    def __init__(self, program: Program, history: int = 0, checkpoint_every: int | None = None, **config):
        if config.get("engine", "fast") != "fast":
            raise S2mcError("the systemc engine cannot step (it runs in a child process from start to end); "
                            "debug with the fast engine, which gives the same cycles")
        for option in ("trace", "trace_file", "timeline"):
            if config.get(option):
                raise S2mcError(f"a stepped machine does not take {option}; run it with Machine")
        if config.get("interconnect", "bus") != "bus" and config.get("consistency", "sc") != "sc":
            # the networked machine's stepping watches the cores' own writes, not a buffer's drains
            raise S2mcError(f"interconnect {config['interconnect']} with consistency {config['consistency']}: a "
                            "stepped ring or mesh has no store buffers so far; step it with consistency sc, "
                            "or run it with Machine (s2mc run)")
        self.program = program
        # Machine checks the program and the parameters and loads the engine; we drive the engine.
        self._machine = Machine(program, **config)
        self.config = self._machine.config
        self.networked = self.config.networked    # a ring or a mesh with directory coherence
        self._engine = self._machine._engine
        self._code_size = program.top("code")
        self.cycle = 0               # the current cycle: everything before it has happened
        self.result: Result | None = None
        self.fault: SimFault | None = None
        self._started = False
        self._seconds = 0.0
        self._breaks: dict[int, tuple[int, int | None]] = {}    # number: (pc, core or None: any)
        self._watches: dict[int, int] = {}                      # number: address
        self._numbers = 0
        self._temps: dict[int, int] = {}       # temporary breakpoints of an advance: pc -> core mask
        self._suppressed = False               # inside no_breaks()
        self.interruptible = False             # pause now and then to see request_stop()
        self._stop_requested = False
        self._return: tuple[int, int, int] | None = None   # run_to_return's (core, pc, fp)
        self.history = history                 # bytes of checkpoints for going back (0: none)
        self._checkpoints: dict[int, object] = {}
        # A checkpoint copies the memory: a cycle of spacing per word keeps the copies' share of
        # a recorded run small whatever the memory's size (bench/bench_stepping.py).
        self._spacing = checkpoint_every or max(FIRST_SPACING, self.config.mem_words)
        self._kinds = [_mnemonic(w) for w in program.code_image]    # for calls and returns

    # -- places ---------------------------------------------------------------------------------
    def place(self, where: str | int, kind: str, n: int = 1) -> int:
        """A code (pc) or data address from a number, a label or label+offset: the one check that
        an address (and the n words or instructions from it) lies in the program or the memory."""
        if isinstance(where, int):
            addr = where
        else:
            text = where.strip()
            try:
                addr = int(text, 0)
            except ValueError:
                m = _PLACE.match(text)
                if not m or not m[1]:
                    raise S2mcError(f"'{text}' is neither a number nor a label (+offset)") from None
                sym = self.program.symbols.get(m[1].lower())
                if sym is None or sym.kind not in (kind, "const"):
                    raise S2mcError(f"no {kind} label '{m[1]}' in the program")
                addr = sym.value + (int(m[2].replace(" ", ""), 0) if m[2] else 0)
        code = kind == "code"
        top = self._code_size if code else self.config.mem_words
        if n == 1 and not 0 <= addr < top:
            raise S2mcError(f"{'pc' if code else 'data address'} {addr} is outside the "
                            f"{'program' if code else 'memory'} (0..{top - 1})")
        if n < 1 or not 0 <= addr or addr + n > top:
            raise S2mcError(f"{n} {'instructions at pc' if code else 'words at address'} {addr} do not fit in "
                            f"the {'program' if code else 'memory'} (0..{top - 1})")
        return addr

    def _core(self, core: int) -> int:
        if not isinstance(core, int) or not 0 <= core < self.config.cores:
            raise S2mcError(f"core {core} does not exist (0..{self.config.cores - 1})")
        return core

    # -- the caches -------------------------------------------------------------------------------
    def cache(self, core: int) -> list[tuple[int, str] | None]:
        """A core's cache, slot by slot (slot = set x ways + way): (the line's base address, its
        state) for a valid line, None for an invalid one; [] without caches. Line data is memory's:
        the engines keep every word's current value once (docs/timing-model.md, "The caches")."""
        self._core(core)
        return [None if slot is None else tuple(slot[:2]) for slot in self._engine.cache(core)]

    def cache_words(self, core: int) -> list[list[int] | None]:
        """A ring or a mesh: each valid way's own copy of its line's words, slot by slot as
        cache(core) (every copy holds its words there, and a copy waiting for its Data or its
        Inv-Acks may hold older ones than memory); None for an invalid way."""
        self._networked_only("a copy's own words")
        self._core(core)
        return [None if slot is None else list(slot[3]) for slot in self._engine.cache(core)]

    # -- the network and the directory (a ring or a mesh) -----------------------------------------
    def _networked_only(self, what: str) -> None:
        if not self.networked:
            raise S2mcError(f"this is the bus machine (interconnect {self.config.interconnect}, coherence "
                            f"{self.config.coherence}): {what} is a ring's or a mesh's "
                            "(--interconnect ring|mesh --coherence directory)")

    def line(self, where: str | int) -> LineState:
        """The line that holds a data label or address: its home, directory entry and copies."""
        self._networked_only("the directory")
        line = self.place(where, "data") // self.config.line_words
        return self._line_state(line, self._copies(), {})

    def directory(self) -> list[LineState]:
        """Every line in play now, in order: a copy in a cache or an eviction buffer, or a message
        for it in the network, a home's queue or a controller's stall (every line whose directory
        entry is not I is among them: its owner or sharers hold it, or their Put is on its way)."""
        self._networked_only("the directory")
        copies = self._copies()
        homes = {h: self._engine.home(h) for h in range(self.config.cores)}
        seen = set(copies) | {p[3] for p in self._engine.packets()}
        for h, (_, queue) in homes.items():
            seen.update(m[3] for m in queue)
            seen.update(m[3] for m in self._engine.stalled(h))
        return [self._line_state(line, copies, homes) for line in sorted(seen)]

    def lines(self) -> list[int]:
        """The lines in play now (directory()), in order."""
        return [v.line for v in self.directory()]

    def _copies(self) -> dict[int, list[tuple[int, str, str]]]:
        """line -> every core's copy of it (core, state, "cache" | "evicting"), in core order."""
        w, out = self.config.line_words, {}
        for k in range(self.config.cores):
            for slot in self._engine.cache(k):
                if slot is not None:
                    out.setdefault(slot[0] // w, []).append((k, slot[1], "cache"))
            for base, st in self._engine.evicting(k):
                out.setdefault(base // w, []).append((k, st, "evicting"))
        return out

    def _line_state(self, line: int, copies: dict, homes: dict) -> LineState:
        state, owner, sharers = self._engine.entry(line)
        home = line % self.config.cores
        free, queue = homes[home] if home in homes else self._engine.home(home)
        return LineState(line, line * self.config.line_words, home, state, None if owner < 0 else owner,
                         tuple(sharers), tuple(sorted(copies.get(line, ()))), free, tuple(tuple(m) for m in queue))

    def messages(self) -> list[InFlight]:
        """The protocol messages in the network now, in the order they were sent."""
        self._networked_only("the network")
        return [InFlight(*p) for p in self._engine.packets()]

    def home_queue(self, tile: int) -> list[tuple[str, int, int, int, int]]:
        """The messages waiting in a tile's home, oldest first (as `stalled`)."""
        self._networked_only("the network")
        return [tuple(m) for m in self._engine.home(self._core(tile))[1]]

    def stalled(self, core: int) -> list[tuple[str, int, int, int, int]]:
        """The messages core's cache controller holds back (it handles them when its own miss is
        done), oldest first, as (type, source, destination, line, requester)."""
        self._networked_only("the network")
        return [tuple(m) for m in self._engine.stalled(self._core(core))]

    # -- breakpoints and watches ----------------------------------------------------------------
    def add_break(self, where: str | int, core: int | None = None) -> int:
        """A breakpoint at a code label or pc, for one core or (None) every core; its number."""
        pc = self.place(where, "code")
        if core is not None:
            self._core(core)
        self._numbers += 1
        self._breaks[self._numbers] = (pc, core)
        self._sync_break(pc)
        return self._numbers

    def add_watch(self, where: str | int) -> int:
        """A watch on writes to a data label or address; its number."""
        address = self.place(where, "data")
        self._numbers += 1
        self._watches[self._numbers] = address
        self._engine.set_watch(address, True)
        return self._numbers

    def delete(self, number: int) -> None:
        if number in self._breaks:
            pc, _ = self._breaks.pop(number)
            self._sync_break(pc)
        elif number in self._watches:
            address = self._watches.pop(number)
            self._engine.set_watch(address, address in self._watches.values())
        else:
            raise S2mcError(f"no breakpoint or watch number {number}")

    @property
    def breakpoints(self) -> dict[int, tuple[int, int | None]]:
        return dict(self._breaks)

    @property
    def watches(self) -> dict[int, int]:
        return dict(self._watches)

    def _mask(self, core: int | None) -> int:
        return (1 << self.config.cores) - 1 if core is None else 1 << core

    def _sync_break(self, pc: int) -> None:
        mask = self._temps.get(pc, 0)
        for at, core in self._breaks.values() if not self._suppressed else ():
            if at == pc:
                mask |= self._mask(core)
        self._engine.set_break(pc, [k for k in range(self.config.cores) if mask >> k & 1])

    @contextmanager
    def _temporary(self, pcs, core: int):
        """Breakpoints for `core` at `pcs` for the advances inside the block (not numbered, not
        reported as breakpoints)."""
        self._temps = {pc: self._mask(core) for pc in pcs}
        for pc in self._temps:
            self._sync_break(pc)
        try:
            yield
        finally:
            old, self._temps = self._temps, {}
            for pc in old:
                self._sync_break(pc)

    @contextmanager
    def no_breaks(self):
        """The numbered breakpoints and the watches are off inside the block (a replay or a scan
        that must not stop for them; temporary breakpoints still work)."""
        if self._suppressed:
            yield
            return
        self._suppressed = True
        pcs = {pc for pc, _ in self._breaks.values()}
        addresses = set(self._watches.values())
        try:
            for pc in pcs:
                self._sync_break(pc)
            for a in addresses:
                self._engine.set_watch(a, False)
            yield
        finally:
            self._suppressed = False
            for pc in pcs:
                self._sync_break(pc)
            for a in addresses:
                self._engine.set_watch(a, True)

    # -- advancing ------------------------------------------------------------------------------
    @property
    def done(self) -> bool:
        """The run ended (every core halted, or a fault)."""
        return self.result is not None or self.fault is not None

    def _check_going(self) -> None:
        if self.fault is not None:
            raise S2mcError(f"the run stopped with a fault at cycle {self.fault.fault['cycle']}")
        if self.result is not None:
            raise S2mcError(f"the run has ended (cycle {self.result.cycles})")

    def _advance(self, target: int) -> Stop:
        self._check_going()
        if not self._started and self.history:
            self._checkpoints[0] = self._engine.checkpoint()
        self._started = True
        while True:
            bound = target
            if self.history or self.interruptible:
                # pause every `spacing` cycles: to keep a checkpoint, to see a request to stop
                last = self._last_checkpoint() if self.history else self.cycle
                bound = min(target, max(self.cycle + 1, last + self._spacing))
            stop = self._advance_once(bound, target)
            self._keep_checkpoint()
            if bound == target or stop.cycle < bound or stop.interrupted or self._standing_on_temp():
                return stop
            if self._stop_requested:
                self._stop_requested = False
                return Stop(stop.cycle, ("request",))

    def request_stop(self) -> None:
        """Asks a running advance to stop at its next pause (every `spacing` cycles when history
        or `interruptible` is on): safe from a signal handler (Ctrl-C), the state stays whole."""
        self._stop_requested = True

    def _standing_on_temp(self) -> bool:
        if self._return is not None:
            core, pc, fp = self._return
            c = self.core(core)
            if c.state == "running" and c.pc == pc and self.registers(core)[29] == fp:
                return True
        return any(c.state == "running" and (self._temps.get(c.pc, 0) >> c.core) & 1 for c in self.cores())

    def _advance_once(self, bound: int, target: int) -> Stop:
        t0 = time.perf_counter()
        paused = self._engine.advance(min(bound, NEVER))
        self._seconds += time.perf_counter() - t0
        if not paused:
            try:
                raw = self._engine.result()
                self.result = build_result(raw, self.program, self.config)
                if "network" in raw:
                    self.result.network = _network_report(raw, self.result, self.config)
            except SimFault as fault:
                self.fault = fault
                self.cycle = fault.fault["cycle"]
                raise
            self.result.sim_seconds = self._seconds
            self.cycle = self.result.cycles
            return Stop(self.cycle, ("end",))
        cycle = self.cycle = self._engine.paused_at()
        breaks = () if self._suppressed else self.standing()
        hit = self._engine.write_hit()
        watches = ()
        if hit is not None and hit[0] + 1 == cycle:
            w = Write(*hit)
            watches = tuple((n, w) for n, a in sorted(self._watches.items()) if a == w.address)
        reasons = (("cycle",) if cycle == target else ()) + (("break",) if breaks else ()) + \
                  (("watch",) if watches else ())
        return Stop(cycle, reasons, breaks, watches)

    # -- instructions -----------------------------------------------------------------------------
    def mnemonic(self, pc: int) -> str:
        """The mnemonic of the instruction at pc ("" for a word that is none, or outside)."""
        return self._kinds[pc] if 0 <= pc < len(self._kinds) else ""

    def is_call(self, pc: int) -> bool:
        return self.mnemonic(pc) == "jal"

    @property
    def started(self) -> bool:
        """Some advance has happened."""
        return self._started

    def check_core(self, core: int) -> int:
        """The core, when it exists; else S2mcError."""
        return self._core(core)

    def check_going(self) -> None:
        """S2mcError when the run has ended (an advance cannot go on)."""
        self._check_going()

    def step_instruction(self, core: int, limit: int = NEVER) -> Stop:
        """Advances until `core` is about to issue its next instruction (it is `running` at a
        later cycle), or until it halted, or to an earlier breakpoint, watch or `limit`."""
        self._core(core)
        self._check_going()
        start = self.cycle
        c = self.core(core)
        if c.state in ("halted", "stopped"):
            raise S2mcError(f"core {core} has halted (in cycle {c.since})")
        while True:
            if c.state == "running" and self.cycle > start:
                return stop
            if c.state == "running":
                stop = self._advance(min(self.cycle + 1, limit))
            elif c.state == "bus":
                stop = self._advance(min(c.next_issue, limit))
            elif c.state == "held":
                stop = self._advance(min(self.cycle + 1, limit))   # it tries again each cycle
            elif c.state in ("waiting", "sync"):
                # a granted access goes on at the next pc; a released barrier where sync left it
                resume = c.pc + 1 if c.state == "waiting" else c.pc
                if resume < len(self._kinds):
                    with self._temporary([resume], core):
                        stop = self._advance(limit)
                else:
                    stop = self._advance(min(self.cycle + 1, limit))
            else:
                return stop       # it halted
            if stop.interrupted or self.cycle >= limit:
                return stop
            c = self.core(core)

    def run_to_return(self, core: int, pc: int, fp: int, limit: int = NEVER) -> Stop:
        """Advances until `core` is about to issue at `pc` with r29 (its frame pointer) = `fp`: back
        from a call into the frame that made it (a deeper frame of a recursion has another fp, as
        the Rz calling convention keeps it), or to an earlier breakpoint, watch, `limit` or the end."""
        self._core(core)
        self._check_going()
        self._return = (core, pc, fp)
        self._engine.set_return_trap(core, pc, fp)
        try:
            return self._advance(limit)
        finally:
            self._return = None
            self._engine.set_return_trap(-1, 0, 0)

    def finish_call(self, core: int) -> Stop:
        """Advances until the function `core` is in has returned: past the `ret` that leaves it
        (counting the calls and returns on the way), or to an earlier breakpoint, watch or end."""
        self._core(core)
        self._check_going()
        marks = [pc for pc, k in enumerate(self._kinds) if k in ("jal", "ret")]
        depth = 0
        while True:
            with self._temporary(marks, core):
                stop = self._advance(NEVER)
            if stop.interrupted:
                return stop
            c = self.core(core)
            if c.state != "running" or self._kinds[c.pc] not in ("jal", "ret"):
                return stop                                # cannot happen: stopped for a mark
            if self._kinds[c.pc] == "jal":
                depth += 1
            elif depth:
                depth -= 1
            else:
                return self.step_instruction(core)
            stop = self.step_instruction(core)             # past the mark it stands on
            if stop.interrupted:
                return stop

    # -- going back ------------------------------------------------------------------------------
    def _last_checkpoint(self) -> int:
        return max((c for c in self._checkpoints if c <= self.cycle), default=self.cycle)

    def _keep_checkpoint(self) -> None:
        if not self.history or self.done or self.cycle - self._last_checkpoint() < self._spacing:
            return
        snap = self._engine.checkpoint()
        self._checkpoints[self.cycle] = snap
        if len(self._checkpoints) > max(MIN_CHECKPOINTS, self.history // max(1, snap.nbytes)):
            cycles = sorted(self._checkpoints)          # thin out: every other one, 0 and the last stay
            for c in cycles[1:-1:2]:
                del self._checkpoints[c]
            self._spacing *= 2

    @property
    def checkpoints(self) -> list[int]:
        """The cycles whose machine is kept (reverse stepping)."""
        return sorted(self._checkpoints)

    def goto(self, cycle: int) -> None:
        """Puts the machine in the state of an earlier (or later) cycle of this run, exactly."""
        if not self.history:
            raise S2mcError("this stepper keeps no history (Stepper(..., history=BYTES))")
        if not self._started or cycle < 0:
            raise S2mcError(f"cycle {cycle} is not in the recorded run")
        if not (self._last_checkpoint_at(cycle) <= self.cycle <= cycle and not self.done):
            base = self._last_checkpoint_at(cycle)
            self._engine.rewind(self._checkpoints[base], base, base + 1)
            self.cycle, self.result, self.fault = base, None, None
        if cycle > self.cycle:
            with self.no_breaks(), self._no_temps():
                try:
                    self._advance_once(cycle, cycle)
                except SimFault:
                    pass              # the run's fault: the state stays readable, as forward
            self._keep_checkpoint()

    @contextmanager
    def _no_temps(self):
        old, self._temps = self._temps, {}
        for pc in old:
            self._sync_break(pc)
        try:
            yield
        finally:
            self._temps = old
            for pc in old:
                self._sync_break(pc)

    def _last_checkpoint_at(self, cycle: int) -> int:
        return max(c for c in self._checkpoints if c <= cycle)

    def last_before(self, scan, cycle: int, pick=None, window: int = 64):
        """Where a forward scan last stopped before `cycle`: the machine goes there and the scan's
        value there comes back; None, with the machine back at `cycle`, when it never stopped
        since cycle 0. `scan(limit)` looks at the current state when `limit` is None, else
        advances to its next stop or to `limit`; it returns a value at a stop, None elsewhere.
        Windows of cycles before `cycle` widen until one holds a stop. `pick(stops)` chooses
        among the window's [(cycle, value), ...] (default: the last); it may return None."""
        while True:
            base = max(0, cycle - window)
            self.goto(base)
            stops, value = [], scan(None)
            if value is not None:
                stops.append((base, value))
            while self.cycle < cycle and not self.done:
                before = self.cycle
                value = scan(cycle)
                if value is not None and self.cycle < cycle:
                    stops.append((self.cycle, value))
                if self.cycle == before and value is None:
                    break             # the scan can go no further (its core halted)
            chosen = (pick or (lambda found: found[-1] if found else None))(stops)
            if chosen is not None:
                self.goto(chosen[0])
                return chosen[1]
            if base == 0:
                self.goto(cycle)
                return None
            window *= 4

    def step(self, cycles: int = 1) -> Stop:
        """Advances `cycles` cycles (or to the first breakpoint or watched write before that)."""
        if not isinstance(cycles, int) or cycles < 1:
            raise S2mcError(f"step takes a number of cycles >= 1, not {cycles}")
        return self._advance(self.cycle + cycles)

    def run_until(self, cycle: int) -> Stop:
        """Advances to the start of `cycle` (or to the first breakpoint or watched write before it)."""
        if not isinstance(cycle, int) or cycle <= self.cycle:
            raise S2mcError(f"cycle {cycle} is not after the current cycle {self.cycle}")
        return self._advance(cycle)

    def cont(self) -> Stop:
        """Advances to the next breakpoint or watched write, or to the end."""
        return self._advance(NEVER)

    def until_pc(self, where: str | int, core: int | None = None) -> Stop:
        """Advances until a core (`core`, or any) is about to issue the instruction at a code label
        or pc, or to an earlier breakpoint or watched write, or to the end."""
        number = self.add_break(where, core)
        try:
            return self.cont()
        finally:
            self.delete(number)

    def until_write(self, where: str | int) -> Stop:
        """Advances until just after a write to a data label or address (or an earlier stop)."""
        number = self.add_watch(where)
        try:
            return self.cont()
        finally:
            self.delete(number)

    def finish(self) -> Result:
        """Runs to the end, past every breakpoint and watch: the Result of a plain Machine.run()
        (raises SimFault as it would)."""
        if self.result is None:
            self._check_going()
            for number in list(self._breaks) + list(self._watches):
                self.delete(number)
            self._advance(NEVER)
        return self.result

    # -- looking inside -------------------------------------------------------------------------
    def write(self, where: str | int, words, offset: int = 0) -> None:
        """Puts input words into memory, before the first step (as Machine.write)."""
        if self._started:
            raise S2mcError("memory can be written only before the first step")
        self._machine.write(where, words, offset)

    def read(self, where: str | int, n: int = 1, offset: int = 0) -> list[int]:
        """n words of memory from a data label or address, as they are now."""
        start = self.place(self.place(where, "data") + offset, "data", n)
        return list(self._engine.read(start, n))

    def registers(self, core: int = 0) -> list[int]:
        """r0 .. r31 of a core, as they are now (a load's register is written at its grant)."""
        return list(self._engine.registers(self._core(core)))

    def core(self, core: int) -> CoreState:
        state, pc, t, address, counters = self._engine.core_view(self._core(core))
        now = self.cycle
        if self.networked and state == "running" and t > now and not self.done:
            # a cache hit: it took effect when it issued, t - H; the core issues again at t
            return CoreState(core, "hit", pc, t - self.config.cache_hit_latency, t, None, counters)
        if state == "running" and t > now and not self.done:
            # its access took effect at its grant, t - L; it holds the bus until t - 1
            return CoreState(core, "bus", pc, t - self.config.mem_latency, t, None, counters)
        if state == "running":
            return CoreState(core, "running", pc, now, t, None, counters)
        if state == "waiting":
            return CoreState(core, state, pc, t, None, address, counters)
        if state == "held" and self.done:
            state = "stopped"       # held back when the cycle limit ended the run
        return CoreState(core, state, pc, t, None, None, counters)

    def store_buffer(self, core: int) -> list[BufferedStore]:
        """A core's store buffer now, oldest first (docs/debugger.md, `sb`). S2mcError on a
        machine without store buffers (consistency sc)."""
        self._core(core)
        view = self._engine.store_buffer(core) if not self.networked else None
        if view is None:
            raise S2mcError("this machine has no store buffers (consistency sc); "
                            "debug with --consistency tso or pso")
        entries, drain, drain_since, port_free, following = view
        out = []
        for i, (address, value, pc, since) in enumerate(entries):
            state, at = ("bus", drain_since) if i == drain else \
                ("next", max(port_free, self.cycle)) if i == following else ("", None)
            out.append(BufferedStore(address, value, pc, since, state, at))
        return out

    def standing(self) -> tuple[tuple[int, int, int], ...]:
        """(breakpoint number, core, pc) for every core about to issue at a breakpoint now."""
        return tuple((n, core.core, core.pc) for core in self.cores()
                     if core.state == "running" for n, (pc, who) in sorted(self._breaks.items())
                     if pc == core.pc and who in (None, core.core))

    def cores(self) -> list[CoreState]:
        return [self.core(i) for i in range(self.config.cores)]

    def bus(self) -> BusState:
        if self.networked:
            raise S2mcError(f"interconnect {self.config.interconnect}: this machine has no bus; its cores "
                            "meet over the network (see the messages in flight and the lines' directory entries)")
        free_at, last, drain = self._engine.bus()
        busy = last >= 0 and free_at > self.cycle
        waiting = sorted(((c.core, c.since, c.address) for c in self.cores() if c.state == "waiting"),
                         key=lambda w: (w[1], w[0]))
        return BusState(last if busy else None, free_at - self.config.mem_latency if busy else None,
                        max(free_at, self.cycle) if busy else self.cycle, waiting, busy and drain)

    @property
    def events(self) -> list[tuple[int, int, str]]:
        """The program's output so far: (cycle, core, text), in (cycle, core) order."""
        return [(c, k, t.decode("latin-1")) for c, k, t in self._engine.output_so_far()]

    @property
    def output(self) -> str:
        return "".join(t for _, _, t in self.events)

    def where(self, pc: int) -> str:
        """A pc as a person reads it: `acquire`, `acquire+2`, or the number."""
        label = code_label(self.program, pc)
        if label is None:
            return str(pc)
        off = pc - self.program.symbols[label].value
        return label + (f"+{off}" if off else "")
