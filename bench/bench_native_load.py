"""Native timings on the machine as it is, then with every CPU busy: what s2mc.common.measure's
median, spread and disturbed flag make of load (docs/benchmarks.md, "Native timings under load").

    .venv/bin/python bench/bench_native_load.py [--min-seconds 0.2] [--out results/bench_native_load.parquet]

Runs the grid of `s2mc native --threads 1,2 --bytes 16K,16M --vs-openssl` and `s2mc coherence-native
--bench locks --lock ttas --threads 1,2 --acquisitions 50000` twice: first as the machine is, then with one
busy loop per CPU (processes this script starts, and stops when the second pass ends, or on any
error), and prints the two side by side as a Markdown table with the load average of each pass.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

from s2mc.analysis import records
from s2mc.common.measure import figure, spread_text
from s2mc.workloads.native import coherence
from s2mc.workloads.native.grid import NativeGrid, run_grid

DEFAULT_OUT = "results/bench_native_load.parquet"


def busy(n: int) -> list[subprocess.Popen]:
    """n processes that spin until stopped."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait()


def one_pass(name: str, min_seconds: float) -> tuple[dict, list[dict], float]:
    """Both grids once: ({row key: summary}, records rows, load average at the start)."""
    load = os.getloadavg()[0]
    grid = NativeGrid(threads=(1, 2), sizes=(16 << 10, 16 << 20), vs_openssl=True, min_seconds=min_seconds)
    got, rows = {}, []
    summ, r = run_grid(grid, run_id=records.new_run_id(f"native-{name}"), experiment=f"native_{name}")
    rows += r
    for s in summ:
        got[("aes", s["threads"], s["bytes"])] = s
    summ, r = coherence.run_grid(coherence.CoherenceGrid(benches=("locks",), threads=(1, 2), locks=("ttas",),
                                                           acquisitions=50_000),
                                 run_id=records.new_run_id(f"coherence-{name}"), experiment=f"coherence_{name}")
    rows += r
    for s in summ:
        got[("ttas lock", s["threads"], 0)] = s
    return got, rows, load


def cell(s: dict) -> str:
    if "gb_per_s" in s:
        text = (f"{figure(s['gb_per_s'])} GB/s {spread_text(s['spread'])}, OpenSSL "
                f"{figure(s['openssl_gb_per_s'])} {spread_text(s['openssl_spread'])}, ratio {figure(s['ratio'])}x "
                f"{spread_text(s['ratio_spread'])}")
    else:
        text = f"{figure(s['acquisitions_per_second'] / 1e6)} M/s {spread_text(s['spread'])}"
    return text + (f" **DISTURBED** ({s['why']})" if s["disturbed"] else "")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-seconds", type=float, default=0.2)
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    cpus = os.cpu_count() or 1
    quiet, rows_q, load_q = one_pass("as_is", args.min_seconds)
    procs = busy(cpus)
    try:
        loaded, rows_l, load_l = one_pass("loaded", args.min_seconds)
        load_end = os.getloadavg()[0]
    finally:
        stop(procs)
    print(f"{cpus} CPUs. Pass 1, the machine as it is: load average {load_q:.1f} at the start. Pass 2, "
          f"{cpus} busy loops started by this script: load average {load_l:.1f} at the start, {load_end:.1f} "
          "at the end.\n")
    print("| measurement | threads | size | as it is | with every CPU busy |")
    print("|---|---:|---:|---|---|")
    for key in quiet:
        what, t, n = key
        size = "–" if not n else f"{n >> 20} MiB" if n >= 1 << 20 else f"{n >> 10} KiB"
        print(f"| {what} | {t} | {size} | {cell(quiet[key])} | {cell(loaded[key])} |")
    for name, got in (("as it is", quiet), ("busy", loaded)):
        n = sum(1 for s in got.values() if s["disturbed"])
        print(f"\n{name}: {n} of {len(got)} rows disturbed", end="")
    print()
    if args.out == DEFAULT_OUT:
        os.makedirs("results", exist_ok=True)
    path = records.write(records.make_records(rows_q + rows_l), args.out,
                         params={"command": "bench_native_load.py", "min_seconds": args.min_seconds})
    print(f"records: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
