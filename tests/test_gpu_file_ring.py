"""The CUDA backend's file path (FileCipher: pinned ring, reader and writer threads, pieces over
stream lanes) run on the CPU through the kernel emulator, checked against `cryptography` and the
`openssl enc` binary. No GPU needed, only the built extension.
"""
from __future__ import annotations

import os
import subprocess
import threading

import pytest

from aes_oracle import OPENSSL, camellia_ref, needs_openssl, ref, rnd
from s2mc import gpu
from s2mc.common.errors import S2mcError

pytestmark = pytest.mark.skipif(not gpu.status()["built"], reason="CUDA backend not built")

# Small pieces and launches so a few KB make many pieces, wrap the ring and run every lane.
EMU = dict(emulated=True, max_grid=2)
PIECE = 1024


def _file(tmp_path, data: bytes, name: str = "in"):
    p = tmp_path / name
    p.write_bytes(data)
    return p


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, PIECE - 1, PIECE, PIECE + 1, 7 * PIECE + 5])
@pytest.mark.parametrize("slots,streams", [(1, 1), (3, 2), (5, 4)])
def test_sizes_slots_streams(tmp_path, n, slots, streams):
    key, iv = rnd(16, n + 1), rnd(16, n + 2)
    data = rnd(n, n + 3)
    src, dst = _file(tmp_path, data), tmp_path / "out"
    assert gpu.encrypt_file(src, dst, key, iv, piece_bytes=PIECE, slots=slots, streams=streams,
                            kernel="coarse", **EMU) == n
    assert dst.read_bytes() == ref("ctr", key, iv, data)


@pytest.mark.parametrize("iv_hex", ["0000000000000000fffffffffffffff0",   # low half carries
                                    "fffffffffffffffffffffffffffffff8"])  # wraps mod 2^128
@pytest.mark.parametrize("kernel", ["coarse", "extended", "optimised"])
def test_counter_carries_across_pieces_and_segments(tmp_path, monkeypatch, iv_hex, kernel):
    """Pieces of 64 bytes over three range calls: the counter of every piece is iv + offset/16,
    carried into the high half and wrapped as OpenSSL does; progress gets one total per range."""
    monkeypatch.setattr(gpu, "FILE_SEGMENT_BYTES", 256)
    key, iv = rnd(32, 7), bytes.fromhex(iv_hex)
    data = rnd(700, 8)
    src, dst = _file(tmp_path, data), tmp_path / "out"
    seen: list[int] = []
    gpu.encrypt_file(src, dst, key, iv, piece_bytes=64, slots=3, streams=2, kernel=kernel,
                     progress=seen.append, **EMU)
    assert seen == [256, 512, 700]
    assert dst.read_bytes() == ref("ctr", key, iv, data)


@pytest.mark.parametrize("key_len", [16, 24, 32])
@pytest.mark.parametrize("kernel", ["coarse", "optimised"])
def test_camellia(tmp_path, key_len, kernel):
    key, iv = rnd(key_len, 11), bytes.fromhex("00000000000000fffffffffffffffffe")
    data = rnd(3 * PIECE + 9, 12)
    src, dst = _file(tmp_path, data), tmp_path / "out"
    gpu.encrypt_file(src, dst, key, iv, piece_bytes=PIECE, slots=2, streams=2, kernel=kernel,
                     cipher="camellia", **EMU)
    assert dst.read_bytes() == camellia_ref("ctr", key, iv, data)


@needs_openssl
@pytest.mark.parametrize("cipher", ["aes", "camellia"])
def test_matches_openssl_enc(tmp_path, cipher):
    key, iv = rnd(32, 21), rnd(16, 22)
    data = rnd(5 * PIECE + 3, 23)
    src, dst = _file(tmp_path, data), tmp_path / "out"
    gpu.encrypt_file(src, dst, key, iv, piece_bytes=PIECE, slots=4, cipher=cipher, **EMU)
    want = subprocess.run([OPENSSL, "enc", f"-{cipher}-256-ctr", "-K", key.hex(), "-iv", iv.hex(),
                           "-in", str(src)], capture_output=True, check=True).stdout
    assert dst.read_bytes() == want


def test_fifo_output_streams_through_the_same_buffers(tmp_path):
    """A FIFO is not a regular file: the ordered pipeline copies each chunk into the pinned ring
    (crypt_buffer) and back in place; the bytes are the same."""
    key, iv = rnd(16, 31), bytes.fromhex("0000000000000000ffffffffffffffff")
    data = rnd(4 * PIECE + 7, 32)
    src, fifo = _file(tmp_path, data), tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    gpu.encrypt_file(src, fifo, key, iv, piece_bytes=PIECE, slots=2, **EMU)
    reader.join(timeout=30)
    assert got == [ref("ctr", key, iv, data)]


def test_crypt_buffer_pieces_wrap_the_ring():
    ext = gpu._load()
    key, iv = rnd(16, 41), rnd(16, 42)
    data = bytearray(rnd(5 * 64 + 1, 43))
    fc = ext.FileCipher(key, iv, slot_bytes=64, slots=2, streams=3, emulated=True, max_grid=2)
    assert (fc.slots, fc.slot_bytes, fc.streams) == (2, 64, 2)   # no more lanes than slots
    want = ref("ctr", key, gpu.counter_add(iv, 4), bytes(data))
    fc.crypt_buffer(data, 64)   # the stream position of data[0]: counter iv + 4
    assert bytes(data) == want


