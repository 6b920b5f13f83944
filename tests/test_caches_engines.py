"""The engines' own side of the caches: the fast binding and the SystemC child refuse bad cache
parameters with one line, Machine.cache() shows a core's lines (checked against the reference
model's caches), and the event log's lane of other cores' state changes merges in order even
when every core spills (simulator/include/s2mc/trace.h)."""

import pytest

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine, _fast
from s2mc.simulator.reference import ReferenceMachine
from systemc_helpers import needs_systemc, run_child
from test_caches_hand import HANDOVER
from test_sim_trace import fast_trace, reference_trace

HALT = ".code 0\n  trap r0 #0\n"
CODE = [assemble(HALT).code_image[0] & 0xFFFFFFFF]


@pytest.mark.parametrize("kwargs,message", [
    (dict(cache="lru"), "unknown cache 'lru' (choose none, msi, mesi, moesi, dragon)"),
    (dict(cache="msi", cache_lines=3), "cache-lines 3 is not a power of two"),
    (dict(cache="msi", cache_ways=3), "cache-ways 3 is not a power of two"),
    (dict(cache="msi", line_words=6), "line-words 6 is not a power of two"),
    (dict(cache="msi", cache_lines=2, cache_ways=4), "cache-ways 4 is more than cache-lines 2"),
    (dict(cache="msi", line_words=32), "line-words 32 is more than mem-words 16"),
    (dict(cache="msi", cache_lines=0), "cache-lines 0 is out of range (1..65536)"),
    (dict(cache="msi", cache_hit_latency=101), "cache-hit-latency 101 is out of range (1..100)"),
])
def test_the_binding_refuses_bad_cache_parameters_in_one_line(kwargs, message):
    """s2mc.simulator checks first (test_sim_params); the binding called directly stays safe."""
    with pytest.raises(ValueError) as exc:
        _fast.Engine(CODE, [], 0, 1, 2, "fifo", 100, 16, **kwargs)
    assert str(exc.value) == message



@pytest.mark.parametrize("line,message", [
    ("cache none 4 2 2 1", "unknown cache protocol 'none' (choose msi, mesi, moesi, dragon)"),
    ("cache lru 4 2 2 1", "unknown cache protocol 'lru' (choose msi, mesi, moesi, dragon)"),
    ("cache msi 3 1 1 1", "cache-lines 3 is not a power of two"),
    ("cache msi 4 8 1 1", "cache-ways 8 is more than cache-lines 4"),
    ("cache msi 4 2 32 1", "line-words 32 is more than mem-words 16"),
    ("cache msi 4 2 2 0", "cache hit latency '0' is not a number in 1..100"),
    ("cache msi 4 2", "line words 'code' is not a number in 1..1024"),
])
def test_the_systemc_child_refuses_a_bad_cache_line_in_one_line(tmp_path, line, message):
    out = run_child(tmp_path, line)
    assert (out.returncode, out.stderr) == (2, f"s2mc-systemc: error: {message}\n")


def test_the_systemc_child_runs_with_a_good_cache_line(tmp_path):
    out = run_child(tmp_path, "cache dragon 4 2 2 3")
    assert out.returncode == 0, out.stderr


for _mark in needs_systemc:
    test_the_systemc_child_refuses_a_bad_cache_line_in_one_line = _mark(
        test_the_systemc_child_refuses_a_bad_cache_line_in_one_line)
    test_the_systemc_child_runs_with_a_good_cache_line = _mark(test_the_systemc_child_runs_with_a_good_cache_line)


@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi", "dragon"])
def test_machine_cache_shows_the_lines_the_reference_model_ends_with(protocol):
    cfg = dict(cores=2, cache=protocol, cache_lines=4, cache_ways=2, line_words=2)
    prog = assemble(HANDOVER)
    m = Machine(prog, mem_words=64, **cfg)
    m.run()
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=64, **cfg)
    ref.run()
    for core, cache in enumerate(ref.caches):
        want = [None if w.line is None else (w.line * 2, w.state, w.use) for ways in cache.sets for w in ways]
        assert m.cache(core) == want
    assert any(m.cache(0)) and any(m.cache(1))


def test_machine_cache_errors_are_one_line():
    m = Machine(assemble(HALT), cores=2, cache="msi")
    with pytest.raises(S2mcError, match=r"^core 2 is not one of the 2 cores$"):
        m.cache(2)
    assert Machine(assemble(HALT), cores=2).cache(1) == []


def test_machine_cache_of_the_systemc_engine_is_one_line():
    with pytest.raises(S2mcError, match="from the fast engine only"):
        Machine(assemble(HALT), cache="msi", engine="systemc").cache(0)


for _mark in needs_systemc:
    test_machine_cache_of_the_systemc_engine_is_one_line = _mark(test_machine_cache_of_the_systemc_engine_is_one_line)


# Four cores touch one line in turn, with long private runs between, so that each core runs far
# ahead of the others (spilling) while the others' grants change its cache: state changes of a
# core logged after its own later events must still come out in (cycle, core) order.
SPREAD = """
.code 0
  cid r1
  mul r2 r1 #7
  add r2 r2 #1
:spin
  sub r2 r2 #1
  jt r2 spin
  ld r3 x
  add r3 r3 r1
  st r3 x
  mov r2 #30
:run
  sub r2 r2 #1
  jt r2 run
  ld r4 x
  trap r0 #0
.data 0
:x
  5
.end
"""


@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi", "dragon"])
def test_state_changes_of_a_core_far_ahead_merge_in_order(protocol):
    prog = assemble(SPREAD)
    cfg = dict(cores=4, cache=protocol, cache_lines=2, cache_ways=1, line_words=2)
    expected = reference_trace(prog, mem_words=64, **cfg)
    got, spilled = fast_trace(prog, lane_cap=2, mem_words=64, **cfg)
    assert got == expected and spilled > 0
    assert sum(e[3].startswith("state ") and e[1] != e[4] for e in expected) >= 3   # others' changes
