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
