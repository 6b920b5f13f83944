"""The report's short tables and its sentences, computed from the records (never written by hand):
pivots with one row per configuration and one column per core count, and takeaways whose numbers
and words ("14% slower", "saturates at 4 cores") come from the data they describe.

    from s2mc.analysis import summaries
    runs = summaries.sim_runs(records)                # one row per simulated run
    summaries.arbitration_takeaways(runs)             # ['At 4 cores fixed is 14% slower than fifo ...']
"""
from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from s2mc.analysis import derive, model
from s2mc.common.variants import parse_cache_part

_RUN_INDEX = ["run_id", "experiment", "workload", "variant", "engine", "bytes", "cores"]
#: What keeps one simulated configuration apart from another (sim_runs' columns): every machine
#: parameter is in the variant (s2mc.common.variants.NOT_IN_VARIANT), so runs chosen by these are one
#: configuration.
SIM_CONFIG = ["experiment", "workload", "variant", "engine", "bytes"]


def _param(name: str) -> dict:
    """One entry of the machine-parameter table, simulator/params.toml (read as data: analysis imports no
    engine)."""
    import tomllib
    from importlib.resources import files
    table = tomllib.loads(files("s2mc").joinpath("simulator").joinpath("params.toml").read_text(encoding="utf-8"))
    return next(p for p in table["param"] if p["name"] == name)


def arbitration_policies() -> tuple[str, ...]:
    """The bus arbitration policies, default first, from the machine-parameter table."""
    arb = _param("arbitration")
    return (arb["default"], *(c for c in arb["choices"] if c != arb["default"]))


# -- words from numbers ------------------------------------------------------------------------------

def compare_phrase(value: float, base: float, slower: str = "slower", faster: str = "faster") -> str:
    """'14% slower' / '3% faster' / 'the same (within 1%)' for a time `value` against `base`."""
    change = value / base - 1
    if abs(change) < 0.01:
        return "the same (within 1%)"
    return f"{abs(change):.0%} {slower if change > 0 else faster}"


def fixed(v: float, digits: int = 3) -> str:
    """A number in plain decimal notation, never 1.2e-05 or 8.3e+05: whole from 10^(digits-1) on (with
    thousands separators), else `digits` significant digits with as many decimals as that needs."""
    if v != v:
        return "–"
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    if mag >= digits - 1:
        return f"{v:,.0f}"
    return f"{v:.{digits - 1 - mag}f}"


def num(v: float) -> str:
    """A count with thousands separators, a ratio with two decimals."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def human_bytes(n: float) -> str:
    n = int(n)
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.1f} MiB"
    return f"{n} B"


def describe_variant(workload: str, variant: str) -> str:
    """A records variant in words: 'bytes/interleaved/L4/fixed/O0' -> 'bytes, L = 4, fixed, -O0'.
    The partition is left out when it is the default (interleaved); other workloads keep their name."""
    parts = [p for p in str(variant).split("/") if p]
    words = []
    for p in parts:
        if re.fullmatch(r"L\d+", p):
            words.append(f"L = {p[1:]}")
        elif re.fullmatch(r"O\d", p):
            words.append(f"-{p}")
        elif parse_cache_part(p):
            words.append(cache_words(p))
        elif p != "interleaved":
            words.append(p)
    if not str(workload).startswith("aes"):
        words.insert(0, str(workload))
    return ", ".join(words) or str(workload)


def cache_words(part: str) -> str:
    """A variant's cache part in words: 'mesi-64x2-w4' -> 'MESI caches 64x2, 4-word lines'."""
    c = parse_cache_part(part)
    h = f", hit {c['cache_hit_latency']}" if c["cache_hit_latency"] != 1 else ""
    return f"{c['cache'].upper()} caches {c['cache_lines']}x{c['cache_ways']}, {c['line_words']}-word lines{h}"


def variant_parts(workload: str, variant: str) -> dict[str, str]:
    """A configuration's parts with their defaults filled in, for legends that name what varies:
    {'program': ..., 'style': 'bytes', 'partition': 'interleaved', 'L': '2', 'policy': 'fifo', 'opt': '-O1'}."""
    out = {"program": str(workload), "style": "", "partition": "", "L": "2", "policy": "fifo", "opt": "-O1",
           "cache": "no caches"}
    for p in [p for p in str(variant).split("/") if p]:
        if re.fullmatch(r"L\d+", p):
            out["L"] = p[1:]
        elif re.fullmatch(r"O\d", p):
            out["opt"] = f"-{p}"
        elif p in ("fixed", "round_robin", "fifo", "burst4"):
            out["policy"] = p
        elif parse_cache_part(p):
            out["cache"] = cache_words(p)
        elif p in ("interleaved", "contiguous", "extended") or p.startswith("extended"):
            out["partition"] = p
        elif not out["style"]:
            out["style"] = p
    return out


