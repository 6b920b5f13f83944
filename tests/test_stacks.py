"""The stack_overflow fault of declared per-core stacks (docs/timing-model.md rule 6,
docs/rz.md "Memory map"; the declaration itself is tested in test_isa_stacks.py): hand-computed
cycles on the fast engine, the SystemC engine and the reference model; random programs with a
declared area on all three; the Rz reproducer of the issue (deep recursion on 2 and 4 cores) and
the `s2mc run` command.
"""
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import s2gen
from s2mc.compiler import compile as compile_rz, interpret_source
from s2mc.compiler.layout import MAX_CORES, STACK_WORDS
from s2mc.isa import Program, S2mcError, Stacks, assemble, disassemble
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


@systemc_only
@settings(max_examples=30)
@given(declared_programs(), s2gen.buffered_configs())
def test_random_declared_programs_systemc_matches_fast_with_store_buffers(src, cfg):
    """A buffered store's stack_overflow is met at its issue, before it enters the buffer."""
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


# -- Rz: deep recursion, which once overwrote the next core's stack ----------------------------------

def rec(n: int) -> str:
    return f"f(n)\n  if (n == 0) return 0\n  return f(n - 1) + 1\n\nmain()\n  print(f({n}))\n"


def test_compiled_programs_declare_their_stacks():
    c = compile_rz(rec(3))
    assert c.program.stacks == Stacks(c.memory_map.stack_base, STACK_WORDS, MAX_CORES)
    assert c.program.stacks.end == c.memory_map.heap


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", [2, 4])
def test_deep_recursion_faults_on_every_engine(opt, cores):
    c = compile_rz(rec(5000), opt=opt, filename="rec.rz")
    prog, base = c.program, c.memory_map.stack_base
    fast = outcome(prog, "fast", cores=cores)
    # Core 0 (first in core order among equals) runs past its region: the first word it touches
    # outside is the first word of core 1's region; the faulting instruction is in f.
    assert fast[:3] == ("fault", "stack_overflow", 0) and fast[5] == base + STACK_WORDS
    assert outcome(prog, "reference", cores=cores) == fast
    with pytest.raises(SimFault) as e:
        Machine(prog, cores=cores).run()
    msg = str(e.value)
    assert msg == (f"simulated fault: stack overflow: data address {base + STACK_WORDS} is in core 1's stack "
                   f"region ({base + STACK_WORDS}..{base + 2 * STACK_WORDS - 1}), outside core 0's "
                   f"({base}..{base + STACK_WORDS - 1}), at core 0, pc {fast[3]} (in f), cycle {fast[4]}: "
                   f"'{msg.split(': ')[-1][1:-1]}'")
    assert msg.split(": ")[-1].startswith("'st ")     # frames are written with st ... fp


@systemc_only
@pytest.mark.parametrize("cores", [2, 4])
def test_deep_recursion_faults_alike_on_systemc(cores):
    assert_same(compile_rz(rec(5000)).program, cores=cores, trace=False)


@pytest.mark.parametrize("engine", ALL)
@pytest.mark.parametrize("cores", [1, 2, 4])
def test_shallow_recursion_still_prints_the_right_number(engine, cores):
    src = rec(100)
    assert interpret_source(src) == "100\n"
    assert outcome(compile_rz(src).program, engine, cores=cores)[:2] == ("ok", "100\n" * cores)


@pytest.mark.parametrize("path", sorted((Path(__file__).resolve().parents[1] / "workloads" / "rz").glob("*.rz")),
                         ids=lambda p: p.name)
def test_the_declaration_changes_no_counter_of_the_rz_workloads(path):
    """Zero cycles: each workload on 4 cores gives the same result with its declaration as without."""
    prog = compile_rz(path.read_text(), filename=str(path)).program
    plain = Program(prog.segments, prog.symbols, prog.entry)
    a, b = Machine(prog, cores=4).run(), Machine(plain, cores=4).run()
    assert prog.stacks is not None and plain.stacks is None
    assert (a.cycles, a.output, a.cores) == (b.cycles, b.output, b.cores)


def test_s2mc_run_says_one_line_and_exits_non_zero(tmp_path):
    p = tmp_path / "rec.rz"
    p.write_text(rec(5000))
    out = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(p), "--cores", "2"],
                         capture_output=True, text=True)
    assert out.returncode == 1 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and "Traceback" not in out.stderr
    assert out.stderr.startswith("s2mc: error: simulated fault: stack overflow: data address ")
    assert ", at core 0, pc " in out.stderr and " (in f), cycle " in out.stderr


def test_the_deepest_call_that_fits_is_where_the_frames_say():
    """At -O1, main's frame is 1 word (rads) and each f frame 2 (r1 saved at old fp + 1, rads at the
    new fp); fp starts at region + 256 and main's word is region + 257, so the k-th f frame ends at
    region + 257 + 2k. f(n) has n + 1 frames: the last word region + 4095 allows n = 1918, and
    f(1919)'s last frame stores r1 at region + 4096, the first word of core 1's region."""
    fits = compile_rz(rec(1918))
    assert outcome(fits.program, "fast", cores=2)[:2] == ("ok", "1918\n1918\n")
    over = compile_rz(rec(1919))
    base = over.memory_map.stack_base
    with pytest.raises(SimFault) as e:
        Machine(over.program, cores=2).run()
    f = e.value.fault
    assert (f["kind"], f["core"], f["address"]) == ("stack_overflow", 0, base + STACK_WORDS)
    assert str(e.value).endswith("'st r1 @1 r29'")
