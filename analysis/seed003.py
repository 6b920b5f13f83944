"""Our AES runs beside seed 003's Tables 3 and 4 (ECTI-CARD 2014): cycles, summed stall cycles and
speedup, ours | the paper's | the ratio, for the runs of a grid that match the paper's configuration.

    from s2mc.analysis import seed003
    text, rows = seed003.comparison(runs)     # runs: s2mc.workloads.cipher_sim.AesRun objects

`s2mc aes` prints the text after its tables (and the rows with --json); the report compares the
same tables from records (s2mc.analysis.report).
"""
from __future__ import annotations

from s2mc.common.text import text_table

from .seeds import load_reference

#: Seed 003's timing model: a data-memory access takes 2 cycles, the second of which a single core
#: counts as a stall (the simulator's default memory latency is this one: docs/aes-on-s2.md).
PAPER_MEM_LATENCY = 2
#: The data sizes of the paper's tables (bytes); the tables go up to four cores.
SEED003_BYTES = (32, 64, 128, 256)
SEED003_MAX_CORES = 4
#: The paper's configuration in our records' names (the variant gains /O0 at -O0).
SEED003_WORKLOAD = "aes-128-ecb-enc"
SEED003_VARIANT = "bytes/interleaved"
#: The model that reproduces the paper (`s2mc aes --preset seed003`, s2mc.workloads.cipher_sim.grid.PRESETS).
SEED003_MODEL_VARIANT = "bytes/interleaved/burst4/O0/per-core/cal-seed003"
#: What each compared configuration is called in the text: (variant, Rz level, how ours was made).
_COMPARED = ((SEED003_VARIANT, 1, "ours compiled at -O1"), (SEED003_VARIANT + "/O0", 0, "ours compiled at -O0"),
             (SEED003_MODEL_VARIANT, 0, "ours: the seed 003 model (--preset seed003: fixed priority with a "
              "burst limit of 4, the key expanded on every core, -O0, calibrated to the paper's 1-core cells "
              "only)"))


def paper_cells() -> dict[tuple[int, int], tuple[float, float]]:
    """(bytes, cores) -> (cycles, summed stall cycles) of Tables 3 and 4 (14 cells)."""
    ref = load_reference(["seed003_table3", "seed003_table4"])
    got: dict = {}
    for r in ref.itertuples():
        got.setdefault((int(r.bytes), int(r.cores)), {})[r.metric] = float(r.value)
    return {k: (v["cycles"], v["stall_cycles"]) for k, v in sorted(got.items())}


def errors(cells: dict[tuple[int, int], tuple[float, float]]) -> dict:
    """How far (bytes, cores) -> (cycles, stalls) lies from the paper: the error of each cell
    (ours / paper - 1) and the mean absolute error of cycles and of stalls over the multi-core cells
    that both have (`multi_*`; the 1-core cells are what a calibration is fitted to) and over all
    of them (`all_*`), as fractions."""
    paper = paper_cells()
    both = sorted(k for k in cells if k in paper)
    cyc = {k: cells[k][0] / paper[k][0] - 1 for k in both}
    st = {k: cells[k][1] / paper[k][1] - 1 for k in both}
    multi = [k for k in both if k[1] > 1]

    def mae(e, keys):
        return sum(abs(e[k]) for k in keys) / len(keys) if keys else float("nan")
    return {"cycles": cyc, "stalls": st, "multi_cycles": mae(cyc, multi), "multi_stalls": mae(st, multi),
            "all_cycles": mae(cyc, both), "all_stalls": mae(st, both), "cells": len(both),
            "multi_cells": len(multi)}


def comparison(runs) -> tuple[str, list[dict]]:
    """Our seed-003 configuration beside Tables 3 and 4 of the paper, with ratios: one comparison
    per Rz optimisation level that ran, and one for the seed 003 model (--preset seed003) with its
    errors (text, and one row per (variant, bytes, cores)). Empty when no run matches the paper's
    configuration. With several engines, the first engine's runs count."""
    texts, rows = [], []
    for variant, opt, label in _COMPARED:
        mine = {}
        for r in runs:
            if (r.config.workload == SEED003_WORKLOAD and r.config.opt == opt and r.config.variant == variant
                    and r.nbytes in SEED003_BYTES and r.config.cores <= SEED003_MAX_CORES):
                mine.setdefault((r.nbytes, r.config.cores), r)
        if mine:
            t, rr = _one(mine, opt, label)
            for row in rr:
                row["variant"] = variant
            if variant == SEED003_MODEL_VARIANT:
                t += "\n\n" + error_text(errors({k: (r.result.cycles, r.result.stall_cycles)
                                                  for k, r in mine.items()}))
            texts.append(t)
            rows += rr
    return "\n\n".join(texts), rows


