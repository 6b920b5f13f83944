"""Side-by-side (A/B) comparison of fast-engine builds on bench_fast.py's loop: each build's `_fast`
module is loaded in turn in a fresh process, so that the builds alternate under the same machine
load; the best of each is printed. Copy a build's module aside before rebuilding to compare.

Run: .venv/bin/python bench/ab_fast.py BEFORE/_fast.cpython-*.so AFTER/_fast.cpython-*.so [--rounds 7]
     [--cache mesi] [--cores 1,4,8,64] [--interconnect mesh]

Each module runs the loop plain, and also with a stack declaration (docs/timing-model.md, "Stack
regions") when its binding takes one; with --cache, both with caches of that protocol and the
default shape; with --interconnect ring or mesh, on the networked engine with directory coherence
and caches (--cache, msi unless given). Not part of `make bench` (it needs two builds).
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fast import LOOP  # noqa: E402

from s2mc.isa import assemble  # noqa: E402

CORES = (1, 4, 8)
STACKS = (0, 1024, 64)   # each core's 1024-word slice is its region: every access checked, none faults


def one(module: str, cores: int, declared: bool, cache: str = "none", interconnect: str = "bus",
        repeat: int = 3) -> float | None:
    """Best MIPS of `repeat` runs of the loop on this module, or None if it cannot declare stacks."""
    spec = importlib.util.spec_from_file_location("_fast", module)
    fast = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fast)
    prog = assemble(LOOP.format(iters=2_000_000 // cores))
    code = [w & 0xFFFFFFFF for w in prog.code_image]
    best, n = float("inf"), 0
    for _ in range(repeat):
        try:
            if interconnect != "bus":
                engine = fast.NetworkedEngine(code, [], prog.entry, cores, 2, 1 << 40, 1 << 16,
                                              *(STACKS if declared else (0, 0, 0)), "msi" if cache == "none" else cache,
                                              64, 2, 4, 1, interconnect, 1, 1, 4)
            else:
                engine = fast.Engine(code, [], prog.entry, cores, 2, "fifo", 1 << 40, 1 << 16,
                                     *(STACKS if declared else ()), **({} if cache == "none" else {"cache": cache}))
        except TypeError:      # a build from before .stacks
            return None
        t0 = time.process_time()
        raw = engine.run()
        best = min(best, time.process_time() - t0)
        n = sum(c["instructions"] for c in raw["cores"])
    return n / best / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("modules", nargs="*")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--cache", default="none", help="a cache protocol (default: none)")
    ap.add_argument("--cores", default=",".join(map(str, CORES)), help="core counts (default: 1,4,8)")
    ap.add_argument("--interconnect", default="bus", help="bus (default), ring or mesh")
    ap.add_argument("--one", nargs=3, metavar=("MODULE", "CORES", "DECLARED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        mips = one(args.one[0], int(args.one[1]), args.one[2] == "1", args.cache, args.interconnect)
        print("-" if mips is None else f"{mips:.1f}")
        return
    variants = [(m, d) for m in args.modules for d in (False, True)]
    for cores in map(int, args.cores.split(",")):
        best: dict[tuple[str, bool], float] = {}
        for _ in range(args.rounds):
            for m, d in variants:
                out = subprocess.run([sys.executable, __file__, "--one", m, str(cores), str(int(d)), "--cache", args.cache,
                                      "--interconnect", args.interconnect],
                                     capture_output=True, text=True, check=True).stdout.strip()
                if out != "-":
                    best[(m, d)] = max(best.get((m, d), 0.0), float(out))
        cells = [f"{Path(m).parent.name}{' .stacks' if d else ''} {v:.1f}" for (m, d), v in best.items()]
        print(f"{cores} cores: " + " | ".join(cells))


if __name__ == "__main__":
    main()
