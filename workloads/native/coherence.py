"""Cache coherence on this CPU: the real-hardware half of the caches lab (docs/caches-lab.md).

    from s2mc.workloads.native import coherence
    coherence.false_sharing(2, 1_000_000, "packed")   # {'seconds_best': ..., 'counters': [...], 'addresses': [...]}
    coherence.ping_pong(20_000)                       # {'median_ns': ..., 'final_flag': 40000, ...}
    coherence.lock("ttas", 2, 100_000)                # {'acquisitions_per_second': ..., 'counter': 200000}
    coherence.core_to_core(2, 20_000)                 # {'cpus': [0, 1], 'ns': [[None, 41.2], [41.2, None]], ...}
    summaries, rows = coherence.run_grid(coherence.CoherenceGrid(threads=(1, 2)), run_id="coh-1")

The three experiments are the simulated machine's with caches on (false_sharing.s, spin_lock.s,
ttas_lock.s, ticket_lock.s): counters packed into one line against padded a line apart, a line
handed back and forth between two cores, and test-and-set against test-and-test-and-set against
ticket spin locks as threads grow. Each thread is pinned to its own CPU, so the thread count is at
most the CPUs this process may use. `s2mc coherence-native` runs the grid; the rows are plain dicts
with the records' columns (docs/records.md), validated by the caller.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass
from typing import Callable

from s2mc.common.errors import S2mcError
from s2mc.common.measure import Timing, figure, scaling_excess, spread_text
from s2mc.common.text import matrix_table

try:
    from . import _coherence
except ImportError as exc:  # pragma: no cover - only when the C++ extension was not built
    _coherence = None
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None

#: The experiments, in run order.
BENCHES: tuple[str, ...] = ("false-sharing", "ping-pong", "locks")
#: The counter layouts of the false-sharing experiment: one line shared, or a line each.
LAYOUTS: tuple[str, ...] = ("padded", "packed")
#: How a thread increments its own counter: a plain load and store, or an atomic (locked) add.
INCREMENTS: tuple[str, ...] = ("plain", "atomic")
#: The spin locks: test-and-set, test-and-test-and-set, ticket.
LOCKS: tuple[str, ...] = ("tas", "ttas", "ticket")
#: The records' workload name of each experiment (the simulated programs' stems where they match).
WORKLOADS = {"false-sharing": "false_sharing", "ping-pong": "line_ping_pong", "locks": "spin_lock"}
#: The core-to-core latency matrix (core_to_core): asked for by name, as it runs a ping-pong per pair.
MATRIX = "core-to-core"
MATRIX_WORKLOAD = "core_to_core"
#: Upper bounds of the counts: beyond them one measurement takes minutes (a typo, not a study).
MAX_ITERATIONS = 1_000_000_000
MAX_REPS = 1000


def _lib():
    if _coherence is None:
        raise S2mcError(f"native coherence benchmarks not built ({_IMPORT_ERROR}); run `make setup`")
    return _coherence


def available() -> bool:
    """Whether the C++ extension is built."""
    return _coherence is not None


def _call(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except (ValueError, RuntimeError) as exc:   # a bad argument or too few CPUs: one line
        raise S2mcError(str(exc)) from None


def line_bytes() -> int:
    """This CPU's L1 data cache line in bytes, as the OS reports it (64 when it does not)."""
    return _lib().line_bytes()


def cpus() -> list[int]:
    """The CPUs this process may run on (its affinity mask): the most threads the benchmarks pin."""
    return list(_lib().allowed_cpus())


def info() -> dict:
    """Facts for `s2mc info`: built or not (and why), the CPUs threads are pinned to, the line size."""
    if _coherence is None:
        return {"built": False, "error": str(_IMPORT_ERROR)}
    return {"built": True, "cpus": cpus(), "line_bytes": line_bytes()}


