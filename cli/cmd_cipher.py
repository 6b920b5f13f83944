"""`s2mc cipher`: a block cipher the simulated programs implement (AES, Camellia) on the simulated S2
multicore over a grid of configurations; `s2mc aes` is its shorthand `s2mc cipher --cipher aes`,
kept because users type it (docs/aes-on-s2.md, docs/camellia-on-s2.md).

    s2mc aes --cores 1,2,3,4 --bytes 32,64,128,256 --style bytes --mode ecb   # seed 003 Tables 3-4
    s2mc aes --cores 1,2,4,8,16,32,64 --bytes 1K,4K,64K --out results/scaling.parquet
    s2mc cipher --cipher camellia --cores 1,2,3,4 --bytes 64,256 --mode ecb,ctr
    s2mc cipher --cipher aes,camellia --style ttable,sp --cores 1,2,4 --bytes 1K --out results/ciphers.parquet

Every option that names a parameter takes a comma-separated list; the grid is their cross
product. Each run is checked against `cryptography` (a mismatch is an error). Output: a table per
configuration (cycles, speedup, instructions, stalls, bus utilisation) on stdout, or --json; the
records (docs/records.md) go to --out; the progress bar goes to stderr. --style takes the styles of
every chosen cipher (aes: bytes, ttable; camellia: sp) and defaults to each cipher's first.
"""
from __future__ import annotations

import json
import sys
import time

import click
from click.core import ParameterSource

from s2mc.simulator.params import PARAMS
from s2mc.workloads.cipher_sim.grid import (PRESETS, AesGrid, format_tables, run_grid, timeline_files,
                                            vcd_files)
from s2mc.workloads.cipher_sim.runner import (ALL_STYLES, CIPHERS, DIRECTIONS, KEY_EXPANSIONS, MODES,
                                             PARTITIONS, STYLES)

from .options import (AesKey, Choices, Integer, OutputFile, Size, Text, check_timeline_window, machine_option,
                      timeline_options)

#: --seed: a 63-bit number, which every records and manifest reader holds exactly.
MAX_SEED = (1 << 63) - 1


def _d(field: str) -> str:
    """The library's default of a grid field as the option's default text (one declaration)."""
    return ",".join(map(str, getattr(AesGrid, field)))


#: The largest --bytes any run can have: the ttable style packs 4 bytes in a word, and input and
#: output must both fit in the largest simulated memory (the library then checks the style's own
#: limit and --mem-words).
_MAX_BYTES = 2 * PARAMS["mem_words"].max
#: --ext-blocks: a run of more blocks than the largest data has is pointless.
MAX_EXT_BLOCKS = _MAX_BYTES // 16
#: The options a --preset sets (each is an AesGrid field); an option given on the command line wins.
_PRESET_OPTIONS = {"cores": "cores", "sizes": "sizes", "key_bits": "key_bits", "modes": "modes",
                   "directions": "directions", "styles": "styles", "partitions": "partitions",
                   "latencies": "mem_latencies", "arbitrations": "arbitrations", "opts": "opts",
                   "key_expansions": "key_expansions"}


def _left_paper_setting(preset: str, ctx, fields: dict) -> list[str]:
    """The options given beside a preset that take its runs out of the paper's configuration (another
    mode, key size, direction, style, partition or memory latency: seed003.comparison finds no run of the
    paper's setting then), as they were typed (['--mode ctr', '--mem-latency 4'])."""
    paper = {"modes", "key_bits", "directions", "styles", "partitions", "mem_latencies"}
    out = []
    for option, field in _PRESET_OPTIONS.items():
        if field in paper and ctx.get_parameter_source(option) is not ParameterSource.DEFAULT \
                and set(fields[field]) != set(PRESETS[preset][field]):
            param = next(p for p in ctx.command.params if p.name == option)
            out.append(f"{param.opts[0]} {','.join(str(v) for v in fields[field])}")
    return out


