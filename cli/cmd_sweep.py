"""`s2mc sweep`: run an experiment spec file, configuration by configuration, here or on Dask.

    s2mc sweep experiments/studies/seed003.toml --out r.parquet
    s2mc sweep seed003 --out r.parquet --executor dask --workers 2
    s2mc sweep my.toml --out r.parquet --executor dask --scheduler tcp://10.0.0.1:8786

Each finished configuration is stored in FILE.parts/; an interrupted sweep run again with the same
command runs only what is missing; a failing configuration is reported and the others complete
(exit 1 at the end). docs/sweeps.md.
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from s2mc.common.errors import S2mcError

from .options import Integer, OutputFile


def _spec_path(spec: str) -> Path:
    """SPEC as given, or the shipped spec file of that name (`seed003`, `seed003_grid`)."""
    from s2mc.experiments import specs
    p = Path(spec)
    if p.exists() or p.suffix == ".toml" or "/" in spec:
        return p
    for s in specs.load_shipped():
        if spec in (s.name, Path(s.path).stem):
            return Path(s.path)
    names = ", ".join(p.stem for p in specs.shipped())
    raise S2mcError(f"{spec}: no such spec file or shipped experiment (shipped: {names})")


@click.command("sweep")
@click.argument("spec", type=click.Path())
@click.option("--out", "out_path", required=True, type=OutputFile("records", stdout=False),
              help="The records file (Parquet, or CSV when it ends in .csv). Each finished "
                   "configuration is kept in FILE.parts/, so that the same command again skips it.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: one configuration after the other in this process. dask: one task per "
                   "configuration on a Dask cluster.")
@click.option("--scheduler", metavar="ADDRESS",
              help="With --executor dask: a running `dask scheduler` (tcp://HOST:8786); without it, "
                   "a local cluster is started.")
@click.option("--workers", type=Integer(1, 4096),
              help="With --executor dask and no --scheduler: worker processes of the local cluster "
                   "[default: the CPUs].")
@click.option("--quick", is_flag=True, help="The spec's [[quick]] grids (what `s2mc demo` runs).")
@click.option("--fresh", is_flag=True, help="Forget the configurations stored by earlier runs.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def sweep_cmd(spec, out_path, executor, scheduler, workers, quick, fresh, quiet):
    """Run an experiment SPEC file (or a shipped experiment's name), one task per configuration,
    resumable: run the same command again after an interruption to finish."""
    from s2mc.experiments import registry, specs, sweep

    if executor == "local" and (scheduler or workers):
        raise click.UsageError(f"{'--scheduler' if scheduler else '--workers'} needs --executor dask")
    if scheduler and workers:
        raise click.UsageError("--workers: the scheduler's own workers run the sweep (start them with "
                               "`dask worker ADDRESS --nworkers N`); give one of the two")
    loaded = specs.load(_spec_path(spec))
    for note in loaded.notes:
        click.echo(f"s2mc sweep: {note}", err=True)
    exp = registry.from_spec(loaded)
    res = sweep.run(exp, out_path, executor=executor, scheduler=scheduler, workers=workers, quick=quick,
                    fresh=fresh, progress=not quiet and sys.stderr.isatty(),
                    log=lambda msg: click.echo(msg, err=True))
    click.echo(f"s2mc sweep: {exp.name}: {res.total} configurations: {res.ran} run now, "
               f"{res.stored_before} stored before, {len(res.failed)} failed; {res.records} records "
               f"in {res.path} ({res.seconds:.1f} s)")
    if res.failed:
        raise S2mcError(f"{len(res.failed)} of {res.total} configurations failed (listed above); the "
                        f"others are in {res.path}: fix the cause and run the same command again to "
                        "run only those")


COMMANDS = [sweep_cmd]
