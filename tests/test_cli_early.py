"""cli/early.py: `s2mc encrypt|decrypt --backend cuda` starts the GPU's context on a thread before
the interpreter imports the command; nothing else does."""
import subprocess
import sys
import threading
import types

import pytest

from s2mc.cli import early


@pytest.mark.parametrize("argv, wanted", [
    (["s2mc", "encrypt", "--backend", "cuda", "--in", "a", "--out", "b"], True),
    (["s2mc", "decrypt", "--in", "a", "--backend=cuda"], True),
    (["s2mc", "-q", "encrypt", "--backend", "cuda"], True),
    (["s2mc", "encrypt", "--backend", "native"], False),
    (["s2mc", "encrypt", "--backend", "opencl"], False),
    (["s2mc", "encrypt", "--in", "cuda"], False),          # a file named cuda is not the backend
    (["s2mc", "encrypt", "--backend", "cuda", "--help"], False),
    (["s2mc", "gpu", "--backend", "cuda"], False),         # another command
    (["s2mc", "run", "encrypt", "--backend", "cuda"], False),
    (["s2mc"], False),
])
def test_only_encrypt_and_decrypt_on_cuda_start_early(argv, wanted):
    assert early.wants_cuda(argv) is wanted


def test_the_thread_calls_the_extensions_start(monkeypatch):
    calls = []
    fake = types.SimpleNamespace(start=lambda: calls.append("start"))
    monkeypatch.setitem(sys.modules, "s2mc.gpu._cuda", fake)
    import s2mc.gpu
    monkeypatch.setattr(s2mc.gpu, "_cuda", fake, raising=False)
    t = early.start(["/usr/bin/s2mc", "encrypt", "--backend", "cuda"])
    assert t is not None
    t.join()
    assert calls == ["start"]
    # `python -m s2mc.cli` is the command too (bench/bench_encrypt_startup.py runs it so)
    early.start(["/site-packages/s2mc/cli/__main__.py", "encrypt", "--backend", "cuda"]).join()
    assert calls == ["start", "start"]
    # another program that imports the CLI (pytest, a notebook) starts nothing
    assert early.start(["pytest", "encrypt", "--backend", "cuda"]) is None
    assert early.start(["/x/other/__main__.py", "encrypt", "--backend", "cuda"]) is None
    assert calls == ["start", "start"]


def test_a_failing_start_is_left_to_the_command(monkeypatch):
    def boom():
        raise RuntimeError("CUDA: no GPU: no NVIDIA driver found")
    fake = types.SimpleNamespace(start=boom)
    monkeypatch.setitem(sys.modules, "s2mc.gpu._cuda", fake)
    import s2mc.gpu
    monkeypatch.setattr(s2mc.gpu, "_cuda", fake, raising=False)
    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)   # what a thread's uncaught error reaches
    t = early.start(["s2mc", "encrypt", "--backend", "cuda"])
    t.join()
    assert escaped == []


def test_encrypt_on_cuda_without_a_gpu_says_so_in_one_line(tmp_path):
    """The command, started as users start it (the console script): the early thread neither hides
    the device check's message nor prints a traceback of its own."""
    from s2mc import gpu
    if gpu.status()["gpu_present"]:
        pytest.skip("a GPU is here: the command succeeds")
    src = tmp_path / "in.bin"
    src.write_bytes(b"x" * 100)
    exe = str(__import__("pathlib").Path(sys.executable).with_name("s2mc"))
    p = subprocess.run([exe, "encrypt", "--backend", "cuda", "--in", str(src), "--out", str(tmp_path / "o"),
                        "--key", "00" * 16, "--iv", "00" * 16], capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "--backend cuda" in lines[0] and "Traceback" not in p.stderr, p.stderr
    assert not (tmp_path / "o").exists()
