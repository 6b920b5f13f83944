"""Seeds 001, 002 (Figure 10) and 004 measured on this host, read beside the papers' tables: the
tables with paper/ours ratios, seed 004's crossover, and the sentences the report prints. The
measurements are s2mc.experiments.seeds_native's records (experiments seed001_ours, seed004_ours,
seed002_cpu); the papers' numbers are s2mc.analysis.seeds' reference.

    from s2mc.analysis import seeds, seeds_native
    ref = seeds.load_reference()
    seeds_native.seed004_beside(df, ref)        # a table: size, paper and ours, ratios
    seeds_native.crossover(sizes, seq, par)     # the smallest size from which parallel stays faster
    seeds_native.summary_sentences(df, ref)     # the takeaways
"""
from __future__ import annotations

import pandas as pd

from s2mc.common.units import human_size

from .summaries import fixed, uses_tables


def host_phrase(cpu_count: int | None = None, cpu: str | None = None) -> str:
    """'this host's 2 CPUs (AMD EPYC 7B13)': the run's own machine, from its manifest (records.environment()
    when measuring; the results' manifests in the report), never a fixed description."""
    n = f"{cpu_count} CPU{'s' if cpu_count != 1 else ''}" if cpu_count else "CPUs"
    model = f" ({cpu})" if cpu and cpu not in ("unknown", "?") else ""
    return f"this host's {n}{model}"


def seed001_what_differs(host: str) -> str:
    return ("What differs: seed 001 ran a T-table AES on a 2010 laptop (Core i5 M 450, 2 cores) and a 2009 "
            "desktop (Core i7 960, 4 cores), reading and writing files on a disk; ours runs the native "
            f"library's best AES (AES-NI/VAES where the CPU has them) on {host} with page-cached files.")


def seed004_what_differs(host: str) -> str:
    return ("What differs: seed 004 timed a table-based AES-128-ECB in C++ (sequential, and parallel with "
            "C++ AMP on the CPU) on a Core i7 960 (system 1) and a Core i5-4200M (system 2); ours is the "
            f"native library's best AES with OpenMP on {host}, timed around a Python call, so our small "
            "sizes are bounded by call and fork/join overhead and our large ones by memory bandwidth; on a "
            "host shared with other work a second thread can wait a scheduler slice (up to ~12 ms) for a "
            "CPU, which moves the crossover.")


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


#: A figure at more threads below this fraction of one thread's throughput is not a result: splitting the
#: work cannot make it slower than one thread by that much, so the threads waited for CPUs (the machine
#: was busy while it measured).
DISTURBED_BELOW = 0.5


def disturbed(gbps: dict[int, float]) -> list[int]:
    """The thread counts whose throughput is below DISTURBED_BELOW x one thread's (none without one)."""
    one = gbps.get(1)
    return [t for t in sorted(gbps) if one and t > 1 and gbps[t] < DISTURBED_BELOW * one]


def seed002_beside(ours: pd.DataFrame, ref: pd.DataFrame, cpu_count: int | None = None) -> pd.DataFrame:
    """One row per (cipher, implementation): our Gbit/s at each thread count, the speedup of 4 over 1
    thread and the gain of 8 over 4 threads (none from a disturbed figure), the thread counts whose
    figures are disturbed, and the paper's figure where the seed text gives one (SC2000 at 8 threads;
    AES-NI at 4 threads, beside our AES with AES instructions) compared per thread: the paper's per
    thread against ours per thread at the most threads both ran without oversubscribing this host's
    `cpu_count` CPUs (and undisturbed)."""
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
        bad = disturbed(gbps)
        row = {"cipher": cipher, "impl": engine}
        for t in sorted(gbps):
            row[f"{t} thr Gbit/s"] = gbps[t]
        row["4 vs 1 thr"] = None if {1, 4} & set(bad) else _ratio(gbps.get(4), gbps.get(1))
        row["8 vs 4 thr"] = None if {4, 8} & set(bad) else _ratio(gbps.get(8), gbps.get(4))
        row["disturbed"] = ", ".join(f"{t} thr" for t in bad) or None
        kind = "tables" if engine in ("ttable", "sptable") or cipher not in ("aes",) else "instructions"
        p = paper_by.get((cipher, kind))
        row["paper Gbit/s"] = f"{p[1]:g} ({p[0]} thr)" if p else None
        like = [t for t in gbps if t not in bad and t <= min(p[0], cpu_count or p[0])] if p else []
        t = max(like, default=None)
        row["paper per thr"] = p[1] / p[0] if p else None
        row["ours per thr"] = f"{fixed(gbps[t] / t)} ({t} thr)" if t else None
        row["paper/ours per thr"] = _ratio(p[1] / p[0], gbps[t] / t) if t else None
        rows.append(row)
    return pd.DataFrame(rows)


