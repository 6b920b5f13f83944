"""Streaming AES-CTR file encryption (`s2mc encrypt` / `s2mc decrypt`).

The output is byte-identical to `openssl enc -aes-{128,192,256}-ctr -K KEY -iv IV` (no salt, no
header; the IV is the first 128-bit big-endian counter block). Files are processed in chunks by a
three-stage pipeline: a reader thread fills buffers, the calling thread encrypts them (the C++ code
releases the GIL) and a writer thread writes them out, so reading, encrypting and writing overlap
and memory use stays at a few chunks whatever the file size.

The output is written to a temporary file in the destination folder and renamed over the
destination only when everything succeeded, so a failed run never leaves a partial output file.
"""
from __future__ import annotations

import os
import queue
import tempfile
import threading
from pathlib import Path
from typing import Callable

from s2mc.isa.errors import S2mcError

DEFAULT_CHUNK_BYTES = 4 << 20
_KEY_BITS = {32: 128, 48: 192, 64: 256}


def _parse_hex(text: str, what: str, allowed: dict[int, int] | None, exact: int | None) -> bytes:
    s = (text or "").strip()
    if s[:2].lower() == "0x":
        s = s[2:]
    if not s:
        raise S2mcError(f"{what}: empty hex string")
    bad = next((c for c in s if c not in "0123456789abcdefABCDEF"), None)
    if bad is not None:
        raise S2mcError(f"{what}: not a hex string (bad character {bad!r})")
    if allowed is not None and len(s) not in allowed:
        raise S2mcError(f"{what}: {len(s)} hex digits; AES keys need 32, 48 or 64 "
                        "(128, 192 or 256 bits)")
    if exact is not None and len(s) != exact:
        raise S2mcError(f"{what}: {len(s)} hex digits; the IV must be exactly {exact} (16 bytes)")
    return bytes.fromhex(s)


def parse_key_hex(text: str) -> bytes:
    """A 128/192/256-bit key from 32/48/64 hex digits (S2mcError otherwise)."""
    return _parse_hex(text, "--key", _KEY_BITS, None)


def parse_iv_hex(text: str) -> bytes:
    """The 16-byte initial counter block from 32 hex digits (S2mcError otherwise)."""
    return _parse_hex(text, "--iv", None, 32)


def _check_paths(src: str | os.PathLike, dst: str | os.PathLike) -> tuple[Path, Path]:
    src, dst = Path(src), Path(dst)
    if not src.exists():
        raise S2mcError(f"{src}: input file does not exist")
    if src.is_dir():
        raise S2mcError(f"{src}: input is a directory, not a file")
    if not os.access(src, os.R_OK):
        raise S2mcError(f"{src}: input file is not readable")
    if dst.is_dir():
        raise S2mcError(f"{dst}: output is a directory")
    same = src.resolve() == dst.resolve()
    if not same and dst.exists():
        try:
            same = os.path.samefile(src, dst)
        except OSError:
            same = False
    if same:
        raise S2mcError(f"{dst}: input and output are the same file (write to a different path)")
    parent = dst.resolve().parent
    if not parent.is_dir():
        raise S2mcError(f"{dst}: cannot write output: folder {parent} does not exist")
    return src, dst


def _open_temp(dst: Path):
    try:
        fd, tmp = tempfile.mkstemp(dir=dst.resolve().parent, prefix=f".{dst.name}.", suffix=".part")
    except OSError as exc:
        raise S2mcError(f"{dst}: cannot write output ({exc.strerror or exc})") from None
    umask = os.umask(0)
    os.umask(umask)
    os.fchmod(fd, 0o666 & ~umask)  # what openssl enc (open with 0666) would create
    return os.fdopen(fd, "wb", buffering=0), Path(tmp)


def _read_full(f, view: memoryview) -> int:
    """Fill `view` unless end of file comes first; returns the bytes read."""
    n = 0
    while n < len(view):
        got = f.readinto(view[n:])
        if not got:
            break
        n += got
    return n


