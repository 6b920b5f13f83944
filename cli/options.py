"""The value types of the `s2mc` options: one click ParamType per kind of value, so that every
command checks a size, a count, a number of seconds, a list, a name or an output path the same way
while parsing, before any work, and rejects a bad value with one usage-error line (exit 2) that
names the option and states the allowed range:

    s2mc aes: error: Invalid value for '--bytes': '16G' is out of range (1..128M bytes: ...)

- `Size`: a byte count (4096, 16K, 64M, 1G, 4KB, 4KiB; powers of two) in a range, optionally a
  multiple of some bytes; `Integer`: a whole number in a range (optionally a multiple, or a name
  such as `all`); `Seconds`: a finite number in a range; `Choices`: names from a fixed set. Each
  takes `many=True` for a comma-separated list (no empty list, no empty item).
- `MachineParamType` / `machine_option`: the machine parameters, whose ranges come from their one
  declaration (simulator/params.toml).
- `OutputFile` / `OutputFolder`: paths checked by the rules of s2mc.common.outputs (the folder must
  exist; nothing is created while parsing).
- `Text`: a name or title (printable, bounded length); `AesKey`: a key as hex digits.

The checks themselves are the shared ones of s2mc.common.values, which the server's API, the spec
files and the lab's marking use too: one value gets the same words wherever it is typed.

Quoted values are cut and their control characters escaped (s2mc.common.errors.excerpt), so that a
message stays one line whatever was typed.
"""
from __future__ import annotations

import functools
import os
from typing import Callable

import click

from s2mc.common import outputs, values
from s2mc.common.errors import S2mcError, excerpt
from s2mc.common.outputs import STDOUT, check as check_output, check_folder
from s2mc.common.units import human_size, parse_size


def quote(text) -> str:
    """A value as a message quotes it: short, printable, one line."""
    return f"'{excerpt(str(text))}'"


def _bound(value) -> int | float:
    return value() if callable(value) else value


class _Value(click.ParamType):
    """One value, or with `many` a comma-separated list of them; subclasses convert one item."""

    many = False
    item_name = "VALUE"

    def get_metavar(self, param, ctx=None) -> str:
        return f"{self.item_name},..." if self.many else self.item_name

    def one(self, text: str, param, ctx):
        raise NotImplementedError

    def check(self, param, ctx, validate, *args, **kwargs):
        """validate(*args, **kwargs) (s2mc.common.values), a refusal as this option's usage error."""
        try:
            return validate(*args, **kwargs)
        except values.BadValue as exc:
            self.fail(str(exc), param, ctx)

    def convert(self, value, param, ctx):
        if not self.many:
            if isinstance(value, (list, tuple)):   # a list given from Python: its one item
                if len(value) != 1:
                    self.fail("one value expected", param, ctx)
                value = value[0]
            return self.one(str(value).strip(), param, ctx)
        if isinstance(value, (list, tuple)):
            items = [str(v).strip() for v in value]
        else:
            items = [s.strip() for s in str(value).split(",")]
        if not any(items):
            self.fail("empty list", param, ctx)
        if not all(items):
            self.fail(f"{quote(value)}: empty item in the list", param, ctx)
        return [self.one(item, param, ctx) for item in items]


class Size(_Value):
    """A byte count: digits with an optional K, M or G (powers of two) and B or iB, in lo..hi
    (`hi` may be a callable, such as the machine's memory) and a multiple of `multiple`."""

    name = "size"
    item_name = "SIZE"

    def __init__(self, lo: int = 1, hi: int | Callable[[], int] = 1 << 30, *, multiple: int = 1,
                 many: bool = False, why: str = "", words: tuple[str, ...] = ()):
        self.lo, self.hi, self.multiple, self.many, self.why = lo, hi, multiple, many, why
        self.words = words   # names accepted instead of a size (--segment auto), returned as they are

    def one(self, text, param, ctx) -> int | str:
        if text.lower() in self.words:
            return text.lower()
        try:
            n = parse_size(text)
        except ValueError:      # more than 4300 digits, which Python refuses to convert
            n = -1
        if n is None:
            words = f", or {', '.join(self.words)}" if self.words else ""
            self.fail(f"{quote(text)} is not a size (examples: 4096, 16K, 64M, 1G{words})", param, ctx)
        return self.check(param, ctx, values.integer, n, self.lo, _bound(self.hi), multiple=self.multiple,
                          shown=quote(text), fmt=human_size, unit="bytes", why=self.why)


