"""The reference interpreter of Rz: walks the checked AST; the oracle for differential tests.

Its output is exactly what compiled code prints: 32-bit wraparound, truncating / and %, shift
counts modulo 32, `>>` arithmetic, `print(a, b)` = a, one space, b, newline. Globals sit at the
addresses of the compiled program's memory map (layout.py), so &g and pointers agree too.
Evaluation order matches the code generator: operands left to right, call arguments left to
right, each print argument printed as soon as it is evaluated, and for `a[i] = e` / `*p = e`
the address before the value.

By default it runs one core: cid() is 0, ncore() is 1, sync() does nothing (pass cid/ncore to
simulate the view of another core of a multicore run, for programs that do not communicate).
"""
from __future__ import annotations

from . import astnodes as A
from . import nesting
from .arith import binary, unary, wrap
from .errors import RzRuntimeError
from .layout import layout
from .nesting import deep, height


class _Return(Exception):
    def __init__(self, value: int):
        self.value = value


class Interpreter:
    def __init__(self, prog: A.Program, *, cid: int = 0, ncore: int = 1, max_steps: int = 10_000_000,
                 mem_words: int = 1 << 20, max_depth: int = 2000, filename: str = "<input>"):
        self.prog, self.cid, self.ncore = prog, cid, ncore
        self.max_steps, self.max_depth, self.filename = max_steps, max_depth, filename
        self.steps = 0
        self.depth = 0
        # Python frames the active calls may take: each call is charged for its function's depth,
        # and the sum must stay within what deep() provides for (nesting.py).
        self.frames, self.frame_budget = 0, nesting.recursion_limit() - nesting.MARGIN_FRAMES // 2
        self.frame_cost: dict[str, int] = {}
        self.out: list[str] = []
        self.map = layout(prog.globals)
        self.mem_words = mem_words
        self.mem: dict[int, int] = {}
        self.globals = {g.name: g for g in prog.globals}
        for g in prog.globals:
            base = self.map.addresses[g.name]
            for i, v in enumerate(g.init or []):
                self.mem[base + i] = wrap(v)
        self.functions = {f.name: f for f in prog.functions}

    # -- helpers -------------------------------------------------------------------------------
    def fail(self, node, msg: str) -> RzRuntimeError:
        return RzRuntimeError(f"{self.filename}:{node.line}:{node.col}: runtime error: {msg}")

    def load(self, node, addr: int) -> int:
        if not 0 <= addr < self.mem_words:
            raise self.fail(node, f"address {addr} outside memory")
        return self.mem.get(addr, 0)

    def store(self, node, addr: int, value: int) -> None:
        if not 0 <= addr < self.mem_words:
            raise self.fail(node, f"address {addr} outside memory")
        self.mem[addr] = value

    def tick(self, node) -> None:
        self.steps += 1
        if self.steps > self.max_steps:
            raise self.fail(node, f"step limit of {self.max_steps} reached (infinite loop?)")

    # -- running -------------------------------------------------------------------------------
    @deep
    def run(self) -> str:
        self.call_function(self.functions["main"], [], self.prog)
        return "".join(self.out)

    def call_function(self, f: A.Function, args: list[int], site) -> int:
        cost = self.frame_cost.get(f.name)
        if cost is None:
            cost = self.frame_cost[f.name] = nesting.FRAMES_PER_LEVEL * (height(f) + 2)
        self.depth += 1
        self.frames += cost
        try:
            if self.depth > self.max_depth:
                raise self.fail(site, f"calls nested more than {self.max_depth} deep")
            if self.frames > self.frame_budget:
                raise self.fail(site, f"calls nested too deep for the interpreter ({self.depth} "
                                      "active calls of deeply nested functions)")
            env = dict(zip(f.params, args))
            self.block(f.body, env)
            return 0
        except _Return as r:
            return r.value
        finally:
            self.depth -= 1
            self.frames -= cost

    def block(self, stmts, env) -> None:
        for s in stmts:
            self.statement(s, env)

    def statement(self, s, env) -> None:
        self.tick(s)
        if isinstance(s, A.Assign):
            t = s.target
            if isinstance(t, A.Name):
                v = self.expr(s.value, env)
                if t.kind == "local":
                    env[t.name] = v
                else:
                    self.store(t, self.map.addresses[t.name], v)
            else:
                addr = self.address(t, env)
                v = self.expr(s.value, env)
                self.store(t, addr, v)
        elif isinstance(s, A.If):
            if self.expr(s.cond, env):
                self.block(s.then, env)
            elif s.else_ is not None:
                self.block(s.else_, env)
        elif isinstance(s, A.While):
            while self.expr(s.cond, env):
                self.block(s.body, env)
                self.tick(s)
        elif isinstance(s, A.Return):
            raise _Return(0 if s.value is None else self.expr(s.value, env))
        elif isinstance(s, A.Print):
            for i, a in enumerate(s.args):
                if i:
                    self.out.append(" ")
                self.out.append(a.value if isinstance(a, A.Str) else str(self.expr(a, env)))
            self.out.append("\n")
        elif isinstance(s, A.ExprStmt):
            self.expr(s.expr, env)
        else:  # pragma: no cover
            raise AssertionError(s)

    def address(self, e, env) -> int:
        """The address of an lvalue: Index, *p, or a global Name."""
        if isinstance(e, A.Name):
            return self.map.addresses[e.name]
        if isinstance(e, A.Index):
            b = e.base
            base = self.map.addresses[b.name] if b.kind == "array" else self.expr(b, env)
            return wrap(base + self.expr(e.index, env))
        if isinstance(e, A.Unary) and e.op == "*":
            return self.expr(e.operand, env)
        raise AssertionError(e)  # pragma: no cover

    def expr(self, e, env) -> int:
        if isinstance(e, A.Num):
            return e.value
        if isinstance(e, A.Name):
            if e.kind == "local":
                if e.name not in env:
                    raise self.fail(e, f"'{e.name}' is read before it is assigned")
                return env[e.name]
            if e.kind == "array":
                return self.map.addresses[e.name]
            return self.load(e, self.map.addresses[e.name])
        if isinstance(e, A.Index):
            return self.load(e, self.address(e, env))
        if isinstance(e, A.Binary):
            if e.op == "&&":
                return int(bool(self.expr(e.left, env)) and bool(self.expr(e.right, env)))
            if e.op == "||":
                return int(bool(self.expr(e.left, env)) or bool(self.expr(e.right, env)))
            a = self.expr(e.left, env)
            b = self.expr(e.right, env)
            try:
                return binary(e.op, a, b)
            except ZeroDivisionError:
                raise self.fail(e, "division by zero") from None
        if isinstance(e, A.Unary):
            if e.op == "&":
                return self.address(e.operand, env)
            v = self.expr(e.operand, env)
            if e.op == "*":
                return self.load(e, v)
            return unary(e.op, v)
        if isinstance(e, A.Call):
            self.tick(e)
            if e.builtin:
                if e.name == "cid":
                    return self.cid
                if e.name == "ncore":
                    return self.ncore
                if e.name in ("sync", "fence"):   # one core: nothing to wait for, no store buffer
                    return 0
                if e.name == "asm":
                    if e.args[0].value.strip():
                        raise self.fail(e, "the interpreter cannot run asm(...)")
                    return 0
            args = [self.expr(a, env) for a in e.args]
            return self.call_function(self.functions[e.name], args, e)
        raise AssertionError(e)  # pragma: no cover


def interpret(prog: A.Program, **options) -> str:
    """Run a checked program; returns everything it prints."""
    return Interpreter(prog, **options).run()
