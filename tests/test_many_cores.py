"""Machines of 256 cores, the most simulator/params.toml allows, on every engine: hand-checkable
programs (each core writes its id to its own word and core 0 sums them; a spin-lock counter) on the
reference model, the fast engine's bus (no caches, MESI, TSO store buffers), its mesh and ring with
the directory and the SystemC bus; the engines equal on cycles and every counter; the cores past 64
(one word of a core set) stop at breakpoints, own compiled stacks, and 257 cores is one error line."""
import subprocess
import sys

import pytest

from s2mc.common.errors import S2mcError
from s2mc.compiler import compile as compile_rz
from s2mc.compiler.layout import STACK_WORDS
from s2mc.isa import Program, assemble
from s2mc.simulator import Machine, SimFault, run_reference
from s2mc.simulator.counters import engine_counters
from s2mc.simulator.params import PARAMS
from systemc_helpers import needs_systemc

N = 256
assert PARAMS["cores"].max == N
IDS_AT = 17

# Core k writes k + 1 to word IDS_AT + k; after the barrier core 0 adds the ncore words up and
# stores the sum at 16: 1 + 2 + ... + 256 = 32896.
IDS = f"""
.code 0
  cid r1
  add r2 r1 #1
  st r2 @{IDS_AT} r1
  sync
  jt r1 done
  ncore r3
  mov r4 #0
  mov r5 #0
:loop
  ld r6 @{IDS_AT} r4
  add r5 r5 r6
  add r4 r4 #1
  lt r7 r4 r3
  jt r7 loop
  st r5 16
:done
  trap r0 #0
.end
"""
IDS_SUM = N * (N + 1) // 2

# Every core reads word 8 (all 256 share its line), then core 0 writes 1 there: a write that must
# invalidate 255 copies. After the barrier each core reads word 8 again and stores what it saw in
# its own word: 1 everywhere, or a stale copy survived.
SHARED = f"""
.code 0
  cid r1
  ld r2 8
  sync
  jt r1 wait
  mov r3 #1
  st r3 8
:wait
  sync
  ld r4 8
  st r4 @{IDS_AT} r1
  trap r0 #0
.end
"""

# Each core takes the lock at word 8 with xchg (spinning while it reads 1), adds 1 to the counter
# at word 9 and lets go: the counter ends at the number of cores, whatever the order.
LOCK = """
.code 0
  mov r2 #8
:spin
  mov r1 #1
  xchg r1 r2
  jt r1 spin
  ld r3 9
  add r3 r3 #1
  st r3 9
  st r0 8
  trap r0 #0
.end
"""

BUS = dict(cores=N, mem_words=1024)
MACHINES = {
    "bus": {},
    "bus-mesi": dict(cache="mesi"),
    "bus-tso": dict(consistency="tso"),
    "mesh-msi": dict(cache="msi", interconnect="mesh", coherence="directory"),
    "mesh-mesi": dict(cache="mesi", interconnect="mesh", coherence="directory"),
    "ring-msi": dict(cache="msi", interconnect="ring", coherence="directory"),
}


def run(src, engine, **cfg):
    prog = assemble(src)
    if engine == "reference":
        return run_reference(prog, **BUS, **cfg), None
    m = Machine(prog, engine=engine, **BUS, **cfg)
    return m.run(), m


def counters(res, cfg) -> list[dict]:
    names = engine_counters(cached=cfg.get("cache", "none") != "none",
                            networked=cfg.get("coherence") == "directory")
    return [{n: c[n] for n in names} for c in res.cores]


@pytest.mark.parametrize("machine", MACHINES)
def test_each_core_writes_its_id_on_the_fast_engine(machine):
    res, m = run(IDS, "fast", **MACHINES[machine])
    assert m.read(IDS_AT, N) == list(range(1, N + 1))
    assert m.read(16, 1) == [IDS_SUM]
    # every core: cid add st sync jt; the others trap; core 0: ncore mov mov, 5 a round, st trap
    assert res.instructions == 6 * (N - 1) + 5 + 3 + 5 * N + 2


@pytest.mark.parametrize("machine", ["bus-mesi", "mesh-msi", "mesh-mesi", "ring-msi"])
def test_a_write_invalidates_all_255_other_copies(machine):
    res, m = run(SHARED, "fast", **MACHINES[machine])
    assert m.read(IDS_AT, N) == [1] * N
    if res.network is not None:   # the home sent one Inv to each sharer but the writer
        assert res.network["messages"]["Inv"] == N - 1


def test_the_ids_program_takes_the_hand_computed_cycles_on_the_bus():
    """No caches, fifo, L = 2: the 256 stores (issued at cycle 2) hold the bus one after another
    for cycles 2..513; the last core's store ends at 514, where it issues sync, and all pass the
    barrier to issue jt at 515. Core 0 then runs ncore and two movs (516..518) and 256 rounds of a
    load (2 cycles: the bus is free) and four one-cycle instructions, 6 cycles each from 519; its
    store (2 cycles) and trap issue at 2055 and 2057, and the run ends at 2058."""
    res, _ = run(IDS, "fast")
    assert res.cycles == (2 + 2 * N) + 1 + 1 + 3 + 6 * N + 2 + 1 == 2058
    assert res.bus_busy_cycles == 2 * (N + N + 1)


@pytest.mark.parametrize("src,machine", [(IDS, "bus"), (IDS, "bus-mesi"), (IDS, "mesh-msi"),
                                         pytest.param(IDS, "ring-msi", marks=pytest.mark.slow),   # as mesh-msi
                                         (SHARED, "bus-mesi"), (SHARED, "mesh-mesi")],
                         ids=["ids-bus", "ids-bus-mesi", "ids-mesh-msi", "ids-ring-msi", "shared-bus-mesi",
                              "shared-mesh-mesi"])
