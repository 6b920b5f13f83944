"""Where the server's jobs run: each in a worker process with caps, behind a bounded queue.

Python 3.11 cannot stop a job running in a ProcessPoolExecutor (cancelling its future does not stop
the worker), so the pool is ours: `workers` processes, forked from a forkserver that has already
imported the simulator and the compiler, each running one job at a time. A worker limits its own
address space (RLIMIT_AS: what it has at the start plus `Limits.memory_mib`); one that runs past
`Limits.wall_seconds` is killed and replaced, and so is one that dies (the memory cap, a crash), so a
runaway costs its own request only. At most `workers` jobs run at once and at most `Limits.queue`
wait; one more is refused at once with Busy (the API answers 429 with Retry-After) instead of
piling up. Between the students of a roster the Gate is fair: a heavy student's job (much CPU
time lately) runs at the lowest CPU priority and is paused (SIGSTOP) while a light student's job
needs its worker, then resumed (SIGCONT); the time paused counts against neither its wall time nor
its student's usage.

    pool = LocalPool(workers=2, limits=Limits())
    value = await pool.submit("run", {"source": ..., "language": "asm", "params": {...}})

DaskPool sends the same jobs to an existing Dask cluster (`s2mc serve --executor dask --scheduler
ADDR`), as sweeps do (docs/sweeps.md): the queue bound and the wall time hold here; the memory of a
job is the cluster's (its workers' memory limits), and a job past its time is abandoned, not killed.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import math
import multiprocessing
import os
import queue
import resource
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psutil

from .limits import Limits


class Busy(Exception):
    """No worker and no room in the queue: try again after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.retry_after = retry_after


class JobError(Exception):
    """A job that failed: the HTTP status and one line for the client."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


def _address_space() -> int:
    """Bytes of address space this process has now (the first field of /proc/self/statm)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def cap_memory(extra_mib: int) -> None:
    """Allocations beyond what the process has now plus `extra_mib` fail (MemoryError in Python,
    std::bad_alloc in the engine); the soft limit only, so the hard one stays where it was."""
    limit = _address_space() + extra_mib * 2**20
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _serve(conn, memory_mib: int) -> None:
    """A worker: one job at a time from the pipe, until the pipe closes."""
    from . import jobs
    cap_memory(memory_mib)
    while True:
        try:
            name, kwargs = conn.recv()
        except (EOFError, OSError):
            return
        try:
            outcome = jobs.call(name, kwargs)
        except MemoryError:
            outcome = ("error", 422, "the run needed more memory than this server allows a run")
        try:
            conn.send(outcome)
        except MemoryError:
            conn.send(("error", 422, "the answer needed more memory than this server allows a run"))


class Worker:
    """One worker process and its pipe."""

    def __init__(self, ctx, memory_mib: int):
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(child, memory_mib), daemon=True)
        self.proc.start()
        child.close()

    def call(self, name: str, kwargs: dict, seconds: float, job: "Job | None" = None):
        """The job's outcome; JobError 408 (the worker killed) past `seconds` of running (the time
        the gate kept `job` paused left out), 422 when it died."""
        self.conn.send((name, kwargs))
        if not answered(self.conn, seconds, job):
            self.kill()
            raise JobError(408, f"the {name} ran longer than this server's limit of {seconds:g} s and was stopped")
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(1)       # it ended by itself: its exit code says how
            code = self.proc.exitcode
            self.kill()
            raise JobError(422, f"the {name} ended its worker without an answer (exit code {code}): "
                                "it probably needed more memory than this server allows") from None

    @property
    def alive(self) -> bool:
        return self.proc.is_alive()

    def kill(self, wait: bool = False) -> None:
        """Kill the worker; the forkserver, its parent, collects it (the shutdown waits for it)."""
        self.conn.close()
        if self.proc.is_alive():
            self.proc.kill()
        if wait:
            self.proc.join(5)


