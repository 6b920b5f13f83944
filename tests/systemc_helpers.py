"""Shared helpers of the SystemC engine tests: run one program on both engines and compare."""
from __future__ import annotations

import pytest

from s2mc.simulator import Machine, SimFault
from s2mc.simulator import systemc_engine

needs_systemc = [pytest.mark.systemc,
                 pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine (s2mc-systemc) is not built")]


def outcome(prog, engine, mem_read=1024, inputs=(), trace=True, **cfg):
    """Everything observable about one run: counters, output, trace, registers, final memory; or
    the fault and its message."""
    m = Machine(prog, engine=engine, trace=trace, **cfg)
    for where, words in inputs:
        m.write(where, words)
    try:
        r = m.run()
    except SimFault as f:   # the log up to the fault too: both engines log the faulting cycle
        return {"fault": f.fault, "message": str(f), "trace": f.trace}
    return {"cycles": r.cycles, "bus_busy_cycles": r.bus_busy_cycles, "cores": r.cores, "events": r.events,
            "output": r.output, "trace": r.trace,
            "registers": [m.registers(i) for i in range(m.config.cores)],
            "memory": m.read(0, min(mem_read, m.config.mem_words))}


def assert_same(prog, **cfg):
    """Runs both engines and asserts identical observable results; returns the fast engine's."""
    fast = outcome(prog, "fast", **cfg)
    sysc = outcome(prog, "systemc", **cfg)
    for key in fast:
        assert sysc[key] == fast[key], f"{key} differs between the fast and systemc engines ({cfg})"
    return fast
