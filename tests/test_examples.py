"""The bundled example programs (s2mc.workloads.examples, `s2mc examples`): shipped in the package,
listed, copied, and found by name from a folder that is not the checkout."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from s2mc.workloads import examples

ROOT = Path(__file__).resolve().parents[1]
S2MC = Path(sys.executable).parent / "s2mc"      # the installed command, as a user runs it
REPO_EXAMPLES = sorted(ROOT.glob("workloads/asm/*.s")) + sorted(ROOT.glob("workloads/rz/*.rz"))


def s2mc(*args, cwd):
    return subprocess.run([str(S2MC), *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)


def one_line_error(proc, needle):
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


def test_every_example_of_the_checkout_is_in_the_package_unchanged():
    shipped = {e.name: e for e in examples.all_examples()}
    assert sorted(shipped) == sorted(p.name for p in REPO_EXAMPLES)
    for p in REPO_EXAMPLES:
        e = shipped[p.name]
        assert e.path.read_bytes() == p.read_bytes() and e.checkout_path == str(p.relative_to(ROOT))
        assert "site-packages" in str(e.path)          # really the installed copy, not the checkout
        assert e.description and "\n" not in e.description


def test_descriptions_are_the_first_comment_line_or_its_title():
    by = {e.name: e.description for e in examples.all_examples()}
    assert by["fib.rz"] == "Recursive Fibonacci: core c computes fib(20 + c); the cores print in turn"
    assert by["parallel_sum.s"] == "Parallel array sum"       # the line goes on: its title only


def test_list_command_names_every_example(tmp_path):
    proc = s2mc("examples", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for p in REPO_EXAMPLES:
        assert f"  {p.name} " in proc.stdout


@pytest.mark.parametrize("name", ["sum.rz", "examples/sum.rz", "workloads/rz/sum.rz", "parallel_sum.s",
                                  "workloads/asm/parallel_sum.s"])
def test_run_finds_a_bundled_example_from_an_empty_folder(tmp_path, name):
    # Oracle: the same program run by its absolute path in the checkout.
    want = s2mc("run", next(p for p in REPO_EXAMPLES if p.name == Path(name).name), "--cores", 2, "--json",
                cwd=tmp_path)
    got = s2mc("run", name, "--cores", 2, "--json", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout) == json.loads(want.stdout)


def test_a_file_of_the_user_wins_over_the_example(tmp_path):
    (tmp_path / "fib.rz").write_text("main()\n  print(42)\n")
    proc = s2mc("run", "fib.rz", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["output"].strip() == "42"


@pytest.mark.parametrize("name", ["elsewhere/fib.rz", "workloads/asm/fib.rz", "nothere.s"])
def test_other_missing_paths_stay_errors(tmp_path, name):
    proc = s2mc("run", name, cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert examples.bundled(tmp_path / name) is None


def test_compile_and_asm_of_an_example_write_into_the_current_folder(tmp_path):
    assert s2mc("compile", "workloads/rz/fib.rz", cwd=tmp_path).returncode == 0
    assert s2mc("asm", "barrier.s", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["barrier.obj", "fib.s"]
    from s2mc.compiler import compile as compile_rz
    assert (tmp_path / "fib.s").read_text() == compile_rz((ROOT / "workloads/rz/fib.rz").read_text(), opt=1,
                                                          filename="workloads/rz/fib.rz").asm


def test_copy_show_and_their_errors(tmp_path):
    assert s2mc("examples", "copy", "fib", "spin_lock.s", "--to", "lab", cwd=tmp_path).returncode == 0
    assert sorted(p.name for p in (tmp_path / "lab").iterdir()) == ["fib.rz", "spin_lock.s"]
    assert (tmp_path / "lab/fib.rz").read_bytes() == (ROOT / "workloads/rz/fib.rz").read_bytes()
    (tmp_path / "lab/fib.rz").write_text("edited")
    one_line_error(s2mc("examples", "copy", "fib.rz", "--to", "lab", cwd=tmp_path), "already exists")
    assert (tmp_path / "lab/fib.rz").read_text() == "edited"       # a student's edit is not lost
    assert s2mc("examples", "copy", "fib.rz", "--to", "lab", "--force", cwd=tmp_path).returncode == 0
    assert (tmp_path / "lab/fib.rz").read_bytes() == (ROOT / "workloads/rz/fib.rz").read_bytes()
    assert s2mc("examples", "copy", cwd=tmp_path).returncode == 0     # every one, here
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == sorted(p.name for p in REPO_EXAMPLES)
    one_line_error(s2mc("examples", "copy", "barrier", "--to", "x", cwd=tmp_path), "ambiguous")
    one_line_error(s2mc("examples", "copy", "nope.rz", cwd=tmp_path), "no example 'nope.rz'")
    one_line_error(s2mc("examples", "copy", "fib.rz", "--to", "fib.rz", cwd=tmp_path), "not a folder")
    one_line_error(s2mc("examples", "copy", "fib.rz", "--to", "no/such/dir", cwd=tmp_path), "no/such")
    show = s2mc("examples", "show", "spin_lock.s", cwd=tmp_path)
    assert show.stdout == (ROOT / "workloads/asm/spin_lock.s").read_text()
