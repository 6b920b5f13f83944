"""The GPU backends' file start-up (s2mc.gpu.startup): the file object (CUDA: context and buffers)
is made on a thread while the files are opened, its errors still reach the caller as one line,
and `s2mc encrypt --timings` reports the run's phases from its own marks."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
import types

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from s2mc import gpu
from s2mc.common.errors import S2mcError

KEY, IV = bytes(range(16)), bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")


def _ctr(data: bytes, iv: bytes = IV) -> bytes:
    e = Cipher(algorithms.AES(KEY), modes.CTR(iv)).encryptor()
    return e.update(data) + e.finalize()


class _FakeFileCipher:
    """FileCipher's interface on the CPU (cryptography's AES-CTR), noting where it was made and
    what existed by then."""
    made: list = []

    def __init__(self, key, iv, *, cipher, kernel, streams, slot_bytes, slots, emulated, max_grid, out=None):
        self.key, self.iv, self.slot_bytes = key, iv, slot_bytes
        self.made.append(threading.current_thread().name)
        if key == bytes(16):
            raise ValueError("no device for this key")   # what a failed context looks like

    def _crypt(self, data: bytes, offset: int) -> bytes:
        ctr = (int.from_bytes(self.iv, "big") + offset // 16) % (1 << 128)
        return _ctr(data, ctr.to_bytes(16, "big"))

    def crypt_fds(self, in_fd, out_fd, offset, length):
        data = os.pread(in_fd, length, offset)
        first = time.clock_gettime(time.CLOCK_MONOTONIC)
        os.pwrite(out_fd, self._crypt(data, offset), offset)
        return len(data), 0, "", "", first

    def crypt_buffer(self, view, offset):
        view[:] = self._crypt(bytes(view), offset)


@pytest.fixture
def fake_cuda(monkeypatch):
    _FakeFileCipher.made = []
    monkeypatch.setattr(gpu, "_load", lambda: types.SimpleNamespace(FileCipher=_FakeFileCipher))
    return _FakeFileCipher


def test_the_file_cipher_is_made_on_a_thread_while_the_files_open(tmp_path, fake_cuda):
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    data = os.urandom(3 * 4096 + 5)
    src.write_bytes(data)
    marks = []
    n = gpu.encrypt_file(src, dst, KEY, IV, piece_bytes=4096, emulated=True,
                         phase=lambda name, at=None: marks.append((name, at)))
    assert n == len(data) and dst.read_bytes() == _ctr(data)
    assert fake_cuda.made == ["s2mc-gpu-start"]          # not the calling thread
    # the ring's own time of its first piece, once, between the backend and the encryption's end
    assert [m for m, _ in marks] == ["backend", "first_read", "encrypt"]
    assert marks[0][1] is None and marks[1][1] > 0
    assert not [t for t in threading.enumerate() if t.name == "s2mc-gpu-start"]


def test_a_failed_start_is_one_line_and_leaves_no_output(tmp_path, fake_cuda):
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    src.write_bytes(b"x" * 100)
    with pytest.raises(S2mcError, match="^gpu: no device for this key$"):
        gpu.encrypt_file(src, dst, bytes(16), IV, emulated=True)
    assert sorted(os.listdir(tmp_path)) == ["in.bin"]
    assert not [t for t in threading.enumerate() if t.name == "s2mc-gpu-start"]


def test_the_stream_path_waits_for_it_too(tmp_path, fake_cuda):
    """A FIFO input goes through the buffer path; its first buffer waits for the thread."""
    src, dst = tmp_path / "in.fifo", tmp_path / "out.bin"
    os.mkfifo(src)
    data = os.urandom(10_000)
    w = threading.Thread(target=lambda: src.write_bytes(data))
    w.start()
    gpu.encrypt_file(src, dst, KEY, IV, piece_bytes=4096, emulated=True)
    w.join()
    assert dst.read_bytes() == _ctr(data) and fake_cuda.made == ["s2mc-gpu-start"]


def test_opencl_file_ring_starts_on_a_thread(tmp_path, monkeypatch):
    from s2mc.gpu import opencl
    if not opencl.status()["devices"]:
        pytest.skip("no OpenCL device")
    ext = opencl._require()
    made = []
    real = ext.FileRing

    def ring(*a, **kw):
        made.append(threading.current_thread().name)
        return real(*a, **kw)
    monkeypatch.setattr(ext, "FileRing", ring)
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    data = os.urandom(100_000)
    src.write_bytes(data)
    marks = []
    opencl.encrypt_file(src, dst, KEY, IV, segment=1 << 16, piece_bytes=1 << 16,
                        phase=lambda name, at=None: marks.append(name))
    assert dst.read_bytes() == _ctr(data) and made == ["s2mc-gpu-start"]
    assert marks == ["backend", "first_read", "encrypt"]


def test_encrypt_timings_come_from_the_run(tmp_path):
    """--timings --json: the marks in order, the phases their differences, the table on stderr
    printing the same seconds; the output still equals AES-CTR's."""
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    data = os.urandom(70_000)
    src.write_bytes(data)
    p = subprocess.run([sys.executable, "-m", "s2mc.cli", "encrypt", "--timings", "--json", "--in", str(src),
                        "--out", str(dst), "--key", KEY.hex(), "--iv", IV.hex()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert dst.read_bytes() == _ctr(data)
    t = json.loads(p.stdout)["timings"]
    marks, phases = t["marks"], t["phases"]
    order = [m for m in ("start", "main", "command", "options", "close") if m in marks]
    assert order[-4:] == ["main", "command", "options", "close"]
    assert all(marks[a] <= marks[b] for a, b in zip(order, order[1:]))
    assert list(phases) == order[1:]
    for a, b in zip(order, order[1:]):
        assert phases[b] == pytest.approx(marks[b] - marks[a])
    lines = p.stderr.splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("where the time went (encrypt, native):"))
    shown = [float(x.split()[0]) for x in lines[i + 1:i + 1 + len(phases)]]
    assert shown == pytest.approx([round(v, 3) for v in phases.values()], abs=0.0006)
    assert "reading, encrypting, writing and closing the output" in lines[i + len(phases)]
    assert lines[i + 1 + len(phases)].split()[0] == f"{marks[order[-1]] - marks[order[0]]:.3f}"


def test_without_timings_the_summary_has_none(tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(b"abc")
    p = subprocess.run([sys.executable, "-m", "s2mc.cli", "encrypt", "--json", "--in", str(src),
                        "--out", str(tmp_path / "o"), "--key", KEY.hex(), "--iv", IV.hex()],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0 and "timings" not in json.loads(p.stdout) and "where the time" not in p.stderr


def test_opencl_timings_have_the_backend_and_the_first_piece(tmp_path):
    """`s2mc encrypt --backend opencl --timings`: the backend's marks in order between the options
    and the close, the first piece's time being the ring's own."""
    from s2mc.gpu import opencl
    if not opencl.status()["devices"]:
        pytest.skip("no OpenCL device")
    src, dst = tmp_path / "in.bin", tmp_path / "out.bin"
    data = os.urandom(300_000)
    src.write_bytes(data)
    p = subprocess.run([sys.executable, "-m", "s2mc.cli", "encrypt", "--backend", "opencl", "--segment", "64K",
                        "--timings", "--json", "--in", str(src), "--out", str(dst), "--key", KEY.hex(),
                        "--iv", IV.hex()], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, S2MC_CACHE_DIR=str(tmp_path / "cache")))
    assert p.returncode == 0, p.stderr
    assert dst.read_bytes() == _ctr(data)
    marks = json.loads(p.stdout)["timings"]["marks"]
    order = ["main", "command", "options", "backend", "first_read", "encrypt", "close"]
    assert [m for m in marks if m != "start"] == order
    assert all(marks[a] <= marks[b] for a, b in zip(order, order[1:]))
    assert "the ring's first piece read" in p.stderr
