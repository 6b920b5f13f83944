"""Permanent fuzz suite for the Rz compiler and its commands (docs/reliability.md, "Rz
compiler").

Every source either compiles or fails with one CompileError line `fuzz.rz:line:col: ...`
(under 500 characters, the line inside the source): random Unicode text, token soup with the
pieces that broke it before (deep brackets, huge numbers, non-ASCII names, register names), and
the teaching programs of workloads/rz/ after a few edits. Whatever compiles must also interpret
(output, or one RzRuntimeError line). Well-formed programs from the differential generator print
on the simulator exactly what the reference interpreter prints, at -O0 and -O1. `s2mc compile`
and `s2mc run` on edited sources (as bytes, so also not UTF-8) exit 0 or print exactly one
stderr line starting `s2mc`.

Counts are per test at the default (ci) profile; HYPOTHESIS_PROFILE=thorough multiplies them by 16.
"""
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from s2mc.compiler import CompileError, RzRuntimeError, compile as compile_rz, interpret
from s2mc.isa import S2mcError
from test_compiler_differential import check as same_as_interpreter, programs
from test_fuzz_isa import check_cli, mutated      # exit 0, or one stderr line starting `s2mc`

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [p.read_text() for p in sorted((ROOT / "workloads" / "rz").glob("*.rz"))]
LOCATED = re.compile(r"fuzz\.rz:(\d+):(\d+): (?!error: )")   # a location, then the message (no doubled "error:")


def examples(n: int):
    """n examples in the default profile, 16 x n under HYPOTHESIS_PROFILE=thorough."""
    return settings(max_examples=n * max(1, settings().max_examples // 300),
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# Pieces a mutation or the soup inserts: syntax, the limits (names, numbers, nesting), names the
# assembler reserves, strings and characters outside what a name or a string may hold.
RZ_PIECES = ["(", ")", "[", "]", "{", "}", ",", "=", "==", "+", "-", "*", "&", "!", "~", "<<", "&&",
             "||", "/", "%", "\n", "\n  ", "\n    ", "\t", " ", "\r", "//", "if (x) ", "else ",
             "while (", "return ", "print(", "asm(\"", "\"", "\"\\q\"", "\"\\", "\"é\"", "\"☃\"",
             "x", "main", "main()", "f(", "a[", "n", "i", "cid()", "sync()", "ncore", "r5", "R31",
             "fp", "retval", "__x", "x" * 65, "0", "1", "010", "0x", "0xFFFFFFFF", "4294967295",
             "4294967296", "9" * 5000, "2147483648", "é", "café", "\u0661", "²", "İ", "\u2028",
             "\x00", "\ufeff", "\x85", "{x}", ".end", "jmp nowhere", "(" * 70, ")" * 70,
             "-" * 70, "1+" * 300, "else if (x) "]
TEXT = st.text(max_size=120)
PIECES = st.lists(st.sampled_from(RZ_PIECES) | st.text(max_size=4), max_size=40).map("".join)
# raw, or as an expression and a statement inside a program, to get past the top level
SOUP = PIECES | st.builds("a[4]\nmain()\n  x = 1\n  p = &a[0]\n  print({})\n  {}\n".format, PIECES, PIECES)
EDITED = mutated(SOURCES, RZ_PIECES)


def located(msg: str, source: str) -> None:
    """The error contract: one short line, starting with the file and a line:col in the source."""
    assert len(msg.splitlines()) == 1 and msg.strip() == msg and len(msg) < 500, repr(msg)
    m = LOCATED.match(msg)
    assert m, msg
    line, col = int(m.group(1)), int(m.group(2))
    lines = source.split("\n")
    assert 1 <= line <= len(lines) + 1 and col >= 1, (msg, len(lines))


def compile_or_error(source: str, opt: int):
    """Compile; whatever compiles also interprets briefly (output, or one located line)."""
    try:
        compiled = compile_rz(source, opt=opt, filename="fuzz.rz")
    except CompileError as exc:
        located(str(exc), source)
        return None
    except S2mcError as exc:                    # an assembler error about the generated .s
        raise AssertionError(f"not located in the .rz: {exc}") from None
    try:
        interpret(compiled.ast, filename="fuzz.rz", max_steps=20_000, max_depth=100)
    except RzRuntimeError as exc:
        located(str(exc), source)
    return compiled


# -- the compiler ----------------------------------------------------------------------------------

def _compiler_fuzz(name: str, sources, n: int, n_slow: int):
    """test_compiler_on_<name> drawing n examples, and its slow twin (_many) drawing n_slow."""
    def make(count: int, suffix: str):
        @examples(count)
        @given(sources, st.sampled_from([0, 1]))
        def test(source, opt):
            compile_or_error(source, opt)
        test.__name__ = test.__qualname__ = f"test_compiler_on_{name}{suffix}"
        return test
    return make(n, ""), pytest.mark.slow(make(n_slow, "_many"))


# About a third of the examples in the default run; the slow twins draw the full count.
test_compiler_on_random_text, test_compiler_on_random_text_many = _compiler_fuzz("random_text", TEXT, 300, 1000)
test_compiler_on_token_soup, test_compiler_on_token_soup_many = _compiler_fuzz("token_soup", SOUP, 300, 1000)
test_compiler_on_edited_teaching_programs, test_compiler_on_edited_teaching_programs_many = _compiler_fuzz(
    "edited_teaching_programs", EDITED, 150, 400)


@examples(30)
@given(programs())
def test_generated_programs_print_what_the_interpreter_prints(source):
    same_as_interpreter(source)          # -O0 and -O1 on the fast engine against the interpreter


# -- the commands -------------------------------------------------------------------------------------

@examples(120)
@given(EDITED, st.sampled_from(["compile", "run"]), st.sampled_from(["0", "1"]))
def test_cli_on_edited_sources(tmp_path_factory, source, command, opt):
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.rz"
    path.write_bytes(source.encode("utf-8", "surrogatepass"))
    extra = {"compile": ["-o", path.with_suffix(".s"), f"-O{opt}"],
             "run": ["--max-cycles", "20000", "--cores", "2", "-O", opt]}[command]
    check_cli([command, path, *extra])
