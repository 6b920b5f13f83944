"""Cache coherence on this CPU (run by `make bench`; figures go to docs/benchmarks.md and
docs/caches-lab.md).

The whole `s2mc coherence-native` grid (false sharing with plain and atomic increments, line
ping-pong, TAS / TTAS / ticket locks) on 1..N threads (N = the CPUs this process may use), run
`--rounds` times in a row so a reader sees how much a shared machine moves the figures: each table
gives the median over the rounds and the range.

Records go to results/bench_coherence_native.parquet (tidy schema, with a manifest); Markdown
tables are printed to stdout. Usage: .venv/bin/python bench/bench_coherence_native.py [--quick] [--rounds N]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from s2mc.analysis import records
from s2mc.workloads.native import coherence

DEFAULT_OUT = "results/bench_coherence_native.parquet"


def _spread(values: list[float], fmt: str) -> str:
    """median (min-max) of the rounds' figures."""
    med = statistics.median(values)
    return f"{med:{fmt}} ({min(values):{fmt}}-{max(values):{fmt}})" if len(values) > 1 else f"{med:{fmt}}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Smaller counts (a smoke run).")
    ap.add_argument("--rounds", type=int, default=3, help="Times the whole grid runs (default 3).")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    cpus = coherence.cpus()
    threads = tuple(range(1, len(cpus) + 1))
    benches = coherence.BENCHES if len(cpus) >= 2 else ("false-sharing", "locks")
    scale = 10 if args.quick else 1
    grid = coherence.CoherenceGrid(benches=benches, threads=threads, iterations=2_000_000 // scale,
                                   acquisitions=200_000 // scale, round_trips=20_000 // scale, reps=3)
    load = os.getloadavg()[0]
    print(f"## Cache coherence on this CPU: {coherence.platform_name()}, {len(cpus)} CPUs usable, line "
          f"{coherence.line_bytes()} B, load average {load:.2f} at the start, {args.rounds} rounds\n")
    by: dict[tuple[str, str, int], list[dict]] = {}
    frames, t0 = [], time.time()
    for r in range(args.rounds):
        print(f"  round {r + 1}/{args.rounds}", file=sys.stderr, flush=True)
        summaries, rows = coherence.run_grid(grid, run_id=records.new_run_id("coherence"),
                                             experiment="bench_coherence_native")
        frames.append(records.make_records(rows))
        for s in summaries:
            by.setdefault((s["bench"], s["variant"], s["threads"]), []).append(s)

    def values(bench, variant, t, key):
        return [s[key] for s in by[(bench, variant, t)]]

    print("Each figure is the median of 3 repetitions; the table gives the median (min-max) of those over the "
          "rounds. Concurrency: the threads' CPU time / (threads x wall time); near 1 they really ran at once.\n")
    print("### False sharing: ns per increment\n")
    print("| increment | threads | padded | packed | packed / padded | concurrency (packed) |")
    print("|---|---:|---:|---:|---:|---:|")
    for inc in coherence.INCREMENTS:
        for t in threads:
            print(f"| {inc} | {t} | {_spread(values('false-sharing', f'padded/{inc}', t, 'ns_per_increment'), '.2f')} "
                  f"| {_spread(values('false-sharing', f'packed/{inc}', t, 'ns_per_increment'), '.2f')} "
                  f"| {_spread(values('false-sharing', f'packed-vs-padded/{inc}', t, 'false_sharing_ratio'), '.2f')} "
                  f"| {_spread(values('false-sharing', f'packed/{inc}', t, 'concurrency'), '.2f')} |")
    if "ping-pong" in benches:
        print("\n### Line ping-pong between two CPUs: ns per round trip\n")
        print("| median of batches, median (min-max) over the rounds | best batch, min over the rounds |")
        print("|---:|---:|")
        print(f"| {_spread(values('ping-pong', 'atomic-flag', 2, 'round_trip_ns'), '.1f')} "
              f"| {min(values('ping-pong', 'atomic-flag', 2, 'min_ns')):.1f} |")
    print("\n### Spin locks: million acquisitions per second (all threads); concurrency\n")
    print("| threads | " + " | ".join(coherence.LOCKS) + " | " + " | ".join(f"{k} concurrency" for k in coherence.LOCKS)
          + " |")
    print("|---:|" + "---:|" * 2 * len(coherence.LOCKS))
    for t in threads:
        cells = [_spread([v / 1e6 for v in values("locks", k, t, "acquisitions_per_second")], ".1f")
                 for k in coherence.LOCKS]
        cells += [_spread(values("locks", k, t, "concurrency"), ".2f") for k in coherence.LOCKS]
        print(f"| {t} | " + " | ".join(cells) + " |")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    path = records.write(records.concat(frames), args.out,
                         params=dict(command="bench_coherence_native", rounds=args.rounds, threads=list(threads),
                                     iterations=grid.iterations, acquisitions=grid.acquisitions,
                                     round_trips=grid.round_trips, reps=grid.reps, cpus=cpus,
                                     load_average_start=load))
    print(f"\n({time.time() - t0:.0f} s; load average {os.getloadavg()[0]:.2f} at the end; records: {path})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
