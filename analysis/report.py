"""`s2mc report`: results files -> report.md + report.html + PNG plots in one directory.

    from s2mc.analysis import report
    paths = report.build(["results/"], "report/")   # {'md': ..., 'html': ..., 'plots': [...]}

The report is a list of blocks (headings, paragraphs, tables, figures) rendered twice: as Markdown
and as a self-contained HTML page that links the PNGs by relative path.
"""
from __future__ import annotations

import datetime as _dt
import html
import json
import os
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from s2mc.analysis import derive, model, plots, records, seeds
from s2mc.analysis.seed003 import SEED003_BYTES
from s2mc.isa.errors import S2mcError
from s2mc.isa.outputs import make_folder, write_output


@dataclass
class Block:
    kind: str            # h1 | h2 | p | table | img
    text: str = ""
    table: pd.DataFrame | None = None
    path: str = ""


# --------------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------------

def _fmt(v) -> str:
    if hasattr(v, "item"):
        v = v.item()
    if isinstance(v, float):
        if v != v:
            return "–"
        if abs(v) >= 1000 or (v == int(v) and abs(v) >= 10):
            return f"{v:,.0f}"
        if abs(v) >= 10:
            return f"{v:.1f}"
        return f"{v:.3g}" if abs(v) >= 0.001 or v == 0 else f"{v:.2e}"
    return str(v)


def md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v).replace("|", "/") for v in r) + " |")
    return "\n".join(lines)


def html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in r)
                   + "</tr>" for r in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def render_md(blocks: list[Block]) -> str:
    out = []
    for b in blocks:
        if b.kind == "h1":
            out.append(f"# {b.text}")
        elif b.kind == "h2":
            out.append(f"## {b.text}")
        elif b.kind == "p":
            out.append(b.text)
        elif b.kind == "table":
            out.append(md_table(b.table))
        elif b.kind == "img":
            out.append(f"![{b.text}]({b.path})\n\n*{b.text}*")
        out.append("")
    return "\n".join(out)


