"""Permanent fuzz suite for the assembler, object loader, disassembler and their CLI commands
(docs/reliability.md). Every input either works or fails with one S2mcError line that names the
file (and line); nothing else may escape. What is accepted must also round-trip: object text back to
the same Program, disassembly back to the same words. The oracle is the tools themselves checked
against each other, plus the bare guarantee "S2mcError or success".

Counts are per test at the default (ci) profile; HYPOTHESIS_PROFILE=thorough raises each to 5000.
"""
from pathlib import Path

from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from s2mc.cli.main import cli
from s2mc.isa import Program, S2mcError, assemble, disassemble, disassemble_word
from s2mc.isa.instructions import BY_XOP, INSTRUCTIONS, X_OPCODE, encode
from s2mc.simulator import Machine, SimFault

ROOT = Path(__file__).resolve().parents[1]


def examples(n: int):
    return settings(max_examples=max(n, settings().max_examples))


# -- corpora: real programs, and one line per encoding --------------------------------------------

def _every_encoding() -> str:
    lines = [".symbol", "  k 5", "  fp 30", ".code 0", ":top"]
    for i, ins in enumerate(INSTRUCTIONS):
        lines.append(disassemble_word(encode(ins, i % 32, (3 * i) % 32, (7 * i) % 32, 5 - i)))
    lines += ["  jt r1 top", "  ld r2 @buf fp", "  add r3 r3 #k", ".data 100", ":buf 1 -2 0x7fffffff k",
              ".stacks buf 16 k", ".end"]
    return "\n".join(lines) + "\n"


SOURCES = [p.read_text() for p in sorted((ROOT / "workloads" / "asm").glob("*.s"))] + [_every_encoding()]
OBJECTS = [assemble(s).to_text() for s in SOURCES]

# Pieces a mutation inserts: syntax, boundaries, huge and odd numbers, and text that is not ASCII.
ASM_PIECES = ["#", "@", "+", ":", ";", "\n", " ", ".word", ".code", ".data", ".symbol", ".end", ".stacks", "0x",
              "010", "-", "r31", "r32", "4194303", "4194304", "65535", "-65537", "0xffffffff", "9" * 5000,
              "x" * 2000, "\x00", "\xff", "\u0661", "\u2028", "\r", "\t", "İ", "é", ":x", "x", "add", "ld",
              "trap", "sync", "k"]
OBJ_PIECES = ["s2obj 1", "entry", "stacks", "symbol", "code", "data", "const", "00000000", "ffffffff", "7fffffff",
              "80000000", "f8000fff", "0000002a", "0000000G", "-1", "0", "64", "4194303", "4194304", "1_0",
              "\u0661", "9" * 5000, ";", "\n", " ", "r5", "Foo", ".x", "a", "\xa0"]


@st.composite
def mutated(draw, bases, pieces):
    """A base text after a few random edits, each inside one line (so that edits spread over the
    whole text): insert a piece, delete a span, replace a token, or copy or drop a line."""
    lines = draw(st.sampled_from(bases)).split("\n")
    for _ in range(draw(st.integers(1, 3))):
        # sampled_from draws uniformly; integers() favours its bounds, which would keep editing line 0
        i = draw(st.sampled_from(range(len(lines))))
        line, pos = lines[i], draw(st.sampled_from(range(len(lines[i]) + 1)))
        edit = draw(st.sampled_from(["insert", "delete", "token", "token", "copy", "drop"]))
        piece = draw(st.sampled_from(pieces) | st.text(max_size=4))
        if edit == "insert":
            lines[i] = line[:pos] + piece + line[pos:]
        elif edit == "delete":
            lines[i] = line[:pos] + line[pos + draw(st.integers(1, 12)):]
        elif edit == "token":
            tokens = line.split(" ")
            tokens[draw(st.integers(0, len(tokens) - 1))] = piece
            lines[i] = " ".join(tokens)
        elif edit == "copy":
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif len(lines) > 1:
            del lines[i]
    return "\n".join(lines)


# Object files built from well-formed lines with values at and past every limit.
NUMBERS = (st.sampled_from([0, 1, 64, 1023, 1024, 4194303, 4194304, -1, 2 ** 31, 2 ** 32, 10 ** 30])
           | st.integers(-3, 3000)).map(str)
OBJ_LINES = st.one_of(
    NUMBERS.map("entry {}".format),
    st.builds("symbol {} {} {}".format, st.sampled_from(["a", "b", ".x", "r5", "Foo", "x_1"]), NUMBERS,
              st.sampled_from(["code", "data", "const", "weird"])),
    st.builds("{} {}".format, st.sampled_from(["code", "data"]), NUMBERS),
    st.builds("stacks {} {} {}".format, NUMBERS, NUMBERS, NUMBERS),
    st.lists(st.integers(0, (1 << 32) - 1).map("{:08x}".format), min_size=1, max_size=8).map(" ".join))
BUILT_OBJECTS = st.lists(OBJ_LINES, max_size=12).map(lambda lines: "s2obj 1\ncode 0\n" + "\n".join(lines) + "\n")


