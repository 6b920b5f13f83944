"""What `s2mc demo` runs, in order: every experiment of the registry with a `demo` place
(registry.DEMO: the seed 003 grid, core scaling to 64 cores, memory-latency and arbitration sweeps
on the simulator; native thread scaling and seed 000's block sizes; the GPU size sweep), their
quick forms unless `full`, then the consistency step (s2mc.experiments.consistency: litmus tests
on the simulated machine and this CPU, Peterson's lock, store buffers), then the native-seeds step (seeds_native.measure_all: seeds 001, 002's
Figure 10 and 004 on this host). The command then writes the report from what ran.

    from s2mc.experiments import demo
    ran, skipped = demo.run(Path("results/demo"), log=print)
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from s2mc.common.errors import S2mcError

from . import registry

#: The parts `--skip` can leave out, and the records source of their experiments.
PARTS = {"sim": "sim", "native": "native", "gpu": "cuda"}


def run(results: Path, *, full: bool = False, skip=(), progress: bool = False,
        log: Callable[[str], None] = lambda msg: None) -> tuple[list[Path], list[str]]:
    """Run the demo's experiments into the folder `results`: (the records files written, a line per
    part or experiment that did not run, saying why). A part that cannot run here (no GPU, say) is
    skipped with a message; one experiment that fails does not stop the others."""
    ran, skipped, why_not = [], [], {}
    for part, source in PARTS.items():
        if part in skip:
            skipped.append(f"{part}: left out (--skip {part})")
        elif why := registry.unavailable(source):
            why_not[source] = f"{part}: {why}"
            log(f"s2mc demo: skipping {why_not[source]}")
            skipped.append(why_not[source])
    for name in registry.DEMO:
        exp = registry.get(name)
        part = next(p for p, s in PARTS.items() if s == exp.source)
        if part in skip or exp.source in why_not:
            continue
        log(f"s2mc demo: {name}: {exp.title}")
        t1 = time.monotonic()
        try:
            path, n = registry.run(exp, results, quick=not full, log=log, progress=progress)
        except S2mcError as exc:
            log(f"  ! failed: {exc}")
            skipped.append(f"{name}: failed")
            continue
        log(f"    {n} records in {time.monotonic() - t1:.1f} s -> {path}")
        ran.append(path)
    if "sim" not in skip and "sim" not in why_not:
        ran += _consistency(results, full, native="native" not in skip and "native" not in why_not, log=log,
                            skipped=skipped)
    if "native" not in skip and "native" not in why_not:
        log("s2mc demo: seeds 001, 002 (Figure 10) and 004 on this host (s2mc.experiments.seeds_native)")
        t1 = time.monotonic()
        try:
            from s2mc.analysis import records

            from . import seeds_native
            df = seeds_native.measure_all(full)
            path = records.write(df, results / "seeds_native.parquet",
                                 params=dict(command="demo seeds_native", full=full))
            log(f"    {len(df)} records in {time.monotonic() - t1:.1f} s -> {path}")
            ran.append(path)
        except S2mcError as exc:
            log(f"  ! failed: {exc}")
            skipped.append("seeds_native: failed")
    return ran, skipped


def _consistency(results: Path, full: bool, *, native: bool, log: Callable[[str], None],
                 skipped: list[str]) -> list[Path]:
    """The consistency step (s2mc.experiments.consistency): the simulated litmus tests under sc, tso
    and pso (with this CPU's when `native`), Peterson's lock and its fence, the store buffers' speedup."""
    from s2mc.analysis import records

    from . import consistency
    log("s2mc demo: consistency: litmus tests, Peterson's lock, store buffers (s2mc.experiments.consistency)")
    t1 = time.monotonic()
    try:
        df = consistency.measure(quick=not full, native=native)
        path = records.write(df, results / "consistency.parquet", params=dict(command="demo consistency", full=full))
    except S2mcError as exc:
        log(f"  ! failed: {exc}")
        skipped.append("consistency: failed")
        return []
    log(f"    {len(df)} records in {time.monotonic() - t1:.1f} s -> {path}")
    return [path]
