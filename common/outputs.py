"""Every file s2mc writes goes through here: object files, listings, traces, records, AES output.

Why in s2mc.common: it is the foundation below every component (errors.py lives here too) and
imports nothing of s2mc, so the assembler, the compiler, the simulator's CLI, the analysis layer and
both cipher backends share one set of output rules without any of them depending on another.

The rules (those of `openssl enc -out`, made atomic for regular files):
- `-` is stdout.
- A regular file (or a new one) is written to a temporary `.NAME.PID-XXXXXXXX.part` file in the same
  folder (NAME cut, ending in `~`, where the whole would not fit the file system's name limit),
  created 0600 (it may hold plaintext), fsync'ed and renamed over the target only when everything
  succeeded. Such files whose process PID no longer runs (a run killed with SIGKILL) are removed by
  the next write of the same output. A replaced file keeps its mode and, where the process may set it, its owner and group;
  a new file gets 0666 & ~umask. On any failure the temporary file is removed and the old file is
  left as it was.
- Symbolic links are followed: the file they point at is written, the link stays. A replaced file
  is a new inode: other hard links keep the old content, and extended attributes (ACLs, SELinux
  labels) are not carried over; mode, owner and group are.
- Character and block devices and FIFOs are opened and written directly (`--out /dev/null` stays
  /dev/null); so is any path through /proc or /dev/fd (`/dev/stdout`, `/dev/stderr`, a process
  substitution's `/dev/fd/63`), whatever it leads to, as `openssl enc -out` does: a rename there
  would replace the file the shell opened, not write into it.
- An existing regular file without write permission (mode bits, also for root) is refused unless
  `force` is set (the CLI's `--force`), as openssl refuses it.
- Two outputs of one call, or an output and an input, that are the same file (device and inode,
  through any links) are refused by `check_distinct` before anything is written.
- A path ending in `/` or naming a directory is a one-line error; so is a folder that does not
  exist (nothing creates the folders above an output).
- Every signal that would end the process (SIGNALS: HUP, QUIT, TERM, USR1, USR2, ALRM, VTALRM,
  PROF, XCPU, the real-time ones, ...; SIGINT arrives as KeyboardInterrupt and takes the error path)
  removes the temporary files (and runs the cleanups registered with `cleanup_on_signal`, which stop
  child processes and remove temporary folders) before the process dies of that signal.
- Files that belong together are one unit (`one_unit`: records and their manifest wherever they
  are written; encrypt's output and its --records; a GPU grid's records and --markdown table;
  the examples; the lab's notebooks): each waits in its temporary file until all are written,
  then all are renamed back to back under a kernel lock (flock) on their folders, so that two runs
  writing the same files never leave one file of each; a failure or a signal leaves none of them.
  (A run's trace and waveform are not bound to its records: a run that faults still writes them,
  to show where it went wrong; a sweep that fails some configurations still merges the others.)
- An output folder (`output_folder`: the report) is built in a temporary folder beside it and put
  in place whole at the end; a failure leaves the previous one as it was.
- Every error is an S2mcError that names the path.
"""
from __future__ import annotations

import errno
import fcntl
import os
import re
import shutil
import signal
import stat
import sys
import tempfile
import threading
from contextlib import contextmanager
from typing import IO, Iterator

from .errors import S2mcError

STDOUT = "-"

