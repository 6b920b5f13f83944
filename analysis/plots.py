"""PNG plots of records (matplotlib, Agg backend).

Every function takes records frames, writes one PNG and returns its path, or returns None when the
frame holds nothing to plot (the report then leaves the figure out and says why).
"""
from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.lines  # noqa: E402,F401
import matplotlib.patches  # noqa: E402,F401
import matplotlib.ticker  # noqa: E402,F401
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from s2mc.analysis import derive, model, summaries  # noqa: E402
from s2mc.common.outputs import open_output  # noqa: E402
from s2mc.common.errors import S2mcError  # noqa: E402

plt.rcParams.update({"figure.dpi": 110, "font.size": 10, "axes.grid": True, "grid.alpha": 0.3,
                     "axes.titlesize": 11, "legend.fontsize": 8})


human_bytes = summaries.human_bytes


def _save(fig, path: str | os.PathLike) -> Path:
    p = Path(path)
    fig.tight_layout()
    try:
        with open_output(p, "wb", what="plot") as f:
            fig.savefig(f, format="png")
    finally:
        plt.close(fig)
    return p


def _whole(df: pd.DataFrame, source: str | tuple, metric: str) -> pd.DataFrame:
    sources = (source,) if isinstance(source, str) else source
    d = df[df["source"].isin(sources) & (df["metric"] == metric) & (df["core"] == -1)]
    return d


def _lines(ax, d: pd.DataFrame, x="cores", y="value", marker="o", ls="-",
           prefix="", **kw) -> str:
    """One line per configuration (workload, variant, bytes, engine), labelled with what differs between
    them (style, L, policy, data size, implementation); returns the legend title naming those things."""
    keys = ["workload", "variant", "bytes", "engine"]
    # runs of two machines (hosts) or experiments are two lines, never their median: the engine names them
    apart = [c for c in ("platform", "experiment") if c in d and d[c].nunique() > 1]
    groups = list(d.groupby(keys + apart, sort=True))
    labels, title = summaries.legend_labels([(*k[:3], ", ".join(map(str, k[3:]))) for k, _ in groups])
    for (_, g), text in zip(groups, labels):
        g = g.groupby(x, as_index=False)[y].median().sort_values(x)
        ax.plot(g[x], g[y], marker=marker, ls=ls, label=prefix + text, **kw)
    return title


def cycles_and_speedup(df: pd.DataFrame, path, with_model: bool = True) -> Path | None:
    """Simulated cycles (left) and speedup (right) against cores, one line per data size."""
    cyc = _whole(df, "sim", "cycles")
    if cyc.empty or cyc["cores"].nunique() < 2:
        return None
    sp = derive.speedup(df[df["source"] == "sim"])
    sp = sp[sp["metric"] == "speedup"]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.2))
    title = _lines(a1, cyc)
    a1.set_xlabel("simulated cores")
    a1.set_ylabel("total cycles")
    a1.set_yscale("log")
    a1.set_title("Simulated cycles to finish (lower is better)")
    _lines(a2, sp)
    nmax = int(cyc["cores"].max())
    xs = np.arange(1, nmax + 1)
    a2.plot(xs, xs, ls=":", color="grey", label="ideal (speedup = cores)")
    if with_model:
        models = model.fit_records(df[df["source"] == "sim"])
        if models:
            m = max(models.values(), key=lambda mm: mm.accesses)
            a2.plot(xs, [m.speedup(int(n)) for n in xs], ls="--", color="black",
                    label=f"bus model (Z={m.think:.2f}, L={m.service:g})")
    a2.set_ylim(0, max(2.0, float(sp["value"].max()) * 1.3 if len(sp) else 2.0))
    a2.set_xlabel("simulated cores")
    a2.set_ylabel("speedup over 1 core (x)")
    a2.set_title("Speedup: the shared bus saturates")
    for a in (a1, a2):
        if nmax > 8:
            a.set_xscale("log", base=2)
    a1.legend(title=title)
    a2.legend(title=title)
    return _save(fig, path)


_STALL_PARTS = [("compute_cycles", "compute (1 cycle/instr)", "#4C72B0"),
                ("bus_wait_cycles", "bus wait (contention)", "#DD5555"),
                ("mem_latency_cycles", "memory latency (L-1 per access)", "#EEAA44"),
                ("sync_wait_cycles", "barrier wait", "#999999")]


