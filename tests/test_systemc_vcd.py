"""VCD traces of the SystemC engine (`--vcd`): they parse with a VCD reader (vcdvcd), show one grant
pulse per memory access, stall exactly in the counted stall cycles, halt at each core's finish
cycle, and end at the run's total cycles. Tracing changes nothing in the results."""
import json
from decimal import Decimal

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2gen
from s2mc.cli.main import cli
from s2mc.isa import assemble
from s2mc.simulator import Machine
from systemc_helpers import needs_systemc, outcome

vcdvcd = pytest.importorskip("vcdvcd")
pytestmark = needs_systemc

PROG = """
.code 0
  cid r1
  ld r2 @0 r1
  xchg r2 r1
  st r2 @8 r1
  sync
  trap r1 #1
  push r1 r2
  trap r0 #0
.data 0
  1 2 3 4 5 6 7 8
.end
"""


def parse(path, cores):
    """Per-signal lists of (cycle, value), with the VCD's time unit converted to cycles (1 ns)."""
    v = vcdvcd.VCDVCD(str(path))
    to_cycles = Decimal(v.timescale["timescale"]) / Decimal("1e-9")
    sig = {}
    for name in v.signals:
        short = name.split(".", 1)[1].split("[")[0]   # drop the top scope and any bit range
        sig[short] = [(Decimal(t) * to_cycles, val) for t, val in v[name].tv]
    assert {"clk", "bus.owner", "bus.busy"} <= set(sig)
    for i in range(cores):
        assert {f"core{i}.{s}" for s in ("request", "grant", "stall", "sync_wait", "halted")} <= set(sig)
    return sig


def rises(tv):
    first = [tv[0][0]] if tv and tv[0][1] == "1" else []
    return first + [t for (t, v), (_, prev) in zip(tv[1:], tv) if v == "1" and prev == "0"]


def high_time(tv, end):
    total, since = Decimal(0), None
    for t, v in tv:
        if v == "1" and since is None:
            since = t
        elif v == "0" and since is not None:
            total, since = total + t - since, None
    return total + (end - since if since is not None else 0)


def check_trace(res, sig):
    cycles = res.cycles
    last = max(t for name, tv in sig.items() if name != "bus.busy" for t, _ in tv)
    assert last == cycles, "the last change falls at the run's total cycles"
    # a store buffer's last drain may keep the bus busy after the last core halted
    busy_end = max(cycles, sig["bus.busy"][-1][0])
    assert busy_end == cycles or res.config.buffered
    total_grants = 0
    for i, core in enumerate(res.cores):
        grants = rises(sig[f"core{i}.grant"])   # the core's own accesses: its drains only use the bus
        assert len(grants) == core["mem_accesses"] - core.get("drain_bus_accesses", 0)
        total_grants += len(grants)
        assert high_time(sig[f"core{i}.stall"], cycles) == core["stall_cycles"]
        assert rises(sig[f"core{i}.halted"]) == [core["cycles"]]
    assert total_grants == sum(c["mem_accesses"] - c.get("drain_bus_accesses", 0) for c in res.cores)
    clock_edges = rises(sig["clk"])
    assert clock_edges == list(range(cycles)), "one rising clock edge per simulated cycle"
    assert high_time(sig["bus.busy"], busy_end) == res.bus_busy_cycles


@pytest.mark.parametrize("cores,latency,arb", [(1, 2, "fifo"), (3, 1, "fixed"), (4, 2, "round_robin"),
                                               (8, 5, "fifo")])
def test_vcd_signals_match_the_counters(tmp_path, cores, latency, arb):
    path = tmp_path / "run.vcd"
    m = Machine(assemble(PROG), cores=cores, mem_latency=latency, arbitration=arb, mem_words=64,
                engine="systemc", vcd=path)
    res = m.run()
    check_trace(res, parse(path, cores))


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s2gen.programs(max_chunks=8), st.fixed_dictionaries({
    "cores": st.integers(1, 6), "mem_latency": st.sampled_from([1, 2, 5]),
    "arbitration": st.sampled_from(["fifo", "fixed", "round_robin"])}))
def test_tracing_changes_nothing(tmp_path, src, cfg):
    """With --vcd the cores meet the kernel at every signal change; results stay identical."""
    prog = assemble(src)
    path = tmp_path / "r.vcd"
    fast = outcome(prog, "fast", mem_words=1024, **cfg)
    traced = outcome(prog, "systemc", mem_words=1024, vcd=path, **cfg)
    assert traced == fast
    if "fault" not in fast:
        m = Machine(prog, mem_words=1024, engine="systemc", vcd=path, **cfg)
        check_trace(m.run(), parse(path, cfg["cores"]))


def test_cli_run_with_vcd(tmp_path):
    src = tmp_path / "p.s"
    src.write_text(PROG)
    vcd = tmp_path / "out" / "trace.vcd"
    vcd.parent.mkdir()
    runner = CliRunner()
    a = runner.invoke(cli, ["run", str(src), "--cores", "4", "--json"])
    b = runner.invoke(cli, ["run", str(src), "--cores", "4", "--json", "--engine", "systemc", "--vcd", str(vcd)])
    assert a.exit_code == 0 and b.exit_code == 0, b.output
    ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    assert jb["config"].pop("engine") == "systemc" and ja["config"].pop("engine") == "fast"
    assert ja == jb
    assert vcd.read_text().startswith("$date")


