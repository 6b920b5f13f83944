"""A simulator run as records rows (docs/records.md): the one Result -> records conversion.

    from s2mc.simulator.records import result_rows
    rows = result_rows(result, "run-20250101T000000-abcdef", workload="spin_lock")
    df = s2mc.analysis.records.make_records(rows)      # validates them against the schema

Every counter is the engine's own, `mem_accesses` included (an `xchg` is one bus access that counts
as one read and one write, so reads + writes is not the number of accesses). Data flows one way:
the simulator does not import s2mc.analysis, so these are plain dicts with the schema's columns.
"""
from __future__ import annotations

from s2mc.common.variants import cache_part, network_part, parse_cache_part  # noqa: F401 - parse_cache_part: for readers

from .counters import core_counters
from .params import DEFAULTS

#: Counters recorded for every core and, summed over the cores, for the whole run (core -1), as
#: simulator/counters.toml declares them (the cache counters join them in runs with caches).
#: The whole run's cycles are the largest finish cycle, its finish_cycle the smallest (a core's
#: finish_cycle is its cycles), and its bus busy cycles the bus's own count.
COUNTERS = core_counters(cached=False)

def variant_parts(mem_latency: int, arbitration: str, cache: str = DEFAULTS["cache"],
                  cache_lines: int = DEFAULTS["cache_lines"], cache_ways: int = DEFAULTS["cache_ways"],
                  line_words: int = DEFAULTS["line_words"],
                  cache_hit_latency: int = DEFAULTS["cache_hit_latency"],
                  consistency: str = DEFAULTS["consistency"],
                  store_buffer_entries: int = DEFAULTS["store_buffer_entries"],
                  interconnect: str = DEFAULTS["interconnect"], coherence: str = DEFAULTS["coherence"],
                  link_latency: int = DEFAULTS["link_latency"], router_latency: int = DEFAULTS["router_latency"],
                  flit_words: int = DEFAULTS["flit_words"]) -> list[str]:
    """The timing parameters that differ from their defaults, as a records `variant` names them
    (`L4`, `round_robin`, `mesi-64x2-w4`, `tso-sb4`, `mesh-directory-lk1-r1-f4`): runs that differ
    only in them are different configurations."""
    parts = []
    if mem_latency != DEFAULTS["mem_latency"]:
        parts.append(f"L{mem_latency}")
    if arbitration != DEFAULTS["arbitration"]:
        parts.append(arbitration)
    if cache != "none":
        parts.append(cache_part(cache, cache_lines, cache_ways, line_words, cache_hit_latency))
    if consistency != "sc":
        parts.append(f"{consistency}-sb{store_buffer_entries}")
    if interconnect != "bus":
        parts.append(network_part(interconnect, coherence, link_latency, router_latency, flit_words))
    return parts


def result_rows(result, run_id: str, *, experiment: str = "", workload: str = "", variant: str = "",
                nbytes: int = 0, cipher: str = "") -> list[dict]:
    """Tidy rows of one run (a `s2mc.simulator.Result`): the whole run (core -1) and every core.
    `cipher` names the block cipher a cipher workload computed (aes, camellia); empty otherwise.

    Whole run: the counters, the memory latency, bus utilisation, the host seconds the engine took
    and its speed in MIPS (when the time is known). Per core: the counters.
    """
    cfg = result.config
    base = dict(run_id=run_id, experiment=experiment, source="sim", platform="s2", workload=workload,
                variant=variant, engine=cfg.engine, cores=cfg.cores, bytes=nbytes, cipher=cipher)
    counters = core_counters(cfg.cached, cfg.buffered, cfg.networked)
    total = {k: sum(c[k] for c in result.cores) for k in counters}
    total["cycles"] = result.cycles
    total["finish_cycle"] = min(c["finish_cycle"] for c in result.cores)
    total["bus_busy_cycles"] = result.bus_busy_cycles
    whole = [*((k, total[k]) for k in counters), ("mem_latency", cfg.mem_latency),
             ("bus_utilisation", result.bus_utilisation), ("sim_seconds", result.sim_seconds)]
    if result.sim_seconds > 0:
        whole.append(("sim_mips", result.instructions / result.sim_seconds / 1e6))
    rows = [dict(base, core=-1, metric=k, value=v) for k, v in whole]
    for c in result.cores:
        rows += [dict(base, core=c["core"], metric=k, value=c[k]) for k in counters]
    return rows