def _stall_per_core(df: pd.DataFrame) -> pd.DataFrame:
    """Per-core rows (whole-run rows when there are none) with the four parts of the core-cycles."""
    sim = derive.derive_all(df[df["source"] == "sim"]) if (df["source"] == "sim").any() else df
    w = derive.wide(sim[sim["source"] == "sim"], [p[0] for p in _STALL_PARTS])
    if w.empty or "compute_cycles" not in w:
        return pd.DataFrame()
    for p in _STALL_PARTS:
        if p[0] not in w:
            w[p[0]] = 0.0
    w = w.fillna(0.0)
    per_core = w[w["core"] >= 0]
    return per_core if len(per_core) else w[w["core"] == -1]


def stall_shares(df: pd.DataFrame) -> pd.DataFrame:
    """Per core count, each part's share (%) of the core-cycles of the runs in `df`, which must be one
    configuration (summaries.stall_subject): runs of two would be averaged into bars of neither."""
    pc = _stall_per_core(df)
    if pc.empty:
        return pc
    keys = pc[["workload", "variant", "engine", "bytes", "experiment"]].drop_duplicates()
    if len(keys) > 1:
        raise S2mcError(f"plots: stall_shares: {len(keys)} configurations given, one expected")
    totals = pc.groupby("cores")[[p[0] for p in _STALL_PARTS]].sum() / \
        pc.groupby("cores")["run_id"].nunique().values[:, None]
    # Shares, not sums: core-cycles grow with the core count, and absolute bars would make the
    # 1-4 core runs slivers beside 64 cores.
    return totals.div(totals.sum(axis=1), axis=0) * 100


def stall_breakdown(df: pd.DataFrame, path, config: str = "") -> Path | None:
    """Stacked bars of core-cycles per core count: compute, bus wait, memory latency, sync wait, for the
    one configuration in `df` (`config`: its label, for the title).

    Core-cycles are summed over all cores (per-core rows), so a bar is the total work of the run;
    the right panel splits the largest run of at most 8 cores per core.
    """
    parts = _STALL_PARTS
    pc = _stall_per_core(df)
    if pc.empty:
        return None
    shares = stall_shares(df)
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.4), gridspec_kw={"width_ratios": [3, 2]})
    x = np.arange(len(shares))
    bottom = np.zeros(len(shares))
    for name, label, color in parts:
        vals = shares[name].to_numpy()
        a1.bar(x, vals, bottom=bottom, color=color, label=label)
        for xi, (v, b0) in enumerate(zip(vals, bottom)):
            if v >= 8:       # the number on every slice big enough to hold it
                a1.text(xi, b0 + v / 2, f"{v:.0f}%", ha="center", va="center", fontsize=7, color="white")
        bottom += vals
    a1.set_xticks(x, [str(c) for c in shares.index])
    a1.set_ylim(0, 100)
    a1.set_xlabel("simulated cores")
    a1.set_ylabel("share of core-cycles (%)")
    a1.set_title(f"Where the cycles go ({config or human_bytes(int(pc['bytes'].max()))}), all cores together")
    a1.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=7)
    detail = pc[pc["core"] >= 0]
    small = detail[detail["cores"] <= 8]
    if not small.empty:
        n = 4 if 4 in set(small["cores"]) else int(small["cores"].max())   # 4 cores: the seed's largest
        one = small[small["cores"] == n]
        one = one[one["run_id"] == one["run_id"].iloc[0]].sort_values("core")
        bottom = np.zeros(len(one))
        for name, label, color in parts:
            vals = one[name].to_numpy()
            a2.bar(one["core"], vals, bottom=bottom, color=color)
            bottom += vals
        a2.set_xlabel("core")
        a2.set_ylabel("cycles")
        a2.set_title(f"Per core, {n} cores")
        a2.set_xticks(one["core"])
    else:
        a2.set_axis_off()
    return _save(fig, path)


