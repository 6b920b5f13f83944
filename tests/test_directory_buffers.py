"""Store buffers (consistency tso, pso) over a ring or a mesh with the directory (docs/timing-model.md,
"Store buffers over the network"): the hand-worked examples on the reference model, the fast
engine equal to it on them and on random programs, and the litmus tests on the networked machine.

Every expected cycle below was worked out by hand from the written rules before the model ran it:
4 cores on a 2 x 2 mesh, MSI, L = 2, R = 1, Lk = 1, 4 words a line and a flit (T(h, 1) = 2h + 2,
T(h, 2) = 2h + 3); word 12 is line 3, whose home is tile 3 at (1, 1).
"""
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from s2gen import programs
from test_directory import MEM, SKIP_OTHERS, drf_program
from test_directory import run as ref_run
from test_directory_fast import NETWORK_FIELDS, assert_equal

from s2mc.experiments.litmus import bundled, delayed, load, run_litmus, run_once, timings
from s2mc.isa import assemble
from s2mc.simulator import Machine

TSO = dict(consistency="tso")


def drains(m, core: int) -> list[tuple]:
    """Core's drains in the reference model's log: (cycle, event, wait, address, value)."""
    return [(e[0], e[3], e[4], e[5], e[7]) for e in m.trace if e[1] == core and e[3].startswith("drain")]


# -- the worked examples ------------------------------------------------------------------------

RUNS_ON = SKIP_OTHERS.format(body="  mov r2 #5\n  st r2 12\n  mov r3 #1\n  add r3 r3 #2")


def test_a_store_that_misses_drains_while_the_core_runs_on():
    # st at 3 enters the buffer; its drain starts at 4: GetM 0 -> home 3 delivered at 4 + T(2, 1) = 10,
    # Data created at 12, delivered at 12 + T(2, 2) = 19: the store takes effect at 19 (15 cycles).
    # The core runs mov at 4 and add at 5; the trap at 6 waits for the buffer until 19: finish 20.
    raw, m = ref_run(RUNS_ON, **TSO)
    c = raw["cores"][0]
    assert drains(m, 0) == [(19, "drain GetM 15", 0, 12, 5)]
    assert (c["finish_cycle"], c["instructions"], c["fence_stall_cycles"]) == (20, 7, 13)
    assert (c["store_drains"], c["drain_bus_accesses"], c["drain_bus_cycles"], c["mem_writes"]) == (1, 1, 15, 1)
    assert (c["dir_misses"], c["miss_cycles"], c["mem_accesses"]) == (1, 15, 1)
    assert raw["cycles"] == 20 and m.memory()[12] == 5 and m.cores[0].r[3] == 3
    sc, _ = ref_run(RUNS_ON)                      # sc: the core waits 15 cycles at the store
    assert sc["cycles"] == 22


FENCE_REMOTE = """
.code 0
  cid r1
  mov r2 #1
  eq r3 r1 r2
  jf r3 other
  mov r4 #9
  st r4 12
:other
  sync
  jt r1 done
  mov r2 #5
  st r2 12
  fence
:done
  trap r0 #0
.end
"""


def test_a_fence_waits_for_its_stores_getm_forwarded_to_the_owner():
    # Core 1 stores 9 at 5; its sync waits for the drain: GetM 1 -> 3 at 6, delivered at 10, Data
    # at 12 + T(1, 2) = 17; core 1 owns line 3 in M. The barrier completes at 17, core 0 resumes at
    # 18: jt 18, mov 19, st 20, fence 21 held. Its drain's GetM (at 21) reaches home 3 at 27 (M,
    # owner 1): Fwd-GetM at 28, at core 1 at 32, its Data at core 0 at 37 (16 cycles, the three-hop
    # forward). The fence issues at 37 (16 cycles held), the trap at 38: finish 39.
    raw, m = ref_run(FENCE_REMOTE, **TSO)
    c0, c1 = raw["cores"][0], raw["cores"][1]
    assert drains(m, 1) == [(17, "drain GetM 11", 0, 12, 9)]
    assert drains(m, 0) == [(37, "drain GetM 16", 0, 12, 5)]
    assert (c1["fence_stall_cycles"], c0["fence_stall_cycles"], c0["finish_cycle"]) == (11, 16, 39)
    assert raw["network"]["messages"]["Fwd-GetM"] == 1 and m.memory()[12] == 5
    # the word a store found when it entered the buffer is the coherent one: core 1's copy, not memory
    assert [(e[0], e[6], e[7]) for e in m.trace if e[1] == 0 and e[3] == "buffer"] == [(20, 9, 5)]


SB = """
.code 0
  cid r1
  mov r2 #2
  lt r3 r1 r2
  jf r3 done
  mov r5 #1
  jt r1 one
  st r5 0
{fence}  ld r4 4
  jmp done
:one
  st r5 4
{fence}  ld r4 0
:done
  trap r0 #0
.end
"""


