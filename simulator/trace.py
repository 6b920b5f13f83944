"""The --trace log: one line per event, in cycle-then-core order (docs/timing-model.md, "The event log").

Both engines hand the log over as it is made, in batches of raw 24-byte records (s2::TraceEvent,
simulator/include/s2mc/trace.h), already in order; they hold only a bounded number of events
(issue 12: a 4-million-cycle run used to keep 1.6 GB). A sink is any callable taking such a batch:

- TraceList keeps the events as tuples (Result.trace, for small runs and tests);
- TraceFile formats them straight into a file through s2mc.isa.outputs (atomic: the file appears
  when the run ends, also when it ends in a simulated fault, and nothing is left when it fails).
"""
from __future__ import annotations

import os
import struct

from s2mc.isa import Program, disassemble_word
from s2mc.isa.errors import S2mcError
from s2mc.isa.outputs import Output

# s2::TraceEvent: cycle u64, pc u32, core u16, kind u8, one padding byte, wait u64.
RECORD = struct.Struct("=QIHBxQ")
KINDS = ("issue", "request", "grant", "sync", "resume", "halt")   # s2::TraceKind, in order

HEADER = f"{'cycle':>8}  {'core':>4}  {'pc':>6}  {'instruction':<26}event"


class _Decoder:
    """Turns batches of records into (cycle, core, pc, event, wait) tuples; a record split between
    two batches (a pipe delivers any number of bytes) waits for its second half."""

    def __init__(self):
        self._rest = b""

    def __call__(self, chunk: bytes) -> list[tuple]:
        if self._rest:
            chunk = self._rest + chunk
        whole = len(chunk) - len(chunk) % RECORD.size
        self._rest = chunk[whole:]
        return [(cycle, core, pc, KINDS[kind], wait)
                for cycle, pc, core, kind, wait in RECORD.iter_unpack(memoryview(chunk)[:whole])]

    def check_done(self) -> None:
        if self._rest:
            raise S2mcError(f"the event log ends in a partial record ({len(self._rest)} bytes)")


class _Formatter:
    """Log lines for one program; each instruction is disassembled once."""

    def __init__(self, program: Program):
        self._code = program.code_image
        self._text: dict[int, str] = {}

    def instruction(self, pc: int) -> str:
        text = self._text.get(pc)
        if text is None:
            text = self._text[pc] = (disassemble_word(self._code[pc]) if pc < len(self._code) else "?").ljust(26)
        return text

    def line(self, cycle: int, core: int, pc: int, event: str, wait: int) -> str:
        note = {"grant": f"bus grant (waited {wait})", "request": "bus request",
                "resume": f"barrier released (waited {wait})", "sync": "barrier arrive",
                "halt": "halt", "issue": ""}[event]
        return f"{cycle:>8}  {core:>4}  {pc:>6}  {self.instruction(pc)}{note}".rstrip()


def format_trace(trace, program: Program) -> str:
    """The whole log for a list of (cycle, core, pc, event, wait) events (Result.trace)."""
    fmt = _Formatter(program)
    return "\n".join([HEADER, *(fmt.line(*e) for e in trace)]) + "\n"


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
    of s2mc.isa.outputs: atomic for a regular file, written through to a device, FIFO or `-`."""

    def __init__(self, path: str | os.PathLike, program: Program):
        self.path = os.fspath(path)
        self._out = Output(path, "w", what="trace file")   # checks the path (a folder is an error) now
        self._decode = _Decoder()
        self._fmt = _Formatter(program)
        self._file = None

    def open(self) -> None:
        """Starts the file (just before the run, so that a failed setup leaves nothing behind)."""
        self._file = self._out.open()
        self._file.write(HEADER + "\n")

    def __call__(self, chunk: bytes) -> None:
        line = self._fmt.line
        self._file.write("".join(line(*e) + "\n" for e in self._decode(chunk)))

    def close(self, keep: bool) -> None:
        """Finishes the file when `keep` (the run ended, a simulated fault included), else discards it."""
        if self._file is None:
            return
        self._file = None
        if not keep:
            self._out.discard()
            return
        try:
            self._decode.check_done()
        except S2mcError:
            self._out.discard()
            raise
        self._out.commit()
