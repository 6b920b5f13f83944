"""The fast engine against the cycle-stepped reference model (simulator/reference.py) on random
programs and configurations: final memory, registers, output and every per-core counter agree."""
import pytest
from hypothesis import given, settings

from s2gen import PROTOCOLS, buffered_configs, cache_configs, configs, programs
from s2mc.isa import assemble
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.counters import core_counters, engine_counters
from s2mc.simulator.reference import ReferenceMachine, RefFault

MEM = 1024
MAX_CYCLES = 20_000


def assert_matches_reference(src, cfg):
    """Runs one program on the fast engine and the reference model and asserts they agree on the
    fault, or on the cycles, output, every per-core counter, the registers and the final memory."""
    prog = assemble(src)
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, max_cycles=MAX_CYCLES,
                           stacks=prog.stacks, **cfg)
    fast = Machine(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg)
    try:
        expected = ref.run()
    except RefFault as f:
        with pytest.raises(SimFault) as got:
            fast.run()
        assert tuple(got.value.fault[k] for k in ("kind", "core", "pc", "cycle", "address")) == \
            (f.kind, f.core, f.pc, f.cycle, f.address)
        return
    res = fast.run()
    assert res.cycles == expected["cycles"]
    assert res.bus_busy_cycles == expected["bus_busy_cycles"]
    assert [(c, k, t) for c, k, t in res.events] == expected["output"]
    for i, core in enumerate(expected["cores"]):
        got = res.cores[i]
        assert got["cycles"] == core["finish_cycle"]
        cached = cfg.get("cache", "none") != "none"
        buffered = cfg.get("consistency", "sc") != "sc"
        for key in engine_counters(cached, buffered):
            assert got[key] == core[key], (i, key)
        # the reference's own stall count, by the rule as it goes (with or without caches)
        assert got["stall_cycles"] == expected["stall_cycles"][i], i
        if not cached and not buffered:
            assert got["stall_cycles"] == core["bus_wait_cycles"] + (cfg["mem_latency"] - 1) * core["mem_accesses"]
            assert set(got) == {"core", *core_counters(False)}
        assert fast.registers(i) == ref.cores[i].r
    assert fast.read(0, MEM) == ref.mem


@settings(max_examples=500)
@given(programs(), configs)
def test_fast_engine_matches_reference(src, cfg):
    assert_matches_reference(src, cfg)


@pytest.mark.slow
@settings(max_examples=2000)
@given(programs(), configs)
def test_fast_engine_matches_reference_many(src, cfg):
    assert_matches_reference(src, cfg)


@pytest.mark.slow
@given(programs(max_chunks=30), configs)
def test_fast_engine_matches_reference_long_programs(src, cfg):
    assert_matches_reference(src, cfg)


@settings(max_examples=200)
@given(programs(), cache_configs())
def test_fast_engine_matches_reference_with_caches(src, cfg):
    """Every protocol and cache shape: cycles, every counter (the caches' included), memory."""
    assert_matches_reference(src, cfg)


@pytest.mark.slow
@settings(max_examples=600)
@given(programs(), cache_configs())
def test_fast_engine_matches_reference_with_caches_many(src, cfg):
    assert_matches_reference(src, cfg)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", PROTOCOLS)
@settings(max_examples=1500)
@given(src=programs(max_chunks=30), cfg=cache_configs())
def test_fast_engine_matches_reference_with_caches_long(protocol, src, cfg):
    assert_matches_reference(src, {**cfg, "cache": protocol})


@settings(max_examples=300)
@given(programs(), buffered_configs())
def test_fast_engine_matches_reference_with_store_buffers(src, cfg):
    """tso and pso, every arbitration and core count: cycles, every counter, registers, memory."""
    assert_matches_reference(src, cfg)


@settings(max_examples=200)
@given(programs(), buffered_configs(cached=True))
def test_fast_engine_matches_reference_with_store_buffers_and_caches(src, cfg):
    """tso and pso with every protocol and cache shape."""
    assert_matches_reference(src, cfg)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["none", *PROTOCOLS])
@settings(max_examples=1000)
@given(src=programs(max_chunks=30), cfg=buffered_configs(cached=True))
def test_fast_engine_matches_reference_with_store_buffers_long(protocol, src, cfg):
    assert_matches_reference(src, {**cfg, "cache": protocol})
