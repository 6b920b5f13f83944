"""The caches lab's programs on today's cacheless machine: false sharing (false_sharing.s,
false_sharing.rz) and the three spin locks (spin_lock.s = test-and-set, ttas_lock.s, ticket_lock.s)
give exact counts on 1-8 cores, the fast engine and the cycle-stepped reference model agree on
every counter, the per-core bus counts match hand counts, and the Rz version agrees with the
interpreter. Each lock loses increments once its atomic step is taken out; ping_pong.s hands a word
back and forth between two cores."""
from __future__ import annotations

from pathlib import Path

import pytest

from s2mc.compiler import compile as compile_rz
from s2mc.compiler import interpret_source
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.reference import ReferenceMachine

ROOT = Path(__file__).resolve().parents[1]
ASM, RZ = ROOT / "workloads" / "asm", ROOT / "workloads" / "rz"
CORES = [1, 2, 4, 8]
LOCKS = ["spin_lock.s", "ttas_lock.s", "ticket_lock.s"]
ROUNDS_LOCK, ROUNDS_FS, ROUNDS_RZ = 10, 100, 50


def false_sharing_asm(stride: int):
    src = (ASM / "false_sharing.s").read_text()
    assert "\n  stride 1\n" in src
    return assemble(src.replace("\n  stride 1\n", f"\n  stride {stride}\n"), "false_sharing.s")


def reference(program, cores: int) -> dict:
    ref = ReferenceMachine(program.code_image, program.data_image, program.entry, cores=cores,
                           stacks=program.stacks).run()
    ref["text"] = "".join(text for _, _, text in ref["output"])
    return ref


def agree_with_reference(res, program, cores: int) -> None:
    ref = reference(program, cores)
    assert ref["text"] == res.output and ref["cycles"] == res.cycles
    for mine, theirs in zip(res.cores, ref["cores"]):
        assert {k: mine[k] for k in theirs} == theirs


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("name", LOCKS)
def test_every_lock_counts_exactly_and_the_reference_agrees(name, cores):
    program = assemble((ASM / name).read_text(), name)
    m = Machine(program, cores=cores)
    res = m.run()
    assert res.output == f"{ROUNDS_LOCK * cores}\n"
    assert m.read("counter", 1) == [ROUNDS_LOCK * cores]
    agree_with_reference(res, program, cores)


# One core, hand-counted bus accesses per round of the lock loop (xchg is one read and one write),
# plus core 0's final `ld counter`:
#   spin_lock.s   xchg, ld counter, st counter, st lock                          2 reads, 3 writes
#   ttas_lock.s   ld lock, xchg, ld counter, st counter, st lock                  3 reads, 3 writes
#   ticket_lock.s ld next, xchg, st next, ld serving, ld counter, st counter,
#                 st serving                                                      4 reads, 4 writes
@pytest.mark.parametrize("name, reads, writes", [("spin_lock.s", 2, 3), ("ttas_lock.s", 3, 3),
                                                 ("ticket_lock.s", 4, 4)])
def test_one_core_bus_accesses_are_the_hand_count(name, reads, writes):
    res = Machine(assemble((ASM / name).read_text(), name), cores=1).run()
    assert res.cores[0]["mem_reads"] == reads * ROUNDS_LOCK + 1
    assert res.cores[0]["mem_writes"] == writes * ROUNDS_LOCK


@pytest.mark.parametrize("name, atomic, plain", [
    ("spin_lock.s", "  xchg r1 r2", "  mov r1 #0"),          # every try "wins"
    ("ttas_lock.s", "  xchg r1 r2", "  mov r1 #0"),          # a core that saw 0 enters without claiming
    ("ticket_lock.s", "  xchg r1 r2", "  ld r1 @0 r2"),      # two cores can read the same ticket
])
def test_without_its_atomic_step_each_lock_loses_increments(name, atomic, plain):
    src = (ASM / name).read_text()
    assert atomic in src
    res = Machine(assemble(src.replace(atomic, plain), name), cores=4, max_cycles=1_000_000).run()
    assert res.output != f"{ROUNDS_LOCK * 4}\n"


