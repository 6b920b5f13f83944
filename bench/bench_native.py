"""Native CPU AES benchmarks (run by `make bench`; figures go to docs/benchmarks.md).

1. AES-128-CTR, ours (best implementation) against OpenSSL EVP in the same run, 1 thread and all
   threads, on 16 KB and 64 MB buffers: GB/s, ratio, and 1 -> N thread scaling.
2. The seed 000 experiment: coarse-grain against extended blocks of 512 B-4 KB, 1 and 2 threads,
   4/16/32 MB, with the seeds' T-table and with the best implementation.
3. T-table cycles per byte (time-stamp counter ticks / byte, 1 thread, 1 MB).

Records go to results/bench_native.parquet (tidy schema, with a manifest). Markdown tables are
printed to stdout. Usage: .venv/bin/python bench/bench_native.py [--quick] [--out PATH]
"""
from __future__ import annotations

import argparse
import os
import sys
import time

from s2mc.analysis import records
from s2mc.common.units import human_size as _human
from s2mc.workloads import native
from s2mc.workloads.native.grid import NativeGrid, format_summary, run_grid

MB = 1 << 20


def _log(s: dict) -> None:
    print("  " + format_summary(s), file=sys.stderr, flush=True)


def _measure(experiment: str, **grid):
    """Run one NativeGrid; returns (summaries, records frame)."""
    summaries, rows = run_grid(NativeGrid(**grid), run_id=records.new_run_id("native"),
                               experiment=experiment, log=_log)
    return summaries, records.make_records(rows)


DEFAULT_OUT = "results/bench_native.parquet"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="Shorter timings (for a smoke run).")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    min_s = 0.05 if args.quick else 1.0
    reps = 3 if args.quick else 5
    best = native.best_impl()
    all_t = native.max_threads()
    threads = sorted({1, 2, all_t}) if all_t >= 2 else [1]
    info = native.info()
    print(f"## Native CPU AES: {info['cpu']}, {all_t} OpenMP threads, {info['openssl']}, "
          f"best implementation '{best}'\n")
    frames = []

    # 1. ours vs OpenSSL ------------------------------------------------------------------------
    t0 = time.time()
    print("### AES-128-CTR, ours vs OpenSSL EVP (same run, in place, best of repeated runs)\n")
    for multi, title in ((True, "every thread its own buffer (like `openssl speed -multi N`), aggregate GB/s"),
                         (False, "one buffer split into contiguous per-thread chunks")):
        summ, df = _measure("native-vs-openssl", threads=tuple(threads), sizes=(16 << 10, 64 * MB),
                            impls=(best,), vs_openssl=True, min_seconds=min_s, min_reps=reps, multi=multi)
        frames.append(df)
        print(f"{title}:\n")
        print("| buffer | threads | ours (%s) GB/s | OpenSSL GB/s | ratio | ours core-cycles/B (TSC) |" % best)
        print("|---|---|---|---|---|---|")
        for s in sorted(summ, key=lambda s: (s["bytes"], s["threads"])):
            print(f"| {_human(s['bytes'])} | {s['threads']} | {s['gb_per_s']:.2f} | {s['openssl_gb_per_s']:.2f} | "
                  f"{s['ratio']:.2f}x | {s['cycles_per_byte']:.3f} |")
        if len(threads) > 1:
            print("\nScaling 1 -> N threads (throughput ratio):\n")
            print("| buffer | threads | ours | OpenSSL |")
            print("|---|---|---|---|")
            for n in (16 << 10, 64 * MB):
                one = next(s for s in summ if s["bytes"] == n and s["threads"] == 1)
                for s in summ:
                    if s["bytes"] == n and s["threads"] > 1:
                        print(f"| {_human(n)} | {s['threads']} | {s['gb_per_s'] / one['gb_per_s']:.2f}x | "
                              f"{s['openssl_gb_per_s'] / one['openssl_gb_per_s']:.2f}x |")
        print()
    print(f"({time.time() - t0:.0f} s)\n")

    # 2. seed 000: coarse vs extended -------------------------------------------------------------
    t0 = time.time()
    seed_threads = [1, 2] if all_t >= 2 else [1]
    sizes = [4 * MB, 16 * MB, 32 * MB]
    for impl in dict.fromkeys(["ttable", best]):
        summ, df = _measure("seed000-extended-block", threads=tuple(seed_threads), sizes=tuple(sizes),
                            impls=(impl,), strategies=("coarse", "extended"),
                            block_bytes=native.SEED_BLOCK_BYTES, min_seconds=min_s / 2,
                            min_reps=max(2, reps // 2))
        frames.append(df)
        print(f"### Seed 000 (Table 1 / Fig. 10): run time in ms, implementation '{impl}'\n")
        variants = ["coarse"] + [f"extended/{b}" for b in native.SEED_BLOCK_BYTES]
        print("| MB | threads | " + " | ".join(variants) + " | best extended / coarse |")
        print("|---|---|" + "---|" * len(variants) + "---|")
        for n in sizes:
            for t in seed_threads:
                row = {}
                for s in summ:
                    if s["bytes"] == n and s["threads"] == t:
                        key = s["strategy"] + (f"/{s['block_bytes']}" if s.get("block_bytes") else "")
                        row[key] = s["seconds"]
                best_ext = min(row[v] for v in variants[1:])
                print(f"| {n // MB} | {t} | " + " | ".join(f"{row[v] * 1e3:.2f}" for v in variants)
                      + f" | {row['coarse'] / best_ext:.2f}x |")
        print()
    print(f"({time.time() - t0:.0f} s)\n")

    # 3. T-table cycles per byte -------------------------------------------------------------------
    r = native.bench_ctr(1 * MB, impl="ttable", threads=1, min_reps=reps, min_seconds=min_s)
    cpb = r["tsc_cycles_median"] / MB
    ghz = r["tsc_cycles_median"] / r["seconds_median"] / 1e9
    print("### T-table AES-128-CTR, 1 thread, 1 MiB\n")
    print(f"{cpb:.2f} cycles/byte (time-stamp counter at {ghz:.2f} GHz), "
          f"{MB / r['seconds_median'] / 1e9 * 1e3:.0f} MB/s (median, spread {r['spread']:.1%})\n")
    run_id = records.new_run_id("native-ttable")
    frames.append(records.make_records([
        dict(run_id=run_id, experiment="ttable-cpb", source="native", platform=info["cpu"],
             workload="aes-128-ctr", variant="contiguous", engine="ttable", cores=1, bytes=MB,
             metric=m, value=v, spread=r["spread"], disturbed=r["disturbed"])
        for m, v in (("cycles_per_byte", cpb), ("seconds", r["seconds_median"]),
                     ("bytes_per_second", MB / r["seconds_median"]))]))

    df = records.concat(frames)
    if args.out == DEFAULT_OUT:
        os.makedirs("results", exist_ok=True)   # the script's own folder (records.write creates none)
    path = records.write(df, args.out, params={"command": "bench_native.py", "quick": args.quick,
                                               "native": info})
    print(f"records: {path} ({len(df)} rows)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
