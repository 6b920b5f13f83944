"""Benchmark: the systemc engine's simulated MIPS beside the fast engine's, on the same programs,
in one run (target for systemc: >= 5 MIPS, with the fast/systemc ratio reported).

Programs: the fast engine's memory-heavy loop (2 bus accesses in 9 instructions, bus saturated from
4 cores) and the compiled Rz teaching program fib.rz (-O1, about 39%
of instructions use the bus). Times are wall-clock of Machine.run(), best of 3; for the systemc
engine that includes starting the child process and exchanging files.

Run: make bench   (or .venv/bin/python bench/bench_systemc.py); `--consistency tso|pso` runs both
engines with store buffers (docs/timing-model.md, "Store buffers").
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble
from s2mc.simulator import Machine, systemc_engine
from s2mc.simulator.params import PARAMS

from bench_fast import LOOP  # the same memory-heavy loop (bench/ is on sys.path as the script's folder)


def measure(prog, engine: str, cores: int, consistency: str, repeat: int = 3):
    best, res = float("inf"), None
    for _ in range(repeat):
        m = Machine(prog, cores=cores, mem_words=1 << 16, max_cycles=1 << 40, engine=engine, consistency=consistency)
        t0 = time.perf_counter()
        res = m.run()
        best = min(best, time.perf_counter() - t0)
    return res.instructions / best / 1e6, res


def programs():
    yield "loop", {c: assemble(LOOP.format(iters=2_000_000 // c)) for c in (1, 4, 8)}
    src = Path(__file__).resolve().parent.parent / "workloads" / "rz" / "fib.rz"
    prog = compile_rz(src.read_text(), opt=1, filename=str(src)).program
    yield "fib.rz", {c: prog for c in (1, 4, 8)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--consistency", choices=PARAMS["consistency"].choices, default=PARAMS["consistency"].default)
    args = ap.parse_args()
    if not systemc_engine.available():
        print("systemc engine not built: skipped (install libsystemc-dev and rerun make setup)")
        return 0
    print(f"systemc engine vs fast engine, same program and configuration (L=2, fifo, consistency {args.consistency})")
    print(f"{'program':>8} {'cores':>5} {'instructions':>13} {'bus util':>9} {'fast MIPS':>10} {'systemc MIPS':>13} {'ratio':>7}")
    for name, progs in programs():
        for cores, prog in progs.items():
            fast, rf = measure(prog, "fast", cores, args.consistency)
            sysc, rs = measure(prog, "systemc", cores, args.consistency)
            assert rf.cores == rs.cores, "engines disagree"
            print(f"{name:>8} {cores:>5} {rs.instructions:>13,} {rs.bus_utilisation:>9.1%} {fast:>10.1f} "
                  f"{sysc:>13.1f} {fast / sysc:>6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
