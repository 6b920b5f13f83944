"""Seed 002's GPU figures beside our CUDA records (s2mc.analysis.seed002_gpu, report section 4).

The paper's side is checked against the seed text by hand; ours with synthetic CUDA records of
known throughputs (no GPU here), through the grid library's own rows, the tables and the report.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gpu_fakes import install_fake_gpu
from s2mc.analysis import records, report, seed002_gpu as s2
from s2mc.gpu.grid import GpuGrid, run_grid

SEED_TEXT = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "002_fbfaabde64d8faa8.txt"


def test_table2_transcription():
    t = s2.table2()
    assert list(t.columns) == ["GPU", "cipher", "thread blocks", "threads per thread block",
                               "registers per thread", "shared memory per thread block", "occupancy"]
    cam = t[(t["GPU"] == "Tesla C2050") & (t["cipher"] == "Camellia")].iloc[0]
    assert (cam["thread blocks"], cam["threads per thread block"], cam["registers per thread"],
            cam["shared memory per thread block"], cam["occupancy"]) == ("28", "512", "63", "4.27 KB", "0.33")
    gtx = t[(t["GPU"] == "GeForce GTX 285") & (t["cipher"] == "AES")].iloc[0]
    assert (gtx["thread blocks"], gtx["registers per thread"], gtx["occupancy"]) == ("60", "15", "0.75")


@pytest.mark.skipif(not SEED_TEXT.exists(), reason="the seed text is not beside the checkout")
def test_table2_rows_are_in_the_seed_text():
    text = SEED_TEXT.read_text(encoding="utf-8")
    assert "Registers per thread\t63\t63\t30\t49\t63" in text          # (a) C2050: AES, Camellia first
    assert "Shared memory per thread block\t4.25 KB\t4.27 KB" in text
    assert "Shared memory per thread block\t4.30 KB\t4.30 KB" in text  # (b) GTX 285
    assert "approximately 1.4 times higher than that on Tesla" in text and "44.2 Gbps" in text


def test_method_of():
    assert s2.method_of("optimised-t4b2/device-resident") == "A"
    assert s2.method_of("coarse/host-overlap-s4") == "B"
    assert s2.method_of("coarse/host-serial") == "C"
    assert s2.method_of("coarse/keystream") is None


def _fake_records(monkeypatch, cipher: str, kernels: tuple[str, ...]):
    install_fake_gpu(monkeypatch, mem_bytes=1 << 30)   # 100 GB/s = 800 Gbps for every measurement
    grid = GpuGrid(kernels=kernels, sizes=(1 << 20, 16 << 20), streams=(1, 4), reps=1, cipher=cipher)
    _, rows, _ = run_grid(grid, run_id=f"fake-{cipher}")
    return records.make_records(rows)


def test_our_runs_and_tables_from_grid_rows(monkeypatch):
    df = records.concat([_fake_records(monkeypatch, "aes", ("coarse",)),
                         _fake_records(monkeypatch, "camellia", ("coarse",))])
    assert set(df["cipher"]) == {"aes", "camellia"}
    runs = s2.our_runs(df)
    # per cipher: keystream + device + 2 host stream counts, 2 sizes
    assert len(runs) == 2 * 4 * 2
    assert runs["gbps"].round(6).eq(800.0).all()
    assert sorted(runs["method"].dropna().unique()) == ["A", "B", "C"]
    best = s2.best_table(runs)
    assert len(best) == 6 and list(best.columns)[-1] == "ours Fake"
    aes_b = best[(best["cipher"] == "aes") & best["method"].str.startswith("B")].iloc[0]
    assert aes_b["seed 002 Tesla C2050"].startswith("≈ 31.6")
    assert aes_b["seed 002 GeForce GTX 285"] == "image only (Fig. 16)"
    assert aes_b["ours Fake"] == "800.0 (coarse, 1 MB)"
    sizes = s2.size_table(runs)
    assert list(sizes.columns) == ["platform", "cipher", "kernel", "method", "1 MB", "16 MB"]
    assert len(sizes) == 2 * 3 and set(sizes["1 MB"]) == {"800.0"}
    text = " ".join(s2.sentences(runs))
    assert "Ours, camellia on Fake: best A 800 Gbps, B 800 Gbps." in text and "need a GPU run" not in text


def test_best_is_the_maximum():
    import pandas as pd
    runs = pd.DataFrame({"cipher": ["camellia"] * 3, "platform": ["G"] * 3, "kernel": ["coarse"] * 3,
                         "measure": ["device-resident"] * 3, "method": ["A"] * 3,
                         "bytes": [1 << 20, 16 << 20, 1 << 30], "gbps": [10.0, 250.5, 99.0]})
    best = s2.best_table(runs)
    cell = best[(best["cipher"] == "camellia") & best["method"].str.startswith("A")]["ours G"].iloc[0]
    assert cell == "250.5 (coarse, 16 MB)"
    assert best[best["cipher"] == "aes"]["ours G"].eq("–").all()


def test_no_records_says_a_gpu_run_is_needed():
    runs = s2.our_runs(records.empty())
    assert runs.empty
    assert s2.NEED_GPU in s2.sentences(runs)
    best = s2.best_table(runs)
    assert [c for c in best.columns if c.startswith("ours")] == []


def _small_sim_results():
    return records.make_records([dict(run_id="r1", experiment="x", source="sim", platform="s2",
                                      workload="aes-128-ecb-enc", variant="bytes/interleaved",
                                      engine="fast", cores=1, bytes=32, metric="cycles", value=9000)])


def test_report_without_gpu_records(tmp_path, monkeypatch, undrawn):
    # without the runs checked in under analysis/gpu_measurements/ (tests/test_gpu_measured.py has them)
    monkeypatch.setattr(report, "gpu_measured_records", records.empty)
    res = tmp_path / "res"
    res.mkdir()
    records.write(_small_sim_results(), res / "r.csv")
    report.build([res], tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Seed 002 on GPUs" in md and "need a GPU run" in md and "gpu-backends/run_on_gpu.sh" in md
    assert "| Tesla C2050 | Camellia | 28 | 512 | 63 | 4.27 KB | 0.33 |" in md
    assert not (tmp_path / "rep" / "seed002_gpu.png").exists()


def test_report_with_gpu_records(tmp_path, monkeypatch):
    monkeypatch.setattr(report, "gpu_measured_records", records.empty)
    res = tmp_path / "res"
    res.mkdir()
    records.write(records.concat([_small_sim_results(), _fake_records(monkeypatch, "camellia", ("coarse",))]),
                  res / "r.parquet")
    report.build([res], tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "Ours, camellia on Fake: best A 800 Gbps, B 800 Gbps." in md
    assert "| Fake | camellia | coarse | A | 800.0 | 800.0 |" in md
    png = tmp_path / "rep" / "seed002_gpu.png"
    assert png.read_bytes().startswith(b"\x89PNG") and "](seed002_gpu.png)" in md
    assert "No Camellia CUDA records" not in md
    assert "No AES CUDA records among the inputs" in md
