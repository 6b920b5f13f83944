"""The records schema (docs/records.md): one tidy row per (run, core, metric).

Every run of every half of s2mc -- the simulator, native CPU AES, CUDA/OpenCL -- and every number
transcribed from a seed paper is stored as rows with exactly the columns in `COLUMNS`. Metrics and
their units are declared once, in `METRICS`; `docs/records.md` is generated from these declarations
(`python -m s2mc.analysis.records --write-docs docs/records.md`).

Stable API (other components import it):

    from s2mc.analysis import records
    df = records.make_records([{"run_id": rid, "source": "sim", "metric": "cycles", "value": 1234, ...}])
    records.write(df, "results/aes.parquet", params={...})   # also writes results/aes.manifest.json
    df = records.load(["results/", "other.csv"])

`make_records` fills defaults (and the unit from the metric declaration) and validates; `validate`
raises `S2mcError` naming the offending column.
"""
from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform as _platform
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from s2mc.common.errors import S2mcError, excerpt
from s2mc.common.outputs import check as check_output, one_unit, open_output, write_output
from s2mc.common.values import plain

# --------------------------------------------------------------------------------------------------
# Columns
# --------------------------------------------------------------------------------------------------

#: The columns, in order. Nothing else may appear in a records frame.
COLUMNS: tuple[str, ...] = (
    "run_id", "experiment", "source", "platform", "workload", "variant", "engine",
    "cores", "core", "bytes", "metric", "value", "unit", "cipher", "spread", "disturbed",
)

#: Column kinds: "str", "int" (int64), "float" (float64) or "bool".
KINDS: dict[str, str] = {
    "run_id": "str", "experiment": "str", "source": "str", "platform": "str", "workload": "str",
    "variant": "str", "engine": "str", "cores": "int", "core": "int", "bytes": "int",
    "metric": "str", "value": "float", "unit": "str", "cipher": "str", "spread": "float", "disturbed": "bool",
}

#: pandas dtypes used for every frame this module returns.
DTYPES: dict[str, str] = {c: {"str": "string", "int": "int64", "float": "float64", "bool": "bool"}[k]
                          for c, k in KINDS.items()}

#: Allowed values of `source`.
SOURCES: tuple[str, ...] = ("sim", "native", "cuda", "opencl", "reference")

#: Defaults `make_records` fills in for columns a row leaves out (unit comes from the metric).
DEFAULTS: dict[str, object] = {
    "experiment": "", "platform": "", "workload": "", "variant": "", "engine": "",
    "cores": 1, "core": -1, "bytes": 0, "cipher": None,    # None: from the workload (cipher_of_workloads)
    "spread": 0.0, "disturbed": False,
}

#: Columns that records written before they existed lack: read as their default (a figure that is
#: not a repeated measurement has no spread and was not judged disturbed).
ADDED_LATER: tuple[str, ...] = ("spread", "disturbed")

#: Ciphers a `cipher` value may name (besides "" for runs that are not a cipher).
CIPHERS: tuple[str, ...] = ("aes", "camellia")

#: Columns every row must give explicitly.
REQUIRED: tuple[str, ...] = ("run_id", "source", "metric", "value")

