"""The cipher grid on the simulated multicore (AES by default, Camellia with ciphers=("camellia",)):
every combination of the swept parameters, each run checked against `cryptography`, returned as
runs and records rows (docs/records.md).

    from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid, format_tables
    grid = AesGrid(cores=(1, 2, 4), sizes=(64, 256), styles=("bytes", "ttable"))
    runs, rows = run_grid(grid, new_run_id=lambda: "aes-1")
    print(format_tables(runs))

`s2mc aes` and `s2mc demo` (through s2mc.experiments.registry) run this. The rows are plain dicts
with the records' columns (data flows one way: this module does not import s2mc.analysis); the
caller validates them with `records.make_records(rows)`. Every run gets its own run id.
"""
from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from itertools import groupby
from typing import Callable

from s2mc.common.errors import S2mcError
from s2mc.common.text import text_table
from s2mc.common.units import human_size
from s2mc.simulator.params import DEFAULTS, PARAMS, coherence_for, network_problem

from .runner import (CIPHERS, DEFAULT_EXT_BLOCKS, AesConfig, AesRun, cipher_of, max_bytes, record_rows, run_aes,
                     words_needed)


@dataclass(frozen=True)
class AesGrid:
    """One grid of AES runs: the cross product of every tuple field (ext_blocks only for the
    extended partition). The data, counter and keys are drawn from `seed`; `key` fixes the key
    (its length then sets the key size). The defaults are those of `s2mc aes`. Each cipher of
    `ciphers` runs those of `styles` that are its own (aes: bytes, ttable; camellia: sp)."""
    cores: tuple[int, ...] = (1, 2, 4)
    sizes: tuple[int, ...] = (32, 64, 128, 256)
    key_bits: tuple[int, ...] = (128,)
    modes: tuple[str, ...] = ("ecb",)
    directions: tuple[str, ...] = ("enc",)
    styles: tuple[str, ...] = ("bytes",)
    partitions: tuple[str, ...] = ("interleaved",)
    ext_blocks: tuple[int, ...] = (DEFAULT_EXT_BLOCKS,)
    mem_latencies: tuple[int, ...] = (DEFAULTS["mem_latency"],)
    arbitrations: tuple[str, ...] = (DEFAULTS["arbitration"],)
    engines: tuple[str, ...] = (DEFAULTS["engine"],)
    opts: tuple[int, ...] = (1,)
    key_expansions: tuple[str, ...] = ("core0",)
    calibrations: tuple[str | None, ...] = (None,)
    mem_words: int = DEFAULTS["mem_words"]
    caches: tuple[str, ...] = (DEFAULTS["cache"],)     # none and/or protocols, all of one shape:
    cache_lines: int = DEFAULTS["cache_lines"]
    cache_ways: int = DEFAULTS["cache_ways"]
    line_words: int = DEFAULTS["line_words"]
    cache_hit_latency: int = DEFAULTS["cache_hit_latency"]
    interconnects: tuple[str, ...] = (DEFAULTS["interconnect"],)   # a ring or a mesh keeps a directory,
    link_latency: int = DEFAULTS["link_latency"]                  # so it runs with the msi and mesi
    router_latency: int = DEFAULTS["router_latency"]              # caches of `caches` only, all of
    flit_words: int = DEFAULTS["flit_words"]                      # one network shape
    key: bytes | None = None
    seed: int = 2014
    ciphers: tuple[str, ...] = ("aes",)

    @property
    def key_sizes(self) -> tuple[int, ...]:
        return (len(self.key) * 8,) if self.key is not None else self.key_bits

    def configs(self) -> list[dict]:
        """AesConfig fields (all but cores) of every configuration, in run order."""
        out = []
        for ciph, bits, mode, d, style, part, lat, arb, net, cache, eng, opt, kx, cal in itertools.product(
                self.ciphers, self.key_sizes, self.modes, self.directions, self.styles, self.partitions,
                self.mem_latencies, self.arbitrations, self.interconnects, self.caches, self.engines, self.opts,
                self.key_expansions, self.calibrations):
            if ciph in CIPHERS and style not in CIPHERS[ciph].styles:
                continue
            if network_problem(net, coherence_for(net), cache):     # e.g. a mesh with no caches: not run
                continue
            # the program variant (and the cipher) only when it is not the default, so that every
            # other configuration keeps the identity it had before variants existed (s2mc sweep's parts)
            variant = {**({"key_expansion": kx} if kx != "core0" else {}),
                       **({"calibration": cal} if cal is not None else {}),
                       **({"cipher": ciph} if ciph != "aes" else {}),
                       **(self.cache_shape(cache) if cache != "none" else {}),
                       **(self.network_shape(net) if net != "bus" else {})}
            for e in (self.ext_blocks if part == "extended" else (DEFAULT_EXT_BLOCKS,)):
                out.append(dict(key_bits=bits, mode=mode, direction=d, style=style, partition=part,
                                ext_blocks=e, mem_latency=lat, arbitration=arb, engine=eng, opt=opt,
                                **variant, mem_words=self.mem_words))
        return out

    def cache_shape(self, cache: str) -> dict:
        """The AesConfig cache fields of one protocol of the grid."""
        return dict(cache=cache, cache_lines=self.cache_lines, cache_ways=self.cache_ways,
                    line_words=self.line_words, cache_hit_latency=self.cache_hit_latency)

    def network_shape(self, interconnect: str) -> dict:
        """The AesConfig network fields of one interconnect of the grid."""
        return dict(interconnect=interconnect, coherence=coherence_for(interconnect), link_latency=self.link_latency,
                    router_latency=self.router_latency, flit_words=self.flit_words)

    def jobs(self) -> list[tuple[int, int, dict]]:
        """(cores, bytes, config) of every run, in run order: configurations outermost, cores innermost."""
        return [(c, n, cfg) for cfg in self.configs() for n in self.sizes for c in self.cores]

    def check(self) -> None:
        """Fail before running anything: ECB sizes that are not whole blocks, a size that does
        not fit in the simulated memory, the SystemC engine when it is not built, a program variant
        that does not exist (a calibration of another style or level), a cipher none of whose
        styles is chosen."""
        for ciph in self.ciphers:
            own = cipher_of(ciph).styles
            if not set(own) & set(self.styles):
                raise S2mcError(f"--style {','.join(self.styles)}: none of them is a style of {ciph} "
                                f"(choose {', '.join(own)})")
        idle = [s for s in self.styles if not any(s in cipher_of(c).styles for c in self.ciphers)]
        if idle:    # it would silently not run
            raise S2mcError(f"--style {idle[0]} is not a style of {' or '.join(self.ciphers)} ("
                            + "; ".join(f"{c}: {', '.join(cipher_of(c).styles)}" for c in self.ciphers) + ")")
        for net in self.interconnects:
            if not any(network_problem(net, coherence_for(net), c) is None for c in self.caches):
                raise S2mcError(f"interconnect {net}: {network_problem(net, coherence_for(net), self.caches[0])}")
        for cfg in self.configs():
            AesConfig(**cfg).check()
        if "ecb" in self.modes:
            bad = [n for n in self.sizes if n % 16]
            if bad:
                raise S2mcError(f"--bytes: ECB needs whole 16-byte blocks; {bad[0]} is not a multiple "
                                "of 16 (use --mode ctr for any length)")
        top = PARAMS["mem_words"].max
        ran = {cfg["style"] for cfg in self.configs()}
        for style, opt in itertools.product([s for s in self.styles if s in ran], self.opts):
            n = max(self.sizes)
            need = words_needed(n, style, opt)
            if need > top:    # no memory is large enough: state the real range
                raise S2mcError(f"--bytes {human_size(n)} is out of range for the {style} program: at most "
                                f"{max_bytes(style, opt)} bytes fit in the largest simulated memory "
                                f"(--mem-words {top})")
            if need > self.mem_words:
                raise S2mcError(f"--bytes {human_size(n)}: the {style} program needs {need} words of "
                                f"simulated memory but --mem-words is {self.mem_words}; raise "
                                f"--mem-words to at least {need} (at most {top})")
        if "systemc" in self.engines:
            from s2mc.simulator import systemc_engine
            if not systemc_engine.available():
                raise S2mcError("--engine systemc: the SystemC engine is not built (install "
                                "libsystemc-dev and rerun `make setup`)")

    def params(self) -> dict:
        """The grid as a records manifest states it (the key itself is not written)."""
        return dict(cores=list(self.cores), bytes=list(self.sizes), key_bits=list(self.key_sizes),
                    modes=list(self.modes), directions=list(self.directions), styles=list(self.styles),
                    partitions=list(self.partitions), ext_blocks=list(self.ext_blocks),
                    mem_latency=list(self.mem_latencies), arbitration=list(self.arbitrations),
                    engines=list(self.engines), opt=list(self.opts),
                    key_expansion=list(self.key_expansions), calibration=list(self.calibrations),
                    mem_words=self.mem_words, ciphers=list(self.ciphers),
                    **({"cache": list(self.caches), **{k: v for k, v in self.cache_shape("").items() if k != "cache"}}
                       if self.caches != ("none",) else {}),
                    **({"interconnect": list(self.interconnects),
                        **{k: v for k, v in self.network_shape("").items() if k not in ("interconnect", "coherence")}}
                       if self.interconnects != ("bus",) else {}),
                    seed=self.seed, key_given=self.key is not None,
                    checked_against="cryptography " + _cryptography_version())

    def inputs(self) -> tuple[bytes, bytes, dict[int, bytes]]:
        """(data of the largest size, CTR counter block, key per key size), drawn from `seed`."""
        rng = random.Random(self.seed)
        data = rng.randbytes(max(self.sizes))
        counter = rng.randbytes(16)
        keys = {b: self.key or random.Random(self.seed * 1000 + b).randbytes(b // 8)
                for b in self.key_sizes}
        return data, counter, keys


#: Named configurations (`s2mc aes --preset NAME`): AesGrid fields. "seed003" is the model that
#: reproduces seed 003's Tables 3 and 4 (docs/aes-on-s2.md, "Seed 003 reproduced"): the paper's grid
#: and configuration (AES-128 ECB encryption, byte-oriented, interleaved blocks, L = 2), our program
#: compiled at -O0 like the original Rz compiler, every core expanding the key itself before the
#: barrier, burst4 arbitration (the lowest core id wins the bus, but a core granted 4 times in a row
#: goes last), and the extra work per block and per run that the paper's 1-core cells imply (the
#: calibration, fitted to those cells only: s2mc.experiments.fidelity). Its multi-core cells are predictions.
PRESETS: dict[str, dict] = {
    "seed003": dict(cores=(1, 2, 3, 4), sizes=(32, 64, 128, 256), key_bits=(128,), modes=("ecb",),
                    directions=("enc",), styles=("bytes",), partitions=("interleaved",),
                    mem_latencies=(2,), arbitrations=("burst4",), opts=(0,), key_expansions=("per-core",),
                    calibrations=("seed003",)),
}


def preset(name: str, **overrides) -> AesGrid:
    """The grid of a preset, with some fields replaced (`overrides`: AesGrid fields)."""
    if name not in PRESETS:
        raise S2mcError(f"unknown preset {name!r} (choose {', '.join(PRESETS)})")
    return AesGrid(**{**PRESETS[name], **overrides})


def _cryptography_version() -> str:
    from importlib import metadata
    try:
        return metadata.version("cryptography")
    except metadata.PackageNotFoundError:
        return "?"


def _per_job_names(path: str | None, jobs: list, default_ext: str) -> dict[int, str]:
    """The file of each of these jobs: `path` itself for one, FILE-<i>.EXT for several."""
    if not path:
        return {}
    stem, dot, ext = path.rpartition(".")
    return {id(j): path if len(jobs) == 1 else f"{stem or ext}-{i}.{ext if dot else default_ext}"
            for i, j in enumerate(jobs)}


def _vcd_names(vcd: str | None, jobs: list) -> dict[int, str]:
    """The waveform file of each traced job: `vcd` itself for one, FILE-<i>.vcd for several."""
    return _per_job_names(vcd, [j for j in jobs if j[2]["engine"] == "systemc"], "vcd")


def timeline_files(grid: AesGrid, path: str) -> list[str]:
    """The timeline file of each run of the grid, in run order (what run_grid writes)."""
    jobs = grid.jobs()
    names = _per_job_names(path, jobs, "html")
    return [names[id(j)] for j in jobs]


def vcd_files(grid: AesGrid, vcd: str) -> list[str]:
    """The waveform file of each systemc run of the grid, in run order (what run_grid writes)."""
    jobs = grid.jobs()
    names = _vcd_names(vcd, jobs)
    return [names[id(j)] for j in jobs if id(j) in names]


def run_grid(grid: AesGrid, *, new_run_id: Callable[[], str], experiment: str = "aes",
             progress: bool = False, vcd: str | None = None, timeline: str | None = None,
             timeline_window: tuple[int, int | None] = (0, None), desc: str = "s2mc aes",
             ) -> tuple[list[AesRun], list[dict]]:
    """Run the grid (every run checked against `cryptography`); returns (runs, records rows).

    new_run_id gives each run its id. vcd (systemc engine): a waveform file, FILE-<i>.vcd per run
    when the grid has several. timeline: the timeline of the cycles in timeline_window
    (s2mc.simulator.timeline), FILE-<i>.EXT per run likewise (timeline_files(grid, path) names them).
    desc: the progress bar's label.
    """
    grid.check()
    jobs = grid.jobs()
    if vcd and "systemc" not in grid.engines:
        raise S2mcError("--vcd needs --engine systemc")
    vcd_of = _vcd_names(vcd, jobs)
    timeline_of = _per_job_names(timeline, jobs, "html")
    data, counter, keys = grid.inputs()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(jobs), desc=desc, unit="run", leave=False)
    runs, rows = [], []
    try:
        for job in jobs:
            c, n, cfg = job
            r = run_aes(data[:n], keys[cfg["key_bits"]], counter, cores=c, vcd=vcd_of.get(id(job)),
                        timeline=timeline_of.get(id(job)), timeline_window=timeline_window, **cfg)
            runs.append(r)
            rows += record_rows(r, new_run_id(), experiment)
            if bar:
                bar.set_postfix_str(f"{cfg['cipher'] + ' ' if 'cipher' in cfg else ''}{cfg['style']} {cfg['mode']} {c}c {human_size(n)}B")
                bar.update(1)
    finally:
        if bar:
            bar.close()
    return runs, rows


