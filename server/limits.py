"""What one request may cost the server (docs/server.md, "Limits"): declared once, here.

Every cap has a default a lecturer can change (`s2mc serve --help`). The machine parameters a
request names are first checked against their declaration (s2mc.simulator.params) and then against
these caps, which are tighter: a class shares one machine.
"""
from __future__ import annotations

from dataclasses import dataclass, fields

from s2mc.common import values
from s2mc.common.errors import S2mcError
from s2mc.simulator.params import PARAMS

#: The values each cap may take (a float range: a number of seconds), checked whenever Limits are
#: made; `s2mc serve`'s options take their ranges from here.
RANGES: dict[str, tuple] = {
    "source_bytes": (1, 1 << 30), "body_bytes": (1, 1 << 30), "max_cores": (1, PARAMS["cores"].max),
    "max_cycles": (1, PARAMS["max_cycles"].max), "max_mem_words": (1, PARAMS["mem_words"].max),
    "wall_seconds": (0.1, 3600.0), "memory_mib": (16, 1 << 20), "queue": (0, 10_000), "retry_after": (1, 3600),
    "sessions": (1, 10_000), "idle_seconds": (0.0, 7 * 86400.0), "history_mib": (1, 1 << 20),
    "sweep_points": (1, 1024), "student_jobs": (1, 10_000), "student_sessions": (1, 10_000),
    "teacher_wall_seconds": (0.1, 3600.0), "poll_seconds": (0.1, 3600.0),
    "shared_programs": (0, 100_000_000), "saved_work": (0, 100_000_000), "progress_seconds": (0.5, 3600.0),
    "connections_per_address": (1, 100_000), "header_seconds": (0.1, 3600.0), "body_seconds": (0.1, 3600.0),
}


@dataclass(frozen=True)
class Limits:
    source_bytes: int = 64 * 1024          # a program's text
    body_bytes: int = 256 * 1024           # a whole request body (413 beyond)
    max_cores: int = PARAMS["cores"].max   # the declared maximum: a 256-core run is fine when its cycles are capped
    # a run's cycle limit (the request's max_cycles is clamped to it): the largest bundled example at
    # the page's defaults, fib.rz swept to 8 cores (22.4 M cycles), with a third to spare
    max_cycles: int = 30_000_000
    max_mem_words: int = 1 << 22           # 16 MiB of simulated memory
    wall_seconds: float = 10.0             # one run, compile, sweep or debugger command, then it is killed
    memory_mib: int = 512                  # address space a worker may add to what it starts with (RLIMIT_AS)
    queue: int = 16                        # requests that may wait for a worker; beyond, 429 busy
    retry_after: int = 2                   # seconds a busy answer asks the client to wait
    sessions: int = 64                     # debugging sessions open at once
    idle_seconds: float = 900.0            # a debugging session nobody used for this long is closed
    poll_seconds: float = 30.0             # ... and one whose page stopped polling for this long
    connections_per_address: int = 32      # connections open at once from one client address; beyond, 429
    header_seconds: float = 10.0           # a request's header must arrive within this (408, closed)
    body_seconds: float = 30.0             # ... and its body within this of the header (closed)
    history_mib: int = 32                  # a session's checkpoints for reverse stepping (within memory_mib)
    sweep_points: int = 16                 # core counts in one sweep
    # a student of the roster (docs/server.md, "A graded class"); the anonymous class shares the pool
    student_jobs: int = 2                  # jobs one student may have running or waiting; beyond, 429
    student_sessions: int = 2              # debugging sessions one student may have open
    teacher_wall_seconds: float = 60.0     # the teacher's wall time (wall_seconds is the students')
    shared_programs: int = 100_000         # programs kept behind share links (each at most source_bytes)
    saved_work: int = 100_000              # owners whose work is kept (a student, the teacher, a browser)
    progress_seconds: float = 3.0          # how often the lecturer's page asks for the class's progress

    def __post_init__(self):
        for f in fields(self):
            lo, hi = RANGES[f.name]
            values.named(f"limit {f.name}", values.number if isinstance(lo, float) else values.integer,
                         getattr(self, f.name), lo, hi)

    def replace(self, **changes) -> "Limits":
        known = {f.name for f in fields(self)}
        bad = sorted(set(changes) - known)
        if bad:
            raise S2mcError(f"unknown limit {bad[0]!r}")
        return Limits(**{**{f.name: getattr(self, f.name) for f in fields(self)}, **changes})

    def machine(self, params: dict) -> dict:
        """The machine parameters of a request, checked against the declaration and these caps;
        max_cycles is clamped (a run that needs more is told so by its cycle-limit fault)."""
        from s2mc.simulator.params import check
        check(**params)
        for name, cap in (("cores", self.max_cores), ("mem_words", self.max_mem_words)):
            if params.get(name, 0) > cap:
                raise S2mcError(f"{name} {params[name]} is over this server's cap of {cap}")
        return {**params, "max_cycles": min(params.get("max_cycles", self.max_cycles), self.max_cycles),
                **({} if "mem_words" in params else {"mem_words": min(PARAMS["mem_words"].default,
                                                                      self.max_mem_words)})}
