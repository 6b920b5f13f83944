"""`s2mc encrypt` / `s2mc decrypt`: interop with the `openssl` binary in both directions, streaming
across chunk boundaries, atomic output, and every error path. (Output-file rules in general:
test_outputs.py; key sources: test_cipher_host.py.)"""
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from aes_oracle import OPENSSL, needs_openssl  # noqa: E402
from s2mc.cli.main import cli  # noqa: E402
from s2mc.common import outputs  # noqa: E402
from s2mc.workloads import cipher_host  # noqa: E402
from s2mc.workloads.cipher_host import files as host_files  # noqa: E402

KEYS = {128: "000102030405060708090a0b0c0d0e0f",
        192: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
        256: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"}
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfff0"  # low byte carries within the first blocks


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def write_random(path: Path, n: int, seed=0) -> bytes:
    data = random.Random(seed).randbytes(n)
    path.write_bytes(data)
    return data


def openssl_enc(src, dst, bits, key, iv, decrypt=False):
    cmd = [OPENSSL, "enc", f"-aes-{bits}-ctr", "-K", key, "-iv", iv, "-in", str(src), "-out", str(dst)]
    if decrypt:
        cmd.insert(2, "-d")
    subprocess.run(cmd, check=True, capture_output=True)


@needs_openssl
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("size", [0, 1, 4095, 70001])
def test_encrypt_matches_openssl_and_openssl_decrypts(tmp_path, bits, size):
    src = tmp_path / "plain.bin"
    data = write_random(src, size, seed=size)
    ours = tmp_path / "ours.enc"
    res = run("encrypt", "--in", str(src), "--out", str(ours), "--key", KEYS[bits], "--iv", IV,
              "--chunk-bytes", "4K", "--quiet")
    assert res.exit_code == 0, res.output
    theirs = tmp_path / "theirs.enc"
    openssl_enc(src, theirs, bits, KEYS[bits], IV)
    assert ours.read_bytes() == theirs.read_bytes()
    back = tmp_path / "back.bin"
    openssl_enc(ours, back, bits, KEYS[bits], IV, decrypt=True)
    assert back.read_bytes() == data


@needs_openssl
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_openssl_encrypts_and_we_decrypt(tmp_path, bits):
    src = tmp_path / "plain.bin"
    data = write_random(src, 3 * 4096 + 77, seed=bits)
    enc = tmp_path / "openssl.enc"
    openssl_enc(src, enc, bits, KEYS[bits], IV)
    out = tmp_path / "ours.dec"
    res = run("decrypt", "--in", str(enc), "--out", str(out), "--key", KEYS[bits], "--iv", IV,
              "--chunk-bytes", "1K", "--threads", "2", "--json")
    assert res.exit_code == 0, res.output
    assert out.read_bytes() == data
    assert '"bytes": %d' % len(data) in res.output


def test_streaming_many_chunks_all_impls(tmp_path):
    src = tmp_path / "p"
    data = write_random(src, 100_000 + 3)
    key, iv = bytes(range(32)), b"\xff" * 16  # the counter wraps after the first block
    want = native.ctr(key, iv, data, impl="ttable")
    for impl in native.supported_impls():
        dst = tmp_path / f"c-{impl}"
        n = native.encrypt_file(src, dst, key, iv, impl=impl, chunk_bytes=4096, threads=2)
        assert n == len(data) and dst.read_bytes() == want


def test_output_replaced_and_no_temp_left(tmp_path):
    src = tmp_path / "p"
    write_random(src, 1000)
    dst = tmp_path / "c"
    dst.write_bytes(b"old contents")
    assert run("encrypt", "--in", str(src), "--out", str(dst), "--key", KEYS[128], "--iv", IV, "-q").exit_code == 0
    assert dst.stat().st_size == 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "p"]