def legend_labels(keys: list[tuple]) -> tuple[list[str], str]:
    """Labels for lines of (workload, variant, bytes[, engine]) that name only what differs between them
    ('style ttable, 1 KiB', 'L = 4', 'policy fixed', 'vaes'), and a legend title listing those things."""
    parts = [dict(variant_parts(k[0], k[1]), size=human_bytes(k[2]) if k[2] else "",
                  engine=str(k[3]) if len(k) > 3 else "") for k in keys]
    names = ["program", "engine", "style", "partition", "L", "policy", "cache", "opt", "size"]
    varying = [n for n in names if len({p[n] for p in parts}) > 1] or ["size"]
    shown = {"L": lambda v: f"L = {v}", "size": lambda v: v, "opt": lambda v: v, "program": lambda v: v,
             "engine": lambda v: v, "cache": lambda v: v}
    labels = [", ".join(shown.get(n, lambda v, n=n: f"{n} {v}")(p[n]) for n in varying if p[n]) or "all"
              for p in parts]
    # variants the parts above do not read (sequential/total against sequential/encryption-only) would
    # give two lines one label: those name their whole variant
    for i, text in enumerate(labels):
        if labels.count(text) > 1:
            labels = [f"{t} ({keys[j][1]})" if t == text else t for j, t in enumerate(labels)]
    labels = [t if labels.count(t) == 1 else f"{t} #{labels[:i + 1].count(t)}" for i, t in enumerate(labels)]
    title = ", ".join({"size": "data size", "opt": "optimisation", "engine": "implementation"}.get(n, n)
                      for n in varying)
    return labels, title


def label(row) -> str:
    """A configuration's row label: its variant in words, and its data size when it has one."""
    text = describe_variant(row["workload"], row["variant"])
    return f"{text}, {human_bytes(row['bytes'])}" if row["bytes"] else text


# -- runs --------------------------------------------------------------------------------------------

def sim_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per simulated run: the whole-run counters, speedup over its configuration's 1-core
    run, a `config` label (describe_variant + size) and the per-core stall spread."""
    sim = df[(df["source"] == "sim")]
    whole = sim[sim["core"] == -1]
    # a run that counted no cycles (a litmus run's outcome counts) is not one to scale
    whole = whole[whole["run_id"].isin(whole.loc[whole["metric"] == "cycles", "run_id"])]
    if whole.empty:
        return pd.DataFrame(columns=_RUN_INDEX + ["config"])
    metrics = ["cycles", "instructions", "stall_cycles", "bus_wait_cycles", "mem_accesses",
               "bus_utilisation", "sync_wait_cycles"]
    w = derive.wide(whole, metrics, index=_RUN_INDEX)
    for m in metrics:            # hand-made records may lack a counter: the sentences skip it
        if m not in w:
            w[m] = float("nan")
    sp = derive.speedup(sim)
    sp = sp[sp["metric"] == "speedup"][["run_id", "value"]].rename(columns={"value": "speedup"})
    w = w.merge(sp.drop_duplicates("run_id"), on="run_id", how="left")
    per_core = derive.wide(sim[sim["core"] >= 0], ["stall_cycles"], index=["run_id", "core"])
    if not per_core.empty:
        spread = per_core.groupby("run_id")["stall_cycles"].agg(["min", "max"]).reset_index()
        w = w.merge(spread.rename(columns={"min": "core_stalls_min", "max": "core_stalls_max"}),
                    on="run_id", how="left")
    w["config"] = unique_labels(w)
    return w.sort_values(["experiment", "workload", "variant", "bytes", "cores"]).reset_index(drop=True)


def unique_labels(w: pd.DataFrame) -> list[str]:
    """label() of each run, with what else keeps its configuration apart (SIM_CONFIG: the workload, the
    experiment, the engine) added where two configurations would read the same, so that nothing keyed
    on the label (tables, sentences) merges them."""
    base = [label(r) for _, r in w.iterrows()]
    keys = [tuple(r) for r in w[SIM_CONFIG].astype(str).itertuples(index=False)]
    owners: dict[str, set] = {}
    for text, key in zip(base, keys):
        owners.setdefault(text, set()).add(key)
    out = []
    for text, key in zip(base, keys):
        clash = owners[text]
        if len(clash) > 1:
            extra = [f"{col} {key[i]}" if col != "workload" else key[i]
                     for i, col in enumerate(SIM_CONFIG) if col in ("workload", "experiment", "engine")
                     and len({k[i] for k in clash}) > 1]
            text = f"{text} ({', '.join(extra)})" if extra else text
        out.append(text)
    return out


def pivot(runs: pd.DataFrame, value: str, fmt=num, index: str = "config") -> pd.DataFrame:
    """Rows: configurations (in their first-seen order); columns: core counts; cells: `value`
    (median over repeated runs) formatted by `fmt`, '–' where a configuration has no run."""
    if runs.empty or value not in runs:
        return pd.DataFrame()
    order = list(dict.fromkeys(runs[index]))
    t = runs.pivot_table(index=index, columns="cores", values=value, aggfunc="median", observed=True)
    t = t.reindex(order)
    out = t.apply(lambda col: col.map(lambda v: "–" if pd.isna(v) else fmt(v)))
    out.columns = [f"{int(c)} core{'s' if c != 1 else ''}" for c in t.columns]
    return out.reset_index().rename(columns={index: "configuration"})


# -- 1. seed 003 ---------------------------------------------------------------------------------------

def seed003_pivots(main: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The seed 003 comparison (report.seed003_main_table) as three bytes x cores tables whose cells
    read 'ours / paper (ratio)'."""
    def cell(ours, paper, ratio=None, fmt=num):
        if pd.isna(ours) and pd.isna(paper):
            return "–"
        text = f"{'–' if pd.isna(ours) else fmt(ours)} / {'–' if pd.isna(paper) else fmt(paper)}"
        return text + (f" ({ratio:.2f})" if ratio is not None and pd.notna(ratio) else "")

    out = {}
    for title, o, p, r, fmt in [("cycles", "cycles (ours)", "cycles (paper)", "cycles ours/paper", num),
                                ("stall cycles", "stalls (ours)", "stalls (paper)", "stalls ours/paper", num),
                                ("speedup", "speedup (ours)", "speedup (paper)", None, lambda v: f"{v:.2f}")]:
        if main.empty:
            continue
        t = main.assign(cell=[cell(row[o], row[p], row[r] if r else None, fmt) for _, row in main.iterrows()])
        t = t.pivot(index="bytes", columns="cores", values="cell").fillna("–")
        t.columns = [f"{int(c)} core{'s' if c != 1 else ''}" for c in t.columns]
        out[title] = t.reset_index()
    return out


