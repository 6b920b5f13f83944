"""`s2mc gpu`: the CUDA AES benchmark grid (kernel x size x measure) in the records schema.

Without a GPU, or without the CUDA build, it exits 1 with one clear line.
"""
from __future__ import annotations

import json
import sys

import click

from s2mc.gpu.grid import GpuGrid, markdown_table, run_grid
from s2mc.isa.errors import S2mcError
from s2mc.isa.units import human_size

from .options import parse_size, split_list

#: The grid's defaults are the library's (one declaration).
_D = GpuGrid()


@click.command("gpu")
@click.option("--kernel", "kernel_text", default=",".join(_D.kernels), show_default=True,
              help="Comma list of kernels: coarse, extended, optimised, optimised-<config>, or "
                   "`all` (every optimised configuration too).")
@click.option("--bytes", "bytes_text", default=",".join(map(human_size, _D.sizes)), show_default=True,
              help="Comma list of data sizes.")
@click.option("--measure", "measure_text", default=",".join(_D.measures), show_default=True,
              help="keystream (cipher only, no data traffic), device (data resident in GPU "
                   "memory), host (host to host through PCIe).")
@click.option("--key-bits", type=click.Choice(["128", "192", "256"]), default=str(_D.key_bits),
              show_default=True)
@click.option("--mode", type=click.Choice(["ctr", "ecb-enc", "ecb-dec"]), default=_D.op,
              show_default=True, help="What device/host measures run (keystream is always CTR).")
@click.option("--streams", "streams_text", default=",".join(map(str, _D.streams)), show_default=True,
              help="Host measure: comma list of stream counts (1 = no overlap, seed 002 method C; "
                   ">1 = overlapped copies and kernels, method B).")
@click.option("--chunk-bytes", default=str(_D.chunk_bytes), show_default=True,
              help="Host measure: bytes per chunk (0 = automatic).")
@click.option("--ext-bytes", default=str(_D.ext_bytes), show_default=True,
              help="Extended kernel: bytes per thread (E x 16).")
@click.option("--threads", type=int, default=_D.threads, show_default=True,
              help="Coarse/extended kernels: threads per CTA.")
@click.option("--reps", type=int, default=_D.reps, show_default=True,
              help="Timed repetitions (the median is recorded).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write records (Parquet, or CSV by extension) and a manifest beside them.")
@click.option("--markdown", "md_path", type=click.Path(dir_okay=False),
              help="Also write the Markdown table of Gbps to this file.")
@click.option("--json", "as_json", is_flag=True, help="Print results and records as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar or log lines.")
def gpu_cmd(kernel_text, bytes_text, measure_text, key_bits, mode, streams_text, chunk_bytes,
            ext_bytes, threads, reps, out_path, md_path, as_json, quiet):
    """CUDA AES-CTR/ECB benchmarks: kernel x size x measure, Gbps per cell.

    Exits 1 with one line when the CUDA backend is not built or no GPU is present.
    """
    from s2mc import gpu
    from s2mc.analysis import records

    sizes = [parse_size(x, "--bytes") for x in split_list(bytes_text, "--bytes")]
    for n in sizes:
        if n < 16:
            raise S2mcError(f"--bytes: {n} is too small (at least 16 bytes)")
    measures = split_list(measure_text, "--measure")
    for m in measures:
        if m not in gpu.MEASURES:
            raise S2mcError(f"--measure: unknown measure {m!r} (keystream, device, host)")
    try:
        streams = [int(x) for x in split_list(streams_text, "--streams")]
    except ValueError:
        raise S2mcError(f"--streams: {streams_text!r} is not a list of integers") from None
    if any(s < 1 or s > 64 for s in streams):
        raise S2mcError(f"--streams: {streams_text!r}: every count must be in 1..64")
    chunk = parse_size(chunk_bytes, "--chunk-bytes")
    ext = parse_size(ext_bytes, "--ext-bytes")
    if ext < 16 or ext % 16:
        raise S2mcError(f"--ext-bytes: {ext_bytes!r} must be a positive multiple of 16")
    if reps < 1:
        raise S2mcError(f"--reps: {reps} must be >= 1")

    st = gpu.status()
    if not st["built"]:
        raise S2mcError(f"gpu: {st['reason']}")
    kernels = split_list(kernel_text, "--kernel")
    if kernels == ["all"]:
        kernels = gpu.kernels(all_configs=True)
    known = set(gpu.kernels(all_configs=True))
    for k in kernels:
        if k not in known:
            raise S2mcError(f"--kernel: unknown kernel {k!r} (known: {', '.join(sorted(known))}, all)")
    if not st["gpu_present"]:
        raise S2mcError(f"gpu: {st['reason']}")

    log = None if quiet or as_json else (lambda msg: click.echo(msg, err=True))
    grid = GpuGrid(kernels=tuple(kernels), sizes=tuple(sizes), measures=tuple(measures),
                   key_bits=int(key_bits), op=mode, streams=tuple(streams), chunk_bytes=chunk,
                   ext_bytes=ext, threads=threads, reps=reps)
    summaries, rows, plat = run_grid(grid, run_id=records.new_run_id("cuda"),
                                     progress=not quiet and not as_json and sys.stderr.isatty(), log=log)
    df = records.make_records(rows)
    table = markdown_table(summaries)
    params = {"command": "s2mc gpu", "kernels": kernels, "sizes": sizes, "measures": measures,
              "key_bits": int(key_bits), "mode": mode, "streams": streams, "chunk_bytes": chunk,
              "ext_bytes": ext, "threads": threads, "reps": reps, "gpu": plat,
              "runs": summaries}
    if out_path:
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if md_path:
        from s2mc.isa.outputs import write_output
        write_output(md_path, table + "\n", what="Markdown table")
    if as_json:
        click.echo(json.dumps({"platform": plat, "results": summaries,
                               "records": df.astype(object).to_dict("records")},
                              indent=2, default=str))
    else:
        click.echo(f"GPU: {plat['gpu']} ({plat['device']['sms']} SMs, peak "
                   f"{plat['device']['sm_clock_mhz']:.0f} MHz); AES-{key_bits}, Gbps = 1e9 bit/s")
        click.echo(table)


COMMANDS = [gpu_cmd]
