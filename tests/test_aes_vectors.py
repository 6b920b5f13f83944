"""Known-answer tests of the Rz AES programs on the simulated multicore.

FIPS-197 Appendix C (one block, every key size) and SP 800-38A F.1 (ECB) / F.5 (CTR), both
directions, both styles, on 1, 2, 3, 4 and 8 cores under every partition. The expected bytes are
written here (independent of the runner's own `cryptography` check, which also runs).
"""
from __future__ import annotations

import pytest

from s2mc.workloads.cipher_sim import run_aes

H = bytes.fromhex

FIPS197 = {  # Appendix C: key, plaintext 00112233..ff, ciphertext
    128: ("000102030405060708090a0b0c0d0e0f", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    192: ("000102030405060708090a0b0c0d0e0f1011121314151617", "dda97ca4864cdfe06eaf70a0ec0d7191"),
    256: ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
          "8ea2b7ca516745bfeafc49904b496089"),
}
FIPS_PT = "00112233445566778899aabbccddeeff"

SP_PT = ("6bc1bee22e409f96e93d7e117393172a" "ae2d8a571e03ac9c9eb76fac45af8e51"
         "30c81c46a35ce411e5fbc1191a0a52ef" "f69f2445df4f9b17ad2b417be66c3710")
SP_KEYS = {
    128: "2b7e151628aed2a6abf7158809cf4f3c",
    192: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
    256: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
}
SP_ECB = {  # F.1.1, F.1.3, F.1.5
    128: "3ad77bb40d7a3660a89ecaf32466ef97" "f5d3d58503b9699de785895a96fdbaaf"
         "43b1cd7f598ece23881b00e3ed030688" "7b0c785e27e8ad3f8223207104725dd4",
    192: "bd334f1d6e45f25ff712a214571fa5cc" "974104846d0ad3ad7734ecb3ecee4eef"
         "ef7afd2270e2e60adce0ba2face6444e" "9a4b41ba738d6c72fb16691603c18e0e",
    256: "f3eed1bdb5d2a03c064b5a7e3db181f8" "591ccb10d410ed26dc5ba74a31362870"
         "b6ed21b99ca6f4f9f153e7b1beafed1d" "23304b7a39f9f3ff067d8d8f9e24ecc7",
}
SP_CTR_IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
SP_CTR = {  # F.5.1, F.5.3, F.5.5
    128: "874d6191b620e3261bef6864990db6ce" "9806f66b7970fdff8617187bb9fffdff"
         "5ae4df3edbd5d35e5b4f09020db03eab" "1e031dda2fbe03d1792170a0f3009cee",
    192: "1abc932417521ca24f2b0459fe7e6e0b" "090339ec0aa6faefd5ccc2c6f4ce8e94"
         "1e36b26bd1ebc670d1bd1d665620abf7" "4f78a7f6d29809585a97daec58c6b050",
    256: "601ec313775789a5b7a7f504bbf3d228" "f443e3ca4d62b59aca84e990cacaf5c5"
         "2b0930daa23de94ce87017ba2d84988d" "dfc9c58db67aada613c2dd08457941a6",
}

STYLES = ("bytes", "ttable")
KEY_BITS = (128, 192, 256)
CORES = (1, 2, 3, 4, 8)
PARTITIONS = (("interleaved", 4), ("contiguous", 4), ("extended", 1), ("extended", 3))


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("bits", KEY_BITS)
@pytest.mark.parametrize("cores", (1, 3))
def test_fips197_appendix_c(style, bits, cores):
    key, ct = FIPS197[bits]
    enc = run_aes(H(FIPS_PT), H(key), mode="ecb", style=style, cores=cores)
    assert enc.output.hex() == ct
    dec = run_aes(H(ct), H(key), mode="ecb", direction="dec", style=style, cores=cores)
    assert dec.output.hex() == FIPS_PT


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("bits", KEY_BITS)
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("partition,ext", PARTITIONS)
def test_sp800_38a_ecb_both_directions(style, bits, cores, partition, ext):
    kw = dict(mode="ecb", style=style, cores=cores, partition=partition, ext_blocks=ext)
    assert run_aes(H(SP_PT), H(SP_KEYS[bits]), **kw).output.hex() == SP_ECB[bits]
    assert run_aes(H(SP_ECB[bits]), H(SP_KEYS[bits]), direction="dec", **kw).output.hex() == SP_PT


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("bits", KEY_BITS)
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("partition,ext", PARTITIONS)
def test_sp800_38a_ctr_both_directions(style, bits, cores, partition, ext):
    kw = dict(mode="ctr", counter=H(SP_CTR_IV), style=style, cores=cores, partition=partition,
              ext_blocks=ext)
    assert run_aes(H(SP_PT), H(SP_KEYS[bits]), **kw).output.hex() == SP_CTR[bits]
    assert run_aes(H(SP_CTR[bits]), H(SP_KEYS[bits]), direction="dec", **kw).output.hex() == SP_PT


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("mode", ("ecb", "ctr"))
def test_programs_compiled_at_O0_agree(style, mode):
    """-O0 (like the original compiler) is what `s2mc aes --opt 0` runs."""
    kw = dict(mode=mode, style=style, cores=3, opt=0, partition="extended", ext_blocks=1)
    expect = SP_ECB[128] if mode == "ecb" else SP_CTR[128]
    ctr = dict(counter=H(SP_CTR_IV)) if mode == "ctr" else {}
    assert run_aes(H(SP_PT), H(SP_KEYS[128]), **ctr, **kw).output.hex() == expect
    assert run_aes(H(expect), H(SP_KEYS[128]), direction="dec", **ctr, **kw).output.hex() == SP_PT


@pytest.mark.parametrize("style", STYLES)
def test_ctr_vectors_truncated(style):
    """A CTR message that ends mid-block is the vector's prefix."""
    for n in (1, 15, 17, 33, 63):
        r = run_aes(H(SP_PT)[:n], H(SP_KEYS[128]), mode="ctr", counter=H(SP_CTR_IV), style=style,
                    cores=3)
        assert r.output == H(SP_CTR[128])[:n]
