"""Values that come from outside, checked one way wherever they come from: a command-line option
(cli/options.py), a field of the server's JSON API (server/), a key of a spec file
(experiments/specs.py), a number in a student's notebook (experiments/lab.py), a machine parameter
(simulator/params.py). One function per kind of value returns the value as the program uses it, or
raises BadValue saying why it is refused. The message names the value, not where it came from:
each caller adds that (the option, `from_cycle`, `[[grid]] 1: sizes`), so that one value gets the
same words everywhere.

    integer(5, 1, 64)                 # 5
    integer(True, 1, 64)              # BadValue: True is not an integer
    number(float("nan"), 0, 10)       # BadValue: nan is not a finite number (0..10)
    plain(np.int64(-5))               # '-5'

The rules: a boolean is never a number (in Python True == 1), null (None) is never a value, a float
is never an integer, and NaN, the infinities and integers past a float's range are never numbers.
"""
from __future__ import annotations

import math
import numbers
import operator
import re
from typing import Callable

from .errors import S2mcError, excerpt

#: Text with more digits than this is beyond every range here (and Python refuses to convert
#: integers of more than 4300 digits to or from text).
MAX_DIGITS = 40

_INT = re.compile(r"[+-]?[0-9]+")


class BadValue(S2mcError):
    """Why a value is refused, without where it came from: the caller adds that."""


def plain(value) -> str:
    """A value as a message writes it: a number plainly (numpy's np.int64(-5) as -5, an integer of
    thousands of digits by its size), text quoted and cut, anything else as Python writes it."""
    if getattr(value, "shape", None) == () and callable(getattr(value, "item", None)):
        value = value.item()            # a numpy scalar as the Python number it holds
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value) if abs(value) < 10 ** MAX_DIGITS else \
            f"{'-' if value < 0 else ''}an integer of {value.bit_length()} bits"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return f"'{excerpt(value)}'"
    return excerpt(repr(value))


def span(lo=None, hi=None, *, fmt: Callable = str, unit: str = "", why: str = "") -> str:
    """The allowed range as messages write it: '(1..64)', '(0.1..3600 s: why)', '(at least 1)'."""
    if lo is not None and hi is not None:
        text = f"{fmt(lo)}..{fmt(hi)}"
    elif lo is not None:
        text = f"at least {fmt(lo)}"
    elif hi is not None:
        text = f"at most {fmt(hi)}"
    else:
        text = "any"
    return f"({text}{' ' + unit if unit else ''}{': ' + why if why else ''})"


def _in_range(x, lo, hi, shown: str, **how) -> None:
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise BadValue(f"{shown} is out of range {span(lo, hi, **how)}")


def integer(value, lo: int | None = None, hi: int | None = None, *, multiple: int = 1,
            shown: str | None = None, **how) -> int:
    """A whole number in lo..hi (either end may be open) and a multiple of `multiple`: an int or a
    numpy integer, never a bool, a float, text or null. `shown` is how messages write the value
    (default plain(value)); `how` (fmt, unit, why) words the range."""
    shown = plain(value) if shown is None else shown
    try:
        n = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        n = None
    if n is None:
        raise BadValue(f"{shown} is not an integer")
    _in_range(n, lo, hi, shown, **how)
    if n % multiple:
        raise BadValue(f"{shown} is not a multiple of {multiple}{' ' + how['unit'] if how.get('unit') else ''}")
    return n


def number(value, lo: float | None = None, hi: float | None = None, *, shown: str | None = None,
           **how) -> float:
    """A finite real number in lo..hi as a float: an int or float (numpy's too), never a bool,
    text, null, NaN, an infinity or an integer too large for a float."""
    shown = plain(value) if shown is None else shown
    if value is None or isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise BadValue(f"{shown} is not a number")
    try:
        x = float(value)
    except OverflowError:
        x = math.inf
    if not math.isfinite(x):
        bounds = f" {span(lo, hi, **how)}" if lo is not None or hi is not None else ""
        raise BadValue(f"{shown} is not a finite number{bounds}")
    _in_range(x, lo, hi, shown, **how)
    return x + 0.0       # -0.0 is 0


def choice(value, choices, *, shown: str | None = None):
    """One of `choices`: equal to one and of its type (1.0 is not the choice 1, a bool never a
    number; a list or an object is simply not one of them)."""
    if isinstance(value, bool) or not any(isinstance(value, type(c)) and value == c for c in choices):
        shown = plain(value) if shown is None else shown
        raise BadValue(f"unknown value {shown} (choose {', '.join(map(str, choices))})")
    return value


def parse_integer(text: str) -> int | None:
    """Decimal digits (optionally signed) as an int; None when `text` is not one. Numbers of more
    than MAX_DIGITS digits come back as +-10**MAX_DIGITS, beyond every range (pass the text as
    `shown` so that a message quotes what was typed)."""
    text = text.strip()
    if not _INT.fullmatch(text):
        return None
    sign = -1 if text[0] == "-" else 1
    digits = text.lstrip("+-").lstrip("0") or "0"
    return sign * (int(digits) if len(digits) <= MAX_DIGITS else 10 ** MAX_DIGITS)


def parse_number(text: str) -> float | None:
    """A decimal number as text ('1.5', '2e3', 'nan', 'inf') as a float, None when it is not one;
    number() then refuses what is not finite."""
    try:
        return float(text)
    except (ValueError, OverflowError):
        return None


def named(what: str, check: Callable, *args, **kwargs):
    """check(*args, **kwargs), with a refusal raised as S2mcError '<what>: <why>'."""
    try:
        return check(*args, **kwargs)
    except BadValue as exc:
        raise S2mcError(f"{what}: {exc}") from None
