"""The SystemC engine's --vcd waveform follows the output rules of s2mc.common.outputs: the
child writes a 0600 temporary file in the target's folder whose name ends in .vcd, renamed over the
target only when the run succeeded; a failed or killed child leaves neither the target nor a
temporary file, and an older file stays as it was; a missing folder is one line before anything
runs; a device is written through. A stand-in child (S2MC_SYSTEMC) records what it was given and
either fails or hands over to the real engine."""
import os
import stat
import sys

import pytest
from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import Machine, systemc_engine
from systemc_helpers import needs_systemc

pytestmark = needs_systemc

PROG = assemble(".code 0\n  cid r1\n  ld r2 @0 r1\n  trap r2 #1\n  sync\n  trap r0 #0\n.data 0\n  7 8\n.end\n")

# Records the --vcd path, the mode of the file there and the folder's names, writes half a
# waveform, then fails (exit 3), kills itself, or runs the real engine with the same arguments.
STAND_IN = """#!{python}
import json, os, signal, sys
args = sys.argv[1:]
vcd = args[args.index("--vcd") + 1]
st = os.stat(vcd)
json.dump({{"vcd": vcd, "mode": st.st_mode & 0o777, "names": sorted(os.listdir(os.path.dirname(vcd)))}},
          open({log!r}, "w"))
open(vcd, "w").write("$date partial")
how = {how!r}
if how == "fail":
    sys.stderr.write("s2mc-systemc: error: stand-in failure\\n")
    sys.exit(3)
if how == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
os.execv({real!r}, [{real!r}] + args)
"""


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    real = str(systemc_engine.executable())

    def make(how: str):
        exe = tmp_path / f"stand-in-{how}"
        exe.write_text(STAND_IN.format(python=sys.executable, log=str(tmp_path / f"{how}.json"), how=how,
                                       real=real))
        exe.chmod(0o755)
        monkeypatch.setenv(systemc_engine.ENV_OVERRIDE, str(exe))
        return tmp_path / f"{how}.json"
    return make


def run(vcd):
    return Machine(PROG, cores=2, engine="systemc", vcd=vcd).run()


def test_the_child_writes_a_private_temporary_file_beside_the_target(tmp_path, stand_in):
    import json
    out = tmp_path / "out"
    out.mkdir()
    target = out / "w.vcd"
    target.write_text("old")
    target.chmod(0o640)
    log = stand_in("exec")
    res = run(target)
    seen = json.loads(log.read_text())
    tmp = seen["vcd"]
    assert os.path.dirname(tmp) == str(out) and tmp.endswith(".vcd") and tmp != str(target)
    assert os.path.basename(tmp).startswith(".w.vcd.") and seen["mode"] == 0o600
    assert seen["names"] == sorted([os.path.basename(tmp), "w.vcd"])
    # renamed over the target: the old file's mode kept, no temporary file left
    assert sorted(os.listdir(out)) == ["w.vcd"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    text = target.read_text()
    assert text.startswith("$date") and "partial" not in text and "$enddefinitions" in text and res.cycles > 0


@pytest.mark.parametrize("how,message", [
    ("fail", "systemc engine: stand-in failure"),
    ("kill", "crashed (SIGKILL)"),
])
def test_a_failed_child_leaves_no_waveform_and_keeps_the_old_one(tmp_path, stand_in, how, message):
    out = tmp_path / "out"
    out.mkdir()
    log = stand_in(how)
    with pytest.raises(S2mcError, match=message.replace("(", r"\(").replace(")", r"\)")):
        run(out / "new.vcd")
    assert log.exists() and os.listdir(out) == []
    (out / "old.vcd").write_text("old waveform")
    with pytest.raises(S2mcError):
        run(out / "old.vcd")
    assert os.listdir(out) == ["old.vcd"] and (out / "old.vcd").read_text() == "old waveform"


def test_a_missing_folder_fails_before_the_child_starts(tmp_path, stand_in):
    log = stand_in("exec")
    with pytest.raises(S2mcError, match=f"cannot write VCD waveform: folder {tmp_path / 'no'} does not exist"):
        Machine(PROG, engine="systemc", vcd=tmp_path / "no" / "w.vcd")
    assert not log.exists() and not (tmp_path / "no").exists()
    res = CliRunner().invoke(cli, ["run", str(tmp_path / "p.s"), "--engine", "systemc", "--vcd",
                                   str(tmp_path / "no" / "w.vcd")])
    assert res.exit_code == 2 and len(res.stderr.splitlines()) == 1
    assert "Invalid value for '--vcd'" in res.stderr and "does not exist" in res.stderr


def test_a_device_is_written_through(tmp_path, null_device):
    before = sorted(os.listdir(tmp_path))
    res = run(null_device)
    assert res.cycles > 0
    assert stat.S_ISCHR(os.stat(null_device).st_mode) and sorted(os.listdir(tmp_path)) == before
    assert not any(n.endswith(".vcd") for n in os.listdir(os.path.dirname(null_device)))


def test_the_waveform_of_a_run_is_the_same_whatever_the_target(tmp_path):
    """The temporary file is what the child wrote: the file equals a second identical run's."""
    a, b = tmp_path / "a.vcd", tmp_path / "b.vcd"
    run(a)
    run(b)
    strip = lambda p: [ln for ln in p.read_text().splitlines() if not ln.startswith(("$date", "  "))]  # noqa: E731
    assert strip(a) == strip(b) and len(strip(a)) > 20


@pytest.mark.parametrize("command", [["run", "parallel_sum.s", "--cores", "1,2"],
                                     ["aes", "--cores", "1,2", "--bytes", "16", "--quiet"]])
def test_the_commands_say_where_each_waveform_went(tmp_path, command):
    """Like every other output: one 'wrote FILE' line per waveform, naming a file that exists."""
    res = CliRunner().invoke(cli, [*command, "--engine", "systemc", "--vcd", str(tmp_path / "w.vcd")])
    assert res.exit_code == 0, res.output
    wrote = [ln.split(" ", 1)[1] for ln in res.output.splitlines() if ln.startswith("wrote ")]
    assert len(wrote) == 2 and all(os.path.exists(f) and f.endswith(".vcd") for f in wrote), res.output
