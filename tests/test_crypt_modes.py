"""`s2mc encrypt` / `s2mc decrypt`: CTR and ECB against independent oracles (the `openssl`
binary and Python `cryptography`), on the regular-file fast path (native threads, pread/mmap + pwrite)
and on the ordered pipeline (stdin, FIFOs), across sizes around the chunk and segment boundaries,
odd sizes, the empty file and 1..3 threads; ECB's length rule; --json and --records."""
import errno
import json
import os
import random
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from aes_oracle import OPENSSL, needs_openssl  # noqa: E402
from s2mc.cli.main import cli  # noqa: E402
from s2mc.workloads.cipher_host import files as host_files  # noqa: E402
from s2mc.workloads.native.files import available_cpus  # noqa: E402

KEYS = {128: "2b7e151628aed2a6abf7158809cf4f3c",
        192: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
        256: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4"}
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfff0"
CHUNK = 4096   # small chunks and segments, so that small files cross many boundaries


def rnd(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


def run(*args, input=None):
    return CliRunner().invoke(cli, [str(a) for a in args], input=input, catch_exceptions=False)


def openssl(mode: str, bits: int, data: bytes, decrypt=False) -> bytes:
    cmd = [OPENSSL, "enc", f"-aes-{bits}-{mode}", "-K", KEYS[bits]]
    cmd += ["-iv", IV] if mode == "ctr" else ["-nopad"]
    if decrypt:
        cmd.insert(2, "-d")
    return subprocess.run(cmd, input=data, check=True, capture_output=True).stdout


def oracle(mode: str, bits: int, data: bytes, decrypt=False) -> bytes:
    """Python `cryptography` (falls back to the openssl binary where it is not installed)."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        return openssl(mode, bits, data, decrypt)
    m = modes.CTR(bytes.fromhex(IV)) if mode == "ctr" else modes.ECB()
    c = Cipher(algorithms.AES(bytes.fromhex(KEYS[bits])), m)
    x = c.decryptor() if decrypt else c.encryptor()
    return x.update(data) + x.finalize()


@pytest.fixture
def small_segments(monkeypatch):
    monkeypatch.setattr(host_files, "RANGE_SEGMENT_BYTES", 4 * CHUNK)


SIZES = [0, 16, 4096, 4096 * 4 - 16, 4096 * 4, 4096 * 4 + 16, 4096 * 9 + 48, 70_000 * 16]
ODD = [1, 15, 17, 4095, 4097, 4096 * 4 + 1, 100_003]


@needs_openssl
@pytest.mark.parametrize("mode,size", [("ctr", n) for n in SIZES + ODD] + [("ecb", n) for n in SIZES])
def test_fast_path_equals_openssl_both_ways(tmp_path, small_segments, mode, size):
    # ECB takes whole blocks only: its odd sizes are the error cases tested below
    data = rnd(size, size)
    src, enc, back = tmp_path / "p", tmp_path / "e", tmp_path / "d"
    src.write_bytes(data)
    bits = (128, 192, 256)[size % 3]
    iv = ["--iv", IV] if mode == "ctr" else []
    threads = 1 + size % 3
    r = run("encrypt", "--in", src, "--out", enc, "--key", KEYS[bits], *iv, "--mode", mode,
            "--chunk-bytes", CHUNK, "--threads", threads, "-q")
    assert r.exit_code == 0, r.output
    assert enc.read_bytes() == openssl(mode, bits, data)
    r = run("decrypt", "--in", enc, "--out", back, "--key", KEYS[bits], *iv, "--mode", mode,
            "--chunk-bytes", CHUNK, "--threads", threads, "-q")
    assert r.exit_code == 0, r.output
    assert back.read_bytes() == data


@pytest.mark.parametrize("mode", ["ctr", "ecb"])
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_threads_and_chunks_against_cryptography(tmp_path, small_segments, mode, threads):
    size = 37 * CHUNK + (0 if mode == "ecb" else 5)
    data = rnd(size, threads)
    src = tmp_path / "p"
    src.write_bytes(data)
    key = bytes.fromhex(KEYS[256])
    iv = bytes.fromhex(IV) if mode == "ctr" else None
    for chunk in (16, 4096, 3 * 4096 + 16, 1 << 20):
        out = tmp_path / f"c{chunk}"
        n = native.encrypt_file(src, out, key, iv, mode=mode, threads=threads, chunk_bytes=chunk)
        assert n == size and out.read_bytes() == oracle(mode, 256, data)
        back = tmp_path / f"b{chunk}"
        native.decrypt_file(out, back, key, iv, mode=mode, threads=threads, chunk_bytes=chunk)
        assert back.read_bytes() == data


@needs_openssl
@pytest.mark.parametrize("mode", ["ctr", "ecb"])
def test_stdin_pipeline_equals_openssl(tmp_path, mode):
    """stdin and stdout: the ordered pipeline, not the regular-file path."""
    data = rnd(5 * CHUNK + (0 if mode == "ecb" else 3), 7)
    iv = ["--iv", IV] if mode == "ctr" else []
    r = subprocess.run([_exe(), "encrypt", "--in", "/dev/stdin", "--out", "-", "--key", KEYS[128], *iv,
                        "--mode", mode, "--chunk-bytes", str(CHUNK), "-q"], input=data, capture_output=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == openssl(mode, 128, data)


def _exe() -> str:
    exe = shutil.which("s2mc", path=os.path.dirname(os.sys.executable))
    if exe is None:
        pytest.skip("s2mc entry point not installed next to the interpreter")
    return exe


@needs_openssl
def test_fifo_input_pipeline(tmp_path):
    data = rnd(9 * CHUNK + 32, 8)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    import threading

    def feed():
        with open(fifo, "wb") as f:
            f.write(data)

    t = threading.Thread(target=feed)
    t.start()
    n = native.encrypt_file(fifo, tmp_path / "o", bytes.fromhex(KEYS[128]), None, mode="ecb", chunk_bytes=CHUNK)
    t.join()
    assert n == len(data) and (tmp_path / "o").read_bytes() == openssl("ecb", 128, data)


@pytest.mark.parametrize("size", [1, 15, 17, 4097])
def test_ecb_length_not_a_multiple_of_16_is_one_line_and_leaves_nothing(tmp_path, size):
    src, out = tmp_path / "p", tmp_path / "o"
    src.write_bytes(rnd(size, 1))
    out.write_bytes(b"older")
    r = run("encrypt", "--in", src, "--out", out, "--key", KEYS[128], "--mode", "ecb")
    assert r.exit_code == 1
    assert r.output == (f"s2mc: error: {src}: input length {size} bytes is not a multiple of 16 "
                        "(ECB has no padding; pad the input or use --mode ctr)\n")
    assert out.read_bytes() == b"older" and sorted(p.name for p in tmp_path.iterdir()) == ["o", "p"]


def test_ecb_odd_length_through_the_pipeline_leaves_nothing(tmp_path):
    fifo, out = tmp_path / "f", tmp_path / "o"
    os.mkfifo(fifo)
    import threading
    t = threading.Thread(target=lambda: open(fifo, "wb").write(rnd(3 * CHUNK + 5, 2)))
    t.start()
    r = run("encrypt", "--in", fifo, "--out", out, "--key", KEYS[128], "--mode", "ecb", "--chunk-bytes", CHUNK)
    t.join()
    assert r.exit_code == 1 and r.output.count("\n") == 1 and "not a multiple of 16" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f"]


@pytest.mark.parametrize("args,message", [
    (["--mode", "ecb", "--iv", IV], "s2mc encrypt: error: --mode ecb takes no IV (--iv, --iv-file, --iv-env)"),
    (["--mode", "cbc", "--iv", IV], "'--mode': 'cbc' is not one of 'ctr', 'ecb'"),
    (["--mode", "ecb", "--backend", "cuda"], None),
])
def test_mode_option_errors(tmp_path, args, message):
    src = tmp_path / "p"
    src.write_bytes(bytes(32))
    r = run("encrypt", "--in", src, "--out", tmp_path / "o", "--key", KEYS[128], *args)
    assert r.exit_code in (1, 2) and r.output.count("\n") == 1, r.output
    if message:
        assert message in r.output
    else:   # cuda: either no GPU here or CTR only; one line either way
        assert r.output.startswith("s2mc: error: --backend cuda")
    assert not (tmp_path / "o").exists()


def test_json_summary_and_default_threads(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(rnd(1000, 3))
    r = run("encrypt", "--in", src, "--out", tmp_path / "o", "--key", KEYS[128], "--iv", IV, "--json")
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["bytes"] == 1000 and d["mode"] == "ctr" and d["threads"] == available_cpus()
    assert d["engine"] == native.best_impl() and d["key_bits"] == 128


def test_records_option_writes_records(tmp_path):
    from s2mc.analysis import records
    src = tmp_path / "p"
    src.write_bytes(rnd(4096, 4))
    r = run("encrypt", "--in", src, "--out", tmp_path / "o", "--key", KEYS[128], "--mode", "ecb",
            "--threads", "2", "--records", tmp_path / "r.csv", "-q")
    assert r.exit_code == 0, r.output
    df = records.load([str(tmp_path / "r.csv")])
    assert set(df["metric"]) >= {"seconds", "bytes_per_second"}
    row = df[df["metric"] == "seconds"].iloc[0]
    assert row["workload"] == "encrypt-ecb" and row["bytes"] == 4096 and row["cores"] == 2
    assert row["experiment"] == "files" and row["source"] == "native"
    assert (tmp_path / "r.manifest.json").exists()


def test_records_and_out_cannot_be_the_same_file(tmp_path):
    src = tmp_path / "p"
    src.write_bytes(bytes(16))
    r = run("encrypt", "--in", src, "--out", tmp_path / "o.csv", "--key", KEYS[128], "--mode", "ecb",
            "--records", tmp_path / "o.csv")
    assert r.exit_code == 2 and "--records is the same file as the output --out" in r.output


def test_native_range_reports_a_short_input(tmp_path):
    """The regular-file path's primitive: an input shorter than the range asked for is 'eof', not a crash."""
    src, out = tmp_path / "p", tmp_path / "o"
    src.write_bytes(bytes(8192))
    with open(src, "rb") as fi, open(out, "wb") as fo:
        n, err, stage = native._lib().crypt_fds(bytes(16), bytes(16), "ctr", False, fi.fileno(), fo.fileno(),
                                                0, 8192 + 4096 * 3, "auto", 2, 4096)
    assert (n, stage) == (0, "eof")
    with open(src, "rb") as fi, open(out, "wb") as fo:
        assert native._lib().crypt_fds(bytes(16), b"", "ecb", False, fi.fileno(), fo.fileno(), 0, 8192,
                                       "auto", 2, 4096) == (8192, 0, "")
    assert out.read_bytes() == oracle_ecb_zero_key(bytes(8192))


def oracle_ecb_zero_key(data: bytes) -> bytes:
    if OPENSSL is None:
        pytest.skip("no openssl")
    return subprocess.run([OPENSSL, "enc", "-aes-128-ecb", "-nopad", "-K", "00" * 16], input=data,
                          check=True, capture_output=True).stdout


def test_append_stdout_is_not_the_fast_path(tmp_path):
    """`>> file` (O_APPEND) must append, which pwrite at offsets would not do."""
    src, out = tmp_path / "p", tmp_path / "o"
    data = rnd(3 * CHUNK + 7, 5)
    src.write_bytes(data)
    out.write_bytes(b"head")
    with open(out, "ab") as f:
        subprocess.run([_exe(), "encrypt", "--in", str(src), "--out", "-", "--key", KEYS[128], "--iv", IV, "-q"],
                       stdout=f, check=True)
    assert out.read_bytes() == b"head" + oracle("ctr", 128, data)


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGINT"])
def test_signal_during_a_large_regular_file_encrypt_leaves_no_part_file(sig):
    """The regular-file path: the signal is handled between 64 MiB segments; the .part file goes."""
    import signal
    import tempfile
    import time
    if not os.path.isdir("/dev/shm"):
        pytest.skip("needs /dev/shm for a fast large file")
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="s2mc-test-") as d:
        src, out = os.path.join(d, "in"), os.path.join(d, "out")
        with open(src, "wb") as f:
            f.truncate(768 << 20)          # a sparse file: reads as zeros, costs no memory until read
        with open(out, "wb") as f:
            f.write(b"previous ciphertext")
        child = subprocess.Popen([_exe(), "encrypt", "--in", src, "--out", out, "--key", KEYS[128], "--iv", IV,
                                  "-q", "--threads", "1"], stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 30
            while not any(n.endswith(".part") and os.path.getsize(os.path.join(d, n)) > 0
                          for n in os.listdir(d)):
                assert time.monotonic() < deadline and child.poll() is None, "no .part file appeared"
                time.sleep(0.005)
            child.send_signal(getattr(signal, sig))
            _, err = child.communicate(timeout=30)
        finally:
            child.kill()
        if sig == "SIGINT":
            assert child.returncode == 130 and err == "s2mc: interrupted\n"
        else:
            assert child.returncode == -signal.SIGTERM
        assert sorted(os.listdir(d)) == ["in", "out"]
        with open(out, "rb") as f:
            assert f.read() == b"previous ciphertext"


@pytest.mark.parametrize("result,message", [
    ((0, errno.EIO, "read"), "p: cannot read input (Input/output error)"),
    ((0, errno.ENOSPC, "write"), "o: cannot write output (No space left on device)"),
    ((0, errno.ENOMEM, "alloc"), "p: cannot allocate a 1048576-byte buffer per thread (Cannot allocate memory)"),
    ((0, 0, "eof"), "p: input file shrank while it was being read"),
])
def test_native_range_failures_are_one_line_errors(tmp_path, monkeypatch, result, message):
    """Each (errno, stage) the regular-file primitive reports becomes an error naming the file, no output."""
    src, out = tmp_path / "p", tmp_path / "o"
    src.write_bytes(bytes(4096))
    lib = native._lib()

    class Failing:
        def __getattr__(self, name):
            return getattr(lib, name)

        def crypt_fds(self, *a, **kw):
            return result

    monkeypatch.setattr(native, "_lib", lambda: Failing())
    r = run("encrypt", "--in", src, "--out", out, "--key", KEYS[128], "--iv", "00" * 16)
    assert r.exit_code == 1 and r.output == f"s2mc: error: {tmp_path}/{message}\n", r.output
    assert not out.exists()
