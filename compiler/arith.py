"""32-bit two's-complement arithmetic exactly as S2 computes it (docs/isa.md).

Shared by the reference interpreter and the constant folder so that both agree with the machine.
"""
from __future__ import annotations


def wrap(v: int) -> int:
    """v reduced to a signed 32-bit value."""
    return ((v + (1 << 31)) & 0xFFFFFFFF) - (1 << 31)


def _div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _mod(a: int, b: int) -> int:
    return a - b * _div(a, b)


BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": _div,
    "%": _mod,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
    "<<": lambda a, b: a << (b & 31),
    ">>": lambda a, b: a >> (b & 31),
    "==": lambda a, b: int(a == b),
    "!=": lambda a, b: int(a != b),
    "<": lambda a, b: int(a < b),
    "<=": lambda a, b: int(a <= b),
    ">": lambda a, b: int(a > b),
    ">=": lambda a, b: int(a >= b),
}

UNARY = {
    "-": lambda a: -a,
    "!": lambda a: int(a == 0),
    "~": lambda a: ~a,
}


def binary(op: str, a: int, b: int) -> int:
    """a op b on signed 32-bit values; raises ZeroDivisionError for / and % by zero."""
    if op in ("/", "%") and b == 0:
        raise ZeroDivisionError(op)
    return wrap(BINARY[op](a, b))


def unary(op: str, a: int) -> int:
    return wrap(UNARY[op](a))
