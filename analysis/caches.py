"""The report's caches section (docs/analysis.md): simulated runs with private caches beside the
cacheless machine of seed 003, read from the records (a run's variant names its cache configuration,
s2mc.common.variants).

    parts = caches.report_parts(records_df)   # [("p", text) | ("table", DataFrame), ...]

Every sentence is computed from the runs it describes.
"""
from __future__ import annotations

import pandas as pd

from s2mc.analysis import derive
from s2mc.common.variants import parse_cache_part

#: The whole-run counters the section reads (those a run lacks are left empty).
METRICS = ["cycles", "instructions", "stall_cycles", "mem_accesses", "bus_utilisation", "cache_hits", "cache_misses",
           "coherence_misses", "true_sharing_misses", "false_sharing_misses", "invalidations_received", "writebacks", "bus_rd", "bus_rdx",
           "bus_upgr", "bus_upd", "cache_to_cache"]
#: Protocols in the order the tables list them; `none` is the cacheless machine.
ORDER = ["none", "msi", "mesi", "moesi", "dragon"]
#: The lab programs (workloads/asm/) whose runs get tables of their own, and what they show.
LAB = {"false_sharing": "every core's counter one word from the next core's",
       "spin_lock": "TAS: xchg in the loop", "ttas_lock": "TTAS: spin on a load, then xchg",
       "ticket_lock": "ticket lock: take a ticket (an xchg-guarded dispenser), then spin on a load",
       "ping_pong": "a line handed back and forth"}
#: The locks compared in one table, in this order.
LOCKS = ["spin_lock", "ttas_lock", "ticket_lock"]


def split_variant(variant: str) -> tuple[str, str, str]:
    """(the protocol, or 'none'; the whole cache part, protocol and shape, or 'none'; the variant without
    its cache part). The cache part is the key: two shapes of one protocol are two configurations."""
    parts = [p for p in str(variant).split("/") if p]
    part = next((p for p in parts if parse_cache_part(p)), None)
    rest = "/".join(p for p in parts if not parse_cache_part(p))
    return (parse_cache_part(part)["cache"] if part else "none"), (part or "none"), rest


def shape_words(part: str) -> str:
    """A cache part's shape in words: 'mesi-512x4-w4' -> '512 lines x 4 ways of 4-word lines (8 KiB)'."""
    c = parse_cache_part(part)
    kib = c["cache_lines"] * c["line_words"] * 4 / 1024
    size = f"{kib:g} KiB" if kib >= 1 else f"{c['cache_lines'] * c['line_words'] * 4} bytes"
    hit = f", hits take {c['cache_hit_latency']} cycles" if c["cache_hit_latency"] != 1 else ""
    return f"{c['cache_lines']} lines x {c['cache_ways']} ways of {c['line_words']}-word lines ({size}){hit}"


def protocols(df: pd.DataFrame) -> list[str]:
    """The protocols the simulated runs in `df` used, in ORDER ('none' excluded)."""
    sim = df[(df["source"] == "sim")] if len(df) else df
    found = {split_variant(v)[0] for v in set(sim["variant"])} if len(sim) else set()
    return [p for p in ORDER if p in found and p != "none"] + sorted(found - set(ORDER))


def section_title(df: pd.DataFrame) -> str:
    """'Caches and coherence: MESI and Dragon against no caches', naming the protocols the records hold."""
    names = [p.upper() if p != "dragon" else "Dragon" for p in protocols(df)]
    if not names:
        return "Caches and coherence"
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"Caches and coherence: {listed} against no caches"


