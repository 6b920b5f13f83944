"""Seeds 001, 002 (Figure 10) and 004 measured on this host, beside the papers' tables (issues 15, 16).

Seed 001 (Tables 1-6): AES-128-ECB encryption of 256 KB-256 MB, sequential against OpenMP threads
(and a GPU), as total time with file I/O and as encryption-only time. Seed 004 (Tables 2-3): CPU
sequential against CPU parallel (and a GPU) from 1 KB to 1 GB, where the parallel run becomes the
faster one at some size (the crossover).

Ours: the native library on this host. Encryption-only = `native.ecb_encrypt` in place on a buffer
in memory, timed around the call (best of repeats, as the shared host's other load disturbs the
median; it includes the ~1-2 us of a Python call,
which is what makes the smallest sizes slow). Total = `native.encrypt_file(..., mode="ecb")`, a file
in the temporary folder into another (page-cached; the fast path). Sequential = 1 thread, parallel
= every available CPU. Seed 004's GPU column has ours beside it when an OpenCL device is here
(issue 16, `measure_seed004_opencl`): seed 004's portable C++ AMP code against our portable OpenCL
kernels, both host to host in segments (seed 004's calibrated size), AES-128-ECB; on this host
that device is PoCL on the CPU, on a GPU machine the GPU.

    from s2mc.analysis import seeds_native
    df = seeds_native.measure()                 # records (experiment seed001_ours / seed004_ours)
    seeds_native.seed004_beside(df, ref)        # a table: size, paper and ours, ratios
    seeds_native.crossover(table_rows)          # the smallest size from which parallel stays faster

Seed 002 (Figure 10, issue 16): five 128-bit block ciphers on a Core i7-2600K (4 cores, 8
hyper-threads) at 1, 4 and 8 OpenMP threads, in Gbit/s. The figure's bars were not transcribed (the
seed text keeps only SC2000's 7.1 Gbit/s at 8 threads, AES-NI's 44.2 Gbit/s at 4 threads and "4
threads: nearly 4x; 8 threads: +7 to 34 % over 4"). Ours: `native.bench_ctr` (timed in C++, the
best of repeats) on one buffer split over 1, 2, 4 and 8 threads (those beyond the host's CPUs are
oversubscribed) for each (cipher, implementation) of `SEED002_CPU_CIPHERS`: the table-based
AES (the paper's Figure 10 AES was OpenSSL's table code), AES with this CPU's best instructions
(against the paper's AES-NI figure), Camellia with SP tables (seed 002's approach) and Camellia with
this CPU's best (AES-NI S-boxes where it has them).

    python -m s2mc.analysis.seeds_native --out results/seeds_native.parquet [--quick]
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

def host_phrase(cpu_count: int | None = None, cpu: str | None = None) -> str:
    """'this host's 2 CPUs (AMD EPYC 7B13)': the run's own machine, from its manifest (records.environment()
    when measuring; the results' manifests in the report), never a fixed description."""
    n = f"{cpu_count} CPU{'s' if cpu_count != 1 else ''}" if cpu_count else "CPUs"
    model = f" ({cpu})" if cpu and cpu not in ("unknown", "?") else ""
    return f"this host's {n}{model}"


def seed001_what_differs(host: str) -> str:
    return ("What differs: seed 001 ran a T-table AES on a 2010 laptop (Core i5 M 450, 2 cores) and a 2009 "
            "desktop (Core i7 960, 4 cores), reading and writing files on a disk; ours runs the native "
            f"library's best AES (AES-NI/VAES where the CPU has them) on {host} with page-cached files, so "
            "the ratio is mostly the hardware generation and the AES instructions, not the program structure.")


def seed004_what_differs(host: str) -> str:
    return ("What differs: seed 004 timed a table-based AES-128-ECB in C++ (sequential, and parallel with "
            "C++ AMP on the CPU) on a Core i7 960 (system 1) and a Core i5-4200M (system 2); ours is the "
            f"native library's best AES with OpenMP on {host}, timed around a Python call, so our small "
            "sizes are bounded by call and fork/join overhead and our large ones by memory bandwidth; on a "
            "host shared with other work a second thread can wait a scheduler slice (up to ~12 ms) for a "
            "CPU, which moves the crossover.")


def _best_seconds(fn, min_seconds: float, min_reps: int) -> float:
    """The best of repeated runs: on a shared host the median mostly measures the other load (a
    second thread that waits a scheduler tick, 4-12 ms, for a CPU); the best is the code."""
    fn()   # warm-up: page faults, thread pool
    times: list[float] = []
    total = 0.0
    while len(times) < min_reps or total < min_seconds:
        t0 = time.perf_counter()
        fn()
        dt = time.perf_counter() - t0
        times.append(dt)
        total += dt
        if len(times) >= 100_000:
            break
    return min(times)


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

    def add(exp: str, variant: str, cores: int, nbytes: int, secs: float) -> None:
        rows.append(dict(run_id=rid, experiment=exp, source="native", platform=plat,
                         workload="aes-128-ecb-enc", variant=variant, engine=impl, cores=cores,
                         bytes=nbytes, metric="seconds", value=secs))

    def ecb_time(nbytes: int, threads: int) -> float:
        buf = bytearray(os.urandom(min(nbytes, MB))) * max(1, nbytes // MB) if nbytes >= MB \
            else bytearray(os.urandom(nbytes))
        return _best_seconds(lambda: native.ecb_encrypt(KEY, buf, threads=threads, out=buf),
                               min_seconds, min_reps)

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
                    secs = _best_seconds(
                        lambda: native.encrypt_file(src, dst, KEY, None, mode="ecb", threads=t),
                        min_seconds, min_reps)
                    add("seed001_ours", f"{'openmp' if t > 1 else 'sequential'}/total", t, n, secs)
    return records.make_records(rows)


#: Seed 002 Figure 10's thread counts, plus this host's 2 (its real core count).
SEED002_THREADS = (1, 2, 4, 8)
#: (cipher, implementation) pairs measured for Figure 10; another cipher of the native library joins
#: by adding its pair here.
SEED002_CPU_CIPHERS: list[tuple[str, str]] = [("aes", "ttable"), ("aes", "auto"), ("camellia", "sptable"),
                                              ("camellia", "auto"),
                                              ("sc2000", "auto"), ("hierocrypt3", "auto")]
def seed002_what_differs(host: str, cpu_count: int | None, threads) -> str:
    over = [t for t in sorted(set(int(t) for t in threads)) if cpu_count and t > cpu_count]
    over_text = (f", so {' and '.join(map(str, over))} threads are oversubscribed" if over else "")
    return ("What differs: seed 002 ran each cipher on a Core i7-2600K (4 cores, 8 hyper-threads, 3.4 GHz, "
            f"2011), in an unstated mode, and quotes Figure 10's bars only in words; ours is CTR on {host}"
            f"{over_text}, and the AES line with AES instructions (VAES/AES-NI) is compared with the paper's "
            "separate AES-NI figure.")


#: Seed 002's ciphers not measured as the paper did (docs/native.md, "Seed 002's other ciphers").
SEED002_NOT_BUILT = (
    "CIPHERUNICORN-A is not built here (no official test vector could be found to check an "
    "implementation against), so the paper's CIPHERUNICORN-A results stay reference only; the paper "
    "gives them only as bars (Figures 10, 13), so they have no rows.")


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
                        bytes=nbytes, cipher=cipher)
            rows.append(dict(base, metric="seconds", value=r["seconds_best"]))
            rows.append(dict(base, metric="bytes_per_second", value=nbytes / r["seconds_best"]))
    return records.make_records(rows)


def measure_seed002_quick(**kw) -> pd.DataFrame:
    """The demo's form: 256 KB buffers (in cache: the code, not the memory), two runs each (under a
    second in all, even with the table ciphers on a loaded host)."""
    return measure_seed002(256 * KB, min_seconds=0, min_reps=2, **kw)


def seed002_beside(ours: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """One row per (cipher, implementation): our Gbit/s at each thread count, the speedup of 4 over 1
    thread and the gain of 8 over 4 threads, and the paper's figure where the seed text gives one
    (SC2000 at 8 threads; AES-NI at 4 threads, beside our AES with AES instructions) with paper/ours."""
    sel = ours[(ours["experiment"] == "seed002_cpu") & (ours["metric"] == "bytes_per_second")]
    if sel.empty:
        return pd.DataFrame()
    paper = ref[(ref["experiment"] == "seed002_text") & (ref["engine"].isin(["openmp", "openssl"]))]
    paper_by = {}
    for _, r in paper.iterrows():
        c = str(r["workload"]).split("-")[0]
        kind = "instructions" if r["variant"] == "aesni" else "tables"
        paper_by[(c, kind)] = (int(r["cores"]), float(r["value"]))
    rows = []
    for (wl, engine), g in sel.groupby(["workload", "engine"], sort=False):
        cipher = str(wl).split("-")[0]
        gbps = (g.groupby("cores")["value"].max() * 8 / 1e9).to_dict()
        row = {"cipher": cipher, "impl": engine}
        for t in sorted(gbps):
            row[f"{t} thr Gbit/s"] = gbps[t]
        row["4 vs 1 thr"] = _ratio(gbps.get(4), gbps.get(1))
        row["8 vs 4 thr"] = _ratio(gbps.get(8), gbps.get(4))
        kind = "tables" if engine in ("ttable", "sptable") or cipher not in ("aes",) else "instructions"
        p = paper_by.get((cipher, kind))
        row["paper Gbit/s"] = f"{p[1]:g} ({p[0]} thr)" if p else None
        row["paper/ours"] = _ratio(p[1], gbps.get(p[0])) if p else None
        rows.append(row)
    return pd.DataFrame(rows)


def seed002_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None,
                      cpu_count: int | None = None) -> list[str]:
    """What Figure 10 on this host shows; `host`: host_phrase() of the machine that measured."""
    t = seed002_beside(ours, ref)
    if t.empty:
        return []
    out = []
    for _, r in t.iterrows():
        gains = []
        if r.get("4 vs 1 thr") is not None and pd.notna(r.get("4 vs 1 thr")):
            gains.append(f"4 threads {r['4 vs 1 thr']:.2f}x one thread")
        if r.get("8 vs 4 thr") is not None and pd.notna(r.get("8 vs 4 thr")):
            gains.append(f"8 threads {100 * (r['8 vs 4 thr'] - 1):+.0f} % over 4")
        best = max(v for k, v in r.items() if k.endswith("Gbit/s") and k[0].isdigit() and pd.notna(v))
        line = f"Seed 002 Figure 10, {r['cipher']} ({r['impl']}): best {best:.2f} Gbit/s on this host"
        line += f" ({'; '.join(gains)})" if gains else ""
        if r.get("paper/ours") is not None and pd.notna(r.get("paper/ours")):
            line += f"; the paper's {r['paper Gbit/s']} is {r['paper/ours']:.2f}x ours"
        out.append(line + ".")
    out.append("The paper: 4 threads on 4 cores nearly 4x one thread; 8 threads (hyper-threading) 7 to 34 % "
               "over 4. " + seed002_what_differs(host or "this host", cpu_count,
                                                 ours.loc[ours["experiment"] == "seed002_cpu", "cores"]))
    out.append(SEED002_NOT_BUILT)
    return out


def measure_seed004_opencl(sizes=None, *, min_seconds: float = 0.05, min_reps: int = 3,
                           run_id: str | None = None) -> pd.DataFrame:
    """Seed 004's GPU column on this host's OpenCL device (s2mc.gpu.opencl): AES-128-ECB host to
    host, in segments of seed 004's calibrated size (stored per device; calibrated when there is
    none), best of repeats. Sizes default to seed 004's up to 64 MB on a CPU device (PoCL does
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
        secs = _best_seconds(lambda: opencl.crypt(buf, KEY, op="ecb-enc", segment=seg), min_seconds, min_reps)
        rows.append(dict(run_id=rid, experiment="seed004_ours", source="opencl", platform=dev["name"],
                         workload="aes-128-ecb-enc", variant="opencl", engine="opencl", cores=1, bytes=n,
                         metric="seconds", value=secs))
    return records.make_records(rows)


def measure_quick(**kw) -> pd.DataFrame:
    """The demo's form: sizes up to 16 MB, shorter timing (a few seconds in all)."""
    return measure([n for n in SEED001_SIZES if n <= 16 * MB], [n for n in SEED004_SIZES if n <= 16 * MB],
                   min_seconds=0.01, **kw)


def crossover(sizes: list[int], sequential: list[float], parallel: list[float]) -> int | None:
    """The smallest size from which the parallel time is below the sequential one at every larger
    size too; None when parallel never stays ahead."""
    best = None
    for n, s, p in sorted(zip(sizes, sequential, parallel), reverse=True):
        if p < s:
            best = n
        else:
            break
    return best


def _times(df: pd.DataFrame, exp: str, variant: str) -> dict[int, float]:
    sel = df[(df["experiment"] == exp) & (df["variant"] == variant) & (df["metric"] == "seconds")]
    return sel.groupby("bytes")["value"].median().to_dict()


def seed004_beside(ours: pd.DataFrame, ref: pd.DataFrame, table: str = "seed004_table2") -> pd.DataFrame:
    """Rows: size; columns: the paper's sequential, parallel and GPU milliseconds, ours, and the
    paper / ours ratios (how many times faster this host is)."""
    ps, pp, pg = (_times(ref, table, v) for v in ("sequential", "parallel", "gpu"))
    os_, op = _times(ours, "seed004_ours", "sequential"), _times(ours, "seed004_ours", "parallel")
    og = _times(ours, "seed004_ours", "opencl")   # issue 16: our portable kernels, when measured
    rows = []
    for n in sorted(set(ps) | set(os_)):
        row = {"bytes": n, "paper seq ms": _ms(ps.get(n)), "paper par ms": _ms(pp.get(n)),
               "paper GPU ms": _ms(pg.get(n)), "ours seq ms": _ms(os_.get(n)), "ours par ms": _ms(op.get(n)),
               "paper/ours seq": _ratio(ps.get(n), os_.get(n)),
               "paper/ours par": _ratio(pp.get(n), op.get(n))}
        if og:
            row.update({"ours OpenCL ms": _ms(og.get(n)), "paper GPU/ours OpenCL": _ratio(pg.get(n), og.get(n))})
        rows.append(row)
    return pd.DataFrame(rows)


def seed004_crossovers(ours: pd.DataFrame, ref: pd.DataFrame) -> dict[str, int | None]:
    out = {}
    for label, exp, ref_exp in (("paper, system 1 (i7 960)", "seed004_table2", True),
                                ("paper, system 2 (i5-4200M)", "seed004_table3", True),
                                ("ours", "seed004_ours", False)):
        src = ref if ref_exp else ours
        s, p = _times(src, exp, "sequential"), _times(src, exp, "parallel")
        common = sorted(set(s) & set(p))
        out[label] = crossover(common, [s[n] for n in common], [p[n] for n in common]) if common else None
    return out


def seed001_beside(ours: pd.DataFrame, ref: pd.DataFrame, kind: str = "total",
                   tables: tuple[str, str] = ("seed001_table1", "seed001_table2")) -> pd.DataFrame:
    """kind 'total' (paper Tables 1/4) or 'encryption-only' (Tables 2/5): the paper's (i5 M 450,
    Tables 1-2) sequential, OpenMP and GPU seconds beside ours, with the ratios and speedups."""
    ref_t = tables[0] if kind == "total" else tables[1]
    ps, pp, pg = (_times(ref, ref_t, f"{v}/{kind}") for v in ("sequential", "openmp", "gpu"))
    os_, op = _times(ours, "seed001_ours", f"sequential/{kind}"), _times(ours, "seed001_ours", f"openmp/{kind}")
    rows = []
    for n in sorted(set(ps) | set(os_)):
        rows.append({"bytes": n, "paper seq s": ps.get(n), "paper OpenMP s": pp.get(n), "paper GPU s": pg.get(n),
                     "ours seq s": os_.get(n), "ours threads s": op.get(n),
                     "paper speedup": _ratio(ps.get(n), pp.get(n)), "ours speedup": _ratio(os_.get(n), op.get(n)),
                     "paper/ours seq": _ratio(ps.get(n), os_.get(n))})
    return pd.DataFrame(rows)


def _ms(v):
    return None if v is None else v * 1e3


def _ratio(a, b):
    return None if a is None or b is None or pd.isna(a) or pd.isna(b) or b <= 0 else a / b


def seed004_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None) -> list[str]:
    """Seed 004's takeaways: the crossovers, what differs, our OpenCL kernels beside its GPU column."""
    from s2mc.isa.units import human_size
    out = []
    if not (ours["experiment"] == "seed004_ours").any():
        return out
    c = seed004_crossovers(ours, ref)
    out.append("Seed 004 crossover (the size from which CPU parallel stays faster than sequential): "
               + "; ".join(f"{k}: {human_size(v) if v else 'never'}" for k, v in c.items()) + ".")
    out.append(seed004_what_differs(host or "this host"))
    t = seed004_beside(ours, ref)
    if "paper GPU/ours OpenCL" in t and t["paper GPU/ours OpenCL"].notna().any():
        r = t.dropna(subset=["paper GPU/ours OpenCL"])
        dev = ours.loc[(ours["experiment"] == "seed004_ours") & (ours["variant"] == "opencl"), "platform"].iloc[0]
        out.append(f"Seed 004's GPU column (GTX 480, C++ AMP) beside our portable OpenCL kernels on {dev}, "
                   f"both host to host in segments: paper/ours {r['paper GPU/ours OpenCL'].min():.2g}-"
                   f"{r['paper GPU/ours OpenCL'].max():.2g}x ({human_size(int(r['bytes'].min()))}-"
                   f"{human_size(int(r['bytes'].max()))}; above 1 = ours faster).")
    return out


