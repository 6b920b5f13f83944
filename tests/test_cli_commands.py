"""The CLI is a thin top layer: cli/main.py lists every command module explicitly, each command
name comes from one module; and imports go down the layers (ALLOWED): nothing below the CLI imports
s2mc.cli, the components do not reach up to analysis or experiments, and analysis reads records
without importing anything that runs (simulator, workloads, compiler, gpu, experiments)."""
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from imports import imported

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


#: What each folder may import of s2mc besides itself: the layers, bottom up (docs/architecture.md).
#: common is the foundation; compiler and simulator sit on isa; workloads run programs on the
#: simulator; the GPU backends share the workloads' cipher host code; analysis only reads records
#: (no engine, workload or backend: a report never runs anything); experiments drive the
#: components and write records through analysis; the browser lab's server runs programs and the
#: lab's exercises for the page; the CLI and the benchmarks are on top, and nothing imports the CLI.
ALLOWED = {
    "common": set(),
    "isa": {"common"},
    "compiler": {"common", "isa"},
    "simulator": {"common", "isa"},
    "workloads": {"common", "isa", "compiler", "simulator"},
    "gpu-backends": {"common", "isa", "compiler", "simulator", "workloads"},
    "analysis": {"common"},
    "experiments": {"common", "isa", "compiler", "simulator", "workloads", "gpu", "analysis"},
    "server": {"common", "isa", "compiler", "simulator", "workloads", "experiments"},
    "cli": {"common", "isa", "compiler", "simulator", "workloads", "gpu", "analysis", "experiments", "server"},
    "bench": {"common", "isa", "compiler", "simulator", "workloads", "gpu", "analysis", "experiments", "server"},
}
#: The package a folder's own modules are (gpu-backends/gpu/ is s2mc.gpu).
OWN = {"gpu-backends": "gpu", "bench": None}


def test_the_layer_table_covers_every_component():
    on_disk = {p.parent.name for p in REPO.glob("*/__init__.py")} | {"gpu-backends", "bench"}
    assert on_disk == set(ALLOWED)


@pytest.mark.parametrize("folder", sorted(ALLOWED))
def test_imports_go_down_the_layers(folder):
    own = OWN.get(folder, folder)
    wrong = sorted(f"{path.relative_to(REPO)}: {name}" for path in (REPO / folder).rglob("*.py")
                   for name in imported(path) if name.startswith("s2mc.")
                   and name.split(".")[1] != own and name.split(".")[1] not in ALLOWED[folder])
    assert wrong == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    # the check reads imports as written, inside functions too (the lazy imports)
    f = tmp_path / "m.py"
    f.write_text("def f():\n    from s2mc.simulator import Machine\n    from s2mc import gpu\n")
    assert {"s2mc.simulator", "s2mc.simulator.Machine", "s2mc.gpu"} <= imported(f)


def test_every_command_says_what_it_does():
    """`s2mc --help` gives each command a line (encrypt and decrypt once showed none: their help was
    set on __doc__ after click had read it)."""
    for name, command in main.all_commands().items():
        assert command.get_short_help_str(), f"s2mc {name} has no help text"


def test_an_error_line_cuts_a_huge_word_and_escapes_control_characters():
    word = "7" * 60 + "8" * 4920 + "9" * 20
    assert main._line(f"bad value {word}: no\nway") == f"bad value {'7' * 60}...(5001 characters)...{'9' * 19}:" + " no\\nway"
    assert main._line("x" * 200) == "x" * 200          # up to 200 characters a word stays whole