#: What each column means (rendered into docs/records.md).
COLUMN_DOCS: dict[str, str] = {
    "run_id": "Identifier shared by all rows of one run (one simulation, one timed native/GPU "
              "measurement, one transcribed table). `new_run_id()` makes one. The run's JSON "
              "manifest lists it.",
    "experiment": "Name of the experiment the run belongs to: a key of the experiment registry "
                  "(`s2mc.experiments.registry`, e.g. `seed003_grid`) or, for reference rows, the "
                  "table, e.g. `seed003_table3`. Empty for ad-hoc runs.",
    "source": "Where the number comes from: `sim` (S2 simulator), `native` (host CPU), `cuda`, "
              "`opencl`, or `reference` (transcribed from a seed paper).",
    "platform": "The machine: `s2` for the simulator; the host CPU model for native runs; the GPU "
                "name for cuda/opencl; the paper's machine for reference rows (e.g. "
                "`Intel Core i7-4770 (seed 001)`).",
    "workload": "What was computed, e.g. `aes-128-ecb-enc`, `aes-256-ctr-enc`, `aes-128-ecb-dec`, "
                "or a teaching program's name (`sum`, `matmul`).",
    "variant": "How it was computed: implementation and work split, `/`-separated, e.g. "
               "`bytes/interleaved`, `ttable/extended-4`, `aesni/coarse`, `openssl`, "
               "`kernel-ttable-shared/device-resident`. A simulated run with caches adds a part naming the "
               "protocol and the cache's shape: `mesi-64x2-w4` (lines x ways, words per line; `-h3` when the "
               "hit latency is not 1; `s2mc.common.variants`). For reference rows: the paper's own label "
               "of the column (`sequential`, `openmp`, `gpu`, `total`, `encryption-only`, ...).",
    "engine": "Simulator engine (`fast`, `systemc`; `replay`: a traced run replayed on a bus the engines "
              "lack, s2mc.simulator.replay_bus), native runtime (`openmp`, `openssl`), GPU "
              "runtime (`cuda`, `opencl`); empty when not applicable.",
    "cores": "Number of simulated cores, CPU threads, or GPU devices used by the run.",
    "core": "The core/thread the row describes, 0-based; -1 for the whole run.",
    "bytes": "Size of the data processed (plaintext bytes); 0 when not applicable.",
    "metric": "Name of the measured or derived quantity: one of the declared metrics below.",
    "value": "The number (float64, finite). For a repeated real-hardware timing (`source` native; "
             "s2mc.common.measure) it is the median of the timed samples, not the best one.",
    "unit": "Unit of `value`; must equal the metric's declared unit.",
    "cipher": "The block cipher the run computed: `aes`, `camellia`; empty when the run is not a cipher "
              "(a teaching program). A row that leaves it out, and records written before the column existed, "
              "get the workload's first word when it names a cipher (`aes-128-ecb-enc` is `aes`), so "
              "they read as AES.",
    "spread": "How far the repeated samples behind `value` scattered: their median absolute deviation / "
              "their median (0.02 = 2 %); for a ratio of two timings, propagated from theirs (the root of the "
              "sum of their squares). 0 for a "
              "figure that is not a repeated timing (simulated counts, transcribed tables).",
    "disturbed": "True when the machine's other load disturbed the timing: its spread is over 5 % "
                 "(s2mc.common.measure.MAX_SPREAD) or it broke an invariant (t threads faster than t times "
                 "fewer threads' rate). Read such a row as a lower bound of the machine and rerun it on a "
                 "quiet one (docs/native.md, \"Reading a disturbed row\").",
}

# --------------------------------------------------------------------------------------------------
# Metrics: declared once (name, unit, description)
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    name: str
    unit: str
    description: str
    derived: bool = False  # computed by s2mc.analysis.derive rather than measured


def _simulator_counters() -> tuple[Metric, ...]:
    """The simulator's counters as metrics, from their one declaration, simulator/counters.toml.
    Read as data: analysis reads records and imports no engine."""
    import tomllib
    from importlib.resources import files
    table = tomllib.loads(files("s2mc").joinpath("simulator").joinpath("counters.toml").read_text(encoding="utf-8"))
    return tuple(Metric(c["name"], c["unit"], c["help"]) for c in table["counter"])