def seed003_takeaways(grid: pd.DataFrame, ref: pd.DataFrame) -> list[str]:
    """Why our cycles differ from the paper's (-O1 against -O0), and how the speedups compare.
    `grid`: our seed 003 configuration's simulator records (both optimisation levels if run)."""
    runs = sim_runs(grid)
    if runs.empty:
        return []
    paper = ref[(ref["experiment"] == "seed003_table3") & (ref["metric"] == "cycles")]
    paper_c = {(int(r.bytes), int(r.cores)): r.value for r in paper.itertuples()}
    stalls = ref[(ref["experiment"] == "seed003_table4") & (ref["metric"] == "stall_cycles")]
    paper_a = {(int(r.bytes), int(r.cores)): r.value for r in stalls.itertuples()}
    out = []

    def level(opt_tag):
        mine = runs[runs["variant"].str.endswith("/O0") == (opt_tag == "O0")]
        one = mine[mine["cores"] == 1]
        ratios = [r.cycles / paper_c[(int(r.bytes), 1)] for r in one.itertuples() if (int(r.bytes), 1) in paper_c]
        acc = [r.mem_accesses / paper_a[(int(r.bytes), 1)] for r in one.itertuples()
               if (int(r.bytes), 1) in paper_a and pd.notna(r.mem_accesses)]
        two = [r.cycles / paper_c[(int(r.bytes), 2)] for r in mine[mine["cores"] == 2].itertuples()
               if (int(r.bytes), 2) in paper_c]
        ipb = (one["instructions"] / one["bytes"]).median() if len(one) else float("nan")
        return ratios, acc, two, ipb

    o1, acc1, _, ipb1 = level("O1")
    o0, _, two0, ipb0 = level("O0")
    span = lambda xs: f"{min(xs):.2f}" if f"{min(xs):.2f}" == f"{max(xs):.2f}" else f"{min(xs):.2f}-{max(xs):.2f}"  # noqa: E731
    if o1:
        accesses = f" and makes {span(acc1)}x its bus accesses" if acc1 else ""
        text = (f"On one core our -O1 program takes {span(o1)}x the paper's cycles{accesses}. Our -O1 "
                "compiler keeps variables and temporaries in registers, so most of the loads and stores "
                "of the original compiler's code are gone, and with them most of the cycles.")
        if o0:
            text += (f" Compiled at -O0 (every variable in memory, like the original compiler) the same "
                     f"program takes {span(o0)}x the paper's cycles on one core ({span(two0)}x on two) "
                     f"and {ipb0 / ipb1:.1f}x the instructions of -O1: the optimiser explains most of "
                     "the gap; the rest is our AES code, which differs from theirs (docs/aes-on-s2.md).")
        else:
            text += (" These results have no -O0 runs to compare (add them with `s2mc aes --cores 1,2,3,4 "
                     "--bytes 32,64,128,256 --style bytes --mode ecb --opt 0 --out results/seed003_O0.parquet`).")
        out.append(text)
    o1runs = runs[~runs["variant"].str.endswith("/O0")]
    big = int(o1runs["bytes"].max()) if len(o1runs) else 0
    at = o1runs[o1runs["bytes"] == big].set_index("cores")
    cores = [c for c in (2, 3, 4) if c in at.index and pd.notna(at.loc[c, "speedup"])]
    if cores and 1 in at.index and pd.notna(at.loc[1, "mem_accesses"]):
        ours = "/".join(f"{at.loc[c, 'speedup']:.2f}" for c in cores)
        theirs = "/".join(f"{paper_c[(big, 1)] / paper_c[(big, c)]:.2f}" for c in cores if (big, c) in paper_c)
        m_ours = model.fit(at.loc[1, "cycles"], at.loc[1, "mem_accesses"], 2)
        text = (f"The shape is the paper's: at {big} bytes our speedup on {'/'.join(map(str, cores))} cores is "
                f"{ours}, the paper's {theirs}, both under the bus ceiling (Z + L) / L of section 3")
        if (big, 1) in paper_a:
            m_paper = model.fit(paper_c[(big, 1)], paper_a[(big, 1)], 2)
            ours_c, theirs_c = m_ours.saturation_speedup, m_paper.saturation_speedup
            how = ("the same (within 1%)" if abs(ours_c / theirs_c - 1) < 0.01 else
                   f"{'less' if ours_c > theirs_c else 'more'} often per cycle, so our ceiling is "
                   f"{'higher' if ours_c > theirs_c else 'lower'}")
            text += (f" ({ours_c:.2f} for ours, {theirs_c:.2f} for theirs: our code touches memory "
                     f"{how})" if not how.startswith("the same") else
                     f" ({ours_c:.2f} for ours, {theirs_c:.2f} for theirs: the same within 1%)")
        out.append(text + ".")
    return out


# -- 2. simulated scaling --------------------------------------------------------------------------------

