"""The compiler's assembly IR (compiler/ir.py): the optimiser's read/write sets come from the ISA
table, for every encoding, and follow the table when it changes."""
import dataclasses

import pytest

from s2mc.compiler import ir
from s2mc.compiler.optimiser import peephole
from s2mc.isa import assemble
from s2mc.isa.instructions import BY_MNEMONIC, INSTRUCTIONS, decode

# A distinct register for each field, so the sets say which operand they came from.
FIELD_REG = {"r1": "r11", "r2": "r12", "r3": "r13"}


def ins_for(row) -> ir.Ins:
    args = []
    for tok, field in zip(row.shape.split(), row.operand_fields):
        if field in FIELD_REG:
            args.append(("+" if tok == "+r" else "") + FIELD_REG[field])
        else:
            args.append({"ads": "lbl", "disp": "@4", "t": "#1"}.get(field, "#7"))
    return ir.Ins(row.mnemonic, args)


@pytest.mark.parametrize("row", INSTRUCTIONS, ids=lambda r: r.key)
def test_read_write_sets_are_the_tables_roles(row):
    ins = ins_for(row)
    # The IR line is that encoding: the assembler picks the same one.
    text = ".code 0\n:lbl\n" + ins.render() + "\n.end\n"
    assert decode(assemble(text).code_image[0]).ins == row
    assert ir.encoding(ins) == row
    reads, writes = ir.reads_writes(ins)
    assert reads == [FIELD_REG[f] for f in row.reads]
    assert writes == [FIELD_REG[f] for f in row.writes]
    only_read = [FIELD_REG[f] for f in row.reads if f not in row.writes]
    assert [ins.args[i].lstrip("+") for i in ir.read_only_positions(ins)] == only_read


def test_labels_and_asm_read_and_write_nothing_at_the_isa_level():
    assert ir.reads_writes(ir.Ins("label", [".L1"])) == ([], [])
    assert ir.reads_writes(ir.Ins("asm", ["add r1 r2 r3"])) == ([], [])


def test_the_sets_follow_the_table(monkeypatch):
    # Pretend `add` also wrote r2: the optimiser's view must change with the table, not stay typed in.
    changed = [dataclasses.replace(r, writes=("r1", "r2")) for r in BY_MNEMONIC["add"]]
    ir._encoding.cache_clear()
    monkeypatch.setitem(BY_MNEMONIC, "add", changed)
    try:
        assert ir.reads_writes(ir.Ins("add", ["r1", "r2", "r3"])) == (["r2", "r3"], ["r1", "r2"])
        assert ir.read_only_positions(ir.Ins("add", ["r1", "r2", "r3"])) == [2]
    finally:
        monkeypatch.undo()
        ir._encoding.cache_clear()
    assert ir.reads_writes(ir.Ins("add", ["r1", "r2", "r3"])) == (["r2", "r3"], ["r1"])


# Which instructions dead-code elimination may delete when nothing reads what they write: those
# whose only effect is their register writes (a load's bus read is not an effect the program sees).
REMOVABLE = {"ld", "pop", "mov", "not", "cid", "ncore", "add", "sub", "mul", "div", "and", "or", "xor",
             "eq", "ne", "lt", "le", "gt", "ge", "shl", "shr", "mod"}


@pytest.mark.parametrize("row", INSTRUCTIONS, ids=lambda r: r.key)
def test_only_instructions_without_other_effects_may_be_removed(row):
    assert ir.has_no_side_effect(ins_for(row)) == (row.mnemonic in REMOVABLE)


def test_dead_code_keeps_stores_and_removes_dead_alu_results():
    code = [ir.Ins("label", ["f"]), ir.Ins("add", ["r20", "r1", "#1"]), ir.Ins("st", ["r1", "g"]),
            ir.Ins("xchg", ["r21", "r1"]), ir.Ins("mov", ["retval", "r0"]), ir.Ins("ret", ["rads"])]
    out = [repr(i) for i in peephole(code)]
    assert "add r20 r1 #1" not in out                       # r20 is read by nobody
    assert "st r1 g" in out and "xchg r21 r1" in out          # memory effects stay


def test_an_unknown_operand_shape_is_an_internal_error():
    with pytest.raises(AssertionError, match="no S2 encoding"):
        ir.encoding(ir.Ins("add", ["r1", "#2"]))
