"""`s2mc examples`: the example programs shipped with s2mc, listed, shown and copied
(s2mc.workloads.examples). `s2mc run`, `compile` and `asm` also find them by name from any folder."""
from __future__ import annotations

import click

from .options import OutputFolder


@click.group("examples", invoke_without_command=True)
@click.pass_context
def examples_cmd(ctx):
    """List the bundled example programs (.s and .rz) with one line each.

    Any command that takes a program finds them by name from any folder (`s2mc run fib.rz`);
    `s2mc examples copy` puts copies here to read and edit."""
    if ctx.invoked_subcommand is not None:
        return
    from s2mc.workloads import examples
    every = examples.all_examples()
    width = max(len(e.name) for e in every)
    language = None
    for e in every:
        if e.language != language:
            language = e.language
            click.echo(f"{'' if e is every[0] else chr(10)}{language} (workloads/{e.folder}/):")
        click.echo(f"  {e.name:<{width}}  {e.description}")
    click.echo("\nRun one from anywhere: s2mc run fib.rz --cores 4.  "
               "Copy them here to edit: s2mc examples copy [NAME...] [--to DIR].")


@examples_cmd.command("copy")
@click.argument("names", nargs=-1)
@click.option("--to", "dest", default=".", show_default=True, type=OutputFolder("examples folder"),
              help="Folder to copy into (created if missing; its parent must exist).")
@click.option("--force", is_flag=True, help="Replace files that already exist there.")
def copy_cmd(names, dest, force):
    """Copy examples (every one when no NAME is given) into a folder."""
    from s2mc.workloads import examples
    for path in examples.copy(list(names), dest, force=force):
        click.echo(f"wrote {path}", err=True)


@examples_cmd.command("show")
@click.argument("name")
def show_cmd(name):
    """Print an example's source."""
    from s2mc.workloads import examples
    click.echo(examples.find(name).path.read_text(encoding="utf-8"), nl=False)


COMMANDS = [examples_cmd]
