"""Why one cipher scales worse than another from 1 to 2 threads (figures go to docs/benchmarks.md,
"Thread scaling: AES against Camellia").

For each (cipher, implementation), in-place CTR timed in C++ (native.bench_ctr, best of repeats), the
1 -> 2 thread change measured three ways, in interleaved rounds so that every way sees the same
background load:
  split     one buffer of --bytes split in two contiguous halves (OpenMP): what `s2mc native` measures
  multi     each thread its own buffer of --bytes (no output line shared between the threads)
  memory    split, on a buffer 16x larger (far more memory traffic per unit of work, same code)
and two numbers for each:
  wall      the speedup of the best run (wall clock): what a user sees, and what other processes on a
            shared host take away (a thread that waits for a CPU)
  CPU/byte  the CPU time one byte costs with 2 threads against 1 (getrusage of this process, all runs;
            OpenMP threads wait passively, so waiting costs no CPU). It does not count time spent
            waiting for a CPU, so it is the hardware's answer even on a loaded host: 1.00 = the second
            thread does its half as cheaply as one thread does all; above 1 = the threads slow each
            other down (memory bandwidth, false sharing, a shared physical core).
If multi's CPU/byte were lower than split's, false sharing of the halves would be the cause; if memory's
were higher, memory bandwidth.

With --run-length: the split 1 -> 2 thread wall speedup of runs of different lengths (AES 16 and 256 MiB,
Camellia 1 and 16 MiB; best of 20 repeats, interleaved rounds): on a shared host a longer run is more
often caught by another process taking one of the CPUs.

Usage: .venv/bin/python bench/bench_cipher_scaling.py [--bytes 4M] [--rounds 3] [--run-length]
"""
from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "passive")   # before the native library loads libgomp

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

from s2mc.common.units import human_size, parse_size  # noqa: E402
from s2mc.workloads import native  # noqa: E402

PAIRS = (("aes", "auto"), ("camellia", "auto"), ("camellia", "sptable"))


def measure(cipher: str, impl: str, nbytes: int, threads: int, multi: bool = False) -> tuple[float, float]:
    """(GB/s of the best run, CPU seconds per byte over every run) of one bench_ctr call."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    r = native.bench_ctr(nbytes, cipher=cipher, impl=impl, threads=threads, multi=multi, min_reps=5,
                         min_seconds=0.3)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r["total_bytes"] / r["seconds_best"] / 1e9, cpu / (r["total_bytes"] * (r["reps"] + 1))


def run_length(rounds: int) -> None:
    """The wall speedup against the length of one run (see the module's docstring)."""
    got: dict = {}
    cases = (("aes", "auto", 16 << 20), ("camellia", "auto", 1 << 20), ("camellia", "auto", 16 << 20),
             ("aes", "auto", 256 << 20))
    loads = []
    for _ in range(rounds):
        loads.append(os.getloadavg()[0])
        for cipher, impl, n in cases:
            one, two = (native.bench_ctr(n, cipher=cipher, impl=impl, threads=t, min_reps=20, min_seconds=0.3)
                        for t in (1, 2))
            got.setdefault((cipher, n), []).append((one["seconds_best"] / two["seconds_best"], one["seconds_best"]))
    print(f"load average {min(loads):.1f}-{max(loads):.1f}; split wall speedup, best / median of {rounds} rounds\n")
    print("| cipher | buffer | 1 -> 2 threads | one 1-thread run |")
    print("|---|---:|---:|---:|")
    for (cipher, n), v in got.items():
        print(f"| {cipher} | {human_size(n)} | {max(x[0] for x in v):.2f} / {statistics.median(x[0] for x in v):.2f} "
              f"| {1e3 * min(x[1] for x in v):.2f} ms |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bytes", default="4M")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--run-length", action="store_true", help="the speedup against the length of one run")
    args = ap.parse_args()
    if args.run_length:
        return run_length(args.rounds)
    n = parse_size(args.bytes)
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs two CPUs")
    got: dict = {}
    loads = []
    for rnd in range(args.rounds):
        loads.append(os.getloadavg()[0])
        for cipher, impl in PAIRS:
            for way, size, multi in (("split", n, False), ("multi", n, True), ("memory", 16 * n, False)):
                g1, c1 = measure(cipher, impl, size, 1)
                g2, c2 = measure(cipher, impl, size, 2, multi)
                got.setdefault((cipher, impl, way, "wall"), []).append(g2 / g1)
                got.setdefault((cipher, impl, way, "cpu"), []).append(c2 / c1)
                if way == "split":
                    got.setdefault((cipher, impl, "one"), []).append(g1)
        print(f"round {rnd + 1}/{args.rounds} done, load average {loads[-1]:.1f}", flush=True)
    print(f"\n{human_size(n)} buffer ({human_size(16 * n)} for memory), {args.rounds} rounds, load average "
          f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs ({native.info().get('cpu', '?')}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). Wall: 1 -> 2 thread speedup, best / median "
          "of the rounds; CPU/byte: 2 threads against 1, median of the rounds.\n")
    print("| cipher (impl) | 1 thread GB/s (best) | split wall | split CPU/byte | multi wall | multi CPU/byte "
          "| memory wall | memory CPU/byte |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for cipher, impl in PAIRS:
        cells = [f"{max(got[(cipher, impl, 'one')]):.2f}"]
        for way in ("split", "multi", "memory"):
            w, c = got[(cipher, impl, way, "wall")], got[(cipher, impl, way, "cpu")]
            cells += [f"{max(w):.2f} / {statistics.median(w):.2f}", f"{statistics.median(c):.2f}"]
        print(f"| {cipher} ({impl}) | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
