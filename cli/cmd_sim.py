"""`s2mc info`, `asm`, `disasm` and `run` (docs/architecture.md)."""
from __future__ import annotations

import json
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import click

from s2mc.isa import assemble, disassemble, disassemble_word, load_program, read_text
from s2mc.common.errors import S2mcError
from s2mc.common.outputs import STDOUT, check_distinct, write_output
from s2mc.simulator import (BUFFER_PARAMS, CACHE_COUNTERS, CACHE_PARAMS, NETWORK_ENGINES, NETWORK_PARAMS, Machine,
                            SimFault, run_reference)
from s2mc.simulator.records import result_rows, variant_parts

from .options import (Integer, OutputFile, Text, cache_options, check_timeline_window, machine_option, network_options,
                      timeline_options)


def _cpu_features() -> list[str]:
    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        return []
    have = set(flags.split(":", 1)[1].split())
    return [f for f in ("sse4_2", "aes", "pclmulqdq", "avx2", "avx512f", "vaes", "vpclmulqdq") if f in have]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(as_json):
    """Versions, built engines and backends, CPU features and GPU."""
    facts = {"s2mc": metadata.version("s2mc"), "python": platform.python_version(),
             "platform": platform.platform(), "cpu": platform.processor() or platform.machine(),
             "cpu_features": _cpu_features(), "cpu_count": os.cpu_count()}
    from s2mc import gpu
    from s2mc.simulator import systemc_engine
    from s2mc.workloads import native

    facts["engines"] = {"fast": True, "systemc": systemc_engine.available()}
    facts["native"] = native.info()
    from s2mc.workloads.native import coherence
    facts["coherence"] = coherence.info()
    from s2mc.workloads.native import litmus
    facts["litmus"] = litmus.info()
    facts["cuda"] = gpu.status()
    from s2mc.gpu import opencl
    facts["opencl"] = opencl.status()
    if as_json:
        click.echo(json.dumps(facts, indent=2, default=str))
        return
    for key, value in info_rows(facts):
        click.echo(f"{key:<12}{value}")


def info_rows(facts: dict) -> list[tuple[str, str]]:
    """`s2mc info` as (label, text) rows a person reads: each component built or not, and why."""
    from s2mc.workloads.cipher_host import cipher_title
    yes = lambda ok: "yes" if ok else "no"  # noqa: E731
    nat, cuda = facts["native"], facts["cuda"]
    rows = [("s2mc", f"{facts['s2mc']} (Python {facts['python']})"),
            ("host", f"{facts['platform']}, {facts['cpu_count']} CPUs"),
            ("CPU", f"{nat.get('cpu') or facts['cpu']}; features: {' '.join(facts['cpu_features']) or '-'}"),
            ("engines", f"fast: {yes(facts['engines']['fast'])}, systemc: {yes(facts['engines']['systemc'])}"
                        + ("" if facts["engines"]["systemc"] else " (not built: s2mc run --engine systemc "
                                                                  "is unavailable)"))]
    if nat.get("built"):
        have = [i["name"] for i in nat["impls"] if i["supported"]]
        lack = [i["name"] for i in nat["impls"] if not i["supported"]]
        rows += [("native AES", f"built; best {nat['best']}; this CPU runs {', '.join(have)}"
                                + (f" (not {', '.join(lack)})" if lack else "")),
                 ("", f"OpenMP threads {nat['max_threads']}; {nat['openssl']}")]
        for cipher, names in (nat.get("ciphers") or {}).items():   # Camellia beside AES
            rows.append(("", f"{cipher_title(cipher)}: {', '.join(names) or 'none this CPU runs'}"))
    else:
        rows.append(("native AES", f"not built ({nat.get('error', 'unknown reason')})"))
    coh = facts.get("coherence")
    if coh:   # s2mc coherence-native
        rows.append(("coherence", f"built; threads pinned to CPUs {', '.join(map(str, coh['cpus']))}; cache line "
                                  f"{coh['line_bytes']} bytes" if coh.get("built")
                     else f"not built ({coh.get('error', 'unknown reason')})"))
    lit = facts.get("litmus")
    if lit:   # s2mc litmus-native
        if lit.get("built"):
            n = len(lit["cpus"])
            more = [f"{name}'s {k}" for name, k in lit["tests"].items() if k > n]
            rows.append(("litmus", f"built; {', '.join(lit['tests'])}, plain and with {lit['fence']}; threads pinned "
                                   f"to CPUs {', '.join(map(str, lit['cpus']))}"
                                   + (f" ({', '.join(more)} threads time-slice)" if more else "")))
        else:
            rows.append(("litmus", f"not built ({lit.get('error', 'unknown reason')})"))
    if cuda.get("gpu_present"):
        rows.append(("CUDA", f"built; GPU: {', '.join(map(str, cuda['devices']))}"))
    else:
        rows.append(("CUDA", f"{'built' if cuda.get('built') else 'not built'}; {cuda.get('reason') or 'no GPU'}"))
    rows += opencl_rows(facts.get("opencl") or {})
    return rows


