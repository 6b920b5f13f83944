"""The AES runner: random keys and data against `cryptography`, round trips, lengths, memory
limits, the mismatch check itself, partitions really splitting the work, and the programs'
stand-alone FIPS-197 demo."""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2mc.common.errors import S2mcError
from s2mc.workloads import cipher_sim as aes
from s2mc.workloads.cipher_sim import AesMismatch, run_aes

ROOT = Path(__file__).resolve().parents[1]
S2MC = str(Path(sys.executable).with_name("s2mc"))


def _ref(data, key, mode, direction="enc", counter=None):
    """Independent of the runner: cryptography called here directly."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    c = Cipher(algorithms.AES(key), modes.ECB() if mode == "ecb" else modes.CTR(counter))
    op = c.decryptor() if (mode, direction) == ("ecb", "dec") else c.encryptor()
    return op.update(data) + op.finalize()


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), style=st.sampled_from(aes.STYLES),
       mode=st.sampled_from(aes.MODES), direction=st.sampled_from(aes.DIRECTIONS),
       key_bytes=st.sampled_from((16, 24, 32)), cores=st.integers(1, 9),
       partition=st.sampled_from(aes.PARTITIONS), ext=st.integers(1, 5),
       blocks=st.integers(0, 12), tail=st.integers(0, 15))
def test_random_against_cryptography(seed, style, mode, direction, key_bytes, cores, partition,
                                     ext, blocks, tail):
    rng = random.Random(seed)
    n = 16 * blocks + (tail if mode == "ctr" else 0)
    data, key, ctr = rng.randbytes(n), rng.randbytes(key_bytes), rng.randbytes(16)
    r = run_aes(data, key, ctr, mode=mode, direction=direction, style=style, cores=cores,
                partition=partition, ext_blocks=ext, check=False)
    assert r.output == _ref(data, key, mode, direction, ctr)


@pytest.mark.parametrize("style", aes.STYLES)
@pytest.mark.parametrize("mode", aes.MODES)
@pytest.mark.parametrize("bits", (128, 192, 256))
def test_decrypt_of_encrypt_is_identity(style, mode, bits):
    rng = random.Random(bits)
    data, key, ctr = rng.randbytes(16 * 7 if mode == "ecb" else 101), rng.randbytes(bits // 8), rng.randbytes(16)
    kw = dict(mode=mode, style=style, cores=3, partition="contiguous", check=False)
    ct = run_aes(data, key, ctr, **kw).output
    assert ct != data
    assert run_aes(ct, key, ctr, direction="dec", **kw).output == data


@pytest.mark.parametrize("style", aes.STYLES)
def test_ctr_counter_wraps_at_2_to_128(style):
    data = bytes(range(80))
    ctr = bytes.fromhex("ff" * 15 + "fe")
    r = run_aes(data, bytes(16), ctr, mode="ctr", style=style, cores=2, check=False)
    assert r.output == _ref(data, bytes(16), "ctr", counter=ctr)


@pytest.mark.parametrize("style", aes.STYLES)
@pytest.mark.parametrize("n", (0, 1, 3, 4, 5, 15, 16, 17, 31, 250))
def test_ctr_any_length(style, n):
    data, key, ctr = bytes(range(256))[:n], bytes(range(16)), bytes(range(100, 116))
    r = run_aes(data, key, ctr, mode="ctr", style=style, cores=4)
    assert len(r.output) == n and r.output == _ref(data, key, "ctr", counter=ctr)


@pytest.mark.parametrize("n", (1, 15, 17, 100))
def test_ecb_rejects_partial_blocks(n):
    with pytest.raises(S2mcError, match="ECB needs whole 16-byte blocks"):
        run_aes(bytes(n), bytes(16), mode="ecb")


def test_memory_overflow_says_how_much_is_needed():
    need = aes.words_needed(4096, "bytes")
    with pytest.raises(S2mcError, match=f"needs {need} words.*only 270000 are configured") as e:
        run_aes(bytes(4096), bytes(16), mem_words=270_000)
    assert "--mem-words" in str(e.value)
    # exactly enough works; the ttable style packs four bytes per word and needs less
    run_aes(bytes(4096), bytes(16), mem_words=need)
    assert aes.words_needed(4096, "ttable") < need


def test_large_data_with_more_memory():
    n = 600_000  # more than the default 2^21 words hold in the bytes style
    with pytest.raises(S2mcError, match="raise --mem-words"):
        run_aes(bytes(n), bytes(16), mode="ctr", cores=64, check=False)


@pytest.mark.parametrize("bad,match", [
    (dict(style="words"), "unknown style"),
    (dict(mode="cbc"), "unknown mode"),
    (dict(partition="random"), "unknown partition"),
    (dict(cores=0), "out of range"),
    (dict(cores=257), "out of range"),
    (dict(ext_blocks=0), "at least 1 block"),
    (dict(arbitration="lottery"), "unknown arbitration"),
    (dict(direction="both"), "unknown direction"),
])
def test_bad_configurations(bad, match):
    with pytest.raises(S2mcError, match=match):
        run_aes(bytes(32), bytes(16), **bad)


def test_bad_key_and_counter():
    with pytest.raises(S2mcError, match="16, 24 or 32 bytes"):
        run_aes(bytes(16), bytes(10))
    with pytest.raises(S2mcError, match="counter block is 16 bytes"):
        run_aes(bytes(16), bytes(16), bytes(8), mode="ctr")


def test_a_wrong_result_is_an_error(monkeypatch):
    """The check can fail: a reference that disagrees raises AesMismatch, never a number."""
    from s2mc.workloads.cipher_sim import runner
    real = runner.reference
    monkeypatch.setattr(runner, "reference", lambda *a: bytes(b ^ (i == 37) for i, b in enumerate(real(*a))))
    with pytest.raises(AesMismatch, match="byte 37 \\(block 2\\)"):
        run_aes(bytes(64), bytes(16), cores=2)



def test_partitions_split_the_blocks_as_documented():
    data, key = bytes(16 * 8), bytes(16)
    inter = run_aes(data, key, cores=4, partition="interleaved").result.cores
    ext = run_aes(data, key, cores=4, partition="extended", ext_blocks=4).result.cores
    cont = run_aes(data, key, cores=3, partition="contiguous").result.cores
    one = run_aes(bytes(16), key, cores=1).result.instructions
    zero = run_aes(b"", key, cores=1).result.instructions
    per_block = one - zero
    # interleaved: 2 blocks each; extended E=4: runs 0 and 1 on cores 0 and 1, nothing on 2 and 3
    assert [round((c["instructions"]) / per_block) for c in inter[1:]] == [2, 2, 2]
    assert [round(c["instructions"] / per_block) for c in ext[1:]] == [4, 0, 0]
    # contiguous: 8 blocks over 3 cores -> 2, 3, 3 (chunks [0,2), [2,5), [5,8))
    assert [round(c["instructions"] / per_block) for c in cont[1:]] == [3, 3]


def test_key_expansion_runs_on_core_0_while_others_wait():
    r = run_aes(bytes(64), bytes(16), cores=4).result
    assert r.cores[0]["sync_wait_cycles"] == 0
    assert all(c["sync_wait_cycles"] > 500 for c in r.cores[1:])


def test_one_core_stalls_are_the_second_cycle_of_every_access():
    r = run_aes(bytes(64), bytes(16), cores=1).result
    c = r.cores[0]
    assert c["stall_cycles"] == c["mem_accesses"] and c["bus_wait_cycles"] == 0
    assert r.cycles == c["instructions"] + c["mem_accesses"]


def test_program_is_compiled_once():
    aes.program("bytes")
    before = aes.program.cache_info().misses
    run_aes(bytes(32), bytes(16))
    run_aes(bytes(4096), bytes(16), cores=5)
    assert aes.program.cache_info().misses == before


def test_tables_in_the_rz_files_are_current():
    from s2mc.workloads.aes import tables
    assert tables.main(["--check"]) == 0
    s = tables.sbox()
    assert s[0x00] == 0x63 and s[0x53] == 0xED and tables.inv_sbox(s)[0x63] == 0


@pytest.mark.parametrize("prog,expect", [
    ("aes_bytes.rz", "105 196 224 216 106 123 4 48 216 205 183 128 112 180 197 90"),
    ("aes_ttable.rz", "1774510296 1786446896 -657606784 1890895194"),
])
def test_standalone_programs_print_the_fips197_example(prog, expect):
    out = subprocess.run([S2MC, "run", str(ROOT / "workloads" / "aes" / prog), "--cores", "3"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[0].strip() == expect


def test_nested_calls_keep_callee_saved_registers():
    """Regression (found by these workloads): a callee's register saves clobbered its caller's."""
    from s2mc.compiler import compile as rz
    from s2mc.simulator import Machine
    src = ("leaf(x)\n  return x + 1\n\ninner(p)\n  a = p + 1\n  b = p + 2\n  c = p + 3\n"
           "  return leaf(a) + leaf(b) + leaf(c)\n\nouter(p)\n  q = p * 10\n  r = inner(q)\n"
           "  return q + r\n\nmain()\n  print(outer(1))\n")
    assert Machine(rz(src).program, max_cycles=10_000).run().output.strip() == "49"


def _systemc_available():
    from s2mc.simulator import systemc_engine
    return systemc_engine.available()


@pytest.mark.systemc
@pytest.mark.parametrize("style", aes.STYLES)
def test_systemc_engine_gives_the_same_counters(style):
    if not _systemc_available():
        pytest.skip("the SystemC engine (s2mc-systemc) is not built")
    kw = dict(mode="ctr", style=style, cores=3, partition="extended", ext_blocks=2,
              arbitration="round_robin")
    fast = run_aes(bytes(100), bytes(16), **kw).result
    sysc = run_aes(bytes(100), bytes(16), engine="systemc", **kw).result
    assert (fast.cycles, fast.cores, fast.bus_busy_cycles) == (sysc.cycles, sysc.cores, sysc.bus_busy_cycles)