def seed002_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None,
                      cpu_count: int | None = None) -> list[str]:
    """What Figure 10 on this host shows; `host`: host_phrase() of the machine that measured."""
    t = seed002_beside(ours, ref, cpu_count)
    if t.empty:
        return []
    out = []
    for _, r in t.iterrows():
        gains = []
        if r.get("4 vs 1 thr") is not None and pd.notna(r.get("4 vs 1 thr")):
            gains.append(f"4 threads {r['4 vs 1 thr']:.2f}x one thread")
        if r.get("8 vs 4 thr") is not None and pd.notna(r.get("8 vs 4 thr")):
            gains.append(f"8 threads {100 * (r['8 vs 4 thr'] - 1):+.0f} % over 4")
        figures = {int(k.split()[0]): v for k, v in r.items() if k.endswith("Gbit/s") and k[0].isdigit() and pd.notna(v)}
        bad = disturbed(figures)
        best = max(v for n, v in figures.items() if n not in bad)
        line = f"Seed 002 Figure 10, {r['cipher']} ({r['impl']}): best {best:.2f} Gbit/s on this host"
        line += f" ({'; '.join(gains)})" if gains else ""
        if r.get("paper/ours per thr") is not None and pd.notna(r.get("paper/ours per thr")):
            n = int(str(r["ours per thr"]).split("(")[1].split()[0])
            p_n = int(str(r["paper Gbit/s"]).split("(")[1].split()[0])
            cpus = f", this host has {cpu_count} CPU{'s' if cpu_count != 1 else ''}" if cpu_count else ""
            line += (f"; per thread, the paper's {str(r['paper Gbit/s']).split()[0]} Gbit/s on {p_n} threads "
                     f"({fixed(r['paper per thr'])} a thread) is {r['paper/ours per thr']:.2f}x ours on {n} "
                     f"thread{'s' if n != 1 else ''} ({fixed(figures[n] / n)} a thread{cpus})")
        if bad:
            worst = min(bad, key=lambda n: figures[n])
            names = [f"{n}-thread" for n in bad]
            names = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            line += (f". Not a result: the {names} figure{'s' if len(bad) > 1 else ''} "
                     f"({', '.join(fixed(figures[n]) for n in bad)} Gbit/s; {figures[1] / figures[worst]:.0f}x below "
                     f"one thread{' at worst' if len(bad) > 1 else ''}) cannot come from splitting "
                     "the work: the threads waited for CPUs while the machine was busy (rerun on a quiet one)")
        out.append(line + ".")
    out.append("The paper: 4 threads on 4 cores nearly 4x one thread; 8 threads (hyper-threading) 7 to 34 % "
               "over 4. " + seed002_what_differs(host or "this host", cpu_count,
                                                 ours.loc[ours["experiment"] == "seed002_cpu", "cores"]))
    out.append(SEED002_NOT_BUILT)
    return out


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
    og = _times(ours, "seed004_ours", "opencl")   # our portable kernels, when measured
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
                   f"both host to host in segments: paper/ours {fixed(r['paper GPU/ours OpenCL'].min(), 2)}-"
                   f"{fixed(r['paper GPU/ours OpenCL'].max(), 2)}x ({human_size(int(r['bytes'].min()))}-"
                   f"{human_size(int(r['bytes'].max()))}; above 1 = ours faster).")
    return out


