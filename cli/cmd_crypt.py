"""`s2mc encrypt` / `s2mc decrypt`: streaming AES-CTR files, byte-identical to `openssl enc -aes-*-ctr`,
on the native CPU backend or the CUDA backend. Choosing the backend happens here, above both, so
neither backend imports the other."""
from __future__ import annotations

import json
import sys
import time

import click

from s2mc.isa.errors import S2mcError
from s2mc.isa.outputs import STDOUT
from s2mc.isa.units import human_size
from s2mc.workloads.aes_host import MAX_CHUNK_BYTES
from s2mc.workloads.native import IMPLS, MAX_THREADS

from .options import Choices, Integer, OutputFile, Size, Text

_DEFAULT_CHUNK = {"native": 4 << 20, "cuda": 256 << 20}
#: An environment variable's name: no '=' (it would end the name) and no control characters.
_ENV = Text(255, empty=False, forbid="=")


def _encrypt(backend: str, in_path, out_path, key: bytes, iv: bytes, *, impl: str, threads: int,
             chunk: int, progress: bool) -> int:
    if backend == "cuda":
        from s2mc import gpu
        st = gpu.status()
        if not st["gpu_present"]:
            raise S2mcError(f"--backend cuda: {st['reason']}")
        return gpu.encrypt_file(in_path, out_path, key, iv, piece_bytes=chunk, progress=progress)
    from s2mc.workloads import native
    return native.encrypt_file(in_path, out_path, key, iv, impl=impl, threads=threads, chunk_bytes=chunk,
                               progress=progress)


def _file_command(name: str, verb: str):
    @click.command(name)
    @click.option("--in", "in_path", required=True, type=click.Path(dir_okay=True), help="Input file.")
    @click.option("--out", "out_path", required=True, type=OutputFile(f"{name}ed output"),
                  help="Output file, replaced atomically when the run succeeds; devices, FIFOs and "
                  "symlink targets are written through; - is stdout. Its folder must exist.")
    @click.option("--key", help="Key as 32, 48 or 64 hex digits (AES-128/192/256); - reads one line from "
                  "stdin. Visible in `ps`: prefer --key-file or --key-env.")
    @click.option("--key-file", type=click.Path(dir_okay=False), help="Read the hex key from this file.")
    @click.option("--key-env", metavar="VAR", type=_ENV, help="Read the hex key from this environment variable.")
    @click.option("--iv", help="Initial counter block as 32 hex digits (- reads one line from stdin).")
    @click.option("--iv-file", type=click.Path(dir_okay=False), help="Read the hex IV from this file.")
    @click.option("--iv-env", metavar="VAR", type=_ENV, help="Read the hex IV from this environment variable.")
    @click.option("--backend", type=click.Choice(["native", "cuda"]), default="native", show_default=True)
    @click.option("--impl", type=Choices(("auto", *IMPLS), many=False), default="auto", show_default=True,
                  help="Native implementation.")
    @click.option("--threads", type=Integer(1, MAX_THREADS), default=1, show_default=True,
                  help=f"OpenMP threads (native), 1..{MAX_THREADS}.")
    @click.option("--chunk-bytes", type=Size(16, MAX_CHUNK_BYTES, multiple=16),
                  help=f"Pipeline chunk size, a multiple of 16 up to {human_size(MAX_CHUNK_BYTES)} "
                  "[default: 4M native, 256M cuda].")
    @click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")
    @click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
    def cmd(in_path, out_path, key, key_file, key_env, iv, iv_file, iv_env, backend, impl, threads,
            chunk_bytes, as_json, quiet):
        from s2mc.workloads.aes_host import hex_from_options

        if key == "-" and iv == "-":
            raise click.UsageError("--key - and --iv -: only one of them can be read from stdin")
        if as_json and out_path == STDOUT:
            raise click.UsageError("--json and --out -: both would write to stdout")
        k = hex_from_options("key", key, key_file, key_env, key=True)
        c = hex_from_options("iv", iv, iv_file, iv_env, key=False)
        chunk = chunk_bytes or _DEFAULT_CHUNK[backend]
        t0 = time.perf_counter()
        n = _encrypt(backend, in_path, out_path, k, c, impl=impl, threads=threads, chunk=chunk,
                     progress=not quiet and sys.stderr.isatty())
        secs = time.perf_counter() - t0
        if as_json:
            click.echo(json.dumps({"command": name, "in": in_path, "out": out_path, "bytes": n,
                                   "key_bits": len(k) * 8, "backend": backend, "seconds": secs,
                                   "gb_per_s": n / secs / 1e9 if secs > 0 else None}))
        elif not quiet:
            click.echo(f"{verb} {n} bytes with AES-{len(k) * 8}-CTR ({backend}) in {secs:.3f} s "
                       f"-> {'stdout' if out_path == STDOUT else out_path}", err=True)

    cmd.__doc__ = (f"{verb.capitalize()} a file with AES-CTR (streaming; output identical to "
                   f"`openssl enc {'-d ' if name == 'decrypt' else ''}-aes-N-ctr -K KEY -iv IV`).\n\n"
                   "Give the key with --key-file or --key-env rather than --key: a command line is "
                   "visible to every user (ps, /proc/PID/cmdline) and kept in shell history.")
    return cmd


encrypt_cmd = _file_command("encrypt", "encrypted")
decrypt_cmd = _file_command("decrypt", "decrypted")

COMMANDS = [encrypt_cmd, decrypt_cmd]
