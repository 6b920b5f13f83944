"""`s2mc compile` and `s2mc run` on Rz sources, including every error path."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.isa import assemble

PROG = "fib(n)\n  if (n < 2) return n\n  return fib(n - 1) + fib(n - 2)\n\nmain()\n  print(\"fib\", fib(10))\n"


def invoke(*args):
    return CliRunner().invoke(cli, list(args))


def test_compile_writes_assembly(tmp_path):
    src = tmp_path / "fib.rz"
    src.write_text(PROG)
    res = invoke("compile", str(src))
    assert res.exit_code == 0, res.output
    asm = (tmp_path / "fib.s").read_text()
    assert "-O1" in asm.splitlines()[0]
    assert assemble(asm).address_of("main") > 0


def test_compile_levels_and_output(tmp_path):
    src = tmp_path / "fib.rz"
    src.write_text(PROG)
    out0, out1 = tmp_path / "a0.s", tmp_path / "a1.s"
    assert invoke("compile", str(src), "-O0", "-o", str(out0)).exit_code == 0
    assert invoke("compile", str(src), "-O1", "-o", str(out1)).exit_code == 0
    assert "-O0" in out0.read_text().splitlines()[0]
    assert out0.read_text() != out1.read_text()
    res = invoke("compile", str(src), "-o", "-")
    assert res.exit_code == 0 and res.output.startswith("; compiled by s2mc")


def test_run_rz_on_four_cores(tmp_path):
    src = tmp_path / "fib.rz"
    src.write_text(PROG)
    res = invoke("run", str(src), "--cores", "4", "--json")
    assert res.exit_code == 0, res.output
    obj = json.loads(res.output)
    assert sorted(obj["output"]) == sorted("fib 55\n" * 4)   # the cores' prints interleave
    assert len(obj["cores"]) == 4


def test_teaching_workload_runs(tmp_path):
    path = Path(__file__).parent.parent / "workloads" / "rz" / "sum.rz"
    res = invoke("run", str(path), "--cores", "4")
    assert res.exit_code == 0
    assert "sum of 1 .. 1000 = 500500" in res.output


def test_compile_error_is_one_line(tmp_path):
    src = tmp_path / "bad.rz"
    src.write_text("main()\n  x = y\n")
    res = invoke("compile", str(src))
    assert res.exit_code == 1
    assert res.output.strip() == f"s2mc: error: {src}:2:7: undefined name 'y'"


def test_compile_missing_file(tmp_path):
    res = invoke("compile", str(tmp_path / "nope.rz"))
    assert res.exit_code == 1 and "s2mc: error:" in res.output


def test_compile_wrong_suffix(tmp_path):
    src = tmp_path / "prog.txt"
    src.write_text(PROG)
    res = invoke("compile", str(src))
    assert res.exit_code == 1 and "expected an Rz source file" in res.output


def test_compile_binary_file(tmp_path):
    src = tmp_path / "bin.rz"
    src.write_bytes(b"\xff\xfe\x00")
    res = invoke("compile", str(src))
    assert res.exit_code == 1 and "not a text file" in res.output


def test_compile_help():
    res = invoke("compile", "--help")
    assert res.exit_code == 0 and "-O0" in res.output and "-O1" in res.output