# Every state a line can take, as the VCD shows it (s2::LineState, docs/systemc.md).
LINE_STATES = ("I", "S", "E", "O", "M", "Sc", "Sm")


@pytest.mark.parametrize("protocol", s2gen.PROTOCOLS)
@pytest.mark.parametrize("hit_latency", [1, 3])
def test_vcd_with_caches_shows_each_line_and_the_counted_stalls(tmp_path, protocol, hit_latency):
    """The signals still match the counters (hits of H > 1 cycles stall H - 1), and each cache slot's
    state and line end as the fast engine's caches end (Machine.cache): another engine as oracle."""
    cfg = dict(cores=3, mem_words=64, cache=protocol, cache_lines=4, cache_ways=2, line_words=2,
               cache_hit_latency=hit_latency)
    path = tmp_path / "run.vcd"
    res = Machine(assemble(PROG), engine="systemc", vcd=path, **cfg).run()
    sig = parse(path, 3)
    check_trace(res, sig)
    fast = Machine(assemble(PROG), **cfg)
    assert fast.run().cores == res.cores
    for core in range(3):
        for slot, line in enumerate(fast.cache(core)):
            state = sig[f"core{core}.cache.slot{slot}.state"][-1][1]
            address = sig[f"core{core}.cache.slot{slot}.line"][-1][1]
            want = ("I", None) if line is None else (line[1], line[0])   # line: (address, state, use)
            assert LINE_STATES[int(state, 2)] == want[0], (core, slot)
            if line is not None:
                assert int(address, 2) == want[1], (core, slot)
    assert any(int(tv[-1][1], 2) for name, tv in sig.items() if name.endswith(".state")), "some line is valid"


@settings(max_examples=20, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s2gen.programs(max_chunks=8), s2gen.cache_configs())
def test_tracing_with_caches_changes_nothing(tmp_path, src, cfg):
    """With caches the cores meet the kernel at every lookup anyway; --vcd adds its signal waits."""
    prog = assemble(src)
    path = tmp_path / "r.vcd"
    assert outcome(prog, "systemc", mem_words=1024, vcd=path, **cfg) == outcome(prog, "fast", mem_words=1024, **cfg)


# Two cores store to four words (core 1 after a fence), load one back (forwarded) and print: the
# buffers fill, drain on the bus and hold the fence and the traps back.
BUFFERED = """
.code 0
  cid r1
  add r2 r1 #1
  st r2 @0 r1
  st r2 @4 r1
  st r2 @2 r1
  jf r1 go
  fence
:go
  st r1 @6 r1
  ld r3 @4 r1
  trap r3 #1
  trap r0 #0
.data 0
  0 0 0 0 0 0 0 0
.end
"""


def value_at(tv, cycles):
    """A signal's value (an integer) at the end of each cycle 0 .. cycles-1."""
    values, k, v = [], 0, 0
    for c in range(cycles):
        while k < len(tv) and tv[k][0] <= c:
            v = int(tv[k][1], 2)
            k += 1
        values.append(v)
    return values


@pytest.mark.parametrize("consistency", ["tso", "pso"])
@pytest.mark.parametrize("cache", ["none", "mesi"])
def test_vcd_shows_each_store_buffers_occupancy(tmp_path, consistency, cache):
    """coreN.store_buffer after each cycle is the count of the core's `buffer` events minus its
    `drain` events (the event log, another view of the same run), and the other signals still
    match the counters: the fence's and the traps' waits are stalls, the drains are not."""
    path = tmp_path / "run.vcd"
    m = Machine(assemble(BUFFERED), cores=2, mem_words=64, engine="systemc", vcd=path, trace=True,
                consistency=consistency, store_buffer_entries=2, cache=cache)
    res = m.run()
    sig = parse(path, 2)
    check_trace(res, sig)
    for i in range(2):
        changes = [(c, 1 if e == "buffer" else -1) for c, k, _, e, *_ in res.trace
                   if k == i and (e == "buffer" or e.startswith("drain"))]
        assert len(changes) == 8
        want = [sum(d for c, d in changes if c <= cycle) for cycle in range(res.cycles)]
        assert value_at(sig[f"core{i}.store_buffer"], res.cycles) == want
        assert max(want) == 2
    assert sum(c["store_buffer_full_stalls"] + c["fence_stall_cycles"] for c in res.cores) > 0


def test_vcd_without_store_buffers_has_no_buffer_signal(tmp_path):
    path = tmp_path / "run.vcd"
    Machine(assemble(BUFFERED), cores=2, mem_words=64, engine="systemc", vcd=path).run()
    assert not [name for name in parse(path, 2) if "store_buffer" in name]


@settings(max_examples=15, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(s2gen.programs(max_chunks=8), s2gen.buffered_configs())
def test_tracing_with_store_buffers_changes_nothing(tmp_path, src, cfg):
    """With store buffers and --vcd the cores meet the kernel at every instruction and signal."""
    prog = assemble(src)
    path = tmp_path / "r.vcd"
    fast = outcome(prog, "fast", mem_words=1024, **cfg)
    assert outcome(prog, "systemc", mem_words=1024, vcd=path, **cfg) == fast
    if "fault" not in fast:
        check_trace(Machine(prog, mem_words=1024, engine="systemc", vcd=path, **cfg).run(), parse(path, cfg["cores"]))
