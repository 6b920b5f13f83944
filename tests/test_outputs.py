"""s2mc.common.outputs, the one way s2mc writes a file: atomic replace keeping mode and owner, 0600
temporary files, write-through to devices, FIFOs and symlink targets, `-` as stdout, folders
refused, and errors that name the path and leave the old file intact. Also the commands that use
it: `s2mc asm -o`, `s2mc compile -o`, records files."""
import errno
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.common import outputs
from s2mc.common.errors import S2mcError
from s2mc.common.outputs import Output, open_output, write_output

REPO = Path(__file__).resolve().parent.parent
S2MC = Path(sys.executable).with_name("s2mc")
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def umask() -> int:
    m = os.umask(0)
    os.umask(m)
    return m


def test_new_file_gets_0666_minus_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_output(tmp_path / "a", b"data")
    finally:
        os.umask(old)
    assert (tmp_path / "a").read_bytes() == b"data"
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o640
    assert names(tmp_path) == ["a"]


def test_text_is_utf8(tmp_path):
    write_output(tmp_path / "t", "π ≈ 3\n")
    assert (tmp_path / "t").read_bytes() == "π ≈ 3\n".encode("utf-8")


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o755, 0o4755])
def test_replaced_file_keeps_its_mode(tmp_path, mode):
    p = tmp_path / "a"
    p.write_bytes(b"old")
    p.chmod(mode)
    write_output(p, b"new")
    assert p.read_bytes() == b"new"
    assert stat.S_IMODE(p.stat().st_mode) == mode


@pytest.mark.skipif(not ROOT, reason="only root can give a file to another user")
def test_replaced_file_keeps_its_owner(tmp_path):
    p = tmp_path / "a"
    p.write_bytes(b"old")
    os.chown(p, 4321, 8765)
    p.chmod(0o600)
    write_output(p, b"secret")
    st = p.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 8765, 0o600)
    assert p.read_bytes() == b"secret"


def test_temporary_file_is_0600_while_writing(tmp_path):
    old = os.umask(0)  # even with a permissive umask
    try:
        with open_output(tmp_path / "a") as f:
            f.write(b"plaintext")
            (part,) = [p for p in tmp_path.iterdir()]
            assert part.name.startswith(".a.") and part.name.endswith(".part")
            assert stat.S_IMODE(part.stat().st_mode) == 0o600
    finally:
        os.umask(old)
    assert names(tmp_path) == ["a"]


def test_nothing_appears_until_the_end_and_an_error_leaves_the_old_file(tmp_path):
    p = tmp_path / "a"
    p.write_bytes(b"old")
    with pytest.raises(ValueError):
        with open_output(p) as f:
            f.write(b"half")
            assert p.read_bytes() == b"old"
            raise ValueError("stop")
    assert p.read_bytes() == b"old" and names(tmp_path) == ["a"]


