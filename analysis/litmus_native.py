"""The report's litmus section: the outcome counts of `s2mc litmus-native` (this CPU) beside any
simulated litmus rows, each test's interesting outcome against the SC, TSO and PSO verdicts.

    from s2mc.analysis import litmus_native
    blocks = litmus_native.blocks(df, Block)     # [] when the records hold no litmus rows

It reads the rows of metric `outcome_count` (docs/records.md): the workload is the test (`sb`), the
variant ends in the fencing and the outcome (`plain/r0=0 r1=0`, `mfence/r0=0 r1=0`); whatever comes
before them (a simulated run's memory model, `tso/plain/r0=0 r1=0`) names the column with the
platform, so each machine and model gets a column of its own. The run's instances are the sum of
its outcome counts.
"""
from __future__ import annotations

import pandas as pd

from s2mc.common import litmus as tests

METRIC = "outcome_count"
_SOURCES = {"native": "real", "sim": "simulated"}


def outcome_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The litmus rows as column (the machine: real/simulated, platform and model), test, fencing,
    outcome and count, summed over the runs of the same column."""
    rows = df[df["metric"] == METRIC] if len(df) else df
    out = []
    for r in rows.itertuples(index=False):
        parts = str(r.variant).split("/")
        if len(parts) < 2:
            continue
        config = "/".join(parts[:-2])
        label = f"{_SOURCES.get(r.source, r.source)} {r.platform}{' ' + config if config else ''}"
        out.append(dict(column=label, source=r.source, model=config or tests.X86_MODEL, test=r.workload,
                        fencing=parts[-2], outcome=parts[-1], count=int(r.value)))
    cols = ["column", "source", "model", "test", "fencing", "outcome", "count"]
    if not out:
        return pd.DataFrame(columns=cols)
    return pd.DataFrame(out).groupby(cols[:-1], as_index=False, sort=False)["count"].sum()


def _order(t: pd.DataFrame) -> list[tuple[str, str]]:
    """(test, fencing) pairs present, in s2mc.common.litmus's order, tests it does not know after."""
    present = set(zip(t["test"], t["fencing"]))
    known = [(n, f) for n in tests.TESTS for f in tests.FENCINGS if (n, f) in present]
    return known + sorted(present - set(known))


def interesting_table(t: pd.DataFrame) -> pd.DataFrame:
    """One row per test and fencing: the outcome the test is about, what each model says of it, and
    in each machine's column how many of its instances ended so (`seen / instances`)."""
    columns = list(dict.fromkeys(t["column"]))
    rows = []
    for name, fencing in _order(t):
        test = tests.TESTS.get(name)
        mine = t[(t["test"] == name) & (t["fencing"] == fencing)]
        row = {"test": name, "fences": fencing,
               "outcome": test.interesting if test else "–"}
        for m in tests.MODELS:
            row[m.upper()] = ("allowed" if test.allowed(m, fencing == tests.FENCE) else "forbidden") if test else "–"
        for c in columns:
            at = mine[mine["column"] == c]
            total = int(at["count"].sum())
            seen = int(at[at["outcome"] == row["outcome"]]["count"].sum())
            row[c] = f"{seen} / {total}" if total else "–"
        rows.append(row)
    return pd.DataFrame(rows)


def outcomes_table(t: pd.DataFrame) -> pd.DataFrame:
    """Every outcome seen, by test and fencing, with each machine's count."""
    wide = t.pivot_table(index=["test", "fencing", "outcome"], columns="column", values="count", aggfunc="sum",
                         sort=False)
    order = {k: i for i, k in enumerate(_order(t))}
    wide = wide.reset_index()
    wide["_k"] = [order[(a, b)] for a, b in zip(wide["test"], wide["fencing"])]
    first = wide[list(dict.fromkeys(t["column"]))].max(axis=1)
    wide = wide.assign(_n=-first).sort_values(["_k", "_n", "outcome"]).drop(columns=["_k", "_n"])
    for c in dict.fromkeys(t["column"]):
        wide[c] = [("–" if pd.isna(v) else int(v)) for v in wide[c]]
    return wide.rename(columns={"fencing": "fences"}).reset_index(drop=True)


def sentences(t: pd.DataFrame) -> list[str]:
    """What each machine's counts say about its model (s2mc.common.litmus.verdict), one sentence each: a
    real one's about x86-TSO, a simulated one's about the model it ran (its column's configuration)."""
    out = []
    for c in dict.fromkeys(t["column"]):
        mine = t[t["column"] == c]
        model = mine["model"].iloc[0]
        if model not in tests.MODELS:
            continue
        runs = []
        for name, fencing in _order(mine):
            at = mine[(mine["test"] == name) & (mine["fencing"] == fencing)]
            test = tests.TESTS.get(name)
            seen = int(at[at["outcome"] == test.interesting]["count"].sum()) if test else 0
            runs.append((name, fencing == tests.FENCE, seen, int(at["count"].sum())))
        native = mine["source"].iloc[0] == "native"
        text = tests.verdict(runs, model, "instances" if native else "runs")
        if text:
            machine = c.split(" ", 1)[1]            # the platform, then a simulated column's model
            where = machine if native else f"{machine.removesuffix(' ' + model)} under {model.upper()}"
            out.append(f"On {where}: {text}.")
    return out


def _simulated_note(t: pd.DataFrame) -> str:
    """What the simulated columns are, with their runs per test from the counts."""
    sim = t[t["source"] != "native"]
    if sim.empty:
        return ""
    runs = sorted({int(n) for n in sim.groupby(["column", "test", "fencing"])["count"].sum()})
    return (" A `simulated` column is the S2 machine under that model, each test run "
            f"{' to '.join(map(str, dict.fromkeys([runs[0], runs[-1]])))} times under varied timings by "
            "`s2mc litmus` (the fenced variant, `NAME_fence.s`, in the mfence rows: a `fence` where the CPU's "
            "has `mfence`).")


def blocks(df: pd.DataFrame, block) -> list:
    """The section as report blocks (`block(kind, text, table=...)`, s2mc.analysis.report.Block); [] when
    `df` holds no litmus rows."""
    t = outcome_rows(df)
    if t.empty:
        return []
    native = ("Measured by `s2mc litmus-native` (docs/consistency.md): each test runs as pinned threads "
              "that meet before every instance, with plain loads and stores (plain) or a full fence "
              "between every two operations (mfence). " if (t["source"] == "native").any() else "")
    b = [block("h3", "4.7 Litmus tests: this CPU beside the memory models", anchor="litmus-native"),
         block("p", native + "A cell is how many instances (or runs) ended with the test's interesting outcome, "
                    "of how many ran; SC, TSO and PSO say whether each model allows that outcome."
                    + _simulated_note(t))]
    b += [block("p", s) for s in sentences(t)]
    b.append(block("table", table=interesting_table(t)))
    b.append(block("p", "Every outcome observed, with its count in each column:"))
    b.append(block("table", table=outcomes_table(t)))
    return b
