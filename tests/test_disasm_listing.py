"""The disassembler's listing is meant to be read: labels as the operands of jumps, loads and stores,
runs of zero data words as one `.space N` line, labels that hold no word still defined, and the
`.stacks` line kept, while the listing still reassembles to the same object."""
from pathlib import Path

import pytest

from s2mc.isa import AsmError, Program, Segment, Symbol, assemble, disassemble
from s2mc.isa.disassembler import ZERO_RUN

ROOT = Path(__file__).resolve().parents[1]


def body(listing: str) -> list[str]:
    """The listing's lines without the trailing `; address` comments."""
    return [line.split(";", 1)[0].rstrip() for line in listing.splitlines() if line.split(";", 1)[0].strip()]


def test_jump_load_and_store_operands_are_labels():
    prog = assemble(".code 0\n:top ld r1 count\n  st r1 @buf r2\n  jt r1 top\n  jmp out\n:out trap r0 #0\n"
                    ".data 7\n:count 5\n:buf 1 2\n")
    assert body(disassemble(prog)) == [
        ".code 0", ":top", "  ld r1 count", "  st r1 @buf r2", "  jt r1 top", "  jmp out", ":out", "  trap r0 #0",
        ".data 7", ":count", "  5", ":buf", "  1", "  2", ".end"]


def test_immediates_and_unlabelled_addresses_stay_numbers():
    # #7 is a number even though a label sits at 7; address 8 has no label; a code label never names a
    # data address (nor the reverse).
    prog = assemble(".code 0\n:start mov r1 #7\n  ld r2 8\n  ld r3 0\n  jmp 7\n.data 7\n:x 1 2\n")
    assert body(disassemble(prog))[1:6] == [":start", "  mov r1 #7", "  ld r2 8", "  ld r3 0", "  jmp 7"]


def test_two_labels_at_one_address_leave_the_number():
    prog = assemble(".code 0\n:a\n:b jmp 0\n")
    assert "  jmp 0" in body(disassemble(prog))


def test_runs_of_zeros_are_one_space_line_split_at_labels():
    words = [0] * 10 + [3] + [0] * (ZERO_RUN - 1) + [0] * 6
    prog = Program([Segment("data", 100, words)], {"mid": Symbol("mid", 114, "data")})
    lines = body(disassemble(prog))
    # 10 zeros, the 3, three zeros (fewer than ZERO_RUN) up to the label, then six zeros from it.
    assert lines == [".data 100", "  .space 10", "  3", "  0", "  0", "  0", ":mid", "  .space 6", ".end"]
    assert assemble(disassemble(prog)).segments == prog.segments


def test_space_directive():
    prog = assemble(".data 4\n:a .space 3\n:b 9\n.code 0\n  .space 2\n  nop\n")
    assert [(s.kind, s.addr, s.words) for s in prog.segments] == [("data", 4, [0, 0, 0, 9]), ("code", 0, [0, 0, 0])]
    assert prog.symbols["b"].value == 7


@pytest.mark.parametrize("src,message", [
    (".data 0\n  .space", ".space takes one count"),
    (".data 0\n  .space 0", "count 0 out of range"),
    (".data 0\n  .space x", "undefined symbol 'x'"),
    ("  .space 2", "instruction or data outside .code or .data"),
    (".symbol\n  .space 2", ".space outside .code or .data"),
    (".data 4194300\n  .space 5", "segment runs past the last address"),
])
def test_space_errors(src, message):
    with pytest.raises(AsmError, match=message):
        assemble(src, "t.s")


def test_labels_without_words_stay_defined_and_name_operands():
    # An Rz program: its arrays of zeros have labels but no words in the object.
    from s2mc.compiler import compile as compile_rz
    prog = compile_rz((ROOT / "workloads/rz/sum.rz").read_text(), opt=1, filename="sum.rz").program
    listing = disassemble(prog)
    assert "st r26 @data r22" in listing
    if getattr(prog, "stacks", None):
        assert f".stacks {prog.stacks.base} {prog.stacks.words} {prog.stacks.count}" in listing
    again = assemble(listing)
    assert again.to_text() == prog.to_text()


@pytest.mark.parametrize("path", sorted((ROOT / "workloads/asm").glob("*.s")) + sorted((ROOT / "workloads/rz").glob("*.rz")),
                         ids=lambda p: p.name)
def test_every_example_reassembles_to_the_same_object(path):
    if path.suffix == ".rz":
        from s2mc.compiler import compile as compile_rz
        prog = compile_rz(path.read_text(), opt=1, filename=path.name).program
    else:
        prog = assemble(path.read_text(), path.name)
    listing = disassemble(prog)
    assert assemble(listing).to_text() == prog.to_text()
    # Readable: no run of ZERO_RUN zero lines survives in the data.
    data_zeros = [line for line in body(listing) if line == "  0"]
    assert len(data_zeros) < len(body(listing)) // 2


def test_barrier_listing_reads_like_its_source():
    listing = disassemble(assemble((ROOT / "workloads/asm/barrier.s").read_text()))
    b = body(listing)
    assert "  st r3 @slot r1" in b and "  jf r4 arrive" in b and "  jmp work" in b and "  ld r6 @slot r5" in b
    assert b[-3:] == [":slot", "  .space 64", ".end"]
    assert len(listing.splitlines()) < 30