def opencl_rows(ocl: dict) -> list[tuple[str, str]]:
    """The OpenCL platforms and devices, one row each, or one row saying why there are none."""
    if not ocl.get("devices"):
        return [("OpenCL", f"{'built' if ocl.get('built') else 'not built'}; {ocl.get('reason') or 'no device'}")]
    rows = []
    for d in ocl["devices"]:
        mark = " (default)" if d["index"] == ocl.get("device") else ""
        rows.append(("OpenCL" if not rows else "",
                     f"{d['index']}: {d['name']} ({d['platform']}), {d['type']}, {d['compute_units']} compute units, "
                     f"global {d['global_mem_bytes'] / 2**30:.1f} GiB, local {d['local_mem_bytes'] // 1024} KiB"
                     f"{mark}"))
    return rows


@click.command()
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=OutputFile("object file"),
              help="Object file (default: SOURCE with .obj; '-' for stdout).")
@click.option("--listing", is_flag=True, help="Also print a listing: address, word, source line.")
def asm(source, output, listing):
    """Assemble an S2 assembly file (or a bundled example by name) into a text object file."""
    from s2mc.workloads.examples import bundled
    example = bundled(source)
    # a bundled example's object goes into this folder, never into the package
    out = output or str(Path(example.name if example else source).with_suffix(".obj"))
    check_distinct([("the object file", out)], [("SOURCE", example.path if example else source)])
    text = read_text(example.path if example else source)
    prog = assemble(text, source)
    write_output(out, prog.to_text(), what="object file")
    if listing:
        for seg in prog.segments:
            for i, w in enumerate(seg.words):
                body = disassemble_word(w) if seg.kind == "code" else str(w)
                click.echo(f"{seg.kind:4} {seg.addr + i:6}  {w & 0xFFFFFFFF:08x}  {body}")
    if out != "-":
        click.echo(f"wrote {out}", err=True)


@click.command()
@click.argument("objfile", type=click.Path(dir_okay=False))
def disasm(objfile):
    """Disassemble an object file back into assembly (which reassembles to the same words)."""
    click.echo(disassemble(load_program(objfile)), nl=False)


def load_any(path: str, opt: int, debug: bool = False):
    """A Program from .rz (compiled; with debug information when `debug`), .s (assembled) or .obj;
    a bundled example by name too."""
    from s2mc.workloads.examples import load
    return load(path, opt, debug=debug)


def _print_table(res) -> None:
    cols = ["core", "instructions", "cycles", "stall_cycles", "bus_wait_cycles", "mem_reads", "mem_writes",
            "sync_wait_cycles"]
    head = ["core", "instr", "cycles", "stalls", "bus wait", "reads", "writes", "sync wait"]
    if res.network is not None:     # no bus to wait for
        del cols[4], head[4]
    widths = [max(len(h), 8) for h in head]
    click.echo("  ".join(h.rjust(w) for h, w in zip(head, widths)), err=True)
    for c in res.cores:
        click.echo("  ".join(str(c[k]).rjust(w) for k, w in zip(cols, widths)), err=True)
    if res.config.cached and res.network is None:
        _print_cache_table(res)
    if res.config.buffered:
        _print_buffer_table(res)
    if res.network is not None:
        _print_network(res)
        click.echo(f"total: {res.cycles} cycles, {res.instructions} instructions, {res.stall_cycles} stall cycles",
                   err=True)
        click.echo("stalls = every cycle of a core before its finish that is neither an instruction's first cycle "
                   "nor a barrier wait: each miss's cycles after its issue, each hit's beyond its first", err=True)
        return
    click.echo(f"total: {res.cycles} cycles, {res.instructions} instructions, {res.stall_cycles} stall cycles, "
               f"bus utilisation {res.bus_utilisation:.1%}", err=True)
    click.echo(stall_legend(res.config), err=True)


#: The cache counters' column heads in the per-core table (the counters: CACHE_COUNTERS).
_CACHE_HEADS = {"cache_hits": "hits", "cache_misses": "misses", "cold_misses": "cold", "capacity_misses": "capac",
                "conflict_misses": "confl", "coherence_misses": "coher", "true_sharing_misses": "true sh",
                "false_sharing_misses": "false sh", "bus_rd": "BusRd", "bus_rdx": "BusRdX", "bus_upgr": "BusUpgr",
                "bus_upd": "BusUpd", "cache_to_cache": "c2c", "writebacks": "wbacks",
                "invalidations_received": "inval rx", "hit_stall_cycles": "hit stall"}


