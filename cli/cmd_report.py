"""`s2mc report RESULTS... --out DIR`: Markdown + HTML report with tables and PNG plots."""
from __future__ import annotations

import json
from pathlib import Path

import click

from s2mc.common.errors import S2mcError

from .options import OutputFolder, Text


@click.command()
@click.argument("results", nargs=-1, type=click.Path())
@click.option("--out", "out_dir", default="report", show_default=True, type=OutputFolder("report"),
              help="Folder for report.md, report.html and the PNG plots (created; its parent must exist).")
@click.option("--title", type=Text(), default="s2mc report", show_default=True, help="Report title.")
@click.option("--json", "as_json", is_flag=True, help="Print the written paths as JSON.")
def report(results, out_dir, title, as_json):
    """Turn result files (Parquet/CSV records, or directories of them) into a report.

    With no RESULTS, reads ./results. The seed papers' reference tables are always included.
    """
    from s2mc.analysis import report as rep

    paths = list(results) or ["results"]
    for p in paths:
        if not Path(p).exists():
            raise S2mcError(f"report: {p}: no such file or directory")
    out = rep.build(paths, out_dir, title=title)
    if as_json:
        click.echo(json.dumps({"md": str(out["md"]), "html": str(out["html"]),
                               "plots": [str(p) for p in out["plots"]]}, indent=1))
    else:
        click.echo(f"s2mc report: {len(out['plots'])} plots", err=True)
        click.echo(str(out["md"]))
        click.echo(str(out["html"]))


COMMANDS = [report]
