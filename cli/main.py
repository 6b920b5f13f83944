"""The `s2mc` command.

Each command group lives in its own module `cmd_<name>.py` in this folder and exposes its click
commands as the list `COMMANDS`; `COMMANDS` below names every command and its module (a new one is
added there). The commands are thin: they parse options, call the components' libraries and print.
"""
from __future__ import annotations

import sys

from s2mc.cli import early

early.start()   # before the imports below: the GPU's context starts meanwhile (cli/early.py)

import errno  # noqa: E402
import importlib  # noqa: E402
import io  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import warnings  # noqa: E402

import click  # noqa: E402

from s2mc.common.errors import S2mcError

#: Every command and the module (cli/cmd_<module>.py) that defines it, in the order of the data flow
#: (`s2mc --help` sorts them by name). A module is imported only when one of its commands runs, or
#: when --help lists them all, so `s2mc encrypt` does not pay at start-up for the compiler, the
#: simulator and pandas (about 0.15 s, a quarter of encrypting 1 GB).
COMMANDS = {"examples": "examples", "info": "sim", "asm": "sim", "disasm": "sim", "run": "sim", "debug": "debug",
            "compile": "compile", "aes": "cipher", "cipher": "cipher", "fidelity": "fidelity", "litmus": "litmus",
            "native": "native", "coherence-native": "native", "litmus-native": "native",
            "encrypt": "crypt", "decrypt": "crypt", "gpu": "gpu", "report": "report", "sweep": "sweep",
            "demo": "demo", "lab": "lab", "serve": "serve"}
#: The command modules' names, each once.
MODULES = tuple(dict.fromkeys(f"cmd_{m}" for m in COMMANDS.values()))


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
    """Loads each command's module when the command is first wanted; turns every expected failure
    into one clear line on stderr and a non-zero exit."""

    def list_commands(self, ctx):
        return sorted(set(COMMANDS) | set(self.commands))

    def get_command(self, ctx, name):
        if name not in self.commands and name in COMMANDS:
            from .options import guard_files
            for command in importlib.import_module(f"{__package__}.cmd_{COMMANDS[name]}").COMMANDS:
                self.add_command(guard_files(command))
        return self.commands.get(name)

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


def all_commands() -> dict[str, click.Command]:
    """Every command, by name, with all their modules loaded (for tests and tools that walk them)."""
    for name in COMMANDS:
        cli.get_command(None, name)
    return cli.commands


class _Stdout(io.RawIOBase):
    """File descriptor 1 under sys.stdout, whose write errors name stdout (`s2mc: error: stdout: No
    space left on device`). When fd 1 was closed at start (`>&-`) it holds /dev/null, so that no
    file the command opens can become fd 1 and receive what is printed, and every write fails as
    it would have on the closed descriptor."""

    def __init__(self, closed: bool):
        super().__init__()
        self._closed_at_start, self._drop = closed, False

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        if self._closed_at_start:
            raise OSError(errno.EBADF, "closed (Bad file descriptor)", "stdout")
        return 1

    def isatty(self) -> bool:
        return not self._closed_at_start and os.isatty(1)

    def write(self, data) -> int:
        if self._drop:   # after a failure was reported: the exit flush must not report it again
            return len(data)
        if self._closed_at_start:
            raise OSError(errno.EBADF, "closed (Bad file descriptor)", "stdout")
        try:
            return os.write(1, data)
        except OSError as exc:
            raise OSError(exc.errno, exc.strerror, "stdout") from None


def _closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def _guard_stdio() -> _Stdout:
    """Give fds 0-2 a file when the shell closed them (a file the command opens must never become
    its stdout), and put sys.stdout on a `_Stdout`."""
    closed = {fd: _closed(fd) for fd in (0, 1, 2)}
    for fd, was_closed in closed.items():
        if was_closed:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    raw = _Stdout(closed[1])
    old = sys.stdout
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(raw), encoding=getattr(old, "encoding", None) or "utf-8",
                                  errors=getattr(old, "errors", None) or "strict",
                                  line_buffering=raw.isatty())
    return raw


def _stdout_error(exc: OSError) -> None:
    where = exc.filename or "stdout"
    click.echo(f"s2mc: error: {_line(f'{where}: {exc.strerror or exc}')}", err=True)


def main() -> None:
    """The `s2mc` command: every failure, writing stdout included (closed, a full device, also
    for --help and --version), is one line on stderr and a non-zero exit, and nothing else is
    printed on stderr but what s2mc says (no Python warnings)."""
    from .timings import main_entered
    main_entered()
    raw = _guard_stdio()
    if not sys.warnoptions:   # the libraries' warnings (numpy, matplotlib) are not ours to print;
        warnings.simplefilter("ignore")   # -W or PYTHONWARNINGS still shows them
    code: int | str | None = 0
    try:
        cli(prog_name="s2mc")
    except SystemExit as exc:
        code = exc.code
    except OSError as exc:   # printing --help or --version, before any command runs
        _stdout_error(exc)
        code = 1
    try:
        sys.stdout.flush()
    except OSError as exc:
        if not code:   # a failed command has said why already
            _stdout_error(exc)
            code = 1
    if code:
        raw._drop = True   # what could not be written is dropped, not reported twice at exit
    sys.exit(code)


if __name__ == "__main__":
    main()
