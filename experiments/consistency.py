"""The consistency step of `s2mc demo`, as records the report's sections 4.7 and 4.8 read
(s2mc.analysis.litmus_native, s2mc.analysis.consistency): the simulated litmus tests under sc, tso
and pso beside the same tests on this CPU, Peterson's lock broken by the store buffers and mended
by one fence, and the speedup the store buffers buy on a store-heavy program.

    from s2mc.experiments import consistency
    df = consistency.measure(quick=True)        # validated records (experiment `consistency`)

The simulated litmus tests are s2mc.common.litmus's (the ones `s2mc litmus-native` runs here),
plain and fenced, each `runs` times under the timings of seed 0 (`s2mc litmus`): one
`outcome_count` row per outcome, variant `<model>/<plain|mfence>/<outcome>`, so that the report's
litmus table puts a column per model beside the CPU's. Peterson's lock (`peterson.s`, no twin on
the CPU) under tso: `litmus_runs` and `relaxed_runs` rows without fences and with one fence at the
label PETERSON_FENCE, and run 0's cycles of each (`consistency_cycles`). STORE_PROGRAM on
STORE_CORES cores under sc, under tso and under tso with a fence at STORE_FENCE:
`consistency_cycles` rows.
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

from s2mc.common import litmus as tests

from . import litmus

EXPERIMENT = "consistency"
#: Runs per simulated litmus cell: quick (the demo's default) and full.
RUNS = {True: 100, False: 500}
#: Instances per test on this CPU: quick and full.
NATIVE_ITERATIONS = {True: 10_000, False: 100_000}
#: Peterson's lock and the one fence that mends it under tso (after turn=j, before the waiting loop).
PETERSON, PETERSON_FENCE = "peterson.s", "f1"
#: The store-heavy program, its cores, and the label after its store.
STORE_PROGRAM, STORE_CORES, STORE_FENCE = "store_fill.s", 4, "f0"


def fencing(fences: tuple[str, ...]) -> str:
    """How a variant names its fences: `plain`, or `fence@f1` (`fence@f0+f1` for two labels)."""
    return f"fence@{'+'.join(fences)}" if fences else "plain"


def _row(run_id: str, workload: str, variant: str, cores: int, metric: str, value: float, source: str = "sim",
         platform: str = "s2", engine: str = "fast") -> dict:
    return dict(run_id=run_id, experiment=EXPERIMENT, source=source, platform=platform, workload=workload,
                variant=variant, engine=engine, cores=cores, core=-1, bytes=0, cipher="", metric=metric,
                value=float(value))


def litmus_rows(run_id: str, runs: int, log: Callable[[str], None] = lambda msg: None) -> list[dict]:
    """The twins of the CPU's litmus tests on the simulated machine: every outcome's count, per model
    and fencing (the relaxed outcome too when it never appeared)."""
    rows = []
    for name in tests.TESTS:
        for fenced in (False, True):
            program = f"{name}{litmus.FENCED if fenced else ''}.s"
            for model in tests.MODELS:
                log(f"    s2mc litmus {program} --model {model} --runs {runs}")
                r = litmus.run_litmus(program, model, runs=runs, seed=0)
                counts = {r.test.label(o): n for o, n in r.outcomes.items()}
                counts.setdefault(r.test.label(r.test.relaxed), 0)
                rows += [_row(run_id, name, f"{model}/{tests.FENCINGS[fenced]}/{o}", r.test.cores, "outcome_count", n)
                         for o, n in counts.items()]
    return rows


def peterson_rows(run_id: str, runs: int, model: str = "tso") -> list[dict]:
    """Peterson's lock without fences and with the one fence: runs, runs that printed its relaxed
    outcome (both cores in the critical section), run 0's cycles."""
    rows, name = [], PETERSON.removesuffix(".s")
    for fences in ((), (PETERSON_FENCE,)):
        r = litmus.run_litmus(PETERSON, model, runs=runs, seed=0, fences=fences or None)
        variant, cores = f"{model}/{fencing(fences)}", r.test.cores
        rows += [_row(run_id, name, variant, cores, "litmus_runs", r.runs),
                 _row(run_id, name, f"{variant}/{r.test.label(r.test.relaxed)}", cores, "relaxed_runs",
                      r.outcomes.get(r.test.relaxed, 0)),
                 _row(run_id, name, variant, cores, "consistency_cycles", r.first_cycles)]
    return rows


def store_rows(run_id: str) -> list[dict]:
    """STORE_PROGRAM's cycles under sc, tso, and tso with a fence after every store."""
    from . import lab
    rows = []
    for model, fences in (("sc", ()), ("tso", ()), ("tso", (STORE_FENCE,))):
        r = lab.run(STORE_PROGRAM, STORE_CORES, fences=fences, consistency=model)
        variant = model if not fences else f"{model}/{fencing(fences)}"
        rows.append(_row(run_id, STORE_PROGRAM, variant, STORE_CORES, "consistency_cycles", r.cycles))
    return rows


def native_rows(run_id: str, iterations: int, log: Callable[[str], None] = lambda msg: None) -> list[dict]:
    """Every litmus test of s2mc.common.litmus on this CPU, plain and fenced (`s2mc litmus-native`)."""
    from s2mc.workloads import native
    from s2mc.workloads.native import litmus as on_cpu
    platform = native.info().get("cpu") or "this CPU"
    rows = []
    for name in tests.TESTS:
        for fenced in (False, True):
            log(f"    s2mc litmus-native --test {name} --fences {tests.FENCINGS[fenced]} --iterations {iterations}")
            r = on_cpu.run(name, fences=fenced, iterations=iterations)
            rows += on_cpu.rows(r, run_id=run_id, platform=platform, experiment=EXPERIMENT)
    return rows


def measure(quick: bool = True, *, native: bool = True, run_id: str | None = None,
            log: Callable[[str], None] = lambda msg: None) -> pd.DataFrame:
    """The whole step as validated records; `native`: the CPU's litmus tests too (when built)."""
    from s2mc.analysis import records
    from s2mc.workloads.native import litmus as on_cpu
    rid = run_id or records.new_run_id(EXPERIMENT)
    runs = RUNS[quick]
    rows = litmus_rows(rid, runs, log) + peterson_rows(rid, runs) + store_rows(rid)
    if native and on_cpu.available():
        rows += native_rows(rid, NATIVE_ITERATIONS[quick], log)
    return records.make_records(rows)
