"""`s2mc compile PROG.rz [-o PROG.s] [-O0|-O1]` (docs/architecture.md, docs/rz.md)."""
from __future__ import annotations

from pathlib import Path

import click

from s2mc.isa import read_text
from s2mc.common.errors import S2mcError
from s2mc.common.outputs import write_output

from .options import OutputFile


@click.command("compile")
@click.argument("source", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=OutputFile("assembly"),
              help="Assembly file to write (default: SOURCE with .s; '-' for stdout).")
@click.option("-O0", "opt", flag_value=0, help="Straightforward code, like the original compiler.")
@click.option("-O1", "opt", flag_value=1, default=True,
              help="Register allocation, constant folding, redundant load/store/move removal "
                   "(default).")
@click.option("-g", "debug", is_flag=True,
              help="Also write the line table and the variables' places (directives the assembler and "
                   "`s2mc debug` read); the instructions are the same.")
def compile_cmd(source, output, opt, debug):
    """Compile an Rz program (or a bundled example by name) to S2 assembly."""
    from s2mc.compiler import compile as compile_rz
    from s2mc.workloads.examples import bundled

    if not source.endswith(".rz"):
        raise S2mcError(f"{source}: expected an Rz source file ending in .rz")
    example = bundled(source)
    text = read_text(example.path if example else source)   # not UTF-8: one line naming the line
    result = compile_rz(text, opt=opt, filename=source, debug=debug)
    # a bundled example's assembly goes into this folder, never into the package
    out = output or str(Path(example.name if example else source).with_suffix(".s"))
    write_output(out, result.asm, what="assembly")
    if out != "-":
        click.echo(f"wrote {out}", err=True)


COMMANDS = [compile_cmd]