def stream_transform(fin, fout, transform: Callable[[memoryview, int], None], *,
                     chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: Callable[[int], None] | None = None,
                     nbuffers: int = 3) -> int:
    """Run fin -> transform(chunk, byte_offset) in place -> fout with reading, transforming and
    writing overlapped. Every chunk but the last is exactly chunk_bytes (a multiple of 16) long.
    Returns the byte count."""
    if chunk_bytes <= 0 or chunk_bytes % 16:
        raise S2mcError(f"chunk size must be a positive multiple of 16 bytes (got {chunk_bytes})")
    free: queue.Queue = queue.Queue()
    filled: queue.Queue = queue.Queue()
    done: queue.Queue = queue.Queue()
    for _ in range(nbuffers):
        free.put(bytearray(chunk_bytes))
    stop = threading.Event()
    errors: list[BaseException] = []

    def reader():
        try:
            while not stop.is_set():
                try:
                    buf = free.get(timeout=0.1)
                except queue.Empty:
                    continue
                n = _read_full(fin, memoryview(buf))
                filled.put((buf, n))
                if n < chunk_bytes:
                    return
        except BaseException as exc:  # handed to the main thread
            filled.put(exc)

    def writer():
        while True:
            item = done.get()
            if item is None:
                return
            buf, n = item
            if not errors:
                try:
                    view = memoryview(buf)[:n]
                    while view:
                        w = fout.write(view)
                        view = view[w:]
                except BaseException as exc:
                    errors.append(exc)
                    stop.set()
            free.put(buf)

    rt = threading.Thread(target=reader, name="s2mc-read", daemon=True)
    wt = threading.Thread(target=writer, name="s2mc-write", daemon=True)
    rt.start()
    wt.start()
    offset = 0
    try:
        while not errors:
            item = filled.get()
            if isinstance(item, BaseException):
                raise item
            buf, n = item
            if n:
                transform(memoryview(buf)[:n], offset)
                offset += n
                done.put((buf, n))
                if progress:
                    progress(n)
            else:
                free.put(buf)
            if n < chunk_bytes:
                break
    finally:
        stop.set()
        done.put(None)
        wt.join()
        rt.join(timeout=5)
    if errors:
        raise errors[0]
    return offset


def _run_file(src, dst, key: bytes, iv: bytes, *, backend: str, impl: str, threads: int,
              chunk_bytes: int, progress: bool) -> int:
    if len(key) not in (16, 24, 32):
        raise S2mcError(f"key must be 16, 24 or 32 bytes (got {len(key)})")
    if len(iv) != 16:
        raise S2mcError(f"IV must be 16 bytes (got {len(iv)})")
    if threads < 1:
        raise S2mcError(f"--threads must be >= 1 (got {threads})")
    if backend not in ("native", "cuda"):
        raise S2mcError(f"unknown backend {backend!r} (native or cuda)")
    src, dst = _check_paths(src, dst)
    gpu_encrypt = None
    if backend == "cuda":
        gpu_encrypt = _cuda_encrypt_file()
    else:
        from . import ctr, resolve_impl
        impl = resolve_impl(impl)
    total = src.stat().st_size
    fout, tmp = _open_temp(dst)
    ok = False
    try:
        if gpu_encrypt is not None:
            fout.close()
            gpu_encrypt(str(src), str(tmp), key, iv)
            n = tmp.stat().st_size
        else:
            bar = None
            if progress:
                from tqdm import tqdm
                bar = tqdm(total=total, unit="B", unit_scale=True, desc=dst.name, leave=False)

            def transform(view: memoryview, offset: int) -> None:
                from . import counter_add
                ctr(key, counter_add(iv, offset // 16), view, impl=impl, threads=threads, out=view)

            try:
                with open(src, "rb", buffering=0) as fin:
                    n = stream_transform(fin, fout, transform, chunk_bytes=chunk_bytes,
                                         progress=bar.update if bar else None)
                fout.close()
            finally:
                if bar:
                    bar.close()
        os.replace(tmp, dst)
        ok = True
        return n
    except OSError as exc:
        where = exc.filename or dst
        raise S2mcError(f"{where}: {exc.strerror or exc}") from None
    finally:
        if not fout.closed:
            fout.close()
        if not ok:
            try:
                tmp.unlink()
            except FileNotFoundError:
                pass


def _cuda_encrypt_file():
    """s2mc.gpu.encrypt_file(src, dst, key, iv), or a clear one-line error."""
    try:
        from s2mc import gpu
    except ImportError:
        raise S2mcError("CUDA backend not built") from None
    fn = getattr(gpu, "encrypt_file", None)
    if fn is None:
        raise S2mcError("CUDA backend not built")
    available = getattr(gpu, "available", None)
    if callable(available) and not available():
        raise S2mcError("no GPU")
    return fn


def encrypt_file(src, dst, key: bytes, iv: bytes, *, backend: str = "native", impl: str = "auto",
                 threads: int = 1, chunk_bytes: int = DEFAULT_CHUNK_BYTES, progress: bool = False) -> int:
    """AES-CTR encrypt file `src` into `dst` (atomically). Returns the byte count."""
    return _run_file(src, dst, key, iv, backend=backend, impl=impl, threads=threads,
                     chunk_bytes=chunk_bytes, progress=progress)


def decrypt_file(src, dst, key: bytes, iv: bytes, **kw) -> int:
    """AES-CTR decryption: the same keystream XOR as encryption."""
    return encrypt_file(src, dst, key, iv, **kw)
