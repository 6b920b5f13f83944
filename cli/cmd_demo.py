"""`s2mc demo`: the headline experiment end to end (what `make demo` runs): the experiments of
s2mc.experiments.demo (the registry's demo experiments, their quick forms unless --full, then seeds
001, 002 and 004 on this host), then the report (`s2mc report`) under report/, with every plot and
the seed tables. A part that cannot run here (no GPU, say) is skipped with a message saying why; the
report is written from whatever ran.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import click

from s2mc.common.outputs import make_folder
from s2mc.experiments import demo as demo_steps

from .options import OutputFolder


@click.command()
@click.option("--results", "results_dir", default="results", show_default=True,
              type=OutputFolder("records folder"), help="Where the records go (in a folder demo/ "
              "inside it; created, its parent must exist).")
@click.option("--out", "report_dir", default="report", show_default=True,
              type=OutputFolder("report"), help="Where the report goes (created; its parent must exist).")
@click.option("--full", is_flag=True, help="The registry's full experiments instead of the quick "
                                           "forms (much longer).")
@click.option("--skip", multiple=True, type=click.Choice(list(demo_steps.PARTS)),
              help="Leave a part out (repeatable).")
@click.option("--quiet", is_flag=True, help="Only the final summary.")
def demo(results_dir, report_dir, full, skip, quiet):
    """Run the headline experiment end to end and write the report.

    Simulated seed 003 grid and core scaling, native thread scaling, the GPU when present; then
    the report with the seed papers' tables beside ours.
    """
    from s2mc.analysis import report as rep

    def log(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    results = Path(make_folder(Path(make_folder(results_dir, "records folder")) / "demo", "records folder"))
    for old in list(results.glob("*.parquet")) + list(results.glob("*.manifest.json")):
        old.unlink()
    t0 = time.monotonic()
    ran, skipped = demo_steps.run(results, full=full, skip=skip, log=log,
                                  progress=not quiet and sys.stderr.isatty())
    log("s2mc demo: writing the report")
    out = rep.build([results], report_dir, title="s2mc demo: simulated bus vs real hardware", empty_ok=True)
    main = out["main_table"]
    click.echo("")
    click.echo("Seed 003, cycles (ours vs paper):")
    cols = [c for c in ("bytes", "cores", "cycles (ours)", "cycles (paper)", "speedup (ours)",
                        "speedup (paper)") if c in main]
    click.echo(rep.md_table(main[cols]))
    click.echo("")
    if out.get("records") is not None:
        _caches_summary(out["records"])
        _consistency_summary(out["records"])
    if skipped:
        click.echo("Skipped: " + "; ".join(skipped))
    click.echo(f"{len(ran)} result files in {results}/, {len(out['plots'])} plots; "
               f"finished in {time.monotonic() - t0:.0f} s.")
    click.echo(f"Report: {Path(out['md']).resolve()}")
    click.echo(f"        {Path(out['html']).resolve()}")


def _caches_summary(df) -> None:
    """The caches steps' headline: each program's speedup per protocol (the report's section 2b), or
    its cycles for a lab program, whose work grows with the cores."""
    from s2mc.analysis import caches
    from s2mc.analysis import report as rep
    runs = caches.cache_runs(df)
    if runs.empty:
        return
    for (workload, base, nbytes), g in runs.groupby(["workload", "base", "bytes"], sort=False):
        name = f"Caches, {workload}{f' ({base})' if base else ''}{f', {int(nbytes)} bytes' if nbytes else ''}"
        if workload in caches.LAB:
            click.echo(f"{name}: cycles (every core does the same work, so more cores do more of it):")
            click.echo(rep.md_table(caches.cycles_table(g)))
        else:
            click.echo(f"{name}: speedup over one cacheless core:")
            click.echo(rep.md_table(caches.speedup_table(g)))
        click.echo("")


def _consistency_summary(df) -> None:
    """The consistency step's headline: what each machine's litmus counts say about its model, Peterson's
    lock and its fence, the store buffers' speedup (the report's sections 4.7 and 4.8)."""
    from s2mc.analysis import consistency, litmus_native
    lines = litmus_native.sentences(litmus_native.outcome_rows(df)) + consistency.sentences(df)
    if lines:
        click.echo("Memory consistency (report sections 4.7, 4.8):")
        for line in lines:
            click.echo(f"- {line}")
        click.echo("")


COMMANDS = [demo]
