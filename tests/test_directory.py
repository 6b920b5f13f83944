"""Directory coherence over a ring and a mesh (docs/timing-model.md, "Directory coherence over a
network"), on the reference model.

Every expected cycle below was worked out by hand from the written rules (the worked examples of
that section) before the model ran it. Unless a test says otherwise: 4 cores on a 2 x 2 mesh, MSI,
L = 2, R = 1, Lk = 1, 4 words a line and a flit (a control message is 1 flit, a data message 2);
word 12 is line 3, whose home is tile 3 at (1, 1).
"""
import random

import pytest

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.directory import DirectoryMachine
from s2mc.simulator.network import Topology
from s2mc.simulator.reference import ReferenceMachine

MEM = 64
MESH = dict(cores=4, cache="msi", interconnect="mesh", coherence="directory")


def run(src: str, **cfg):
    """Runs src on the directory machine, checking coherence at every cycle; returns (raw, machine)."""
    prog = assemble(src)
    m = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, trace=True, check_invariants=True,
                         **{**MESH, "mem_words": MEM, **cfg})
    raw = m.run()
    for c, stall in zip(raw["cores"], raw["stall_cycles"]):
        # every cycle of a core before its finish: an instruction's first, a stall or a barrier wait
        assert stall == c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
        # the split of the misses' latency adds up
        assert c["miss_cycles"] == c["miss_queueing_cycles"] + c["miss_network_cycles"] + c["miss_home_cycles"]
    return raw, m


def done(m, core: int) -> list[tuple]:
    """Core's completed misses: (cycle, event, latency), in order."""
    return [(e[0], e[3], e[4]) for e in m.trace if e[1] == core and e[3].startswith("done ")]


def messages(raw) -> dict:
    return {k: n for k, n in raw["network"]["messages"].items() if n}


# -- the network ----------------------------------------------------------------------------------

def test_mesh_layout_and_xy_routes():
    t = Topology("mesh", 4)
    assert (t.columns, t.rows) == (2, 2)
    assert t.route(0, 3) == [(0, "x+"), (1, "y+"), (3, "local")]
    assert t.route(3, 0) == [(3, "x-"), (2, "y-"), (0, "local")]
    assert [(Topology("mesh", n).columns, Topology("mesh", n).rows) for n in (1, 2, 3, 8, 16, 32, 64)] == \
        [(1, 1), (2, 1), (2, 2), (3, 3), (4, 4), (6, 6), (8, 8)]
    # 8 tiles on 3 x 3: router 8 has no tile, and the route from 7 (1, 2) to 2 (2, 0) passes it
    assert Topology("mesh", 8).route(7, 2) == [(7, "x+"), (8, "y-"), (5, "y-"), (2, "local")]


def test_ring_routes_take_the_shorter_way_and_ties_go_clockwise():
    t = Topology("ring", 6)
    assert t.route(0, 2) == [(0, "cw"), (1, "cw"), (2, "local")]
    assert t.route(0, 5) == [(0, "ccw"), (5, "local")]
    assert t.hops(0, 3) == 3 and t.route(0, 3)[0] == (0, "cw")
    assert t.route(4, 1)[0] == (4, "cw")          # 4 -> 5 -> 0 -> 1, the tie


# -- the worked examples --------------------------------------------------------------------------

SKIP_OTHERS = """
.code 0
  cid r1
  jt r1 done
{body}
:done
  trap r0 #0
.data 12
  77
.end
"""


def test_a_read_miss_to_a_remote_home():
    # T(2,1) + L + T(2,2) = 6 + 2 + 7: the load issues at 2 and takes effect at 17
    raw, m = run(SKIP_OTHERS.format(body="  ld r2 12"))
    assert done(m, 0) == [(17, "done Data", 15)]
    assert m.cores[0].r[2] == 77
    assert raw["cores"][0]["finish_cycle"] == 19 and raw["cycles"] == 19
    assert messages(raw) == {"GetS": 1, "Data": 1}
    assert (raw["network"]["flits"], raw["network"]["hops"]) == (3, 4)
    c = raw["cores"][0]
    assert (c["miss_cycles"], c["miss_queueing_cycles"], c["miss_network_cycles"], c["miss_home_cycles"]) == \
        (15, 0, 13, 2)
    assert raw["cores"][3]["home_busy_cycles"] == 2
    # the home's tile sent the Data, core 0 the GetS
    assert [k["messages_sent"] for k in raw["cores"]] == [1, 0, 0, 1]


