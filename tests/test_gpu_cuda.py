"""The CUDA kernels on a real GPU (pytest marker `gpu`; skipped without a GPU and the CUDA build).

Every kernel x mode x key size x direction equals `cryptography` (OpenSSL) and the native backend;
sizes include CTR tails, counter carries, inputs larger than one chunk (small chunk sizes force the
multi-chunk, multi-stream path) and the empty input. The emulator must agree bit for bit.
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from aes_oracle import ref, ref_fold, rnd
from s2mc import gpu
from s2mc.common.errors import S2mcError

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not gpu.available(), reason=gpu.status()["reason"]),
]

KERNELS = ["coarse", "extended", "optimised"] + (
    [f"optimised-{c}" for c in gpu._load().optimised_configs()] if gpu.status()["built"] else [])
KEY_BYTES = (16, 24, 32)




@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", KEY_BYTES)
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
def test_every_kernel_mode_key_direction(kernel, key_len, op):
    key = rnd(key_len, key_len)
    iv = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
    for n in (16, 4096, 1 << 20):
        data = rnd(n, n)
        got = gpu.crypt(data, key, iv, op=op, kernel=kernel, ext_bytes=1024)
        assert got == ref(op, key, iv, data), (kernel, op, key_len, n)
    if op == "ctr":
        assert gpu.crypt(ref("ctr", key, iv, data), key, iv, kernel=kernel) == data


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", [0, 1, 15, 17, 1000, 4097, 1_000_003])
def test_ctr_tails_and_empty(kernel, n):
    key, iv = rnd(16, 7), rnd(16, 8)
    data = rnd(n, n + 1)
    assert gpu.crypt(data, key, iv, kernel=kernel) == ref("ctr", key, iv, data)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("iv_hex", [
    "00000000000000000ffffffffffffff0",
    "0000000000000000fffffffffffff000",
    "fffffffffffffffffffffffffffff000",
])
def test_ctr_counter_carries(kernel, iv_hex):
    key, iv = rnd(32, 9), bytes.fromhex(iv_hex)
    data = rnd(300_000, 10)
    assert gpu.crypt(data, key, iv, kernel=kernel) == ref("ctr", key, iv, data)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("streams", [1, 3])
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
def test_larger_than_one_chunk(kernel, streams, op):
    """64 KB chunks over 3 MB (+ a tail): many chunks per stream, counters continue across them."""
    key, iv = rnd(24, 11), bytes.fromhex("0000000000000000ffffffffffffff00")
    n = 3 * (1 << 20) + (12345 if op == "ctr" else 12336)
    data = rnd(n, 12)
    got = gpu.crypt(data, key, iv, op=op, kernel=kernel, streams=streams, chunk_bytes=65536)
    assert got == ref(op, key, iv, data)


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", KEY_BYTES)
def test_keystream_op(kernel, key_len):
    key, iv = rnd(key_len, 13), bytes.fromhex("000000000000000000000000fffff000")
    for n in (16, 100_000, 4 << 20):
        assert gpu.keystream_fold(key, iv, n, kernel=kernel) == ref_fold(key, iv, n)


@pytest.mark.parametrize("kernel", KERNELS)
def test_gpu_equals_emulator(kernel):
    key, iv = rnd(16, 20), rnd(16, 21)
    data = rnd(777_777, 22)
    assert gpu.crypt(data, key, iv, kernel=kernel) == \
        gpu.emulate(data, key, iv, kernel=kernel, max_grid=0)


def test_matches_native_backend():
    from s2mc.workloads import native
    if not native.available():
        pytest.skip("native backend not built")
    key, iv = rnd(32, 17), rnd(16, 18)
    data = rnd(1 << 22, 19)
    assert gpu.crypt(data, key, iv) == native.ctr(key, iv, data)
    assert gpu.crypt(data, key, op="ecb-enc", kernel="coarse") == native.ecb_encrypt(key, data)
    assert gpu.crypt(data, key, op="ecb-dec", kernel="extended") == native.ecb_decrypt(key, data)


def test_encrypt_file_matches_openssl(tmp_path):
    key, iv = rnd(16, 23), bytes.fromhex("00000000000000000000000000fffff0")
    data = rnd(5 * (1 << 20) + 3, 24)
    src, enc, dec = tmp_path / "in.bin", tmp_path / "out.bin", tmp_path / "back.bin"
    src.write_bytes(data)
    # Pieces of 1 MB and chunks of 256 KB: the counter must continue across both.
    n = gpu.encrypt_file(src, enc, key, iv, piece_bytes=1 << 20, chunk_bytes=1 << 18)
    assert n == len(data)
    assert enc.read_bytes() == ref("ctr", key, iv, data)
    gpu.encrypt_file(enc, dec, key, iv, decrypt=True)
    assert dec.read_bytes() == data
    if shutil.which("openssl"):
        proc = subprocess.run(["openssl", "enc", "-aes-128-ctr", "-K", key.hex(), "-iv", iv.hex(),
                               "-in", str(src)], capture_output=True, check=True)
        assert proc.stdout == enc.read_bytes()


def test_encrypt_file_empty(tmp_path):
    src, out = tmp_path / "empty", tmp_path / "out"
    src.write_bytes(b"")
    assert gpu.encrypt_file(src, out, bytes(16), bytes(16)) == 0
    assert out.read_bytes() == b""


@pytest.mark.parametrize("kernel", ["coarse", "extended", "optimised"])
@pytest.mark.parametrize("measure", ["keystream", "device", "host"])
def test_bench_smoke(kernel, measure):
    r = gpu.bench(kernel, measure, nbytes=1 << 20, reps=2)
    assert r["seconds"] > 0 and r["best_seconds"] > 0 and r["bytes"] == 1 << 20
    assert r["timer"] == ("host-clock" if measure == "host" else "cuda-events")


def test_bench_keeps_every_repetition_and_the_host_stages():
    r = gpu.bench("optimised", "host", nbytes=3 << 20, reps=4, streams=1, chunk_bytes=1 << 20, warmup=0)
    assert len(r["times"]) == r["reps"] == 4 and min(r["times"]) == r["best_seconds"]
    st = r["stages"]
    assert all(len(st[k]) == 4 for k in ("wall", "h2d", "kernel", "d2h", "sync"))
    # three chunks on one stream: the events' stages are parts of the wall time they ran in
    for w, h, k, d in zip(st["wall"], st["h2d"], st["kernel"], st["d2h"]):
        assert 0 < h and 0 < k and 0 < d and h + k + d <= w * 1.01
    r = gpu.bench("optimised", "device", nbytes=1 << 20, reps=2, min_seconds=0.01)
    assert sum(r["times"]) >= 0.01 and r["reps"] == len(r["times"]) >= 2 and "stages" not in r
    with pytest.raises(S2mcError, match="warm-up runs must be in 0..10000"):
        gpu.bench("optimised", "device", nbytes=1 << 20, warmup=-1)


def test_cli_grid_writes_records(tmp_path):
    from click.testing import CliRunner

    from s2mc.analysis import records
    from s2mc.cli.main import cli

    out = tmp_path / "gpu.parquet"
    md = tmp_path / "gpu.md"
    res = CliRunner().invoke(cli, ["gpu", "--bytes", "64K,1M", "--reps", "2", "--quiet",
                                   "--out", str(out), "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    df = records.read(out)
    assert set(df["source"]) == {"cuda"}
    assert set(df["metric"]) == {"kernel_seconds", "seconds", "bytes_per_second"}
    assert any(v.endswith("/device-resident") for v in df["variant"])
    assert any(v.endswith("/keystream") for v in df["variant"])
    assert any(v.endswith("/host-serial") for v in df["variant"])
    assert any(v.endswith("/host-overlap-s4") for v in df["variant"])
    assert records.manifest_path_for(out).exists()
    assert md.read_text().startswith("| kernel | measure |")
