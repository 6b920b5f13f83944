"""The semantics of every instruction, run on the fast engine (docs/isa.md)."""
import pytest

from s2mc.isa import assemble
from s2mc.simulator import SimFault, run, Machine

M32 = 1 << 32


def regs_after(body: str, data: str = "") -> list[int]:
    prog = assemble(f".code 0\n{body}\ntrap r0 #0\n" + (f".data 0\n{data}\n" if data else ""))
    m = Machine(prog, mem_words=256)
    m.run()
    return m.registers(0)


def s32(v):
    v %= M32
    return v - M32 if v >= 1 << 31 else v


def test_r0_reads_zero_and_ignores_writes():
    r = regs_after("mov r0 #5\nadd r0 r0 #7\nadd r1 r0 #1\nld r0 0\nmov r2 r0", data="99")
    assert r[0] == 0 and r[1] == 1 and r[2] == 0


@pytest.mark.parametrize("n", [-65536, -1, 0, 65535])
def test_alu_immediate_is_17_bit_sign_extended(n):
    assert regs_after(f"add r1 r0 #{n}")[1] == n


@pytest.mark.parametrize("m", [-(1 << 21), -1, (1 << 21) - 1])
def test_mov_immediate_is_22_bit_sign_extended(m):
    assert regs_after(f"mov r1 #{m}")[1] == m


def test_displacement_is_sign_extended():
    r = regs_after("mov r2 #10\nld r1 @-7 r2", data="0 0 0 42")
    assert r[1] == 42


def test_arithmetic_wraps_mod_2_32():
    r = regs_after("mov r1 #1\nshl r1 r1 #31\nsub r2 r1 #1\nadd r3 r2 #1\nmul r4 r2 r2\nsub r5 r1 #1")
    assert r[1] == -(1 << 31) and r[2] == (1 << 31) - 1 and r[3] == -(1 << 31)
    assert r[4] == s32(((1 << 31) - 1) ** 2)


@pytest.mark.parametrize("a,b", [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (-(1 << 20), 3)])
def test_div_and_mod_truncate_toward_zero(a, b):
    r = regs_after(f"mov r1 #{a}\nmov r2 #{b}\ndiv r3 r1 r2\nmod r4 r1 r2\ndiv r5 r1 #{b}\nmod r6 r1 #{b}")
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    assert (r[3], r[4], r[5], r[6]) == (q, a - q * b, q, a - q * b)


def test_int_min_divided_by_minus_one_wraps():
    r = regs_after("mov r1 #1\nshl r1 r1 #31\nmov r2 #-1\ndiv r3 r1 r2\nmod r4 r1 r2")
    assert r[3] == -(1 << 31) and r[4] == 0


@pytest.mark.parametrize("op,expect", [("div r3 r1 r2", "division by zero"), ("mod r3 r1 r2", "division by zero"),
                                        ("div r3 r1 #0", "division by zero"), ("mod r3 r1 #0", "division by zero")])
def test_division_and_modulo_by_zero_fault(op, expect):
    prog = assemble(f".code 0\nmov r1 #5\n{op}\ntrap r0 #0\n")
    with pytest.raises(SimFault) as e:
        run(prog)
    msg = str(e.value)
    assert expect in msg and "core 0" in msg and "pc 1" in msg and "cycle 1" in msg and op.split()[0] in msg


def test_shift_counts_use_low_5_bits_and_shr_is_arithmetic():
    r = regs_after("mov r1 #1\nshl r2 r1 #33\nmov r3 #-8\nshr r4 r3 #1\nshr r5 r3 #65\nmov r6 #32\nshl r7 r1 r6")
    assert r[2] == 2 and r[4] == -4 and r[5] == -4 and r[7] == 1


@pytest.mark.parametrize("op,a,b,expect", [
    ("eq", 3, 3, 1), ("eq", 3, 4, 0), ("ne", 3, 4, 1), ("lt", -1, 0, 1), ("lt", 0, -1, 0),
    ("le", 2, 2, 1), ("gt", 2, -3, 1), ("ge", -3, -3, 1), ("ge", -4, -3, 0)])
