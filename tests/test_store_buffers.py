"""Store buffers (consistency tso, pso) and `fence` (docs/timing-model.md, "Store buffers").

Every expected cycle and counter below was worked out by hand from the written rules before the
reference model ran it; the cycle-by-cycle tables are in docs/timing-model.md. Every program also
runs on the fast engine, which must agree with the reference on cycles, counters, registers and
memory. Unless a test says otherwise: L = 2, fifo, 4 entries per buffer.
"""
import subprocess
import sys

import pytest
from hypothesis import given, settings

from s2gen import buffered_configs, programs
from systemc_helpers import needs_systemc
from test_sim_property import assert_matches_reference

from s2mc.common.errors import S2mcError
from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble, disassemble_word
from s2mc.simulator import Machine, SimFault, format_trace
from s2mc.simulator.reference import BUFFER_STATS, ReferenceMachine
from buffer_programs import FORWARD, FENCE3

MEM = 64
RZ_FENCE = "x, y\n\nmain()\n  x = 1\n  fence()\n  y = x\n"


def ref(src: str, **cfg):
    """Runs src on the reference model, and on the fast engine, which must agree on the cycles, every
    counter, the registers and the memory; returns the reference's result and machine."""
    prog = assemble(src)
    m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, trace=True, **cfg)
    raw = m.run()
    for c, stall in zip(raw["cores"], raw["stall_cycles"]):
        # every cycle of a core before its finish: an instruction's first, a stall or a barrier wait
        assert stall == c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
    fast = Machine(prog, mem_words=MEM, trace=True, **cfg)
    res = fast.run()
    assert res.trace == m.trace          # the event log, buffer, forward and drain events included
    assert res.cycles == raw["cycles"]
    assert [{k: c[k] for k in raw["cores"][0]} for c in res.cores] == raw["cores"]
    assert [c["stall_cycles"] for c in res.cores] == raw["stall_cycles"]
    assert [fast.registers(i) for i in range(len(m.cores))] == [k.r for k in m.cores]
    assert fast.read(0, MEM) == m.mem
    return raw, m


# -- the instruction, the builtin, the parameters -------------------------------------------------

def test_fence_assembles_and_disassembles():
    word = assemble(".code 0\n  fence\n  trap r0 #0\n").code_image[0]
    assert disassemble_word(word) == "fence"


def test_rz_fence_compiles_to_the_instruction():
    for opt in (0, 1):
        prog = compile_rz(RZ_FENCE, opt=opt).program
        words = [disassemble_word(w) for w in prog.code_image]
        assert words.count("fence") == 1
        without = compile_rz(RZ_FENCE.replace("  fence()\n", ""), opt=opt).program
        assert "fence" not in [disassemble_word(w) for w in without.code_image]


def test_under_sc_a_fence_is_one_cycle_on_every_engine():
    src = ".code 0\n  fence\n  fence\n  trap r0 #0\n"
    raw, _ = ref(src)
    assert raw["cycles"] == 3
    assert Machine(assemble(src), mem_words=MEM).run().cycles == 3


def test_the_consistency_and_the_buffer_size_are_checked():
    with pytest.raises(S2mcError, match=r"unknown consistency 'rc' \(choose sc, tso, pso\)"):
        ReferenceMachine([0], [], consistency="rc")
    with pytest.raises(S2mcError, match="store-buffer-entries 0 is out of range"):
        ReferenceMachine([0], [], consistency="tso", store_buffer_entries=0)


def test_sc_reports_no_store_buffer_counters():
    raw, _ = ref(".code 0\n  trap r0 #0\n")
    assert not set(BUFFER_STATS) & set(raw["cores"][0])


# -- hand-computed cycles (docs/timing-model.md, "Store buffers", worked examples) -----------------

def counters(raw, core=0, *names):
    return {k: raw["cores"][core][k] for k in names}




@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_a_load_hits_its_own_buffered_store(consistency):
    raw, m = ref(FORWARD, consistency=consistency)
    assert raw["cycles"] == 6
    assert counters(raw, 0, "fence_stall_cycles", "store_forwards", "store_drains", "drain_bus_cycles", "drain_bus_accesses",
                    "mem_writes", "mem_reads", "mem_accesses", "bus_busy_cycles") == {
        "fence_stall_cycles": 1, "store_forwards": 1, "store_drains": 2, "drain_bus_cycles": 4, "drain_bus_accesses": 2,
        "mem_writes": 2, "mem_reads": 1, "mem_accesses": 2, "bus_busy_cycles": 4}
    assert raw["stall_cycles"] == [1]
    assert m.cores[0].r[2] == 5 and m.mem[:2] == [5, 5]
    events = [(c, e, a) for c, _, _, e, _, a, _, _ in m.trace if e not in ("issue", "halt")]
    assert events == [(1, "buffer", 0), (2, "buffer", 1), (2, "drain", 0), (3, "forward", 1), (4, "drain", 1)]
    assert ref(FORWARD)[0]["cycles"] == 8          # sc: three accesses of L = 2 and their issue cycles