def test_mesi_gives_the_first_reader_an_exclusive_copy_that_writes_silently():
    raw, m = run(SKIP_OTHERS.format(body="  ld r2 12\n  st r2 13"), cache="mesi")
    assert done(m, 0) == [(17, "done Data", 15)]
    assert raw["cores"][0]["dir_hits"] == 1 and messages(raw) == {"GetS": 1, "Data": 1}
    assert m.memory()[13] == 77 and m.mem[13] == 0       # the line is M in the cache, memory stale


BARRIER = """
.code 0
  cid r1
  mov r2 #2
  le r3 r1 r2
  jf r3 skip
  ld r4 12
:skip
  sync
  jt r1 done
  mov r5 #9
{body}
:done
  trap r0 #0
.data 12
  77
.end
"""


def test_an_upgrade_with_two_sharers_waits_for_both_acks():
    # cores 0, 1, 2 read the line, then core 0 stores: 16 cycles at zero load, +2 because the Inv to
    # core 2 queues behind the Data's two flits on router 3's x- port
    raw, m = run(BARRIER.format(body="  st r5 12"))
    loads, store = done(m, 0)
    assert store[1:] == ("done Inv-Ack", 18)
    assert messages(raw) == {"GetS": 3, "GetM": 1, "Inv": 2, "Inv-Ack": 2, "Data": 4}
    assert raw["network"]["copies_invalidated_per_getm"] == {2: 1}
    assert raw["cores"][3]["invalidations_sent"] == 2
    assert m.memory()[12] == 9


OWNED = """
.code 0
  cid r1
  mov r2 #1
  eq r3 r1 r2
  jf r3 skip
  st r1 12
:skip
  sync
  jt r1 done
  ld r6 12
:done
  trap r0 #0
.end
"""


def test_a_three_hop_forward_from_the_owner():
    # core 1 owns the line (M) after the barrier; core 0 reads it: 6 + 1 + 4 + 5 = 16
    raw, m = run(OWNED)
    (cycle, event, latency), = done(m, 0)
    assert (event, latency) == ("done Data", 16)
    assert m.cores[0].r[6] == 1
    assert messages(raw) == {"GetM": 1, "GetS": 1, "Fwd-GetS": 1, "Data": 3}
    entry = m.homes[3].entries[3]
    assert (entry["state"], entry["sharers"]) == ("S", {0, 1})
    assert m.mem[12] == 1                                 # the owner's Data reached memory
    c = raw["cores"][0]
    # the chain GetS -> Fwd-GetS -> Data: 6 + 4 + 5 in the network, 1 cycle at the home
    assert (c["miss_network_cycles"], c["miss_home_cycles"], c["miss_queueing_cycles"]) == (15, 1, 0)


RACE = """
.code 0
  cid r1
  mov r2 #2
  lt r3 r1 r2
  add r4 r1 #10
  jf r3 done
  st r4 12
:done
  trap r0 #0
.end
"""


def test_two_stores_racing_for_one_line_are_ordered_by_the_home():
    # both store at 5; core 1 (1 hop) reaches the home first and gets the line at 16, core 0's
    # GetM is forwarded to it, it gives the line up at 17 and core 0 stores at 22
    raw, m = run(RACE)
    assert done(m, 1) == [(16, "done Data", 11)]
    assert done(m, 0) == [(22, "done Data", 17)]
    assert messages(raw) == {"GetM": 2, "Fwd-GetM": 1, "Data": 2}
    assert raw["network"]["copies_invalidated_per_getm"] == {0: 1, 1: 1}     # the second took the owner's
    assert m.memory()[12] == 10
    assert [way.state for way in m.caches[0].sets[3 % 32] if way.line == 3] == ["M"]