class Integer(_Value):
    """A whole number in lo..hi (`hi` may be a callable) and a multiple of `multiple`; `names`
    maps words such as 'all' to a callable giving their value."""

    name = "integer"
    item_name = "INTEGER"

    def __init__(self, lo: int, hi: int | Callable[[], int], *, multiple: int = 1, many: bool = False,
                 names: dict[str, Callable[[], int]] | None = None, why: str = ""):
        self.lo, self.hi, self.multiple, self.many = lo, hi, multiple, many
        self.names, self.why = names or {}, why

    def one(self, text, param, ctx) -> int:
        if text.lower() in self.names:
            return self.names[text.lower()]()
        n = values.parse_integer(text)
        if n is None:
            words = f" (or {', '.join(self.names)})" if self.names else ""
            self.fail(f"{quote(text)} is not an integer{words}", param, ctx)
        return self.check(param, ctx, values.integer, n, self.lo, _bound(self.hi), multiple=self.multiple,
                          shown=quote(text), why=self.why)


class Seconds(_Value):
    """A finite number of seconds in lo..hi (nan, inf and 1e309 are refused)."""

    name = "seconds"
    item_name = "SECONDS"

    def __init__(self, lo: float, hi: float, *, why: str = ""):
        self.lo, self.hi, self.why = lo, hi, why

    def one(self, text, param, ctx) -> float:
        x = values.parse_number(text)
        if x is None:
            self.fail(f"{quote(text)} is not a number", param, ctx)
        return self.check(param, ctx, values.number, x, self.lo, self.hi, shown=quote(text),
                          fmt="{:g}".format, unit="s", why=self.why)


class Choices(_Value):
    """Names from a fixed set (a comma-separated list with `many`). `choices` may be a function
    that returns them, called on first use, so that a command whose names live in a heavy module
    does not import it whenever `s2mc` starts."""

    name = "choice"

    def __init__(self, choices, *, many: bool = True):
        self._choices, self.many = choices if callable(choices) else tuple(choices), many

    @property
    def choices(self) -> tuple[str, ...]:
        if callable(self._choices):
            self._choices = tuple(self._choices())
        return self._choices

    @property
    def item_name(self) -> str:
        return f"[{'|'.join(self.choices)}]"

    def one(self, text, param, ctx) -> str:
        if text not in self.choices:
            self.fail(f"unknown value {quote(text)} (choose {', '.join(self.choices)})", param, ctx)
        return text


class Text(click.ParamType):
    """A name or title: printable characters only (no newline or other control character, which
    would break records files and one-line messages), at most `max_len` of them."""

    name = "text"

    def __init__(self, max_len: int = 200, *, empty: bool = True, forbid: str = ""):
        self.max_len, self.empty, self.forbid = max_len, empty, forbid

    def convert(self, value, param, ctx) -> str:
        text = str(value)
        if not text and not self.empty:
            self.fail("empty value", param, ctx)
        if len(text) > self.max_len:
            self.fail(f"{quote(text)} is longer than {self.max_len} characters", param, ctx)
        bad = next((c for c in text if not c.isprintable() or c in self.forbid), None)
        if bad is not None:
            self.fail(f"{quote(text)} contains the character {bad!r}", param, ctx)
        return text


class Names(_Value):
    """Names checked later, by the library that knows them (GPU kernels): a comma-separated list of
    printable words."""

    name = "names"
    item_name = "NAME"

    def __init__(self, *, many: bool = True, max_len: int = 100):
        self.many, self._text = many, Text(max_len, empty=False)

    def one(self, text, param, ctx) -> str:
        return self._text.convert(text, param, ctx)


class _OutputPath(click.ParamType):
    """A path the command writes, checked while parsing by `_check` (s2mc.common.outputs)."""

    def _check(self, text: str) -> None:
        raise NotImplementedError

    def convert(self, value, param, ctx) -> str:
        text = os.fspath(value) if isinstance(value, os.PathLike) else str(value)
        if "\0" in text:
            self.fail(f"{quote(text)} contains a NUL byte", param, ctx)
        try:
            self._check(text)
        except S2mcError as exc:
            self.fail(excerpt(str(exc), 300), param, ctx)
        return text


