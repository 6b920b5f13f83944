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
import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from s2mc.analysis import (caches, consistency, coverage, derive, fidelity, litmus_native, model, network, plots,
                           records, seeds, summaries)
from s2mc.analysis.seed003 import SEED003_BYTES, SEED003_VARIANT, SEED003_WORKLOAD
from s2mc.common.errors import S2mcError
from s2mc.common.measure import figure
from s2mc.common.outputs import output_folder, write_output


@dataclass
class Block:
    kind: str            # h1 | h2 | h3 | p | table | img | toc
    text: str = ""
    table: pd.DataFrame | None = None
    path: str = ""
    anchor: str = ""     # a heading's id (the table of contents and the coverage table link to it)


# --------------------------------------------------------------------------------------------------
# rendering
# --------------------------------------------------------------------------------------------------

fixed = summaries.fixed   # numbers in plain decimal notation (tables and sentences alike)


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
        return fixed(v)
    return str(v)


def md_table(df: pd.DataFrame) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for r in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v).replace("|", "/") for v in r) + " |")
    return "\n".join(lines)


def _contents(blocks: list[Block]) -> list[Block]:
    return [b for b in blocks if b.kind in ("h2", "h3") and b.anchor]


def render_md(blocks: list[Block]) -> str:
    out = []
    for b in blocks:
        if b.kind == "h1":
            out.append(f"# {b.text}")
        elif b.kind == "h2":
            out.append(f"## {b.text}")
        elif b.kind == "h3":
            out.append(f"### {b.text}")
        elif b.kind == "toc":
            out.append("**Contents**\n\n" + "\n".join(("  " if h.kind == "h3" else "") + f"- {h.text}"
                                                       for h in _contents(blocks)))
        elif b.kind == "p":
            out.append(b.text)
        elif b.kind == "table":
            out.append(md_table(b.table))
        elif b.kind == "img":
            out.append(f"![{b.text}]({b.path})\n\n*{b.text}*")
        out.append("")
    return "\n".join(out)