def cache_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per simulated run of a (workload, base variant, bytes) that ran with caches at least
    once: its counters, `protocol`, `base` (the variant without the cache part), `hit_rate`, and
    `speedup` over the same configuration's cacheless 1-core run (or, without one, its own)."""
    sim = df[(df["source"] == "sim") & (df["core"] == -1)] if len(df) else df
    if sim.empty:
        return pd.DataFrame()
    w = derive.wide(sim, METRICS, index=["run_id", "experiment", "workload", "variant", "bytes", "cores"])
    for m in METRICS:
        if m not in w:
            w[m] = float("nan")
    split = [split_variant(v) for v in w["variant"]]
    w["protocol"], w["cache_part"], w["base"] = ([x[i] for x in split] for i in range(3))
    cached_keys = set(map(tuple, w[w["protocol"] != "none"][["workload", "base", "bytes"]].values))
    w = w[[k in cached_keys for k in map(tuple, w[["workload", "base", "bytes"]].values)]].copy()
    if w.empty:
        return w
    w["hit_rate"] = w["cache_hits"] / (w["cache_hits"] + w["cache_misses"])

    def one_core(row) -> float:
        same = w[(w["workload"] == row["workload"]) & (w["base"] == row["base"]) & (w["bytes"] == row["bytes"])
                 & (w["cores"] == 1)]
        for part in ("none", row["cache_part"]):
            c = same[same["cache_part"] == part]["cycles"]
            if len(c):
                return float(c.median())
        return float("nan")
    w["speedup"] = w.apply(one_core, axis=1) / w["cycles"]
    w["protocol"] = pd.Categorical(w["protocol"], [p for p in ORDER if p in set(w["protocol"])] +
                                   sorted(set(w["protocol"]) - set(ORDER)), ordered=True)
    shape = [tuple(parse_cache_part(p).values())[1:] if p != "none" else () for p in w["cache_part"]]
    w["_shape"] = pd.Categorical(shape, sorted(set(shape)), ordered=True)    # 64 lines before 512
    w = w.sort_values(["workload", "base", "bytes", "protocol", "_shape", "cores"]).drop(columns="_shape")
    w = w.reset_index(drop=True)
    # a row per cache configuration: the protocol's name when the program ran one shape of it, with the
    # shape when it ran several
    shapes = w.groupby(["workload", "base", "bytes", "protocol"], observed=True)["cache_part"].transform("nunique")
    w["caches"] = [str(proto) if proto == "none" or n == 1 else f"{proto} {part.split('-', 1)[1]}"
                   for proto, part, n in zip(w["protocol"], w["cache_part"], shapes)]
    shape = [tuple(parse_cache_part(p).values())[1:] if p != "none" else () for p in w["cache_part"]]
    order = sorted({(code, sh, lab) for code, sh, lab in zip(w["protocol"].cat.codes, shape, w["caches"])})
    w["caches"] = pd.Categorical(w["caches"], list(dict.fromkeys(lab for *_, lab in order)), ordered=True)
    return w


def speedup_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One program's speedup over its cacheless 1-core run: a row per protocol, a column per core count."""
    return _pivot(runs, "speedup", lambda v: f"{v:.2f}")


def cycles_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One program's cycles: a row per protocol, a column per core count. For a lab program (LAB),
    whose every core does the same work, a speedup over one core would mean nothing."""
    return _pivot(runs, "cycles", lambda v: f"{v:,.0f}")


def _pivot(runs: pd.DataFrame, value: str, fmt) -> pd.DataFrame:
    t = runs.pivot_table(index="caches", columns="cores", values=value, aggfunc="median", observed=True)
    out = t.apply(lambda col: col.map(lambda v: "–" if pd.isna(v) else fmt(v)))
    out.columns = [f"{int(c)} core{'s' if c != 1 else ''}" for c in t.columns]
    return out.reset_index()


def _upper(label) -> str:
    """A cache configuration's row label with its protocol in capitals: 'mesi 512x4-w4' -> 'MESI 512x4-w4'."""
    proto, _, shape = str(label).partition(" ")
    return proto.upper() + (f" {shape}" if shape else "")


def comparison_cores(runs: pd.DataFrame) -> int:
    """The most cores at which every cache configuration of `runs` ran (else at which the most did)."""
    per = runs.groupby("cores")["caches"].nunique()
    return int(per[per == per.max()].index.max())


