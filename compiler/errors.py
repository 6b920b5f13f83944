"""Compile errors: one line, `file:line:col: message` (docs/rz.md)."""
from __future__ import annotations

from s2mc.common.errors import S2mcError


class CompileError(S2mcError):
    """A user error in an Rz program, located at line:col (both 1-based)."""

    def __init__(self, filename: str, line: int, col: int, message: str):
        self.filename, self.line, self.col, self.message = filename, line, col, message
        super().__init__(f"{filename}:{line}:{col}: {message}")


class RzRuntimeError(S2mcError):
    """An error while interpreting an Rz program (division by zero, bad address, ...)."""
