"""AES on the simulated multicore gives identical results in both engines: at 1-8 cores, under every
arbitration policy, with memory latencies 1, 2 and 5 (and the output matches `cryptography`)."""
import itertools

import pytest

from s2mc.workloads.cipher_sim import runner as aes
from systemc_helpers import needs_systemc

pytestmark = needs_systemc

KEY = bytes(range(16))
DATA = bytes((7 * i + 3) & 0xFF for i in range(64))


def both(**options):
    fast = aes.run_aes(DATA, KEY, engine="fast", **options)
    sysc = aes.run_aes(DATA, KEY, engine="systemc", **options)
    assert sysc.output == fast.output
    assert sysc.result.cores == fast.result.cores
    assert (sysc.result.cycles, sysc.result.events) == (fast.result.cycles, fast.result.events)
    return fast


@pytest.mark.parametrize("latency", [1, 2, 5])
@pytest.mark.parametrize("arbitration", ["fifo", "fixed", "round_robin"])
def test_aes_bytes_every_core_count(latency, arbitration):
    for cores in range(1, 9):
        both(style="bytes", cores=cores, mem_latency=latency, arbitration=arbitration)


@pytest.mark.parametrize("style,mode,partition", [("ttable", "ecb", "interleaved"), ("bytes", "ctr", "contiguous"),
                                                  ("ttable", "ctr", "extended")])
def test_aes_styles_modes_partitions(style, mode, partition):
    for cores, latency, arb in itertools.islice(itertools.product((2, 5, 8), (1, 5), ("fifo", "round_robin")), 0, None, 3):
        both(style=style, mode=mode, partition=partition, cores=cores, mem_latency=latency, arbitration=arb)


def test_s2mc_aes_systemc_writes_a_vcd_and_the_same_table(tmp_path):
    # The SystemC engine's acceptance command: same table as the fast engine, plus a waveform whose grant count
    # equals the run's memory accesses.
    import json
    import subprocess
    import sys
    from vcdvcd import VCDVCD

    def aes_json(*extra):
        proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "aes", "--cores", "4", "--bytes", "64", "--json",
                               "--quiet", *extra], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    vcd = tmp_path / "aes.vcd"
    sysc = aes_json("--engine", "systemc", "--vcd", str(vcd))
    fast = aes_json()
    strip = lambda runs: [{k: v for k, v in r.items() if k not in ("engine", "sim_seconds")} for r in runs]  # noqa: E731
    assert strip(sysc["runs"]) == strip(fast["runs"])
    wave = VCDVCD(str(vcd))
    grants = sum(sum(1 for _, v in wave[s].tv if v == "1") for s in wave.signals if s.endswith("grant"))
    assert grants == sum(c["mem_accesses"] for c in sysc["runs"][0]["per_core"])
