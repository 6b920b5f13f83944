"""The assembly teaching programs give their expected results on 1-8 cores."""
from pathlib import Path

import pytest

from s2mc.isa import load_program
from s2mc.simulator import run

ASM = Path(__file__).resolve().parents[1] / "workloads" / "asm"


@pytest.mark.parametrize("cores", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("arbitration", ["fifo", "fixed", "round_robin"])
def test_parallel_sum(cores, arbitration):
    res = run(load_program(ASM / "parallel_sum.s"), cores=cores, arbitration=arbitration)
    assert res.output == "5050\n"
    # Interleaved split: every core reads ceil or floor of 100/cores elements, plus its partial.
    reads = sorted(c["mem_reads"] for c in res.cores[1:]) if cores > 1 else []
    assert all(r in (100 // cores, 100 // cores + 1) for r in reads)


@pytest.mark.parametrize("cores", [1, 2, 4, 8])
@pytest.mark.parametrize("arbitration", ["fifo", "fixed", "round_robin"])
def test_spin_lock_loses_no_increment(cores, arbitration):
    res = run(load_program(ASM / "spin_lock.s"), cores=cores, arbitration=arbitration)
    assert res.output == f"{10 * cores}\n"


def test_spin_lock_without_the_lock_loses_increments():
    # The same loop with the xchg removed races: the lock is what makes it right.
    src = (ASM / "spin_lock.s").read_text().replace("  xchg r1 r2", "  mov r1 #0")
    from s2mc.isa import assemble
    assert run(assemble(src), cores=4).output != "40\n"


@pytest.mark.parametrize("cores", [1, 2, 4, 8, 16])
def test_barrier_neighbours(cores):
    res = run(load_program(ASM / "barrier.s"), cores=cores)
    assert res.output.split() == [str((i + 1) % cores + 1) for i in range(cores)]
    # Core k spins 7k iterations of 3 instructions; the last to arrive waits 0 cycles.
    assert res.cores[-1]["sync_wait_cycles"] == 0 or cores == 1
