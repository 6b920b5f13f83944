"""Stepping a machine with store buffers (consistency tso, pso; docs/debugger.md, "Store buffers")
against independent oracles: at every pause the state (registers, pcs, core states, counters,
memory and every core's store buffer) equals the cycle-stepped reference model's after the same
cycles; breakpoints and watches stop where the reference model reaches them, a watch after the
drain that changes memory; stepping to the end gives Machine.run()'s result. Random programs from
s2gen.py, and a program worked by hand with the rules of docs/timing-model.md."""
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2gen import WINDOW, buffered_configs, programs
from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.isa.instructions import decode
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.debugger import Debugger, help_text
from s2mc.simulator.reference import ReferenceMachine, RefFault
from s2mc.simulator.stepping import Stepper
from buffer_programs import FENCE3
from test_stepping import follow_stops, step_through_gaps

MEM = 1024
MAX_CYCLES = 20_000
LIGHT = settings(max_examples=max(1, settings().max_examples // 3))


def reference(prog, cfg):
    return ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, max_cycles=MAX_CYCLES,
                            stacks=prog.stacks, trace=True, **cfg)


def ref_cores(ref, L):
    """(state, pc, since) of every reference core at the start of cycle ref.now, in the stepper's
    words: a core whose instruction waits for its store buffer is `held` since it began to."""
    now, out = ref.now, []
    for k in ref.cores:
        if k.state == "run" and k.since is not None:
            out.append(("held", k.pc, k.since))
        elif k.state == "run":
            out.append(("running", k.pc, now) if k.next_issue == now else ("bus", k.pc, k.next_issue - L))
        elif k.state == "request":
            out.append(("waiting", k.pc, k.request_cycle))
        elif k.state == "sync":
            out.append(("sync", k.pc, k.request_cycle))
        else:
            out.append(("halted", k.pc, k.stats["finish_cycle"] - 1))
    return out


def ref_buffer(k):
    """A reference core's store buffer as the stepper shows it: (address, value, pc, since, the
    entry's drain waits for the bus since) oldest first."""
    return [(a, v, pc, since, k.drain_cycle if k.drain is e else None) for e in k.buf for a, v, pc, since in [e]]


def assert_same_state(s, ref, L):
    assert s.cycle == ref.now
    assert [(c.state, c.pc, c.since) for c in s.cores()] == ref_cores(ref, L)
    for i, k in enumerate(ref.cores):
        assert s.registers(i) == k.r, i
        assert s.core(i).counters == k.stats, i
        got = [(e.address, e.value, e.pc, e.since, e.drain_since if e.state == "bus" else None)
               for e in s.store_buffer(i)]
        assert got == ref_buffer(k), i
    assert s.read(0, MEM) == ref.mem
    assert s.events == sorted(ref.output, key=lambda e: (e[0], e[1]))
    assert s.bus().free_at == max(ref.bus_free, ref.now)


def plain_run(prog, cfg):
    try:
        return Machine(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg).run(), None
    except SimFault as f:
        return None, f.fault


def assert_same_result(res, plain):
    assert res.to_json() == plain.to_json()
    assert res.events == plain.events


@LIGHT
@given(programs(), buffered_configs(), st.lists(st.integers(1, 30), max_size=10), st.booleans())
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run(src, cfg, gaps, history):
    prog = assemble(src)
    # history: checkpoints every 7 cycles, so the run also goes through saved and restored states
    s = Stepper(prog, mem_words=MEM, max_cycles=MAX_CYCLES, history=1 << 20 if history else 0,
                checkpoint_every=7, **cfg)
    ref = reference(prog, cfg)
    plain, fault = plain_run(prog, cfg)
    try:
        if not step_through_gaps(s, ref, gaps, fault, lambda s, r: assert_same_state(s, r, cfg["mem_latency"])):
            return
        if history and s.started and not s.done and s.cycle > 3:
            back = s.cycle // 2                # going back gives that cycle's buffers exactly
            s.goto(back)
            again = reference(prog, cfg)
            while again.now < back:
                assert again.step()
            assert_same_state(s, again, cfg["mem_latency"])
        res = s.finish()
    except SimFault as got:
        assert got.fault == fault
        return
    assert fault is None
    assert_same_result(res, plain)


@pytest.mark.slow
@given(programs(), buffered_configs(), st.lists(st.integers(1, 30), max_size=10), st.booleans())
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run_many(src, cfg, gaps, history):
    test_pauses_match_the_reference_and_the_end_matches_a_plain_run.hypothesis.inner_test(src, cfg, gaps, history)


def memory_writes(prog, ref, start):
    """The writes to memory in the reference trace from index `start`: a drain of a buffered store
    (the store's pc) or an xchg's grant. (cycle, core, pc, address, before, after, drain)."""
    out = []
    for cyc, core, pc, event, _, address, before, after in ref.trace[start:]:
        if event == "drain":
            out.append((cyc, core, pc, address, before, after, True))
        elif event == "grant" and decode(prog.code_image[pc]).bus == "swap":
            out.append((cyc, core, pc, address, before, after, False))
    return out


def ref_next_stop(ref, prog, breaks, watches, first):
    """Steps the reference model to where the stepper should stop next: a core arriving at a
    breakpoint (about to issue there, not held back at it; not in the cycle it stands in unless
    this is the first advance), or just after a write to a watched address. Returns (cycle, cores
    at a breakpoint, the write) or None at the end."""
    start = ref.now

    def arriving(c):
        return [k.id for k in ref.cores if k.state == "run" and k.next_issue == c and k.since is None
                and any(pc == k.pc and who in (None, k.id) for pc, who in breaks)]
    while True:
        c = ref.now
        if (c > start or first) and arriving(c):
            return c, arriving(c), None
        seen = len(ref.trace)
        if not ref.step():
            return None
        for w in memory_writes(prog, ref, seen):
            if w[3] in watches:
                return c + 1, arriving(c + 1), w


@LIGHT
@given(programs(), buffered_configs(), st.data())
def test_breakpoints_and_watches_stop_where_the_reference_model_does(src, cfg, data):
    prog = assemble(src)
    n_code = prog.top("code")
    breaks = data.draw(st.lists(st.tuples(st.integers(0, n_code - 1),
                                          st.one_of(st.none(), st.integers(0, cfg["cores"] - 1))), max_size=3))
    whole = reference(prog, cfg)
    try:
        whole.run()
    except RefFault:
        pass
    written = sorted({w[3] for w in memory_writes(prog, whole, 0)}) or list(range(WINDOW))
    watches = data.draw(st.lists(st.sampled_from(written), max_size=2))
    s = Stepper(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg)
    plain, fault = plain_run(prog, cfg)
    follow_stops(s, reference(prog, cfg), prog, breaks, watches, plain, fault, cfg["mem_latency"],
                 ref_next_stop, assert_same_state, assert_same_result)


@pytest.mark.slow
@given(programs(), buffered_configs(), st.data())
def test_breakpoints_and_watches_stop_where_the_reference_model_does_many(src, cfg, data):
    test_breakpoints_and_watches_stop_where_the_reference_model_does.hypothesis.inner_test(src, cfg, data)


@LIGHT
@given(programs(), buffered_configs(cached=True), st.lists(st.integers(1, 30), max_size=6))
def test_with_caches_the_end_matches_a_plain_run(src, cfg, gaps):
    prog = assemble(src)
    s = Stepper(prog, mem_words=MEM, max_cycles=MAX_CYCLES, **cfg)
    plain, fault = plain_run(prog, cfg)
    try:
        for gap in gaps:
            if "end" in s.step(gap).reasons:
                break
        res = s.finish()
    except SimFault as got:
        assert got.fault == fault
        return
    assert fault is None
    assert_same_result(res, plain)


# -- by hand ----------------------------------------------------------------------------------------
# The worked example "A fence waiting for three stores, drains competing with another core's loads"
# of docs/timing-model.md (tso, two cores, L = 2, fixed): core 1's stores (pc 6, 7, 8) enter at 2,
# 3 and 4; store 0's drain requests at 3 and is granted at 8 (core 0's loads go first), store 1's
# at 10, store 2's at 12; the fence (pc 9) is held back from 5 and issues at 13; trap at 14.
CFG = dict(cores=2, mem_latency=2, arbitration="fixed", consistency="tso", mem_words=64)


def fence3(**kw):
    return Stepper(assemble(FENCE3), **CFG, **kw)


def test_the_buffers_and_core_states_of_the_worked_example():
    s = fence3()
    s.run_until(5)
    assert [(e.address, e.value, e.pc, e.since, e.state, e.drain_since) for e in s.store_buffer(1)] == [
        (0, 1, 6, 2, "bus", 3), (1, 1, 7, 3, "", None), (2, 1, 8, 4, "", None)]
    assert s.core(1).state == "running" and s.core(1).pc == 9       # it tries the fence in cycle 5
    s.run_until(6)
    c = s.core(1)
    assert (c.state, c.pc, c.since) == ("held", 9, 5)
    s.run_until(9)                       # store 0 drained at 8: memory changed, the entry left
    assert s.read(0, 3) == [1, 0, 0]
    assert [(e.address, e.state, e.drain_since) for e in s.store_buffer(1)] == [(1, "next", 10), (2, "", None)]
    assert s.bus().holder == 1 and s.bus().drain
    assert s.store_buffer(0) == []


def test_a_watch_fires_after_the_drain_not_when_the_store_enters_the_buffer():
    s = fence3()
    s.add_watch("flag")
    stop = s.cont()
    assert stop.cycle == 9 and stop.reasons == ("watch",)      # the store entered at 2
    w = stop.watches[0][1]
    assert (w.cycle, w.core, w.pc, w.address, w.before, w.after, w.drain) == (8, 1, 6, 0, 0, 1, True)


def test_a_breakpoint_on_a_held_instruction_stops_once():
    s = fence3()
    s.add_break(9, 1)                   # the fence
    assert s.cont().cycle == 5
    stop = s.cont()                     # held 5 .. 12: no stop again
    assert stop.reasons == ("end",) and s.result.cycles == 15


def debugger():
    return Debugger.for_program(assemble(FENCE3), **CFG)     # with history: it steps back too


def test_sb_shows_each_cores_buffer_oldest_first():
    d = debugger()
    d.execute("until 6")
    text = d.execute("sb")
    assert text.splitlines() == [
        "core 0: store buffer empty (tso, 4 entries)",
        "core 1: store buffer 3 of 4 entries (tso, 4 entries); core 1 is held at fence since cycle 5 until its "
        "store buffer has drained",
        "  0: address 0 (flag) = 1, entered cycle 2: st r1 @flag r0 at pc 6 (one); its drain waits for the bus "
        "since cycle 3",
        "  1: address 1 (flag+1) = 1, entered cycle 3: st r1 @1 r0 at pc 7 (one+1)",
        "  2: address 2 (flag+2) = 1, entered cycle 4: st r1 @2 r0 at pc 8 (one+2)"]
    assert d.execute("sb 0") == "core 0: store buffer empty (tso, 4 entries)\n"
    assert "core 1: held     pc 9 (one+3): fence; held back since cycle 5 until its store buffer has drained" \
        in d.execute("info cores")
    assert d.execute("bus").splitlines() == [
        "cycle 6: the bus is free",
        "  waiting: core 1's store buffer since cycle 3 to drain 1 to address 0 (flag): st r1 @flag r0"]
    state = d.state()["store_buffers"]
    assert [e["address"] for e in state[1]] == [0, 1, 2] and state[0] == []


def test_a_step_over_a_fence_shows_the_cycles_it_waited():
    d = debugger()
    d.execute("until 5")
    d.execute("core 1")
    assert d.execute("stepi").splitlines() == [
        "core 1 waited 8 cycles for its store buffer to drain (fence, xchg, sync, trap)",
        "core 1 at pc 10 (one+4): trap r0 #0",
        "cycle 14"]
    # back one instruction: to where it arrived at the fence, as stepi went from there
    d.execute("reverse-stepi")
    assert d.s.cycle == 5 and d.s.core(1).pc == 9


def test_a_step_over_a_store_into_a_full_buffer_shows_the_wait():
    # docs/timing-model.md, "A full buffer" (E = 1): store 0 enters at 0, store 1 is held back at
    # 1 and enters at 2, store 2 issues next at 3.
    prog = assemble(".code 0\n  st r0 @0 r0\n  st r0 @1 r0\n  st r0 @2 r0\n  trap r0 #0\n")
    d = Debugger.for_program(prog, consistency="tso", store_buffer_entries=1, mem_words=64)
    d.execute("stepi")
    assert d.execute("stepi").splitlines() == [
        "core 0 waited 1 cycle for room in its full store buffer", "core 0 at pc 2 (2): st r0 @2 r0", "cycle 3"]


def test_a_watch_in_the_debugger_says_the_store_buffer_drained():
    d = debugger()
    d.execute("watch flag+2")
    assert d.execute("continue").splitlines() == [
        "watch 1: core 1's store buffer drained 1 to address 2 (flag+2; was 0) in cycle 12: st r1 @2 r0 "
        "at pc 8 (one+2)", "cycle 13"]


@pytest.mark.parametrize("line, message", [
    ("sb 99", "sb: core 99 does not exist (0..1)"),
    ("sb x", "sb: CORE must be a number, not 'x'"),
    ("sb 0 1", "sb: too many arguments (usage: sb [CORE])"),
])
def test_bad_sb_is_one_line(line, message):
    assert debugger().execute(line) == message + "\n"


def test_sb_without_store_buffers_is_one_line():
    d = Debugger(Stepper(assemble(FENCE3), **{**CFG, "consistency": "sc"}))
    assert d.execute("sb") == ("sb: this machine has no store buffers (consistency sc); "
                               "debug with --consistency tso or pso\n")
    assert d.state()["store_buffers"] is None


def test_help_lists_sb():
    assert any(line.split()[:2] == ["sb", "[CORE]"] for line in help_text().splitlines()[1:])


def workload(name):
    from s2mc.workloads.examples import resolve
    return assemble(open(resolve(name)).read())


@pytest.mark.parametrize("name, cores, where, word", [("spin_lock.s", 3, "acquire", "counter"),
                                                      ("ticket_lock.s", 2, "wait", "counter"),
                                                      ("barrier.s", 4, "arrive", "slot")])
@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_running_to_the_end_under_the_debugger_gives_machine_runs_cycles_and_counters(name, cores, where, word,
                                                                                       consistency):
    prog = workload(name)
    cfg = dict(cores=cores, consistency=consistency, store_buffer_entries=2)
    plain = Machine(prog, **cfg).run()
    d = Debugger.for_program(prog, **cfg)
    for line in (f"break {where}", "continue", "continue", "sb", "core 1", "stepi 3", f"watch {word}",
                 "continue", "tick 7", "reverse-stepi", "delete 1", "delete 2", "continue"):
        d.execute(line)
        assert d.last_error is None, (line, d.last_error)
    res = d.s.result
    assert res is not None and res.to_json() == plain.to_json()
    assert res.cycles == plain.cycles and res.cores == plain.cores


def test_s2mc_debug_takes_the_consistency(tmp_path):
    src = tmp_path / "fence3.s"
    src.write_text(FENCE3)
    got = subprocess.run([sys.executable, "-m", "s2mc.cli", "debug", str(src), "--cores", "2", "--arbitration", "fixed",
                          "--consistency", "pso", "--store-buffer-entries", "3"],
                         input="until 6\nsb 1\ncontinue\n", capture_output=True, text=True, timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout.splitlines()[1].startswith("core 1: store buffer 3 of 3 entries (pso, 3 entries); core 1 is "
                                                 "held at fence")
    plain = Machine(assemble(FENCE3), cores=2, arbitration="fixed", consistency="pso", store_buffer_entries=3).run()
    assert f"the program ended at cycle {plain.cycles}:" in got.stdout


def test_the_prompts_banner_names_the_store_buffers(tmp_path):
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(sys.executable, ["-m", "s2mc.cli", "debug", "spin_lock.s", "--cores", "2", "--consistency",
                                           "pso", "--store-buffer-entries", "3"], cwd=str(tmp_path),
                          encoding="utf-8", timeout=60, dimensions=(40, 160))
    try:
        child.expect_exact("spin_lock.s: 2 cores, L=2, fifo, pso store buffers of 3; at cycle 0.")
        child.expect_exact("(s2mc) ")
        child.sendline("sb 1")
        child.expect_exact("core 1: store buffer empty (pso, 3 entries)")
        child.expect_exact("(s2mc) ")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)


@pytest.mark.parametrize("consistency", ["tso", "pso"])
def test_rz_lines_step_next_finish_under_store_buffers_end_as_machine_run(consistency):
    # spinlock.rz: a release's store waits in the buffer while the next acquire's xchg is held back
    from s2mc.compiler import compile as compile_rz
    from s2mc.workloads.examples import resolve
    with open(resolve("spinlock.rz")) as f:
        source = f.read()
    prog = compile_rz(source, filename="spinlock.rz", debug=True).program
    cfg = dict(cores=2, consistency=consistency, store_buffer_entries=2)
    plain = Machine(prog, **cfg).run()
    d = Debugger.for_program(prog, source=source, **cfg)
    lines = ["break release", "continue", "next", "sb", "step", "step", "finish", "next 3", "reverse-next",
             "watch counter", "continue", "delete 1", "delete 2", "continue"]
    outs = []
    for line in lines:
        outs.append(d.execute(line))
        assert d.last_error is None, (line, d.last_error)
    assert d.s.result is not None
    assert d.s.result.to_json() == plain.to_json()
    assert "spinlock.rz:15 in release(): *l = 0" in outs[1]
    assert "store buffer drained" in outs[10]
