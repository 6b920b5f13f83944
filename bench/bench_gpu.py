"""`make bench` entry for the CUDA backend: the `s2mc gpu` grid (s2mc.gpu.grid: every kernel and configuration,
keystream / device-resident / host-to-host, 1 MB..1 GB), AES and then Camellia (seed 002's kernel),
records to results/gpu.parquet and results/gpu-camellia.parquet and the Markdown tables of Gbps on stdout. Without a GPU (or without the CUDA build) it says so and exits 0,
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

    os.makedirs("results", exist_ok=True)   # the script's own folder (records.write creates none)
    for cipher, out in (("aes", "results/gpu.parquet"), ("camellia", "results/gpu-camellia.parquet")):
        grid = GpuGrid(kernels=tuple(gpu.kernels(all_configs=True, cipher=cipher)),
                       sizes=(1 << 20, 16 << 20, 256 << 20, 1 << 30),
                       measures=("keystream", "device", "host"), streams=(1, 4), reps=5, cipher=cipher)
        summaries, rows, plat = run_grid(grid, run_id=records.new_run_id("cuda"),
                                         log=lambda m: print(m, file=sys.stderr))
        records.write(records.make_records(rows), out,
                      params={"command": "bench/bench_gpu.py", "gpu": plat, "runs": summaries})
        print(f"GPU: {plat['gpu']}; {'AES' if cipher == 'aes' else 'Camellia'}-128, Gbps (1e9 bit/s)\n")
        print(markdown_table(summaries) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
