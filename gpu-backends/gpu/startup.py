"""The GPU backends' file start-up, overlapped: `s2mc.gpu.startup`.

Creating a backend's file object (CUDA: the context, the pinned ring buffers and each stream's
device buffers; OpenCL: the mapped host buffers and each queue's device buffers) takes a large
share of a short `s2mc encrypt --backend cuda|opencl` run. None of it needs the files, so it runs
on a thread (the extensions' constructors release the GIL) while the calling thread opens the
input, creates the output and asks the kernel to read the first pieces ahead; the first range or
buffer call waits for it.

    ring = startup.Pending(lambda: ext.FileCipher(...), phase)   # starts the thread
    startup.read_ahead(src, nbytes)
    try:
        crypt_file(..., range_transform=ring_range_transform(ring, ...))
    finally:
        ring.close()                       # never leaves the thread running
"""
from __future__ import annotations

import os
import threading
from typing import Any, Callable

#: phase(name, at=None): called with "backend" once the file object is ready (its wait is over),
#: "first_read" with the CLOCK_MONOTONIC time the ring's reader had the first piece in (`at`, from
#: the ring's own result) and "encrypt" after each range or buffer call; `s2mc encrypt --timings`
#: keeps the last of each.
Phase = Callable[..., None]


class Pending:
    """A backend's file object being created on a thread: crypt_fds and crypt_buffer wait for it,
    then pass through; its creation's error is raised there, in the calling thread."""

    def __init__(self, make: Callable[[], Any], phase: Phase | None = None):
        self._obj: Any = None
        self._exc: BaseException | None = None
        self._ready = False
        self._first_read = False
        self._phase = phase
        self._thread = threading.Thread(target=self._make, args=(make,), name="s2mc-gpu-start", daemon=True)
        self._thread.start()

    def _make(self, make: Callable[[], Any]) -> None:
        try:
            self._obj = make()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread by get()
            self._exc = exc

    def get(self) -> Any:
        """The file object, once made (raises what making it raised)."""
        if not self._ready:
            self._thread.join()
            self._ready = True
            if self._exc is None and self._phase is not None:
                self._phase("backend")
        if self._exc is not None:
            raise self._exc
        return self._obj

    def crypt_fds(self, *args):
        out = self.get().crypt_fds(*args)
        if self._phase is not None:
            if not self._first_read and len(out) > 4 and out[4] > 0:
                self._first_read = True
                self._phase("first_read", at=out[4])
            self._phase("encrypt")
        return out

    def crypt_buffer(self, *args):
        out = self.get().crypt_buffer(*args)
        if self._phase is not None:
            self._phase("encrypt")
        return out

    def close(self) -> None:
        """Wait for the thread (a context half made must not meet the interpreter's exit)."""
        self._thread.join()


def read_ahead(path: str, nbytes: int) -> None:
    """Ask the kernel to read the first nbytes of the regular file `path` into the page cache now
    (asynchronously): a file on disk is then being read while the backend starts. Best effort:
    anything else (a FIFO, no posix_fadvise) is left alone."""
    advise = getattr(os, "posix_fadvise", None)
    # a FIFO is never opened here: its writer would see a reader come and go
    if advise is None or nbytes <= 0 or not os.path.isfile(path):
        return
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return   # crypt_file names the input's problem
    try:
        advise(fd, 0, nbytes, os.POSIX_FADV_WILLNEED)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["Pending", "Phase", "read_ahead"]