# Temporary files being written now; the signal handler removes them.
_live: set[str] = set()
# Cleanups to run when a signal of SIGNALS ends the process (stop a child, remove a temporary folder).
_cleanups: dict[int, object] = {}
_handled: set[int] = set()
# Per thread: the outputs finished inside `one_unit()` and waiting for its end (no attribute: no unit).
_units = threading.local()
# Folders being built by `output_folder`: a file written inside one is renamed into it at once (the
# folder as a whole is what appears at the end).
_staging: set[str] = set()
#: The signals whose default action ends the process (terminate, or dump core) and that a handler can
#: act on: those another process, the terminal, a timer or a resource limit sends. Left out: SIGKILL
#: (cannot be caught); SIGINT (Python's KeyboardInterrupt: the error path cleans up); the faults a
#: bad instruction raises (SEGV, BUS, FPE, ILL, TRAP, SYS: a Python handler would run only after
#: that instruction, which faults again) and SIGABRT (abort() dies whatever the handler does).
#: SIGPIPE and SIGXFSZ are on the list though Python ignores both at start (a write then fails with
#: EPIPE or EFBIG, and the error path cleans up): handled wherever a host program restores them.
_TERMINATING = ("SIGHUP", "SIGQUIT", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGVTALRM", "SIGPROF",
                "SIGPIPE", "SIGXCPU", "SIGXFSZ", "SIGPOLL", "SIGIO", "SIGPWR", "SIGSTKFLT", "SIGLOST")


def _terminating() -> tuple[int, ...]:
    named = {getattr(signal, name) for name in _TERMINATING if hasattr(signal, name)}
    realtime = range(signal.SIGRTMIN, signal.SIGRTMAX + 1) if hasattr(signal, "SIGRTMIN") else ()
    return tuple(sorted(named | set(realtime)))


#: _TERMINATING as this system numbers them, with its real-time signals (SIGRTMIN..SIGRTMAX).
SIGNALS = _terminating()
#: Replace read-only existing outputs instead of refusing them (the CLI's --force sets it).
force = False


def set_force(flag: bool) -> None:
    """Whether read-only existing outputs are replaced (True) or refused (False, the default)."""
    global force
    force = bool(flag)


def _on_signal(signum, frame):  # noqa: ARG001 - signal handler signature
    for path in list(_live):
        try:
            os.unlink(path)
        except OSError:
            pass
        _live.discard(path)
    for fn in list(_cleanups.values()):
        try:
            fn()
        except Exception:  # noqa: BLE001 - dying anyway: the other cleanups still run
            pass
    # Die of the signal as if no handler had been installed (exit status 128 + signum in a shell).
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_signal_handlers() -> None:
    """Handle every signal of SIGNALS where it would end the process anyway (never where it is
    ignored, as SIGHUP under nohup, or handled by someone else)."""
    for sig in SIGNALS:
        if sig in _handled:
            continue
        try:
            if signal.getsignal(sig) is signal.SIG_DFL:
                signal.signal(sig, _on_signal)
            _handled.add(sig)
        except ValueError:  # not the main thread: the caller's cleanup (finally) still runs
            return


@contextmanager
def cleanup_on_signal(fn) -> Iterator[None]:
    """Run `fn()` if a signal of SIGNALS ends the process inside this block (the block's own
    `finally` runs for Ctrl-C and errors, not for those)."""
    _install_signal_handlers()
    key = id(fn)
    _cleanups[key] = fn
    try:
        yield
    finally:
        _cleanups.pop(key, None)


def pid_alive(pid: int) -> bool:
    """Whether process `pid` exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:   # someone else's process
        return True
    return True


def remove_stale(folder: str | os.PathLike, prefix: str, suffix: str = "") -> list[str]:
    """Remove the entries of `folder` named PREFIX<pid>-XXXXXXXX SUFFIX whose process <pid> is
    gone (what a run killed by SIGKILL leaves: temporary files, temporary folders). Entries of
    live processes are left alone. Returns the removed paths."""
    # <anything> is the 8 characters mkstemp and mkdtemp add: a longer name is another output's
    pat = re.compile(re.escape(prefix) + r"(\d+)-[a-z0-9_]{8}" + re.escape(suffix) + r"\Z")
    removed = []
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        m = pat.match(name)
        if not m or int(m[1]) == os.getpid() or pid_alive(int(m[1])):
            continue
        path = os.path.join(folder, name)
        try:
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            else:
                os.unlink(path)
            removed.append(path)
        except OSError:
            pass
    return removed


def _name_max(folder: str) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):
        return 255


def temp_prefix(folder: str, name: str, suffix: str) -> str:
    """The start of the temporary files of output `name` in `folder`: `.NAME.` with NAME cut (and
    ending in `~`) so that `.NAME.PID-XXXXXXXX` + suffix fits the file system's name limit."""
    room = _name_max(folder) - len(f"..{4194304 * 1000}-XXXXXXXX{suffix}".encode())
    raw = name.encode("utf-8", "surrogateescape")
    if len(raw) > room:
        raw = raw[:room - 1]
        name = raw.decode("utf-8", "ignore") + "~"   # never half a character
    return f".{name}."


