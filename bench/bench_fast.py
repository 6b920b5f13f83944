"""Benchmark: the fast engine's simulated MIPS (instructions per host second) on a memory-heavy
multicore loop, at 1, 4 and 8 cores (target: >= 150 MIPS at 8 cores, one host core); beside it the
same loop declaring each core's slice as its stack region (`.stacks`), so that every access goes
through the stack check (and none faults): what the check costs; and the same loop with MESI
caches of the default shape (docs/timing-model.md, "Caches and coherence"; target: above a third
of the cacheless speed), measured in the same run so that the ratios hold under any machine load.

Then store buffers (docs/timing-model.md, "Store buffers"; target: tso at least half the sc speed
at 8 cores): the loop and workloads/rz/matmul.rz (N scaled up to MATMUL_N, so that one run takes
long enough to time), without caches and with MESI, at 1, 4 and 8 cores, each run under sc, tso
and pso in turn, `--rounds` times; it prints the median MIPS of each and the median of each
round's tso/sc and pso/sc ratios.

Run: make bench   (or .venv/bin/python bench/bench_fast.py [--rounds 7] [--buffers-only])
"""
from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble
from s2mc.simulator import run

MATMUL = Path(__file__).resolve().parent.parent / "workloads" / "rz" / "matmul.rz"
MATMUL_N = 48   # 16 in the file: 62 thousand instructions, too short a run to time

# Each core walks its own slice of an array: load, combine, store back, with some ALU work between,
# so about one instruction in three uses the bus: the cores contend for it all the time.
LOOP = """
.code 0
  cid r1
  mul r2 r1 #1024        ; this core's slice
  mov r3 #{iters}
:loop
  and r4 r3 #1023
  add r4 r4 r2
  ld r5 @0 r4
  xor r5 r5 r3
  shl r6 r5 #3
  add r5 r5 r6
  st r5 @0 r4
  sub r3 r3 #1
  jt r3 loop
  trap r0 #0
"""


def measure(cores: int, iters: int, repeat: int = 5, stacks: bool = False,
            cache: str = "none") -> tuple[float, int, float]:
    prog = assemble((".stacks 0 1024 64\n" if stacks else "") + LOOP.format(iters=iters))
    best = float("inf")
    for _ in range(repeat):
        # CPU time of this process: one host core, and less disturbed by other load on the machine.
        t0 = time.process_time()
        res = run(prog, cores=cores, mem_words=1 << 16, max_cycles=1 << 40, cache=cache)
        best = min(best, time.process_time() - t0)
    return res.instructions / best / 1e6, res.instructions, res.bus_utilisation


def matmul(n: int = MATMUL_N):
    """workloads/rz/matmul.rz with n x n matrices."""
    source = MATMUL.read_text()
    scaled = source.replace("N = 16", f"N = {n}").replace("[256]", f"[{n * n}]")
    if scaled.count(f"[{n * n}]") != 3:
        raise SystemExit(f"{MATMUL}: no longer declares N = 16 and three [256] arrays; update bench_fast.matmul")
    return compile_rz(scaled).program


def buffers(rounds: int) -> None:
    """sc, tso and pso side by side on the loop and matmul: medians of `rounds` rounds."""
    print(f"\nstore buffers: MIPS, median of {rounds} rounds (each runs sc, tso, pso in turn); "
          "ratios: median of the rounds' ratios")
    print(f"{'program':>8} {'cache':>5} {'cores':>5} {'instructions':>13} {'sc':>8} {'tso':>8} {'tso/sc':>7} "
          f"{'pso':>8} {'pso/sc':>7}")
    mm = matmul()
    for name in ("loop", "matmul"):
        for cache in ("none", "mesi"):
            for cores in (1, 4, 8):
                prog = mm if name == "matmul" else assemble(LOOP.format(iters=2_000_000 // cores))
                mips: dict[str, list[float]] = {m: [] for m in ("sc", "tso", "pso")}
                outputs, n = set(), 0
                for _ in range(rounds):
                    for model in mips:
                        t0 = time.process_time()
                        res = run(prog, cores=cores, mem_words=1 << 16, max_cycles=1 << 40, cache=cache,
                                  consistency=model)
                        mips[model].append(res.instructions / (time.process_time() - t0) / 1e6)
                        outputs.add(res.output)
                        n = res.instructions
                assert len(outputs) == 1, f"{name}: the models printed different results"
                med = {m: statistics.median(v) for m, v in mips.items()}
                ratio = {m: statistics.median(a / b for a, b in zip(mips[m], mips["sc"])) for m in ("tso", "pso")}
                print(f"{name:>8} {cache:>5} {cores:>5} {n:>13,} {med['sc']:>8.1f} {med['tso']:>8.1f} "
                      f"{ratio['tso']:>7.2f} {med['pso']:>8.1f} {ratio['pso']:>7.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7, help="rounds of the store-buffer comparison (default 7)")
    ap.add_argument("--buffers-only", action="store_true", help="only the store-buffer comparison")
    args = ap.parse_args()
    if not args.buffers_only:
        print("fast engine, memory-heavy loop (9 instructions, 2 memory accesses per iteration)")
        print(f"{'cores':>5} {'instructions':>14} {'bus util':>9} {'MIPS':>8} {'.stacks':>8} {'ratio':>6} "
              f"{'mesi':>8} {'bus util':>9} {'ratio':>6}")
        for cores in (1, 4, 8):
            mips, n, util = measure(cores, iters=2_000_000 // cores)
            guarded, _, _ = measure(cores, iters=2_000_000 // cores, stacks=True)
            mesi, _, mesi_util = measure(cores, iters=2_000_000 // cores, cache="mesi")
            print(f"{cores:>5} {n:>14,} {util:>9.1%} {mips:>8.1f} {guarded:>8.1f} {guarded / mips:>6.2f} "
                  f"{mesi:>8.1f} {mesi_util:>9.1%} {mesi / mips:>6.2f}")
    buffers(args.rounds)


if __name__ == "__main__":
    main()
