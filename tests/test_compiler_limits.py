"""Deep nesting in Rz (docs/rz.md "Limits", compiler/nesting.py).

Programs nested thousands of levels deep compile at -O0 and -O1 and print on the simulator what
the reference interpreter prints; past nesting.MAX_NESTING every pass gives one line, never a
RecursionError. The bound on Python frames per level is checked against every construct at a
lowered limit, where being one frame per level short overflows by hundreds of frames.
"""
from __future__ import annotations

import re
import sys
import threading

import pytest

from s2mc.compiler import CompileError, RzRuntimeError, compile as compile_rz, frontend, interpret_source, nesting
from s2mc.simulator import run

LIMIT = nesting.MAX_NESTING


def same_as_interpreter(source: str, opts=(0, 1)) -> str:
    """Compile at each level, run on the fast engine, compare with the interpreter's output."""
    want = interpret_source(source, filename="t.rz")
    for opt in opts:
        got = run(compile_rz(source, opt=opt, filename="t.rz").program, max_cycles=50_000_000).output
        assert got == want, f"-O{opt}: {got[:80]!r} != {want[:80]!r}"
    return want


def too_deep(source: str) -> CompileError:
    with pytest.raises(CompileError) as info:
        compile_rz(source, filename="t.rz")
    msg = str(info.value)
    assert re.fullmatch(rf"t\.rz:\d+:\d+: nesting too deep \(limit {nesting.MAX_NESTING}\)", msg), msg
    return info.value


# -- the sizes real programs reach ------------------------------------------------------------------

def test_5000_nested_parentheses():
    inner = "(" * 5000 + "x" + "".join(f" + {i % 7})" for i in range(5000))
    assert same_as_interpreter(f"main()\n  x = 1\n  print({inner})\n") == f"{1 + sum(i % 7 for i in range(5000))}\n"
    bare = "(" * 5000 + "7" + ")" * 5000
    assert same_as_interpreter(f"main()\n  print({bare}, -{bare})\n") == "7 -7\n"


def else_if_chain(n: int) -> str:
    """An if and n - 1 else-ifs and an else; the last else-if is taken and prints n - 1."""
    lines = [f"g = {n - 2}", "main()", "  x = g + 1"]
    lines += ["  if (x == 0) print(0)"] + [f"  else if (x == {k}) print({k})" for k in range(1, n)]
    lines += ["  else print(-1)"]
    return "\n".join(lines) + "\n"


def test_2000_branch_else_if_chain():
    assert same_as_interpreter(else_if_chain(2000)) == "1999\n"


@pytest.mark.slow
def test_5000_branch_else_if_chain():
    assert same_as_interpreter(else_if_chain(5000)) == "4999\n"


def test_10000_term_sum():
    ones = "+".join(["1"] * 10_000)
    xs = " - ".join(["x"] * 10_000)
    assert same_as_interpreter(f"main()\n  x = 3\n  print({ones})\n  print({xs})\n") == "10000\n-29994\n"


def nested_blocks(n: int, kinds) -> str:
    """n blocks inside one another, kinds cycling through if / while / else; only the innermost
    statement increments x, so the program prints 1."""
    head, tail = ["main()", "  x = 0"], []
    for i in range(n):
        pad, kind = " " * (i + 2), kinds[i % len(kinds)]
        if kind == "if":
            head.append(pad + "if (x == 0)")
        elif kind == "while":
            head.append(pad + "while (x < 1)")
        else:                                       # the innermost statement sits in an else
            head += [pad + "if (x != 0)", pad + " print(-1)", pad + "else"]
            tail = [pad + "if (x == 1) x = x + 0"] + tail
    return "\n".join(head + [" " * (n + 2) + "x = x + 1"] + tail + ["  print(x)"]) + "\n"


@pytest.mark.parametrize("kinds", [["if"], ["while"], ["if", "while", "else"]], ids="/".join)
def test_2000_nested_blocks(kinds):
    assert same_as_interpreter(nested_blocks(2000, kinds)) == "1\n"


# -- past the limit: one line from the first pass that sees it -----------------------------------------

