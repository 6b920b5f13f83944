"""Parsing of the list- and size-valued options shared by the grid commands (aes, native, gpu).

Every failure is an S2mcError naming the option, so the CLI prints one clear line.
"""
from __future__ import annotations

import re

from s2mc.isa.errors import S2mcError

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


def human_size(n: int) -> str:
    """16384 -> '16K', 1048576 -> '1M'; sizes that are not whole units stay in bytes."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)
