"""`s2mc encrypt` / `decrypt` data safety: outputs onto devices, FIFOs, symlinks and stdout,
replaced files keep mode and owner, the temporary file is 0600 while plaintext goes in, signals and
a full disk leave nothing behind, and keys come from a file, the environment or stdin. Every
ciphertext is checked against `cryptography` (tests/aes_oracle.py)."""
import os
import resource
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from aes_oracle import ref, rnd

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from s2mc.cli.main import cli  # noqa: E402

KEY = "2b7e151628aed2a6abf7158809cf4f3c"
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
S2MC = Path(sys.executable).with_name("s2mc")
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def ctr(data: bytes, key: str = KEY, iv: str = IV) -> bytes:
    return ref("ctr", bytes.fromhex(key), bytes.fromhex(iv), data)


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input)


@pytest.fixture
def plain(tmp_path):
    data = rnd(70_001, 7)
    (tmp_path / "p").write_bytes(data)
    return tmp_path / "p", data


def test_dev_null_survives(plain, null_device):
    src, _ = plain
    before = os.stat(null_device)
    res = run("encrypt", "--in", src, "--out", null_device, "--key", KEY, "--iv", IV, "-q")
    assert res.exit_code == 0, res.output
    after = os.stat(null_device)
    assert stat.S_ISCHR(after.st_mode) and (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)


def test_fifo_is_written_through(plain, tmp_path):
    src, data = plain
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    t = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)
    t.start()
    res = run("encrypt", "--in", src, "--out", fifo, "--key", KEY, "--iv", IV, "--chunk-bytes", "4K", "-q")
    t.join(20)
    assert res.exit_code == 0, res.output
    assert got == [ctr(data)]
    assert stat.S_ISFIFO(fifo.stat().st_mode) and names(tmp_path) == ["fifo", "p"]


def test_symlink_target_is_written_and_the_link_kept(plain, tmp_path):
    src, data = plain
    (tmp_path / "real.enc").write_bytes(b"old")
    (tmp_path / "link.enc").symlink_to("real.enc")
    res = run("encrypt", "--in", src, "--out", tmp_path / "link.enc", "--key", KEY, "--iv", IV, "-q")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "link.enc").is_symlink() and os.readlink(tmp_path / "link.enc") == "real.enc"
    assert (tmp_path / "real.enc").read_bytes() == ctr(data)
    assert names(tmp_path) == ["link.enc", "p", "real.enc"]


def test_symlink_to_the_input_is_the_same_file(plain, tmp_path):
    src, data = plain
    (tmp_path / "alias").symlink_to(src)
    res = run("encrypt", "--in", src, "--out", tmp_path / "alias", "--key", KEY, "--iv", IV)
    # refused while the options are parsed (a usage error), before anything is read or written
    assert res.exit_code == 2 and "--out is the same file as the input --in" in res.output
    assert src.read_bytes() == data


def test_dash_is_stdout(plain):
    src, data = plain
    res = CliRunner().invoke(cli, ["decrypt", "--in", str(src), "--out", "-", "--key", KEY, "--iv", IV, "-q"])
    assert res.exit_code == 0
    assert res.stdout_bytes == ctr(data)


def test_json_and_stdout_output_conflict(plain):
    src, _ = plain
    res = run("encrypt", "--in", src, "--out", "-", "--key", KEY, "--iv", IV, "--json")
    assert res.exit_code == 2 and "--json and --out -" in res.output


@pytest.mark.parametrize("out", ["newdir/", "existing"])
def test_output_folder_is_one_line(plain, tmp_path, out):
    src, _ = plain
    (tmp_path / "existing").mkdir()
    target = f"{tmp_path}/{out}"
    res = run("encrypt", "--in", src, "--out", target, "--key", KEY, "--iv", IV)
    assert res.exit_code == 2   # checked while parsing the options (cli/options.py OutputFile)
    assert res.output == (f"s2mc encrypt: error: Invalid value for '--out': {target}: is a directory; "
                          "name an output file, not a folder\n")
    assert names(tmp_path) == ["existing", "p"] and names(tmp_path / "existing") == []


