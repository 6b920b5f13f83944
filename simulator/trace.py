"""The --trace log: one line per event, in cycle-then-core order (docs/timing-model.md, "The event log").

Both engines hand the log over as it is made, in batches of raw records (s2::TraceEvent,
simulator/include/s2mc/trace.h), already in order; they hold only a bounded number of events
(a 4-million-cycle run used to keep 1.6 GB). A sink is any callable taking such a batch:

- TraceList keeps the events as tuples (Result.trace, for small runs and tests);
- TraceFile formats them straight into a file through s2mc.common.outputs (atomic: the file appears
  when the run ends, also when it ends in a simulated fault, and nothing is left when it fails);
- s2mc.simulator.timeline.TimelineSink turns them into a timeline (--timeline);
- Fanout hands every batch to several of these (--trace and --timeline together).

An event is the tuple (cycle, core, pc, event, wait, address, before, after): `address` is the data
address of a bus request or grant, `before` and `after` the word at that address before and after a
granted access (what a load read, what a store or xchg wrote); all three are 0 for other events.
With caches there are also `hit` (like a grant), `grant <T> <D>` (a coherence transaction and its
bus time) and `state <cause>` (wait: the core that caused it, address: the line's base, before and
after: the state names); docs/timing-model.md, "The event log with caches".
"""
from __future__ import annotations

import bisect
import os
import struct

from s2mc.isa import Program, decode, disassemble_word
from s2mc.common.errors import S2mcError
from s2mc.common.outputs import Output

from .directory import MESSAGES
from .network import PORTS

# s2::TraceEvent: cycle u64, pc u32, core u16, kind u8, xact u8, wait u64, address u32, before i32,
# after i32, span u32.
RECORD = struct.Struct("=QIHBBQIiiI")
KINDS = ("issue", "request", "grant", "sync", "resume", "halt", "hit", "xgrant", "state",
         "buffer", "forward", "drain", "drain_hit", "done", "send", "port", "home")   # s2::TraceKind
# s2::Xact (a coherence transaction, or the cause of a state change) and s2::LineState, in order;
# then a network's messages (s2::MsgKind, at s2::MSG_XACT) and the directory protocol's cache and
# home states (s2::trace_state).
XACTS = ("", "BusRd", "BusRdX", "BusUpgr", "BusUpd", "BusRd+BusUpd", "evict", "PrWr") + MESSAGES
STATES = ("I", "S", "E", "O", "M", "Sc", "Sm", "IS^D", "IM^AD", "IM^A", "SM^AD", "SM^A", "MI^A", "EI^A",
          "SI^A", "II^A", "S^D")

INSTRUCTION_WIDTH = 36
HEADER = f"{'cycle':>8}  {'core':>4}  {'bus':>3}  {'pc':>6}  {'instruction':<{INSTRUCTION_WIDTH}}event"


def _event(cycle, pc, core, kind, xact, wait, address, before, after, span) -> tuple:
    """The tuple of one record (docs/timing-model.md, "The event log with caches")."""
    name = KINDS[kind]
    if name == "xgrant":
        return (cycle, core, pc, f"grant {XACTS[xact]} {span}", wait, address, before, after)
    if name == "state":
        return (cycle, core, pc, f"state {XACTS[xact]}", wait, address, STATES[before], STATES[after])
    if name == "drain" and xact:     # a store buffer's drain as a coherence transaction
        return (cycle, core, pc, f"drain {XACTS[xact]} {span}", wait, address, before, after)
    if name == "drain_hit":
        return (cycle, core, pc, "drain hit", wait, address, before, after)
    if name in ("request", "done") and xact:     # a miss over a network: its request, the message that completed it
        return (cycle, core, pc, f"{name} {XACTS[xact]}", wait, address, before, after)
    if name == "send":
        return (cycle, core, pc, f"send {XACTS[xact]} {span}", wait, address, before, after)
    if name == "port":                           # span: the flits, and the port in its top byte
        return (cycle, core, pc, f"port {PORTS[span >> 24]} {XACTS[xact]} {span & 0xFFFFFF}", wait, address,
                before, after)
    if name == "home":
        return (cycle, core, pc, f"home {XACTS[xact]} {span}", wait, address, STATES[before], STATES[after])
    return (cycle, core, pc, name, wait, address, before, after)


class _Decoder:
    """Turns batches of records into event tuples; a record split between two batches (a pipe
    delivers any number of bytes) waits for its second half."""

    def __init__(self):
        self._rest = b""

    def whole(self, chunk: bytes) -> memoryview:
        """The whole records of what has come so far; the rest waits for the next batch."""
        if self._rest:
            chunk = self._rest + chunk
        whole = len(chunk) - len(chunk) % RECORD.size
        self._rest = chunk[whole:]
        return memoryview(chunk)[:whole]

    def __call__(self, chunk: bytes) -> list[tuple]:
        return [_event(*r) for r in RECORD.iter_unpack(self.whole(chunk))]

    def check_done(self) -> None:
        if self._rest:
            raise S2mcError(f"the event log ends in a partial record ({len(self._rest)} bytes)")


