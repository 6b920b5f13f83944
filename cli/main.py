"""The `s2mc` command.

Each command group lives in its own module `cmd_<name>.py` in this folder and exposes a click
command (or list of commands) named `COMMANDS`; they are found here so components can add commands
without editing a shared file.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys

import click

from s2mc.isa.errors import S2mcError

from . import __path__ as _cli_path


class _Group(click.Group):
    """Turns every expected failure into one clear line on stderr and a non-zero exit."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            # One line, not click's three: which command, which option, what is wrong.
            name = exc.ctx.command_path if exc.ctx else "s2mc"
            click.echo(f"{name}: error: {exc.format_message()}", err=True)
            sys.exit(2)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except S2mcError as exc:
            click.echo(f"s2mc: error: {exc}", err=True)
            sys.exit(1)
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            click.echo(f"s2mc: error: {where}{exc.strerror or exc}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("s2mc: interrupted", err=True)
            sys.exit(130)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="s2mc", prog_name="s2mc")
def cli():
    """s2mc: a cycle-exact S2 multicore simulator, an Rz compiler, and AES on simulated and real hardware."""


def _register() -> None:
    for mod in sorted(m.name for m in pkgutil.iter_modules(_cli_path) if m.name.startswith("cmd_")):
        commands = importlib.import_module(f"{__package__}.{mod}").COMMANDS
        for command in commands if isinstance(commands, (list, tuple)) else [commands]:
            cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="s2mc")


if __name__ == "__main__":
    main()
