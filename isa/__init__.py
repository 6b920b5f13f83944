"""The S2 ISA: instruction table, assembler, disassembler and object format (docs/isa.md)."""
import codecs
import importlib
from pathlib import Path

from s2mc.common.errors import S2mcError

# Loaded on first use (PEP 562): every component imports s2mc.common.errors, and the instruction table
# and assembler cost ~40 ms that commands like `s2mc encrypt` never need.
_LAZY = {"AsmError": "assembler", "assemble": "assembler", "disassemble": "disassembler",
         "disassemble_word": "disassembler", "INSTRUCTIONS": "instructions", "decode": "instructions",
         "encode": "instructions", "Program": "program", "Segment": "program", "Stacks": "program",
         "Symbol": "program"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    globals()[name] = value
    return value


def read_text(path, prefix: str = "") -> str:
    """A source or object file's text; bytes that are not UTF-8 are one S2mcError naming the line.
    A leading byte-order mark is dropped (some editors write one)."""
    data = Path(path).read_bytes().removeprefix(codecs.BOM_UTF8)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise S2mcError(f"{path}:{line}: {prefix}not a text file (byte 0x{data[e.start]:02x} is not UTF-8)") from None


def load_object(path) -> "Program":
    """Read a text object file (the format documented in isa/program.py and docs/isa.md)."""
    from .program import Program
    return Program.from_text(read_text(path, "bad object file: "), str(path))


def load_program(path) -> "Program":
    """Load a .s (assembled here) or .obj file."""
    from .assembler import assemble
    path = str(path)
    if path.endswith(".obj"):
        return load_object(path)
    return assemble(read_text(path), path)


__all__ = ["AsmError", "INSTRUCTIONS", "Program", "S2mcError", "Segment", "Stacks", "Symbol", "assemble",
           "decode", "disassemble", "disassemble_word", "encode", "load_object", "load_program", "read_text"]