def _comparison(runs: pd.DataFrame, cores: int) -> pd.DataFrame:
    """The cache configurations side by side at one core count: time, traffic and what caused it."""
    at = runs[runs["cores"] == cores].groupby("caches", observed=True)[METRICS + ["hit_rate", "speedup"]].median()
    rows = []
    for proto, r in at.iterrows():
        cached = proto != "none"
        cell = lambda m: "–" if not cached or pd.isna(r[m]) else f"{r[m]:,.0f}"   # noqa: E731
        rows.append({"caches": proto, "cycles": f"{r['cycles']:,.0f}", "speedup": f"{r['speedup']:.2f}",
                     "bus util": f"{r['bus_utilisation']:.0%}", "bus transactions": f"{r['mem_accesses']:,.0f}",
                     "hit rate": f"{r['hit_rate']:.1%}" if cached else "–",
                     "misses": cell("cache_misses"), "coherence (true / false sharing)":
                         "–" if not cached else (f"{r['coherence_misses']:,.0f} ({r['true_sharing_misses']:,.0f} / "
                                                 f"{r['false_sharing_misses']:,.0f})"),
                     "invalidations": cell("invalidations_received"), "write-backs": cell("writebacks"),
                     "BusUpd": cell("bus_upd")})
    return pd.DataFrame(rows)


def _knee(runs: pd.DataFrame) -> list[str]:
    """Where each protocol's speedup stops growing, and why, in sentences from the runs."""
    out = []
    best = {}
    for proto, g in runs.groupby("caches", observed=True):
        g = g.groupby("cores")[["speedup", "bus_utilisation", "hit_rate", "mem_accesses", "instructions",
                                "cache_misses"]].median().dropna(subset=["speedup"])
        if g.empty:     # no 1-core run to measure a speedup against: nothing to say
            continue
        top = g["speedup"].idxmax()
        # the knee: the first core count after which doubling the cores gains less than a quarter
        counts = list(g.index)
        knee = next((n for n, m in zip(counts, counts[1:]) if g.loc[m, "speedup"] < 1.25 * g.loc[n, "speedup"]),
                    counts[-1])
        best[proto] = (top, g.loc[top, "speedup"], knee, g)
    for proto, (top, s, knee, g) in best.items():
        util = g.loc[knee, "bus_utilisation"]
        who = "No caches" if proto == "none" else _upper(proto)
        if knee == g.index[0]:
            text = (f"**{who}**: the speedup over one cacheless core does not grow by a quarter when the cores "
                    f"double (bus busy {util:.0%} on {knee}); it peaks at {s:.2f} on {top}.")
        else:
            text = (f"**{who}**: the speedup over one cacheless core grows by a quarter or more per doubling up "
                    f"to {knee} cores (bus busy {util:.0%} there) and peaks at {s:.2f} on {top}.")
        if proto != "none":
            per = g["mem_accesses"] / g["instructions"]
            text += (f" On {knee} core{'s' if knee != 1 else ''} {g.loc[knee, 'hit_rate']:.1%} of its accesses hit "
                     f"the core's own cache, so a core uses the bus {per.loc[knee]:.3f} times per instruction")
            if "none" in best:
                ng = best["none"][3]
                if knee in ng.index:
                    text += (f" against {ng.loc[knee, 'mem_accesses'] / ng.loc[knee, 'instructions']:.3f} without "
                             "caches")
            last = g.index[-1]
            if last != knee:   # what stops it: every core fills its own copy of what it reads
                text += (f". On {last} cores each core still misses {g.loc[last, 'cache_misses'] / last:,.0f} times "
                         f"(its own copy of every line it reads is filled once) and the bus is "
                         f"{g.loc[last, 'bus_utilisation']:.0%} busy")
            text += "."
        out.append(text)
    return out