def test_decrypt_over_a_private_file_keeps_mode_and_owner(plain, tmp_path):
    src, data = plain
    out = tmp_path / "secret"
    out.write_bytes(b"old secret")
    out.chmod(0o600)
    owner = (os.getuid(), os.getgid())
    if ROOT:
        owner = (4242, 4343)
        os.chown(out, *owner)
    res = run("decrypt", "--in", src, "--out", out, "--key", KEY, "--iv", IV, "-q")
    assert res.exit_code == 0, res.output
    st = out.stat()
    assert stat.S_IMODE(st.st_mode) == 0o600 and (st.st_uid, st.st_gid) == owner
    assert out.read_bytes() == ctr(data)


def test_temporary_file_is_0600_while_plaintext_goes_in(plain, tmp_path, monkeypatch):
    src, data = plain
    seen = []
    lib = native._lib()

    class Spying:   # the regular-file path: one native call per segment (16K here)
        def __getattr__(self, name):
            return getattr(lib, name)

        def crypt_fds(self, *a, **kw):
            seen.extend(stat.S_IMODE(p.stat().st_mode) for p in tmp_path.iterdir() if p.name.endswith(".part"))
            return lib.crypt_fds(*a, **kw)

    from s2mc.workloads.cipher_host import files as host_files
    monkeypatch.setattr(host_files, "RANGE_SEGMENT_BYTES", 16 << 10)
    monkeypatch.setattr(native, "_lib", lambda: Spying())
    old = os.umask(0)  # a umask that would make a plain open() 0666
    try:
        res = run("decrypt", "--in", src, "--out", tmp_path / "out", "--key", KEY, "--iv", IV,
                  "--chunk-bytes", "16K", "-q")
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    assert len(seen) == 5 and set(seen) == {0o600}  # one per segment
    assert stat.S_IMODE((tmp_path / "out").stat().st_mode) == 0o666  # the finished file: 0666 & ~umask
    assert (tmp_path / "out").read_bytes() == ctr(data)


def _entry():
    if not S2MC.exists():
        pytest.skip("s2mc entry point not installed next to the interpreter")
    return str(S2MC)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_signal_during_a_large_encrypt_leaves_no_part_file(tmp_path, sig):
    """The input is a FIFO we feed, so the signal arrives while the output is half written."""
    fifo = tmp_path / "in"
    os.mkfifo(fifo)
    out = tmp_path / "out"
    out.write_bytes(b"previous ciphertext")
    child = subprocess.Popen([_entry(), "encrypt", "--in", str(fifo), "--out", str(out), "--key", KEY,
                              "--iv", IV, "--chunk-bytes", "64K", "-q"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        with open(fifo, "wb") as feed:
            feed.write(rnd(1 << 20, 1))  # 16 chunks: several are written to the .part file
            feed.flush()
            deadline = time.monotonic() + 20
            while not any(n.endswith(".part") and (tmp_path / n).stat().st_size > 0 for n in names(tmp_path)):
                assert time.monotonic() < deadline, "no .part file appeared"
                time.sleep(0.01)
            child.send_signal(sig)
            _, err = child.communicate(timeout=20)
    finally:
        child.kill()
    if sig == signal.SIGINT:
        assert child.returncode == 130 and err == "s2mc: interrupted\n"
    else:
        assert child.returncode == -sig
    assert names(tmp_path) == ["in", "out"] and out.read_bytes() == b"previous ciphertext"


def test_full_disk_names_the_path_and_keeps_the_old_file(plain, tmp_path):
    src, _ = plain
    out = tmp_path / "out"
    out.write_bytes(b"old ciphertext")

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # past the limit a write fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    r = subprocess.run([_entry(), "encrypt", "--in", str(src), "--out", str(out), "--key", KEY, "--iv", IV,
                        "--chunk-bytes", "16K", "-q"], capture_output=True, text=True, preexec_fn=limit)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == f"s2mc: error: {out}: cannot write output (File too large)\n"
    assert out.read_bytes() == b"old ciphertext" and names(tmp_path) == ["out", "p"]


# -- where the key comes from --------------------------------------------------------------------------

def _crypt(tmp_path, *key_args, input=None, env=None):
    res = CliRunner(env=env).invoke(cli, ["encrypt", "--in", str(tmp_path / "p"), "--out", str(tmp_path / "c"), "-q",
                                          *map(str, key_args)], input=input)
    return res


