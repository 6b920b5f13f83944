"""Stepping the fast engine (s2mc.simulator.stepping) against independent oracles: the state at
every pause equals the cycle-stepped reference model's after the same cycles (registers, pcs,
core states, counters, memory, output, the bus); breakpoints and watches stop at the cycle the
reference model reaches them; stepping to the end gives exactly Machine.run()'s result. Random
programs from s2gen.py, and the worked example of docs/timing-model.md by hand."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2gen import WINDOW, configs, programs
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.isa.instructions import decode
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.reference import ReferenceMachine, RefFault
from s2mc.simulator.stepping import Stepper

MEM = 1024
MAX_CYCLES = 20_000


def reference(prog, cfg):
    return ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, max_cycles=MAX_CYCLES,
                            stacks=prog.stacks, trace=True, **cfg)


def ref_cores(ref, L):
    """(state, pc, since) of every core of the reference model at the start of cycle ref.now,
    in the stepper's words."""
    now, out = ref.now, []
    for k in ref.cores:
        if k.state == "run":
            out.append(("running", k.pc, now) if k.next_issue == now else ("bus", k.pc, k.next_issue - L))
        elif k.state == "request":
            out.append(("waiting", k.pc, k.request_cycle))
        elif k.state == "sync":
            out.append(("sync", k.pc, k.request_cycle))
        else:
            out.append(("halted", k.pc, k.stats["finish_cycle"] - 1))
    return out


def assert_same_state(s, ref, L):
    assert s.cycle == ref.now
    assert [(c.state, c.pc, c.since) for c in s.cores()] == ref_cores(ref, L)
    for i, k in enumerate(ref.cores):
        assert s.registers(i) == k.r, i
        assert s.core(i).counters == k.stats, i
    assert s.read(0, MEM) == ref.mem
    assert s.events == sorted(ref.output, key=lambda e: (e[0], e[1]))
    bus = s.bus()
    holders = [i for i, st_ in enumerate(ref_cores(ref, L)) if st_[0] == "bus"]
    assert bus.holder == (holders[0] if holders else None)
    assert bus.free_at == max(ref.bus_free, ref.now)
    assert bus.waiting == sorted(((k.id, k.request_cycle, k.request[1]) for k in ref.cores
                                  if k.state == "request"), key=lambda w: (w[1], w[0]))


def assert_same_result(res, plain):
    assert res.to_json() == plain.to_json()
    assert res.events == plain.events


def plain_run(prog, cfg):
    try:
        return Machine(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg).run(), None
    except SimFault as f:
        return None, f.fault


