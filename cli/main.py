"""The `s2mc` command.

Each command group lives in its own module `cmd_<name>.py` in this folder and exposes its click
commands as the list `COMMANDS`; `MODULES` below names every one of them (a new module is added
there). The commands are thin: they parse options, call the components' libraries and print.
"""
from __future__ import annotations

import re
import sys

import click

from s2mc.isa.errors import S2mcError

from . import (cmd_aes, cmd_cipher, cmd_compile, cmd_crypt, cmd_debug, cmd_demo, cmd_examples, cmd_fidelity, cmd_gpu,
               cmd_lab, cmd_native, cmd_report, cmd_sim, cmd_sweep)

#: Every command module, in the order of the data flow (`s2mc --help` sorts the commands by name).
MODULES = (cmd_examples, cmd_sim, cmd_debug, cmd_compile, cmd_aes, cmd_cipher, cmd_fidelity, cmd_native, cmd_crypt, cmd_gpu,
           cmd_report, cmd_sweep, cmd_demo, cmd_lab)


_NO_ARGS = getattr(click.exceptions, "NoArgsIsHelpError", ())


def _cut(word: re.Match) -> str:
    w = word[0]
    return f"{w[:60]}...({len(w)} characters)...{w[-20:]}"


def _line(text: str) -> str:
    """A message as one printable line: a newline or other control character that came in with a
    path or a value is escaped, never printed, and a word of hundreds of characters (a 5000-digit
    number or path the user typed) is cut to its ends."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return re.sub(r"\S{201,}", _cut, text)


def _usage_error(exc: click.UsageError) -> None:
    # One line, not click's three: which command, which option, what is wrong.
    name = exc.ctx.command_path if exc.ctx else "s2mc"
    click.echo(f"{_line(name)}: error: {_line(exc.format_message())}", err=True)
    sys.exit(2)


def _help(exc: click.UsageError) -> None:
    # A command group named alone asks what it can do: its help, as --help prints it.
    click.echo(exc.ctx.get_help())
    sys.exit(0)


class _Group(click.Group):
    """Turns every expected failure into one clear line on stderr and a non-zero exit."""

    def parse_args(self, ctx, args):
        try:
            return super().parse_args(ctx, args)
        except _NO_ARGS as exc:   # plain `s2mc`
            _help(exc)
        except click.UsageError as exc:   # s2mc's own options (s2mc --bogus)
            _usage_error(exc)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except _NO_ARGS as exc:   # a group without its subcommand (s2mc lab)
            _help(exc)
        except click.UsageError as exc:
            _usage_error(exc)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except S2mcError as exc:
            click.echo(f"s2mc: error: {_line(str(exc))}", err=True)
            sys.exit(1)
        except OSError as exc:
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            click.echo(f"s2mc: error: {_line(f'{where}{exc.strerror or exc}')}", err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            click.echo("s2mc: interrupted", err=True)
            sys.exit(130)


@click.group("s2mc", cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="s2mc", prog_name="s2mc")
def cli():
    """s2mc: a cycle-exact S2 multicore simulator, an Rz compiler, and AES on simulated and real hardware."""


for _module in MODULES:
    for _command in _module.COMMANDS:
        cli.add_command(_command)


def main() -> None:
    cli(prog_name="s2mc")


if __name__ == "__main__":
    main()