def check_error(exc: S2mcError, filename: str) -> None:
    """The error contract: one line, starts with the file name, short whatever the input."""
    msg = str(exc)
    assert len(msg.splitlines()) == 1 and msg.strip() == msg, repr(msg)
    assert msg.startswith(f"{filename}:") and len(msg) < 500, msg


def segment_words(prog: Program):
    return [(s.kind, s.addr, [w & 0xFFFFFFFF for w in s.words]) for s in prog.segments if s.words]


def check_round_trips(prog: Program) -> None:
    text = prog.to_text()
    assert Program.from_text(text) == prog and Program.from_text(text).to_text() == text
    again = assemble(disassemble(prog), "dis.s")
    assert segment_words(again) == segment_words(prog) and again.stacks == prog.stacks


def assemble_or_error(source: str):
    try:
        prog = assemble(source, "fuzz.s")
    except S2mcError as e:
        check_error(e, "fuzz.s")
        return None
    check_round_trips(prog)
    return prog


# -- the assembler ---------------------------------------------------------------------------------

@examples(500)
@given(st.text(max_size=200))
def test_assembler_on_random_text(source):
    assemble_or_error(source)


@examples(500)
@given(st.lists(st.sampled_from(ASM_PIECES) | st.text(max_size=6), max_size=30).map("".join))
def test_assembler_on_random_token_soup(source):
    assemble_or_error(source)


@examples(1000)
@given(mutated(SOURCES, ASM_PIECES))
def test_assembler_on_mutated_programs(source):
    assemble_or_error(source)


# -- the object loader -------------------------------------------------------------------------------

@examples(1000)
@given(mutated(OBJECTS, OBJ_PIECES) | BUILT_OBJECTS)
def test_object_loader_on_mutated_objects(text):
    try:
        prog = Program.from_text(text, "fuzz.obj")
    except S2mcError as e:
        check_error(e, "fuzz.obj")
        return
    check_round_trips(prog)
    # Whatever loads can be put on a Machine, or is refused with one line; then it runs briefly.
    # (A program image near the 2^22 limit takes a third of a second to build: left to the unit tests.)
    if prog.top("code") > 1 << 16:
        return
    try:
        m = Machine(prog, mem_words=1024, max_cycles=300)
    except S2mcError as e:
        assert len(str(e).splitlines()) == 1
        return
    try:
        m.run()
    except SimFault as e:
        assert len(str(e).splitlines()) == 1


# -- the disassembler ----------------------------------------------------------------------------------

X_WORDS = st.builds(lambda high, xop: (X_OPCODE << 27) | (high << 12) | xop,
                    st.integers(0, (1 << 15) - 1), st.sampled_from(sorted(BY_XOP)))
SPARSE = st.builds(lambda op, bits: (op << 27) | bits, st.integers(0, 31),
                   st.sampled_from([0, 1, 1 << 12, 1 << 17, 1 << 22, (1 << 22) - 1, (1 << 27) - 1, 0xFFF]))
WORDS = st.integers(0, (1 << 32) - 1) | X_WORDS | SPARSE


@examples(3000)
@given(WORDS)
def test_disassembled_words_reassemble_to_themselves(word):
    text = disassemble_word(word)
    assert segment_words(assemble(".code 0\n" + text)) == [("code", 0, [word])], text


@examples(300)
@given(st.lists(WORDS, min_size=1, max_size=40), st.integers(0, (1 << 22) - 40))
def test_disassembled_programs_reassemble_to_themselves(code, addr):
    from s2mc.isa import Segment
    signed = [w - (1 << 32) if w >> 31 else w for w in code]     # a Program holds signed words
    check_round_trips(Program([Segment("code", addr, signed), Segment("data", 0, signed)]))


# -- the CLI on the same inputs --------------------------------------------------------------------------

def check_cli(args) -> None:
    res = CliRunner().invoke(cli, [str(a) for a in args])
    if res.exit_code == 0:
        return
    # One line, from our handler (SystemExit), never an escaped exception.
    assert isinstance(res.exception, SystemExit) and res.exit_code in (1, 2), res.exc_info
    assert len(res.stderr.splitlines()) == 1 and res.stderr.startswith("s2mc"), res.stderr
    assert "Traceback" not in res.stderr


@examples(150)
@given(mutated(SOURCES, ASM_PIECES), st.sampled_from(["asm", "run", "disasm"]))
def test_cli_on_mutated_sources(tmp_path_factory, source, command):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.s"
    path.write_bytes(source.encode("utf-8", "surrogatepass"))
    extra = {"asm": ["-o", path.with_suffix(".obj")], "run": ["--max-cycles", "300", "--mem-words", "1024"]}
    check_cli([command, path, *extra.get(command, [])])


@examples(150)
@given(mutated(OBJECTS, OBJ_PIECES) | st.binary(max_size=64).map(lambda b: b"s2obj 1\n" + b),
       st.sampled_from(["run", "disasm"]))
def test_cli_on_mutated_objects(tmp_path_factory, text, command):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.obj"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    check_cli([command, path, *(["--max-cycles", "300", "--mem-words", "1024"] if command == "run" else [])])
