"""An analytic bus-contention model: the machine-repairman (closed queueing) model.

N cores share one bus. Each core alternates between
  - *thinking*: Z cycles of work that does not use the bus (non-memory instructions, plus the
    first cycle of each access that overlaps nothing: see docs/analysis.md), and
  - *one bus access*: it queues for the bus, then holds it for S = L cycles (the memory latency).
That is the textbook machine-repairman model: N "machines" (cores) that "break" (request the bus)
after Z cycles and one "repairman" (the bus) that serves one at a time in S cycles.

Exact Mean Value Analysis (MVA) for a closed network with one queueing station and a delay
station, n = 1..N:

    R(n) = S * (1 + Q(n-1))     response time at the bus (wait + service), Q(0) = 0
    X(n) = n / (Z + R(n))       bus accesses completed per cycle
    Q(n) = X(n) * R(n)          mean number of cores at the bus (Little's law)

The fixed work of a run (A bus accesses in all) then takes about A / X(N) cycles, and the speedup
over one core is X(N) / X(1). The asymptotic bounds are X(N) <= min(N / (Z + S), 1 / S): the bus
saturates at one access per S cycles, i.e. speedup <= (Z + S) / S, reached around
N* = (Z + S) / S cores.

MVA is exact for exponential think and service times; the S2 bus has constant ones, so MVA is an
approximation there (it overestimates queueing a little at small N); the bounds hold regardless.

Parameters come from a measured 1-core run (`fit`): with C1 cycles and A accesses on one core,
each access costs S = L bus cycles and the rest of the time is thinking: Z = C1 / A - S.
"""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from s2mc.analysis import records
from s2mc.common.errors import S2mcError


@dataclass(frozen=True)
class BusModel:
    think: float     # Z: cycles between a core's bus accesses (not using the bus)
    service: float   # S: bus cycles per access (mem_latency L)
    accesses: float = 0.0  # A: total bus accesses of the workload (for cycle predictions)

    def __post_init__(self):
        if self.service <= 0:
            raise S2mcError(f"model: service time must be > 0 (got {self.service})")
        if self.think < 0:
            raise S2mcError(f"model: think time must be >= 0 (got {self.think})")

    # -- MVA -------------------------------------------------------------------------------------
    def mva(self, n_max: int) -> list[tuple[float, float, float]]:
        """[(X, R, Q)] for n = 1..n_max."""
        if n_max < 1:
            raise S2mcError(f"model: number of cores must be >= 1 (got {n_max})")
        out, q = [], 0.0
        for n in range(1, n_max + 1):
            r = self.service * (1.0 + q)
            x = n / (self.think + r)
            q = x * r
            out.append((x, r, q))
        return out

    def throughput(self, n: int) -> float:
        """Bus accesses per cycle with n cores."""
        return self.mva(n)[-1][0]

    def speedup(self, n: int) -> float:
        return self.throughput(n) / self.throughput(1)

    def utilisation(self, n: int) -> float:
        """Fraction of cycles the bus is busy: X(n) * S."""
        return self.throughput(n) * self.service

    def cycles(self, n: int) -> float:
        """Predicted total cycles for the workload's `accesses` bus accesses on n cores."""
        if self.accesses <= 0:
            raise S2mcError("model: cycles() needs the workload's number of accesses")
        return self.accesses / self.throughput(n)

    # -- bounds ------------------------------------------------------------------------------------
    @property
    def saturation_speedup(self) -> float:
        """The speedup ceiling (Z + S) / S: the bus is busy all the time."""
        return (self.think + self.service) / self.service

    @property
    def saturation_cores(self) -> float:
        """N* = (Z + S) / S: where the two asymptotes meet."""
        return self.saturation_speedup

    def speedup_bound(self, n: int) -> float:
        return min(float(n), self.saturation_speedup)


def fit(cycles_1core: float, accesses: float, latency: float = 2.0) -> BusModel:
    """The model of a workload from its 1-core run: Z = C1 / A - L, S = L."""
    if accesses <= 0:
        raise S2mcError("model: the 1-core run made no memory accesses: nothing to contend for")
    if cycles_1core < accesses * latency:
        raise S2mcError(f"model: {cycles_1core} cycles cannot hold {accesses} accesses of "
                        f"{latency} cycles")
    return BusModel(think=cycles_1core / accesses - latency, service=latency, accesses=accesses)


def fit_records(df: pd.DataFrame, latency: float | None = None) -> dict[tuple, BusModel]:
    """One model per configuration (CONFIG_KEYS) that has a 1-core whole-run simulator row.

    Accesses: the recorded mem_accesses, else (stall_cycles - bus_wait_cycles) / (L - 1) (the
    seed's stall count is exactly bus wait + (L - 1) x accesses); never reads + writes, which
    counts an xchg twice. L: `latency`, else a recorded mem_latency, else 2.
    """
    from s2mc.analysis.derive import CONFIG_KEYS, wide
    w = wide(df[(df["core"] == -1) & (df["cores"] == 1)],
             ["cycles", "mem_accesses", "stall_cycles", "bus_wait_cycles", "mem_latency"])
    def val(r, name):
        v = r.get(name, float("nan"))
        return float(v) if v == v else None  # NaN -> None

    models = {}
    for _, r in w.iterrows():
        lat = latency if latency is not None else (val(r, "mem_latency") or 2.0)
        cyc = val(r, "cycles")
        acc = val(r, "mem_accesses")
        if acc is None and val(r, "stall_cycles") is not None and lat > 1:
            acc = (val(r, "stall_cycles") - (val(r, "bus_wait_cycles") or 0.0)) / (lat - 1)
        if acc is None:
            continue
        if cyc is None or acc <= 0:
            continue
        models[tuple(r[k] for k in CONFIG_KEYS)] = fit(cyc, acc, lat)
    return models


def predict_records(df: pd.DataFrame, cores: list[int], latency: float | None = None
                    ) -> pd.DataFrame:
    """model_speedup and model_cycles rows for every fitted configuration and core count."""
    from s2mc.analysis.derive import CONFIG_KEYS
    rows = []
    for key, m in fit_records(df, latency).items():
        cfg = dict(zip(CONFIG_KEYS, key))
        for n in cores:
            base = dict(cfg, run_id=f"model-{cfg['experiment'] or 'adhoc'}", cores=int(n),
                        core=-1)
            rows.append(dict(base, metric="model_speedup", value=m.speedup(n)))
            rows.append(dict(base, metric="model_cycles", value=m.cycles(n)))
    return records.make_records(rows) if rows else records.empty()
