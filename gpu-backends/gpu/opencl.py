"""The portable OpenCL backend (seed 004's question): `s2mc.gpu.opencl`.

One OpenCL C source (gpu-backends/opencl/kernels.cl, embedded in the module at build time) runs AES
and Camellia, ECB and CTR, 128/192/256-bit keys, on any OpenCL device: PoCL on a CPU (what `make
setup` installs, so CI runs it), NVIDIA's, AMD's or Intel's OpenCL on a GPU. The host side is C++
(gpu-backends/opencl/driver.cpp), the extension `s2mc.gpu._opencl`; it is built when the OpenCL
headers and loader are found and needs libOpenCL.so.1 to import. Everything here works without it:
`status()` says what is missing, the rest raises S2mcError with one line.

    from s2mc.gpu import opencl
    opencl.status()                            # {'built', 'devices': [...], 'device', 'reason'}
    opencl.crypt(data, key, iv)                # AES-CTR; cipher="camellia", op="ecb-enc"|"ecb-dec"
    opencl.crypt(data, key, iv, segment=1 << 20)
    opencl.encrypt_file("in", "out", key, iv)  # = openssl enc -aes-N-ctr (or -camellia-N-ctr)
    opencl.calibrate("aes", "ctr", 128)        # seed 004's adaptive segment size, stored for reuse
    opencl.bench("aes", "device", nbytes=16 << 20)

Segments (seed 004, section 3): the data goes to the device one segment at a time (copy in, kernel,
copy back). `segment` is a size in bytes (a multiple of 16), "auto" (the size calibrated for this
device, cipher, key size and op, calibrated now and stored when there is none) or "calibrate"
(calibrate again and store). See `calibrate` for the procedure.
"""
from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable

from s2mc.common.errors import S2mcError
from s2mc.common.units import human_size
from s2mc.gpu import startup
from s2mc.workloads.cipher_host import (MAX_CHUNK_BYTES, check_input, counter_add, crypt_file,
                                        ring_range_transform, ring_slots, running_total)

__all__ = ["status", "available", "devices", "crypt", "encrypt_file", "calibrate", "Calibration", "choose",
           "platform_info",
           "resolve_segment", "stored_segment", "cache_path", "bench", "run_grid", "OpenclGrid",
           "markdown_table", "CIPHERS", "OPS", "MEASURES", "SEGMENT_CHOICES", "MIN_SEGMENT",
           "MAX_SEGMENT", "CANDIDATES"]

CIPHERS = ("aes", "camellia")
OPS = ("ctr", "ecb-enc", "ecb-dec")
MEASURES = ("device", "host")
#: The words `--segment` takes besides a size.
SEGMENT_CHOICES = ("auto", "calibrate")
#: Segment sizes the options accept (the device's own allocation limit is checked at run time).
MIN_SEGMENT = 16
MAX_SEGMENT = 1 << 30
#: Seed 004 started from 50 MB segments and scaled from one timing; we time these, smallest first.
CANDIDATES = (64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20)
#: Seed 004's rule: a segment must finish within 90 % of the watchdog's limit (Windows' TDR, 2 s).
LAUNCH_LIMIT_S = 2.0
LIMIT_SHARE = 0.9
#: Candidates within this share of the best rate count as equally good; the smallest one wins
#: (less memory, the same speed: noise must not pick a huge segment).
TOLERANCE = 0.05

_ext: Any = None
_ext_error: str | None = None


def _load():
    global _ext, _ext_error
    if _ext is None and _ext_error is None:
        try:
            from . import _opencl  # type: ignore[attr-defined]
            _ext = _opencl
        except ImportError as exc:   # not built, or libOpenCL.so.1 missing at run time
            _ext_error = str(exc) or type(exc).__name__
    return _ext


def _not_built_reason() -> str:
    if _ext_error and "libOpenCL" in _ext_error:
        return "OpenCL loader missing (libOpenCL.so.1 not found; install ocl-icd-libopencl1)"
    return "OpenCL backend not built (the OpenCL headers/loader were not found when s2mc was built)"