def _print_cache_table(res) -> None:
    """The cache counters of every core, under the timing counters, headed by the cache's shape."""
    cfg = res.config
    click.echo(f"{cfg.cache.upper()} caches: {cfg.cache_lines} lines x {cfg.line_words} words, "
               f"{cfg.cache_ways}-way, hit {cfg.cache_hit_latency} cycle{'s' if cfg.cache_hit_latency != 1 else ''}",
               err=True)
    _counter_table(res, {k: _CACHE_HEADS[k] for k in CACHE_COUNTERS})


#: The store buffers' counters and their column heads in the per-core table.
_BUFFER_HEADS = {"store_forwards": "forwards", "store_drains": "drains", "drain_bus_accesses": "drain bus",
                 "store_buffer_full_stalls": "full stall", "fence_stall_cycles": "drain wait"}


def _print_buffer_table(res) -> None:
    """The store buffers' counters of every core, headed by the model and the buffer's size."""
    cfg = res.config
    click.echo(f"{cfg.consistency.upper()} store buffers: {cfg.store_buffer_entries} "
               f"entr{'ies' if cfg.store_buffer_entries != 1 else 'y'} per core", err=True)
    # over a network a drain that misses takes no bus: it sends its store's GetM
    _counter_table(res, {**_BUFFER_HEADS, "drain_bus_accesses": "drain GetM"} if cfg.networked else _BUFFER_HEADS)


def _counter_table(res, heads: dict[str, str], label: str = "core") -> None:
    """One row per core of the counters named in `heads` (counter -> column head), under a head row."""
    head = [label, *heads.values()]
    widths = [max(len(h), 6) for h in head]
    click.echo("  ".join(h.rjust(w) for h, w in zip(head, widths)), err=True)
    for c in res.cores:
        click.echo("  ".join(str(c[k]).rjust(w) for k, w in zip(["core", *heads], widths)), err=True)


#: The directory's per-core counters and their column heads (a tile: its core, cache and home).
_NETWORK_HEADS = {"dir_hits": "hits", "dir_misses": "misses", "miss_cycles": "miss cyc",
                  "miss_queueing_cycles": "queueing", "miss_network_cycles": "network", "miss_home_cycles": "home",
                  "messages_sent": "msgs", "flits_sent": "flits", "message_hops": "hops",
                  "invalidations_sent": "invals", "home_busy_cycles": "home busy"}


def _print_network(res) -> None:
    """A directory run: the tiles' counters, then the machine-wide network counters."""
    cfg, net = res.config, res.network
    click.echo(f"{cfg.coherence} {cfg.cache.upper()} over a {net['topology']}: link {cfg.link_latency}, router "
               f"{cfg.router_latency} cycle{'s' if cfg.router_latency != 1 else ''}, {cfg.flit_words} "
               f"word{'s' if cfg.flit_words != 1 else ''} a flit; miss cycles = queueing + network + home", err=True)
    _counter_table(res, _NETWORK_HEADS, "tile")
    sent = ", ".join(f"{k} {n}" for k, n in net["messages"].items() if n) or "none"
    click.echo(f"messages: {sent}; {net['flits']} flits, {net['hops']} hops", err=True)
    per = ", ".join(f"{n} GetM{'s' * (n != 1)} {k}" for k, n in net["copies_invalidated_per_getm"].items())
    click.echo(f"copies invalidated per GetM: {per or 'no GetM'}; mean "
               f"{net['mean_copies_invalidated_per_getm']:.2f}", err=True)
    links = net["link_utilisation"]
    if links:
        busiest = max(links, key=lambda k: (links[k], k))
        click.echo(f"links: busiest {busiest} {links[busiest]:.1%}, mean {sum(links.values()) / len(links):.1%} "
                   f"of {len(links)}; homes: " + ", ".join(f"{u:.1%}" for u in net["home_utilisation"]), err=True)
    else:
        click.echo("links: none (one tile); homes: " + ", ".join(f"{u:.1%}" for u in net["home_utilisation"]),
                   err=True)


def stall_legend(cfg) -> str:
    """One line under the counters: what a stall is, against a bus wait (they are easy to confuse)."""
    if cfg.buffered:
        return _stall_legend(cfg)[:-len("; sync wait (at a barrier) is not a stall")] + (
            " + full-buffer and drain waits (the drains' own bus time is not); sync wait (at a barrier) "
            "is not a stall")
    return _stall_legend(cfg)


