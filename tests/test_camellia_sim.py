"""Camellia on the simulated multicore: the Python reference against RFC 3713's vectors and
`cryptography`, the Rz program through the simulator against the RFC's vectors (1 and several cores),
random keys, sizes, modes and partitions against `cryptography` (and CTR against `openssl enc`), the
reference interpreter beside the compiled program, both engines, `s2mc cipher` and its errors."""
from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from s2mc.cli.main import cli
from s2mc.compiler import compile as rz_compile, interpret_source
from s2mc.common.errors import S2mcError
from s2mc.simulator import Machine
from s2mc.workloads import camellia
from s2mc.workloads.cipher_sim import runner
from s2mc.workloads.cipher_sim.runner import AesMismatch, run_cipher
from s2mc.workloads.camellia import reference as ref, tables
from s2mc.workloads.camellia.runner import run_camellia

from aes_oracle import OPENSSL, Camellia, ctr_from_ecb, ecb_ref, needs_openssl
from systemc_helpers import needs_systemc

# RFC 3713, Appendix A: the plaintext is the first 16 bytes of the key in every case.
PLAIN = bytes.fromhex("0123456789abcdeffedcba9876543210")
RFC = {
    "0123456789abcdeffedcba9876543210": "67673138549669730857065648eabe43",
    "0123456789abcdeffedcba98765432100011223344556677": "b4993401b3e996f84ee5cee7d79b09b9",
    "0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff": "9acc237dff16d76c20ef7c919e3a7509",
}


def ecb(key: bytes, data: bytes, direction: str = "enc") -> bytes:
    """Independent of the runner: cryptography's Camellia-ECB called here directly."""
    return ecb_ref(Camellia, key, data, decrypt=direction == "dec")


def ctr(key: bytes, counter: bytes, data: bytes) -> bytes:
    """CTR from cryptography's ECB (cryptography has no Camellia-CTR)."""
    return ctr_from_ecb(Camellia, key, counter, data)


# -- the Python reference -------------------------------------------------------------------------------

@pytest.mark.parametrize("key,want", RFC.items())
def test_reference_rfc3713_vectors(key, want):
    key = bytes.fromhex(key)
    assert ref.encrypt_block(key, PLAIN).hex() == want
    assert ref.decrypt_block(key, bytes.fromhex(want)) == PLAIN


def test_reference_against_cryptography_and_its_own_tables():
    rng = random.Random(3713)
    for _ in range(30):
        key, block = rng.randbytes(rng.choice((16, 24, 32))), rng.randbytes(16)
        assert ref.encrypt_block(key, block) == ecb(key, block)
        assert ref.decrypt_block(key, block) == ecb(key, block, "dec")
        x, k = rng.getrandbits(64), rng.getrandbits(64)
        left, right = ref.f_words(x >> 32, x & ref.MASK32, k >> 32, k & ref.MASK32)
        assert (left << 32) | right == ref.F(x, k)     # the SP-table F is the RFC's F
    assert sorted(ref.SBOX1) == list(range(256))
    assert ref.SBOX1[:4] == (112, 130, 44, 236) and ref.SBOX1[255] == 158   # RFC 3713 §2.4.4


def test_the_programs_tables_are_generated_and_current():
    text = camellia.SOURCE.read_text(encoding="utf-8")
    assert tables.render(text) == text, "run python -m s2mc.workloads.camellia.tables"
    assert "sp1110[256]" in text and "sched256[34]" in text


# -- the program on the simulator -------------------------------------------------------------------

