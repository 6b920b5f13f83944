"""The third hardening pass, output integrity: what is left on disk when runs overlap, fail or are
stopped. Every signal that would end the process removes the temporary files first. Each test
fails on the code before the fix.

CLI cases run the installed `s2mc` in a subprocess with real signals, so that the real files, exit
statuses and stderr show."""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from s2mc.common import outputs

S2MC = Path(sys.executable).with_name("s2mc")
KEY = bytes(range(16))
IV = bytes(range(16, 32))

#: Signals that end a process by default, besides TERM, HUP and INT (tests/test_outputs.py).
STOPPING = ["SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGIO", "SIGPWR",
            "SIGRTMIN", "SIGRTMAX"]


def _entry() -> str:
    if not S2MC.exists():
        pytest.skip("s2mc entry point not installed next to the interpreter")
    return str(S2MC)


def _no_core():
    """A child that dies of QUIT or XCPU dumps no core file."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def _wait(cond, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


# -- every signal that ends the process cleans up as TERM does ----------------------------------------

_WRITER = """
import sys, time
from s2mc.common.outputs import open_output
with open_output(sys.argv[1]) as f:
    f.write(b"partial plaintext")
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


def test_the_signals_handled_are_every_catchable_one_that_ends_a_process():
    want = {getattr(signal, n) for n in STOPPING + ["SIGTERM", "SIGHUP", "SIGPIPE", "SIGXFSZ"]}
    assert want <= set(outputs.SIGNALS)
    for never in ("SIGINT", "SIGKILL", "SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGABRT", "SIGCHLD", "SIGTSTP"):
        assert getattr(signal, never) not in outputs.SIGNALS, never
    assert set(range(signal.SIGRTMIN, signal.SIGRTMAX + 1)) <= set(outputs.SIGNALS)


@pytest.mark.parametrize("name", STOPPING)
def test_every_stopping_signal_removes_the_temporary_file(tmp_path, name):
    sig = getattr(signal, name)
    out = tmp_path / "out"
    out.write_bytes(b"old")
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(out)], stdout=subprocess.PIPE, text=True,
                             preexec_fn=_no_core, cwd=tmp_path)
    try:
        assert child.stdout.readline() == "writing\n"
        assert len(names(tmp_path)) == 2  # out and its .part
        child.send_signal(sig)
        rc = child.wait(20)
    finally:
        child.kill()
    assert rc == -sig
    assert names(tmp_path) == ["out"] and out.read_bytes() == b"old"


@pytest.mark.parametrize("name", ["SIGQUIT", "SIGUSR1", "SIGALRM", "SIGXCPU"])
def test_encrypt_stopped_by_a_signal_leaves_no_part_file(tmp_path, name):
    """The input is a FIFO we feed, so the signal arrives while the output is half written."""
    sig = getattr(signal, name)
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    out.write_bytes(b"previous ciphertext")
    child = subprocess.Popen([_entry(), "encrypt", "--in", str(fifo), "--out", str(out), "--key", KEY.hex(),
                              "--iv", IV.hex(), "--chunk-bytes", "64K", "-q"], cwd=tmp_path, preexec_fn=_no_core,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo, "wb") as feed:
            feed.write(os.urandom(1 << 20))  # 16 chunks: several are written to the .part file
            feed.flush()
            _wait(lambda: any(n.endswith(".part") and (tmp_path / n).stat().st_size > 0 for n in names(tmp_path)), 20)
            child.send_signal(sig)
            child.communicate(timeout=20)
    finally:
        child.kill()
    assert child.returncode == -sig
    assert names(tmp_path) == ["in", "out"] and out.read_bytes() == b"previous ciphertext"
