"""The counters of a simulated run, read from simulator/counters.toml, their one declaration: name,
scope (per core or the whole machine), source (counted by the engines or derived here), group
(every run, or only runs with caches), unit and help.

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
GROUPS = ("base", "cache")


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


def engine_counters(cached: bool) -> tuple[str, ...]:
    """The per-core counters an engine reports (the keys of its per-core dicts), in order."""
    return tuple(c.name for c in COUNTERS.values()
                 if c.scope == "core" and c.source == "engine" and (cached or c.group == "base"))


def core_counters(cached: bool) -> tuple[str, ...]:
    """The per-core counters of a Result (engine-counted and derived), in order."""
    return tuple(c.name for c in COUNTERS.values() if c.scope == "core" and (cached or c.group == "base"))


def doc_table() -> str:
    """The Markdown table of the counters in docs/timing-model.md (a test keeps it current)."""
    lines = ["| counter | unit | when | meaning |", "|---|---|---|---|"]
    for c in COUNTERS.values():
        when = "caches on" if c.group == "cache" else "always"
        how = " (derived)" if c.source == "derived" else ""
        lines.append(f"| `{c.name}` | {c.unit} | {when}{how} | {c.help} |")
    return "\n".join(lines) + "\n"
