"""The seed 003 fidelity study, run: every hypothesis of s2mc.analysis.fidelity calibrated to the
paper's 1-core cells and run over its 14 cells, as records (`s2mc fidelity`).

    from s2mc.experiments import fidelity
    rows = fidelity.run()                       # records rows of every hypothesis (14 cells each)
    table = s2mc.analysis.fidelity.hypothesis_table(records.make_records(rows))

The engines run the buses they implement (fifo, fixed, round_robin, burst4; docs/timing-model.md);
the others are replayed (s2mc.simulator.replay_bus): every core's AES program takes the same path
whatever the timing, so a run traced under fifo gives each core's stream, which `replay` runs
through the hypothesis's bus. The calibration (`fit_calibration`) is the extra work per block and
per run that makes our program's 1-core line the paper's.
"""
from __future__ import annotations

import functools
import random
from dataclasses import replace

from s2mc.analysis.fidelity import CELLS, EXPERIMENT, HYPOTHESES, WORKLOAD, Hypothesis, paper_line
from s2mc.common.errors import S2mcError
from s2mc.simulator.params import DEFAULTS
from s2mc.simulator.replay_bus import Bus, replay, streams
from s2mc.workloads.cipher_sim.runner import run_aes
from s2mc.workloads.cipher_sim.variants import CALIBRATIONS, Calibration

#: The data and key every run encrypts (AES timing on S2 does not depend on them).
SEED = 2014
#: What an added load costs our program: the simulator's memory latency (the paper's is the same:
#: tests/test_fidelity.py).
L = DEFAULTS["mem_latency"]


# --------------------------------------------------------------------------------------------------
# calibration: the paper's 1-core line against ours
# --------------------------------------------------------------------------------------------------

def _data(nbytes: int) -> tuple[bytes, bytes]:
    rng = random.Random(SEED)
    return rng.randbytes(nbytes), rng.randbytes(16)


