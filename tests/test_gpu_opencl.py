"""The OpenCL backend on whatever OpenCL device is here: PoCL on the CPU in CI
(`make setup` installs it), a GPU's OpenCL elsewhere.

Oracles: Python `cryptography` (AES ECB/CTR, Camellia ECB; Camellia-CTR as its ECB on the counter
blocks, which we build here), the FIPS-197 and RFC 3713 vectors, and `openssl enc` for whole files.
Each process builds the kernels once (the driver keeps one program per device and process), so the
many small cases below cost milliseconds each after the first.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from aes_oracle import OPENSSL, Camellia, ctr_from_ecb, ecb_ref, needs_openssl, rnd
from s2mc.cli.main import cli
from s2mc.gpu import opencl
from s2mc.common.errors import S2mcError
from s2mc.common.units import human_size

S2MC = Path(sys.executable).with_name("s2mc")
KEY = {128: bytes(range(16)), 192: bytes(range(24)), 256: bytes(range(32))}
ALG = {"aes": algorithms.AES, "camellia": Camellia}

needs_device = pytest.mark.skipif(not opencl.available(), reason=f"no OpenCL device: {opencl.status()['reason']}")


def ref_ecb(cipher: str, key: bytes, data: bytes, decrypt: bool = False) -> bytes:
    return ecb_ref(ALG[cipher], key, data, decrypt)


def ref_ctr(cipher: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    """CTR from the cipher's ECB on the counter blocks iv, iv+1, ... mod 2^128 (SP 800-38A), so the
    counter arithmetic is ours here, independent of the backend's."""
    return ctr_from_ecb(ALG[cipher], key, iv, data)


def test_ctr_oracle_matches_cryptography_for_aes():
    # the CTR helper itself against cryptography's own AES-CTR (Camellia-CTR has none there)
    iv = bytes.fromhex("f0f1f2f3f4f5f6f7ffffffffffffffff")
    data = rnd(1000, 1)
    assert ref_ctr("aes", KEY[128], iv, data) == (Cipher(algorithms.AES(KEY[128]), modes.CTR(iv)).encryptor()
                                                  .update(data))


@needs_device
def test_known_answer_vectors():
    # FIPS-197 Appendix C.1 and RFC 3713 Appendix A (128-bit key)
    aes = opencl.crypt(bytes.fromhex("00112233445566778899aabbccddeeff"), KEY[128], op="ecb-enc")
    assert aes.hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    k = bytes.fromhex("0123456789abcdeffedcba9876543210")
    cam = opencl.crypt(k, k, cipher="camellia", op="ecb-enc")
    assert cam.hex() == "67673138549669730857065648eabe43"
    assert opencl.crypt(cam, k, cipher="camellia", op="ecb-dec") == k