_METRIC_LIST: tuple[Metric, ...] = (
    # -- simulator counters (docs/timing-model.md; declared in simulator/counters.toml) -------------
    *_simulator_counters(),
    Metric("mem_latency", "cycles", "The memory latency L the run used (bus busy cycles per uncached access)."),
    Metric("bus_utilisation", "fraction",
           "Bus busy cycles / total cycles of the run (0..1)."),
    Metric("sim_seconds", "s", "Host wall-clock seconds the simulator took for the run."),
    Metric("sim_mips", "MIPS",
           "Simulation speed: simulated instructions per host second, in millions."),
    # -- derived from simulator counters -------------------------------------------------------
    Metric("compute_cycles", "cycles",
           "Cycles doing work at one cycle per instruction (= instructions); the stall-breakdown "
           "base.", derived=True),
    Metric("mem_latency_cycles", "cycles",
           "Cycles of memory latency beyond the first cycle of each access: "
           "(L-1) x accesses = stall_cycles - bus_wait_cycles.", derived=True),
    Metric("stall_fraction", "fraction",
           "Per core: stall_cycles / cycles. Whole run: summed stall cycles / (cycles x cores).",
           derived=True),
    Metric("bus_wait_fraction", "fraction",
           "Per core: bus_wait_cycles / cycles. Whole run: summed bus wait / (cycles x cores).",
           derived=True),
    Metric("ipc", "instructions/cycle", "Instructions per cycle (summed over cores for core -1).",
           derived=True),
    # -- wall-clock measurements (native, GPU, reference) --------------------------------------
    Metric("seconds", "s",
           "Wall-clock time of the measured section (the variant says what it includes: e.g. "
           "`total` with I/O, or encryption only)."),
    Metric("kernel_seconds", "s", "GPU kernel time only (device-resident data)."),
    Metric("transfer_seconds", "s", "Host<->device copy time."),
    Metric("io_seconds", "s", "File read/write time."),
    Metric("bytes_per_second", "B/s", "Throughput: bytes / seconds."),
    Metric("gb_per_second", "GB/s", "Throughput in 10^9 bytes per second.", derived=True),
    Metric("gbps", "Gbit/s", "Throughput in 10^9 bits per second.", derived=True),
    Metric("cycles_per_byte", "cycles/B", "Host CPU cycles per byte (when measured or quoted)."),
    # -- cache-coherence microbenchmarks on the host CPU (s2mc.workloads.native.coherence) -------
    Metric("ns_per_increment", "ns",
           "False sharing: wall-clock nanoseconds per increment of one thread's own counter (the run's "
           "time / increments per thread), with the counters packed into one line or padded apart."),
    Metric("false_sharing_ratio", "x",
           "The packed layout's ns_per_increment / the padded layout's, measured in the same run with "
           "the same threads: the cost of sharing a line."),
    Metric("round_trip_ns", "ns",
           "Line ping-pong: median nanoseconds for one round trip of a cache line between two cores "
           "(two transfers)."),
    Metric("core_to_core_ns", "ns",
           "Core-to-core latency on this CPU (workload `core_to_core`): the median nanoseconds of one "
           "one-way transfer of a cache line (half a round trip of a pinned ping-pong) between the cores "
           "the variant names, `i-j` (indexes into the run's CPUs, listed in its manifest; `core` is i)."),
    Metric("core_to_core_cycles", "cycles",
           "Core-to-core latency on the simulated network (workload `core_to_core`, directory coherence): "
           "the cycles of one one-way transfer of a cache line (half a round trip of the steady ping-pong) "
           "between the tiles the variant names, `i-j` (`core` is i; the line's home is tile 0)."),
    Metric("acquisitions_per_second", "acquisitions/s",
           "Spin lock: lock acquisitions (each with one critical section) per second, summed over threads."),
    Metric("thread_concurrency", "fraction",
           "The threads' CPU time over a native run / (threads x wall time): 1 when every thread held its "
           "CPU throughout; lower when the machine was shared and they took turns (so they contended less "
           "than the thread count says)."),
    # -- litmus tests on the host CPU (s2mc.workloads.native.litmus) ---------------------------
    Metric("outcome_count", "instances",
           "Litmus test: how many of the run's instances ended with the outcome the variant names after "
           "its configuration (`plain/r0=0 r1=0`, `mfence/r0=0 r1=0`); the workload is the test (`sb`), "
           "the run's instances are the sum over its outcomes. The outcome the test is about has a row "
           "even when it never appeared."),
    # -- memory consistency on the simulated machine (s2mc.experiments.consistency) ------------------
    Metric("litmus_runs", "runs",
           "Simulated litmus test (`s2mc litmus`): how many runs it made under the variant's model and "
           "fencing (`tso/plain`, `tso/fence@f1`: a fence at the label f1)."),
    Metric("relaxed_runs", "runs",
           "Simulated litmus test: how many of its `litmus_runs` printed its relaxed outcome, which the "
           "variant names after the model and fencing (`tso/plain/count=1`)."),
    Metric("consistency_cycles", "cycles",
           "Cycles of one simulated run of the consistency study: a litmus test's run 0 (every core at "
           "once, default machine; variant `<model>/<fencing>`) or the store-heavy program's (variant "
           "the model, `/fence@f0` with a fence at f0). Apart from `cycles`, which the scaling sections read."),
    # -- ratios ----------------------------------------------------------------------------------
    Metric("speedup", "x",
           "Baseline time (or cycles) / this run's time (or cycles); the baseline is the 1-core / "
           "1-thread / sequential run of the same experiment, workload, variant and bytes unless "
           "stated.", derived=True),
    Metric("efficiency", "fraction", "Parallel efficiency: speedup / cores.", derived=True),
    Metric("speedup_vs_openssl", "x",
           "This run's throughput / `openssl speed` throughput measured in the same session."),
    Metric("model_speedup", "x",
           "Speedup predicted by the analytic bus-contention model (s2mc.analysis.model).",
           derived=True),
    Metric("model_cycles", "cycles",
           "Cycles predicted by the analytic bus-contention model (s2mc.analysis.model).",
           derived=True),
)

