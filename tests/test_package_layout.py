"""Folder = package: s2mc.<name>... is the file <name>/... of this repository, under one name only.

The one exception is gpu-backends/ (a hyphen cannot be in a Python name): s2mc.gpu is
gpu-backends/gpu/. These tests import every module of the installed package and check that each
comes from the folder its dotted name says, with the same text as the repository's file.
"""
import importlib
import importlib.util
import sys
from pathlib import Path

import pytest

import s2mc

REPO = Path(__file__).resolve().parent.parent
COMPONENTS = {"common": "common", "isa": "isa", "compiler": "compiler", "simulator": "simulator", "workloads": "workloads",
              "analysis": "analysis", "experiments": "experiments",
              "server": "server", "cli": "cli", "gpu": "gpu-backends/gpu"}


def _repo_modules() -> dict[str, Path]:
    """Every Python file of the component folders, by the dotted name it must have."""
    found = {}
    for package, folder in COMPONENTS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(("s2mc", package, *parts))] = path
    return found


MODULES = _repo_modules()


def test_the_package_is_one_folder():
    # Not a namespace spread over the repository: nothing but the installed tree is searched.
    (root,) = list(s2mc.__path__)
    assert Path(root).name == "s2mc" and Path(root).parent.name == "site-packages"


@pytest.mark.parametrize("name", sorted(n for n in MODULES if not n.endswith("__main__")))
def test_every_module_lies_in_the_folder_its_name_says(name):
    module = importlib.import_module(name)
    installed = Path(module.__file__).resolve()
    rel = installed.relative_to(Path(list(s2mc.__path__)[0]).resolve())
    expected = Path(*name.split(".")[1:])
    assert rel.with_suffix("") in (expected, expected / "__init__"), f"{name} is {installed}"
    # The installed file is the repository's file (`make setup` reinstalls after an edit).
    assert installed.read_text() == MODULES[name].read_text(), f"{name} differs from {MODULES[name]}: run make setup"


def test_no_file_is_imported_twice():
    for name in MODULES:
        if not name.endswith("__main__"):
            importlib.import_module(name)
    by_file = {}
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and name.startswith("s2mc"):
            by_file.setdefault(Path(path).resolve(), []).append(name)
    twice = {str(p): names for p, names in by_file.items() if len(names) > 1}
    assert not twice


def test_installed_modules_all_come_from_the_repository():
    root = Path(list(s2mc.__path__)[0])
    for path in root.rglob("*.py"):
        parts = path.relative_to(root).with_suffix("").parts
        name = ".".join(("s2mc", *(parts[:-1] if parts[-1] == "__init__" else parts)))
        assert name in MODULES, f"{path} is installed but has no source in the repository"


@pytest.mark.parametrize("name", ["s2mc.sim", "s2mc.native", "s2mc.tests", "s2mc.cuda", "s2mc.docs",
                                  "s2mc.simulator.sim", "s2mc.simulator.src", "s2mc.gpu.cuda"])
def test_old_and_non_python_folders_are_not_importable(name):
    assert importlib.util.find_spec(name) is None