def false_sharing(threads: int, iterations: int, layout: str, *, increment: str = "plain", reps: int = 3) -> dict:
    """Each of `threads` pinned threads increments its own 8-byte counter `iterations` times, the
    counters packed side by side (`layout="packed"`, one line for up to line/8 threads) or one per
    line ("padded"), with a plain load and store (`increment="plain"`) or an atomic add ("atomic").
    Returns seconds (wall time of the increment loop, each repetition after an untimed warm-up), seconds_best /
    seconds_median, concurrency / concurrency_median (the threads' CPU time / (threads x wall):
    below 1 they took turns on a shared machine), counters (final values of the last repetition,
    each = iterations), addresses, stride_bytes, line_bytes and the cpus used."""
    return _call(_lib().false_sharing, int(threads), int(iterations), layout, increment, int(reps))


def ping_pong(round_trips: int, *, batch: int = 100, pair: tuple[int, int] | None = None, warmup: int = 0) -> dict:
    """Two threads on two CPUs (`pair`, or the first two this process may use) hand one line back
    and forth `warmup` untimed times, then `round_trips` times (a multiple of `batch`); each batch of
    `batch` round trips is timed. Returns median_ns and min_ns per round trip (over the batches),
    batch_ns (each batch's, in order), round_trips, answered (the second thread's count, warm-up
    included), final_flag (2 x all round trips) and the cpus."""
    return _call(_lib().ping_pong, int(round_trips), int(batch), list(pair or ()), int(warmup))


def core_to_core(cores: int, round_trips: int, *, batch: int = 100,
                 step: Callable[[], None] | None = None) -> dict:
    """The core-to-core latency matrix of the first `cores` CPUs this process may use: for each pair
    i < j a pinned ping-pong (ping_pong, after `batch` untimed round trips), whose median batch
    gives the one-way latency (round trip / 2) of both cells (i, j) and (j, i): a round trip is one
    transfer each way. The diagonal is empty (None): one core does not hand a line to itself.
    Returns cpus, ns (the matrix), spread and why (per cell: '' or why it is disturbed, by the
    method of s2mc.common.measure), round_trips and batch. `step` is called after each pair."""
    usable = cpus()
    if len(usable) < 2:
        raise S2mcError(f"core-to-core needs 2 CPUs; this process may use {len(usable)}")
    if not 2 <= cores <= len(usable):
        raise S2mcError(f"core-to-core: {cores} cores, but this process may use {len(usable)} CPU(s) "
                        f"({', '.join(map(str, usable))}) and a matrix needs at least 2")
    chosen = usable[:cores]
    ns: list[list[float | None]] = [[None] * cores for _ in range(cores)]
    spread = [[0.0] * cores for _ in range(cores)]
    why = [[""] * cores for _ in range(cores)]
    for i in range(cores):
        for j in range(i + 1, cores):
            r = ping_pong(round_trips, batch=batch, pair=(chosen[i], chosen[j]), warmup=batch)
            tm = Timing(tuple(r["batch_ns"]), 1)
            for a, b in ((i, j), (j, i)):
                ns[a][b], spread[a][b], why[a][b] = tm.median / 2, tm.spread, tm.why
            if step:
                step()
    return {"cpus": chosen, "ns": ns, "spread": spread, "why": why, "round_trips": round_trips, "batch": batch}


def core_to_core_rows(m: dict, *, run_id: str, experiment: str = "coherence_native") -> list[dict]:
    """The records rows of a core_to_core matrix: one `core_to_core_ns` row per off-diagonal cell,
    variant `i-j`, core i, cores the matrix's size."""
    plat, n = platform_name(), len(m["cpus"])
    return [dict(run_id=run_id, experiment=experiment, source="native", platform=plat, workload=MATRIX_WORKLOAD,
                 variant=f"{i}-{j}", engine="openmp", cores=n, core=i, bytes=0, cipher="",
                 metric="core_to_core_ns", value=float(m["ns"][i][j]), spread=m["spread"][i][j],
                 disturbed=bool(m["why"][i][j]))
            for i in range(n) for j in range(n) if i != j]


def format_core_to_core(m: dict) -> str:
    """The matrix as a text table (rows and columns named by CPU), then the disturbed cells, if any."""
    labels = [f"cpu{c}" for c in m["cpus"]]
    text = matrix_table(labels, m["ns"], corner="one-way ns")
    n = len(labels)
    bad = [f"{labels[i]}-{labels[j]}: {m['why'][i][j]}" for i in range(n) for j in range(i + 1, n) if m["why"][i][j]]
    return text + "".join(f"\n  DISTURBED {b}" for b in bad)


