"""CUDA Camellia: seed 002's kernel checked against independent oracles.

Oracles: `cryptography`'s Camellia-ECB (OpenSSL underneath) for the block cipher; CTR is built from
it (aes_oracle.ctr_from_ecb) over counter blocks (the 128-bit big-endian counter), because `cryptography` has no
Camellia-CTR; `openssl enc -camellia-N-ctr` for whole files; the RFC 3713 Appendix A vectors.

Most tests run without a GPU: the emulator runs the kernel's own __host__ __device__ code for every
(CTA, thread) through the driver's host pipeline. The `gpu`-marked ones run the real kernel.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from aes_oracle import OPENSSL, camellia_ref as ref, needs_openssl, ref_fold as _ref_fold, rnd
from gpu_fakes import install_fake_gpu
from s2mc import gpu
from s2mc.cli.main import cli
from s2mc.common.errors import S2mcError

S2MC = Path(sys.executable).with_name("s2mc")
built = pytest.mark.skipif(not gpu.status()["built"], reason="CUDA backend not built")
IV = bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")
EMU = dict(cipher="camellia", threads=64, max_grid=2)
#: Seed 002's kernel and the optimised one (1024 threads x 2 blocks per CTA tile, whatever `threads`).
KERNELS = ("coarse", "optimised")

# RFC 3713 Appendix A: key 0123..3210 (+ 0011..ff for 192/256), plaintext 0123..3210.
RFC_KEY = bytes.fromhex("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff")
RFC_CT = {16: "67673138549669730857065648eabe43", 24: "b4993401b3e996f84ee5cee7d79b09b9",
          32: "9acc237dff16d76c20ef7c919e3a7509"}


def ref_fold(key: bytes, iv: bytes, nbytes: int) -> bytes:
    return _ref_fold(key, iv, nbytes, oracle=ref)


def test_oracle_against_rfc3713():
    for n, ct in RFC_CT.items():
        assert ref("ecb-enc", RFC_KEY[:n], IV, RFC_KEY[:16]).hex() == ct


# -- the kernel through the CPU emulator (no GPU needed) --------------------------------------------

@built
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", sorted(RFC_CT))
def test_emulated_kernel_rfc3713(n, kernel):
    ct = gpu.emulate(RFC_KEY[:16], RFC_KEY[:n], op="ecb-enc", cipher="camellia", kernel=kernel)
    assert ct.hex() == RFC_CT[n]
    assert gpu.emulate(ct, RFC_KEY[:n], op="ecb-dec", cipher="camellia", kernel=kernel) == RFC_KEY[:16]


@built
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", (16, 24, 32))
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
def test_emulated_every_mode_key_direction(key_len, op, kernel):
    key = rnd(key_len, key_len + 100)
    # 6000 blocks: the optimised kernel's 2048-block tiles go round its 2 CTAs twice
    for n in (16, 64 * 16, 6000 * 16):
        data = rnd(n, n + 1)
        assert gpu.emulate(data, key, IV, op=op, kernel=kernel, **EMU) == ref(op, key, IV, data), (op, key_len, n)
    if op == "ctr":  # decryption = the same operation
        assert gpu.emulate(ref("ctr", key, IV, data), key, IV, kernel=kernel, **EMU) == data


@built
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", [0, 1, 15, 17, 31, 1000, 4097, 70001])
def test_emulated_ctr_tails_and_empty(n, kernel):
    key, iv, data = rnd(16, 7), rnd(16, 8), rnd(n, n + 1)
    assert gpu.emulate(data, key, iv, kernel=kernel, **EMU) == ref("ctr", key, iv, data)


@built
@pytest.mark.parametrize("iv_hex", ["00000000000000000ffffffffffffff0",   # low 32-bit word carry
                                    "0000000000000000fffffffffffffff8",   # into the high 64 bits
                                    "fffffffffffffffffffffffffffffffa"])  # 128-bit wrap
@pytest.mark.parametrize("kernel", KERNELS)
def test_emulated_counter_carries(iv_hex, kernel):
    key, iv, data = rnd(32, 3), bytes.fromhex(iv_hex), rnd(40000, 4)
    assert gpu.emulate(data, key, iv, kernel=kernel, **EMU) == ref("ctr", key, iv, data)


@built
@pytest.mark.parametrize("streams", [1, 3])
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_emulated_many_chunks_and_streams(streams, op, kernel):
    # 4 KB chunks over 1 or 3 stream lanes (methods C and B's host pipeline); counter past 2^64.
    key, iv = rnd(24, 5), bytes.fromhex("0000000000000000ffffffffffffff00")
    data = rnd(50000 if op == "ctr" else 49152, 6)
    got = gpu.emulate(data, key, iv, op=op, streams=streams, chunk_bytes=4096, kernel=kernel, **EMU)
    assert got == ref(op, key, iv, data)


@built
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("n", [16, 1000, 100000])
def test_emulated_keystream_fold(n, kernel):
    key = rnd(16, 11)
    got = gpu.keystream_fold(key, IV, n, cipher="camellia", kernel=kernel, threads=64, emulated=True,
                             max_grid=2)
    assert got == ref_fold(key, IV, n)


@built
@pytest.mark.parametrize("kernel", KERNELS)
def test_emulated_full_launch_shape(kernel):
    # The real launch shape (grid as the data needs, no cap): every block once.
    key, data = rnd(16, 12), rnd(300000, 13)
    assert gpu.emulate(data, key, IV, cipher="camellia", kernel=kernel, max_grid=0) == ref("ctr", key, IV, data)


@built
@needs_openssl
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", (16, 24, 32))
def test_emulated_encrypt_file_equals_openssl(tmp_path, key_len, kernel):
    src, out, want = tmp_path / "in.bin", tmp_path / "out.bin", tmp_path / "openssl.bin"
    src.write_bytes(rnd(100003, key_len))
    key = rnd(key_len, 1)
    n = gpu.encrypt_file(src, out, key, IV, cipher="camellia", emulated=True, piece_bytes=32768,
                         chunk_bytes=4096, kernel=kernel)
    assert n == 100003
    subprocess.run([OPENSSL, "enc", f"-camellia-{key_len * 8}-ctr", "-K", key.hex(), "-iv", IV.hex(),
                    "-in", str(src), "-out", str(want)], check=True)
    assert out.read_bytes() == want.read_bytes()


# -- errors, one line each ----------------------------------------------------------------------------

@built
def test_api_errors():
    with pytest.raises(S2mcError, match=r"gpu: unknown cipher 'des' \(expected aes, camellia\)"):
        gpu.emulate(b"x" * 16, bytes(16), IV, cipher="des")
    with pytest.raises(S2mcError, match=r"Camellia-128/192/256\), not 5"):
        gpu.emulate(b"x" * 16, bytes(5), IV, cipher="camellia")
    with pytest.raises(S2mcError, match="Camellia has coarse and optimised"):
        gpu.emulate(b"x" * 16, bytes(16), IV, cipher="camellia", kernel="optimised-t1b4")
    with pytest.raises(S2mcError, match="Camellia has coarse and optimised"):
        gpu.emulate(b"x" * 16, bytes(16), IV, cipher="camellia", kernel="extended")
    with pytest.raises(S2mcError, match="ECB needs a whole number"):
        gpu.emulate(b"x" * 17, bytes(16), op="ecb-enc", cipher="camellia")
    assert gpu.kernels(cipher="camellia") == ["coarse", "optimised"] and gpu.default_kernel("camellia") == "coarse"
    with pytest.raises(S2mcError, match="key_bits must be"):
        gpu.occupancy("camellia", key_bits=64)


@pytest.mark.skipif(gpu.available(), reason="a GPU is present")
@pytest.mark.parametrize("args", [["--cipher", "camellia"], ["--cipher", "camellia", "--occupancy"],
                                  ["--occupancy"]])
def test_cli_without_gpu_exits_1_with_one_line(args):
    proc = subprocess.run([str(S2MC), "gpu", *args], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2mc: error: gpu: "), lines


@pytest.mark.skipif(gpu.available(), reason="a GPU is present")
def test_api_without_gpu_one_line():
    for call in (lambda: gpu.crypt(b"x", bytes(16), IV, cipher="camellia"),
                 lambda: gpu.occupancy("camellia"),
                 lambda: gpu.encrypt_file("a", "b", bytes(16), IV, cipher="camellia")):
        with pytest.raises(S2mcError) as exc:
            call()
        assert "\n" not in str(exc.value)


@pytest.mark.parametrize("args, needle", [
    (["--cipher", "des"], "--cipher"),
    (["--cipher", "camellia", "--kernel", "optimised-t1b4"], "unknown kernel 'optimised-t1b4' for camellia"),
    (["--cipher", "camellia", "--kernel", "extended"], "unknown kernel 'extended' for camellia"),
])
def test_cli_argument_errors(args, needle):
    res = CliRunner().invoke(cli, ["gpu", *args])
    assert res.exit_code in (1, 2)
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], lines


def test_cli_camellia_grid_with_a_fake_gpu(monkeypatch, tmp_path):
    calls = install_fake_gpu(monkeypatch, mem_bytes=1 << 30)
    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": True, "devices": ["Fake"],
                                                "reason": ""})
    monkeypatch.setattr(gpu, "platform_info", lambda: {
        "gpu": "Fake", "device": {"global_mem_bytes": 1 << 30, "sms": 2, "sm_clock_mhz": 1000.0}})
    out = tmp_path / "g.csv"
    res = CliRunner().invoke(cli, ["gpu", "--cipher", "camellia", "--bytes", "1M", "--key-bits", "256",
                                   "--streams", "1,4", "--quiet", "--out", str(out)])
    assert res.exit_code == 0, res.output
    # both kernels: keystream, device (method A), host serial (C) and overlapped over 4 streams (B)
    assert calls == [(k, m, 1 << 20, s, "camellia") for k in ("coarse", "optimised")
                     for m, s in (("keystream", 1), ("device", 1), ("host", 1), ("host", 4))]
    from s2mc.analysis import records
    df = records.read(out)
    assert set(df["workload"]) == {"camellia-256-ctr"}
    assert set(df["variant"]) == {f"{k}/{m}" for k in ("coarse", "optimised")
                                  for m in ("keystream", "device-resident", "host-serial", "host-overlap-s4")}
    assert "Camellia-256" in res.stdout


def test_cli_occupancy_with_a_fake_gpu(monkeypatch, tmp_path):
    row = {"kernel": "coarse", "cipher": "camellia", "direction": "enc/dec", "key_bits": 128, "rounds": 18,
           "threads": 512, "registers": 40, "static_smem_bytes": 4368, "dynamic_smem_bytes": 0,
           "local_bytes": 0, "ctas_per_sm": 4, "sms": 132, "max_threads_per_sm": 2048, "grid": 528,
           "occupancy": 1.0}
    seen = []
    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": True, "devices": ["F"], "reason": ""})
    monkeypatch.setattr(gpu, "occupancy", lambda c, k, t: seen.append((c, k, t)) or [row])
    md = tmp_path / "t.md"
    res = CliRunner().invoke(cli, ["gpu", "--cipher", "camellia", "--occupancy", "--threads", "512",
                                   "--markdown", str(md)])
    assert res.exit_code == 0, res.output
    assert seen == [("camellia", 128, 512)]
    # 4368 B = 4.27 KB, as seed 002's Table 2 writes Camellia's shared memory on the C2050
    assert "| coarse | camellia | enc/dec | 128 | 528 | 512 | 40 | 4.27 KB | 4 | 1.00 |" in res.stdout
    assert md.read_text() == res.stdout
    res = CliRunner().invoke(cli, ["gpu", "--cipher", "camellia", "--occupancy", "--json"])
    assert res.exit_code == 0 and '"registers": 40' in res.stdout


# -- on a GPU -----------------------------------------------------------------------------------------

@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason=gpu.status()["reason"])
@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("key_len", (16, 24, 32))
@pytest.mark.parametrize("op", ["ctr", "ecb-enc", "ecb-dec"])
@pytest.mark.parametrize("streams", [1, 4])
def test_gpu_every_mode_key_direction(key_len, op, streams, kernel):
    key = rnd(key_len, key_len)
    for n in (16, 4096, (1 << 20) + (5 if op == "ctr" else 0)):
        data = rnd(n, n)
        got = gpu.crypt(data, key, IV, op=op, cipher="camellia", streams=streams, chunk_bytes=65536,
                        kernel=kernel)
        assert got == ref(op, key, IV, data), (op, key_len, n, streams)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason=gpu.status()["reason"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_gpu_equals_emulator_and_keystream(kernel):
    key, data = rnd(16, 21), rnd(777777, 22)
    got = gpu.crypt(data, key, IV, cipher="camellia", kernel=kernel)
    assert got == gpu.emulate(data, key, IV, cipher="camellia", kernel=kernel, max_grid=0)
    assert gpu.keystream_fold(key, IV, 4 << 20, cipher="camellia", kernel=kernel) == ref_fold(key, IV, 4 << 20)


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason=gpu.status()["reason"])
@needs_openssl
def test_gpu_encrypt_file_equals_openssl(tmp_path):
    src, out, want = tmp_path / "in.bin", tmp_path / "out.bin", tmp_path / "openssl.bin"
    src.write_bytes(rnd(3_000_001, 2))
    key = rnd(16, 3)
    gpu.encrypt_file(src, out, key, IV, cipher="camellia", piece_bytes=1 << 20, chunk_bytes=65536)
    subprocess.run([OPENSSL, "enc", "-camellia-128-ctr", "-K", key.hex(), "-iv", IV.hex(), "-in", str(src),
                    "-out", str(want)], check=True)
    assert out.read_bytes() == want.read_bytes()


@pytest.mark.gpu
@pytest.mark.skipif(not gpu.available(), reason=gpu.status()["reason"])
def test_gpu_occupancy_and_bench():
    rows = gpu.occupancy("camellia", 256, 512)
    assert [r["kernel"] for r in rows] == ["coarse", "optimised-t4b2"] and rows[0]["rounds"] == 24
    assert rows[1]["dynamic_smem_bytes"] == 4 * 32768 and rows[1]["threads"] == 1024
    # the 4 SP-tables (4 KB) and 68 subkey words in shared memory, as seed 002 designed it
    assert rows[0]["static_smem_bytes"] == 4 * 1024 + 68 * 4
    assert rows[0]["registers"] > 0 and rows[0]["ctas_per_sm"] >= 1 and 0 < rows[0]["occupancy"] <= 1
    # AES's kernels beside them: the extended kernel's row is named by its block size (extended-4096)
    aes = [r["kernel"] for r in gpu.occupancy("aes")]
    assert "coarse" in aes and any(k.startswith("extended-") and k[9:].isdigit() for k in aes), aes
    for kernel in KERNELS:
        for measure in ("keystream", "device", "host"):
            res = gpu.bench(kernel, measure, nbytes=1 << 20, reps=1, cipher="camellia")
            assert res["seconds"] > 0 and res["bytes"] == 1 << 20


# -- s2mc encrypt --backend cuda --cipher camellia ----------------------------------------------------

@built
@needs_openssl
@pytest.mark.parametrize("key_len", (16, 32))
def test_encrypt_cli_cuda_camellia_through_the_emulator(tmp_path, monkeypatch, key_len):
    """The command's CUDA path end to end, with the kernels on the CPU emulator standing in for a GPU."""
    import functools
    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": True, "devices": ["emu"],
                                                "reason": ""})
    monkeypatch.setattr(gpu, "encrypt_file", functools.partial(gpu.encrypt_file, emulated=True, chunk_bytes=8192))
    src, out, want = tmp_path / "in.bin", tmp_path / "out.bin", tmp_path / "want.bin"
    src.write_bytes(rnd(20011, 5))
    key = rnd(key_len, 6)
    res = CliRunner().invoke(cli, ["encrypt", "--backend", "cuda", "--cipher", "camellia", "--in", str(src),
                                   "--out", str(out), "--key", key.hex(), "--iv", IV.hex(), "-q"])
    assert res.exit_code == 0, res.output
    subprocess.run([OPENSSL, "enc", f"-camellia-{key_len * 8}-ctr", "-K", key.hex(), "-iv", IV.hex(),
                    "-in", str(src), "-out", str(want)], check=True)
    assert out.read_bytes() == want.read_bytes()