class OutputFile(_OutputPath):
    """A file the command writes, checked by the rules of s2mc.common.outputs while parsing: its
    folder exists, it is not a folder; a device or FIFO is written through; `-` is stdout where
    `stdout` allows it."""

    name = "file"

    def __init__(self, what: str = "output", *, stdout: bool = True):
        self.what, self.stdout = what, stdout

    def _check(self, text: str) -> None:
        if text == STDOUT and not self.stdout:
            raise S2mcError(f"the {self.what} cannot go to stdout ('-'), which the command prints on; name a file")
        if check_output(text, self.what) == "replace" and self.what == "records":
            from s2mc.analysis.records import manifest_path_for   # written with them: checked with them
            check_output(manifest_path_for(text), "manifest")


class OutputFolder(_OutputPath):
    """A folder the command writes into: an existing folder, or a new one whose parent exists (it
    is created when the command writes, never its parents)."""

    name = "folder"

    def __init__(self, what: str = "output folder"):
        self.what = what

    def _check(self, text: str) -> None:
        check_folder(text, self.what)


class AesKey(click.ParamType):
    """An AES key as 32, 48 or 64 hex digits (s2mc.workloads.cipher_host.parse_key_hex) -> bytes."""

    name = "hex"

    def convert(self, value, param, ctx) -> bytes:
        if isinstance(value, bytes):
            return value
        from s2mc.workloads.cipher_host import parse_key_hex
        try:
            return parse_key_hex(str(value), "key")
        except S2mcError as exc:
            self.fail(excerpt(str(exc).removeprefix("key: "), 200), param, ctx)


class MachineParamType(_Value):
    """A machine parameter (simulator/params.toml) on the command line: one value, or with
    `many` a comma-separated list; a bad value is a usage error that states the allowed range."""

    def __init__(self, param, many: bool = False, extra: tuple[str, ...] = ()):
        """extra: choices the command accepts beyond the declared ones (run's --engine reference)."""
        import dataclasses
        self.param, self.many = param, many
        self.accepts = dataclasses.replace(param, choices=param.choices + extra) if extra else param
        self.name = param.type if not many else f"{param.type} list"
        self.item_name = f"[{self.accepts.allowed.replace(', ', '|')}]" if param.type == "choice" else "INTEGER"

    def one(self, text, param, ctx):
        item = text
        if self.param.type == "int":
            item = values.parse_integer(text)
            if item is None:
                self.fail(f"{quote(text)} is not an integer", param, ctx)
            if abs(item) >= 10 ** values.MAX_DIGITS:     # say what was typed, not the stand-in
                self.fail(f"{quote(text)} is out of range ({self.param.allowed})", param, ctx)
        why = self.accepts.problem(item)
        if why:
            self.fail(excerpt(why, 200), param, ctx)
        return item


def machine_option(name: str, *, many: bool = False, default=None, dest: str | None = None, help: str = "",
                   extra: tuple[str, ...] = ()):
    """The click option --<name> of a machine parameter: type, default, range and help from
    its declaration (s2mc.simulator.params). `many` takes a comma-separated list; `default` and
    `help` override the declared ones (help is appended); `extra` adds choices this command takes."""
    from s2mc.simulator.params import PARAMS
    p = PARAMS[name]
    if default is None:
        default = str(p.default)
    text = p.help + (f" Range {p.allowed}." if p.type == "int" else "")
    if many:
        text += " Comma-separated list allowed."
    decls = [f"--{p.flag}"] + ([dest] if dest else [])
    return click.option(*decls, type=MachineParamType(p, many, extra), default=default, show_default=True,
                        help=f"{text} {help}".strip())


def network_options(f):
    """--interconnect, --coherence, --link-latency, --router-latency and --flit-words (docs/timing-model.md,
    "Directory coherence over a network"), passed on as keyword arguments of those names."""
    from s2mc.simulator import NETWORK_PARAMS
    for name in reversed(NETWORK_PARAMS):
        f = machine_option(name)(f)
    return f


