"""The memory map of a compiled Rz program (docs/rz.md, "Memory map").

    0 .. 255                  reserved (address 0 is the null pointer; nothing lives here)
    DATA_BASE ..              globals, in declaration order (scalars 1 word, arrays N words)
    stack_base ..             per-core stack regions, STACK_WORDS each, for MAX_CORES cores:
                                region + 0 .. ARGSTACK_WORDS-1 : the sp argument stack (grows up)
                                region + ARGSTACK_WORDS ..      : fp frames (grow up)
    heap = stack_base + MAX_CORES * STACK_WORDS   exported as the data symbol __heap: the first
                              free word; hosts put large inputs here without recompiling.

Core c finds its region with `cid`: region = stack_base + c * STACK_WORDS.
The interpreter uses the same map so that addresses (&g, pointers) print identically.
"""
from __future__ import annotations

from dataclasses import dataclass

DATA_BASE = 256
STACK_WORDS = 4096
ARGSTACK_WORDS = 256
MAX_CORES = 256     # simulator/params.toml's most cores (tests/test_sim_params.py checks they agree)
STACK_ALIGN = 256


@dataclass
class MemoryMap:
    addresses: dict[str, int]     # global name -> address
    data_end: int                 # first word after the globals
    stack_base: int
    heap: int
    stack_words: int = STACK_WORDS
    argstack_words: int = ARGSTACK_WORDS
    max_cores: int = MAX_CORES


def layout(globals_) -> MemoryMap:
    """Addresses for a list of astnodes.Global (sizes already resolved)."""
    addr, addresses = DATA_BASE, {}
    for g in globals_:
        addresses[g.name] = addr
        addr += 1 if g.size is None else g.size
    stack_base = -(-addr // STACK_ALIGN) * STACK_ALIGN
    return MemoryMap(addresses, addr, stack_base, stack_base + MAX_CORES * STACK_WORDS)