#: Bus utilisation from which a bus counts as saturated in the sentences: busy within 5% of all the time.
BUS_SATURATED = 0.95


def saturation_point(g: pd.DataFrame, within: float = 0.05) -> int | None:
    """The fewest cores whose speedup is within `within` of the configuration's best."""
    g = g.dropna(subset=["speedup"]).sort_values("cores")
    if g.empty:
        return None
    best = g["speedup"].max()
    return int(g[g["speedup"] >= (1 - within) * best]["cores"].iloc[0])


def scaling_takeaways(runs: pd.DataFrame) -> list[str]:
    """Per configuration with a core sweep: the best speedup, where it is reached, bus utilisation."""
    out = []
    if runs.empty:
        return out
    for config, g in runs.groupby("config", sort=False):
        if g["cores"].nunique() < 3 or g["speedup"].isna().all():
            continue
        g = g.sort_values("cores")
        sat = saturation_point(g)
        best = g["speedup"].max()
        top = g[g["cores"] == g["cores"].max()].iloc[0]
        # 'only wait' only where the bus is saturated (within 5% of always busy) and the speedup flat
        waits = top["bus_utilisation"] >= BUS_SATURATED and sat < int(top["cores"])
        out.append(f"{config}: the speedup reaches {best:.2f}x and is within 5% of that from {sat} cores on; "
                   f"at {int(top['cores'])} cores the bus is busy {top['bus_utilisation']:.0%} of the time"
                   + (", so the extra cores only wait." if waits else "."))
    # the two AES styles compared on the same machine, program and size: the first such pair
    styles = {}
    for _, g in runs.groupby(SIM_CONFIG, sort=False):
        one = g[g["cores"] == 1]
        if len(one) and g["bytes"].iloc[0] and pd.notna(one.iloc[0]["mem_accesses"]):
            variant = str(g["variant"].iloc[0])
            style = variant.split("/")[0]
            r = one.iloc[0]
            key = (r["experiment"], r["workload"], r["engine"], r["bytes"], without(variant, [style]))
            styles.setdefault(key, {})[style] = (r["instructions"] / r["bytes"], model.fit(
                r["cycles"], r["mem_accesses"], _latency(variant)).saturation_speedup)
    pair = next(((k, v) for k, v in styles.items() if {"bytes", "ttable"} <= set(v)), None)
    if pair:
        (_, _, _, nbytes, _), v = pair
        b, t = v["bytes"], v["ttable"]
        out.append(f"At {human_bytes(nbytes)}, T-table AES runs {b[0] / t[0]:.1f}x fewer instructions per byte than "
                   f"the byte-oriented version, yet its ceiling (Z + L) / L is {t[1]:.2f} against {b[1]:.2f} "
                   f"({compare_phrase(t[1], b[1], 'higher', 'lower')})" + (
                       ": it makes fewer bus accesses in about the same proportion, so the ratio of compute to "
                       "memory moves little." if abs(t[1] / b[1] - 1) < 0.1 else "."))
    return out


def _latency(variant: str) -> int:
    """The memory latency L a variant names (`L4`), else the parameter table's default."""
    part = next((p for p in str(variant).split("/") if re.fullmatch(r"L\d+", p)), None)
    return int(part[1:]) if part else int(_param("mem_latency")["default"])


def latency_takeaways(runs: pd.DataFrame) -> list[str]:
    """The memory-latency sweep: best speedup per L, against the ceiling (Z + L) / L, per configuration
    apart from L (every other machine parameter, program and size kept apart), named when there are several."""
    rest = [c for c in SIM_CONFIG if c != "variant"]
    r = runs.assign(rest=runs["variant"].map(lambda v: without(v, [f"L{_latency(v)}"])))
    groups = [g for _, g in r.groupby(rest + ["rest"], sort=False)]
    out = []
    for sweep in groups:
        best = []
        for variant, g in sweep.groupby("variant", sort=False):
            lat = _latency(variant)
            one = g[g["cores"] == 1]
            if one.empty or one["mem_accesses"].isna().all():
                continue
            row = one.iloc[0]
            ceiling = model.fit(row["cycles"], row["mem_accesses"], lat).saturation_speedup
            best.append((lat, g["speedup"].max(), ceiling))
        if len(best) < 2:
            continue
        best.sort()
        first = sweep.iloc[0]
        who = (f" ({describe_variant(first['workload'], first['rest'])}"
               + (f", {human_bytes(first['bytes'])}" if first["bytes"] else "") + ")") if len(groups) > 1 else ""
        parts = ", ".join(f"L = {lat}: {sp:.2f}x (ceiling {c:.2f})" for lat, sp, c in best)
        falls = all(b[2] > a[2] for a, b in zip(best[1:], best))
        out.append(f"Best speedup by memory latency{who}: {parts}." + (
            " Each longer L lowers the ceiling (Z + L) / L, so the bus saturates with fewer cores." if falls else ""))
    return out


def without(variant: str, parts) -> str:
    """A variant with the given parts left out: what else its runs share (the rest of the machine)."""
    return "/".join(p for p in str(variant).split("/") if p and p not in parts)