#: Every metric, by name.
METRICS: dict[str, Metric] = {m.name: m for m in _METRIC_LIST}


def metric(name: str) -> Metric:
    """The declaration of metric `name` (S2mcError when undeclared)."""
    try:
        return METRICS[name]
    except KeyError:
        raise S2mcError(f"records: column 'metric': unknown metric {name!r} "
                        f"(declared: {', '.join(sorted(METRICS))})") from None


def unit_of(name: str) -> str:
    return metric(name).unit


# --------------------------------------------------------------------------------------------------
# Building and validating frames
# --------------------------------------------------------------------------------------------------


def new_run_id(prefix: str = "") -> str:
    """A fresh run id: `<prefix>-<UTC timestamp>-<6 hex>` (prefix optional)."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    rid = f"{stamp}-{uuid.uuid4().hex[:6]}"
    return f"{prefix}-{rid}" if prefix else rid


def empty() -> pd.DataFrame:
    """An empty frame with the schema's columns and dtypes."""
    return pd.DataFrame({c: pd.Series([], dtype=DTYPES[c]) for c in COLUMNS})


def make_records(rows: Iterable[Mapping[str, object]]) -> pd.DataFrame:
    """Build a validated records frame from dicts.

    Each dict must give run_id, source, metric and value; the other columns default to
    `DEFAULTS`, `unit` to the metric's declared unit and `cipher` to the workload's first word when
    that names a cipher (`aes-128-ctr` -> aes). Unknown keys are an error.
    """
    out = []
    for i, row in enumerate(rows):
        extra = set(row) - set(COLUMNS)
        if extra:
            col = sorted(extra)[0]
            raise S2mcError(f"records: row {i}: column {col!r} is not in the schema "
                            f"(columns: {', '.join(COLUMNS)})")
        for col in REQUIRED:
            if col not in row or row[col] is None:
                raise S2mcError(f"records: row {i}: column {col!r} is required")
        full = dict(DEFAULTS)
        full.update({k: v for k, v in row.items() if v is not None})
        if "unit" not in full:
            full["unit"] = unit_of(str(full["metric"]))
        out.append(full)
    if not out:
        return empty()
    df = pd.DataFrame(out, columns=list(COLUMNS))
    return validate(df.assign(cipher=df["cipher"].fillna(cipher_of_workloads(df["workload"]))))


