"""Stepping a ring or a mesh with directory coherence (docs/debugger.md, "A ring or a mesh") against
the reference model (simulator/directory.py DirectoryMachine run to the same cycle): at every pause
the cores (state, pc, since), registers, counters, the coherent memory, the output, every line's
directory entry, every cache's ways and eviction buffer, and the messages in flight are the
reference model's; breakpoints and watches stop where the reference model reaches them; going back
gives the same state; stepping to the end gives Machine.run()'s result, network counters included."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from s2gen import programs
from test_directory import BARRIER, MEM, RACE, SKIP_OTHERS
from test_directory_fast import network_configs

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.isa.instructions import decode
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.counters import engine_counters
from s2mc.simulator.directory import DirectoryMachine
from s2mc.simulator.reference import RefFault
from s2mc.simulator.stepping import Stepper
from test_stepping import step_through_gaps

NAMES = engine_counters(cached=False, networked=True)
RANDOM_MEM = 1024
MAX_CYCLES = 20_000
LIGHT = settings(max_examples=max(1, settings().max_examples // 3), deadline=None)


def flatten(cfg: dict) -> dict:
    cfg = dict(cfg)
    lines, ways, words = cfg.pop("shape")
    return {"cache_lines": lines, "cache_ways": ways, "line_words": words, "coherence": "directory",
            "mem_words": RANDOM_MEM, "max_cycles": MAX_CYCLES, **cfg}


def reference(prog, cfg, trace=False):
    return DirectoryMachine(prog.code_image, prog.data_image, prog.entry, stacks=prog.stacks, trace=trace, **cfg)


def ref_cores(ref, H):
    """(state, pc, since) of every reference core at the start of cycle ref.now, in the stepper's words."""
    now, out = ref.now, []
    for k in ref.cores:
        if k.state == "run":
            out.append(("running", k.pc, now) if k.next_issue == now else ("hit", k.pc, k.next_issue - H))
        elif k.state == "miss":
            out.append(("waiting", k.pc, ref.pending[k.id]["issued"]))
        elif k.state == "sync":
            out.append(("sync", k.pc, k.request_cycle))
        else:
            out.append(("halted", k.pc, k.stats["finish_cycle"] - 1))
    return out


def ref_packets(ref):
    """The reference network's messages as the stepper lists them, in the order they were sent."""
    out = []
    for (router, port), queue in ref.net.waiting.items():
        out += [(m.seq, (m.kind, m.src, m.dst, m.line, m.requester, router, port, m.ready, 0)) for m in queue]
    for cycle, arriving in ref.net.arriving.items():
        out += [(m.seq, (m.kind, m.src, m.dst, m.line, m.requester, m.dst, "", m.ready, cycle)) for m in arriving]
    return [p for _, p in sorted(out)]


