"""`s2mc aes`: AES on the simulated S2 multicore over a grid of configurations (docs/architecture.md).

    s2mc aes --cores 1,2,3,4 --bytes 32,64,128,256 --style bytes --mode ecb   # seed 003 Tables 3-4
    s2mc aes --cores 1,2,4,8,16,32,64 --bytes 1K,4K,64K --out results/scaling.parquet

Every option that names a parameter takes a comma-separated list; the grid is their cross
product. Each run is checked against `cryptography` (a mismatch is an error). Output: a table per
configuration (cycles, speedup, instructions, stalls, bus utilisation) on stdout, or --json; the
records (docs/records.md) go to --out; the progress bar goes to stderr.
"""
from __future__ import annotations

import itertools
import json
import random
import sys
import time

import click

from s2mc.isa.errors import S2mcError

from .options import choice_list, human_size, int_list, machine_option, size_list

SEED_BYTES = (32, 64, 128, 256)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = lambda cells: "  ".join(c.rjust(w) for c, w in zip(cells, widths))  # noqa: E731
    return "\n".join([line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows])


def config_tables(runs) -> str:
    """One table per configuration: rows bytes x cores."""
    from itertools import groupby
    out = []
    key = lambda r: (r.config.workload, r.config.variant, r.config.engine)  # noqa: E731
    for (workload, variant, engine), grp in groupby(sorted(runs, key=key), key=key):
        grp = sorted(grp, key=lambda r: (r.nbytes, r.config.cores))
        rows = []
        for nbytes, same in groupby(grp, key=lambda r: r.nbytes):
            same = list(same)
            base = same[0]
            for r in same:
                res = r.result
                sp = base.result.cycles / res.cycles if res.cycles else float("nan")
                rows.append([human_size(nbytes), str(r.config.cores), str(res.cycles), f"{sp:.2f}",
                             str(res.instructions), str(res.stall_cycles),
                             f"{100 * res.bus_utilisation:.1f}%"])
        base_cores = min(r.config.cores for r in grp)
        sp_head = "speedup" if base_cores == 1 else f"speedup vs {base_cores}c"
        out.append(f"# {workload}  {variant}  engine {engine}\n" + _table(
            ["bytes", "cores", "cycles", sp_head, "instructions", "stall cycles", "bus util"], rows))
    return "\n\n".join(out)


def seed003_comparison(runs) -> tuple[str, list[dict]]:
    """Our seed-003 configuration beside Tables 3 and 4 of the paper, with ratios (one comparison
    per Rz optimisation level that ran)."""
    texts, rows = [], []
    for opt in (1, 0):
        mine = {}
        for r in runs:  # the first engine's runs when several engines ran
            if (r.config.workload == "aes-128-ecb-enc" and r.config.opt == opt
                    and r.config.variant == "bytes/interleaved" + ("/O0" if opt == 0 else "")
                    and r.nbytes in SEED_BYTES and r.config.cores <= 4):
                mine.setdefault((r.nbytes, r.config.cores), r)
        if mine:
            t, rr = _seed003_one(mine, opt)
            texts.append(t)
            rows += rr
    return "\n\n".join(texts), rows


