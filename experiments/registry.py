"""The experiment registry: the standard experiments of s2mc, as data.

Each experiment is a spec file in experiments/studies/ (s2mc.experiments.specs reads them): a name,
a title, the grids that produce it (the libraries' own grid specs:
s2mc.workloads.cipher_sim.grid.AesGrid, s2mc.workloads.native.grid.NativeGrid, s2mc.gpu.grid.GpuGrid), a
`quick` form for `s2mc demo` (sized to run in seconds on a 2-core machine) and the seed reference
tables it is compared with. `run` runs one through those libraries and writes its records, the
`experiment` column set to the experiment's name, with a manifest.

    from s2mc.experiments import registry
    exp = registry.get("seed003_grid")
    exp.grids_for(quick=True)                          # [AesGrid(cores=(1, 2, 3, 4), ...)]
    path, n = registry.run("seed003_grid", "results/")   # results/seed003_grid.parquet
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Union

from s2mc.gpu.grid import GpuGrid
from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_sim.grid import AesGrid
from s2mc.workloads.native.grid import NativeGrid
from s2mc.workloads.program_grid import ProgramGrid

from . import specs
from .specs import ALL_THREADS

Grid = Union[AesGrid, NativeGrid, GpuGrid, ProgramGrid]


def thread_counts(n_cpu: int | None = None) -> tuple[int, ...]:
    """1, 2, 4, ... below n_cpu, then n_cpu itself (default: this host's CPUs)."""
    n = n_cpu or os.cpu_count() or 1
    counts, t = [], 1
    while t < n:
        counts.append(t)
        t *= 2
    counts.append(n)
    return tuple(counts)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str                       # sim | native | cuda: the records' source
    grids: tuple[Grid, ...]           # run one after the other into one records file
    quick: tuple[Grid, ...] = ()      # smaller grids for `s2mc demo` (default: grids)
    reference: tuple[str, ...] = ()   # seed reference experiments it is compared with
    description: str = ""

    def grids_for(self, quick: bool = False, n_cpu: int | None = None) -> list[Grid]:
        """The grids to run (the quick ones when asked and declared), host thread counts resolved."""
        grids = (self.quick or self.grids) if quick else self.grids
        return [dataclasses.replace(g, threads=thread_counts(n_cpu))
                if isinstance(g, NativeGrid) and g.threads == ALL_THREADS else g for g in grids]


def from_spec(spec: specs.Spec) -> Experiment:
    """The experiment a spec file declares."""
    return Experiment(spec.name, spec.title, spec.source, spec.grids, spec.quick, spec.reference,
                      spec.description)


# REGISTRY (name -> Experiment) and DEMO (what `s2mc demo` runs, in order: the specs with a `demo`
# place) are the spec files shipped in experiments/studies/, the one declaration. They are read on
# first use, not at import: checking the files compiles the AES programs, which a Dask worker that
# only runs configurations does not need.
def _registry() -> dict[str, Experiment]:
    if "REGISTRY" not in globals():
        shipped = specs.load_shipped()
        globals()["REGISTRY"] = {s.name: from_spec(s) for s in shipped}
        globals()["DEMO"] = tuple(s.name for s in sorted((s for s in shipped if s.demo), key=lambda s: s.demo))
    return globals()["REGISTRY"]


def __getattr__(name: str):
    if name in ("REGISTRY", "DEMO"):
        _registry()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get(name: str) -> Experiment:
    registry = _registry()
    try:
        return registry[name]
    except KeyError:
        raise S2mcError(f"experiments: unknown experiment {name!r} "
                        f"(known: {', '.join(registry)})") from None


def names() -> list[str]:
    return list(_registry())


def unavailable(source: str) -> str:
    """Why experiments of this source cannot run on this machine ("" when they can): the native
    library built without OpenMP/OpenSSL, or no CUDA build or GPU. The simulator always runs."""
    if source == "native":
        from s2mc.workloads import native
        return "" if native.available() else "the native AES library is not built"
    if source == "cuda":
        from s2mc import gpu
        st = gpu.status()
        return "" if st["gpu_present"] else st["reason"]
    return ""


def _run_grid(grid: Grid, experiment: str, progress: bool) -> tuple[list[dict], dict]:
    """One grid through its library: (records rows, what the manifest says about it)."""
    from s2mc.analysis import records
    if isinstance(grid, AesGrid):
        from s2mc.workloads.cipher_sim.grid import run_grid
        _, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("aes"), experiment=experiment,
                           progress=progress)
        return rows, {"grid": "AesGrid", **grid.params()}
    if isinstance(grid, ProgramGrid):
        from s2mc.workloads.program_grid import run_grid
        _, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("run"), experiment=experiment,
                           progress=progress)
        return rows, {"grid": "ProgramGrid", **grid.params()}
    spec = {"grid": type(grid).__name__, **dataclasses.asdict(grid)}
    if isinstance(grid, NativeGrid):
        from s2mc.workloads import native
        from s2mc.workloads.native.grid import run_grid
        _, rows = run_grid(grid, run_id=records.new_run_id("native"), experiment=experiment,
                           progress=progress)
        return rows, dict(spec, native=native.info())
    from s2mc.gpu.grid import run_grid
    summaries, rows, plat = run_grid(grid, run_id=records.new_run_id("cuda"), experiment=experiment,
                                     progress=progress)
    return rows, dict(spec, gpu=plat, runs=summaries)


def run(experiment: str | Experiment, results_dir: str | os.PathLike, *, quick: bool = False,
        progress: bool = False, n_cpu: int | None = None,
        log: Callable[[str], None] | None = None) -> tuple[Path, int]:
    """Run an experiment (a registry name, or an Experiment) and write its records to
    <results_dir>/<name>.parquet with a manifest; returns (path, number of records).

    Raises S2mcError when its source cannot run here (see `unavailable`) or a run fails.
    """
    from s2mc.analysis import records
    exp = get(experiment) if isinstance(experiment, str) else experiment
    why = unavailable(exp.source)
    if why:
        raise S2mcError(f"{exp.name}: {why}")
    rows, specs = [], []
    for grid in exp.grids_for(quick, n_cpu):
        if log:
            log(f"  {type(grid).__name__}: {_describe(grid)}")
        r, spec = _run_grid(grid, exp.name, progress)
        rows += r
        specs.append(spec)
    df = records.make_records(rows)
    path = records.write(df, Path(results_dir) / f"{exp.name}.parquet",
                         params={"experiment": exp.name, "title": exp.title, "quick": quick,
                                 "reference": list(exp.reference), "grids": specs})
    return path, len(df)


def _describe(grid: Grid) -> str:
    """The fields of a grid that differ from its defaults, for progress lines."""
    default = type(grid)()
    return ", ".join(f"{f.name}={_short(getattr(grid, f.name))}" for f in dataclasses.fields(grid)
                     if getattr(grid, f.name) != getattr(default, f.name)) or "defaults"


def _short(value) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
