"""The Rz compiler (docs/rz.md) and its reference interpreter.

    from s2mc.compiler import compile, interpret_source
    c = compile(source, opt=1, filename="prog.rz")   # c.asm: S2 assembly text, c.program: Program
    out = interpret_source(source)                    # what the program prints (one core)

compile() below is the whole pipeline, one pass per line: lexer -> parser -> semantic checks ->
AST optimiser (-O1) -> code generator (assembly IR, ir.py) -> peephole optimiser (-O1) ->
assembler.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from s2mc.isa import Program, assemble
from s2mc.isa.assembler import AsmError

from . import astnodes
from .codegen import generate
from .errors import CompileError, RzRuntimeError
from .interpreter import Interpreter, interpret
from .layout import MemoryMap, layout
from .lexer import tokenize
from .nesting import MAX_NESTING, deep
from .optimiser import fold, peephole
from .parser import parse
from .semantic import check

OPT_LEVELS = (0, 1)


@dataclass
class Compiled:
    asm: str                 # S2 assembly text
    program: Program         # assembled, ready to load
    ast: astnodes.Program    # the checked (unoptimised) AST
    memory_map: MemoryMap


@deep
def frontend(source: str, filename: str = "<input>") -> astnodes.Program:
    """Lex, parse and check: the annotated AST (raises CompileError)."""
    return check(parse(tokenize(source, filename), filename), filename)


@deep     # the recursive passes get their stack once for the whole pipeline (nesting.py)
def compile(source: str, opt: int = 1, filename: str = "<input>", debug: bool = False) -> Compiled:  # noqa: A001
    """Compile Rz source to S2 assembly and a loadable Program. With `debug` (compile -g) the
    assembly also carries the line table and the variables' places, and so does the Program
    (program.debug); the instructions are the same."""
    if opt not in OPT_LEVELS:
        raise CompileError(filename, 1, 1, f"unknown optimisation level -O{opt} (use -O0 or -O1)")
    tokens = tokenize(source, filename)
    tree = parse(tokens, filename)
    checked = check(tree, filename)
    folded = fold(checked) if opt >= 1 else checked                  # a copy: checked stays as is
    ir = generate(folded, opt, filename)
    if opt >= 1:
        ir.functions = [peephole(code) for code in ir.functions]
    asm = ir.render(debug)
    asm_name = filename.rsplit(".", 1)[0] + ".s"
    try:
        program = assemble(asm, asm_name)
    except AsmError as exc:
        if debug:                 # the same error, as the text without directives names it
            compile(source, opt, filename)
        raise _at_inline_asm(exc, asm, asm_name, ir.functions, filename) from None
    return Compiled(asm, program, checked, layout(checked.globals))


def _at_inline_asm(exc: AsmError, asm: str, asm_name: str, functions, filename: str) -> Exception:
    """An assembler error in a line that came from asm("...") becomes a CompileError at that
    string in the .rz file (the user never sees the generated .s). Any other assembler error is
    the compiler's own fault and stays as it is."""
    m = re.match(re.escape(asm_name) + r":(\d+): (.*)", str(exc))
    flat = [ins for code in functions for ins in code]
    lines = asm.splitlines()
    first = len(lines) - 1 - len(flat)       # the functions' lines end just before the last, .end
    if m and flat and lines[first] == flat[0].render():
        i = int(m.group(1)) - 1 - first
        if 0 <= i < len(flat) and flat[i].op == "asm" and isinstance(flat[i].comment, tuple):
            line, col = flat[i].comment
            return CompileError(filename, line, col, f"in asm(...): {m.group(2)}")
    return exc


@deep
def interpret_source(source: str, filename: str = "<input>", **options) -> str:
    """Check and interpret Rz source; returns its output (see interpreter.Interpreter)."""
    return interpret(frontend(source, filename), filename=filename, **options)


__all__ = ["Compiled", "CompileError", "Interpreter", "MAX_NESTING", "RzRuntimeError", "compile", "frontend",
           "interpret", "interpret_source", "tokenize", "parse", "check"]
