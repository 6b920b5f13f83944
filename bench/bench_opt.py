"""Dynamic instruction and cycle counts of the Rz teaching programs at -O0 and -O1.

    .venv/bin/python bench/bench_opt.py      (also run by `make bench`; the table is in docs/rz.md)
"""
from __future__ import annotations

from pathlib import Path

from s2mc.compiler import compile as compile_rz
from s2mc.simulator import run

ROOT = Path(__file__).resolve().parent.parent / "workloads" / "rz"


def main() -> None:
    print("| program | cores | -O0 instructions | -O1 instructions | cut | -O0 cycles | -O1 cycles | cut |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in ("sort", "matmul", "fib", "sum"):
        source = (ROOT / f"{name}.rz").read_text()
        for cores in (1, 4):
            r0, r1 = (run(compile_rz(source, opt=o).program, cores=cores) for o in (0, 1))
            assert r0.output == r1.output
            print(f"| {name}.rz | {cores} | {r0.instructions} | {r1.instructions} | "
                  f"{1 - r1.instructions / r0.instructions:.1%} | {r0.cycles} | {r1.cycles} | "
                  f"{1 - r1.cycles / r0.cycles:.1%} |")


if __name__ == "__main__":
    main()
