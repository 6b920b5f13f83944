"""The GPU follow-up benches: bench/bench_opencl_ring.py (the check of docs/gpu.md's OpenCL ring
hypothesis) on any OpenCL device, PoCL here: its rows, and its sentences computed from those rows;
and both benches' one-line errors for bad options. (bench_encrypt_startup's table is checked by
tests/test_run_on_gpu_script.py, which runs it.)"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from s2mc.gpu import opencl

BENCH = Path(__file__).resolve().parent.parent / "bench"
SCRIPT = BENCH / "bench_opencl_ring.py"

needs_opencl = pytest.mark.skipif(not opencl.status()["devices"], reason="no OpenCL device")


def _run(tmp_path, *args, script=SCRIPT):
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, S2MC_CACHE_DIR=str(tmp_path / "cache")))


@needs_opencl
def test_rows_and_the_sentences_drawn_from_them(tmp_path):
    p = _run(tmp_path, "--size", "4M", "--reps", "1", "--segments", "1M,2M,1G", "--dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    rows = {m[1]: float(m[2]) for m in re.finditer(r"^\| (.+?) \| ([\d.]+) \| [\d.]+ \| [\d.]+ \|$", p.stdout, re.M)}
    seg = {k: v for k, v in rows.items() if k.startswith("host-segmented")}
    # 1G is cut to the data's 4 MB: three sizes, not four
    assert [k.rsplit(", ", 1)[1] for k in seg] == ["1MB segments", "2MB segments", "4MB segments"]
    ring = {int(re.search(r"(\d) queue", k)[1]): v for k, v in rows.items() if k.startswith("file ring")}
    assert sorted(ring) == sorted({1, opencl.FILE_QUEUES, 4})
    # the ratios come from the unrounded seconds, the rows print them to the millisecond
    spread = float(re.search(r"\(([\d.]+)x between the slowest and the fastest\)", p.stdout)[1])
    assert spread == pytest.approx(max(seg.values()) / min(seg.values()), rel=0.1)
    four = float(re.search(r"4 queues ([\d.]+)x the time", p.stdout)[1])
    assert four == pytest.approx(ring[4] / ring[1], rel=0.1)
    assert re.search(rf"runs\): {ring[opencl.FILE_QUEUES]:.3f} s; cp {rows['cp of the file']:.3f} s", p.stdout)
    assert not list(tmp_path.glob("s2mc-ocl-ring-*"))   # its temporary folder is gone


@pytest.mark.parametrize("script, args", [
    pytest.param("bench_opencl_ring.py", ["--size", "12Q"], marks=needs_opencl),
    pytest.param("bench_opencl_ring.py", ["--segments", "8"], marks=needs_opencl),
    pytest.param("bench_opencl_ring.py", ["--reps", "0"], marks=needs_opencl),
    ("bench_encrypt_startup.py", ["--size", "12Q"]),
    ("bench_encrypt_startup.py", ["--rounds", "0"]),
    ("bench_encrypt_startup.py", ["--backend", "native,quantum"]),
])
def test_bad_options_are_one_line(tmp_path, script, args):
    p = _run(tmp_path, *args, script=BENCH / script)
    assert p.returncode != 0 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and p.stderr.startswith(script.removesuffix(".py") + ": ")
