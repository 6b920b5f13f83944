"""Our GPU figures measured elsewhere, as records: `s2mc.analysis.gpu_measured`.

The GPU runs happen on machines lent for a while (docs/gpu.md, "On a GPU"); their results are
checked in under analysis/gpu_measurements/ as data, one CSV per run with sources.json naming the
GPU, the date, the project commit and the command that produced it. This module reads them into
the records schema so that `s2mc report` shows them beside the seed papers on any machine, marked
as measured elsewhere: `source` cuda (or opencl), `platform` the GPU's name, `experiment`
"measured:<file stem>" and `run_id` "measured-<file stem>", so they never pass for this host's runs.

    from s2mc.analysis import gpu_measured
    gpu_measured.load()          # records (bytes_per_second, and seconds where the file has them)
    gpu_measured.sources()       # [{file, gpu, date, commit, command, machine, ...}]
    gpu_measured.files_table()   # the file-encryption wall times side by side
    gpu_measured.ring_tables()   # the file path in one process, before the ring and with it
    gpu_measured.host1m_tables() # the 1 MB host-serial runs: medians per stage, in microseconds
    gpu_measured.occupancy_table()   # seed 002 Table 2's columns for our kernels
    gpu_measured.startup_tables()    # where a command-line `s2mc encrypt` spends its time
    gpu_measured.ringcheck_tables()  # the OpenCL ring's check (bench/bench_opencl_ring.py)
"""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from s2mc.analysis import records
from s2mc.common.errors import S2mcError

MEASURED_DIR = Path(__file__).resolve().parent / "gpu_measurements"
#: experiment names of these records start with it (the report tells them apart by it).
PREFIX = "measured:"


def sources() -> list[dict]:
    """Every checked-in run: its file name and what sources.json says about it."""
    path = MEASURED_DIR / "sources.json"
    try:
        meta = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise S2mcError(f"{path}: cannot read the GPU measurements' sources ({exc})") from None
    return [dict(v, file=k) for k, v in meta.items()]


def experiment_of(src: dict) -> str:
    return PREFIX + Path(src["file"]).stem


def _read(src: dict, dtype=None) -> pd.DataFrame:
    path = MEASURED_DIR / src["file"]
    try:
        return pd.read_csv(path, dtype=dtype or {"kernel": str, "measure": str})
    except (OSError, ValueError) as exc:
        raise S2mcError(f"{path}: cannot read ({exc})") from None


def _rows(src: dict) -> list[dict]:
    """Records rows of one run (layouts: bench = the bench CSV, gbps = median Gbps per cell,
    backends = CUDA against OpenCL; files has no records, see files_table)."""
    d = _read(src)
    stem = Path(src["file"]).stem
    out = []
    for r in d.itertuples(index=False):
        r = r._asdict()
        cipher = str(r.get("cipher", src.get("cipher", "aes")))
        bits = int(r.get("key_bits", src.get("key_bits", 128)))
        backend = str(r.get("backend", "cuda"))
        base = dict(run_id=f"measured-{stem}", experiment=PREFIX + stem, source=backend,
                    platform=src["gpu"], workload=f"{cipher}-{bits}-ctr",
                    variant=f"{r['kernel']}/{r['measure']}", engine=backend, cores=1, core=-1,
                    bytes=int(r["bytes"]), cipher=cipher)
        if src["layout"] == "bench":
            out.append(dict(base, metric="seconds" if r["measure"].startswith("host") else "kernel_seconds",
                            value=float(r["seconds"])))
            out.append(dict(base, metric="bytes_per_second", value=r["bytes"] / float(r["seconds"])))
        else:
            out.append(dict(base, metric="bytes_per_second", value=float(r["gbps"]) * 1e9 / 8))
    return out


#: Layouts that are tables, not records: the file runs (from the command line, and in one process
#: before and with the ring), the 1 MB host-serial runs and the occupancy rows (seed 002's Table 2).
TABLE_LAYOUTS = ("files", "ring", "host1m", "occupancy", "startup", "ringcheck")


def load() -> pd.DataFrame:
    """Every checked-in GPU run as records (the tables of TABLE_LAYOUTS excepted)."""
    rows = [row for src in sources() if src["layout"] not in TABLE_LAYOUTS for row in _rows(src)]
    return records.make_records(rows) if rows else records.empty()


