"""The fast engine's ring and mesh with directory coherence equal the reference model
(simulator/directory.py) on every cycle, counter, register and memory word: the hand-worked
programs of test_directory.py, its data-race-free random programs, and s2gen's random programs
(faults and the cycle limit included)."""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from s2gen import programs
from test_directory import (BARRIER, MEM, OWNED, RACE, RACE_CFG, SKIP_OTHERS, cli, drf_program, flooded_race)

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.counters import engine_counters
from s2mc.simulator.directory import DirectoryMachine
from s2mc.simulator.reference import RefFault

def assert_equal(src: str, **cfg) -> dict:
    """Runs src on the reference model and on the fast engine; everything they report must agree.
    Returns the reference's raw result."""
    cfg = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory", "mem_words": MEM, **cfg}
    prog = assemble(src)
    ref = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, stacks=prog.stacks, **cfg)
    try:
        raw = ref.run()
    except RefFault as f:
        with pytest.raises(SimFault) as e:
            Machine(prog, **cfg).run()
        assert (e.value.fault["kind"], e.value.fault["core"], e.value.fault["pc"], e.value.fault["cycle"],
                e.value.fault["address"]) == (f.kind, f.core, f.pc, f.cycle, f.address & 0xFFFFFFFF)
        return {}
    fast = Machine(prog, **cfg)
    res = fast.run()
    assert res.cycles == raw["cycles"]
    names = engine_counters(cached=False, buffered=cfg.get("consistency", "sc") != "sc", networked=True)
    for k, (want, got) in enumerate(zip(raw["cores"], res.cores)):
        assert {n: got[n] for n in names} == {n: want[n] for n in names}, f"core {k}"
        assert fast.registers(k) == ref.cores[k].r, f"core {k}"
    assert res.events == raw["output"]
    assert res.network == raw["network"]
    assert fast.read(0, cfg["mem_words"]) == ref.memory()
    return raw


# -- the hand-worked programs of test_directory.py ----------------------------------------------

#: (source, configuration): the hand-worked programs, as the other engines' suites run them too.
HAND_PROGRAMS = [
    pytest.param(SKIP_OTHERS.format(body="  ld r2 12"), {}, id="read-miss"),
    pytest.param(SKIP_OTHERS.format(body="  ld r2 12\n  st r2 13"), {}, id="mesi-silent"),
    pytest.param(BARRIER.format(body="  st r5 12"), {}, id="upgrade"),
    pytest.param(OWNED, {}, id="forward"),
    pytest.param(RACE, {}, id="race"),
    pytest.param(SKIP_OTHERS.format(body="  mov r2 #5\n  st r2 12\n  ld r3 0"), {"cache_lines": 1, "cache_ways": 1},
                 id="victim"),
    pytest.param(RACE, {"router_latency": 2, "link_latency": 3, "flit_words": 1}, id="slow-network"),
]
# the same as (program, machine) pairs and their names (tests/test_network_trace.py)
HAND = [tuple(p.values) for p in HAND_PROGRAMS]
HAND_IDS = [p.id for p in HAND_PROGRAMS]


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("src,cfg", HAND_PROGRAMS)
def test_hand_programs_equal_the_reference_model(src, cfg, cache, interconnect):
    assert_equal(src, cache=cache, interconnect=interconnect, **cfg)


def test_the_worked_read_miss_takes_fifteen_cycles_on_the_fast_engine():
    # the hand-worked figure of docs/timing-model.md, independent of the reference model
    res = Machine(assemble(SKIP_OTHERS.format(body="  ld r2 12")), cores=4, cache="msi", interconnect="mesh",
                  coherence="directory", mem_words=MEM).run()
    c = res.cores[0]
    assert (c["miss_cycles"], c["miss_queueing_cycles"], c["miss_network_cycles"], c["miss_home_cycles"]) == \
        (15, 0, 13, 2)
    assert res.cycles == 19 and res.network["messages"]["GetS"] == 1 and res.network["flits"] == 3


@pytest.mark.parametrize("seed", range(3))
def test_an_inv_that_overtakes_the_owners_data_equals_the_reference_model(seed):
    assert_equal(flooded_race(seed), mem_words=1024, **RACE_CFG)


#: (source, configuration): programs that fault over a network.
FAULT_PROGRAMS = [
    pytest.param(".code 0\n  ld r1 100\n  trap r0 #0\n", {}, id="address"),
    pytest.param(".code 0\n:l\n  ld r1 12\n  st r1 13\n  jmp l\n", {"max_cycles": 50}, id="cycle-limit"),   # in a miss
    pytest.param(".code 0\n  cid r1\n  ld r2 12\n  div r3 r2 r1\n  trap r0 #0\n", {}, id="division"),   # core 0
    pytest.param(".stacks 32 8 4\n.code 0\n  cid r1\n  ld r2 12\n  st r2 40\n  trap r0 #0\n", {}, id="stack"),
]


