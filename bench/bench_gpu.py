"""`make bench` entry for the CUDA backend: the `s2mc gpu` grid (s2mc.gpu.grid: every kernel and configuration,
keystream / device-resident / host-to-host, 1 MB..1 GB), records to results/gpu.parquet and the
Markdown table of Gbps on stdout. Without a GPU (or without the CUDA build) it says so and exits 0,
so `make bench` still runs everywhere. For a bare GPU box without Python use run_on_gpu.sh."""
from __future__ import annotations

import os
import sys

from s2mc import gpu


def main() -> int:
    st = gpu.status()
    if not st["gpu_present"]:
        print(f"bench_gpu: skipped: {st['reason']}")
        return 0
    from s2mc.analysis import records
    from s2mc.gpu.grid import GpuGrid, markdown_table, run_grid

    grid = GpuGrid(kernels=tuple(gpu.kernels(all_configs=True)), sizes=(1 << 20, 16 << 20, 256 << 20, 1 << 30),
                   measures=("keystream", "device", "host"), streams=(1, 4), reps=5)
    summaries, rows, plat = run_grid(grid, run_id=records.new_run_id("cuda"),
                                     log=lambda m: print(m, file=sys.stderr))
    os.makedirs("results", exist_ok=True)   # the script's own folder (records.write creates none)
    records.write(records.make_records(rows), "results/gpu.parquet",
                  params={"command": "bench/bench_gpu.py", "gpu": plat, "runs": summaries})
    print(f"GPU: {plat['gpu']}; AES-128, Gbps (1e9 bit/s)\n")
    print(markdown_table(summaries))
    return 0


if __name__ == "__main__":
    sys.exit(main())
