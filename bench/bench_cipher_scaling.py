"""Why one cipher scales worse than another from 1 to 2 threads (figures go to docs/benchmarks.md,
"Thread scaling: AES against Camellia").

For each (cipher, implementation), on one buffer of --bytes, best of repeats timed in C++
(native.bench_ctr), the 1 -> 2 thread speedup measured four ways, in interleaved rounds so that every
way sees the same background load:
  split     one buffer split in two contiguous halves (OpenMP): what `s2mc native` measures
  multi     each thread its own buffer (no output chunk shares a cache line with another thread's)
  pinned    two separate processes, one thread each, pinned to CPU 0 and CPU 1, started together: no
            OpenMP at all; their summed throughput against one alone is what the hardware gives
  memory    split on a buffer 16x larger (more memory traffic per unit of work, same code)
If `multi` scaled better than `split`, false sharing of the output halves would be the cause; if
`pinned` scaled like `split`, the cause is in the hardware the two threads share, not in OpenMP's
scheduling; `memory` against `split` shows how much the memory system costs.

Usage: .venv/bin/python bench/bench_cipher_scaling.py [--bytes 16M] [--rounds 5]
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

from s2mc.isa.units import human_size, parse_size
from s2mc.workloads import native

PAIRS = (("aes", "auto"), ("camellia", "auto"), ("camellia", "sptable"))


def gbps(cipher: str, impl: str, nbytes: int, threads: int, multi: bool = False) -> float:
    r = native.bench_ctr(nbytes, cipher=cipher, impl=impl, threads=threads, multi=multi, min_reps=5,
                         min_seconds=0.2)
    return r["total_bytes"] / r["seconds_best"] / 1e9


def _pinned(cpu: int, cipher: str, impl: str, nbytes: int, start, out) -> None:
    os.sched_setaffinity(0, {cpu})
    os.environ["OMP_NUM_THREADS"] = "1"
    start.wait()
    out.put((cpu, gbps(cipher, impl, nbytes, 1)))


def pinned_pair(cipher: str, impl: str, nbytes: int) -> float:
    """Summed GB/s of two one-thread processes on CPUs 0 and 1 at the same time."""
    ctx = mp.get_context("fork")
    start, out = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_pinned, args=(cpu, cipher, impl, nbytes, start, out)) for cpu in (0, 1)]
    for p in procs:
        p.start()
    got = [out.get(timeout=300) for _ in procs]
    for p in procs:
        p.join()
    return sum(v for _, v in got)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", default="16M")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = parse_size(args.bytes)
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs two CPUs")
    scal: dict = {}
    loads = []
    for rnd in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for cipher, impl in PAIRS:
            one = gbps(cipher, impl, n, 1)
            got = {"split": gbps(cipher, impl, n, 2) / one,
                   "multi": gbps(cipher, impl, n, 2, multi=True) / one,
                   "pinned": pinned_pair(cipher, impl, n) / one,
                   "memory": gbps(cipher, impl, 16 * n, 2) / gbps(cipher, impl, 16 * n, 1)}
            for k, v in got.items():
                scal.setdefault((cipher, impl, k), []).append(v)
            scal.setdefault((cipher, impl, "1 thread GB/s"), []).append(one)
        print(f"round {rnd + 1}/{args.rounds} done, load average {loads[-1]:.1f}", flush=True)
    print(f"\n{human_size(n)} buffer ({human_size(16 * n)} for memory), {args.rounds} rounds, "
          f"load average {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs; "
          "1 -> 2 thread speedup, best / median of the rounds:\n")
    print("| cipher (impl) | 1 thread GB/s | split | multi | pinned processes | memory (16x buffer) |")
    print("|---|---:|---:|---:|---:|---:|")
    for cipher, impl in PAIRS:
        cells = []
        for k in ("1 thread GB/s", "split", "multi", "pinned", "memory"):
            v = scal[(cipher, impl, k)]
            cells.append(f"{max(v):.2f} / {statistics.median(v):.2f}")
        print(f"| {cipher} ({impl}) | " + " | ".join(cells) + " |")
    print(f"\n(run at {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {native.info().get('cpu', '?')})")


if __name__ == "__main__":
    main()