def error_text(e: dict) -> str:
    """The errors of errors() in words: the multi-core means, and the worst cells."""
    if not e["multi_cells"]:
        return "No multi-core cell of the paper's to compare with."
    worst = max(e["cycles"], key=lambda k: abs(e["cycles"][k]) if k[1] > 1 else -1)
    worst_s = max(e["stalls"], key=lambda k: abs(e["stalls"][k]) if k[1] > 1 else -1)
    return (f"Error against the paper over its {e['multi_cells']} multi-core cells (the calibration is not "
            f"fitted to them, but the model's assumptions were chosen by scoring hypotheses on them): cycles {100 * e['multi_cycles']:.2f} % and summed stalls "
            f"{100 * e['multi_stalls']:.2f} % mean absolute error; worst cycles {100 * e['cycles'][worst]:+.1f} % "
            f"({worst[0]} bytes, {worst[1]} cores), worst stalls {100 * e['stalls'][worst_s]:+.1f} % "
            f"({worst_s[0]} bytes, {worst_s[1]} cores). All {e['cells']} cells: cycles "
            f"{100 * e['all_cycles']:.2f} %, stalls {100 * e['all_stalls']:.2f} %.")


def _one(mine: dict, opt: int, label: str) -> tuple[str, list[dict]]:
    ref = load_reference(["seed003_table3", "seed003_table4"])
    paper = {(int(r.bytes), int(r.cores), r.metric): float(r.value) for r in ref.itertuples()}
    sizes = sorted({b for b, _ in mine})
    cores = sorted({c for _, c in mine})
    rows = []
    for b in sizes:
        for c in cores:
            r = mine.get((b, c))
            if r is None:
                continue
            p_cyc, p_st = paper.get((b, c, "cycles")), paper.get((b, c, "stall_cycles"))
            o1 = mine.get((b, 1))
            p1 = paper.get((b, 1, "cycles"))
            rows.append({"opt": opt, "bytes": b, "cores": c, "cycles": r.result.cycles,
                         "paper_cycles": p_cyc,
                         "cycles_ratio": r.result.cycles / p_cyc if p_cyc else None,
                         "stall_cycles": r.result.stall_cycles, "paper_stall_cycles": p_st,
                         "stall_ratio": r.result.stall_cycles / p_st if p_st else None,
                         "speedup": o1.result.cycles / r.result.cycles if o1 else None,
                         "paper_speedup": p1 / p_cyc if p1 and p_cyc else None})

    def bytes_by_cores(title, cell):
        """A table with one row per size and one column per core count; cell(row) gives the parts
        of one cell (ours, the paper's, ...), each part aligned within its column, '-' where a
        number is missing (the paper has no run there, or there is no 1-core run of ours)."""
        head = ["bytes"] + [f"{c} core{'s' if c > 1 else ''}" for c in cores]
        parts = {(b, c): cell(row) for row in rows for b, c in [(row["bytes"], row["cores"])]}
        body = []
        for b in sizes:
            cells = [str(b)]
            for c in cores:
                width = [max((len(p[i]) for (_, cc), p in parts.items() if cc == c), default=1)
                         for i in range(max((len(p) for (_, cc), p in parts.items() if cc == c), default=0))]
                got = parts.get((b, c))
                cells.append("" if got is None else " | ".join(x.rjust(w) for x, w in zip(got, width)))
            body.append(cells)
        return f"{title}\n" + text_table(head, body)

    def grid(title, ours_key, paper_key, ratio_key):
        def cell(row):
            if row[paper_key] is None:
                return (str(row[ours_key]), "-", "-")
            return (str(row[ours_key]), f"{row[paper_key]:.0f}", f"{row[ratio_key]:.2f}")
        return bytes_by_cores(title, cell)

    def speedups():
        def cell(row):
            ours = "-" if row["speedup"] is None else f"{row['speedup']:.2f}"
            return (ours, f"{row['paper_speedup']:.2f}" if row["paper_speedup"] else "-")
        note = "; '-': no 1-core run of ours to compare with" if any(r["speedup"] is None for r in rows) else ""
        return bytes_by_cores(f"Speedup over one core (ours | seed 003{note})", cell)

    text = "\n\n".join([
        f"== Seed 003 (ECTI-CARD 2014), AES-128 ECB, byte-oriented, interleaved blocks, L = 2; {label} ==",
        grid("Table 3: cycles to complete the task (ours | seed 003 | ours/seed)",
             "cycles", "paper_cycles", "cycles_ratio"),
        grid("Table 4: memory stall cycles, summed over cores (ours | seed 003 | ours/seed)",
             "stall_cycles", "paper_stall_cycles", "stall_ratio"),
        speedups(),
        "Their AES program is unpublished: docs/aes-on-s2.md lists how ours differs."])
    return text, rows
