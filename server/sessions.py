"""Debugging sessions for the page: the `s2mc debug` command interpreter (s2mc.simulator.debugger)
in a process of its own, driven one command line at a time.

    table = Sessions(pool.ctx, limits)
    first = table.open(source="...", language="rz", params={"cores": 2})   # {"id", "output", "state"}
    table.command(first["id"], "break acquire")                            # {"output", "state", "ended"}
    table.close(first["id"])

A command's answer is the text the interpreter printed (each line with its stream, out or err) and
the machine's state as JSON: the cycle, each core's pc (where, instruction, source line when the
program has a line table), the registers of the current core, the breakpoints and watches. The
commands are the interpreter's own, so whatever it learns the page can use unchanged.

The session's process has the run's caps: its memory (RLIMIT_AS), the cycle limit, and the wall
time of one command (a `continue` into an endless loop); past that it is killed and the session
ends, with one line saying why. Sessions idle past `Limits.idle_seconds` are closed.
"""
from __future__ import annotations

import secrets
import threading
import time

from s2mc.common.errors import S2mcError

from .limits import Limits
from .pool import Busy, JobError, answered, cap_memory, current_job, running_in

#: how many characters of the program's output a state carries (the rest is in `output`)
OUTPUT_TAIL = 4096


def state(d) -> dict:
    """The machine under the debugger `d` as the page draws it: the interpreter's own state(), with
    the program's output cut to its last OUTPUT_TAIL characters."""
    st = d.state()
    return {**st, "output": st["output"][-OUTPUT_TAIL:]}


def _main(conn, source: str, language: str, params: dict, opt: int, memory_mib: int, history_mib: int) -> None:
    """The session's process: build the debugger, then answer one command line at a time."""
    from s2mc.simulator.debugger import Debugger
    from s2mc.simulator.stepping import Stepper

    from .jobs import CYCLE_ADVICE, _one_line, load
    cap_memory(memory_mib)
    printed: list[dict] = []
    try:
        program, _ = load(source, language, opt)
        # the program's text is given: the interpreter reads no file a program names
        d = Debugger(Stepper(program, history=history_mib << 20, **params),
                     out=lambda t: printed.append({"stream": "out", "text": t}),
                     err=lambda t: printed.append({"stream": "err", "text": t}), source=source,
                     cycle_advice=CYCLE_ADVICE)
        conn.send(("ok", {"output": [], "state": state(d)}))
    except S2mcError as exc:
        conn.send(("error", 422, _one_line(str(exc))))
        return
    except MemoryError:
        conn.send(("error", 422, "the program needs more memory than this server allows a run"))
        return
    while True:
        try:
            line = conn.recv()
        except (EOFError, OSError):
            return
        printed.clear()
        try:
            d.execute(line)
            answer = ("ok", {"output": list(printed), "state": state(d), "ended": d.finished})
            going = not d.finished
        except MemoryError:
            answer = ("error", 422, "the command needed more memory than this server allows a run")
            going = False
        conn.send(answer)
        if not going:
            return


