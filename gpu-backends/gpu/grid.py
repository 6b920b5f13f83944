"""The CUDA benchmark grid: kernel x size x measure (x stream count for host-to-host), returned as
summaries and records rows (docs/records.md), and its Markdown table of Gbps.

    from s2mc.gpu.grid import GpuGrid, run_grid, markdown_table
    summaries, rows, platform = run_grid(GpuGrid(sizes=(1 << 20,)), run_id="cuda-1")
    print(markdown_table(summaries))

`s2mc gpu`, `s2mc demo` (through s2mc.experiments.registry) and bench/bench_gpu.py all run this.
The rows are plain dicts with the records' columns (this package does not import s2mc.analysis);
the caller validates them with `records.make_records(rows)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from s2mc.common.units import human_size

#: What each measure times (the `variant` column says it after the kernel name).
MEASURE_LABEL = {
    "keystream": "keystream",        # keystream only: no plaintext read, no ciphertext written
    "device": "device-resident",     # plaintext read from and ciphertext written to GPU memory
    "host": "host",                  # host to host: pinned buffers, H2D + kernel + D2H
}

#: A device-resident run needs input and output in GPU memory; sizes above this share of it are skipped.
DEVICE_MEMORY_SHARE = 0.85


@dataclass(frozen=True)
class GpuGrid:
    """One grid of CUDA measurements (every field that is a tuple is swept; the stream counts only
    for the host measure). The defaults are those of `s2mc gpu`."""
    kernels: tuple[str, ...] = ("coarse", "extended", "optimised")   # AES; Camellia: s2mc.gpu.CAMELLIA_KERNELS
    sizes: tuple[int, ...] = (1 << 20, 16 << 20, 256 << 20, 1 << 30)
    measures: tuple[str, ...] = ("keystream", "device", "host")
    key_bits: int = 128
    op: str = "ctr"                  # what the device and host measures run (keystream is CTR)
    streams: tuple[int, ...] = (1, 4)
    chunk_bytes: int = 0             # host measure: bytes per chunk (0 = automatic)
    ext_bytes: int = 4096            # extended kernel: bytes per thread
    threads: int = 256               # coarse/extended kernels: threads per CTA
    reps: int = 5                    # timed repetitions; the median is recorded
    cipher: str = "aes"              # aes | camellia (records workload camellia-<bits>-...)
    warmup: int = 1                  # untimed runs before the timed ones
    min_seconds: float = 0.0         # more repetitions until they add up to this (gpu.bench)

    def configs(self) -> list[tuple[str, str, int, int]]:
        """(kernel, measure, bytes, streams) of every measurement, in run order (streams 0 for the
        measures that use none)."""
        return [(kernel, measure, n, s)
                for kernel in self.kernels for measure in self.measures for n in self.sizes
                for s in (self.streams if measure == "host" else (0,))]


def variant_of(kernel: str, measure: str, streams: int) -> str:
    """The records `variant` of one measurement: kernel/what was timed."""
    if measure == "host":
        how = f"host-overlap-s{streams}" if streams > 1 else "host-serial"
        return f"{kernel}/{how}"
    return f"{kernel}/{MEASURE_LABEL[measure]}"


def markdown_table(summaries: list[dict]) -> str:
    """Gbps of every (kernel, measure) row and size column, in Markdown."""
    sizes = sorted({s["bytes"] for s in summaries})
    rows: dict[tuple[str, str], dict[int, float]] = {}
    for s in summaries:
        rows.setdefault((s["kernel"], s["what"]), {})[s["bytes"]] = s["gbps"]
    head = "| kernel | measure | " + " | ".join(human_size(n) + "B" for n in sizes) + " |"
    sep = "|---|---|" + "---:|" * len(sizes)
    lines = [head, sep]
    for (kernel, what), vals in rows.items():
        cells = [f"{vals[n]:.1f}" if n in vals else "–" for n in sizes]
        lines.append(f"| {kernel} | {what} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_grid(grid: GpuGrid, *, run_id: str, experiment: str = "cuda_aes", progress: bool = False,
             log: Callable[[str], None] | None = None) -> tuple[list[dict], list[dict], dict]:
    """Measure the grid; returns (summaries, records rows, platform info). `log` gets one line per
    measurement (and per skipped one). Needs a GPU: S2mcError with one line otherwise."""
    from s2mc import gpu  # through the package, so that its functions can be replaced in tests

    plat = gpu.platform_info()
    mem = int(plat["device"]["global_mem_bytes"])
    workload = f"{grid.cipher}-{grid.key_bits}-{grid.op}"
    configs = grid.configs()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc gpu", unit="run", leave=False)
    rows, summaries = [], []
    try:
        for kernel, measure, n, s in configs:
            if measure == "device" and 2 * n > mem * DEVICE_MEMORY_SHARE:
                if log:
                    log(f"skipping {kernel} device-resident {human_size(n)}B: needs 2x that in GPU memory")
                if bar:
                    bar.update(1)
                continue
            res = gpu.bench(kernel, measure, key_bits=grid.key_bits, nbytes=n, reps=grid.reps,
                            op=grid.op, ext_bytes=grid.ext_bytes, threads=grid.threads,
                            streams=max(s, 1), chunk_bytes=grid.chunk_bytes, cipher=grid.cipher,
                            warmup=grid.warmup, min_seconds=grid.min_seconds)
            secs = res["seconds"]
            variant = variant_of(res["kernel"], measure, res["streams"])
            base = dict(run_id=run_id, experiment=experiment, source="cuda", platform=plat["gpu"],
                        workload=workload, variant=variant, engine="cuda", cores=1, core=-1,
                        bytes=res["bytes"], cipher=grid.cipher)
            metric = "seconds" if measure == "host" else "kernel_seconds"
            rows.append(dict(base, metric=metric, value=secs))
            rows.append(dict(base, metric="bytes_per_second", value=res["bytes"] / secs))
            summaries.append(dict(res, variant=variant, what=variant.split("/", 1)[1],
                                  kernel=res["kernel"], gbps=res["bytes"] * 8 / secs / 1e9,
                                  best_gbps=res["bytes"] * 8 / res["best_seconds"] / 1e9))
            if bar:
                bar.update(1)
            if log:
                log(f"{variant:40s} {human_size(res['bytes']):>5s}B  {summaries[-1]['gbps']:9.1f} Gbps "
                    f"(grid {res['grid']} x {res['threads']})")
    finally:
        if bar:
            bar.close()
    return summaries, rows, plat
