"""The second hardening pass, one section per class of failure (docs/reliability.md, "Second
pass"): data lost with exit 0, an output that is also an input, stdout closed or full, outputs that
are not regular files, waveforms on a full disk, processes and files left behind, sweeps that lie
about completeness, smaller rough edges. (Engine traces of faulting programs: tests/test_systemc_equal.py
and tests/test_sim_trace.py.) Each test fails on the code before the fix.

CLI cases run the installed `s2mc` in a subprocess, so that a traceback, a leftover process or the
real file descriptors show."""
from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from s2mc.isa import assemble
from s2mc.isa.program import Program
from s2mc.common import outputs
from s2mc.common.errors import S2mcError
from s2mc.simulator import systemc_engine
from systemc_helpers import needs_systemc

S2MC = Path(sys.executable).with_name("s2mc")
KEY = bytes(range(16))
IV = bytes(range(16, 32))
LOOP = ".code 0\n:top\n  add r1 r1 #1\n  jmp top\n"          # runs until --max-cycles
PROG = ".code 0\n  mov r1 #7\n  trap r1 #1\n  trap r0 #0\n"     # prints 7


def s2mc(*args, **kw) -> subprocess.CompletedProcess:
    if not S2MC.exists():
        pytest.skip("s2mc entry point not installed next to the interpreter")
    kw.setdefault("capture_output", True)
    return subprocess.run([str(S2MC), *map(str, args)], text=True, **kw)


