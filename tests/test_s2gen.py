"""The random program generator (tests/s2gen.py) covers the whole ISA table: every encoding and
every trap number appears in the programs it draws, so a new table row cannot go untested by the
differential tests."""
from hypothesis import HealthCheck, given, settings

import s2gen
from s2mc.isa import assemble
from s2mc.isa.instructions import INSTRUCTIONS, TRAPS, decode

SEEN: dict[str, set] = {"keys": set(), "traps": set()}


@settings(max_examples=500, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(s2gen.programs(max_chunks=60))
def _collect(src):
    for word in assemble(src).code_image:
        d = decode(word)
        SEEN["keys"].add(d.ins.key)
        if d.ins.bus == "trap":
            SEEN["traps"].add(d.r2)


def test_generated_programs_use_every_encoding_and_trap_number():
    _collect()
    assert {i.key for i in INSTRUCTIONS} - SEEN["keys"] == set()
    assert set(TRAPS) - SEEN["traps"] == set()


def test_op_lists_come_from_the_table():
    # Hand-written expectations for today's table: the selections by shape, group, role and bus.
    assert s2gen.ALU == s2gen.ALU_IMM == ["add", "sub", "mul", "div", "and", "or", "xor", "eq", "ne", "lt",
                                          "le", "gt", "ge", "shl", "shr", "mod"]
    assert set(s2gen.FAULTS_ON_ZERO) <= set(s2gen.ALU)
    assert (s2gen.UNARY, s2gen.CORE_INFO, s2gen.MOVE_IMM) == (["mov", "not"], ["cid", "ncore"], ["mov"])
    assert s2gen.MEMORY == {"abs": ["ld", "st"], "disp": ["ld", "st"], "index": ["ld", "st"]}
    assert s2gen.STACK == {"write": "push", "read": "pop"} and s2gen.SWAPS == ["xchg"]
    assert (s2gen.BRANCHES, s2gen.CALLS, s2gen.JUMPS, s2gen.RETURNS) == (["jt", "jf"], ["jal"], ["jmp"], ["ret"])
    assert (s2gen.NOPS, s2gen.BARRIERS, s2gen.FENCES, s2gen.TRAP) == (["nop"], ["sync"], ["fence"], "trap")