def files_table(file: str | None = None) -> tuple[pd.DataFrame, dict | None]:
    """The file-encryption runs of `file` (default: the first checked in) as command, cipher, each
    run's wall seconds where the file kept them, the best, its speed and its ratio to cp's best on
    the same file; and their source. (empty, None) when there is none."""
    src = next((s for s in sources() if s["layout"] == "files" and file in (None, s["file"])), None)
    if src is None:
        return pd.DataFrame(), None
    d = _read(src)
    runs = [c for c in d.columns if c.startswith("run")]
    if runs:
        d["best_s"] = d[runs].min(axis=1)
    cp = d.loc[d["command"] == "cp", "best_s"]
    d["GB/s"] = d["bytes"] / d["best_s"] / 1e9
    d["cp best / best"] = (float(cp.iloc[0]) / d["best_s"]) if len(cp) else float("nan")
    return d.drop(columns=["bytes"]).fillna({"cipher": ""}), src


def ring_tables() -> list[tuple[pd.DataFrame, dict]]:
    """The file path in one process (bench/bench_gpu_files.py), one (table, source) per run: each
    row's median and best seconds, its median speed (GB/s) and its median over cp's."""
    out = []
    for src in (s for s in sources() if s["layout"] == "ring"):
        d = _read(src, dtype={"row": str, "backend": str, "path": str})
        cp = d.loc[d["path"] == "copy", "median_s"]
        d["GB/s"] = d["bytes"] / d["median_s"] / 1e9
        d["median / cp's"] = d["median_s"] / float(cp.iloc[0]) if len(cp) else float("nan")
        out.append((d.fillna({"backend": ""}), src))
    return out


def host1m_tables() -> list[tuple[pd.DataFrame, dict]]:
    """The 1 MB host-serial runs (s2mc-gpu-bench, fresh processes), one (table, source) per
    measurement: medians in microseconds of the wall, each CUDA-event stage and the host's wait,
    with the wall's Gbit/s and the stages' sum."""
    out = []
    for src in (s for s in sources() if s["layout"] == "host1m"):
        d = _read(src, dtype={"run": str, "measure": str})
        d["gbps"] = d["bytes"] * 8 / (d["wall_us"] * 1e-6) / 1e9
        d["stages_us"] = d["h2d_us"] + d["kernel_us"] + d["d2h_us"]
        out.append((d, src))
    return out


def occupancy_table() -> list[tuple[pd.DataFrame, dict]]:
    """Seed 002 Table 2's columns for our kernels, one (table, source) per checked-in run."""
    return [(_read(s, dtype=str), s) for s in sources() if s["layout"] == "occupancy"]


def startup_tables() -> list[tuple[pd.DataFrame, dict]]:
    """bench/bench_encrypt_startup.py's runs, one (table, source) each: seconds per phase (rows)
    and backend (columns), with the command line's speed against cp's and its excess over the same
    call in one process, derived here as the bench derives them."""
    out = []
    for src in (s for s in sources() if s["layout"] == "startup"):
        d = _read(src, dtype={"phase": str, "backend": str})
        t = d.pivot(index="phase", columns="backend", values="seconds")
        t = t.reindex(index=list(dict.fromkeys(d["phase"])), columns=list(dict.fromkeys(d["backend"])))
        line, one, cp = (t.loc[r] for r in ("command line, spawn to exit", "the same call inside one process",
                                            "cp of the same file (spawn to exit)"))
        t.loc["command line: speed vs cp"] = cp / line
        t.loc["in one process: speed vs cp"] = cp / one
        t.loc["command line over the call in one process"] = line - one
        out.append((t, src))
    return out


def ringcheck_tables() -> list[tuple[pd.DataFrame, dict]]:
    """bench/bench_opencl_ring.py's runs, one (table, source) each: row, median seconds, GB/s."""
    return [(_read(s, dtype={"row": str}), s) for s in sources() if s["layout"] == "ringcheck"]


__all__ = ["MEASURED_DIR", "PREFIX", "TABLE_LAYOUTS", "sources", "experiment_of", "load", "files_table",
           "ring_tables", "host1m_tables", "occupancy_table", "startup_tables", "ringcheck_tables"]
