"""Where a command-line `s2mc encrypt` spends its time, beside `cp` of the same file and the same
encryption inside one process (figures in docs/benchmarks.md, "Encrypt from the command line").

Each round copies the file with cp, then runs `s2mc encrypt --json --timings` once per backend, each
a fresh process, and the backend's library call (`encrypt_file`) inside this process. The phases
come from the run's own marks (`--timings`, CLOCK_MONOTONIC, shared by every process of the
machine) with this script's spawn and exit times around them: spawn to main() (the interpreter,
click), main() to the command (its module, the options), the key and options, the backend's
start-up (device, context, buffers: made on a thread while the files open), the ring's first
piece read, the rest of the encryption (reading, the device, writing, overlapped), closing the
output and freeing the backend's buffers, and the exit (the interpreter's, with the device's
context). The outputs of every backend are compared with each other. The phases shown are those
of each backend's median round (by its total), so they add up to it; cp and the in-process call
are medians.

    .venv/bin/python bench/bench_encrypt_startup.py [--backend native,cuda,opencl] [--size 256M]
                                                     [--rounds 5] [--dir /dev/shm]

A backend that cannot run here (no GPU, no OpenCL device) is left out with one line saying why.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from s2mc.common.units import human_size, parse_size
from random_data import write_random_file

NAME = "bench_encrypt_startup"

KEY, IV = "000102030405060708090a0b0c0d0e0f", "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
#: The phases (the mark that ends each, from cli/timings.py, and "exit" here) and their rows.
ROWS = [("main", "spawn to main(): interpreter, s2mc.cli.main, click"),
        ("command", "main() to the command: its module, parsing"),
        ("options", "key, IV, option checks"),
        ("backend", "backend start-up left (device, context, buffers)"),
        ("first_read", "the ring's first piece read"),
        ("encrypt", "the rest: read, encrypt, write (overlapped)"),
        ("close", "close the output, free the backend's buffers"),
        ("exit", "exit: the interpreter (and the device's context)")]


def _now() -> float:
    return time.clock_gettime(time.CLOCK_MONOTONIC)


def _why_not(backend: str) -> str:
    """'' when the backend can run here, else why not."""
    if backend == "cuda":
        from s2mc import gpu
        return gpu.status()["reason"]
    if backend == "opencl":
        from s2mc.gpu import opencl
        st = opencl.status()
        return "" if st["devices"] else st["reason"]
    return ""


def _cli(backend: str, src: str, dst: str) -> dict[str, float]:
    """One `s2mc encrypt` process: its phases in seconds, and its total from spawn to exit."""
    cmd = [sys.executable, "-m", "s2mc.cli", "encrypt", "-q", "--json", "--timings", "--backend", backend,
           "--in", src, "--out", dst, "--key-env", "S2MC_BENCH_KEY", "--iv", IV]
    t0 = _now()
    p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, S2MC_BENCH_KEY=KEY))
    t1 = _now()
    if p.returncode:
        last = (p.stderr.strip().splitlines() or [f"exit status {p.returncode}"])[-1]
        raise SystemExit(f"{NAME}: {backend}: {last}")
    marks = json.loads(p.stdout)["timings"]["marks"]
    marks = dict(marks, spawn=t0, exit=t1)
    names = ["spawn"] + [n for n, _ in ROWS if n in marks]
    out = {b: marks[b] - marks[a] for a, b in zip(names, names[1:])}
    # a backend without the inner marks (native) has one phase from the options to the close
    if "encrypt" not in marks:
        out["whole"] = out.pop("close")
    out["total"] = t1 - t0
    return out


def _in_process(backend: str, src: str, dst: str) -> float:
    """The backend's library call in this (warm) process, as `s2mc encrypt` makes it."""
    key, iv = bytes.fromhex(KEY), bytes.fromhex(IV)
    t0 = _now()
    if backend == "cuda":
        from s2mc import gpu
        gpu.encrypt_file(src, dst, key, iv)
    elif backend == "opencl":
        from s2mc.gpu import opencl
        opencl.encrypt_file(src, dst, key, iv, piece_bytes=64 << 20)
    else:
        from s2mc.workloads import native
        native.encrypt_file(src, dst, key, iv)
    return _now() - t0


def _cp(src: str, dst: str) -> float:
    t0 = _now()
    subprocess.run(["cp", src, dst], check=True)
    return _now() - t0


