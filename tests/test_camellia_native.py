"""Camellia on the native CPU backend: the header-only core (s2mc_cipher/camellia.h) against
RFC 3713's Appendix A vectors, in C++ and through Python; the OpenMP strategies against the
`cryptography` package's Camellia (ECB; CTR built from its ECB over the counter blocks, since
`cryptography` has no Camellia-CTR); whole files against the `openssl` binary both ways; the
cipher choice's errors."""
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native library not built", allow_module_level=True)

from aes_oracle import OPENSSL, Camellia, ctr_from_ecb, ecb_ref as _ecb_ref, needs_openssl  # noqa: E402
from s2mc.cli.main import cli  # noqa: E402
from s2mc.common.errors import S2mcError  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: Every Camellia implementation this CPU runs (vaes, aesni: byte-sliced with AESENCLAST; sptable: tables).
IMPLS = native.supported_impls("camellia")
HEADER_DIR = ROOT / "workloads" / "cipher_host" / "include"

# RFC 3713 Appendix A: key 0123456789abcdeffedcba9876543210 (+ 0011223344556677 [8899aabbccddeeff]),
# plaintext 0123456789abcdeffedcba9876543210.
RFC_PLAIN = bytes.fromhex("0123456789abcdeffedcba9876543210")
RFC_VECTORS = {
    128: ("0123456789abcdeffedcba9876543210", "67673138549669730857065648eabe43"),
    192: ("0123456789abcdeffedcba98765432100011223344556677", "b4993401b3e996f84ee5cee7d79b09b9"),
    256: ("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff",
          "9acc237dff16d76c20ef7c919e3a7509"),
}


def ecb_ref(key: bytes, data: bytes, decrypt: bool = False) -> bytes:
    return _ecb_ref(Camellia, key, data, decrypt)


def ctr_ref(key: bytes, iv: bytes, data: bytes) -> bytes:
    return ctr_from_ecb(Camellia, key, iv, data)


def test_the_oracle_itself_gives_the_rfc_vectors():
    for key, ct in RFC_VECTORS.values():
        assert ecb_ref(bytes.fromhex(key), RFC_PLAIN).hex() == ct


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_rfc3713_vectors_both_ways(bits, impl):
    key, ct = RFC_VECTORS[bits]
    key = bytes.fromhex(key)
    # 16 copies: the byte-sliced path takes 16 blocks at a time, the rest goes block by block
    for n in (1, 16, 17):
        assert native.ecb_encrypt(key, RFC_PLAIN * n, cipher="camellia", impl=impl).hex() == ct * n
        assert native.ecb_decrypt(key, bytes.fromhex(ct) * n, cipher="camellia", impl=impl) == RFC_PLAIN * n


def test_both_implementations_are_there():
    assert native.CIPHER_IMPLS["camellia"] == ("vaes", "aesni", "sptable") and "sptable" in IMPLS
    # the Python names (the CLI's choices) are the compiled library's, in its order
    for c in native.CIPHERS:
        assert tuple(d["name"] for d in native.impls(c)) == native.CIPHER_IMPLS[c], c
    assert native.best_impl("camellia") == IMPLS[0]


def test_cpp_selftest_through_the_module():
    assert native.camellia_selftest() is True