def sim_vs_native(df: pd.DataFrame, path) -> Path | None:
    """Simulated speedup against real OpenMP speedup on this host, with the bus model."""
    # thread scaling only: the seeds' own native runs (sequential and parallel as separate variants,
    # in the report's 4.1-4.5) are not
    sp = derive.speedup(df[df["source"].isin(["sim", "native"])
                           & ~df["experiment"].isin(summaries.SEED_NATIVE_EXPERIMENTS)])
    sp = sp[sp["metric"] == "speedup"]
    sim, nat = sp[sp["source"] == "sim"], sp[sp["source"] == "native"]
    if sim.empty and nat.empty:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.6))
    if not sim.empty:
        size = int(sim["bytes"].max())
        _lines(ax, sim[sim["bytes"] == size], prefix="simulated S2: ")
    if not nat.empty:
        # the two largest sizes in one legend, so that their labels name the size and never repeat
        _lines(ax, nat[nat["bytes"].isin(sorted(nat["bytes"].unique())[-2:])], marker="s", ls="--",
               prefix="native CPU: ")
    nmax = int(sp["cores"].max())
    xs = np.arange(1, max(nmax, 2) + 1)
    ax.plot(xs, xs, ls=":", color="grey", label="ideal")
    models = model.fit_records(df[df["source"] == "sim"])
    if models:
        m = max(models.values(), key=lambda mm: mm.accesses)
        ax.plot(xs, [m.speedup(int(n)) for n in xs], ls="--", color="black", label="bus model")
    # The ideal line would dwarf the measured points: show the range they live in.
    ax.set_ylim(0, max(2.5, float(sp["value"].max()) * 1.3))
    ax.set_xlabel("cores (simulated) / threads (native)")
    ax.set_ylabel("speedup over 1 core (x)")
    ax.set_title("Simulated shared bus vs real multicore")
    if nmax > 8:
        ax.set_xscale("log", base=2)
    ax.legend()
    return _save(fig, path)


_REF_CURVES = [  # (experiment, variant, label)
    ("seed001_table2", "sequential/encryption-only", "seed 001 i5, sequential"),
    ("seed001_table2", "openmp/encryption-only", "seed 001 i5, 4 threads"),
    ("seed001_table2", "gpu/encryption-only", "seed 001 GT 330M"),
    ("seed001_table5", "openmp/encryption-only", "seed 001 i7, 8 threads"),
    ("seed004_table2", "parallel", "seed 004 i7 960, parallel"),
    ("seed004_table2", "gpu", "seed 004 GTX 480"),
    ("seed004_table3", "gpu", "seed 004 Radeon HD 8750M"),
]


def throughput_vs_size(df: pd.DataFrame, reference: pd.DataFrame, path) -> Path | None:
    """Native (and GPU) throughput against data size, beside the seeds' curves (Gbit/s)."""
    ours = derive.throughput(df[df["source"].isin(["native", "cuda", "opencl"])])
    ours = ours[(ours["metric"] == "gbps") & (ours["core"] == -1)]
    ref = derive.throughput(reference)
    ref = ref[ref["metric"] == "gbps"]
    if ours.empty and ref.empty:
        return None
    fig, ax = plt.subplots(figsize=(11.5, 5))
    if not ours.empty:
        # AES only (the seed 002 figure has the other ciphers), encryption timed without file I/O; one
        # line per backend, key size, mode and implementation, never folded together: at each size the
        # best over thread counts and strategies
        ours = ours.reset_index(drop=True)
        parts = pd.DataFrame([summaries.workload_parts(w) for w in ours["workload"]])
        ours = pd.concat([ours.drop(columns=[c for c in parts.columns if c in ours]), parts], axis=1)
        ours = ours[(ours["cipher"] == "aes") & ~ours["variant"].astype(str).str.endswith("/total")]
        for (src, bits, mode, engine), g in ours.groupby(["source", "key bits", "mode", "engine"]):
            best = g.groupby("bytes", as_index=False)["value"].max()
            ax.plot(best["bytes"], best["value"], marker="o", lw=2.5, ms=6,
                    label=f"ours: {src} AES-{bits}-{mode.upper()}, {engine} (best threads)")
    for exp, variant, label in _REF_CURVES:
        g = ref[(ref["experiment"] == exp) & (ref["variant"] == variant)].sort_values("bytes")
        if not g.empty:
            # the seeds: thin dashed lines with hollow markers, ours thick and solid
            ax.plot(g["bytes"], g["value"], lw=1, ls="--", alpha=0.8, marker="^", mfc="none", ms=5,
                    label=label)
    pts = ref[ref["experiment"].isin(["seed000_text", "seed002_text"]) & (ref["bytes"] > 0)]
    ax.set_xscale("log", base=2)
    xs = pd.concat([ours["bytes"], ref["bytes"][ref["bytes"] > 0]])
    mid = float(np.sqrt(xs.min() * xs.max())) if len(xs) else 0.0
    for _, r in pts.iterrows():
        ax.scatter([r["bytes"]], [r["value"]], marker="*", s=60, zorder=3, color="black")
        # the label on the side of the star that faces the middle, so it never runs off the plot
        right = r["bytes"] > mid
        ax.annotate(f"{r['platform'].split(' (')[0]} {r['variant']}", (r["bytes"], r["value"]),
                    fontsize=6, xytext=(-4 if right else 4, 3), textcoords="offset points",
                    ha="right" if right else "left")
    ax.set_yscale("log")
    ax.set_xlabel("data size (bytes)")
    ax.set_ylabel("throughput (Gbit/s)")
    ax.set_title("AES throughput against data size: this host and the seed papers")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: human_bytes(v).replace(" ", "")))
    # Outside the axes: inside, the legend hid our own curves.
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, borderaxespad=0)
    return _save(fig, path)