def _one_thread_rates(ours: pd.DataFrame) -> pd.DataFrame:
    """Our native AES runs on one thread as (experiment, engine, bytes, rate in bytes per second)."""
    d = ours[(ours["source"] == "native") & (ours["cores"] == 1) & (ours["core"] == -1) & (ours["cipher"] == "aes")
             & (ours["experiment"] != "seed001_ours")]
    rate = d[d["metric"] == "bytes_per_second"].assign(rate=lambda x: x["value"])
    secs = d[(d["metric"] == "seconds") & (d["bytes"] > 0)]
    secs = secs.assign(rate=secs["bytes"] / secs["value"])
    both = pd.concat([rate, secs[~secs["run_id"].isin(rate["run_id"])]])
    return both.groupby(["experiment", "engine", "bytes"], as_index=False)["rate"].median()


def _span(values, fmt=lambda v: f"{v:,.0f}") -> str:
    lo, hi = fmt(min(values)), fmt(max(values))
    return lo if lo == hi else f"{lo}-{hi}"


def seed001_split(ours: pd.DataFrame, ref: pd.DataFrame, t: pd.DataFrame) -> str:
    """How the sequential ratio `t` (seed001_beside, encryption-only) splits, from this host's own runs: our
    AES-instruction implementation against a T-table AES on one thread (the instructions' share), and the
    paper's T-table AES on its i5 against ours (the rest: the CPUs and the two programs)."""
    seq = ours[(ours["experiment"] == "seed001_ours") & (ours["variant"] == "sequential/encryption-only")]
    engine = str(seq["engine"].iloc[0]) if len(seq) else ""
    rates = _one_thread_rates(ours)
    table = rates[rates["engine"].map(uses_tables)]
    if table.empty:
        return (" These records hold no T-table AES on one thread of this host to split that ratio into the AES "
                "instructions' share and the rest (`python -m s2mc.experiments.seeds_native` measures it).")
    # the instructions' share: both implementations in one experiment at one size (the largest)
    pairs = table.merge(rates[rates["engine"] == engine], on=["experiment", "bytes"], suffixes=("", "_instr"))
    tt = pairs.sort_values("bytes").iloc[-1] if len(pairs) else table.sort_values("bytes").iloc[-1]
    paper_rate = t["bytes"] / t["paper seq s"]
    rest = _span(tt["rate"] / paper_rate)
    text = ""
    if len(pairs) and not uses_tables(engine):
        text = (f" Of that, the AES instructions give {tt['rate_instr'] / tt['rate']:.1f}x ({engine} against "
                f"{tt['engine']}, one thread each, {human_size(int(tt['bytes']))}, {tt['experiment']} on this host)"
                ", and")
    else:
        text = " Of that,"
    return (text + f" the paper's T-table AES on its i5 is {rest}x slower than ours ({tt['engine']}, one thread "
            "of this host): the two CPUs and the two programs together, which these records cannot separate.")


def seed001_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None) -> list[str]:
    """Seed 001's takeaways: how much faster this host is, what of it the AES instructions give (from
    this host's own one-thread runs), and what differs."""
    out = []
    if not (ours["experiment"] == "seed001_ours").any():
        return out
    t = seed001_beside(ours, ref, "encryption-only").dropna(subset=["paper/ours seq"])
    if len(t):
        out.append(f"Seed 001 encryption-only, sequential: this host is {_span(t['paper/ours seq'])}x faster than "
                   f"the paper's Core i5 M 450 ({_span(t['bytes'], lambda v: human_size(int(v)))})."
                   + seed001_split(ours, ref, t))
    out.append(seed001_what_differs(host or "this host"))
    return out


def summary_sentences(ours: pd.DataFrame, ref: pd.DataFrame, host: str | None = None) -> list[str]:
    """Seeds 004 and 001's takeaways (`host`: host_phrase() of the machine that measured)."""
    return seed004_sentences(ours, ref, host) + seed001_sentences(ours, ref, host)
