"""The SystemC engine's ring and mesh with directory coherence equal the fast engine (which
test_directory_fast.py holds to the reference model) on every cycle, per-core and network counter,
register, memory word and output: the hand-worked programs of test_directory.py, its data-race-free
random programs at 4-16 cores (64 under the slow marker) and s2gen's random programs (faults and
the cycle limit included), MSI and MESI."""
import random

import pytest
from hypothesis import given, settings
from s2gen import programs
from test_directory import BARRIER, MEM, NET_ARGS, RACE_CFG, SKIP_OTHERS, cli, flooded_race
from test_directory_fast import FAULT_PROGRAMS, HAND_PROGRAMS, drf_case, network_configs

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine
from systemc_helpers import assert_same, needs_systemc, run_child

pytestmark = needs_systemc


def assert_equal(src: str, **cfg) -> dict:
    """Runs src on the fast and the SystemC engines over a network; everything observable must
    agree (a fault's kind, core, pc, cycle and message included). Returns the fast engine's."""
    cfg = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory", "mem_words": MEM, **cfg}
    return assert_same(assemble(src), trace=False, mem_read=cfg["mem_words"], **cfg)


# -- the hand-worked programs of test_directory.py ----------------------------------------------

@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("src,cfg", HAND_PROGRAMS)
def test_hand_programs_equal_the_fast_engine(src, cfg, cache, interconnect):
    out = assert_equal(src, cache=cache, interconnect=interconnect, **cfg)
    assert "fault" not in out and out["network"]["messages"]["GetS"] + out["network"]["messages"]["GetM"] > 0


def test_the_worked_read_miss_takes_fifteen_cycles_on_the_systemc_engine():
    # the hand-worked figure of docs/timing-model.md, independent of the other engines
    res = Machine(assemble(SKIP_OTHERS.format(body="  ld r2 12")), engine="systemc", cores=4, cache="msi",
                  interconnect="mesh", coherence="directory", mem_words=MEM).run()
    c = res.cores[0]
    assert (c["miss_cycles"], c["miss_queueing_cycles"], c["miss_network_cycles"], c["miss_home_cycles"]) == \
        (15, 0, 13, 2)
    assert res.cycles == 19 and res.network["messages"]["GetS"] == 1 and res.network["flits"] == 3


@pytest.mark.parametrize("seed", range(2))
def test_an_inv_that_overtakes_the_owners_data_equals_the_fast_engine(seed):
    assert_equal(flooded_race(seed), mem_words=1024, **RACE_CFG)


@pytest.mark.parametrize("src,cfg", FAULT_PROGRAMS)
def test_faults_equal_the_fast_engines(src, cfg):
    assert "fault" in assert_equal(src, **cfg)


def test_strings_read_the_coherent_memory_as_on_the_fast_engine():
    # core 1 writes "hi" into its own copy (M); core 0 prints the words with trap #3 while they are
    # only in core 1's cache, and again after a barrier
    src = """
.code 0
  cid r1
  jf r1 reader
  mov r2 #104
  st r2 40
  mov r2 #105
  st r2 41
  sync
  trap r0 #0
:reader
  mov r3 #40
  trap r3 #3
  sync
  trap r3 #3
  trap r0 #0
.data 40
  0
  0
  0
.end
"""
    for interconnect in ("ring", "mesh"):
        out = assert_equal(src, cores=2, interconnect=interconnect, line_words=4)
        assert out["output"].endswith("hi")


# -- random programs ------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(14))
def test_random_drf_programs_equal_the_fast_engine(seed):
    src, cfg = drf_case(seed, [4, 5, 6, 8, 9, 12, 16][seed % 7])
    cfg["cache_ways"] = min(cfg["cache_ways"], cfg["cache_lines"])
    out = assert_equal(src, **cfg)
    assert out["network"]["messages"]["GetM"] > 0


@settings(max_examples=50, deadline=None)
@given(programs(), network_configs)
def test_random_programs_equal_the_fast_engine(src, cfg):
    """s2gen's programs (loads, stores, xchg, push and pop, barriers, prints, faults) at 1-16 tiles."""
    lines, ways, words = cfg.pop("shape")
    assert_equal(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                 **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("interconnect", ["ring", "mesh"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("seed", range(4))
def test_random_drf_programs_at_64_cores_equal_the_fast_engine(seed, cache, interconnect):
    src, cfg = drf_case(seed, 64)
    assert_equal(src, **{**cfg, "cache_ways": 1, "cache": cache, "interconnect": interconnect})


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(programs(), network_configs)
def test_random_programs_at_49_to_64_cores_equal_the_fast_engine(src, cfg):
    lines, ways, words = cfg.pop("shape")
    cfg["cores"] += 48   # 49-64 tiles: a ring of up to 64, meshes of 7x7 to 8x8
    assert_equal(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                 **cfg)


# -- what users see ---------------------------------------------------------------------------------

def test_s2mc_run_on_the_systemc_engine_prints_the_fast_engines_network_counters(tmp_path):
    src = BARRIER.format(body="  st r5 12")
    args = [a if a != "reference" else "fast" for a in NET_ARGS]
    fast = cli(tmp_path, src, *args)
    sysc = cli(tmp_path, src, *(a if a != "fast" else "systemc" for a in args))
    assert fast.exit_code == 0 and sysc.exit_code == 0, sysc.output
    assert sysc.output == fast.output.replace("engine fast", "engine systemc")
    assert "messages: GetS 3, GetM 1, Inv 2, Inv-Ack 2, Data 4; 16 flits, 16 hops" in sysc.output.splitlines()


def test_the_systemc_engine_refuses_a_waveform_or_trace_of_a_network_in_one_line(tmp_path):
    prog = assemble(".code 0\n  trap r0 #0\n")
    net = dict(engine="systemc", cache="msi", interconnect="ring", coherence="directory")
    with pytest.raises(S2mcError, match="^interconnect ring: the systemc engine draws no VCD waveform of a network"):
        Machine(prog, vcd=tmp_path / "w.vcd", **net)
    with pytest.raises(S2mcError, match="^interconnect ring: the systemc engine keeps no trace or timeline"):
        Machine(prog, trace=True, **net)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("line,message", [
    ("network mesh 1 1 2", "network mesh needs a cache line of protocol msi or mesi before it"),
    ("cache moesi 4 1 2 1\nnetwork ring 1 1 2", "network ring needs a cache line of protocol msi or mesi"),
    ("cache msi 4 1 2 1\nnetwork torus 1 1 2", "unknown network 'torus' (choose ring, mesh)"),
    ("cache msi 4 1 2 1\nnetwork ring 0 1 2", "link latency '0' is not a number in 1..100"),
    ("cache msi 4 1 2 1\nnetwork ring 1 1 2\nconsistency sc 4", "unknown consistency 'sc' (choose tso, pso)"),
])
def test_the_child_refuses_a_network_it_cannot_simulate_in_one_line(tmp_path, line, message):
    proc = run_child(tmp_path, line)
    assert proc.returncode == 2 and proc.stderr.startswith(f"s2mc-systemc: error: {message}")
    assert len(proc.stderr.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists()


def test_the_child_refuses_a_waveform_of_a_network_in_one_line_and_leaves_no_file(tmp_path):
    proc = run_child(tmp_path, "cache msi 4 1 2 1\nnetwork mesh 1 1 2", "--vcd", str(tmp_path / "w.vcd"))
    assert proc.returncode == 2 and proc.stderr == ("s2mc-systemc: error: the VCD waveform (--vcd) of a network is "
                                                    "not drawn yet: run it without\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.txt"]