class DebugSession:
    """One debugger in its own process; commands go through one at a time."""

    def __init__(self, ctx, limits: Limits, source: str, language: str, params: dict, opt: int = 1,
                 owner: str | None = None, seconds: float | None = None, poll: bool = False):
        self.limits, self.owner = limits, owner
        # a page's session: the page polls while it is open, so silence means it went away
        self.polled = time.monotonic() if poll else None
        self.seconds = seconds or limits.wall_seconds    # one command's wall time
        self.id = secrets.token_urlsafe(16)
        self.used = time.monotonic()
        self.closed = False
        self._lock = threading.Lock()
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_main, args=(child, source, language, params, opt, limits.memory_mib,
                                                             limits.history_mib),
                                 daemon=True)
        self._proc.start()
        child.close()
        with running_in(self._proc.pid):
            self.first = self._answer("starting the debugger")

    @property
    def alive(self) -> bool:
        return not self.closed and self._proc.is_alive()

    def _answer(self, what: str) -> dict:
        seconds = self.seconds
        try:   # the time the pool's gate keeps this command paused does not count
            ready = answered(self._conn, seconds, current_job())
        except OSError:     # closed meanwhile (DELETE)
            raise JobError(410, "this debugging session was closed; start a new one") from None
        if not ready:
            self.close()
            raise JobError(408, f"{what} ran longer than this server's limit of {seconds:g} s; "
                                "the session was ended (start a new one)")
        try:
            outcome = self._conn.recv()
        except (EOFError, OSError):
            if self.closed:
                raise JobError(410, "this debugging session was closed; start a new one") from None
            self.close()
            raise JobError(422, f"{what} ended the session without an answer: it probably needed more "
                                "memory than this server allows") from None
        if outcome[0] == "error":
            self.close()
            raise JobError(outcome[1], outcome[2])
        return outcome[1]

    def touch(self) -> None:
        if self.polled is not None:
            self.polled = time.monotonic()

    def command(self, line: str) -> dict:
        with self._lock:
            self.used = time.monotonic()
            self.touch()
            try:
                if not self.alive:
                    raise OSError
                self._conn.send(line)
            except OSError:
                raise JobError(410, "this debugging session has ended; start a new one") from None
            with running_in(self._proc.pid):
                answer = self._answer(f"the command {line.strip()[:40]!r}")
            self.used = time.monotonic()
            if answer.get("ended"):
                self.close()
            return answer

    def close(self, wait: bool = False) -> None:
        """Kill the session's process. Its exit is collected by the forkserver, its parent, so a
        request never waits for it; the server's shutdown does (`wait`)."""
        self.closed = True
        self._conn.close()
        if self._proc.is_alive():
            self._proc.kill()
        if wait:
            self._proc.join(5)


class Sessions:
    """The open sessions by id (an unguessable token): at most `Limits.sessions`, idle ones closed."""

    def __init__(self, ctx, limits: Limits):
        self.ctx, self.limits = ctx, limits
        self._open: dict[str, DebugSession] = {}
        self._starting: dict = {}      # owner -> sessions whose process is starting
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._open)

    def reap(self) -> None:
        """Close the sessions idle for longer than the limit, those whose page stopped polling, and
        those whose process has gone."""
        now = time.monotonic()
        lim = self.limits
        with self._lock:
            gone = [k for k, s in self._open.items() if now - s.used > lim.idle_seconds or not s.alive
                    or (s.polled is not None and now - s.polled > lim.poll_seconds)]
            dropped = [self._open.pop(k) for k in gone]
        for s in dropped:
            s.close()

    def open(self, owner: str | None = None, **request) -> dict:
        """A new session; `owner` (a roster's student id) may hold Limits.student_sessions at once."""
        self.reap()
        retry = self.limits.retry_after
        with self._lock:
            if len(self._open) + sum(self._starting.values()) >= self.limits.sessions:
                raise Busy(f"busy: {self.limits.sessions} debugging sessions are open; close one or try again "
                           f"in {retry} s", retry)
            if owner is not None:
                mine = sum(s.owner == owner for s in self._open.values()) + self._starting.get(owner, 0)
                if mine >= self.limits.student_sessions:
                    raise Busy(f"busy: you have {mine} debugging sessions open, this server's limit per student; "
                               f"close one (Stop) or try again in {retry} s", retry)
            self._starting[owner] = self._starting.get(owner, 0) + 1   # holds its place while it starts
        try:
            session = DebugSession(self.ctx, self.limits, owner=owner, **request)
        finally:
            with self._lock:
                self._starting[owner] -= 1
        with self._lock:
            self._open[session.id] = session
        return {"id": session.id, **session.first}

    def get(self, sid: str, owner: str | None = None) -> DebugSession:
        """The session `sid`; a roster student's session for that student (`owner`) only."""
        with self._lock:
            session = self._open.get(sid)
        if session is None or (session.owner is not None and session.owner != owner):
            raise JobError(404, "no such debugging session (it ended, or was idle too long); start a new one")
        return session

    def command(self, sid: str, line: str, owner: str | None = None) -> dict:
        session = self.get(sid, owner)
        try:
            return session.command(line)
        finally:
            if not session.alive:
                with self._lock:
                    self._open.pop(sid, None)

    def close(self, sid: str, owner: str | None = None) -> None:
        session = self.get(sid, owner)
        with self._lock:
            self._open.pop(sid, None)
        session.close()

    def close_all(self) -> None:
        with self._lock:
            every, self._open = list(self._open.values()), {}
        for s in every:
            s.close(wait=True)