def test_the_race_comes_out_the_same_every_run():
    results = {tuple(map(tuple, (done(run(RACE)[1], k) for k in range(2)))) for _ in range(3)}
    assert len(results) == 1


def test_a_victim_write_back_reaches_its_home():
    # one-line caches: the load of word 0 evicts line 3 (M): PutM to home 3, GetS to home 0 (local)
    body = "  mov r2 #5\n  st r2 12\n  ld r3 0"
    raw, m = run(SKIP_OTHERS.format(body=body), cache_lines=1, cache_ways=1)
    assert done(m, 0) == [(18, "done Data", 15), (26, "done Data", 7)]
    assert messages(raw) == {"GetM": 1, "GetS": 1, "PutM": 1, "Data": 2, "Put-Ack": 1}
    assert m.mem[12] == 5 and m.homes[3].entries[3]["state"] == "I"
    assert raw["network"]["quiet_cycle"] == 35           # the Put-Ack arrives at 34, after the halt


def test_a_ring_delivers_the_same_protocol():
    raw, m = run(SKIP_OTHERS.format(body="  ld r2 12"), interconnect="ring")
    # ring of 4: tile 0 -> tile 3 is one hop ccw: T(1,1) + L + T(1,2) = 4 + 2 + 5
    assert done(m, 0) == [(13, "done Data", 11)]


def flooded_race(seed: int) -> str:
    """Ring of 6, lines of 8 words: core 0 owns word 32 (line 4, home 4) after the barrier; core 2
    reads it (its GetS is forwarded to core 0, whose Data goes 0 -> 1 -> 2) while cores 1 and 3 stream
    misses to lines homed at tile 0, whose Data takes the same port 0:cw, and core 4 writes it."""
    rng = random.Random(seed)
    lines = ["  cid r1", "  jt r1 a1", "  mov r2 #5", "  st r2 32", ":a1", "  sync"]
    delay = rng.randint(0, 30)
    for k, body in ((1, "flood"), (2, "  ld r4 32"), (3, "flood"), (4, "  st r1 32")):
        lines += [f"  mov r2 #{k}", "  eq r3 r1 r2", f"  jf r3 b{k}"]
        if body == "flood":
            lines += [f"  ld r4 {48 * rng.randrange(1, 20)}" for _ in range(30)]
        else:
            lines += ["  add r0 r0 #0"] * (delay + (rng.randint(0, 14) if k == 4 else 0)) + [body]
        lines += [f":b{k}"]
    return ".code 0\n" + "\n".join(lines + ["  trap r0 #0"]) + "\n.end\n"

RACE_CFG = dict(cores=6, cache="msi", cache_lines=1, cache_ways=1, line_words=8, interconnect="ring",
                coherence="directory", router_latency=0, flit_words=1, mem_latency=1)


def test_an_inv_that_overtakes_the_owners_data_waits_for_it():
    # core 0's Data to core 2 queues behind the streams' 9-flit Data on port 0:cw, so the home's
    # Inv (for core 4's GetM, handled once the owner's Data reached memory) reaches core 2 first,
    # in IS^D: it waits, the load completes with the owner's 5, then the copy goes (same cycle)
    raw, m = run(flooded_race(0), mem_words=1024, **RACE_CFG)
    (loaded,) = [e[0] for e in m.trace if e[1] == 2 and e[3] == "done Data"]
    (invalidated,) = [e for e in m.trace if e[1] == 2 and e[3] == "state Inv"]
    assert invalidated[0] == loaded and invalidated[6:] == ("S", "I")
    assert m.cores[2].r[4] == 5 and m.memory()[32] == 4


# -- data-race-free random programs: the same memory as the bus, coherent at every cycle -----------

