"""Native CPU AES (OpenMP): T-table, AES-NI and VAES implementations chosen at run time, and
Camellia (RFC 3713: byte-sliced with AES-NI / VAES S-boxes, or SP tables) through the same
strategies, modes and file pipeline.

    from s2mc.workloads import native
    native.best_impl()                        # 'vaes' on a CPU with AVX2 VAES
    ct = native.ctr(key, iv, data, impl="auto", strategy="extended", threads=2, block_bytes=1024)
    pt = native.ctr(key, iv, ct)              # CTR decryption is the same operation
    native.ecb_encrypt(key, data); native.ecb_decrypt(key, data)
    native.encrypt_file("in.bin", "out.bin", key, iv)   # streaming, = openssl enc -aes-*-ctr
    native.ctr(key, iv, data, cipher="camellia")        # = openssl enc -camellia-*-ctr

CTR uses a 128-bit big-endian counter (NIST SP 800-38A): block i uses iv + i mod 2^128.
Strategies (seed 000): "coarse" (one 16-byte block per OpenMP iteration), "extended"
(tasks of block_bytes = E x 16 bytes), "contiguous" (one chunk per thread).
"""
from __future__ import annotations

try:
    from . import _native
except ImportError as exc:  # pragma: no cover - only when the C++ extension was not built
    _native = None
    _IMPORT_ERROR = exc
else:
    _IMPORT_ERROR = None

from s2mc.common.errors import S2mcError
from s2mc.common.measure import measure

STRATEGIES: tuple[str, ...] = ("coarse", "extended", "contiguous")
#: The block ciphers (128-bit blocks, 128/192/256-bit keys); "aes" is every function's default.
CIPHERS: tuple[str, ...] = ("aes", "camellia")
#: Every AES implementation name the library knows, best first ("auto" picks the best supported one).
IMPLS: tuple[str, ...] = ("vaes512", "vaes", "aesni", "ttable")
#: The implementations of each cipher (Camellia: VAES and AES-NI byte-sliced, the SP tables of s2mc_cipher/camellia.h).
CIPHER_IMPLS: dict[str, tuple[str, ...]] = {"aes": IMPLS, "camellia": ("vaes", "aesni", "sptable")}
#: Extended block sizes of seed 000 (bytes per task).
SEED_BLOCK_BYTES: tuple[int, ...] = (512, 1024, 2048, 4096)
#: The ranges `bench_ctr` (and `s2mc native`) accept: more threads than any machine has cores only
#: measures oversubscription; more repetitions than a million is a typo, and so is a minimum
#: measuring time over an hour (0: the repetitions alone decide). Sizes are bounded by the machine's memory
#: (cipher_host.host_memory).
MAX_THREADS = 1024
MAX_REPS = 1_000_000
MAX_MIN_SECONDS = 3600.0


def _lib():
    if _native is None:
        raise S2mcError(f"native AES library not built ({_IMPORT_ERROR}); run `make setup`")
    return _native


def available() -> bool:
    """Whether the C++ extension is built."""
    return _native is not None


def check_cipher(cipher: str) -> str:
    """`cipher` if this library knows it; S2mcError naming the known ones otherwise."""
    if cipher not in CIPHERS:
        raise S2mcError(f"unknown cipher {cipher!r} (known: {', '.join(CIPHERS)})")
    return cipher


def impls(cipher: str = "aes") -> list[dict]:
    """Every compiled implementation of `cipher`, best first: [{'name': ..., 'supported': bool}, ...]."""
    return list(_lib().impls(check_cipher(cipher)))


def supported_impls(cipher: str = "aes") -> list[str]:
    """Names of the implementations of `cipher` this CPU can run, best first."""
    return [d["name"] for d in impls(cipher) if d["supported"]]


def best_impl(cipher: str = "aes") -> str:
    """The implementation `impl="auto"` selects on this CPU."""
    return _lib().best_impl(check_cipher(cipher))


def resolve_impl(name: str, cipher: str = "aes") -> str:
    """The concrete implementation for `name` ("auto" or a name); S2mcError when unknown/unsupported."""
    try:
        return _lib().resolve_impl(name, check_cipher(cipher))
    except (ValueError, RuntimeError) as exc:
        raise S2mcError(str(exc)) from None


