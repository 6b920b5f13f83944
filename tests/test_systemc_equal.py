"""The SystemC engine gives the fast engine's results exactly (docs/timing-model.md): per-core counters,
output, trace, registers and final memory, on the golden cycle programs, random programs, the
teaching programs and the compiler's programs, for every arbitration policy, latencies 1, 2, 5
and 1-8 cores, with and without caches and store buffers (tso, pso). The hand-computed golden cycle tests (test_sim_cycles.py) run on both engines
themselves, through their `engine` fixture."""
import glob
import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import s2gen
import test_sim_cycles as golden
from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble
from s2mc.simulator.reference import ReferenceMachine
from systemc_helpers import assert_same, needs_systemc

pytestmark = needs_systemc
ROOT = Path(__file__).resolve().parent.parent
ARBS = ["fifo", "fixed", "round_robin", "burst4"]


@pytest.mark.parametrize("consistency", ["sc", "tso", "pso"])
@pytest.mark.parametrize("src", [golden.P, golden.T], ids=["P", "T"])
@pytest.mark.parametrize("latency", [1, 2, 5])
def test_golden_programs_all_configs(src, latency, consistency):
    prog = assemble(src)
    for cores, arb in itertools.product(range(1, 9), ARBS):
        assert_same(prog, cores=cores, mem_latency=latency, arbitration=arb, mem_words=64, consistency=consistency)


WIDE_CONFIGS = st.fixed_dictionaries({
    "cores": st.integers(1, 8),
    "mem_latency": st.sampled_from([1, 2, 5]),
    "arbitration": st.sampled_from(ARBS),
    "max_cycles": st.sampled_from([20_000, 20_000, 40, 150]),   # small limits: cycle-limit faults
})


@settings(max_examples=120)
@given(s2gen.programs(), WIDE_CONFIGS)
def test_random_programs(src, cfg):
    assert_same(assemble(src), mem_words=1024, **cfg)