def _stall_legend(cfg) -> str:
    if cfg.cached:
        h = cfg.cache_hit_latency - 1
        return ("stalls = bus wait (queued while another core holds the bus) + D-1 cycles per bus transaction "
                f"(D: its bus time) + H-1 = {h} per cache hit; sync wait (at a barrier) is not a stall")
    mem_latency = cfg.mem_latency
    return (f"stalls = bus wait (queued while another core holds the bus) + L-1 = {mem_latency - 1} "
            f"cycle{'s' if mem_latency != 2 else ''} of memory latency per access; sync wait (at a barrier) "
            "is not a stall")


def _print_sweep(results, program: str) -> None:
    """One row per run of a core-count sweep, with the speedup over the fewest cores, or, for a program
    whose work grows with the cores (its header says `work: per core`), the time ratio to them."""
    from s2mc.workloads.examples import WORK_PER_CORE, work_per_core
    base = min(results, key=lambda r: r.config.cores)
    nb, grows = base.config.cores, work_per_core(program)
    if grows:
        ratio_head = f"time vs {nb}c"
        ratio = lambda r: f"{r.cycles / base.cycles:.2f}" if base.cycles else "-"  # noqa: E731
        legend = (f"time vs {nb}c = cycles / cycles on {nb} core{'s' if nb > 1 else ''}: the program "
                  f"says `{WORK_PER_CORE}` (its work grows with the cores), so this is not a speedup")
    else:
        ratio_head = "speedup" if nb == 1 else f"speedup vs {nb}c"
        ratio = lambda r: f"{base.cycles / r.cycles:.2f}" if r.cycles else "-"  # noqa: E731
        legend = None
    if base.network is None:
        head = ["cores", "cycles", ratio_head, "instructions", "stall cycles", "bus wait", "mem accesses", "bus util"]
        rows = [[str(r.config.cores), str(r.cycles), ratio(r), str(r.instructions), str(r.stall_cycles),
                 str(sum(c["bus_wait_cycles"] for c in r.cores)), str(sum(c["mem_accesses"] for c in r.cores)),
                 f"{r.bus_utilisation:.1%}"] for r in results]
    else:       # a ring or a mesh: no bus, its misses and messages instead
        head = ["cores", "cycles", ratio_head, "instructions", "stall cycles", "misses", "miss cycles", "messages",
                "flits"]
        rows = [[str(r.config.cores), str(r.cycles), ratio(r), str(r.instructions), str(r.stall_cycles),
                 *(str(sum(c[k] for c in r.cores)) for k in ("dir_misses", "miss_cycles", "messages_sent",
                                                             "flits_sent"))] for r in results]
    widths = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(head)]
    for line in [head, *rows]:
        click.echo("  ".join(cell.rjust(w) for cell, w in zip(line, widths)), err=True)
    if legend:
        click.echo(legend, err=True)
    if base.network is None:
        click.echo(stall_legend(base.config), err=True)


def _per_run(path: str | None, cores: int, sweep: bool) -> str | None:
    """A --trace/--vcd/--timeline file name: as given for one run, FILE-<n>c.EXT for each run of a sweep."""
    if not path or not sweep or path == STDOUT:
        return path
    p = Path(path)
    return str(p.with_name(f"{p.stem}-{cores}c{p.suffix}"))


@click.command()
@click.argument("program", type=click.Path(dir_okay=False))
@machine_option("cores", many=True, help="Several (1,2,4,8) run the program once per core count.")
@machine_option("mem_latency")
@machine_option("arbitration")
@machine_option("engine", extra=("reference",),
                help="reference: the cycle-stepped reference model (slow; the engines' specification; "
                     f"--interconnect ring and mesh run on it and on {' and '.join(NETWORK_ENGINES)}).")
@machine_option("max_cycles")
@machine_option("mem_words")
@cache_options
@machine_option("consistency")
@machine_option("store_buffer_entries")
@network_options
@click.option("-O", "opt", default=1, show_default=True, type=Integer(0, 1), help="Rz optimisation level.")
@click.option("--trace", "trace_file", type=OutputFile("trace"),
              help="Write a per-event log here (FILE-<n>c.EXT for each core count of a sweep).")
@click.option("--vcd", type=OutputFile("VCD waveform", stdout=False),
              help="Write a VCD waveform (systemc engine; FILE-<n>c.vcd for each core count of a sweep).")
@click.option("--json", "as_json", is_flag=True,
              help="Print the result object on stdout (a list of them for several core counts).")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False),
              help="Write the records (Parquet, or CSV when the name ends in .csv) and a manifest.")