@needs_device
@pytest.mark.parametrize("cipher", ["aes", "camellia"])
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_ecb_both_ways(cipher, bits):
    key = rnd(bits // 8, bits)
    data = rnd(16 * 1000, 2)
    enc = opencl.crypt(data, key, cipher=cipher, op="ecb-enc")
    assert enc == ref_ecb(cipher, key, data)
    assert opencl.crypt(enc, key, cipher=cipher, op="ecb-dec", segment=4096) == data


@needs_device
@pytest.mark.parametrize("cipher", ["aes", "camellia"])
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("size", [0, 1, 15, 16, 17, 4097, 40003])
def test_ctr_odd_sizes(cipher, bits, size):
    key, iv = rnd(bits // 8, size), rnd(16, size + 1)
    data = rnd(size, 3)
    assert opencl.crypt(data, key, iv, cipher=cipher) == ref_ctr(cipher, key, iv, data)


@needs_device
@pytest.mark.parametrize("cipher", ["aes", "camellia"])
@pytest.mark.parametrize("iv_hex", [
    "0000000000000000fffffffffffffffd",   # the low 64 bits carry into the high half (2^64)
    "fffffffffffffffffffffffffffffffe",   # the whole counter wraps to zero (2^128)
    "00000000ffffffffffffffffffffff00",
])
@pytest.mark.parametrize("segment", [0, 32, 4096])
def test_ctr_counter_carries_across_segments(cipher, iv_hex, segment):
    # segments of 2 blocks put a carry between segments as well as inside one
    iv = bytes.fromhex(iv_hex)
    data = rnd(16 * 300 + 5, 4)
    assert opencl.crypt(data, KEY[256], iv, cipher=cipher, segment=segment) == ref_ctr(cipher, KEY[256], iv, data)


@needs_device
def test_segments_and_launch_shapes_do_not_change_the_output():
    data, iv = rnd(100_000, 5), rnd(16, 6)
    want = ref_ctr("aes", KEY[128], iv, data)
    info = {}
    assert opencl.crypt(data, KEY[128], iv, segment=1024, info=info) == want
    assert info["segments"] == (len(data) + 1023) // 1024 and info["segment_bytes"] == 1024
    from s2mc.gpu import _opencl
    for local, groups in [(1, 1), (8, 3), (256, 0), (64, 1000)]:
        out = bytearray(len(data))
        _opencl.crypt(data, out, KEY[128], iv, local_size=local, max_groups=groups, segment_bytes=4096)
        assert bytes(out) == want, (local, groups)


@needs_device
@needs_openssl
@pytest.mark.parametrize("cipher,bits,mode", [("aes", 128, "ctr"), ("aes", 192, "ctr"), ("camellia", 256, "ctr"),
                                              ("camellia", 128, "ecb"), ("aes", 256, "ecb")])
def test_file_round_trip_equals_openssl(tmp_path, cipher, bits, mode, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path / "cache"))
    src, enc, dec = tmp_path / "in.bin", tmp_path / "out.enc", tmp_path / "back.bin"
    src.write_bytes(rnd(70_000 + (3 if mode == "ctr" else 0) - (70_000 % 16 if mode == "ecb" else 0), 7))
    key, iv = rnd(bits // 8, 8).hex(), rnd(16, 9).hex()
    args = ["--key", key] + (["--iv", iv] if mode == "ctr" else [])
    run = CliRunner().invoke(cli, ["encrypt", "--in", str(src), "--out", str(enc), "--backend", "opencl",
                                   "--cipher", cipher, "--mode", mode, "--segment", "4K", "--chunk-bytes", "16K",
                                   "-q", *args])
    assert run.exit_code == 0, run.output
    ossl = [OPENSSL, "enc", f"-{cipher}-{bits}-{mode}", "-K", key] + (["-iv", iv] if mode == "ctr" else ["-nopad"])
    assert subprocess.run(ossl + ["-in", str(src)], capture_output=True, check=True).stdout == enc.read_bytes()
    run = CliRunner().invoke(cli, ["decrypt", "--in", str(enc), "--out", str(dec), "--backend", "opencl",
                                   "--cipher", cipher, "--mode", mode, "-q", *args])
    assert run.exit_code == 0, run.output
    assert dec.read_bytes() == src.read_bytes()
    # the default --segment auto calibrated once and stored its choice
    assert opencl.cache_path().exists()


@needs_device
def test_empty_file(tmp_path):
    (tmp_path / "e").write_bytes(b"")
    n = opencl.encrypt_file(tmp_path / "e", tmp_path / "o", KEY[128], bytes(16), segment=4096)
    assert n == 0 and (tmp_path / "o").read_bytes() == b""


@needs_device
def test_local_memory_tables_the_gpu_path():
    # CPU devices read the tables from __global memory; GPUs copy them into __local memory. Build
    # the __local variant on this device too (a fresh process: one program per process), so that CI
    # checks the code a GPU runs.
    script = (
        "import sys; from s2mc.gpu import opencl\n"
        "k = bytes(range(32)); iv = bytes.fromhex('0000000000000000ffffffffffffffff'); d = bytes(range(256)) * 41\n"
        "for c in ('aes', 'camellia'):\n"
        "    for n in (16, 24, 32):\n"
        "        print(opencl.crypt(d, k[:n], iv, cipher=c, segment=1024).hex())\n"
        "        e = opencl.crypt(d[:4096], k[:n], cipher=c, op='ecb-enc')\n"
        "        print(e.hex(), opencl.crypt(e, k[:n], cipher=c, op='ecb-dec').hex())\n")
    env = dict(os.environ, S2MC_OPENCL_BUILD_OPTIONS="-DS2MC_GLOBAL_TABLES=0")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300,
                         check=True).stdout.split()
    k, iv, d = bytes(range(32)), bytes.fromhex("0000000000000000ffffffffffffffff"), bytes(range(256)) * 41
    want = []
    for c in ("aes", "camellia"):
        for n in (16, 24, 32):
            want += [ref_ctr(c, k[:n], iv, d).hex(), ref_ecb(c, k[:n], d[:4096]).hex(), d[:4096].hex()]
    assert out == want


# -- seed 004's segment sizing ---------------------------------------------------------------------

def test_choose_picks_the_smallest_near_best_rate_under_seed_004s_limit():
    # rates 1, 2, 2.5, 2.45 MB/s: 4M is best, 16M within 5 % but larger; 1M is 20 % below
    measured = [(1 << 20, 1.0), (2 << 20, 1.0), (4 << 20, 1.6), (16 << 20, 6.53)]
    seg, limit = opencl.choose(measured, launch_limit_s=100)
    assert seg == 4 << 20
    best = (4 << 20) / 1.6
    assert limit == int(best * 0.9 * 100) // 16 * 16
    # with the paper's 2 s watchdog the limit (2.5 MiB/s x 1.8 s = 4.5 MiB) still allows 4M...
    assert opencl.choose(measured)[0] == 4 << 20
    # ...but a 1 s limit (2.25 MiB) caps it, rounded down to 16 bytes
    seg, limit = opencl.choose(measured, launch_limit_s=1.0)
    assert seg == limit == int(best * 0.9) // 16 * 16 < 4 << 20
    with pytest.raises(S2mcError, match="measured nothing"):
        opencl.choose([])
    # a choice capped by the limit is not a candidate: the table still shows it
    cal = opencl.Calibration(device="d", cipher="aes", op="ctr", key_bits=128, budget_s=1, segment_bytes=seg,
                             measured=measured, limit_bytes=limit)
    assert cal.table().splitlines()[-1] == f"| {human_size(seg)}B **chosen** (seed 004's limit) | – | – |"


def test_calibrate_stops_at_the_budget_and_stores(tmp_path, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path))
    calls = []

    def timer(n):   # 1 MB/s plus 50 ms per call: larger segments approach 1 MB/s
        calls.append(n)
        return 0.05 + n / 1e6

    cal = opencl.calibrate("aes", "ctr", 128, budget_s=4.0, candidates=(1 << 16, 1 << 18, 1 << 20, 1 << 22),
                           timer=timer, reps=2, store=True)
    # 64K: 2 x 0.1155 s; 256K, predicted from 64K's rate 2 x 0.46 s, fits; 1M, predicted 2 x 1.25 s,
    # fits in what is left (4 - 0.231 - 0.624 = 3.1 s); 4M, predicted 2 x 4.4 s, does not.
    assert [n for n, _ in cal.measured] == [1 << 16, 1 << 18, 1 << 20]
    assert calls == [1 << 16] * 2 + [1 << 18] * 2 + [1 << 20] * 2
    # rates 567, 840, 954 KB/s: 1M is the best and 256K more than 5 % slower
    assert cal.segment_bytes == 1 << 20
    stored = json.loads(opencl.cache_path().read_text())
    (entry,) = stored.values()
    assert entry["segment_bytes"] == 1 << 20 and entry["cipher"] == "aes"