@pytest.mark.skipif(shutil.which("c++") is None, reason="no C++ compiler")
def test_header_compiles_alone_and_its_selftest_passes(tmp_path):
    # The header is what the CUDA and OpenCL ports start from: it must build on its own, warning-free.
    src = tmp_path / "t.cpp"
    src.write_text('#include "s2mc_cipher/camellia.h"\n'
                   "int main() { return s2mc::camellia::selftest() ? 0 : 1; }\n")
    exe = tmp_path / "t"
    subprocess.run(["c++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-O1", f"-I{HEADER_DIR}", str(src),
                    "-o", str(exe)], check=True, capture_output=True)
    assert subprocess.run([str(exe)]).returncode == 0


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("strategy", native.STRATEGIES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_random_keys_and_sizes_against_cryptography(strategy, threads, impl):
    rng = random.Random(f"{strategy}{threads}{impl}")
    for bits in (128, 192, 256):
        key, iv = rng.randbytes(bits // 8), rng.randbytes(16)
        for n in (0, 1, 15, 16, 17, 64, 255, 256, 257, 1000, rng.randrange(1, 40000)):
            data = rng.randbytes(n)
            kw = dict(cipher="camellia", impl=impl, strategy=strategy, threads=threads, block_bytes=544)
            got = native.ctr(key, iv, data, **kw)
            assert got == ctr_ref(key, iv, data), (bits, n)
            whole = data[:n - n % 16]
            ct = native.ecb_encrypt(key, whole, **kw)
            assert ct == ecb_ref(key, whole)
            assert native.ecb_decrypt(key, ct, **kw) == whole


@pytest.mark.parametrize("iv_hex", ["000000000000000000000000fffffffe",   # 2^32 carry
                                    "0000000000000000fffffffffffffffd",   # 2^64 carry
                                    "fffffffffffffffffffffffffffffffe"])  # the 2^128 wrap
def test_counter_carries(iv_hex):
    key, iv = bytes(range(16)), bytes.fromhex(iv_hex)
    data = random.Random(1).randbytes(16 * 40 + 5)   # the carry inside a batch of 16 blocks
    for impl in IMPLS:
        for threads in (1, 2):
            assert native.ctr(key, iv, data, cipher="camellia", impl=impl, threads=threads) == ctr_ref(key, iv, data)


def test_in_place_and_openssl_evp_agree():
    key, iv = bytes(range(32)), bytes(16)
    data = bytearray(random.Random(2).randbytes(5000))
    want = ctr_ref(key, iv, bytes(data))
    assert native.openssl_ctr(key, iv, bytes(data), cipher="camellia", threads=2) == want
    native.ctr(key, iv, data, cipher="camellia", out=data)
    assert bytes(data) == want


def test_bench_runs_camellia_ours_and_openssl():
    for impl in IMPLS:
        r = native.bench_ctr(4096, cipher="camellia", impl=impl, min_reps=1, min_seconds=0)
        assert r["engine"] == impl and r["seconds_best"] > 0
    r = native.bench_ctr(4096, cipher="camellia", engine="openssl", min_reps=1, min_seconds=0)
    assert r["engine"] == "openssl"


@pytest.mark.parametrize("call, match", [
    (lambda: native.ctr(bytes(20), bytes(16), b"x", cipher="camellia"), "Camellia key must be 16, 24 or 32"),
    (lambda: native.ctr(bytes(16), bytes(16), b"x", cipher="des"), "unknown cipher 'des'"),
    (lambda: native.ctr(bytes(16), bytes(16), b"x", cipher="camellia", impl="vaes512"),
     "unknown implementation 'vaes512' of camellia"),
    (lambda: native.ecb_encrypt(bytes(16), b"x" * 15, cipher="camellia"), "multiple of 16"),
    (lambda: native.bench_ctr(64, cipher="rot13"), "unknown cipher"),
    (lambda: native.resolve_impl("ttable", "camellia"), "unknown implementation 'ttable' of camellia"),
])
def test_bad_arguments(call, match):
    with pytest.raises((ValueError, S2mcError), match=match):
        call()


# -- files: s2mc encrypt/decrypt --cipher camellia against the openssl binary ---------------------------

KEYS = {128: "000102030405060708090a0b0c0d0e0f",
        192: "000102030405060708090a0b0c0d0e0f1011121314151617",
        256: "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"}
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfff0"


def run(*args):
    return CliRunner().invoke(cli, list(args))


def openssl(args, src, dst):
    subprocess.run([OPENSSL, "enc", *args, "-in", str(src), "-out", str(dst)], check=True, capture_output=True)


@needs_openssl
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("size", [0, 1, 4095, 70001, (1 << 20) + 17])
def test_ctr_files_equal_openssl_both_ways(tmp_path, bits, size):
    src, ours, theirs, back = (tmp_path / n for n in ("p.bin", "o.enc", "t.enc", "b.bin"))
    src.write_bytes(random.Random(size).randbytes(size))
    res = run("encrypt", "--cipher", "camellia", "--in", str(src), "--out", str(ours), "--key", KEYS[bits],
              "--iv", IV, "--threads", "2", "--chunk-bytes", "64K", "-q")
    assert res.exit_code == 0, res.output
    openssl([f"-camellia-{bits}-ctr", "-K", KEYS[bits], "-iv", IV], src, theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    res = run("decrypt", "--cipher", "camellia", "--in", str(theirs), "--out", str(back), "--key", KEYS[bits],
              "--iv", IV, "-q")
    assert res.exit_code == 0 and back.read_bytes() == src.read_bytes()


@needs_openssl
@pytest.mark.parametrize("bits", [128, 256])
def test_ecb_files_equal_openssl_nopad(tmp_path, bits):
    src, ours, theirs, back = (tmp_path / n for n in ("p.bin", "o.enc", "t.enc", "b.bin"))
    src.write_bytes(random.Random(bits).randbytes(16 * 5003))
    assert run("encrypt", "--cipher", "camellia", "--mode", "ecb", "--in", str(src), "--out", str(ours),
               "--key", KEYS[bits], "-q").exit_code == 0
    openssl([f"-camellia-{bits}-ecb", "-nopad", "-K", KEYS[bits]], src, theirs)
    assert ours.read_bytes() == theirs.read_bytes()
    assert run("decrypt", "--cipher", "camellia", "--mode", "ecb", "--in", str(theirs), "--out", str(back),
               "--key", KEYS[bits], "-q").exit_code == 0
    assert back.read_bytes() == src.read_bytes()


@needs_openssl
def test_the_stream_pipeline_too(tmp_path):
    # stdout as output is the ordered pipeline, not crypt_fds: the same bytes
    src, theirs = tmp_path / "p.bin", tmp_path / "t.enc"
    src.write_bytes(random.Random(5).randbytes(300000))
    openssl(["-camellia-128-ctr", "-K", KEYS[128], "-iv", IV], src, theirs)
    res = subprocess.run([sys.executable, "-m", "s2mc.cli", "encrypt", "--cipher", "camellia", "--in",
                          str(src), "--out", "-", "--key", KEYS[128], "--iv", IV, "--chunk-bytes", "64K", "-q"],
                         capture_output=True)
    assert res.returncode == 0 and res.stdout == theirs.read_bytes()


def test_json_and_records_name_the_cipher(tmp_path):
    src = tmp_path / "p.bin"
    src.write_bytes(bytes(1000))
    res = run("encrypt", "--cipher", "camellia", "--in", str(src), "--out", str(tmp_path / "o"), "--key",
              KEYS[192], "--iv", IV, "--json", "--records", str(tmp_path / "r.csv"))
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output.strip().splitlines()[-1])
    assert (summary["cipher"], summary["key_bits"], summary["engine"]) == ("camellia", 192, IMPLS[0])
    from s2mc.analysis import records
    df = records.read(tmp_path / "r.csv")
    assert set(df["cipher"]) == {"camellia"}


@pytest.mark.parametrize("args, code, message", [
    (["--key", "0011"], 1, "--key: 4 hex digits; Camellia keys need 32, 48 or 64"),
    (["--key", KEYS[128], "--cipher", "des"], 2, "Invalid value for '--cipher'"),
    (["--key", KEYS[128], "--impl", "ttable"], 1, "unknown implementation 'ttable' of camellia"),
])
def test_cli_errors_are_one_line(tmp_path, args, code, message):
    src = tmp_path / "p.bin"
    src.write_bytes(bytes(64))
    base = ["encrypt", "--cipher", "camellia", "--in", str(src), "--out", str(tmp_path / "o"), "--iv", IV]
    res = run(*base, *args)
    assert res.exit_code == code and message in res.output, res.output
    err = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(err) == 1 and err[0].startswith("s2mc") and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()


def test_cuda_backend_without_camellia_is_one_line(tmp_path, monkeypatch):
    # When the CUDA backend's encrypt_file takes no cipher, --cipher camellia is refused before any GPU work.
    from s2mc import gpu

    def old_encrypt_file(in_path, out_path, key, iv, decrypt=False, *, piece_bytes=0, progress=None):
        raise AssertionError("must not be called")

    monkeypatch.setattr(gpu, "encrypt_file", old_encrypt_file)
    src = tmp_path / "p.bin"
    src.write_bytes(bytes(64))
    res = run("encrypt", "--cipher", "camellia", "--backend", "cuda", "--in", str(src), "--out",
              str(tmp_path / "o"), "--key", KEYS[128], "--iv", IV)
    assert res.exit_code == 1 and "--backend cuda: --cipher camellia is not available" in res.output


def test_native_command_records_camellia(tmp_path):
    out = tmp_path / "n.csv"
    res = run("native", "--cipher", "camellia", "--bytes", "4K", "--threads", "1,2", "--min-seconds", "0",
              "--reps", "1", "--vs-openssl", "--out", str(out), "-q")
    assert res.exit_code == 0, res.output
    from s2mc.analysis import records
    df = records.read(out)
    assert set(df["cipher"]) == {"camellia"} and set(df["workload"]) == {"camellia-128-ctr"}
    assert set(df["engine"]) == {IMPLS[0], "openssl"}
    res = run("native", "--cipher", "camellia", "--impl", "ttable", "--bytes", "16")
    assert res.exit_code == 1 and "no implementation of camellia" in res.output


# -- seed 002 Figure 10 on this host (experiments.seeds_native, analysis.seeds_native) ---------------------

def test_seed002_cpu_records_table_and_report(tmp_path):
    from s2mc.analysis import records, report, seeds
    from s2mc.analysis import seeds_native as sn
    from s2mc.experiments.seeds_native import measure_seed002

    ours = measure_seed002(4096, threads=(1, 2), min_seconds=0, min_reps=1)
    # (other ciphers of the native library may join the measurement: SEED002_CPU_CIPHERS)
    assert set(ours["experiment"]) == {"seed002_cpu"} and set(ours["cipher"]) >= {"aes", "camellia"}
    assert set(ours["workload"]) >= {"aes-128-ctr-enc", "camellia-128-ctr-enc"}
    assert set(ours["engine"]) >= {"ttable", IMPLS[0]} and set(ours["cores"]) == {1, 2}
    # A hand-made 'ours' against the paper's quoted AES-NI figure (44.2 Gbit/s at 4 threads).
    ref = seeds.load_reference()
    fake = records.make_records([
        dict(run_id="r", experiment="seed002_cpu", source="native", workload="aes-128-ctr-enc", variant="contiguous",
             engine="aesni", cores=t, bytes=1, metric="bytes_per_second", value=gbps * 1e9 / 8, cipher="aes")
        for t, gbps in ((1, 10.0), (4, 22.1), (8, 22.1))])
    t = sn.seed002_beside(fake, ref)
    row = t.iloc[0]
    assert row["4 vs 1 thr"] == pytest.approx(2.21) and row["8 vs 4 thr"] == pytest.approx(1.0)
    # per thread: the paper's 11.05 a thread on 4 threads against ours 5.525 a thread on 4
    assert row["paper Gbit/s"] == "44.2 (4 thr)" and row["paper/ours per thr"] == pytest.approx(2.0)
    (tmp_path / "res").mkdir()
    records.write(ours, tmp_path / "res" / "s.parquet", params={})
    out = report.build([tmp_path / "res"], tmp_path / "rep", title="t")
    md = Path(out["md"]).read_text()
    assert "Seed 002 Figure 10" in md and (tmp_path / "rep" / "seed002_cpu.png").is_file()
    assert IMPLS[0] in md and "44.2 (4 thr)" in md   # the AES-instructions line meets the AES-NI figure


def test_info_lists_the_camellia_implementation():
    from s2mc.cli.cmd_sim import info_rows
    assert native.info()["ciphers"] == {"camellia": IMPLS}
    res = run("info")
    assert res.exit_code == 0 and f"Camellia: {', '.join(IMPLS)}" in res.output, res.output
    facts = {"s2mc": "0", "python": "3", "platform": "p", "cpu_count": 2, "cpu": "c", "cpu_features": [],
             "engines": {"fast": True, "systemc": True}, "cuda": {"built": False, "reason": "r"},
             "native": {"built": True, "impls": [{"name": "ttable", "supported": True}], "best": "ttable",
                        "max_threads": 2, "openssl": "o", "ciphers": {"camellia": []}}}
    assert ("", "Camellia: none this CPU runs") in info_rows(facts)
