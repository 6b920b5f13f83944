"""The S2 ISA: instruction table, assembler, disassembler and object format (docs/isa.md)."""
from .assembler import AsmError, assemble
from .disassembler import disassemble, disassemble_word
from .errors import S2mcError
from .instructions import INSTRUCTIONS, decode, encode
from .program import Program, Segment, Symbol


def load_object(path) -> Program:
    """Read a text object file (the format documented in isa/program.py and docs/isa.md)."""
    with open(path, encoding="utf-8", errors="strict") as f:
        try:
            text = f.read()
        except UnicodeDecodeError:
            raise S2mcError(f"{path}: bad object file: not a text file") from None
    return Program.from_text(text, str(path))


def load_program(path) -> Program:
    """Load a .s (assembled here) or .obj file."""
    path = str(path)
    if path.endswith(".obj"):
        return load_object(path)
    with open(path, encoding="utf-8") as f:
        return assemble(f.read(), path)


__all__ = ["AsmError", "INSTRUCTIONS", "Program", "S2mcError", "Segment", "Symbol", "assemble",
           "decode", "disassemble", "disassemble_word", "encode", "load_object", "load_program"]