def seed002_cpu_bars(ours: pd.DataFrame, reference: pd.DataFrame, path) -> Path | None:
    """Seed 002 Figure 10's layout on this host: Gbit/s of each (cipher, implementation) at each thread
    count as grouped bars, with the paper's quoted CPU figures (seed002_text) as dotted lines."""
    d = ours[(ours["experiment"] == "seed002_cpu") & (ours["metric"] == "bytes_per_second")]
    if d.empty:
        return None
    d = d.assign(label=d["workload"].str.split("-").str[0] + " " + d["engine"], gbps=d["value"] * 8 / 1e9)
    t = d.pivot_table(index="label", columns="cores", values="gbps", aggfunc="max")
    x = np.arange(len(t.index))
    w = 0.8 / max(1, len(t.columns))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(t.index) + 2), 4.2))
    from s2mc.analysis.seeds_native import disturbed
    bad = {lab: set(disturbed(row.dropna().to_dict())) for lab, row in t.iterrows()}
    handles = []
    for i, c in enumerate(t.columns):
        bars = ax.bar(x + (i - (len(t.columns) - 1) / 2) * w, t[c].fillna(0), w)
        handles.append(matplotlib.patches.Patch(color=bars.patches[0].get_facecolor(),
                                                label=f"{int(c)} thread{'s' * (c != 1)}"))
        for lab, bar in zip(t.index, bars):
            if c in bad[lab]:   # not a result (seeds_native.disturbed): hatched and pale
                bar.set_hatch("xxx")
                bar.set_alpha(0.35)
    if any(bad.values()):
        handles.append(matplotlib.patches.Patch(facecolor="white", edgecolor="black", hatch="xxx",
                                                label="disturbed: not a result"))
    ref = reference[(reference["experiment"] == "seed002_text") & reference["engine"].isin(["openmp", "openssl"])]
    for _, r in ref.iterrows():
        ax.axhline(r["value"], ls=":", lw=1, color="#777777")
        ax.annotate(f"paper: {r['workload'].split('-')[0]} {r['variant']}, {int(r['cores'])} threads "
                    f"({r['value']:g})", (x[-1] + 0.45, r["value"]), fontsize=7, ha="right", va="bottom")
    ax.set_xticks(x, t.index)
    ax.set_yscale("log")
    ax.set_ylabel("throughput (Gbit/s)")
    ax.set_title("Seed 002 Figure 10 on this host (threads beyond the CPUs are oversubscribed)")
    ax.legend(handles=handles, fontsize=7)
    return _save(fig, path)