def _locks(runs: pd.DataFrame) -> list[tuple]:
    """TAS against TTAS against the ticket lock as cores grow, under each protocol: cycles, and the
    invalidations every core received (the storm a TAS lock makes)."""
    locks = runs[runs["workload"].isin(LOCKS)]
    if locks["workload"].nunique() < 2:
        return []
    locks = locks.assign(lock=pd.Categorical(locks["workload"], LOCKS, ordered=True))
    out = [("p", "**Spin locks as cores grow** (" + "; ".join(f"{w}: {LAB[w]}" for w in LOCKS
                                                          if w in set(locks["workload"])) + "), cycles:")]
    for value, fmt, what in [("cycles", "{:,.0f}", None),
                             ("invalidations_received", "{:,.0f}", "Invalidations received, summed over the cores "
                                                                   "(the invalidation storm of a TAS lock):")]:
        if what:
            out.append(("p", what))
        t = locks.pivot_table(index=["lock", "caches"], columns="cores", values=value, aggfunc="median",
                              observed=True)
        if value != "cycles":
            t = t.drop(index=[i for i in t.index if i[1] == "none"])
        t = t.apply(lambda col: col.map(lambda v: "–" if pd.isna(v) else fmt.format(v)))
        t.columns = [f"{int(c)} core{'s' if c != 1 else ''}" for c in t.columns]
        out.append(("table", t.reset_index()))
    top = int(locks["cores"].max())
    at = locks[locks["cores"] == top].groupby(["caches", "lock"], observed=True)["cycles"].median()
    for proto in at.index.get_level_values(0).unique():
        row = at[proto]
        if len(row) > 1:
            best, worst = row.idxmin(), row.idxmax()
            out.append(("p", f"On {top} cores with {'no caches' if proto == 'none' else _upper(proto) + ' caches'}, "
                             f"{best} is the fastest ({row[best]:,.0f} cycles) and {worst} the slowest "
                             f"({row[worst] / row[best]:.2f}x as long)."))
    return out


def report_parts(df: pd.DataFrame) -> list[tuple]:
    """The section's paragraphs and tables: ("p", text) and ("table", DataFrame)."""
    runs = cache_runs(df)
    if runs.empty:
        return [("p", "No simulator runs with caches in these results. Add the T-table AES with each protocol "
                      "with `s2mc sweep aes_caches`, or a lab program with `s2mc run workloads/asm/ttas_lock.s "
                      "--cores 1,2,4,8 --cache mesi --out ...`.")]
    parts: list[tuple] = []
    for (workload, base, nbytes), g in runs.groupby(["workload", "base", "bytes"], sort=False):
        name = f"{workload}" + (f" ({base})" if base else "") + (f", {int(nbytes)} bytes" if nbytes else "")
        what = LAB.get(str(workload))
        parts.append(("p", f"**{name}**" + (f": {what}" if what else "")))
        shapes = dict.fromkeys(p for p in g["cache_part"] if p != "none")
        if len({shape_words(p) for p in shapes}) == 1:
            parts.append(("p", f"Every core's cache: {shape_words(next(iter(shapes)))}."))
        else:
            parts.append(("p", "The caches: " + "; ".join(f"{c}: {shape_words(p)}" for c, p in dict.fromkeys(
                zip(g["caches"], g["cache_part"])) if p != "none") + "."))
        if what:   # a lab program gives every core the same work: more cores, more work
            parts.append(("p", "Cycles (every core does the same work, so more cores do more of it; rows: the "
                               "caches):"))
            parts.append(("table", cycles_table(g)))
        elif g["speedup"].isna().all():
            parts.append(("p", "Cycles (no run on one core to take a speedup over; rows: the caches):"))
            parts.append(("table", cycles_table(g)))
        else:
            parts.append(("p", "Speedup over the same program on one cacheless core (rows: the caches):"))
            parts.append(("table", speedup_table(g)))
            if g["cores"].nunique() > 2:
                for text in _knee(g):
                    parts.append(("p", text))
        top = comparison_cores(g)
        parts.append(("p", f"The caches side by side on {top} core{'s' if top != 1 else ''} (whole-run sums; a "
                           "coherence miss is on a line the core lost to another core's write, a false-sharing one "
                           "on a word that core did not write):"))
        parts.append(("table", _comparison(g, top)))
    return parts + _locks(runs)
