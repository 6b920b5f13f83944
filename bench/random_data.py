"""What several benches need first: a file of random bytes (imported by the bench scripts, which
run with bench/ on sys.path; not a bench itself, so `make bench` does not run it)."""
from __future__ import annotations

import os


def write_random_file(path: str, nbytes: int, block: int = 16 << 20) -> str:
    """Fill `path` with nbytes of os.urandom, a block at a time (never all in memory); returns path."""
    with open(path, "wb") as f:
        left = nbytes
        while left:
            n = min(left, block)
            f.write(os.urandom(n))
            left -= n
    return path
