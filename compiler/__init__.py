"""The Rz compiler (docs/rz.md) and its reference interpreter.

    from s2mc.compiler import compile, interpret_source
    c = compile(source, opt=1, filename="prog.rz")   # c.asm: S2 assembly text, c.program: Program
    out = interpret_source(source)                    # what the program prints (one core)

Pipeline: lexer -> parser -> semantic checks -> (optimiser.fold at -O1) -> codegen
(-> optimiser.peephole at -O1) -> s2mc.isa.assemble.
"""
from __future__ import annotations

from dataclasses import dataclass

from s2mc.isa import Program, assemble

from . import astnodes
from .codegen import generate
from .errors import CompileError, RzRuntimeError
from .interpreter import Interpreter, interpret
from .layout import MemoryMap, layout
from .optimiser import fold
from .parser import parse
from .semantic import check

OPT_LEVELS = (0, 1)


@dataclass
class Compiled:
    asm: str                 # S2 assembly text
    program: Program         # assembled, ready to load
    ast: astnodes.Program    # the checked (unoptimised) AST
    memory_map: MemoryMap


def frontend(source: str, filename: str = "<input>") -> astnodes.Program:
    """Parse and check: the annotated AST (raises CompileError)."""
    return check(parse(source, filename), filename)


def compile(source: str, opt: int = 1, filename: str = "<input>") -> Compiled:  # noqa: A001
    """Compile Rz source to S2 assembly and a loadable Program."""
    if opt not in OPT_LEVELS:
        raise CompileError(filename, 1, 1, f"unknown optimisation level -O{opt} (use -O0 or -O1)")
    prog = frontend(source, filename)
    lowered = fold(prog) if opt >= 1 else prog
    asm = generate(lowered, opt, filename)
    return Compiled(asm, assemble(asm, filename.rsplit(".", 1)[0] + ".s"), prog,
                    layout(prog.globals))


def interpret_source(source: str, filename: str = "<input>", **options) -> str:
    """Check and interpret Rz source; returns its output (see interpreter.Interpreter)."""
    return interpret(frontend(source, filename), filename=filename, **options)


__all__ = ["Compiled", "CompileError", "Interpreter", "RzRuntimeError", "compile", "frontend",
           "interpret", "interpret_source", "parse", "check"]
