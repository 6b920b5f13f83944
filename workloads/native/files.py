"""Streaming AES-CTR / AES-ECB file encryption on the CPU (`s2mc encrypt` / `s2mc decrypt --backend native`).

The pipeline, the output rules and the key handling are shared with the CUDA backend in
s2mc.workloads.cipher_host; this module supplies the native transforms. A regular file into a regular
file takes the fast path: native threads (all available CPUs by default), each with one reusable
buffer, take chunks in turn and pread, transform in place and pwrite them, with the GIL released
(no copy in Python, reading, encrypting and writing overlapped across the threads). Anything else
(a FIFO, stdout, a device) goes through the ordered three-stage pipeline of cipher_host.
"""
from __future__ import annotations

import os

from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_host import check_key_iv, counter_add, crypt_file

MODES = ("ctr", "ecb")
#: The fast path's per-thread chunk: small enough that a chunk read is still in the core's cache
#: when it is encrypted and written.
FAST_CHUNK_BYTES = 1 << 20
#: The ordered pipeline's chunk (FIFOs, stdout, devices).
STREAM_CHUNK_BYTES = 4 << 20


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, else the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def crypt_file_native(src, dst, key: bytes, iv: bytes | None, *, mode: str = "ctr", decrypt: bool = False,
                      impl: str = "auto", threads: int | None = None, chunk_bytes: int | None = None,
                      progress: bool = False, cipher: str = "aes") -> int:
    """CTR (decrypt = encrypt) or ECB (no padding) of file `src` into `dst` (atomically; `-` is
    stdout) with `cipher` "aes" or "camellia", byte-identical to `openssl enc [-d] -CIPHER-N-MODE
    [-nopad]`. threads: None = every available CPU. Returns the byte count."""
    from . import _lib, check_cipher, ctr, ecb_decrypt, ecb_encrypt, resolve_impl

    check_cipher(cipher)

    if mode not in MODES:
        raise S2mcError(f"mode must be one of {', '.join(MODES)} (got {mode!r})")
    if mode == "ctr":
        check_key_iv(key, iv, cipher=cipher)
    else:
        check_key_iv(key, iv if iv is not None else bytes(16), cipher=cipher)
    threads = available_cpus() if threads is None else threads
    if threads < 1:
        raise S2mcError(f"--threads must be >= 1 (got {threads})")
    impl = resolve_impl(impl, cipher)
    lib = _lib()
    fast_chunk = chunk_bytes or FAST_CHUNK_BYTES

    def range_transform(in_fd: int, out_fd: int, offset: int, length: int) -> None:
        _, err, stage = lib.crypt_fds(bytes(key), bytes(iv or b""), mode, decrypt, in_fd, out_fd, offset,
                                      length, impl, threads, fast_chunk, cipher)
        if stage == "eof":
            raise S2mcError(f"{src}: input file shrank while it was being read")
        if stage:   # read, write or alloc, each with its errno
            name, what = {"read": (src, "cannot read input"), "write": (dst, "cannot write output"),
                          "alloc": (src, f"cannot allocate a {fast_chunk}-byte buffer per thread")}[stage]
            raise S2mcError(f"{name}: {what} ({os.strerror(err)})")

    def transform(view: memoryview, offset: int) -> None:
        if mode == "ctr":
            ctr(key, counter_add(iv, offset // 16), view, impl=impl, threads=threads, out=view, cipher=cipher)
            return
        if len(view) % 16:
            raise S2mcError(f"{src}: input length is not a multiple of 16 "
                            "(ECB has no padding; pad the input or use --mode ctr)")
        (ecb_decrypt if decrypt else ecb_encrypt)(key, view, impl=impl, threads=threads, out=view, cipher=cipher)

    return crypt_file(src, dst, transform, chunk_bytes=chunk_bytes or STREAM_CHUNK_BYTES, progress=progress,
                      range_transform=range_transform, multiple=16 if mode == "ecb" else 1)


def encrypt_file(src, dst, key: bytes, iv: bytes | None, *, mode: str = "ctr", impl: str = "auto",
                 threads: int | None = None, chunk_bytes: int | None = None, progress: bool = False,
                 cipher: str = "aes") -> int:
    """Encrypt file `src` into `dst` (atomically; `-` is stdout). Returns the byte count."""
    return crypt_file_native(src, dst, key, iv, mode=mode, decrypt=False, impl=impl, threads=threads,
                             chunk_bytes=chunk_bytes, progress=progress, cipher=cipher)


def decrypt_file(src, dst, key: bytes, iv: bytes | None, *, mode: str = "ctr", impl: str = "auto",
                 threads: int | None = None, chunk_bytes: int | None = None, progress: bool = False,
                 cipher: str = "aes") -> int:
    """Decrypt file `src` into `dst`: CTR is the same keystream XOR, ECB the inverse cipher."""
    return crypt_file_native(src, dst, key, iv, mode=mode, decrypt=True, impl=impl, threads=threads,
                             chunk_bytes=chunk_bytes, progress=progress, cipher=cipher)
