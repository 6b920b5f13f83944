"""The `.stacks BASE WORDS COUNT` declaration (docs/isa.md): the assembler directive, the object
file line and the disassembler round trip; every bad value is one line naming file:line. The fault
it enables is tested in test_stacks.py."""
import pytest

from s2mc.isa import Program, S2mcError, Stacks, assemble, disassemble


# -- the declaration -----------------------------------------------------------------------------

def test_directive_object_line_and_disassembly_round_trip():
    src = (".symbol\n  n 4\n.stacks STK 0x10 n    ; the label is defined further down\n"
           ".code 0\n  nop\n  trap r0 #0\n.data 100\n:stk\n.end\n")
    prog = assemble(src)
    assert prog.stacks == Stacks(100, 16, 4) and prog.stacks.end == 164
    text = prog.to_text()
    assert text.splitlines()[:3] == ["s2obj 1", "entry 0", "stacks 100 16 4"]
    assert Program.from_text(text) == prog and Program.from_text(text).to_text() == text
    again = assemble(disassemble(prog))
    assert again == prog and ".stacks 100 16 4" in disassemble(prog)


def test_no_declaration_leaves_the_object_as_before():
    prog = assemble(".code 0\n  trap r0 #0\n")
    assert prog.stacks is None
    assert prog.to_text().splitlines()[:3] == ["s2obj 1", "entry 0", "code 0"]
    assert "stacks" not in prog.to_text() and ".stacks" not in disassemble(prog)


def test_regions_of_a_declaration():
    s = Stacks(100, 8, 2)     # core 0: 100..107, core 1: 108..115
    assert [s.region(0), s.region(1), s.region(2)] == [(100, 107), (108, 115), None]
    assert [s.owner(a) for a in (99, 100, 107, 108, 115, 116)] == [None, 0, 0, 1, 1, None]
    assert [s.violates(0, a) for a in (99, 100, 107, 108, 116)] == [False, False, False, True, False]
    assert s.violates(2, 100) and not s.violates(2, 99)     # a core without a region


@pytest.mark.parametrize("line,message", [
    (".stacks 1 2", ".stacks takes a base address, a size in words and a count"),
    (".stacks 1 2 3 4", ".stacks takes a base address, a size in words and a count"),
    (".stacks 0 0 1", "stack words 0 out of range 1..4194304"),
    (".stacks 0 1 0", "stack count 0 out of range 1..4194304"),
    (".stacks -1 1 1", "stack base -1 out of range 0..4194303"),
    (".stacks 4194300 2 3", "stack area 4194300..4194305 runs past the last address 4194303"),
    (".stacks 1 1 " + "9" * 5000, "stack count " + "9" * 60 + "... (5000 characters) out of range 1..4194304"),
    (".stacks nowhere 1 1", "undefined symbol 'nowhere'"),
    (".stacks 1 1 1\n.stacks 1 1 1", ".stacks declared twice"),
])
def test_bad_declarations_are_one_line(line, message):
    with pytest.raises(S2mcError) as e:
        assemble(".code 0\n  nop\n" + line + "\n", "p.s")
    text = line.splitlines()[-1]
    lineno = 2 + len(line.splitlines())
    shown = text if len(text) <= 60 else text[:60] + f"... ({len(text)} characters)"
    assert str(e.value) == f"p.s:{lineno}: {message}: '{shown}'"


@pytest.mark.parametrize("line,message", [
    ("stacks 1 2", "unrecognised line"),
    ("stacks 0 0 1", "stack words out of range 1..4194304"),
    ("stacks 4194304 1 1", "stack base out of range 0..4194303"),
    ("stacks 4194300 2 3", "stack area 4194300..4194305 runs past the last address 4194303"),
    ("stacks 1 1 -1", "malformed number"),
    ("stacks 1 1 0x10", "malformed number"),
    ("stacks 1 1 " + "9" * 5000, "stack count out of range 1..4194304"),
    ("stacks 1 1 1\nstacks 1 1 1", "stacks declared twice"),
])
def test_bad_object_lines_are_one_line(line, message):
    with pytest.raises(S2mcError) as e:
        Program.from_text("s2obj 1\nentry 0\n" + line + "\n", "p.obj")
    msg = str(e.value)
    assert msg.startswith(f"p.obj:{2 + len(line.splitlines())}: bad object file: {message}: '")
    assert len(msg.splitlines()) == 1 and len(msg) < 200
