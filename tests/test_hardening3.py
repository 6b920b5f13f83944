"""The third hardening pass, output integrity: what is left on disk when runs overlap, fail or are
stopped. Files that belong together are one unit (all of them or none, records beside their own
manifest even when two runs write the same file at once), every signal that would end the process
removes the temporary files first, and a report is built beside its folder and put in place whole.
Each test fails on the code before the fix.

CLI cases run the installed `s2mc` in a subprocess with real signals, so that the real files, exit
statuses and stderr show."""
from __future__ import annotations

import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from s2mc.common import outputs
from s2mc.common.errors import S2mcError

S2MC = Path(sys.executable).with_name("s2mc")
KEY = bytes(range(16))
IV = bytes(range(16, 32))
PROG = ".code 0\n  mov r1 #7\n  trap r1 #1\n  trap r0 #0\n"     # prints 7
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


def _fsize(limit: int):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # past the limit a write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


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


# -- records and manifest are one unit -----------------------------------------------------------------

def _records_pair(path: Path) -> tuple[list, list]:
    """(run ids in the records, run ids the manifest beside them lists)."""
    df = pd.read_parquet(path)
    manifest = json.loads(path.with_name(path.stem + ".manifest.json").read_text())
    return sorted(df["run_id"].unique()), manifest["params"]["run_ids"]


