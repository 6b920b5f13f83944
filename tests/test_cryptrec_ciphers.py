"""Seed 002's other CRYPTREC ciphers on the CPU (issue 16): SC2000 against its published vectors,
ECB and CTR against modes built here from single-block results, and the error paths.

Vectors (cited in workloads/native/src/cryptrec.cpp):
  [SPEC]   Fujitsu's SC2000 specification (CRYPTREC cipher list), the worked example:
           https://www.cryptrec.go.jp/cryptrec_03_spec_cypherlist_files/PDF/09_01jspec.pdf
  [NESSIE] Fujitsu's NESSIE submission, testvectors128/192/256.txt:
           https://www.cosic.esat.kuleuven.be/nessie/workshop/submissions/sc2000.zip
"""
import random

import pytest

from s2mc.isa.errors import S2mcError
from s2mc.workloads.native import cryptrec

pytestmark = pytest.mark.skipif(not cryptrec.available(), reason="native CRYPTREC library not built")

H = bytes.fromhex

# (source, key, plaintext, ciphertext)
SC2000_VECTORS = [
    ("SPEC", "00000000000000000000000000000000", "00000000000000000000000000000000",
     "fae4baa3bb72c4c060b9a4a5c4b2ab32"),
    ("NESSIE-128", "80000000000000000000000000000000", "00000000000000000000000000000000",
     "3fcb3bc9dbe00a8bf28d69d7f67102a7"),
    ("NESSIE-128", "00000000000000000000000000000000", "80000000000000000000000000000000",
     "b75cd863b9cb21c7cebd9e1014bf774f"),
    ("NESSIE-128", "01010101010101010101010101010101", "01010101010101010101010101010101",
     "ee5c548ea5ef353b896a780e324be38d"),
    ("NESSIE-128", "09090909090909090909090909090909", "09090909090909090909090909090909",
     "8839d41b099a817ef8f9ffe6b88455ce"),
    ("NESSIE-192", "00" * 24, "00" * 16, "6c2bab231cb641ed3ac8d4b0ea69ee3b"),
    ("NESSIE-256", "00" * 32, "00" * 16, "6c2bab231cb641ed3ac8d4b0ea69ee3b"),
]


@pytest.mark.parametrize("source,key,pt,ct", SC2000_VECTORS)
def test_sc2000_published_vectors(source, key, pt, ct):
    assert cryptrec.ecb_encrypt("sc2000", H(key), H(pt)).hex() == ct
    assert cryptrec.ecb_decrypt("sc2000", H(key), H(ct)).hex() == pt


def _one_block(key: bytes, block: bytes) -> bytes:
    return cryptrec.ecb_encrypt("sc2000", key, block)


def _ctr_oracle(key: bytes, iv: bytes, data: bytes) -> bytes:
    """CTR from single-block encryptions: block i XOR E(K, iv + i mod 2^128) (NIST SP 800-38A)."""
    ctr = int.from_bytes(iv, "big")
    out = bytearray()
    for off in range(0, len(data), 16):
        ks = _one_block(key, ((ctr + off // 16) % (1 << 128)).to_bytes(16, "big"))
        out += bytes(a ^ b for a, b in zip(data[off:off + 16], ks))
    return bytes(out)


@pytest.mark.parametrize("key_len", [16, 24, 32])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_ecb_many_blocks_equal_single_blocks_and_decrypt(key_len, threads):
    rng = random.Random(key_len * 10 + threads)
    key, data = rng.randbytes(key_len), rng.randbytes(16 * 37)
    ct = cryptrec.ecb_encrypt("sc2000", key, data, threads=threads)
    assert ct == b"".join(_one_block(key, data[i:i + 16]) for i in range(0, len(data), 16))
    assert cryptrec.ecb_decrypt("sc2000", key, ct, threads=threads) == data


@pytest.mark.parametrize("nbytes", [0, 1, 15, 16, 17, 100, 16 * 33 + 5])
@pytest.mark.parametrize("iv_hex", ["000102030405060708090a0b0c0d0e0f",
                                    "0000000000000000fffffffffffffffe",   # carry into the high 64 bits
                                    "fffffffffffffffffffffffffffffffd"])  # wraps at 2^128
def test_ctr_equals_oracle_for_every_thread_count(nbytes, iv_hex):
    rng = random.Random(nbytes)
    key, iv, data = rng.randbytes(16), H(iv_hex), rng.randbytes(nbytes)
    want = _ctr_oracle(key, iv, data)
    for threads in (1, 2, 3, 4):
        got = cryptrec.ctr("sc2000", key, iv, data, threads=threads)
        assert got == want, threads
        assert cryptrec.ctr("sc2000", key, iv, got, threads=threads) == data  # decryption = encryption


def test_in_place_into_out_buffer():
    key, iv = bytes(range(32)), bytes(16)
    data = bytes(range(256)) * 4
    buf = bytearray(data)
    assert cryptrec.ctr("sc2000", key, iv, buf, threads=2, out=buf) is None
    assert bytes(buf) == cryptrec.ctr("sc2000", key, iv, data)
    blocks = bytearray(data)
    cryptrec.ecb_encrypt("sc2000", key, blocks, out=blocks)
    assert bytes(blocks) == cryptrec.ecb_encrypt("sc2000", key, data)


def test_bench_ctr_reports_the_run():
    r = cryptrec.bench_ctr("sc2000", 4096, threads=2, min_reps=2, min_seconds=0)
    assert r["engine"] == "sc2000" and r["bytes"] == 4096 and r["total_bytes"] == 4096
    assert r["reps"] >= 2 and 0 < r["seconds_best"] <= r["seconds_median"]
    m = cryptrec.bench_ctr("sc2000", 4096, threads=2, min_reps=1, min_seconds=0, multi=True)
    assert m["total_bytes"] == 8192


@pytest.mark.parametrize("call,match", [
    (lambda: cryptrec.ecb_encrypt("sc2000", bytes(15), bytes(16)), "key must be 16, 24 or 32 bytes"),
    (lambda: cryptrec.ctr("sc2000", bytes(16), bytes(8), b"x"), "IV/counter must be 16 bytes"),
    (lambda: cryptrec.ecb_encrypt("sc2000", bytes(16), bytes(17)), "multiple of 16"),
    (lambda: cryptrec.ecb_decrypt("hierocrypt3", bytes(16), bytes(16)), "unknown cipher 'hierocrypt3'"),
    (lambda: cryptrec.ctr("sc2000", bytes(16), bytes(16), b"x", threads=0), "threads must be >= 1"),
    (lambda: cryptrec.ctr("sc2000", bytes(16), bytes(16), b"xy", out=bytearray(3)), "same length"),
    (lambda: cryptrec.bench_ctr("sc2000", 0), "not positive"),
    (lambda: cryptrec.bench_ctr("sc2000", 16, key_bits=100), "key_bits 100"),
    (lambda: cryptrec.bench_ctr("sc2000", 16, threads=0), "out of range"),
])
def test_bad_arguments_are_s2mc_errors(call, match):
    with pytest.raises(S2mcError, match=match):
        call()