def one_error_line(proc, rc=None) -> str:
    """The run failed with exactly one line on stderr (no traceback); returns it."""
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and (rc is None or proc.returncode == rc), (proc.returncode, proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("s2mc"), proc.stderr
    return lines[0]


def ctr(data: bytes) -> bytes:
    enc = Cipher(algorithms.AES(KEY), modes.CTR(IV)).encryptor()
    return enc.update(data) + enc.finalize()


def crypt_args(src, dst, *more):
    return ["encrypt", "--in", src, "--out", dst, "--key", KEY.hex(), "--iv", IV.hex(), *more]


# -- 1. files whose size says 0 but which have content -----------------------------------------------

def _pseudo_files():
    found = [p for p in ("/proc/version", "/sys/devices/system/cpu/online")
             if os.path.exists(p)]
    return found or [pytest.param("/proc/version", marks=pytest.mark.skip("no /proc"))]


@pytest.mark.parametrize("path", _pseudo_files())
def test_encrypting_a_proc_or_sys_file_reads_it_to_the_end(tmp_path, path):
    """Their stat size is 0 (/proc) or a page (/sys), whatever they hold: the fast path that
    trusts the size wrote 0 bytes (or failed) with exit 0. The oracle: cryptography's AES-CTR of
    what a read to the end gives."""
    from s2mc.workloads import native
    if not native.available():
        pytest.skip("the native library is not built")
    plain = Path(path).read_bytes()
    assert plain and os.stat(path).st_size != len(plain)    # the case: the size lies
    out = tmp_path / "c.bin"
    n = native.encrypt_file(path, out, KEY, IV, threads=2)
    assert n == len(plain) and out.read_bytes() == ctr(plain)
    proc = s2mc(*crypt_args(path, out))
    assert proc.returncode == 0, proc.stderr
    assert f"encrypted {len(plain)} bytes" in proc.stderr and out.read_bytes() == ctr(plain)


# -- 2. an output that is also an input ----------------------------------------------------------------

@pytest.fixture
def sandbox(tmp_path):
    (tmp_path / "p.s").write_text(PROG)
    (tmp_path / "p.rz").write_text("main()\n  print(7)\n")
    (tmp_path / "plain").write_bytes(b"attack at dawn" * 100)
    (tmp_path / "key").write_text(KEY.hex() + "\n")
    return tmp_path


def _same_file_cases(d: Path):
    os.link(d / "p.s", d / "hard.s")
    os.symlink(d / "p.s", d / "soft.s")
    os.link(d / "plain", d / "plain.link")
    os.symlink(d / "plain", d / "plain.soft")
    (d / "p.obj").write_text(assemble(PROG).to_text())
    os.link(d / "p.rz", d / "p-hard.rz")
    os.symlink(d / "p.obj", d / "t.html")
    return {
        "asm -o the source (hard link)": ["asm", d / "p.s", "-o", d / "hard.s"],
        "asm -o the source (symlink)": ["asm", d / "p.s", "-o", d / "soft.s"],
        "asm of an object onto itself (default output)": ["asm", d / "p.obj"],
        "compile -o the source": ["compile", d / "p.rz", "-o", d / "p-hard.rz"],
        "run --trace the program": ["run", d / "p.s", "--trace", d / "soft.s"],
        "run --timeline the program (symlink)": ["run", d / "p.obj", "--timeline", d / "t.html"],
        "run --trace = --timeline (new file)": ["run", d / "p.s", "--trace", d / "new.json", "--timeline",
                                                d / "new.json"],
        "run --out = --trace": ["run", d / "p.s", "--out", d / "r.csv", "--trace", d / "r.csv"],
        "run --trace = the --out manifest": ["run", d / "p.s", "--out", d / "r.csv", "--trace",
                                             d / "r.manifest.json"],
        "encrypt --out = --in (hard link)": crypt_args(d / "plain", d / "plain.link"),
        "encrypt --out = --in (symlink)": crypt_args(d / "plain", d / "plain.soft"),
        "encrypt --records = --in": crypt_args(d / "plain", d / "c.bin", "--records", d / "plain.link"),
        "decrypt --out = --key-file": ["decrypt", "--in", d / "plain", "--out", d / "key",
                                       "--key-file", d / "key", "--iv", IV.hex()],
        "sweep --out = the spec": ["sweep", d / "p.s", "--out", d / "hard.s"],
    }


def test_every_output_that_is_an_input_or_another_output_is_refused_before_anything(sandbox):
    cases = _same_file_cases(sandbox)
    before = {p.name: p.read_bytes() for p in sandbox.iterdir()}
    for name, args in cases.items():
        proc = s2mc(*args, cwd=sandbox)
        line = one_error_line(proc)
        assert "is the same file as" in line, (name, line)
        after = {p.name: p.read_bytes() for p in sandbox.iterdir()}
        assert after == before, f"{name}: files changed or appeared: {set(after) ^ set(before)}"


def test_check_distinct_library():
    with tempfile.TemporaryDirectory() as d:
        a, b = Path(d, "a"), Path(d, "b")
        a.write_text("x")
        os.link(a, b)
        outputs.check_distinct([("--out", Path(d, "new"))], [("--in", a)])   # different files: fine
        outputs.check_distinct([("--out", "-"), ("--x", "-")])                 # stdout twice: not files
        outputs.check_distinct([("--out", "/dev/null"), ("--x", "/dev/null")])   # devices
        with pytest.raises(S2mcError, match=r"b: --out is the same file as the input --in \("):
            outputs.check_distinct([("--out", b)], [("--in", a)])
        with pytest.raises(S2mcError, match="the same file as the output --a"):
            outputs.check_distinct([("--a", Path(d, "n")), ("--b", Path(d, "x", "..", "n"))])


# -- 3. stdout closed or full -----------------------------------------------------------------------------

STDOUT_COMMANDS = [["--help"], ["--version"], ["run", "--help"], ["info"], ["asm", "p.s", "-o", "-"],
                   ["run", "p.s"], ["disasm", "p.obj"], ["encrypt", "--in", "plain", "--out", "-", "--key",
                                                          KEY.hex(), "--iv", IV.hex(), "-q"]]


@pytest.mark.parametrize("how", ["closed", "full"])
@pytest.mark.parametrize("args", STDOUT_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_stdout_closed_or_full_is_one_line_and_a_failure(sandbox, args, how):
    (sandbox / "p.obj").write_text(assemble(PROG).to_text())
    if how == "closed":
        proc = s2mc(*args, cwd=sandbox, stdout=None, stderr=subprocess.PIPE, capture_output=False,
                    preexec_fn=lambda: os.close(1))
    else:
        with open("/dev/full", "w") as full:
            proc = s2mc(*args, cwd=sandbox, stdout=full, stderr=subprocess.PIPE, capture_output=False)
    line = one_error_line(proc)
    assert "stdout" in line and ("Bad file descriptor" in line or "No space left" in line), line


def test_a_closed_stdout_never_becomes_an_output_file(sandbox):
    """With fd 1 closed, the first file opened would get fd 1 and receive what is printed: the
    trace must be what the same run writes with stdout open."""
    proc = s2mc("run", "p.s", "--trace", "t.txt", cwd=sandbox, stdout=None, stderr=subprocess.PIPE,
                capture_output=False, preexec_fn=lambda: os.close(1))
    lines = proc.stderr.strip().splitlines()   # "wrote t.txt" may come first: the trace was written
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert lines[-1] == "s2mc: error: stdout: closed (Bad file descriptor)", proc.stderr
    closed = (sandbox / "t.txt").read_text()
    assert s2mc("run", "p.s", "--trace", "t.txt", cwd=sandbox).returncode == 0
    assert closed == (sandbox / "t.txt").read_text()


def test_commands_that_print_nothing_still_work_with_stdout_closed(sandbox):
    proc = s2mc("asm", "p.s", "-o", "q.obj", cwd=sandbox, stdout=None, stderr=subprocess.PIPE,
                capture_output=False, preexec_fn=lambda: os.close(1))
    assert proc.returncode == 0, proc.stderr
    assert (sandbox / "q.obj").read_text() == assemble(PROG).to_text()


# -- 4. outputs that are not regular files; read-only outputs; long names ---------------------------------

def test_dev_stdout_into_a_pipe_is_written_through(sandbox):
    proc = s2mc("asm", "p.s", "-o", "/dev/stdout", cwd=sandbox)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == assemble(PROG).to_text()


def test_dev_stdout_onto_a_file_writes_that_file_not_a_replacement(sandbox):
    target = sandbox / "shell.txt"
    with open(target, "w") as f:
        ino = os.fstat(f.fileno()).st_ino
        proc = s2mc(*crypt_args("plain", "/dev/stdout", "-q"), cwd=sandbox, stdout=f, stderr=subprocess.PIPE,
                    capture_output=False)
    assert proc.returncode == 0, proc.stderr
    assert os.stat(target).st_ino == ino and target.read_bytes() == ctr((sandbox / "plain").read_bytes())


def test_dev_stderr_and_a_process_substitution_pipe(sandbox):
    proc = s2mc("compile", "p.rz", "-o", "/dev/stderr", cwd=sandbox)
    assert proc.returncode == 0 and ":main" in proc.stderr, proc.stderr
    read_fd, write_fd = os.pipe()
    try:
        proc = s2mc("asm", "p.s", "-o", f"/dev/fd/{write_fd}", cwd=sandbox, pass_fds=(write_fd,))
        os.close(write_fd)
        write_fd = -1
        with os.fdopen(read_fd, "r") as pipe:
            read_fd = -1
            got = pipe.read()
    finally:
        for fd in (read_fd, write_fd):
            if fd >= 0:
                os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert got == assemble(PROG).to_text()


def test_a_read_only_output_is_refused_unless_forced(sandbox):
    old = sandbox / "old.obj"
    old.write_text("precious\n")
    old.chmod(0o444)
    line = one_error_line(s2mc("asm", "p.s", "-o", old, cwd=sandbox), rc=2)
    assert "read-only" in line and "--force" in line and old.read_text() == "precious\n"
    proc = s2mc("asm", "p.s", "-o", old, "--force", cwd=sandbox)
    assert proc.returncode == 0, proc.stderr
    assert old.read_text() == assemble(PROG).to_text() and (old.stat().st_mode & 0o777) == 0o444
    (sandbox / "c.bin").write_bytes(b"old")
    (sandbox / "c.bin").chmod(0o400)
    one_error_line(s2mc(*crypt_args("plain", "c.bin"), cwd=sandbox), rc=2)
    assert (sandbox / "c.bin").read_bytes() == b"old"


@pytest.mark.parametrize("length", [241, 250, 255])
def test_output_names_up_to_the_limit_work(sandbox, length):
    name = "o" * (length - 4) + ".obj"
    proc = s2mc("asm", "p.s", "-o", name, cwd=sandbox)
    assert proc.returncode == 0, proc.stderr
    assert (sandbox / name).read_text() == assemble(PROG).to_text()
    assert sorted(p.name for p in sandbox.iterdir() if p.name.startswith(".")) == []
    # a multi-byte name is cut on a character boundary
    name = "é" * 125 + ".s"
    assert len(outputs.temp_prefix(str(sandbox), name, ".part").encode()) <= 255 - len("4194304000-XXXXXXXX.part")


# -- 5. waveforms on a full disk ---------------------------------------------------------------------------

def _fsize_limit(limit: int):
    def pre():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return pre


@pytest.mark.systemc
@pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine is not built")
def test_a_waveform_that_does_not_fit_keeps_the_old_one(sandbox):
    (sandbox / "loop.s").write_text(LOOP)
    old = sandbox / "w.vcd"
    old.write_text("$comment the previous waveform $end\n")
    proc = s2mc("run", "loop.s", "--engine", "systemc", "--max-cycles", "3000", "--vcd", old, cwd=sandbox,
                preexec_fn=_fsize_limit(8192))
    line = one_error_line(proc)
    assert "VCD" in line or "w.vcd" in line, line
    assert old.read_text() == "$comment the previous waveform $end\n"
    assert not [p for p in sandbox.iterdir() if p.name.startswith(".")]
    # the same run without the limit writes it whole (the limit was what failed)
    proc = s2mc("run", "loop.s", "--engine", "systemc", "--max-cycles", "3000", "--vcd", old, cwd=sandbox)
    assert proc.returncode == 1 and "cycle limit" in proc.stderr and old.stat().st_size > 8192


# -- 6. processes and files left behind; Ctrl-C in the fast engine --------------------------------------------

def _children(pid: int) -> list[int]:
    kids = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        kids += [int(k) for k in (task / "children").read_text().split()]
    return kids


def _wait(cond, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.05)
    return cond()


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except FileNotFoundError:
        return True


def _own_temp_folders(pid: int) -> list[Path]:
    return list(Path(tempfile.gettempdir()).glob(f"{systemc_engine.TEMP_PREFIX}{pid}-*"))


@pytest.mark.systemc
@pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine is not built")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_killing_s2mc_stops_the_systemc_child(sandbox, sig):
    (sandbox / "loop.s").write_text(LOOP)
    proc = subprocess.Popen([str(S2MC), "run", "loop.s", "--engine", "systemc", "--max-cycles", "10000000000"],
                            cwd=sandbox, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert _wait(lambda: _children(proc.pid), 30), "the SystemC child never started"
        child = _children(proc.pid)[0]
        proc.send_signal(sig)
        proc.wait(timeout=30)
        assert _wait(lambda: _gone(child), 10), "the SystemC child outlived s2mc"
        left = _own_temp_folders(proc.pid)
        if sig != signal.SIGKILL:
            assert left == [] and proc.returncode == -sig
        else:   # nothing could clean up: the next SystemC run removes the folder of a dead s2mc
            s2mc("run", "p.s", "--engine", "systemc", cwd=sandbox)
            assert _own_temp_folders(proc.pid) == []
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_stale_temporary_files_of_a_dead_run_are_removed_by_the_next(sandbox):
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    stale = sandbox / f".p.obj.{dead}-abcd1234.part"
    live = sandbox / f".p.obj.{os.getpid()}-abcd1234.part"   # a run still going (this process)
    stale.write_text("half")
    live.write_text("half")
    proc = s2mc("asm", "p.s", cwd=sandbox)
    assert proc.returncode == 0, proc.stderr
    assert not stale.exists() and live.exists()


def test_ctrl_c_stops_a_long_fast_run_and_keeps_old_outputs(sandbox):
    (sandbox / "loop.s").write_text(LOOP)
    old = sandbox / "r.csv"
    old.write_text("old records\n")
    # about 10^12 cycles: hours, unless Ctrl-C stops it
    proc = subprocess.Popen([str(S2MC), "run", "loop.s", "--max-cycles", "1000000000000", "--out", "r.csv"],
                            cwd=sandbox, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _wait(lambda: Path(f"/proc/{proc.pid}/stat").read_text().split(") ")[1].startswith("R")
                     and _busy(proc.pid), 60)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)   # without polling: it would run for hours
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130 and err.strip().splitlines()[-1] == "s2mc: interrupted", err
    assert old.read_text() == "old records\n"
    assert [p.name for p in sandbox.iterdir() if p.name.startswith(".")] == []


def _busy(pid: int) -> bool:
    """The process has used a second of CPU: it is inside the run, past its imports."""
    fields = Path(f"/proc/{pid}/stat").read_text().split(") ")[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK") > 1.0


def test_fast_run_in_slices_equals_one_run():
    """The run loop pauses every slice to look for signals: a pause changes nothing (the result
    of a run in slices of 7 cycles is that of one run)."""
    from s2mc.simulator import _fast
    from s2mc.simulator.trace import RECORD
    src = ".code 0\n  cid r1\n  mov r2 #40\n:l\n  ld r3 @0 r1\n  add r3 r3 r1\n  st r3 @0 r1\n" \
          "  sub r2 r2 #1\n  jt r2 l\n  sync\n  trap r3 #1\n  trap r0 #0\n"
    prog = assemble(src)
    code = [w & 0xFFFFFFFF for w in prog.code_image]

    def raw(slice_cycles):
        engine = _fast.Engine(code, [], prog.entry, 4, 2, "fifo", 1_000_000, 4096)
        events = []
        engine.enable_trace(events.append)
        result = engine.run(slice_cycles)
        log = b"".join(events)   # records compared field by field: their padding bytes are undefined
        return result, [RECORD.unpack_from(log, i) for i in range(0, len(log), RECORD.size)], engine.read(0, 8)
    whole = raw(0)
    assert whole[0]["cycles"] > 7 * 20 and whole[1]   # many slices, a trace
    for n in (1, 7, 64):
        assert raw(n) == whole


# -- 7. sweeps -----------------------------------------------------------------------------------------------

SPEC = """\
[[grid]]
kind = "aes"
cores = [1, 2]
sizes = [32]
"""


def _sweep(tmp_path):
    from s2mc.experiments import registry as experiments, specs
    (tmp_path / "s.toml").write_text(SPEC)
    return experiments.from_spec(specs.load(tmp_path / "s.toml"))


@pytest.mark.parametrize("damage", ["truncate", "append", "no-check", "swap"])
def test_a_damaged_part_is_run_again_not_merged(tmp_path, damage):
    from s2mc.analysis import records
    from s2mc.experiments import sweep
    exp, out = _sweep(tmp_path), tmp_path / "r.parquet"
    first = sweep.run(exp, out)
    good = records.read(out)
    parts = sorted(sweep.parts_dir(out).glob("*.parquet"))
    assert first.ran == 2 and len(parts) == 2
    victim = parts[0]
    if damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:-100])
    elif damage == "append":   # another configuration's rows too: duplicates
        victim.write_bytes(parts[1].read_bytes())
    elif damage == "no-check":
        victim.with_name(victim.stem + ".check.json").unlink()
    else:
        victim.with_name(victim.stem + ".check.json").write_text(json.dumps({"rows": 99, "sha256": "0" * 64}))
    logs = []
    again = sweep.run(exp, out, log=logs.append)
    assert (again.stored_before, again.ran) == (1, 1), logs
    assert any("fails its check" in m for m in logs), logs
    df = records.read(out)
    assert len(df) == len(good) and sorted(df["cores"]) == sorted(good["cores"])
    manifest = records.read_manifest(records.manifest_path_for(out))["params"]
    for cfg in manifest["configurations"]:
        part = sweep.parts_dir(out) / f"{cfg['key']}.parquet"
        assert cfg["sha256"] == hashlib.sha256(part.read_bytes()).hexdigest() and cfg["rows"] > 0


def test_a_part_changed_during_the_merge_is_refused(tmp_path, monkeypatch):
    from s2mc.experiments import sweep
    exp, out = _sweep(tmp_path), tmp_path / "r.parquet"
    sweep.run(exp, out)
    part = sorted(sweep.parts_dir(out).glob("*.parquet"))[0]
    real = sweep._read_part

    def read_then_damage(p):   # passes the resume check, then changes before the merge reads it
        got = real(p)
        if p == part and not getattr(read_then_damage, "done", False):
            read_then_damage.done = True
            p.write_bytes(p.read_bytes()[:-10])
        return got
    monkeypatch.setattr(sweep, "_read_part", read_then_damage)
    with pytest.raises(S2mcError, match="fails its check"):
        sweep.run(exp, out)


def test_removing_the_lock_file_does_not_let_a_second_sweep_in(tmp_path):
    from s2mc.experiments import sweep
    exp, out = _sweep(tmp_path), tmp_path / "r.parquet"
    parts = sweep.parts_dir(out)
    parts.mkdir()
    with sweep._locked(parts):    # a sweep running now
        for f in parts.iterdir():   # whatever file it may use as a lock is removed
            f.unlink()
        with pytest.raises(S2mcError, match="another s2mc sweep is writing this output now"):
            sweep.run(exp, out)


def test_sweep_error_lines_are_one_line_and_cut():
    from s2mc.experiments import sweep
    msg = sweep._message(ValueError("bad value\n" + "x" * 5000 + "\nmore\tlines"))
    assert "\n" not in msg and len(msg) <= sweep.MESSAGE_CHARS + 40 and msg.startswith("ValueError: bad value")


# -- 8. smaller rough edges ------------------------------------------------------------------------------------

def test_a_key_file_with_a_byte_order_mark_is_accepted(sandbox):
    (sandbox / "bom.key").write_bytes(b"\xef\xbb\xbf" + KEY.hex().encode() + b"\r\n")
    from s2mc.workloads.cipher_host import hex_from_options
    assert hex_from_options("key", None, str(sandbox / "bom.key"), None, key=True) == KEY
    (sandbox / "bom2.key").write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + KEY.hex().encode())   # only one mark
    with pytest.raises(S2mcError, match="not text|not a hex"):
        hex_from_options("key", None, str(sandbox / "bom2.key"), None, key=True)


GOOD_OBJECT = assemble(".symbol\n  k 5\n.code 0\n  mov r1 #7\n  trap r1 #1\n  trap r0 #0\n"
                       ".data 4\n:arr 1 2 3 4 5 6 7 8 9\n").to_text()


@pytest.mark.parametrize("edit", [
    ("entry 0\n", "entry 00\n"),                       # a leading zero
    ("entry 0\n", "entry  0\n"),                       # two spaces
    ("entry 0\n", "entry 0 ; start\n"),                # a comment
    ("entry 0\n", "entry 0\n\n"),                      # a blank line
    ("entry 0\n", "entry 0   \n"),                     # trailing spaces
    ("s2obj 1\n", "  s2obj 1\n"),                      # leading spaces
    ("data 4\n", "data 4\n; data\n"),                  # a comment line
    ("entry 0\n", "entry 0\r\n"),                      # a CRLF line
])
def test_the_object_loader_accepts_only_what_the_assembler_writes(edit):
    old, new = edit
    assert Program.from_text(GOOD_OBJECT) == Program.from_text(GOOD_OBJECT.replace(old, old))
    text = GOOD_OBJECT.replace(old, new, 1)
    assert text != GOOD_OBJECT
    with pytest.raises(S2mcError, match=r"^<object>:\d+: bad object file: not as the assembler writes it"):
        Program.from_text(text)


def test_lines_after_the_assemblers_end_are_one_line():
    """An empty `data` block and a blank line after the last line the assembler writes: the file
    goes on where the assembler's text has ended (found by the object-loader fuzz: an IndexError)."""
    text = "s2obj 1\nentry 0\nsymbol lock 0 data\ncode 0\n29c0000a\ndata 0\n00000000\ndata 64\n\n"
    with pytest.raises(S2mcError, match=r"^<object>:9: bad object file: not as the assembler writes it "
                                        r"\(expected the end of the file\): ''$"):
        Program.from_text(text)


def test_object_words_split_unlike_the_assembler_and_a_missing_newline_are_refused():
    lines = GOOD_OBJECT.split("\n")
    nine = next(i for i, ln in enumerate(lines) if ln.count(" ") == 7 and lines[i + 1].count(" ") == 0)
    resplit = lines[:nine] + [" ".join(lines[nine].split()[:4]), " ".join(lines[nine].split()[4:])] + lines[nine + 1:]
    with pytest.raises(S2mcError, match=rf":{nine + 1}: bad object file: not as the assembler writes it"):
        Program.from_text("\n".join(resplit))
    with pytest.raises(S2mcError, match="the last line has no newline"):
        Program.from_text(GOOD_OBJECT.rstrip("\n"))


def test_only_dead_runs_temporary_files_of_that_output_are_removed(tmp_path):
    dead = int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)
    other = tmp_path / f".a.{dead}-xyz.part.{dead}-abcd1234.part"     # output 'a.<dead>-xyz.part'
    mine = tmp_path / f".a.{dead}-abcd1234.part"                       # output 'a'
    longer = tmp_path / f".a.{dead}-abcd12345.part"                    # not mkstemp's 8 characters
    for p in (other, mine, longer):
        p.write_text("x")
    assert outputs.remove_stale(tmp_path, ".a.", ".part") == [str(mine)]
    assert other.exists() and longer.exists()