def max_threads() -> int:
    """OpenMP's default thread count (the number of usable cores unless OMP_NUM_THREADS says otherwise)."""
    return int(_lib().max_threads())


def info() -> dict:
    """Facts for `s2mc info`."""
    if _native is None:
        return {"built": False, "error": str(_IMPORT_ERROR)}
    return {"built": True, "impls": impls(), "best": best_impl(), "cpu": _native.cpu_model(),
            "ciphers": {c: supported_impls(c) for c in CIPHERS if c != "aes"},   # AES: impls above
            "cpu_features": list(_native.cpu_features()), "openssl": _native.openssl_version(),
            "max_threads": max_threads()}


def ctr(key: bytes, iv: bytes, data, *, impl: str = "auto", strategy: str = "contiguous",
        threads: int = 1, block_bytes: int = 1024, out=None, cipher: str = "aes"):
    """CTR of `data` (any bytes-like object) with the counter starting at `iv` (16 bytes), with
    `cipher` "aes" (default) or "camellia".

    Returns bytes, or writes into `out` (a writable buffer of the same length, may be `data`
    itself for in-place work) and returns None. Raises ValueError for bad arguments and
    RuntimeError for an implementation the CPU cannot run.
    """
    return _lib().ctr(bytes(key), bytes(iv), data, impl, strategy, int(threads), int(block_bytes), out,
                      check_cipher(cipher))


def ecb_encrypt(key: bytes, data, *, impl: str = "auto", strategy: str = "contiguous", threads: int = 1,
                block_bytes: int = 1024, out=None, cipher: str = "aes"):
    """ECB encryption of whole 16-byte blocks (AES, or Camellia with cipher="camellia")."""
    return _lib().ecb(bytes(key), data, False, impl, strategy, int(threads), int(block_bytes), out,
                      check_cipher(cipher))


def ecb_decrypt(key: bytes, data, *, impl: str = "auto", strategy: str = "contiguous", threads: int = 1,
                block_bytes: int = 1024, out=None, cipher: str = "aes"):
    """ECB decryption of whole 16-byte blocks."""
    return _lib().ecb(bytes(key), data, True, impl, strategy, int(threads), int(block_bytes), out,
                      check_cipher(cipher))


def openssl_ctr(key: bytes, iv: bytes, data, *, threads: int = 1, out=None, cipher: str = "aes"):
    """OpenSSL EVP aes-*-ctr / camellia-*-ctr (linked libcrypto) on the same layout: the comparison baseline."""
    return _lib().openssl_ctr(bytes(key), bytes(iv), data, int(threads), out, check_cipher(cipher))


def camellia_selftest() -> bool:
    """RFC 3713 Appendix A's vectors through the C++ header (s2mc_cipher/camellia.h)."""
    return bool(_lib().camellia_selftest())


def openssl_version() -> str:
    return _lib().openssl_version()


def make_bench(nbytes: int, *, key_bits: int = 128, engine: str = "ours", impl: str = "auto",
               strategy: str = "contiguous", threads: int = 1, block_bytes: int = 1024, multi: bool = False,
               cipher: str = "aes"):
    """In-place CTR over an nbytes buffer (engine "ours" or "openssl"), set up for timing: keys,
    buffers and OpenSSL's contexts are made here, and `.sample(loops)` runs it `loops` times inside
    C++ and returns (seconds, TSC ticks). With multi=True every thread encrypts its own nbytes
    buffer (like `openssl speed -multi`): one run is a round of all `threads` buffers
    (`.total_bytes` = threads x nbytes). `s2mc.common.measure` times it."""
    from s2mc.common.units import human_size
    from s2mc.workloads.cipher_host import host_memory
    check_cipher(cipher)
    if not 16 <= block_bytes <= host_memory() or block_bytes % 16:
        raise S2mcError(f"block_bytes {block_bytes} is not a multiple of 16 in 16..{human_size(host_memory())}")
    return run_bench(lambda: _lib().make_bench(int(key_bits), int(nbytes), engine, impl, strategy, int(threads),
                                               int(block_bytes), bool(multi), cipher),
                     nbytes, threads=threads, multi=multi)


