"""Compile errors: `file:line:col: message`, one test per kind of mistake."""
from __future__ import annotations

import pytest

from s2mc.compiler import CompileError, RzRuntimeError, interpret_source
from s2mc.compiler import compile as compile_rz
from s2mc.common.errors import S2mcError

CASES = [
    # (name, source, line, col, words in the message)
    ("undefined name", "main()\n  x = y + 1\n", 2, 7, "undefined name 'y'"),
    ("used before assigned", "main()\n  print(x)\n  x = 1\n", 2, 9, "'x' is used before it is assigned"),
    ("undefined function", "main()\n  f(1)\n", 2, 3, "undefined function 'f'"),
    ("bad indentation", "main()\n    x = 1\n  y = 2\n", 3, 3, "bad indentation"),
    ("unexpected indentation", "main()\n  x = 1\n    y = 2\n", 3, 5, "unexpected indentation"),
    ("missing block", "main()\nx = 1\n", 2, 1, "expected an indented block"),
    ("indented top level", "  g\nmain()\n  x = 1\n", 1, 3, "unexpected indentation"),
    ("too many arguments", "f(a)\n  return a\nmain()\n  f(1, 2)\n", 4, 3,
     "'f' takes 1 argument, but 2 were given"),
    ("too few arguments", "f(a, b)\n  return a\nmain()\n  print(f(1))\n", 4, 9,
     "'f' takes 2 arguments, but 1 was given"),
    ("builtin arity", "main()\n  x = cid(1)\n", 2, 7, "cid() takes 0 arguments"),
    ("address of a local", "main()\n  x = 1\n  p = &x\n", 3, 7,
     "cannot take the address of local variable 'x'"),
    ("local array", "main()\n  b[3] = 1\n", 2, 3, "arrays must be global"),
    ("local array declaration", "main()\n  b[10]\n", 2, 3, "arrays must be global"),
    ("assign to a number", "main()\n  3 = 4\n", 2, 3, "cannot assign to this expression"),
    ("assign to a call", "f()\n  return 1\nmain()\n  f() = 4\n", 4, 3, "cannot assign to this expression"),
    ("assign to an address", "g\nmain()\n  &g = 4\n", 3, 3, "cannot assign to this expression"),
    ("assign to a sum", "main()\n  x = 1\n  x + 1 = 4\n", 3, 5, "cannot assign to this expression"),
    ("assign to an array", "a[3]\nmain()\n  a = 4\n", 3, 3, "cannot assign to array 'a'"),
    ("unterminated string", 'main()\n  print("abc)\n', 2, 9, "unterminated string"),
    ("bad escape", 'main()\n  print("a\\qb")\n', 2, 11, "unknown escape"),
    ("number out of range", "main()\n  x = 4294967296\n", 2, 7, "out of range"),
    ("hex out of range", "main()\n  x = 0x100000000\n", 2, 7, "out of range"),
    ("bad number", "main()\n  x = 12ab\n", 2, 7, "bad number"),
    ("bad hex", "main()\n  x = 0xg\n", 2, 7, "bad hex number"),
    ("unexpected character", "main()\n  x = 1 @ 2\n", 2, 9, "unexpected character '@'"),
    ("no main", "f()\n  return 1\n", 1, 1, "no main() function"),
    ("main with parameters", "main(a)\n  print(a)\n", 1, 1, "main() takes no parameters"),
    ("duplicate function", "f()\n  return 1\nf()\n  return 2\nmain()\n  f()\n", 3, 1, "defined twice"),
    ("duplicate global", "g, g\nmain()\n  g = 1\n", 1, 4, "defined twice"),
    ("case collision", "abc\nABC()\n  return 1\nmain()\n  abc = 1\n", 2, 1, "S2 assembly ignores case"),
    ("duplicate parameter", "f(a, a)\n  return a\nmain()\n  f(1, 2)\n", 1, 6, "appears twice"),
    ("reserved name", "fp\nmain()\n  fp = 1\n", 1, 1, "reserved"),
    ("register name", "main()\n  r5 = 1\n", 2, 3, "reserved"),
    ("compiler name", "__heap\nmain()\n  __heap = 1\n", 1, 1, "reserved for the compiler"),
    ("builtin redefined", "sync()\n  return 1\nmain()\n  sync()\n", 1, 1, "builtin"),
    ("string outside print", 'main()\n  x = "abc"\n', 2, 7, "a string can only be"),
    ("useless expression", "main()\n  x = 1\n  x + 1\n", 3, 3, "throws it away"),
    ("valueless builtin", "main()\n  x = sync()\n", 2, 7, "sync() has no value"),
    ("asm without string", "main()\n  asm(1)\n", 2, 7, "asm(...) takes a string"),
    ("asm unknown name", 'main()\n  asm("mov {q} #1")\n', 2, 7, "'{q}'"),
    ("call a variable", "main()\n  x = 1\n  x(2)\n", 3, 3, "'x' is a variable, not a function"),
    ("function as value", "f()\n  return 1\nmain()\n  x = f + 1\n", 4, 7, "'f' is a function"),
    ("array size not constant", "n = 3\na[n]\nmain()\n  n = 1\n", 2, 3, "must be a constant"),
    ("array size zero", "a[0]\nmain()\n  a[0] = 1\n", 1, 3, "must be positive"),
    ("too many initial values", "a[2] = {1, 2, 3}\nmain()\n  a[0] = 1\n", 1, 15, "too many initial values"),
    ("initial value not constant", "g\nh = g + 1\nmain()\n  g = 1\n", 2, 7, "must be a constant"),
    ("scalar with a list", "g = {1, 2}\nmain()\n  g = 1\n", 1, 1, "takes one initial value"),
    ("unclosed parenthesis", "main()\n  print(1 + 2\n", 2, 8, "'(' is never closed"),
    ("missing comma", "main()\n  print(1 + 2 x)\n", 2, 15, "expected ')' or ','"),
    ("else without if", "main()\n  else x = 1\n", 2, 3, "'else' without a matching 'if'"),
    ("if without parentheses", "main()\n  x = 1\n  if x == 1 print(x)\n", 3, 6, "'(' after 'if'"),
    ("keyword in expression", "main()\n  x = while\n", 2, 7, "is a keyword"),
    ("address of an expression", "main()\n  x = 1\n  p = &(x + 1)\n", 3, 7, "'&' needs"),
    ("stray token after statement", "main()\n  x = 1 2\n", 2, 9, "expected end of line"),
]


