"""The experiment registry: the standard experiments of s2mc, as data.

Each experiment is a name, a title, the grids that produce it (the libraries' own grid specs:
s2mc.workloads.aes.grid.AesGrid, s2mc.workloads.native.grid.NativeGrid, s2mc.gpu.grid.GpuGrid), a
`quick` form for `s2mc demo` (sized to run in seconds on a 2-core machine) and the seed reference
tables it is compared with. `run` runs one through those libraries and writes its records, the
`experiment` column set to the experiment's name, with a manifest.

    from s2mc.analysis import experiments
    exp = experiments.get("seed003_grid")
    exp.grids_for(quick=True)                          # [AesGrid(cores=(1, 2, 3, 4), ...)]
    path, n = experiments.run("seed003_grid", "results/")   # results/seed003_grid.parquet
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Union

from s2mc.gpu.grid import GpuGrid
from s2mc.isa.errors import S2mcError
from s2mc.workloads.aes.grid import AesGrid
from s2mc.workloads.native.grid import NativeGrid

from .seed003 import SEED003_BYTES

Grid = Union[AesGrid, NativeGrid, GpuGrid]

#: As a NativeGrid's threads: the host's thread counts 1, 2, 4, ... up to its CPUs, resolved when
#: the experiment runs (the registry is the same on every host).
ALL_THREADS: tuple[int, ...] = ()


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


def _seed000(sizes: tuple[int, ...], blocks: tuple[int, ...]) -> tuple[NativeGrid, ...]:
    """Seed 000's comparison: coarse-grain tasks, then extended blocks of each size (T-table)."""
    return (NativeGrid(threads=ALL_THREADS, sizes=sizes, impls=("ttable",), strategies=("coarse",)),
            NativeGrid(threads=ALL_THREADS, sizes=sizes, impls=("ttable",), strategies=("extended",),
                       block_bytes=blocks))


REGISTRY: dict[str, Experiment] = {e.name: e for e in (
    Experiment(
        "seed003_grid", "Seed 003 Tables 3-4: cycles and stalls, 1-4 cores, 32-256 bytes", "sim",
        (AesGrid(cores=(1, 2, 3, 4), sizes=SEED003_BYTES, key_bits=(128,), modes=("ecb",),
                 styles=("bytes",), partitions=("interleaved",)),),
        reference=("seed003_table3", "seed003_table4"),
        description="AES-128-ECB, byte-oriented, interleaved blocks, L = 2, fifo arbitration: the "
                    "configuration of seed 003 §5."),
    Experiment(
        "core_scaling", "Core scaling to 64 simulated cores", "sim",
        (AesGrid(cores=(1, 2, 4, 8, 16, 32, 64), sizes=(1024, 4096, 65536)),),
        quick=(AesGrid(cores=(1, 2, 4, 8, 16, 32, 64), sizes=(1024, 16384), styles=("bytes", "ttable")),),
        description="Where the shared bus saturates; compared with the bus-contention model."),
    Experiment(
        "ttable_scaling", "Core scaling of the T-table AES (fewer, wider accesses)", "sim",
        (AesGrid(cores=(1, 2, 4, 8, 16), sizes=(1024, 4096), styles=("ttable",)),),
        description="The same scaling with four bytes per word: a different compute/access ratio."),
    Experiment(
        "mem_latency_sweep", "Memory-latency sweep (L = 1, 2, 4, 8)", "sim",
        (AesGrid(cores=(1, 2, 4, 8), sizes=(256,), mem_latencies=(1, 2, 4, 8)),),
        description="Longer accesses move the saturation point to fewer cores: (Z + L) / L."),
    Experiment(
        "arbitration_sweep", "Bus arbitration policies (fifo, fixed, round_robin)", "sim",
        (AesGrid(cores=(1, 2, 4, 8), sizes=(256,), arbitrations=("fifo", "fixed", "round_robin")),),
        description="Total cycles barely move; the per-core stall distribution does (fixed "
                    "priority starves high core ids)."),
    Experiment(
        "native_thread_scaling", "Native AES-128-CTR thread scaling on this host", "native",
        (NativeGrid(threads=ALL_THREADS, sizes=(16384, 1 << 20, 16 << 20, 64 << 20)),),
        quick=(NativeGrid(threads=ALL_THREADS, sizes=(65536, 1 << 20, 16 << 20)),),
        reference=("seed001_table2", "seed001_table5", "seed004_table2", "seed004_table3"),
        description="Real shared-memory scaling (OpenMP) beside the simulated bus."),
    Experiment(
        "seed000_block_sizes", "Seed 000 Table 1: coarse-grain vs extended blocks (512 B-4 KB)",
        "native", _seed000((4 << 20, 16 << 20, 32 << 20), (512, 1024, 2048, 4096)),
        quick=_seed000((4 << 20,), (1024,)),
        reference=("seed000_table1", "seed000_text"),
        description="The portable T-table path (the seeds' algorithm), CTR mode."),
    Experiment(
        "gpu_size_sweep", "GPU throughput against data size", "cuda",
        (GpuGrid(sizes=(1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30)),),
        quick=(GpuGrid(sizes=(1 << 20, 1 << 24, 1 << 28)),),
        reference=("seed000_text", "seed001_table2", "seed002_text", "seed004_table2"),
        description="Device-resident and host-to-host throughput; run only when a GPU is present."),
)}

#: What `s2mc demo` runs, in order.
DEMO: tuple[str, ...] = ("seed003_grid", "core_scaling", "mem_latency_sweep", "arbitration_sweep",
                         "native_thread_scaling", "seed000_block_sizes", "gpu_size_sweep")


def get(name: str) -> Experiment:
    try:
        return REGISTRY[name]
    except KeyError:
        raise S2mcError(f"experiments: unknown experiment {name!r} "
                        f"(known: {', '.join(REGISTRY)})") from None


def names() -> list[str]:
    return list(REGISTRY)


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
    from . import records
    if isinstance(grid, AesGrid):
        from s2mc.workloads.aes.grid import run_grid
        _, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("aes"), experiment=experiment,
                           progress=progress)
        return rows, {"grid": "AesGrid", **grid.params()}
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
    from . import records
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