# Nothing may be wider than the page: tables wrap their cells between words and after the slashes and
# commas of long names (never inside a word: a <wbr> marks each such place), scroll inside their own box
# as a last resort; figures shrink to the text width.
_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;
color:#222;line-height:1.45}div.table{max-width:100%;overflow-x:auto}table{border-collapse:collapse;
margin:.5em 0 1em;font-size:88%}td,th{border:1px solid #ccc;padding:3px 8px;text-align:right;
overflow-wrap:normal;word-break:normal;hyphens:manual}td:first-child,th:first-child{text-align:left}
th{background:#f3f3f3}img{max-width:100%;height:auto;border:1px solid #eee}figure{margin:1em 0}
figcaption{font-style:italic;color:#555}code{background:#f5f5f5;padding:0 3px}
nav.toc ul{margin:.2em 0}nav.toc li{margin:.1em 0}"""


def _breakable(text: str) -> str:
    """Escaped text with a line-break opportunity after every slash, and every comma followed by a letter
    (bytes/interleaved/burst4 may wrap after a slash; never inside a word or a number like 37,189)."""
    return re.sub(r"(/(?=\S)|,(?=[^\s\d]))", r"\1<wbr>", html.escape(text))


def html_table(df: pd.DataFrame) -> str:
    head = "".join(f"<th>{_breakable(str(c))}</th>" for c in df.columns)
    body = "".join("<tr>" + "".join(f"<td>{_breakable(_fmt(v))}</td>" for v in r)
                   + "</tr>" for r in df.itertuples(index=False))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _inline(text: str) -> str:
    """Escaped paragraph text with `code` spans and **bold**."""
    segs = html.escape(text).split("`")
    text = "".join(f"<code>{_breakable(html.unescape(s))}</code>" if i % 2 else s for i, s in enumerate(segs))
    return re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", text)


def render_html(blocks: list[Block], title: str) -> str:
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}"
             f"</title><style>{_CSS}</style></head><body>"]
    for b in blocks:
        if b.kind in ("h1", "h2", "h3"):
            anchor = f" id='{html.escape(b.anchor)}'" if b.anchor else ""
            parts.append(f"<{b.kind}{anchor}>{html.escape(b.text)}</{b.kind}>")
        elif b.kind == "toc":
            items, open_sub = [], False
            for h in _contents(blocks):
                link = f"<a href='#{html.escape(h.anchor)}'>{html.escape(h.text)}</a>"
                if h.kind == "h3" and not open_sub:
                    items.append("<ul>")
                    open_sub = True
                elif h.kind == "h2" and open_sub:
                    items.append("</ul>")
                    open_sub = False
                items.append(f"<li>{link}</li>")
            items.append("</ul>" if open_sub else "")
            parts.append("<nav class='toc'><strong>Contents</strong><ul>" + "".join(items) + "</ul></nav>")
        elif b.kind == "p":
            parts.append(f"<p>{_inline(b.text)}</p>")
        elif b.kind == "table":
            parts.append(f"<div class='table'>{html_table(b.table)}</div>")
        elif b.kind == "img":
            parts.append(f"<figure><img src='{html.escape(b.path)}' alt='{html.escape(b.text)}'>"
                         f"<figcaption>{html.escape(b.text)}</figcaption></figure>")
    parts.append("</body></html>")
    return "\n".join(parts)


# --------------------------------------------------------------------------------------------------
# tables
# --------------------------------------------------------------------------------------------------

def _seed003_ours(df: pd.DataFrame, both_levels: bool = False) -> pd.DataFrame:
    """Our runs of seed 003's configuration: the seed003_grid experiment when it ran, else any AES-128
    ECB byte-oriented interleaved runs of the paper's sizes on 1-4 cores at L = 2 and fifo. Only -O1
    unless `both_levels` (the -O0 runs are compared in words)."""
    sim = df[(df["source"] == "sim")]
    grid = sim[sim["experiment"] == "seed003_grid"]
    if grid.empty:
        grid = sim[sim["bytes"].isin(SEED003_BYTES) & (sim["cores"] <= 4)
                   & (sim["workload"] == SEED003_WORKLOAD)]
    grid = grid[grid["variant"].isin([SEED003_VARIANT, SEED003_VARIANT + "/O0"])]
    return grid if both_levels else grid[grid["variant"] == SEED003_VARIANT]


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
            rows.append({"experiment": cfg["experiment"], "workload": cfg["workload"], "variant": cfg["variant"],
                         "bytes": int(cfg["bytes"]),
                         "cores": int(cores), "Z (think cycles)": m.think, "L": m.service,
                         "saturation (Z+L)/L": m.saturation_speedup,
                         "measured speedup": v, "model speedup": m.speedup(int(cores)),
                         "model/measured": m.speedup(int(cores)) / v})
    return pd.DataFrame(rows).sort_values(["experiment", "workload", "variant", "bytes", "cores"]
                                          ).reset_index(drop=True)


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


def _report_file(name: str) -> bool:
    """Whether a report folder's entry `name` is one a report writes (an earlier report's)."""
    return name in ("report.md", "report.html", "main_table.json") or name.endswith(".png")


def build(results: list[str | os.PathLike], out_dir: str | os.PathLike,
          title: str = "s2mc report", empty_ok: bool = False) -> dict:
    """Write report.md, report.html and the plots into `out_dir`; return their paths. The folder is
    built whole beside it and put in place at the end (s2mc.common.outputs.output_folder): a report
    that fails leaves nothing, and the previous report in `out_dir` as it was. Results that hold no
    records are an error unless `empty_ok` (the demo with every part skipped: the papers' tables)."""
    with output_folder(out_dir, "report", owns=_report_file) as tmp:
        built = _build(results, out_dir, Path(tmp), title, empty_ok)
    final = Path(out_dir)
    return built | {"md": final / built["md"].name, "html": final / built["html"].name,
                    "plots": [final / p.name for p in built["plots"]]}


def _build(results: list[str | os.PathLike], out_dir: str | os.PathLike, out: Path, title: str,
           empty_ok: bool) -> dict:
    """The report of `results` for `out_dir`, written into the folder `out`."""
    paths = [Path(r) for r in results]
    ours = records.load(paths) if paths else records.empty()
    ours = ours[ours["source"] != "reference"] if len(ours) else ours
    if len(ours) == 0 and not paths:
        raise S2mcError("report: no results given (pass result files or directories)")
    if len(ours) == 0 and not empty_ok:
        raise S2mcError(f"report: {', '.join(map(str, paths))}: no records (no .parquet or .csv records file "
                        "holds a run); write some with `s2mc aes ... --out`, `s2mc run ... --out` or `s2mc demo`")
    ref = seeds.load_reference()
    allrec = derive.derive_all(records.concat([ours, ref]))
    ours_d = allrec[allrec["source"] != "reference"]
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
    b.append(Block("toc"))
    gpu_elsewhere = gpu_measured_records()   # our GPU runs measured elsewhere, on every machine
    _coverage_blocks(b, records.concat([ours_d, gpu_elsewhere]))

    hint_dir = next((str(p) for p in paths if p.is_dir()), "results")

    def hint(command: str, name: str) -> str:
        """A command that adds missing results: it works from any folder, into the folder reported."""
        return f"`{command} --out {hint_dir}/{name}.parquet`, then `s2mc report {hint_dir} --out {out_dir}`"

    # 1. seed 003
    b.append(Block("h2", f"{coverage.SECTIONS['seed003']} reproduced: AES on the S2 multicore (Tables 3 and 4)",
                   anchor="seed003"))
    grid_all = _seed003_ours(ours_d, both_levels=True)
    grid = grid_all[~grid_all["variant"].str.endswith("/O0")] if len(grid_all) else grid_all
    main = seed003_main_table(grid, ref)
    if grid.empty:
        b.append(Block("p", "No simulator results for the seed 003 grid in these results: the tables show "
                            "the paper's numbers only. Add ours with " + hint(
                                "s2mc aes --cores 1,2,3,4 --bytes 32,64,128,256 --style bytes --mode ecb "
                                "--opt 1,0", "seed003") + "."))
    for text in summaries.seed003_takeaways(grid_all, ref):
        b.append(Block("p", text))
    b.append(Block("p", "Each cell: ours (s2mc, -O1) / the paper's (ratio ours/paper); AES-128-ECB, "
                        "byte-oriented, interleaved blocks, L = 2; rows are data sizes in bytes."))
    for what, t in summaries.seed003_pivots(main).items():
        b.append(Block("p", f"**{what.capitalize()}**" + (" (summed over cores)" if "stall" in what else "")
                       + (" over one core" if what == "speedup" else "")))
        b.append(Block("table", table=t))
    fig(plots.seed_table_beside(grid, ref[ref["experiment"] == "seed003_table3"], "cycles",
                                "Seed 003 Table 3: cycles, paper vs s2mc", out / "seed003_table3.png"),
        "Seed 003 Table 3 (cycles): the paper (grey, hatched) beside s2mc -O1 (blue)", b, "no seed 003 data")
    fig(plots.seed_table_beside(grid, ref[ref["experiment"] == "seed003_table4"], "stall_cycles",
                                "Seed 003 Table 4: stall cycles, paper vs s2mc",
                                out / "seed003_table4.png"),
        "Seed 003 Table 4 (stall cycles summed over cores): the paper (grey, hatched) beside s2mc -O1 (blue)",
        b, "no seed 003 data")

    # 1b. the model that reproduces seed 003, and the hypotheses behind it
    b.append(Block("h2", "1b. Seed 003 reproduced: the model and the hypotheses", anchor="seed003-model"))
    for part in fidelity.report_parts(ours_d, ref, out):
        if part[0] == "img":
            fig(part[2], part[1], b, "")
        elif part[0] == "table":
            b.append(Block("table", table=part[1]))
        else:
            b.append(Block("p", part[1]))

    # 2. simulated scaling
    b.append(Block("h2", "2. Simulated scaling", anchor="scaling"))
    # The scaling plots read best from one experiment: core scaling when it ran, else everything.
    scaling = _experiment_or_all(ours_d, "core_scaling")
    runs = summaries.sim_runs(scaling)
    if runs.empty:
        b.append(Block("p", "No simulator results. Add some with " + hint(
            "s2mc aes --cores 1,2,4,8,16 --bytes 1K --style bytes,ttable", "scaling") + "."))
    else:
        for text in summaries.scaling_takeaways(runs):
            b.append(Block("p", text))
        b.append(Block("p", "**Speedup over one core** (rows: configuration; AES unless named)"))
        b.append(Block("table", table=summaries.pivot(runs, "speedup", lambda v: f"{v:.2f}")))
        b.append(Block("p", "**Bus utilisation**"))
        b.append(Block("table", table=summaries.pivot(runs, "bus_utilisation", lambda v: f"{v:.0%}")))
    fig(plots.cycles_and_speedup(scaling, out / "sim_cycles_speedup.png"),
        "Simulated cycles and speedup against cores, one line per configuration (style, data size)", b,
        "no simulator runs with two or more core counts")
    sweep = ours_d[ours_d["experiment"] == "mem_latency_sweep"]
    if len(sweep):
        lat_runs = summaries.sim_runs(sweep)
        for text in summaries.latency_takeaways(lat_runs):
            b.append(Block("p", text))
        b.append(Block("table", table=summaries.pivot(lat_runs, "speedup", lambda v: f"{v:.2f}")))
        fig(plots.cycles_and_speedup(sweep, out / "sim_latency_sweep.png", with_model=False),
            "Memory-latency sweep: longer bus accesses (larger L) saturate the bus with fewer cores", b, "")
    arb = ours_d[ours_d["experiment"] == "arbitration_sweep"]
    if len(arb):
        arb_runs = summaries.sim_runs(arb)
        texts, caption = summaries.arbitration_takeaways(arb_runs)
        for text in texts:
            b.append(Block("p", text))
        b.append(Block("table", table=summaries.pivot(arb_runs, "cycles")))
        fig(plots.cycles_and_speedup(arb, out / "sim_arbitration_sweep.png", with_model=False), caption, b, "")
    for text in summaries.stall_takeaways(runs):
        b.append(Block("p", text))
    subject = summaries.stall_subject(runs)   # the one configuration the sentence and the figure describe
    fig(plots.stall_breakdown(scaling[scaling["run_id"].isin(subject[1])], out / "sim_stall_breakdown.png",
                              subject[0]) if subject else None,
        f"Where the core-cycles go in one configuration ({subject[0] if subject else ''}), as shares of cores "
        "x cycles so that every core count reads: compute, bus wait, memory latency, barrier wait; right: "
        "each core of one run", b, "no simulator configuration with counters at two or more core counts")

    # 2b. caches and coherence
    b.append(Block("h2", f"2b. {caches.section_title(ours_d)}", anchor="caches"))
    for part in caches.report_parts(ours_d):
        b.append(Block("table", table=part[1]) if part[0] == "table" else Block("p", part[1]))
    native_coherence, _ = summaries.coherence_native(ours_d)
    if native_coherence:   # real hardware beside the simulated machine
        b.append(Block("p", "The same effects on this CPU (`s2mc coherence-native`; its tables are in section 4): "
                            + " ".join(native_coherence)))

    # 2c. beyond one bus: rings and meshes with a directory, beside the bus
    b.append(Block("h2", "2c. Beyond one bus: rings and meshes with directory coherence", anchor="networks"))
    for part in network.report_parts(ours_d, out):
        if part[0] == "img":
            fig(part[2], part[1], b, "")
        else:
            b.append(Block("table", table=part[1]) if part[0] == "table" else Block("p", part[1]))

    # 3. model
    b.append(Block("h2", "3. The bus-contention model (machine repairman)", anchor="model"))
    b.append(Block("p", "Each core thinks Z cycles between bus accesses and holds the bus L "
                        "cycles per access; Z = C1/A - L from the 1-core run (C1 cycles, A "
                        "accesses). Mean Value Analysis predicts the speedup; the bus saturates "
                        "at (Z+L)/L. See docs/analysis.md."))
    r34 = ref[ref["experiment"].isin(["seed003_table3", "seed003_table4"])].assign(
        experiment="seed003 (paper)", run_id="ref-seed003")
    sim_pts = scaling[(scaling["source"] == "sim")]
    mt = model_table(pd.concat([sim_pts, r34], ignore_index=True)) if len(sim_pts) else model_table(r34)
    if not mt.empty:
        for text in summaries.model_takeaways(mt):
            b.append(Block("p", text))
        b.append(Block("p", "Cells: measured / model speedup."))
        b.append(Block("table", table=summaries.model_pivot(mt)))
    fig(plots.model_vs_points(sim_pts, out / "model_vs_sim.png",
                              "Bus model against simulated speedup") if len(sim_pts) else None,
        "The bus model (lines) against simulated speedups (filled circles)", b, "no simulator runs")
    fig(plots.model_vs_points(r34, out / "model_vs_seed003.png",
                              "Bus model fitted to seed 003's 1-core runs, against its Table 3",
                              max_cores=8, measured_by="paper"),
        "The bus model (lines) against the paper's own speedups (hollow squares, seed 003)", b,
        "no reference data")

    # 4. real hardware
    b.append(Block("h2", f"{coverage.SECTIONS['native']}: native CPU (and GPU)", anchor="native"))
    nat = summaries.native_runs(ours_d)
    if nat.empty:
        b.append(Block("p", "No native or GPU results. Add them with " + hint(
            "s2mc native --threads 1,all --bytes 16K,16M --vs-openssl", "native") + "."))
    else:
        host_cpus = next((m.get("host_cpu_count") for m in mans if m.get("host_cpu_count")), None)
        for text in summaries.native_takeaways(nat, host_cpus):
            b.append(Block("p", text))
        b.append(Block("p", "**Throughput, GB/s** (a row per backend, cipher, key size, mode, implementation, "
                            "strategy and data size; the seeds' own runs are in 4.1-4.5)"))
        gb_table = summaries.native_pivot(nat, "gb_per_second", figure)   # never 0.00: a tiny rate keeps its digits
        marked = _mark_disturbed(gb_table, nat, ours_d)
        b.append(Block("table", table=gb_table))
        if marked:
            b.append(Block("p", f"{marked} of these figures {'is' if marked == 1 else 'are'} marked *disturbed*: "
                                "the samples spread over 5 % or beat perfect scaling from fewer threads, so the "
                                "machine's other load changed them. Read them as what a busy machine gave, not as the code's speed, and "
                                "rerun them on a quiet machine (docs/native.md, \"Reading a disturbed row\")."))
        sp_table = summaries.native_pivot(nat, "speedup", figure, scaling_only=True)
        if len(sp_table):
            _mark_disturbed(sp_table, nat[nat["speedup"].notna()], ours_d, scaling_only=True)
            b.append(Block("p", "**Speedup over one thread** (the configurations measured at several thread "
                                "counts)"))
            b.append(Block("table", table=sp_table))
    fig(plots.sim_vs_native(scaling, out / "sim_vs_native_speedup.png"),
        "Simulated speedup (circles) against native OpenMP speedup on this host (squares)", b,
        "no simulator or native scaling runs")
    fig(plots.throughput_vs_size(ours_d, ref, out / "throughput_vs_size.png"),
        "Throughput against data size: this host (thick solid lines) beside the seeds' curves (thin dashed "
        "lines, stars)", b, "no data")
    # 4.1-4.5: the seeds measured on real hardware, one heading each (coverage.SECTIONS)
    b.append(Block("h3", f"{coverage.SECTIONS['seed000']}: coarse-grain against extended blocks (Table 1; "
                         "Figs. 12-14 on GPUs)", anchor="seed000"))
    s000 = ours_d[ours_d["experiment"] == "seed000_block_sizes"] if len(ours_d) else ours_d
    t = derive.compare(s000, ref[ref["experiment"] == "seed000_table1"], "seconds",
                       on=("variant", "cores", "bytes")) if len(s000) else pd.DataFrame()
    t = t[t["paper"].notna() & t["ours"].notna()] if len(t) else t
    if len(t):
        t = t.assign(bytes=t["bytes"].map(summaries.human_bytes),
                     cell=[f"{fixed(o)} / {fixed(p)}" for o, p in zip(t["ours"], t["paper"])])
        t = t.pivot_table(index=["variant", "bytes"], columns="cores", values="cell", aggfunc="first")
        t.columns = [f"{int(c)} thread{'s' if c != 1 else ''}" for c in t.columns]
        b.append(Block("p", "Seed 000 Table 1, seconds: this host / the paper (only the thread counts "
                            "both have; its Fig. 10 draws the 4-thread column):"))
        b.append(Block("table", table=t.reset_index().fillna("–")))
    else:
        b.append(Block("p", "No seed000_block_sizes records in these results: add them with "
                            + hint("s2mc sweep seed000_block_sizes", "seed000") + "."))
    _seed000_gpu_blocks(b, ref, gpu_elsewhere)
    host = _host_phrase(mans)
    _seeds_native_blocks(b, ours_d, ref, host, hint)
    b.append(Block("h3", f"{coverage.SECTIONS['seed002-cpu']}: ciphers x threads (Figure 10)",
                   anchor="seed002-cpu"))
    if (ours_d["experiment"] == "seed002_cpu").any() if len(ours_d) else False:
        from s2mc.analysis import seeds_native as sn
        b.append(Block("p", "**Seed 002 Figure 10 (ciphers x threads on a Core i7-2600K) beside this host**"))
        for text in sn.seed002_sentences(ours_d, ref, host, _host_cpus(mans)):
            b.append(Block("p", text))
        t = sn.seed002_beside(ours_d, ref, _host_cpus(mans))
        b.append(Block("table", table=t.map(lambda v: fixed(v) if isinstance(v, float) and pd.notna(v)
                                            else ("–" if v is None or (isinstance(v, float) and pd.isna(v))
                                                  else v))))
        fig(plots.seed002_cpu_bars(ours_d, ref, out / "seed002_cpu.png"),
            "Seed 002 Figure 10 on this host: Gbit/s per cipher and thread count (bars), the paper's "
            "quoted figures (dotted lines)", b, "no seed002_cpu records")
    else:
        b.append(Block("p", "No seed002_cpu records in these results: add them with "
                            + hint("python -m s2mc.experiments.seeds_native", "seeds_native") + "."))
    b.append(Block("h3", f"{coverage.SECTIONS['seed002-gpu']}: AES and Camellia (Figs. 11, 12 and 16, Table 2)",
                   anchor="seed002-gpu"))
    _measured_sources_blocks(b)
    # this host's CUDA runs and the grids measured elsewhere (128-bit keys, as the paper's)
    _seed002_gpu_blocks(b, records.concat([ours_d, _gpu_grids(gpu_elsewhere)]), out, fig)
    _measured_gpu_blocks(b, gpu_elsewhere)
    _seed004_blocks(b, ours_d, ref, host, hint)
    _seed004_gpu_blocks(b, ref, gpu_elsewhere)
    coh_text, coh_tables = summaries.coherence_native(ours_d)
    if coh_text or coh_tables:   # s2mc coherence-native: the caches lab's real-hardware half
        b.append(Block("h3", "4.6 Cache coherence on this CPU: false sharing, line ping-pong, spin locks",
                       anchor="coherence-native"))
        b.append(Block("p", "Measured by `s2mc coherence-native` (docs/caches-lab.md): counters packed in one "
                            "line against a line apart, a line handed between two cores, and spin locks. Each "
                            "figure is the median of its runs."))
        for text in coh_text:
            b.append(Block("p", text))
        for t in coh_tables.values():
            b.append(Block("table", table=t))
    c2c = summaries.core_to_core(ours_d)
    if c2c:   # s2mc coherence-native --bench core-to-core: this CPU beside the simulated mesh
        b.append(Block("h3", "4.7 Core-to-core latency: this CPU beside the simulated mesh", anchor="core-to-core"))
        b.append(Block("p", "Measured by `s2mc coherence-native --bench core-to-core`: one cache line bounced "
                            "between every pair of pinned threads on this CPU (one-way ns = the median round trip "
                            "/ 2), and between every pair of tiles of the simulated mesh with directory coherence, "
                            "the line's home at tile 0 (one-way cycles; docs/native.md and docs/timing-model.md "
                            "say how to read them)."))
        fig(plots.core_to_core_heatmaps(ours_d, out / "core_to_core.png"),
            "Core-to-core latency: this CPU (ns) and the simulated mesh (cycles)", b, "no core-to-core records")
        for m in c2c:
            b.append(Block("p", m["sentence"]))
    b.extend(litmus_native.blocks(ours_d, Block))   # s2mc litmus-native, beside simulated litmus rows
    b.extend(consistency.blocks(ours_d, Block))     # Peterson's lock and the store buffers (s2mc demo)

    # 5. references
    b.append(Block("h2", "5. Reference data", anchor="reference"))
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


def _fmt_table(t: pd.DataFrame) -> pd.DataFrame:
    """Sizes read as sizes, numbers with 3 significant digits (never in scientific notation), gaps as
    a dash."""
    t = t.copy()
    t["bytes"] = t["bytes"].map(summaries.human_bytes)
    for c in t.columns[1:]:
        t[c] = [("–" if v is None or pd.isna(v) else fixed(v)) for v in t[c]]
    return t.rename(columns={"bytes": "size"})


def _host_cpus(mans: list[dict]) -> int | None:
    return next((m.get("host_cpu_count") for m in mans if m.get("host_cpu_count")), None)


def _host_phrase(mans: list[dict]) -> str:
    """'this host's 2 CPUs (AMD EPYC 7B13)' from the results' manifests (the first that names them)."""
    from s2mc.analysis import seeds_native as sn
    m = next((m for m in mans if m.get("host_cpu_count")), {})
    return sn.host_phrase(m.get("host_cpu_count"), m.get("host_cpu"))


def _mark_disturbed(table: pd.DataFrame, nat: pd.DataFrame, ours_d: pd.DataFrame, scaling_only: bool = False) -> int:
    """Append ' (disturbed)' to the cells of `table` (a summaries.native_pivot of `nat`) whose
    measurement the records flag disturbed; returns how many. A speedup cell is marked when its own
    run or the one-thread run it divides is."""
    key = ["experiment", "workload", "engine", "variant", "bytes"]
    bad = ours_d[ours_d["disturbed"] & ours_d["source"].isin(["native", "cuda"])]
    flagged = {tuple(k) for k in bad[key + ["cores"]].drop_duplicates().itertuples(index=False)}
    if not flagged or table.empty:
        return 0
    if scaling_only:
        nat = nat[nat.groupby("config")["cores"].transform("nunique") > 1]
    marked = 0
    for i, cfg in enumerate(dict.fromkeys(nat["config"])):
        for _, r in nat[nat["config"] == cfg].iterrows():
            k = tuple(r[c] for c in key)
            if k + (r["cores"],) in flagged or (scaling_only and k + (1,) in flagged):
                col = f"{int(r['cores'])} thread{'s' if r['cores'] != 1 else ''}"
                if col in table and not table.at[i, col].endswith("(disturbed)"):
                    table.at[i, col] += " (disturbed)"
                    marked += 1
    return marked


def _seeds_native_blocks(b: list, ours_d: pd.DataFrame, ref: pd.DataFrame, host: str, hint) -> None:
    """Seed 001 measured on this host beside the paper (s2mc.analysis.seeds_native)."""
    from s2mc.analysis import seeds_native as sn

    b.append(Block("h3", f"{coverage.SECTIONS['seed001']}: sequential against threads, with and without "
                         "file I/O (Tables 1-3)", anchor="seed001"))
    if not (len(ours_d) and (ours_d["experiment"] == "seed001_ours").any()):
        b.append(Block("p", "No seed001_ours records in these results: add them with "
                            + hint("python -m s2mc.experiments.seeds_native", "seeds_native") + "."))
        return
    for text in sn.seed001_sentences(ours_d, ref, host):
        b.append(Block("p", text))
    for kind, label in (("total", "Tables 1/3, total time with file I/O"),
                        ("encryption-only", "Tables 2/3, encryption only")):
        t = sn.seed001_beside(ours_d, ref, kind).dropna(subset=["ours seq s"])
        if len(t):
            b.append(Block("p", f"Seed 001 {label} (Core i5 M 450), seconds, beside this host:"))
            b.append(Block("table", table=_fmt_table(t)))


def _seed004_blocks(b: list, ours_d: pd.DataFrame, ref: pd.DataFrame, host: str, hint) -> None:
    """Seed 004 measured on this host beside the paper (s2mc.analysis.seeds_native)."""
    from s2mc.analysis import seeds_native as sn

    b.append(Block("h3", f"{coverage.SECTIONS['seed004']}: CPU sequential against parallel, 1 KB-1 GB (Table 2)",
                   anchor="seed004"))
    if not (len(ours_d) and (ours_d["experiment"] == "seed004_ours").any()):
        b.append(Block("p", "No seed004_ours records in these results: add them with "
                            + hint("python -m s2mc.experiments.seeds_native", "seeds_native") + "."))
        return
    for text in sn.seed004_sentences(ours_d, ref, host):
        b.append(Block("p", text))
    b.append(Block("p", "Seed 004 Table 2 (system 1) beside this host, milliseconds; paper/ours = how "
                        "many times faster this host is:"))
    b.append(Block("table", table=_fmt_table(sn.seed004_beside(ours_d, ref).dropna(subset=["ours seq ms"]))))


def _coverage_blocks(b: list, ours_d: pd.DataFrame) -> None:
    """Which table and figure of the seeds this report shows, and how (s2mc.analysis.coverage)."""
    t = coverage.table(ours_d)
    c = coverage.counts(t)
    b.append(Block("h2", "What of the seed papers this report shows", anchor="coverage"))
    b.append(Block("p", f"Of the {len(t)} tables and figures of the five seed papers, these results show "
                        f"{c[coverage.SIDE]} side by side with ours, {c[coverage.PAPER]} with the paper's "
                        f"numbers only, {c[coverage.OURS]} as ours in the paper's layout (the paper's are "
                        f"images) and {c[coverage.NONE]} not at all; `why` says why not (docs/analysis.md)."))
    shown = t[t["shown"] != coverage.NONE]
    b.append(Block("table", table=shown))
    hidden = t[t["shown"] == coverage.NONE]
    if len(hidden):
        groups: dict[str, list[str]] = {}
        for r in hidden.itertuples():
            groups.setdefault(r.why, []).append(f"{r.seed} {r.item}")
        b.append(Block("p", "Not shown: " + "; ".join(f"{', '.join(items)} ({why})"
                                                      for why, items in groups.items()) + "."))


def _seed002_gpu_blocks(b: list, ours_d: pd.DataFrame, out: Path, fig) -> None:
    """Seed 002's GPU figures (AES and Camellia, methods A/B/C, Table 2) beside our CUDA records,
    or the line saying they need a GPU run (s2mc.analysis.seed002_gpu)."""
    from s2mc.analysis import seed002_gpu as s2

    runs = s2.our_runs(ours_d)
    for text in s2.sentences(runs):
        b.append(Block("p", text))
    b.append(Block("p", "Best throughput per cipher and method (Fig. 16's layout), Gbit/s:"))
    b.append(Block("table", table=s2.best_table(runs)))
    if len(runs):
        for plat, part in runs.groupby("platform"):   # one table per GPU keeps each short
            b.append(Block("p", f"Our throughput against input size on {plat} (Figs. 11-12's content), Gbit/s:"))
            b.append(Block("table", table=s2.size_table(part)))
        fig(plots.seed002_gpu_vs_size(ours_d, out / "seed002_gpu.png"),
            "Our CUDA kernels in seed 002's Figs. 11-12 layout: Gbit/s against input size", b,
            "no CUDA records")
    b.append(Block("p", "Seed 002 Table 2 (AES and Camellia). Ours: `s2mc gpu --occupancy` and "
                        "`s2mc gpu --cipher camellia --occupancy` print the same columns from "
                        "cudaFuncGetAttributes and the occupancy API on a GPU (run_on_gpu.sh: "
                        "occupancy.md)."))
    b.append(Block("table", table=s2.table2()))


# --------------------------------------------------------------------------------------------------
# our GPU figures measured elsewhere (analysis/gpu_measurements/)
# --------------------------------------------------------------------------------------------------

def _gbps_of(d: pd.DataFrame) -> pd.DataFrame:
    """bytes_per_second rows as (platform, cipher, kernel, measure, bytes, gbps)."""
    d = d[d["metric"] == "bytes_per_second"]
    return pd.DataFrame({"experiment": d["experiment"].astype(str),
                         "platform": d["platform"].astype(str), "cipher": d["cipher"].astype(str),
                         "backend": d["source"].astype(str), "bits": d["workload"].str.split("-").str[1],
                         "kernel": d["variant"].str.split("/").str[0], "measure": d["variant"].str.split("/").str[1],
                         "bytes": d["bytes"].astype("int64"), "gbps": d["value"].astype(float) * 8 / 1e9})


def _gpu_grids(measured: pd.DataFrame) -> pd.DataFrame:
    """What seed 002's section takes from the runs measured elsewhere: the benchmark grids (not the
    CUDA-against-OpenCL runs, one size each), 128-bit keys as the seed used, and per GPU and cipher
    seed 002's design (coarse) beside our best optimised configuration (the highest device-resident
    throughput at the largest size), so that its tables stay short."""
    cl = set(measured.loc[measured["source"] == "opencl", "experiment"])
    d = measured[~measured["experiment"].isin(cl) & measured["workload"].str.contains("-128-")]
    if d.empty:
        return d
    g = _gbps_of(d)
    keep = set()
    for (plat, cipher), part in g.groupby(["platform", "cipher"]):
        keep.add((plat, cipher, "coarse"))
        opt = part[part["kernel"].str.startswith("optimised") & (part["measure"] == "device-resident")]
        if len(opt):
            top = opt[opt["bytes"] == opt["bytes"].max()]
            keep.add((plat, cipher, top.loc[top["gbps"].idxmax(), "kernel"]))
    kernel = d["variant"].str.split("/").str[0]
    return d[[(p, c, k) in keep for p, c, k in zip(d["platform"], d["cipher"], kernel)]]


def gpu_measured_records() -> pd.DataFrame:
    """The checked-in GPU runs (s2mc.analysis.gpu_measured), or no records when they cannot be read."""
    from s2mc.analysis import gpu_measured
    try:
        return gpu_measured.load()
    except S2mcError:
        return records.empty()


def _measured_sources_blocks(b: list) -> None:
    """Where our GPU figures measured elsewhere come from: GPU, date, commit, command."""
    from s2mc.analysis import gpu_measured

    try:
        srcs = gpu_measured.sources()
    except S2mcError:
        return
    b.append(Block("p", "**Our GPU figures measured elsewhere** (analysis/gpu_measurements/; records "
                        "with experiment `measured:<file>`, not runs of this host):"))
    b.append(Block("table", table=pd.DataFrame([{"file": x["file"], "GPU": x["gpu"], "date": x["date"],
                                                 "commit": x["commit"], "command": x["command"]} for x in srcs])))


def _grid_gbps(measured: pd.DataFrame) -> pd.DataFrame:
    """The CUDA benchmark grids among the runs measured elsewhere, AES-128 and Camellia-128, Gbit/s."""
    g = _gbps_of(measured)
    ex = set(measured.loc[measured["source"] == "opencl", "experiment"])
    return g[(g["backend"] == "cuda") & (g["bits"] == "128") & ~g["experiment"].isin(ex)] if len(g) else g


def _seed000_gpu_blocks(b: list, ref: pd.DataFrame, measured: pd.DataFrame) -> None:
    """Seed 000 §6.2 and Figs. 12-14 (coarse-grain against extended blocks on a GPU) beside our
    kernels measured elsewhere."""
    cuda = _grid_gbps(measured)
    s0 = ref[(ref["experiment"] == "seed000_text") & (ref["engine"] == "cuda")]
    paper = {v: float(x) for v, x in zip(s0["variant"], s0["value"])}
    rows = []
    d = cuda[(cuda["cipher"] == "aes") & (cuda["measure"] == "device-resident")] if len(cuda) else cuda
    for (plat, n), part in d.groupby(["platform", "bytes"]) if len(d) else []:
        k = dict(zip(part["kernel"], part["gbps"]))
        opt = max((v for kk, v in k.items() if kk.startswith("optimised")), default=None)
        if "coarse" in k and "extended-4096" in k:
            rows.append({"GPU": plat, "size": summaries.human_bytes(int(n)), "coarse": f"{k['coarse']:.0f}",
                         "extended-4096": f"{k['extended-4096']:.0f}",
                         "extended/coarse": f"{k['extended-4096'] / k['coarse']:.2f}",
                         "optimised (best)": "–" if opt is None else f"{opt:.0f}"})
    if not rows or not paper:
        b.append(Block("p", "Seed 000's GPU figures (Figs. 12-14) need CUDA records of the coarse and "
                            "extended kernels: `bash gpu-backends/run_on_gpu.sh` on a GPU."))
        return
    b.append(Block("p", f"Seed 000 §6.2 and Figs. 12-14 (GeForce 8800 GT, 32 MB): coarse-grain "
                        f"{paper.get('coarse', float('nan')):.0f} Gbit/s, 4 KB extended blocks "
                        f"{paper.get('extended-4096', float('nan')):.0f} Gbit/s, "
                        f"{paper.get('extended-4096-vs-coarse', float('nan')):.2f}x. Ours, AES-128 device-resident "
                        f"(the kernel alone), Gbit/s, measured elsewhere (the sources are listed in "
                        f"{coverage.SECTIONS['seed002-gpu']}):"))
    b.append(Block("table", table=pd.DataFrame(rows)))


def _seed004_gpu_blocks(b: list, ref: pd.DataFrame, measured: pd.DataFrame) -> None:
    """Seed 004's GPU column (Table 2) beside our CUDA kernels host to host, measured elsewhere."""
    cuda = _grid_gbps(measured)
    s4 = ref[(ref["experiment"] == "seed004_table2") & (ref["variant"] == "gpu") & (ref["metric"] == "seconds")]
    p4 = dict(zip(s4["bytes"].astype("int64"), s4["value"].astype(float)))
    if cuda.empty or not p4:
        return
    host = cuda[(cuda["cipher"] == "aes") & cuda["measure"].str.startswith("host")
                & cuda["kernel"].str.startswith("optimised")]
    rows = []
    for n in sorted(set(host["bytes"]) & set(p4)):
        row = {"size": summaries.human_bytes(int(n)), "seed 004 GTX 480 ms": summaries.fixed(p4[n] * 1e3)}
        for (plat, meas), part in host[host["bytes"] == n].groupby(["platform", "measure"]):
            ms = n * 8 / part["gbps"].max() / 1e9 * 1e3
            row[f"ours {plat} {meas} ms"] = f"{summaries.fixed(ms)} ({p4[n] * 1e3 / ms:.0f}x)"
        rows.append(row)
    if rows:
        b.append(Block("p", "Seed 004's GPU column (Table 2, GTX 480, C++ AMP, host to host, ECB) beside our "
                            "CUDA kernels host to host measured elsewhere (CTR, the same work per block), "
                            "milliseconds (paper/ours in brackets; the best optimised configuration at each "
                            "size):"))
        b.append(Block("table", table=pd.DataFrame(rows).fillna("–")))


def _measured_gpu_blocks(b: list, measured: pd.DataFrame) -> None:
    """Seed 002 Table 2's columns for our kernel, CUDA against OpenCL and the file path, from the
    runs measured elsewhere."""
    from s2mc.analysis import gpu_measured

    for t, src in gpu_measured.occupancy_table():
        b.append(Block("p", f"Seed 002 Table 2's columns for our kernels on {src['gpu']} ({src['date']}, "
                            f"commit {src['commit']}; cudaFuncGetAttributes and the occupancy API):"))
        b.append(Block("table", table=t))
    # the runs that measured OpenCL, with the CUDA kernels they ran beside it
    ex = set(measured.loc[measured["source"] == "opencl", "experiment"]) if len(measured) else set()
    if ex:
        d = _gbps_of(measured[measured["experiment"].isin(ex)])
        rows = []
        # one measurement's rows at a time: two runs on the same GPU are not mixed in one row
        for (run, plat, cipher, kind), part in d.assign(
                kind=d["measure"].map(lambda m: "device-resident" if m == "device-resident" else "host to host")
        ).groupby(["experiment", "platform", "cipher", "kind"]):
            cl = part.loc[part["backend"] == "opencl", "gbps"]
            if cl.empty:
                continue
            row = {"run": run.removeprefix(gpu_measured.PREFIX), "GPU": plat, "cipher": cipher, "measure": kind,
                   "OpenCL": f"{cl.iloc[0]:.0f}"}
            for _, r in part[part["backend"] == "cuda"].iterrows():
                row[f"CUDA {r['kernel']}"] = f"{r['gbps']:.0f} ({r['gbps'] / cl.iloc[0]:.2f}x)"
            rows.append(row)
        if rows:
            b.append(Block("p", "CUDA against OpenCL on the same GPU, 1 GiB, Gbit/s (CUDA/OpenCL in brackets):"))
            b.append(Block("table", table=pd.DataFrame(rows).fillna("–")))
    ft, fsrc = gpu_measured.files_table()
    if fsrc is not None and len(ft):
        cp = ft.loc[ft["command"] == "cp", "best_s"]
        cu = ft.loc[ft["command"] == "s2mc encrypt --backend cuda", "best_s"]
        words = (f" The CUDA file path's best run took {float(cu.iloc[0]):.2f} s against cp's "
                 f"{float(cp.iloc[0]):.2f} s: {float(cp.iloc[0]) / float(cu.iloc[0]):.0%} of the copy bound."
                 if len(cp) and len(cu) else "")
        b.append(Block("p", f"Files on {fsrc['gpu']} ({fsrc['date']}, commit {fsrc['commit']}): wall seconds "
                            f"of each run on a page-cached file.{words}"))
        show = ft.copy()
        for c in show.columns:
            if c.endswith("_s") or c in ("GB/s", "cp best / best"):
                show[c] = show[c].map(lambda v: f"{v:.2f}")
        b.append(Block("table", table=show))
