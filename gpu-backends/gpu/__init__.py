"""CUDA AES and Camellia backend (Python side): `s2mc.gpu`.

The kernels and the host driver are C++/CUDA (gpu-backends/cuda/), exposed as the extension module
`s2mc.gpu._cuda`, which is built only where nvcc exists and links the CUDA runtime statically, so it
imports on machines without a driver or GPU. Everything here works without it: `status()` says
what is missing, and the functions that need a GPU raise `S2mcError` with one clear line.

    from s2mc import gpu
    gpu.status()                        # {'built': ..., 'gpu_present': ..., 'devices': [...], 'reason': ...}
    gpu.crypt(data, key, iv)            # AES-CTR through the GPU (host to host)
    gpu.crypt(data, key, iv, cipher="camellia")   # Camellia-CTR (= openssl enc -camellia-N-ctr)
    gpu.encrypt_file("in", "out", key, iv)
    gpu.bench("optimised", "device", nbytes=1 << 30)

Kernels: "coarse" (T-tables in shared memory, 16 bytes per thread), "extended" (E x 16 bytes per
thread, `ext_bytes`), "optimised" (replicated bank-conflict-free tables, several blocks per
thread; "optimised-<cfg>" picks one configuration, see `kernels()`). Camellia (RFC 3713) has
"coarse" (seed 002: SP-tables and subkeys in shared memory, 16 bytes per thread; the default when
cipher="camellia") and "optimised" (replicated SP-tables, 2 blocks per thread, the launch shape of
AES's optimised-t4b2).
"""
from __future__ import annotations

import shutil
import subprocess
from typing import Any

from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_host import (MAX_CHUNK_BYTES, check_input, counter_add, crypt_file,
                                        ring_range_transform, ring_slots, running_total)

from . import startup

__all__ = ["status", "available", "kernels", "occupancy", "crypt", "emulate", "keystream_fold",
           "encrypt_file", "bench", "platform_info", "counter_add", "OPS", "MEASURES", "CTA_THREADS",
           "MAX_STREAMS", "MAX_REPS", "FILE_SLOT_BYTES", "FILE_SLOTS", "CIPHERS", "CAMELLIA_KERNELS", "default_kernel"]

OPS = ("ctr", "ecb-enc", "ecb-dec")
CIPHERS = ("aes", "camellia")
#: Camellia's kernels: seed 002's design and the optimised one (no extended kernel, one optimised
#: configuration).
CAMELLIA_KERNELS = ("coarse", "optimised")
MEASURES = ("keystream", "device", "host")
#: Ranges the host driver accepts (driver.cu checks the same), for `s2mc gpu` to state before any
#: work: threads per CTA (a multiple of 32 in 32..1024) and stream counts; timed repetitions are
#: bounded as a typo guard (the median of more says nothing new).
CTA_THREADS = (32, 1024, 32)
MAX_STREAMS = 64
MAX_REPS = 10_000

_ext: Any = None
_ext_error: str | None = None


def _load():
    """The extension module, or None (with the reason kept in _ext_error)."""
    global _ext, _ext_error
    if _ext is None and _ext_error is None:
        try:
            from . import _cuda  # type: ignore[attr-defined]
            _ext = _cuda
        except ImportError as exc:  # not built (no nvcc), or a broken build
            _ext_error = str(exc) or type(exc).__name__
    return _ext


def status() -> dict:
    """What `s2mc info` shows: dict(built, gpu_present, devices, reason).

    built: the CUDA extension was compiled (nvcc existed at build time); gpu_present: a usable GPU
    and driver; devices: GPU names; reason: why the backend cannot run ("" when it can).
    """
    ext = _load()
    if ext is None:
        return {"built": False, "gpu_present": False, "devices": [],
                "reason": "CUDA backend not built (nvcc was not found when s2mc was built)"
                          + (f": {_ext_error}" if _ext_error and "_cuda" not in _ext_error else "")}
    try:
        n, why = ext.device_count()
        names = [d["name"] for d in ext.devices()] if n else []
    except Exception as exc:  # noqa: BLE001 - a broken driver must not break `s2mc info`
        return {"built": True, "gpu_present": False, "devices": [], "reason": f"CUDA error: {exc}"}
    if n == 0:
        if ext.driver_version() == 0:
            code = why.split(":")[0] if why else ""
            why = "no NVIDIA driver found" + (f" ({code})" if code else "")
        return {"built": True, "gpu_present": False, "devices": [],
                "reason": f"no GPU: {why}" if why else "no GPU"}
    return {"built": True, "gpu_present": True, "devices": names, "reason": ""}