def _through_proc(path: str) -> bool:
    """Whether `path` reaches its file through /proc or /dev/fd (/dev/stdout, /dev/fd/63): the
    file descriptors of a process, which are written into, never replaced."""
    p = os.path.abspath(path)
    for _ in range(40):
        if p.startswith(("/proc/", "/dev/fd/")):
            return True
        if not os.path.islink(p):
            return False
        p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
    return False


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def display(path: str | os.PathLike) -> str:
    p = os.fspath(path)
    return "stdout" if p == STDOUT else p


def _error(path, what: str, exc: OSError) -> S2mcError:
    return S2mcError(f"{display(path)}: cannot write {what} ({exc.strerror or exc})")


class _Guarded:
    """A file object whose write errors (ENOSPC, EFBIG, EIO, EPIPE, ...) name the output path."""

    def __init__(self, f, path, what: str):
        self._f, self._path, self._what = f, path, what

    def write(self, data):
        try:
            return self._f.write(data)
        except OSError as exc:
            raise _error(self._path, self._what, exc) from None

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        try:
            self._f.flush()
        except OSError as exc:
            raise _error(self._path, self._what, exc) from None

    def __getattr__(self, name):
        return getattr(self._f, name)


class _Target:
    """Where an output path really goes: 'stdout', 'direct' (device/FIFO) or 'replace'."""

    def __init__(self, path, what: str):
        self.path = os.fspath(path)
        self.what = what
        self.st: os.stat_result | None = None
        if self.path == "":
            raise S2mcError(f"{what}: empty output path")
        if self.path == STDOUT:
            self.kind, self.real = "stdout", STDOUT
            return
        if self.path.endswith(("/", os.sep)):
            raise S2mcError(f"{self.path}: is a directory; name an output file, not a folder")
        try:
            if _through_proc(self.path):
                self.st = os.stat(self.path)
                if stat.S_ISDIR(self.st.st_mode):
                    raise S2mcError(f"{self.path}: is a directory; name an output file, not a folder")
                self.kind, self.real = "direct", self.path
                return
        except FileNotFoundError:
            raise S2mcError(f"{self.path}: cannot write {what}: no such file descriptor") from None
        except OSError as exc:
            raise _error(self.path, what, exc) from None
        self.real = os.path.realpath(self.path)
        try:
            self.st = os.stat(self.real)
        except FileNotFoundError:
            self.st = None
        except OSError as exc:
            raise _error(self.path, what, exc) from None
        mode = self.st.st_mode if self.st else 0
        if self.st is None or stat.S_ISREG(mode):
            self.kind = "replace"
            parent = os.path.dirname(self.real)
            if not os.path.isdir(parent):
                raise S2mcError(f"{self.path}: cannot write {what}: folder {parent} does not exist")
            if self.st is not None and not force and not _writable(self.real, self.st):
                raise S2mcError(f"{self.path}: cannot write {what}: the file is read-only "
                                "(--force replaces it)")
        elif stat.S_ISDIR(mode):
            raise S2mcError(f"{self.path}: is a directory; name an output file, not a folder")
        elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode):
            self.kind = "direct"
        else:
            raise S2mcError(f"{self.path}: cannot write {what}: not a regular file, device or FIFO")


def _writable(path: str, st: os.stat_result) -> bool:
    """Write permission as a user sees it: the mode bits (root included, for whom access() always
    says yes), and access() for someone else's file."""
    return bool(st.st_mode & 0o222) and os.access(path, os.W_OK)