@pytest.mark.parametrize("key,want", RFC.items())
@pytest.mark.parametrize("cores", [1, 3])
def test_rfc_vectors_on_the_simulator(key, want, cores):
    key, want = bytes.fromhex(key), bytes.fromhex(want)
    data = PLAIN * 5                       # five blocks: every core gets some on 3 cores
    r = run_camellia(data, key, cores=cores, check=False)
    assert r.output == want * 5
    assert r.config.workload == f"camellia-{len(key) * 8}-ecb-enc" and r.config.variant == "sp/interleaved"
    back = run_camellia(want * 5, key, cores=cores, direction="dec", check=False)
    assert back.output == data


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), mode=st.sampled_from(("ecb", "ctr")), direction=st.sampled_from(("enc", "dec")),
       key_bytes=st.sampled_from((16, 24, 32)), cores=st.integers(1, 4),
       partition=st.sampled_from(runner.PARTITIONS), ext=st.integers(1, 3), blocks=st.integers(0, 6),
       tail=st.integers(0, 15), key_expansion=st.sampled_from(runner.KEY_EXPANSIONS), opt=st.sampled_from((0, 1)))
def test_random_against_cryptography(seed, mode, direction, key_bytes, cores, partition, ext, blocks, tail,
                                     key_expansion, opt):
    rng = random.Random(seed)
    n = 16 * blocks + (tail if mode == "ctr" else 0)
    data, key, counter = rng.randbytes(n), rng.randbytes(key_bytes), rng.randbytes(16)
    r = run_camellia(data, key, counter, mode=mode, direction=direction, cores=cores, partition=partition,
                     ext_blocks=ext, key_expansion=key_expansion, opt=opt, check=False)
    want = ecb(key, data, direction) if mode == "ecb" else ctr(key, counter, data)
    assert r.output == want


def test_ctr_counter_wraps_at_2_to_128():
    data, key = bytes(range(80)), bytes(range(32))
    counter = bytes.fromhex("ff" * 15 + "fe")
    r = run_camellia(data, key, counter, mode="ctr", cores=2, check=False)
    assert r.output == ctr(key, counter, data)


@needs_openssl
@pytest.mark.parametrize("bits", [128, 192, 256])
def test_ctr_equals_openssl_enc(bits):
    rng = random.Random(bits)
    data, key, iv = rng.randbytes(100), rng.randbytes(bits // 8), rng.randbytes(16)
    proc = subprocess.run([OPENSSL, "enc", f"-camellia-{bits}-ctr", "-K", key.hex(), "-iv", iv.hex()],
                          input=data, capture_output=True, check=True)
    assert run_camellia(data, key, iv, mode="ctr", cores=3, partition="contiguous", check=False).output == proc.stdout


def test_key_expansion_on_the_simulator_writes_the_references_subkeys():
    rng = random.Random(5)
    for bits in (128, 192, 256):
        key = rng.randbytes(bits // 8)
        for decrypt in (0, 1):
            m = Machine(runner.program("sp"), cores=2)
            m.write("keybits", [bits])
            m.write("key", runner._to_words(key, "sp"))
            m.write("decrypt", [decrypt])
            m.write("nwords", [0])
            m.write("src", [m.program.address_of("__heap")])
            m.write("dst", [m.program.address_of("__heap")])
            m.run()
            want = ref.round_key_words(key, bool(decrypt))
            assert [w & 0xFFFFFFFF for w in m.read("ek", len(want))] == want


def _with_key(text: str, key_hex: str) -> str:
    words = ", ".join(f"0x{key_hex[i:i + 8]}" for i in range(0, len(key_hex), 8))
    return (text.replace("keybits = 128", f"keybits = {len(key_hex) * 4}")
                .replace("key[8] = {0x01234567, 0x89abcdef, 0xfedcba98, 0x76543210}", f"key[8] = {{{words}}}"))


@pytest.mark.parametrize("key", list(RFC))
def test_interpreter_and_compiled_program_agree_on_one_block(key):
    # the program's stand-alone demo encrypts PLAIN with the key of its initialiser and prints it
    text = _with_key(camellia.SOURCE.read_text(encoding="utf-8"), key)
    want = bytes.fromhex(RFC[key])
    printed = " ".join(str(int.from_bytes(want[i:i + 4], "big", signed=True)) for i in range(0, 16, 4)) + "\n"
    assert interpret_source(text, filename="camellia.rz") == printed
    for opt in (0, 1):
        r = Machine(rz_compile(text, opt=opt, filename="camellia.rz").program, cores=2).run()
        assert r.output == printed


@pytest.mark.parametrize("cores", [pytest.param(3, marks=needs_systemc)])
def test_fast_and_systemc_engines_count_the_same(cores):
    data, key, counter = bytes(range(40)), bytes(range(24)), bytes(16)
    fast = run_camellia(data, key, counter, mode="ctr", cores=cores, engine="fast")
    sysc = run_camellia(data, key, counter, mode="ctr", cores=cores, engine="systemc")
    assert sysc.output == fast.output
    assert sysc.result.cores == fast.result.cores
    assert (sysc.result.cycles, sysc.result.events) == (fast.result.cycles, fast.result.events)


def test_records_name_the_cipher():
    r = run_camellia(bytes(32), bytes(16), cores=2)
    rows = runner.record_rows(r, "r1")
    assert {row["cipher"] for row in rows} == {"camellia"}
    assert {row["workload"] for row in rows} == {"camellia-128-ecb-enc"}
    assert runner.summary(r)["cipher"] == "camellia"
    aes = runner.run_aes(bytes(32), bytes(16), cores=1)
    assert {row["cipher"] for row in runner.record_rows(aes, "r2")} == {"aes"}


# -- errors -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs,match", [
    (dict(key=bytes(15)), "a Camellia key is 16, 24 or 32 bytes, not 15"),
    (dict(data=bytes(17)), "ECB needs whole 16-byte blocks"),
    (dict(style="bytes"), "unknown style 'bytes' \\(choose sp\\)"),
    (dict(calibration="seed003"), "calibration seed003 is fitted for the bytes style"),
    (dict(cipher="des"), "unknown cipher 'des' \\(choose aes, camellia\\)"),
    (dict(counter=bytes(8), mode="ctr"), "the CTR counter block is 16 bytes, not 8"),
])
def test_bad_input_is_one_error(kwargs, match):
    args = dict(data=bytes(32), key=bytes(16), cipher="camellia")
    args.update(kwargs)
    with pytest.raises(S2mcError, match=match):
        run_cipher(args.pop("data"), args.pop("key"), args.pop("counter", None), **args)


