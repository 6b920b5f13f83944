"""The CUDA kernels' own code, run on the CPU by the emulator in the extension (no GPU needed).

The emulator calls the very __host__ __device__ bodies the kernels run -- shared-memory table
layouts, replicated-table byte offsets, counters in registers, grid-stride and tile loops, tails --
for every (CTA, thread) of a launch. Every kernel x mode x key size x direction is checked against
`cryptography` (OpenSSL), and against the native backend where it is built.
"""
from __future__ import annotations


import pytest

from aes_oracle import ref, ref_fold, rnd
from s2mc import gpu

pytestmark = pytest.mark.skipif(not gpu.status()["built"], reason="CUDA backend not built")

KERNELS = ["coarse", "extended"] + (
    [f"optimised-{c}" for c in gpu._load().optimised_configs()] if gpu.status()["built"] else [])
KEY_BYTES = (16, 24, 32)




# Small launches (64 threads, at most 2 CTAs for the persistent kernels) so that every loop runs
# several times on a few KB; extended blocks of 4 blocks (64 bytes) per thread.
EMU = dict(threads=64, ext_bytes=64, max_grid=2)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", KEY_BYTES)
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
def test_every_kernel_mode_key_direction(kernel, key_len, op):
    key = rnd(key_len, key_len)
    iv = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
    for n in (16, 64 * 16, 5000 * 16):
        data = rnd(n, n)
        got = gpu.emulate(data, key, iv, op=op, kernel=kernel, **EMU)
        assert got == ref(op, key, iv, data), (kernel, op, key_len, n)
    if op == "ctr":  # decryption = the same operation
        ct = ref("ctr", key, iv, data)
        assert gpu.emulate(ct, key, iv, op="ctr", kernel=kernel, **EMU) == data


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", [0, 1, 15, 17, 31, 1000, 4097, 70001])
def test_ctr_tails_and_empty(kernel, n):
    key = rnd(16, 7)
    iv = rnd(16, 8)
    data = rnd(n, n + 1)
    assert gpu.emulate(data, key, iv, kernel=kernel, **EMU) == ref("ctr", key, iv, data)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("iv_hex", [
    "00000000000000000ffffffffffffff0",  # carry out of the low 32-bit word
    "0000000000000000fffffffffffffff8",  # carry from the low 64 bits into the high 64
    "fffffffffffffffffffffffffffffffa",  # wrap of the whole 128-bit counter
])
def test_ctr_counter_carries(kernel, iv_hex):
    key = rnd(32, 9)
    iv = bytes.fromhex(iv_hex)
    data = rnd(3000, 10)
    assert gpu.emulate(data, key, iv, kernel=kernel, **EMU) == ref("ctr", key, iv, data)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
@pytest.mark.parametrize("streams", [1, 3])
def test_multi_chunk(kernel, op, streams):
    """The host pipeline (stream lanes, staging buffers) with 4 KB chunks: the counter of each
    chunk starts at iv + offset/16, and lanes are reused many times."""
    key = rnd(24, 11)
    iv = bytes.fromhex("0000000000000000ffffffffffffff00")
    n = 40000 if op == "ctr" else 40000 - 40000 % 16
    data = rnd(n, 12)
    got = gpu.emulate(data, key, iv, op=op, kernel=kernel, chunk_bytes=4096, streams=streams,
                      **EMU)
    assert got == ref(op, key, iv, data)


def test_in_place_buffer():
    """crypt/emulate read a buffer that may be reused for output (bytearray input)."""
    key, iv = rnd(16, 30), rnd(16, 31)
    data = bytearray(rnd(20000, 32))
    assert gpu.emulate(data, key, iv, chunk_bytes=4096, **EMU) == ref("ctr", key, iv, bytes(data))


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", KEY_BYTES)
def test_keystream_fold(kernel, key_len):
    key = rnd(key_len, 13)
    iv = bytes.fromhex("000000000000000000000000fffffff0")
    for n in (16, 999, 50000):
        assert gpu.keystream_fold(key, iv, n, kernel=kernel, emulated=True, **EMU) == \
            ref_fold(key, iv, n)


def test_default_launch_shapes():
    """The kernels' real launch sizes (256 threads, 4 KB extended blocks, the optimised default)."""
    key, iv = rnd(16, 14), rnd(16, 15)
    data = rnd(256 * 16 * 9 + 5, 16)
    for kernel in ("coarse", "extended", "optimised"):
        assert gpu.emulate(data, key, iv, kernel=kernel) == ref("ctr", key, iv, data)