@pytest.mark.skipif(gpu.available(), reason="a GPU is present")
def test_encrypt_cli_cuda_camellia_without_gpu_one_line(tmp_path):
    src = tmp_path / "in.bin"
    src.write_bytes(b"x" * 100)
    proc = subprocess.run([str(S2MC), "encrypt", "--backend", "cuda", "--cipher", "camellia", "--in", str(src),
                           "--out", str(tmp_path / "o.bin"), "--key", "00" * 16, "--iv", IV.hex()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2mc: error: --backend cuda: "), lines
    assert not (tmp_path / "o.bin").exists()


def test_demo_spec_runs_camellia_too(tmp_path):
    from s2mc.experiments import specs
    spec = specs.load(specs.spec_dir() / "gpu_size_sweep.toml")
    assert [(g.cipher, g.kernels) for g in spec.grids][-1] == ("camellia", ("coarse", "optimised"))
    bad = tmp_path / "bad.toml"
    bad.write_text('title = "t"\n[[grid]]\nkind = "gpu"\ncipher = "des"\n')
    with pytest.raises(S2mcError, match=r"cipher: unknown value 'des' \(choose aes, camellia\)"):
        specs.load(bad)


@built
def test_bench_gpu_script_writes_both_ciphers(tmp_path, monkeypatch, capsys):
    import runpy
    calls = install_fake_gpu(monkeypatch, mem_bytes=1 << 40)
    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": True, "devices": ["Fake"],
                                                "reason": ""})
    monkeypatch.chdir(tmp_path)
    script = Path(__file__).resolve().parents[1] / "bench" / "bench_gpu.py"
    assert runpy.run_path(str(script))["main"]() == 0
    from s2mc.analysis import records
    assert set(records.read(tmp_path / "results" / "gpu.parquet")["cipher"]) == {"aes"}
    cam = records.read(tmp_path / "results" / "gpu-camellia.parquet")
    assert set(cam["workload"]) == {"camellia-128-ctr"}
    assert set(cam["variant"].str.split("/").str[0]) == {"coarse", "optimised"}
    assert sum(1 for c in calls if len(c) == 5) == 2 * 4 * 4   # Camellia: 2 kernels x 4 sizes x 4 measurements
    assert "Camellia-128, Gbps" in capsys.readouterr().out
