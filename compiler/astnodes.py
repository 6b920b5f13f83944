"""The Rz abstract syntax tree. Every node carries its source position (line, col)."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field


@dataclass(eq=False)
class Node:
    line: int
    col: int


# -- expressions -------------------------------------------------------------------------------
@dataclass(eq=False)
class Expr(Node):
    pass


@dataclass(eq=False)
class Num(Expr):
    value: int          # already wrapped to a signed 32-bit value


@dataclass(eq=False)
class Str(Expr):
    value: str          # only as a print or asm argument


@dataclass(eq=False)
class Name(Expr):
    name: str
    kind: str = ""      # set by semantic checks: "local", "global", "array"


@dataclass(eq=False)
class Index(Expr):
    base: Name          # a global array, or a scalar used as a pointer (p[i] == *(p + i))
    index: Expr


@dataclass(eq=False)
class Call(Expr):
    name: str
    args: list[Expr]
    builtin: bool = False   # cid ncore sync fence asm


@dataclass(eq=False)
class Unary(Expr):
    op: str             # - ! ~ * &
    operand: Expr


@dataclass(eq=False)
class Binary(Expr):
    op: str             # || && | ^ & == != < <= > >= << >> + - * / %
    left: Expr
    right: Expr


# -- statements --------------------------------------------------------------------------------
@dataclass(eq=False)
class Stmt(Node):
    pass


@dataclass(eq=False)
class Assign(Stmt):
    target: Expr        # Name, Index or Unary('*')
    value: Expr


@dataclass(eq=False)
class If(Stmt):
    cond: Expr
    then: list[Stmt]
    else_: list[Stmt] | None


@dataclass(eq=False)
class While(Stmt):
    cond: Expr
    body: list[Stmt]


@dataclass(eq=False)
class Return(Stmt):
    value: Expr | None


@dataclass(eq=False)
class Print(Stmt):
    args: list[Expr]    # Str or integer expressions


@dataclass(eq=False)
class ExprStmt(Stmt):
    expr: Expr


# -- top level ---------------------------------------------------------------------------------
@dataclass(eq=False)
class Global(Node):
    name: str
    size: int | None             # None: a scalar; else an array of `size` words
    init: list[int] | None       # initial values (scalars: one value)
    size_expr: Expr | None = None
    init_exprs: list[Expr] | None = None


@dataclass(eq=False)
class Function(Node):
    name: str
    params: list[str]
    body: list[Stmt]
    locals: list[str] = field(default_factory=list)   # params first, then by first assignment
    calls: bool = False                               # calls a user function (not a leaf)


@dataclass(eq=False)
class Program(Node):
    globals: list[Global]
    functions: list[Function]

    def function(self, name: str) -> Function | None:
        return next((f for f in self.functions if f.name == name), None)


BUILTINS = {"cid": 0, "ncore": 0, "sync": 0, "fence": 0, "asm": 1}
VALUELESS_BUILTINS = {"sync", "fence", "asm"}


def children(n) -> list:
    """The AST children one level below n (what walk() and the recursive passes descend into)."""
    if isinstance(n, Program):
        return [*n.globals, *n.functions]
    if isinstance(n, Global):
        return [*([n.size_expr] if n.size_expr is not None else []), *(n.init_exprs or [])]
    if isinstance(n, Function):
        return n.body
    if isinstance(n, If):
        return [n.cond, *n.then, *(n.else_ or [])]
    if isinstance(n, While):
        return [n.cond, *n.body]
    if isinstance(n, Assign):
        return [n.target, n.value]
    if isinstance(n, Return):
        return [n.value] if n.value is not None else []
    if isinstance(n, Print):
        return n.args
    if isinstance(n, ExprStmt):
        return [n.expr]
    if isinstance(n, Index):
        return [n.base, n.index]
    if isinstance(n, Call):
        return n.args
    if isinstance(n, Unary):
        return [n.operand]
    if isinstance(n, Binary):
        return [n.left, n.right]
    return []


def walk(node):
    """Every node under `node` (itself included), parents before children."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(children(n)))


def clone(node):
    """A copy of the tree under node: every node and every list is new, the rest (names, numbers,
    tokens) shared. A loop, not recursion (copy.deepcopy recurses per level), so any depth works."""
    root = copy.copy(node)
    stack = [root]
    while stack:
        n = stack.pop()
        for key, value in list(vars(n).items()):
            if isinstance(value, Node):
                value = copy.copy(value)
                stack.append(value)
            elif isinstance(value, list):
                value = [copy.copy(v) if isinstance(v, Node) else v for v in value]
                stack.extend(v for v in value if isinstance(v, Node))
            else:
                continue
            setattr(n, key, value)
    return root
