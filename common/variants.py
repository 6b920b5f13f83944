"""How a records `variant` names a cache configuration (docs/records.md): the simulator writes the
part, the analysis reads it back, and neither imports the other, so it lives at the bottom.

    cache_part("mesi", 64, 2, 4, 1)      # 'mesi-64x2-w4'
    parse_cache_part("dragon-1x1-w2-h3") # {'cache': 'dragon', 'cache_lines': 1, ..., 'cache_hit_latency': 3}
    network_part("mesh", "directory", 1, 1, 4)     # 'mesh-directory-lk1-r1-f4'
    parse_network_part("ring-directory-lk2-r1-f4") # {'interconnect': 'ring', ..., 'flit_words': 4}
"""
from __future__ import annotations

import re

#: The machine parameters (simulator/params.toml) that a simulated run's records do not name in its
#: `variant`, and why. Every other parameter that differs from its default is a part of the variant
#: (s2mc.simulator.records.variant_parts: `L4`, `round_robin`, `mesi-64x2-w4`), so every reader of records
#: that keys on the whole variant keeps runs that differ in it apart; tests/test_report_takeaways.py
#: varies each parameter of the table and checks that the report's tables do.
NOT_IN_VARIANT: dict[str, str] = {
    "cores": "a column of its own (`cores`)",
    "engine": "a column of its own (`engine`); the engines are cycle-exact to each other",
    "max_cycles": "a limit on the run, not a property of the machine",
    "mem_words": "the memory's size, which no timing depends on",
}

#: protocol-<lines>x<ways>-w<line words>, then -h<hit latency> when it is not 1 (the default).
CACHE_PART = re.compile(r"(?P<cache>[a-z]+)-(?P<cache_lines>\d+)x(?P<cache_ways>\d+)-w(?P<line_words>\d+)"
                        r"(?:-h(?P<cache_hit_latency>\d+))?")
DEFAULT_HIT_LATENCY = 1


def cache_part(cache: str, cache_lines: int, cache_ways: int, line_words: int, cache_hit_latency: int) -> str:
    """The variant part naming a cache configuration (CACHE_PART); empty for `none`."""
    if cache == "none":
        return ""
    h = f"-h{cache_hit_latency}" if cache_hit_latency != DEFAULT_HIT_LATENCY else ""
    return f"{cache}-{cache_lines}x{cache_ways}-w{line_words}{h}"


def parse_cache_part(part: str) -> dict | None:
    """The cache parameters a variant part names ({'cache': 'mesi', 'cache_lines': 64, ...}), or None."""
    m = CACHE_PART.fullmatch(part)
    if m is None:
        return None
    got = {k: (v if k == "cache" else int(v)) for k, v in m.groupdict().items() if v is not None}
    got.setdefault("cache_hit_latency", DEFAULT_HIT_LATENCY)
    return got


#: <interconnect>-<coherence>-lk<link latency>-r<router latency>-f<flit words>: a ring or a mesh (the
#: bus, the default, names no part).
NETWORK_PART = re.compile(r"(?P<interconnect>[a-z]+)-(?P<coherence>[a-z]+)-lk(?P<link_latency>\d+)"
                          r"-r(?P<router_latency>\d+)-f(?P<flit_words>\d+)")


def network_part(interconnect: str, coherence: str, link_latency: int, router_latency: int, flit_words: int) -> str:
    """The variant part naming a network (NETWORK_PART); empty for the bus."""
    if interconnect == "bus":
        return ""
    return f"{interconnect}-{coherence}-lk{link_latency}-r{router_latency}-f{flit_words}"


def parse_network_part(part: str) -> dict | None:
    """The network parameters a variant part names ({'interconnect': 'mesh', 'coherence': 'directory',
    'link_latency': 1, ...}), or None."""
    m = NETWORK_PART.fullmatch(part)
    if m is None:
        return None
    return {k: (v if k in ("interconnect", "coherence") else int(v)) for k, v in m.groupdict().items()}