def test_argument_errors_before_any_device():
    """What the Python side checks itself, each one line naming the backend (no device needed)."""
    timer = lambda n: 1.0   # noqa: E731 - never reached
    for cipher, op, bits in [("aes", "ctr", 100), ("des", "ctr", 128), ("aes", "cbc", 128)]:
        with pytest.raises(S2mcError, match=f"opencl: cannot calibrate {cipher}-{bits}-{op}"):
            opencl.calibrate(cipher, op, bits, timer=timer, store=False)
    with pytest.raises(S2mcError, match="opencl: the calibration budget must be positive, not 0"):
        opencl.calibrate("aes", "ctr", 128, budget_s=0, timer=timer, store=False)
    with pytest.raises(S2mcError, match=r"opencl: unknown measure 'keystream' \(expected device, host\)"):
        opencl.bench("aes", "keystream", nbytes=16)
    with pytest.raises(S2mcError, match="opencl: unknown cipher or op 'aes' 'cbc'"):
        opencl.bench("aes", "device", nbytes=16, op="cbc")
    with pytest.raises(S2mcError, match=r"opencl: unknown op 'cbc' \(expected ctr, ecb-enc, ecb-dec\)"):
        opencl.crypt(b"x", KEY[128], bytes(16), op="cbc")
    with pytest.raises(S2mcError, match="opencl: piece_bytes must be a positive multiple of 16, not 100"):
        opencl.encrypt_file("in", "out", KEY[128], bytes(16), piece_bytes=100)


