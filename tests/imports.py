"""What a Python file imports, read from its text (the layering tests: test_cli_commands.py,
test_cipher_host.py): imports inside functions count too, since most of s2mc's are lazy."""
import ast
from pathlib import Path


def imported(path: Path) -> set[str]:
    """The absolute module names a file imports (relative imports stay in their own package), and
    for `from M import N` also M.N (N may be a submodule)."""
    names = set()
    for node in ast.walk(ast.parse(Path(path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names
