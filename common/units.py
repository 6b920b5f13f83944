"""Byte counts as people write them (16K, 1M), for every component's tables and progress lines.

It lives in the lowest layer, like errors.py, so that the workloads, the GPU backend, the analysis
and the CLI format sizes the same way without importing one another.
"""


def human_size(n: int) -> str:
    """16384 -> '16K', 1048576 -> '1M'; sizes that are not whole units stay in bytes."""
    for unit, size in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


_MULTIPLES = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int | None:
    """'4096', '16K', '64M', '1G' (powers of two; a trailing B or iB allowed) -> bytes, the inverse
    of human_size; None when `text` is not a size, so that each caller words its own error."""
    t = str(text).strip().upper()
    t = t[:-2] if t.endswith("IB") else t[:-1] if t.endswith("B") else t
    unit = t[-1:] if t[-1:] in ("K", "M", "G") else ""
    digits = t[:len(t) - len(unit)].strip()
    return int(digits) * _MULTIPLES[unit] if digits.isascii() and digits.isdigit() else None
