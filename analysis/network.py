"""The report's networks section (docs/network-lab.md): the programs that ran on a ring or a mesh with
directory coherence, beside the same programs on the snooping bus, read from the records (a run's
variant names its network and its caches, s2mc.common.variants).

    parts = network.report_parts(records_df, out_dir)  # [("p", text) | ("table", DataFrame) | ("img", caption, path)]
    runs = network.network_runs(records_df)            # one row per run: counters and the shares below

Every sentence is computed from the runs it describes. Runs are told apart by their whole variant, so
two machines that differ in any parameter are two rows, never one.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from s2mc.analysis import derive
from s2mc.common.variants import parse_cache_part, parse_network_part

#: The whole-run counters the section reads (a run lacks those of the other interconnect: left empty).
METRICS = ["cycles", "instructions", "stall_cycles", "mem_writes", "mem_latency", "bus_utilisation", "bus_rd",
           "bus_rdx", "bus_upgr", "bus_upd", "invalidations_received", "dir_misses", "miss_cycles",
           "miss_queueing_cycles", "miss_network_cycles", "miss_home_cycles", "messages_sent", "flits_sent",
           "message_hops", "invalidations_sent", "home_busy_cycles"]
#: Per-tile counters: the busiest home, and each core's misses for the latency-against-distance plot.
TILE_METRICS = ["home_busy_cycles", "dir_misses", "miss_cycles", "message_hops", "messages_sent"]
#: The program whose every core makes one miss in turn (workloads/asm/miss_distance.s).
DISTANCE_PROGRAM = "miss_distance"
#: Interconnects in the order the tables list them.
ORDER = ["bus", "ring", "mesh"]


def machine_of(variant: str) -> dict:
    """What a variant says about the machine: interconnect, coherence, protocol, line words and the
    network's shape (the bus's defaults when it names no network), and the variant without those parts."""
    parts = [p for p in str(variant).split("/") if p]
    net = next((parse_network_part(p) for p in parts if parse_network_part(p)), None)
    cache = next((parse_cache_part(p) for p in parts if parse_cache_part(p)), None)
    rest = "/".join(p for p in parts if not parse_network_part(p) and not parse_cache_part(p))
    return {"interconnect": net["interconnect"] if net else "bus",
            "coherence": net["coherence"] if net else "snoop",
            "protocol": cache["cache"] if cache else "none",
            "line_words": cache["line_words"] if cache else None,
            "router_latency": net["router_latency"] if net else None,
            "link_latency": net["link_latency"] if net else None,
            "flit_words": net["flit_words"] if net else None,
            "rest": rest}


def zero_load_miss(hops: int, *, router_latency: int, link_latency: int, mem_latency: int, line_words: int,
                   flit_words: int) -> int:
    """A read miss to a line in no cache at zero load (docs/timing-model.md, "Worked examples"):
    T(h, 1) + L + T(h, F_data), with T(h, F) = (h+1)·R + h·Lk + F and F_data = ⌈(1 + W) / flit_words⌉."""
    def t(h: int, flits: int) -> int:
        return (h + 1) * router_latency + h * link_latency + flits
    return t(hops, 1) + mem_latency + t(hops, math.ceil((1 + line_words) / flit_words))


def _label(m: dict) -> str:
    proto = m["protocol"].upper()
    return f"bus, snoop {proto}" if m["interconnect"] == "bus" else f"{m['interconnect']}, directory {proto}"


def network_runs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per simulated run of a (workload, variant without its cache and network parts, bytes)
    that ran on a ring or a mesh at least once, with the bus runs of the same program (with caches):
    its counters, `machine` (a label, the whole variant when two variants would share it),
    `interconnect`, and derived figures: `stall_per_core`, `traffic` (bus transactions or network
    messages), `broadcasts` (BusRdX + BusUpgr, each seen by every cache), `invals` (copies invalidated:
    received on the bus, Inv messages sent by the homes), `invals_per_write`, the shares of the miss
    cycles spent queueing and at the home, and the busiest home (`hot_tile`, `hot_util`)."""
    sim = df[(df["source"] == "sim")] if len(df) else df
    if sim.empty:
        return pd.DataFrame()
    keys = ["run_id", "experiment", "workload", "variant", "bytes", "cores"]
    w = derive.wide(sim[sim["core"] == -1], METRICS, index=keys)
    if w.empty:
        return w
    for m in METRICS:
        if m not in w:
            w[m] = float("nan")
    info = pd.DataFrame([machine_of(v) for v in w["variant"]], index=w.index)
    w = pd.concat([w, info], axis=1)
    w = w[(w["protocol"] != "none") & (w["workload"] != DISTANCE_PROGRAM)]   # that one has its own table
    netted = set(map(tuple, w[w["interconnect"] != "bus"][["workload", "rest", "bytes"]].values))
    w = w[[k in netted for k in map(tuple, w[["workload", "rest", "bytes"]].values)]].copy()
    if w.empty:
        return w
    # a program's machines by interconnect and protocol; by the whole variant where two of its variants
    # would share that name (two cache shapes, two network shapes)
    w["machine"] = [_label(machine_of(v)) for v in w["variant"]]
    shared = w.groupby(["workload", "rest", "bytes", "machine"])["variant"].transform("nunique") > 1
    w.loc[shared, "machine"] = [f"{m} ({v})" for m, v in zip(w.loc[shared, "machine"], w.loc[shared, "variant"])]
    bus = w["interconnect"] == "bus"
    w["stall_per_core"] = w["stall_cycles"] / w["cores"]
    w["traffic"] = (w[["bus_rd", "bus_rdx", "bus_upgr", "bus_upd"]].sum(axis=1)).where(bus, w["messages_sent"])
    w["broadcasts"] = (w["bus_rdx"] + w["bus_upgr"]).where(bus)
    w["invals"] = w["invalidations_received"].where(bus, w["invalidations_sent"])
    w["invals_per_write"] = w["invals"] / w["mem_writes"]
    w["queueing_share"] = w["miss_queueing_cycles"] / w["miss_cycles"]
    w["home_share"] = w["miss_home_cycles"] / w["miss_cycles"]
    tiles = derive.wide(sim[(sim["core"] >= 0) & sim["run_id"].isin(w["run_id"])], ["home_busy_cycles"],
                        index=["run_id", "core"])
    if "home_busy_cycles" in tiles:
        top = tiles.sort_values(["run_id", "home_busy_cycles", "core"], ascending=[True, False, True]) \
            .groupby("run_id").head(1).set_index("run_id")
        w["hot_tile"] = w["run_id"].map(top["core"])
        w["hot_util"] = w["run_id"].map(top["home_busy_cycles"]) / w["cycles"]
    else:
        w["hot_tile"] = w["hot_util"] = float("nan")
    w["_order"] = [ORDER.index(i) if i in ORDER else len(ORDER) for i in w["interconnect"]]
    w = w.sort_values(["workload", "rest", "bytes", "_order", "variant", "cores"]).drop(columns="_order")
    return w.reset_index(drop=True)


