"""gpu-backends/run_on_gpu.sh's file step on any machine (`--files-only`): the table it writes, with the
arithmetic in bash alone (the GPU image has no `bc`), and its ratios consistent with its seconds."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "gpu-backends" / "run_on_gpu.sh"

pytestmark = pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl not installed")


def test_the_script_needs_no_bc():
    text = SCRIPT.read_text(encoding="utf-8")
    assert not re.search(r"\|\s*bc\b", text) and "bc -l" not in text


def test_files_only_writes_the_table_with_ratios_to_cp_and_openssl(tmp_path):
    out = tmp_path / "out"
    # a bc that fails first on the PATH: the GPU image has none
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bc").write_text("#!/bin/sh\necho 'bc was called' >&2\nexit 99\n")
    (fake / "bc").chmod(0o755)
    env = dict(os.environ, FILE_BYTES="256K", FILE_DIR=str(tmp_path), PATH=f"{fake}:{os.environ['PATH']}",
               STARTUP_ROUNDS="1")
    p = subprocess.run(["bash", str(SCRIPT), "--files-only", str(out)], cwd=REPO, env=env,
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert "bc was called" not in p.stderr + (out / "files.log").read_text(encoding="utf-8")
    table = (out / "files.md").read_text(encoding="utf-8")
    assert p.stdout == table
    rows = {}
    for line in table.splitlines():
        m = re.fullmatch(r"\| (\S+) \| ([\d.]+) \| ([\d.]+|-) \| ([\d.]+|-) \|", line)
        if m:
            rows[m[1]] = (float(m[2]), m[3], m[4])
    # the commands every machine has run; the GPU backends fail here or run, each in one row
    assert {"cp", "openssl", "s2mc-native", "openssl-camellia"} <= set(rows)
    for name in ("s2mc-cuda", "s2mc-opencl", "s2mc-cuda-camellia", "s2mc-opencl-camellia"):
        assert name in rows or f"| {name} | failed (files.log) | - | - |" in table
    assert rows["cp"][1] == "1.00" and rows["openssl"][2] == "1.00" and rows["cp"][2] == "-"
    cp_s, ssl_s = rows["cp"][0], rows["openssl"][0]
    for name, (secs, vs_cp, vs_ssl) in rows.items():
        if name in ("cp",) or secs == 0:
            continue
        # the ratio was taken on nanoseconds, the seconds printed to the millisecond
        assert float(vs_cp) == pytest.approx(cp_s / secs, abs=0.02 + 0.002 / secs)
        if "camellia" not in name and name != "openssl":
            assert float(vs_ssl) == pytest.approx(ssl_s / secs, abs=0.02 + 0.002 / secs)
    assert "- native output = openssl's" in table
    assert "DIFFERS" not in table
    # and where a command-line encrypt spends its time, from the runs' own marks (bench_encrypt_startup):
    # the phases of a round add up to its total, spawn to exit
    startup = (out / "files-startup.md").read_text(encoding="utf-8")
    assert "`s2mc encrypt` of 256K (262144 random bytes" in startup and ", 1 rounds," in startup
    cells = {}
    for line in startup.splitlines():
        m = re.fullmatch(r"\| ([^|]+) \| (.+) \|", line)
        if m and not line.startswith("|---"):
            cells[m[1].strip("* ")] = [c.strip("* ") for c in m[2].split(" | ")]
    backends = cells["phase"]
    assert backends[0] == "native" and set(backends) <= {"native", "cuda", "opencl"}
    total = [float(x) for x in cells["command line, spawn to exit"]]
    phases = [r for r in cells if r not in ("phase", "command line, spawn to exit") and not r.startswith(
        ("the same call", "cp of", "command line", "in one process"))]
    for i, _ in enumerate(backends):   # the phases add up to the total, spawn to exit
        parts = [float(cells[r][i]) for r in phases if cells[r][i] != "-"]
        assert sum(parts) == pytest.approx(total[i], abs=0.002 * len(parts))
    cp = float(cells["cp of the same file (spawn to exit)"][0])
    # the ratio was taken on nanoseconds and printed to 0.01; cp's time here is printed to the
    # millisecond, so a fast cp (a few ms) may be a third off in the printed figure
    for ratio, t in zip(cells["command line: speed vs cp"], total):
        assert float(ratio) == pytest.approx(cp / t, abs=0.006 + 0.0006 / t)
