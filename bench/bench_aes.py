"""Benchmark: the AES scaling sweep to 64 simulated cores and 64 KB (part of `make bench`).

    .venv/bin/python bench/bench_aes.py [--quick]

Runs AES-128-ECB encryption, both styles, on 1..64 cores and 1 KB..64 KB through the runner (every
result checked against cryptography) and prints, per style and size, cycles, speedup and bus
utilisation, then the host cost: wall and CPU seconds of the whole sweep and simulated MIPS per
core count (CPU time of Machine.run, best of the runs). Figures go in docs/benchmarks.md.
"""
from __future__ import annotations

import random
import sys
import time

from s2mc.workloads.cipher_sim import run_aes

CORES = (1, 2, 4, 8, 16, 32, 64)
SIZES = (1024, 4096, 16384, 65536)


def main(argv: list[str]) -> int:
    sizes = SIZES[:2] if "--quick" in argv else SIZES
    rng = random.Random(2014)
    data, key = rng.randbytes(max(sizes)), rng.randbytes(16)
    wall0, cpu0 = time.perf_counter(), time.process_time()
    mips: dict[tuple[str, int], list[float]] = {}
    print(f"{'style':<7}{'bytes':>7}{'cores':>6}{'cycles':>12}{'speedup':>9}{'bus util':>10}"
          f"{'instr/block':>13}")
    for style in ("bytes", "ttable"):
        for n in sizes:
            base = None
            for c in CORES:
                t = time.process_time()
                r = run_aes(data[:n], key, style=style, cores=c)
                cpu = time.process_time() - t
                res = r.result
                base = base or res.cycles
                mips.setdefault((style, c), []).append(res.instructions / max(cpu, 1e-9) / 1e6)
                print(f"{style:<7}{n:>7}{c:>6}{res.cycles:>12}{base / res.cycles:>9.2f}"
                      f"{100 * res.bus_utilisation:>9.1f}%{res.instructions / (n // 16):>13.0f}")
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    print(f"\nsweep: {len(sizes) * len(CORES) * 2} runs, {wall:.1f} s wall, {cpu:.1f} s CPU "
          "(including compiling, filling memory and the cryptography checks)")
    print("simulated MIPS (instructions per CPU second, best over sizes, includes the runner):")
    for style in ("bytes", "ttable"):
        print(f"  {style:<7}" + "  ".join(f"{c}c {max(mips[(style, c)]):.0f}" for c in CORES))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
