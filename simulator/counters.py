"""The counters of a simulated run, read from simulator/counters.toml, their one declaration: name,
scope (per core or the whole machine), source (counted by the engines or derived here), group
(every run, only runs with caches, only runs with store buffers, or only directory runs over a
network), unit and help.

    from s2mc.simulator.counters import COUNTERS, engine_counters
    COUNTERS["bus_rdx"].group        # 'cache'
    engine_counters(cached=False)    # the keys every engine's per-core dict has without caches

The C++ struct of the engines and its serialisers come from the same file (simulator/gen_counters.py),
so the engines, the reference model, the records and the docs cannot disagree on a name.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files

SCOPES = ("core", "machine")
SOURCES = ("engine", "derived")
GROUPS = ("base", "cache", "buffer", "network")


@dataclass(frozen=True)
class Counter:
    name: str
    scope: str
    source: str
    group: str
    unit: str
    help: str


def _load() -> dict[str, Counter]:
    data = tomllib.loads(files(__package__).joinpath("counters.toml").read_text(encoding="utf-8"))
    out: dict[str, Counter] = {}
    for row in data["counter"]:
        c = Counter(**row)
        if c.scope not in SCOPES or c.source not in SOURCES or c.group not in GROUPS or not c.help \
                or not c.name.isidentifier() or c.name in out:
            raise ValueError(f"simulator/counters.toml: inconsistent counter {c}")
        out[c.name] = c
    return out


#: Every counter, in declaration order (the order `s2mc run` prints and the records store them).
COUNTERS: dict[str, Counter] = _load()


def _in_run(c: Counter, cached: bool, buffered: bool, networked: bool) -> bool:
    """Whether a run with (cached, buffered, networked) reports counter c: the base group always, the
    cache group with caches on the bus, the buffer group with store buffers (consistency tso or pso),
    the network group with directory coherence over a ring or a mesh (its caches count there)."""
    return c.scope == "core" and (c.group == "base" or (c.group == "cache" and cached and not networked)
                                  or (c.group == "buffer" and buffered)
                                  or (c.group == "network" and networked))


def engine_counters(cached: bool, buffered: bool = False, networked: bool = False) -> tuple[str, ...]:
    """The per-core counters an engine reports (the keys of its per-core dicts), in order."""
    return tuple(c.name for c in COUNTERS.values()
                 if c.source == "engine" and _in_run(c, cached, buffered, networked))


def core_counters(cached: bool, buffered: bool = False, networked: bool = False) -> tuple[str, ...]:
    """The per-core counters of a Result (engine-counted and derived), in order."""
    return tuple(c.name for c in COUNTERS.values() if _in_run(c, cached, buffered, networked))


def doc_table() -> str:
    """The Markdown table of the counters in docs/timing-model.md (a test keeps it current)."""
    lines = ["| counter | unit | when | meaning |", "|---|---|---|---|"]
    for c in COUNTERS.values():
        when = {"base": "always", "cache": "caches on", "buffer": "tso, pso", "network": "directory"}[c.group]
        how = " (derived)" if c.source == "derived" else ""
        lines.append(f"| `{c.name}` | {c.unit} | {when}{how} | {c.help} |")
    return "\n".join(lines) + "\n"
