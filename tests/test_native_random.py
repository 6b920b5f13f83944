"""Native AES against the `cryptography` package: random keys and lengths for every
implementation x strategy x thread count, counter carries, ECB, in-place buffers, bad arguments."""
import random

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

from native_impls import IMPLS, native


def ref_ctr(key, iv, data):
    enc = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    return enc.update(data) + enc.finalize()


def ref_ecb(key, data, decrypt=False):
    c = Cipher(algorithms.AES(key), modes.ECB())
    e = c.decryptor() if decrypt else c.encryptor()
    return e.update(data) + e.finalize()


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("strategy", native.STRATEGIES)
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_ctr_random_against_cryptography(impl, strategy, threads):
    rng = random.Random(f"{impl}-{strategy}-{threads}")
    # Few large cases for the slow T-table in coarse mode keep the suite fast.
    lengths = [0, 1, 15, 16, 17, 255, 257, 511, 4097] + [rng.randrange(0, 100 * 1024) for _ in range(3)]
    for n in lengths:
        key = rng.randbytes(rng.choice([16, 24, 32]))
        iv = rng.randbytes(16)
        data = rng.randbytes(n)
        bb = rng.choice([16, 512, 1024, 2048, 4096, 160])
        got = native.ctr(key, iv, data, impl=impl, strategy=strategy, threads=threads, block_bytes=bb)
        assert got == ref_ctr(key, iv, data), (n, len(key), bb)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("strategy", native.STRATEGIES)
def test_ecb_random_against_cryptography(impl, strategy):
    rng = random.Random(f"ecb-{impl}-{strategy}")
    for nblocks in [0, 1, 2, 7, 8, 15, 16, 17, 33, rng.randrange(1, 3000)]:
        key = rng.randbytes(rng.choice([16, 24, 32]))
        data = rng.randbytes(16 * nblocks)
        ct = native.ecb_encrypt(key, data, impl=impl, strategy=strategy, threads=3, block_bytes=64)
        assert ct == ref_ecb(key, data)
        assert native.ecb_decrypt(key, ct, impl=impl, strategy=strategy, threads=2, block_bytes=512) == data


def _boundary(bits: int, before: int) -> bytes:
    """The counter `before` blocks below a carry out of the low `bits` bits (bits=128: the wrap)."""
    hi = random.Random(bits).getrandbits(128 - bits) if bits < 128 else 0
    return (((hi << bits) + (1 << bits) - before) % (1 << 128)).to_bytes(16, "big")


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("bits", [8, 32, 64, 128])
@pytest.mark.parametrize("before", [1, 3, 5, 16, 17, 31, 100])
def test_counter_carries(impl, bits, before):
    """Counters crossing 2^8, 2^32, 2^64 and wrapping 2^128 inside and across interleaved batches."""
    iv = _boundary(bits, before)
    key = bytes(range(16))
    data = bytes(random.Random(before).randbytes(16 * 300 + 5))
    want = ref_ctr(key, iv, data)
    for strategy, threads in [("contiguous", 1), ("contiguous", 3), ("extended", 2), ("coarse", 2)]:
        got = native.ctr(key, iv, data, impl=impl, strategy=strategy, threads=threads, block_bytes=48)
        assert got == want, (strategy, threads)


def test_counter_wraps_to_zero():
    assert native.counter_add(b"\xff" * 16, 1) == bytes(16)
    assert native.counter_add(bytes(8) + b"\xff" * 8, 1) == bytes(7) + b"\x01" + bytes(8)
    # The keystream after the wrap is the keystream of counter 0.
    key = bytes(16)
    two = native.ctr(key, b"\xff" * 16, bytes(32))
    assert two[16:] == native.ctr(key, bytes(16), bytes(16))


@pytest.mark.parametrize("impl", IMPLS)
def test_in_place_and_out_buffer(impl):
    key, iv = bytes(range(32)), bytes(range(16, 32))
    data = random.Random(1).randbytes(10000)
    buf = bytearray(data)
    assert native.ctr(key, iv, buf, impl=impl, threads=2, out=buf) is None
    assert bytes(buf) == ref_ctr(key, iv, data)
    out = bytearray(len(data))
    native.ctr(key, iv, memoryview(data), impl=impl, out=out)
    assert bytes(out) == ref_ctr(key, iv, data)


def test_openssl_reference_threads():
    key, iv = bytes(range(24)), b"\xff" * 12 + b"\xff\xff\xff\xf0"
    data = random.Random(2).randbytes(12345)
    for t in (1, 2, 3):
        assert native.openssl_ctr(key, iv, data, threads=t) == ref_ctr(key, iv, data)


@pytest.mark.parametrize("call,match", [
    (lambda: native.ctr(bytes(15), bytes(16), b""), "16, 24 or 32 bytes"),
    (lambda: native.ctr(bytes(16), bytes(15), b""), "16 bytes"),
    (lambda: native.ctr(bytes(16), bytes(16), b"", threads=0), "threads must be >= 1"),
    (lambda: native.ctr(bytes(16), bytes(16), b"", impl="rot13"), "unknown implementation"),
    (lambda: native.ctr(bytes(16), bytes(16), b"", strategy="fine"), "unknown strategy"),
    (lambda: native.ctr(bytes(16), bytes(16), b"", block_bytes=24), "multiple of 16"),
    (lambda: native.ctr(bytes(16), bytes(16), b"abc", out=bytearray(2)), "same length"),
    (lambda: native.ecb_encrypt(bytes(16), b"abc"), "multiple of 16"),
])
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_out_must_be_writable():
    with pytest.raises((BufferError, TypeError, ValueError)):
        native.ctr(bytes(16), bytes(16), b"abcd", out=b"abcd")
