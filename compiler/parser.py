"""The Rz parser: recursive descent, one function per grammar rule (docs/rz.md has the grammar).

    program          := { global_decl | function }
    global_decl      := global_item { "," global_item } NEWLINE
    global_item      := ID [ "[" [ expression ] "]" ] [ "=" initialiser ]
    initialiser      := expression | "{" [ expression { "," expression } ] "}"
    function         := ID "(" [ ID { "," ID } ] ")" NEWLINE block
    block            := INDENT statement { statement } DEDENT
    statement        := if_statement | while_statement | return_statement | print_statement
                      | simple_statement
    body             := NEWLINE block | simple_statement-like statement on the same line
    if_statement     := "if" "(" expression ")" body [ "else" ( if_statement | body ) ]
    while_statement  := "while" "(" expression ")" body
    return_statement := "return" [ expression ] NEWLINE
    print_statement  := "print" "(" [ print_arg { "," print_arg } ] ")" NEWLINE
    simple_statement := expression [ "=" expression ] NEWLINE
    expression       := logical_or
    logical_or       := logical_and { "||" logical_and }
    logical_and      := bitwise_or { "&&" bitwise_or }
    bitwise_or       := bitwise_xor { "|" bitwise_xor }
    bitwise_xor      := bitwise_and { "^" bitwise_and }
    bitwise_and      := equality { "&" equality }
    equality         := relational { ( "==" | "!=" ) relational }
    relational       := shift { ( "<" | "<=" | ">" | ">=" ) shift }
    shift            := additive { ( "<<" | ">>" ) additive }
    additive         := multiplicative { ( "+" | "-" ) multiplicative }
    multiplicative   := unary { ( "*" | "/" | "%" ) unary }
    unary            := ( "-" | "!" | "~" | "*" | "&" ) unary | primary
    primary          := NUM | STR | "(" expression ")" | ID [ "[" expression "]" | arguments ]
    arguments        := "(" [ expression { "," expression } ] ")"

The ten binary levels are parsed by precedence climbing (one loop, recursing only into a tighter
level), prefix operators and else-if chains by loops, so that long chains cost no recursion. What
still recurses (brackets, blocks, operands) is counted and stopped at nesting.MAX_NESTING, and the finished
AST's depth is checked (nesting.check_depth) before any recursive pass sees it.
"""
from __future__ import annotations

from . import astnodes as A
from .arith import wrap
from .errors import CompileError
from .lexer import Token
from . import nesting
from .nesting import check_depth, deep, too_deep

_BINARY_LEVELS = [
    ("logical_or", ("||",)),
    ("logical_and", ("&&",)),
    ("bitwise_or", ("|",)),
    ("bitwise_xor", ("^",)),
    ("bitwise_and", ("&",)),
    ("equality", ("==", "!=")),
    ("relational", ("<", "<=", ">", ">=")),
    ("shift", ("<<", ">>")),
    ("additive", ("+", "-")),
    ("multiplicative", ("*", "/", "%")),
]
_LEVEL = {op: level for level, (_, ops) in enumerate(_BINARY_LEVELS) for op in ops}
_PREFIX = ("-", "!", "~", "*", "&")


