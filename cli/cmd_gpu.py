"""`s2mc gpu`: the CUDA AES/Camellia benchmark grid (kernel x size x measure) in the records schema,
and (--occupancy) each kernel's registers, shared memory and occupancy, seed 002's Table 2.
`--backend opencl`: the portable OpenCL backend's grid (size x measure), its segments sized by
seed 004's calibration (`--segment`, `--calibrate`).

Without a GPU, or without the CUDA build, it exits 1 with one clear line.
"""
from __future__ import annotations

import json
import sys

import click

from s2mc.gpu import CAMELLIA_KERNELS, CIPHERS, CTA_THREADS, MAX_REPS, MAX_STREAMS, MEASURES
from s2mc.gpu.opencl import MAX_SEGMENT, MIN_SEGMENT, SEGMENT_CHOICES
from s2mc.gpu.grid import GpuGrid, markdown_table, run_grid
from s2mc.common.errors import S2mcError
from s2mc.common.units import human_size
from s2mc.workloads.cipher_host import host_memory

from .options import Choices, Integer, Names, OutputFile, Seconds, Size

_MEMORY = "this machine's memory"

#: The grid's defaults are the library's (one declaration).
_D = GpuGrid()


@click.command("gpu")
@click.option("--backend", type=click.Choice(["cuda", "opencl"]), default="cuda", show_default=True,
              help="cuda, or opencl (the portable kernels on any OpenCL device: PoCL on a CPU, a GPU's "
                   "OpenCL; measures device and host).")
@click.option("--cipher", type=click.Choice(CIPHERS), default=_D.cipher, show_default=True,
              help="Block cipher: aes, or camellia (RFC 3713; kernels coarse and optimised).")
@click.option("--kernel", "kernel_text", type=Names(), default=None,
              help="Comma list of kernels: coarse, extended, optimised, optimised-<config>, or "
                   f"`all` (every optimised configuration too). [default: {','.join(_D.kernels)} "
                   f"for AES, {','.join(CAMELLIA_KERNELS)} for Camellia]")
@click.option("--bytes", "sizes", type=Size(16, host_memory, many=True, why=_MEMORY),
              default=",".join(map(human_size, _D.sizes)), show_default=True,
              help="Comma list of data sizes, 16 bytes up to this machine's memory (--backend opencl: "
                   "default 1M,16M,256M).")
@click.option("--measure", "measures", type=Choices(MEASURES), default=",".join(_D.measures), show_default=True,
              help="keystream (cipher only, no data traffic), device (data resident in GPU "
                   "memory), host (host to host through PCIe).")
@click.option("--key-bits", type=click.Choice(["128", "192", "256"]), default=str(_D.key_bits),
              show_default=True)
@click.option("--mode", type=click.Choice(["ctr", "ecb-enc", "ecb-dec"]), default=_D.op,
              show_default=True, help="What device/host measures run (keystream is always CTR).")
@click.option("--streams", type=Integer(1, MAX_STREAMS, many=True), default=",".join(map(str, _D.streams)),
              show_default=True, help=f"Host measure: comma list of stream counts, 1..{MAX_STREAMS} (1 = no "
              "overlap, seed 002 method C; >1 = overlapped copies and kernels, method B).")
@click.option("--chunk-bytes", type=Size(0, host_memory, why=_MEMORY), default=str(_D.chunk_bytes),
              show_default=True, help="Host measure: bytes per chunk (0 = automatic).")
@click.option("--ext-bytes", type=Size(16, host_memory, multiple=16, why=_MEMORY), default=str(_D.ext_bytes),
              show_default=True, help="Extended kernel: bytes per thread (E x 16).")
@click.option("--threads", type=Integer(CTA_THREADS[0], CTA_THREADS[1], multiple=CTA_THREADS[2]),
              default=_D.threads, show_default=True,
              help=f"Coarse/extended kernels: threads per CTA, a multiple of {CTA_THREADS[2]} in "
                   f"{CTA_THREADS[0]}..{CTA_THREADS[1]}.")
@click.option("--reps", type=Integer(1, MAX_REPS), default=_D.reps, show_default=True,
              help=f"Timed repetitions, 1..{MAX_REPS} (the median is recorded).")
@click.option("--warmup", type=Integer(0, MAX_REPS), default=_D.warmup, show_default=True,
              help=f"CUDA: untimed runs before the timed repetitions, 0..{MAX_REPS}.")
@click.option("--min-seconds", type=Seconds(0, 3600), default=str(_D.min_seconds), show_default=True,
              help="CUDA: more repetitions until the timed ones add up to this many seconds (0..3600; "
                   "every repetition is kept in the manifest).")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False),
              help="Write records (Parquet, or CSV by extension) and a manifest beside them.")
@click.option("--markdown", "md_path", type=OutputFile("Markdown table"),
              help="Also write the Markdown table of Gbps to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print results and records as JSON on stdout.")
