"""The stack_overflow fault of declared per-core stacks (issue 12; docs/timing-model.md rule 6;
the declaration itself is tested in test_isa_stacks.py): hand-computed cycles on the fast engine,
the SystemC engine and the reference model, and random programs with a declared area on all three.
"""

import pytest
from hypothesis import given, settings, strategies as st

import s2gen
from s2mc.isa import Program, S2mcError, Stacks, assemble
from s2mc.simulator import ENGINES, Machine, SimFault
from s2mc.simulator.reference import ReferenceMachine, RefFault
from systemc_helpers import assert_same, needs_systemc
from test_sim_property import assert_matches_reference

ALL = [pytest.param(e, marks=needs_systemc if e == "systemc" else ()) for e in (*ENGINES, "reference")]


def systemc_only(test):
    for mark in needs_systemc:
        test = mark(test)
    return test


def outcome(prog: Program, engine: str, **cfg):
    """('fault', kind, core, pc, cycle, address) or ('ok', output, per-core finish cycles)."""
    if engine == "reference":
        ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, stacks=prog.stacks, **cfg)
        try:
            r = ref.run()
        except RefFault as f:
            return ("fault", f.kind, f.core, f.pc, f.cycle, f.address)
        return ("ok", "".join(t for _, _, t in r["output"]), [c["finish_cycle"] for c in r["cores"]])
    try:
        r = Machine(prog, engine=engine, **cfg).run()
    except SimFault as f:
        return ("fault", *(f.fault[k] for k in ("kind", "core", "pc", "cycle", "address")))
    return ("ok", r.output, [c["cycles"] for c in r.cores])


def test_machine_refuses_a_program_made_with_bad_stacks():
    prog = assemble(".code 0\n  trap r0 #0\n")
    prog.stacks = Stacks(4194000, 1000, 64)
    with pytest.raises(S2mcError, match=r"^the program's stacks: stack area 4194000\.\.4257999 runs past "
                                        r"the last address 4194303$"):
        Machine(prog)


# -- the fault: hand-computed ----------------------------------------------------------------------

# Core c pushes 8 words into its region (100 + 8c .. 107 + 8c), then a ninth one past its end.
# One core, L = 2: cid, mul, add, mov at cycles 0-3; each loop turn is push (granted at once, bus
# 2 cycles), sub, jt: 4 cycles, so the pushes issue at 4, 8, ..., 32 and the ninth at 4 + 8*4 = 36.
# Core 0's ninth push writes 108, the first word of core 1's region.
PUSHES = """
.stacks 100 8 2
.code 0
  cid r1            ; 0
  mul r1 r1 #8      ; 1
  add r1 r1 #99     ; 2   sp: one below the region (push increments first)
  mov r2 #8         ; 3
:loop
  push r1 r2        ; 4
  sub r2 r2 #1      ; 5
  jt r2 loop        ; 6
  push r1 r2        ; 7   one past the region
  trap r0 #0        ; 8
"""


@pytest.mark.parametrize("engine", ALL)
@pytest.mark.parametrize("cores", [1, 2])
def test_push_past_the_region_faults_at_the_hand_computed_cycle(engine, cores):
    # Two cores, fifo: both request at 4, core 0 first; core 1 is granted at 6 and stays 2 cycles
    # behind, so the bus is never contended again and core 0 still faults first, at 36.
    assert outcome(assemble(PUSHES), engine, cores=cores, mem_words=256) == \
        ("fault", "stack_overflow", 0, 7, 36, 108)


@pytest.mark.parametrize("engine", ALL)
def test_the_same_program_declaring_nothing_runs_as_before(engine):
    # Without the declaration the ninth pushes land (108 is core 1's first word, 116 nobody's):
    # core 0's ninth push at 36 is granted at once, its trap issues at 38: finish 39; core 1 runs
    # 2 cycles behind.
    prog = assemble(PUSHES.replace(".stacks 100 8 2", ""))
    assert prog.stacks is None
    assert outcome(prog, engine, cores=2, mem_words=256) == ("ok", "", [39, 41])


