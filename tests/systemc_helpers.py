"""Shared helpers of the SystemC engine tests: run one program on both engines and compare."""
from __future__ import annotations

import os
import subprocess

import pytest

from s2mc.isa import assemble
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
            "output": r.output, "trace": r.trace, "network": r.network,
            "registers": [m.registers(i) for i in range(m.config.cores)],
            "memory": m.read(0, min(mem_read, m.config.mem_words))}


def assert_same(prog, **cfg):
    """Runs both engines and asserts identical observable results; returns the fast engine's."""
    fast = outcome(prog, "fast", **cfg)
    sysc = outcome(prog, "systemc", **cfg)
    for key in fast:
        assert sysc[key] == fast[key], f"{key} differs between the fast and systemc engines ({cfg})"
    return fast


#: The halting trap's word: the one instruction of run_child's machine.
HALT_WORD = assemble(".code 0\n  trap r0 #0\n").code_image[0] & 0xFFFFFFFF


def run_child(tmp_path, line: str, *args: str) -> subprocess.CompletedProcess:
    """Runs the s2mc-systemc child directly on a one-core machine that halts at once, with `line`
    (a cache or consistency line of its input, docs/systemc.md) after `trace 0`, and `args` after
    its own options; its result goes to tmp_path/r.json."""
    text = (f"s2mc-systemc-input 1\ncores 1 mem_latency 2 arbitration fifo\nmax_cycles 100 mem_words 16 entry 0 "
            f"trace 0\n{line}\ncode 1\n{HALT_WORD}\ndata 0\n\nend\n")
    (tmp_path / "in.txt").write_text(text)
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    return subprocess.run([str(systemc_engine.executable()), "--input", str(tmp_path / "in.txt"),
                           "--result", str(tmp_path / "r.json"), *args], capture_output=True, text=True, env=env, timeout=60)
