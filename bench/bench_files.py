"""File encryption side by side (run by `make bench`; figures go to docs/benchmarks.md, "Files").

One page-cached input file on tmpfs (/dev/shm by default, so the disk is out of the picture), and in
every round, in turn: `cp`, `openssl enc -aes-128-ctr`, `s2mc encrypt` (CTR), `openssl enc
-aes-128-ecb -nopad`, `s2mc encrypt --mode ecb`, each as its own process writing a new file beside
the input (so both sides pay for process start). The previous round's output is deleted before each
command, outside its time: freeing 1 GB of tmpfs pages costs 0.1-0.2 s wherever it lands (in
openssl's open(O_TRUNC), in s2mc's rename over the old file), and with several such files alive
the timings of every command doubled and scattered (0.6-2.4 s for the same s2mc run). The table has
every command's median wall time over the rounds, its spread, its median CPU time (user + system,
less disturbed by other load than the wall time), and the ratios we aim for:
openssl / ours (>= 2 is the target) and ours / cp (<= 1.3). Every output is checked equal to
OpenSSL's. The load average before and after goes with the figures (this host is shared).

Usage: .venv/bin/python bench/bench_files.py [--size 1G] [--rounds 7] [--dir /dev/shm] [--threads N]
       [--out results/bench_files.parquet]
"""
from __future__ import annotations

import argparse
import filecmp
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from s2mc.analysis import records
from s2mc.common.units import human_size, parse_size

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
DEFAULT_OUT = "results/bench_files.parquet"


def _s2mc() -> list[str]:
    exe = os.path.join(os.path.dirname(sys.executable), "s2mc")
    return [exe] if os.path.exists(exe) else [sys.executable, "-m", "s2mc.cli"]


def commands(src: str, d: str, threads: int | None) -> dict[str, list[str]]:
    th = ["--threads", str(threads)] if threads else []
    return {
        "cp": ["cp", src, f"{d}/cp.bin"],
        "openssl-ctr": ["openssl", "enc", "-aes-128-ctr", "-K", KEY, "-iv", IV, "-in", src, "-out", f"{d}/o-ctr.bin"],
        "s2mc-ctr": [*_s2mc(), "encrypt", "-q", "--in", src, "--out", f"{d}/s-ctr.bin", "--key", KEY, "--iv", IV, *th],
        "openssl-ecb": ["openssl", "enc", "-aes-128-ecb", "-nopad", "-K", KEY, "-in", src, "-out", f"{d}/o-ecb.bin"],
        "s2mc-ecb": [*_s2mc(), "encrypt", "-q", "--mode", "ecb", "--in", src, "--out", f"{d}/s-ecb.bin",
                     "--key", KEY, *th],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="1G", help="input size (default 1G)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    ap.add_argument("--threads", type=int, default=None, help="s2mc --threads (default: its own, all CPUs)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args(argv)
    size = parse_size(args.size)
    if size % 16:
        ap.error("--size must be a multiple of 16 (ECB)")
    d = tempfile.mkdtemp(prefix="s2mc-bench-files-", dir=args.dir)
    try:
        src = f"{d}/in.bin"
        with open(src, "wb") as f:   # random data, written once: page-cached from here on
            left = size
            while left:
                n = min(left, 64 << 20)
                f.write(os.urandom(n))
                left -= n
        cmds = commands(src, d, args.threads)
        times: dict[str, list[float]] = {k: [] for k in cmds}
        cpu: dict[str, list[float]] = {k: [] for k in cmds}   # user + system seconds of the process
        load0 = os.getloadavg()
        for r in range(args.rounds):
            for name, cmd in cmds.items():
                out = cmd[cmd.index("--out") + 1] if "--out" in cmd else cmd[-1]   # cp's and openssl's: the last
                if os.path.exists(out):
                    os.unlink(out)
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                times[name].append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            print(f"  round {r + 1}/{args.rounds}: " + ", ".join(f"{k} {v[-1]:.3f}s" for k, v in times.items()),
                  file=sys.stderr, flush=True)
        load1 = os.getloadavg()
        for mode in ("ctr", "ecb"):
            if not filecmp.cmp(f"{d}/o-{mode}.bin", f"{d}/s-{mode}.bin", shallow=False):
                print(f"bench_files: s2mc {mode} output differs from openssl's", file=sys.stderr)
                return 1
    finally:
        shutil.rmtree(d, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n{human_size(size)} page-cached file in {args.dir}, {args.rounds} rounds, {os.cpu_count()} CPUs, "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after\n")
    mcpu = {k: statistics.median(v) for k, v in cpu.items()}
    print("| command | median wall s | min s | max s | GB/s (median) | median CPU s (user+sys) |")
    print("|---|---:|---:|---:|---:|---:|")
    for k, v in times.items():
        print(f"| {k} | {med[k]:.3f} | {min(v):.3f} | {max(v):.3f} | {size / med[k] / 1e9:.2f} | {mcpu[k]:.3f} |")
    print()
    for mode in ("ctr", "ecb"):
        print(f"- {mode.upper()}: openssl / s2mc = {med[f'openssl-{mode}'] / med[f's2mc-{mode}']:.2f}x "
              f"(target >= 2), s2mc / cp = {med[f's2mc-{mode}'] / med['cp']:.2f}x (target <= 1.3); "
              f"CPU seconds: openssl / s2mc = {mcpu[f'openssl-{mode}'] / mcpu[f's2mc-{mode}']:.2f}x, "
              f"s2mc / cp = {mcpu[f's2mc-{mode}'] / mcpu['cp']:.2f}x")
    rid = records.new_run_id("files")
    rows = []
    for k, v in times.items():
        for i, t in enumerate(v):
            rows.append(dict(run_id=rid, experiment="bench_files", source="native", workload=k,
                             variant=f"round-{i}", engine=k.split("-")[0], bytes=size, metric="seconds", value=t))
            rows.append(dict(run_id=rid, experiment="bench_files", source="native", workload=k,
                             variant=f"round-{i}-cpu", engine=k.split("-")[0], bytes=size, metric="seconds",
                             value=cpu[k][i]))
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    records.write(records.make_records(rows), args.out,
                  params=dict(command="bench_files", size=size, rounds=args.rounds, dir=args.dir,
                              threads=args.threads, load_before=load0, load_after=load1,
                              commands={k: " ".join(c) for k, c in cmds.items()}))
    print(f"\nrecords: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