@click.option("--experiment", type=Text(), default="", help="The records' experiment name.")
@timeline_options("FILE-<n>c.EXT for each core count of a sweep")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def run(program, cores, mem_latency, arbitration, engine, max_cycles, mem_words, opt, trace_file, vcd, as_json,
        out_path, experiment, timeline, from_cycle, to_cycle, quiet, **cache):
    # **cache: the cache options, the store buffers' (consistency, store_buffer_entries) and the network's
    """Run a .rz, .s or .obj program on the simulated multicore, once per core count.

    One run prints the program's output on stdout and the per-core counters on stderr; several
    (--cores 1,2,4,8) print one summary row per run. --out writes the records (docs/records.md)."""
    check_timeline_window(timeline, from_cycle, to_cycle)
    prog = load_any(program, opt)
    if vcd and engine != "systemc":
        raise S2mcError("--vcd needs --engine systemc")
    if engine == "reference":
        for given, flag in ((trace_file, "--trace"), (timeline, "--timeline")):
            if given:
                raise S2mcError(f"{flag} needs --engine fast or systemc (the reference model writes no event log)")
    sweep = len(cores) > 1
    from tqdm import tqdm
    results, written, t0 = [], [], time.perf_counter()
    with tqdm(total=len(cores), desc="s2mc run", unit="run", leave=False,
              disable=not sweep or quiet or not sys.stderr.isatty()) as bar:
        for n in cores:
            trace_n, vcd_n, timeline_n = (_per_run(f, n, sweep) for f in (trace_file, vcd, timeline))
            machine = dict(cores=n, mem_latency=mem_latency, arbitration=arbitration, max_cycles=max_cycles,
                           mem_words=mem_words, **cache)
            if engine != "reference":
                m = Machine(prog, engine=engine, trace_file=trace_n, timeline=timeline_n,
                            timeline_window=(from_cycle, to_cycle), **machine, **({"vcd": vcd_n} if vcd_n else {}))
            try:
                res = run_reference(prog, **machine) if engine == "reference" else m.run()
            except SimFault as fault:
                if sweep:
                    raise S2mcError(f"with --cores {n}: {fault}") from None
                raise
            results.append(res)
            bar.set_postfix_str(f"{n} cores")
            bar.update(1)
            for f in (trace_n, vcd_n, timeline_n):
                if f and f != STDOUT:
                    written.append(f)
    wall = time.perf_counter() - t0
    for f in written:   # like every other output: say where it went
        click.echo(f"wrote {f}", err=True)
    if out_path:
        _write_records(results, program, out_path, experiment, opt, wall)
    if as_json:
        objs = [r.to_json() for r in results]
        click.echo(json.dumps(objs if sweep else objs[0]))
        return
    for res in results:
        if sweep:
            click.echo(f"== {res.config.cores} core{'s' if res.config.cores > 1 else ''} ==")
        click.echo(res.output, nl=False)
        if res.output and not res.output.endswith("\n"):
            click.echo()
    if sweep:
        _print_sweep(results, program)
    else:
        _print_table(results[0])


def _write_records(results, program: str, out_path: str, experiment: str, opt: int, wall: float) -> None:
    from s2mc.analysis import records
    cfg = results[0].config
    rz = program.endswith(".rz")
    variant = "/".join([*variant_parts(cfg.mem_latency, cfg.arbitration,
                                       **{k: getattr(cfg, k) for k in CACHE_PARAMS + BUFFER_PARAMS + NETWORK_PARAMS}),
                        *([f"O{opt}"] if rz and opt != 1 else [])])
    rows = []
    for res in results:
        rows += result_rows(res, records.new_run_id("run"), experiment=experiment, workload=Path(program).stem,
                            variant=variant)
    df = records.make_records(rows)
    params = dict(command="run", program=program, cores=[r.config.cores for r in results],
                  mem_latency=cfg.mem_latency, arbitration=cfg.arbitration, engine=cfg.engine,
                  max_cycles=cfg.max_cycles, mem_words=cfg.mem_words, experiment=experiment,
                  wall_seconds=wall, **({"opt": opt} if rz else {}),
                  **({k: getattr(cfg, k) for k in CACHE_PARAMS} if cfg.cached else {}),
                  **({k: getattr(cfg, k) for k in BUFFER_PARAMS} if cfg.buffered else {}),
                  **({k: getattr(cfg, k) for k in NETWORK_PARAMS} if cfg.networked else {}))
    path = records.write(df, out_path, params=params)
    click.echo(f"wrote {len(df)} records to {path}", err=True)


COMMANDS = [info, asm, disasm, run]
