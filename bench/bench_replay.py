"""Benchmark: the replay bus against the fast engine on the buses both implement (`make bench`).

    .venv/bin/python bench/bench_replay.py [--quick]

The seed 003 fidelity study scores most hypotheses by replaying a traced run's streams through a bus
the engines lack (s2mc.simulator.replay_bus). Could the fast engine do the replay's work? On the
buses it has (fifo, fixed, round_robin, burst4) this times, for the seed 003 model's program (AES
bytes style at -O0, key on every core, calibrated) at 256 bytes on 4 cores:
  engine   run_aes on the engine with that arbitration (compile cached; the run and the check)
  replay   replay() of the streams of one traced fifo run (the trace is taken once, as the study does)
Both give the same counters (checked here, and by tests/test_replay_bus.py). The best of a few
repeats; --quick: 64 bytes. Figures go in docs/benchmarks.md.
"""
from __future__ import annotations

import sys
import time

from s2mc.simulator.replay_bus import Bus, replay, streams
from s2mc.workloads.cipher_sim.runner import run_aes

PROGRAM = dict(style="bytes", opt=0, key_expansion="per-core", calibration="seed003")
POLICIES = {"fifo": Bus("fifo"), "fixed": Bus("fixed"), "round_robin": Bus("round_robin"),
            "burst4": Bus("burst", burst=4)}


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> int:
    nbytes = 64 if "--quick" in sys.argv else 256
    cores = 4
    data, key = bytes(range(nbytes)), bytes(16)
    traced = run_aes(data, key, cores=cores, arbitration="fifo", trace=True, **PROGRAM).result
    s = streams(traced.trace, cores)
    print(f"seed 003 model program, {nbytes} bytes on {cores} cores ({traced.cycles} cycles under fifo)")
    print(f"{'bus':>12}  {'engine s':>9}  {'replay s':>9}  replay/engine")
    for name, bus in POLICIES.items():
        engine = run_aes(data, key, cores=cores, arbitration=name, **PROGRAM).result
        r = replay(s, bus)
        assert r["cycles"] == engine.cycles and r["stalls"] == [c["stall_cycles"] for c in engine.cores], name
        te = best(lambda: run_aes(data, key, cores=cores, arbitration=name, **PROGRAM))
        tr = best(lambda: replay(s, bus))
        print(f"{name:>12}  {te:9.4f}  {tr:9.4f}  {tr / te:6.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
