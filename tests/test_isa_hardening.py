"""Bad input to the assembler, object loader and Machine construction that once ended
in a traceback (ValueError, MemoryError, pybind TypeError) or a 10 MB message; each is now one
S2mcError line naming the file and line. Expected words are hand-encoded (op<<27 | r1<<22 | ...)."""
import pytest

from s2mc.isa import AsmError, Program, S2mcError, Segment, assemble
from s2mc.simulator import Machine

ADS_MAX = (1 << 22) - 1


def words(prog, kind="code"):
    return [(s.addr, [w & 0xFFFFFFFF for w in s.words]) for s in prog.segments if s.kind == kind]


def asm_error(src):
    with pytest.raises(AsmError) as e:
        assemble(src, "bad.s")
    msg = str(e.value)
    assert len(msg.splitlines()) == 1 and len(msg) < 400, msg
    return msg


# -- numbers -----------------------------------------------------------------------------------

def test_leading_zeros_are_decimal_never_octal():
    prog = assemble(".code 010\n  mov r1 #010\n  ld r2 @010 r3\n  jmp 010\n.data 010\n  010 -010 0x010 00\n")
    assert words(prog) == [(10, [(5 << 27) | (1 << 22) | 10,
                                 (2 << 27) | (2 << 22) | (3 << 17) | 10,
                                 (6 << 27) | 10])]
    assert words(prog, "data") == [(10, [10, (-10) & 0xFFFFFFFF, 16, 0])]


def test_leading_zeros_in_registers_and_symbols():
    prog = assemble(".symbol\n  k 007\n.code 0\n  add r01 r002 #k\n")
    assert words(prog) == [(0, [(10 << 27) | (1 << 22) | (2 << 17) | 7])]


@pytest.mark.parametrize("src,line,what", [
    (".code 0\n  mov r1 #" + "1" * 5000, 2, "immediate"),
    (".code " + "9" * 5000, 1, "address"),
    (".code 0\n  ld r1 @-" + "7" * 5000 + " r2", 2, "displacement"),
    (".code 0\n  jmp 0x" + "f" * 5000, 2, "address"),
    (".data 0\n  1 2 " + "3" * 5000, 2, "word"),
    (".symbol\n  n " + "4" * 5000, 2, "value"),
])
def test_numbers_over_python_digit_limit_are_out_of_range(src, line, what):
    msg = asm_error(src)
    assert msg.startswith(f"bad.s:{line}: {what} ") and "out of range" in msg and "(50" in msg


def test_huge_register_number_is_out_of_range():
    assert "register 'r9999999999" in asm_error(".code 0\n  mov r" + "9" * 5000 + " #1")


def test_a_10_mb_line_is_quoted_as_a_short_excerpt():
    line = "frob " + "x" * 10_000_000
    msg = asm_error(".code 0\n" + line)
    assert msg.startswith("bad.s:2: unknown instruction 'frob': 'frob xxx")
    assert msg.endswith(f"... ({len(line)} characters)'")


def test_control_characters_in_quoted_text_are_escaped():
    msg = asm_error(".code 0\n  frob\x1b[2J\x07")
    assert "\x1b" not in msg and "\x07" not in msg and "\\x1b[2j\\x07" in msg


# -- segment ends --------------------------------------------------------------------------------

def test_the_last_address_is_usable():
    prog = assemble(f".code {ADS_MAX}\n  nop\n.data {ADS_MAX - 1}\n  1 2\n")
    assert words(prog) == [(ADS_MAX, [0])] and words(prog, "data") == [(ADS_MAX - 1, [1, 2])]


@pytest.mark.parametrize("src,line", [
    (f".code {ADS_MAX}\n  nop\n  nop\n", 3),
    (f".code {ADS_MAX - 1}\n  nop\n  .word 1 2\n", 3),
    (f".data {ADS_MAX - 1}\n  1 2 3\n", 2),
])
def test_a_segment_may_not_run_past_the_22_bit_address_space(src, line):
    msg = asm_error(src)
    assert msg.startswith(f"bad.s:{line}: .") and f"segment runs past the last address {ADS_MAX}" in msg


# -- object files --------------------------------------------------------------------------------

def obj_error(text):
    with pytest.raises(S2mcError) as e:
        Program.from_text(text, "x.obj")
    msg = str(e.value)
    assert msg.startswith("x.obj:") and len(msg.splitlines()) == 1 and len(msg) < 400, msg
    return msg