def status() -> dict:
    """What `s2mc info` shows: dict(built, devices, device, reason). devices: every OpenCL device
    (platform, name, type, compute units, global and local memory, ...); device: the index a run
    uses by default (S2MC_OPENCL_DEVICE, else the first GPU, else 0), None when there is none;
    reason: why the backend cannot run ("" when it can)."""
    ext = _load()
    if ext is None:
        return {"built": False, "devices": [], "device": None, "reason": _not_built_reason()}
    try:
        devs, why = ext.devices()
        default = ext.default_device() if devs else None
    except Exception as exc:   # noqa: BLE001 - a broken ICD must not break `s2mc info`
        return {"built": True, "devices": [], "device": None, "reason": f"OpenCL error: {exc}"}
    return {"built": True, "devices": list(devs), "device": default, "reason": "" if devs else why}


def available() -> bool:
    return bool(status()["devices"])


def devices() -> list[dict]:
    return status()["devices"]


def _require() -> Any:
    ext = _load()
    if ext is None:
        raise S2mcError(f"opencl: {_not_built_reason()}")
    st = status()
    if not st["devices"]:
        raise S2mcError(f"opencl: {st['reason']}")
    return ext


def _call(fn, *args, **kwargs):
    """An extension call, its errors (OpenCL failures, build logs) as one-line S2mcErrors."""
    try:
        return fn(*args, **kwargs)
    except (RuntimeError, ValueError) as exc:
        raise S2mcError("opencl: " + " ".join(str(exc).split())) from None


def _device_index(device: int | None) -> int:
    ext = _require()
    return _call(ext.default_device) if device is None else int(device)


def _check(cipher: str, op: str, key: bytes, iv: bytes | None) -> None:
    if cipher not in CIPHERS:
        raise S2mcError(f"opencl: unknown cipher {cipher!r} (expected {', '.join(CIPHERS)})")
    if op not in OPS:
        raise S2mcError(f"opencl: unknown op {op!r} (expected {', '.join(OPS)})")
    if len(key) not in (16, 24, 32):
        raise S2mcError(f"opencl: key must be 16, 24 or 32 bytes, not {len(key)}")
    if op == "ctr" and (iv is None or len(iv) != 16):
        raise S2mcError(f"opencl: iv must be 16 bytes for CTR, not {0 if iv is None else len(iv)}")


def _run(data, out, key: bytes, iv: bytes | None, *, cipher: str, op: str, segment: int,
         device: int | None) -> dict:
    ext = _require()
    return _call(ext.crypt, data, out, bytes(key), bytes(iv or b""), cipher=cipher, op=op,
                 device=-1 if device is None else int(device), segment_bytes=int(segment))


def crypt(data, key: bytes, iv: bytes | None = None, *, cipher: str = "aes", op: str = "ctr",
          segment: int | str = 0, device: int | None = None, info: dict | None = None) -> bytes:
    """`data` through the OpenCL kernels, host to host; returns the output bytes. op: ctr (the
    128-bit big-endian counter of SP 800-38A starting at iv; decryption is the same), ecb-enc,
    ecb-dec (the length a multiple of 16). segment: bytes per segment (0: all at once), "auto" or
    "calibrate". info: a dict that receives the run's timings and segment count."""
    _check(cipher, op, key, iv)
    if op != "ctr" and len(data) % 16:
        raise S2mcError(f"opencl: ECB input length {len(data)} is not a multiple of 16")
    seg = resolve_segment(segment, cipher=cipher, op=op, key_bits=len(key) * 8, device=device)
    out = bytearray(len(data))
    res = _run(data, out, key, iv, cipher=cipher, op=op, segment=seg, device=device)
    if info is not None:
        info.update(res)
    return bytes(out)


