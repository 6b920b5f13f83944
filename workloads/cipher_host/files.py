"""Streaming a file through an AES-CTR transform: what `s2mc encrypt` does with either backend.

The output is byte-identical to `openssl enc -aes-{128,192,256}-ctr -K KEY -iv IV` (no salt, no
header) whenever the backend's transform is CTR with counter IV + offset/16. A three-stage pipeline
overlaps reading, transforming and writing: a reader thread fills buffers, the calling thread
transforms them in place (the backends release the GIL) and a writer thread writes them out, so
memory stays at a few chunks whatever the file size.

The output goes through s2mc.common.outputs: atomic for regular files (a 0600 temporary file renamed
over the target), written through for devices, FIFOs and symlink targets, `-` for stdout.
"""
from __future__ import annotations

import fcntl
import os
import queue
import stat
import threading
from typing import Callable

from s2mc.common.errors import S2mcError
from s2mc.common.units import human_size
from s2mc.common.outputs import STDOUT, open_output, resolve

DEFAULT_CHUNK_BYTES = 4 << 20
#: The largest chunk: a few are in memory at once, and past some MiB a larger one gains nothing.
MAX_CHUNK_BYTES = 1 << 30


def host_memory() -> int:
    """This machine's physical memory in bytes: no buffer the host allocates can be larger, so the
    size options of the native and GPU benchmarks are bounded by it. Rounded down to a MiB, so
    that it reads well in a message (16K, 64M, 23976M)."""
    try:
        return (os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")) >> 20 << 20
    except (ValueError, OSError, AttributeError):   # not POSIX: a bound that still stops typos
        return 1 << 40

def ring_slots(slots: int, piece_bytes: int, floor_bytes: int = 128 << 20) -> int:
    """How many of `slots` pinned pieces of piece_bytes a file ring may hold: all of them while
    they take at most an eighth of this machine's memory (or floor_bytes, whichever is more), else
    fewer, at least one."""
    budget = max(floor_bytes, host_memory() // 8)
    return max(1, min(slots, budget // max(piece_bytes, 1)))



def ring_range_transform(ring, src: str, dst: str, backend: str):
    """The range transform of an accelerator's file ring (s2mc_cipher/fd_ring.h, bound as
    `crypt_fds(in_fd, out_fd, offset, length) -> (bytes, errno, stage, message, first_read)`): its end states as
    one-line S2mcErrors naming the file or the backend (`gpu`, `opencl`)."""
    def range_transform(in_fd: int, out_fd: int, offset: int, length: int) -> None:
        _, err, stage, message = ring.crypt_fds(in_fd, out_fd, offset, length)[:4]
        if stage == "eof":
            raise S2mcError(f"{src}: input file shrank while it was being read")
        if stage == "device":
            raise S2mcError(f"{backend}: {message}")
        if stage:
            name, what = (src, "cannot read input") if stage == "read" else (dst, "cannot write output")
            raise S2mcError(f"{name}: {what} ({os.strerror(err)})")
    return range_transform


def running_total(progress):
    """crypt_file's `progress` for a caller whose callable wants the bytes done so far (crypt_file
    gives each chunk's bytes); True (a bar) passes through, anything else is no progress."""
    if not callable(progress):
        return progress is True
    done = 0

    def report(n: int) -> None:
        nonlocal done
        done += n
        progress(done)
    return report

#: range_transform(in_fd, out_fd, offset, length): transform bytes [offset, offset + length) of the
#: regular file in_fd into the same range of the regular file out_fd (pread, in place, pwrite), on as
#: many threads as it likes; raises S2mcError. The fast path for a regular file into a regular file.
RangeTransform = Callable[[int, int, int, int], None]
#: Bytes per call of a range transform: between calls the progress bar moves and Ctrl-C is seen.
RANGE_SEGMENT_BYTES = 64 << 20

#: transform(chunk, byte_offset): turn `chunk` (a writable memoryview, a multiple of 16 bytes long
#: except at the end of the file) into its output in place; byte_offset is where it starts.
Transform = Callable[[memoryview, int], None]


def check_input(src: str | os.PathLike, dst: str | os.PathLike) -> str:
    """S2mcError unless `src` is a readable file other than the file `dst` writes. Returns src."""
    src = os.fspath(src)
    if not os.path.exists(src):
        raise S2mcError(f"{src}: input file does not exist")
    if os.path.isdir(src):
        raise S2mcError(f"{src}: input is a directory, not a file")
    if not os.access(src, os.R_OK):
        raise S2mcError(f"{src}: input file is not readable")
    dst = os.fspath(dst)
    if dst != STDOUT:
        same = os.path.realpath(src) == resolve(dst)
        if not same and os.path.exists(dst):
            try:
                same = os.path.samefile(src, dst)
            except OSError:
                same = False
        if same:
            raise S2mcError(f"{dst}: input and output are the same file (write to a different path)")
    return src


def _read_full(f, view: memoryview) -> int:
    """Fill `view` unless end of file comes first; returns the bytes read."""
    n = 0
    while n < len(view):
        got = f.readinto(view[n:])
        if not got:
            break
        n += got
    return n


class _Input:
    """The input file, whose read errors (EIO, ...) name its path."""

    def __init__(self, f, path: str):
        self._f, self._path = f, path

    def readinto(self, view) -> int:
        try:
            return self._f.readinto(view)
        except OSError as exc:
            raise S2mcError(f"{self._path}: cannot read input ({exc.strerror or exc})") from None


def stream_transform(fin, fout, transform: Transform, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
                     progress: Callable[[int], None] | None = None, nbuffers: int = 3) -> int:
    """Run fin -> transform(chunk, byte_offset) in place -> fout with reading, transforming and
    writing overlapped. Every chunk but the last is exactly chunk_bytes (a multiple of 16) long.
    Returns the byte count."""
    if not 16 <= chunk_bytes <= MAX_CHUNK_BYTES or chunk_bytes % 16:
        raise S2mcError(f"chunk size must be a multiple of 16 bytes in 16..{human_size(MAX_CHUNK_BYTES)} "
                        f"(got {chunk_bytes})")
    free: queue.Queue = queue.Queue()
    filled: queue.Queue = queue.Queue()
    done: queue.Queue = queue.Queue()
    try:
        for _ in range(nbuffers):
            free.put(bytearray(chunk_bytes))
    except MemoryError:
        raise S2mcError(f"cannot allocate {nbuffers} buffers of {human_size(chunk_bytes)} bytes "
                        "(use a smaller chunk size)") from None
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


def _regular_at_start(f, *, writing: bool) -> bool:
    """Whether file object `f` is a regular file positioned at its start (and, for writing, not
    O_APPEND, which would make pwrite ignore its offset): the case a range transform can handle."""
    try:
        fd = f.fileno()
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or os.lseek(fd, 0, os.SEEK_CUR) != 0:
            return False
        # The files of /proc and /sys are "regular" but their size is 0 or a page whatever they
        # hold, and no blocks back them: only a read to the end of the stream gets their content.
        if not writing and (st.st_size == 0 or st.st_blocks == 0):
            return False
        return not (writing and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_APPEND)
    except (OSError, ValueError, AttributeError):   # no descriptor (a test's stdout), closed
        return False


def _range_run(fin, fout, size: int, range_transform: RangeTransform,
               progress: Callable[[int], None] | None, segment_bytes: int | None = None) -> int:
    """Run range_transform over [0, size) a segment at a time (RANGE_SEGMENT_BYTES unless given);
    returns the bytes."""
    segment_bytes = segment_bytes or RANGE_SEGMENT_BYTES
    ifd, ofd = fin.fileno(), fout.fileno()
    done = 0
    while done < size:
        n = min(segment_bytes, size - done)
        range_transform(ifd, ofd, done, n)
        done += n
        if progress:
            progress(n)
    return done


def crypt_file(src, dst, transform: Transform, *, chunk_bytes: int = DEFAULT_CHUNK_BYTES,
               nbuffers: int = 3, progress: bool | Callable[[int], None] = False,
               range_transform: RangeTransform | None = None, multiple: int = 1,
               segment_bytes: int | None = None) -> int:
    """Stream file `src` through `transform` into `dst` (s2mc.common.outputs rules; `-` is stdout).
    progress: True for a tqdm bar on stderr, or a callable given the bytes of every chunk.
    range_transform: used instead when both files are regular (no pipeline, no copies in Python),
    called on ranges of segment_bytes (a multiple of 16, default RANGE_SEGMENT_BYTES; a pipelined
    transform drains between calls, so one that keeps many pieces in flight wants large segments).
    multiple: the input's length must be a multiple of it (ECB: 16), else S2mcError and no output.
    Returns the byte count."""
    src = check_input(src, dst)
    if multiple > 1 and os.path.isfile(src) and os.path.getsize(src) % multiple:
        raise S2mcError(f"{src}: input length {os.path.getsize(src)} bytes is not a multiple of {multiple} "
                        "(ECB has no padding; pad the input or use --mode ctr)")
    bar = None
    if progress is True:
        from tqdm import tqdm
        bar = tqdm(total=os.path.getsize(src), unit="B", unit_scale=True, leave=False,
                   desc=os.path.basename(os.fspath(dst)))
        progress = bar.update
    try:
        try:
            fin = open(src, "rb", buffering=0)
        except OSError as exc:
            raise S2mcError(f"{src}: cannot read input ({exc.strerror or exc})") from None
        with fin, open_output(dst, "wb", buffering=0) as fout:
            if range_transform is not None and _regular_at_start(fin, writing=False) \
                    and _regular_at_start(fout, writing=True):
                size = os.fstat(fin.fileno()).st_size
                if multiple > 1 and size % multiple:   # changed since the check above
                    raise S2mcError(f"{src}: input length {size} bytes is not a multiple of {multiple}")
                return _range_run(fin, fout, size, range_transform, progress or None, segment_bytes)
            return stream_transform(_Input(fin, src), fout, transform, chunk_bytes=chunk_bytes,
                                    nbuffers=nbuffers, progress=progress or None)
    finally:
        if bar is not None:
            bar.close()


__all__ = ["DEFAULT_CHUNK_BYTES", "MAX_CHUNK_BYTES", "RANGE_SEGMENT_BYTES", "host_memory", "ring_slots", "Transform", "RangeTransform", "check_input",
           "stream_transform", "crypt_file"]