def _pivot(runs: pd.DataFrame, value: str, fmt) -> pd.DataFrame:
    order = list(dict.fromkeys(runs["machine"]))
    t = runs.pivot_table(index="machine", columns="cores", values=value, aggfunc="median", observed=True)
    t = t.reindex([m for m in order if m in t.index])
    out = t.apply(lambda col: col.map(lambda v: "–" if pd.isna(v) else fmt(v)))
    out.columns = [f"{int(c)} cores" for c in t.columns]
    return out.reset_index()


def _int(v) -> str:
    return f"{v:,.0f}"


def _name(workload, rest, nbytes) -> str:
    return f"{workload}" + (f" ({rest})" if rest else "") + (f", {int(nbytes)} bytes" if nbytes else "")


def _scaling(g: pd.DataFrame) -> list[tuple]:
    """Stall cycles per core, cycles and traffic as cores grow, a row per machine; then the sentence of
    where each network's stalls stand against the bus's at the most cores all of them ran."""
    out = [("p", "Stall cycles per core (rows: the machine):"), ("table", _pivot(g, "stall_per_core", _int)),
           ("p", "Cycles:"), ("table", _pivot(g, "cycles", _int)),
           ("p", "Traffic: bus transactions (BusRd + BusRdX + BusUpgr + BusUpd) on the bus, messages on a "
                 "ring or a mesh:"), ("table", _pivot(g, "traffic", _int))]
    common = _common_cores(g)
    at = g[g["cores"] == common].groupby("machine", sort=False)[["stall_per_core", "interconnect"]].first()
    bus = at[at["interconnect"] == "bus"]
    if len(bus) == 1 and len(at) > 1:
        b = bus["stall_per_core"].iloc[0]
        said = [f"{m} {r['stall_per_core'] / b:.2f}x" for m, r in at.iterrows() if r["interconnect"] != "bus"]
        out.append(("p", f"On {common} cores a core stalls {b:,.0f} cycles on the bus; against that, "
                         + ", ".join(said) + "."))
    return out