def context():
    """The forkserver context, with the job modules imported once in the forkserver itself."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["s2mc.server.jobs", "s2mc.server.sessions"])
    return ctx


#: The niceness of a worker while it runs a heavy student's job (Gate), so that on a machine with
#: few CPUs the others' jobs get them first.
HEAVY_NICE = 19
_job = threading.local()       # the job this thread runs for (a Job of the gate), while it runs


def _cpu_seconds(pid: int) -> float | None:
    """The CPU time (user and system) process `pid` has used, or None when it is gone."""
    try:
        t = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return None
    return t.user + t.system


class Job:
    """A job the gate admitted: whose it is, whether heavy, and while it runs, the process it runs
    in, so that the gate can pause it (SIGSTOP) and resume it (SIGCONT), and what it cost: the CPU
    time its process used for it (`cpu`). The time it spends paused does not count against its wall
    time."""

    def __init__(self, gate: "Gate", arrival: int, owner: str | None, heavy: bool):
        self.gate, self.arrival, self.owner, self.heavy = gate, arrival, owner, heavy
        self.paused_since: float | None = None
        self._paused = 0.0        # seconds paused before paused_since
        self._pid = self._fd = None
        self.cpu: float | None = None     # None: it ran in no process of ours (a Dask job, a test's)
        self.renice = False       # its process may be reniced (a worker, replaced after the job)
        self.background = False   # it was paused once: a long job
        self._since = (0.0, 0.0, None)    # at attach: the time, the seconds paused, the process's CPU time

    def paused_seconds(self, now: float) -> float:
        return self._paused + (now - self.paused_since if self.paused_since is not None else 0.0)

    def _signal(self, sig: int) -> None:
        # through a pidfd: the process that was attached, never another that took its number since
        with contextlib.suppress(ProcessLookupError, OSError):
            if self._fd is not None:
                signal.pidfd_send_signal(self._fd, sig)
            elif self._pid is not None:
                os.kill(self._pid, sig)

    def demote(self) -> None:
        """A long job: from now on it runs behind the others on the CPUs too (its worker, reniced,
        is replaced after the job, since a process cannot be raised again)."""
        if self.renice and not self.background and self._pid is not None:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, self._pid, HEAVY_NICE)
        self.background = True

    def pause(self, now: float) -> None:
        self.paused_since = now
        self._signal(signal.SIGSTOP)
        self.demote()

    def resume(self, now: float) -> None:
        self._paused += now - self.paused_since
        self.paused_since = None
        self._signal(signal.SIGCONT)

    def cpu_now(self, now: float) -> float:
        """The CPU time its processes used for it so far (while attached, read live)."""
        used = self.cpu or 0.0
        if self._pid is not None:
            start, paused, cpu = self._since
            after = _cpu_seconds(self._pid)
            used += max(after - cpu if after is not None and cpu is not None
                        else now - start - (self.paused_seconds(now) - paused), 0.0)
        return used

    def attach(self, pid: int) -> None:
        now = time.monotonic()
        self._since = (now, self.paused_seconds(now), _cpu_seconds(pid))
        self._pid = pid
        try:
            self._fd = os.pidfd_open(pid)
        except (AttributeError, OSError):   # no pidfd (an old kernel): the bare pid, while it runs for us
            self._fd = None
        if self.paused_since is not None:
            self._signal(signal.SIGSTOP)

    def detach(self) -> None:
        # a process killed at its wall time can no longer be read: its running time, the most it used
        self.cpu = self.cpu_now(time.monotonic())
        if self.paused_since is not None:   # the process lives on (a session's, an idle worker's)
            self._signal(signal.SIGCONT)
        if self._fd is not None:
            os.close(self._fd)
        self._pid = self._fd = None


def current_job() -> "Job | None":
    """The job the calling thread runs for (None outside the gate)."""
    return getattr(_job, "current", None)


@contextlib.contextmanager
def running_in(pid: int):
    """While the caller's process `pid` works for this thread's job, the gate may pause it."""
    job = current_job()
    if job is None:
        yield None
        return
    with job.gate._cond:
        job.attach(pid)
    try:
        yield job
    finally:
        with job.gate._cond:
            job.detach()


def answered(conn, seconds: float, job: Job | None) -> bool:
    """Whether `conn` has an answer within `seconds` of the job running: while the gate keeps
    the job paused the clock stops, so a paused job is never stopped for its wall time."""
    start = time.monotonic()
    before = job.paused_seconds(start) if job else 0.0
    while True:
        now = time.monotonic()
        left = seconds - (now - start) + (job.paused_seconds(now) - before if job else 0.0)
        if left <= 0 and (job is None or job.paused_since is None):
            return conn.poll(0)
        if conn.poll(max(left, 0.05)):
            return True


class Gate:
    """Admission: at most `workers` running and `queue` waiting; the rest are Busy.

    The workers are shared between the students of a roster (an `owner`) by the service each
    attained lately, least first: the CPU seconds their jobs' processes used, halved every
    `HALF_LIFE` wall times (CPU, not time held, so that a machine slowed by load favours nobody),
    plus, for a job under way, what it used so far. When a worker is free, the waiting job whose
    owner attained least goes first, or a paused job that attained less still resumes (SIGCONT).
    When every worker is busy and a job waits, the heavy student's or long job under way (more
    than `SLICE` of CPU so far) that attained most, if that is more than the waiting one's owner
    plus `SLICE`, is paused (SIGSTOP on its process, when `pause`; a worker's is also reniced to
    HEAVY_NICE and replaced after the job) and the waiting one takes its worker: so a student
    resubmitting endless programs or huge sweeps gets the workers only while nobody who used them
    less wants one. At most `max_paused` jobs are paused at once (each keeps its process).
    LocalPool runs each job at a CPU priority that falls with its owner's usage (`nice`), for the
    CPUs the workers share with the server and the debugging sessions. An owner who used more than
    one wall time lately is heavy: the lowest priority (HEAVY_NICE), and their jobs started
    (running or paused) are at most all but one worker. Anonymous jobs (no owner) cannot be told
    apart: they are never heavy nor paused, and wait in their order."""

    HALF_LIFE = 3.0     # in wall times: a heavy student is light again about a minute after stopping
    # CPU seconds after which a job is long (the students' runs, compiles and debugger steps take a
    # few hundredths), and by which a running job's owner must be ahead of a waiting one's to yield
    SLICE = 0.1
    TICK = 0.02         # seconds between two looks at the jobs under way, while any is
    # in wall times: the first band of CPU time lately (half a second by default); each next band is
    # twice as wide. Students within one band wait in turn
    BAND = 0.05

    def __init__(self, workers: int, limits: Limits, pause: bool = True):
        self.workers, self.limits, self.pause = workers, limits, pause
        self.heavy_cap = max(1, workers - 1)
        # a paused job waits with its process: as many as may wait, so that a long job can always
        # be paused (with fewer, the long jobs of a few students held every worker once that many
        # were paused)
        self.max_paused = max(workers, limits.queue)
        self._cond = threading.Condition()
        self.admitted = 0          # running, paused or waiting
        self._waiting: list[Job] = []
        self._started: list[Job] = []    # running or paused
        self._arrivals = itertools.count()
        self._usage: dict[str, tuple[float, float]] = {}   # owner -> (CPU seconds, as of when)
        self._watching = False

    def check(self) -> None:
        # a paused job is bounded apart (max_paused): it takes no running or waiting job's place
        if self.admitted - len(self.paused()) >= self.workers + self.limits.queue:
            raise Busy(f"busy: {self.workers} jobs run and {self.limits.queue} wait; try again in "
                       f"{self.limits.retry_after} s", self.limits.retry_after)

    def usage(self, owner: str | None, now: float) -> float:
        """The owner's CPU seconds lately (each halved every HALF_LIFE wall times)."""
        if owner not in self._usage:
            return 0.0
        used, when = self._usage[owner]
        return used * 0.5 ** ((now - when) / (self.HALF_LIFE * self.limits.wall_seconds))

    def nice(self, owner: str | None, now: float) -> int:
        """The CPU priority of the owner's next job: it falls (the niceness rises) with the CPU time
        they used lately, from 0 for none to HEAVY_NICE for a wall time's worth (heavy)."""
        if owner is None:
            return 0
        return min(HEAVY_NICE, int(HEAVY_NICE * self.usage(owner, now) / self.limits.wall_seconds))

    def heavy(self, owner: str | None, now: float) -> bool:
        return owner is not None and self.usage(owner, now) > self.limits.wall_seconds

    def paused(self) -> list[Job]:
        return [j for j in self._started if j.paused_since is not None]

    def _free(self) -> int:
        return self.workers - sum(j.paused_since is None for j in self._started)

    def attained(self, job: Job, now: float) -> float:
        """The service of the job's owner lately, with what the job itself used so far."""
        return self.usage(job.owner, now) + job.cpu_now(now)

    def _first(self, now: float):
        """The waiting job to start next (heavy ones only while under their cap), or None."""
        heavy_room = sum(j.heavy for j in self._started) < self.heavy_cap
        ready = [j for j in self._waiting if heavy_room or not j.heavy]
        return min(ready, key=lambda j: (self.band(j.owner, now), j.arrival), default=None)

    def band(self, owner: str | None, now: float) -> int:
        """The owner's place in the order: 0 below BAND wall times of CPU lately, then one more each
        time it doubles (a class's students working normally stay in the first or second, while one
        who resubmits endless work climbs within seconds), so that students who used about as
        little wait in their order of arrival (ordered by the CPU seconds themselves, one who used a
        little more than the rest waited as long as any of the rest kept coming: in a busy second, a
        debugger step waited over a second)."""
        used = self.usage(owner, now) / (self.BAND * self.limits.wall_seconds)
        return 0 if used < 1 else 1 + int(math.log2(used))

    def _balance(self, now: float) -> None:
        """Resumes paused jobs that attained less than any waiting one while workers are free;
        pauses the running job that attained most while a job that attained less waits."""
        if not self.pause:
            return
        while True:
            first, paused = self._first(now), self.paused()
            if self._free() > 0:
                best = min(paused, key=lambda j: self.attained(j, now), default=None)
                if best is None or (first is not None and self.usage(first.owner, now) < self.attained(best, now)):
                    return
                best.resume(now)
            else:
                # a heavy student's job, a long one (over a slice of CPU) or one of a student a band
                # heavier than the waiting one's yields; a light one's short job, which ends soon
                # anyway, never (a heavy one at nice 19 may get little CPU: its time on the worker is
                # what the others wait for)
                running = [j for j in self._started if j.owner is not None and j.paused_since is None
                           and (j.heavy or j.cpu_now(now) > self.SLICE
                                or (first is not None and self.band(j.owner, now) > self.band(first.owner, now)))]
                most = max(running, key=lambda j: self.attained(j, now), default=None)
                if (first is None or most is None or len(paused) >= self.max_paused
                        or self.attained(most, now) <= self.usage(first.owner, now) + self.SLICE):
                    return
                most.pause(now)

    def _watch(self) -> None:
        """While jobs are under way: every TICK, a job that passed its slice of CPU is demoted and,
        when a job that attained less waits, paused in its favour (between two jobs starting or
        ending, nothing else would notice that a job became long)."""
        with self._cond:
            while self._started:
                now = time.monotonic()
                for j in self._started:
                    if j.paused_since is None and not j.background and j.cpu_now(now) > self.SLICE:
                        j.demote()
                if self._waiting:
                    self._balance(now)
                    self._cond.notify_all()
                self._cond.wait(self.TICK)
            self._watching = False

    def _next(self, now: float):
        """The waiting job that runs when a worker is free, or None."""
        return self._first(now) if self._free() > 0 else None

    @contextlib.contextmanager
    def enter(self, owner: str | None = None):
        """Holds a worker's place for the caller, as a Job (running_in attaches its process)."""
        with self._cond:
            self.check()
            self.admitted += 1
            me = Job(self, next(self._arrivals), owner, self.heavy(owner, time.monotonic()))
            self._waiting.append(me)
            try:
                self._balance(time.monotonic())
                while self._next(time.monotonic()) is not me:
                    self._cond.wait()
            except BaseException:
                self._waiting.remove(me)
                self.admitted -= 1
                self._balance(time.monotonic())
                self._cond.notify_all()
                raise
            self._waiting.remove(me)
            self._started.append(me)
            self._balance(time.monotonic())
            self._cond.notify_all()      # another waiter may be next now, for a worker still free
            if self.pause and not self._watching:
                self._watching = True
                threading.Thread(target=self._watch, name="s2mc-gate", daemon=True).start()
        start = time.monotonic()
        try:
            yield me
        finally:
            with self._cond:
                now = time.monotonic()
                self._started.remove(me)
                if me.paused_since is not None:
                    me.resume(now)
                self.admitted -= 1
                if owner is not None:     # its CPU time; without a process of ours, the time it ran
                    used = me.cpu if me.cpu is not None else now - start - me.paused_seconds(now)
                    self._usage[owner] = (self.usage(owner, now) + used, now)
                self._balance(now)
                self._cond.notify_all()