def test_matches_native_backend():
    from s2mc.workloads import native
    if not native.available():
        pytest.skip("native backend not built")
    key, iv = rnd(32, 17), rnd(16, 18)
    data = rnd(12345 * 16, 19)
    assert gpu.emulate(data, key, iv, kernel="optimised", **EMU) == native.ctr(key, iv, data)
    assert gpu.emulate(data, key, op="ecb-enc", kernel="coarse", **EMU) == \
        native.ecb_encrypt(key, data)
    assert gpu.emulate(data, key, op="ecb-dec", kernel="extended", **EMU) == \
        native.ecb_decrypt(key, data)


def test_errors():
    from s2mc.common.errors import S2mcError
    with pytest.raises(S2mcError, match="whole number of 16-byte blocks"):
        gpu.emulate(b"x" * 17, bytes(16), op="ecb-enc")
    with pytest.raises(S2mcError, match="unknown kernel"):
        gpu.emulate(b"", bytes(16), bytes(16), kernel="warp")
    with pytest.raises(S2mcError, match="unknown kernel 'optimised-zz'"):
        gpu.emulate(b"", bytes(16), bytes(16), kernel="optimised-zz")
    with pytest.raises(S2mcError, match="extended block size"):
        gpu.emulate(b"", bytes(16), bytes(16), kernel="extended", ext_bytes=100)
    with pytest.raises(S2mcError, match="threads per CTA"):
        gpu.emulate(b"", bytes(16), bytes(16), kernel="coarse", threads=100)


def test_encrypt_file_pieces_and_counter(tmp_path, monkeypatch):
    """encrypt_file's pieces, counters and atomic replace, through the emulator; progress moves
    once per range call (gpu.FILE_SEGMENT_BYTES, rounded down to whole pieces)."""
    monkeypatch.setattr(gpu, "FILE_SEGMENT_BYTES", 16 * 1000 * 2 + 5)
    key, iv = rnd(16, 40), bytes.fromhex("000000000000000000000000fffffff0")
    data = rnd(100_003, 41)
    src, enc, back = tmp_path / "in", tmp_path / "enc", tmp_path / "back"
    src.write_bytes(data)
    seen = []
    n = gpu.encrypt_file(src, enc, key, iv, piece_bytes=16 * 1000, chunk_bytes=4096,
                         progress=seen.append, emulated=True)
    assert n == len(data) and seen == [32_000, 64_000, 96_000, len(data)]
    assert enc.read_bytes() == ref("ctr", key, iv, data)
    gpu.encrypt_file(enc, back, key, iv, decrypt=True, emulated=True)
    assert back.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["back", "enc", "in"]  # no temp files


def test_encrypt_file_errors(tmp_path):
    from s2mc.common.errors import S2mcError
    with pytest.raises(S2mcError, match="piece size must be a positive multiple of 16, not 100"):
        gpu.encrypt_file(tmp_path / "x", tmp_path / "y", bytes(16), bytes(16), piece_bytes=100,
                         emulated=True)
    with pytest.raises(S2mcError, match=r"/missing: input file does not exist$"):
        gpu.encrypt_file(tmp_path / "missing", tmp_path / "y", bytes(16), bytes(16), emulated=True)
    assert list(tmp_path.iterdir()) == []


def test_encrypt_file_output_rules(tmp_path):
    """The GPU file path shares the output rules (s2mc.common.outputs): a replaced file keeps its
    mode, a symlink is written through, a folder is refused."""
    from s2mc.common.errors import S2mcError
    key, iv = rnd(32, 42), rnd(16, 43)
    data = rnd(5000, 44)
    (tmp_path / "in").write_bytes(data)
    (tmp_path / "real").write_bytes(b"old")
    (tmp_path / "real").chmod(0o600)
    (tmp_path / "link").symlink_to("real")
    gpu.encrypt_file(tmp_path / "in", tmp_path / "link", key, iv, emulated=True)
    assert (tmp_path / "link").is_symlink() and (tmp_path / "real").read_bytes() == ref("ctr", key, iv, data)
    assert (tmp_path / "real").stat().st_mode & 0o777 == 0o600
    with pytest.raises(S2mcError, match="is a directory"):
        gpu.encrypt_file(tmp_path / "in", f"{tmp_path}/dir/", key, iv, emulated=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "link", "real"]