def test_compares_write_one_or_zero_signed(op, a, b, expect):
    r = regs_after(f"mov r1 #{a}\nmov r2 #{b}\n{op} r3 r1 r2\n{op} r4 r1 #{b}")
    assert r[3] == expect and r[4] == expect


def test_bitwise_and_logical_not():
    r = regs_after("mov r1 #12\nmov r2 #10\nand r3 r1 r2\nor r4 r1 r2\nxor r5 r1 r2\nnot r6 r1\nnot r7 r0")
    assert (r[3], r[4], r[5], r[6], r[7]) == (8, 14, 6, 0, -1)


def test_push_preincrements_and_pop_postdecrements():
    prog = assemble(".code 0\nmov r1 #10\nmov r2 #7\npush r1 r2\nmov r2 #8\npush r1 r2\npop r1 r3\npop r1 r4\n"
                    "trap r0 #0\n")
    m = Machine(prog, mem_words=64)
    m.run()
    r = m.registers(0)
    assert (r[1], r[3], r[4]) == (10, 8, 7) and m.read(11, 2) == [7, 8]


def test_jal_links_and_ret_returns():
    r = regs_after("jal r31 sub\nmov r2 #2\njmp end\n:sub\nmov r1 #1\nret r31\n:end\nmov r3 r31")
    assert r[1] == 1 and r[2] == 2 and r[3] == 1


def test_jt_and_jf():
    r = regs_after("mov r1 #0\njt r1 a\nmov r2 #1\n:a\njf r1 b\nmov r3 #1\n:b\nmov r1 #-1\njt r1 c\nmov r4 #1\n:c")
    assert (r[2], r[3], r[4]) == (1, 0, 0)


def test_load_store_addressing_modes():
    prog = assemble(".code 0\nmov r1 #2\nmov r2 #3\nld r3 5\nld r4 @1 r1\nld r5 +r1 r2\nst r3 20\nst r4 @20 r1\n"
                    "st r5 +r2 r2\ntrap r0 #0\n.data 0\n0 0 0 30 0 50\n")
    m = Machine(prog, mem_words=64)
    m.run()
    r = m.registers(0)
    assert (r[3], r[4], r[5]) == (50, 30, 50) and m.read(20, 3) == [50, 0, 30] and m.read(6, 1) == [50]


def test_multicore_registers_cid_ncore_and_xchg():
    prog = assemble(".code 0\ncid r1\nncore r2\nmov r3 #9\nxchg r3 r0\ntrap r0 #0\n.data 0\n5\n")
    m = Machine(prog, cores=3, mem_words=16)
    m.run()
    # fifo, all request at cycle 3: cores 0, 1, 2 swap in that order.
    assert [m.registers(i)[1:4] for i in range(3)] == [[0, 3, 5], [1, 3, 9], [2, 3, 9]]
    assert m.read(0, 1) == [9]


def test_print_traps():
    prog = assemble(".code 0\nmov r1 #-42\ntrap r1 #1\nmov r1 #10\ntrap r1 #2\nmov r1 #100\ntrap r1 #3\n"
                    "trap r0 #0\n.data 100\n72 105 0\n")
    assert run(prog).output == "-42\nHi"


@pytest.mark.parametrize("body,kind", [
    ("jmp 1000", "PC outside the program"),
    ("mov r1 #-1\nld r2 @0 r1", "data address 4294967295 outside memory"),
    ("st r0 5000", "data address 5000 outside memory"),
    (".code 1\n", "undefined opcode")])
def test_faults_name_core_pc_cycle(body, kind):
    src = ".code 0\n" + body + "\ntrap r0 #0\n"
    if body.startswith(".code"):
        src = ".code 0\nnop\n.data 0\n0\n.code 1\n.end\n"
        prog = assemble(src)
        prog.segments[0].words.append(0xE8000000 - (1 << 32))   # opcode 29: undefined
    else:
        prog = assemble(src)
    with pytest.raises(SimFault) as e:
        run(prog, mem_words=4096)
    assert kind in str(e.value) and "core 0" in str(e.value) and "cycle" in str(e.value)
