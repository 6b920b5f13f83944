"""Streaming AES-CTR file encryption on the CPU (`s2mc encrypt` / `s2mc decrypt --backend native`).

The pipeline, the output rules and the key handling are shared with the CUDA backend in
s2mc.workloads.aes_host; this module only supplies the native CTR transform.
"""
from __future__ import annotations

from s2mc.isa.errors import S2mcError
from s2mc.workloads.aes_host import DEFAULT_CHUNK_BYTES, check_key_iv, counter_add, crypt_file


def encrypt_file(src, dst, key: bytes, iv: bytes, *, impl: str = "auto", threads: int = 1,
                 chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: bool = False) -> int:
    """AES-CTR encrypt file `src` into `dst` (atomically; `-` is stdout). Returns the byte count."""
    from . import ctr, resolve_impl

    check_key_iv(key, iv)
    if threads < 1:
        raise S2mcError(f"--threads must be >= 1 (got {threads})")
    impl = resolve_impl(impl)

    def transform(view: memoryview, offset: int) -> None:
        ctr(key, counter_add(iv, offset // 16), view, impl=impl, threads=threads, out=view)

    return crypt_file(src, dst, transform, chunk_bytes=chunk_bytes, progress=progress)


def decrypt_file(src, dst, key: bytes, iv: bytes, **kw) -> int:
    """AES-CTR decryption: the same keystream XOR as encryption."""
    return encrypt_file(src, dst, key, iv, **kw)