def _first_outside_int64(num: pd.Series) -> int | None:
    """The position of the first value an int64 column cannot hold (pandas reads 2^64 and more as
    Python ints or floats, and casting them would overflow), or None."""
    if num.dtype.kind == "i" and num.dtype.itemsize <= 8:
        return None
    lo, hi = -(1 << 63), (1 << 63) - 1
    for i, v in enumerate(num.tolist()):
        try:
            ok = lo <= v <= hi
        except TypeError:
            ok = False
        if not ok:
            return i
    return None


#: DTYPES as pandas dtype objects: `==` on these tells "string" (missing is NA) from "str" (NaN).
_DTYPE_OBJECTS = {c: pd.api.types.pandas_dtype(d) for c, d in DTYPES.items()}


def _canonical(s: pd.Series, col: str) -> bool:
    """Whether `s` already has `col`'s dtype and no missing value: a validated frame's column, which
    coercing would only copy (frames are validated again at every concat)."""
    return s.dtype == _DTYPE_OBJECTS[col] and not s.isna().any()


def _coerce(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for col in COLUMNS:
        kind = KINDS[col]
        s = df[col]
        if _canonical(s, col):
            continue
        try:
            if kind == "str":
                if s.isna().any():
                    bad = s[s.isna()].index[0]
                    raise S2mcError(f"records: column {col!r}: missing value at row {bad}")
                df[col] = s.astype(str).astype(DTYPES[col])
            elif kind == "bool":
                df[col] = s.map(_as_bool).astype("bool")
            elif kind == "int":
                num = pd.to_numeric(s, errors="raise")
                if num.isna().any():
                    raise ValueError("missing value")
                i = _first_outside_int64(num)
                if i is not None:
                    raise S2mcError(f"records: column {col!r}: value {plain(num.iloc[i])} at row {i} "
                                    "is out of range (a 64-bit integer, -2^63..2^63-1)")
                if (num.astype("float64") != num.astype("float64").round()).any():
                    raise ValueError("non-integer value")
                df[col] = num.astype("int64")
            else:
                df[col] = pd.to_numeric(s, errors="raise").astype("float64")
        except S2mcError:
            raise
        except (ValueError, TypeError, OverflowError) as exc:
            raise S2mcError(f"records: column {col!r}: expected {kind} values ({excerpt(str(exc))})") from None
    return df[list(COLUMNS)].reset_index(drop=True)


def _as_bool(v: object) -> bool:
    """A bool from Parquet (bool), CSV (True/False text) or a hand-written 0/1; ValueError otherwise."""
    if isinstance(v, bool) or (hasattr(v, "dtype") and getattr(v, "dtype").kind == "b"):
        return bool(v)
    text = str(v).strip().lower()
    if text in ("true", "1", "1.0"):
        return True
    if text in ("false", "0", "0.0"):
        return False
    raise ValueError(f"{excerpt(str(v))!r} is not true or false")


def cipher_of_workloads(workloads: pd.Series) -> pd.Series:
    """The `cipher` of records that lack the column: the workload's first word when it names a
    cipher (`aes-128-ecb-enc` -> aes), else empty."""
    first = workloads.astype(str).str.split("-", n=1).str[0]
    return first.where(first.isin(CIPHERS), "")


def validate(df: pd.DataFrame) -> pd.DataFrame:
    """Check `df` against the schema; return it with canonical dtypes and column order.

    Raises S2mcError whose message names the offending column.
    """
    if not isinstance(df, pd.DataFrame):
        raise S2mcError(f"records: expected a pandas DataFrame, got {type(df).__name__}")
    if "cipher" not in df.columns and "workload" in df.columns:
        df = df.assign(cipher=cipher_of_workloads(df["workload"]))
    # absent, or an empty cell of a CSV: the default
    df = df.assign(**{c: ((df[c] if _canonical(df[c], c) else
                           df[c].astype(object).map(lambda v: DEFAULTS[c] if v is None or v == "" or
                                                    (isinstance(v, float) and math.isnan(v)) else v))
                          if c in df.columns else DEFAULTS[c]) for c in ADDED_LATER})
    missing = [c for c in COLUMNS if c not in df.columns]
    if missing:
        raise S2mcError(f"records: column {missing[0]!r} is missing "
                        f"(schema: {', '.join(COLUMNS)})")
    extra = [c for c in df.columns if c not in COLUMNS]
    if extra:
        raise S2mcError(f"records: column {str(extra[0])!r} is not in the schema "
                        f"(schema: {', '.join(COLUMNS)})")
    df = _coerce(df)
    if len(df) == 0:
        return df

    def bad(col: str, mask: pd.Series, why: str) -> None:
        if mask.any():
            i = int(mask.to_numpy().nonzero()[0][0])
            raise S2mcError(f"records: column {col!r}: {why} at row {i} "
                            f"(value {plain(df[col].iloc[i])})")

    bad("run_id", df["run_id"].str.len() == 0, "empty run id")
    bad("source", ~df["source"].isin(SOURCES), f"source must be one of {'|'.join(SOURCES)}")
    bad("metric", ~df["metric"].isin(list(METRICS)), "undeclared metric (see docs/records.md)")
    expected_unit = df["metric"].map(lambda m: METRICS[m].unit)
    bad("unit", df["unit"] != expected_unit, "unit differs from the metric's declared unit")
    bad("cores", df["cores"] < 0, "cores must be >= 0")
    bad("core", df["core"] < -1, "core must be -1 (whole run) or a core index >= 0")
    bad("core", (df["core"] >= df["cores"]) & (df["cores"] > 0), "core index >= cores")
    bad("bytes", df["bytes"] < 0, "bytes must be >= 0")
    bad("value", ~df["value"].map(math.isfinite).astype(bool), "value must be finite")
    bad("spread", ~(df["spread"].map(math.isfinite).astype(bool) & (df["spread"] >= 0)),
        "spread must be finite and >= 0")
    return df


def concat(frames: Iterable[pd.DataFrame]) -> pd.DataFrame:
    """Concatenate record frames (validating each) into one."""
    frames = [validate(f) for f in frames]
    frames = [f for f in frames if len(f)]
    if not frames:
        return empty()
    return validate(pd.concat(frames, ignore_index=True))


# --------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------


def manifest_path_for(path: str | os.PathLike) -> Path:
    """The manifest that goes with a results file: `x.parquet` -> `x.manifest.json`."""
    p = Path(path)
    return p.with_name(p.name.rsplit(".", 1)[0] + ".manifest.json")


def write(df: pd.DataFrame, path: str | os.PathLike, params: Mapping[str, object] | None = None
          ) -> Path:
    """Validate and write `df`: CSV when `path` ends in .csv, Parquet (pyarrow) otherwise.

    With `params`, also writes the run manifest next to it (see `write_manifest`) when `path` is a
    regular file (not beside a device such as /dev/null). Outputs follow s2mc.common.outputs: the
    folder must exist (nothing creates it), a file appears whole or not at all, and the records and
    their manifest are one unit (`one_unit`): both appear together, under a lock on their folder,
    or neither does, so that two runs writing the same file never leave one's records beside the
    other's manifest.
    """
    df = validate(df)
    p = Path(path)
    kind = check_output(p, "records")
    manifest = params is not None and kind == "replace"
    if manifest:
        check_output(manifest_path_for(p), "manifest")
    with one_unit():
        if p.suffix.lower() == ".csv":
            with open_output(p, "w", what="records") as f:
                df.to_csv(f, index=False)
        else:
            with open_output(p, "wb", what="records") as f:
                df.to_parquet(f, index=False, engine="pyarrow")
        if manifest:
            params = dict(params)
            params.setdefault("run_ids", sorted(df["run_id"].unique().tolist()))
            write_manifest(manifest_path_for(p), params)
    return p


def _git_commit() -> str:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True,
                             text=True, timeout=5)
        if out.returncode == 0:
            commit = out.stdout.strip()
            dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain",
                                    "--untracked-files=no"], capture_output=True, text=True,
                                   timeout=5)
            return commit + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        pass
    return "unknown"