def _identity(path: str) -> tuple | None:
    """What makes two paths the same file: (device, inode) of an existing regular file, through
    any links; the resolved path of one that does not exist yet; None for stdout, devices, FIFOs
    and the /proc descriptors (written through, never the same file as a regular input)."""
    if path == STDOUT:
        return None
    try:
        if _through_proc(path):
            return None
        st = os.stat(path)
    except FileNotFoundError:
        return ("new", os.path.realpath(path))
    except OSError:
        return None
    return ("file", st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def check_distinct(outputs, inputs=()) -> None:
    """S2mcError, before anything is written, when one of `outputs` is the same file as one of
    `inputs` or as another output (same device and inode, through symbolic and hard links; a new
    file by its resolved path). Both are iterables of (label, path); a None path is skipped."""
    seen: dict[tuple, tuple[str, str]] = {}
    for label, path in inputs:
        if path is not None:
            ident = _identity(os.fspath(path))
            if ident is not None and ident[0] == "file":
                seen.setdefault(ident, (label, os.fspath(path)))
    inputs_seen = dict(seen)
    for label, path in outputs:
        if path is None:
            continue
        path = os.fspath(path)
        ident = _identity(path)
        if ident is None:
            continue
        if ident in seen:
            other_label, other = seen[ident]
            kind = "input" if ident in inputs_seen else "output"
            raise S2mcError(f"{path}: {label} is the same file as the {kind} {other_label} ({other}); "
                            "write to another path")
        seen[ident] = (label, path)


def check(path: str | os.PathLike, what: str = "output") -> str:
    """Check, without writing anything, that `path` can be an output by the rules above (the CLI
    does this while parsing its options, before any work). Returns how it would be written:
    'stdout', 'direct' (device or FIFO) or 'replace' (a regular file, new or replaced)."""
    return _Target(path, what).kind


def check_folder(path: str | os.PathLike, what: str = "output folder") -> None:
    """Check, without creating anything, that `path` can be an output folder: an existing folder,
    or a new one whose parent folder exists (like mkdir without -p)."""
    p = os.fspath(path)
    if p == "":
        raise S2mcError(f"{what}: empty folder name")
    try:
        st = os.stat(p)
    except FileNotFoundError:
        st = None
    except OSError as exc:   # a name too long, a file where a folder should be (ENOTDIR), ...
        raise _error(p, what, exc) from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        return
    if st is not None or os.path.lexists(p):
        raise S2mcError(f"{p}: cannot write {what}: it exists and is not a folder")
    parent = os.path.dirname(os.path.abspath(p))
    if not os.path.isdir(parent):
        raise S2mcError(f"{p}: cannot write {what}: folder {parent} does not exist")


def make_folder(path: str | os.PathLike, what: str = "output folder") -> str:
    """Create the output folder `path` unless it exists (never its parents); one-line errors
    naming the path. Returns the path."""
    check_folder(path, what)
    p = os.fspath(path)
    try:
        os.mkdir(p)
    except FileExistsError:
        if not os.path.isdir(p):
            raise S2mcError(f"{p}: cannot write {what}: it exists and is not a folder") from None
    except OSError as exc:
        raise _error(p, what, exc) from None
    return p


def resolve(path: str | os.PathLike) -> str:
    """The file an output path writes (symlinks followed; '-' stays '-'), for same-file checks."""
    p = os.fspath(path)
    return p if p == STDOUT else os.path.realpath(p)


class Output:
    """One output by the rules above, for writers that cannot use a `with` block (a sink that
    lives across calls): `f = out.open()`, write to f, then `out.commit()` or `out.discard()`.

    Writes through `f` raise S2mcError naming the path; so do open() and commit(). Inside
    `one_unit()` commit() leaves the finished file for the unit's end to rename, unless `now`.
    `suffix` ends the temporary file's name (a writer that picks its format by the file name, such
    as SystemC's VCD writer, can write the temporary file itself: see `temp_path`).
    """

    def __init__(self, path: str | os.PathLike, mode: str = "wb", *, what: str = "output",
                 encoding: str = "utf-8", buffering: int = -1, suffix: str = ".part", now: bool = False):
        if mode not in ("w", "wb"):
            raise ValueError(f"Output: mode must be 'w' or 'wb', not {mode!r}")
        self.path, self.what = os.fspath(path), what
        self._mode, self._buffering = mode, buffering
        self._kw = {"encoding": encoding} if mode == "w" else {}
        self._target = _Target(path, what)
        self._file = None
        self._tmp: str | None = None
        self._suffix = suffix
        self._now = now

    @property
    def kind(self) -> str:
        """'stdout', 'direct' (device or FIFO) or 'replace' (a temporary file renamed on commit)."""
        return self._target.kind

    @property
    def temp_path(self) -> str | None:
        """After open(), for a regular file: the temporary file that commit() renames over the
        target (another process may write it by name); None for stdout, devices and FIFOs."""
        return self._tmp

    def _fail(self, exc: OSError) -> S2mcError:
        return _error(self.path, self.what, exc)

    def open(self) -> IO:
        t = self._target
        if t.kind == "stdout":
            self._file = sys.stdout if self._mode == "w" else sys.stdout.buffer
        elif t.kind == "direct":
            # A regular file reached through /dev/stdout is truncated, as the shell's > would.
            trunc = os.O_TRUNC if t.st is not None and stat.S_ISREG(t.st.st_mode) else 0
            try:
                fd = os.open(t.real, os.O_WRONLY | trunc | getattr(os, "O_CLOEXEC", 0))
            except OSError as exc:
                raise self._fail(exc) from None
            self._file = os.fdopen(fd, self._mode, buffering=self._buffering, **self._kw)
        else:
            parent, name = os.path.split(t.real)
            _install_signal_handlers()
            prefix = temp_prefix(parent, name, self._suffix)
            remove_stale(parent, prefix, self._suffix)   # what a killed run left
            try:
                # mkstemp creates the file 0600 with O_EXCL: nobody else can read what goes in.
                fd, self._tmp = tempfile.mkstemp(dir=parent, prefix=f"{prefix}{os.getpid()}-",
                                                 suffix=self._suffix)
            except OSError as exc:
                raise self._fail(exc) from None
            _live.add(self._tmp)
            try:
                self._file = os.fdopen(fd, self._mode, buffering=self._buffering, **self._kw)
            except BaseException:
                os.close(fd)
                self.discard()
                raise
        return _Guarded(self._file, self.path, self.what)

    def commit(self) -> None:
        """Finish: flush, and for a regular file fsync and rename over the target."""
        f, t = self._file, self._target
        if f is None:
            raise ValueError("Output.commit: not open")
        try:
            f.flush()
            if t.kind == "replace":
                _copy_metadata(f.fileno(), t.st)
                os.fsync(f.fileno())
            if t.kind != "stdout":
                f.close()
            self._file = None
            pending = getattr(_units, "pending", None)
            if self._tmp is not None and pending is not None and not self._now and not _staged(t.real):
                pending.append(self)   # renamed with the rest of its unit
                return
            if self._tmp is not None:
                os.replace(self._tmp, t.real)
        except OSError as exc:
            self.discard()
            raise self._fail(exc) from None
        self._placed()

    def _placed(self) -> None:
        """After the rename: the temporary file is the target now."""
        if self._tmp is not None:
            _live.discard(self._tmp)
            self._tmp = None
            _fsync_dir(os.path.dirname(self._target.real))

    def discard(self) -> None:
        """Give up: close, and remove the temporary file (the old target stays as it was)."""
        f, self._file = self._file, None
        if f is not None and self._target.kind != "stdout":
            try:
                f.close()
            except OSError:
                pass
        if self._tmp is not None:
            _discard(self._tmp)
            self._tmp = None


@contextmanager
def one_unit() -> Iterator[None]:
    """Make the outputs committed inside this block (this thread's) one unit: each stays in its
    temporary file until the block ends, then all are renamed over their targets back to back while
    this process holds a kernel lock (flock, released by the kernel even when killed) on each of
    their folders, so that two processes writing the same outputs never interleave (the last one
    leaves its whole set, never one file of each). A block that fails (an error, Ctrl-C, a signal)
    leaves none of them, the old targets as they were. A block inside another joins the outer one.
    Stdout, devices and FIFOs are written through as they go; outputs made with `now=True` (a
    sweep's stored configuration) appear at once."""
    if getattr(_units, "pending", None) is not None:
        yield
        return
    pending: list[Output] = []
    _units.pending = pending
    try:
        yield
    except BaseException:
        for out in pending:
            out.discard()
        raise
    finally:
        _units.pending = None
    _commit_together(pending)


def _commit_together(pending: list["Output"]) -> None:
    done = 0
    try:
        with _folders_locked({os.path.dirname(out._target.real) for out in pending}):
            for out in pending:
                try:
                    os.replace(out._tmp, out._target.real)
                except OSError as exc:
                    raise out._fail(exc) from None
                done += 1
    except BaseException:
        for out in pending[done:]:
            out.discard()
        raise
    for out in pending:
        out._placed()


@contextmanager
def _folders_locked(folders) -> Iterator[None]:
    """Hold an exclusive flock on each folder, taken in one order (device, inode) so that no two
    processes wait for each other. A folder this process cannot open is not locked (its renames
    are still atomic one by one)."""
    fds = []
    try:
        for folder in folders:
            try:
                fds.append(os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)))
            except OSError:
                pass
        # one lock a folder (two descriptors of one folder would wait for each other)
        by_id = {(st.st_dev, st.st_ino): fd for fd, st in reversed([(fd, os.fstat(fd)) for fd in fds])}
        for key in sorted(by_id):
            fcntl.flock(by_id[key], fcntl.LOCK_EX)
        yield
    finally:
        for fd in fds:
            os.close(fd)