def test_read_write_and_eof_errors_name_the_stage(tmp_path):
    import errno
    ext = gpu._load()
    fc = ext.FileCipher(bytes(16), bytes(16), slot_bytes=64, slots=2, emulated=True)
    src = _file(tmp_path, rnd(300, 51))
    _file(tmp_path, b"x", "ro")
    with open(src, "rb") as fin, open(tmp_path / "ro", "rb") as fro:
        written, err, stage, _, _ = fc.crypt_fds(fin.fileno(), fro.fileno(), 0, 300)
    assert (stage, err, written) == ("write", errno.EBADF, 0)   # the output was opened read-only
    wr = os.open(src, os.O_WRONLY)
    try:
        with open(tmp_path / "out", "wb") as fout:
            _, err, stage, _, first = fc.crypt_fds(wr, fout.fileno(), 0, 300)
    finally:
        os.close(wr)
    assert (stage, err, first) == ("read", errno.EBADF, 0)      # the input was opened write-only
    with open(src, "rb") as fin, open(tmp_path / "out", "wb") as fout:
        written, _, stage, _, _ = fc.crypt_fds(fin.fileno(), fout.fileno(), 0, 400)   # 100 past the end
    assert stage == "eof" and written <= 300


def test_the_ring_says_when_its_first_piece_was_in(tmp_path):
    """crypt_fds's fifth value: the time (CLOCK_MONOTONIC, the clock of `s2mc encrypt --timings`)
    the reader had the first piece of the range, between the call's start and its end."""
    import time
    ext = gpu._load()
    fc = ext.FileCipher(bytes(16), bytes(16), slot_bytes=64, slots=2, emulated=True)
    src = _file(tmp_path, rnd(1000, 52))
    with open(src, "rb") as fin, open(tmp_path / "out", "wb") as fout:
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        written, err, stage, _, first = fc.crypt_fds(fin.fileno(), fout.fileno(), 0, 1000)
        t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    assert (written, err, stage) == (1000, 0, "") and t0 <= first <= t1


def test_bad_arguments_are_one_line(tmp_path):
    src = _file(tmp_path, b"abc")
    with pytest.raises(S2mcError, match="piece size must be a positive multiple of 16, not 100"):
        gpu.encrypt_file(src, tmp_path / "y", bytes(16), bytes(16), piece_bytes=100, **EMU)
    with pytest.raises(S2mcError, match="slots must be in 1..256, not 0"):
        gpu.encrypt_file(src, tmp_path / "y", bytes(16), bytes(16), slots=0, **EMU)
    with pytest.raises(S2mcError, match="streams must be in 1..64, not 0"):
        gpu.encrypt_file(src, tmp_path / "y", bytes(16), bytes(16), streams=0, **EMU)
    with pytest.raises(S2mcError, match="unknown Camellia kernel 'extended'"):
        gpu.encrypt_file(src, tmp_path / "y", bytes(16), bytes(16), kernel="extended", cipher="camellia", **EMU)
    with pytest.raises(S2mcError, match="offset must be a multiple of 16"):
        gpu._call(gpu._load().FileCipher(bytes(16), bytes(16), emulated=True, slot_bytes=64).crypt_buffer,
                  bytearray(16), 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]   # nothing written


def test_ring_slots_stay_within_an_eighth_of_memory(monkeypatch):
    from s2mc.workloads.cipher_host import files
    monkeypatch.setattr(files, "host_memory", lambda: 64 << 30)            # 8 GiB for the ring
    assert files.ring_slots(8, 16 << 20) == 8
    assert files.ring_slots(8, 1 << 30) == 8
    assert files.ring_slots(8, 3 << 30) == 2                                # 8 GiB // 3 GiB
    monkeypatch.setattr(files, "host_memory", lambda: 256 << 20)           # the 128 MiB floor
    assert files.ring_slots(8, 16 << 20) == 8 and files.ring_slots(8, 64 << 20) == 2
    assert files.ring_slots(8, 1 << 30) == 1


@pytest.mark.parametrize("stage,err,needle", [
    ("device", 0, r"^gpu: CUDA: cudaMemcpyAsync H2D: an illegal memory access was encountered$"),
    ("read", 5, r"/in: cannot read input \(Input/output error\)$"),
    ("write", 28, r"/out: cannot write output \(No space left on device\)$"),
    ("eof", 0, r"/in: input file shrank while it was being read$"),
])
def test_ring_failures_are_one_line_and_leave_no_output(tmp_path, monkeypatch, stage, err, needle):
    """Each way the ring can end badly (its stage and errno) becomes one line naming the file or the
    GPU's error, and the atomic output leaves nothing behind."""
    real = gpu._load()

    class Ring:
        def __init__(self, *a, **kw):
            self._fc = real.FileCipher(*a, **kw)

        def crypt_fds(self, *a):
            self._fc.crypt_fds(*a)
            return 0, err, stage, "CUDA: cudaMemcpyAsync H2D: an illegal memory access was encountered"

    class Ext:
        FileCipher = Ring

        def __getattr__(self, name):
            return getattr(real, name)

    monkeypatch.setattr(gpu, "_load", lambda: Ext())
    src = _file(tmp_path, rnd(3000, 61))
    with pytest.raises(S2mcError, match=needle):
        gpu.encrypt_file(src, tmp_path / "out", bytes(16), bytes(16), piece_bytes=PIECE, **EMU)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
