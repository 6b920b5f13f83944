"""The report's section 4.8 (and `s2mc demo`'s summary of it): Peterson's lock broken by the store
buffers and mended by one fence, with the fence's cost, and the speedup store buffers buy on a
store-heavy program, from the records of s2mc.experiments.consistency. The simulated litmus tests
themselves go in section 4.7's table beside this CPU's (s2mc.analysis.litmus_native).

    from s2mc.analysis import consistency
    consistency.sentences(df)           # [] when the records hold none of its rows
    blocks = consistency.blocks(df, Block)

Rows (docs/records.md): `litmus_runs` and `relaxed_runs` of a litmus test per model and fencing
(`tso/plain`, `tso/fence@f1`; the relaxed outcome after them), `consistency_cycles` of its run 0
under the same variants, and of the store-heavy program per model (`sc`, `tso`, `tso/fence@f0`).
"""
from __future__ import annotations

import pandas as pd

METRICS = ("litmus_runs", "relaxed_runs", "consistency_cycles")


def _rows(df: pd.DataFrame, metric: str) -> pd.DataFrame:
    return df[(df["metric"] == metric) & (df["source"] == "sim")] if len(df) else df


def _fences(fencing: str) -> str:
    """`fence@f1` in words: `a fence at f1` (`fence@f0+f1`: `fences at f0, f1`)."""
    labels = fencing.split("@", 1)[1].split("+")
    return f"a fence at {labels[0]}" if len(labels) == 1 else f"fences at {', '.join(labels)}"


def litmus_sentences(df: pd.DataFrame) -> list[str]:
    """Per litmus test and model: how many runs printed its relaxed outcome without fences and with
    each fencing, and what each fencing cost in run 0's cycles."""
    runs, relaxed, cycles = (_rows(df, m) for m in METRICS)
    out = []
    for test in dict.fromkeys(relaxed["workload"]) if len(relaxed) else ():
        mine = relaxed[relaxed["workload"] == test]
        by_model: dict = {}
        for r in mine.itertuples(index=False):
            model, fencing, outcome = str(r.variant).split("/", 2)
            by_model.setdefault(model, []).append((fencing, outcome, int(r.value)))
        for model, cells in by_model.items():
            def total(fencing):
                at = runs[(runs["workload"] == test) & (runs["variant"] == f"{model}/{fencing}")]
                return int(at["value"].sum())

            def cyc(fencing):
                at = cycles[(cycles["workload"] == test) & (cycles["variant"] == f"{model}/{fencing}")]
                return int(at["value"].iloc[0]) if len(at) else None
            outcome = cells[0][1]
            parts = [f"{seen} of {total(f)} runs {'without fences' if f == 'plain' else 'with ' + _fences(f)}"
                     for f, _, seen in cells]
            text = f"{test} under {model.upper()} printed {outcome} in " + ", and in ".join(parts)
            base = cyc("plain")
            for f, _, _ in cells:
                mine_c = cyc(f)
                if f != "plain" and base is not None and mine_c is not None:
                    text += (f"; the {_fences(f).removeprefix('a ')} cost {mine_c - base} cycles in run 0, every "
                             f"core starting at once ({mine_c} against {base})")
            out.append(text + ".")
    return out


def store_table(df: pd.DataFrame) -> pd.DataFrame:
    """The store-heavy program's cycles per model (and fencing), and the speedup over sc."""
    c = _rows(df, "consistency_cycles")
    litmus_tests = set(_rows(df, "relaxed_runs")["workload"]) if len(df) else set()
    c = c[~c["workload"].isin(litmus_tests)] if len(c) else c     # the litmus tests' run 0: litmus_sentences
    rows = []
    for (workload, cores), g in c.groupby(["workload", "cores"], sort=False):
        sc = g[g["variant"] == "sc"]["value"]
        for r in g.itertuples(index=False):
            rows.append({"program": workload, "cores": int(cores), "machine": r.variant, "cycles": int(r.value),
                         "speedup over sc": f"{sc.iloc[0] / r.value:.2f}" if len(sc) else "–"})
    return pd.DataFrame(rows)


def store_sentences(df: pd.DataFrame) -> list[str]:
    """What the store buffers buy, and what a fence after every store takes back, in words."""
    t = store_table(df)
    out = []
    for (program, cores), g in t.groupby(["program", "cores"], sort=False) if len(t) else ():
        cyc = dict(zip(g["machine"], g["cycles"]))
        if "sc" not in cyc:
            continue
        parts = [f"{program} on {cores} cores takes {cyc['sc']} cycles under SC"]
        for machine, n in cyc.items():
            if machine == "sc":
                continue
            model, _, fencing = machine.partition("/")
            how = f"{model.upper()}" + (f" with {_fences(fencing)}" if fencing else "")
            parts.append(f"{n} under {how} ({cyc['sc'] / n:.2f}x SC's speed)")
        out.append(", ".join(parts) + ".")
    return out


def sentences(df: pd.DataFrame) -> list[str]:
    return litmus_sentences(df) + store_sentences(df)


def blocks(df: pd.DataFrame, block) -> list:
    """Section 4.8 as report blocks; [] when the records hold none of its rows."""
    text = sentences(df)
    if not text:
        return []
    b = [block("h3", "4.8 Memory consistency on the simulated machine: a lock and the store buffers",
               anchor="consistency"),
         block("p", "Measured by `s2mc demo` (s2mc.experiments.consistency; docs/consistency.md). A litmus "
                    "test runs many times under varied timings (`s2mc litmus`, seed 0); Peterson's lock prints "
                    "count=1 when both cores were in its critical section at once. Run 0 starts every core "
                    "at once on the default machine. The store-heavy program writes an array, one store and "
                    "no load per word; with store buffers (TSO) a store waits in the buffer while its core "
                    "goes on.")]
    b += [block("p", s) for s in text]
    t = store_table(df)
    if len(t):
        b.append(block("table", table=t))
    return b