def _staged(path: str) -> bool:
    return any(path.startswith(folder + os.sep) for folder in _staging)


@contextmanager
def output_folder(path: str | os.PathLike, what: str = "output folder", *,
                  owns=lambda name: False) -> Iterator[str]:
    """Build the output folder `path` whole: yields a temporary folder beside it
    (`.NAME.PID-XXXXXXXX.part`) to write into, and puts it in place only when the block ends
    without an exception; otherwise (an error, Ctrl-C, a signal of SIGNALS) it is removed and `path`
    stays as it was. In place means: a new folder is renamed to `path`; an existing folder all of
    whose entries are files `owns(name)` says this kind of output writes (an earlier run's) is
    exchanged with the new one in one step (renameat2 RENAME_EXCHANGE) and then removed; a folder
    that also holds other files (or the current folder, or a file system without that exchange)
    keeps them and receives the new files one by one, in the order they were written."""
    check_folder(path, what)
    real = os.path.realpath(os.fspath(path))
    if os.path.isdir(real) and not force:   # an earlier output's read-only file is kept, as a file's is
        with os.scandir(real) as entries:
            for e in entries:
                if owns(e.name) and e.is_file(follow_symlinks=False) and not _writable(e.path, e.stat()):
                    raise S2mcError(f"{os.fspath(path)}: cannot write {what}: {e.name} in it is read-only")
    parent, name = os.path.split(real)
    try:
        tmp = _temp_folder(parent, name)
    except OSError as exc:
        if not os.path.isdir(real):
            raise _error(path, what, exc) from None
        try:   # a folder we may write in a parent we may not: built inside it, moved in file by file
            tmp = _temp_folder(real, name)
        except OSError as exc:
            raise _error(path, what, exc) from None
    drop = lambda: shutil.rmtree(tmp, ignore_errors=True)   # noqa: E731
    _staging.add(tmp)
    try:
        with cleanup_on_signal(drop):
            try:
                yield tmp
            except S2mcError as exc:   # a file inside: named where it was going, not where it was
                raise S2mcError(str(exc).replace(tmp, os.fspath(path))) from None
            _fsync_dir(tmp)
            try:
                _place_folder(tmp, real, owns)
            except OSError as exc:
                raise _error(path, what, exc) from None
    finally:
        _staging.discard(tmp)
        drop()


