"""Where one `s2mc encrypt`/`decrypt` run spends its time (`--timings`): timestamps the run takes
itself, as the phases between them.

Every mark is CLOCK_MONOTONIC, one clock for all processes of a machine, so a benchmark that
started the process can put its own spawn and exit times beside them (bench/bench_encrypt_startup.py).
The process's start comes from /proc/self/stat (Linux; in clock ticks, 10 ms), when it is there.
"""
from __future__ import annotations

import os
import time

#: Each mark and the phase that ends at it, in the order a run reaches them; a run has the marks
#: its backend gives (native: no "backend" nor "encrypt", its close is inside its call).
PHASES = {
    "start": "",
    "main": "process start to main(): the interpreter, importing s2mc.cli.main and click",
    "command": "main() to the command: importing its module (the native extension), parsing the options",
    "options": "reading the key and IV, checking the options",
    "backend": "backend start-up: the device check, then opening the files while the context and "
               "buffers are made, and what is left of making them",
    "first_read": "the ring's first piece read (its reader starts once the backend is ready)",
    "encrypt": "the rest of reading, encrypting and writing, overlapped",
    "close": "closing the output (renamed into place) and freeing the backend's buffers",
}

#: "close" straight after "options" (a backend without the marks between): the whole call.
WHOLE_CALL = "reading, encrypting, writing and closing the output (the backend's one call)"

_main_at: float | None = None


def now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def main_entered() -> None:
    """Called first thing in main(): the end of the process's start-up."""
    global _main_at
    _main_at = now()


def process_start() -> float | None:
    """When this process started, on the marks' clock; None where /proc does not say."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        ticks = int(fields[19])   # field 22 (starttime), counted after the command name's ')'
        boot_now = time.clock_gettime(time.CLOCK_BOOTTIME)
        return now() - (boot_now - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        return None


class Timeline:
    """The marks of one run: mark(name) keeps the latest time of each name."""

    def __init__(self):
        self.marks: dict[str, float] = {}
        start = process_start()
        if start is not None:
            self.marks["start"] = start
        if _main_at is not None:
            self.marks["main"] = _main_at

    def mark(self, name: str, at: float | None = None) -> None:
        """Mark `name` now, or at `at` (a time on the same clock the backend took itself)."""
        if name not in PHASES:
            raise ValueError(f"unknown timing mark {name!r}")
        self.marks[name] = now() if at is None else float(at)

    def phases(self) -> dict[str, float]:
        """Seconds of each phase, keyed by the mark that ends it, in PHASES order."""
        names = [n for n in PHASES if n in self.marks]
        return {b: self.marks[b] - self.marks[a] for a, b in zip(names, names[1:])}

    def table(self) -> str:
        """The phases as lines for stderr, and their total."""
        ph = self.phases()
        names = [n for n in PHASES if n in self.marks]
        after = dict(zip(names[1:], names))
        lines = [f"{s:8.3f} s  {WHOLE_CALL if (n, after[n]) == ('close', 'options') else PHASES[n]}"
                 for n, s in ph.items()]
        if len(names) > 1:
            lines.append(f"{self.marks[names[-1]] - self.marks[names[0]]:8.3f} s  in all, from {names[0]} to "
                         f"{names[-1]}" + (" (process start from /proc, 10 ms ticks)" if names[0] == "start" else ""))
        return "\n".join(lines)

    def as_json(self) -> dict:
        return {"marks": dict(self.marks), "phases": self.phases()}
