"""`s2mc encrypt` / `s2mc decrypt`: streaming AES or Camellia (`--cipher`) CTR or ECB files, byte-identical
to `openssl enc -aes-*-ctr` / `openssl enc -camellia-*-ecb -nopad` etc., on the native CPU backend (every
available CPU by default), the CUDA backend (CTR) or the OpenCL backend (--backend opencl: CTR and ECB on
any OpenCL device, seed 004's --segment). Choosing the backend happens here, above both, so
neither backend imports the other."""
from __future__ import annotations

import json
import sys
import time

import click

from s2mc.common.errors import S2mcError
from s2mc.common.outputs import STDOUT, one_unit
from s2mc.common.units import human_size
from s2mc.workloads.cipher_host import MAX_CHUNK_BYTES, cipher_title
from s2mc.workloads.native import CIPHER_IMPLS, CIPHERS, MAX_THREADS

from .options import Choices, Integer, OutputFile, Size, Text

#: An environment variable's name: no '=' (it would end the name) and no control characters.
_ENV = Text(255, empty=False, forbid="=")


def _encrypt(backend: str, in_path, out_path, key: bytes, iv: bytes | None, *, impl: str, threads: int | None,
             chunk: int | None, progress: bool, mode: str = "ctr", decrypt: bool = False,
             cipher: str = "aes", segment: int | str = "auto", phase=None) -> int:
    if backend == "opencl":
        from s2mc.gpu import opencl
        st = opencl.status()
        if not st["devices"]:
            raise S2mcError(f"--backend opencl: {st['reason']}")
        return opencl.encrypt_file(in_path, out_path, key, iv, decrypt, cipher=cipher, mode=mode, segment=segment,
                                   piece_bytes=chunk or opencl.FILE_PIECE_BYTES, progress=progress, phase=phase)
    if backend == "cuda":
        if mode != "ctr":
            raise S2mcError(f"--backend cuda does CTR only (got --mode {mode}); use --backend native")
        import inspect

        from s2mc import gpu
        # Camellia on CUDA exists once the backend's encrypt_file takes a cipher.
        extra = {}
        if cipher != "aes":
            if "cipher" not in inspect.signature(gpu.encrypt_file).parameters:
                raise S2mcError(f"--backend cuda: --cipher {cipher} is not available in the CUDA backend; "
                                "use --backend native")
            extra["cipher"] = cipher
        st = gpu.status()
        if not st["gpu_present"]:
            raise S2mcError(f"--backend cuda: {st['reason']}")
        return gpu.encrypt_file(in_path, out_path, key, iv, piece_bytes=chunk, progress=progress, phase=phase,
                                **extra)
    from s2mc.workloads import native
    fn = native.decrypt_file if decrypt else native.encrypt_file
    return fn(in_path, out_path, key, iv, mode=mode, impl=impl, threads=threads, chunk_bytes=chunk,
              progress=progress, cipher=cipher)


def _records(path: str, summary: dict) -> str:
    """Write the run as records (s2mc.analysis.records): seconds, bytes/s and their manifest."""
    from s2mc.analysis import records

    common = dict(run_id=records.new_run_id(summary["command"]), experiment="files",
                  source=summary["backend"] if summary["backend"] in ("cuda", "opencl") else "native", platform=summary["platform"],
                  workload=f"{summary['command']}-{summary['mode']}", variant="total",
                  engine=summary["engine"], cores=summary["threads"] or 1, bytes=summary["bytes"],
                  cipher=summary["cipher"])
    rows = [dict(common, metric="seconds", value=summary["seconds"])]
    if summary["seconds"] > 0:
        rows.append(dict(common, metric="bytes_per_second", value=summary["bytes"] / summary["seconds"]))
    df = records.make_records(rows)
    return str(records.write(df, path, params=dict(summary, run_id=common["run_id"])))


