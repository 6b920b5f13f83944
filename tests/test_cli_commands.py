"""The CLI is a thin top layer: cli/main.py lists every command module explicitly, each command
name comes from one module, and nothing below the CLI (the components, the benchmarks) imports
s2mc.cli; the grid libraries do not reach up to s2mc.analysis either."""
import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from s2mc.cli import main

REPO = Path(__file__).resolve().parent.parent


def test_every_command_module_is_listed():
    on_disk = {p.stem for p in (REPO / "cli").glob("cmd_*.py")}
    assert sorted(main.MODULES) == sorted(on_disk)


def test_every_command_is_registered_once_under_its_module():
    modules = [importlib.import_module(f"s2mc.cli.{m}") for m in main.MODULES]
    names = [c.name for m in modules for c in m.COMMANDS]
    assert len(names) == len(set(names))
    assert {c.name: m.__name__.rsplit(".cmd_", 1)[1] for m in modules for c in m.COMMANDS} == main.COMMANDS
    assert set(main.all_commands()) == set(names)
    assert {"run", "aes", "native", "gpu", "encrypt", "decrypt", "report", "demo", "info"} <= set(names)


def test_a_command_loads_only_its_own_module():
    """`s2mc encrypt` starts without the compiler, the assembler or pandas: the other commands'
    modules are loaded only when asked for, and s2mc.isa loads its assembler on first use."""
    code = ("import sys; from s2mc.cli.main import cli; cli.get_command(None, 'encrypt'); "
            "print(sorted(m for m in sys.modules if m.startswith('s2mc.cli.cmd_') or "
            "m in ('pandas', 's2mc.compiler', 's2mc.isa.assembler', 's2mc.isa.instructions')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['s2mc.cli.cmd_crypt']"


def _imported(path: Path) -> set[str]:
    """The absolute module names a file imports (relative imports stay in their own package)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _importers(folders: list[str], prefix: str) -> list[str]:
    return sorted(f"{path.relative_to(REPO)}: {name}" for folder in folders for path in (REPO / folder).rglob("*.py")
                  for name in _imported(path) if name == prefix or name.startswith(prefix + "."))


def test_nothing_below_the_cli_imports_it():
    below = ["isa", "compiler", "simulator", "workloads", "gpu-backends", "analysis", "server", "bench"]
    assert _importers(below, "s2mc.cli") == []


def test_only_the_cli_imports_the_server():
    # the server sits on the analysis (the lab's exercises) and under the CLI (s2mc serve)
    below = ["isa", "compiler", "simulator", "workloads", "gpu-backends", "analysis", "bench"]
    assert _importers(below, "s2mc.server") == []


@pytest.mark.parametrize("folder", ["isa", "compiler", "simulator", "workloads", "gpu-backends"])
def test_the_components_do_not_import_the_analysis(folder):
    # they return plain records rows; s2mc.analysis.records validates them one layer up
    assert _importers([folder], "s2mc.analysis") == []


def test_every_command_says_what_it_does():
    """`s2mc --help` gives each command a line (encrypt and decrypt once showed none: their help was
    set on __doc__ after click had read it)."""
    for name, command in main.all_commands().items():
        assert command.get_short_help_str(), f"s2mc {name} has no help text"


def test_an_error_line_cuts_a_huge_word_and_escapes_control_characters():
    word = "7" * 60 + "8" * 4920 + "9" * 20
    assert main._line(f"bad value {word}: no\nway") == f"bad value {'7' * 60}...(5001 characters)...{'9' * 19}:" + " no\\nway"
    assert main._line("x" * 200) == "x" * 200          # up to 200 characters a word stays whole