def bench_ctr(nbytes: int, *, key_bits: int = 128, engine: str = "ours", impl: str = "auto",
              strategy: str = "contiguous", threads: int = 1, block_bytes: int = 1024,
              min_reps: int = 3, min_seconds: float = 0.2, multi: bool = False, cipher: str = "aes") -> dict:
    """Time `make_bench`'s work by s2mc.common.measure's method (warm-up, calibrated samples until
    min_reps and min_seconds, median and spread). Returns bench_result's dict."""
    check_timing(min_reps, min_seconds)
    b = make_bench(nbytes, key_bits=key_bits, engine=engine, impl=impl, strategy=strategy, threads=threads,
                   block_bytes=block_bytes, multi=multi, cipher=cipher)
    return bench_result(b, measure({b.engine: b.sample}, min_reps=min_reps, min_seconds=min_seconds)[b.engine])


def bench_result(bench, t) -> dict:
    """One timed bench as a dict: engine, bytes, total_bytes (per run), seconds_median (the figure),
    seconds_best, spread (median absolute deviation / median), disturbed and why, tsc_cycles_median
    (time-stamp counter ticks per run, the median sample's), samples, loops (runs per sample) and
    reps (runs timed)."""
    return dict(engine=bench.engine, bytes=bench.bytes, total_bytes=bench.total_bytes,
                seconds_median=t.median, seconds_best=t.best, spread=t.spread, disturbed=t.disturbed, why=t.why,
                tsc_cycles_median=t.median_cycles, samples=len(t.seconds), loops=t.loops, reps=t.reps)


def check_timing(min_reps: int, min_seconds: float) -> None:
    """The timing arguments every native bench takes, checked before anything is allocated."""
    import math
    if not 1 <= min_reps <= MAX_REPS:
        raise S2mcError(f"min_reps {min_reps} is out of range (1..{MAX_REPS})")
    if not (math.isfinite(min_seconds) and 0 <= min_seconds <= MAX_MIN_SECONDS):
        raise S2mcError(f"min_seconds {min_seconds} is not a number of seconds in 0..{MAX_MIN_SECONDS:g}")


def run_bench(call, nbytes: int, *, threads: int, multi: bool):
    """What every native make_bench (this module's, cryptrec's) does around its C++ constructor:
    check the arguments they share, so that no value reaches the binding as an overflowing int
    (pybind's TypeError) or an allocation larger than the machine (bad_alloc), then call() and turn
    a failed allocation into an S2mcError."""
    from s2mc.common.units import human_size
    from s2mc.workloads.cipher_host import host_memory
    nbuf = threads if multi else 1
    if not 1 <= threads <= MAX_THREADS:
        raise S2mcError(f"threads {threads} is out of range (1..{MAX_THREADS})")
    if nbytes < 1:
        raise S2mcError(f"size {nbytes} is not positive")
    if nbytes * nbuf > host_memory():
        raise S2mcError(f"{nbuf} x {human_size(nbytes)} bytes do not fit in this machine's memory "
                        f"({human_size(host_memory())})")
    try:
        return call()
    except MemoryError:
        raise S2mcError(f"cannot allocate {nbuf} x {human_size(nbytes)} bytes for the benchmark") from None


from s2mc.workloads.cipher_host import counter_add, parse_iv_hex, parse_key_hex  # noqa: E402

from .files import decrypt_file, encrypt_file  # noqa: E402

__all__ = [
    "STRATEGIES", "CIPHERS", "make_bench", "bench_result", "check_timing", "CIPHER_IMPLS", "check_cipher", "camellia_selftest", "IMPLS", "SEED_BLOCK_BYTES", "MAX_THREADS", "MAX_REPS", "MAX_MIN_SECONDS", "available", "impls", "supported_impls", "best_impl", "run_bench",
    "resolve_impl", "max_threads", "info", "ctr", "ecb_encrypt", "ecb_decrypt", "openssl_ctr",
    "openssl_version", "counter_add", "bench_ctr", "encrypt_file", "decrypt_file", "parse_key_hex",
    "parse_iv_hex",
]