@pytest.mark.parametrize("path", ["fast", "stream"])
def test_failed_run_leaves_no_partial_output(tmp_path, monkeypatch, path):
    """A failure after some output was written: no output, and an older file is kept. `fast`: the
    regular-file path (native pread/pwrite threads, a segment at a time); `stream`: the pipeline."""
    src = tmp_path / "p"
    write_random(src, 50_000)
    dst = tmp_path / "c"
    calls = {"n": 0}
    if path == "fast":
        monkeypatch.setattr(host_files, "RANGE_SEGMENT_BYTES", 4096)
        lib = native._lib()

        class Failing:
            def __getattr__(self, name):
                return getattr(lib, name)

            def crypt_fds(self, *a, **kw):
                calls["n"] += 1
                if calls["n"] == 3:
                    raise RuntimeError("simulated failure")
                return lib.crypt_fds(*a, **kw)

        monkeypatch.setattr(native, "_lib", lambda: Failing())
    else:
        monkeypatch.setattr(host_files, "_regular_at_start", lambda f, writing: False)
        real_ctr = native.ctr

        def failing_ctr(*a, **kw):
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("simulated failure")
            return real_ctr(*a, **kw)

        monkeypatch.setattr(native, "ctr", failing_ctr)
    with pytest.raises(RuntimeError, match="simulated failure"):
        native.encrypt_file(src, dst, bytes(16), bytes(16), chunk_bytes=4096)
    assert calls["n"] == 3
    assert not dst.exists()
    assert [p.name for p in tmp_path.iterdir()] == ["p"]
    # An existing output survives a failed run untouched.
    dst.write_bytes(b"keep me")
    calls["n"] = 0
    with pytest.raises(RuntimeError):
        native.encrypt_file(src, dst, bytes(16), bytes(16), chunk_bytes=4096)
    assert dst.read_bytes() == b"keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "p"]


def test_write_failure_mid_stream(tmp_path):
    """A writer error stops the pipeline and surfaces as the error."""
    class Boom:
        def __init__(self):
            self.n = 0

        def write(self, view):
            self.n += 1
            if self.n == 2:
                raise OSError(28, "No space left on device")
            return len(view)

    import io
    fin = io.BytesIO(bytes(100_000))
    with pytest.raises(OSError, match="No space left"):
        cipher_host.stream_transform(fin, Boom(), lambda v, off: None, chunk_bytes=1024)


@pytest.mark.parametrize("args,message", [
    (["--key", "00" * 15], "--key: 30 hex digits"),
    (["--key", "zz" * 16], "--key: not a hex string"),
    (["--key", ""], "--key: empty hex string"),
    (["--iv", "00" * 8], "--iv: 16 hex digits"),
    (["--iv", "0g" * 16], "--iv: not a hex string"),
    # Values the option types refuse while parsing: usage errors (exit 2) naming the option.
    (["--threads", "0"], "'--threads': '0' is out of range (1..1024)"),
    (["--chunk-bytes", "100"], "'--chunk-bytes': '100' is not a multiple of 16 bytes"),
    (["--chunk-bytes", "lots"], "'--chunk-bytes': 'lots' is not a size"),
    (["--impl", "rot13"], "'--impl': unknown value 'rot13'"),
])
def test_bad_options(tmp_path, args, message):
    src = tmp_path / "p"
    src.write_bytes(b"hello")
    base = {"--in": str(src), "--out": str(tmp_path / "c"), "--key": KEYS[128], "--iv": IV}
    base.update(dict(zip(args[::2], args[1::2])))
    res = run("encrypt", *[x for kv in base.items() for x in kv])
    usage = args[0] in ("--threads", "--chunk-bytes", "--impl")
    assert res.exit_code == (2 if usage else 1)
    prefix = "s2mc encrypt: error: " if usage else "s2mc: error: "
    assert res.output.startswith(prefix) and message in res.output, res.output
    assert res.output.count("\n") == 1
    assert not (tmp_path / "c").exists()


