"""The OpenCL backend's file path (FileRing: mapped host buffers, reader and writer threads, pieces
over several queues) run for real on the OpenCL device here (PoCL on a CPU), checked against
`cryptography` (OpenSSL underneath)."""
from __future__ import annotations

import errno
import os
import threading
import time

import pytest

from aes_oracle import Camellia, ctr_from_ecb, ecb_ref, rnd
from s2mc.common.errors import S2mcError
from s2mc.gpu import opencl

needs_device = pytest.mark.skipif(not opencl.available(), reason=f"no OpenCL device: {opencl.status()['reason']}")
pytestmark = needs_device

PIECE = 4096


def _ref(cipher: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import algorithms
    return ctr_from_ecb(algorithms.AES if cipher == "aes" else Camellia, key, iv, data)


@pytest.mark.parametrize("n", [0, 1, 17, PIECE, PIECE + 1, 9 * PIECE + 5])
@pytest.mark.parametrize("slots,queues", [(1, 1), (3, 2)])
def test_sizes_slots_queues(tmp_path, n, slots, queues):
    key, iv = rnd(16, n + 1), rnd(16, n + 2)
    data = rnd(n, n + 3)
    (tmp_path / "in").write_bytes(data)
    assert opencl.encrypt_file(tmp_path / "in", tmp_path / "out", key, iv, segment=PIECE, slots=slots,
                               queues=queues) == n
    assert (tmp_path / "out").read_bytes() == _ref("aes", key, iv, data)


@pytest.mark.parametrize("cipher", ["aes", "camellia"])
@pytest.mark.parametrize("iv_hex", ["0000000000000000ffffffffffffff00", "ffffffffffffffffffffffffffffff80"])
def test_counter_carries_across_pieces_and_ranges(tmp_path, monkeypatch, cipher, iv_hex):
    monkeypatch.setattr(opencl, "FILE_SEGMENT_BYTES", 4 * PIECE)
    key, iv = rnd(32, 5), bytes.fromhex(iv_hex)
    data = rnd(10 * PIECE + 9, 6)
    (tmp_path / "in").write_bytes(data)
    seen: list[int] = []
    opencl.encrypt_file(tmp_path / "in", tmp_path / "out", key, iv, cipher=cipher, segment=PIECE, slots=3,
                        progress=seen.append)
    assert seen == [4 * PIECE, 8 * PIECE, len(data)]
    assert (tmp_path / "out").read_bytes() == _ref(cipher, key, iv, data)


@pytest.mark.parametrize("cipher", ["aes", "camellia"])
def test_ecb_both_ways(tmp_path, cipher):
    from cryptography.hazmat.primitives.ciphers import algorithms
    alg = algorithms.AES if cipher == "aes" else Camellia
    key = rnd(24, 7)
    data = rnd(5 * PIECE + 48, 8)
    (tmp_path / "in").write_bytes(data)
    opencl.encrypt_file(tmp_path / "in", tmp_path / "enc", key, None, cipher=cipher, mode="ecb", segment=PIECE)
    assert (tmp_path / "enc").read_bytes() == ecb_ref(alg, key, data)
    opencl.encrypt_file(tmp_path / "enc", tmp_path / "back", key, None, decrypt=True, cipher=cipher, mode="ecb",
                        segment=PIECE)
    assert (tmp_path / "back").read_bytes() == data


def test_fifo_output_goes_through_the_same_buffers(tmp_path):
    key, iv = rnd(16, 11), bytes.fromhex("0000000000000000fffffffffffffff0")
    data = rnd(6 * PIECE + 3, 12)
    (tmp_path / "in").write_bytes(data)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    opencl.encrypt_file(tmp_path / "in", fifo, key, iv, segment=PIECE, piece_bytes=2 * PIECE, slots=2)
    reader.join(timeout=30)
    assert got == [_ref("aes", key, iv, data)]


def test_read_write_and_eof_errors_name_the_stage(tmp_path):
    ring = opencl._require().FileRing(bytes(16), bytes(16), slot_bytes=PIECE, slots=2)
    assert (ring.slots, ring.slot_bytes, ring.queues) == (2, PIECE, 2)
    src = tmp_path / "in"
    src.write_bytes(rnd(3 * PIECE, 13))
    (tmp_path / "ro").write_bytes(b"x")
    with open(src, "rb") as fin, open(tmp_path / "ro", "rb") as fro:
        written, err, stage, _, _ = ring.crypt_fds(fin.fileno(), fro.fileno(), 0, 3 * PIECE)
    assert (stage, err, written) == ("write", errno.EBADF, 0)
    wr = os.open(src, os.O_WRONLY)
    try:
        with open(tmp_path / "out", "wb") as fout:
            _, err, stage, _, first = ring.crypt_fds(wr, fout.fileno(), 0, PIECE)
    finally:
        os.close(wr)
    assert (stage, err, first) == ("read", errno.EBADF, 0)     # no piece was read
    with open(src, "rb") as fin, open(tmp_path / "out", "wb") as fout:
        t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
        _, _, stage, _, first = ring.crypt_fds(fin.fileno(), fout.fileno(), 0, 4 * PIECE)
        t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
    # the first piece was in (the time on the clock of `s2mc encrypt --timings`) before the end
    assert stage == "eof" and t0 <= first <= t1


def test_bad_arguments_are_one_line(tmp_path):
    (tmp_path / "in").write_bytes(b"abc")
    for kwargs, needle in [(dict(slots=0), "slots must be in 1..256, not 0"),
                           (dict(queues=65), "queues must be in 1..64, not 65"),
                           (dict(piece_bytes=100, segment=0), "piece_bytes must be a positive multiple of 16")]:
        with pytest.raises(S2mcError, match=needle):
            opencl.encrypt_file(tmp_path / "in", tmp_path / "out", bytes(16), bytes(16), **kwargs)
    with pytest.raises(S2mcError, match="opencl: stream offset must be a multiple of 16"):
        opencl._call(opencl._require().FileRing(bytes(16), bytes(16), slot_bytes=64).crypt_buffer, bytearray(16), 8)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]


@pytest.mark.parametrize("stage,err,needle", [
    ("device", 0, r"^opencl: running a piece failed \(CL_OUT_OF_RESOURCES, -5\)$"),
    ("read", 5, r"/in: cannot read input \(Input/output error\)$"),
    ("write", 28, r"/out: cannot write output \(No space left on device\)$"),
    ("eof", 0, r"/in: input file shrank while it was being read$"),
])
def test_ring_failures_are_one_line_and_leave_no_output(tmp_path, monkeypatch, stage, err, needle):
    real = opencl._require()

    class Ring:
        def __init__(self, *a, **kw):
            self._r = real.FileRing(*a, **kw)

        def crypt_fds(self, *a):
            self._r.crypt_fds(*a)
            return 0, err, stage, "running a piece failed (CL_OUT_OF_RESOURCES, -5)"

    class Ext:
        FileRing = Ring

        def __getattr__(self, name):
            return getattr(real, name)

    monkeypatch.setattr(opencl, "_require", lambda: Ext())
    (tmp_path / "in").write_bytes(rnd(3000, 62))
    with pytest.raises(S2mcError, match=needle):
        opencl.encrypt_file(tmp_path / "in", tmp_path / "out", bytes(16), bytes(16), segment=PIECE)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in"]