@pytest.mark.parametrize("consistency,fence,relaxed", [
    ("sc", "", False), ("tso", "", True), ("pso", "", True), ("tso", "  fence\n", False)])
def test_store_buffering_is_relaxed_under_tso_over_the_mesh(consistency, fence, relaxed):
    # Both stores enter at 6; at 7 both loads miss and take their core's one request before the
    # drains start (step 3 comes before 3b): each GetS crosses 1 hop (delivered at 11), the home
    # reads memory (Data at 13, delivered at 18): both read 0, and only then do the drains go.
    raw, m = ref_run(SB.format(fence=fence), consistency=consistency)
    seen = (m.cores[0].r[4], m.cores[1].r[4])
    assert (seen == (0, 0)) == relaxed
    assert m.memory()[0] == m.memory()[4] == 1
    if relaxed:
        assert [e[0] for e in m.trace if e[3] == "done Data"] == [18, 18]


def test_a_full_buffer_holds_a_store_until_a_drain_completes():
    # E = 1: the second store waits for the first one's GetM (15 cycles from 4): enters at 19
    src = SKIP_OTHERS.format(body="  mov r2 #5\n  st r2 12\n  st r2 13\n  mov r3 #1")
    raw, m = ref_run(src, consistency="tso", store_buffer_entries=1)
    c = raw["cores"][0]
    assert c["store_buffer_full_stalls"] == 15
    # it entered at 19 (held 4 .. 18), the port is free from 20: its drain hits the line (M) in 3b
    # of 20; mov at 20, the trap at 21 finds the buffer empty
    assert drains(m, 0) == [(19, "drain GetM 15", 0, 12, 5), (20, "drain hit", 0, 13, 5)]
    assert c["finish_cycle"] == 22 and c["dir_hits"] == 1 and c["fence_stall_cycles"] == 0


# -- the fast engine equals the reference model -------------------------------------------------

#: The hand-worked programs with their machine (test_directory_buffers_systemc.py runs them too).
HAND_PROGRAMS = [
    pytest.param(RUNS_ON, {}, id="runs-on"),
    pytest.param(FENCE_REMOTE, {}, id="fence-remote"),
    pytest.param(SB.format(fence=""), {}, id="sb"),
    pytest.param(SB.format(fence="  fence\n"), {}, id="sb-fenced"),
    pytest.param(SKIP_OTHERS.format(body="  mov r2 #5\n  st r2 12\n  st r2 13\n  ld r3 13\n  st r2 0"),
                 {"store_buffer_entries": 1}, id="full"),
    pytest.param(SKIP_OTHERS.format(body="  mov r2 #5\n  st r2 12\n  st r2 4\n  ld r3 0\n  xchg r2 r0"),
                 {"cache_lines": 1, "cache_ways": 1}, id="victim-xchg"),
]


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("consistency", ["tso", "pso"])
@pytest.mark.parametrize("src,cfg", HAND_PROGRAMS)
def test_hand_programs_equal_the_reference_model(src, cfg, consistency, cache, interconnect):
    assert_equal(src, consistency=consistency, cache=cache, interconnect=interconnect, **cfg)


def drf_case(seed: int, cores: int) -> dict:
    rng = random.Random(seed)
    src = drf_program(rng, cores)
    lines = rng.choice([1, 2, 4, 8])
    return dict(src=src, cores=cores, cache=rng.choice(["msi", "mesi"]), cache_lines=lines,
                cache_ways=min(lines, rng.choice([1, 1, 2])), line_words=rng.choice([1, 2, 4]),
                interconnect=rng.choice(["ring", "mesh"]), consistency=rng.choice(["tso", "pso"]),
                store_buffer_entries=rng.choice([1, 2, 4, 8]), link_latency=rng.randint(1, 3),
                router_latency=rng.randint(0, 2), flit_words=rng.choice([1, 2, 4]),
                mem_latency=rng.randint(1, 4), cache_hit_latency=rng.choice([1, 2]),
                mem_words=16 + 4 * cores + 16)


@pytest.mark.parametrize("seed", range(12))
def test_random_drf_programs_equal_the_reference_model(seed):
    cfg = drf_case(seed, [2, 3, 4, 5, 6, 8, 9, 12, 16][seed % 9])
    raw = assert_equal(cfg.pop("src"), **cfg)
    assert sum(c["store_drains"] for c in raw["cores"]) > 0


buffered_configs = st.fixed_dictionaries({
    **NETWORK_FIELDS,
    "cores": st.integers(2, 16),
    "consistency": st.sampled_from(["tso", "pso"]),
    "store_buffer_entries": st.sampled_from([1, 2, 4, 8]),
})


