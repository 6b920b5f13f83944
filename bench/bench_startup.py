"""How long `s2mc` takes to start (run by `make bench`; figures in docs/benchmarks.md, "CLI start-up").

Side by side in one run, each a fresh process, median of --runs: `s2mc encrypt` of a 16-byte file
(the command loads only its own module), the same process importing every command module first
(what every command paid before commands were loaded lazily), and a bare `python -c pass`.

Usage: .venv/bin/python bench/bench_startup.py [--runs 21]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

KEY = "000102030405060708090a0b0c0d0e0f"
# `s2mc encrypt ...` with every command module imported first: the eager start-up.
EAGER = ("import sys; from s2mc.cli.main import all_commands, main; all_commands(); "
         "sys.argv = ['s2mc'] + sys.argv[1:]; main()")


def _median(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=21)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "in.bin")
        with open(src, "wb") as f:
            f.write(bytes(16))
        enc = ["encrypt", "-q", "--in", src, "--out", os.path.join(d, "out.bin"), "--key", KEY, "--iv", KEY]
        lazy = _median([sys.executable, "-m", "s2mc.cli", *enc], args.runs)
        eager = _median([sys.executable, "-c", EAGER, *enc], args.runs)
        bare = _median([sys.executable, "-c", "pass"], args.runs)
    print(f"\n`s2mc encrypt` of 16 bytes, median of {args.runs} fresh processes, load average "
          f"{os.getloadavg()[0]:.2f}\n")
    print("| start-up | median s |\n|---|---:|")
    print(f"| lazy (each command loads its own module) | {lazy:.3f} |")
    print(f"| eager (every command module imported first) | {eager:.3f} |")
    print(f"| bare python -c pass | {bare:.3f} |")
    print(f"\neager / lazy = {eager / lazy:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
