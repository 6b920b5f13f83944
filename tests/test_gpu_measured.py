"""Our GPU figures measured elsewhere (analysis/gpu_measurements/) reach the report as records
marked as such, on a machine without a GPU."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from s2mc.analysis import gpu_measured, records, report

DATA = Path(gpu_measured.__file__).parent / "gpu_measurements"


def test_every_source_names_its_gpu_commit_and_command_and_exists():
    srcs = gpu_measured.sources()
    assert {s["file"] for s in srcs} == {p.name for p in DATA.glob("*.csv")}
    for s in srcs:
        assert s["gpu"].startswith("NVIDIA ") and re.fullmatch(r"[0-9a-f]{7,40}", s["commit"])
        assert "run_on_gpu.sh" in s["command"] and s["layout"] in ("bench", "gbps", "backends", "files", "occupancy")
        assert "run_on_gpu.sh" in s["command"] and re.fullmatch(r"\d{4}-\d\d-\d\d", s["date"])


def test_records_are_marked_as_measured_elsewhere():
    df = gpu_measured.load()
    assert len(df) and df["experiment"].str.startswith(gpu_measured.PREFIX).all()
    assert df["run_id"].str.startswith("measured-").all()
    assert set(df["source"]) == {"cuda", "opencl"}
    assert set(df["platform"]) == {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
    records.validate(df)


def test_bench_csv_rows_keep_their_own_gbps():
    """The H100 file is the bench's CSV: every record's bytes_per_second agrees with the Gbps
    column the bench wrote itself (an independent division)."""
    df = gpu_measured.load()
    h100 = df[(df["platform"] == "NVIDIA H100 80GB HBM3") & (df["metric"] == "bytes_per_second")]
    with open(DATA / "gpu-h100-2026-11-22.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(h100) == len(rows)
    got = {(v, int(b)): x * 8 / 1e9 for v, b, x in zip(h100["variant"], h100["bytes"], h100["value"])}
    for r in rows:
        assert got[(f"{r['kernel']}/{r['measure']}", int(r["bytes"]))] == pytest.approx(float(r["gbps"]), rel=1e-3)


def test_report_shows_them_without_any_gpu_results(tmp_path):
    res = tmp_path / "res"
    res.mkdir()
    records.write(records.make_records([dict(run_id="r1", experiment="x", source="sim", platform="s2",
                                             workload="aes-128-ecb-enc", variant="bytes/interleaved",
                                             engine="fast", cores=1, bytes=32, metric="cycles", value=9000)]),
                  res / "r.csv")
    report.build([res], tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    # seed 002 (Figs. 11-16): the H200's AES-128 keystream best, 5216 Gbit/s at 1 GB (its table)
    assert "Ours, aes on NVIDIA H200: best A 5088 Gbps" in md
    assert "| gpu-h200-2026-11-26.csv | NVIDIA H200 | 2026-11-26 | 03f1f4e |" in md
    # seed 000: extended/coarse on the H200 at 1 GB = 1785 / 2228
    assert f"| NVIDIA H200 | 1 GiB | 2228 | 1785 | {1785 / 2228:.2f} | 5088 |" in md
    # seed 004's GPU column at 1 MB: the paper's 24.2 ms beside the H200's host-overlap 123 Gbit/s
    ms = (1 << 20) * 8 / 123e9 * 1e3
    assert "| 1 MiB | 24.2 |" in md and f"{ms:.4f} ({24.2 / ms:.0f}x)" in md
    # seed 002 Table 2 beside ours
    assert "| aes | optimised-t4b2 | enc | 1024 | 32 | 128 KB | 1 | 0.50 |" in md
    assert "| 1 GiB | 1,972 |" in md   # seed 004's 1.972 s at 1 GB, in plain notation
    # CUDA against OpenCL: 5083 / 1407
    assert f"5083 ({5083 / 1407:.2f}x)" in md
    # the file path: cp's best 0.837 s, the CUDA path's best 3.035 s
    assert f"{0.837 / 3.035:.0%} of the copy bound" in md
