"""Exact cycle counts for tiny programs, computed by hand (docs/timing-model.md).

Rules used below: a non-memory instruction issued at t lets the next issue at t+1; a memory
instruction requests the bus at t, is granted at the first cycle g >= t when the bus is free and the
arbiter picks it, and the next instruction issues at g+L. trap 0 at t finishes the core at t+1.
Every computation is checked on both arbitration-sensitive orders it depends on, and every test
(each of its parametrize cases) runs on both engines through the `engine` fixture.
"""
import pytest

from s2mc.isa import assemble
from s2mc.simulator import ENGINES, run
from s2mc.simulator.records import result_rows
from systemc_helpers import needs_systemc


@pytest.fixture(params=[pytest.param(e, marks=needs_systemc if e == "systemc" else ()) for e in ENGINES])
def engine(request):
    return request.param

# P: every core loads one word, stores it, halts.
P = """
.code 0
  cid r1            ; 0
  ld r2 @0 r1       ; 1
  st r2 @8 r1       ; 2
  trap r0 #0        ; 3
.data 0
  1 2 3 4
"""

# T: core 1 takes a two-nop detour so its load comes later than those of cores 0 and 2.
T = """
.code 0
  cid r1            ; 0
  eq r2 r1 #1       ; 1
  jt r2 5           ; 2   core 1 jumps
  ld r3 @0 r1       ; 3   cores 0 and 2 request at cycle 3
  trap r0 #0        ; 4
  nop               ; 5   core 1, cycle 3
  nop               ; 6   core 1, cycle 4
  ld r3 @0 r1       ; 7   core 1 requests at cycle 5
  trap r0 #0        ; 8
"""


def check(engine, src, cores, latency, arbitration, finish, waits):
    res = run(assemble(src), cores=cores, mem_latency=latency, arbitration=arbitration, mem_words=64,
              engine=engine)
    assert [c["cycles"] for c in res.cores] == finish
    assert [c["bus_wait_cycles"] for c in res.cores] == waits
    accesses = [c["mem_accesses"] for c in res.cores]
    assert [c["stall_cycles"] for c in res.cores] == [w + (latency - 1) * a for w, a in zip(waits, accesses)]
    assert res.cycles == max(finish)
    assert res.bus_busy_cycles == latency * sum(accesses)
    return res


@pytest.mark.parametrize("arbitration", ["fifo", "fixed", "round_robin", "burst4"])
def test_one_core_L2(engine, arbitration):
    # t0 cid | t1 ld granted at 1, bus 1-2 | t3 st granted at 3, bus 3-4 | t5 trap -> finish 6.
    # Stalls: no waiting, but each access's second cycle is a stall: 2 accesses x (2-1) = 2.
    res = check(engine, P, 1, 2, arbitration, finish=[6], waits=[0])
    assert res.cores[0]["stall_cycles"] == 2 and res.instructions == 4


def test_one_core_L3(engine):
    # t0 cid | t1 ld, bus 1-3 | t4 st, bus 4-6 | t7 trap -> finish 8. Stalls 2 x 2 = 4.
    check(engine, P, 1, 3, "fifo", finish=[8], waits=[0])


@pytest.mark.parametrize("arbitration", ["fifo", "round_robin"])
def test_two_cores_L2_fifo_and_round_robin(engine, arbitration):
    # t1: both request ld; tie -> core 0 (fifo: lowest id; rr: rotation starts at core 0), bus 1-2.
    # t3: core 1 (requested at 1) vs core 0's st (requested at 3): fifo -> earlier, core 1;
    #     rr -> the core after the last grantee (0), core 1. Bus 3-4.
    # t5: core 0's st (req 3) vs core 1's st (req 5) -> core 0, next issue 7: trap -> finish 8.
    # t7: core 1's st, next issue 9: trap -> finish 10.
    # Waits: core 0 = 0 + (5-3) = 2; core 1 = (3-1) + (7-5) = 4.
    check(engine, P, 2, 2, arbitration, finish=[8, 10], waits=[2, 4])


def test_two_cores_L2_fixed(engine):
    # t1: core 0 (lowest id). t3: core 0's st (req 3) and core 1's ld (req 1): fixed -> core 0;
    # core 0 halts at 5 -> finish 6. t5: core 1's ld (wait 4); t7: its st (wait 0); trap 9 -> 10.
    check(engine, P, 2, 2, "fixed", finish=[6, 10], waits=[0, 4])


