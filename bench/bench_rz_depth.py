"""What deep nesting costs the Rz compiler and interpreter (docs/rz.md, "Limits"; compiler/nesting.py).

    .venv/bin/python bench/bench_rz_depth.py      (also run by `make bench`; the table is in docs/rz.md)

Each case runs in a child process: seconds for the front end, -O0, -O1 (each a whole compile) and
the interpreter, and the child's peak memory. The last case nests calls to the limit with the
passes' thread stack cut to 64 KiB, which shows that they take no C stack per level.
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import time

CASES = {
    "5,000 nested parentheses": lambda: "main()\n  x = 1\n  print(" + "(" * 5000 + "x" + " + 1)" * 5000 + ")\n",
    "5,000-branch else-if chain": lambda: ("main()\n  x = 4999\n  if (x == 0) print(0)\n"
                                           + "".join(f"  else if (x == {k}) print({k})\n" for k in range(1, 5000))),
    "10,000-term sum": lambda: "main()\n  x = 1\n  print(" + " + ".join(["x"] * 10_000) + ")\n",
    "2,000 nested ifs": lambda: ("main()\n  x = 0\n" + "".join(" " * (i + 2) + "if (x == 0)\n" for i in range(2000))
                                 + " " * 2002 + "x = 1\n  print(x)\n"),
    "2,000 nested whiles": lambda: ("main()\n  x = 0\n" + "".join(" " * (i + 2) + "while (x < 1)\n" for i in range(2000))
                                    + " " * 2002 + "x = x + 1\n  print(x)\n"),
    "99,990 nested calls, 64 KiB C stack": lambda: ("f(v)\n  return v\nmain()\n  print(" + "f(" * 99_990 + "1"
                                                    + ")" * 99_990 + ")\n"),
}


def child(name: str) -> None:
    from s2mc.compiler import compile as compile_rz, frontend, interpret_source, nesting
    if "64 KiB" in name:
        nesting.STACK_BYTES = 64 << 10
    source = CASES[name]()
    times, outputs = [], set()
    for step in (lambda: frontend(source), lambda: compile_rz(source, opt=0),
                 lambda: compile_rz(source, opt=1), lambda: outputs.add(interpret_source(source))):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"size": len(source), "times": times, "peak": peak}))


def main() -> None:
    print("| program | source | front end | -O0 | -O1 | interpreter | peak memory |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in CASES:
        out = subprocess.run([sys.executable, __file__, name], capture_output=True, text=True, check=True)
        r = json.loads(out.stdout)
        t = " | ".join(f"{s:.2f} s" for s in r["times"])
        print(f"| {name} | {r['size'] / 1024:.0f} KiB | {t} | {r['peak']:.0f} MiB |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in CASES:
        child(sys.argv[1])          # one case, in the child process main() starts
    elif len(sys.argv) > 1:
        sys.exit(f"usage: {sys.argv[0]} (no arguments): prints the table of docs/rz.md; "
                 f"{sys.argv[1]!r} is not one of its cases")
    else:
        main()