def drf_program(rng: random.Random, cores: int) -> str:
    """Locked increments of shared counters (words 1..4, xchg lock at word 0), private stores to each
    core's slot (words 16 + 4 x core ...), barriers between phases, and a last phase that copies a
    neighbour's slot: every run order gives the same final memory."""
    lines = ["  cid r1", "  mul r9 r1 #4", "  add r9 r9 #16"]     # r9: this core's slot
    for phase in range(rng.randint(1, 3)):
        for k in range(cores):
            lines += [f"  mov r2 #{k}", "  eq r3 r1 r2", f"  jf r3 p{phase}c{k}"]
            for op in range(rng.randint(1, 4)):
                if rng.random() < 0.5:
                    lbl = f"a{phase}c{k}o{op}"
                    counter = rng.randint(1, 4)
                    lines += [f":{lbl}", "  mov r4 #1", "  mov r5 #0", "  xchg r4 r5", f"  jt r4 {lbl}",
                              f"  ld r6 {counter}", f"  add r6 r6 #{rng.randint(1, 9)}", f"  st r6 {counter}",
                              "  st r0 0"]
                else:
                    lines += [f"  mov r6 #{rng.randint(1, 999)}", f"  st r6 @{rng.randint(0, 3)} r9"]
            lines += [f":p{phase}c{k}"]
        lines += ["  sync"]
    lines += ["  add r7 r1 #1", f"  mod r7 r7 #{cores}", "  mul r7 r7 #4", "  ld r6 @16 r7", "  st r6 @3 r9",
              "  trap r0 #0"]
    return ".code 0\n" + "\n".join(lines) + "\n.end\n"


@pytest.mark.parametrize("seed", range(12))
def test_random_drf_programs_end_with_the_bus_machines_memory(seed):
    rng = random.Random(seed)
    cores = rng.randint(2, 6)
    prog = assemble(drf_program(rng, cores))
    cfg = dict(cores=cores, cache=rng.choice(["msi", "mesi"]), cache_lines=rng.choice([1, 2, 4]),
               cache_ways=1, line_words=rng.choice([1, 2, 4]), mem_words=MEM)
    bus = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, **cfg)
    bus.run()
    net = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, **cfg, coherence="directory",
                           interconnect=rng.choice(["ring", "mesh"]), check_invariants=True,
                           link_latency=rng.randint(1, 3), router_latency=rng.randint(0, 2),
                           flit_words=rng.choice([1, 2, 4]), mem_latency=rng.randint(1, 4))
    raw = net.run()
    assert net.memory() == bus.memory()
    assert raw["network"]["quiet_cycle"] >= raw["cycles"] and net.net.in_flight == 0
    assert raw["network"]["messages"]["GetM"] > 0


# -- what is refused --------------------------------------------------------------------------------

HALT = ".code 0\n  trap r0 #0\n"


def test_every_engine_simulates_a_network():
    from s2mc.simulator import ENGINES, NETWORK_ENGINES
    assert set(NETWORK_ENGINES) == set(ENGINES)


@pytest.mark.parametrize("cfg,message", [
    (dict(interconnect="mesh"), "interconnect mesh needs coherence directory"),
    (dict(coherence="directory", cache="msi"), "coherence directory needs interconnect ring or mesh"),
    (dict(interconnect="ring", coherence="directory"), r"coherence directory needs cache msi or mesi \(not none\)"),
    (dict(interconnect="ring", coherence="directory", cache="moesi"), "coherence directory needs cache msi or mesi"),
    (dict(interconnect="torus"), r"unknown interconnect 'torus' \(choose bus, ring, mesh\)"),
    (dict(router_latency=-1), r"router-latency -1 is out of range \(0..100\)"),
])
def test_impossible_combinations_are_one_line(cfg, message):
    for make in (lambda: Machine(assemble(HALT), **cfg), lambda: ReferenceMachine([0], [], **cfg)):
        with pytest.raises(S2mcError, match=f"^{message}"):
            make()


def test_the_default_is_the_bus_machine_bit_for_bit():
    src = ".code 0\n  ld r1 0\n  st r1 1\n  trap r0 #0\n"
    plain = Machine(assemble(src), cores=2).run().to_json()
    named = Machine(assemble(src), cores=2, interconnect="bus", coherence="snoop").run().to_json()
    assert named == plain and "interconnect" not in plain["config"]


def test_the_bus_reference_model_points_to_the_network_one():
    with pytest.raises(S2mcError, match="^coherence directory: the reference model of a ring or a mesh is "
                                        "s2mc.simulator.directory.DirectoryMachine"):
        ReferenceMachine([0], [], **MESH)