@pytest.mark.parametrize("arbitration", ["fifo", "round_robin"])
def test_three_cores_L2_grants_rotate(engine, arbitration):
    # Grants: t1 c0 ld | t3 c1 ld | t5 c2 ld | t7 c0 st | t9 c1 st | t11 c2 st.
    # Finish = grant of st + 2 (trap) + 1: 10, 12, 14.
    # Waits: c0 0 + (7-3) = 4; c1 (3-1) + (9-5) = 6; c2 (5-1) + (11-7) = 8.
    check(engine, P, 3, 2, arbitration, finish=[10, 12, 14], waits=[4, 6, 8])


def test_three_cores_L2_fixed_starves_higher_ids(engine):
    # Grants: t1 c0 ld | t3 c0 st (lowest id beats the older requests) -> c0 finishes 6
    # | t5 c1 ld | t7 c1 st -> finish 10 | t9 c2 ld | t11 c2 st -> finish 14.
    # Waits: c0 0; c1 (5-1) + 0 = 4; c2 (9-1) + 0 = 8.
    check(engine, P, 3, 2, "fixed", finish=[6, 10, 14], waits=[0, 4, 8])


def test_three_cores_L2_fixed_idle_after_finish(engine):
    # The staircase above: the run ends at 14, so core 0 sits halted 14 - 6 = 8 cycles and core 1
    # 14 - 10 = 4; they are neither stalls nor barrier waits. The records' whole-run finish_cycle is
    # the first core's (6) and idle_cycles the sum (12).
    res = check(engine, P, 3, 2, "fixed", finish=[6, 10, 14], waits=[0, 4, 8])
    assert res.finish_cycles == [c["finish_cycle"] for c in res.cores] == [6, 10, 14]
    assert [c["idle_cycles"] for c in res.cores] == [8, 4, 0] and res.idle_cycles == 12
    rows = {(r["core"], r["metric"]): r["value"] for r in result_rows(res, "x")}
    assert rows[(-1, "finish_cycle")] == 6 and rows[(-1, "cycles")] == 14
    assert rows[(-1, "idle_cycles")] == 12 and [rows[(c, "idle_cycles")] for c in range(3)] == [8, 4, 0]


def test_three_cores_late_requester_fifo(engine):
    # t3: c0 and c2 request; c0 wins the tie, bus 3-4, c0 traps at 5 -> finish 6.
    # t5: c2 (req 3) vs c1 (req 5): fifo -> c2, next 7 -> finish 8; c1 granted 7 -> finish 10.
    check(engine, T, 3, 2, "fifo", finish=[6, 10, 8], waits=[0, 2, 2])


@pytest.mark.parametrize("arbitration", ["fixed", "round_robin"])
def test_three_cores_late_requester_fixed_and_round_robin(engine, arbitration):
    # As above until t5: fixed -> lowest id c1; rr -> after the last grantee c0 comes c1.
    # c1 granted 5 -> finish 8; c2 granted 7 (waited 4) -> finish 10.
    check(engine, T, 3, 2, arbitration, finish=[6, 8, 10], waits=[0, 0, 4])


# B: every core loads five words in a row, then halts (the grant after 4 in a row, burst4).
B = """
.code 0
  cid r1            ; 0
  ld r2 @0 r1       ; 1
  ld r2 @0 r1
  ld r2 @0 r1
  ld r2 @0 r1
  ld r2 @0 r1       ; 5
  trap r0 #0        ; 6
.data 0
  1 2 3
"""