FULL = ".code 0\n  st r0 @0 r0\n  st r0 @1 r0\n  st r0 @2 r0\n  trap r0 #0\n"


def test_a_full_buffer_holds_the_store_back():
    raw, m = ref(FULL, consistency="tso", store_buffer_entries=1)
    assert raw["cycles"] == 7
    assert counters(raw, 0, "store_buffer_full_stalls", "fence_stall_cycles", "instructions") == {
        "store_buffer_full_stalls": 2, "fence_stall_cycles": 1, "instructions": 4}
    assert raw["stall_cycles"] == [3]
    assert [(c, e) for c, _, _, e, *_ in m.trace] == [
        (0, "buffer"), (1, "drain"), (2, "buffer"), (3, "drain"), (4, "buffer"), (5, "drain"), (6, "halt")]
    # with room for all three the bus is still the bottleneck: the halt waits 3 cycles instead
    roomy, _ = ref(FULL, consistency="tso", store_buffer_entries=4)
    assert roomy["cycles"] == 7
    assert counters(roomy, 0, "store_buffer_full_stalls", "fence_stall_cycles") == {
        "store_buffer_full_stalls": 0, "fence_stall_cycles": 3}
    assert ref(FULL)[0]["cycles"] == 7




def test_a_fence_waits_for_three_stores_behind_another_cores_loads():
    raw, m = ref(FENCE3, consistency="tso", cores=2, arbitration="fixed")
    assert raw["cycles"] == 15
    assert [c["finish_cycle"] for c in raw["cores"]] == [9, 15]
    assert counters(raw, 1, "fence_stall_cycles", "store_drains", "bus_wait_cycles") == {
        "fence_stall_cycles": 8, "store_drains": 3, "bus_wait_cycles": 0}
    drains = [(c, w) for c, k, _, e, w, *_ in m.trace if e == "drain"]
    assert drains == [(8, 5), (10, 0), (12, 0)]
    assert (13, 1, 9, "issue") in [t[:4] for t in m.trace]      # the fence issues once the last drain left
    assert m.mem[:3] == [1, 1, 1]


RACE = """
.code 0
  cid r1
  jt r1 one
  ld r2 @0 r0
  trap r0 #0
:one
  st r1 @0 r0
  trap r0 #0
.end
"""


def test_a_drain_competes_with_another_cores_load():
    raw, m = ref(RACE, consistency="tso", cores=2)
    assert raw["cycles"] == 6
    assert [c["finish_cycle"] for c in raw["cores"]] == [5, 6]
    assert counters(raw, 1, "fence_stall_cycles", "bus_wait_cycles") == {"fence_stall_cycles": 2, "bus_wait_cycles": 0}
    assert [(c, w) for c, _, _, e, w, *_ in m.trace if e == "drain"] == [(4, 1)]
    assert m.cores[0].r[2] == 0 and m.mem[0] == 1
    assert ref(RACE, cores=2)[0]["cycles"] == 7


TURNS = """
.code 0
  mov r1 #5
  st r1 x
  ld r2 y
  ld r3 y
  trap r0 #0
.data 0
:x
  0
:y
  0
.end
"""


@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_a_cores_own_loads_and_its_drain_take_turns(consistency):
    """The first load goes before the waiting drain (the relaxation), the second waits for it."""
    raw, m = ref(TURNS, consistency=consistency)
    assert raw["cycles"] == 9
    assert counters(raw, 0, "bus_wait_cycles", "fence_stall_cycles", "store_drains", "mem_accesses") == {
        "bus_wait_cycles": 2, "fence_stall_cycles": 0, "store_drains": 1, "mem_accesses": 3}
    bus = [(c, e, w) for c, _, _, e, w, *_ in m.trace if e in ("grant", "drain")]
    assert bus == [(2, "grant", 0), (4, "drain", 2), (6, "grant", 2)]
    assert m.mem[0] == 5


# Core 0 divides by zero at cycle 3 while core 1 issues a nop and its buffered store drains (L = 2).
FAULT_CYCLE = """
.code 0
  cid r1
  jt r1 one
  nop
  div r3 r1 r1
  trap r0 #0
:one
  st r1 @0 r0
  nop
  trap r0 #0
.end
"""