@pytest.mark.parametrize("name,source,line,col,words", CASES, ids=[c[0] for c in CASES])
def test_compile_error(name, source, line, col, words):
    with pytest.raises(CompileError) as info:
        compile_rz(source, filename="prog.rz")
    err = info.value
    assert isinstance(err, S2mcError)
    assert str(err).startswith(f"prog.rz:{line}:{col}: "), str(err)
    assert words in str(err)
    assert "\n" not in str(err)


def test_compile_error_default_filename():
    with pytest.raises(CompileError, match=r"^<input>:2:7: undefined name 'q'$"):
        compile_rz("main()\n  x = q\n")


def test_unknown_optimisation_level():
    with pytest.raises(CompileError, match="-O2"):
        compile_rz("main()\n  print(1)\n", opt=2)


@pytest.mark.parametrize("source,words", [
    ("main()\n  x = 0\n  print(1 / x)\n", "division by zero"),
    ("main()\n  x = 0\n  print(1 % x)\n", "division by zero"),
    ("main()\n  while (1)\n    x = 1\n", "step limit"),
    ("f(n)\n  return f(n + 1)\nmain()\n  f(0)\n", "nested more than"),
    ("main()\n  p = -5\n  print(*p)\n", "outside memory"),
    ("main()\n  if (0)\n    x = 1\n  print(x)\n", "read before it is assigned"),
    ('main()\n  asm("nop")\n', "cannot run asm"),
])
def test_interpreter_runtime_errors(source, words):
    with pytest.raises(RzRuntimeError, match=words):
        interpret_source(source, max_steps=100_000, max_depth=500)