def arbitration_takeaways(runs: pd.DataFrame, at_cores: int = 4) -> tuple[list[str], str]:
    """How fixed priority and round robin compare with fifo (time, and per-core fairness), and a
    caption for the arbitration figure: per configuration apart from the policy (every other machine
    parameter, program and size kept apart), named when there are several."""
    policies = arbitration_policies()
    rest = [c for c in SIM_CONFIG if c != "variant"]
    r = runs.assign(rest=runs["variant"].map(lambda v: without(v, policies)))
    groups = [g for _, g in r.groupby(rest + ["rest"], sort=False)]
    texts, captions = [], []
    for g in groups:
        t, c = _arbitration_one(g, at_cores, named=len(groups) > 1)
        texts += t
        captions += [c] if t else []
    return texts, "; ".join(captions) or "Arbitration policies"


def _arbitration_one(runs: pd.DataFrame, at_cores: int, named: bool) -> tuple[list[str], str]:
    default, *others = arbitration_policies()

    def policy(v):
        return next((p for p in others if p in str(v).split("/")), default)
    r = runs.assign(policy=runs["variant"].map(policy))
    if r["policy"].nunique() < 2 or "fifo" not in set(r["policy"]):
        return [], "Arbitration policies"
    first = r.iloc[0]
    who = (describe_variant(first["workload"], first["rest"]) + (f", {human_bytes(first['bytes'])}"
                                                                  if first["bytes"] else "") + ": ") if named else ""
    n = at_cores if at_cores in set(r["cores"]) else int(r["cores"].max())
    at = r[r["cores"] == n].groupby("policy")[["cycles", "core_stalls_min", "core_stalls_max"]].median()
    base = at.loc["fifo", "cycles"]
    sentences, caption = [], []
    for pol in ("fixed", "round_robin", *(p for p in others if p not in ("fixed", "round_robin"))):
        if pol in at.index:
            phrase = compare_phrase(at.loc[pol, "cycles"], base)
            sentences.append(f"{pol} is {phrase}{' than fifo' if not sentences else ''} "
                             f"({num(at.loc[pol, 'cycles'])} cycles)")
            caption.append(f"{pol} {phrase}")
    text = f"{who}Arbitration at {n} cores, against fifo's {num(base)} cycles: " + " and ".join(sentences) + "."
    if "fixed" in at.index and "core_stalls_max" in at:
        f = at.loc["fixed"]
        text += (f" Fixed priority is also unfair: per-core stalls range from {num(f['core_stalls_min'])} "
                 f"(core 0) to {num(f['core_stalls_max'])}, against {num(at.loc['fifo', 'core_stalls_min'])}-"
                 f"{num(at.loc['fifo', 'core_stalls_max'])} under fifo.")
    return [text], f"{who}Arbitration policies against fifo at {n} cores: " + ", ".join(caption)


def stall_subject(runs: pd.DataFrame) -> tuple[str, list[str]] | None:
    """The configuration "where the cycles go" describes, sentence and figure alike: the largest one (data
    size, then core count) with bus-wait counters at two or more core counts; (its label, its run ids)."""
    if runs.empty or "bus_wait_cycles" not in runs:
        return None
    r = runs.dropna(subset=["bus_wait_cycles"])
    several = r.groupby(SIM_CONFIG, dropna=False)["cores"].transform("nunique") > 1
    r = r[several]
    if r.empty:
        return None
    top = r.sort_values(["bytes", "cores"]).iloc[-1]
    g = r[(r[SIM_CONFIG] == top[SIM_CONFIG]).all(axis=1)]
    return str(top["config"]), list(g["run_id"])


def stall_takeaways(runs: pd.DataFrame) -> list[str]:
    """Where the core-cycles go at 1 core and at the most cores, for the configuration stall_subject picks."""
    subject = stall_subject(runs)
    if subject is None:
        return []
    config, ids = subject
    g = runs[runs["run_id"].isin(ids)].sort_values("cores")
    lo, hi = g.iloc[0], g.iloc[-1]

    def share(row, col):
        return row[col] / (row["cycles"] * row["cores"])
    return [f"{config}: with {int(lo['cores'])} core{'s' if lo['cores'] > 1 else ''} "
            f"{share(lo, 'bus_wait_cycles'):.0%} of the core-cycles are bus waits; with {int(hi['cores'])} cores "
            f"{share(hi, 'bus_wait_cycles'):.0%} are, while instructions fill only "
            f"{share(hi, 'instructions'):.0%} (stall = bus wait + (L - 1) per access)."]


# -- 3. the model -------------------------------------------------------------------------------------------

def model_pivot(mt: pd.DataFrame) -> pd.DataFrame:
    """report.model_table as one row per configuration: Z, L, ceiling, 'measured / model' per core count."""
    if mt.empty:
        return mt
    rows = []
    # one row per configuration: the byte-oriented and T-table styles (any variant) never share a row
    keys = [k for k in ("experiment", "workload", "variant", "bytes") if k in mt]
    for key, g in mt.groupby(keys, sort=False):
        cfg = dict(zip(keys, key))
        what = describe_variant(cfg.get("workload", ""), cfg.get("variant", "")) if "variant" in cfg else ""
        name = ", ".join(x for x in (cfg["experiment"], what, human_bytes(cfg["bytes"])) if x)
        row = {"configuration": name, "Z": f"{g['Z (think cycles)'].iloc[0]:.2f}",
               "L": f"{g['L'].iloc[0]:g}", "ceiling": f"{g['saturation (Z+L)/L'].iloc[0]:.2f}"}
        for _, r in g.iterrows():
            if r["cores"] > 1:
                row[f"{int(r['cores'])} cores"] = f"{r['measured speedup']:.2f} / {r['model speedup']:.2f}"
        rows.append(row)
    t = pd.DataFrame(rows).fillna("–")
    fixed = ["configuration", "Z", "L", "ceiling"]
    by_cores = sorted((c for c in t.columns if c not in fixed), key=lambda c: int(c.split()[0]))
    return t[fixed + by_cores]


