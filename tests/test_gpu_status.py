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
from s2mc.isa.errors import S2mcError

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
])
def test_cli_argument_errors(args, needle):
    res = CliRunner().invoke(cli, ["gpu", *args])
    assert res.exit_code == 1
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"s2mc: error: {needle}")


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