def _common_cores(g: pd.DataFrame) -> int:
    """The most cores at which every machine of `g` ran (else at which the most did)."""
    per = g.groupby("cores")["machine"].nunique()
    return int(per[per == per.max()].index.max())


def _traffic(g: pd.DataFrame) -> list[tuple]:
    """Snooping against the directory on one program at one core count: what each write costs."""
    top = _common_cores(g)
    at = g[g["cores"] == top]
    rows = []
    for _, r in at.groupby("machine", sort=False).first().iterrows():
        bus = r["interconnect"] == "bus"
        rows.append({"machine": r.name, "cycles": _int(r["cycles"]), "writes": _int(r["mem_writes"]),
                     "bus transactions / messages": _int(r["traffic"]),
                     "broadcast invalidations (BusRdX + BusUpgr)": _int(r["broadcasts"]) if bus else "–",
                     "copies invalidated": _int(r["invals"]),
                     "invalidations per write": f"{r['invals_per_write']:.2f}",
                     "queueing share of miss cycles": "–" if bus else f"{r['queueing_share']:.1%}"})
    return [("p", f"Snooping against the directory on {top} cores: on the bus every BusRdX or BusUpgr is seen "
                  "by every cache, and each valid copy it meets is one invalidation received; on a network the "
                  "home sends one Inv to each sharer it records:"), ("table", pd.DataFrame(rows))]


def _hot(g: pd.DataFrame) -> list[tuple]:
    """The busiest home of every network run: its tile, its utilisation, and how much of a miss is
    spent queueing and at the home."""
    d = g[g["interconnect"] != "bus"]
    if d.empty:
        return []
    t = d.assign(hot=[f"{int(t)} ({u:.1%})" for t, u in zip(d["hot_tile"], d["hot_util"])])
    rows = []
    for (machine, cores), r in t.groupby(["machine", "cores"], sort=False).first().iterrows():
        rows.append({"machine": machine, "cores": int(cores), "busiest home (utilisation)": r["hot"],
                     "miss cycles / miss": f"{r['miss_cycles'] / r['dir_misses']:.1f}",
                     "queueing share": f"{r['queueing_share']:.1%}", "home share": f"{r['home_share']:.1%}"})
    return [("p", "The homes: the busiest home tile (its busy cycles / total cycles), and the shares of the "
                  "miss cycles spent queueing for ports and at the home (its queue and occupancy):"),
            ("table", pd.DataFrame(rows))]