def test_a_fault_ends_the_run_after_its_cycle():
    """As without store buffers, the other cores still issue in the fault's cycle and the drains and
    the bus go on in it: the log ends with that whole cycle."""
    with pytest.raises(SimFault) as got:
        Machine(assemble(FAULT_CYCLE), cores=2, mem_words=MEM, trace=True, consistency="tso").run()
    f = got.value
    assert (f.fault["kind"], f.fault["core"], f.fault["cycle"]) == ("division_by_zero", 0, 3)
    assert [(c, k, pc, e) for c, k, pc, e, *_ in f.trace if c >= 2] == [
        (2, 0, 2, "issue"), (2, 1, 5, "buffer"), (3, 0, 3, "issue"), (3, 1, 6, "issue"), (3, 1, 5, "drain")]


# -- litmus outcomes: what each model allows under some timing -------------------------------------

ARBITRATIONS = ["fifo", "fixed", "round_robin", "burst4"]


def litmus(reader_ops: str, writer_ops: str, data: str, **cfg) -> set[tuple[int, int]]:
    """The (r1, r2) of core 0 (or of both, see the programs) over a grid of timings: padding nops
    before each core's accesses, bus latencies and arbitration policies."""
    seen = set()
    for pad0 in range(8):
        for pad1 in range(4):
            src = (".code 0\n  cid r9\n  jt r9 one\n" + "  nop\n" * pad0 + reader_ops + "  trap r0 #0\n:one\n"
                   + "  nop\n" * pad1 + writer_ops + "  trap r0 #0\n.data 0\n" + data + ".end\n")
            for latency in (1, 2, 3):
                for arbitration in ARBITRATIONS:
                    run = dict(cores=2, mem_latency=latency, arbitration=arbitration, **cfg)
                    _, m = ref(src, **run)      # the fast engine agrees in every run
                    seen.add((m.cores[0].r[1], m.cores[1].r[1] if "r1" in writer_ops else m.cores[0].r[2]))
    return seen


# store buffering: each core stores 1 to its word, then loads the other's (r1 of each core)
SB_0 = "  mov r5 #1\n  st r5 x\n{fence}  ld r1 y\n"
SB_1 = "  mov r5 #1\n  st r5 y\n{fence}  ld r1 x\n"
SB_DATA = ":x\n  0\n:y\n  0\n"


@pytest.mark.parametrize("consistency,fence,relaxed", [
    ("sc", "", False), ("tso", "", True), ("pso", "", True), ("tso", "  fence\n", False), ("pso", "  fence\n", False)])
def test_store_buffering(consistency, fence, relaxed):
    seen = litmus(SB_0.format(fence=fence), SB_1.format(fence=fence), SB_DATA, consistency=consistency)
    assert ((0, 0) in seen) == relaxed, seen
    assert {(0, 1), (1, 0)} <= seen


# message passing: core 1 stores the data, then the flag (at a lower address); core 0 loads the flag
# (r1), then the data (r2). Core 1 first stores another word so that its drain port is busy while
# both enter the buffer.
MP_READER = "  ld r1 flag\n  ld r2 data\n"
MP_WRITER = "  mov r5 #1\n  st r5 z\n  st r5 data\n{fence}  st r5 flag\n"
MP_DATA = ":flag\n  0\n:data\n  0\n:z\n  0\n"


@pytest.mark.parametrize("consistency,fence,relaxed", [
    ("sc", "", False), ("tso", "", False), ("pso", "", True), ("pso", "  fence\n", False)])
def test_message_passing(consistency, fence, relaxed):
    seen = litmus(MP_READER, MP_WRITER.format(fence=fence), MP_DATA, consistency=consistency)
    assert ((1, 0) in seen) == relaxed, seen
    assert {(0, 0), (1, 1)} <= seen


@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi", "dragon"])
def test_litmus_outcomes_with_caches(protocol):
    """With caches the drains are write hits or coherence transactions: the same relaxations."""
    seen = litmus(SB_0.format(fence=""), SB_1.format(fence=""), SB_DATA, consistency="tso", cache=protocol)
    assert (0, 0) in seen
    seen = litmus(SB_0.format(fence="  fence\n"), SB_1.format(fence="  fence\n"), SB_DATA, consistency="pso",
                  cache=protocol)
    assert (0, 0) not in seen
    assert (1, 0) not in litmus(MP_READER, MP_WRITER.format(fence=""), MP_DATA, consistency="tso", cache=protocol)


# The kind of loop bench/bench_fast.py times, shorter: each core loads, computes and stores back in
# its own slice, so with 8 cores the bus is always busy and the drains queue behind the loads; with
# a 1-word slice a load mostly finds its core's last store still buffered.
SATURATED = """
.code 0
  cid r1
  mul r2 r1 #{words}
  mov r3 #100
:loop
  and r4 r3 #{mask}
  add r4 r4 r2
  ld r5 @0 r4
  xor r5 r5 r3
  shl r6 r5 #3
  add r5 r5 r6
  st r5 @0 r4
  sub r3 r3 #1
  jt r3 loop
  trap r0 #0
"""