@needs_device
def test_calibration_on_the_device_is_reused(tmp_path, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path))
    assert opencl.stored_segment("camellia", "ctr", 128) is None
    cal = opencl.calibrate("camellia", "ctr", 128, budget_s=0.3, candidates=(4096, 16384, 65536))
    assert cal.measured and cal.segment_bytes in (4096, 16384, 65536)
    assert all(s > 0 for _, s in cal.measured)
    assert opencl.stored_segment("camellia", "ctr", 128) == cal.segment_bytes
    # auto takes the stored value without timing anything; calibrate times again
    monkeypatch.setattr(opencl, "calibrate", lambda *a, **k: pytest.fail("calibrated again"))
    assert opencl.resolve_segment("auto", cipher="camellia", op="ctr", key_bits=128) == cal.segment_bytes
    # another key size or op has its own entry
    assert opencl.stored_segment("camellia", "ctr", 256) is None


@needs_device
def test_cli_calibrate_prints_the_candidates(tmp_path, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path))
    run = CliRunner().invoke(cli, ["gpu", "--backend", "opencl", "--calibrate", "--budget", "0.2"])
    assert run.exit_code == 0, run.output
    assert "**chosen**" in run.stdout and "| 64KB" in run.stdout and str(tmp_path) in run.stdout


@needs_device
def test_cli_grid_records(tmp_path, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path))
    out = tmp_path / "r.csv"
    run = CliRunner().invoke(cli, ["gpu", "--backend", "opencl", "--bytes", "64K", "--reps", "1", "--segment", "16K",
                                   "--cipher", "camellia", "--out", str(out), "-q"])
    assert run.exit_code == 0, run.output
    import pandas as pd
    df = pd.read_csv(out)
    assert set(df["variant"]) == {"opencl/device-resident", "opencl/host-segmented", "opencl/host-overlap-q2"}
    assert set(df["source"]) == {"opencl"} and set(df["workload"]) == {"camellia-128-ctr"}
    assert (df.loc[df.metric == "bytes_per_second", "value"] > 0).all()


# -- errors: one line each ---------------------------------------------------------------------------

@needs_device
def test_api_errors():
    with pytest.raises(S2mcError, match="multiple of 16"):
        opencl.crypt(b"x" * 17, KEY[128], op="ecb-enc")
    with pytest.raises(S2mcError, match="key must be 16, 24 or 32"):
        opencl.crypt(b"x", b"k" * 15, bytes(16))
    with pytest.raises(S2mcError, match="iv must be 16"):
        opencl.crypt(b"x", KEY[128], b"short")
    with pytest.raises(S2mcError, match="unknown cipher"):
        opencl.crypt(b"x", KEY[128], bytes(16), cipher="des")
    with pytest.raises(S2mcError, match="segment must be a multiple of 16"):
        opencl.crypt(b"x", KEY[128], bytes(16), segment=17)
    with pytest.raises(S2mcError, match="segment must be a size"):
        opencl.crypt(b"x", KEY[128], bytes(16), segment="big")
    with pytest.raises(S2mcError, match="multiple of 16 for ECB"):
        opencl.bench("aes", "device", nbytes=17, op="ecb-enc", reps=1)
    assert opencl.bench("aes", "device", nbytes=17, reps=1)["bytes"] == 17   # CTR takes any length
    with pytest.raises(S2mcError, match="no OpenCL device 99"):
        opencl.crypt(b"x", KEY[128], bytes(16), device=99)


