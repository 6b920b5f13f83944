"""burst4 (docs/timing-model.md rule 3) on programs made of runs of bus accesses, the only programs
where it differs from fixed priority: the fast engine against the reference model and the SystemC
engine. The general random programs (s2gen) seldom give a core 4 grants in a row while another
waits, so these are drawn to (and a test checks that they do)."""
import random

from hypothesis import given, settings
from hypothesis import strategies as st
from test_sim_property import assert_matches_reference

from s2mc.isa import assemble
from s2mc.simulator import run
from systemc_helpers import assert_same, needs_systemc


def bursty(delay: int, chunks: list[tuple[int, int, bool]]) -> str:
    """Every core waits cid x delay iterations (so the cores fall out of step), then runs the chunks:
    `gap` nops and a run of `length` accesses to its own word (stores when `store`), then halts."""
    lines = [".code 0", "  cid r1", f"  mul r3 r1 #{delay}", ":delay", "  jf r3 go", "  sub r3 r3 #1",
             "  jmp delay", ":go"]
    for gap, length, store in chunks:
        lines += ["  nop"] * gap + [f"  {'st' if store else 'ld'} r2 @0 r1"] * length
    return "\n".join(lines + ["  trap r0 #0", ".data 0", "  1 2 3 4 5 6", ".end"]) + "\n"


CHUNKS = st.lists(st.tuples(st.integers(0, 6), st.integers(1, 9), st.booleans()), min_size=1, max_size=8)
CONFIGS = st.fixed_dictionaries({"cores": st.integers(2, 6), "mem_latency": st.integers(1, 3),
                                 "arbitration": st.just("burst4")})


@settings(max_examples=300)
@given(st.integers(0, 5), CHUNKS, CONFIGS)
def test_burst4_matches_the_reference_model(delay, chunks, cfg):
    assert_matches_reference(bursty(delay, chunks), cfg)


@needs_systemc[0]
@needs_systemc[1]
@settings(max_examples=60)
@given(st.integers(0, 5), CHUNKS, CONFIGS)
def test_burst4_is_the_same_on_systemc(delay, chunks, cfg):
    assert_same(assemble(bursty(delay, chunks)), mem_words=64, **cfg)


#: With store buffers a drain's grant counts towards the streak as a grant to its core (rule 6).
BUFFERS = st.sampled_from([{"consistency": "tso"}, {"consistency": "pso", "store_buffer_entries": 2}])


@settings(max_examples=100)
@given(st.integers(0, 5), CHUNKS, CONFIGS, BUFFERS)
def test_burst4_with_store_buffers_matches_the_reference_model(delay, chunks, cfg, buffers):
    assert_matches_reference(bursty(delay, chunks), {**cfg, **buffers})


@needs_systemc[0]
@needs_systemc[1]
@settings(max_examples=30)
@given(st.integers(0, 5), CHUNKS, CONFIGS, BUFFERS)
def test_burst4_with_store_buffers_is_the_same_on_systemc(delay, chunks, cfg, buffers):
    assert_same(assemble(bursty(delay, chunks)), mem_words=64, **cfg, **buffers)


def test_the_bursty_programs_exercise_the_burst_limit():
    """On most of these programs burst4 and fixed priority give different finish cycles: the tests
    above do test the limit."""
    rng = random.Random(14)
    differ = 0
    for _ in range(100):
        chunks = [(rng.randint(0, 6), rng.randint(1, 9), rng.random() < 0.5) for _ in range(rng.randint(1, 8))]
        prog, cores = assemble(bursty(rng.randint(0, 5), chunks)), rng.randint(2, 6)
        got = [run(prog, cores=cores, mem_latency=2, arbitration=a, mem_words=64).finish_cycles
               for a in ("fixed", "burst4")]
        differ += got[0] != got[1]
    assert differ >= 40, differ