def lock(kind: str, threads: int, acquisitions: int, *, reps: int = 3) -> dict:
    """`threads` pinned threads each take spin lock `kind` (tas, ttas, ticket) `acquisitions` times
    around one increment of a shared counter. Returns the timing fields of false_sharing,
    acquisitions_per_second (all threads, the median repetition) and counter (= threads x
    acquisitions, last repetition)."""
    return _call(_lib().lock, kind, int(threads), int(acquisitions), int(reps))


def platform_name() -> str:
    """The CPU model the records name as their platform."""
    from . import info   # the AES module reads the CPU's brand string; the same name as `s2mc native`
    return info().get("cpu") or platform.processor() or "unknown"


@dataclass(frozen=True)
class CoherenceGrid:
    """Which experiments to run, with which thread counts, locks and counts.

    False sharing runs both layouts at each thread count and increment (padded first, then packed,
    side by side) and their ratio; ping-pong runs once on two CPUs; locks run each kind at each thread count.
    """
    benches: tuple[str, ...] = BENCHES
    threads: tuple[int, ...] = (1, 2)
    increments: tuple[str, ...] = INCREMENTS
    locks: tuple[str, ...] = LOCKS
    iterations: int = 2_000_000      # increments per thread (false sharing)
    acquisitions: int = 200_000      # lock acquisitions per thread
    round_trips: int = 20_000        # line round trips (ping-pong), timed in batches of 100
    reps: int = 3

    def configs(self) -> list[tuple[str, str, int]]:
        """(bench, variant, threads) of every measurement, in run order; a false-sharing variant is
        LAYOUT/INCREMENT."""
        out = []
        for bench in BENCHES:
            if bench not in self.benches:
                continue
            if bench == "false-sharing":
                out += [(bench, f"{layout}/{inc}", t) for inc in INCREMENTS if inc in self.increments
                        for t in self.threads for layout in LAYOUTS]
            elif bench == "ping-pong":
                out.append((bench, "atomic-flag", 2))
            else:
                out += [(bench, kind, t) for kind in self.locks for t in self.threads]
        return out