def cache_options(f):
    """--cache, --cache-lines, --cache-ways, --line-words and --cache-hit-latency (the caches of
    docs/timing-model.md), passed on to the command as keyword arguments of those names."""
    from s2mc.simulator import CACHE_PARAMS
    for name in reversed(CACHE_PARAMS):
        f = machine_option(name)(f)
    return f


class TimelineFile(OutputFile):
    """--timeline FILE: an output file whose name ends in .html, .json, .png or .svg."""

    def __init__(self):
        super().__init__("timeline", stdout=False)

    def _check(self, text: str) -> None:
        from s2mc.simulator.timeline import timeline_format
        super()._check(text)
        timeline_format(text)


def timeline_options(what: str):
    """--timeline FILE, --from-cycle N and --to-cycle N (s2mc run, s2mc aes); `what` says how the
    file of each run is named when there are several. check_timeline_window checks them together."""
    from s2mc.simulator.params import PARAMS
    top = PARAMS["max_cycles"].max

    def add(f):
        f = click.option("--to-cycle", type=Integer(1, top), default=None,
                         help="The timeline ends before this cycle (default: at the end of the run).")(f)
        f = click.option("--from-cycle", type=Integer(0, top - 1), default=0, show_default=True,
                         help="The timeline's first cycle.")(f)
        return click.option("--timeline", type=TimelineFile(),
                            help="Write a timeline of the cores' states and the bus, cycle by cycle: .html "
                                 "(a page to zoom and hover), .json (Perfetto, chrome://tracing), .png or "
                                 f".svg ({what}; docs/timeline.md).")(f)
    return add


def check_timeline_window(timeline: str | None, from_cycle: int, to_cycle: int | None) -> None:
    if timeline is None and (from_cycle or to_cycle is not None):
        raise click.UsageError("--from-cycle and --to-cycle choose the cycles of a --timeline; give --timeline FILE")
    from s2mc.simulator.timeline import check_window
    try:
        check_window(from_cycle, to_cycle, ("--from-cycle", "--to-cycle"))
    except S2mcError as exc:
        raise click.UsageError(str(exc)) from None


def _set_force(ctx, param, value):
    outputs.set_force(value)
    return value


def _files(command: click.Command, params: dict) -> tuple[list, list]:
    """The (label, path) pairs of the files a command call writes and reads, from its parameters:
    OutputFile values (and the manifest beside records) are outputs, click.Path values inputs."""
    outs, ins = [], []
    for p in command.params:
        value = params.get(p.name)
        if value is None or value == ():
            continue
        label = p.opts[-1] if p.opts and p.opts[-1].startswith("-") else p.name.upper()
        values = value if isinstance(value, (list, tuple)) else [value]
        if isinstance(p.type, OutputFile):
            for v in values:
                outs.append((label, v))
                if p.type.what == "records" and v != STDOUT:
                    from s2mc.analysis.records import manifest_path_for
                    outs.append((f"{label}'s manifest", os.fspath(manifest_path_for(v))))
        elif isinstance(p.type, click.Path):
            ins += [(label, v) for v in values if isinstance(v, (str, os.PathLike))]
    return outs, ins


def guard_files(command: click.Command) -> click.Command:
    """Give a command that writes files the rules every such command follows: `--force` (replace a
    read-only output), before its body runs the refusal of an output that is the same file as one
    of its inputs or another of its outputs (s2mc.common.outputs.check_distinct)."""
    if getattr(command, "_s2mc_guarded", False) or not any(
            isinstance(p.type, OutputFile) for p in command.params):
        return command
    command.params.insert(0, click.Option(
        ["--force"], is_flag=True, is_eager=True, expose_value=False, callback=_set_force,
        help="Replace outputs that exist and are read-only (refused otherwise, as openssl does)."))
    body = command.callback

    @functools.wraps(body)
    def guarded(*args, **kwargs):
        ctx = click.get_current_context()
        outs, ins = _files(command, ctx.params)
        try:
            outputs.check_distinct(outs, ins)
        except S2mcError as exc:
            raise click.UsageError(str(exc), ctx) from None
        return body(*args, **kwargs)

    command.callback = guarded
    command._s2mc_guarded = True
    return command