def assert_same_state(s, ref, cfg):
    W, N = cfg["line_words"], cfg["cores"]
    assert s.cycle == ref.now
    assert [(c.state, c.pc, c.since) for c in s.cores()] == ref_cores(ref, cfg["cache_hit_latency"])
    for i, k in enumerate(ref.cores):
        assert s.registers(i) == k.r, i
        counters = s.core(i).counters
        assert {n: counters[n] for n in NAMES} == {n: k.stats[n] for n in NAMES}, i
        if k.state == "miss":
            assert s.core(i).address == ref.pending[i]["a"]
    assert s.read(0, cfg["mem_words"]) == [ref.word(a) for a in range(cfg["mem_words"])]
    assert s.events == sorted(ref.output, key=lambda e: (e[0], e[1]))
    for i, cache in enumerate(ref.caches):
        want = [None if w.line is None else (w.line * W, w.state) for ways in cache.sets for w in ways]
        assert s.cache(i) == want, i
        assert s.cache_words(i) == [None if w.line is None else w.data for ways in cache.sets for w in ways], i
        assert sorted((b, st) for b, st in s._engine.evicting(i)) == \
            sorted((line * W, way.state) for line, way in ref.evicting[i].items()), i
        assert s.stalled(i) == [(m.kind, m.src, m.dst, m.line, m.requester) for m in ref.stalled[i]], i
    for line in range(cfg["mem_words"] // W):
        e = ref.homes[line % N].entries.get(line, {"state": "I", "sharers": set(), "owner": None})
        got = s.line(line * W)
        assert (got.state, got.owner, got.sharers) == (e["state"], e["owner"], tuple(sorted(e["sharers"]))), line
    for h, home in enumerate(ref.homes):
        free, queue = s._engine.home(h)
        assert (free, [tuple(m) for m in queue]) == \
            (home.free, [(m.kind, m.src, m.dst, m.line, m.requester) for m in home.queue]), h
    got = [(m.kind, m.src, m.dst, m.line, m.requester, m.router, m.port, m.ready, m.delivered) for m in s.messages()]
    assert got == ref_packets(ref)
    # the lines in play: copies, and messages in the network, at the homes and stalled
    in_play = {w.line for c in ref.caches for ways in c.sets for w in ways if w.line is not None}
    in_play |= {line for buffer in ref.evicting for line in buffer} | {p[3] for p in got}
    in_play |= {m.line for h in ref.homes for m in h.queue} | {m.line for ms in ref.stalled for m in ms}
    assert s.lines() == sorted(in_play)
    assert all(line in in_play for h in ref.homes for line, e in h.entries.items() if e["state"] != "I")


def plain_run(prog, cfg):
    try:
        return Machine(prog, **cfg).run(), None
    except SimFault as f:
        return None, f.fault


@LIGHT
@given(programs(), network_configs, st.lists(st.integers(1, 30), max_size=10), st.booleans())
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run(src, cfg, gaps, history):
    cfg = flatten(cfg)
    prog = assemble(src)
    # history: checkpoints every 7 cycles, so the run also goes through saved and restored states
    s = Stepper(prog, history=1 << 20 if history else 0, checkpoint_every=7, **cfg)
    ref = reference(prog, cfg)
    plain, fault = plain_run(prog, cfg)
    try:
        if not step_through_gaps(s, ref, gaps, fault, lambda s, r: assert_same_state(s, r, cfg)):
            return
        if history and s.started and not s.done and s.cycle > 3:
            back = s.cycle // 2                # going back gives that cycle's machine exactly
            s.goto(back)
            again = reference(prog, cfg)
            while again.now < back:
                assert again.step()
            assert_same_state(s, again, cfg)
        res = s.finish()
    except SimFault as got:
        assert got.fault == fault
        return
    assert fault is None
    assert res.to_json() == plain.to_json()
    assert res.events == plain.events
    assert res.network == plain.network and res.network is not None


@pytest.mark.slow
@settings(deadline=None)
@given(programs(), network_configs, st.lists(st.integers(1, 30), max_size=10), st.booleans())
def test_pauses_match_the_reference_and_the_end_matches_a_plain_run_many(src, cfg, gaps, history):
    test_pauses_match_the_reference_and_the_end_matches_a_plain_run.hypothesis.inner_test(src, cfg, gaps, history)


def ref_writes(prog, ref):
    """The writes in the reference trace: a store, push or xchg that took effect (a hit at issue,
    a miss when it completed), as (cycle, core, pc, address, (before, after) of a miss, else None)."""
    return [(c, core, pc, address, (before, after) if event != "hit" else None)
            for c, core, pc, event, _, address, before, after in ref.trace
            if (event == "hit" or event.startswith("done ")) and decode(prog.code_image[pc]).bus in ("write", "swap")]


@settings(max_examples=max(1, settings().max_examples // 15), deadline=None)
@given(programs(), network_configs, st.integers(0, 63), st.integers(0, 40))
def test_watches_and_breakpoints_stop_where_the_reference_model_reaches_them(src, cfg, address, pc):
    cfg = flatten(cfg)
    prog = assemble(src)
    pc %= len(prog.code_image)
    ref = reference(prog, cfg, trace=True)
    try:
        ref.run()
    except RefFault:
        return
    writes = [w for w in ref_writes(prog, ref) if w[3] == address]
    s = Stepper(prog, **cfg)
    s.add_watch(address)
    along = reference(prog, cfg)        # the state at each stop is the reference model's there
    for cycle, core, wpc, _, words in writes:
        stop = s.cont()
        assert stop.reasons == ("watch",) and stop.cycle == cycle + 1
        (_, w), = stop.watches
        assert (w.cycle, w.core, w.pc, w.address) == (cycle, core, wpc, address)
        assert words is None or (w.before, w.after) == words
        while along.now < stop.cycle:
            assert along.step()
        assert_same_state(s, along, cfg)
    assert "end" in s.cont().reasons
    # a breakpoint at pc: every cycle in which a core is about to issue there, in the reference model
    again = reference(prog, cfg)
    want = []
    while True:
        want += [(again.now, k.id) for k in again.cores if k.state == "run" and k.next_issue == again.now
                 and k.pc == pc]
        if not again.step():
            break
    s = Stepper(prog, **cfg)
    s.add_break(pc)
    got, along = [], reference(prog, cfg)
    while True:
        stop = s.cont()
        if "end" in stop.reasons:
            break
        got += [(stop.cycle, core) for _, core, _ in stop.breaks]
        while along.now < stop.cycle:
            assert along.step()
        assert_same_state(s, along, cfg)
    assert got == want


@pytest.mark.slow
@settings(deadline=None)
@given(programs(), network_configs, st.integers(0, 63), st.integers(0, 40))
def test_watches_and_breakpoints_stop_where_the_reference_model_reaches_them_many(src, cfg, address, pc):
    test_watches_and_breakpoints_stop_where_the_reference_model_reaches_them.hypothesis.inner_test(src, cfg, address, pc)


def test_step_instruction_finish_and_the_views_of_a_read_miss_on_a_mesh():
    # core 0 misses on word 12 (line 3, home tile 3 of a 2x2 mesh); the others halt at once
    prog = assemble(SKIP_OTHERS.format(body="  ld r2 12"))
    cfg = dict(cores=4, cache="msi", interconnect="mesh", coherence="directory", mem_words=MEM)
    s = Stepper(prog, **cfg)
    plain = Machine(prog, **cfg).run()
    s.until_pc(2, core=0)               # the ld
    issue = s.cycle
    s.step(1)
    c0 = s.core(0)
    assert (c0.state, c0.since, c0.address) == ("waiting", issue, 12)
    line = s.line(12)
    assert (line.line, line.address, line.home) == (12 // 4, 12, 3)
    assert line.copies == ((0, "IS^D", "cache"),)
    (m,) = s.messages()
    assert (m.kind, m.src, m.dst, m.line, m.requester) == ("GetS", 0, 3, 3, 0)
    assert s.lines() == [3]
    with pytest.raises(S2mcError, match="^interconnect mesh: this machine has no bus"):
        s.bus()
    with pytest.raises(S2mcError, match="^this machine has no store buffers"):
        s.store_buffer(0)
    stop = s.step_instruction(0)        # the miss completes: core 0 runs again, the line is S at home
    assert s.core(0).state == "running" and s.registers(0)[2] == s.read(12)[0]
    assert s.line(12).copies == ((0, "S", "cache"),) and s.line(12).sharers == (0,)
    assert stop.cycle == issue + plain.cores[0]["miss_cycles"] + 1
    res = s.finish()
    assert res.to_json() == plain.to_json() and res.network == plain.network


def test_the_bus_machine_has_no_directory_in_one_line():
    s = Stepper(assemble(".code 0\n  trap r0 #0\n"), cache="msi")
    with pytest.raises(S2mcError, match=r"^this is the bus machine \(interconnect bus, coherence snoop\): the "
                       "directory is a ring's or a mesh's"):
        s.line(0)
    with pytest.raises(S2mcError, match="^this is the bus machine .*: the network is"):
        s.messages()


@pytest.mark.parametrize("src", [RACE, BARRIER.format(body="  st r5 12")], ids=["race", "barrier"])
def test_going_back_on_a_ring_gives_the_reference_models_state(src):
    prog = assemble(src)
    cfg = dict(cores=4, cache="mesi", interconnect="ring", coherence="directory", mem_words=MEM,
               cache_lines=4, cache_ways=1, line_words=4, cache_hit_latency=1, max_cycles=MAX_CYCLES)
    s = Stepper(prog, history=1 << 20, checkpoint_every=5, **cfg)
    end = Machine(prog, **cfg).run().cycles
    s.run_until(end - 1)
    for back in (end // 3, 1, end // 2):
        s.goto(back)
        ref = reference(prog, cfg)
        while ref.now < back:
            assert ref.step()
        assert_same_state(s, ref, cfg)


# -- the debugger's commands (s2mc debug; docs/debugger.md) ----------------------------------------

MESH4 = dict(cores=4, cache="msi", interconnect="mesh", coherence="directory", mem_words=MEM)


def race_at(cycle):
    """The debugger on RACE (cores 0 and 1 store to word 12) at `cycle`, and the reference model there."""
    from s2mc.simulator.debugger import Debugger
    prog = assemble(RACE)
    d = Debugger.for_program(prog, **MESH4)
    d.execute(f"until {cycle}")
    ref = reference(prog, {**MESH4})
    while ref.now < cycle:
        assert ref.step()
    return d, ref


@pytest.mark.parametrize("cycle", [3, 6, 9, 14])
def test_dir_shows_the_reference_models_entry_copies_and_home(cycle):
    d, ref = race_at(cycle)
    line, W = 12 // 4, 4
    home = ref.homes[line % 4]
    e = home.entries.get(line, {"state": "I", "sharers": set(), "owner": None})
    out = d.execute("dir 12").splitlines()
    owner = f", owner core {e['owner']}" if e["owner"] is not None else ""
    sharers = (", sharers " + " ".join(f"core {k}" for k in sorted(e["sharers"]))) if e["sharers"] else ", no sharers"
    assert out[0] == f"address 12 (12): line {line} (words 12..15), home tile {line % 4}: directory state " \
                     f"{e['state']}{owner}{sharers}"
    copies = [f"core {k} {c.find(line).state}" for k, c in enumerate(ref.caches) if c.find(line) is not None]
    assert out[1] == "  copies: " + (", ".join(copies) if copies else "in no cache")
    assert out[2].startswith(f"  home tile {line % 4}: ")
    assert f"{len(home.queue)} message" in out[2]
    assert out[3:] == [f"    {m.kind} from tile {m.src} for line {m.line}" +
                       (f" (for core {m.requester})" if m.requester != m.src else "") for m in home.queue]


@pytest.mark.parametrize("cycle", [1, 3, 6, 9])
def test_net_lists_the_reference_models_messages(cycle):
    d, ref = race_at(cycle)
    out = d.execute("net").splitlines()
    packets = ref_packets(ref)
    assert out[0] == f"cycle {cycle}: {len(packets)} message{'s' if len(packets) != 1 else ''} in the mesh"
    for text, (kind, src, dst, line, requester, router, port, ready, delivered) in zip(out[1:], packets):
        assert text.split()[:4] == [kind, str(src), "->", str(dst)] and f"line {line}" in text
        if delivered:
            assert text.endswith(f"arriving at tile {dst} in cycle {delivered}")
        else:
            assert f"at router {router}," in text and f"port {port}" in text and text.endswith(f"cycle {ready}")
    queued = [(m.kind, m.src, h) for h, home in enumerate(ref.homes) for m in home.queue]
    stalled = [(m.kind, m.src, k) for k, ms in enumerate(ref.stalled) for m in ms]
    assert len(out) == 1 + len(packets) + len(queued) + len(stalled)


def test_cache_info_machine_and_the_state_on_a_mesh():
    d, ref = race_at(6)
    out = d.execute("info machine").splitlines()
    assert out[1] == ("interconnect mesh (mesh of 2x2 routers; router latency 1 cycle, link latency 1 cycle, "
                      "4 words a flit), coherence directory (each line's home: tile line mod 4)")
    assert out[2] == "cache msi: 64 lines, 2 ways, 4 words a line, hit latency 1 cycle"
    state = d.state()
    assert state["bus"] is None
    net = state["network"]
    assert net["interconnect"] == "mesh" and len(net["messages"]) == len(ref_packets(ref))
    for row in net["lines"]:
        e = ref.homes[row["home"]].entries.get(row["line"], {"state": "I", "sharers": set(), "owner": None})
        assert (row["state"], row["owner"], row["sharers"]) == (e["state"], e["owner"], sorted(e["sharers"]))
        assert row["home"] == row["line"] % 4
    held = {(k, c.find(3).state) for k, c in enumerate(ref.caches) if c.find(3) is not None}
    shown = d.execute("cache 12").splitlines()
    assert shown == ["address 12 (12): line 12..15, set 3: " +
                     (", ".join(f"core {k} {st}" for k, st in sorted(held)) if held else "in no cache")]


def test_a_ring_with_store_buffers_is_refused_in_one_line():
    with pytest.raises(S2mcError, match="^interconnect ring with consistency tso: a stepped ring or mesh has no "
                                        "store buffers so far; step it with consistency sc"):
        Stepper(assemble(RACE), cores=2, cache="msi", interconnect="ring", coherence="directory", consistency="tso")


def test_cache_shows_each_copys_own_words():
    # RACE: core 1's store of 11 to word 12 takes effect in its M copy at cycle 16, while core 0's
    # GetM, forwarded to core 1, waits; core 0's copy, IM^AD, holds no words of the line yet
    from s2mc.simulator.debugger import Debugger
    d = Debugger(Stepper(assemble(RACE), **MESH4))
    d.execute("watch 12")
    assert d.execute("continue").startswith("watch 1: core 1 wrote 11 to address 12 (12; was 0) in cycle 16")
    out = d.execute("cache").splitlines()
    assert out[0] == "core 0: MSI, 1 of 64 lines valid (32 sets x 2 ways, 4 words a line, the copy's own words)"
    assert out[1].split() == ["set", "3", "way", "0", "line", "12", "12", "IM^AD", "0", "0", "0", "0"]
    assert out[3].split() == ["set", "3", "way", "0", "line", "12", "12", "M", "11", "0", "0", "0"]
    assert d.execute("mem 12").split() == ["12", "12", "11"]      # the coherent word: the M copy's
    bus = Debugger(Stepper(assemble(RACE), cores=2, cache="msi"))
    assert "the copy's own words" not in bus.execute("cache")


def test_bad_network_commands_say_why_in_one_line():
    from s2mc.simulator.debugger import Debugger
    d, _ = race_at(2)
    assert d.execute("bus") == "bus: interconnect mesh: this machine has no bus; its cores meet over the network " \
                               "(see the messages in flight and the lines' directory entries)\n"
    assert d.execute("dir") == "dir: usage: dir ADDR|SYMBOL\n"
    assert d.execute("dir nosuch") == "dir: no data label 'nosuch' in the program\n"
    assert d.execute("dir 64") == "dir: data address 64 is outside the memory (0..63)\n"
    assert d.execute("net 1") == "net: too many arguments (usage: net)\n"
    assert d.execute("sb") == "sb: this machine has no store buffers (consistency sc); debug with --consistency " \
                              "tso or pso\n"
    bus = Debugger.for_program(assemble(RACE), cores=2)
    assert bus.execute("dir 12") == ("dir: this is the bus machine (interconnect bus, coherence snoop): the "
                                     "directory is a ring's or a mesh's (--interconnect ring|mesh --coherence "
                                     "directory)\n")
    assert bus.execute("net") .startswith("net: this is the bus machine")