def model_takeaways(mt: pd.DataFrame) -> list[str]:
    out = []
    paper = mt[mt["experiment"].str.contains("paper")]
    if len(paper):
        big = paper[paper["bytes"] == paper["bytes"].max()].set_index("cores")
        if 2 in big.index:
            text = (f"Fitted to the paper's own 1-core run at {int(paper['bytes'].max())} bytes, the model "
                    f"predicts {big.loc[2, 'model speedup']:.2f}x on two cores; the paper measured "
                    f"{big.loc[2, 'measured speedup']:.2f}x. Its ceiling, {big['saturation (Z+L)/L'].iloc[0]:.2f}, "
                    "leaves little for more cores to gain")
            fastest = []
            for nbytes, g in paper[paper["cores"] >= 2].groupby("bytes"):
                g = g.set_index("cores")["measured speedup"]
                best = int(g.idxmax())
                if best != 2 and 2 in g.index:
                    gain = f"{g[best] / g[2] - 1:.0%}"
                    fastest.append(f"on {best} cores at {int(nbytes)} bytes ("
                                   + (f"{gain} faster than on two)" if not fastest else f"{gain})"))
            if fastest:
                listed = ", ".join(fastest[:-1]) + (" and " if len(fastest) > 1 else "") + fastest[-1]
                text += (f": the paper's Table 3 is fastest {listed}, which the paper reads as two cores "
                         "being the best configuration")
            out.append(text + ".")
    ours = mt[~mt["experiment"].str.contains("paper") & (mt["cores"] > 1)]
    if len(ours):
        err = (ours["model/measured"] - 1).abs()
        worst = ours.loc[err.idxmax()]
        why = ("whole-block work that does not split evenly and the barrier at the end cost cycles the "
               "model does not see" if worst["model/measured"] > 1 else
               "the cores' fixed access times fall into a rhythm that wastes less bus time than the random "
               "times MVA assumes")
        out.append(f"Against our {len(ours)} simulated points the model is within {err.median():.0%} at the "
                   f"median; its worst miss predicts {worst['model/measured']:.2f}x the measured speedup at "
                   f"{int(worst['cores'])} cores ({describe_variant(worst['workload'], worst['variant'])}, "
                   f"{human_bytes(worst['bytes'])}, {worst['experiment']}): {why}.")
    return out


# -- 4. real hardware -----------------------------------------------------------------------------------------

#: Experiments with their own subsection of the report's section 4 (a seed measured on this host):
#: the general native tables leave them out.
SEED_NATIVE_EXPERIMENTS = ("seed000_block_sizes", "seed001_ours", "seed002_cpu", "seed004_ours")
#: The columns that keep a native configuration apart, as the report's tables show them.
NATIVE_KEYS = ["backend", "cipher", "key bits", "mode", "implementation", "strategy", "size"]


def workload_parts(workload: str) -> dict[str, str]:
    """'aes-128-ctr-enc' -> cipher aes, key bits 128, mode ctr (records name a workload this way)."""
    parts = str(workload).split("-")
    bits = next((p for p in parts[1:] if p.isdigit()), "")
    rest = [p for p in parts[1:] if p != bits and p not in ("enc", "dec")]
    return {"cipher": parts[0], "key bits": bits, "mode": rest[0] if rest else ""}


def native_runs(df: pd.DataFrame, skip=SEED_NATIVE_EXPERIMENTS) -> pd.DataFrame:
    """One row per native (or GPU) configuration and thread count: seconds, GB/s and the speedup over one
    thread, with the configuration's parts apart (NATIVE_KEYS: cipher, key size, mode, implementation,
    strategy, size), never folded together. The seeds' own experiments (`skip`) are left out."""
    nat = df[df["source"].isin(["native", "cuda"]) & (df["core"] == -1) & ~df["experiment"].isin(skip)]
    if nat.empty:
        return pd.DataFrame()
    # the platform keeps two hosts' runs apart (their medians are of neither machine)
    index = ["source", "platform", "experiment", "workload", "engine", "variant", "bytes", "cores"]
    w = derive.wide(nat, ["seconds", "gb_per_second", "speedup"], index=index)
    if w.empty:   # native rows without timings or throughput (s2mc coherence-native's): no cipher run
        return pd.DataFrame()
    for m in ("seconds", "gb_per_second", "speedup"):
        if m not in w:
            w[m] = float("nan")
    w = w.groupby(index, as_index=False, observed=True).median(numeric_only=True)
    parts = pd.DataFrame([workload_parts(x) for x in w["workload"]], index=w.index)
    w = pd.concat([w.drop(columns=[c for c in parts.columns if c in w]), parts], axis=1)
    w["backend"] = w["source"]
    w["implementation"] = w["engine"]
    w["strategy"] = w["variant"]
    w["size"] = w["bytes"].map(human_bytes)
    w["host"] = w["platform"]
    keys = native_keys(w)
    w["config"] = [", ".join(str(r[k]) for k in keys) for _, r in w.iterrows()]
    return w.sort_values(["source", "cipher", "key bits", "mode", "implementation", "strategy", "bytes",
                          "platform", "cores"]).reset_index(drop=True)


def native_keys(nat: pd.DataFrame) -> list[str]:
    """NATIVE_KEYS, and the host when the runs come from more than one machine."""
    return NATIVE_KEYS + (["host"] if "host" in nat and nat["host"].nunique() > 1 else [])