#: The file path's ring (see encrypt_file): host buffers in flight, queues beside each other, and
#: the range one call covers between progress updates (the ring drains at the end of each).
FILE_SLOTS = 8
FILE_QUEUES = 2
#: The ring's piece at most, when the segment is seed 004's (auto, calibrate): each of the FILE_SLOTS
#: slots is a mapped host buffer made and freed per run, and on an H200 8 pieces of the 256 MB
#: calibrated there took 1.17 s to make and 0.25 s to free, most of a 2 GiB command line's time,
#: while the copies ran at 3.2-3.5 GB/s at every segment from 16 MB to 1 GB (docs/gpu.md, "Why the
#: ring is no faster on NVIDIA's OpenCL").
FILE_PIECE_BYTES = 32 << 20
FILE_SEGMENT_BYTES = 1 << 30


def encrypt_file(in_path, out_path, key: bytes, iv: bytes | None, decrypt: bool = False, *,
                 cipher: str = "aes", mode: str = "ctr", segment: int | str = "auto",
                 piece_bytes: int = FILE_PIECE_BYTES, slots: int = FILE_SLOTS, queues: int = FILE_QUEUES,
                 device: int | None = None, progress=None, phase: startup.Phase | None = None) -> int:
    """A whole file through the OpenCL backend; output identical to `openssl enc -<cipher>-N-ctr`
    (or `-<cipher>-N-ecb -nopad`). One FileRing per file allocates `slots` host buffers (mapped
    CL_MEM_ALLOC_HOST_PTR buffers) and each of `queues` queues' device buffers once; a piece is one
    of seed 004's segments (`segment`: a size as given; auto and calibrate at most `piece_bytes`;
    all of `piece_bytes` when segment is 0). Between regular
    files a reader thread preads into free buffers, the device copies each in, transforms it
    (counter iv + offset/16) and copies it back into the same buffer on queue (piece mod queues),
    and a writer thread pwrites it: reading, the device and writing overlap with up to `slots`
    pieces in flight, and nothing passes through Python. Other inputs and outputs (FIFOs, stdout)
    stream through s2mc.workloads.cipher_host's pipeline into the same buffers. Returns the byte
    count. Fewer slots when they would take more than an eighth of this machine's memory
    (cipher_host.ring_slots). The FileRing is made on a thread while the files are opened and the
    first pieces read ahead (s2mc.gpu.startup); `phase` as in s2mc.gpu.encrypt_file."""
    op = "ctr" if mode == "ctr" else ("ecb-dec" if decrypt else "ecb-enc")
    _check(cipher, op, key, iv)
    if piece_bytes < 16 or piece_bytes % 16:
        raise S2mcError(f"opencl: piece_bytes must be a positive multiple of 16, not {piece_bytes}")
    if not 1 <= slots <= 256:
        raise S2mcError(f"opencl: slots must be in 1..256, not {slots}")
    if not 1 <= queues <= 64:
        raise S2mcError(f"opencl: queues must be in 1..64, not {queues}")
    # the input's errors before a calibration's second of work (crypt_file checks them again)
    src = check_input(in_path, out_path)
    if op != "ctr" and os.path.isfile(src) and os.path.getsize(src) % 16:
        raise S2mcError(f"{src}: input length {os.path.getsize(src)} bytes is not a multiple of 16 "
                        "(ECB has no padding; pad the input or use --mode ctr)")
    seg = resolve_segment(segment, cipher=cipher, op=op, key_bits=len(key) * 8, device=device)
    ext = _require()
    piece = min(seg, piece_bytes) if seg and segment in SEGMENT_CHOICES else (seg or piece_bytes)
    nslots = ring_slots(slots, piece)
    ring = startup.Pending(lambda: _call(ext.FileRing, bytes(key), bytes(iv or b""), cipher=cipher, op=op,
                                         device=-1 if device is None else int(device), slot_bytes=piece,
                                         slots=nslots, queues=queues), phase)
    startup.read_ahead(src, nslots * piece)

    def transform(view: memoryview, offset: int) -> None:
        if op != "ctr" and len(view) % 16:
            raise S2mcError(f"{src}: input length is not a multiple of 16 "
                            "(ECB has no padding; pad the input or use --mode ctr)")
        _call(ring.crypt_buffer, view, offset)

    segment_bytes = max(piece, FILE_SEGMENT_BYTES // piece * piece)
    try:
        return crypt_file(src, out_path, transform, chunk_bytes=min(max(piece_bytes, piece), MAX_CHUNK_BYTES),
                          nbuffers=2, progress=running_total(progress), multiple=1 if op == "ctr" else 16,
                          range_transform=ring_range_transform(ring, src, out_path, "opencl"),
                          segment_bytes=segment_bytes)
    finally:
        ring.close()


# -- seed 004's adaptive segment size ------------------------------------------------------------

@dataclass
class Calibration:
    """One calibration: every candidate timed, the rates, the choice and why."""
    device: str
    cipher: str
    op: str
    key_bits: int
    budget_s: float
    segment_bytes: int
    measured: list[tuple[int, float]] = field(default_factory=list)   # (bytes, best seconds)
    limit_bytes: int = 0          # seed 004's proportional rule: what fits in 90 % of the limit
    spent_s: float = 0.0
    calibrated_at: str = ""

    def table(self) -> str:
        """The candidates in Markdown, the chosen one marked."""
        lines = ["| segment | seconds | MB/s |", "|---:|---:|---:|"]
        for n, s in self.measured:
            mark = " **chosen**" if n == self.segment_bytes else ""
            lines.append(f"| {human_size(n)}B{mark} | {s:.4f} | {n / s / 1e6 if s else 0:.0f} |")
        if self.segment_bytes not in {n for n, _ in self.measured}:   # capped by seed 004's limit
            lines.append(f"| {human_size(self.segment_bytes)}B **chosen** (seed 004's limit) | – | – |")
        return "\n".join(lines)


def choose(measured: list[tuple[int, float]], *, launch_limit_s: float = LAUNCH_LIMIT_S) -> tuple[int, int]:
    """(segment, limit) from (bytes, seconds) timings: the smallest candidate within TOLERANCE of
    the best rate, but no more than seed 004's limit, the bytes the fastest measured rate gets
    through in LIMIT_SHARE x launch_limit_s (a multiple of 16, at least the smallest candidate)."""
    rates = [(n, n / s) for n, s in measured if s > 0]
    if not rates:
        raise S2mcError("opencl: segment calibration measured nothing (the budget is too small)")
    best = max(r for _, r in rates)
    pick = min(n for n, r in rates if r >= best * (1 - TOLERANCE))
    limit = int(best * LIMIT_SHARE * launch_limit_s) // 16 * 16
    limit = max(limit, min(n for n, _ in rates))
    return min(pick, limit), limit


def calibrate(cipher: str = "aes", op: str = "ctr", key_bits: int = 128, *, budget_s: float = 1.0,
              candidates: tuple[int, ...] = CANDIDATES, launch_limit_s: float = LAUNCH_LIMIT_S,
              reps: int = 2, device: int | None = None, store: bool = True,
              timer: Callable[[int], float] | None = None) -> Calibration:
    """Seed 004's adaptive segment size, within a time budget.

    Candidates are timed smallest first, each as one segment host to host (copy in, kernel, copy
    back: seed 004's "system call before and after"), best of `reps`, after one warm-up launch (the
    paper's "wake up"). A candidate is skipped, and the larger ones with it, when the time the last
    rate predicts for it would overrun what is left of `budget_s`, or when the device cannot
    allocate it. The choice: `choose` (the smallest candidate within 5 % of the best rate, capped by
    seed 004's proportional rule). With store=True the result is kept in the cache file
    (`cache_path()`) for this device, cipher, key size and op, so later runs reuse it (seed 004's
    "stored in a local file becoming the new reference"); calibrating again replaces it.
    `timer(bytes) -> seconds` replaces the device (tests)."""
    if cipher not in CIPHERS or op not in OPS or key_bits not in (128, 192, 256):
        raise S2mcError(f"opencl: cannot calibrate {cipher}-{key_bits}-{op}")
    if budget_s <= 0:
        raise S2mcError(f"opencl: the calibration budget must be positive, not {budget_s}")
    name, max_alloc = "test device", MAX_SEGMENT
    if timer is None:
        dev = _device_info(device)
        name, max_alloc = _device_key(dev), int(dev["max_alloc_bytes"])
        key, iv = bytes(range(key_bits // 8)), bytes(16)
        buffers: dict[int, tuple[bytearray, bytearray]] = {}

        def timer(n: int) -> float:
            if n not in buffers:
                buffers.clear()   # one candidate's buffers at a time
                buffers[n] = (bytearray(n), bytearray(n))
            src, dst = buffers[n]
            t0 = time.perf_counter()
            _run(src, dst, key, iv, cipher=cipher, op=op, segment=n, device=device)
            return time.perf_counter() - t0

        timer(min(candidates))   # warm-up: builds the program on first use, wakes the device
    cands = sorted(c for c in set(candidates) if c % 16 == 0 and 16 <= c <= min(max_alloc, MAX_SEGMENT))
    t_start = time.perf_counter()
    measured: list[tuple[int, float]] = []
    timed = 0.0   # the timings' own sum: what a fake timer spends, and at most the wall time
    for n in cands:
        left = budget_s - max(time.perf_counter() - t_start, timed)
        if measured:
            last_n, last_s = measured[-1]
            if reps * last_s * n / last_n > left:   # the proportional rule, on the budget
                break
        times = [timer(n) for _ in range(reps)]
        timed += sum(times)
        measured.append((n, min(times)))
    seg, limit = choose(measured, launch_limit_s=launch_limit_s)
    cal = Calibration(device=name, cipher=cipher, op=op, key_bits=key_bits, budget_s=budget_s,
                      segment_bytes=seg, measured=measured, limit_bytes=limit,
                      spent_s=max(time.perf_counter() - t_start, timed),
                      calibrated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    if store:
        _store(cal)
    return cal


def cache_path() -> Path:
    """The file the calibrations are kept in: $S2MC_CACHE_DIR/opencl-segments.json, else
    $XDG_CACHE_HOME/s2mc/..., else ~/.cache/s2mc/..."""
    base = os.environ.get("S2MC_CACHE_DIR")
    if not base:
        base = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "s2mc")
    return Path(base) / "opencl-segments.json"


def _cache_key(device: str, cipher: str, op: str, key_bits: int) -> str:
    return f"{device}|{cipher}-{key_bits}-{op}"


def _read_cache() -> dict:
    try:
        data = json.loads(cache_path().read_text())
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):   # none yet, or unreadable: calibrate again
        return {}


def _store(cal: Calibration) -> bool:
    """Keep `cal` in the cache file; False when it cannot be written (the run goes on)."""
    from s2mc.common.outputs import write_output
    data = _read_cache()
    data[_cache_key(cal.device, cal.cipher, cal.op, cal.key_bits)] = asdict(cal)
    path = cache_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(path, json.dumps(data, indent=1, sort_keys=True) + "\n", what="segment cache")
        return True
    except (OSError, S2mcError):
        return False


def _device_info(device: int | None) -> dict:
    idx = _device_index(device)
    devs = devices()
    if not 0 <= idx < len(devs):
        raise S2mcError(f"opencl: no device {idx} (there are {len(devs)})")
    return devs[idx]


def _device_key(dev: dict) -> str:
    return f"{dev['platform']}/{dev['name']}/{dev['driver']}"


def stored_segment(cipher: str, op: str, key_bits: int, device: int | None = None) -> int | None:
    """The calibrated segment size stored for this device, or None."""
    entry = _read_cache().get(_cache_key(_device_key(_device_info(device)), cipher, op, key_bits))
    try:
        n = int(entry["segment_bytes"]) if entry else 0
    except (KeyError, TypeError, ValueError):
        return None
    return n if MIN_SEGMENT <= n <= MAX_SEGMENT and n % 16 == 0 else None


def resolve_segment(segment: int | str, *, cipher: str, op: str, key_bits: int,
                    device: int | None = None, budget_s: float = 1.0) -> int:
    """A segment size in bytes from a size, "auto" (stored, else calibrated now and stored) or
    "calibrate" (calibrated now and stored)."""
    if segment == "auto":
        stored = stored_segment(cipher, op, key_bits, device)
        if stored:
            return stored
        return calibrate(cipher, op, key_bits, budget_s=budget_s, device=device).segment_bytes
    if segment == "calibrate":
        return calibrate(cipher, op, key_bits, budget_s=budget_s, device=device).segment_bytes
    if isinstance(segment, str):
        raise S2mcError(f"opencl: segment must be a size, auto or calibrate, not {segment!r}")
    if segment and (segment < MIN_SEGMENT or segment > MAX_SEGMENT or segment % 16):
        raise S2mcError(f"opencl: segment must be a multiple of 16 in {MIN_SEGMENT}..{human_size(MAX_SEGMENT)}, "
                        f"not {segment}")
    return int(segment)


# -- benchmarks and the grid `s2mc gpu --backend opencl` runs ------------------------------------

def bench(cipher: str, measure: str, *, key_bits: int = 128, nbytes: int, reps: int = 5,
          op: str = "ctr", segment: int | str = 0, device: int | None = None) -> dict:
    """Time one measure: device (the kernel alone on data in device memory, profiling events;
    seed 002's method A), host (host to host in seed 004's segments, one after another on one
    queue, host clock) or overlap (host to host through the file path's ring: the segments staged
    in mapped host buffers, FILE_SLOTS in flight over FILE_QUEUES queues; seed 002's method B).
    Returns seconds (median), best_seconds and the launch shape."""
    if measure not in MEASURES + ("overlap",):
        raise S2mcError(f"opencl: unknown measure {measure!r} (expected {', '.join(MEASURES)})")
    if cipher not in CIPHERS or op not in OPS:
        raise S2mcError(f"opencl: unknown cipher or op {cipher!r} {op!r}")
    ext = _require()
    dev = -1 if device is None else int(device)
    if measure == "device":
        res = _call(ext.bench_device, cipher, op, key_bits, int(nbytes), reps=reps, device=dev)
        times = sorted(res.pop("kernel_seconds_each"))
    elif measure == "overlap":
        seg = resolve_segment(segment, cipher=cipher, op=op, key_bits=key_bits, device=device)
        piece = min(seg or (64 << 20), (int(nbytes) + 15) // 16 * 16)
        ring = _call(ext.FileRing, bytes(range(key_bits // 8)), bytes(16), cipher=cipher, op=op, device=dev,
                     slot_bytes=piece, slots=FILE_SLOTS, queues=FILE_QUEUES)
        buf = bytearray(nbytes)
        _call(ring.crypt_buffer, buf, 0)   # warm-up
        times = []
        for _ in range(reps):
            t0 = time.perf_counter()
            _call(ring.crypt_buffer, buf, 0)
            times.append(time.perf_counter() - t0)
        times.sort()
        res = {"segment_bytes": piece, "segments": -(-int(nbytes) // piece), "slots": ring.slots,
               "queues": ring.queues, "global_size": 0, "local_size": 0}
    else:
        seg = resolve_segment(segment, cipher=cipher, op=op, key_bits=key_bits, device=device)
        key, iv = bytes(range(key_bits // 8)), bytes(16)
        src, dst = bytearray(nbytes), bytearray(nbytes)
        _call(ext.crypt, src, dst, key, iv, cipher=cipher, op=op, device=dev, segment_bytes=seg)  # warm-up
        times, res = [], {}
        for _ in range(reps):
            t0 = time.perf_counter()
            res = _call(ext.crypt, src, dst, key, iv, cipher=cipher, op=op, device=dev, segment_bytes=seg)
            times.append(time.perf_counter() - t0)
        times.sort()
    return dict(res, cipher=cipher, measure=measure, op=op, key_bits=key_bits, bytes=int(nbytes), reps=reps,
                seconds=times[len(times) // 2], best_seconds=times[0])


@dataclass(frozen=True)
class OpenclGrid:
    """The grid of `s2mc gpu --backend opencl`: size x measure for one cipher, key size and op."""
    sizes: tuple[int, ...] = (1 << 20, 16 << 20, 256 << 20)
    measures: tuple[str, ...] = MEASURES
    cipher: str = "aes"
    key_bits: int = 128
    op: str = "ctr"
    segment: int | str = "auto"
    reps: int = 5
    device: int | None = None


def platform_info(device: int | None = None) -> dict:
    dev = _device_info(device)
    return {"gpu": dev["name"], "device": dev, "opencl": True}


def run_grid(grid: OpenclGrid, *, run_id: str, experiment: str = "opencl", progress: bool = False,
             log: Callable[[str], None] | None = None) -> tuple[list[dict], list[dict], dict]:
    """Measure the grid: (summaries, records rows, platform). Rows: source and engine `opencl`,
    platform the device name, workload <cipher>-<bits>-<op>, variant opencl/device-resident,
    opencl/host-segmented or opencl/host-overlap-q<queues> (measured with host)."""
    plat = platform_info(grid.device)
    seg = resolve_segment(grid.segment, cipher=grid.cipher, op=grid.op, key_bits=grid.key_bits,
                          device=grid.device) if "host" in grid.measures else 0
    plat["segment_bytes"] = seg
    mem = int(plat["device"]["max_alloc_bytes"])
    # host comes with overlap: seed 004's segments one after another, then the same segments
    # through the ring of the file path (several in flight), side by side
    measures = [m for ms in grid.measures for m in ((ms, "overlap") if ms == "host" else (ms,))]
    configs = [(m, n) for m in measures for n in grid.sizes]
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc gpu --backend opencl", unit="run", leave=False)
    rows, summaries = [], []
    try:
        for measure, n in configs:
            if measure == "device" and n > mem:
                if log:
                    log(f"skipping device-resident {human_size(n)}B: more than one allocation may hold")
                continue
            res = bench(grid.cipher, measure, key_bits=grid.key_bits, nbytes=n, reps=grid.reps, op=grid.op,
                        segment=seg, device=grid.device)
            what = {"device": "device-resident", "host": "host-segmented",
                    "overlap": f"host-overlap-q{FILE_QUEUES}"}[measure]
            variant = f"opencl/{what}"
            base = dict(run_id=run_id, experiment=experiment, source="opencl", platform=plat["gpu"],
                        workload=f"{grid.cipher}-{grid.key_bits}-{grid.op}", variant=variant,
                        engine="opencl", cores=1, core=-1, bytes=n)
            secs = res["seconds"]
            rows.append(dict(base, metric="kernel_seconds" if measure == "device" else "seconds", value=secs))
            rows.append(dict(base, metric="bytes_per_second", value=n / secs))
            summaries.append(dict(res, variant=variant, what=what, kernel="opencl",
                                  gbps=n * 8 / secs / 1e9, best_gbps=n * 8 / res["best_seconds"] / 1e9))
            if log:
                log(f"{variant:28s} {human_size(n):>5s}B  {summaries[-1]['gbps']:8.2f} Gbps "
                    f"(global {res['global_size']} x local {res['local_size']}, {res['segments']} segment(s))"
                    if measure != "overlap" else
                    f"{variant:28s} {human_size(n):>5s}B  {summaries[-1]['gbps']:8.2f} Gbps "
                    f"({res['segments']} piece(s) of {human_size(res['segment_bytes'])}B, {res['slots']} in flight)")
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    return summaries, rows, plat


def markdown_table(summaries: list[dict]) -> str:
    sizes = sorted({s["bytes"] for s in summaries})
    rows: dict[str, dict[int, float]] = {}
    for s in summaries:
        rows.setdefault(s["what"], {})[s["bytes"]] = s["gbps"]
    lines = ["| backend | measure | " + " | ".join(human_size(n) + "B" for n in sizes) + " |",
             "|---|---|" + "---:|" * len(sizes)]
    for what, vals in rows.items():
        lines.append(f"| opencl | {what} | " + " | ".join(f"{vals[n]:.2f}" if n in vals else "–" for n in sizes)
                     + " |")
    return "\n".join(lines)