# The default run draws a third of the profile's examples; the *_many tests (slow) draw them all.
LIGHT = settings(max_examples=max(1, settings().max_examples // 3))


@LIGHT
@given(programs(), configs, st.lists(st.integers(1, 30), max_size=10))
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run(src, cfg, gaps):
    prog = assemble(src)
    s = Stepper(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg)
    ref = reference(prog, cfg)
    plain, fault = plain_run(prog, cfg)
    try:
        if not step_through_gaps(s, ref, gaps, fault, lambda s, r: assert_same_state(s, r, cfg["mem_latency"])):
            return
        res = s.finish()
    except SimFault as got:
        assert got.fault == fault
        return
    assert fault is None
    assert_same_result(res, plain)


# -- breakpoints and watches against the reference model ------------------------------------------

def is_write(prog, pc):
    return decode(prog.code_image[pc]).bus in ("write", "swap")


def written_addresses(prog, cfg) -> set[int]:
    ref = reference(prog, cfg)
    try:
        ref.run()
    except RefFault:
        pass
    return {e[5] for e in ref.trace if e[3] == "grant" and is_write(prog, e[2])}


def ref_next_stop(ref, prog, breaks, watches, first):
    """Steps the reference model to where the stepper should stop next: a core about to issue at a
    breakpoint (not the cycle it stands in unless this is the first advance), or just after a
    watched write. Returns (cycle, cores at a breakpoint, the write) or None at the end."""
    start = ref.now
    while True:
        c = ref.now
        if c > start or first:
            at = [k.id for k in ref.cores if k.state == "run" and k.next_issue == c
                  and any(pc == k.pc and who in (None, k.id) for pc, who in breaks)]
            if at:
                return c, at, None
        seen = len(ref.trace)
        if not ref.step():
            return None
        for cyc, core, pc, event, _, address, before, after in ref.trace[seen:]:
            if event == "grant" and address in watches and is_write(prog, pc):
                at = [k.id for k in ref.cores if k.state == "run" and k.next_issue == c + 1
                      and any(p == k.pc and who in (None, k.id) for p, who in breaks)]
                return c + 1, at, (cyc, core, pc, address, before, after)


@pytest.mark.slow
@given(programs(), configs, st.lists(st.integers(1, 30), max_size=10))
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run_many(src, cfg, gaps):
    test_pauses_match_the_reference_and_the_end_matches_a_plain_run.hypothesis.inner_test(src, cfg, gaps)


@LIGHT
@given(programs(), configs, st.data())
def test_breakpoints_and_watches_stop_where_the_reference_model_does(src, cfg, data):
    prog = assemble(src)
    n_code = prog.top("code")
    breaks = data.draw(st.lists(st.tuples(st.integers(0, n_code - 1),
                                          st.one_of(st.none(), st.integers(0, cfg["cores"] - 1))), max_size=3))
    # Watch addresses the program writes (found by a whole reference run), or any in its window.
    written = sorted(written_addresses(prog, cfg)) or list(range(WINDOW))
    watches = data.draw(st.lists(st.sampled_from(written), max_size=2))
    s = Stepper(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg)
    plain, fault = plain_run(prog, cfg)
    # without store buffers a watched write is never a drain's
    follow_stops(s, reference(prog, cfg), prog, breaks, watches, plain, fault, cfg["mem_latency"],
                 ref_next_stop, assert_same_state, assert_same_result, lambda w: w and (*w, False))


def step_through_gaps(s, ref, gaps, fault, same_state) -> bool:
    """Runs the stepper s to s.cycle + gap for each gap beside the reference model ref, with the
    same state at every pause (same_state(s, ref)); False when the run faulted (as the reference
    model did, in the same cycle), True when it reached its end or the last gap."""
    for gap in gaps:
        target = s.cycle + gap
        try:
            stop = s.run_until(target)
        except SimFault as got:
            with pytest.raises(RefFault) as want:
                while ref.now < target:
                    ref.step()
            assert got.fault == fault
            assert (got.fault["kind"], got.fault["cycle"]) == (want.value.kind, want.value.cycle)
            return False
        if "end" in stop.reasons:
            break
        assert stop.cycle == target and stop.reasons == ("cycle",)
        while ref.now < target:
            assert ref.step()
        same_state(s, ref)
    return True


def follow_stops(s, ref, prog, breaks, watches, plain, fault, L, next_stop, same_state, same_result,
                 want_write=lambda w: w):
    """Sets the breakpoints and watches on the stepper s and continues up to six times: each stop
    is the reference model's next one (next_stop: its cycle, the cores at a breakpoint and the
    watched write, as want_write makes it (cycle, core, pc, address, before, after, drain)), with
    the same state (same_state); the end, or the fault, is the plain run's."""
    for pc, core in breaks:
        s.add_break(pc, core)
    for a in watches:
        s.add_watch(a)
    for i in range(6):
        try:
            stop = s.cont()
        except SimFault as got:
            assert got.fault == fault
            with pytest.raises(RefFault):
                next_stop(ref, prog, breaks, set(watches), i == 0)
            return
        want = next_stop(ref, prog, breaks, set(watches), i == 0)
        if want is None:
            assert stop.reasons == ("end",)
            same_result(s.result, plain)
            return
        cycle, at, write = want
        assert stop.cycle == cycle
        assert sorted({core for _, core, _ in stop.breaks}) == at
        got = stop.watches[0][1] if stop.watches else None
        assert (got and (got.cycle, got.core, got.pc, got.address, got.before, got.after, got.drain)) == want_write(write)
        same_state(s, ref, L)
    if fault is None:
        same_result(s.finish(), plain)


@pytest.mark.slow
@given(programs(), configs, st.data())
def test_breakpoints_and_watches_stop_where_the_reference_model_does_many(src, cfg, data):
    test_breakpoints_and_watches_stop_where_the_reference_model_does.hypothesis.inner_test(src, cfg, data)


# -- by hand: the worked example of docs/timing-model.md ------------------------------------------

WORKED = """
.code 0
  cid r1            ; 0
  ld r2 @vals r1    ; 1
:store
  st r2 @8 r1       ; 2
  trap r0 #0        ; 3
.data 0
:vals
  11 22
"""


def worked(**kw):
    return Stepper(assemble(WORKED), cores=2, mem_latency=2, mem_words=64, **kw)


def test_worked_example_by_hand():
    s = worked()
    # Cycle 2: core 0's load was granted at 1 (bus 1-2, next issue 3); core 1 waits since 1.
    assert s.run_until(2).reasons == ("cycle",)
    c0, c1 = s.cores()
    assert (c0.state, c0.since, c0.next_issue, c0.pc) == ("bus", 1, 3, 2)
    assert (c1.state, c1.since, c1.address, c1.pc) == ("waiting", 1, 1, 1)
    assert s.registers(0)[2] == 11 and s.registers(1)[2] == 0
    assert s.bus() == type(s.bus())(holder=0, granted=1, free_at=3, waiting=[(1, 1, 1)])
    # Cycle 4: core 1's load granted at 3; core 0's store requested at 3 waits.
    s.step(2)
    assert s.bus().holder == 1 and s.bus().waiting == [(0, 3, 8)]
    assert s.registers(1)[2] == 22
    # The store to word 9 (core 1's) is granted at 7: a watch stops at 8, after it.
    s.add_watch(9)
    stop = s.cont()
    assert (stop.cycle, stop.reasons) == (8, ("watch",))
    assert stop.watches[0][1].__dict__ == dict(cycle=7, core=1, pc=2, address=9, before=0, after=22, drain=False)
    assert s.read(8, 2) == [11, 22]
    stop = s.cont()
    assert stop.reasons == ("end",) and s.result.cycles == 10
    assert [c["cycles"] for c in s.result.cores] == [8, 10]


def test_breakpoint_on_one_core_and_on_every_core():
    # `store` (pc 2) issues at 3 on core 0 (after its load, granted at 1) and at 5 on core 1.
    s = worked()
    n = s.add_break("store", core=1)
    stop = s.cont()
    assert (stop.cycle, stop.reasons, stop.breaks) == (5, ("break",), ((n, 1, 2),))
    s = worked()
    n = s.add_break("store")
    assert s.cont().breaks == ((n, 0, 2),) and s.cycle == 3
    assert s.cont().breaks == ((n, 1, 2),) and s.cycle == 5
    assert s.cont().reasons == ("end",)


def test_until_pc_and_until_write_leave_no_breakpoint_behind():
    # core 0's trap (pc 3): its store requested at 3 waits for core 1's load (granted 3, bus 3-4),
    # is granted at 5 (bus 5-6), so the trap issues at 7
    s = worked()
    stop = s.until_pc(3, core=0)
    assert stop.cycle == 7 and stop.breaks[0][1:] == (0, 3)
    assert s.breakpoints == {} and s.watches == {}
    stop = s.until_write(8)                             # already written (at 5): none left, to the end
    assert stop.reasons == ("end",)


def test_a_step_that_lands_on_a_breakpoint_reports_it_and_continue_goes_past():
    s = worked()
    s.add_break("store", core=0)
    stop = s.run_until(3)
    assert stop.reasons == ("cycle", "break")
    assert s.cont().reasons == ("end",)


def test_a_breakpoint_at_the_entry_stops_before_the_first_cycle():
    s = worked()
    s.add_break(0)
    stop = s.cont()
    assert stop.cycle == 0 and [c for _, c, _ in stop.breaks] == [0, 1]
    assert s.cont().reasons == ("end",)


def test_finish_equals_a_plain_run_and_refuses_to_go_on():
    s = worked()
    s.step(3)
    res = s.finish()
    assert_same_result(res, Machine(assemble(WORKED), cores=2, mem_latency=2, mem_words=64).run())
    with pytest.raises(S2mcError, match="the run has ended"):
        s.step()


def test_a_fault_is_raised_where_a_plain_run_raises_it():
    src = ".code 0\n  cid r1\n  mov r2 #5\n  div r3 r2 r0\n  trap r0 #0\n"
    s = Stepper(assemble(src), cores=2)
    s.step(2)
    with pytest.raises(SimFault) as got:
        s.cont()
    with pytest.raises(SimFault) as plain:
        Machine(assemble(src), cores=2).run()
    assert str(got.value) == str(plain.value) and s.done
    with pytest.raises(S2mcError, match="stopped with a fault at cycle 2"):
        s.step()


@pytest.mark.parametrize("call, message", [
    (lambda s: s.add_break("nowhere"), "no code label 'nowhere' in the program"),
    (lambda s: s.add_break("vals"), "no code label 'vals' in the program"),
    (lambda s: s.add_break(4), r"pc 4 is outside the program \(0..3\)"),
    (lambda s: s.add_break(0, core=2), r"core 2 does not exist \(0..1\)"),
    (lambda s: s.add_watch(64), r"data address 64 is outside the memory \(0..63\)"),
    (lambda s: s.add_watch("store"), "no data label 'store'"),
    (lambda s: s.step(0), "step takes a number of cycles >= 1"),
    (lambda s: s.run_until(0), "cycle 0 is not after the current cycle 0"),
    (lambda s: s.delete(7), "no breakpoint or watch number 7"),
    (lambda s: s.read("vals", 65), "65 words at address 0 do not fit"),
])
def test_bad_requests_are_one_line(call, message):
    with pytest.raises(S2mcError, match=message) as got:
        call(worked())
    assert "\n" not in str(got.value)


def test_labels_with_offsets_and_numbers():
    s = worked()
    assert s.place("vals+1", "data") == 1 and s.place("0x3", "code") == 3 and s.place("store - 1", "code") == 1
    assert s.read("vals", 2) == [11, 22]
    assert s.where(3) == "store+1" and s.where(0) == "0"


def test_memory_written_before_the_first_step():
    s = worked()
    s.write("vals", [5, 6])
    s.finish()
    assert s.read(8, 2) == [5, 6]
    s = worked()
    s.step()
    with pytest.raises(S2mcError, match="before the first step"):
        s.write("vals", [1])


def test_the_systemc_engine_does_not_step():
    with pytest.raises(S2mcError, match="the systemc engine cannot step") as got:
        Stepper(assemble(WORKED), engine="systemc")
    assert "\n" not in str(got.value)