@pytest.mark.parametrize("src,cfg", FAULT_PROGRAMS)
def test_faults_equal_the_reference_models(src, cfg):
    assert assert_equal(src, **cfg) == {}          # the reference model faulted, and so did the engine


# -- random programs ------------------------------------------------------------------------------

def drf_case(seed: int, cores: int) -> tuple[str, dict]:
    rng = random.Random(seed)
    src = drf_program(rng, cores)
    return src, dict(cores=cores, cache=rng.choice(["msi", "mesi"]), cache_lines=rng.choice([1, 2, 4, 8]),
                     cache_ways=rng.choice([1, 1, 2]), line_words=rng.choice([1, 2, 4]),
                     interconnect=rng.choice(["ring", "mesh"]), link_latency=rng.randint(1, 3),
                     router_latency=rng.randint(0, 2), flit_words=rng.choice([1, 2, 4]),
                     mem_latency=rng.randint(1, 4), cache_hit_latency=rng.choice([1, 2]),
                     mem_words=16 + 4 * cores + 16)


@pytest.mark.parametrize("seed", range(16))
def test_random_drf_programs_equal_the_reference_model(seed):
    src, cfg = drf_case(seed, [2, 3, 4, 5, 6, 8, 9, 12, 16][seed % 9])
    if cfg["cache_ways"] > cfg["cache_lines"]:
        cfg["cache_ways"] = cfg["cache_lines"]
    raw = assert_equal(src, **cfg)
    assert raw["network"]["messages"]["GetM"] > 0


SHAPES = [(1, 1, 1), (2, 1, 1), (2, 1, 2), (2, 1, 4), (4, 2, 2), (4, 4, 1), (8, 2, 4), (64, 2, 4)]

#: A random networked machine's parameters (the store-buffer suites add theirs).
NETWORK_FIELDS = {
    "cores": st.integers(1, 16),
    "mem_latency": st.integers(1, 4),
    "cache": st.sampled_from(["msi", "mesi"]),
    "shape": st.sampled_from(SHAPES),
    "cache_hit_latency": st.sampled_from([1, 1, 2]),
    "interconnect": st.sampled_from(["ring", "mesh"]),
    "link_latency": st.integers(1, 3),
    "router_latency": st.integers(0, 2),
    "flit_words": st.sampled_from([1, 2, 4]),
}
network_configs = st.fixed_dictionaries(NETWORK_FIELDS)


@settings(max_examples=60, deadline=None)
@given(programs(), network_configs)
def test_random_programs_equal_the_reference_model(src, cfg):
    """s2gen's programs (loads, stores, xchg, push and pop, barriers, prints, faults) at 1-16 tiles."""
    lines, ways, words = cfg.pop("shape")
    assert_equal(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                 **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_random_drf_programs_at_64_cores_equal_the_reference_model(seed):
    src, cfg = drf_case(seed, 64)
    cfg["cache_ways"] = 1
    assert_equal(src, **cfg)


# -- what users see ---------------------------------------------------------------------------------

def test_s2mc_run_on_the_fast_engine_prints_the_reference_models_network_counters(tmp_path):
    from test_directory import NET_ARGS
    src = BARRIER.format(body="  st r5 12")
    ref = cli(tmp_path, src, *NET_ARGS)
    fast = cli(tmp_path, src, *(a if a != "reference" else "fast" for a in NET_ARGS))
    assert ref.exit_code == 0 and fast.exit_code == 0, fast.output
    assert fast.output == ref.output
    assert "messages: GetS 3, GetM 1, Inv 2, Inv-Ack 2, Data 4; 16 flits, 16 hops" in fast.output.splitlines()


def test_the_fast_engine_refuses_a_trace_of_a_network_with_store_buffers_in_one_line():
    """The event log of a network has the messages but not yet the drains: a tso or pso network is
    refused when a log or a timeline is asked for, never logged without its drains."""
    for kw in ({"trace": True}, {"timeline": True}):
        with pytest.raises(S2mcError, match="^interconnect mesh: the event log of a network has no store-buffer "
                                            "drains yet; trace it under consistency sc \\(not tso\\)$"):
            Machine(assemble(".code 0\n  trap r0 #0\n"), cache="msi", interconnect="mesh", coherence="directory",
                    consistency="tso", **kw)


def test_registers_of_a_core_outside_the_machine_are_refused():
    m = Machine(assemble(".code 0\n  trap r0 #0\n"), cores=2, cache="msi", interconnect="ring",
                coherence="directory")
    m.run()
    with pytest.raises(S2mcError, match="^core 2 is not one of the 2 cores$"):
        m.registers(2)