_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222}table{border-collapse:collapse;margin:1em 0;font-size:90%}td,th{border:1px solid #ccc;
padding:3px 8px;text-align:right}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee}
figcaption{font-style:italic;color:#555}code{background:#f5f5f5;padding:0 3px}"""


def render_html(blocks: list[Block], title: str) -> str:
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{_CSS}</style></head><body>"]
    for b in blocks:
        if b.kind in ("h1", "h2"):
            parts.append(f"<{b.kind}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "p":
            text = html.escape(b.text)
            # `code` spans
            segs = text.split("`")
            text = "".join(f"<code>{s}</code>" if i % 2 else s for i, s in enumerate(segs))
            parts.append(f"<p>{text}</p>")
        elif b.kind == "table":
            parts.append(html_table(b.table))
        elif b.kind == "img":
            parts.append(f"<figure><img src='{html.escape(b.path)}' alt='{html.escape(b.text)}'>"
                         f"<figcaption>{html.escape(b.text)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------------

def _seed003_ours(df: pd.DataFrame) -> pd.DataFrame:
    sim = df[(df["source"] == "sim")]
    grid = sim[sim["experiment"] == "seed003_grid"]
    if grid.empty:
        grid = sim[sim["bytes"].isin(SEED003_BYTES) & (sim["cores"] <= 4)]
        if grid["variant"].str.contains("bytes").any():
            grid = grid[grid["variant"].str.contains("bytes")]
    return grid


def seed003_main_table(ours: pd.DataFrame, ref: pd.DataFrame) -> pd.DataFrame:
    """bytes, cores: cycles (ours, paper, ratio), speedup (ours, paper), stalls (ours, paper)."""
    r3 = ref[ref["experiment"] == "seed003_table3"]
    r4 = ref[ref["experiment"] == "seed003_table4"]
    cyc = derive.compare(ours, r3, "cycles")
    st = derive.compare(ours, r4, "stall_cycles")
    sp_o = derive.speedup(ours[ours["metric"] == "cycles"])
    sp_p = derive.speedup(r3)
    sp = derive.compare(sp_o, sp_p, "speedup")
    t = cyc.rename(columns={"ours": "cycles (ours)", "paper": "cycles (paper)",
                            "ratio": "cycles ours/paper"})
    t = t.merge(sp.rename(columns={"ours": "speedup (ours)", "paper": "speedup (paper)"})
                .drop(columns="ratio"), on=["cores", "bytes"], how="left")
    t = t.merge(st.rename(columns={"ours": "stalls (ours)", "paper": "stalls (paper)",
                                   "ratio": "stalls ours/paper"}), on=["cores", "bytes"],
                how="left")
    t = t[t["cores"] <= 4].sort_values(["bytes", "cores"])
    t = t[t["bytes"].isin(SEED003_BYTES)]
    t.insert(0, "bytes", t.pop("bytes").astype(int))
    t["cores"] = t["cores"].astype(int)
    return t.reset_index(drop=True)


def sim_scaling_table(df: pd.DataFrame) -> pd.DataFrame:
    sim = df[(df["source"] == "sim") & (df["core"] == -1)]
    if sim.empty:
        return pd.DataFrame()
    w = derive.wide(sim, ["cycles", "speedup", "efficiency", "stall_fraction", "bus_utilisation",
                          "instructions"],
                    index=["experiment", "workload", "variant", "bytes", "cores"])
    cols = [c for c in ["experiment", "workload", "variant", "bytes", "cores", "cycles",
                        "speedup", "efficiency", "stall_fraction", "bus_utilisation",
                        "instructions"] if c in w]
    w = w[cols].sort_values(["experiment", "workload", "variant", "bytes", "cores"])
    return w.reset_index(drop=True)


def model_table(points: pd.DataFrame) -> pd.DataFrame:
    """Per configuration: Z, L, the saturation speedup, and predicted vs measured speedups."""
    models = model.fit_records(points)
    if not models:
        return pd.DataFrame()
    sp = derive.speedup(points)
    sp = sp[sp["metric"] == "speedup"]
    rows = []
    for key, m in models.items():
        cfg = dict(zip(derive.CONFIG_KEYS, key))
        g = sp
        for k, v in cfg.items():
            g = g[g[k] == v]
        for cores, v in g.groupby("cores")["value"].median().items():
            rows.append({"experiment": cfg["experiment"], "bytes": int(cfg["bytes"]),
                         "cores": int(cores), "Z (think cycles)": m.think, "L": m.service,
                         "saturation (Z+L)/L": m.saturation_speedup,
                         "measured speedup": v, "model speedup": m.speedup(int(cores)),
                         "model/measured": m.speedup(int(cores)) / v})
    return pd.DataFrame(rows).sort_values(["experiment", "bytes", "cores"]).reset_index(drop=True)


def native_table(df: pd.DataFrame) -> pd.DataFrame:
    nat = df[df["source"].isin(["native", "cuda", "opencl"]) & (df["core"] == -1)]
    if nat.empty:
        return pd.DataFrame()
    w = derive.wide(nat, ["seconds", "gb_per_second", "gbps", "speedup", "efficiency"],
                    index=["source", "experiment", "variant", "bytes", "cores"])
    w = w.groupby(["source", "experiment", "variant", "bytes", "cores"], as_index=False).median(
        numeric_only=True)
    w = w.rename(columns={"cores": "threads"})
    w = w.sort_values(["source", "experiment", "variant", "bytes", "threads"])
    w["bytes"] = w["bytes"].map(plots.human_bytes)
    cols = ["source", "experiment", "variant", "bytes", "threads"] + [
        c for c in ("seconds", "gb_per_second", "gbps", "speedup", "efficiency") if c in w]
    return w[cols].rename(columns={"gb_per_second": "GB/s", "gbps": "Gbit/s"}).reset_index(drop=True)


# --------------------------------------------------------------------------------------------------
# the report
# --------------------------------------------------------------------------------------------------

def _manifests(paths: list[Path]) -> list[dict]:
    out = []
    for p in paths:
        for f in ([p] if p.is_file() else sorted(p.rglob("*.manifest.json"))):
            m = records.manifest_path_for(f) if f.suffix != ".json" else f
            if m.exists():
                try:
                    out.append(records.read_manifest(m) | {"file": str(m)})
                except (OSError, ValueError):
                    pass
    return out


def _experiment_or_all(df: pd.DataFrame, name: str) -> pd.DataFrame:
    """The simulator rows of one experiment plus every non-simulator row, when that experiment ran."""
    sim = df["source"] == "sim"
    if (sim & (df["experiment"] == name)).any():
        return df[~sim | (df["experiment"] == name)]
    return df


def build(results: list[str | os.PathLike], out_dir: str | os.PathLike,
          title: str = "s2mc report") -> dict:
    """Write report.md, report.html and the plots into `out_dir`; return their paths."""
    paths = [Path(r) for r in results]
    ours = records.load(paths) if paths else records.empty()
    ours = ours[ours["source"] != "reference"] if len(ours) else ours
    if len(ours) == 0 and not paths:
        raise S2mcError("report: no results given (pass result files or directories)")
    ref = seeds.load_reference()
    allrec = derive.derive_all(records.concat([ours, ref]))
    ours_d = allrec[allrec["source"] != "reference"]
    out = Path(make_folder(out_dir, "report"))   # the folder only, never its parents
    figs: list[Path] = []

    def fig(p: Path | None, caption: str, blocks: list[Block], missing: str) -> None:
        if p is None:
            blocks.append(Block("p", f"(No figure: {missing}.)"))
        else:
            figs.append(p)
            blocks.append(Block("img", caption, path=p.name))

    b: list[Block] = [Block("h1", title)]
    n_runs = ours["run_id"].nunique() if len(ours) else 0
    srcs = ", ".join(f"{s}: {n}" for s, n in ours.groupby("source")["run_id"].nunique().items()) \
        if len(ours) else "none"
    b.append(Block("p", f"Generated {_dt.datetime.now().strftime('%Y-%m-%d %H:%M')} from "
                        f"{', '.join(f'`{p}`' for p in paths) or 'no files'}: {len(ours)} records "
                        f"of {n_runs} runs ({srcs}), beside {len(ref)} reference records from the "
                        f"seed papers (analysis/reference/)."))
    mans = _manifests(paths)
    if mans:
        m0 = mans[0]
        b.append(Block("p", f"Host: {m0.get('host_cpu', '?')} ({m0.get('host_cpu_count', '?')} "
                            f"CPUs), GPUs: {', '.join(m0.get('host_gpus') or []) or 'none'}; "
                            f"s2mc {m0.get('s2mc_version', '?')}, commit "
                            f"`{str(m0.get('git_commit', '?'))[:12]}`, {m0.get('compiler', '?')}."))

    # 1. main table
    b.append(Block("h2", "1. Seed 003 reproduced: AES on the S2 multicore (Tables 3 and 4)"))
    grid = _seed003_ours(ours_d)
    main = seed003_main_table(grid, ref)
    if grid.empty:
        b.append(Block("p", "No simulator results for the seed 003 grid in these results: the "
                            "table shows the paper's numbers only (run `s2mc aes --cores 1,2,3,4 "
                            "--bytes 32,64,128,256 --style bytes --mode ecb`)."))
    else:
        b.append(Block("p", "Total cycles and summed stall cycles of AES-128 on 1-4 simulated "
                            "cores, ours (s2mc) beside the paper's; speedup is over one core."))
    b.append(Block("table", table=main))
    fig(plots.seed_table_beside(grid, ref[ref["experiment"] == "seed003_table3"], "cycles",
                                "Seed 003 Table 3: cycles, paper vs s2mc", out / "seed003_table3.png"),
        "Seed 003 Table 3 (cycles): the paper beside s2mc", b, "no seed 003 data")
    fig(plots.seed_table_beside(grid, ref[ref["experiment"] == "seed003_table4"], "stall_cycles",
                                "Seed 003 Table 4: stall cycles, paper vs s2mc",
                                out / "seed003_table4.png"),
        "Seed 003 Table 4 (stall cycles summed over cores): the paper beside s2mc", b,
        "no seed 003 data")

    # 2. simulated scaling
    b.append(Block("h2", "2. Simulated scaling"))
    sim_t = sim_scaling_table(ours_d)
    if sim_t.empty:
        b.append(Block("p", "No simulator results."))
    else:
        b.append(Block("table", table=sim_t))
    # The scaling plots read best from one experiment: core scaling when it ran, else everything.
    scaling = _experiment_or_all(ours_d, "core_scaling")
    fig(plots.cycles_and_speedup(scaling, out / "sim_cycles_speedup.png"),
        "Simulated cycles and speedup against cores, per data size", b,
        "no simulator runs with two or more core counts")
    sweep = ours_d[ours_d["experiment"] == "mem_latency_sweep"]
    if len(sweep):
        fig(plots.cycles_and_speedup(sweep, out / "sim_latency_sweep.png", with_model=False),
            "Memory-latency sweep: longer bus accesses saturate the bus with fewer cores", b, "")
    arb = ours_d[ours_d["experiment"] == "arbitration_sweep"]
    if len(arb):
        fig(plots.cycles_and_speedup(arb, out / "sim_arbitration_sweep.png", with_model=False),
            "Arbitration policies: the total barely moves (the bus is busy either way)", b, "")
    fig(plots.stall_breakdown(scaling, out / "sim_stall_breakdown.png"),
        "Where the core-cycles go: compute, bus wait, memory latency, barrier wait", b,
        "no simulator counters")

    # 3. model
    b.append(Block("h2", "3. The bus-contention model (machine repairman)"))
    b.append(Block("p", "Each core thinks Z cycles between bus accesses and holds the bus L "
                        "cycles per access; Z = C1/A - L from the 1-core run (C1 cycles, A "
                        "accesses). Mean Value Analysis predicts the speedup; the bus saturates "
                        "at (Z+L)/L. See docs/analysis.md."))
    r34 = ref[ref["experiment"].isin(["seed003_table3", "seed003_table4"])].assign(
        experiment="seed003 (paper)", run_id="ref-seed003")
    sim_pts = scaling[(scaling["source"] == "sim")]
    mt = model_table(pd.concat([sim_pts, r34], ignore_index=True)) if len(sim_pts) else model_table(r34)
    if not mt.empty:
        b.append(Block("table", table=mt))
    fig(plots.model_vs_points(sim_pts, out / "model_vs_sim.png",
                              "Bus model against simulated speedup") if len(sim_pts) else None,
        "The bus model against simulated speedups", b, "no simulator runs")
    fig(plots.model_vs_points(r34, out / "model_vs_seed003.png",
                              "Bus model fitted to seed 003's 1-core runs, against its Table 3",
                              max_cores=8),
        "The bus model against the paper's own speedups (seed 003)", b, "no reference data")

    # 4. real hardware
    b.append(Block("h2", "4. Real hardware: native CPU (and GPU)"))
    nt = native_table(ours_d)
    if nt.empty:
        b.append(Block("p", "No native or GPU results."))
    else:
        b.append(Block("table", table=nt))
    fig(plots.sim_vs_native(scaling, out / "sim_vs_native_speedup.png"),
        "Simulated speedup against native OpenMP speedup on this host", b,
        "no simulator or native scaling runs")
    fig(plots.throughput_vs_size(ours_d, ref, out / "throughput_vs_size.png"),
        "Throughput against data size: this host beside the seeds' curves", b, "no data")
    s000 = ours_d[ours_d["experiment"] == "seed000_block_sizes"]
    if len(s000):
        t = derive.compare(s000, ref[ref["experiment"] == "seed000_table1"], "seconds",
                           on=("variant", "cores", "bytes"))
        t = t[t["paper"].notna()]
        b.append(Block("p", "Seed 000 Table 1 (seconds), the paper beside this host (only the "
                            "thread counts both have):"))
        b.append(Block("table", table=t[t["ours"].notna()] if t["ours"].notna().any() else t))

    # 5. references
    b.append(Block("h2", "5. Reference data"))
    cit = pd.DataFrame([{"experiment": k, "where": v["where"], "holds": v["holds"],
                         "citation": v["citation"]} for k, v in seeds.CITATIONS.items()])
    b.append(Block("table", table=cit))

    md = out / "report.md"
    write_output(md, render_md(b), what="report")
    page = out / "report.html"
    write_output(page, render_html(b, title), what="report")
    write_output(out / "main_table.json", json.dumps(json.loads(main.to_json(orient="records")),
                                                     indent=1) + "\n", what="report table")
    return {"md": md, "html": page, "plots": figs, "main_table": main, "records": allrec}
