"""`s2mc info`, `asm`, `disasm` and `run` (docs/architecture.md)."""
from __future__ import annotations

import json
import os
import platform
from importlib import metadata
from pathlib import Path

import click

from s2mc.isa import assemble, disassemble, disassemble_word, load_program, read_text
from s2mc.isa.errors import S2mcError
from s2mc.simulator import Machine, SimFault, format_trace

from .options import machine_option


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
    engines = {"fast": True}
    try:
        from s2mc.simulator import systemc_engine
        engines["systemc"] = systemc_engine.available()
    except ImportError:
        engines["systemc"] = False
    facts["engines"] = engines
    try:
        from s2mc.workloads import native
        facts["native"] = native.info() if hasattr(native, "info") else {"built": hasattr(native, "encrypt")}
    except ImportError:
        facts["native"] = {"built": False}
    try:
        from s2mc import gpu
        facts["cuda"] = gpu.status() if hasattr(gpu, "status") else {"built": False}
    except ImportError:
        facts["cuda"] = {"built": False}
    if as_json:
        click.echo(json.dumps(facts, indent=2, default=str))
        return
    for key, value in facts.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, list):
            value = " ".join(value) or "-"
        click.echo(f"{key:>13}: {value}")


@click.command()
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Object file (default: SOURCE with .obj).")
@click.option("--listing", is_flag=True, help="Also print a listing: address, word, source line.")
def asm(source, output, listing):
    """Assemble an S2 assembly file into a text object file."""
    text = read_text(source)
    prog = assemble(text, source)
    out = output or str(Path(source).with_suffix(".obj"))
    Path(out).write_text(prog.to_text())
    if listing:
        for seg in prog.segments:
            for i, w in enumerate(seg.words):
                body = disassemble_word(w) if seg.kind == "code" else str(w)
                click.echo(f"{seg.kind:4} {seg.addr + i:6}  {w & 0xFFFFFFFF:08x}  {body}")
    click.echo(f"wrote {out}", err=True)


@click.command()
@click.argument("objfile", type=click.Path(dir_okay=False))
def disasm(objfile):
    """Disassemble an object file back into assembly (which reassembles to the same words)."""
    click.echo(disassemble(load_program(objfile)), nl=False)


def load_any(path: str, opt: int):
    """A Program from .rz (compiled), .s (assembled) or .obj."""
    if path.endswith(".rz"):
        source = read_text(path)
        from s2mc.compiler import compile as compile_rz
        return compile_rz(source, opt=opt, filename=path).program
    if not path.endswith((".s", ".obj")):
        raise S2mcError(f"{path}: expected a .rz, .s or .obj file")
    if not Path(path).exists():
        raise S2mcError(f"{path}: no such file")
    return load_program(path)


def _print_table(res) -> None:
    cols = ("core", "instructions", "cycles", "stall_cycles", "bus_wait_cycles", "mem_reads", "mem_writes",
            "sync_wait_cycles")
    head = ["core", "instr", "cycles", "stalls", "bus wait", "reads", "writes", "sync wait"]
    widths = [max(len(h), 8) for h in head]
    click.echo("  ".join(h.rjust(w) for h, w in zip(head, widths)), err=True)
    for c in res.cores:
        click.echo("  ".join(str(c[k]).rjust(w) for k, w in zip(cols, widths)), err=True)
    click.echo(f"total: {res.cycles} cycles, {res.instructions} instructions, {res.stall_cycles} stall cycles, "
               f"bus utilisation {res.bus_utilisation:.1%}", err=True)


@click.command()
@click.argument("program", type=click.Path(dir_okay=False))
@machine_option("cores")
@machine_option("mem_latency")
@machine_option("arbitration")
@machine_option("engine")
@machine_option("max_cycles")
@machine_option("mem_words")
@click.option("-O", "opt", default=1, show_default=True, type=click.IntRange(0, 1), help="Rz optimisation level.")
@click.option("--trace", "trace_file", type=click.Path(dir_okay=False), help="Write a per-event log here.")
@click.option("--vcd", type=click.Path(dir_okay=False), help="Write a VCD waveform (systemc engine).")
@click.option("--json", "as_json", is_flag=True, help="Print the result object on stdout.")
def run(program, cores, mem_latency, arbitration, engine, max_cycles, mem_words, opt, trace_file, vcd, as_json):
    """Run a .rz, .s or .obj program on the simulated multicore."""
    prog = load_any(program, opt)
    options = {"vcd": vcd} if vcd else {}
    if vcd and engine != "systemc":
        raise S2mcError("--vcd needs --engine systemc")
    m = Machine(prog, cores=cores, mem_latency=mem_latency, arbitration=arbitration, max_cycles=max_cycles,
                mem_words=mem_words, engine=engine, trace=bool(trace_file), **options)
    try:
        res = m.run()
    except SimFault as fault:
        if trace_file:
            Path(trace_file).write_text(format_trace(fault.trace, prog))
        raise
    if trace_file:
        Path(trace_file).write_text(format_trace(res.trace, prog))
    if as_json:
        click.echo(json.dumps(res.to_json()))
        return
    click.echo(res.output, nl=False)
    if res.output and not res.output.endswith("\n"):
        click.echo()
    _print_table(res)


COMMANDS = [info, asm, disasm, run]
