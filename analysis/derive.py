"""Derived metrics: computed from measured rows, returned as rows in the same schema.

Every function takes a records frame and returns a frame of *new* rows only (validated); use
`derive_all(df)` to get `df` plus everything derivable, without duplicating a metric a run
already measured.

- per run and core, from simulator counters: compute_cycles, mem_latency_cycles, stall_fraction,
  bus_wait_fraction, ipc, bus_utilisation (whole run); mem_accesses is the simulator's own count
  (s2mc.simulator.records), never reads + writes, which double-counts xchg;
- throughput from seconds and bytes: bytes_per_second, gb_per_second, gbps (and any of the three
  from another);
- across runs: speedup and parallel efficiency against the 1-core (1-thread) run of the same
  configuration.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from s2mc.analysis import records

#: Columns that identify a configuration apart from its core count (for speedup baselines).
CONFIG_KEYS = ["experiment", "source", "platform", "workload", "variant", "engine", "bytes"]
#: Columns that identify one row's subject apart from the metric.
ROW_KEYS = ["run_id", "experiment", "source", "platform", "workload", "variant", "engine",
            "cores", "core", "bytes"]


def wide(df: pd.DataFrame, metrics: list[str] | None = None, index: list[str] | None = None
         ) -> pd.DataFrame:
    """One row per (run, core), one column per metric (mean over duplicates)."""
    index = index or ROW_KEYS
    sub = df if metrics is None else df[df["metric"].isin(metrics)]
    if sub.empty:
        return pd.DataFrame(columns=index + list(metrics or []))
    out = sub.pivot_table(index=index, columns="metric", values="value", aggfunc="mean",
                          observed=True)
    out.columns.name = None
    return out.reset_index()


def _emit(base: pd.DataFrame, metric: str, values: pd.Series) -> list[dict]:
    v = pd.to_numeric(values, errors="coerce").astype(float)
    keep = np.isfinite(v)
    out = base.loc[keep, ROW_KEYS].assign(metric=metric, value=v[keep])
    return out.to_dict("records")


def _frame(rows: list[dict]) -> pd.DataFrame:
    return records.make_records(rows) if rows else records.empty()


def counter_metrics(df: pd.DataFrame) -> pd.DataFrame:
    """Per (run, core) metrics from simulator counters (see docs/records.md)."""
    needed = ["cycles", "instructions", "stall_cycles", "bus_wait_cycles", "mem_accesses",
              "bus_busy_cycles", "mem_latency"]
    w = wide(df[df["source"] == "sim"], needed)
    if w.empty:
        return records.empty()
    for m in needed:
        if m not in w:
            w[m] = float("nan")
    rows: list[dict] = []
    rows += _emit(w, "compute_cycles", w["instructions"])
    lat = w["stall_cycles"] - w["bus_wait_cycles"]
    # without stall/bus-wait counters, (L-1) x accesses when L is known
    lat = lat.fillna((w["mem_latency"] - 1) * w["mem_accesses"])
    rows += _emit(w, "mem_latency_cycles", lat)
    # whole-run counters are sums over cores: divide by the core-cycles of the run
    core_cycles = w["cycles"] * w["cores"].where(w["core"] == -1, 1).clip(lower=1)
    rows += _emit(w, "stall_fraction", w["stall_cycles"] / core_cycles)
    rows += _emit(w, "bus_wait_fraction", w["bus_wait_cycles"] / core_cycles)
    rows += _emit(w, "ipc", w["instructions"] / w["cycles"])
    whole = w[w["core"] == -1]
    busy = whole["bus_busy_cycles"]
    if busy.isna().any():  # whole-run busy cycles missing: sum the per-core ones
        per_core = w[w["core"] >= 0].groupby("run_id")["bus_busy_cycles"].sum(min_count=1)
        busy = busy.fillna(whole["run_id"].map(per_core).astype("float64"))
    rows += _emit(whole, "bus_utilisation", busy / whole["cycles"])
    return _frame(rows)


def throughput(df: pd.DataFrame) -> pd.DataFrame:
    """bytes_per_second, gb_per_second and gbps from whichever of seconds / B/s / Gbit/s exists."""
    w = wide(df, ["seconds", "bytes_per_second", "gb_per_second", "gbps"])
    if w.empty:
        return records.empty()
    for m in ("seconds", "bytes_per_second", "gb_per_second", "gbps"):
        if m not in w:
            w[m] = float("nan")
    bps = w["bytes_per_second"].copy()
    with_size = w["bytes"] > 0
    bps = bps.fillna((w["bytes"] / w["seconds"]).where(with_size & (w["seconds"] > 0)))
    bps = bps.fillna(w["gb_per_second"] * 1e9).fillna(w["gbps"] * 1e9 / 8)
    rows = _emit(w, "bytes_per_second", bps)
    rows += _emit(w, "gb_per_second", bps / 1e9)
    rows += _emit(w, "gbps", bps * 8 / 1e9)
    return _frame(rows)


def speedup(df: pd.DataFrame, time_metrics: tuple[str, ...] = ("cycles", "seconds")
            ) -> pd.DataFrame:
    """speedup and efficiency of every whole-run row against its configuration's baseline.

    A configuration is `CONFIG_KEYS` (everything but the core count). The baseline is the median
    over its runs with cores == 1, or, when there is none, with the fewest cores (a configuration
    with a single core count other than 1 gets no speedup rows); then efficiency = speedup x baseline_cores / cores. Uses the first of `time_metrics` the
    configuration has (cycles for the simulator, seconds for real hardware).
    """
    whole = df[(df["core"] == -1) & df["metric"].isin(time_metrics)]
    if whole.empty:
        return records.empty()
    # one pass over all configurations at once (a report has hundreds): the configuration's id,
    # its first time metric, its baseline core count and the median at it, row by row
    gid = whole.groupby(CONFIG_KEYS, sort=False, dropna=False).ngroup()
    rank = whole["metric"].map({m: i for i, m in enumerate(time_metrics)})
    first = rank == rank.groupby(gid).transform("min")
    g, gid = whole[first], gid[first]
    has_one = (g["cores"] == 1).groupby(gid).transform("any")
    # nothing to compare against: a single core count other than 1
    usable = has_one | (g["cores"].groupby(gid).transform("nunique") >= 2)
    g, gid, has_one = g[usable], gid[usable], has_one[usable]
    base_cores = g["cores"].groupby(gid).transform("min").where(~has_one, 1)
    base = g["value"].where(g["cores"] == base_cores).groupby(gid).transform("median")
    keep = (base > 0) & (g["value"] > 0) & (g["cores"] > 0)
    g = g[keep].assign(_config=gid[keep], _speedup=(base / g["value"])[keep])
    g = g.assign(_efficiency=g["_speedup"] * base_cores[keep] / g["cores"]).sort_values("_config", kind="stable")
    rows: list[dict] = []
    for key, sp, ef in zip(g[ROW_KEYS].to_dict("records"), g["_speedup"], g["_efficiency"]):
        rows.append(dict(key, metric="speedup", value=float(sp)))
        rows.append(dict(key, metric="efficiency", value=float(ef)))
    return _frame(rows)


def _missing_only(df: pd.DataFrame, new: pd.DataFrame) -> pd.DataFrame:
    if new.empty:
        return new
    have = df[ROW_KEYS + ["metric"]].drop_duplicates()
    merged = new.merge(have, on=ROW_KEYS + ["metric"], how="left", indicator=True)
    return new[(merged["_merge"] == "left_only").to_numpy()].reset_index(drop=True)


def derive_all(df: pd.DataFrame) -> pd.DataFrame:
    """`df` plus every derived metric it does not already have (validated)."""
    df = records.validate(df)
    out = df
    for fn in (counter_metrics, throughput, speedup):
        new = fn(out)
        out = records.concat([out, _missing_only(out, new)])
    return out


def compare(ours: pd.DataFrame, reference: pd.DataFrame, metric: str,
            on: tuple[str, ...] = ("cores", "bytes")) -> pd.DataFrame:
    """Ours beside the paper's: one row per `on` key with columns ours, paper, ratio (ours/paper).

    Both frames are filtered to whole-run rows of `metric`; duplicates are averaged.
    """
    keys = list(on)

    def pick(d: pd.DataFrame, name: str) -> pd.DataFrame:
        d = d[(d["metric"] == metric) & (d["core"] == -1)]
        return d.groupby(keys, as_index=False)["value"].mean().rename(columns={"value": name})

    m = pick(ours, "ours").merge(pick(reference, "paper"), on=keys, how="outer")
    m["ratio"] = m["ours"] / m["paper"]
    return m.sort_values(keys).reset_index(drop=True)