class Symbols:
    """Names for a program's addresses: `exact` maps ("code" | "data", address) to its label (the
    operands s2mc.isa.disassembler names); `data(a)` names any data address by the nearest data
    label at or below it (`counter`, `table+3`), else the number."""

    def __init__(self, program: Program):
        # Several labels at one address: the first by name, the compiler's local ones (.l4) last.
        self.exact: dict[tuple[str, int], str] = {}
        for s in sorted(program.symbols.values(), key=lambda s: (s.name.startswith("."), s.name)):
            if s.kind in ("code", "data"):
                self.exact.setdefault((s.kind, s.value), s.name)
        self._data_at = sorted(a for kind, a in self.exact if kind == "data")
        self._data_name = [self.exact[("data", a)] for a in self._data_at]

    def data(self, address: int) -> str:
        i = bisect.bisect_right(self._data_at, address) - 1
        if i < 0:
            return str(address)
        off = address - self._data_at[i]
        return self._data_name[i] + (f"+{off}" if off else "")


class Instructions:
    """The instructions of one program as the log and the timeline show them: disassembled once
    per pc, with jump targets and data addresses named by their labels (`ld r3 counter`,
    `jt r1 loop`, `ld r2 @table r1`; s2mc.isa.disassemble_word)."""

    def __init__(self, program: Program):
        self._code = program.code_image
        self.symbols = Symbols(program)
        self._text: dict[int, tuple[str, str, bool]] = {}

    def _entry(self, pc: int) -> tuple[str, str, bool]:
        """(text, bus class, whether the text names the data address itself: ld/st with `a`)."""
        got = self._text.get(pc)
        if got is None:
            if pc >= len(self._code):
                got = ("?", "none", False)
            else:
                word = self._code[pc]
                d = decode(word)
                names_it = d.ins is not None and d.ins.kind == "mem" and "a" in d.ins.shape.split()
                got = (disassemble_word(word, self.symbols.exact), d.bus, names_it)
            self._text[pc] = got
        return got

    def text(self, pc: int) -> str:
        return self._entry(pc)[0]

    def bus_class(self, pc: int) -> str:
        """none, read, write, swap or string (docs/isa.md)."""
        return self._entry(pc)[1]

    def access(self, pc: int, address: int, before: int, after: int) -> str:
        """What a granted access did: `= 42` (read), `<- 7` (write), `old=0 new=1` (xchg), led by
        the address (`[data+3] = 42`) when the instruction does not name it."""
        _, bus, names_it = self._entry(pc)
        what = {"read": f"= {before}", "write": f"<- {after}", "swap": f"old={before} new={after}"}.get(bus, "")
        where = "" if names_it else f"[{self.symbols.data(address)}]"
        return " ".join(p for p in (where, what) if p)


_NOTES = {"request": "bus request", "sync": "barrier arrive", "halt": "halt", "issue": ""}


class _Formatter:
    """Log lines for one program. The bus column names the core that holds the bus in the line's
    cycle, so the lines of a cycle are written once all its events (a grant among them) are in."""

    def __init__(self, program: Program, mem_latency: int):
        self.ins = Instructions(program)
        self._latency = mem_latency
        self._held: list[tuple] = []       # the events of the latest cycle
        self._owner, self._busy_until = -1, 0

    def feed(self, events) -> str:
        """Lines for every cycle before the last one seen; that one's events are held back."""
        out = []
        for e in events:
            if self._held and e[0] != self._held[0][0]:
                out.append(self.flush())
            self._held.append(e)
        return "".join(out)

    def flush(self) -> str:
        held, self._held = self._held, []
        if not held:
            return ""
        cycle = held[0][0]
        for e in held:
            if e[3] == "grant":
                self._owner, self._busy_until = e[1], cycle + self._latency
            elif e[3] == "drain":                # a store buffer's drain holds the bus too
                self._owner, self._busy_until = e[1], cycle + self._latency
            elif e[3].startswith(("grant ", "drain B")):   # a transaction: `grant <T> <D>`, `drain <T> <D>`
                self._owner, self._busy_until = e[1], cycle + int(e[3].rsplit(" ", 1)[1])
        bus = str(self._owner) if cycle < self._busy_until else "-"
        return "".join(self.line(e, bus) + "\n" for e in held)

    def line(self, e: tuple, bus: str) -> str:
        cycle, core, pc, event, wait, address, before, after = e
        ins = self.ins.text(pc)
        if event == "grant":
            note = f"bus grant (waited {wait})"
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event.startswith("grant "):
            _, kind, bus_time = event.split(" ")
            note = f"bus grant {kind} (waited {wait}, {bus_time} cycle{'s' if bus_time != '1' else ''})"
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event == "buffer":
            note = f"store buffered ({wait} entr{'ies' if wait != 1 else 'y'})"
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event == "forward":
            note = "forwarded from the store buffer"
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event.startswith("drain"):
            # the store buffer writes a store: its pc, `wait` the cycles its drain waited for the bus
            how = event[len("drain"):].split()
            note = ("store buffer drain, cache hit" if how == ["hit"] else
                    f"store buffer drain {how[0]} (waited {wait}, {how[1]} cycle{'s' if how[1] != '1' else ''})"
                    if how else f"store buffer drain (waited {wait})")
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event == "hit":
            note = "cache hit"
            ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event.startswith("state "):
            # a line's state change: `wait` is the core whose access caused it, `address` the line's base
            cause = event.split(" ", 1)[1]
            why = cause if cause in ("evict", "PrWr") else f"{cause} by core {wait}"
            note, ins = f"line {address}: {before} -> {after} ({why})", ""
        elif event.startswith(("request ", "done ")):
            # a miss over a network: its request message, then the message that completed it
            what, kind = event.split(" ")
            if what == "request":
                note = f"cache miss, {kind} sent"
            else:
                note = f"miss done by {kind} (waited {wait})"
                ins = f"{ins}  {self.ins.access(pc, address, before, after)}"
        elif event.startswith(("send ", "port ", "home ")):
            note, ins = _network_note(core, event, wait, address, before, after), ""
        elif event == "resume":
            note = f"barrier released (waited {wait})"
        else:
            note = _NOTES[event]
        at = "-" if event.startswith(("send ", "port ", "home ")) else pc   # a message's event has no instruction
        return f"{cycle:>8}  {core:>4}  {bus:>3}  {at:>6}  {ins:<{INSTRUCTION_WIDTH}}{note}".rstrip()