@click.option("--occupancy", is_flag=True,
              help="Instead of timing: each kernel's registers, shared memory, CTAs per SM and "
                   "occupancy on this GPU (seed 002's Table 2), for --cipher and --key-bits.")
@click.option("--segment", type=Size(MIN_SEGMENT, MAX_SEGMENT, multiple=16, words=SEGMENT_CHOICES), default="auto",
              show_default=True, help="OpenCL host measure: bytes per segment copied to the device at once "
              "(a multiple of 16 up to 1G), auto (seed 004's calibrated size, stored per device, "
              "calibrated when there is none) or calibrate (calibrate again).")
@click.option("--calibrate", is_flag=True,
              help="OpenCL: instead of timing the grid, run seed 004's segment calibration for --cipher, "
                   "--key-bits and --mode, print every candidate's rate and store the choice.")
@click.option("--budget", type=Seconds(0.05, 600), default="1", show_default=True,
              help="OpenCL: the calibration's time budget in seconds (0.05..600).")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or log lines.")
@click.pass_context
def gpu_cmd(ctx, backend, cipher, kernel_text, sizes, measures, key_bits, mode, streams, chunk_bytes,
            ext_bytes, threads, reps, warmup, min_seconds, out_path, md_path, as_json, occupancy, segment, calibrate, budget, quiet):
    """CUDA AES/Camellia CTR/ECB benchmarks: kernel x size x measure, Gbps per cell.

    Exits 1 with one line when the CUDA backend is not built or no GPU is present.
    """
    from s2mc import gpu
    from s2mc.analysis import records

    if backend == "opencl":
        _opencl(ctx, cipher=cipher, sizes=sizes, measures=measures, key_bits=int(key_bits), mode=mode,
                reps=reps, segment=segment, calibrate=calibrate, budget=budget, out_path=out_path,
                md_path=md_path, as_json=as_json, quiet=quiet)
        return
    for name in ("segment", "calibrate", "budget"):
        if ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE:
            raise click.UsageError(f"--{name} is for --backend opencl")
    chunk, ext = chunk_bytes, ext_bytes
    st = gpu.status()
    if not st["built"]:
        raise S2mcError(f"gpu: {st['reason']}")
    kernels = list(kernel_text) if kernel_text else list(
        _D.kernels if cipher == "aes" else CAMELLIA_KERNELS)
    known = set(gpu.kernels(all_configs=True, cipher=cipher))
    if kernels == ["all"]:
        kernels = gpu.kernels(all_configs=True, cipher=cipher)
    for k in kernels:
        if k not in known:
            raise S2mcError(f"--kernel: unknown kernel {k!r} for {cipher} (known: {', '.join(sorted(known))}, all)")
    if not st["gpu_present"]:
        raise S2mcError(f"gpu: {st['reason']}")
    if occupancy:
        _print_occupancy(gpu.occupancy(cipher, int(key_bits), threads), as_json, md_path)
        return

    log = None if quiet or as_json else (lambda msg: click.echo(msg, err=True))
    grid = GpuGrid(kernels=tuple(kernels), sizes=tuple(sizes), measures=tuple(measures),
                   key_bits=int(key_bits), op=mode, streams=tuple(streams), chunk_bytes=chunk,
                   ext_bytes=ext, threads=threads, reps=reps, cipher=cipher, warmup=warmup,
                   min_seconds=float(min_seconds))
    summaries, rows, plat = run_grid(grid, run_id=records.new_run_id("cuda"),
                                     progress=not quiet and not as_json and sys.stderr.isatty(), log=log)
    df = records.make_records(rows)
    table = markdown_table(summaries)
    params = {"command": "s2mc gpu", "cipher": cipher, "kernels": kernels, "sizes": sizes, "measures": measures,
              "key_bits": int(key_bits), "mode": mode, "streams": streams, "chunk_bytes": chunk,
              "ext_bytes": ext, "threads": threads, "reps": reps, "warmup": warmup,
              "min_seconds": float(min_seconds), "gpu": plat,
              "runs": summaries}
    if not _write_grid(df, table, plat, summaries, params, out_path=out_path, md_path=md_path, as_json=as_json):
        click.echo(f"GPU: {plat['gpu']} ({plat['device']['sms']} SMs, peak "
                   f"{plat['device']['sm_clock_mhz']:.0f} MHz); {_NAMES[cipher]}-{key_bits}, "
                   "Gbps = 1e9 bit/s")
        click.echo(table)


_NAMES = {"aes": "AES", "camellia": "Camellia"}
#: Options of the CUDA grid that mean nothing to the OpenCL one.
_CUDA_ONLY = ("kernel_text", "streams", "chunk_bytes", "ext_bytes", "threads", "occupancy", "warmup", "min_seconds")


