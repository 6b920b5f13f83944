"""`s2mc demo`: the headline experiment end to end (what `make demo` runs).

1. the seed 003 grid, a core-scaling sweep to 64 cores (both AES styles), and memory-latency and
   arbitration sweeps on the simulator;
2. native AES thread scaling and seed 000's block sizes on this host, and seeds 001, 002 (Figure 10) and 004
   (s2mc.experiments.seeds_native: sequential vs threads, total and encryption-only, the crossover);
3. the GPU size sweep when a GPU is present;
4. the report (`s2mc report`) under report/, with every plot and the seed tables.

The experiments are data (s2mc.experiments.registry.DEMO, their `quick` forms unless --full); this
command runs them in this process through the libraries and writes the report. A part that cannot
run here (no GPU, say) is skipped with a message saying why; the report is written from whatever ran.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from s2mc.common.errors import S2mcError
from s2mc.common.outputs import make_folder

from .options import OutputFolder

#: --skip's parts and the records source of their experiments.
PARTS = {"sim": "sim", "native": "native", "gpu": "cuda"}


@click.command()
@click.option("--results", "results_dir", default="results", show_default=True,
              type=OutputFolder("records folder"), help="Where the records go (in a folder demo/ "
              "inside it; created, its parent must exist).")
@click.option("--out", "report_dir", default="report", show_default=True,
              type=OutputFolder("report"), help="Where the report goes (created; its parent must exist).")
@click.option("--full", is_flag=True, help="The registry's full experiments instead of the quick "
                                           "forms (much longer).")
@click.option("--skip", multiple=True, type=click.Choice(list(PARTS)),
              help="Leave a part out (repeatable).")
@click.option("--quiet", is_flag=True, help="Only the final summary.")
def demo(results_dir, report_dir, full, skip, quiet):
    """Run the headline experiment end to end and write the report.

    Simulated seed 003 grid and core scaling, native thread scaling, the GPU when present; then
    the report with the seed papers' tables beside ours.
    """
    from s2mc.experiments import registry as experiments
    from s2mc.analysis import report as rep

    def log(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    results = Path(make_folder(Path(make_folder(results_dir, "records folder")) / "demo", "records folder"))
    for old in list(results.glob("*.parquet")) + list(results.glob("*.manifest.json")):
        old.unlink()
    t0 = time.monotonic()
    ran, skipped, why_not = [], [], {}
    for part, source in PARTS.items():
        if part in skip:
            skipped.append(f"{part}: left out (--skip {part})")
        elif why := experiments.unavailable(source):
            why_not[source] = f"{part}: {why}"
            log(f"s2mc demo: skipping {why_not[source]}")
            skipped.append(why_not[source])
    for name in experiments.DEMO:
        exp = experiments.get(name)
        part = next(p for p, s in PARTS.items() if s == exp.source)
        if part in skip or exp.source in why_not:
            continue
        log(f"s2mc demo: {name}: {exp.title}")
        t1 = time.monotonic()
        try:
            path, n = experiments.run(exp, results, quick=not full, log=log,
                                      progress=not quiet and sys.stderr.isatty())
        except S2mcError as exc:   # one failed experiment does not stop the others
            log(f"  ! failed: {exc}")
            skipped.append(f"{name}: failed")
            continue
        log(f"    {n} records in {time.monotonic() - t1:.1f} s -> {path}")
        ran.append(path)
    if "native" not in skip and "native" not in why_not:
        log("s2mc demo: seeds 001, 002 (Figure 10) and 004 on this host (s2mc.experiments.seeds_native)")
        t1 = time.monotonic()
        try:
            from s2mc.analysis import records
            from s2mc.experiments import seeds_native
            df = seeds_native.measure() if full else seeds_native.measure_quick()
            # seed 002 Figure 10: ciphers x threads (issue 16)
            df = records.concat([df, seeds_native.measure_seed002() if full else
                                 seeds_native.measure_seed002_quick()])
            # seed 004's GPU column beside our OpenCL kernels (issue 16; PoCL here, up to 4 MB quick)
            df = records.concat([df, seeds_native.measure_seed004_opencl() if full else
                                 seeds_native.measure_seed004_opencl([1 << 10, 64 << 10, 1 << 20, 4 << 20],
                                                                     min_seconds=0.01)])
            path = records.write(df, results / "seeds_native.parquet",
                                 params=dict(command="demo seeds_native", full=full))
            log(f"    {len(df)} records in {time.monotonic() - t1:.1f} s -> {path}")
            ran.append(path)
        except S2mcError as exc:
            log(f"  ! failed: {exc}")
            skipped.append("seeds_native: failed")
    log("s2mc demo: writing the report")
    out = rep.build([results], report_dir, title="s2mc demo: simulated bus vs real hardware")
    main = out["main_table"]
    click.echo("")
    click.echo("Seed 003, cycles (ours vs paper):")
    cols = [c for c in ("bytes", "cores", "cycles (ours)", "cycles (paper)", "speedup (ours)",
                        "speedup (paper)") if c in main]
    click.echo(rep.md_table(main[cols]))
    click.echo("")
    if skipped:
        click.echo("Skipped: " + "; ".join(skipped))
    click.echo(f"{len(ran)} result files in {results}/, {len(out['plots'])} plots; "
               f"finished in {time.monotonic() - t0:.0f} s.")
    click.echo(f"Report: {Path(out['md']).resolve()}")
    click.echo(f"        {Path(out['html']).resolve()}")


COMMANDS = [demo]
