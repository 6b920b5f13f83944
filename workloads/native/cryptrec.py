"""Seed 002's other CRYPTREC block ciphers on the CPU: SC2000 and Hierocrypt-3, ECB and
CTR with OpenMP.

    from s2mc.workloads.native import cryptrec
    cryptrec.CIPHERS                                   # ('sc2000', 'hierocrypt3')
    ct = cryptrec.ecb_encrypt("sc2000", key, data)     # whole 16-byte blocks; key 16, 24 or 32 bytes
    pt = cryptrec.ecb_decrypt("sc2000", key, ct)
    ks = cryptrec.ctr("sc2000", key, iv, data, threads=2)   # 128-bit big-endian counter, as AES-CTR
    cryptrec.bench_ctr("sc2000", 16 << 20, threads=2)

CIPHERUNICORN-A is not implemented: docs/native.md ("Seed 002's other ciphers") says what was
searched and what is missing. Bad arguments raise S2mcError.
"""
from __future__ import annotations

from s2mc.common.errors import S2mcError

try:
    from . import _cryptrec
except ImportError as exc:  # pragma: no cover - only when the C++ extension was not built
    _cryptrec = None
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None

#: The ciphers implemented here (seed 002's CRYPTREC list minus AES and Camellia, which live in
#: the AES library and the Camellia code).
CIPHERS: tuple[str, ...] = ("sc2000", "hierocrypt3")
#: The implementations of each cipher, best first ("auto" = the first). SC2000's name how its F
#: function's tables split the 32-bit input (seed 002 §3.7): 3, 4 or 6 lookups, 20 / 8.5 / 1 KB.
IMPLS: dict[str, tuple[str, ...]] = {
    "sc2000": ("table-11-10-11", "table-6-10-10-6", "table-6-5-5-5-5-6"),
    "hierocrypt3": ("table",),
}
#: The key lengths (bytes) each cipher accepts.
KEY_BYTES: dict[str, tuple[int, ...]] = {"sc2000": (16, 24, 32), "hierocrypt3": (16, 24, 32)}
#: Seed 002's ciphers this project could not implement (no official test vector found): their
#: seed rows stay reference only.
NOT_IMPLEMENTED: tuple[str, ...] = ("cipherunicorn-a",)


def _lib():
    if _cryptrec is None:
        raise S2mcError(f"native CRYPTREC cipher library not built ({_IMPORT_ERROR}); run `make setup`")
    return _cryptrec


def available() -> bool:
    """Whether the C++ extension is built."""
    return _cryptrec is not None


def _call(fn, *args, **kw):
    try:
        return fn(*args, **kw)
    except ValueError as exc:
        raise S2mcError(str(exc)) from None


def _check_cipher(cipher: str) -> str:
    if cipher not in CIPHERS:
        raise S2mcError(f"unknown cipher '{cipher}' (this library has: {', '.join(CIPHERS)})")
    return cipher


def resolve_impl(cipher: str, impl: str = "auto") -> str:
    """The implementation `impl` names ("auto": the best); S2mcError when the cipher has no such one."""
    names = IMPLS[_check_cipher(cipher)]
    if impl == "auto":
        return names[0]
    if impl not in names:
        raise S2mcError(f"unknown implementation '{impl}' of {cipher} (known: auto, {', '.join(names)})")
    return impl


def ecb_encrypt(cipher: str, key: bytes, data, *, threads: int = 1, out=None, impl: str = "auto"):
    """ECB encryption of whole 16-byte blocks; bytes, or into `out` (then None)."""
    return _call(_lib().ecb, _check_cipher(cipher), bytes(key), data, False, int(threads), out, impl)


def ecb_decrypt(cipher: str, key: bytes, data, *, threads: int = 1, out=None, impl: str = "auto"):
    """ECB decryption of whole 16-byte blocks."""
    return _call(_lib().ecb, _check_cipher(cipher), bytes(key), data, True, int(threads), out, impl)


def ctr(cipher: str, key: bytes, iv: bytes, data, *, threads: int = 1, out=None, impl: str = "auto"):
    """CTR of any length: block i is XORed with E(K, iv + i mod 2^128). Decryption is the same."""
    return _call(_lib().ctr, _check_cipher(cipher), bytes(key), bytes(iv), data, int(threads), out, impl)


def default_key_bits(cipher: str) -> int:
    """The smallest key the cipher accepts here (seed 002 used 128-bit keys)."""
    return 8 * KEY_BYTES[_check_cipher(cipher)][0]


def make_bench(cipher: str, nbytes: int, *, key_bits: int | None = None, threads: int = 1, multi: bool = False,
               impl: str = "auto"):
    """In-place CTR over an nbytes buffer set up for timing, as `native.make_bench` (key_bits: the
    cipher's smallest by default)."""
    from s2mc.workloads.native import run_bench
    impl = resolve_impl(cipher, impl)
    if key_bits is None:
        key_bits = default_key_bits(cipher)
    if key_bits not in [8 * n for n in KEY_BYTES[cipher]]:
        raise S2mcError(f"key_bits {key_bits} is not one of {cipher}'s ({', '.join(str(8 * n) for n in KEY_BYTES[cipher])})")
    return run_bench(lambda: _call(_lib().make_bench, cipher, int(key_bits), int(nbytes), int(threads), bool(multi),
                                   impl),
                     nbytes, threads=threads, multi=multi)


def bench_ctr(cipher: str, nbytes: int, *, key_bits: int | None = None, threads: int = 1, min_reps: int = 3,
              min_seconds: float = 0.2, multi: bool = False, impl: str = "auto") -> dict:
    """Time `make_bench`'s work by the method of `native.bench_ctr`, with the same keys."""
    from s2mc.common.measure import measure
    from s2mc.workloads.native import bench_result, check_timing
    check_timing(min_reps, min_seconds)
    b = make_bench(cipher, nbytes, key_bits=key_bits, threads=threads, multi=multi, impl=impl)
    return bench_result(b, measure({b.engine: b.sample}, min_reps=min_reps, min_seconds=min_seconds)[b.engine])


def hierocrypt3_sbox() -> bytes:
    """Hierocrypt-3's S-box table as compiled (for the test that derives it independently)."""
    return bytes(_lib().hierocrypt3_sbox())


__all__ = ["CIPHERS", "IMPLS", "NOT_IMPLEMENTED", "KEY_BYTES", "available", "default_key_bits", "resolve_impl", "ecb_encrypt",
           "ecb_decrypt", "ctr", "make_bench", "bench_ctr", "hierocrypt3_sbox"]
