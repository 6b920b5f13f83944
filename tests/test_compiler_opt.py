"""-O1 against -O0: same output, and at least a quarter fewer dynamic instructions on sort,
matrix multiply and recursive Fibonacci (counts are deterministic; see docs/rz.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from s2mc.compiler import compile as compile_rz
from s2mc.compiler import fold, frontend
from s2mc.compiler.astnodes import Num
from s2mc.simulator import run

WORKLOADS = Path(__file__).parent.parent / "workloads" / "rz"


@pytest.mark.parametrize("name", ["sort", "matmul", "fib"])
def test_o1_cuts_dynamic_instructions_by_a_quarter(name):
    source = (WORKLOADS / f"{name}.rz").read_text()
    r0 = run(compile_rz(source, opt=0).program)
    r1 = run(compile_rz(source, opt=1).program)
    assert r0.output == r1.output
    assert r1.instructions <= 0.75 * r0.instructions, (r0.instructions, r1.instructions)
    assert r1.cycles < r0.cycles


def test_constant_folding_uses_machine_arithmetic():
    prog = fold(frontend("main()\n  x = (0x7FFFFFFF + 1) / 3 + (-7 % 3) + (1 << 33) + (5 > 3)\n"
                         "  print(x)\n"))
    value = prog.functions[0].body[0].value
    assert isinstance(value, Num)
    assert value.value == -715827882 - 1 + 2 + 1


def test_folding_keeps_division_by_zero_for_run_time():
    prog = fold(frontend("main()\n  x = 1 / 0\n"))
    assert not isinstance(prog.functions[0].body[0].value, Num)


def test_folding_keeps_calls_with_side_effects():
    src = "n\nf()\n  n = n + 1\n  return 2\nmain()\n  x = f() * 0\n  print(x, n)\n"
    for opt in (0, 1):
        assert run(compile_rz(src, opt=opt).program).output == "0 1\n"


def test_fold_leaves_the_checked_ast_alone():
    prog = frontend("main()\n  print(1 + 2)\n")
    fold(prog)
    assert not isinstance(prog.functions[0].body[0].args[0], Num)


def test_o1_leaf_function_needs_no_frame():
    asm = compile_rz("add(a, b)\n  return a + b\nmain()\n  print(add(1, 2))\n", opt=1).asm
    body = asm[asm.index(":add"):asm.index(":main")]
    assert "fp" not in body and "push" not in body and "pop" not in body


def test_o1_reuses_loads_within_a_block():
    asm = compile_rz("g\nmain()\n  g = 5\n  print(g + g)\n", opt=1).asm
    main = asm[asm.index(":main"):]
    assert main.count("ld ") == 0


def test_o0_is_straightforward():
    asm = compile_rz("main()\n  x = 1\n  x = x + 2\n  print(x)\n", opt=0).asm
    main = asm[asm.index(":main"):]
    assert "mov r2 #2" in main and "add" in main   # constants loaded into registers first


def test_spin_loop_rereads_memory():
    """A loop waiting for another core must load the flag on every iteration."""
    src = "flag\nmain()\n  if (cid() == 1)\n    flag = 1\n  n = 0\n  while (flag == 0)\n    n = n + 1\n"
    for opt in (0, 1):
        res = run(compile_rz(src, opt=opt).program, cores=2, max_cycles=100_000)
        assert res.cycles < 100_000
