"""Assembler golden tests, every assembler error, and the object format round trip."""
import pytest
from hypothesis import given, strategies as st

from s2mc.isa import AsmError, Program, assemble, disassemble, encode
from s2mc.isa.instructions import BY_KEY, INSTRUCTIONS, decode

GOLDEN = """
.symbol
  fp 30
  N 10          ; constants and register names share .symbol
.code 0
  mov r1 #N
:loop LD r2 @buf r1      ; case-insensitive, label before an instruction
  st r2 +r1 fp
  add r3 r2 #-5
  jt r1 loop
  trap r1 #1
  xchg r1 r2
  sync
  trap r0 #0
.data 100
:buf 1 0x10 -1
.end
this line is after .end and ignored
"""

# Hand-encoded: op<<27 | r1<<22 | ...; X format op=31, xop in the low 12 bits.
GOLDEN_WORDS = [
    (5 << 27) | (1 << 22) | 10,                               # mov r1 #10
    (2 << 27) | (2 << 22) | (1 << 17) | 100,                  # ld r2 @100 r1
    (31 << 27) | (2 << 22) | (1 << 17) | (30 << 12) | 18,     # st r2 +r1 r30
    (10 << 27) | (3 << 22) | (2 << 17) | ((-5) & 0x1FFFF),    # add r3 r2 #-5
    (8 << 27) | (1 << 22) | 1,                                # jt r1 1
    (31 << 27) | (1 << 22) | (1 << 17) | 20,                  # trap r1 #1 (n in the r2 field)
    (31 << 27) | (1 << 22) | (2 << 17) | 32,                  # xchg r1 r2
    (31 << 27) | 31,                                          # sync
    (31 << 27) | 20,                                          # trap r0 #0
]


def test_golden_encoding():
    prog = assemble(GOLDEN, "golden.s")
    code = [s for s in prog.segments if s.kind == "code"][0]
    assert [w & 0xFFFFFFFF for w in code.words] == GOLDEN_WORDS
    data = [s for s in prog.segments if s.kind == "data"][0]
    assert (data.addr, data.words) == (100, [1, 16, -1])
    assert prog.symbols["loop"].value == 1 and prog.symbols["loop"].kind == "code"
    assert prog.symbols["buf"].value == 100 and prog.symbols["buf"].kind == "data"
    assert prog.symbols["n"].kind == "const" and prog.entry == 0


def test_object_format_round_trips_exactly():
    prog = assemble(GOLDEN, "golden.s")
    text = prog.to_text()
    again = Program.from_text(text)
    assert again == prog and again.to_text() == text
    assert text.splitlines()[0] == "s2obj 1"


def test_disassembly_reassembles_to_the_same_words():
    prog = assemble(GOLDEN, "golden.s")
    assert assemble(disassemble(prog)).to_text() == prog.to_text()


@given(st.sampled_from(INSTRUCTIONS), st.integers(0, 31), st.integers(0, 31), st.integers(0, 31),
       st.integers(-(1 << 16), (1 << 16) - 1))
def test_every_encoding_decodes_back(ins, r1, r2, r3, imm):
    if ins.fmt == "L":
        imm = imm & 0x3FFFFF if ins.key != "mov.imm" else imm
    word = encode(ins, r1, r2, r3, imm)
    d = decode(word)
    assert d.ins == ins and d.r1 == r1
    if ins.fmt != "L":
        assert d.r2 == r2
    if ins.fmt == "D" or ins.key == "mov.imm":
        assert d.imm == imm


def test_every_instruction_has_a_unique_encoding():
    seen = {(i.fmt == "X", i.code) for i in INSTRUCTIONS}
    assert len(seen) == len(INSTRUCTIONS)
    assert {"cid", "ncore", "sync", "xchg"} <= set(BY_KEY)


@pytest.mark.parametrize("src,message", [
    (".code 0\n  frob r1 r2", "unknown instruction 'frob'"),
    (".code 0\n  add r1 r2", "wrong operands for add"),
    (".code 0\n  ld r1 @4", "wrong operands for ld"),
    (".code 0\n  add r1 r2 #70000", "immediate 70000 out of range"),
    (".code 0\n  mov r1 #4194304", "immediate 4194304 out of range"),
    (".code 0\n  jmp 4194304", "address 4194304 out of range"),
    (".code 0\n  ld r1 @-70000 r2", "displacement -70000 out of range"),
    (".code 0\n  trap r1 #32", "trap number 32 out of range"),
    (".code 0\n  mov r32 #1", "register 'r32' out of range"),
    (".code 0\n  mov foo #1", "'foo' is not a register"),
    (".code 0\n  jmp nowhere", "undefined symbol 'nowhere'"),
    (".code 0\n  add r1 r2 #1x", "bad immediate '1x'"),
    (".code 0\n:a\n:a", "'a' is defined twice"),
    (".code 0\n:r5", "'r5' is a register name"),
    ("  mov r1 #1", "instruction or data outside .code or .data"),
    (".code", ".code takes one address"),
    (".text 0", "unknown directive '.text'"),
    (".symbol\n  x", "expected 'name value' in .symbol"),
    (".code 0\n:9x nop", "bad label name ':9x'"),
])
def test_assembler_errors_name_file_line_and_text(src, message):
    with pytest.raises(AsmError) as e:
        assemble(src, "bad.s")
    text = str(e.value)
    last = src.splitlines()[-1].strip()
    assert message in text
    assert text.startswith(f"bad.s:{len(src.splitlines())}:") and f"'{last}'" in text


@pytest.mark.parametrize("text,message", [
    ("", "empty"),
    ("s2obj 2\n", "expected 's2obj 1'"),
    ("s2obj 1\n0000000a\n", "words before any 'code' or 'data' line"),
    ("s2obj 1\ncode x\n", "malformed number"),
    ("s2obj 1\nsymbol a 1 weird\n", "symbol kind must be one of"),
    ("s2obj 1\ncode 0\n1234567\n", "unrecognised line"),
    ("s2obj 1\nentry -1\n", "malformed number"),
])
def test_bad_object_files_are_rejected_with_location(text, message):
    with pytest.raises(Exception) as e:
        Program.from_text(text, "x.obj")
    assert message in str(e.value) and str(e.value).startswith("x.obj")


def test_docs_isa_md_is_generated_from_the_table():
    from pathlib import Path
    from s2mc.isa.gen_docs import render
    doc = Path(__file__).resolve().parents[1] / "docs" / "isa.md"
    assert doc.read_text() == render(), "regenerate: python -m s2mc.isa.gen_docs > docs/isa.md"
    for ins in INSTRUCTIONS:
        assert f"`{ins.mnemonic}" in render()