def hot_spot_pairs(runs: pd.DataFrame) -> list[str]:
    """Sentences comparing, at one machine and core count, the program with the busiest home against
    each other program: its busiest home's utilisation and its cycles."""
    d = runs[runs["interconnect"] != "bus"]
    out = []
    for (machine, cores), g in d.groupby(["machine", "cores"], sort=False):
        if g["workload"].nunique() < 2 or cores != d[d["machine"] == machine]["cores"].max():
            continue
        g = g.sort_values("hot_util", ascending=False)
        hot = g.iloc[0]
        others = "; ".join(f"{r['workload']} {r['hot_util']:.1%} (home {int(r['hot_tile'])}), "
                           f"{r['cycles']:,.0f} cycles" for _, r in g.iloc[1:].iterrows())
        out.append(f"On the {machine} of {int(cores)} cores the busiest home is {hot['workload']}'s: tile "
                   f"{int(hot['hot_tile'])}, busy {hot['hot_util']:.1%} of its {hot['cycles']:,.0f} cycles, and "
                   f"{hot['queueing_share']:.1%} of its miss cycles are queueing. The others: {others}.")
    return out


def distance_points(df: pd.DataFrame) -> pd.DataFrame:
    """Every core that missed in a network run of DISTANCE_PROGRAM: its hops to the home
    (message_hops / dir_misses: the program's cores send nothing but their GetS, and the home's tile
    makes no miss), its miss's latency (miss_cycles / dir_misses), and the zero-load formula's latency
    for those hops on that run's machine."""
    sim = df[(df["source"] == "sim") & (df["workload"] == DISTANCE_PROGRAM)] if len(df) else df
    if sim.empty:
        return pd.DataFrame()
    w = derive.wide(sim, TILE_METRICS + ["mem_latency"], index=["run_id", "variant", "cores", "core"])
    lat = w[w["core"] == -1].set_index("run_id")["mem_latency"] if "mem_latency" in w else pd.Series(dtype=float)
    w = w[(w["core"] >= 0)].copy()
    if w.empty or "dir_misses" not in w:
        return pd.DataFrame()
    w = w[w["dir_misses"] > 0]
    info = [machine_of(v) for v in w["variant"]]
    w["machine"] = [f"{_label(m)}, {int(n)} cores" for m, n in zip(info, w["cores"])]
    w["hops"] = w["message_hops"] / w["dir_misses"]
    w["latency"] = w["miss_cycles"] / w["dir_misses"]
    w["formula"] = [zero_load_miss(int(h), router_latency=m["router_latency"], link_latency=m["link_latency"],
                                   mem_latency=int(lat[r]), line_words=m["line_words"], flit_words=m["flit_words"])
                    for h, m, r in zip(w["hops"], info, w["run_id"])]
    return w.reset_index(drop=True)


def distance_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per machine and hop count: the cores at that distance, their measured latency (the range when
    they differ) and the formula's."""
    rows = []
    for (machine, hops), g in points.groupby(["machine", "hops"], sort=False):
        lo, hi = g["latency"].min(), g["latency"].max()
        rows.append({"machine": machine, "hops": int(hops), "cores": len(g),
                     "measured cycles": f"{lo:.0f}" if lo == hi else f"{lo:.0f}–{hi:.0f}",
                     "formula": int(g["formula"].iloc[0])})
    return pd.DataFrame(rows).sort_values(["machine", "hops"], kind="stable")


def plot_distance(points: pd.DataFrame, path: Path) -> Path | None:
    """Measured miss latency against hops (points), the formula beside them (a line), a panel per machine."""
    if points.empty:
        return None
    from s2mc.analysis.plots import _save, plt
    machines = list(dict.fromkeys(points["machine"]))
    fig, axes = plt.subplots(1, len(machines), figsize=(4.2 * len(machines), 3.4), squeeze=False)
    for ax, machine in zip(axes[0], machines):
        g = points[points["machine"] == machine]
        f = g.groupby("hops")["formula"].first()
        ax.plot(f.index, f.values, "-", color="grey", label="T(h,1) + L + T(h,F_data)")
        ax.plot(g["hops"], g["latency"], "o", ms=4, alpha=0.7, label="measured, one point a core")
        ax.set(title=machine, xlabel="hops to the home", ylabel="cycles per miss")
        ax.legend()
    return _save(fig, path)