def _seed003_one(mine: dict, opt: int) -> tuple[str, list[dict]]:
    from s2mc.analysis.seeds import load_reference
    ref = load_reference(["seed003_table3", "seed003_table4"])
    paper = {(int(r.bytes), int(r.cores), r.metric): float(r.value) for r in ref.itertuples()}
    sizes = sorted({b for b, _ in mine})
    cores = sorted({c for _, c in mine})
    rows = []
    for b in sizes:
        for c in cores:
            r = mine.get((b, c))
            if r is None:
                continue
            p_cyc, p_st = paper.get((b, c, "cycles")), paper.get((b, c, "stall_cycles"))
            o1 = mine.get((b, 1))
            p1 = paper.get((b, 1, "cycles"))
            rows.append({"opt": opt, "bytes": b, "cores": c, "cycles": r.result.cycles,
                         "paper_cycles": p_cyc,
                         "cycles_ratio": r.result.cycles / p_cyc if p_cyc else None,
                         "stall_cycles": r.result.stall_cycles, "paper_stall_cycles": p_st,
                         "stall_ratio": r.result.stall_cycles / p_st if p_st else None,
                         "speedup": o1.result.cycles / r.result.cycles if o1 else None,
                         "paper_speedup": p1 / p_cyc if p1 and p_cyc else None})

    def bytes_by_cores(title, cell):
        """A table with one row per size and one column per core count; cell(row) formats one."""
        head = ["bytes"] + [f"{c} core{'s' if c > 1 else ''}" for c in cores]
        body = []
        for b in sizes:
            cells = [str(b)]
            for c in cores:
                row = next((x for x in rows if x["bytes"] == b and x["cores"] == c), None)
                cells.append("" if row is None else cell(row))
            body.append(cells)
        return f"{title}\n" + _table(head, body)

    def grid(title, ours_key, paper_key, ratio_key):
        def cell(row):
            if row[paper_key] is None:
                return f"{row[ours_key]} | -"
            return f"{row[ours_key]} | {row[paper_key]:.0f} | {row[ratio_key]:.2f}"
        return bytes_by_cores(title, cell)

    def speedups():
        def cell(row):
            if row["speedup"] is None:
                return ""
            p = f"{row['paper_speedup']:.2f}" if row["paper_speedup"] else "-"
            return f"{row['speedup']:.2f} | {p}"
        return bytes_by_cores("Speedup over one core (ours | seed 003)", cell)

    text = "\n\n".join([
        "== Seed 003 (ECTI-CARD 2014), AES-128 ECB, byte-oriented, interleaved blocks, L = 2; "
        f"ours compiled at -O{opt} ==",
        grid("Table 3: cycles to complete the task (ours | seed 003 | ours/seed)",
             "cycles", "paper_cycles", "cycles_ratio"),
        grid("Table 4: memory stall cycles, summed over cores (ours | seed 003 | ours/seed)",
             "stall_cycles", "paper_stall_cycles", "stall_ratio"),
        speedups(),
        "Their AES program is unpublished: docs/aes-on-s2.md lists how ours differs."])
    return text, rows


@click.command("aes")
@machine_option("cores", many=True, default="1,2,4")
@click.option("--bytes", "sizes", default="32,64,128,256", show_default=True,
              help="Comma-separated data sizes in bytes (4K = 4096). ECB needs multiples of 16.")
@click.option("--key-bits", default="128", show_default=True, help="128, 192 and/or 256.")
@click.option("--mode", "modes", default="ecb", show_default=True, help="ecb and/or ctr.")
@click.option("--direction", "directions", default="enc", show_default=True,
              help="enc and/or dec (CTR decryption is the same keystream XOR).")
@click.option("--style", "styles", default="bytes", show_default=True,
              help="bytes (one byte per word, textbook steps) and/or ttable (four bytes per word).")
@click.option("--partition", "partitions", default="interleaved", show_default=True,
              help="interleaved (block i on core i mod N), contiguous (one chunk per core), "
                   "extended (runs of --ext-blocks blocks).")
@click.option("--ext-blocks", default="4", show_default=True,
              help="Blocks per run for --partition extended (comma-separated list allowed).")
@machine_option("mem_latency", many=True, dest="latencies")
@machine_option("arbitration", many=True, dest="arbitrations")
@machine_option("engine", many=True, dest="engines")
@click.option("--vcd", type=click.Path(dir_okay=False),
              help="With --engine systemc: write a VCD waveform (FILE-<n>.vcd for each run when "
                   "the grid has several).")
@click.option("--opt", "opts", default="1", show_default=True,
              help="Rz optimisation level(s) the programs are compiled at: 1 and/or 0 (-O0, like "
                   "the original compiler; seed 003's counts are close to it).")
@machine_option("mem_words")
@click.option("--key", "key_hex", default=None,
              help="Key as 32, 48 or 64 hex digits (default: random from --seed, per key size).")
