"""Seeds 001, 002 (Figure 10) and 004 measured on this host, as records; s2mc.analysis.seeds_native
reads them beside the papers' tables.

Seed 001 (Tables 1-6): AES-128-ECB encryption of 256 KB-256 MB, sequential against OpenMP threads
(and a GPU), as total time with file I/O and as encryption-only time. Seed 004 (Tables 2-3): CPU
sequential against CPU parallel (and a GPU) from 1 KB to 1 GB, where the parallel run becomes the
faster one at some size (the crossover).

Ours: the native library on this host. Encryption-only = `native.ecb_encrypt` in place on a buffer
in memory, timed around the call by s2mc.common.measure's method (the median of calibrated
samples, with its spread and the disturbed flag in the records; it includes the ~1-2 us of a
Python call, which is what makes the smallest sizes slow). Total = `native.encrypt_file(..., mode="ecb")`, a file
in the temporary folder into another (page-cached; the fast path). Sequential = 1 thread, parallel
= every available CPU. Seed 004's GPU column has ours beside it when an OpenCL device is here
(`measure_seed004_opencl`): seed 004's portable C++ AMP code against our portable OpenCL
kernels, both host to host in segments (seed 004's calibrated size), AES-128-ECB; on this host
that device is PoCL on the CPU, on a GPU machine the GPU.

    from s2mc.experiments import seeds_native
    df = seeds_native.measure()                 # records (experiment seed001_ours / seed004_ours)
    df = seeds_native.measure_all()             # what `s2mc demo` measures: all three seeds, quick forms

Seed 002 (Figure 10): five 128-bit block ciphers on a Core i7-2600K (4 cores, 8
hyper-threads) at 1, 4 and 8 OpenMP threads, in Gbit/s. The figure's bars were not transcribed (the
seed text keeps only SC2000's 7.1 Gbit/s at 8 threads, AES-NI's 44.2 Gbit/s at 4 threads and "4
threads: nearly 4x; 8 threads: +7 to 34 % over 4"). Ours: `native.bench_ctr` (timed in C++, the
median of calibrated samples) on one buffer split over 1, 2, 4 and 8 threads (those beyond the host's CPUs are
oversubscribed) for each (cipher, implementation) of `SEED002_CPU_CIPHERS`: the table-based
AES (the paper's Figure 10 AES was OpenSSL's table code), AES with this CPU's best instructions
(against the paper's AES-NI figure), Camellia with SP tables (seed 002's approach) and Camellia with
this CPU's best (AES-NI S-boxes where it has them).

    python -m s2mc.experiments.seeds_native --out results/seeds_native.parquet [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import pandas as pd

KEY = bytes(range(16))
KB, MB = 1 << 10, 1 << 20
#: Seed 001's sizes (Tables 1-6) and seed 004's (Tables 2-3).
SEED001_SIZES = [256 * KB << i for i in range(11)]                        # 256 KB .. 256 MB
SEED004_SIZES = [KB << i for i in range(19)] + [m * MB for m in (384, 512, 640, 768, 896, 1024)]


def _timing(fn, min_seconds: float, min_reps: int):
    """fn() timed around the Python call by s2mc.common.measure's method (warm-up, samples of at
    least 1 ms, median and spread): a Timing."""
    from s2mc.common.measure import measure

    def sample(loops: int) -> float:
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        return time.perf_counter() - t0
    return measure({"call": sample}, min_reps=min_reps, min_seconds=min_seconds)["call"]


def _threads() -> list[tuple[str, int]]:
    from s2mc.workloads.native.files import available_cpus
    return [("sequential", 1), ("parallel", available_cpus())]


def measure(seed001_sizes=SEED001_SIZES, seed004_sizes=SEED004_SIZES, *, min_seconds: float = 0.05,
            min_reps: int = 3, files: bool = True, run_id: str | None = None) -> pd.DataFrame:
    """Measure both experiments on this host; returns validated records (source native)."""
    from s2mc.analysis import records
    from s2mc.workloads import native

    rid = run_id or records.new_run_id("seeds-native")
    plat = native.info().get("cpu") or ""
    impl = native.best_impl()
    rows: list[dict] = []

    def add(exp: str, variant: str, cores: int, nbytes: int, t) -> None:
        rows.append(dict(run_id=rid, experiment=exp, source="native", platform=plat,
                         workload="aes-128-ecb-enc", variant=variant, engine=impl, cores=cores,
                         bytes=nbytes, metric="seconds", value=t.median, spread=t.spread, disturbed=t.disturbed))

    def ecb_time(nbytes: int, threads: int):
        buf = bytearray(os.urandom(min(nbytes, MB))) * max(1, nbytes // MB) if nbytes >= MB \
            else bytearray(os.urandom(nbytes))
        return _timing(lambda: native.ecb_encrypt(KEY, buf, threads=threads, out=buf), min_seconds, min_reps)

    for name, t in _threads():
        for n in seed004_sizes:
            add("seed004_ours", name, t, n, ecb_time(n, t))
        for n in seed001_sizes:
            add("seed001_ours", f"{'openmp' if t > 1 else 'sequential'}/encryption-only", t, n, ecb_time(n, t))
    if files:
        with tempfile.TemporaryDirectory(prefix="s2mc-seed001-") as d:
            for n in seed001_sizes:
                src = os.path.join(d, "in.bin")
                with open(src, "wb") as f:
                    f.write(os.urandom(n))
                for name, t in _threads():
                    dst = os.path.join(d, "out.bin")
                    tm = _timing(lambda: native.encrypt_file(src, dst, KEY, None, mode="ecb", threads=t),
                                 min_seconds, min_reps)
                    add("seed001_ours", f"{'openmp' if t > 1 else 'sequential'}/total", t, n, tm)
    return records.make_records(rows)


#: Seed 002 Figure 10's thread counts, plus this host's 2 (its real core count).
SEED002_THREADS = (1, 2, 4, 8)
#: (cipher, implementation) pairs measured for Figure 10; another cipher of the native library joins
#: by adding its pair here.
SEED002_CPU_CIPHERS: list[tuple[str, str]] = [("aes", "ttable"), ("aes", "auto"), ("camellia", "sptable"),
                                              ("camellia", "auto"),
                                              ("sc2000", "auto"), ("hierocrypt3", "auto")]


def measure_seed002(nbytes: int = 16 * MB, threads=SEED002_THREADS, pairs=None, *, min_seconds: float = 0.1,
                    min_reps: int = 3, run_id: str | None = None) -> pd.DataFrame:
    """Seed 002 Figure 10 on this host: records of experiment `seed002_cpu` (workload
    <cipher>-128-ctr-enc, variant contiguous, engine the implementation, cores = threads)."""
    from s2mc.analysis import records
    from s2mc.workloads import native

    rid = run_id or records.new_run_id("seed002-cpu")
    plat = native.info().get("cpu") or ""
    rows: list[dict] = []
    from s2mc.workloads.native import cryptrec
    for cipher, impl in (pairs or SEED002_CPU_CIPHERS):
        other = cipher in cryptrec.CIPHERS  # SC2000, Hierocrypt-3: their own library
        engine = cryptrec.resolve_impl(cipher, impl) if other else native.resolve_impl(impl, cipher)
        for t in threads:
            if other:
                r = cryptrec.bench_ctr(cipher, nbytes, key_bits=128, threads=t, min_reps=min_reps,
                                       min_seconds=min_seconds, impl=engine)
            else:
                r = native.bench_ctr(nbytes, cipher=cipher, impl=engine, threads=t, min_reps=min_reps,
                                     min_seconds=min_seconds)
            base = dict(run_id=rid, experiment="seed002_cpu", source="native", platform=plat,
                        workload=f"{cipher}-128-ctr-enc", variant="contiguous", engine=engine, cores=t,
                        bytes=nbytes, cipher=cipher, spread=r["spread"], disturbed=r["disturbed"])
            rows.append(dict(base, metric="seconds", value=r["seconds_median"]))
            rows.append(dict(base, metric="bytes_per_second", value=nbytes / r["seconds_median"]))
    return records.make_records(rows)


def measure_seed002_quick(**kw) -> pd.DataFrame:
    """The demo's form: 256 KB buffers (in cache: the code, not the memory), two runs each (under a
    second in all, even with the table ciphers on a loaded host)."""
    return measure_seed002(256 * KB, min_seconds=0, min_reps=2, **kw)


def measure_seed004_opencl(sizes=None, *, min_seconds: float = 0.05, min_reps: int = 3,
                           run_id: str | None = None) -> pd.DataFrame:
    """Seed 004's GPU column on this host's OpenCL device (s2mc.gpu.opencl): AES-128-ECB host to
    host, in segments of seed 004's calibrated size (stored per device; calibrated when there is
    none), the median of calibrated samples. Sizes default to seed 004's up to 64 MB on a CPU device (PoCL does
    ~0.1 GB/s) and all of them on a GPU. Records: experiment seed004_ours, source and engine opencl,
    variant opencl. Empty when there is no OpenCL device."""
    from s2mc.analysis import records
    from s2mc.gpu import opencl

    st = opencl.status()
    if not st["devices"]:
        return records.make_records([])
    dev = st["devices"][st["device"]]
    if sizes is None:
        sizes = [n for n in SEED004_SIZES if dev["type"] == "GPU" or n <= 64 * MB]
    rid = run_id or records.new_run_id("seeds-opencl")
    seg = opencl.resolve_segment("auto", cipher="aes", op="ecb-enc", key_bits=128)
    rows = []
    for n in sizes:
        buf = bytearray(n)
        tm = _timing(lambda: opencl.crypt(buf, KEY, op="ecb-enc", segment=seg), min_seconds, min_reps)
        rows.append(dict(run_id=rid, experiment="seed004_ours", source="opencl", platform=dev["name"],
                         workload="aes-128-ecb-enc", variant="opencl", engine="opencl", cores=1, bytes=n,
                         metric="seconds", value=tm.median, spread=tm.spread, disturbed=tm.disturbed))
    return records.make_records(rows)


def measure_quick(**kw) -> pd.DataFrame:
    """The demo's form: sizes up to 16 MB, shorter timing (a few seconds in all)."""
    return measure([n for n in SEED001_SIZES if n <= 16 * MB], [n for n in SEED004_SIZES if n <= 16 * MB],
                   min_seconds=0.01, **kw)