def test_ttas_waits_with_reads_where_tas_writes():
    # On the cacheless bus both locks cost a bus access per try; what differs is the kind: a TAS
    # waiter's every try is an xchg (a write), a TTAS waiter's failed tries are loads. Every core
    # wins `rounds` xchgs and writes counter and lock once per round, so in TTAS each core's writes
    # are exactly rounds x 3 plus its lost xchgs, and lost xchgs are rarer than TAS's failed tries.
    tas = Machine(assemble((ASM / "spin_lock.s").read_text()), cores=4).run()
    ttas = Machine(assemble((ASM / "ttas_lock.s").read_text()), cores=4).run()
    assert all(c["mem_writes"] >= 3 * ROUNDS_LOCK for c in ttas.cores)
    assert sum(c["mem_writes"] for c in ttas.cores) < sum(c["mem_writes"] for c in tas.cores)


@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("stride", [1, 4, 16])
def test_false_sharing_counts_exactly_at_every_stride(stride, cores):
    program = false_sharing_asm(stride)
    m = Machine(program, cores=cores)
    res = m.run()
    assert res.output == f"{ROUNDS_FS * cores}\n"
    words = m.read("counters", stride * (cores - 1) + 1)
    assert words[::stride] == [ROUNDS_FS] * cores                              # each core's own counter
    assert sum(words) == ROUNDS_FS * cores                                     # and nothing in between
    # per core: rounds x (ld, st); core 0 also reads every counter once to add them up
    assert [(c["mem_reads"], c["mem_writes"]) for c in res.cores] == \
        [(ROUNDS_FS + cores, ROUNDS_FS)] + [(ROUNDS_FS, ROUNDS_FS)] * (cores - 1)
    if cores in (1, 2, 8):
        agree_with_reference(res, program, cores)


def test_without_caches_the_layout_costs_nothing():
    # The cacheless timing model never looks at an address: packed and padded take the same cycles.
    # With caches on the packed layout pays coherence misses; this is the lab's baseline.
    packed, padded = (Machine(false_sharing_asm(s), cores=4).run() for s in (1, 16))
    assert packed.cycles == padded.cycles
    assert [c["bus_wait_cycles"] for c in packed.cores] == [c["bus_wait_cycles"] for c in padded.cores]


@pytest.mark.parametrize("stride", [1, 16])
def test_false_sharing_rz_agrees_with_the_interpreter_and_the_reference(stride):
    src = (RZ / "false_sharing.rz").read_text()
    assert "\nSTRIDE = 1\n" in src
    src = src.replace("\nSTRIDE = 1\n", f"\nSTRIDE = {stride}\n")
    want = f"sum = {ROUNDS_FS}  expected = {ROUNDS_FS}\n"
    assert interpret_source(src, "false_sharing.rz") == want      # the interpreter runs one core
    for opt in (0, 1):
        program = compile_rz(src, opt=opt, filename="false_sharing.rz").program
        assert Machine(program, cores=1).run().output == want
        for cores in (2, 4, 8):
            m = Machine(program, cores=cores)
            res = m.run()
            assert res.output == f"sum = {ROUNDS_FS * cores}  expected = {ROUNDS_FS * cores}\n"
            assert m.read("counters", stride * (cores - 1) + 1)[::stride] == [ROUNDS_FS] * cores
        agree_with_reference(Machine(program, cores=2).run(), program, 2)


@pytest.mark.parametrize("cores", [1, 2, 3, 4, 8])
def test_ping_pong_hands_the_word_back_every_round(cores):
    program = assemble((ASM / "ping_pong.s").read_text(), "ping_pong.s")
    m = Machine(program, cores=cores)
    res = m.run()
    rounds = 10
    if cores == 1:                       # nobody to answer: core 0 never starts
        assert res.output == "0\n" and res.cores[0]["mem_writes"] == 0
        return
    assert res.output == f"{2 * rounds}\n" and m.read("flag", 1) == [2 * rounds]
    # cores 0 and 1 store once per round each; every other core touches nothing but the barrier
    assert [c["mem_writes"] for c in res.cores] == [rounds, rounds] + [0] * (cores - 2)
    assert all(c["mem_reads"] >= rounds for c in res.cores[:2])
    assert all(c["mem_reads"] == 0 for c in res.cores[2:])
    agree_with_reference(res, program, cores)


