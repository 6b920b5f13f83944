"""Differential test: random well-formed Rz programs (arithmetic, globals, arrays, pointers,
bounded loops, calls, recursion), compiled at -O0 and -O1 and simulated, print exactly what the
reference interpreter prints. `pytest -m slow` runs thousands of programs."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from s2mc.compiler import RzRuntimeError, frontend, interpret
from s2mc.compiler import compile as compile_rz
from s2mc.simulator import run

BINOPS = ["+", "-", "*", "&", "|", "^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||"]
CONSTS = st.one_of(st.integers(-20, 20), st.sampled_from([0, 1, -1, 255, 65535, 65536, 1 << 20,
                                                          2147483647, -2147483648, 0x12345678,
                                                          -100000, 3000000]))
GLOBALS = ["g0", "g1", "g2"]
ARRAY_SIZE = 16


class Gen:
    """Draws one program; `scope` holds the readable locals of the function being built."""

    def __init__(self, draw):
        self.draw = draw
        self.functions: list[tuple[str, int]] = []     # callable (name, arity)
        self.counter = 0
        self.counters: set[str] = set()

    def const(self) -> str:
        v = self.draw(CONSTS)
        return f"({v})" if v < 0 else str(v)

    def expr(self, scope, depth: int) -> str:
        d = self.draw
        leaves = ["const", "const", "global", "array"] + ["local"] * (3 if scope else 0)
        kinds = leaves if depth <= 0 else leaves + ["bin", "bin", "bin", "un", "div", "call", "ptr"]
        kind = d(st.sampled_from(kinds))
        if kind == "const":
            return self.const()
        if kind == "local":
            return d(st.sampled_from(sorted(scope)))
        if kind == "global":
            return d(st.sampled_from(GLOBALS))
        if kind == "array":
            return f"arr[({self.expr(scope, depth - 1)}) & {ARRAY_SIZE - 1}]"
        if kind == "bin":
            op = d(st.sampled_from(BINOPS))
            return f"({self.expr(scope, depth - 1)} {op} {self.expr(scope, depth - 1)})"
        if kind == "un":
            op = d(st.sampled_from(["-", "!", "~"]))
            return f"{op}({self.expr(scope, depth - 1)})"
        if kind == "div":
            op = d(st.sampled_from(["/", "%"]))
            return f"({self.expr(scope, depth - 1)} {op} ((({self.expr(scope, depth - 1)}) & 255) + 1))"
        if kind == "ptr":
            return f"*(&arr[0] + (({self.expr(scope, depth - 1)}) & {ARRAY_SIZE - 1}))"
        if not self.functions:
            return self.const()
        name, arity = d(st.sampled_from(self.functions))
        args = ", ".join(self.expr(scope, depth - 1) for _ in range(arity))
        return f"{name}({args})"

    def block(self, scope: set, indent: int, depth: int, new_locals: bool) -> list[str]:
        d = self.draw
        pad = "  " * indent
        lines = []
        for _ in range(d(st.integers(1, 4))):
            kind = d(st.sampled_from(["assign", "assign", "global", "array", "print", "if", "while",
                                      "deref"] + (["new"] * 2 if new_locals else [])))
            if kind in ("if", "while") and depth <= 0:
                kind = "print"
            e = self.expr(scope, 2)
            if kind == "new" or (kind == "assign" and not scope):
                if not new_locals:
                    kind = "global"
                else:
                    name = f"v{len(scope)}"
                    lines.append(f"{pad}{name} = {e}")
                    scope.add(name)
                    continue
            if kind == "assign" and scope - self.counters:
                lines.append(f"{pad}{d(st.sampled_from(sorted(scope - self.counters)))} = {e}")
            elif kind == "assign":
                lines.append(f"{pad}{d(st.sampled_from(GLOBALS))} = {e}")
            elif kind == "global":
                lines.append(f"{pad}{d(st.sampled_from(GLOBALS))} = {e}")
            elif kind == "array":
                lines.append(f"{pad}arr[({self.expr(scope, 1)}) & {ARRAY_SIZE - 1}] = {e}")
            elif kind == "deref":
                lines.append(f"{pad}*(&arr[({self.expr(scope, 1)}) & 7] + 8) = {e}")
            elif kind == "print":
                args = [e] + [self.expr(scope, 1) for _ in range(d(st.integers(0, 2)))]
                if d(st.booleans()):
                    args.insert(0, '"v"')
                lines.append(f"{pad}print({', '.join(args)})")
            elif kind == "if":
                lines.append(f"{pad}if ({e})")
                lines += self.block(set(scope), indent + 1, depth - 1, False)
                if d(st.booleans()):
                    lines.append(f"{pad}else")
                    lines += self.block(set(scope), indent + 1, depth - 1, False)
            else:
                self.counter += 1
                c = f"c{self.counter}"
                lines.append(f"{pad}{c} = 0")
                lines.append(f"{pad}while ({c} < {d(st.integers(0, 4))})")
                self.counters.add(c)          # read but never assigned inside the body
                lines += self.block(set(scope) | {c}, indent + 1, depth - 1, False)
                lines.append(f"{pad}  {c} = {c} + 1")
        return lines

    def function(self, name: str, arity: int) -> list[str]:
        params = [f"p{i}" for i in range(arity)]
        scope = set(params)
        body = self.block(scope, 1, 2, True)
        body.append(f"  return {self.expr(scope, 2)}")
        self.functions.append((name, arity))
        return [f"{name}({', '.join(params)})", *body]

    def recursive(self) -> list[str]:
        scope = {"n", "x"}
        step = self.expr(scope, 1)
        lines = ["rec(n, x)",
                 "  if (n <= 0) return x",
                 f"  return rec(n - 1, {step}) + {self.expr(scope, 1)}"]
        self.functions.append(("rec", 2))
        return lines

    def program(self) -> str:
        d = self.draw
        init = ", ".join(self.const() for _ in range(ARRAY_SIZE))
        lines = ["g0, g1", f"g2 = {self.const()}", f"arr[{ARRAY_SIZE}] = {{{init}}}", ""]
        if d(st.booleans()):
            lines += self.recursive() + [""]
        for i in range(d(st.integers(0, 3))):
            arity = d(st.sampled_from([0, 1, 2, 3, 3, 9]))   # 9: arguments on the stack at -O1
            lines += self.function(f"f{i}", arity) + [""]
        main = self.block(set(), 1, 2, True)
        calls = [f"  print({name}({', '.join('(' + self.const() + ') & 7' if name == 'rec' and i == 0 else self.const() for i in range(arity))}))"
                 for name, arity in self.functions]
        lines += ["main()", *main, *calls, "  print(g0, g1, g2, arr[0], arr[7], arr[15])"]
        return "\n".join(lines) + "\n"


@st.composite
def programs(draw):
    return Gen(draw).program()


def check(source: str) -> None:
    prog = frontend(source)
    try:
        want = interpret(prog, max_steps=200_000, max_depth=200)
    except RzRuntimeError as exc:
        assume("step limit" not in str(exc) and "nested" not in str(exc))
        raise
    for opt in (0, 1):
        compiled = compile_rz(source, opt=opt)
        got = run(compiled.program, max_cycles=2_000_000).output
        assert got == want, f"-O{opt} differs from the interpreter for:\n{source}\n{compiled.asm}"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.data_too_large])
@given(programs())
def test_compiled_matches_interpreter(source):
    check(source)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.data_too_large])
@given(programs())
def test_compiled_matches_interpreter_many(source):
    check(source)


def test_generator_makes_real_programs():
    """The strategy produces programs with calls, loops and recursion (not only trivia)."""
    from hypothesis import Phase, find
    # the first program found, unshrunk: shrinking it would only make the program checked below smaller
    src = find(programs(), lambda s: "rec(" in s and "while" in s and "f1(" in s,
               settings=settings(max_examples=2000, database=None, phases=[Phase.generate]))
    check(src)
