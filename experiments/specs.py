"""Experiment spec files: each standard experiment is a TOML file in experiments/studies/.

A spec names an experiment and the grids that produce it, in the libraries' own terms: every
[[grid]] table is one grid (`kind` = "aes", "native", "gpu" or "program") whose other keys are the
fields of s2mc.workloads.cipher_sim.grid.AesGrid, s2mc.workloads.native.grid.NativeGrid,
s2mc.gpu.grid.GpuGrid or s2mc.workloads.program_grid.ProgramGrid, with the same names and defaults. [[quick]] tables, when present, are the smaller grids `s2mc demo`
runs. The registry (s2mc.experiments.registry) is read from the files shipped in the package, and
`s2mc sweep SPEC` runs any file (docs/sweeps.md).

    name = "seed003_grid"               # the records' `experiment` (default: the file's name)
    title = "Seed 003 Tables 3-4"
    reference = ["seed003_table3"]      # seed tables it is compared with
    demo = 1                            # its place in `s2mc demo` (leave out: not in the demo)

    [[grid]]
    kind = "aes"
    cores = [1, 2, 3, 4]
    sizes = [32, "4K"]                  # sizes may be written 16K, 1M, 1G

A bad file is one S2mcError naming the file, the table and the key.
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
import types
import typing
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from s2mc.gpu import CIPHERS, MEASURES, OPS
from s2mc.gpu.grid import GpuGrid
from s2mc.common import values
from s2mc.common.errors import S2mcError
from s2mc.common.units import parse_size
from s2mc.simulator.params import PARAMS
from s2mc.workloads.cipher_sim.grid import AesGrid
from s2mc.workloads.cipher_sim.runner import (ALL_STYLES, CIPHERS as SIM_CIPHERS, DIRECTIONS, KEY_BITS, MODES, PARTITIONS,
                                     words_needed)
from s2mc.workloads.native import IMPLS, MAX_MIN_SECONDS, STRATEGIES
from s2mc.workloads.native.grid import NativeGrid
from s2mc.workloads.program_grid import ProgramGrid

#: As a NativeGrid's threads (`threads = "all"` in a spec): the host's thread counts 1, 2, 4, ...,
#: resolved when the experiment runs (s2mc.experiments.registry.thread_counts).
ALL_THREADS: tuple[int, ...] = ()

#: Grid kinds: the library's grid class and the records' source of its runs.
KINDS = {"aes": (AesGrid, "sim"), "native": (NativeGrid, "native"), "gpu": (GpuGrid, "cuda"),
         "program": (ProgramGrid, "sim")}

TOP_KEYS = ("name", "title", "description", "reference", "demo", "grid", "quick")

#: Fields that hold byte counts, so that a spec may write them as "16K", "1M".
SIZE_FIELDS = {"sizes", "block_bytes", "chunk_bytes", "ext_bytes"}

_NAME = re.compile(r"[a-z][a-z0-9_]*")


@dataclass(frozen=True)
class Spec:
    path: str
    name: str
    title: str
    source: str                     # sim | native | cuda, from the grids' kind
    grids: tuple                    # AesGrid | NativeGrid | GpuGrid
    quick: tuple = ()
    reference: tuple[str, ...] = ()
    description: str = ""
    demo: int | None = None
    notes: tuple[str, ...] = ()     # what the spec asked for that this machine cannot run (cores_when_allowed)


def spec_dir() -> Path:
    """The folder of the shipped spec files (inside the installed package)."""
    return Path(str(files("s2mc.experiments") / "studies"))


def shipped() -> list[Path]:
    return sorted(spec_dir().glob("*.toml"))


# --------------------------------------------------------------------------------------------------
# checks of single values: each returns why a value is not allowed, or None
# --------------------------------------------------------------------------------------------------

#: Every integer of a spec fits the records' 64-bit columns; the library's own ranges are tighter.
INT_MAX = (1 << 63) - 1


def _choose(allowed):
    return lambda v: _why(values.choice, v, allowed)


def _at_least(lo):
    return lambda v: _why(values.integer, v, lo)


def _seconds(v):
    return _why(values.number, v, 0.0, MAX_MIN_SECONDS, unit="s")


def _why(check, *args, **kwargs) -> str | None:
    try:
        check(*args, **kwargs)
    except values.BadValue as exc:
        return str(exc)
    return None


def _param(name):
    return PARAMS[name].problem


#: A [[grid]] key: core counts the grid runs once the machine allows them (simulator/params.toml's
#: `cores` max); until then they are left out, and `s2mc sweep` says so in one line each.
WHEN_ALLOWED = "cores_when_allowed"

_CHECKS = {
    "aes": {"cores": _param("cores"), WHEN_ALLOWED: _at_least(1), "mem_latencies": _param("mem_latency"),
            "arbitrations": _param("arbitration"), "engines": _param("engine"),
            "mem_words": _param("mem_words"), "key_bits": _choose(KEY_BITS), "modes": _choose(MODES),
            "directions": _choose(DIRECTIONS), "styles": _choose(ALL_STYLES),
            "partitions": _choose(PARTITIONS), "opts": _choose((1, 0)), "sizes": _at_least(1),
            "ext_blocks": _at_least(1), "ciphers": _choose(tuple(SIM_CIPHERS)), "caches": _param("cache"),
            "cache_lines": _param("cache_lines"), "cache_ways": _param("cache_ways"),
            "line_words": _param("line_words"), "cache_hit_latency": _param("cache_hit_latency"),
            "interconnects": _param("interconnect"), "link_latency": _param("link_latency"),
            "router_latency": _param("router_latency"), "flit_words": _param("flit_words")},
    "program": {"cores": _param("cores"), WHEN_ALLOWED: _at_least(1), "caches": _param("cache"),
                "mem_latencies": _param("mem_latency"),
                "arbitration": _param("arbitration"), "cache_lines": _param("cache_lines"),
                "cache_ways": _param("cache_ways"), "line_words": _param("line_words"),
                "cache_hit_latency": _param("cache_hit_latency"), "engine": _param("engine"),
                "max_cycles": _param("max_cycles"), "opt": _choose((1, 0)),
                "interconnects": _param("interconnect"), "link_latency": _param("link_latency"),
                "router_latency": _param("router_latency"), "flit_words": _param("flit_words")},
    "native": {"threads": _at_least(1), "sizes": _at_least(1), "impls": _choose(("auto",) + IMPLS),
               "strategies": _choose(STRATEGIES), "block_bytes": _at_least(16),
               "key_bits": _choose(KEY_BITS), "min_seconds": _seconds, "min_reps": _at_least(1)},
    "gpu": {"sizes": _at_least(1), "measures": _choose(MEASURES), "key_bits": _choose(KEY_BITS),
            "op": _choose(OPS), "streams": _at_least(1), "reps": _at_least(1),
            "chunk_bytes": _at_least(0), "ext_bytes": _at_least(16), "threads": _at_least(1),
            "cipher": _choose(CIPHERS)},
}


class _Bad(Exception):
    """A problem with one key; load() adds the file and the table."""


def _scalar(kind_of, field: str, v):
    try:
        if kind_of is int:
            if isinstance(v, str) and field in SIZE_FIELDS:
                try:
                    n = parse_size(v)
                except ValueError:      # thousands of digits, which int() refuses
                    n = None
                if n is None:
                    raise _Bad(f"{v!r} is not a size (examples: 4096, 16K, 64M, 1G)")
                v = n
            return values.integer(v, -INT_MAX - 1, INT_MAX, why="a 64-bit integer")
        if kind_of is float:
            return values.number(v)
    except values.BadValue as exc:
        raise _Bad(str(exc)) from None
    if kind_of is bool and not isinstance(v, bool):
        raise _Bad(f"{v!r} is not true or false")
    if kind_of is str and not isinstance(v, str):
        raise _Bad(f"{v!r} is not a string")
    return v


def _value(kind: str, field: str, hint, v):
    """A spec value as the grid field `hint` holds it (a list for a tuple field; one value is a list
    of one), checked against what the library accepts."""
    if kind == "native" and field == "threads" and v == "all":
        return ALL_THREADS
    if isinstance(hint, types.UnionType):            # AesGrid.key: hex digits
        if not isinstance(v, str):
            raise _Bad(f"{v!r} is not a string of hex digits")
        try:
            key = bytes.fromhex(v)
        except ValueError:
            raise _Bad(f"{v!r} is not hex") from None
        if len(key) not in (16, 24, 32):
            raise _Bad(f"{len(v)} hex digits; AES keys are 32, 48 or 64")
        return key
    many = typing.get_origin(hint) is tuple
    items = (v if isinstance(v, list) else [v]) if many else [v]
    if not items:
        raise _Bad("empty list")
    out = [_scalar(typing.get_args(hint)[0] if many else hint, field, x) for x in items]
    check = _CHECKS[kind].get(field)
    for x in out:
        why = check(x) if check else None
        if why:
            raise _Bad(why)
    return tuple(out) if many else out[0]


def _grid(table, kind_hint: str | None):
    """A [[grid]] table as the library's grid; `kind_hint` is the kind of the spec's other grids."""
    if not isinstance(table, dict):
        raise _Bad("is not a table")
    if "kind" not in table:
        raise _Bad(f"kind: missing (one of {', '.join(KINDS)})")
    kind = table["kind"]
    if kind not in KINDS:
        raise _Bad(f"kind: unknown value {kind!r} (choose {', '.join(KINDS)})")
    if kind_hint and kind != kind_hint:
        raise _Bad(f"kind: {kind!r}, but the spec's other grids are {kind_hint!r} (one experiment, "
                   "one kind: write another spec)")
    cls = KINDS[kind][0]
    hints = typing.get_type_hints(cls)
    fields = {}
    for key, v in table.items():
        if key in ("kind", WHEN_ALLOWED):
            continue
        if key not in hints:
            raise _Bad(f"{key}: unknown key for kind {kind!r} (keys: {', '.join(hints)})")
        try:
            fields[key] = _value(kind, key, hints[key], v)
        except _Bad as exc:
            raise _Bad(f"{key}: {exc}") from None
    skipped = ()
    if WHEN_ALLOWED in table:
        if "cores" not in hints:
            raise _Bad(f"{WHEN_ALLOWED}: kind {kind!r} has no cores")
        more = _value(kind, WHEN_ALLOWED, tuple[int, ...], table[WHEN_ALLOWED])
        top = PARAMS["cores"].max
        cores = fields.get("cores", cls.__dataclass_fields__["cores"].default)
        fields["cores"] = tuple(dict.fromkeys([*cores, *(n for n in more if n <= top)]))
        skipped = tuple(n for n in more if n > top)
    grid = cls(**fields)
    if kind == "aes":
        _check_aes(grid)
    elif kind == "program":
        try:
            grid.check()       # the programs load, the cache shape can be built
        except S2mcError as exc:
            raise _Bad(str(exc)) from None
    return kind, grid, skipped


def _check_aes(grid: AesGrid) -> None:
    """What AesGrid.check() checks before a run, worded for spec keys. The SystemC engine's presence
    is left to the machine that runs each configuration (a Dask worker may have it, or not)."""
    if "ecb" in grid.modes:
        bad = [n for n in grid.sizes if n % 16]
        if bad:
            raise _Bad(f"sizes: {bad[0]} is not a multiple of 16 (ECB needs whole blocks; "
                       "modes = [\"ctr\"] takes any length)")
    for style in grid.styles:
        for opt in grid.opts:
            need = words_needed(max(grid.sizes), style, opt)
            if need > grid.mem_words:
                raise _Bad(f"sizes: {max(grid.sizes)} bytes need {need} words of simulated memory in "
                           f"the {style} program but mem_words is {grid.mem_words}")
    try:
        dataclasses.replace(grid, engines=("fast",)).check()   # anything the library adds later
    except S2mcError as exc:
        raise _Bad(str(exc)) from None


def _strings(v, what: str) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise _Bad(f"{what}: expected a list of strings")
    return tuple(v)


def load(path: str | Path) -> Spec:
    """Read and check one spec file; S2mcError naming the file, table and key when it is bad."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise S2mcError(f"{p}: no such spec file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise S2mcError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise S2mcError(f"{p}: not valid TOML: {exc}") from None
    where = ""
    try:
        for key in doc:
            if key not in TOP_KEYS:
                raise _Bad(f"{key}: unknown key (keys: {', '.join(TOP_KEYS)})")
        name = doc.get("name", p.stem)
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _Bad(f"name: {name!r} must be lower-case letters, digits and _ (it names the "
                       "records' experiment)")
        title = doc.get("title", name)
        description = doc.get("description", "")
        for key, v in (("title", title), ("description", description)):
            if not isinstance(v, str):
                raise _Bad(f"{key}: {v!r} is not a string")
        reference = _strings(doc.get("reference", []), "reference")
        for ref in reference:
            from s2mc.analysis.seeds import citation
            try:
                citation(ref)
            except S2mcError:
                raise _Bad(f"reference: unknown seed table {ref!r}") from None
        demo = doc.get("demo")
        if demo is not None and (isinstance(demo, bool) or not isinstance(demo, int) or demo < 1):
            raise _Bad(f"demo: {demo!r} must be a positive integer (the place in `s2mc demo`)")
        built = {}
        notes: list[str] = []
        kind = None
        for table in ("grid", "quick"):
            entries = doc.get(table, [])
            if not isinstance(entries, list):
                raise _Bad(f"{table}: write it as [[{table}]] tables")
            grids = []
            for i, entry in enumerate(entries, 1):
                where = f"[[{table}]] {i}: "
                kind, grid, skipped = _grid(entry, kind)
                grids.append(grid)
                if skipped:
                    notes.append(f"{p.name}: [[{table}]] {i}: {', '.join(map(str, skipped))} cores not run: "
                                 f"simulator/params.toml allows at most {PARAMS['cores'].max} cores")
            where = ""
            built[table] = tuple(grids)
        if not built["grid"]:
            raise _Bad("grid: no [[grid]] table (an experiment needs at least one grid)")
    except _Bad as exc:
        raise S2mcError(f"{p}: {where}{exc}") from None
    return Spec(str(p), name, title, KINDS[kind][1], built["grid"], built["quick"], reference,
                description, demo, tuple(notes))


def load_shipped() -> list[Spec]:
    """Every shipped spec, by file name; names and demo places must be unique."""
    specs = [load(p) for p in shipped()]
    for attr in ("name", "demo"):
        seen: dict = {}
        for s in specs:
            v = getattr(s, attr)
            if v is not None and v in seen:
                raise S2mcError(f"{s.path}: {attr}: {v!r} is also the {attr} of {seen[v]}")
            seen[v] = s.path
    return specs
