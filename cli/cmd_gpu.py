"""`s2mc gpu`: the CUDA AES benchmark grid (kernel x size x measure) in the records schema.

Without a GPU, or without the CUDA build, it exits 1 with one clear line.
"""
from __future__ import annotations

import json
import sys

import click

from s2mc.isa.errors import S2mcError

from .options import human_size, parse_size, split_list

#: What each measure times (the `variant` column says it after the kernel name).
MEASURE_LABEL = {
    "keystream": "keystream",        # keystream only: no plaintext read, no ciphertext written
    "device": "device-resident",     # plaintext read from and ciphertext written to GPU memory
    "host": "host",                  # host to host: pinned buffers, H2D + kernel + D2H
}


def variant_of(kernel: str, measure: str, streams: int) -> str:
    if measure == "host":
        how = f"host-overlap-s{streams}" if streams > 1 else "host-serial"
        return f"{kernel}/{how}"
    return f"{kernel}/{MEASURE_LABEL[measure]}"


def markdown_table(summaries: list[dict]) -> str:
    """Gbps of every (kernel, measure) row and size column, in Markdown."""
    sizes = sorted({s["bytes"] for s in summaries})
    rows: dict[tuple[str, str], dict[int, float]] = {}
    for s in summaries:
        rows.setdefault((s["kernel"], s["what"]), {})[s["bytes"]] = s["gbps"]
    head = "| kernel | measure | " + " | ".join(human_size(n) + "B" for n in sizes) + " |"
    sep = "|---|---|" + "---:|" * len(sizes)
    lines = [head, sep]
    for (kernel, what), vals in rows.items():
        cells = [f"{vals[n]:.1f}" if n in vals else "–" for n in sizes]
        lines.append(f"| {kernel} | {what} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def run_grid(kernels: list[str], sizes: list[int], measures: list[str], *, key_bits: int = 128,
             op: str = "ctr", streams: list[int] = (4,), chunk_bytes: int = 0, ext_bytes: int = 4096,
             threads: int = 256, reps: int = 5, experiment: str = "cuda_aes", progress: bool = False,
             log=None):
    """Measure the grid; returns (summaries, records frame, platform info). Used by the CLI."""
    from s2mc import gpu
    from s2mc.analysis import records

    plat = gpu.platform_info()
    mem = int(plat["device"]["global_mem_bytes"])
    run_id = records.new_run_id("cuda")
    workload = f"aes-{key_bits}-ctr" if op == "ctr" else f"aes-{key_bits}-{op}"
    configs = []
    for kernel in kernels:
        for measure in measures:
            for n in sizes:
                for s in (streams if measure == "host" else [0]):
                    configs.append((kernel, measure, n, s))
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc gpu", unit="run", leave=False)
    rows, summaries = [], []
    for kernel, measure, n, s in configs:
        if measure == "device" and 2 * n > mem * 0.85:
            if log:
                log(f"skipping {kernel} device-resident {human_size(n)}B: needs 2x that in GPU memory")
            if bar:
                bar.update(1)
            continue
        res = gpu.bench(kernel, measure, key_bits=key_bits, nbytes=n, reps=reps, op=op,
                        ext_bytes=ext_bytes, threads=threads, streams=max(s, 1),
                        chunk_bytes=chunk_bytes)
        secs = res["seconds"]
        variant = variant_of(res["kernel"], measure, res["streams"])
        base = dict(run_id=run_id, experiment=experiment, source="cuda", platform=plat["gpu"],
                    workload=workload, variant=variant, engine="cuda", cores=1, core=-1,
                    bytes=res["bytes"])
        metric = "seconds" if measure == "host" else "kernel_seconds"
        rows.append(dict(base, metric=metric, value=secs))
        rows.append(dict(base, metric="bytes_per_second", value=res["bytes"] / secs))
        what = variant.split("/", 1)[1]
        summaries.append(dict(res, variant=variant, what=what, kernel=res["kernel"],
                              gbps=res["bytes"] * 8 / secs / 1e9,
                              best_gbps=res["bytes"] * 8 / res["best_seconds"] / 1e9))
        if bar:
            bar.update(1)
        if log:
            log(f"{variant:40s} {human_size(res['bytes']):>5s}B  {summaries[-1]['gbps']:9.1f} Gbps "
                f"(grid {res['grid']} x {res['threads']})")
    if bar:
        bar.close()
    return summaries, records.make_records(rows), plat


@click.command("gpu")
@click.option("--kernel", "kernel_text", default="coarse,extended,optimised", show_default=True,
              help="Comma list of kernels: coarse, extended, optimised, optimised-<config>, or "
                   "`all` (every optimised configuration too).")
@click.option("--bytes", "bytes_text", default="1M,16M,256M,1G", show_default=True,
              help="Comma list of data sizes.")
@click.option("--measure", "measure_text", default="keystream,device,host", show_default=True,
              help="keystream (cipher only, no data traffic), device (data resident in GPU "
                   "memory), host (host to host through PCIe).")
@click.option("--key-bits", type=click.Choice(["128", "192", "256"]), default="128",
              show_default=True)
@click.option("--mode", type=click.Choice(["ctr", "ecb-enc", "ecb-dec"]), default="ctr",
              show_default=True, help="What device/host measures run (keystream is always CTR).")
@click.option("--streams", "streams_text", default="1,4", show_default=True,
              help="Host measure: comma list of stream counts (1 = no overlap, seed 002 method C; "
                   ">1 = overlapped copies and kernels, method B).")
@click.option("--chunk-bytes", default="0", show_default=True,
              help="Host measure: bytes per chunk (0 = automatic).")
@click.option("--ext-bytes", default="4096", show_default=True,
              help="Extended kernel: bytes per thread (E x 16).")
@click.option("--threads", type=int, default=256, show_default=True,
              help="Coarse/extended kernels: threads per CTA.")
@click.option("--reps", type=int, default=5, show_default=True,
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

    sizes = [parse_size(x, "--bytes") for x in split_list(bytes_text, "--bytes")]
    for n in sizes:
        if n < 16:
            raise S2mcError(f"--bytes: {n} is too small (at least 16 bytes)")
    measures = split_list(measure_text, "--measure")
    for m in measures:
        if m not in MEASURE_LABEL:
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
    summaries, df, plat = run_grid(
        kernels, sizes, measures, key_bits=int(key_bits), op=mode, streams=streams,
        chunk_bytes=chunk, ext_bytes=ext, threads=threads, reps=reps,
        progress=not quiet and not as_json and sys.stderr.isatty(), log=log)
    table = markdown_table(summaries)
    params = {"command": "s2mc gpu", "kernels": kernels, "sizes": sizes, "measures": measures,
              "key_bits": int(key_bits), "mode": mode, "streams": streams, "chunk_bytes": chunk,
              "ext_bytes": ext, "threads": threads, "reps": reps, "gpu": plat,
              "runs": summaries}
    if out_path:
        from s2mc.analysis import records
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if md_path:
        with open(md_path, "w", encoding="utf-8") as f:
            f.write(table + "\n")
    if as_json:
        click.echo(json.dumps({"platform": plat, "results": summaries,
                               "records": df.astype(object).to_dict("records")},
                              indent=2, default=str))
    else:
        click.echo(f"GPU: {plat['gpu']} ({plat['device']['sms']} SMs, peak "
                   f"{plat['device']['sm_clock_mhz']:.0f} MHz); AES-{key_bits}, Gbps = 1e9 bit/s")
        click.echo(table)


COMMANDS = [gpu_cmd]
