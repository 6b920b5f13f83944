"""bench/bench_serve.py runs from a fresh setup (its client library is one `make setup` installs)
and says what it measured; the figures themselves are docs/benchmarks.md's, not a test's."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "bench_serve.py"


def _bench(*args: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(BENCH), *args], capture_output=True, text=True, timeout=timeout)


def test_a_small_class_runs_and_reports_every_kind_of_call():
    out = _bench("--students", "3", "--seconds", "2", "--think", "0.2", "--workers", "1", timeout=180)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    assert re.search(r"^3 students, \d+ s on http://127\.0\.0\.1:\d+, server --workers 1, \d+ CPUs", out.stdout, re.M)
    for kind in ("run", "compile", "debug-open", "debug-step"):
        assert re.search(rf"^{kind}\s+\d+\s+\d+\s+\d+\s+\d+$", out.stdout, re.M), (kind, out.stdout)
    assert "server errors (5xx or broken connections): 0" in out.stdout


@pytest.mark.slow
def test_the_fairness_run_takes_rounds_and_pools_them():
    out = _bench("--fairness", "--seconds", "3", "--rounds", "2", timeout=600)
    assert "Traceback" not in out.stderr, out.stderr
    assert len(re.findall(r"^round [12]: the normal students' p95 \d+ ms alone, \d+ ms beside 5 abusers",
                          out.stdout, re.M)) == 2, out.stdout
    total = re.search(r"p95 over 2 rounds: \d+ ms alone \((\d+) answers\), \d+ ms beside 5 abusers \((\d+) "
                      r"answers\): ([\d.]+)x \(goal: at most 2x\); server errors: 0", out.stdout)
    assert total, out.stdout
    # the exit status is the goal's verdict, not a crash (a ratio printed as 2.00 may be either)
    if total[3] != "2.00":
        assert out.returncode == (1 if float(total[3]) > 2 else 0)


@pytest.mark.parametrize("cpus, words", [("x", "'x' is not a list of CPU numbers"),
                                         ("0-99999", "needs at least one more for the students")])
def test_server_cpus_that_cannot_be_given_are_one_line(cpus, words):
    out = _bench("--server-cpus", cpus, "--students", "1", "--seconds", "1", timeout=60)
    assert out.returncode == 2 and words in out.stderr and "Traceback" not in out.stderr, out.stderr
