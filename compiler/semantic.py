"""Semantic checks: names, arity, lvalues, addresses; resolves names and fixes global layout.

After check(), every Name has .kind ("local", "global" or "array"), every Function has .locals
(parameters first, then other locals in order of first assignment) and .calls, every Call has
.builtin, and every Global has .size (None for scalars) and .init (a list of ints or None).
"""
from __future__ import annotations

import re
from types import SimpleNamespace

from s2mc.isa.instructions import ADS_MAX, MOV_MAX

from . import astnodes as A
from .arith import binary, unary, wrap
from .errors import CompileError
from .layout import layout
from .nesting import deep

RESERVED = {"fp", "sp", "rads", "retval"}
ASM_REF = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
MAX_GLOBAL_WORDS = 1 << 22
# Directives that would move the code after an asm(...) line or end the program early.
ASM_FORBIDDEN = {".code", ".data", ".symbol", ".end", ".stacks"}


def const_value(e: A.Expr):
    """The value of a constant expression, or None if it is not constant."""
    if isinstance(e, A.Num):
        return e.value
    if isinstance(e, A.Unary) and e.op in ("-", "!", "~"):
        v = const_value(e.operand)
        return None if v is None else unary(e.op, v)
    if isinstance(e, A.Binary):
        a, b = const_value(e.left), const_value(e.right)
        if a is None or b is None:
            return None
        if e.op == "&&":
            return int(bool(a) and bool(b))
        if e.op == "||":
            return int(bool(a) or bool(b))
        try:
            return binary(e.op, a, b)
        except ZeroDivisionError:
            return None
    return None