def native_pivot(nat: pd.DataFrame, value: str, fmt, scaling_only: bool = False) -> pd.DataFrame:
    """summaries.pivot of native_runs with the configuration's parts as separate columns (NATIVE_KEYS)
    and a column per thread count. `scaling_only`: only configurations measured at two or more thread
    counts (a speedup needs them), so the table has no rows of dashes."""
    if nat.empty:
        return pd.DataFrame()
    if scaling_only:
        several = nat.groupby("config")["cores"].transform("nunique") > 1
        nat = nat[several & nat[value].notna()]
        if nat.empty:
            return pd.DataFrame()
    t = pivot(nat, value, fmt)
    t.columns = [c.replace("core", "thread") for c in t.columns]
    keys = nat.drop_duplicates("config").set_index("config")[native_keys(nat)]
    t = keys.loc[t["configuration"]].reset_index(drop=True).join(t.drop(columns="configuration"))
    # a column that is the same in every row says nothing per row: the caption says it instead
    return t


def native_takeaways(nat: pd.DataFrame, cpu_count: int | None) -> list[str]:
    """What thread scaling on this host shows, per cipher and implementation (never a median over
    different ones): the speedup at the most threads, at the largest size against the smallest."""
    n = nat[(nat["source"] == "native") & nat["speedup"].notna()] if len(nat) else nat
    if n.empty or n["cores"].nunique() < 2:
        return []
    top = int(n["cores"].max())
    parts, small_slow = [], False
    keys = ["cipher", "key bits", "mode", "implementation", "strategy", "host"]
    several = n["host"].nunique() > 1
    for key, g in n[n["cores"] == top].groupby(keys, sort=True):
        at = g.groupby("bytes")["speedup"].median()
        small, large = at.index.min(), at.index.max()
        text = (f"{key[0]}-{key[1]} {key[2]}, {key[3]} ({key[4]}{f', on {key[5]}' if several else ''}): "
                f"{at[large]:.2f}x at {human_bytes(large)}")
        if small != large:
            text += f", {at[small]:.2f}x at {human_bytes(small)}"
            small_slow |= bool(at[small] < 0.9 * at[large])
        parts.append(text)
    host = f"this host ({cpu_count} CPUs)" if cpu_count else "this host"
    text = f"On {host}, {top} threads over one: " + "; ".join(parts) + "."
    if small_slow:
        text += (" A small buffer is encrypted in microseconds, so starting and joining the threads costs "
                 "as much as the work.")
    impls = sorted(set(n[n["cores"] == top]["implementation"]))
    tabled = [i for i in impls if uses_tables(i)]
    instr = [i for i in impls if i in INSTRUCTION_IMPLS]
    what = [f"{_listed(tabled)}'s tables fit in them"] if tabled else []
    what += [f"{_listed(instr)} {'uses' if len(instr) == 1 else 'use'} the AES instructions and no tables"] \
        if instr else []
    text += (" Each core has its own caches" + (f" ({'; '.join(what)})" if what else "")
             + ", so there is no shared bus to saturate"
             + (f"; with {cpu_count} CPUs the curve cannot show where memory bandwidth would stop it."
                if cpu_count and cpu_count <= 4 else "."))
    return [text]


#: The native implementations that compute the cipher with the CPU's AES instructions (AES-NI, VAES:
#: the S-box in hardware, no lookup tables in memory); table-based ones say so in their names.
INSTRUCTION_IMPLS = ("vaes512", "vaes", "aesni")


def uses_tables(implementation: str) -> bool:
    """Whether a native implementation looks its cipher up in tables in memory (ttable, sptable, table-...)."""
    return "table" in str(implementation)


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


# -- 4b. cache coherence on this CPU (s2mc coherence-native) ----------------------------------------------

def _concurrency_note(c: float) -> str:
    """What a run's thread concurrency says about its figure, in words (empty when they ran together)."""
    if c >= 0.8:
        return ""
    return (f" (the threads were on their CPUs together only {c:.0%} of the time: the machine was busy, so "
            "they contended less than their number says)")