def _temp_folder(parent: str, name: str) -> str:
    """A new 0700 folder `.NAME.PID-XXXXXXXX.part` in `parent` (and those of dead runs removed)."""
    prefix = temp_prefix(parent, name, ".part")
    remove_stale(parent, prefix, ".part")
    return tempfile.mkdtemp(dir=parent, prefix=f"{prefix}{os.getpid()}-", suffix=".part")


def _place_folder(tmp: str, real: str, owns) -> None:
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    if st is None:
        os.chmod(tmp, 0o777 & ~_umask())   # what mkdir would have made
        os.rename(tmp, real)
        _fsync_dir(os.path.dirname(real))
        return
    os.chmod(tmp, stat.S_IMODE(st.st_mode))
    here = os.path.realpath(os.getcwd()) == real
    with os.scandir(real) as entries:
        ours = all(e.is_file(follow_symlinks=False) and owns(e.name) for e in entries)
    if ours and not here and _exchange(tmp, real):
        _fsync_dir(os.path.dirname(real))
        return   # the old folder is at the temporary name now: the caller removes it
    with os.scandir(tmp) as entries:
        files = sorted(entries, key=lambda e: (e.stat(follow_symlinks=False).st_mtime_ns, e.name))
    for e in files:
        os.replace(e.path, os.path.join(real, e.name))
    _fsync_dir(real)


