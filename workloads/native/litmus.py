"""Litmus tests on this CPU: the real-hardware twin of the simulated `s2mc litmus` (docs/consistency.md).

    from s2mc.workloads.native import litmus
    r = litmus.run("sb", fences=False, iterations=200_000)
    r["outcomes"]      # {'r0=0 r1=0': 37, 'r0=0 r1=1': ..., 'r0=1 r1=0': ..., 'r0=1 r1=1': ...}
    rows = litmus.rows(r, run_id="litmus-1")   # records rows (metric outcome_count), validated by the caller

The tests and their verdicts are s2mc.common.litmus's. Each runs as pinned OpenMP threads, one per
test thread (thread i on the process's CPU i mod the CPU count: IRIW's four threads time-slice on a
two-CPU machine), with relaxed atomic loads and stores (plain movs) and, in the fenced variant,
mfence between every two operations. The threads meet before each of `iterations` instances, which
run over arrays of locations `batch` at a time (litmus7's method; the C++ source explains it).
"""
from __future__ import annotations

from typing import Callable

from s2mc.common import litmus as tests
from s2mc.common.errors import S2mcError

try:
    from . import _litmus
except ImportError as exc:  # pragma: no cover - only when the C++ extension was not built
    _litmus = None
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None

#: Instances per test unless asked otherwise: enough for SB's relaxed outcome to appear many times
#: on a busy two-CPU machine (docs/native.md, "Litmus tests on this CPU"), in well under a second.
DEFAULT_ITERATIONS = 100_000
#: Instances per batch (the arrays of locations reset and flushed between batches).
DEFAULT_BATCH = 1000
#: Beyond this one run takes hours: a typo, not a study.
MAX_ITERATIONS = 1_000_000_000
#: litmus7's default batch; every location of every instance takes a line (6.4 MB per location here).
MAX_BATCH = 100_000
#: The records' metric and experiment name.
METRIC = "outcome_count"
EXPERIMENT = "litmus_native"


def _lib():
    if _litmus is None:
        raise S2mcError(f"native litmus tests not built ({_IMPORT_ERROR}); run `make setup`")
    return _litmus


def available() -> bool:
    """Whether the C++ extension is built."""
    return _litmus is not None


def cpus() -> list[int]:
    """The CPUs this process may run on: a test with more threads time-slices."""
    return list(_lib().allowed_cpus())


def fence_instruction() -> str:
    """What the fenced variant executes between operations on this CPU."""
    return str(_lib().fence_instruction)


def info() -> dict:
    """Facts for `s2mc info`: built or not (and why), the CPUs threads are pinned to, the fence, the tests
    and their thread counts."""
    if _litmus is None:
        return {"built": False, "error": str(_IMPORT_ERROR)}
    return {"built": True, "cpus": cpus(), "fence": fence_instruction(),
            "tests": {name: len(t.threads) for name, t in tests.TESTS.items()}}


def check_counts(iterations: int, batch: int) -> None:
    """The counts every run takes, checked before any thread starts."""
    if not 1 <= iterations <= MAX_ITERATIONS:
        raise S2mcError(f"iterations {iterations} is out of range (1..{MAX_ITERATIONS})")
    if not 1 <= batch <= MAX_BATCH:
        raise S2mcError(f"batch {batch} is out of range (1..{MAX_BATCH})")


def run(name: str, *, fences: bool = False, iterations: int = DEFAULT_ITERATIONS, batch: int = DEFAULT_BATCH,
        step: Callable[[int], None] | None = None) -> dict:
    """Run test `name` `iterations` times. Returns test, fences, iterations, outcomes (outcome text ->
    instances, most frequent first), interesting (the outcome the test is about), seen (its count),
    allowed (whether x86-TSO allows it), threads, cpus (each thread's CPU) and oversubscribed.

    The work runs in pieces of at most 20 batches so that `step(instances done)` can move a progress
    bar and Ctrl-C stops a long run between pieces."""
    t = tests.test(name)
    check_counts(iterations, batch)
    lib = _lib()
    code = [list(ops) for ops in t.code(fences)]
    piece = batch * 20
    counts: dict[str, int] = {}
    info: dict = {}
    done = 0
    while done < iterations:
        n = min(piece, iterations - done)
        try:
            info = lib.run(code, list(t.observed), n, batch)
        except (ValueError, RuntimeError) as exc:   # too few threads from OpenMP: one line
            raise S2mcError(f"litmus test {name}: {exc}") from None
        except MemoryError:
            raise S2mcError(f"litmus test {name}: cannot allocate the locations of {batch} instances") from None
        for outcome, count in info["outcomes"].items():
            counts[outcome] = counts.get(outcome, 0) + count
        done += n
        if step:
            step(n)
    outcomes = dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return dict(test=name, fences=fences, iterations=iterations, outcomes=outcomes, interesting=t.interesting,
                seen=counts.get(t.interesting, 0), allowed=t.allowed(tests.X86_MODEL, fences),
                model=tests.X86_MODEL, code=t.text(fences), threads=info["threads"], cpus=list(info["cpus"]),
                oversubscribed=bool(info["oversubscribed"]), batch=batch)


def variant(fences: bool, outcome: str) -> str:
    """The records' variant of an outcome row: `mfence/r0=0 r1=0` or `plain/r0=0 r1=0`."""
    return f"{tests.FENCINGS[bool(fences)]}/{outcome}"


def rows(result: dict, *, run_id: str, platform: str, experiment: str = EXPERIMENT) -> list[dict]:
    """One records row per outcome of `result`: workload the test's name, variant `variant()`, metric
    outcome_count, cores the thread count. The interesting outcome gets a row even when it never
    appeared (count 0), so that a table of the rows shows what was looked for."""
    outcomes = dict(result["outcomes"])
    outcomes.setdefault(result["interesting"], 0)
    return [dict(run_id=run_id, experiment=experiment, source="native", platform=platform,
                 workload=result["test"], variant=variant(result["fences"], outcome), engine="openmp",
                 cores=result["threads"], core=-1, bytes=0, cipher="", metric=METRIC, value=float(count))
            for outcome, count in outcomes.items()]


def format_result(r: dict) -> str:
    """A run as a small table: the code, then each outcome with its count and share, the interesting one
    marked with what x86-TSO says about it."""
    head = f"{_label(r)}: {r['code']}   " \
           f"({r['iterations']} iterations, {r['threads']} threads on CPUs {', '.join(map(str, r['cpus']))}" \
           f"{', oversubscribed' if r['oversubscribed'] else ''})"
    lines = [head]
    width = max(len(o) for o in r["outcomes"] | {r["interesting"]: 0})
    shown = dict(r["outcomes"])
    shown.setdefault(r["interesting"], 0)
    for outcome, count in shown.items():
        mark = ""
        if outcome == r["interesting"]:
            verdict = "allowed" if r["allowed"] else "forbidden"
            mark = f"  <- {verdict} by {r['model'].upper()}"
            if count and not r["allowed"]:
                mark += ": SEEN, the CPU broke its model"
        lines.append(f"  {outcome:<{width}}  {count:>12}  {100 * count / r['iterations']:8.4f} %{mark}")
    return "\n".join(lines)


def _label(r: dict) -> str:
    return tests.label(r["test"], r["fences"])


def verdict_line(results: list[dict]) -> str:
    """What the runs say about x86-TSO, from their counts (s2mc.common.litmus.verdict)."""
    text = tests.verdict([(r["test"], r["fences"], r["seen"], r["iterations"]) for r in results])
    return f"{tests.X86_MODEL.upper()} on this CPU: {text}." if text else ""
