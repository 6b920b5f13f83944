"""Benchmark: the fast engine's 64-core mesh with directory coherence beside its 64-core bus, MIPS
ratio in one run (target: the mesh at >= 0.25 of the bus's MIPS; docs/benchmarks.md), and the
SystemC engine on the same mesh beside the fast engine (its MIPS and the ratio).

Program: the fast engine's memory-heavy loop (bench_fast.LOOP: a load and a store in 9 instructions,
each core in its own 1024-word slice), on 64 cores with MSI caches of the default shape: on the bus
(snooping) and on an 8x8 mesh and a 64-tile ring (directory), and on the mesh with TSO store
buffers (each store drains through the directory while its core runs on). Simulated MIPS =
instructions / CPU seconds of Machine.run() (the SystemC engine's child process included), best of 3.

Run: make bench   (or .venv/bin/python bench/bench_network.py [--iters N])
"""
from __future__ import annotations

import argparse
import resource
import sys

from s2mc.isa import assemble
from s2mc.simulator import Machine, systemc_engine

from bench_fast import LOOP  # bench/ is on sys.path as the script's folder

CORES = 64
TARGET = 0.25


def cpu_seconds() -> float:
    """CPU seconds of this process and of its finished children (the SystemC engine's run)."""
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF,
                                                                          resource.RUSAGE_CHILDREN)))


def measure(prog, repeat: int = 3, **cfg) -> tuple[float, object]:
    best, res = float("inf"), None
    for _ in range(repeat):
        m = Machine(prog, cores=CORES, mem_words=1 << 17, max_cycles=1 << 40, cache="msi", **cfg)
        t0 = cpu_seconds()
        res = m.run()
        best = min(best, cpu_seconds() - t0)
    return res.instructions / best / 1e6, res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=4_000, help="loop iterations per core (default 4000)")
    args = ap.parse_args()
    prog = assemble(LOOP.format(iters=args.iters))
    bus, rb = measure(prog)
    print(f"{CORES} cores, MSI caches, the memory-heavy loop ({args.iters} iterations a core), fast engine")
    print(f"{'machine':>28} {'instructions':>13} {'cycles':>11} {'MIPS':>7} {'vs bus':>7}")
    print(f"{'bus (snoop)':>28} {rb.instructions:>13,} {rb.cycles:>11,} {bus:>7.2f} {1:>7.2f}")
    mesh = {}
    for interconnect, consistency in (("mesh", "sc"), ("ring", "sc"), ("mesh", "tso")):
        net, rn = measure(prog, interconnect=interconnect, coherence="directory", consistency=consistency)
        assert rn.instructions == rb.instructions, "the machines ran different programs"
        name = f"{rn.network['topology']} (directory{', ' + consistency if consistency != 'sc' else ''})"
        print(f"{name:>28} {rn.instructions:>13,} {rn.cycles:>11,} {net:>7.2f} {net / bus:>7.2f}")
        if interconnect == "mesh" and consistency == "sc":
            met = "met" if net / bus >= TARGET else "NOT met"
            print(f"mesh / bus MIPS: {net / bus:.2f} (target >= {TARGET}): {met}")
            mesh = {"mips": net, "result": rn, "name": name}
    if systemc_engine.available():
        compare_systemc(prog, **mesh)
    else:
        print("the SystemC engine is not built: its mesh is not timed")
    return 0


def compare_systemc(prog, mips: float, result, name: str) -> None:
    """The SystemC engine on the same mesh and program, beside the fast engine's figure."""
    sysc, rs = measure(prog, engine="systemc", interconnect="mesh", coherence="directory")
    assert (rs.cycles, rs.network) == (result.cycles, result.network), "the engines disagree on the mesh"
    print(f"\nthe same {name}, by engine")
    print(f"{'engine':>28} {'instructions':>13} {'cycles':>11} {'MIPS':>7} {'vs fast':>7}")
    for engine, m in (("fast", mips), ("systemc", sysc)):
        print(f"{engine:>28} {rs.instructions:>13,} {rs.cycles:>11,} {m:>7.2f} {m / mips:>7.2f}")
    print(f"systemc / fast MIPS on the mesh: {sysc / mips:.2f}")


if __name__ == "__main__":
    sys.exit(main())