def seed_table_beside(ours: pd.DataFrame, reference: pd.DataFrame, metric: str, title: str,
                      path, on=("bytes", "cores")) -> Path | None:
    """Grouped bars: our value beside the paper's for every cell of a seed table."""
    cmp = derive.compare(ours, reference, metric, on)
    cmp = cmp[cmp["paper"].notna()]
    if cmp.empty:
        return None
    labels = [f"{human_bytes(r['bytes'])}\n{int(r['cores'])} c" if "bytes" in cmp and "cores" in cmp
              else str(r[on[0]]) for _, r in cmp.iterrows()]
    x = np.arange(len(cmp))
    fig, ax = plt.subplots(figsize=(max(7, 0.6 * len(cmp) + 2), 4.4))
    ax.bar(x - 0.2, cmp["paper"], 0.4, label="paper (seed 003)", color="#BBBBBB", hatch="//",
           edgecolor="#777777")
    if cmp["ours"].notna().any():
        ax.bar(x + 0.2, cmp["ours"].fillna(0), 0.4, label="ours (s2mc, -O1)", color="#4C72B0")
    else:
        ax.text(0.5, 0.95, "no s2mc results yet: paper only", transform=ax.transAxes,
                ha="center", va="top", fontsize=9, color="#AA3333")
    ax.set_xticks(x, labels, fontsize=7)
    ax.set_ylabel(f"{metric}")
    ax.set_title(title)
    ax.legend()
    return _save(fig, path)


def model_vs_points(points: pd.DataFrame, path, title: str = "", max_cores: int = 64,
                    measured_by: str = "s2mc") -> Path | None:
    """The bus model's speedup curve and bounds against measured (simulated or paper) speedups.

    `points`: records with whole-run cycles (and accesses or stall counts) at several core counts;
    the model is fitted on each configuration's 1-core run.
    """
    models = model.fit_records(points)
    sp = derive.speedup(points)
    sp = sp[sp["metric"] == "speedup"]
    if not models or sp.empty:
        return None
    from s2mc.analysis.derive import CONFIG_KEYS
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    nmax = max(int(sp["cores"].max()), 4)
    nmax = min(max_cores, max(nmax, 8))
    xs = np.arange(1, nmax + 1)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (key, m) in enumerate(sorted(models.items(), key=lambda kv: kv[1].accesses)):
        cfg = dict(zip(CONFIG_KEYS, key))
        g = sp.copy()
        for k, v in cfg.items():
            g = g[g[k] == v]
        c = colors[i % len(colors)]
        g = g.groupby("cores", as_index=False)["value"].median()
        # our points filled circles, the paper's hollow squares
        style = dict(marker="o", ms=6) if measured_by == "s2mc" else dict(marker="s", ms=7, mfc="none", mew=1.5)
        ax.plot(g["cores"], g["value"], ls="none", color=c, **style,
                label=f"measured ({measured_by}), {summaries.label(dict(cfg))}")
        ax.plot(xs, [m.speedup(int(n)) for n in xs], "-", color=c, alpha=0.7,
                label=f"MVA model, {summaries.label(dict(cfg))}: Z={m.think:.2f}, L={m.service:g}")
    m = max(models.values(), key=lambda mm: mm.accesses)
    ax.plot(xs, [m.speedup_bound(int(n)) for n in xs], ":", color="black",
            label=f"bound min(N, (Z+L)/L) = {m.saturation_speedup:.2f}")
    ax.set_xlabel("cores")
    ax.set_ylabel("speedup over 1 core (x)")
    ax.set_title(title or "Bus-contention model against measured speedup")
    if nmax > 8:
        ax.set_xscale("log", base=2)
    ax.legend(fontsize=7)
    return _save(fig, path)