def program_line(opt: int = 0, key_expansion: str = "per-core", calibration=None,
                 partition: str = "interleaved") -> dict:
    """Our bytes program's 1-core cycles and accesses per block and fixed (exact: two runs)."""
    r = {}
    for n in (32, 256):
        data, key = _data(n)
        res = run_aes(data, key, cores=1, style="bytes", opt=opt, key_expansion=key_expansion,
                      calibration=calibration, partition=partition).result
        r[n] = (res.cycles, res.cores[0]["mem_accesses"])
    per = [(r[256][i] - r[32][i]) // 14 for i in (0, 1)]
    return {"cycles_per_block": per[0], "cycles_fixed": r[32][0] - 2 * per[0],
            "accesses_per_block": per[1], "accesses_fixed": r[32][1] - 2 * per[1]}


def _extra(d_cycles: int, d_accesses: int, rule: str) -> tuple[int, int]:
    """(nops, loads) that add d_cycles cycles and come closest to d_accesses accesses: rule
    `cycles` matches the cycles exactly and the accesses as closely as those cycles allow; rule
    `accesses` matches the accesses exactly and the cycles as closely as it can (only ever adding)."""
    if d_cycles < 0 or d_accesses < 0:
        raise S2mcError(f"the paper's program does less work than ours ({d_cycles} cycles, "
                        f"{d_accesses} accesses): a calibration only adds work")
    if rule == "accesses":
        mem = d_accesses
        return max(0, d_cycles - L * mem), mem
    mem = min(d_accesses, d_cycles // L)
    return d_cycles - L * mem, mem


def fit_calibration(opt: int = 0, key_expansion: str = "per-core", rule: str = "cycles",
                    name: str = "seed003") -> Calibration:
    """The extra work per block and per run that makes our program's 1-core line the paper's
    (fitted to the paper's four 1-core cells only). The preset's calibration is
    fit_calibration() (a test checks it against variants.CALIBRATIONS)."""
    paper, ours = paper_line(), program_line(opt, key_expansion)
    b_ops, b_mem = _extra(paper["cycles_per_block"] - ours["cycles_per_block"],
                          paper["accesses_per_block"] - ours["accesses_per_block"], rule)
    r_ops, r_mem = _extra(paper["cycles_fixed"] - ours["cycles_fixed"],
                          paper["accesses_fixed"] - ours["accesses_fixed"], rule)
    return Calibration(name, b_ops, b_mem, r_ops, r_mem, opt=opt, key_expansion=key_expansion,
                       note=f"fitted by the {rule} rule")


# --------------------------------------------------------------------------------------------------
# running the hypotheses
# --------------------------------------------------------------------------------------------------



@functools.lru_cache(maxsize=None)
def calibration_for(opt: int, key_expansion: str, rule: str | None,
                    arrangement: str = "interleaved") -> Calibration | None:
    """The calibration of a program, fitted to the paper's 1-core cells by `rule` (None: none);
    the named seed003 calibration when it is that one."""
    if rule is None:
        return None
    cal = fit_calibration(opt, key_expansion, rule, name=f"fit-{rule}-O{opt}-{key_expansion}-{arrangement}")
    cal = replace(cal, arrangement=arrangement)
    named = CALIBRATIONS["seed003"]
    return named if replace(cal, name=named.name, note=named.note) == named else cal


def _run(h: Hypothesis, cores: int, nbytes: int, trace: bool = False, arbitration: str | None = None):
    data, key = _data(nbytes)
    return run_aes(data, key, cores=cores, style="bytes", opt=h.opt, key_expansion=h.key_expansion,
                   partition=h.partition,
                   calibration=calibration_for(h.opt, h.key_expansion, h.calibrate, h.arrangement),
                   arbitration=arbitration or h.arbitration, trace=trace)


def _dynamic(h: Hypothesis, cores: int, nbytes: int) -> dict:
    """Blocks taken one at a time from a shared counter: each core's set-up (to its barrier) as
    traced, then takes (one bus access each) and the 1-core program's block, replayed on h.bus.
    Approximate: a take is one access, and the block is half of what a 1-core run of two blocks
    does after its barrier."""
    def upto_barrier(s):
        return s[:next(i for i, it in enumerate(s) if it[1] == "s") + 1]
    base = streams(_run(h, cores, nbytes, trace=True, arbitration="fifo").result.trace, cores)
    one = streams(_run(h, 1, 32, trace=True).result.trace, 1)[0]
    after = one[len(upto_barrier(one)):-1]
    return replay([upto_barrier(s) + [(0, "g")] for s in base], Bus(**h.bus), take=(after[:len(after) // 2], nbytes // 16))


def evaluate(h: Hypothesis, cells=CELLS) -> dict:
    """(bytes, cores) -> {cycles, stalls (as h counts them), finish (per core), idle} of one hypothesis."""
    out = {}
    for nbytes, cores in cells:
        if h.dynamic:
            r = _dynamic(h, cores, nbytes)
        elif h.bus is not None:
            res = _run(h, cores, nbytes, trace=True, arbitration="fifo").result
            r = replay(streams(res.trace, cores), Bus(**h.bus))
        else:
            res = _run(h, cores, nbytes).result
            r = {"cycles": res.cycles, "finish": res.finish_cycles,
                 "stalls": [c["stall_cycles"] for c in res.cores],
                 "sync_wait": [c["sync_wait_cycles"] for c in res.cores]}
        idle = [r["cycles"] - f for f in r["finish"]]
        stalls = sum(r["stalls"])
        if h.count == "stalls+sync":
            stalls += sum(r["sync_wait"])
        elif h.count == "stalls+idle":
            stalls += sum(idle)
        out[(nbytes, cores)] = {"cycles": r["cycles"], "stalls": stalls, "finish": list(r["finish"]),
                                "idle": sum(idle)}
    return out


def rows_of(h: Hypothesis, cells: dict, run_prefix: str = "fid") -> list[dict]:
    """Records rows of one hypothesis's cells (docs/records.md): whole-run cycles, stall_cycles (as
    the hypothesis counts them) and idle_cycles; every core's finish_cycle."""
    rows = []
    for (nbytes, cores), c in cells.items():
        base = dict(run_id=f"{run_prefix}-{h.id}-{nbytes}-{cores}", experiment=EXPERIMENT, source="sim",
                    platform="s2", workload=WORKLOAD, variant=f"hypothesis/{h.id}", engine=h.engine,
                    cores=cores, bytes=nbytes)
        rows += [dict(base, core=-1, metric=m, value=c[k])
                 for m, k in (("cycles", "cycles"), ("stall_cycles", "stalls"), ("idle_cycles", "idle"))]
        rows += [dict(base, core=i, metric="finish_cycle", value=f) for i, f in enumerate(c["finish"])]
    return rows


def run(hypotheses=HYPOTHESES, progress=None) -> list[dict]:
    """Records rows of every hypothesis over the paper's 14 cells. progress(h) is called before each."""
    rows = []
    for h in hypotheses:
        if progress:
            progress(h)
        rows += rows_of(h, evaluate(h))
    return rows


__all__ = ["SEED", "calibration_for", "evaluate", "fit_calibration", "program_line",
           "rows_of", "run"]
