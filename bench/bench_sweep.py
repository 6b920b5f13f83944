"""Benchmark: what a sweep costs per configuration, local against two Dask workers (`make bench`).

    .venv/bin/python bench/bench_sweep.py [--quick]

A 500-configuration AES sweep of tiny simulator runs (16-80 bytes, 1-16 cores, L = 1-5, two
arbitrations, both styles: a few milliseconds each) through s2mc.analysis.sweep, three ways:
  local                    one process, one configuration after the other
  dask, 2 workers (cold)   `--executor dask --workers 2`: starting the cluster included
  dask, 2 workers (warm)   a cluster already running and warmed up (`--scheduler ADDRESS`)
For each: wall seconds, the seconds the configurations themselves took (summed, measured where they
ran) and the overhead per configuration = (wall x processes - configuration seconds) / configurations:
what storing each part, scheduling and moving results cost. The records of the three are checked
equal (apart from host timings and run ids). --quick: 100 configurations (16 bytes only).
Figures go in docs/benchmarks.md.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from s2mc.analysis import experiments, records, sweep
from s2mc.workloads.aes.grid import AesGrid

GRID = AesGrid(cores=(1, 2, 4, 8, 16), sizes=(16, 32, 48, 64, 80), mem_latencies=(1, 2, 3, 4, 5),
               arbitrations=("fifo", "fixed"), styles=("bytes", "ttable"))


def _cycles(path: Path):
    """The records without host timings and run ids, in a stable order."""
    df = records.read(path)
    df = df[~df["metric"].isin(("sim_seconds", "sim_mips"))].drop(columns="run_id")
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def main(argv: list[str]) -> int:
    grid = AesGrid(**{**GRID.__dict__, "sizes": GRID.sizes[:1]}) if "--quick" in argv else GRID
    exp = experiments.Experiment("bench_sweep", "sweep overhead", "sim", (grid,))
    n = len(sweep.tasks(exp))
    print(f"{n} configurations (cores x sizes x L x arbitration x style), host with "
          f"{os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}")
    from distributed import LocalCluster
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        out = sweep.run(exp, t / "local.parquet")
        rows.append(("local", 1, out))
        out = sweep.run(exp, t / "cold.parquet", executor="dask", workers=2)
        rows.append(("dask, 2 workers (cold)", 2, out))
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
            warm = experiments.Experiment("bench_warmup", "w", "sim", (AesGrid(cores=(1, 2), sizes=(16,), styles=GRID.styles),))
            sweep.run(warm, t / "warmup.parquet", executor="dask", scheduler=cluster.scheduler_address)
            out = sweep.run(exp, t / "warm.parquet", executor="dask", scheduler=cluster.scheduler_address)
            rows.append(("dask, 2 workers (warm)", 2, out))
        same = all(_cycles(t / f).equals(_cycles(t / "local.parquet")) for f in ("cold.parquet", "warm.parquet"))
    print(f"\n{'executor':<26}{'wall s':>8}{'configs s':>11}{'per config ms':>15}{'overhead ms':>13}")
    for name, procs, o in rows:
        overhead = (o.seconds * procs - o.task_seconds) / o.ran * 1000
        print(f"{name:<26}{o.seconds:>8.2f}{o.task_seconds:>11.2f}{o.seconds / o.ran * 1000:>15.2f}"
              f"{overhead:>13.2f}")
    print(f"\nrecords equal (apart from host timings and run ids): {same}; "
          f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