@settings(max_examples=60, deadline=None)
@given(programs(), buffered_configs)
def test_random_programs_equal_the_reference_model(src, cfg):
    """s2gen's programs (loads, stores, xchg, push and pop, fences, barriers, prints, faults) at
    2-16 tiles with store buffers."""
    lines, ways, words = cfg.pop("shape")
    assert_equal(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                 **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_random_drf_programs_at_64_cores_equal_the_reference_model(seed):
    cfg = drf_case(seed, 64)
    cfg["cache_ways"] = 1
    assert_equal(cfg.pop("src"), **cfg)


def test_the_fast_engine_runs_store_buffers_over_the_mesh_not_sc():
    # the relaxed outcome needs the buffers: an engine that ran sc could not print it
    m = Machine(assemble(SB.format(fence="")), cores=4, cache="msi", interconnect="mesh",
                coherence="directory", mem_words=MEM, consistency="tso")
    res = m.run()
    assert (m.registers(0)[4], m.registers(1)[4]) == (0, 0)
    assert res.cores[0]["store_drains"] == 1 and "fence_stall_cycles" in res.cores[0]


@pytest.mark.parametrize("seed", range(6))
def test_random_drf_programs_under_tso_end_with_the_bus_machines_memory(seed):
    # an xchg lock released by a plain store is correct under tso: the store leaves in program order
    from s2mc.simulator.directory import DirectoryMachine
    from s2mc.simulator.reference import ReferenceMachine
    cfg = drf_case(seed, [2, 3, 4, 6, 8, 9][seed])
    prog = assemble(cfg.pop("src"))
    bus = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=cfg["cores"], cache="msi",
                           mem_words=cfg["mem_words"])
    bus.run()
    cfg.update(consistency="tso", coherence="directory")
    net = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, check_invariants=True, **cfg)
    net.run()
    assert net.memory() == bus.memory()


# -- s2mc litmus on the networked machine -------------------------------------------------------

def test_litmus_sees_store_buffering_relaxed_under_tso_on_the_mesh():
    r = run_litmus("sb.s", "tso", "fast", 60, 0, interconnect="mesh")
    assert r.outcomes["0 0\n"] > 0 and r.forbidden == [] and r.interconnect == "mesh"
    fenced = run_litmus("sb_fence.s", "tso", "fast", 60, 0, interconnect="mesh")
    assert "0 0\n" not in fenced.outcomes and fenced.forbidden == []


@pytest.mark.parametrize("model", ["sc", "tso", "pso"])
def test_every_bundled_litmus_outcome_on_the_mesh_is_one_the_model_allows(model):
    for path in bundled():
        r = run_litmus(str(path), model, "fast", 25, 1, interconnect="mesh")
        assert r.forbidden == [], path.name


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
def test_litmus_runs_on_the_network_equal_the_reference_model_run_for_run(interconnect):
    test = load("mp.s")
    for timing in timings(test.cores, 12, 5, "pso", interconnect):
        prog = delayed(test.program, timing.delays, timing.loads, timing.stores)
        assert run_once(prog, test.cores, "fast", "pso", timing, "") == \
            run_once(prog, test.cores, "reference", "pso", timing, "")


def litmus_cli(*args):
    from click.testing import CliRunner
    from s2mc.cli.main import cli as main
    return CliRunner().invoke(main, ["litmus", *map(str, args)])


def test_s2mc_litmus_says_which_network_it_ran_on():
    out = litmus_cli("sb.s", "--model", "tso", "--interconnect", "mesh", "--coherence", "directory", "--runs", 20)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith("sb under TSO: 20 runs on the fast engine, mesh with directory coherence (seed 0)")
    assert lines[-1].startswith("Run 0 (every core starting at once on the default mesh, cache msi): ")
    data = litmus_cli("sb.s", "--model", "tso", "--interconnect", "ring", "--runs", 5, "--json")
    assert '"interconnect": "ring"' in data.output and '"coherence": "directory"' in data.output


@pytest.mark.parametrize("args,message", [
    (("--interconnect", "mesh", "--coherence", "snoop"), "litmus: interconnect mesh needs coherence directory"),
    (("--coherence", "directory"), "litmus: coherence directory needs interconnect ring or mesh"),
    (("--interconnect", "torus"), "--interconnect"),
])
def test_s2mc_litmus_refuses_a_network_that_cannot_be_in_one_line(args, message):
    out = litmus_cli("sb.s", "--runs", 2, *args)
    assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output


def test_s2mc_run_prints_the_store_buffers_of_a_network_run(tmp_path):
    from test_directory import cli
    out = cli(tmp_path, RUNS_ON, "--cores", 4, "--cache", "msi", "--interconnect", "mesh", "--coherence",
              "directory", "--consistency", "tso", "--mem-words", MEM)
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    head = lines.index("TSO store buffers: 4 entries per core")
    assert lines[head + 1].split() == ["core", "forwards", "drains", "drain", "GetM", "full", "stall", "drain",
                                       "wait"]
    assert lines[head + 2].split() == ["0", "0", "1", "1", "0", "13"]
    assert "total: 20 cycles, 16 instructions, 13 stall cycles" in lines
