"""The machine parameters (cores, mem_latency, arbitration, max_cycles, mem_words, engine and the
caches: cache, cache_lines, cache_ways, line_words, cache_hit_latency), read from
simulator/params.toml, their one declaration: name, type, default, range or choices, unit, help.

    from s2mc.simulator.params import PARAMS, check
    PARAMS["cores"].max            # 64
    check(cores=65)                # S2mcError: cores 65 is out of range (1..64)

`Config` (s2mc.simulator), the CLI options (cli/options.py), the AES configuration, the reference
model and the C++ header of the engines (simulator/gen_params.py) are all derived from it.
"""
from __future__ import annotations

import operator
import tomllib
from dataclasses import dataclass
from importlib.resources import files

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

    @property
    def flag(self) -> str:
        return self.name.replace("_", "-")

    @property
    def allowed(self) -> str:
        """The allowed values as error messages write them: '1..64' or 'fifo, fixed, round_robin'."""
        return f"{self.min}..{self.max}" if self.type == "int" else ", ".join(self.choices)

    def problem(self, value) -> str | None:
        """Why `value` is not allowed (a message without the parameter's name), or None."""
        if self.type == "choice":
            return None if value in self.choices else f"unknown value {value!r} (choose {self.allowed})"
        try:
            number = operator.index(value)   # numpy integers too, but not floats
        except TypeError:
            number = None
        if number is None or isinstance(value, bool):
            return f"{value!r} is not an integer"
        if not self.min <= number <= self.max:
            return f"{number} is out of range ({self.allowed})"
        return None

    def check(self, value) -> None:
        """Raise S2mcError naming the parameter, its value and what is allowed."""
        why = self.problem(value)
        if why is None:
            return
        if self.type == "choice":
            raise S2mcError(f"unknown {self.name.replace('_', ' ')} {value!r} (choose {self.allowed})")
        raise S2mcError(f"{self.flag} {why}")


def _load() -> dict[str, Param]:
    data = tomllib.loads(files(__package__).joinpath("params.toml").read_text(encoding="utf-8"))
    out = {}
    for row in data["param"]:
        p = Param(**{**row, "choices": tuple(row.get("choices", ()))})
        # the invariants everything derived from the declaration relies on
        ok = p.type in TYPES and (
            (p.type == "int" and isinstance(p.min, int) and isinstance(p.max, int) and not p.choices
             and 0 <= p.min <= p.default <= p.max < 1 << 63)
            or (p.type == "choice" and p.min is None and p.max is None and p.default in p.choices))
        if not ok or p.name in out:
            raise ValueError(f"simulator/params.toml: inconsistent parameter {p}")
        out[p.name] = p
    return out


#: Every machine parameter, in declaration order (the order of Config's fields).
PARAMS: dict[str, Param] = _load()
#: The default value of every parameter.
DEFAULTS: dict[str, int | str] = {p.name: p.default for p in PARAMS.values()}


def cache_problem(cache_lines: int, cache_ways: int, line_words: int, mem_words: int) -> str | None:
    """Why a cache shape cannot be built (each size a power of two, ways <= lines, a line no larger
    than memory), or None. Only checked when caches are on: with `cache none` the sizes are unused."""
    for name, value in (("cache-lines", cache_lines), ("cache-ways", cache_ways), ("line-words", line_words)):
        if value & (value - 1):
            return f"{name} {value} is not a power of two"
    if cache_ways > cache_lines:
        return f"cache-ways {cache_ways} is more than cache-lines {cache_lines}"
    if line_words > mem_words:
        return f"line-words {line_words} is more than mem-words {mem_words}"
    return None


def check(**values) -> None:
    """Check the given parameters (by name) against the declaration, in declaration order, then
    the cache shape when caches are on (cache_problem)."""
    unknown = set(values) - set(PARAMS)
    if unknown:
        raise S2mcError(f"unknown machine parameter {sorted(unknown)[0]!r} (known: {', '.join(PARAMS)})")
    for name, p in PARAMS.items():
        if name in values:
            p.check(values[name])
    if values.get("cache", DEFAULTS["cache"]) != "none":
        shape = {k: values.get(k, DEFAULTS[k]) for k in ("cache_lines", "cache_ways", "line_words", "mem_words")}
        problem = cache_problem(**shape)
        if problem:
            raise S2mcError(problem)


def doc_table() -> str:
    """The Markdown table of the parameters in docs/timing-model.md (a test keeps it current)."""
    lines = ["| parameter | option | default | allowed | unit | meaning |", "|---|---|---|---|---|---|"]
    for p in PARAMS.values():
        allowed = f"{p.min}..{p.max}" if p.type == "int" else ", ".join(f"`{c}`" for c in p.choices)
        default = p.default if p.type == "int" else f"`{p.default}`"
        lines.append(f"| `{p.name}` | `--{p.flag}` | {default} | {allowed} | {p.unit or '-'} | {p.help} |")
    return "\n".join(lines) + "\n"