def _platform(backend: str = "native") -> str:
    if backend == "opencl":   # the device that ran it (PoCL: the CPU; else a GPU)
        from s2mc.gpu import opencl
        st = opencl.status()
        if st["devices"] and st["device"] is not None:
            return st["devices"][st["device"]]["name"]
    try:
        from s2mc.workloads import native
        cpu = native.info().get("cpu")
        if cpu:
            return cpu
        import platform
        return platform.processor() or platform.machine()
    except Exception:   # the records still say what ran
        import platform
        return platform.machine()


def _file_command(name: str, verb: str):
    @click.command(name)
    @click.option("--in", "in_path", required=True, type=click.Path(dir_okay=True), help="Input file.")
    @click.option("--out", "out_path", required=True, type=OutputFile(f"{name}ed output"),
                  help="Output file, replaced atomically when the run succeeds; devices, FIFOs and "
                  "symlink targets are written through; - is stdout. Its folder must exist.")
    @click.option("--cipher", type=click.Choice(CIPHERS), default="aes", show_default=True,
                  help="The block cipher: AES or Camellia (RFC 3713); the key length picks 128/192/256.")
    @click.option("--key", help="Key as 32, 48 or 64 hex digits (128/192/256 bits); - reads one line from "
                  "stdin. Visible in `ps`: prefer --key-file or --key-env.")
    @click.option("--key-file", type=click.Path(dir_okay=False), help="Read the hex key from this file.")
    @click.option("--key-env", metavar="VAR", type=_ENV, help="Read the hex key from this environment variable.")
    @click.option("--iv", help="Initial counter block as 32 hex digits (- reads one line from stdin).")
    @click.option("--iv-file", type=click.Path(dir_okay=False), help="Read the hex IV from this file.")
    @click.option("--iv-env", metavar="VAR", type=_ENV, help="Read the hex IV from this environment variable.")
    @click.option("--mode", type=click.Choice(["ctr", "ecb"]), default="ctr", show_default=True,
                  help="CTR (any length; the IV is the first counter block) or ECB (no IV, no padding: the "
                  "length must be a multiple of 16, = openssl enc -CIPHER-N-ecb -nopad).")
    @click.option("--backend", type=click.Choice(["native", "cuda", "opencl"]), default="native", show_default=True)
    # s2mc.gpu.opencl's MIN_SEGMENT, MAX_SEGMENT and SEGMENT_CHOICES, written out: importing it costs
    # ~70 ms at every start of encrypt (tests/test_gpu_opencl.py checks the two agree).
    @click.option("--segment", type=Size(16, 1 << 30, multiple=16, words=("auto", "calibrate")), default=None,
                  help="--backend opencl: bytes copied to the device at once (a multiple of 16 up to 1G), auto "
                  "(seed 004's calibrated size, stored per device; calibrated on first use) or calibrate "
                  "[default: auto].")
    @click.option("--impl", type=Choices(("auto", *dict.fromkeys(i for c in CIPHERS for i in CIPHER_IMPLS[c])),
                                         many=False), default="auto", show_default=True,
                  help="Native implementation (" + "; ".join(f"{cipher_title(c)}: {', '.join(CIPHER_IMPLS[c])}"
                                                             for c in CIPHERS) + ").")
    @click.option("--threads", type=Integer(1, MAX_THREADS), default=None,
                  help=f"Native threads, 1..{MAX_THREADS} [default: every CPU available to the process].")
    @click.option("--chunk-bytes", type=Size(16, MAX_CHUNK_BYTES, multiple=16),
                  help=f"Pipeline chunk size, a multiple of 16 up to {human_size(MAX_CHUNK_BYTES)} "
                  "[default: 1M per native thread between regular files, 4M native streams, "
                  "16M cuda pieces (8 in flight), opencl: the segment up to 32M (8 in flight)].")
    @click.option("--json", "as_json", is_flag=True, help="Print a JSON summary on stdout.")
    @click.option("--records", "records_path", type=OutputFile("records", stdout=False),
                  help="Also write the run as records (Parquet, or CSV by extension; a manifest beside it).")
    @click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
    @click.option("--timings", is_flag=True, help="Also print where the run's time went (process start, "
                  "imports, options, backend start-up, encryption, close; from this run's own clock) on stderr, "
                  "and with --json as \"timings\" in the summary.")
    def cmd(in_path, out_path, cipher, key, key_file, key_env, iv, iv_file, iv_env, mode, backend, segment, impl,
            threads, chunk_bytes, as_json, records_path, quiet, timings):
        from s2mc.workloads.cipher_host import cipher_title, hex_from_options

        from .timings import Timeline
        tl = Timeline() if timings else None
        if tl:
            tl.mark("command")

        if key == "-" and iv == "-":
            raise click.UsageError("--key - and --iv -: only one of them can be read from stdin")
        if as_json and out_path == STDOUT:
            raise click.UsageError("--json and --out -: both would write to stdout")
        if mode == "ecb" and (iv, iv_file, iv_env) != (None, None, None):
            raise click.UsageError("--mode ecb takes no IV (--iv, --iv-file, --iv-env)")
        if backend != "native" and threads is not None:
            raise click.UsageError("--threads is for --backend native")
        if backend != "opencl" and segment is not None:
            raise click.UsageError("--segment is for --backend opencl")
        k = hex_from_options("key", key, key_file, key_env, key=True, cipher=cipher)
        c = hex_from_options("iv", iv, iv_file, iv_env, key=False) if mode == "ctr" else None
        chunk = chunk_bytes   # None: the backend's own
        engine = backend
        if backend == "native":
            from s2mc.workloads import native
            from s2mc.workloads.native.files import available_cpus
            threads = threads or available_cpus()
            engine = native.resolve_impl(impl, cipher)
        if tl:
            tl.mark("options")
        with one_unit():   # the output and its records: both or neither
            t0 = time.perf_counter()
            n = _encrypt(backend, in_path, out_path, k, c, impl=impl, threads=threads, chunk=chunk,
                         progress=not quiet and sys.stderr.isatty(), mode=mode, decrypt=name == "decrypt",
                         cipher=cipher, segment=segment or "auto", phase=tl.mark if tl else None)
            secs = time.perf_counter() - t0
            if tl:
                tl.mark("close")
            summary = {"command": name, "in": in_path, "out": out_path, "bytes": n, "cipher": cipher,
                       "key_bits": len(k) * 8,
                       "mode": mode, "backend": backend, "engine": engine, "threads": threads,
                       "seconds": secs, "gb_per_s": n / secs / 1e9 if secs > 0 else None}
            if as_json or records_path:   # the platform's name costs a query: only where it is kept
                summary["platform"] = _platform(backend)
            if tl:
                summary["timings"] = tl.as_json()
            path = _records(records_path, summary) if records_path else None
        if path and not as_json and not quiet:
            click.echo(f"wrote records to {path}", err=True)
        if as_json:
            click.echo(json.dumps(summary))
        elif not quiet:
            click.echo(f"{verb} {n} bytes with {cipher_title(cipher)}-{len(k) * 8}-{mode.upper()} ({backend}"
                       f"{f', {threads} threads' if threads else ''}) in {secs:.3f} s "
                       f"-> {'stdout' if out_path == STDOUT else out_path}", err=True)
        if tl:
            click.echo(f"where the time went ({name}, {backend}):\n{tl.table()}", err=True)

    d = '-d ' if name == 'decrypt' else ''
    # `cmd` is already a click command here: its help text, not its __doc__, is what --help shows.
    cmd.help = (f"{name.capitalize()} a file with AES or Camellia, CTR or ECB (streaming, on every CPU by "
                f"default; output identical to `openssl enc {d}-aes-N-ctr -K KEY -iv IV` or "
                f"`openssl enc {d}-camellia-N-ecb -nopad -K KEY`).\n\n"
                "Give the key with --key-file or --key-env rather than --key: a command line is "
                "visible to every user (ps, /proc/PID/cmdline) and kept in shell history.")
    return cmd


encrypt_cmd = _file_command("encrypt", "encrypted")
decrypt_cmd = _file_command("decrypt", "decrypted")

COMMANDS = [encrypt_cmd, decrypt_cmd]
