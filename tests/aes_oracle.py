"""The independent AES oracle for tests: the `cryptography` package (OpenSSL underneath)."""
import random
import shutil

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes


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


def ref_fold(key: bytes, iv: bytes, nbytes: int) -> bytes:
    """XOR of every 16-byte keystream block (what keystream-only GPU runs return)."""
    nb = (nbytes + 15) // 16
    ks = ref("ctr", key, iv, bytes(16 * nb))
    acc = 0
    for i in range(nb):
        acc ^= int.from_bytes(ks[16 * i:16 * i + 16], "little")
    return acc.to_bytes(16, "little")


def rnd(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)
