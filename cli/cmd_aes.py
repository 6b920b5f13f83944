"""`s2mc aes`: AES on the simulated S2 multicore over a grid of configurations (docs/architecture.md).

    s2mc aes --cores 1,2,3,4 --bytes 32,64,128,256 --style bytes --mode ecb   # seed 003 Tables 3-4
    s2mc aes --cores 1,2,4,8,16,32,64 --bytes 1K,4K,64K --out results/scaling.parquet

Every option that names a parameter takes a comma-separated list; the grid is their cross
product. Each run is checked against `cryptography` (a mismatch is an error). Output: a table per
configuration (cycles, speedup, instructions, stalls, bus utilisation) on stdout, or --json; the
records (docs/records.md) go to --out; the progress bar goes to stderr.
"""
from __future__ import annotations

import json
import sys
import time

import click

from s2mc.isa.errors import S2mcError

from s2mc.workloads.aes.grid import AesGrid, format_tables, run_grid

from .options import choice_list, int_list, machine_option, size_list


def _d(field: str) -> str:
    """The library's default of a grid field as the option's default text (one declaration)."""
    return ",".join(map(str, getattr(AesGrid, field)))


@click.command("aes")
@machine_option("cores", many=True, default=_d("cores"))
@click.option("--bytes", "sizes", default=_d("sizes"), show_default=True,
              help="Comma-separated data sizes in bytes (4K = 4096). ECB needs multiples of 16.")
@click.option("--key-bits", default=_d("key_bits"), show_default=True, help="128, 192 and/or 256.")
@click.option("--mode", "modes", default=_d("modes"), show_default=True, help="ecb and/or ctr.")
@click.option("--direction", "directions", default=_d("directions"), show_default=True,
              help="enc and/or dec (CTR decryption is the same keystream XOR).")
@click.option("--style", "styles", default=_d("styles"), show_default=True,
              help="bytes (one byte per word, textbook steps) and/or ttable (four bytes per word).")
@click.option("--partition", "partitions", default=_d("partitions"), show_default=True,
              help="interleaved (block i on core i mod N), contiguous (one chunk per core), "
                   "extended (runs of --ext-blocks blocks).")
@click.option("--ext-blocks", default=_d("ext_blocks"), show_default=True,
              help="Blocks per run for --partition extended (comma-separated list allowed).")
@machine_option("mem_latency", many=True, dest="latencies")
@machine_option("arbitration", many=True, dest="arbitrations")
@machine_option("engine", many=True, dest="engines")
@click.option("--vcd", type=click.Path(dir_okay=False),
              help="With --engine systemc: write a VCD waveform (FILE-<n>.vcd for each run when "
                   "the grid has several).")
@click.option("--opt", "opts", default=_d("opts"), show_default=True,
              help="Rz optimisation level(s) the programs are compiled at: 1 and/or 0 (-O0, like "
                   "the original compiler; seed 003's counts are close to it).")
@machine_option("mem_words")
@click.option("--key", "key_hex", default=None,
              help="Key as 32, 48 or 64 hex digits (default: random from --seed, per key size).")
@click.option("--seed", type=int, default=AesGrid.seed, show_default=True,
              help="Seed of the random key, counter and data.")
@click.option("--experiment", default="aes", show_default=True, help="The records' experiment name.")
@click.option("--out", "out_path", type=click.Path(dir_okay=False),
              help="Write the records (Parquet, or CSV when the name ends in .csv) and a manifest.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs (and any seed comparison) "
              "as JSON on stdout instead of tables.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def aes_cmd(cores, sizes, key_bits, modes, directions, styles, partitions, ext_blocks, latencies,
            arbitrations, engines, vcd, opts, mem_words, key_hex, seed, experiment, out_path, as_json,
            quiet):
    """AES on the simulated multicore: a grid over cores x bytes x key size, mode, direction,
    style, partition, memory latency, arbitration and engine, every result checked against
    `cryptography`. The seed 003 configuration also prints the paper's Tables 3-4 beside ours."""
    from s2mc.analysis import records, seed003
    from s2mc.workloads import aes

    core_list, lat_list, arb_list, eng_list, words = cores, latencies, arbitrations, engines, mem_words
    byte_sizes = size_list(sizes, "--bytes", minimum=1)
    bits_list = [int(b) for b in choice_list(key_bits, "--key-bits", ("128", "192", "256"))]
    mode_list = choice_list(modes, "--mode", aes.MODES)
    dir_list = choice_list(directions, "--direction", aes.DIRECTIONS)
    style_list = choice_list(styles, "--style", aes.STYLES)
    part_list = choice_list(partitions, "--partition", aes.PARTITIONS)
    ext_list = int_list(ext_blocks, "--ext-blocks", 1, 1 << 22)
    opt_list = [int(o) for o in choice_list(opts, "--opt", ("1", "0"))]
    fixed_key = None
    if key_hex is not None:
        try:
            fixed_key = bytes.fromhex(key_hex)
        except ValueError:
            raise S2mcError(f"--key: {key_hex!r} is not hex") from None
        if len(fixed_key) not in (16, 24, 32):
            raise S2mcError(f"--key: {len(key_hex)} hex digits; AES keys are 32, 48 or 64")
    grid = AesGrid(
        cores=tuple(core_list), sizes=tuple(byte_sizes), key_bits=tuple(bits_list), modes=tuple(mode_list),
        directions=tuple(dir_list), styles=tuple(style_list), partitions=tuple(part_list),
        ext_blocks=tuple(ext_list), mem_latencies=tuple(lat_list), arbitrations=tuple(arb_list),
        engines=tuple(eng_list), opts=tuple(opt_list), mem_words=words, key=fixed_key, seed=seed)
    t0 = time.perf_counter()
    runs, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("aes"), experiment=experiment,
                                   progress=not quiet and sys.stderr.isatty(), vcd=vcd)
    wall = time.perf_counter() - t0
    sim_s = sum(r.sim_seconds for r in runs)
    instr = sum(r.result.instructions for r in runs)
    # Two significant digits: a short SystemC run simulates well under 1 MIPS, never "0 MIPS".
    click.echo(f"s2mc aes: {len(runs)} runs checked against cryptography in {wall:.1f} s "
               f"({sim_s:.2g} s simulating, {float(f'{instr / max(sim_s, 1e-9) / 1e6:.2g}'):g} MIPS)",
               err=True)

    seed_text, seed_rows = seed003.comparison(runs)
    if out_path:
        df = records.make_records(rows)
        params = dict(command="aes", **grid.params(), experiment=experiment, wall_seconds=wall)
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps({"runs": [aes.runner.summary(r) for r in runs],
                               "seed003": seed_rows, "wall_seconds": wall}, indent=1))
        return
    click.echo(format_tables(runs))
    if seed_text:
        click.echo("\n" + seed_text)


COMMANDS = [aes_cmd]