def test_key_file(plain, tmp_path):
    src, data = plain
    (tmp_path / "k").write_text(KEY.upper() + "\n")
    (tmp_path / "iv").write_text(f"  0x{IV}  \n")
    res = _crypt(tmp_path, "--key-file", tmp_path / "k", "--iv-file", tmp_path / "iv")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c").read_bytes() == ctr(data)


def test_key_env(plain, tmp_path):
    src, data = plain
    key256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"
    res = _crypt(tmp_path, "--key-env", "S2MC_TEST_KEY", "--iv-env", "S2MC_TEST_IV",
                 env={"S2MC_TEST_KEY": key256, "S2MC_TEST_IV": IV})
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c").read_bytes() == ctr(data, key=key256)


@pytest.mark.parametrize("which", ["key", "iv"])
def test_key_or_iv_from_stdin(plain, tmp_path, which):
    src, data = plain
    args = ["--key", "-", "--iv", IV] if which == "key" else ["--key", KEY, "--iv", "-"]
    res = _crypt(tmp_path, *args, input=(KEY if which == "key" else IV) + "\n")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "c").read_bytes() == ctr(data)


def test_key_from_stdin_keeps_it_out_of_argv(plain, tmp_path):
    """What ps would show: the child's command line has no key in it."""
    src, data = plain
    child = subprocess.Popen([_entry(), "encrypt", "--in", str(src), "--out", str(tmp_path / "c"), "--key", "-",
                              "--iv", IV, "-q"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while b"encrypt" not in (argv := Path(f"/proc/{child.pid}/cmdline").read_bytes()):  # until exec is done
        assert time.monotonic() < deadline
        time.sleep(0.005)
    _, err = child.communicate(KEY.encode() + b"\n", timeout=30)
    assert child.returncode == 0, err
    assert KEY.encode() not in argv and b"--key\x00-\x00" in argv
    assert (tmp_path / "c").read_bytes() == ctr(data)


@pytest.mark.parametrize("args,env,stdin,message", [
    ([], {}, None, "give the key with --key HEX, --key-file FILE or --key-env VAR"),
    (["--key", KEY, "--key-env", "K"], {"K": KEY}, None, "--key and --key-env: give only one of them"),
    (["--key-file", "{tmp}/nope"], {}, None, "--key-file {tmp}/nope: no such file"),
    (["--key-file", "{tmp}/big"], {}, None, "--key-file {tmp}/big: more than 4096 bytes"),
    (["--key-file", "{tmp}/bin"], {}, None, "--key-file {tmp}/bin: not a hex string (the file is not text)"),
    (["--key-file", "{tmp}/short"], {}, None, "--key-file {tmp}/short: 30 hex digits; AES keys need 32, 48 or 64"),
    (["--key-env", "S2MC_UNSET"], {}, None, "--key-env S2MC_UNSET: environment variable S2MC_UNSET is not set"),
    (["--key-env", "K"], {"K": "zz"}, None, "--key-env K: not a hex string (bad character 'z')"),
    (["--key", "-"], {}, "", "--key - (stdin): stdin is empty"),
    (["--key", "-"], {}, "abc\n", "--key - (stdin): 3 hex digits"),
])
def test_key_source_errors(plain, tmp_path, args, env, stdin, message):
    (tmp_path / "big").write_text("0" * 5000)
    (tmp_path / "bin").write_bytes(b"\xff\xfe" * 16)
    (tmp_path / "short").write_text("00" * 15)
    args = [a.replace("{tmp}", str(tmp_path)) for a in args]
    message = message.replace("{tmp}", str(tmp_path))
    res = _crypt(tmp_path, *args, "--iv", IV, input=stdin, env=env)
    assert res.exit_code == 1
    assert res.output.startswith(f"s2mc: error: {message}") and res.output.count("\n") == 1, res.output
    assert not (tmp_path / "c").exists()


def test_iv_source_errors(plain, tmp_path):
    res = _crypt(tmp_path, "--key", KEY)
    assert res.exit_code == 1 and res.output == "s2mc: error: give the iv with --iv HEX, --iv-file FILE or --iv-env VAR\n"
    res = _crypt(tmp_path, "--key", KEY, "--iv-file", tmp_path)
    assert res.exit_code == 2  # click refuses a folder for a dir_okay=False path
    res = _crypt(tmp_path, "--key", "-", "--iv", "-", input=f"{KEY}\n{IV}\n")
    assert res.exit_code == 2 and "only one of them can be read from stdin" in res.output