def run_grid(grid: CoherenceGrid, *, run_id: str, experiment: str = "coherence_native", progress: bool = False,
             log: Callable[[dict], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Measure the grid; returns (summaries, records rows). `log` gets each summary as it is measured.

    A summary: bench, variant, threads and the figure (ns_per_increment, false_sharing_ratio,
    round_trip_ns or acquisitions_per_second) with what proves the run did its work (final counts).
    Timings are the median of the repetitions (after an untimed warm-up), not the best: on a shared
    machine the fastest repetition of a contended run is the one where the threads happened not to
    run at once. Each carries its spread (s2mc.common.measure) and is disturbed when the spread is
    over MAX_SPREAD or, for a lock, when t threads took it more than t times as often as fewer did
    (a lock serialises its section, so that only happens when the machine slowed the other run).
    Each timing comes with its concurrency (thread_concurrency in the records). The rows carry no
    `seconds`: every thread does a fixed amount of work, so more threads take longer by design, and
    the report's speedup over one thread (derived from `seconds`) would mean nothing here.
    """
    for b in grid.benches:
        if b not in BENCHES:
            raise S2mcError(f"unknown coherence benchmark {b!r} (known: {', '.join(BENCHES)})")
    plat = platform_name()
    configs = grid.configs()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc coherence-native", unit="run", leave=False)
    rows, summaries, padded = [], [], {}
    lock_rates: dict[str, list[tuple[int, float]]] = {}   # lock -> [(threads, acquisitions/s)]

    def emit(s: dict, metrics: dict, timing: Timing | None = None) -> None:
        if timing is not None:
            s.update(spread=timing.spread, disturbed=timing.disturbed, why=timing.why)
        base = dict(run_id=run_id, experiment=experiment, source="native", platform=plat,
                    workload=WORKLOADS[s["bench"]], variant=s["variant"], engine="openmp", cores=s["threads"],
                    core=-1, bytes=0, cipher="", spread=s.get("spread", 0.0), disturbed=s.get("disturbed", False))
        rows.extend(dict(base, metric=m, value=float(v)) for m, v in metrics.items())
        summaries.append(s)
        if log:
            log(s)

    try:
        for bench, variant, t in configs:
            if bench == "false-sharing":
                layout, inc = variant.split("/")
                r = false_sharing(t, grid.iterations, layout, increment=inc, reps=grid.reps)
                tm = Timing(tuple(r["seconds"]), 1)
                ns = tm.median * 1e9 / grid.iterations
                emit(dict(bench=bench, variant=variant, threads=t, ns_per_increment=ns, seconds=tm.median,
                          concurrency=r["concurrency_median"], increments=sum(r["counters"]),
                          stride_bytes=r["stride_bytes"]),
                     {"ns_per_increment": ns,
                      "thread_concurrency": r["concurrency_median"]}, tm)
                if layout == "padded":
                    padded[(inc, t)] = (ns, tm)
                else:
                    pad_ns, pad_tm = padded[(inc, t)]
                    why = "; ".join(f"{name} {x.why}" for name, x in (("padded", pad_tm), ("packed", tm)) if x.why)
                    emit(dict(bench=bench, variant=f"packed-vs-padded/{inc}", threads=t, false_sharing_ratio=ns / pad_ns,
                              spread=max(tm.spread, pad_tm.spread), disturbed=bool(why), why=why),
                         {"false_sharing_ratio": ns / pad_ns})
            elif bench == "ping-pong":
                r = ping_pong(grid.round_trips)
                tm = Timing(tuple(r["batch_ns"]), 1)
                emit(dict(bench=bench, variant=variant, threads=2, round_trip_ns=r["median_ns"], min_ns=r["min_ns"],
                          round_trips=r["round_trips"], cpus=r["cpus"]), {"round_trip_ns": r["median_ns"]}, tm)
            else:
                r = lock(variant, t, grid.acquisitions, reps=grid.reps)
                tm = Timing(tuple(r["seconds"]), 1)
                rate = grid.acquisitions * t / tm.median
                # A lock serialises its section: t threads cannot take it more than t times as often as one.
                for t0, rate0 in lock_rates.setdefault(variant, []):
                    why = scaling_excess(rate, t, rate0, t0)
                    if why:
                        tm = tm.flagged(why)
                lock_rates[variant].append((t, rate))
                emit(dict(bench=bench, variant=variant, threads=t, acquisitions_per_second=rate, seconds=tm.median,
                          concurrency=r["concurrency_median"], counter=r["counter"]),
                     {"acquisitions_per_second": rate,
                      "thread_concurrency": r["concurrency_median"]}, tm)
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    return summaries, rows


def format_summary(s: dict) -> str:
    """One measurement as a line: experiment, variant, threads, its figure (the median repetition) with
    the spread, and DISTURBED with why at the end of a disturbed row."""
    head = f"{s['bench']:<14} {s['variant']:<24} {s['threads']:>2} thr  "
    spread = f" {spread_text(s['spread']):>7}" if "spread" in s else ""
    if "ns_per_increment" in s:
        line = head + f"{figure(s['ns_per_increment'], 9)} ns/increment{spread}  ({s['increments']} increments, " \
                      f"counters {s['stride_bytes']} B apart; concurrency {s['concurrency']:.2f})"
    elif "false_sharing_ratio" in s:
        line = head + f"{figure(s['false_sharing_ratio'], 9)}x  packed / padded ns per increment"
    elif "round_trip_ns" in s:
        line = head + f"{figure(s['round_trip_ns'], 9)} ns/round trip{spread} (median batch; best " \
                      f"{figure(s['min_ns'])}) on CPUs {s['cpus'][0]} and {s['cpus'][1]}"
    else:
        line = head + f"{figure(s['acquisitions_per_second'] / 1e6, 9)} M acquisitions/s{spread}  (counter " \
                      f"{s['counter']}; concurrency {s['concurrency']:.2f})"
    if s.get("disturbed"):
        line += f"  DISTURBED: {s['why']}"
    return line
