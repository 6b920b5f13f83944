"""The machine parameters (cores, mem_latency, arbitration, max_cycles, mem_words, engine, the
caches: cache, cache_lines, cache_ways, line_words, cache_hit_latency, the store buffers and the
network: interconnect, coherence, link_latency, router_latency, flit_words), read from
simulator/params.toml, their one declaration: name, type, default, range or choices, unit, help.

    from s2mc.simulator.params import PARAMS, check
    PARAMS["cores"].max            # 256
    check(cores=257)               # S2mcError: cores 257 is out of range (1..256)

`Config` (s2mc.simulator), the CLI options (cli/options.py), the AES configuration, the reference
model and the C++ header of the engines (simulator/gen_params.py) are all derived from it.
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass
from importlib.resources import files

from s2mc.common import values
from s2mc.common.errors import S2mcError

TYPES = ("int", "choice")


@dataclass(frozen=True)
class Param:
    name: str                 # Python name; the CLI option is --<flag>
    type: str                 # "int" or "choice"
    default: int | str
    unit: str
    help: str
    min: int | None = None    # int: the inclusive range
    max: int | None = None
    choices: tuple[str, ...] = ()
    power_of_two: bool = False  # int: also a power of two

    @property
    def flag(self) -> str:
        return self.name.replace("_", "-")

    @property
    def allowed(self) -> str:
        """The allowed values as error messages write them: '1..256' or 'fifo, fixed, round_robin'."""
        return f"{self.min}..{self.max}" if self.type == "int" else ", ".join(self.choices)

    def problem(self, value) -> str | None:
        """Why `value` is not allowed (a message without the parameter's name), or None: the same
        answer whatever the other parameters are (the cache shape's relations are cache_problem's)."""
        try:
            if self.type == "choice":
                values.choice(value, self.choices)
                return None
            number = values.integer(value, self.min, self.max)   # numpy integers too, not floats
        except values.BadValue as exc:
            return str(exc)
        if self.power_of_two and number & (number - 1):
            return f"{number} is not a power of two"
        return None

    def check(self, value) -> None:
        """Raise S2mcError naming the parameter, its value and what is allowed."""
        why = self.problem(value)
        if why is None:
            return
        if self.type == "choice":
            raise S2mcError(f"unknown {self.name.replace('_', ' ')} {values.plain(value)} (choose {self.allowed})")
        raise S2mcError(f"{self.flag} {why}")


def _load() -> dict[str, Param]:
    data = tomllib.loads(files(__package__).joinpath("params.toml").read_text(encoding="utf-8"))
    out = {}
    for row in data["param"]:
        p = Param(**{**row, "choices": tuple(row.get("choices", ()))})
        # the invariants everything derived from the declaration relies on
        ok = p.type in TYPES and (
            (p.type == "int" and isinstance(p.min, int) and isinstance(p.max, int) and not p.choices
             and 0 <= p.min <= p.default <= p.max < 1 << 63 and p.problem(p.default) is None)
            or (p.type == "choice" and p.min is None and p.max is None and p.default in p.choices
                and not p.power_of_two))
        if not ok or p.name in out:
            raise ValueError(f"simulator/params.toml: inconsistent parameter {p}")
        out[p.name] = p
    return out


#: Every machine parameter, in declaration order (the order of Config's fields).
PARAMS: dict[str, Param] = _load()
#: The default value of every parameter.
DEFAULTS: dict[str, int | str] = {p.name: p.default for p in PARAMS.values()}


def cache_problem(cache_lines: int, cache_ways: int, line_words: int, mem_words: int) -> str | None:
    """Why a cache shape cannot be built, or None: each size must be allowed on its own (a power of
    two, Param.problem), ways <= lines and a line no larger than memory. The relations are only
    checked when caches are on: with `cache none` the sizes are unused."""
    for name, value in (("cache_lines", cache_lines), ("cache_ways", cache_ways), ("line_words", line_words)):
        why = PARAMS[name].problem(value)
        if why:
            return f"{PARAMS[name].flag} {why}"
    if cache_ways > cache_lines:
        return f"cache-ways {cache_ways} is more than cache-lines {cache_lines}"
    if line_words > mem_words:
        return f"line-words {line_words} is more than mem-words {mem_words}"
    return None


#: The protocols a directory implements (docs/timing-model.md, "Directory coherence over a network").
DIRECTORY_PROTOCOLS = ("msi", "mesi")


def coherence_for(interconnect: str) -> str:
    """The one coherence scheme an interconnect goes with (network_problem): the bus snoops, a ring or
    a mesh keeps a directory. A sweep's `interconnects` axis names only the interconnect."""
    return "snoop" if interconnect == "bus" else "directory"


def network_problem(interconnect: str, coherence: str, cache: str) -> str | None:
    """Why an interconnect and a coherence scheme cannot go together, or None: snooping needs the
    bus's broadcast, a ring or a mesh needs a directory, and a directory keeps msi or mesi caches."""
    if coherence == "snoop" and interconnect != "bus":
        return (f"interconnect {interconnect} needs coherence directory (snooping needs the bus, where every "
                "cache sees every transaction)")
    if coherence == "directory" and interconnect == "bus":
        return "coherence directory needs interconnect ring or mesh (the bus snoops)"
    if coherence == "directory" and cache not in DIRECTORY_PROTOCOLS:
        return (f"coherence directory needs cache {' or '.join(DIRECTORY_PROTOCOLS)} "
                f"(not {cache}): the directory keeps private caches coherent")
    return None


def check(**given) -> None:
    """Check the given parameters (by name) against the declaration, in declaration order, then
    the cache shape when caches are on (cache_problem) and the interconnect's relation to the
    coherence scheme (network_problem)."""
    unknown = set(given) - set(PARAMS)
    if unknown:
        raise S2mcError(f"unknown machine parameter {sorted(unknown)[0]!r} (known: {', '.join(PARAMS)})")
    for name, p in PARAMS.items():
        if name in given:
            p.check(given[name])
    if given.get("cache", DEFAULTS["cache"]) != "none":
        shape = {k: given.get(k, DEFAULTS[k]) for k in ("cache_lines", "cache_ways", "line_words", "mem_words")}
        problem = cache_problem(**shape)
        if problem:
            raise S2mcError(problem)
    problem = network_problem(*(given.get(k, DEFAULTS[k]) for k in ("interconnect", "coherence", "cache")))
    if problem:
        raise S2mcError(problem)


def doc_table() -> str:
    """The Markdown table of the parameters in docs/timing-model.md (a test keeps it current)."""
    lines = ["| parameter | option | default | allowed | unit | meaning |", "|---|---|---|---|---|---|"]
    for p in PARAMS.values():
        allowed = f"{p.min}..{p.max}" if p.type == "int" else ", ".join(f"`{c}`" for c in p.choices)
        allowed += ", a power of two" if p.power_of_two else ""
        default = p.default if p.type == "int" else f"`{p.default}`"
        lines.append(f"| `{p.name}` | `--{p.flag}` | {default} | {allowed} | {p.unit or '-'} | {p.help} |")
    return "\n".join(lines) + "\n"
