"""Known-answer tests for every native AES implementation: FIPS-197 Appendix B/C and
NIST SP 800-38A F.1 (ECB) and F.5 (CTR), through every strategy."""
import pytest

from native_impls import IMPLS, SUPPORTED, native

H = bytes.fromhex

# FIPS-197 Appendix C.1-C.3 (plaintext 00112233...ff) and Appendix B.
FIPS197 = [
    ("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff", "69c4e0d86a7b0430d8cdb78070b4c55a"),
    ("000102030405060708090a0b0c0d0e0f1011121314151617", "00112233445566778899aabbccddeeff",
     "dda97ca4864cdfe06eaf70a0ec0d7191"),
    ("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", "00112233445566778899aabbccddeeff",
     "8ea2b7ca516745bfeafc49904b496089"),
    ("2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734", "3925841d02dc09fbdc118597196a0b32"),
]

PT_38A = H("6bc1bee22e409f96e93d7e117393172a" "ae2d8a571e03ac9c9eb76fac45af8e51"
           "30c81c46a35ce411e5fbc1191a0a52ef" "f69f2445df4f9b17ad2b417be66c3710")
KEYS_38A = {
    128: "2b7e151628aed2a6abf7158809cf4f3c",
    192: "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
    256: "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
}
ECB_38A = {  # F.1.1, F.1.3, F.1.5
    128: "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
         "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
    192: "bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef"
         "ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e",
    256: "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
         "b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
}
CTR_IV_38A = H("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")  # the low byte carries inside the 4 blocks
CTR_38A = {  # F.5.1, F.5.3, F.5.5
    128: "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
         "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
    192: "1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
         "1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050",
    256: "601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
         "2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
}


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("key,pt,ct", FIPS197)
def test_fips197_block(impl, key, pt, ct):
    assert native.ecb_encrypt(H(key), H(pt), impl=impl).hex() == ct
    assert native.ecb_decrypt(H(key), H(ct), impl=impl).hex() == pt


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("strategy", native.STRATEGIES)
def test_sp800_38a_ecb(impl, bits, strategy):
    key = H(KEYS_38A[bits])
    got = native.ecb_encrypt(key, PT_38A, impl=impl, strategy=strategy, threads=2, block_bytes=32)
    assert got.hex() == ECB_38A[bits]
    back = native.ecb_decrypt(key, H(ECB_38A[bits]), impl=impl, strategy=strategy, threads=2, block_bytes=32)
    assert back == PT_38A


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("bits", [128, 192, 256])
@pytest.mark.parametrize("strategy", native.STRATEGIES)
def test_sp800_38a_ctr(impl, bits, strategy):
    key = H(KEYS_38A[bits])
    got = native.ctr(key, CTR_IV_38A, PT_38A, impl=impl, strategy=strategy, threads=3, block_bytes=16)
    assert got.hex() == CTR_38A[bits]
    assert native.ctr(key, CTR_IV_38A, got, impl=impl, strategy=strategy) == PT_38A
    # A partial final block uses the first bytes of its keystream block.
    assert native.ctr(key, CTR_IV_38A, PT_38A[:37], impl=impl).hex() == CTR_38A[bits][:74]


@pytest.mark.parametrize("bits", [128, 192, 256])
def test_openssl_reference_matches_vectors(bits):
    assert native.openssl_ctr(H(KEYS_38A[bits]), CTR_IV_38A, PT_38A).hex() == CTR_38A[bits]


def test_auto_is_the_best_supported():
    assert native.best_impl() == native.supported_impls()[0]
    assert native.resolve_impl("auto") == native.best_impl()
    assert "ttable" in native.supported_impls()


@pytest.mark.parametrize("impl", [i for i in native.IMPLS if i not in SUPPORTED] or ["__none__"])
def test_unsupported_impl_is_refused(impl):
    if impl == "__none__":
        pytest.skip("this CPU supports every compiled implementation")
    with pytest.raises(RuntimeError, match="not supported by this CPU"):
        native.ctr(bytes(16), bytes(16), b"x", impl=impl)