def format_tables(runs: list[AesRun]) -> str:
    """One table per configuration (workload, variant, engine): rows bytes x cores with cycles,
    speedup over the fewest cores, instructions, stall cycles and bus utilisation (on a ring or a
    mesh, which have no bus: the messages sent)."""
    out = []
    key = lambda r: (r.config.workload, r.config.variant, r.config.engine)  # noqa: E731
    for (workload, variant, engine), grp in groupby(sorted(runs, key=key), key=key):
        grp = sorted(grp, key=lambda r: (r.nbytes, r.config.cores))
        rows = []
        for nbytes, same in groupby(grp, key=lambda r: r.nbytes):
            same = list(same)
            base = same[0]
            for r in same:
                res = r.result
                sp = base.result.cycles / res.cycles if res.cycles else float("nan")
                rows.append([human_size(nbytes), str(r.config.cores), str(res.cycles), f"{sp:.2f}",
                             str(res.instructions), str(res.stall_cycles),
                             f"{100 * res.bus_utilisation:.1f}%" if r.config.interconnect == "bus" else
                             str(sum(c["messages_sent"] for c in res.cores))])
        base_cores = min(r.config.cores for r in grp)
        sp_head = "speedup" if base_cores == 1 else f"speedup vs {base_cores}c"
        last = "bus util" if grp[0].config.interconnect == "bus" else "messages"
        out.append(f"# {workload}  {variant}  engine {engine}\n" + text_table(
            ["bytes", "cores", "cycles", sp_head, "instructions", "stall cycles", last], rows))
    return "\n\n".join(out)