def test_the_fast_engine_equals_the_reference_model_at_256_cores(src, machine):
    cfg = MACHINES[machine]
    fast, m = run(src, "fast", **cfg)
    ref, _ = run(src, "reference", **cfg)
    assert fast.cycles == ref.cycles
    assert counters(fast, cfg) == counters(ref, cfg)
    assert fast.network == ref.network


@needs_systemc[0]
@needs_systemc[1]
@pytest.mark.parametrize("src,machine", [(IDS, "bus"), (IDS, "bus-mesi"), (SHARED, "bus-mesi")],
                         ids=["ids-bus", "ids-bus-mesi", "shared-bus-mesi"])
def test_the_systemc_engine_equals_the_fast_engine_at_256_cores(src, machine):
    cfg = MACHINES[machine]
    fast, f = run(src, "fast", **cfg)
    sysc, m = run(src, "systemc", **cfg)
    assert m.read(0, 1024) == f.read(0, 1024)
    assert sysc.cycles == fast.cycles
    assert counters(sysc, cfg) == counters(fast, cfg)


@pytest.mark.parametrize("machine", ["bus", "bus-mesi", "bus-tso",
                                     *(pytest.param(m, marks=pytest.mark.slow) for m in ("mesh-mesi", "ring-msi"))])
def test_the_lock_counter_counts_every_core_on_the_fast_engine(machine):
    _, m = run(LOCK, "fast", **MACHINES[machine])
    assert m.read(8, 2) == [0, N]


@pytest.mark.slow
@pytest.mark.parametrize("machine", ["bus", "bus-mesi"])   # about 200,000 cycles of 256 cores each
def test_the_lock_counter_equals_the_reference_model_at_256_cores(machine):
    cfg = MACHINES[machine]
    fast, _ = run(LOCK, "fast", **cfg)
    ref, _ = run(LOCK, "reference", **cfg)
    assert fast.cycles == ref.cycles and counters(fast, cfg) == counters(ref, cfg)


@pytest.mark.slow
@needs_systemc[0]
@needs_systemc[1]
@pytest.mark.parametrize("machine", ["bus", "bus-mesi", "bus-tso"])
def test_the_lock_counter_equals_on_systemc_at_256_cores(machine):
    cfg = MACHINES[machine]
    fast, _ = run(LOCK, "fast", **cfg)
    sysc, m = run(LOCK, "systemc", **cfg)
    assert m.read(8, 2) == [0, N]
    assert sysc.cycles == fast.cycles and counters(sysc, cfg) == counters(fast, cfg)


def test_a_breakpoint_stops_a_core_past_the_first_64():
    from s2mc.simulator.stepping import Stepper
    s = Stepper(assemble(IDS), **BUS)
    number = s.add_break(3, core=200)      # the sync, for core 200 only
    stop = s.cont()
    # fifo, L = 2: the stores are granted in core order from cycle 2; core 200's ends at 404
    assert stop.breaks == ((number, 200, 3),) and stop.cycle == 2 + 2 * 200 + 2


# Core k calls a recursive function (depth k % 16 + 1) on its own stack and stores the result in
# out[k]; the host's data at __heap, just past the 256 stacks, must come through untouched.
RECURSIVE = """
out[256]
depth(n)
  if (n == 0) return 0
  return depth(n - 1) + 1
main()
  out[cid()] = depth(cid() % 16 + 1) + 100 * cid()
"""


def test_compiled_programs_give_every_one_of_256_cores_its_own_stack():
    prog = compile_rz(RECURSIVE).program
    assert prog.stacks.count == N and prog.stacks.words == STACK_WORDS
    assert Program.from_text(prog.to_text()).stacks == prog.stacks   # the object file keeps all 256
    heap = prog.address_of("__heap")
    assert heap == prog.stacks.end
    m = Machine(prog, cores=N, mem_words=heap + 16)
    m.write("__heap", list(range(16)))
    m.run()
    assert m.read("out", N) == [k % 16 + 1 + 100 * k for k in range(N)]
    assert m.read("__heap", 16) == list(range(16))


def test_a_stack_past_the_memory_is_one_fault_line():
    """Core 255's region begins where this memory ends: its first frame word faults, naming the
    address, the memory, the core, the pc and the cycle; one core fewer runs in the same memory."""
    prog = compile_rz(RECURSIVE).program
    first = prog.stacks.region(N - 1)[0]
    pattern = rf"^simulated fault: data address \d+ outside memory \(0\.\.{first - 1}\) at core 255, pc \d+, cycle \d+: "
    with pytest.raises(SimFault, match=pattern):
        Machine(prog, cores=N, mem_words=first).run()
    with pytest.raises(SimFault, match=pattern):
        run_reference(prog, cores=N, mem_words=first)
    m = Machine(prog, cores=N - 1, mem_words=first)
    m.run()
    assert m.read("out", N - 1) == [k % 16 + 1 + 100 * k for k in range(N - 1)]


@pytest.mark.parametrize("engine", ["fast", "systemc", "reference"])
def test_257_cores_is_one_error_line(engine):
    prog = assemble(LOCK)
    with pytest.raises(S2mcError, match=r"^cores 257 is out of range \(1\.\.256\)$"):
        run_reference(prog, cores=N + 1) if engine == "reference" else Machine(prog, cores=N + 1, engine=engine)


def test_s2mc_run_refuses_257_cores_in_one_line(tmp_path):
    src = tmp_path / "lock.s"
    src.write_text(LOCK)
    out = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(src), "--cores", "257"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode != 0 and out.stdout == ""
    assert out.stderr == "s2mc run: error: Invalid value for '--cores': 257 is out of range (1..256)\n"