@pytest.mark.parametrize("words", [1, 64])
@pytest.mark.parametrize("cache", ["none", "mesi"])
@pytest.mark.parametrize("arbitration", ["fifo", "fixed", "round_robin", "burst4"])
@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_a_saturated_bus_runs_as_on_the_reference(consistency, arbitration, cache, words):
    """The fast engine's hot path with store buffers (cores run ahead past their buffered stores,
    drains start without a visit to their cycle, the arbiter picks among many) in long runs: the
    cycles, every counter, registers and memory are the reference model's."""
    for entries in (1, 4):
        assert_matches_reference(SATURATED.format(words=words, mask=words - 1),
                                 {"cores": 8, "mem_latency": 2, "arbitration": arbitration, "cache": cache,
                                  "consistency": consistency, "store_buffer_entries": entries})


@pytest.mark.parametrize("words", [1, 64])
@pytest.mark.parametrize("cache", ["none", "mesi"])
@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_a_run_in_slices_equals_one_run(consistency, cache, words):
    """Pauses (the run loop's slices, the debugger's steps) stop the cores that run ahead and the
    drains that start without a visit at the pause, and a run goes on from there: slices of 1, 3
    and 7 cycles give the result, registers and memory of one run."""
    from s2mc.simulator import _fast
    prog = assemble(SATURATED.format(words=words, mask=words - 1))
    code = [w & 0xFFFFFFFF for w in prog.code_image]

    def run(slice_cycles):
        engine = _fast.Engine(code, [], prog.entry, 8, 2, "fifo", 1_000_000, 1024, cache=cache,
                              consistency=consistency, store_buffer_entries=2)
        result = engine.run(slice_cycles)
        return result, [engine.registers(i) for i in range(8)], engine.read(0, 1024)
    whole = run(0)
    assert whole[0]["cycles"] > 1000
    for n in (1, 3, 7):
        assert run(n) == whole


@settings(max_examples=150)
@given(programs(), buffered_configs(cached=True))
def test_the_event_log_equals_the_reference_models(src, cfg):
    """Random programs, tso and pso with caches: the fast engine's events are the reference's."""
    prog = assemble(src)
    m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=1024, max_cycles=20_000,
                         trace=True, **cfg)
    try:
        m.run()
    except Exception:       # faults: assert_matches_reference (test_sim_property) compares them
        return
    res = Machine(prog, mem_words=1024, max_cycles=20_000, trace=True, **cfg).run()
    assert res.trace == m.trace


def test_the_text_log_names_the_buffer_events():
    prog = assemble(FORWARD)
    text = format_trace(Machine(prog, mem_words=MEM, trace=True, consistency="tso").run().trace, prog, 2)
    lines = [line.split() for line in text.splitlines()[1:]]
    assert "store buffered (1 entry)" in text and "forwarded from the store buffer" in text
    assert "store buffer drain (waited 0)" in text
    # the bus column: the drains hold the bus for L = 2 cycles
    assert [(ln[0], ln[2]) for ln in lines] == [("0", "-"), ("1", "-"), ("2", "0"), ("2", "0"), ("3", "0"),
                                                ("4", "0"), ("5", "0")]


# -- s2mc run ----------------------------------------------------------------------------------

def s2mc_run(tmp_path, *args):
    src = tmp_path / "sb.s"
    src.write_text(FORWARD.replace("  trap r0 #0", "  trap r2 #1\n  trap r0 #0"))
    return subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(src), *args], capture_output=True,
                          text=True, cwd=tmp_path)


@pytest.mark.parametrize("engine", ["fast", pytest.param("systemc", marks=needs_systemc)])
def test_s2mc_run_with_tso_prints_the_buffer_counters(tmp_path, engine):
    proc = s2mc_run(tmp_path, "--consistency", "tso", "--engine", engine)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "5\n"
    lines = proc.stderr.splitlines()
    at = lines.index("TSO store buffers: 4 entries per core")
    assert lines[at + 1].split() == ["core", "forwards", "drains", "drain", "bus", "full", "stall", "drain", "wait"]
    assert lines[at + 2].split() == ["0", "1", "2", "2", "0", "1"]
    assert "full-buffer and drain waits" in lines[-1]


def test_s2mc_run_records_name_the_model(tmp_path):
    out = tmp_path / "runs.csv"
    proc = s2mc_run(tmp_path, "--consistency", "pso", "--store-buffer-entries", "2", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    import pandas as pd
    df = pd.read_csv(out)
    assert set(df["variant"]) == {"pso-sb2"}
    whole = df[df["core"] == -1].set_index("metric")["value"]
    assert whole["store_forwards"] == 1 and whole["fence_stall_cycles"] == 1