def test_missing_input(tmp_path):
    res = run("encrypt", "--in", str(tmp_path / "nope"), "--out", str(tmp_path / "c"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 1 and "input file does not exist" in res.output
    assert not (tmp_path / "c").exists()


def test_input_is_a_directory(tmp_path):
    res = run("decrypt", "--in", str(tmp_path), "--out", str(tmp_path / "c"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 1 and "input is a directory" in res.output


def test_unwritable_output_missing_folder(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(b"x")
    res = run("encrypt", "--in", str(src), "--out", str(tmp_path / "no" / "c"), "--key", KEYS[128], "--iv", IV)
    # Checked while parsing --out: a usage error, before any work
    assert res.exit_code == 2 and "cannot write encrypted output" in res.output and "does not exist" in res.output


def test_unwritable_output_is_directory(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(b"x")
    (tmp_path / "d").mkdir()
    res = run("encrypt", "--in", str(src), "--out", str(tmp_path / "d"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 2 and res.output.endswith("d: is a directory; name an output file, not a folder\n")


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root can write anywhere")
def test_unwritable_output_permission(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(b"x")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        res = run("encrypt", "--in", str(src), "--out", str(ro / "c"), "--key", KEYS[128], "--iv", IV)
        assert res.exit_code == 1 and "cannot write output" in res.output
    finally:
        ro.chmod(0o700)


def test_unwritable_output_readonly_folder_via_fake(tmp_path, monkeypatch):
    """The temp-file creation failing (EACCES/EROFS) becomes one clear line."""
    src = tmp_path / "p"
    src.write_bytes(b"x")

    def deny(*a, **kw):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(outputs.tempfile, "mkstemp", deny)
    res = run("encrypt", "--in", str(src), "--out", str(tmp_path / "c"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 1
    assert res.output == f"s2mc: error: {tmp_path / 'c'}: cannot write output (Permission denied)\n"


def test_same_path_for_input_and_output(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(b"precious")
    # refused while the options are parsed (exit 2), before anything is read or written
    res = run("encrypt", "--in", str(src), "--out", str(src), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 2 and "--out is the same file as the input --in" in res.output
    # Through another name (a hard link or ./ path) too.
    os.link(src, tmp_path / "q")
    res = run("encrypt", "--in", str(src), "--out", str(tmp_path / "q"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 2 and "same file" in res.output
    assert src.read_bytes() == b"precious"
    res = run("encrypt", "--in", str(src), "--out", str(tmp_path / "." / "p"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 2 and "same file" in res.output
    assert src.read_bytes() == b"precious"


def _gpu_status(monkeypatch, present: bool, reason: str = ""):
    import s2mc.gpu as gpu
    monkeypatch.setattr(gpu, "status", lambda: {"built": present, "gpu_present": present,
                                                "devices": ["fake"] if present else [], "reason": reason})
    return gpu


@pytest.mark.parametrize("reason", ["CUDA backend not built (nvcc was not found when s2mc was built)",
                                    "no GPU: no NVIDIA driver found"])
def test_cuda_backend_unavailable(tmp_path, monkeypatch, reason):
    src = tmp_path / "p"
    src.write_bytes(b"x" * 100)
    _gpu_status(monkeypatch, False, reason)
    res = run("encrypt", "--backend", "cuda", "--in", str(src), "--out", str(tmp_path / "c"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 1 and res.output == f"s2mc: error: --backend cuda: {reason}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p"]


def test_cuda_backend_gets_the_arguments(tmp_path, monkeypatch):
    """The CLI, not the native backend, hands --backend cuda to s2mc.gpu.encrypt_file."""
    src = tmp_path / "p"
    data = write_random(src, 5000)
    gpu = _gpu_status(monkeypatch, True)
    seen = {}

    def fake(s, d, key, iv, **kw):
        seen.update(args=(s, d, key, iv), **kw)
        Path(d).write_bytes(native.ctr(key, iv, Path(s).read_bytes()))
        return len(data)

    monkeypatch.setattr(gpu, "encrypt_file", fake)
    dst = tmp_path / "c"
    res = run("encrypt", "--backend", "cuda", "--in", str(src), "--out", str(dst), "--key", KEYS[128], "--iv", IV,
              "--chunk-bytes", "1M", "--json")
    assert res.exit_code == 0, res.output
    assert seen["args"] == (str(src), str(dst), bytes.fromhex(KEYS[128]), bytes.fromhex(IV))
    assert seen["piece_bytes"] == 1 << 20
    assert '"backend": "cuda"' in res.output and '"bytes": 5000' in res.output


def test_installed_cli_subprocess(tmp_path):
    """The real `s2mc` entry point: exit status and one stderr line."""
    exe = Path(sys.executable).with_name("s2mc")
    if not exe.exists():
        pytest.skip("s2mc entry point not installed next to the interpreter")
    src = tmp_path / "p"
    src.write_bytes(b"abc")
    r = subprocess.run([str(exe), "encrypt", "--in", str(src), "--out", str(tmp_path / "c"), "--key", "xyz",
                        "--iv", IV], capture_output=True, text=True)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.strip().startswith("s2mc: error: --key")
