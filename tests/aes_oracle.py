"""The independent AES and Camellia oracles for tests: the `cryptography` package (OpenSSL underneath)."""
import random
import shutil
import warnings

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

try:  # cryptography >= 43 keeps Camellia under "decrepit"
    from cryptography.hazmat.decrepit.ciphers.algorithms import Camellia
except ImportError:  # pragma: no cover - older cryptography
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from cryptography.hazmat.primitives.ciphers.algorithms import Camellia


# The `openssl enc` binary, the second oracle for whole files (tests that need it are skipped without it).
OPENSSL = shutil.which("openssl")
needs_openssl = pytest.mark.skipif(OPENSSL is None, reason="the openssl binary is not installed")


def ref(op: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    """op: 'ctr' (iv = initial counter block), 'ecb-enc' or 'ecb-dec'."""
    if op == "ctr":
        c = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    elif op == "ecb-enc":
        c = Cipher(algorithms.AES(key), modes.ECB()).encryptor()
    else:
        c = Cipher(algorithms.AES(key), modes.ECB()).decryptor()
    return c.update(data) + c.finalize()


def ecb_ref(algorithm, key: bytes, data: bytes, decrypt: bool = False) -> bytes:
    """ECB with `algorithm` (algorithms.AES, Camellia, ...) straight from cryptography."""
    c = Cipher(algorithm(key), modes.ECB())
    ctx = c.decryptor() if decrypt else c.encryptor()
    return ctx.update(data) + ctx.finalize()


def ctr_from_ecb(algorithm, key: bytes, iv: bytes, data: bytes) -> bytes:
    """SP 800-38A CTR from the cipher's ECB (cryptography has no Camellia-CTR): block i is XORed with
    E(K, iv + i mod 2^128); the counter arithmetic is ours, independent of any backend's."""
    n = (len(data) + 15) // 16
    c0 = int.from_bytes(iv, "big")
    ks = ecb_ref(algorithm, key, b"".join(((c0 + i) % (1 << 128)).to_bytes(16, "big") for i in range(n)))
    return bytes(a ^ b for a, b in zip(data, ks))


def camellia_ref(op: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    """Camellia for `ref`'s ops: 'ctr' (from ECB, see ctr_from_ecb), 'ecb-enc' or 'ecb-dec'."""
    if op == "ctr":
        return ctr_from_ecb(Camellia, key, iv, data)
    return ecb_ref(Camellia, key, data, decrypt=op == "ecb-dec")


def ref_fold(key: bytes, iv: bytes, nbytes: int, oracle=ref) -> bytes:
    """XOR of every 16-byte keystream block (what keystream-only GPU runs return); oracle: `ref` for
    AES, `camellia_ref` for Camellia."""
    nb = (nbytes + 15) // 16
    ks = oracle("ctr", key, iv, bytes(16 * nb))
    acc = 0
    for i in range(nb):
        acc ^= int.from_bytes(ks[16 * i:16 * i + 16], "little")
    return acc.to_bytes(16, "little")


def rnd(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)
