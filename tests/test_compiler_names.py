"""Names, characters and sizes in Rz sources (docs/rz.md "Names and characters"):
whatever the assembler would refuse in the generated .s (non-ASCII names, register names,
directives or bad lines in asm(...), globals too large for memory, bytes that are not UTF-8) is an
error at the .rz line:col; names spelt like instructions or directives are ordinary names and run.
"""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.compiler import CompileError, compile as compile_rz, interpret_source
from s2mc.compiler.astnodes import BUILTINS
from s2mc.compiler.lexer import MAX_NAME
from s2mc.isa.instructions import BY_MNEMONIC
from s2mc.simulator import run


def same_as_interpreter(source: str) -> str:
    want = interpret_source(source, filename="t.rz")
    for opt in (0, 1):
        got = run(compile_rz(source, opt=opt, filename="t.rz").program).output
        assert got == want, f"-O{opt}: {got!r} != {want!r}"
    return want


@pytest.mark.parametrize("source, col, words", [
    ("café = 1\nmain()\n  print(café)\n", 4, "unexpected character 'é' (U+00E9); names are ASCII"),
    ("main()\n  naïve = 1\n", 5, "unexpected character 'ï' (U+00EF)"),
    ("main()\n  x = ²\n", 7, "unexpected character '²' (U+00B2)"),
    ("main()\n  x = \u0661\n", 7, "unexpected character '\u0661' (U+0661)"),
    ("main()\n  x = 1\u2028\n", 8, "unexpected character U+2028"),
    ("main()\n  x = 1\x00\n", 8, "unexpected character U+0000"),
    ("main()\n  x = 1\x1c2\n", 8, "unexpected character U+001C"),
    ("main()\n  print(\"snow \u2603\")\n", 15, "character '\u2603' (U+2603) cannot be in a string"),
    ("main()\n  print(\"\ud800\")\n", 10, "character U+D800 cannot be in a string"),
    ("main()\n  x = " + "9" * 5000 + "\n", 7, "out of range"),
    ("main()\n  x = 0x" + "f" * 5000 + "\n", 7, "out of range"),
    ("main()\n  x = 0x1_0\n", 7, "bad hex number '0x1_0'"),
    ("main()\n  x = 1" + "a" * 5000 + "\n", 7, "bad number"),
    ("main()\n  " + "v" * (MAX_NAME + 1) + " = 1\n", 3, f"is too long ({MAX_NAME + 1} characters; at most {MAX_NAME})"),
    ("main()\n  print(\"a\\" + "\n", 9, "unterminated string"),
    ("main()\n  print(\"a\\q\")\n", 11, "unknown escape '\\q'"),
])
def test_bad_characters_and_names_are_located(source, col, words):
    with pytest.raises(CompileError) as info:
        compile_rz(source, filename="t.rz")
    msg = str(info.value)
    assert msg.startswith(f"t.rz:{2 if not source.startswith('café') else 1}:{col}: "), msg
    assert words in msg and len(msg) < 200 and len(msg.splitlines()) == 1, msg


def test_longest_name_and_latin1_strings_work():
    name = "v" * MAX_NAME
    src = f"{name} = 5\nmain()\n  print(\"café ÿ\", {name})\n"
    assert same_as_interpreter(src) == "café ÿ 5\n"


@pytest.mark.parametrize("name", sorted({m for m in BY_MNEMONIC} | {"end", "code", "data", "word", "symbol", "stacks", "L1"}))
def test_mnemonics_and_directive_words_are_ordinary_names(name):
    """S2 assembly labels may be spelt like instructions and directives: a global, a function and
    a local of that name compile, assemble and run."""
    src = (f"{name} = 2\n{name}_f({name}_p)\n  return {name}_p + {name}\n"
           f"main()\n  {name}_l = {name}_f(3)\n  {name} = {name}_l\n  print({name})\n")
    fn = f"{name}()\n  return 7\nmain()\n  print({name}())\n"
    for source in (src, fn):
        try:
            same_as_interpreter(source)
        except CompileError as exc:                 # only the language's own reserved words
            assert name in BUILTINS and "builtin" in str(exc), exc


@pytest.mark.parametrize("name", ["r0", "R5", "r31", "r32", "r007", "fp", "SP", "rads", "retval", "__start"])
def test_register_and_compiler_names_are_refused_at_the_rz_line(name):
    for src, line in ((f"{name} = 1\nmain()\n  print(1)\n", 1), (f"main()\n  {name} = 1\n", 2),
                      (f"{name}()\n  return 1\nmain()\n  print(1)\n", 1)):
        with pytest.raises(CompileError, match=rf"^t\.rz:{line}:\d+: '{name}'"):
            compile_rz(src, filename="t.rz")


@pytest.mark.parametrize("text, words", [
    ("bogus r1", "unknown instruction 'bogus'"),
    ("jmp nowhere", "undefined symbol 'nowhere'"),
    ("add r1 r2", "wrong operands"),
    (":main", "'main' is defined twice"),
])
def test_errors_inside_asm_are_at_the_asm_string(text, words):
    src = f'main()\n  x = 1\n  asm("{text}")\n  print(x)\n'
    with pytest.raises(CompileError) as info:
        compile_rz(src, filename="t.rz")
    msg = str(info.value)
    assert msg.startswith("t.rz:3:7: in asm(...): ") and words in msg and len(msg.splitlines()) == 1, msg


@pytest.mark.parametrize("directive", [".end", ".code 0", ".data 5", ".symbol", ".STACKS 1 2 3"])
def test_asm_cannot_move_the_code_around_it(directive):
    with pytest.raises(CompileError, match=r"^t\.rz:2:7: asm\(\.\.\.\) cannot contain"):
        compile_rz(f'main()\n  asm("nop\\n{directive}")\n', filename="t.rz")


def test_compile_cli_names_the_line_of_a_byte_that_is_not_utf8(tmp_path):
    src = tmp_path / "bad.rz"
    src.write_bytes(b"main()\n  print(1)\n  x = \xff\n")
    res = CliRunner().invoke(cli, ["compile", str(src)])
    assert res.exit_code == 1 and res.stderr == f"s2mc: error: {src}:3: not a text file (byte 0xff is not UTF-8)\n"
    src.write_bytes(b"\xef\xbb\xbfmain()\n  print(1)\n")        # a byte-order mark is dropped
    assert CliRunner().invoke(cli, ["compile", str(src), "-o", "-"]).exit_code == 0


def test_globals_up_to_the_stacks_fit_and_one_word_more_is_located():
    most = 2096640                       # the stacks' base, rounded up to 256, is the largest mov
    src = f"a[{most}]\nmain()\n  a[{most - 1}] = 7\n  print(a[{most - 1}])\n"
    assert run(compile_rz(src).program, mem_words=1 << 22).output == "7\n"
    with pytest.raises(CompileError, match=rf"^t\.rz:2:1: the globals do not fit in memory: "
                                           rf"up to 'b' they take {most + 1} words, and at most {most}"):
        compile_rz(f"x\nb[{most}]\nc[5]\nmain()\n  print(1)\n", filename="t.rz")