def measure_all(full: bool = False) -> pd.DataFrame:
    """The native-seeds step of `s2mc demo` and of `python -m s2mc.experiments.seeds_native`: seeds
    001 and 004 on this host's CPUs, seed 002's Figure 10 (ciphers x threads) and seed 004's GPU
    column beside our OpenCL kernels; the quick forms (a few seconds; OpenCL up to 4 MB, PoCL here)
    unless `full`."""
    from s2mc.analysis import records
    if full:
        return records.concat([measure(), measure_seed002(), measure_seed004_opencl()])
    return records.concat([measure_quick(), measure_seed002_quick(),
                           measure_seed004_opencl([KB, 64 * KB, MB, 4 * MB], min_seconds=0.01)])


def main(argv: list[str] | None = None) -> int:
    from s2mc.analysis import records, seeds
    from s2mc.analysis.seeds_native import (seed001_beside, seed002_beside, seed002_sentences, seed004_beside,
                                            summary_sentences)
    ap = argparse.ArgumentParser(prog="python -m s2mc.experiments.seeds_native", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/seeds_native.parquet")
    ap.add_argument("--quick", action="store_true", help="the demo's quick forms (sizes up to 16 MB)")
    args = ap.parse_args(argv)
    df = measure_all(full=not args.quick)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    records.write(df, args.out, params=dict(command="seeds_native", quick=args.quick))
    ref = seeds.load_reference()
    pd.set_option("display.width", 200)
    from s2mc.analysis.records import environment
    from s2mc.analysis.seeds_native import host_phrase
    env = environment()
    host = host_phrase(env.get("host_cpu_count"), env.get("host_cpu"))
    for s in summary_sentences(df, ref, host):
        print(s)
    print(seed004_beside(df, ref).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if (df["variant"] == "sequential/total").any():
        print(seed001_beside(df, ref, "total").to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(seed001_beside(df, ref, "encryption-only").to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    for s in seed002_sentences(df, ref, host, env.get("host_cpu_count")):
        print(s)
    print(seed002_beside(df, ref, env.get("host_cpu_count")).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"records: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