def _opencl(ctx, *, cipher, sizes, measures, key_bits, mode, reps, segment, calibrate, budget, out_path,
            md_path, as_json, quiet) -> None:
    """`s2mc gpu --backend opencl`: the OpenCL grid, or with --calibrate seed 004's calibration."""
    from s2mc.analysis import records
    from s2mc.gpu import opencl

    given = lambda name: ctx.get_parameter_source(name) == click.core.ParameterSource.COMMANDLINE  # noqa: E731
    for name in _CUDA_ONLY:
        if given(name):
            opt = "--kernel" if name == "kernel_text" else "--" + name.replace("_", "-")
            raise click.UsageError(f"{opt} is for --backend cuda")
    if not given("sizes"):   # the OpenCL grid's own default: 1G is minutes on PoCL
        sizes = list(opencl.OpenclGrid().sizes)
    if "keystream" in measures:
        if given("measures"):
            raise click.UsageError("--measure keystream is for --backend cuda (opencl: device, host)")
        measures = [m for m in measures if m != "keystream"]
    st = opencl.status()
    if not st["devices"]:
        raise S2mcError(f"gpu --backend opencl: {st['reason']}")
    if calibrate:
        if out_path:
            raise click.UsageError("--calibrate writes no records (drop --out)")
        cal = opencl.calibrate(cipher, mode, key_bits, budget_s=budget)
        table = cal.table()
        if md_path:
            from s2mc.common.outputs import write_output
            write_output(md_path, table + "\n", what="Markdown table")
        if as_json:
            from dataclasses import asdict
            click.echo(json.dumps(asdict(cal), indent=2))
            return
        click.echo(f"OpenCL segment calibration on {cal.device}: {_NAMES[cipher]}-{key_bits}-{mode}, "
                   f"budget {budget:g} s (spent {cal.spent_s:.2f} s)")
        click.echo(table)
        click.echo(f"chosen: {human_size(cal.segment_bytes)}B (seed 004's limit, what the best rate gets through "
                   f"in 90 % of 2 s: {cal.limit_bytes / 2**20:.1f} MiB); stored in {opencl.cache_path()}")
        return
    log = None if quiet or as_json else (lambda msg: click.echo(msg, err=True))
    grid = opencl.OpenclGrid(sizes=tuple(sizes), measures=tuple(measures), cipher=cipher, key_bits=key_bits,
                             op=mode, segment=segment, reps=reps)
    summaries, rows, plat = opencl.run_grid(grid, run_id=records.new_run_id("opencl"),
                                            progress=not quiet and not as_json and sys.stderr.isatty(), log=log)
    df = records.make_records(rows)
    table = opencl.markdown_table(summaries)
    params = {"command": "s2mc gpu --backend opencl", "cipher": cipher, "sizes": sizes, "measures": measures,
              "key_bits": key_bits, "mode": mode, "segment": plat["segment_bytes"], "reps": reps,
              "device": plat, "runs": summaries}
    if not _write_grid(df, table, plat, summaries, params, out_path=out_path, md_path=md_path, as_json=as_json):
        dev = plat["device"]
        click.echo(f"OpenCL: {dev['name']} ({dev['platform']}, {dev['type']}, {dev['compute_units']} compute "
                   f"units); {_NAMES[cipher]}-{key_bits}-{mode}, segment {human_size(plat['segment_bytes'])}B, "
                   "Gbps = 1e9 bit/s")
        click.echo(table)


def _write_grid(df, table: str, plat: dict, summaries: list, params: dict, *, out_path, md_path,
                as_json: bool) -> bool:
    """What both backends' grids write: the records (--out), the Markdown table (--md) and, with --json,
    everything on stdout. Returns whether it printed the JSON (the caller prints its summary otherwise)."""
    from s2mc.analysis import records
    from s2mc.common.outputs import one_unit, write_output

    with one_unit():   # the records and the table of one measurement: both or neither
        path = records.write(df, out_path, params=params) if out_path else None
        if md_path:
            write_output(md_path, table + "\n", what="Markdown table")
    if path:
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps({"platform": plat, "results": summaries,
                               "records": df.astype(object).to_dict("records")}, indent=2, default=str))
    return as_json


def occupancy_table(rows: list[dict]) -> str:
    """Seed 002's Table 2 columns for our kernels, in Markdown."""
    lines = ["| kernel | cipher | dir | key bits | thread blocks (grid) | threads per block | "
             "registers per thread | shared memory per block | CTAs per SM | occupancy |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        smem = (r["static_smem_bytes"] + r["dynamic_smem_bytes"]) / 1024
        grid = str(r["grid"]) if r["grid"] else "input-sized"
        lines.append(f"| {r['kernel']} | {r['cipher']} | {r['direction']} | {r['key_bits']} | {grid} | "
                     f"{r['threads']} | {r['registers']} | {smem:.2f} KB | {r['ctas_per_sm']} | "
                     f"{r['occupancy']:.2f} |")
    return "\n".join(lines)


def _print_occupancy(rows: list[dict], as_json: bool, md_path) -> None:
    table = occupancy_table(rows)
    if md_path:
        from s2mc.common.outputs import write_output
        write_output(md_path, table + "\n", what="Markdown table")
    click.echo(json.dumps(rows, indent=2) if as_json else table)


COMMANDS = [gpu_cmd]