@pytest.mark.parametrize("cores,arbitration,finish,waits", [
    # fixed: c0's loads at 1, 3, 5, 7, 9, trap 11 -> finish 12; c1 (asked at 1) at 11 ... 19 -> 22.
    (2, "fixed", [12, 22], [0, 10]),
    # burst4: c0 granted at 1, 3, 5, 7 (4 in a row); at 9 c1 (waiting since 1) goes before c0's
    # fifth (asked at 9); at 11 c0 again (the last grantee is c1), trap 13 -> 14 (waited 2); c1's
    # other four at 13, 15, 17, 19 (alone), trap 21 -> 22 (waited 8 + 2).
    (2, "burst4", [14, 22], [2, 10]),
    # fixed, 3 cores: c0 1-9 -> 12, c1 11-19 -> 22, c2 21-29 -> 32 (each waited for the others).
    (3, "fixed", [12, 22, 32], [0, 10, 20]),
    # burst4, 3 cores: at 9 c0 goes last -> c1 (lowest of the others); at 11 c0 (lowest id, the
    # last grantee is c1) -> 14; c1 at 13, 15, 17, 19 (4 in a row, its last: no fifth to pass over)
    # -> 22; c2 at 21 ... 29 -> 32. c2 is not helped: the streak restarted with every hand-over.
    (3, "burst4", [14, 22, 32], [2, 10, 20]),
])
def test_burst4_passes_over_a_core_after_four_grants_in_a_row(engine, cores, arbitration, finish, waits):
    check(engine, B, cores, 2, arbitration, finish=finish, waits=waits)


def test_four_cores_L1(engine):
    # L=1: t1 c0 ld | t2 c1 ld | t3 c2 ld | t4 c3 ld | t5 c0 st (req 2) -> trap 6, finish 7
    # | t6 c1 st (req 3) -> finish 8 | t7 c2 st (req 4) -> finish 9 | t8 c3 st (req 5) -> finish 10.
    # Waits: c0 0+3, c1 1+3, c2 2+3, c3 3+3. Stalls equal waits when L=1.
    check(engine, P, 4, 1, "fifo", finish=[7, 8, 9, 10], waits=[3, 4, 5, 6])


def test_four_cores_L3(engine):
    # L=3: ld grants at 1, 4, 7, 10 (c0..c3); st requests at 4, 7, 10, 13; st grants at 13, 16,
    # 19, 22; traps 3 cycles later, finish at +1: 17, 20, 23, 26.
    # Waits: c0 0 + 9, c1 3 + 9, c2 6 + 9, c3 9 + 9.
    check(engine, P, 4, 3, "fifo", finish=[17, 20, 23, 26], waits=[9, 12, 15, 18])


def test_barrier_completes_at_last_arrival(engine):
    # Core 0 jumps straight to sync (arrives at 2), core 1 runs a nop first (arrives at 3).
    # The barrier completes at 3; both issue trap at 4 -> finish 5. Core 0 waited 1 cycle.
    src = ".code 0\ncid r1\njf r1 3\nnop\nsync\ntrap r0 #0\n"
    res = run(assemble(src), cores=2, engine=engine)
    assert [c["cycles"] for c in res.cores] == [5, 5]
    assert [c["sync_wait_cycles"] for c in res.cores] == [1, 0]


def test_halted_core_releases_barrier(engine):
    # Core 0 arrives at sync at 2; core 1 runs three nops and halts at 5 (finish 6).
    # The barrier completes at 5, core 0 issues its trap at 6 -> finish 7, waited 3.
    src = ".code 0\ncid r1\njt r1 4\nsync\ntrap r0 #0\nnop\nnop\nnop\ntrap r0 #0\n"
    res = run(assemble(src), cores=2, engine=engine)
    assert [c["cycles"] for c in res.cores] == [7, 6]
    assert [c["sync_wait_cycles"] for c in res.cores] == [3, 0]
    assert res.cycles == 7


def test_output_is_ordered_by_cycle_then_core(engine):
    # Core 1 prints at cycle 2, core 0 at cycle 3 (after a nop); same-cycle prints go by core id.
    src = ".code 0\ncid r1\njt r1 3\nnop\ntrap r1 #1\ntrap r1 #1\ntrap r0 #0\n"
    res = run(assemble(src), cores=3, engine=engine)
    assert [(c, k) for c, k, _ in res.events] == [(2, 1), (2, 2), (3, 0), (3, 1), (3, 2), (4, 0)]
    assert res.output == "120120"


def test_worked_example_in_docs_timing_model(engine):
    # docs/timing-model.md walks through this run; keep the document honest.
    src = ".code 0\ncid r1\nld r2 @0 r1\nst r2 @8 r1\ntrap r0 #0\n"
    res = run(assemble(src), cores=2, mem_words=64, engine=engine)
    assert res.cycles == 10 and [c["stall_cycles"] for c in res.cores] == [4, 6]
    assert abs(res.bus_utilisation - 0.8) < 1e-9
    assert run(assemble(src), cores=1, mem_words=64, engine=engine).cycles == 6