def _same(a: str, b: str) -> bool:
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="native,cuda,opencl")
    ap.add_argument("--size", default="256M")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=os.environ.get("FILE_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None))
    args = ap.parse_args(argv)
    n = parse_size(args.size)
    if n is None:
        raise SystemExit(f"{NAME}: --size: not a size ({args.size!r}; e.g. 256M)")
    if n < 1 or args.rounds < 1:
        raise SystemExit(f"{NAME}: --size and --rounds must be at least 1")
    if shutil.which("cp") is None:
        raise SystemExit(f"{NAME}: no cp on the PATH")
    backends = []
    for b in args.backend.split(","):
        if b not in ("native", "cuda", "opencl"):
            raise SystemExit(f"{NAME}: --backend: unknown backend {b!r} (native, cuda, opencl)")
        why = _why_not(b)
        if why:
            print(f"{b}: left out ({why})", file=sys.stderr)
        else:
            backends.append(b)
    if not backends:
        raise SystemExit(f"{NAME}: no backend can run here")
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="s2mc-startup-") as d:
        src = write_random_file(os.path.join(d, "in.bin"), n)
        cp_s: list[float] = []
        cli: dict[str, list[dict[str, float]]] = {b: [] for b in backends}
        inproc: dict[str, list[float]] = {b: [] for b in backends}
        for _ in range(args.rounds):   # rounds alternate between the rows; each writes a fresh output
            out = os.path.join(d, "cp.bin")
            cp_s.append(_cp(src, out))
            os.unlink(out)
            for b in backends:
                out = os.path.join(d, f"{b}.bin")
                cli[b].append(_cli(b, src, out))
                if b != backends[0] and not _same(out, os.path.join(d, f"{backends[0]}.bin")):
                    raise SystemExit(f"{NAME}: {b}'s output differs from {backends[0]}'s")
                ip = os.path.join(d, f"{b}-in-process.bin")
                inproc[b].append(_in_process(b, src, ip))
                if not _same(ip, out):
                    raise SystemExit(f"{NAME}: {b} in this process differs from its command line")
                os.unlink(ip)
            for b in backends[1:]:
                os.unlink(os.path.join(d, f"{b}.bin"))
            os.unlink(os.path.join(d, f"{backends[0]}.bin"))

    med = statistics.median
    cp = med(cp_s)
    print(f"\n`s2mc encrypt` of {human_size(n)} ({n} random bytes in {args.dir or 'the temporary folder'}), "
          f"AES-128-CTR, {args.rounds} rounds, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}; "
          "seconds: the command line's phases are those of its median round, the rest medians\n")
    print("| phase | " + " | ".join(backends) + " |")
    print("|---|" + "---:|" * len(backends))
    rows = list(ROWS)
    rows.insert(4, ("whole", "read, encrypt, write, close (the backend's one call)"))
    # per backend the round whose total is the median (the lower one of an even count), so that
    # its phases add up to the total shown
    mid = {b: sorted(cli[b], key=lambda r: r["total"])[(len(cli[b]) - 1) // 2] for b in backends}
    for key, label in rows:
        if not any(key in mid[b] for b in backends):
            continue
        cells = [f"{mid[b][key]:.3f}" if key in mid[b] else "-" for b in backends]
        print(f"| {label} | " + " | ".join(cells) + " |")
    totals = {b: mid[b]["total"] for b in backends}
    print("| **command line, spawn to exit** | " + " | ".join(f"**{totals[b]:.3f}**" for b in backends) + " |")
    print("| the same call inside one process | " + " | ".join(f"{med(inproc[b]):.3f}" for b in backends) + " |")
    print(f"| cp of the same file (spawn to exit) | " + " | ".join(f"{cp:.3f}" for _ in backends) + " |")
    print("| command line: speed vs cp | " + " | ".join(f"{cp / totals[b]:.2f}" for b in backends) + " |")
    print("| in one process: speed vs cp | " + " | ".join(f"{cp / med(inproc[b]):.2f}" for b in backends) + " |")
    print("| command line over the call in one process | "
          + " | ".join(f"+{totals[b] - med(inproc[b]):.3f}" for b in backends) + " |")
    print("\nEvery output equalled the first backend's, on the command line and in one process.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