def test_a_wrong_result_is_a_mismatch_naming_the_byte(monkeypatch):
    real = runner.reference

    def off_by_one(data, key, mode, direction, counter, cipher="aes"):
        out = bytearray(real(data, key, mode, direction, counter, cipher))
        out[21] ^= 1
        return bytes(out)
    monkeypatch.setattr(runner, "reference", off_by_one)
    with pytest.raises(AesMismatch, match=r"Camellia mismatch: camellia-128-ecb-enc sp/interleaved on 2 cores, "
                                          r"32 bytes: byte 21 \(block 1\)"):
        run_camellia(bytes(32), bytes(16), cores=2)


# -- s2mc cipher ------------------------------------------------------------------------------------------

def _cli(*args):
    return CliRunner().invoke(cli, list(args))


def test_cipher_command_json_and_records(tmp_path):
    out = tmp_path / "c.csv"
    res = _cli("cipher", "--cipher", "camellia,aes", "--style", "sp,ttable", "--cores", "1,2", "--bytes", "32",
               "--mode", "ctr", "--key", "000102030405060708090a0b0c0d0e0f", "--json", "-q", "--out", str(out))
    assert res.exit_code == 0, res.output
    assert res.stdout.startswith("{"), (res.stdout[:500], res.stderr)
    runs = json.loads(res.stdout)["runs"]
    assert [(r["cipher"], r["style"], r["cores"]) for r in runs] == [
        ("camellia", "sp", 1), ("camellia", "sp", 2), ("aes", "ttable", 1), ("aes", "ttable", 2)]
    assert all(r["checked"] for r in runs)
    from s2mc.analysis import records
    df = records.read(out)
    assert set(df["cipher"]) == {"aes", "camellia"}
    assert set(df.loc[df["cipher"] == "camellia", "workload"]) == {"camellia-128-ctr-enc"}
    assert records.read_manifest(records.manifest_path_for(out))["params"]["ciphers"] == ["camellia", "aes"]