def test_keyboard_interrupt_removes_the_temporary_file(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with open_output(tmp_path / "a") as f:
            f.write(b"x")
            raise KeyboardInterrupt
    assert names(tmp_path) == []


def test_dev_null_is_written_through_not_replaced(null_device):
    before = os.stat(null_device)
    write_output(null_device, b"x" * 100)
    after = os.stat(null_device)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino


def _read_fifo(path: Path, into: list) -> threading.Thread:
    def reader():
        with open(path, "rb") as f:
            into.append(f.read())
    t = threading.Thread(target=reader, daemon=True)
    t.start()
    return t


def test_fifo_is_written_through(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list = []
    t = _read_fifo(fifo, got)
    write_output(fifo, b"through the pipe")
    t.join(10)
    assert got == [b"through the pipe"]
    assert stat.S_ISFIFO(fifo.stat().st_mode) and names(tmp_path) == ["fifo"]


def test_symlink_target_is_written_and_the_link_kept(tmp_path):
    (tmp_path / "d").mkdir()
    target = tmp_path / "d" / "target"
    target.write_bytes(b"old")
    target.chmod(0o640)
    link = tmp_path / "link"
    link.symlink_to("d/target")  # relative, resolved from the link's folder
    chain = tmp_path / "chain"
    chain.symlink_to("link")
    write_output(chain, b"new")
    assert chain.is_symlink() and link.is_symlink() and os.readlink(link) == "d/target"
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    assert names(tmp_path) == ["chain", "d", "link"] and names(tmp_path / "d") == ["target"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "new")
    write_output(link, b"x")
    assert link.is_symlink() and (tmp_path / "new").read_bytes() == b"x"


def test_dash_is_stdout(capfdbinary):
    write_output("-", b"to stdout\n")
    assert capfdbinary.readouterr().out == b"to stdout\n"


@pytest.mark.parametrize("how", ["slash", "existing", "existing-slash"])
def test_a_folder_is_an_error(tmp_path, how):
    (tmp_path / "d").mkdir()
    path = {"slash": f"{tmp_path}/newdir/", "existing": f"{tmp_path}/d", "existing-slash": f"{tmp_path}/d/"}[how]
    with pytest.raises(S2mcError) as e:
        write_output(path, b"x")
    assert str(e.value) == f"{path}: is a directory; name an output file, not a folder"
    assert names(tmp_path) == ["d"] and names(tmp_path / "d") == []


def test_missing_folder_is_an_error(tmp_path):
    with pytest.raises(S2mcError, match=r"/no/a: cannot write output: folder .*/no does not exist"):
        write_output(tmp_path / "no" / "a", b"x")


def test_socket_is_an_error(tmp_path):
    import socket
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(tmp_path / "sock"))
        with pytest.raises(S2mcError, match="sock: cannot write output: not a regular file, device or FIFO"):
            write_output(tmp_path / "sock", b"x")
    finally:
        s.close()


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_disk_full_names_the_path_and_keeps_the_old_file(tmp_path, monkeypatch, where):
    p = tmp_path / "a.obj"
    p.write_bytes(b"old object")

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if where == "write":
        class Full:  # the temporary file's writes fail like a full disk's
            def write(self, data):
                full()

        with pytest.raises(S2mcError) as e:
            with open_output(p) as f:
                f._f = Full()
                f.write(b"new")
        assert str(e.value) == f"{p}: cannot write output (No space left on device)"
    else:
        monkeypatch.setattr(outputs.os, where, full)
        with pytest.raises(S2mcError) as e:
            write_output(p, b"new contents")
        assert str(e.value) == f"{p}: cannot write output (No space left on device)"
    monkeypatch.undo()
    assert p.read_bytes() == b"old object" and names(tmp_path) == ["a.obj"]


def test_unwritable_folder_names_the_path(tmp_path, monkeypatch):
    def deny(*a, **kw):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(outputs.tempfile, "mkstemp", deny)
    with pytest.raises(S2mcError) as e:
        write_output(tmp_path / "a", b"x", what="trace")
    assert str(e.value) == f"{tmp_path / 'a'}: cannot write trace (Permission denied)"


def test_output_object_commit_and_discard(tmp_path):
    out = Output(tmp_path / "a", "w", what="trace")
    f = out.open()
    f.write("line 1\n")
    f.write("line 2\n")
    out.commit()
    assert (tmp_path / "a").read_text() == "line 1\nline 2\n"
    out = Output(tmp_path / "a", "w")
    out.open().write("lost")
    out.discard()
    assert (tmp_path / "a").read_text() == "line 1\nline 2\n" and names(tmp_path) == ["a"]


# -- signals (a child process that is writing when the signal comes) ---------------------------------

_WRITER = """
import sys, time
from s2mc.common.outputs import open_output
with open_output(sys.argv[1]) as f:
    f.write(b"partial plaintext")
    f.flush()
    print("writing", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_removes_the_temporary_file(tmp_path, sig):
    out = tmp_path / "out"
    out.write_bytes(b"old")
    child = subprocess.Popen([sys.executable, "-c", _WRITER, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout.readline() == "writing\n"
        assert len(names(tmp_path)) == 2  # out and its .part
        child.send_signal(sig)
        rc = child.wait(20)
    finally:
        child.kill()
    assert rc == -sig  # Python dies of an unhandled SIGINT too
    assert names(tmp_path) == ["out"] and out.read_bytes() == b"old"


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """Under nohup SIGHUP must not kill the writer (or lose its output)."""
    out = tmp_path / "out"
    code = _WRITER.replace("time.sleep(60)", "sys.stdin.readline()")
    child = subprocess.Popen([sys.executable, "-c", code, str(out)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             text=True, preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    try:
        assert child.stdout.readline() == "writing\n"
        child.send_signal(signal.SIGHUP)
        child.stdin.write("go on\n")
        child.stdin.close()
        rc = child.wait(20)
    finally:
        child.kill()
    assert rc == 0 and out.read_bytes() == b"partial plaintext" and names(tmp_path) == ["out"]


# -- the commands ------------------------------------------------------------------------------------

def _limited(limit: int):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


def _s2mc(*args, limit=None, **kw):
    if not S2MC.exists():
        pytest.skip("s2mc entry point not installed next to the interpreter")
    return subprocess.run([str(S2MC), *map(str, args)], capture_output=True, text=True,
                          preexec_fn=_limited(limit) if limit else None, **kw)


def test_asm_onto_a_full_disk_keeps_the_old_object(tmp_path):
    src = REPO / "workloads" / "asm" / "parallel_sum.s"
    obj = tmp_path / "p.obj"
    assert _s2mc("asm", src, "-o", obj).returncode == 0
    good = obj.read_bytes()
    assert len(good) > 200
    r = _s2mc("asm", src, "-o", obj, limit=100)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"s2mc: error: {obj}: cannot write object file (File too large)\n"
    assert obj.read_bytes() == good and names(tmp_path) == ["p.obj"]


def test_compile_onto_a_full_disk_keeps_the_old_listing(tmp_path):
    src = tmp_path / "p.rz"
    src.write_text((REPO / "workloads" / "rz" / "sum.rz").read_text())
    out = tmp_path / "p.s"
    out.write_text("old listing\n")
    r = _s2mc("compile", src, "-o", out, limit=20)
    assert r.returncode == 1, r.stderr
    assert r.stderr == f"s2mc: error: {out}: cannot write assembly (File too large)\n"
    assert out.read_text() == "old listing\n" and names(tmp_path) == ["p.rz", "p.s"]


def test_asm_to_dev_null_and_stdout(tmp_path, null_device):
    src = REPO / "workloads" / "asm" / "parallel_sum.s"
    res = CliRunner().invoke(cli, ["asm", str(src), "-o", null_device])
    assert res.exit_code == 0 and stat.S_ISCHR(os.stat(null_device).st_mode)
    res = CliRunner().invoke(cli, ["asm", str(src), "-o", "-"])
    assert res.exit_code == 0
    (tmp_path / "null").unlink(missing_ok=True)
    res2 = CliRunner().invoke(cli, ["asm", str(src), "-o", str(tmp_path / "p.obj")])
    assert res2.exit_code == 0 and res.output == (tmp_path / "p.obj").read_text()


def test_asm_into_a_folder_is_one_line(tmp_path):
    src = REPO / "workloads" / "asm" / "parallel_sum.s"
    res = CliRunner().invoke(cli, ["asm", str(src), "-o", f"{tmp_path}/newdir/"])
    assert res.exit_code == 2   # checked while parsing the options (cli/options.py OutputFile)
    assert res.output == (f"s2mc asm: error: Invalid value for '-o' / '--output': {tmp_path}/newdir/: is a "
                          "directory; name an output file, not a folder\n")
    assert names(tmp_path) == []


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_records_are_written_through_the_output_module(tmp_path, monkeypatch, suffix):
    import pandas as pd
    from s2mc.analysis import records
    df = records.make_records([dict(run_id="r", experiment="e", source="native", platform="p", workload="w",
                                    variant="v", engine="x", cores=1, core=-1, bytes=16, metric="seconds",
                                    value=1.5)])
    path = tmp_path / f"r{suffix}"
    records.write(df, path, params={"k": 1})
    back = pd.read_csv(path) if suffix == ".csv" else pd.read_parquet(path)
    assert back["value"].tolist() == [1.5]
    assert records.read_manifest(records.manifest_path_for(path))["params"]["k"] == 1
    old = path.read_bytes()

    def full(*a, **kw):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(outputs.os, "fsync", full)
    with pytest.raises(S2mcError, match=rf"^{path}: cannot write records \(No space left on device\)$"):
        records.write(df, path)
    assert path.read_bytes() == old
    assert names(tmp_path) == sorted([path.name, records.manifest_path_for(path).name])