def test_two_runs_into_one_records_file_leave_one_run_whole(tmp_path):
    """Run A is held while it writes its manifest (a `git` that waits, which the manifest asks for
    the commit); run B writes the same --out meanwhile; then A goes on. Whatever the order, the
    records and the manifest on disk must be the same run's."""
    prog = tmp_path / "p.s"
    prog.write_text(PROG)
    out = tmp_path / "r.parquet"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    hold, inside = tmp_path / "hold", tmp_path / "inside"
    os.mkfifo(hold)
    (bin_dir / "git").write_text(f'#!/bin/sh\nif [ -n "$HOLD_GIT" ]; then : > {inside}; cat {hold} > /dev/null; fi\n'
                                 "exit 1\n")
    (bin_dir / "git").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}")
    a = subprocess.Popen([_entry(), "run", str(prog), "--out", str(out)], env=dict(env, HOLD_GIT="1"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: inside.exists() or a.poll() is not None)
        assert a.poll() is None, a.stderr.read()
        b = subprocess.run([_entry(), "run", str(prog), "--cores", "2", "--out", str(out)], env=env,
                           capture_output=True, text=True, timeout=120)
        assert b.returncode == 0, b.stderr
        with open(hold, "wb"):   # lets A's git end
            pass
        _, err = a.communicate(timeout=120)
    finally:
        a.kill()
    assert a.returncode == 0, err
    records, listed = _records_pair(out)
    assert records == listed
    manifest = json.loads((tmp_path / "r.manifest.json").read_text())
    assert manifest["params"]["cores"] == sorted(pd.read_parquet(out)["cores"].unique().tolist())
    assert not [n for n in names(tmp_path) if n.endswith(".part")]


def test_records_and_manifest_appear_together_under_a_lock_on_their_folder(tmp_path):
    """While another process holds the folder's lock, a run keeps both files in its temporary files
    and replaces neither; when the lock goes, both appear."""
    prog = tmp_path / "p.s"
    prog.write_text(PROG)
    res = tmp_path / "res"
    res.mkdir()
    out = res / "r.parquet"
    fd = os.open(res, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        run = subprocess.Popen([_entry(), "run", str(prog), "--out", str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _wait(lambda: len([n for n in names(res) if n.endswith(".part")]) == 2 or run.poll() is not None
                  or out.exists())
            assert run.poll() is None and names(res) != [] and not out.exists(), names(res)
        finally:
            os.close(fd)   # the lock goes with it
        _, err = run.communicate(timeout=120)
    finally:
        run.kill()
    assert run.returncode == 0, err
    assert names(res) == ["r.manifest.json", "r.parquet"]
    records, listed = _records_pair(out)
    assert records == listed


def _encrypt_with_records(tmp_path: Path, **kw) -> subprocess.CompletedProcess:
    src = tmp_path / "in"
    src.write_bytes(os.urandom(4096))
    return subprocess.run([_entry(), "encrypt", "--in", str(src), "--out", str(tmp_path / "out"), "--key", KEY.hex(),
                           "--iv", IV.hex(), "--records", str(tmp_path / "r.parquet"), "-q"],
                          capture_output=True, text=True, **kw)


def _one_error_line(r: subprocess.CompletedProcess) -> str:
    lines = r.stderr.strip().splitlines()
    assert r.returncode != 0 and len(lines) == 1 and lines[0].startswith("s2mc"), r.stderr
    return lines[0]


def test_a_read_only_manifest_is_refused_before_any_work(tmp_path):
    """encrypt --records with a read-only manifest where the records go: refused while parsing (the
    ciphertext, the records and the old manifest stay as they were)."""
    (tmp_path / "out").write_bytes(b"old ciphertext")
    manifest = tmp_path / "r.manifest.json"
    manifest.write_text("{}\n")
    manifest.chmod(0o444)
    line = _one_error_line(_encrypt_with_records(tmp_path))
    assert str(manifest) in line and "read-only" in line
    assert names(tmp_path) == ["in", "out", "r.manifest.json"]
    assert (tmp_path / "out").read_bytes() == b"old ciphertext" and manifest.read_text() == "{}\n"


def test_encrypt_whose_records_cannot_be_written_keeps_the_old_output(tmp_path):
    """The 4 KiB ciphertext fits a 6000-byte file-size limit, its 8 KB records do not: the command
    fails, and its output is not replaced either (one unit)."""
    (tmp_path / "out").write_bytes(b"old ciphertext")
    line = _one_error_line(_encrypt_with_records(tmp_path, preexec_fn=_fsize(6000)))
    assert "r.parquet" in line and "File too large" in line
    assert names(tmp_path) == ["in", "out"] and (tmp_path / "out").read_bytes() == b"old ciphertext"


def test_gpu_records_and_their_markdown_table_are_one_unit(tmp_path):
    """The table cannot be written (its folder is gone): the records of the same grid are not either."""
    from s2mc.analysis import records
    from s2mc.cli import cmd_gpu
    df = records.make_records([dict(run_id="g1", source="opencl", metric="seconds", value=1.0)])
    with pytest.raises(S2mcError, match="gone"):
        cmd_gpu._write_grid(df, "| table |", {}, [], {"command": "test"}, out_path=str(tmp_path / "r.parquet"),
                            md_path=str(tmp_path / "gone" / "t.md"), as_json=False)
    assert names(tmp_path) == []


def test_one_unit_writes_all_or_nothing(tmp_path):
    with outputs.one_unit():
        outputs.write_output(tmp_path / "a", "A")
        with outputs.one_unit():   # joins the outer one
            outputs.write_output(tmp_path / "b", "B")
        assert names(tmp_path) != ["a", "b"] and not (tmp_path / "a").exists()
    assert (tmp_path / "a").read_text() == "A" and (tmp_path / "b").read_text() == "B"
    with pytest.raises(S2mcError, match="late"):
        with outputs.one_unit():
            outputs.write_output(tmp_path / "a", "A2")
            outputs.write_output(tmp_path / "c", "C", now=True)   # appears at once
            assert (tmp_path / "c").read_text() == "C"
            raise S2mcError("late")
    assert names(tmp_path) == ["a", "b", "c"] and (tmp_path / "a").read_text() == "A"


# -- a report is put in place whole ---------------------------------------------------------------------

def _results(tmp_path: Path, name: str = "res", cycles: float = 1000) -> Path:
    from s2mc.analysis import records
    res = tmp_path / name
    res.mkdir()
    rows = [dict(run_id=f"r{c}", source="sim", platform="s2", workload="aes-128-ecb-enc", variant="bytes/interleaved",
                 engine="fast", cores=c, bytes=64, metric="cycles", value=cycles / c) for c in (1, 2, 4)]
    records.write(records.make_records(rows), res / "sim.parquet")
    return res


def test_a_report_that_fails_leaves_the_previous_one_as_it_was(tmp_path, monkeypatch):
    from s2mc.analysis import plots, report
    res = _results(tmp_path)
    rep = tmp_path / "rep"
    first = report.build([res], rep)
    before = {n: (rep / n).read_bytes() for n in names(rep)}
    assert first["md"] == rep / "report.md" and "report.md" in before and any(n.endswith(".png") for n in before)

    calls = []
    real = plots._save

    def fail_on_the_second(fig, path):   # one plot written, then the report fails
        calls.append(path)
        if len(calls) == 2:
            raise S2mcError(f"{path}: cannot write plot (No space left on device)")
        return real(fig, path)

    monkeypatch.setattr(plots, "_save", fail_on_the_second)
    other = _results(tmp_path, "other", cycles=3000)   # other numbers: other plots
    with pytest.raises(S2mcError, match="No space left"):
        report.build([other], rep)
    assert len(calls) == 2 and {n: (rep / n).read_bytes() for n in names(rep)} == before
    assert names(tmp_path) == ["other", "rep", "res"]


def test_a_new_report_replaces_an_old_one_whole_and_keeps_other_files(tmp_path):
    from s2mc.analysis import report
    res = _results(tmp_path)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "stale_plot.png").write_bytes(b"an old report's plot")
    (rep / "report.md").write_text("old")
    out = report.build([res], rep)
    assert "stale_plot.png" not in names(rep) and out["md"].read_text() != "old"
    assert all(p.exists() and p.parent == rep for p in out["plots"])
    mixed = tmp_path / "mixed"    # a folder with the user's own files: they stay
    mixed.mkdir()
    (mixed / "notes.txt").write_text("mine")
    report.build([res], mixed)
    assert (mixed / "notes.txt").read_text() == "mine" and "report.html" in names(mixed)
    assert sorted(n for n in names(tmp_path) if n.startswith(".")) == []


def test_report_stopped_by_a_signal_leaves_the_previous_report(tmp_path):
    res = _results(tmp_path)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "report.md").write_text("the previous report\n")
    child = subprocess.Popen([_entry(), "report", str(res), "--out", str(rep)], cwd=tmp_path,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def started() -> bool:   # the first plot is written (into the report's temporary folder, or rep)
            return any(n.endswith(".png") for d, _, files in os.walk(tmp_path) for n in files) or \
                child.poll() is not None
        _wait(started, 120)
        child.send_signal(signal.SIGUSR1)
        child.communicate(timeout=60)
    finally:
        child.kill()
    assert child.returncode == -signal.SIGUSR1
    assert names(rep) == ["report.md"] and (rep / "report.md").read_text() == "the previous report\n"
    assert names(tmp_path) == ["rep", "res"]


def _huge_results(tmp_path: Path) -> Path:
    """Records whose plots overflow numpy's and matplotlib's arithmetic (RuntimeWarnings inside)."""
    from s2mc.analysis import records
    res = tmp_path / "res"
    res.mkdir()
    rows = [dict(run_id=f"r{c}", source="sim", workload="aes-128-ecb-enc", variant="bytes/interleaved", engine="fast",
                 cores=c, bytes=64, metric="cycles", value=1e308) for c in (1, 2)]
    records.write(records.make_records(rows), res / "x.parquet")
    return res


def test_a_report_on_a_full_disk_writes_nothing_and_prints_one_line(tmp_path):
    """The first plots fit, a larger one does not: one error line naming the plot where it was going,
    no warning before it, and the previous report as it was (no plots without their report)."""
    res = _huge_results(tmp_path)
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "report.md").write_text("the previous report\n")
    r = subprocess.run([_entry(), "report", str(res), "--out", str(rep)], capture_output=True, text=True,
                       preexec_fn=_fsize(100_000))
    assert r.returncode == 1, r.stderr
    assert r.stderr.startswith(f"s2mc: error: {rep}/") and r.stderr.endswith(": cannot write plot (File too large)\n")
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert names(rep) == ["report.md"] and (rep / "report.md").read_text() == "the previous report\n"
    assert names(tmp_path) == ["rep", "res"]


def test_a_report_prints_no_library_warnings(tmp_path):
    res = _huge_results(tmp_path)
    r = subprocess.run([_entry(), "report", str(res), "--out", str(tmp_path / "rep")], capture_output=True, text=True)
    assert r.returncode == 0 and r.stderr.startswith("s2mc report: ") and len(r.stderr.splitlines()) == 1, r.stderr