@pytest.mark.parametrize("engine", ALL)
def test_a_declaration_costs_no_cycle(engine):
    # Eight pushes only: everything stays in the own regions; every counter equals the undeclared
    # run. Core 0: last push at 32, sub 34, jt 35, trap 36, finish 37; core 1 two cycles later.
    src = PUSHES.replace("  push r1 r2        ; 7   one past the region\n", "")
    declared, plain = assemble(src), assemble(src.replace(".stacks 100 8 2", ""))
    assert outcome(declared, engine, cores=2, mem_words=256) == outcome(plain, engine, cores=2, mem_words=256)
    if engine != "reference":
        a = Machine(declared, engine=engine, cores=2, mem_words=256).run()
        b = Machine(plain, engine=engine, cores=2, mem_words=256).run()
        assert a.cores == b.cores and a.cycles == b.cycles == 39


READS = """
.stacks 100 8 2
.code 0
  cid r1            ; 0
  mul r1 r1 #8      ; 1
  ld r2 @{disp} r1  ; 2   core c reads disp + 8c
  trap r0 #0        ; 3
"""


@pytest.mark.parametrize("engine", ALL)
@pytest.mark.parametrize("disp,cores,expected", [
    # L = 2, fifo: the loads issue at 2 and are granted at 2, 4, 6; each trap follows 2 cycles later.
    (100, 2, ("ok", "", [5, 7])),                         # 100, 108: the own regions
    (107, 2, ("ok", "", [5, 7])),                         # 107, 115: the own regions' last words
    (99, 2, ("fault", "stack_overflow", 1, 2, 2, 107)),   # 99 is below the area; 107 is core 0's
    (108, 2, ("fault", "stack_overflow", 0, 2, 2, 108)),  # 108 is core 1's; 116 is past the area
    (100, 3, ("ok", "", [5, 7, 9])),                      # core 2 (no region) reads 116: outside the area
    (84, 3, ("fault", "stack_overflow", 2, 2, 2, 100)),   # but 100 is in it: a core without a region
])
def test_loads_in_other_regions(engine, disp, cores, expected):
    # Faults are met at issue (cycle 2), before any grant, like address_out_of_range.
    assert outcome(assemble(READS.format(disp=disp)), engine, cores=cores, mem_words=256) == expected


# -- random programs: the three models agree ---------------------------------------------------------

@st.composite
def declared_programs(draw):
    """s2gen programs (data window 0..63, each core's push/pop word at 101 + 16c, strings at 300 + 2c)
    with a declared area that sometimes holds those words in the right core's region, sometimes in
    another's, sometimes not at all."""
    src = draw(s2gen.programs())
    base = draw(st.sampled_from([0, 16, 60, 100, 101, 102, 116, 290, 300]))
    words = draw(st.sampled_from([1, 2, 8, 16, 17, 64]))
    count = draw(st.integers(1, 6))
    return f".stacks {base} {words} {count}\n" + src


@settings(max_examples=400)
@given(declared_programs(), s2gen.configs)
def test_random_declared_programs_fast_matches_reference(src, cfg):
    assert_matches_reference(src, cfg)


@systemc_only
@settings(max_examples=60)
@given(declared_programs(), s2gen.configs)
def test_random_declared_programs_systemc_matches_fast(src, cfg):
    assert_same(assemble(src), mem_words=1024, max_cycles=20_000, **cfg)


def test_the_generator_makes_both_outcomes():
    """Some declared programs fault stack_overflow, some run to the end (so both paths are tested)."""
    from hypothesis import Phase, find

    def faults(src):
        try:
            Machine(assemble(src), cores=3, mem_words=1024, max_cycles=20_000).run()
        except SimFault as f:
            return f.fault["kind"] == "stack_overflow"
        return False
    quiet = settings(max_examples=2000, database=None, phases=[Phase.generate])   # the first found
    assert faults(find(declared_programs(), faults, settings=quiet))
    assert not faults(find(declared_programs(), lambda s: "push" in s and not faults(s), settings=quiet))