@settings(max_examples=80)
@given(s2gen.programs(), s2gen.cache_configs())
def test_random_programs_with_caches(src, cfg):
    """Every protocol and cache shape: the same cycles, counters (the caches' included), trace,
    registers and memory; the fast engine is held to the reference model in test_sim_property."""
    assert_same(assemble(src), mem_words=1024, max_cycles=20_000, **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", s2gen.PROTOCOLS)
@settings(max_examples=150)
@given(src=s2gen.programs(max_chunks=30), cfg=s2gen.cache_configs())
def test_random_programs_with_caches_long(protocol, src, cfg):
    assert_same(assemble(src), mem_words=1024, max_cycles=20_000, **{**cfg, "cache": protocol})


#: With store buffers (docs/timing-model.md, "Store buffers"): tso or pso and a small buffer.
BUFFERS = st.fixed_dictionaries({"consistency": st.sampled_from(["tso", "pso"]),
                                 "store_buffer_entries": st.sampled_from([1, 2, 3, 4, 8])})


@settings(max_examples=40)
@given(s2gen.programs(), WIDE_CONFIGS, BUFFERS)
def test_random_programs_with_store_buffers(src, cfg, buffers):
    """tso and pso, 1-8 cores, every policy, cycle-limit faults: the same cycles, every counter (the
    buffers' included), trace, registers and memory; the fast engine is held to the reference model
    in test_sim_property and test_store_buffers."""
    assert_same(assemble(src), mem_words=1024, **cfg, **buffers)


@settings(max_examples=40)
@given(s2gen.programs(), s2gen.buffered_configs(cached=True))
def test_random_programs_with_store_buffers_and_caches(src, cfg):
    """tso and pso with every protocol and cache shape: drains that hit or make transactions."""
    assert_same(assemble(src), mem_words=1024, max_cycles=20_000, **cfg)


@pytest.mark.slow
@pytest.mark.parametrize("protocol", ["none", *s2gen.PROTOCOLS])
@settings(max_examples=150)
@given(src=s2gen.programs(max_chunks=30), cfg=s2gen.buffered_configs(cached=True))
def test_random_programs_with_store_buffers_long(protocol, src, cfg):
    assert_same(assemble(src), mem_words=1024, max_cycles=20_000, **{**cfg, "cache": protocol})


def _teaching_programs():
    progs = [(Path(p).name, "asm", p) for p in sorted(glob.glob(str(ROOT / "workloads/asm/*.s")))]
    progs += [(Path(p).name, "rz", p) for p in sorted(glob.glob(str(ROOT / "workloads/rz/*.rz")))]
    # the compiler's own test programs, at both optimisation levels
    progs += [(f"{Path(p).name}-O{o}", f"rz{o}", p) for p in sorted(glob.glob(str(ROOT / "tests/rz/*.rz")))
              for o in (0, 1)]
    return progs


@pytest.mark.parametrize("name,kind,path", _teaching_programs(), ids=[p[0] for p in _teaching_programs()])
def test_teaching_programs(name, kind, path):
    if kind.startswith("rz"):
        opt = int(kind[2:] or 1)
        prog = compile_rz(Path(path).read_text(), opt=opt, filename=path).program
    else:
        prog = assemble(Path(path).read_text(), path)
    for cores, latency, arb in [(1, 2, "fifo"), (2, 1, "fixed"), (4, 2, "round_robin"), (8, 5, "fifo"),
                                (3, 5, "fixed"), (5, 1, "round_robin")]:
        assert_same(prog, cores=cores, mem_latency=latency, arbitration=arb, mem_read=4096, trace=False,
                    max_cycles=1_000_000)
    # with caches: one protocol per program, in turn, on a small cache that evicts
    proto = s2gen.PROTOCOLS[sum(map(ord, name)) % len(s2gen.PROTOCOLS)]
    assert_same(prog, cores=4, mem_latency=2, mem_read=4096, trace=False, max_cycles=1_000_000, cache=proto,
                cache_lines=8, cache_ways=2, line_words=4)
    # with store buffers: tso or pso in turn, without caches and with this program's protocol
    model = ("tso", "pso")[sum(map(ord, name)) % 2]
    assert_same(prog, cores=3, mem_latency=2, mem_read=4096, trace=False, max_cycles=1_000_000,
                consistency=model, store_buffer_entries=2)
    assert_same(prog, cores=2, mem_latency=1, arbitration="round_robin", mem_read=4096, trace=False,
                max_cycles=1_000_000, consistency=model, cache=proto, cache_lines=8, cache_ways=2, line_words=4)


def test_fault_messages_are_the_same():
    """Each fault kind: the same fault dict and the same one-line message in both engines."""
    cases = {
        "division_by_zero": ".code 0\ncid r1\nmov r2 #5\ndiv r3 r2 r1\ntrap r0 #0\n",
        "address_out_of_range": ".code 0\nmov r1 #5000\nld r2 @0 r1\ntrap r0 #0\n",
        "pc_out_of_range": ".code 0\nnop\njmp 100\n",
        "undefined_opcode": ".code 0\nnop\n.data 1\n0\n.code 2\n.end\n",
        "cycle_limit": ".code 0\n:l\nld r1 0\njmp l\n",
    }
    for kind, src in cases.items():
        prog = assemble(src)
        if kind == "undefined_opcode":
            prog = assemble(".code 0\nnop\n")
            prog.segments[0].words.append(0xFFFFFFFF)   # xop 4095: undefined
        for cores, consistency in itertools.product((1, 3), ("sc", "tso", "pso")):
            out = assert_same(prog, cores=cores, mem_words=1024, max_cycles=500, consistency=consistency)
            assert out["fault"]["kind"] == kind, out


# Memory instructions whose register fields alias: the SystemC core applies the word the memory
# returned to its own registers (s2::writeback) and sends the stored word with the request
# (s2::store_value), so `push r r` must store the incremented pointer as the ISA's sequential
# semantics say, `pop r r` must keep the decremented pointer, `xchg r r` must swap with M[R[r]].
ALIASING = {
    "push r1 r1": (".code 0\nmov r1 #10\npush r1 r1\ntrap r0 #0\n", {1: 11}, {11: 11}),
    "push r0 r0": (".code 0\npush r0 r0\ntrap r0 #0\n.data 0\n5 6\n", {}, {1: 0}),
    "pop r1 r1": (".code 0\nmov r1 #3\npop r1 r1\ntrap r0 #0\n.data 3\n77\n", {1: 2}, {3: 77}),
    "xchg r1 r1": (".code 0\nmov r1 #4\nxchg r1 r1\ntrap r0 #0\n.data 4\n9\n", {1: 9}, {4: 4}),
    "xchg r0 r2": (".code 0\nmov r2 #5\nxchg r0 r2\ntrap r0 #0\n.data 5\n8\n", {0: 0, 2: 5}, {5: 0}),
}


@pytest.mark.parametrize("name", list(ALIASING))
def test_memory_instructions_with_aliased_registers(name):
    src, regs, mem = ALIASING[name]
    prog = assemble(src)
    out = assert_same(prog, cores=1, mem_words=64)
    for reg, value in regs.items():       # hand-computed from the ISA's semantics (docs/isa.md)
        assert out["registers"][0][reg] == value, (name, reg)
    for addr, value in mem.items():
        assert out["memory"][addr] == value, (name, addr)
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=64)
    ref.run()
    assert out["registers"][0] == ref.cores[0].r and out["memory"] == ref.mem