class LocalPool:
    """Jobs in capped processes on this machine."""

    def __init__(self, workers: int, limits: Limits):
        self.workers, self.limits = workers, limits
        self.gate = Gate(workers, limits)
        self.ctx = context()
        # a worker for each job running and each one paused: started on first use, the last one
        # back first (a started one before a place still empty, which a job would wait to start)
        self._idle: queue.LifoQueue = queue.LifoQueue()
        for _ in range(workers + self.gate.max_paused):
            self._idle.put(None)
        # a worker that goes (killed at its wall time, or reniced) is replaced here, off the answer's path
        self._spares = ThreadPoolExecutor(max_workers=1, thread_name_prefix="s2mc-spare")
        # threads only wait on the children; each admitted request holds one while it waits
        self._threads = ThreadPoolExecutor(max_workers=workers + limits.queue + limits.sessions,
                                           thread_name_prefix="s2mc-job")
        # what must never wait behind the jobs nor block the event loop: closing a session
        self.closer = ThreadPoolExecutor(max_workers=4, thread_name_prefix="s2mc-close")

    async def submit(self, name: str, kwargs: dict, seconds: float | None = None, owner: str | None = None):
        return await self.blocking(self._run, name, kwargs, seconds or self.limits.wall_seconds, owner=owner)

    async def blocking(self, fn, *args, owner: str | None = None):
        """fn(*args) on a waiting thread, admitted through the gate (Busy at once when full), in
        the gate's fair order between owners (a roster's student ids)."""
        loop = asyncio.get_running_loop()

        def admitted():
            with self.gate.enter(owner) as job:
                _job.current = job
                try:
                    return fn(*args)
                finally:
                    _job.current = None
        self.gate.check()    # refused before it takes a thread, so a flood never waits for one
        return await loop.run_in_executor(self._threads, admitted)

    def _run(self, name: str, kwargs: dict, seconds: float):
        worker = self._idle.get()      # the gate lets at most that many jobs here at once
        job = current_job()
        with self.gate._cond:
            nice = self.gate.nice(job.owner, time.monotonic()) if job is not None else 0
        niced = nice > 0 or (job is not None and job.heavy)
        try:
            if worker is None or not worker.alive:
                worker = Worker(self.ctx, self.limits.memory_mib)   # started on first use
            if niced:   # the CPUs go to lighter users' jobs first; a process cannot be un-niced, so it goes
                os.setpriority(os.PRIO_PROCESS, worker.proc.pid, HEAVY_NICE if job.heavy else nice)
            if job is not None:
                job.renice = True
            with running_in(worker.proc.pid):
                outcome = worker.call(name, kwargs, seconds, job)
        except JobError:
            worker = None              # killed: a fresh one next time
            raise
        finally:
            if (niced or (job is not None and job.background)) and worker is not None:
                worker.kill()
                worker = None
            self._give_back(worker)
        if outcome[0] == "ok":
            return outcome[1]
        raise JobError(outcome[1], outcome[2])

    def _give_back(self, worker: "Worker | None") -> None:
        """A worker's place back to the pool: the worker, or (it went) a fresh one started off the
        answer's path; after close() the place stays empty (a job may end after the pool closed)."""
        if worker is not None:
            self._idle.put(worker)
            return
        try:
            self._spares.submit(self._spare)
        except RuntimeError:       # shut down: no more workers
            self._idle.put(None)

    def _spare(self) -> None:
        """A fresh worker in the place of one that went (its place stays empty if it cannot start)."""
        try:
            self._idle.put(Worker(self.ctx, self.limits.memory_mib))
        except BaseException:
            self._idle.put(None)
            raise

    def close(self) -> None:
        self._threads.shutdown(wait=False, cancel_futures=True)
        self.closer.shutdown(wait=False, cancel_futures=True)
        self._spares.shutdown(wait=True, cancel_futures=True)   # no worker started after the last is killed
        while not self._idle.empty():
            worker = self._idle.get_nowait()
            if worker is not None:
                worker.kill(wait=True)