def grid_options(styles: tuple[str, ...], style_default: str | None, style_help: str, experiment: str = "aes"):
    """The grid options of `s2mc aes` and `s2mc cipher`, in order (only --style and the
    experiment's default name differ)."""
    options = [
        machine_option("cores", many=True, default=_d("cores")),
        click.option("--bytes", "sizes", type=Size(1, _MAX_BYTES, many=True, why="input and output must fit in the "
                     f"simulated memory, at most {PARAMS['mem_words'].max} words"), default=_d("sizes"),
                     show_default=True, help="Comma-separated data sizes in bytes (4K = 4096). ECB needs multiples of 16."),
        click.option("--key-bits", type=Choices(("128", "192", "256")), default=_d("key_bits"), show_default=True,
                     help="128, 192 and/or 256 (with --key: its size, which is the default)."),
        click.option("--mode", "modes", type=Choices(MODES), default=_d("modes"), show_default=True,
                     help="ecb and/or ctr."),
        click.option("--direction", "directions", type=Choices(DIRECTIONS), default=_d("directions"),
                     show_default=True, help="enc and/or dec (CTR decryption is the same keystream XOR)."),
        click.option("--style", "styles", type=Choices(styles), default=style_default,
                     show_default=style_default is not None, help=style_help),
        click.option("--partition", "partitions", type=Choices(PARTITIONS), default=_d("partitions"), show_default=True,
                     help="interleaved (block i on core i mod N), contiguous (one chunk per core), "
                          "extended (runs of --ext-blocks blocks)."),
        click.option("--ext-blocks", type=Integer(1, MAX_EXT_BLOCKS, many=True), default=_d("ext_blocks"),
                     show_default=True, help="Blocks per run for --partition extended (comma-separated list allowed)."),
        machine_option("mem_latency", many=True, dest="latencies"),
        machine_option("arbitration", many=True, dest="arbitrations"),
        machine_option("engine", many=True, dest="engines"),
        machine_option("cache", many=True, dest="caches", help="Each protocol is a run of its own, "
                       "all with the cache shape below."),
        machine_option("cache_lines"),
        machine_option("cache_ways"),
        machine_option("line_words"),
        machine_option("cache_hit_latency"),
        machine_option("interconnect", many=True, dest="interconnects", help="Each is a run of its own: the bus "
                       "snoops, a ring or a mesh keeps a directory and runs the msi and mesi of --cache only."),
        machine_option("link_latency"),
        machine_option("router_latency"),
        machine_option("flit_words"),
        click.option("--vcd", type=OutputFile("VCD waveform", stdout=False),
                     help="With --engine systemc: write a VCD waveform (FILE-<n>.vcd for each run when "
                          "the grid has several)."),
        click.option("--opt", "opts", type=Choices(("1", "0")), default=_d("opts"), show_default=True,
                     help="Rz optimisation level(s) the programs are compiled at: 1 and/or 0 (-O0, like "
                          "the original compiler; seed 003's counts are close to it)."),
        click.option("--key-expansion", "key_expansions", type=Choices(KEY_EXPANSIONS), default=_d("key_expansions"),
                     show_default=True, help="core0 (core 0 expands the key while the others wait at the barrier) "
                                             "and/or per-core (every core expands it itself)."),
        click.option("--preset", type=Choices(tuple(PRESETS), many=False), default=None,
                     help="A named configuration; seed003: the model that reproduces seed 003's Tables 3-4 "
                          "(burst4 arbitration, key expanded per core, -O0, calibrated to the paper's 1-core cells; "
                          "docs/aes-on-s2.md). Options given as well replace its values."),
        machine_option("mem_words"),
        click.option("--key", "fixed_key", type=AesKey(), default=None,
                     help="Key as 32, 48 or 64 hex digits (default: random from --seed, per key size)."),
        click.option("--seed", type=Integer(0, MAX_SEED), default=AesGrid.seed, show_default=True,
                     help=f"Seed of the random key, counter and data (0..{MAX_SEED})."),
        click.option("--experiment", type=Text(), default=experiment, show_default=True, help="The records' experiment name."),
        click.option("--out", "out_path", type=OutputFile("records", stdout=False),
                     help="Write the records (Parquet, or CSV when the name ends in .csv) and a manifest."),
        click.option("--json", "as_json", is_flag=True, help="Print the runs (and any seed comparison) "
                     "as JSON on stdout instead of tables."),
        timeline_options("FILE-<i>.EXT for each run when the grid has several"),
        click.option("--quiet", "-q", is_flag=True, help="No progress bar."),
        click.pass_context,
    ]

    def apply(f):
        for option in reversed(options):
            f = option(f)
        return f
    return apply


@click.command("cipher")
@click.option("--cipher", "ciphers", type=Choices(tuple(CIPHERS)), default="aes", show_default=True,
              help="aes and/or camellia (comma-separated).")
@grid_options(ALL_STYLES, None, "The programs: aes: bytes (one byte per word) and/or ttable (four bytes per word); "
              "camellia: sp (SP-tables on 32-bit words). Each cipher runs the styles that are its own "
              "[default: each cipher's first: bytes, sp].", experiment="cipher")
def cipher_cmd(ctx, ciphers, styles, **options):
    """A block cipher on the simulated multicore: the grid of `s2mc aes` (cores x bytes x key size,
    mode, direction, style, partition, memory latency, arbitration, engine) for each cipher of
    --cipher, every result checked against `cryptography`."""
    ciphers = tuple(dict.fromkeys(ciphers))
    if not styles:
        styles = tuple(CIPHERS[c].styles[0] for c in ciphers)
    run_command(ctx, "cipher", ciphers, styles=styles, **options)


