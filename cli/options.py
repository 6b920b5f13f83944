"""Parsing of the list- and size-valued options shared by the grid commands (aes, native, gpu), and
the click options of the machine parameters (declared once in simulator/params.toml).

Every failure is an S2mcError naming the option, or for a machine parameter a click usage error
that states the allowed range, so the CLI prints one clear line.
"""
from __future__ import annotations

import re

import click

from s2mc.isa.errors import S2mcError
from s2mc.isa.units import human_size  # noqa: F401 - the grid commands print sizes

_SIZE = re.compile(r"^\s*(\d+)\s*([kmg]?)(i?b)?\s*$", re.IGNORECASE)
_MULT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def split_list(text, what: str) -> list[str]:
    """'1,2, 4' -> ['1', '2', '4']; an empty list is an error."""
    items = [s.strip() for s in str(text).split(",") if s.strip()]
    if not items:
        raise S2mcError(f"{what}: empty list")
    return items


def parse_size(text: str, what: str) -> int:
    """'4096', '16K', '64M', '1G', '4KB', '4KiB' -> bytes (powers of two)."""
    m = _SIZE.match(text)
    if not m:
        raise S2mcError(f"{what}: {text!r} is not a size (examples: 4096, 16K, 64M, 1G)")
    return int(m.group(1)) * _MULT[m.group(2).lower()]


def size_list(text, what: str, minimum: int = 0) -> list[int]:
    sizes = []
    for item in split_list(text, what):
        n = parse_size(item, what)
        if n < minimum:
            raise S2mcError(f"{what}: {item!r} must be at least {minimum} byte{'s' if minimum != 1 else ''}")
        sizes.append(n)
    return sizes


def int_list(text, what: str, lo: int, hi: int) -> list[int]:
    out = []
    for item in split_list(text, what):
        try:
            v = int(item, 0)
        except ValueError:
            raise S2mcError(f"{what}: {item!r} is not an integer") from None
        if not lo <= v <= hi:
            raise S2mcError(f"{what}: {v} is out of range ({lo}..{hi})")
        out.append(v)
    return out


def choice_list(text, what: str, allowed) -> list[str]:
    out = split_list(text, what)
    for item in out:
        if item not in allowed:
            raise S2mcError(f"{what}: unknown value {item!r} (choose from {', '.join(allowed)})")
    return out


class MachineParamType(click.ParamType):
    """A machine parameter (simulator/params.toml) on the command line: one value, or with
    `many` a comma-separated list; a bad value is a usage error that states the allowed range."""

    def __init__(self, param, many: bool = False):
        self.param, self.many = param, many
        self.name = param.type if not many else f"{param.type} list"

    def get_metavar(self, param, ctx=None) -> str:
        p = self.param
        one = f"[{p.allowed.replace(', ', '|')}]" if p.type == "choice" else "INTEGER"
        return f"{one},..." if self.many else one

    def convert(self, value, param, ctx):
        if isinstance(value, (list, tuple)):
            items = list(value)     # already a list (a value given from Python)
        elif isinstance(value, str):
            items = [s.strip() for s in value.split(",")] if self.many else [value.strip()]
            items = [s for s in items if s]
        else:
            items = [value]
        if not items:
            self.fail("empty list" if self.many else "empty value", param, ctx)
        out = []
        for item in items:
            if self.param.type == "int" and isinstance(item, str):
                try:
                    item = int(item, 10)
                except ValueError:
                    self.fail(f"{item!r} is not an integer", param, ctx)
            why = self.param.problem(item)
            if why:
                self.fail(why, param, ctx)
            out.append(item)
        return out if self.many else out[0]


def machine_option(name: str, *, many: bool = False, default=None, dest: str | None = None, help: str = ""):
    """The click option --<name> of a machine parameter: type, default, range and help from
    its declaration (s2mc.simulator.params). `many` takes a comma-separated list; `default` and
    `help` override the declared ones (help is appended)."""
    from s2mc.simulator.params import PARAMS
    p = PARAMS[name]
    if default is None:
        default = str(p.default)
    text = p.help + (f" Range {p.allowed}." if p.type == "int" else "")
    if many:
        text += " Comma-separated list allowed."
    decls = [f"--{p.flag}"] + ([dest] if dest else [])
    return click.option(*decls, type=MachineParamType(p, many), default=default, show_default=True,
                        help=f"{text} {help}".strip())