class Parser:
    def __init__(self, tokens: list[Token], filename: str = "<input>"):
        self.filename = filename
        self.toks = tokens
        self.pos = 0
        self.depth = 0             # brackets, blocks and operands open around the current token

    # -- token helpers -------------------------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.pos]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.pos + k, len(self.toks) - 1)]

    def at(self, kind: str, value=None) -> bool:
        t = self.tok
        return t.kind == kind and (value is None or t.value == value)

    def at_op(self, *ops: str) -> bool:
        return self.tok.kind == "OP" and self.tok.value in ops

    def advance(self) -> Token:
        t = self.tok
        self.pos += 1
        return t

    def error(self, tok: Token, msg: str) -> CompileError:
        return CompileError(self.filename, tok.line, tok.col, msg)

    def expect(self, kind: str, value=None, what: str | None = None) -> Token:
        if self.at(kind, value):
            return self.advance()
        t = self.tok
        want = what or (f"'{value}'" if value is not None else
                        {"ID": "a name", "NEWLINE": "end of line", "NUM": "a number"}.get(kind, kind))
        if t.kind == "INDENT":
            raise self.error(t, f"unexpected indentation (expected {want})")
        raise self.error(t, f"expected {want}, found {t}")

    def enter(self, tok: Token) -> None:
        """One more level of recursion (a bracket, a block, an operand of a binary operator);
        refused past MAX_NESTING, so the parser's own recursion is bounded too."""
        self.depth += 1
        if self.depth > nesting.MAX_NESTING:
            raise too_deep(self.filename, tok.line, tok.col)

    def leave(self) -> None:
        self.depth -= 1

    def end_of_statement(self) -> None:
        if self.at("NEWLINE"):
            self.advance()
            return
        raise self.error(self.tok, f"expected end of line after the statement, found {self.tok}")

    # -- top level -----------------------------------------------------------------------------
    def program(self) -> A.Program:
        prog = A.Program(1, 1, [], [])
        while not self.at("EOF"):
            t = self.tok
            if t.kind == "NEWLINE":
                self.advance()
            elif t.kind == "INDENT":
                raise self.error(t, "unexpected indentation: top-level declarations and functions "
                                    "start in column 1")
            elif t.kind == "ID" and self.peek().kind == "OP" and self.peek().value == "(":
                prog.functions.append(self.function())
            elif t.kind == "ID":
                prog.globals.extend(self.global_decl())
            else:
                raise self.error(t, f"expected a global declaration or a function, found {t}")
        return prog

    def global_decl(self) -> list[A.Global]:
        items = [self.global_item()]
        while self.at_op(","):
            self.advance()
            items.append(self.global_item())
        self.end_of_statement()
        return items

    def global_item(self) -> A.Global:
        name = self.expect("ID")
        g = A.Global(name.line, name.col, name.value, None, None)
        if self.at_op("["):
            lb = self.advance()
            g.size = -1
            if not self.at_op("]"):
                g.size_expr = self.expression()
            else:
                g.size_expr = None
                g.line, g.col = lb.line, lb.col
            self.expect("OP", "]")
        if self.at_op("="):
            self.advance()
            g.init_exprs = self.initialiser()
        if g.size == -1 and g.size_expr is None and g.init_exprs is None:
            raise self.error(name, f"array '{name.value}[]' needs a size or an initialiser")
        return g

    def initialiser(self) -> list[A.Expr]:
        if self.at_op("{"):
            self.advance()
            values = []
            if not self.at_op("}"):
                values.append(self.expression())
                while self.at_op(","):
                    self.advance()
                    if self.at_op("}"):
                        break          # trailing comma
                    values.append(self.expression())
            self.expect("OP", "}")
            return values
        return [self.expression()]

    def function(self) -> A.Function:
        name = self.expect("ID")
        self.expect("OP", "(")
        params = []
        if not self.at_op(")"):
            params.append(self.expect("ID", what="a parameter name"))
            while self.at_op(","):
                self.advance()
                params.append(self.expect("ID", what="a parameter name"))
        self.expect("OP", ")")
        fn = A.Function(name.line, name.col, name.value, [p.value for p in params], [])
        fn.param_tokens = params
        if not self.at("NEWLINE"):
            raise self.error(self.tok, f"expected end of line after '{name.value}(...)', "
                                       f"found {self.tok}")
        self.advance()
        fn.body = self.block(f"the body of function '{name.value}'")
        return fn

    def block(self, what: str) -> list[A.Stmt]:
        if not self.at("INDENT"):
            raise self.error(self.tok, f"expected an indented block for {what}")
        self.enter(self.advance())
        stmts = []
        while not self.at("DEDENT") and not self.at("EOF"):
            stmts.append(self.statement())
        self.expect("DEDENT")
        self.leave()
        return stmts

    # -- statements ----------------------------------------------------------------------------
    def statement(self) -> A.Stmt:
        t = self.tok
        if t.kind == "INDENT":
            raise self.error(t, "unexpected indentation (a block only follows if, else, while "
                                "or a function header)")
        if t.kind == "KW":
            if t.value == "if":
                return self.if_statement()
            if t.value == "while":
                return self.while_statement()
            if t.value == "return":
                return self.return_statement()
            if t.value == "print":
                return self.print_statement()
            if t.value == "else":
                raise self.error(t, "'else' without a matching 'if'")
        return self.simple_statement()

    def body(self, what: str) -> list[A.Stmt]:
        """A block on the following lines, or one statement on the same line."""
        if self.at("NEWLINE"):
            self.advance()
            return self.block(what)
        self.enter(self.tok)                       # if (c) if (d) ... on one line
        stmt = self.statement()
        self.leave()
        return [stmt]

    def condition(self, kw: str) -> A.Expr:
        self.expect("OP", "(", what=f"'(' after '{kw}'")
        cond = self.expression()
        self.expect("OP", ")", what=f"')' to close the {kw} condition")
        return cond

    def if_statement(self) -> A.If:
        # An else-if chain is read by a loop and nested afterwards: no recursion per branch.
        chain = []                                 # (if keyword, condition, then-branch)
        else_ = None
        while True:
            kw = self.advance()
            cond = self.condition("if")
            chain.append((kw, cond, self.body("'if'")))
            if not self.at("KW", "else"):
                break
            self.advance()
            if not self.at("KW", "if"):
                else_ = self.body("'else'")
                break
        for kw, cond, then in reversed(chain):
            else_ = [A.If(kw.line, kw.col, cond, then, else_)]
        return else_[0]

    def while_statement(self) -> A.While:
        kw = self.advance()
        cond = self.condition("while")
        return A.While(kw.line, kw.col, cond, self.body("'while'"))

    def return_statement(self) -> A.Return:
        kw = self.advance()
        value = None if self.at("NEWLINE") else self.expression()
        self.end_of_statement()
        return A.Return(kw.line, kw.col, value)

    def print_statement(self) -> A.Print:
        kw = self.advance()
        args = self.arguments("print(...)", opening="'(' after 'print'")
        self.end_of_statement()
        return A.Print(kw.line, kw.col, args)

    def simple_statement(self) -> A.Stmt:
        start = self.tok
        expr = self.expression()
        if self.at_op("="):
            eq = self.advance()
            value = self.expression()
            self.end_of_statement()
            return A.Assign(eq.line, eq.col, expr, value)
        self.end_of_statement()
        return A.ExprStmt(start.line, start.col, expr)

    # -- expressions ---------------------------------------------------------------------------
    def expression(self, level: int = 0) -> A.Expr:
        """Binary operators of `level` (in _BINARY_LEVELS) and tighter, left-associative, by
        precedence climbing: a chain at one level (1+1+...+1) is a loop; recursion only climbs to
        a tighter level, at most ten deep whatever the chain."""
        left = self.unary()
        chain = 0
        while self.tok.kind == "OP" and _LEVEL.get(self.tok.value, -1) >= level:
            op = self.advance()
            self.enter(op)                         # the climb to a tighter level recurses
            right = self.expression(_LEVEL[op.value] + 1)
            self.leave()
            left = A.Binary(op.line, op.col, op.value, left, right)
            chain += 1
            if chain > nesting.MAX_NESTING:             # too deep already: stop building
                raise too_deep(self.filename, op.line, op.col)
        return left

    def unary(self) -> A.Expr:
        ops = []                                   # - - ~ ! x: a loop, then nested inside out
        while self.at_op(*_PREFIX):
            ops.append(self.advance())
            if len(ops) > nesting.MAX_NESTING:       # too deep already: stop building
                raise too_deep(self.filename, ops[-1].line, ops[-1].col)
        e = self.primary()
        for op in reversed(ops):
            e = A.Unary(op.line, op.col, op.value, e)
        return e

    def primary(self) -> A.Expr:
        t = self.tok
        if t.kind == "NUM":
            self.advance()
            return A.Num(t.line, t.col, wrap(t.value))
        if t.kind == "STR":
            self.advance()
            return A.Str(t.line, t.col, t.value)
        if self.at_op("("):
            self.enter(self.advance())
            e = self.expression()
            self.expect("OP", ")", what="')'")
            self.leave()
            return e
        if t.kind == "ID":
            self.advance()
            if self.at_op("("):
                return A.Call(t.line, t.col, t.value, self.arguments(f"the call of '{t.value}'"))
            name = A.Name(t.line, t.col, t.value)
            if self.at_op("["):
                self.enter(self.advance())
                idx = self.expression()
                self.expect("OP", "]", what="']'")
                self.leave()
                return A.Index(t.line, t.col, name, idx)
            return name
        if t.kind == "KW":
            raise self.error(t, f"'{t.value}' is a keyword and cannot be used in an expression")
        raise self.error(t, f"expected an expression, found {t}")

    def arguments(self, where: str, opening: str | None = None) -> list[A.Expr]:
        """'(' [expression {',' expression}] ')' — `where` names the call in error messages."""
        self.enter(self.expect("OP", "(", what=opening))
        args = []
        if not self.at_op(")"):
            args.append(self.expression())
            while self.at_op(","):
                self.advance()
                args.append(self.expression())
        self.expect("OP", ")", what=f"')' or ',' in {where}")
        self.leave()
        return args


@deep
def parse(tokens: list[Token], filename: str = "<input>") -> A.Program:
    """Parse the lexer's tokens into an AST (no name checks: see semantic.check); an AST deeper
    than nesting.MAX_NESTING is refused here, so the later passes may recurse over it."""
    return check_depth(Parser(tokens, filename).program(), filename)