def test_cipher_aes_is_s2mc_aes():
    a = _cli("aes", "--cores", "1,2", "--bytes", "32", "--json", "-q")
    c = _cli("cipher", "--cipher", "aes", "--cores", "1,2", "--bytes", "32", "--json", "-q")
    strip = lambda res: [{k: v for k, v in r.items() if k != "sim_seconds"} for r in json.loads(res.stdout)["runs"]]  # noqa: E731
    assert a.exit_code == c.exit_code == 0 and strip(a) == strip(c)


@pytest.mark.parametrize("args,code,message", [
    (["--cipher", "des"], 2, "unknown value 'des' (choose aes, camellia)"),
    (["--cipher", "camellia", "--style", "bytes"], 1, "--style bytes: none of them is a style of camellia (choose sp)"),
    (["--cipher", "camellia", "--bytes", "17"], 1, "ECB needs whole 16-byte blocks"),
    (["--cipher", "camellia", "--preset", "seed003"], 1, "none of them is a style of camellia"),
    (["--cipher", "camellia", "--style", "sp,ttable"], 1, "--style ttable is not a style of camellia (camellia: sp)"),
    (["--style", "sp"], 1, "--style sp: none of them is a style of aes (choose bytes, ttable)"),
    (["--cipher", "camellia", "--key", "00" * 15], 2, "--key"),
])
def test_cipher_command_errors_are_one_line(args, code, message):
    res = _cli("cipher", "--cores", "1", "--bytes", "16", "-q", *args)
    assert res.exit_code == code
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2mc") and message in lines[0], res.stderr
    assert "Traceback" not in res.output


def test_an_error_in_a_real_process_is_one_line_and_exit_1():
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "cipher", "--cipher", "camellia", "--style", "bytes",
                           "--cores", "1", "--bytes", "16", "-q"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr == "s2mc: error: --style bytes: none of them is a style of camellia (choose sp)\n"


def test_the_docs_cycles_per_block_are_what_the_simulator_counts():
    """docs/camellia-on-s2.md's table (the 128-bit rows with a 32-bit program): cycles are
    deterministic, so the page's numbers are recomputed here."""
    from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid
    text = (Path(__file__).resolve().parents[1] / "docs" / "camellia-on-s2.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip(): [float(c) for c in line.split("|")[2:6]]
            for line in text.splitlines()
            if re.match(r"\| (AES|Camellia)-\d+, (bytes|ttable|sp) \|", line)}
    grid = AesGrid(cores=(1, 2, 3, 4), sizes=(1024,), styles=("ttable", "sp"), ciphers=("aes", "camellia"))
    runs, _ = run_grid(grid, new_run_id=lambda: "doc")
    for r in runs:
        label = f"{'AES' if r.config.cipher == 'aes' else 'Camellia'}-128, {r.config.style}"
        assert rows[label][r.config.cores - 1] == round(r.result.cycles / 64, 1), (label, r.config.cores)


def test_the_camellia_experiment_spec_names_both_ciphers():
    from s2mc.experiments import registry as experiments
    (grid,) = experiments.get("camellia_scaling").grids_for()
    assert grid.ciphers == ("aes", "camellia") and grid.styles == ("ttable", "sp")
    assert {(c.get("cipher", "aes"), c["style"]) for c in grid.configs()} == {("aes", "ttable"), ("camellia", "sp")}


def test_program_refuses_a_variant_camellia_does_not_have():
    with pytest.raises(S2mcError, match="unknown key expansion 'all' \\(choose core0, per-core\\)"):
        runner.program("sp", 1, "all")
    with pytest.raises(S2mcError, match="calibration seed003 is fitted for the bytes style at -O0"):
        runner.program("sp", 0, "per-core", "seed003")
    with pytest.raises(S2mcError, match="unknown style 'rot13' \\(choose bytes, ttable, sp\\)"):
        runner.program("rot13")
