"""Errors of the SystemC engine reach the user as one clear line: simulated faults read exactly as
with the fast engine; bad input, an unwritable trace file, a crashed or missing child are named."""
import os
import stat
import subprocess

import pytest
from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import Machine, SimFault
from s2mc.simulator import systemc_engine
from s2mc.simulator.params import PARAMS
from systemc_helpers import needs_systemc

pytestmark = needs_systemc

DIV0 = ".code 0\ncid r1\nmov r2 #7\nnop\ndiv r3 r2 r1\ntrap r0 #0\n"


def cli_run(tmp_path, *args, src=DIV0):
    p = tmp_path / "p.s"
    p.write_text(src)
    return CliRunner().invoke(cli, ["run", str(p), *args])


def test_fault_message_is_the_fast_engines(tmp_path):
    fast = cli_run(tmp_path, "--cores", "2")
    sysc = cli_run(tmp_path, "--cores", "2", "--engine", "systemc")
    assert fast.exit_code == sysc.exit_code == 1
    assert sysc.stderr == fast.stderr
    assert sysc.stderr.startswith("s2mc: error: simulated fault: division by zero at core 0, pc 3, cycle 3: 'div r3 r2 r1'")
    assert sysc.stderr.count("\n") == 1


def test_cycle_limit_message_is_the_fast_engines(tmp_path):
    src = ".code 0\n:l\nld r1 0\njmp l\n"
    fast = cli_run(tmp_path, "--cores", "3", "--max-cycles", "1000", src=src)
    sysc = cli_run(tmp_path, "--cores", "3", "--max-cycles", "1000", "--engine", "systemc", src=src)
    assert fast.exit_code == sysc.exit_code == 1 and sysc.stderr == fast.stderr
    assert "cycle limit of 1000 reached" in sysc.stderr


def test_unwritable_vcd_is_one_clear_line(tmp_path):
    res = cli_run(tmp_path, "--engine", "systemc", "--vcd", str(tmp_path / "no" / "such" / "dir.vcd"),
                  src=".code 0\ntrap r0 #0\n")
    # refused while parsing, before the child runs (s2mc.common.outputs: the folder must exist)
    assert res.exit_code == 2
    assert res.stderr.startswith("s2mc run: error: Invalid value for '--vcd': ")
    assert f"folder {tmp_path / 'no' / 'such'} does not exist" in res.stderr and res.stderr.count("\n") == 1


def test_bad_input_to_the_child(tmp_path, monkeypatch):
    m = Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc")
    monkeypatch.setattr(m._engine, "_input_text", lambda: "s2mc-systemc-input 1\ncores 0\n")
    top = PARAMS["cores"].max   # the child's range is the parameter's
    with pytest.raises(S2mcError, match=rf"^systemc engine: cores '0' is not a number in 1\.\.{top}$"):
        m.run()


def test_child_executable_reports_bad_input_directly(tmp_path):
    exe = systemc_engine.executable()
    bad = tmp_path / "in.txt"
    bad.write_text("s2mc-systemc-input 1\ncores 2 mem_latency 2 arbitration lottery\n")
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    out = subprocess.run([str(exe), "--input", str(bad), "--result", str(tmp_path / "r.json")],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 2
    assert out.stderr == "s2mc-systemc: error: unknown arbitration 'lottery' (choose fifo, fixed, round_robin, burst4)\n"
    out = subprocess.run([str(exe), "--bogus"], capture_output=True, text=True, env=env)
    assert out.returncode == 2 and out.stderr.startswith("s2mc-systemc: error: unknown option '--bogus'")
    assert "SystemC" not in out.stdout   # no copyright banner


def _fake_child(tmp_path, body):
    exe = tmp_path / "s2mc-systemc"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_crashed_child_is_one_clear_line(tmp_path, monkeypatch):
    monkeypatch.setenv(systemc_engine.ENV_OVERRIDE, str(_fake_child(tmp_path, "kill -SEGV $$")))
    m = Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc")
    with pytest.raises(S2mcError, match=r"^the systemc engine \(s2mc-systemc\) crashed \(SIGSEGV\)$"):
        m.run()


def test_child_failing_without_a_message(tmp_path, monkeypatch):
    monkeypatch.setenv(systemc_engine.ENV_OVERRIDE, str(_fake_child(tmp_path, "echo oops >&2; exit 3")))
    m = Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc")
    with pytest.raises(S2mcError, match=r"^the systemc engine \(s2mc-systemc\) failed \(exit status 3\): oops$"):
        m.run()


def test_missing_executable_says_how_to_build_it(monkeypatch):
    monkeypatch.setattr(systemc_engine, "executable", lambda: None)
    with pytest.raises(S2mcError, match="systemc engine is not built.*libsystemc-dev"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc")


def test_machine_interface_before_and_after_the_run():
    prog = assemble(".code 0\ncid r1\nld r2 @0 r1\nadd r2 r2 #1\nst r2 @4 r1\ntrap r0 #0\n.data 0\n5 6\n.end\n")
    m = Machine(prog, cores=2, mem_words=16, engine="systemc")
    m.write(1, [41])
    assert m.read(0, 3) == [5, 41, 0]          # the image and the writes, before the run
    assert m.registers(1) == [0] * 32
    m.run()
    assert m.read(0, 6) == [5, 41, 0, 0, 6, 42]
    assert m.read(15, 1) == [0]
    assert m.registers(1)[:3] == [0, 1, 42]
    with pytest.raises(S2mcError, match="runs once"):
        m.run()
    with pytest.raises(SimFault):
        Machine(assemble(".code 0\njmp 9\n"), engine="systemc").run()