def finish_staircase(ours: pd.DataFrame, reference: pd.DataFrame, path, title: str = "") -> Path | None:
    """Each core's finish cycle (a horizontal bar from 0 to it), grouped by core count, one panel
    per data size, with the paper's total cycles (seed 003 Table 3) marked on every group: a
    fixed-priority bus finishes the cores one after the other, the staircase the paper's own idle
    core-cycles imply. `ours`: records with per-core finish_cycle rows of one configuration."""
    fin = ours[(ours["metric"] == "finish_cycle") & (ours["core"] >= 0)]
    if fin.empty:
        return None
    paper = {(int(r.bytes), int(r.cores)): r.value for r in
             reference[(reference["metric"] == "cycles") & (reference["core"] == -1)].itertuples()}
    sizes = sorted(fin["bytes"].unique())
    fig, axes = plt.subplots(1, len(sizes), figsize=(3.3 * len(sizes), 3.8), squeeze=False, sharey=True)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ncores = sorted(fin["cores"].unique())
    for ax, b in zip(axes[0], sizes):
        d = fin[fin["bytes"] == b]
        for row, n in enumerate(ncores):
            g = d[d["cores"] == n].groupby("core")["value"].median().sort_index()
            h = 0.8 / n
            ax.barh([row + h * i for i in range(len(g))], g.values, height=h * 0.85, align="edge",
                    color=[colors[int(c) % len(colors)] for c in g.index])
            if (int(b), int(n)) in paper:
                ax.plot([paper[(int(b), int(n))]] * 2, [row - 0.05, row + 0.85], color="black", lw=2)
        ax.set_title(human_bytes(int(b)))
        ax.set_xlabel("finish cycle")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v / 1000:.0f}k"))
    axes[0][0].set_yticks([r + 0.4 for r in range(len(ncores))], [f"{n} core{'s' if n > 1 else ''}" for n in ncores])
    axes[0][0].invert_yaxis()          # shared: once
    handles = [matplotlib.patches.Patch(color=colors[c % len(colors)], label=f"core {c}")
               for c in range(int(max(ncores)))]
    handles.append(matplotlib.lines.Line2D([], [], color="black", lw=2, label="paper's total (Table 3)"))
    axes[0][-1].legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False)
    fig.suptitle(title or "When each core finishes")
    return _save(fig, path)


def seed002_gpu_vs_size(ours: pd.DataFrame, path) -> Path | None:
    """Seed 002 Figs. 11/12's layout for our CUDA records: Gbit/s against input size, one panel per
    cipher, one line per (GPU, kernel, method A/B/C)."""
    from s2mc.analysis import seed002_gpu

    runs = seed002_gpu.our_runs(ours)
    runs = runs[runs["method"].notna()]
    if runs.empty:
        return None
    ciphers = sorted(runs["cipher"].unique())
    # one panel per cipher on its own row, the legend beside it: with several GPUs and every
    # optimised configuration there are two dozen lines
    fig, axes = plt.subplots(len(ciphers), 1, figsize=(10, 4.6 * len(ciphers)), squeeze=False)
    for ax, cipher in zip(axes[:, 0], ciphers):
        d = runs[runs["cipher"] == cipher]
        for (plat, kernel, method), g in d.groupby(["platform", "kernel", "method"]):
            g = g.groupby("bytes", as_index=False)["gbps"].median().sort_values("bytes")
            ax.plot(g["bytes"], g["gbps"], marker="o", ls={"A": "-", "B": "--", "C": ":"}[method],
                    label=f"{kernel} {method} ({plat})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: human_bytes(int(v))))
        ax.set_xlabel("input size")
        ax.set_ylabel("throughput (Gbit/s)")
        ax.set_title(f"{cipher}: A no transfer, B overlapped, C serial")
        ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
    return _save(fig, path)


def core_to_core_heatmaps(df: pd.DataFrame, path) -> Path | None:
    """The core-to-core matrices of the records side by side as heat maps (this CPU's in ns, each
    simulated mesh's in cycles; s2mc.analysis.summaries.core_to_core), each titled with its
    sentence's subject; cells are annotated when the matrix is small enough to read them."""
    mats = summaries.core_to_core(df)
    if not mats:
        return None
    fig, axes = plt.subplots(1, len(mats), figsize=(4.6 * len(mats), 4.2), squeeze=False)
    for ax, m in zip(axes[0], mats):
        a, n = m["matrix"], m["cores"]
        im = ax.imshow(np.ma.masked_invalid(a), cmap="viridis")
        ax.grid(False)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04, label=f"one-way {m['unit']}")
        ax.set_title(m["title"][:1].upper() + m["title"][1:])
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel(m["label"])
        ax.set_ylabel(m["label"])
        if n <= 8:
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
            for i in range(n):
                for j in range(n):
                    if not np.isnan(a[i, j]):
                        ax.text(j, i, f"{a[i, j]:.3g}", ha="center", va="center", color="w", fontsize=8)
    return _save(fig, path)
