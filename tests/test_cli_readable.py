"""What the commands print is meant for people: `s2mc info` as a table, the run
summary's legend of stalls against bus waits (and that the legend's arithmetic is true), the native
benchmark's header and legend, and a real simulation rate instead of "0 MIPS"."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

from s2mc.cli.cmd_sim import info_rows, stall_legend
from s2mc.simulator import Config, systemc_engine
from s2mc.workloads.native.grid import format_summary, summary_header, summary_legend

ROOT = Path(__file__).resolve().parents[1]
SUM = ROOT / "workloads/asm/parallel_sum.s"


def s2mc(*args):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)


FACTS = {"s2mc": "0.1.0", "python": "3.11.7", "platform": "Linux-6", "cpu": "x86_64",
         "cpu_features": ["aes", "avx2"], "cpu_count": 2, "engines": {"fast": True, "systemc": False},
         "native": {"built": True, "impls": [{"name": "vaes512", "supported": False},
                                             {"name": "aesni", "supported": True}],
                    "best": "aesni", "cpu": "AMD EPYC", "openssl": "OpenSSL 3.0", "max_threads": 2},
         "cuda": {"built": True, "gpu_present": True, "devices": ["NVIDIA H100"], "reason": ""}}


def test_info_rows_say_what_is_built_in_words():
    rows = dict(info_rows(FACTS))
    assert rows["engines"].startswith("fast: yes, systemc: no (not built")
    assert rows["native AES"] == "built; best aesni; this CPU runs aesni (not vaes512)"
    assert rows["CUDA"] == "built; GPU: NVIDIA H100"
    rows = dict(info_rows(FACTS | {"native": {"built": False, "error": "no OpenMP"},
                                   "cuda": {"built": False, "gpu_present": False, "devices": [],
                                            "reason": "not built with nvcc"}}))
    assert rows["native AES"] == "not built (no OpenMP)" and rows["CUDA"] == "not built; not built with nvcc"


def test_info_prints_no_raw_dicts():
    proc = s2mc("info")
    assert proc.returncode == 0, proc.stderr
    assert not re.search(r"[{}\[\]]|=True|'name'", proc.stdout), proc.stdout
    assert proc.stdout.splitlines()[0].startswith("s2mc ")


@pytest.mark.parametrize("latency", [2, 4])
def test_the_stall_legend_is_true_of_the_counters_it_explains(latency):
    proc = s2mc("run", SUM, "--cores", 4, "--mem-latency", latency)
    lines = proc.stderr.splitlines()
    assert lines[-1] == stall_legend(Config(mem_latency=latency)) and f"L-1 = {latency - 1} cycle" in lines[-1]
    head = lines[0].split()
    rows = [dict(zip(["core", "instr", "cycles", "stalls", "bus", "reads", "writes", "sync"], map(int, l.split())))
            for l in lines[1:5]]
    assert head[:4] == ["core", "instr", "cycles", "stalls"] and len(rows) == 4
    for r in rows:        # parallel_sum has no xchg: every access is one read or one write
        assert r["stalls"] == r["bus"] + (latency - 1) * (r["reads"] + r["writes"])
    sweep = s2mc("run", SUM, "--cores", "1,2", "--mem-latency", latency).stderr.splitlines()
    assert sweep[-1] == stall_legend(Config(mem_latency=latency))


def test_native_header_lines_up_with_its_rows():
    s = {"cipher": "camellia", "key_bits": 256, "impl": "aesni", "strategy": "contiguous", "threads": 2,
         "bytes": 16 << 20, "gb_per_s": 12.345,
         "cycles_per_byte": 0.5, "openssl_gb_per_s": 7.9, "ratio": 1.5625, "spread": 0.01, "openssl_spread": 0.02,
         "ratio_spread": 0.125}
    head, row = summary_header(True), format_summary(s)
    # Each header name ends where its column ends.
    assert head.index("cipher") == row.index("camellia-256") == 0 and head.index("impl") == row.index("aesni")
    for name, cell in [("bytes", "16M"), ("throughput", "GB/s"), ("cycles/B", "c/B"), ("ratio", "1.56x"),
                       ("spread", "±1.0%")]:
        assert head.index(name) + len(name) == row.index(cell) + len(cell), (name, head, row)
    assert head.index("|") == row.index("|") and len(head) == len(row)
    assert "c/B" in summary_legend([s]) and "ratio" not in summary_legend([s]) and "ratio" in summary_legend([s], True)


@pytest.mark.systemc
@pytest.mark.skipif(not systemc_engine.available(), reason="SystemC engine not built")
def test_systemc_status_line_shows_a_real_rate():
    proc = s2mc("aes", "--cores", 4, "--bytes", 64, "--engine", "systemc", "--quiet")
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"simulating, ([0-9.e+]+) MIPS\)", proc.stderr)
    assert m and float(m.group(1)) > 0, proc.stderr