class Checker:
    def __init__(self, prog: A.Program, filename: str):
        self.prog, self.filename = prog, filename
        self.globals: dict[str, A.Global] = {}
        self.functions: dict[str, A.Function] = {}

    def error(self, node, msg: str) -> CompileError:
        return CompileError(self.filename, node.line, node.col, msg)

    # -- top level -----------------------------------------------------------------------------
    def check(self) -> None:
        seen: dict[str, tuple[str, A.Node]] = {}
        for item in [*self.prog.globals, *self.prog.functions]:
            what = "function" if isinstance(item, A.Function) else "global"
            self.check_name(item, item.name, what)
            low = item.name.lower()
            if low in seen:
                other, node = seen[low]
                same = "" if other == item.name else f" (as '{other}': S2 assembly ignores case)"
                raise self.error(item, f"'{item.name}' is defined twice{same}; the first "
                                       f"definition is at line {node.line}")
            seen[low] = (item.name, item)
        for g in self.prog.globals:
            self.resolve_global(g)
            self.globals[g.name] = g
        self.check_memory()
        for f in self.prog.functions:
            self.functions[f.name] = f
        main = self.functions.get("main")
        if main is None:
            raise CompileError(self.filename, 1, 1, "the program has no main() function")
        if main.params:
            raise self.error(main, "main() takes no parameters")
        for f in self.prog.functions:
            self.check_function(f)

    def check_name(self, node, name: str, what: str) -> None:
        low = name.lower()
        if low in RESERVED or re.fullmatch(r"r[0-9]+", low):
            raise self.error(node, f"'{name}' is reserved (a register name in S2 assembly); "
                                   f"choose another name for this {what}")
        if name.startswith("__"):
            raise self.error(node, f"'{name}': names starting with '__' are reserved for the "
                                   "compiler")
        if name in A.BUILTINS:
            raise self.error(node, f"'{name}' is a builtin function and cannot be redefined")

    def resolve_global(self, g: A.Global) -> None:
        values = None
        if g.init_exprs is not None:
            values = []
            for e in g.init_exprs:
                v = const_value(e)
                if v is None:
                    raise self.error(e, f"the initial value of '{g.name}' must be a constant")
                values.append(wrap(v))
        if g.size is None:
            if values is not None and len(values) != 1:
                raise self.error(g, f"scalar '{g.name}' takes one initial value, not a list "
                                    f"(declare it as '{g.name}[{len(values)}]')")
        else:
            if g.size_expr is None:
                size = len(values)
                if size == 0:
                    raise self.error(g, f"array '{g.name}[]' has an empty initialiser")
            else:
                size = const_value(g.size_expr)
                if size is None:
                    raise self.error(g.size_expr, f"the size of array '{g.name}' must be a "
                                                  "constant")
                if size <= 0:
                    raise self.error(g.size_expr, f"the size of array '{g.name}' must be "
                                                  f"positive, not {size}")
                if size > MAX_GLOBAL_WORDS:
                    raise self.error(g.size_expr, f"array '{g.name}' is too large ({size} words; "
                                                  f"at most {MAX_GLOBAL_WORDS})")
                if values is not None and len(values) > size:
                    raise self.error(g.init_exprs[size], f"too many initial values for "
                                                         f"'{g.name}[{size}]' ({len(values)})")
            g.size = size
        g.init = values

    def check_memory(self) -> None:
        """The globals, the 256 stacks after them and the heap label must fit in the 22-bit address
        space, and the stacks' base in the one `mov` the startup code loads it with (codegen.py);
        otherwise the assembler would refuse the generated .s."""
        def fits(globals_) -> bool:
            m = layout(globals_)
            return m.stack_base <= MOV_MAX and m.heap <= ADS_MAX

        gs = self.prog.globals
        if fits(gs):
            return
        lo, hi = 0, len(gs)                 # the first global that no longer fits: gs[hi - 1]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            lo, hi = (mid, hi) if fits(gs[:mid]) else (lo, mid)
        most, step = 0, 1 << 22             # the most words of globals that fit
        while step:
            if fits([SimpleNamespace(name="_", size=most + step)]):
                most += step
            step >>= 1
        g = gs[hi - 1]
        total = sum(1 if x.size is None else x.size for x in gs[:hi])
        raise self.error(g, f"the globals do not fit in memory: up to '{g.name}' they take {total} "
                            f"words, and at most {most} fit below the per-core stacks")

    # -- functions -----------------------------------------------------------------------------
    def check_function(self, f: A.Function) -> None:
        toks = getattr(f, "param_tokens", None) or [f] * len(f.params)
        seen = set()
        for p, tok in zip(f.params, toks):
            self.check_name(tok, p, "parameter")
            if p in seen:
                raise self.error(tok, f"parameter '{p}' appears twice in '{f.name}'")
            seen.add(p)
        self.fn = f
        self.locals = list(f.params)
        self.assigned = {n.target.name for n in A.walk(f) if isinstance(n, A.Assign)
                         and isinstance(n.target, A.Name)}
        f.calls = False
        self.block(f.body)
        f.locals = self.locals

    def block(self, stmts) -> None:
        for s in stmts:
            self.statement(s)

    def statement(self, s: A.Stmt) -> None:
        if isinstance(s, A.Assign):
            self.assignment(s)
        elif isinstance(s, A.If):
            self.expr(s.cond)
            self.block(s.then)
            if s.else_ is not None:
                self.block(s.else_)
        elif isinstance(s, A.While):
            self.expr(s.cond)
            self.block(s.body)
        elif isinstance(s, A.Return):
            if s.value is not None:
                self.expr(s.value)
        elif isinstance(s, A.Print):
            for a in s.args:
                if not isinstance(a, A.Str):
                    self.expr(a)
        elif isinstance(s, A.ExprStmt):
            self.expr(s.expr, value=False)
            if not isinstance(s.expr, A.Call):
                raise self.error(s, "this statement computes a value and throws it away (did "
                                    "you mean '=' or a call?)")
        else:  # pragma: no cover
            raise AssertionError(s)

    def assignment(self, s: A.Assign) -> None:
        t = s.target
        if isinstance(t, A.Name):
            self.expr(s.value)
            if t.name in self.locals:
                t.kind = "local"
            elif t.name in self.globals:
                g = self.globals[t.name]
                if g.size is not None:
                    raise self.error(t, f"cannot assign to array '{t.name}' as a whole (assign "
                                        f"its elements: {t.name}[i] = ...)")
                t.kind = "global"
            elif t.name in self.functions or t.name in A.BUILTINS:
                raise self.error(t, f"cannot assign to function '{t.name}'")
            else:
                self.check_name(t, t.name, "local variable")
                self.locals.append(t.name)
                t.kind = "local"
        elif isinstance(t, A.Index) or (isinstance(t, A.Unary) and t.op == "*"):
            self.expr(t)
            self.expr(s.value)
        else:
            raise self.error(t, "cannot assign to this expression: the left side of '=' must be "
                                "a variable, an array element a[i] or a dereference *p")

    def name_kind(self, n: A.Name) -> str:
        if n.name in self.locals:
            return "local"
        g = self.globals.get(n.name)
        if g is not None:
            return "global" if g.size is None else "array"
        if n.name in self.functions or n.name in A.BUILTINS:
            raise self.error(n, f"'{n.name}' is a function; call it with {n.name}(...)")
        if n.name in self.assigned:
            raise self.error(n, f"'{n.name}' is used before it is assigned")
        raise self.error(n, f"undefined name '{n.name}'")

    def expr(self, e: A.Expr, value: bool = True) -> None:
        if isinstance(e, A.Num):
            return
        if isinstance(e, A.Str):
            raise self.error(e, "a string can only be an argument of print(...) or asm(...)")
        if isinstance(e, A.Name):
            e.kind = self.name_kind(e)
        elif isinstance(e, A.Index):
            b = e.base
            if (b.name not in self.locals and b.name not in self.globals
                    and b.name not in self.functions and b.name not in A.BUILTINS
                    and b.name not in self.assigned):
                raise self.error(b, f"'{b.name}' is not a declared array: arrays must be global "
                                    f"(declare '{b.name}[size]' at the top level; a function "
                                    "cannot have a local array)")
            b.kind = self.name_kind(b)
            self.expr(e.index)
        elif isinstance(e, A.Call):
            self.call(e, value)
        elif isinstance(e, A.Unary):
            if e.op == "&":
                self.address_of(e)
            else:
                self.expr(e.operand)
        elif isinstance(e, A.Binary):
            self.expr(e.left)
            self.expr(e.right)
        else:  # pragma: no cover
            raise AssertionError(e)

    def address_of(self, e: A.Unary) -> None:
        o = e.operand
        if isinstance(o, A.Name):
            o.kind = self.name_kind(o)
            if o.kind == "local":
                raise self.error(e, f"cannot take the address of local variable '{o.name}': "
                                    "locals live in registers and have no address (make it a "
                                    "global)")
        elif isinstance(o, A.Index) or (isinstance(o, A.Unary) and o.op == "*"):
            self.expr(o)
        else:
            raise self.error(e, "'&' needs a global variable, an array element or *p")

    def call(self, c: A.Call, value: bool) -> None:
        if c.name in A.BUILTINS:
            c.builtin = True
            want = A.BUILTINS[c.name]
            if len(c.args) != want:
                raise self.error(c, f"{c.name}() takes {want} argument{'s' * (want != 1)}, "
                                    f"not {len(c.args)}")
            if value and c.name in A.VALUELESS_BUILTINS:
                raise self.error(c, f"{c.name}() has no value; use it as a statement")
            if c.name == "asm":
                s = c.args[0]
                if not isinstance(s, A.Str):
                    raise self.error(s, "asm(...) takes a string of S2 assembly")
                for text in s.value.splitlines():
                    first = text.split(";", 1)[0].split()[:1]
                    if first and first[0].lower() in ASM_FORBIDDEN:
                        raise self.error(s, f"asm(...) cannot contain '{first[0]}': the generated "
                                            "code around it depends on where it is")
                for m in ASM_REF.finditer(s.value):
                    ref = m.group(1)
                    if ref not in self.locals and ref not in self.globals:
                        raise self.error(s, f"asm refers to '{{{ref}}}', which is not a local "
                                            "variable or a global here")
            return
        f = self.functions.get(c.name)
        if f is None:
            if c.name in self.locals or c.name in self.globals:
                raise self.error(c, f"'{c.name}' is a variable, not a function")
            raise self.error(c, f"undefined function '{c.name}'")
        if len(c.args) != len(f.params):
            raise self.error(c, f"'{c.name}' takes {len(f.params)} argument"
                                f"{'s' * (len(f.params) != 1)}, but {len(c.args)} "
                                f"{'was' if len(c.args) == 1 else 'were'} given")
        self.fn.calls = True
        for a in c.args:
            self.expr(a)


@deep
def check(prog: A.Program, filename: str = "<input>") -> A.Program:
    """Check and annotate the program in place; raises CompileError on the first error."""
    Checker(prog, filename).check()
    return prog