@click.command("aes")
@grid_options(STYLES, _d("styles"), "bytes (one byte per word, textbook steps) and/or ttable (four bytes per word).")
def aes_cmd(ctx, **options):
    """AES on the simulated multicore: a grid over cores x bytes x key size, mode, direction,
    style, partition, memory latency, arbitration and engine, every result checked against
    `cryptography`. The seed 003 configuration also prints the paper's Tables 3-4 beside ours."""
    run_command(ctx, "aes", ("aes",), **options)


def run_command(ctx, command, ciphers, *, cores, sizes, key_bits, modes, directions, styles, partitions, ext_blocks,
                latencies, arbitrations, engines, caches, cache_lines, cache_ways, line_words, cache_hit_latency,
                interconnects, link_latency, router_latency, flit_words, vcd, opts, key_expansions, preset, mem_words, fixed_key, seed,
                experiment, out_path, as_json, timeline, from_cycle, to_cycle, quiet):
    """The body of `s2mc aes` and `s2mc cipher`: the grid of `ciphers`, run, printed, recorded."""
    from s2mc.analysis import records, seed003
    from s2mc.workloads.cipher_sim import runner

    check_timeline_window(timeline, from_cycle, to_cycle)
    bits_list = [int(b) for b in key_bits]
    if fixed_key is not None and ctx.get_parameter_source("key_bits") is not ParameterSource.DEFAULT \
            and set(bits_list) != {len(fixed_key) * 8}:
        # the key decides the key size: a different --key-bits would silently not be run
        raise click.UsageError(f"--key-bits {','.join(key_bits)} conflicts with --key, a "
                               f"{len(fixed_key) * 8}-bit key (give one of them, or matching ones)", ctx)
    fields = dict(
        cores=tuple(cores), sizes=tuple(sizes), key_bits=tuple(bits_list), modes=tuple(modes),
        directions=tuple(directions), styles=tuple(styles), partitions=tuple(partitions),
        ext_blocks=tuple(ext_blocks), mem_latencies=tuple(latencies), arbitrations=tuple(arbitrations),
        engines=tuple(engines), opts=tuple(int(o) for o in opts), key_expansions=tuple(key_expansions),
        mem_words=mem_words, caches=tuple(caches), cache_lines=cache_lines, cache_ways=cache_ways,
        line_words=line_words, cache_hit_latency=cache_hit_latency, interconnects=tuple(interconnects),
        link_latency=link_latency, router_latency=router_latency, flit_words=flit_words, key=fixed_key, seed=seed, **({"ciphers": tuple(ciphers)} if ciphers != ("aes",) else {}))
    if preset:
        given = {f for o, f in _PRESET_OPTIONS.items()
                 if ctx.get_parameter_source(o) is not ParameterSource.DEFAULT}
        if fixed_key is not None:
            given.add("key_bits")
        fields.update({f: v for f, v in PRESETS[preset].items() if f not in given})
    grid = AesGrid(**fields)
    t0 = time.perf_counter()
    runs, rows = run_grid(grid, new_run_id=lambda: records.new_run_id(command), experiment=experiment,
                          progress=not quiet and sys.stderr.isatty(), vcd=vcd, timeline=timeline,
                          timeline_window=(from_cycle, to_cycle), desc=f"s2mc {command}")
    wall = time.perf_counter() - t0
    left = _left_paper_setting(preset, ctx, fields) if preset else []
    if left:   # after the runs: a preset that cannot run at all says only why
        click.echo(f"s2mc {command} --preset {preset}: {', '.join(left)} leave{'s' if len(left) == 1 else ''} "
                   "the paper's setting, so no comparison with the paper is printed for these runs", err=True)
    sim_s = sum(r.sim_seconds for r in runs)
    instr = sum(r.result.instructions for r in runs)
    # Two significant digits: a short SystemC run simulates well under 1 MIPS, never "0 MIPS".
    click.echo(f"s2mc {command}: {len(runs)} runs checked against cryptography in {wall:.1f} s "
               f"({sim_s:.2g} s simulating, {float(f'{instr / max(sim_s, 1e-9) / 1e6:.2g}'):g} MIPS)",
               err=True)
    # like every other output: say where each file went (and, for several, which run it holds)
    if timeline:
        for name, r in zip(timeline_files(grid, timeline), runs):
            click.echo(f"wrote {name}" + (f": {r.config.workload} {r.config.variant}, {r.config.cores} cores, "
                                          f"{r.nbytes} bytes" if len(runs) > 1 else ""), err=True)
    if vcd:
        for name in vcd_files(grid, vcd):
            click.echo(f"wrote {name}", err=True)

    seed_text, seed_rows = seed003.comparison(runs)
    if out_path:
        df = records.make_records(rows)
        params = dict(command=command, **grid.params(), experiment=experiment, wall_seconds=wall)
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps({"runs": [runner.summary(r) for r in runs],
                               "seed003": seed_rows, "wall_seconds": wall}, indent=1))
        return
    click.echo(format_tables(runs))
    if seed_text:
        click.echo("\n" + seed_text)


COMMANDS = [cipher_cmd, aes_cmd]