# -- s2mc run --engine reference ----------------------------------------------------------------------

def cli(tmp_path, src: str, *args):
    from click.testing import CliRunner
    from s2mc.cli.main import cli as main
    path = tmp_path / "p.s"
    path.write_text(src)
    return CliRunner().invoke(main, ["run", str(path), *map(str, args)])


NET_ARGS = ("--engine", "reference", "--cores", 4, "--cache", "msi", "--interconnect", "mesh",
            "--coherence", "directory", "--mem-words", MEM)


def test_s2mc_run_prints_the_network_counters_of_the_run(tmp_path):
    res = cli(tmp_path, SKIP_OTHERS.format(body="  ld r2 12"), *NET_ARGS)
    assert res.exit_code == 0, res.output
    out = res.output.splitlines()
    assert "directory MSI over a mesh 2x2: link 1, router 1 cycle, 4 words a flit; miss cycles = queueing + " \
           "network + home" in out
    tile0 = next(line.split() for line in out if line.split()[:1] == ["0"] and len(line.split()) == 12)
    assert tile0 == ["0", "0", "1", "15", "0", "13", "2", "1", "1", "2", "0", "0"]
    assert "messages: GetS 1, Data 1; 3 flits, 4 hops" in out
    assert "copies invalidated per GetM: no GetM; mean 0.00" in out
    assert "total: 19 cycles, 13 instructions, 15 stall cycles" in out


def test_s2mc_run_json_carries_the_network_and_its_parameters(tmp_path):
    import json
    res = cli(tmp_path, RACE, *NET_ARGS, "--router-latency", 2, "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output.splitlines()[-1])
    assert obj["config"]["engine"] == "reference" and obj["config"]["router_latency"] == 2
    assert obj["network"]["messages"]["Fwd-GetM"] == 1
    assert "bus_wait_cycles" in obj["cores"][0] and "miss_home_cycles" in obj["cores"][0]


def test_the_reference_engine_on_the_bus_agrees_with_the_fast_engine(tmp_path):
    import json
    prog = str(__import__("pathlib").Path(__file__).resolve().parent.parent / "workloads/asm/spin_lock.s")
    fast, ref = (json.loads(cli(tmp_path, open(prog).read(), "--cores", 3, "--cache", "mesi", "--json",
                                *(("--engine", e) if e else ())).output) for e in (None, "reference"))
    assert ref["config"].pop("engine") == "reference" and fast["config"].pop("engine") == "fast"
    assert ref == fast


@pytest.mark.parametrize("args,message", [
    (("--engine", "systemc", "--vcd", "w.vcd"), "interconnect mesh: the systemc engine draws no VCD waveform of a network"),
    (("--trace", "t.txt"), "--trace needs --engine fast or systemc"),
])
def test_s2mc_run_refuses_in_one_line(tmp_path, args, message):
    res = cli(tmp_path, SKIP_OTHERS.format(body="  ld r2 12"), *NET_ARGS, *args)
    assert res.exit_code != 0 and res.output.count("\n") == 1 and message in res.output, res.output


def test_faults_and_the_cycle_limit_are_reported_as_on_the_bus():
    from s2mc.simulator import SimFault, run_reference
    bad = assemble(".code 0\n  ld r1 100\n  trap r0 #0\n")
    with pytest.raises(SimFault, match=r"^simulated fault: data address 100 outside memory \(0..63\) at core 0, "
                                       r"pc 0, cycle 0: 'ld r1 100'"):
        run_reference(bad, mem_words=MEM, **MESH)
    spin = assemble(".code 0\n:l\n  ld r1 12\n  jmp l\n")
    with pytest.raises(SimFault, match="^cycle limit of 50 reached with core 0, pc "):
        run_reference(spin, mem_words=MEM, max_cycles=50, **MESH)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12, 300))
def test_many_random_drf_programs_end_with_the_bus_machines_memory(seed):
    test_random_drf_programs_end_with_the_bus_machines_memory(seed)