@needs_device
def test_resource_limits_are_one_line():
    dev = opencl.devices()[opencl.status()["device"]]
    # more than one allocation may hold: refused before allocating anything
    with pytest.raises(S2mcError, match="can allocate at once") as e:
        opencl.bench("aes", "device", nbytes=(dev["max_alloc_bytes"] // 16 + 1) * 16)
    assert "\n" not in str(e.value)
    from s2mc.gpu import _opencl
    with pytest.raises(RuntimeError, match="local size .* is more than this kernel allows"):
        _opencl.crypt(b"x" * 16, bytearray(16), KEY[128], bytes(16), local_size=1 << 20)
    with pytest.raises(RuntimeError, match="output buffer is 15 bytes, input 16"):
        _opencl.crypt(b"x" * 16, bytearray(15), KEY[128], bytes(16))


@pytest.mark.parametrize("args,needle", [
    (["gpu", "--backend", "opencl", "--segment", "17"], "'17' is not a multiple of 16"),
    (["gpu", "--backend", "opencl", "--segment", "huge"], "or auto, calibrate"),
    (["gpu", "--backend", "opencl", "--budget", "0"], "out of range"),
    (["gpu", "--backend", "opencl", "--threads", "64"], "--threads is for --backend cuda"),
    (["gpu", "--backend", "opencl", "--warmup", "2"], "--warmup is for --backend cuda"),
    (["gpu", "--backend", "opencl", "--measure", "keystream"], "keystream is for --backend cuda"),
    (["gpu", "--calibrate"], "--calibrate is for --backend opencl"),
    (["encrypt", "--in", "x", "--out", "y", "--key", "00" * 16, "--iv", "00" * 16, "--segment", "1M"],
     "--segment is for --backend opencl"),
    (["encrypt", "--in", "x", "--out", "y", "--key", "00" * 16, "--iv", "00" * 16, "--backend", "opencl",
      "--segment", "2G"], "out of range"),
])
def test_cli_usage_errors(args, needle):
    run = CliRunner().invoke(cli, args)
    assert run.exit_code == 2, run.output
    assert needle in run.stderr and len(run.stderr.splitlines()) == 1


def _s2mc(args, env_extra, tmp_path):
    env = dict(os.environ, S2MC_CACHE_DIR=str(tmp_path / "cache"), **env_extra)
    return subprocess.run([str(S2MC), *args], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)


def test_no_platform_is_one_line_everywhere(tmp_path):
    # The ICD loader reads OCL_ICD_VENDORS when it starts, so each check is a fresh process. Not
    # every loader honours it (NVIDIA's still finds its platform), so S2MC_OPENCL_PLATFORM, which
    # s2mc applies itself, also rules out every platform: no platform is left on any machine.
    empty = tmp_path / "vendors"
    empty.mkdir()
    (tmp_path / "in").write_bytes(b"abc")
    env = {"OCL_ICD_VENDORS": str(empty), "S2MC_OPENCL_PLATFORM": "no-such-platform"}
    for args, exit_code in [(["encrypt", "--in", "in", "--out", "o", "--key", "00" * 16, "--iv", "00" * 16,
                              "--backend", "opencl"], 1),
                            (["gpu", "--backend", "opencl", "--bytes", "16K"], 1)]:
        p = _s2mc(args, env, tmp_path)
        assert p.returncode == exit_code, p.stderr
        assert p.stderr.count("\n") == 1 and p.stderr.startswith("s2mc") and "no OpenCL platform" in p.stderr
        assert "Traceback" not in p.stderr
    assert not (tmp_path / "o").exists()
    p = _s2mc(["info"], env, tmp_path)
    assert p.returncode == 0
    (line,) = [x for x in p.stdout.splitlines() if x.startswith("OpenCL")]
    # which one the line names depends on the loader: the empty ICD folder, or the platforms found
    assert "no OpenCL platform" in line and (str(empty) in line or "S2MC_OPENCL_PLATFORM='no-such-platform'" in line)


@needs_device
def test_a_platform_choice_matching_nothing_names_the_platforms_found(tmp_path):
    names = sorted({d["platform"] for d in opencl.devices()})
    p = _s2mc(["info"], {"S2MC_OPENCL_PLATFORM": "no-such-platform"}, tmp_path)
    (line,) = [x for x in p.stdout.splitlines() if x.startswith("OpenCL")]
    assert "no OpenCL platform matching S2MC_OPENCL_PLATFORM='no-such-platform'" in line
    assert all(n in line for n in names)
    # a part of a real platform's name, in any case, keeps that platform's devices
    p = _s2mc(["info"], {"S2MC_OPENCL_PLATFORM": names[0][:4].upper()}, tmp_path)
    assert "no OpenCL platform" not in p.stdout and names[0] in p.stdout


@needs_device
def test_build_failure_is_one_line_with_the_log(tmp_path):
    bad = tmp_path / "bad.cl"
    bad.write_text(opencl._load().kernel_source().replace("inline uint4 load_block", "inline uint4 load_block(", 1))
    (tmp_path / "in").write_bytes(b"abc")
    p = _s2mc(["encrypt", "--in", "in", "--out", "o", "--key", "00" * 16, "--iv", "00" * 16, "--backend", "opencl",
               "--segment", "4K"], {"S2MC_OPENCL_SOURCE": str(bad)}, tmp_path)
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and "kernel build failed on" in p.stderr and "error" in p.stderr.split(":", 3)[-1]
    p = _s2mc(["encrypt", "--in", "in", "--out", "o", "--key", "00" * 16, "--iv", "00" * 16, "--backend", "opencl",
               "--segment", "4K"], {"S2MC_OPENCL_SOURCE": str(tmp_path / "missing.cl")}, tmp_path)
    assert p.returncode == 1 and "cannot read the kernel source" in p.stderr and p.stderr.count("\n") == 1


@needs_device
def test_bad_device_index_is_one_line(tmp_path):
    (tmp_path / "in").write_bytes(b"abc")
    p = _s2mc(["encrypt", "--in", "in", "--out", "o", "--key", "00" * 16, "--iv", "00" * 16, "--backend", "opencl",
               "--segment", "4K"], {"S2MC_OPENCL_DEVICE": "99"}, tmp_path)
    assert p.returncode == 1 and "S2MC_OPENCL_DEVICE=99" in p.stderr and p.stderr.count("\n") == 1


def test_status_without_extension(monkeypatch):
    monkeypatch.setattr(opencl, "_ext", None)
    monkeypatch.setattr(opencl, "_ext_error", "libOpenCL.so.1: cannot open shared object file")
    st = opencl.status()
    assert st == {"built": False, "devices": [], "device": None,
                  "reason": "OpenCL loader missing (libOpenCL.so.1 not found; install ocl-icd-libopencl1)"}
    with pytest.raises(S2mcError, match="^opencl: OpenCL loader missing"):
        opencl.crypt(b"", KEY[128], bytes(16), segment=16)


@needs_device
def test_info_lists_the_devices():
    run = CliRunner().invoke(cli, ["info", "--json"])
    facts = json.loads(run.stdout)
    devs = facts["opencl"]["devices"]
    assert devs and {"name", "type", "compute_units", "global_mem_bytes", "local_mem_bytes"} <= set(devs[0])
    run = CliRunner().invoke(cli, ["info"])
    assert any(line.startswith("OpenCL") and devs[0]["name"] in line for line in run.stdout.splitlines())


# -- seed 004's GPU column beside our OpenCL kernels (s2mc.analysis.seeds_native) -----------------------

def test_seed004_table_has_the_opencl_column():
    from s2mc.analysis import records, seeds, seeds_native
    ref = seeds.load_reference()
    rows = [dict(run_id="r", experiment="seed004_ours", source=src, platform="dev", workload="aes-128-ecb-enc",
                 variant=v, engine=src, cores=1, bytes=1024, metric="seconds", value=secs)
            for src, v, secs in [("native", "sequential", 1e-5), ("native", "parallel", 2e-5),
                                 ("opencl", "opencl", 2.35e-3)]]
    ours = records.make_records(rows)
    t = seeds_native.seed004_beside(ours, ref).set_index("bytes")
    assert t.loc[1024, "paper GPU ms"] == pytest.approx(23.5)      # seed 004 Table 2, 1 KB
    assert t.loc[1024, "ours OpenCL ms"] == pytest.approx(2.35)
    assert t.loc[1024, "paper GPU/ours OpenCL"] == pytest.approx(10.0)
    text = " ".join(seeds_native.summary_sentences(ours, ref))
    assert "our portable OpenCL kernels on dev" in text and "paper/ours 10-10x (1K-1K" in text
    # without OpenCL rows the table keeps its old columns
    assert "ours OpenCL ms" not in seeds_native.seed004_beside(ours[ours.source == "native"], ref)


@needs_device
def test_seed004_opencl_measure(tmp_path, monkeypatch):
    monkeypatch.setenv("S2MC_CACHE_DIR", str(tmp_path))
    opencl.calibrate("aes", "ecb-enc", 128, budget_s=0.2, candidates=(4096, 16384))
    from s2mc.experiments import seeds_native
    df = seeds_native.measure_seed004_opencl([1024, 65536], min_seconds=0, min_reps=1)
    assert list(df["bytes"]) == [1024, 65536] and set(df["source"]) == {"opencl"} and (df["value"] > 0).all()


@needs_device
def test_file_errors_come_before_any_calibration(tmp_path, monkeypatch):
    monkeypatch.setattr(opencl, "calibrate", lambda *a, **k: pytest.fail("calibrated before checking the input"))
    with pytest.raises(S2mcError, match="input file does not exist"):
        opencl.encrypt_file(tmp_path / "missing", tmp_path / "o", KEY[128], bytes(16))
    (tmp_path / "odd").write_bytes(b"x" * 17)
    with pytest.raises(S2mcError, match="not a multiple of 16"):
        opencl.encrypt_file(tmp_path / "odd", tmp_path / "o", KEY[128], None, mode="ecb")
    assert not (tmp_path / "o").exists()


def test_encrypt_segment_option_states_the_backend_limits():
    """s2mc encrypt writes --segment's range out (importing s2mc.gpu.opencl would slow its start):
    it must be the backend's own."""
    from s2mc.cli.main import all_commands
    for name in ("encrypt", "decrypt"):
        (seg,) = [p for p in all_commands()[name].params if p.name == "segment"]
        assert (seg.type.lo, seg.type.hi, seg.type.words) == (opencl.MIN_SEGMENT, opencl.MAX_SEGMENT,
                                                              opencl.SEGMENT_CHOICES)


@pytest.mark.parametrize("segment, stored, piece", [
    ("auto", 256 << 20, opencl.FILE_PIECE_BYTES),   # seed 004's segment on an H200: capped
    ("auto", 64 << 10, 64 << 10),                   # PoCL's stored 64 KB: as stored
    (1 << 30, None, 1 << 30),                       # a size the user gave: as given
])
def test_the_rings_piece_is_a_capped_auto_segment(tmp_path, monkeypatch, segment, stored, piece):
    """Each ring slot is a mapped buffer made per run: an auto segment of 256 MB made 2 GiB of them
    on the H200 (1.17 s to make). The piece the FileRing gets, recorded by a stand-in."""
    made = []

    class Ring:
        def __init__(self, *args, **kwargs):
            made.append(kwargs["slot_bytes"])
            raise RuntimeError("stand-in ring")

    ext = type("Ext", (), {"FileRing": Ring})
    monkeypatch.setattr(opencl, "_require", lambda: ext)
    monkeypatch.setattr(opencl, "stored_segment", lambda *a, **k: stored)
    src = tmp_path / "in.bin"
    src.write_bytes(bytes(4096))
    with pytest.raises(S2mcError, match="stand-in ring"):
        opencl.encrypt_file(src, tmp_path / "out.bin", bytes(16), bytes(16), segment=segment)
    assert made == [piece]
    assert not (tmp_path / "out.bin").exists()
