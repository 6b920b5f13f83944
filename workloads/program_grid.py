"""A grid of plain programs on the simulator: every program (a bundled example or a path) on every
core count, cache protocol, memory latency and interconnect (bus, ring, mesh: a ring or a mesh keeps its
caches coherent with a directory, the bus by snooping), as `s2mc run PROGRAM --cores ... --cache ...` runs
them one at a time. The experiment registry runs it for specs of kind "program" (the caches lab:
false sharing, TAS against TTAS against a ticket lock as cores grow, each protocol).

    grid = ProgramGrid(programs=("ttas_lock.s",), cores=(1, 2, 4), caches=("none", "mesi"))
    results, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("run"), experiment="locks")
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from s2mc.simulator import CACHE_PARAMS, NETWORK_PARAMS, Machine
from s2mc.simulator.params import DEFAULTS, check as check_machine, coherence_for, network_problem
from s2mc.simulator.records import result_rows, variant_parts

from s2mc.common.errors import S2mcError

from . import examples


@dataclass(frozen=True)
class ProgramGrid:
    """The cross product of programs x mem_latencies x interconnects x caches x cores; one cache shape
    and one network shape for all. A (interconnect, cache) pair that cannot go together (a ring with
    `cache none` or `moesi`: a directory keeps msi or mesi caches) is not run, so one grid can set
    the bus's protocols beside the networks'; check() refuses a grid left with nothing to run."""
    programs: tuple[str, ...] = ("spin_lock.s",)
    cores: tuple[int, ...] = (1, 2, 4)
    caches: tuple[str, ...] = (DEFAULTS["cache"],)
    mem_latencies: tuple[int, ...] = (DEFAULTS["mem_latency"],)
    arbitration: str = DEFAULTS["arbitration"]
    cache_lines: int = DEFAULTS["cache_lines"]
    cache_ways: int = DEFAULTS["cache_ways"]
    line_words: int = DEFAULTS["line_words"]
    cache_hit_latency: int = DEFAULTS["cache_hit_latency"]
    engine: str = DEFAULTS["engine"]
    max_cycles: int = DEFAULTS["max_cycles"]
    opt: int = 1                   # the Rz optimisation level of .rz programs
    interconnects: tuple[str, ...] = (DEFAULTS["interconnect"],)
    link_latency: int = DEFAULTS["link_latency"]
    router_latency: int = DEFAULTS["router_latency"]
    flit_words: int = DEFAULTS["flit_words"]

    def shape(self, cache: str) -> dict:
        return dict(cache=cache, cache_lines=self.cache_lines, cache_ways=self.cache_ways,
                    line_words=self.line_words, cache_hit_latency=self.cache_hit_latency)

    def network(self, interconnect: str) -> dict:
        """The network parameters of one interconnect, as Machine takes them (NETWORK_PARAMS)."""
        return dict(interconnect=interconnect, coherence=coherence_for(interconnect),
                    link_latency=self.link_latency, router_latency=self.router_latency,
                    flit_words=self.flit_words)

    def _fits(self, interconnect: str, cache: str) -> bool:
        return network_problem(interconnect, coherence_for(interconnect), cache) is None

    def jobs(self) -> list[tuple[str, int, str, str, int]]:
        """(program, mem_latency, interconnect, cache, cores) of every run, in run order."""
        return [job for job in itertools.product(self.programs, self.mem_latencies, self.interconnects,
                                                 self.caches, self.cores) if self._fits(job[2], job[3])]

    def check(self) -> None:
        """Fail before running anything: a program that cannot be loaded, a parameter out of range, an
        interconnect that no cache of the grid can go with."""
        for program in self.programs:
            examples.load(program, self.opt)
        for interconnect in self.interconnects:
            if not any(self._fits(interconnect, cache) for cache in self.caches):
                raise S2mcError(f"interconnect {interconnect}: "
                                f"{network_problem(interconnect, coherence_for(interconnect), self.caches[0])}")
        for lat, interconnect, cache, cores in itertools.product(self.mem_latencies, self.interconnects,
                                                                 self.caches, self.cores):
            if self._fits(interconnect, cache):
                check_machine(cores=cores, mem_latency=lat, arbitration=self.arbitration, engine=self.engine,
                              max_cycles=self.max_cycles, **self.shape(cache), **self.network(interconnect))

    def params(self) -> dict:
        """The grid as a records manifest states it."""
        return dict(programs=list(self.programs), cores=list(self.cores), caches=list(self.caches),
                    mem_latency=list(self.mem_latencies), arbitration=self.arbitration,
                    **{k: v for k, v in self.shape("").items() if k != "cache"}, engine=self.engine,
                    opt=self.opt, interconnects=list(self.interconnects),
                    **{k: v for k, v in self.network("").items() if k not in ("interconnect", "coherence")})


def workload_name(program: str) -> str:
    """A program's records `workload`: its file name without the suffix (false_sharing.s -> false_sharing)."""
    return Path(program).stem


def run_grid(grid: ProgramGrid, *, new_run_id, experiment: str = "programs", progress: bool = False):
    """Runs every job of the grid: (the Results, the records rows)."""
    grid.check()
    jobs = grid.jobs()
    if progress:
        from tqdm import tqdm
        jobs = tqdm(jobs, desc="programs", unit="run")
    loaded = {p: examples.load(p, grid.opt) for p in grid.programs}
    results, rows = [], []
    for program, lat, interconnect, cache, cores in jobs:
        shape, net = grid.shape(cache), grid.network(interconnect)
        res = Machine(loaded[program], cores=cores, mem_latency=lat, arbitration=grid.arbitration,
                      engine=grid.engine, max_cycles=grid.max_cycles, **shape, **net).run()
        variant = "/".join([*variant_parts(lat, grid.arbitration, **{k: shape[k] for k in CACHE_PARAMS},
                                           **{k: net[k] for k in NETWORK_PARAMS}),
                            *([f"O{grid.opt}"] if program.endswith(".rz") and grid.opt != 1 else [])])
        results.append(res)
        rows += result_rows(res, new_run_id(), experiment=experiment, workload=workload_name(program),
                            variant=variant)
    return results, rows
