"""`s2mc native`: the native CPU AES grid, optionally against OpenSSL (`s2mc encrypt` / `decrypt`
are in cmd_crypt.py)."""
from __future__ import annotations

import json
import sys

import click

from s2mc.isa.errors import S2mcError

from .options import parse_size, split_list


def _threads_list(text: str, max_threads: int) -> list[int]:
    out = []
    for item in split_list(text, "--threads"):
        if item.lower() in ("all", "max"):
            out.append(max_threads)
            continue
        try:
            t = int(item)
        except ValueError:
            raise S2mcError(f"--threads: {item!r} is not an integer (or 'all')") from None
        if t < 1:
            raise S2mcError(f"--threads: {t} is not a valid thread count (must be >= 1)")
        if t > 1024:
            raise S2mcError(f"--threads: {t} is too many (at most 1024)")
        out.append(t)
    return list(dict.fromkeys(out))


@click.command("native")
@click.option("--threads", default="1,all", show_default=True,
              help="Comma-separated OpenMP thread counts ('all' = every core).")
@click.option("--bytes", "sizes", default="16K,16M", show_default=True,
              help="Comma-separated buffer sizes (4096, 16K, 64M, 1G).")
@click.option("--impl", "impls", default="auto", show_default=True,
              help="Comma-separated implementations: auto, ttable, aesni, vaes, vaes512, or 'all' "
                   "(every one this CPU supports).")
@click.option("--strategy", "strategies", default="contiguous", show_default=True,
              help="Comma-separated: coarse, extended, contiguous.")
@click.option("--block-bytes", default="1024", show_default=True,
              help="Comma-separated extended block sizes (E x 16 bytes per task; seed 000: 512-4K).")
@click.option("--key-bits", type=click.Choice(["128", "192", "256"]), default="128", show_default=True)
@click.option("--vs-openssl", is_flag=True, help="Also time OpenSSL EVP aes-*-ctr on the same buffers "
              "in this run and print the ratio ours/OpenSSL.")
@click.option("--multi", is_flag=True, help="Every thread encrypts its own buffer of each size (like "
              "`openssl speed -multi N`) and the aggregate throughput is reported; --strategy is ignored.")
@click.option("--min-seconds", type=float, default=0.1, show_default=True,
              help="Repeat each measurement at least this long (best run is reported).")
@click.option("--reps", type=int, default=3, show_default=True, help="At least this many timed runs.")
@click.option("--experiment", default="native", show_default=True, help="The records' experiment name.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="Write records (Parquet, or CSV "
              "when the name ends in .csv) and a manifest next to it.")
@click.option("--json", "as_json", is_flag=True, help="Print results and records as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def native_cmd(threads, sizes, impls, strategies, block_bytes, key_bits, vs_openssl, multi, min_seconds, reps,
               experiment, out_path, as_json, quiet):
    """Benchmark native CPU AES-CTR over threads x bytes x impl x strategy x block size."""
    from s2mc.analysis import records
    from s2mc.workloads import native
    from s2mc.workloads.native.grid import NativeGrid, format_summary, run_grid, summary_header, summary_legend

    if not native.available():
        raise S2mcError("native AES library not built; run `make setup`")
    max_t = native.max_threads()
    thread_list = _threads_list(threads, max_t)
    size_list = []
    for item in split_list(sizes, "--bytes"):
        n = parse_size(item, "--bytes")
        if n < 1:
            raise S2mcError(f"--bytes: {item!r} must be at least 1 byte")
        size_list.append(n)
    impl_list = []
    for item in split_list(impls, "--impl"):
        if item == "all":
            impl_list += native.supported_impls()
        else:
            impl_list.append(native.resolve_impl(item))
    impl_list = list(dict.fromkeys(impl_list))
    strat_list = split_list(strategies, "--strategy")
    for s in strat_list:
        if s not in native.STRATEGIES:
            raise S2mcError(f"--strategy: unknown strategy {s!r} (known: {', '.join(native.STRATEGIES)})")
    bb_list = []
    for item in split_list(block_bytes, "--block-bytes"):
        bb = parse_size(item, "--block-bytes")
        if bb < 16 or bb % 16:
            raise S2mcError(f"--block-bytes: {item!r} must be a positive multiple of 16 bytes")
        bb_list.append(bb)
    if min_seconds < 0:
        raise S2mcError("--min-seconds must be >= 0")
    if reps < 1:
        raise S2mcError("--reps must be >= 1")

    def log(s):
        if not as_json:
            click.echo(format_summary(s))

    if not as_json:
        click.echo(f"# {native.info()['cpu']}; OpenMP threads available: {max_t}; "
                   f"{native.openssl_version()}", err=True)
        click.echo(summary_header(vs_openssl))
    grid = NativeGrid(threads=tuple(thread_list), sizes=tuple(size_list), impls=tuple(impl_list),
                      strategies=tuple(strat_list), block_bytes=tuple(bb_list), key_bits=int(key_bits),
                      vs_openssl=vs_openssl, multi=multi, min_seconds=min_seconds, min_reps=reps)
    summaries, rows = run_grid(grid, run_id=records.new_run_id("native"), experiment=experiment,
                               progress=not quiet and sys.stderr.isatty(), log=log)
    df = records.make_records(rows)
    if out_path:
        params = dict(command="native", threads=thread_list, bytes=size_list, impls=impl_list,
                      strategies=strat_list, block_bytes=bb_list, key_bits=int(key_bits),
                      vs_openssl=vs_openssl, multi=multi, min_seconds=min_seconds, reps=reps, experiment=experiment,
                      native=native.info())
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if not as_json:
        click.echo(summary_legend(vs_openssl))
    if as_json:
        click.echo(json.dumps({"results": summaries, "records": df.astype(object).to_dict("records")},
                              indent=2, default=str))


COMMANDS = [native_cmd]
