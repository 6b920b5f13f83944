"""Benchmark: the fast engine's simulated MIPS (instructions per host second) on a memory-heavy
multicore loop, at 1, 4 and 8 cores (target: >= 150 MIPS at 8 cores, one host core); beside it the
same loop declaring each core's slice as its stack region (`.stacks`), so that every access goes
through the stack check (and none faults): what the check costs; and the same loop with MESI
caches of the default shape (docs/timing-model.md, "Caches and coherence"; target: above a third
of the cacheless speed); and the same loop with TSO store buffers (docs/timing-model.md, "Store
buffers"; target: at least half the sc speed at 8 cores), measured in the same run so that the
ratios hold under any machine load.

Run: make bench   (or .venv/bin/python bench/bench_fast.py)
"""
from __future__ import annotations

import time

from s2mc.isa import assemble
from s2mc.simulator import run

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
            cache: str = "none", consistency: str = "sc") -> tuple[float, int, float]:
    prog = assemble((".stacks 0 1024 64\n" if stacks else "") + LOOP.format(iters=iters))
    best = float("inf")
    for _ in range(repeat):
        # CPU time of this process: one host core, and less disturbed by other load on the machine.
        t0 = time.process_time()
        res = run(prog, cores=cores, mem_words=1 << 16, max_cycles=1 << 40, cache=cache, consistency=consistency)
        best = min(best, time.process_time() - t0)
    return res.instructions / best / 1e6, res.instructions, res.bus_utilisation


def main() -> None:
    print("fast engine, memory-heavy loop (9 instructions, 2 memory accesses per iteration)")
    print(f"{'cores':>5} {'instructions':>14} {'bus util':>9} {'MIPS':>8} {'.stacks':>8} {'ratio':>6} "
          f"{'mesi':>8} {'bus util':>9} {'ratio':>6} {'tso':>8} {'ratio':>6}")
    for cores in (1, 4, 8):
        mips, n, util = measure(cores, iters=2_000_000 // cores)
        guarded, _, _ = measure(cores, iters=2_000_000 // cores, stacks=True)
        mesi, _, mesi_util = measure(cores, iters=2_000_000 // cores, cache="mesi")
        tso, _, _ = measure(cores, iters=2_000_000 // cores, consistency="tso")
        print(f"{cores:>5} {n:>14,} {util:>9.1%} {mips:>8.1f} {guarded:>8.1f} {guarded / mips:>6.2f} "
              f"{mesi:>8.1f} {mesi_util:>9.1%} {mesi / mips:>6.2f} {tso:>8.1f} {tso / mips:>6.2f}")


if __name__ == "__main__":
    main()
