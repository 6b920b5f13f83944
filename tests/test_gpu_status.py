"""CUDA backend without a GPU: status(), the CLI's one-line errors, and that the CUDA sources were
compiled wherever nvcc exists. These run everywhere (no `gpu` marker)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc import gpu
from s2mc.cli.main import cli
from s2mc.common.errors import S2mcError

S2MC = Path(sys.executable).with_name("s2mc")


def _nvcc() -> str | None:
    return shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc"
                                    if os.path.exists("/usr/local/cuda/bin/nvcc") else None)


def test_status_shape():
    st = gpu.status()
    assert set(st) == {"built", "gpu_present", "devices", "reason"}
    assert isinstance(st["built"], bool) and isinstance(st["gpu_present"], bool)
    assert isinstance(st["devices"], list) and all(isinstance(d, str) for d in st["devices"])
    assert isinstance(st["reason"], str)
    if st["gpu_present"]:
        assert st["built"] and st["devices"] and st["reason"] == ""
    else:
        assert st["devices"] == [] and st["reason"] and "\n" not in st["reason"]


def test_status_without_extension(monkeypatch):
    monkeypatch.setattr(gpu, "_ext", None)
    monkeypatch.setattr(gpu, "_ext_error", "No module named 's2mc.gpu._cuda'")
    st = gpu.status()
    assert st == {"built": False, "gpu_present": False, "devices": [],
                  "reason": "CUDA backend not built (nvcc was not found when s2mc was built)"}
    assert not gpu.available()
    with pytest.raises(S2mcError, match="not built"):
        gpu.crypt(b"x" * 16, bytes(16), bytes(16))
    with pytest.raises(S2mcError, match="not built"):
        gpu.encrypt_file("a", "b", bytes(16), bytes(16))


@pytest.mark.skipif(_nvcc() is None, reason="nvcc not installed: the CUDA build is skipped")
def test_cuda_sources_compiled_where_nvcc_exists():
    assert gpu.status()["built"], "nvcc exists but the CUDA extension was not built"
    assert gpu.kernels(all_configs=True)[:3] == ["coarse", "extended", "optimised"]


@pytest.mark.skipif(gpu.available(), reason="a GPU is present")
def test_cli_without_gpu_exits_1_with_one_line():
    proc = subprocess.run([str(S2MC), "gpu"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2mc: error: gpu: ")
    assert "GPU" in lines[0] or "not built" in lines[0]


def test_cli_not_built_exits_1_with_one_line(monkeypatch):
    monkeypatch.setattr(gpu, "_ext", None)
    monkeypatch.setattr(gpu, "_ext_error", "No module named 's2mc.gpu._cuda'")
    res = CliRunner().invoke(cli, ["gpu"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines() == [
        "s2mc: error: gpu: CUDA backend not built (nvcc was not found when s2mc was built)"]


@pytest.mark.parametrize("args, needle", [
    (["--bytes", "12Q"], "--bytes"),
    (["--bytes", "8"], "--bytes"),
    (["--measure", "warp"], "--measure"),
    (["--streams", "x"], "--streams"),
    (["--streams", "0"], "--streams"),
    (["--ext-bytes", "100"], "--ext-bytes"),
    (["--reps", "0"], "--reps"),
    (["--warmup", "-1"], "--warmup"),
    (["--min-seconds", "nan"], "--min-seconds"),
])
def test_cli_argument_errors(args, needle):
    # usage errors (exit 2), checked while parsing, before the GPU is looked for
    res = CliRunner().invoke(cli, ["gpu", *args])
    assert res.exit_code == 2
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"s2mc gpu: error: Invalid value for '{needle}'")


@pytest.mark.skipif(not gpu.status()["built"], reason="CUDA backend not built")
def test_cli_unknown_kernel():
    res = CliRunner().invoke(cli, ["gpu", "--kernel", "warp-speed"])
    assert res.exit_code == 1
    assert res.output.strip().splitlines()[0].startswith("s2mc: error: --kernel: unknown kernel")


def test_api_argument_errors():
    with pytest.raises(S2mcError, match="key must be 16, 24 or 32"):
        gpu.crypt(b"", b"short", bytes(16))
    with pytest.raises(S2mcError, match="iv must be 16 bytes"):
        gpu.crypt(b"", bytes(16), b"")
    with pytest.raises(S2mcError, match="unknown op"):
        gpu.crypt(b"", bytes(16), bytes(16), op="cbc")
    with pytest.raises(S2mcError, match="unknown measure"):
        gpu.bench("optimised", "warp", nbytes=16)


def test_counter_add():
    assert gpu.counter_add(bytes(16), 1) == bytes(15) + b"\x01"
    assert gpu.counter_add(b"\xff" * 16, 1) == bytes(16)
    assert gpu.counter_add(bytes(8) + b"\xff" * 8, 1) == bytes(7) + b"\x01" + bytes(8)


@pytest.mark.skipif(not gpu.status()["built"], reason="CUDA backend not built")
def test_cli_grid_records_with_a_simulated_gpu(monkeypatch, tmp_path):
    """The CLI's happy path (records, manifest, Markdown, JSON) with the GPU calls replaced by
    fakes, so that the records code is checked on machines without a GPU too."""
    import json

    from s2mc.analysis import records

    calls = []

    timing = []

    def fake_bench(kernel, measure, *, key_bits, nbytes, reps, op, ext_bytes, threads, streams,
                   chunk_bytes, cipher="aes", warmup=1, min_seconds=0.0):
        calls.append((kernel, measure, nbytes, streams))
        timing.append((warmup, min_seconds))
        name = {"optimised": "optimised-t4b2", "extended": f"extended-{ext_bytes}"}.get(kernel, kernel)
        return {"kernel": name, "op": op, "measure": measure, "bytes": nbytes, "reps": reps,
                "seconds": nbytes / 1e11, "best_seconds": nbytes / 1.1e11, "grid": 132,
                "threads": 1024, "streams": streams if measure == "host" else 0,
                "chunk_bytes": 0, "timer": "host-clock" if measure == "host" else "cuda-events"}

    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": True,
                                                "devices": ["Fake H100"], "reason": ""})
    monkeypatch.setattr(gpu, "platform_info", lambda: {
        "gpu": "Fake H100", "device": {"sms": 132, "sm_clock_mhz": 1980.0,
                                       "global_mem_bytes": 80 << 30}})
    monkeypatch.setattr(gpu, "bench", fake_bench)
    out, md = tmp_path / "g.parquet", tmp_path / "g.md"
    res = CliRunner().invoke(cli, ["gpu", "--bytes", "1M,16M", "--quiet", "--out", str(out),
                                   "--markdown", str(md), "--warmup", "3", "--min-seconds", "0.5"])
    assert res.exit_code == 0, res.output
    # 3 kernels x (keystream + device + host x 2 stream counts) x 2 sizes
    assert len(calls) == 3 * 4 * 2
    assert set(timing) == {(3, 0.5)}   # the timing policy reaches every measurement
    df = records.read(out)
    assert len(df) == 2 * len(calls)
    assert set(df["source"]) == {"cuda"} and set(df["platform"]) == {"Fake H100"}
    assert set(df["workload"]) == {"aes-128-ctr"}
    assert {"optimised-t4b2/keystream", "optimised-t4b2/device-resident",
            "coarse/host-serial", "extended-4096/host-overlap-s4"} <= set(df["variant"])
    bps = df[df["metric"] == "bytes_per_second"]["value"]
    assert (abs(bps - 1e11) < 1).all()
    manifest = records.read_manifest(records.manifest_path_for(out))
    assert manifest["params"]["gpu"]["gpu"] == "Fake H100"
    table = md.read_text()
    assert "| optimised-t4b2 | device-resident | 800.0 | 800.0 |" in table
    assert table in res.output
    res = CliRunner().invoke(cli, ["gpu", "--bytes", "1M", "--measure", "device", "--json"])
    assert res.exit_code == 0, res.output
    body = json.loads(res.output)
    assert body["platform"]["gpu"] == "Fake H100" and len(body["records"]) == 6
