"""`make setup` is not silent while the C++ builds: tools/build_progress.py turns pip's verbose output
into progress lines and keeps all of it in a log, and the Makefile's install recipe pipes through it."""
import subprocess
import sys
from pathlib import Path

import pexpect

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "tools" / "build_progress.py"

#: What `pip install -v .` prints around a ninja build (scikit-build-core's stages, ninja's steps): pip
#: indents the build's output by two spaces.
PIP_OUTPUT = "".join(
    ["Processing /src/s2mc\n", "  *** scikit-build-core 1.1.2 using CMake 3.25.1 (wheel)\n",
     "  *** Configuring CMake...\n", "  -- The CXX compiler identification is GNU 12.2.0\n",
     "  *** Building project with Ninja...\n"]
    + [f"  [{k}/40] Building CXX object simulator/CMakeFiles/fast.dir/engine{k}.cpp.o\n" for k in range(1, 41)]
    + ["  *** Installing project into wheel...\n", "Successfully installed s2mc-0.1.0\n"])


def test_off_a_terminal_it_prints_the_stages_and_every_tenth_step(tmp_path):
    log = tmp_path / "install.log"
    proc = subprocess.run([sys.executable, SCRIPT, log], input=PIP_OUTPUT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == ""
    lines = proc.stdout.splitlines()
    steps = [ln for ln in lines if ln.startswith("  C++ build: step ")]
    assert steps == [f"  C++ build: step {k} of 40" for k in (1, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40)]
    assert "  Building project with Ninja..." in lines and "  Installing project into wheel..." in lines
    assert len(lines) == len(steps) + 4                      # four stage lines; the rest only in the log
    assert log.read_text() == PIP_OUTPUT


def test_on_a_terminal_one_line_is_rewritten(tmp_path):
    feed = tmp_path / "pip.txt"
    feed.write_text(PIP_OUTPUT)
    child = pexpect.spawn("bash", ["-c", f"{sys.executable} {SCRIPT} {tmp_path / 'log'} < {feed}"],
                          dimensions=(24, 80), timeout=60, encoding="utf-8")
    child.expect(pexpect.EOF)
    out = child.before
    assert "\r  C++ build [1/40] Building CXX object" in out and "\r  C++ build [40/40] Building CXX" in out
    assert out.count("\n") < 10                              # the steps share one line


def test_the_install_recipe_pipes_pip_through_it():
    # what `make setup` runs when a source changed (-n: printed, not run)
    proc = subprocess.run(["make", "-n", "-W", "CMakeLists.txt", "setup"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    install = next(ln for ln in proc.stdout.splitlines() if "--no-build-isolation" in ln or "tools/build_progress" in ln)
    recipe = proc.stdout[proc.stdout.index(install):]
    assert " install -v " in recipe and "| .venv/bin/python tools/build_progress.py build/install.log" in recipe
    assert " -q " not in recipe.split("\n", 1)[0]


def test_ci_runs_the_default_suite_then_the_slow_tests():
    steps = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
             if ln.strip() and not ln.lstrip().startswith("#")]
    assert steps[-2:] == ["make test", "make test-all"]
    # and test-all is the default suite with the slow tests, which make test leaves out
    dry = subprocess.run(["make", "-n", "test-all"], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    assert '-m "slow or not slow"' in dry
