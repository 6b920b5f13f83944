"""`make bench` entry for the OpenCL backend: the portable kernels on this host's OpenCL
device (PoCL on the CPU here) beside our native CPU code, side by side in one run, CTR of a 16 MiB
buffer, AES-128 and Camellia-128.

Rows: OpenCL device-resident (the kernel alone, profiling events), OpenCL host-segmented (copy in,
kernel, copy back per segment of seed 004's calibrated size), native table code (ttable / sptable,
the same algorithm as the kernels) and the native best (vaes / AES-NI for AES) on 1 thread and on
every CPU. Rounds alternate between the rows and each cell keeps its best (the host is shared), and
the ratio native / OpenCL is printed. Without an OpenCL device it says so and exits 0.

    .venv/bin/python bench/bench_opencl.py [--bytes 16M] [--rounds 3]
"""
from __future__ import annotations

import argparse
import sys

from s2mc.gpu import opencl
from s2mc.common.units import human_size, parse_size
from s2mc.workloads import native
from s2mc.workloads.native.files import available_cpus


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", default="16M")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    n = parse_size(args.bytes)
    st = opencl.status()
    if not st["devices"]:
        print(f"bench_opencl: skipped: {st['reason']}")
        return 0
    dev = st["devices"][st["device"]]
    cpus = available_cpus()
    table_impl = {"aes": "ttable", "camellia": "sptable"}
    best: dict[tuple[str, str], float] = {}   # (cipher, row) -> best seconds

    def keep(key, secs):
        best[key] = min(best.get(key, float("inf")), secs)

    segs = {c: opencl.resolve_segment("auto", cipher=c, op="ctr", key_bits=128) for c in ("aes", "camellia")}
    for _ in range(args.rounds):
        for cipher in ("aes", "camellia"):
            r = opencl.bench(cipher, "device", nbytes=n, reps=3)
            keep((cipher, "OpenCL device-resident (kernel only)"), r["best_seconds"])
            r = opencl.bench(cipher, "host", nbytes=n, reps=3, segment=segs[cipher])
            keep((cipher, f"OpenCL host-segmented ({human_size(segs[cipher])}B segments)"), r["best_seconds"])
            impls = [table_impl[cipher]]
            best_native = native.best_impl(cipher)
            if best_native not in impls:
                impls.append(best_native)
            for impl in impls:
                for t in sorted({1, cpus}):
                    r = native.bench_ctr(n, impl=impl, threads=t, cipher=cipher, min_reps=3, min_seconds=0.1)
                    keep((cipher, f"native {impl}, {t} thread{'s' if t > 1 else ''}"), r["seconds_best"])
    print(f"OpenCL device: {dev['name']} [{dev['platform']}], {dev['type']}, {dev['compute_units']} compute units; "
          f"{cpus} CPUs; CTR-128 on {human_size(n)}B, best of {args.rounds} rounds\n")
    print("| cipher | row | GB/s | native / OpenCL device-resident |")
    print("|---|---|---:|---:|")
    for cipher in ("aes", "camellia"):
        ref = best[(cipher, "OpenCL device-resident (kernel only)")]
        for (c, row), secs in best.items():
            if c == cipher:
                print(f"| {cipher} | {row} | {n / secs / 1e9:.3f} | {ref / secs:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