def seed001_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None) -> list[str]:
    """Seed 001's takeaways: how much faster this host is, and what differs."""
    from s2mc.isa.units import human_size
    out = []
    if not (ours["experiment"] == "seed001_ours").any():
        return out
    t = seed001_beside(ours, ref, "encryption-only").dropna(subset=["paper/ours seq"])
    if len(t):
        out.append(f"Seed 001 encryption-only, sequential: this host is {t['paper/ours seq'].min():.0f}-"
                   f"{t['paper/ours seq'].max():.0f}x faster than the paper's Core i5 M 450 "
                   f"({human_size(int(t['bytes'].min()))}-{human_size(int(t['bytes'].max()))}).")
    out.append(seed001_what_differs(host or "this host"))
    return out


def summary_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None) -> list[str]:
    """Seeds 004 and 001's takeaways (`host`: host_phrase() of the machine that measured)."""
    return seed004_sentences(ours, ref, host) + seed001_sentences(ours, ref, host)


def main(argv: list[str] | None = None) -> int:
    from s2mc.analysis import records, seeds
    ap = argparse.ArgumentParser(prog="python -m s2mc.analysis.seeds_native", description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="results/seeds_native.parquet")
    ap.add_argument("--quick", action="store_true", help="sizes up to 16 MB only")
    args = ap.parse_args(argv)
    if args.quick:
        df = measure_quick()
        s002 = measure_seed002_quick()
    else:
        df = measure()
        s002 = measure_seed002()
    df = records.concat([df, s002, measure_seed004_opencl(
        [n for n in SEED004_SIZES if n <= 16 * MB] if args.quick else None)])
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    records.write(df, args.out, params=dict(command="seeds_native", quick=args.quick))
    ref = seeds.load_reference()
    pd.set_option("display.width", 200)
    from s2mc.analysis.records import environment
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
    print(seed002_beside(df, ref).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"records: {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