class DaskPool(LocalPool):
    """Jobs on an existing Dask cluster; debugging sessions stay local (they keep state)."""

    def __init__(self, workers: int, limits: Limits, scheduler: str):
        super().__init__(workers, limits)
        # a job on the cluster has no process here to pause: heavy ones only keep to their cap
        self.gate.pause = False
        from s2mc.common.errors import S2mcError
        try:
            from distributed import Client
        except ImportError:
            raise S2mcError("--executor dask: the dask and distributed packages are not installed "
                            "(`make setup` installs them)") from None
        try:
            self.client = Client(scheduler, timeout=10)
        except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError from dask: one line
            raise S2mcError(f"--scheduler {scheduler}: cannot connect ({type(exc).__name__}: {exc})") from None

    def _run(self, name: str, kwargs: dict, seconds: float):
        from distributed import TimeoutError as DaskTimeout

        from . import jobs
        fut = self.client.submit(jobs.call, name, kwargs, pure=False)
        try:
            outcome = fut.result(timeout=seconds)
        except (DaskTimeout, TimeoutError):
            fut.cancel()
            raise JobError(408, f"the {name} ran longer than this server's limit of {seconds:g} s "
                                "and was abandoned") from None
        if outcome[0] == "ok":
            return outcome[1]
        raise JobError(outcome[1], outcome[2])

    def close(self) -> None:
        super().close()
        self.client.close()