def plot_stalls(runs: pd.DataFrame, path: Path) -> Path | None:
    """Stall cycles per core against cores: a panel per program, a line per machine (one colour per
    interconnect in every panel)."""
    if runs.empty or runs["cores"].nunique() < 2:
        return None
    from s2mc.analysis.plots import _save, plt
    programs = list(dict.fromkeys(zip(runs["workload"], runs["rest"], runs["bytes"])))
    cols = min(len(programs), 2)
    rows = -(-len(programs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 3.6 * rows), squeeze=False)
    machines = list(dict.fromkeys(runs["machine"]))
    colour = {m: f"C{i}" for i, m in enumerate(machines)}
    for ax, key in zip(axes.flat, programs):
        g = runs[(runs["workload"] == key[0]) & (runs["rest"] == key[1]) & (runs["bytes"] == key[2])]
        for machine, m in g.groupby("machine", sort=False):
            m = m.groupby("cores")["stall_per_core"].median()
            ax.plot(m.index, m.values, marker="o", color=colour[machine], label=machine)
        cores = sorted(g["cores"].unique())
        ax.set(xscale="log", yscale="log", xlabel="cores", ylabel="stall cycles per core", title=_name(*key))
        ax.minorticks_off()
        ax.set_xticks(cores, [str(int(c)) for c in cores])
        ax.legend()
    for ax in list(axes.flat)[len(programs):]:
        ax.set_visible(False)
    return _save(fig, path)


def report_parts(df: pd.DataFrame, out: Path | None = None) -> list[tuple]:
    """The section's paragraphs, tables and figures: ("p", text), ("table", DataFrame) and, with `out`,
    ("img", caption, path)."""
    runs = network_runs(df)
    points = distance_points(df)
    if runs.empty and points.empty:
        return [("p", "No runs on a ring or a mesh in these results. The network lab (docs/network-lab.md) "
                      "makes them: `s2mc sweep network_lab --out results/network.parquet`.")]
    parts: list[tuple] = []
    for (workload, rest, nbytes), g in runs.groupby(["workload", "rest", "bytes"], sort=False):
        parts.append(("p", f"**{_name(workload, rest, nbytes)}**"))
        parts += _scaling(g) + _traffic(g) + _hot(g)
    parts += [("p", text) for text in hot_spot_pairs(runs)]
    if out is not None:
        p = plot_stalls(runs, out / "network_stalls.png")
        if p is not None:
            parts.append(("img", "Stall cycles per core against cores, each program on the bus (snooping) and on "
                                 "the ring and the mesh (directory)", p))
    if not points.empty:
        parts.append(("p", f"**The latency of a miss against the distance to its home** ({DISTANCE_PROGRAM}: every "
                           "core but the home's makes one miss in turn, to lines homed at tile 0): measured beside the "
                           "zero-load formula T(h,1) + L + T(h,F_data), T(h,F) = (h+1)·R + h·Lk + F "
                           "(docs/timing-model.md)."))
        parts.append(("table", distance_table(points)))
        off = points[points["latency"] != points["formula"]]
        parts.append(("p", f"{len(points) - len(off)} of the {len(points)} misses take exactly the formula's cycles"
                           + (f"; the others differ by up to {(off['latency'] - off['formula']).abs().max():.0f}."
                              if len(off) else ".")))
        if out is not None:
            p = plot_distance(points, out / "network_distance.png")
            parts.append(("img", "Miss latency against hops to the home: measured (points) and the formula (line)",
                          p))
    return parts
