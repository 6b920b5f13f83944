"""What a command can start before the interpreter has imported it.

`s2mc encrypt|decrypt --backend cuda` spends about 0.2 s creating the GPU's context (measured on an
H200: docs/benchmarks.md, "Encrypt from the command line"), time in which the interpreter is still
importing click and the command's module. s2mc.cli.main calls start() before its own imports: on a
thread, the CUDA extension creates the context and uploads the tables (its call releases the GIL);
the command's first GPU call waits for it (the extension creates the context once). Anything that
goes wrong here is left for that call to report in its usual words.
"""
from __future__ import annotations

import os
import sys
import threading

#: The commands that take --backend and the backend whose start-up is worth starting early.
COMMANDS = ("encrypt", "decrypt")


def wants_cuda(argv: list[str]) -> bool:
    """Whether the command line is `s2mc encrypt|decrypt ... --backend cuda` (not asking for help):
    the first word that is not an option is the command."""
    args = argv[1:]
    words = [a for a in args if not a.startswith("-")]
    if not words or words[0] not in COMMANDS or "--help" in args:
        return False
    return "--backend=cuda" in args or any(a == "--backend" and b == "cuda" for a, b in zip(args, args[1:]))


def is_the_command(argv0: str) -> bool:
    """Whether this process is `s2mc` (the console script) or `python -m s2mc.cli`, not another
    program that imports the CLI (pytest, a notebook)."""
    return os.path.basename(argv0) == "s2mc" or argv0.endswith(os.path.join("s2mc", "cli", "__main__.py"))


def _start() -> None:
    try:
        from s2mc.gpu import _cuda
        _cuda.start()
    except Exception:  # noqa: BLE001 - the command's own device check says what is wrong
        pass


def start(argv: list[str] | None = None) -> threading.Thread | None:
    """Start the CUDA context on a thread when this process is the `s2mc` command asked to encrypt
    or decrypt on CUDA; the thread, or None. The interpreter waits for it at exit (a context half
    made must not meet the exit)."""
    argv = sys.argv if argv is None else argv
    if not argv or not is_the_command(argv[0]) or not wants_cuda(argv):
        return None
    t = threading.Thread(target=_start, name="s2mc-cuda-early")   # not a daemon: joined at exit
    t.start()
    return t