def available() -> bool:
    """True when the extension is built and a GPU is usable."""
    return bool(status()["gpu_present"])


def _require_built():
    ext = _load()
    if ext is None:
        raise S2mcError(status()["reason"])
    return ext


def _require_gpu():
    ext = _require_built()
    st = status()
    if not st["gpu_present"]:
        raise S2mcError(f"CUDA backend: {st['reason']}")
    return ext


def _call(fn, *args, **kwargs):
    """Run an extension call, turning its errors into one-line S2mcErrors."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, RuntimeError) as exc:
        raise S2mcError(f"gpu: {exc}") from None


def kernels(all_configs: bool = False, cipher: str = "aes") -> list[str]:
    """Kernel names: coarse, extended, optimised (+ every optimised-<cfg> with all_configs) for
    AES; coarse and optimised for Camellia."""
    _check_cipher(cipher)
    ext = _require_built()
    if cipher == "camellia":
        return list(CAMELLIA_KERNELS)
    names = ["coarse", "extended", "optimised"]
    if all_configs:
        names += [f"optimised-{c}" for c in ext.optimised_configs()]
    return names


def default_kernel(cipher: str = "aes") -> str:
    """The kernel used when none is named: optimised for AES; for Camellia seed 002's coarse
    kernel, until a GPU run shows which is faster (docs/gpu.md)."""
    _check_cipher(cipher)
    return "coarse" if cipher == "camellia" else "optimised"


def _check_cipher(cipher: str) -> None:
    if cipher not in CIPHERS:
        raise S2mcError(f"gpu: unknown cipher {cipher!r} (expected {', '.join(CIPHERS)})")


def occupancy(cipher: str = "aes", key_bits: int = 128, threads: int = 256) -> list[dict]:
    """Seed 002's Table 2 for our kernels on this GPU: per kernel (and direction), registers per
    thread, static/dynamic shared memory per CTA, local (spill) bytes, CTAs resident per SM, the
    persistent grid (CTAs per SM x SMs; 0 for extended, whose grid follows the input) and occupancy
    (resident threads / the SM's maximum), from cudaFuncGetAttributes and
    cudaOccupancyMaxActiveBlocksPerMultiprocessor. Needs a GPU."""
    _check_cipher(cipher)
    if key_bits not in (128, 192, 256):
        raise S2mcError(f"gpu: key_bits must be 128, 192 or 256, not {key_bits}")
    ext = _require_gpu()
    return _call(ext.kernel_info, cipher, key_bits, threads)


def _check_key_iv(key: bytes, iv: bytes | None, op: str, cipher: str = "aes") -> None:
    _check_cipher(cipher)
    if len(key) not in (16, 24, 32):
        name = "Camellia" if cipher == "camellia" else "AES"
        raise S2mcError(f"gpu: key must be 16, 24 or 32 bytes ({name}-128/192/256), not {len(key)}")
    if op == "ctr" and (iv is None or len(iv) != 16):
        raise S2mcError(f"gpu: iv must be 16 bytes for CTR, not {0 if iv is None else len(iv)}")
    if op not in OPS:
        raise S2mcError(f"gpu: unknown op {op!r} (expected {', '.join(OPS)})")


def crypt(data, key: bytes, iv: bytes | None = None, *, op: str = "ctr",
          kernel: str | None = None, ext_bytes: int = 4096, threads: int = 256,
          streams: int = 4, chunk_bytes: int = 0, cipher: str = "aes") -> bytes:
    """Encrypt/decrypt `data` on the GPU, host to host (CTR: decryption = encryption).

    cipher: aes | camellia (the key length picks 128/192/256); kernel: None = default_kernel(cipher).
    op: ctr | ecb-enc | ecb-dec. streams: CUDA streams overlapping copies and kernels (1 = no
    overlap); chunk_bytes: bytes per chunk (0 = automatic; small values exercise the multi-chunk
    path). Returns the output bytes.
    """
    _check_key_iv(key, iv, op, cipher)
    ext = _require_gpu()
    return _call(ext.crypt, data, bytes(key), bytes(iv or b""), kernel=kernel or default_kernel(cipher),
                 op=op, ext_bytes=ext_bytes, threads=threads, streams=streams,
                 chunk_bytes=chunk_bytes, cipher=cipher)


def emulate(data, key: bytes, iv: bytes | None = None, *, op: str = "ctr",
            kernel: str | None = None, ext_bytes: int = 4096, threads: int = 256,
            streams: int = 2, chunk_bytes: int = 0, max_grid: int = 3, cipher: str = "aes") -> bytes:
    """What `crypt` does, on the CPU: the same host pipeline (chunks, stream lanes, staging) with
    host memory standing in for the GPU's, and the kernel bodies run by the emulator for every
    (CTA, thread). No GPU needed, only the built extension. max_grid caps the persistent kernels'
    CTAs so their grid-stride loops go round several times (0 = the full grid)."""
    _check_key_iv(key, iv, op, cipher)
    ext = _require_built()
    return _call(ext.emulate, data, bytes(key), bytes(iv or b""), kernel=kernel or default_kernel(cipher),
                 op=op, ext_bytes=ext_bytes, threads=threads, streams=streams,
                 chunk_bytes=chunk_bytes, max_grid=max_grid, cipher=cipher)


def keystream_fold(key: bytes, iv: bytes, nbytes: int, *, kernel: str | None = None,
                   ext_bytes: int = 4096, threads: int = 256, emulated: bool = False,
                   max_grid: int = 3, cipher: str = "aes") -> bytes:
    """XOR of all CTR keystream blocks for nbytes, as the kernel's keystream-only op makes them."""
    _check_key_iv(key, iv, "ctr", cipher)
    ext = _require_built() if emulated else _require_gpu()
    return _call(ext.keystream_fold, bytes(key), bytes(iv), int(nbytes),
                 kernel=kernel or default_kernel(cipher), ext_bytes=ext_bytes, threads=threads,
                 emulated=emulated, max_grid=max_grid, cipher=cipher)


#: The file path's ring (see encrypt_file): pinned buffers of FILE_SLOT_BYTES, FILE_SLOTS of them
#: (so FILE_SLOTS pieces can be in flight: being read, on the GPU, being written), and the range a
#: call covers between progress updates (the ring drains at the end of each).
FILE_SLOT_BYTES = 16 << 20
FILE_SLOTS = 8
FILE_SEGMENT_BYTES = 1 << 30


def encrypt_file(in_path, out_path, key: bytes, iv: bytes, decrypt: bool = False, *,
                 kernel: str | None = None, streams: int = 4, chunk_bytes: int = 0,
                 piece_bytes: int | None = None, slots: int = FILE_SLOTS, progress=None,
                 emulated: bool = False, max_grid: int = 3, cipher: str = "aes",
                 phase: startup.Phase | None = None) -> int:
    """AES-CTR or Camellia-CTR of a whole file through the GPU; output identical to `openssl enc
    -aes-N-ctr` / `-camellia-N-ctr` (cipher="camellia").

    The key length picks 128/192/256. CTR decryption is the same operation, so `decrypt` only
    documents intent. One FileCipher per file allocates `slots` pinned buffers of `piece_bytes`
    (a multiple of 16, default FILE_SLOT_BYTES; fewer slots when they would take more than an
    eighth of this machine's memory, cipher_host.ring_slots) and each stream's device buffers
    once. A regular file into a regular file: a reader thread preads straight into free pinned
    buffers, the GPU copies each in, encrypts it with counter iv + offset/16 and copies it back into the same
    buffer on stream (piece mod `streams`), and a writer thread pwrites it, all overlapped with up
    to `slots` pieces in flight and no copy through Python. Other inputs and outputs (FIFOs,
    stdout) stream through s2mc.workloads.cipher_host's pipeline, each chunk copied into the same
    pinned buffers and back in place. The output follows s2mc.common.outputs (atomic replace of a
    regular file, devices and FIFOs written through, `-` = stdout). `progress`: True for a tqdm bar
    on stderr, or a callable given the number of bytes done so far. Returns the byte count.
    chunk_bytes: kept for callers of the older pipeline; the pieces are the chunks now.
    emulated=True runs the kernels on the CPU emulator (tests; max_grid as in `emulate`).
    The FileCipher (context, pinned and device buffers) is made on a thread while the files are
    opened and the first pieces read ahead (s2mc.gpu.startup); `phase` (for `s2mc encrypt
    --timings`) hears "backend" when it is ready and "encrypt" after each range.
    """
    del decrypt, chunk_bytes  # CTR: the same keystream XOR both ways
    _check_key_iv(key, iv, "ctr", cipher)
    kernel = kernel or default_kernel(cipher)
    ext = _require_built() if emulated else _require_gpu()
    piece_bytes = FILE_SLOT_BYTES if piece_bytes is None else piece_bytes
    if piece_bytes < 16 or piece_bytes % 16:
        raise S2mcError(f"gpu: piece size must be a positive multiple of 16, not {piece_bytes}")
    if not 1 <= slots <= 256:
        raise S2mcError(f"gpu: slots must be in 1..256, not {slots}")
    src = check_input(in_path, out_path)
    nslots = ring_slots(slots, piece_bytes)
    fc = startup.Pending(lambda: _call(ext.FileCipher, bytes(key), bytes(iv), cipher=cipher, kernel=kernel,
                                       streams=streams, slot_bytes=piece_bytes, slots=nslots, emulated=emulated,
                                       max_grid=max_grid), phase)
    startup.read_ahead(src, nslots * piece_bytes)

    def transform(view: memoryview, offset: int) -> None:
        _call(fc.crypt_buffer, view, offset)

    segment = max(piece_bytes, FILE_SEGMENT_BYTES // piece_bytes * piece_bytes)
    try:
        return crypt_file(src, out_path, transform, chunk_bytes=min(piece_bytes, MAX_CHUNK_BYTES), nbuffers=2,
                          progress=running_total(progress),
                          range_transform=ring_range_transform(fc, src, out_path, "gpu"), segment_bytes=segment)
    finally:
        fc.close()


def bench(kernel: str, measure: str, *, key_bits: int = 128, nbytes: int, reps: int = 5,
          op: str = "ctr", ext_bytes: int = 4096, threads: int = 256, streams: int = 4,
          chunk_bytes: int = 0, cipher: str = "aes", warmup: int = 1, min_seconds: float = 0.0) -> dict:
    """Time one kernel. measure: keystream (no data traffic, CUDA events), device (input and output
    in GPU memory, CUDA events), host (pinned host buffers, H2D + kernel + D2H over `streams`
    streams, host clock). `warmup` untimed runs, then at least `reps` timed repetitions, more
    until they add up to `min_seconds`. Returns a dict with seconds (median), best_seconds, times
    (every repetition, in order), grid, threads, ...; for host, `stages`: per repetition of as
    many more, wall, h2d, kernel, d2h (CUDA events per chunk, summed) and sync (the host's wait)."""
    if measure not in MEASURES:
        raise S2mcError(f"gpu: unknown measure {measure!r} (expected {', '.join(MEASURES)})")
    _check_cipher(cipher)
    ext = _require_gpu()
    return _call(ext.bench, kernel, measure, key_bits=key_bits, nbytes=int(nbytes), reps=reps,
                 op=op, ext_bytes=ext_bytes, threads=threads, streams=streams,
                 chunk_bytes=chunk_bytes, cipher=cipher, warmup=warmup, min_seconds=min_seconds)


def _nvidia_smi_clocks() -> dict:
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {}
    fields = ["name", "clocks.sm", "clocks.max.sm", "clocks.mem", "clocks.max.mem", "power.limit",
              "driver_version", "pcie.link.gen.max", "pcie.link.width.max"]
    try:
        out = subprocess.run([exe, f"--query-gpu={','.join(fields)}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return {}
    if out.returncode != 0 or not out.stdout.strip():
        return {}
    values = [v.strip() for v in out.stdout.splitlines()[0].split(",")]
    return {f"nvidia_smi.{k}": v for k, v in zip(fields, values)}


def platform_info() -> dict:
    """The GPU for records and manifests: name, SMs, peak clocks, memory, runtime/driver versions,
    plus current/max clocks from nvidia-smi when it is there."""
    ext = _require_gpu()
    dev = ext.devices()[ext.current_device()]
    info = {"gpu": dev["name"], "device": dev, "cuda_runtime": ext.runtime_version(),
            "cuda_driver": ext.driver_version(), "optimised_default": ext.optimised_default()}
    info.update(_nvidia_smi_clocks())
    return info