@pytest.mark.parametrize("text,line,message", [
    ("s2obj 1\nentry 99999999999999999999999\n", 2, "entry out of range 0..4194303"),
    ("s2obj 1\nentry " + "9" * 5000 + "\n", 2, "entry out of range"),
    ("s2obj 1\nentry 4194304\n", 2, "entry out of range"),
    ("s2obj 1\ndata 999999999999\n00000001\n", 2, "data address out of range 0..4194303"),
    ("s2obj 1\ncode 4194304\n", 2, "code address out of range"),
    (f"s2obj 1\ncode {ADS_MAX}\n00000000 00000000\n", 3, "code segment runs past the last address"),
    (f"s2obj 1\ndata {ADS_MAX - 8}\n" + "00000000 " * 8 + "\n00000000 00000000\n", 4,
     "data segment runs past"),
    ("s2obj 1\nentry 1_0\n", 2, "malformed number"),
    ("s2obj 1\nentry \u0661\n", 2, "malformed number"),            # an Arabic-Indic digit: int() takes it
    ("s2obj 1\nsymbol Loop 1 code\n", 2, "not a code symbol name"),
    ("s2obj 1\nsymbol r5 1 const\n", 2, "not a const symbol name"),
    ("s2obj 1\nsymbol .x 1 const\n", 2, "not a const symbol name"),
    ("s2obj 1\nsymbol a 1 code\nsymbol a 2 data\n", 3, "symbol 'a' defined twice"),
    ("s2obj 1\nsymbol a 4194305 code\n", 2, "code symbol value out of range 0..4194304"),
    ("s2obj 1\nsymbol a -1 data\n", 2, "malformed number"),
    ("s2obj 1\nsymbol a 4294967296 const\n", 2, "const symbol value out of range"),
    ("s2obj 1\nsymbol a -" + "1" * 5000 + " const\n", 2, "const symbol value out of range"),
])
def test_object_loader_rejects_what_the_assembler_cannot_produce(text, line, message):
    msg = obj_error(text)
    assert msg.startswith(f"x.obj:{line}: bad object file: ") and message in msg, msg


def test_object_loader_accepts_the_extremes_the_assembler_produces():
    src = (".symbol\n  lo -2147483648\n  hi 4294967295\n"
           f".code {ADS_MAX}\n  nop\n:.end_label\n.data 0\n  1\n")
    prog = assemble(src)
    assert prog.symbols[".end_label"].value == ADS_MAX + 1
    assert Program.from_text(prog.to_text()) == prog


# -- Machine construction: checks before any image is built ------------------------------------------

def test_machine_rejects_a_huge_entry_without_a_binding_type_error():
    prog = Program([Segment("code", 0, [0])], {}, entry=10 ** 30)
    with pytest.raises(S2mcError, match=r"entry 1000000000000000000000000000000 is outside"):
        Machine(prog)


def test_machine_rejects_huge_segments_before_building_images():
    far_data = Program([Segment("code", 0, [0]), Segment("data", 1 << 40, [1])])
    with pytest.raises(S2mcError, match=f"needs {(1 << 40) + 1} words of memory"):
        Machine(far_data)
    far_code = Program([Segment("code", 1 << 40, [0])])
    with pytest.raises(S2mcError, match="code runs past the last program address"):
        Machine(far_code)


# -- .word and the disassembler's round trip -------------------------------------------------------

def test_word_directive_places_raw_words_in_code_and_data():
    prog = assemble(".code 0\n  nop\n:raw .word 0xf8000fff -1 raw\n  jmp raw\n.data 5\n  .word 7 8\n")
    assert words(prog) == [(0, [0, 0xF8000FFF, 0xFFFFFFFF, 1, (6 << 27) | 1])]
    assert words(prog, "data") == [(5, [7, 8])]


@pytest.mark.parametrize("src,message", [
    (".code 0\n  .word", ".word takes one or more values"),
    ("  .word 1", "instruction or data outside .code or .data"),
    (".symbol\n  .word 1", ".word outside .code or .data"),
    (".code 0\n  .word 0x100000000", "word 0x100000000 out of range"),
    (".code 0\n:x .text", "unknown directive '.text'"),
])
def test_word_directive_errors(src, message):
    assert message in asm_error(src)


@pytest.mark.parametrize("word,text", [
    (0xF8000FFF, ".word 0xf8000fff  ; undefined opcode"),
    (0x0000002A, ".word 0x0000002a  ; nop, with bits set in unused fields"),
    (0xF840001F, ".word 0xf840001f  ; sync, with bits set in unused fields"),
    (0xF8001013, ".word 0xf8001013  ; ret r0, with bits set in unused fields"),    # r3 = 1 in ret
    (0x50841FFF, "add r2 r2 #8191"),
])
def test_disassembler_writes_words_that_would_not_round_trip_as_word(word, text):
    from s2mc.isa import disassemble_word
    assert disassemble_word(word) == text
    assert words(assemble(".code 0\n" + text)) == [(0, [word])]


def test_disassembly_writes_a_label_once_where_segments_overlap():
    from s2mc.isa import disassemble
    prog = assemble(".code 0\n  nop\n:x nop\n.code 1\n  jmp x\n")
    again = assemble(disassemble(prog))
    assert words(again) == words(prog) and again.symbols["x"].value == 1
