"""`s2mc fidelity`: which machine and program reproduce seed 003's Tables 3-4 (run by
s2mc.experiments.fidelity, read by s2mc.analysis.fidelity).

    s2mc fidelity --out results/fidelity.parquet        # every hypothesis
    s2mc fidelity --only model,fifo                     # some of them

Each hypothesis (a bus, where the key is expanded, the Rz level, how stalls are counted) is
calibrated to the paper's 1-core cells only and run on its 14 cells; the table gives its mean
absolute error over the 10 multi-core cells and all 14, in cycles and in summed stalls, and its
verdict. `s2mc report` shows the same table from the records.
"""
from __future__ import annotations

import json
import sys
import time

import click

from .options import Choices, OutputFile


def _ids() -> tuple[str, ...]:
    from s2mc.analysis.fidelity import HYPOTHESES
    return tuple(h.id for h in HYPOTHESES)


@click.command("fidelity")
@click.option("--only", type=Choices(_ids), default=None,
              help="Comma-separated hypotheses to run (default: all of them).")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False),
              help="Write the records (Parquet, or CSV when the name ends in .csv) and a manifest.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress lines.")
def fidelity_cmd(only, out_path, as_json, quiet):
    """Seed 003 fidelity: each hypothesis about the paper's machine and program, calibrated to its
    1-core cells and scored on its 14 cycle and 14 stall cells (docs/aes-on-s2.md)."""
    from s2mc.analysis import fidelity, records
    from s2mc.experiments.fidelity import run

    chosen = [fidelity.BY_ID[i] for i in only] if only else list(fidelity.HYPOTHESES)
    t0 = time.perf_counter()

    def progress(h):
        if not quiet:
            click.echo(f"s2mc fidelity: {h.id} ({h.engine}), {time.perf_counter() - t0:.0f} s", err=True)
    df = records.make_records(run(chosen, progress=progress))
    table = fidelity.hypothesis_table(df)
    if out_path:
        path = records.write(df, out_path, params={"command": "fidelity", "hypotheses": [h.id for h in chosen]})
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps(json.loads(table.to_json(orient="records")), indent=1))
        return
    click.echo(fidelity.format_table(table))
    click.echo("\nErrors: mean |ours / paper - 1| over the 10 multi-core cells (predictions) and all 14. Why:")
    for _, r in table.iterrows():
        click.echo(f"  {r['hypothesis']}: {r['why']}")
    sys.stdout.flush()


COMMANDS = [fidelity_cmd]
