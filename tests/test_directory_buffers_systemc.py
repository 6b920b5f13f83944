"""Store buffers (consistency tso, pso) over a ring or a mesh on the SystemC engine equal the fast
engine (which test_directory_buffers.py holds to the reference model) on every cycle, per-core
counter (the store buffer's included), network counter, register, memory word and output: the
hand-worked programs of test_directory_buffers.py, data-race-free random programs and s2gen's
random programs at 2-16 tiles (64 under the slow marker), and s2mc litmus run for run."""
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from s2gen import programs
from test_directory_buffers import HAND_PROGRAMS, SB, buffered_configs, drf_case
from test_directory import MEM

from s2mc.cli.main import cli as main
from s2mc.experiments.litmus import delayed, load, run_once, timings
from s2mc.isa import assemble
from s2mc.simulator import Machine
from systemc_helpers import assert_same, needs_systemc

pytestmark = needs_systemc


def assert_equal(src: str, **cfg) -> dict:
    """Runs src on the fast and the SystemC engines over a network with store buffers; everything
    observable must agree. Returns the fast engine's."""
    cfg = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory", "mem_words": MEM,
           "consistency": "tso", **cfg}
    return assert_same(assemble(src), trace=False, mem_read=cfg["mem_words"], **cfg)


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("consistency", ["tso", "pso"])
@pytest.mark.parametrize("src,cfg", HAND_PROGRAMS)
def test_hand_programs_equal_the_fast_engine(src, cfg, consistency, cache, interconnect):
    out = assert_equal(src, consistency=consistency, cache=cache, interconnect=interconnect, **cfg)
    assert "fault" not in out and sum(c["store_drains"] for c in out["cores"]) > 0


def test_the_systemc_engine_runs_store_buffers_over_the_mesh_not_sc():
    # the relaxed outcome needs the buffers: an engine that ran sc could not print it
    m = Machine(assemble(SB.format(fence="")), engine="systemc", cores=4, cache="msi", interconnect="mesh",
                coherence="directory", mem_words=MEM, consistency="tso")
    res = m.run()
    assert (m.registers(0)[4], m.registers(1)[4]) == (0, 0)
    assert res.cores[0]["store_drains"] == 1 and res.cores[0]["drain_bus_accesses"] == 1


@pytest.mark.parametrize("seed", range(9))
def test_random_drf_programs_equal_the_fast_engine(seed):
    cfg = drf_case(seed, [2, 3, 4, 5, 6, 8, 9, 12, 16][seed])
    out = assert_equal(cfg.pop("src"), **cfg)
    assert sum(c["store_drains"] for c in out["cores"]) > 0


@settings(max_examples=25, deadline=None)
@given(programs(), buffered_configs)
def test_random_programs_equal_the_fast_engine(src, cfg):
    """s2gen's programs (loads, stores, xchg, push and pop, fences, barriers, prints, faults) at
    2-16 tiles with store buffers."""
    lines, ways, words = cfg.pop("shape")
    assert_equal(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                 **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_random_drf_programs_at_64_cores_equal_the_fast_engine(seed):
    cfg = drf_case(seed, 64)
    cfg["cache_ways"] = 1
    out = assert_equal(cfg.pop("src"), **cfg)
    assert sum(c["store_drains"] for c in out["cores"]) > 0


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("model", ["tso", "pso"])
def test_litmus_runs_on_the_network_equal_the_fast_engine_run_for_run(interconnect, model):
    test = load("sb.s")
    for timing in timings(test.cores, 8, 3, model, interconnect):
        prog = delayed(test.program, timing.delays, timing.loads, timing.stores)
        assert run_once(prog, test.cores, "systemc", model, timing, "") == \
            run_once(prog, test.cores, "fast", model, timing, "")


def test_s2mc_litmus_on_the_systemc_engine_gives_the_fast_engines_counts():
    args = ["litmus", "sb.s", "--model", "tso", "--interconnect", "mesh", "--coherence", "directory",
            "--runs", "12", "--json"]
    fast = CliRunner().invoke(main, [*args, "--engine", "fast"])
    sysc = CliRunner().invoke(main, [*args, "--engine", "systemc"])
    assert fast.exit_code == 0 and sysc.exit_code == 0, sysc.output
    assert sysc.output == fast.output.replace('"engine": "fast"', '"engine": "systemc"')
    assert '"0 0\\n"' in sysc.output   # the store-buffering outcome only store buffers allow