def ticket_program(name: str):
    if name.endswith(".rz"):
        return compile_rz((RZ / name).read_text(), opt=1, filename=name).program, ROUNDS_RZ
    return assemble((ASM / name).read_text(), name), ROUNDS_LOCK


@pytest.mark.parametrize("name, arbitration", [("ticket_lock.s", "fifo"), ("ticket_lock.s", "fixed"),
                                                ("ticket_lock.s", "round_robin"), ("ticket_lock.rz", "fifo"),
                                                ("ticket_lock.rz", "round_robin")])   # rz + fixed: see below
@pytest.mark.parametrize("cores", [2, 4, 8])
def test_ticket_lock_serves_cores_in_ticket_order(name, cores, arbitration):
    # From the event log alone: a successful dispenser xchg turns a ticket t >= 0 into -1 (a load
    # leaves the word as it was, the hand-back store writes t + 1 over -1); a core enters the
    # critical section with its load of `counter`. FIFO: the n-th core to enter holds ticket n.
    program, rounds = ticket_program(name)
    res = Machine(program, cores=cores, arbitration=arbitration, trace=True, max_cycles=1_000_000).run()
    nxt, counter = program.symbols["next"].value, program.symbols["counter"].value
    grants = [e for e in res.trace if e[3] == "grant"]
    tickets = [(e[6], e[1]) for e in grants if e[5] == nxt and e[6] >= 0 and e[7] == -1]
    entries = [e[1] for e in grants if e[5] == counter and e[6] == e[7]][:cores * rounds]  # not the final print
    assert sorted(t for t, _ in tickets) == list(range(cores * rounds))   # every ticket once
    assert entries == [core for _, core in sorted(tickets)]


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("cores", CORES)
@pytest.mark.parametrize("name", ["spinlock.rz", "ttas_lock.rz", "ticket_lock.rz"])
def test_rz_locks_count_exactly_and_the_reference_agrees(name, cores, opt):
    program = compile_rz((RZ / name).read_text(), opt=opt, filename=name).program
    m = Machine(program, cores=cores)
    res = m.run()
    total = ROUNDS_RZ * cores
    assert res.output == f"counter = {total}  expected = {total}\n" and m.read("counter", 1) == [total]
    if cores <= 2:
        agree_with_reference(res, program, cores)


@pytest.mark.parametrize("name, atomic, plain", [
    ("ttas_lock.rz", 'asm("xchg {v} {l}")', "v = 0"),        # a core that saw 0 enters without claiming
    ("ticket_lock.rz", 'asm("xchg {t} {d}")', "t = *d"),     # two cores can read the same ticket
])
def test_rz_locks_without_their_atomic_step_lose_increments(name, atomic, plain):
    src = (RZ / name).read_text()
    assert atomic in src
    program = compile_rz(src.replace(atomic, plain), opt=1, filename=name).program
    res = Machine(program, cores=4, max_cycles=5_000_000).run()
    assert res.output != f"counter = {ROUNDS_RZ * 4}  expected = {ROUNDS_RZ * 4}\n"


def test_fixed_priority_starves_the_rz_ticket_lock_on_eight_cores():
    # Without caches every spin read is a bus access. Under `fixed` the lowest-numbered requester
    # always wins: lower-numbered cores spinning on `serving` keep the bus busy, and the core that
    # took the dispenser (next = -1) waits for the bus forever to store next = ticket + 1, so nobody's
    # turn comes and the run stops at the cycle limit. (Under fifo it finishes: the test above.)
    from s2mc.simulator import SimFault
    program = compile_rz((RZ / "ticket_lock.rz").read_text(), opt=1, filename="ticket_lock.rz").program
    m = Machine(program, cores=8, arbitration="fixed", max_cycles=100_000, trace=True)
    with pytest.raises(SimFault, match="cycle limit") as fault:
        m.run()
    assert m.read("next", 1) == [-1]
    last = {}
    for e in fault.value.trace:
        last[e[1]] = e
    starved = {core for core, e in last.items() if e[3] == "request"}      # still waiting for its grant
    granted = {e[1] for e in fault.value.trace if e[0] >= 90_000 and e[3] == "grant"}
    # the waiting has lasted: each starved core requested long before the end, and every grant of
    # the last 10,000 cycles went to a lower-numbered core
    assert starved and all(last[c][0] < 90_000 for c in starved)
    assert granted and max(granted) < min(starved)