def coherence_native(df: pd.DataFrame) -> tuple[list[str], dict[str, pd.DataFrame]]:
    """The records of `s2mc coherence-native` as sentences and tables (false sharing, ping-pong,
    locks), each cell the median over repeated runs of its configuration; ([], {}) when there are none.

    The experiments are recognised by their metrics (ns_per_increment and false_sharing_ratio,
    round_trip_ns, acquisitions_per_second), and the layouts, increment kinds and locks are read
    from the variants as the records spell them (LAYOUT/INCREMENT, packed-vs-padded/INCREMENT,
    the lock's name), in the order the runs wrote them."""
    nat = df[(df["source"] == "native") & (df["core"] == -1)]
    if nat.empty:
        return [], {}
    med = nat.groupby(["workload", "variant", "cores", "metric"], sort=False)["value"].median()

    def get(workload, variant, cores, metric):
        return med.get((workload, variant, cores, metric), float("nan"))

    def cell(v, fmt):
        return "–" if pd.isna(v) else format(v, fmt)

    def rows_of(metric):
        return nat[nat["metric"] == metric]

    text, tables = [], {}
    per_inc = rows_of("ns_per_increment")
    if len(per_inc):
        wl = per_inc["workload"].iloc[0]
        layouts = list(dict.fromkeys(v.split("/")[0] for v in per_inc["variant"]))
        incs = list(dict.fromkeys(v.split("/")[-1] for v in per_inc["variant"]))
        rows = []
        for inc in incs:
            for t in sorted(per_inc["cores"].unique()):
                ns = [get(wl, f"{layout}/{inc}", t, "ns_per_increment") for layout in layouts]
                if all(pd.isna(v) for v in ns):
                    continue
                ratio = get(wl, f"packed-vs-padded/{inc}", t, "false_sharing_ratio")
                conc = get(wl, f"packed/{inc}", t, "thread_concurrency")
                rows.append({"increment": inc, "threads": int(t),
                             **{f"{layout} ns": cell(v, ".2f") for layout, v in zip(layouts, ns)},
                             "packed / padded": cell(ratio, ".2f"), "concurrency (packed)": cell(conc, ".2f")})
                if t == per_inc["cores"].max() and t > 1 and pd.notna(ratio):
                    text.append(f"False sharing, {inc} increments: {int(t)} threads whose counters share one cache "
                                f"line take {ratio:.2f}x as long per increment as with the counters a line apart"
                                + _concurrency_note(conc) + ".")
        tables["false_sharing"] = pd.DataFrame(rows)
    pp = rows_of("round_trip_ns")
    if len(pp):
        rt, n = float(pp["value"].median()), pp["run_id"].nunique()
        text.append(f"A cache line handed back and forth between two cores: {rt:.1f} ns per round trip "
                    f"(median of {n} run{'s' if n != 1 else ''}), about {rt / 2:.0f} ns per transfer.")
    acq = rows_of("acquisitions_per_second")
    if len(acq):
        wl, kinds = acq["workload"].iloc[0], list(dict.fromkeys(acq["variant"]))
        rows = []
        for t in sorted(acq["cores"].unique()):
            rate = {k: get(wl, k, t, "acquisitions_per_second") for k in kinds}
            conc = {k: get(wl, k, t, "thread_concurrency") for k in kinds}
            rows.append({"threads": int(t), **{f"{k} M/s": cell(rate[k] / 1e6, ".1f") for k in kinds},
                         **{f"{k} concurrency": cell(conc[k], ".2f") for k in kinds}})
        tables["locks"] = pd.DataFrame(rows)
        top = int(acq["cores"].max())
        if top > 1:
            rates = ", ".join(f"{k} {get(wl, k, top, 'acquisitions_per_second') / 1e6:.1f}" for k in kinds)
            low = min(get(wl, k, top, "thread_concurrency") for k in kinds)
            text.append(f"Spin locks with {top} threads, million acquisitions per second: {rates}"
                        + _concurrency_note(low) + ".")
    return text, tables


# -- 4c. core-to-core latency: this CPU and the simulated mesh (s2mc coherence-native --bench core-to-core) --

#: The records' metric of each side of the core-to-core matrices, and its unit as the sentences write it.
CORE_TO_CORE = {"native": ("core_to_core_ns", "ns"), "sim": ("core_to_core_cycles", "cycles")}


def core_to_core(df: pd.DataFrame) -> list[dict]:
    """The core-to-core matrices in the records: one per CPU (platform and core count) and one per
    simulated mesh size, each cell the median over the runs; the CPU's first. Each is a dict: source,
    title, unit, cores, matrix (a cores x cores array, NaN on the diagonal), runs, and sentence (the
    nearest and farthest pairs and the spread between them, from the cells)."""
    out = []
    for source, (metric, unit) in CORE_TO_CORE.items():
        d = df[(df["source"] == source) & (df["metric"] == metric)]
        for (plat, n), g in d.groupby(["platform", "cores"], sort=True):
            n = int(n)
            m = np.full((n, n), np.nan)
            for variant, v in g.groupby("variant")["value"].median().items():
                i, j = (int(x) for x in variant.split("-"))
                m[i, j] = v
            cells = [(m[i, j], i, j) for i in range(n) for j in range(i + 1, n) if not np.isnan(m[i, j])]
            if not cells:
                continue
            (lo, li, lj), (hi, hi_i, hi_j) = min(cells), max(cells)
            runs = g["run_id"].nunique()
            name = "CPU" if source == "native" else "tile"
            where = f"{plat}, {n} CPUs" if source == "native" else f"the simulated {n}-tile mesh"
            fmt = (lambda x: f"{x:.1f}") if source == "native" else (lambda x: f"{x:g}")
            runs_text = f" (median of {runs} runs)" if runs > 1 else ""
            pairs = g[g["core"] < g["variant"].str.split("-").str[1].astype(int)]
            shaken = int(pairs["disturbed"].sum())
            if shaken:   # a disturbed cell is a lower bound of the machine (docs/native.md)
                runs_text += f" ({shaken} of {len(pairs)} pair measurements disturbed)"
            if len(cells) == 1:
                sentence = (f"On {where}, a cache line takes {fmt(lo)} {unit} one way between {name}s {li} and "
                            f"{lj}, the only pair{runs_text}.")
            else:
                sentence = (f"On {where}, a cache line takes {fmt(lo)} {unit} one way between the nearest pair "
                            f"({name}s {li} and {lj}) and {fmt(hi)} {unit} between the farthest ({name}s {hi_i} "
                            f"and {hi_j}): a spread of {fmt(hi - lo)} {unit} ({hi / lo:.2f}x){runs_text}.")
            out.append(dict(source=source, title=where, unit=unit, cores=n, matrix=m, runs=runs, sentence=sentence,
                            label=name))
    return out