def parentheses_past_the_limit(depth: int) -> None:
    err = too_deep("main()\n  print(" + "(" * depth + "1" + ")" * depth + ")\n")
    # main's block and print's bracket are two levels: the bracket that makes LIMIT + 1
    assert (err.line, err.col) == (2, len("  print(") + LIMIT - 1)


def test_parentheses_just_past_the_limit_are_one_line():
    parentheses_past_the_limit(LIMIT + 1)


@pytest.mark.slow
def test_a_million_nested_parentheses_is_one_line():
    parentheses_past_the_limit(1_000_000)


def test_prefix_operators_past_the_limit_are_one_line():
    err = too_deep("main()\n  x = 1\n  print(" + "-!~*" * (LIMIT // 2) + "x)\n")
    assert (err.line, err.col) == (3, len("  print(") + LIMIT + 1)


def test_a_sum_past_the_limit_is_one_line():
    line = "  print(" + "+".join(["1"] * (LIMIT + 2)) + ")"
    err = too_deep(f"main()\n{line}\n")
    assert err.line == 2 and line[err.col - 1] == "+"


# -- the frame bound, checked per construct at a lowered limit --------------------------------------

HEAD = ("a[4]\nf(v)\n  return v\ng2(v, w)\n  return v - w\n"
        "h9(a1, a2, a3, a4, a5, a6, a7, a8, a9)\n  return a1 + a9\n")


def in_print(e: str, before: str = "") -> str:
    return HEAD + "main()\n  x = 1\n  p = &a[0]\n" + before + f"  print({e})\n"


def nest(n: int, open_: str, leaf: str, close: str) -> str:
    return open_ * n + leaf + close * n


CLIMB = "x || x && x | x ^ x & x == x < x << x + x * "     # every binary level, each a recursion
SHAPES = {   # name -> program nesting one construct n levels deep
    "sum": lambda n: in_print(" + ".join(["x"] * (n + 1))),
    "right operands": lambda n: in_print(nest(n, "(x - ", "x", ")")),
    "every level": lambda n: in_print(nest(n // 10, "(" + CLIMB, "x", ")")),
    "parentheses": lambda n: in_print(nest(n, "(", "x", ")")),
    "&& value": lambda n: HEAD + "main()\n  x = 1\n  y = " + " && ".join(["x"] * (n + 1)) + "\n  print(y)\n",
    "||/&& condition": lambda n: in_print("0", "  if (" + nest(n, "(x || (x && ", "x", "))") + ")\n    print(1)\n"),
    "! condition": lambda n: in_print("0", "  if (" + "!" * n + "x)\n    print(1)\n"),
    "unary": lambda n: in_print("-~" * (n // 2) + "x"),
    "deref": lambda n: in_print("*" * n + "p"),
    "&*": lambda n: in_print("&*" * (n // 2) + "p"),
    "&a[]": lambda n: in_print(nest(n, "&a[", "0", "]")),
    "index": lambda n: in_print(nest(n, "a[", "0", "]")),
    "pointer index": lambda n: in_print(nest(n, "p[", "0", "]")),
    "call": lambda n: in_print(nest(n, "f(", "x", ")")),
    "call, first argument": lambda n: in_print(nest(n, "g2(", "x", ", x)")),
    "call, last argument": lambda n: in_print(nest(n, "g2(x, ", "x", ")")),
    "stack arguments": lambda n: in_print(nest(n, "h9(", "x", ", 1, 2, 3, 4, 5, 6, 7, x)")),
    "mixed": lambda n: in_print(nest(n // 4, "f(-a[(x + ", "1", ")])")),
    "*p = e": lambda n: in_print("a[0]", "  *(p + " + nest(n, "(x - ", "x", ")") + ") = 1\n"),
    "a[e] = e": lambda n: in_print("a[0], a[1]", "  a[" + nest(n, "(x - ", "x", ")") + "] = 5\n"),
    "p[e] = e": lambda n: in_print("a[0]", "  p[" + nest(n, "(x - ", "x", ")") + "] = 5\n"),
    "return": lambda n: HEAD + "k(x)\n  return " + nest(n, "(x - ", "x", ")") + "\nmain()\n  print(k(1))\n",
    "global initialiser": lambda n: ("g = " + nest(n, "(1 - ", "1", ")") + "\nh[" + nest(n, "(1 + ", "1", ")")
                                     + "]\nmain()\n  print(g)\n"),
    "if": lambda n: nested_blocks(n, ["if"]),
    "while": lambda n: nested_blocks(n, ["while"]),
    "if/else": lambda n: nested_blocks(n, ["else"]),
    "else if": lambda n: in_print("x", "  if (x == 0) print(0)\n" + "".join(
        f"  else if (x == {i}) print({i})\n" for i in range(1, n + 1)) + "  else print(-1)\n"),
    "if on one line": lambda n: in_print("x", "  " + "if (x) " * n + "x = 2\n"),
}


@pytest.fixture
def lowered(monkeypatch):
    """MAX_NESTING 400 with a margin of 120 frames: a pass that takes one frame per level more
    than FRAMES_PER_LEVEL says overflows by 400 frames."""
    monkeypatch.setattr(nesting, "MAX_NESTING", 400)
    monkeypatch.setattr(nesting, "MARGIN_FRAMES", 120)
    return nesting


def deepest(shape) -> int:
    """The largest n the front end accepts for a shape (binary search on the limit's error)."""
    lo, hi = 1, 4 * nesting.MAX_NESTING
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            frontend(shape(mid))
            lo = mid
        except CompileError as exc:
            assert "nesting too deep" in str(exc), exc
            hi = mid - 1
    return lo


def every_pass(source: str) -> None:
    """Compile at both levels and interpret; errors of the program itself are fine, a
    RecursionError is not (pytest reports it)."""
    for step in (lambda: compile_rz(source, opt=0), lambda: compile_rz(source, opt=1),
                 lambda: interpret_source(source)):
        try:
            step()
        except (CompileError, RzRuntimeError) as exc:
            assert "nesting too deep" not in str(exc)


@pytest.mark.parametrize("name", SHAPES)
def test_every_construct_fits_the_frame_bound(lowered, name):
    n = deepest(SHAPES[name])
    every_pass(SHAPES[name](n))
    for deeper in (lambda: compile_rz(SHAPES[name](2 * n)),     # n is near the limit
                   lambda: interpret_source(SHAPES[name](2 * n))):
        with pytest.raises(CompileError, match="nesting too deep"):
            deeper()


def test_the_frame_bound_check_can_fail(lowered, monkeypatch):
    """With one frame per level fewer than the parser takes (FRAMES_PER_LEVEL has one spare) it
    overflows: the test above would notice a pass that outgrew the bound."""
    n = deepest(SHAPES["call"])
    monkeypatch.setattr(nesting, "FRAMES_PER_LEVEL", nesting.FRAMES_PER_LEVEL - 2)
    with pytest.raises(RecursionError):
        every_pass(SHAPES["call"](n))


def test_interpreter_charges_calls_for_their_depth(lowered):
    """Recursion through a deeply nested function stops with one line before Python's limit."""
    body = nest(150, "(n - ", "n", ")")                      # = n: 150 is even
    src = f"r(n)\n  if (n <= 0) return 0\n  return r(n - 1) + {body}\nmain()\n  print(r(50))\n"
    with pytest.raises(RzRuntimeError, match=r"t\.rz:3:\d+: runtime error: calls nested too deep"):
        interpret_source(src, filename="t.rz")
    assert interpret_source(src.replace("r(50)", "r(1)")) == "1\n"


def test_deep_passes_leave_the_recursion_limit_alone():
    before = sys.getrecursionlimit()
    results, errors = [], []

    def work():
        try:
            results.append(compile_rz(SHAPES["if"](300), opt=1).asm)
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(results)) == 1
    assert sys.getrecursionlimit() == before


def test_errors_come_back_from_the_worker_thread_as_they_are():
    with pytest.raises(CompileError, match=r"t\.rz:2:7: undefined name 'y'"):
        compile_rz("main()\n  x = y\n", filename="t.rz")