@click.option("--seed", type=int, default=2014, show_default=True,
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
    if "ecb" in mode_list:
        bad = [n for n in byte_sizes if n % 16]
        if bad:
            raise S2mcError(f"--bytes: ECB needs whole 16-byte blocks; {bad[0]} is not a multiple "
                            "of 16 (use --mode ctr for any length)")
    fixed_key = None
    if key_hex is not None:
        try:
            fixed_key = bytes.fromhex(key_hex)
        except ValueError:
            raise S2mcError(f"--key: {key_hex!r} is not hex") from None
        if len(fixed_key) not in (16, 24, 32):
            raise S2mcError(f"--key: {len(key_hex)} hex digits; AES keys are 32, 48 or 64")
        bits_list = [len(fixed_key) * 8]
    if "systemc" in eng_list:
        from s2mc.simulator import systemc_engine
        if not systemc_engine.available():  # fail before running anything
            raise S2mcError("--engine systemc: the SystemC engine is not built (install "
                            "libsystemc-dev and rerun `make setup`)")

    rng = random.Random(seed)
    data = rng.randbytes(max(byte_sizes))
    counter = rng.randbytes(16)
    keys = {b: fixed_key or random.Random(seed * 1000 + b).randbytes(b // 8) for b in bits_list}

    configs = []
    for bits, mode, d, style, part, lat, arb, eng, opt in itertools.product(
            bits_list, mode_list, dir_list, style_list, part_list, lat_list, arb_list, eng_list,
            opt_list):
        for e in (ext_list if part == "extended" else [aes.runner.DEFAULT_EXT_BLOCKS]):
            configs.append(dict(key_bits=bits, mode=mode, direction=d, style=style, partition=part,
                                ext_blocks=e, mem_latency=lat, arbitration=arb, engine=eng,
                                opt=opt, mem_words=words))
    # fail before running anything when the largest size cannot fit
    for style, opt in itertools.product(style_list, opt_list):
        need = aes.words_needed(max(byte_sizes), style, opt)
        if need > words:
            raise S2mcError(f"--bytes {max(byte_sizes)}: the {style} program needs {need} words of "
                            f"simulated memory but --mem-words is {words}; raise --mem-words to "
                            f"at least {need}")
    jobs = [(c, n, cfg) for cfg in configs for n in byte_sizes for c in core_list]
    if vcd and "systemc" not in eng_list:
        raise S2mcError("--vcd needs --engine systemc")
    traced = [j for j in jobs if j[2]["engine"] == "systemc"] if vcd else []
    stem, dot, ext = (vcd or "").rpartition(".")
    vcd_of = {id(j): vcd if len(traced) == 1 else f"{stem or ext}-{i}.{ext if dot else 'vcd'}"
              for i, j in enumerate(traced)}

    from s2mc.analysis import records
    bar = None
    if not quiet and sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=len(jobs), desc="s2mc aes", unit="run", leave=False)
    runs, rows, t0 = [], [], time.perf_counter()
    try:
        for job in jobs:
            c, n, cfg = job
            r = aes.run_aes(data[:n], keys[cfg["key_bits"]], counter, cores=c, vcd=vcd_of.get(id(job)), **cfg)
            runs.append(r)
            rows += aes.runner.record_rows(r, records.new_run_id("aes"), experiment)
            if bar:
                bar.set_postfix_str(f"{cfg['style']} {cfg['mode']} {c}c {human_size(n)}B")
                bar.update(1)
    finally:
        if bar:
            bar.close()
    wall = time.perf_counter() - t0
    sim_s = sum(r.sim_seconds for r in runs)
    instr = sum(r.result.instructions for r in runs)
    click.echo(f"s2mc aes: {len(runs)} runs checked against cryptography in {wall:.1f} s "
               f"({sim_s:.1f} s simulating, {instr / max(sim_s, 1e-9) / 1e6:.0f} MIPS)", err=True)

    seed_text, seed_rows = seed003_comparison(runs)
    if out_path:
        df = records.make_records(rows)
        params = dict(command="aes", cores=core_list, bytes=byte_sizes, key_bits=bits_list,
                      modes=mode_list, directions=dir_list, styles=style_list,
                      partitions=part_list, ext_blocks=ext_list, mem_latency=lat_list,
                      arbitration=arb_list, engines=eng_list, opt=opt_list, mem_words=words,
                      seed=seed,
                      key_given=fixed_key is not None, experiment=experiment,
                      checked_against="cryptography " + _cryptography_version(),
                      wall_seconds=wall)
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps({"runs": [aes.runner.summary(r) for r in runs],
                               "seed003": seed_rows, "wall_seconds": wall}, indent=1))
        return
    click.echo(config_tables(runs))
    if seed_text:
        click.echo("\n" + seed_text)


def _cryptography_version() -> str:
    try:
        import cryptography
        return cryptography.__version__
    except Exception:  # noqa: BLE001
        return "?"


COMMANDS = [aes_cmd]