def host_cpu() -> str:
    """The host CPU model name (from /proc/cpuinfo when available)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return _platform.processor() or _platform.machine() or "unknown"


def host_gpus() -> list[str]:
    """Names of NVIDIA GPUs visible through nvidia-smi (empty when none)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return []
    try:
        out = subprocess.run([exe, "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return []
    if out.returncode != 0:
        return []
    return [ln.strip() for ln in out.stdout.splitlines() if ln.strip()]


def _compiler() -> str:
    exe = shutil.which("c++") or shutil.which("g++")
    if exe:
        try:
            out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=5)
            if out.returncode == 0 and out.stdout:
                return out.stdout.splitlines()[0].strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return "unknown"


def s2mc_version() -> str:
    try:
        from importlib.metadata import version
        return version("s2mc")
    except Exception:  # noqa: BLE001 - not installed: still write a manifest
        return "unknown"


def environment() -> dict[str, object]:
    """What the manifest records about this machine and build."""
    return {
        "s2mc_version": s2mc_version(),
        "git_commit": _git_commit(),
        "host_cpu": host_cpu(),
        "host_cpu_count": os.cpu_count(),
        "host_gpus": host_gpus(),
        "compiler": _compiler(),
        "python": sys.version.split()[0],
        "platform": _platform.platform(),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }


def write_manifest(path: str | os.PathLike, params: Mapping[str, object]) -> Path:
    """Write the JSON manifest of a run: `params` (every effective parameter) plus `environment()`.

    Keys given in `params` that are also environment keys (e.g. `compiler` of a native build)
    override the detected values.
    """
    p = Path(path)
    env = environment()
    body = {"params": dict(params)}
    for k, v in env.items():
        body[k] = params.get(k, v)
    write_output(p, json.dumps(body, indent=2, sort_keys=True, default=str) + "\n", what="manifest")
    return p


def read_manifest(path: str | os.PathLike) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _expand(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> list[Path]:
    """The records files `paths` name (directories searched recursively), each once however often it is
    named (a file given twice, or beside the folder that holds it)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: list[Path] = []
    for entry in paths:
        p = Path(entry)
        if p.is_dir():
            files += sorted(q for q in p.rglob("*")
                            if q.is_file() and q.suffix.lower() in (".parquet", ".csv"))
        elif p.exists():
            files.append(p)
        else:
            raise S2mcError(f"records: {p}: no such file or directory")
    seen: set[Path] = set()
    return [f for f in files if not (f.resolve() in seen or seen.add(f.resolve()))]


def read(path: str | os.PathLike) -> pd.DataFrame:
    """Read and validate one records file (.csv or .parquet)."""
    p = Path(path)
    try:
        if p.suffix.lower() == ".csv":
            df = pd.read_csv(p, dtype={c: str for c, k in KINDS.items() if k == "str"},
                             keep_default_na=False, comment="#")
        else:
            df = pd.read_parquet(p, engine="pyarrow")
    except S2mcError:
        raise
    except (ValueError, OSError, OverflowError) as exc:
        # pandas and pyarrow messages may span lines: one line, cut (they can quote the file)
        why = excerpt(" ".join(str(exc).split()), 200)
        raise S2mcError(f"records: {p}: cannot read ({why})") from None
    try:
        return validate(df)
    except S2mcError as exc:
        raise S2mcError(f"{p}: {exc}") from None


def load(paths: Iterable[str | os.PathLike] | str | os.PathLike) -> pd.DataFrame:
    """Read any mix of .parquet/.csv files and directories (searched recursively) into one frame, each
    file once; a record found in two files (a copy) counts once."""
    files = _expand(paths)
    df = concat(read(f) for f in files)
    return df.drop_duplicates(ignore_index=True) if len(files) > 1 else df


# --------------------------------------------------------------------------------------------------
# docs/records.md
# --------------------------------------------------------------------------------------------------


def render_doc() -> str:
    """The Markdown of docs/records.md, generated from the declarations above."""
    lines = [
        "# Records schema",
        "",
        "<!-- Generated by `python -m s2mc.analysis.records --write-docs docs/records.md` from",
        "     analysis/records.py. Do not edit by hand; tests check that this file is current. -->",
        "",
        "Every run of s2mc (simulated, native CPU, GPU) and every number transcribed from a seed paper",
        "is stored in one long (\"tidy\") table: one row per (run, core, metric). Files are Parquet",
        "(CSV when the name ends in `.csv`); each results file may have a JSON manifest beside it",
        "(`x.parquet` -> `x.manifest.json`) with every effective parameter, the s2mc version, git",
        "commit, host CPU/GPU and compiler.",
        "",
        "```python",
        "from s2mc.analysis import records",
        "df = records.make_records([{\"run_id\": rid, \"source\": \"sim\", \"metric\": \"cycles\",",
        "                            \"value\": 1234, \"cores\": 4, \"bytes\": 256}])",
        "records.write(df, \"results/x.parquet\", params={\"cores\": [1, 2, 4]})",
        "df = records.load([\"results/\", \"analysis/reference/\"])",
        "```",
        "",
        "## Columns",
        "",
        "| column | type | default | meaning |",
        "|---|---|---|---|",
    ]
    for col in COLUMNS:
        default = ("required" if col in REQUIRED else
                   "the metric's unit" if col == "unit" else
                   "from the workload" if col == "cipher" else repr(DEFAULTS[col]))
        lines.append(f"| `{col}` | {KINDS[col]} | {default} | {COLUMN_DOCS[col]} |")
    lines += [
        "",
        "Validation (`records.validate`) rejects a frame with a missing or extra column, a value "
        "of the wrong type, an unknown `source` or `metric`, a `unit` other than the metric's, "
        "`core` outside -1..cores-1, negative `bytes`, a non-finite `value` or a negative `spread`; the "
        "error names the column. Records written before `spread` and `disturbed` existed read as 0.0 "
        "and False.",
        "",
        "## Metrics",
        "",
        "Measured metrics are written by the component that runs the experiment; derived ones are "
        "computed by `s2mc.analysis.derive` from measured rows.",
        "",
        "| metric | unit | kind | description |",
        "|---|---|---|---|",
    ]
    for m in _METRIC_LIST:
        kind = "derived" if m.derived else "measured"
        lines.append(f"| `{m.name}` | {m.unit} | {kind} | {m.description} |")
    lines += [
        "",
        "## Reference rows",
        "",
        "Rows with `source = reference` are the seed papers' published numbers "
        "(`analysis/reference/*.csv`). `experiment` names the paper's table "
        "(e.g. `seed003_table3`), `platform` the paper's machine, and the full citation of each "
        "experiment is in `analysis/reference/citations.json` (rendered in "
        "`analysis/reference/README.md`); the schema itself has no citation column.",
        "",
    ]
    return "\n".join(lines)


def _main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--write-docs":
        Path(argv[1]).write_text(render_doc(), encoding="utf-8")
        return 0
    if len(argv) == 1 and argv[0] == "--print-docs":
        sys.stdout.write(render_doc())
        return 0
    sys.stderr.write("usage: python -m s2mc.analysis.records --write-docs docs/records.md\n")
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