def _exchange(a: str, b: str) -> bool:
    """Swap the folders `a` and `b` in one step (Linux renameat2 RENAME_EXCHANGE); False where the C
    library or the file system cannot."""
    import ctypes
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    at_fdcwd, rename_exchange = -100, 2
    if fn(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), b)


@contextmanager
def open_output(path: str | os.PathLike, mode: str = "wb", *, what: str = "output",
                encoding: str = "utf-8", buffering: int = -1, now: bool = False) -> Iterator[IO]:
    """Open `path` for writing by the rules above; yields a file object (text for mode "w").

    The output appears (atomically, for a regular file) when the block ends without an exception
    (inside `one_unit()`: when the unit ends, unless `now`); otherwise nothing is left behind.
    """
    out = Output(path, mode, what=what, encoding=encoding, buffering=buffering, now=now)
    f = out.open()
    try:
        yield f
    except BaseException:
        out.discard()
        raise
    out.commit()


def _discard(tmp: str) -> None:
    _live.discard(tmp)
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _copy_metadata(fd: int, old: os.stat_result | None) -> None:
    """Give the finished temporary file the mode (and owner) the output should have."""
    if old is None:
        os.fchmod(fd, 0o666 & ~_umask())  # what open(2) with 0666 (openssl enc) would create
        return
    if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
        try:
            os.fchown(fd, old.st_uid, old.st_gid)
        except PermissionError:
            try:  # not root: the group can still be kept when we belong to it
                os.fchown(fd, -1, old.st_gid)
            except PermissionError:
                pass
    # After chown, which clears set-id bits.
    os.fchmod(fd, stat.S_IMODE(old.st_mode))


def _fsync_dir(folder: str) -> None:
    """Make the rename durable (best effort: some file systems cannot fsync a folder, and the
    output is complete either way)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_output(path: str | os.PathLike, data: str | bytes, *, what: str = "output", now: bool = False) -> None:
    """Write all of `data` (text as UTF-8) to `path` by the rules above."""
    with open_output(path, "w" if isinstance(data, str) else "wb", what=what, now=now) as f:
        f.write(data)


__all__ = ["STDOUT", "SIGNALS", "Output", "open_output", "write_output", "check", "check_folder", "make_folder",
           "resolve", "display", "check_distinct", "one_unit", "output_folder", "set_force", "cleanup_on_signal", "remove_stale",
           "pid_alive", "temp_prefix"]