def _plural(n: int | str, word: str) -> str:
    return f"{n} {word}{'' if str(n) == '1' else 's'}"


def _network_note(at: int, event: str, requester: int, address: int, before, after) -> str:
    """The text of a network event (docs/timing-model.md, "The event log of a network"): `at` is the
    tile or router, address the line's base, before and after the message's source and destination
    (a home's: the directory states)."""
    what, *rest = event.split(" ")
    if what == "send":
        kind, flits = rest
        return f"send {kind} {before} -> {after}, line {address}, for core {requester} ({_plural(flits, 'flit')})"
    if what == "port":
        port, kind, flits = rest
        return (f"router {at} {port}: {kind} {before} -> {after}, line {address} ({_plural(flits, 'flit')})"
                if port != "local" else f"router {at} ejects {kind} {before} -> {after}, line {address} "
                f"({_plural(flits, 'flit')})")
    kind, occupancy = rest
    return f"home {at}: {kind} for core {requester}, line {address}: {before} -> {after} ({_plural(occupancy, 'cycle')})"


def format_trace(trace, program: Program, mem_latency: int) -> str:
    """The whole log for a list of events (Result.trace) of a run with this memory latency."""
    fmt = _Formatter(program, mem_latency)
    return HEADER + "\n" + fmt.feed(trace) + fmt.flush()


class TraceList:
    """A sink that keeps every event: Result.trace (trace=True)."""

    def __init__(self):
        self.events: list[tuple] = []
        self._decode = _Decoder()

    def __call__(self, chunk: bytes) -> None:
        self.events.extend(self._decode(chunk))

    def close(self, keep: bool) -> None:
        self._decode.check_done()


class TraceFile:
    """A sink that formats the log into `path` as the run goes (trace_file=...), by the output rules
    of s2mc.common.outputs: atomic for a regular file, written through to a device, FIFO or `-`."""

    def __init__(self, path: str | os.PathLike, program: Program, mem_latency: int):
        self.path = os.fspath(path)
        self._out = Output(path, "w", what="trace file")   # checks the path (a folder is an error) now
        self._decode = _Decoder()
        self._fmt = _Formatter(program, mem_latency)
        self._file = None

    def open(self) -> None:
        """Starts the file (just before the run, so that a failed setup leaves nothing behind)."""
        self._file = self._out.open()
        self._file.write(HEADER + "\n")

    def __call__(self, chunk: bytes) -> None:
        self._file.write(self._fmt.feed(self._decode(chunk)))

    def close(self, keep: bool) -> None:
        """Finishes the file when `keep` (the run ended, a simulated fault included), else discards it."""
        if self._file is None:
            return
        f, self._file = self._file, None
        if not keep:
            self._out.discard()
            return
        try:
            self._decode.check_done()
            f.write(self._fmt.flush())
        except S2mcError:
            self._out.discard()
            raise
        self._out.commit()


class Fanout:
    """A sink that hands every batch to several sinks (each decodes it for itself)."""

    def __init__(self, sinks: list):
        self.sinks = sinks

    def open(self) -> None:
        for s in self.sinks:
            if hasattr(s, "open"):
                s.open()

    def __call__(self, chunk: bytes) -> None:
        for s in self.sinks:
            s(chunk)

    def close(self, keep: bool) -> None:
        """Closes every sink, also when one fails (then its error is raised after the others)."""
        error = None
        for s in self.sinks:
            try:
                s.close(keep)
            except BaseException as exc:  # noqa: BLE001 - re-raised below, after the others closed
                if error is None:
                    error = exc
                keep = False
        if error is not None:
            raise error
