"""Benchmark: what a sweep costs per configuration, local against two Dask workers (`make bench`).

    .venv/bin/python bench/bench_sweep.py [--quick]

A 500-configuration AES sweep of tiny simulator runs (16-80 bytes, 1-16 cores, L = 1-5, two
arbitrations, both styles: a few milliseconds each) through s2mc.experiments.sweep, three ways:
  local                    one process, one configuration after the other
  dask, 2 workers (cold)   `--executor dask --workers 2`: starting the cluster included
  dask, 2 workers (warm)   a cluster already running and warmed up (`--scheduler ADDRESS`)
For each: wall seconds, the seconds the configurations themselves took (summed, measured where they
ran: simulating, checking against cryptography, building the records), the overhead per
configuration = (wall x processes - configuration seconds) / configurations (storing each part,
scheduling, moving results, and any wait for a CPU), the CPU time of the process running the sweep
per configuration (a local cluster's scheduler included) and, for local and the warm cluster, the
CPU time of every process per configuration: CPU times are what other load on the host disturbs
least, and warm minus local is what Dask costs per task. The records of the three are checked
equal (apart from host timings and run ids). --quick: 100 configurations (16 bytes only).
Figures go in docs/benchmarks.md.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from s2mc.analysis import records
from s2mc.experiments import registry, sweep
from s2mc.workloads.cipher_sim.grid import AesGrid

GRID = AesGrid(cores=(1, 2, 4, 8, 16), sizes=(16, 32, 48, 64, 80), mem_latencies=(1, 2, 3, 4, 5),
               arbitrations=("fifo", "fixed"), styles=("bytes", "ttable"))


def _cycles(path: Path):
    """The records without host timings and run ids, in a stable order."""
    df = records.read(path)
    df = df[~df["metric"].isin(("sim_seconds", "sim_mips"))].drop(columns="run_id")
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def main(argv: list[str]) -> int:
    grid = AesGrid(**{**GRID.__dict__, "sizes": GRID.sizes[:1]}) if "--quick" in argv else GRID
    exp = registry.Experiment("bench_sweep", "sweep overhead", "sim", (grid,))
    n = len(sweep.tasks(exp))
    print(f"{n} configurations (cores x sizes x L x arbitration x style), host with "
          f"{os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}")
    from distributed import Client, LocalCluster
    rows = []

    def measure(name, procs, *args, client=None, **kw):
        """One sweep: its outcome, the CPU seconds of this process and (warm) of the workers."""
        cpu, before = time.process_time(), client.run(time.process_time) if client else {}
        out = sweep.run(exp, *args, **kw)
        workers = sum(client.run(time.process_time)[w] - c for w, c in before.items()) if client else None
        rows.append((name, procs, out, time.process_time() - cpu, workers))

    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        measure("local", 1, t / "local.parquet")
        measure("dask, 2 workers (cold)", 2, t / "cold.parquet", executor="dask", workers=2)
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
                Client(cluster) as client:
            address = cluster.scheduler_address
            warm = registry.Experiment("bench_warmup", "w", "sim", (AesGrid(cores=(1, 2), sizes=(16,), styles=GRID.styles),))
            sweep.run(warm, t / "warmup.parquet", executor="dask", scheduler=address)
            measure("dask, 2 workers (warm)", 2, t / "warm.parquet", executor="dask", scheduler=address, client=client)
        same = all(_cycles(t / f).equals(_cycles(t / "local.parquet")) for f in ("cold.parquet", "warm.parquet"))
    print(f"\n{'executor':<24}{'wall s':>7}{'configs s':>10}{'wall/config':>12}{'overhead':>10}"
          f"{'driver CPU':>11}{'all CPU':>9}   (per configuration: ms)")
    for name, procs, o, cpu, workers in rows:
        if o.failed:
            print(f"{name}: {len(o.failed)} configurations failed, e.g. {o.failed[0][1]}")
            return 1
        overhead = (o.seconds * procs - o.task_seconds) / o.ran * 1000
        total = cpu if procs == 1 else cpu + workers if workers is not None else None
        print(f"{name:<24}{o.seconds:>7.2f}{o.task_seconds:>10.2f}{o.seconds / o.ran * 1000:>12.2f}"
              f"{overhead:>10.2f}{cpu / o.ran * 1000:>11.2f}"
              + (f"{total / o.ran * 1000:>9.2f}" if total is not None else f"{'-':>9}"))
    print(f"\nrecords equal (apart from host timings and run ids): {same}; "
          f"load average after: {os.getloadavg()[0]:.2f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
