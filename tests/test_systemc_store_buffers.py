"""The SystemC engine with store buffers (consistency tso, pso; docs/timing-model.md, "Store
buffers") against the fast engine on hand-written programs: fences, xchg locks, barriers, traps
that print, forwarded loads and pushes and pops, with and without caches, every arbitration
policy, 1-8 cores. Both engines must give the same cycles, every counter, the event log, the
registers and the memory (systemc_helpers.assert_same); the fast engine is held to the reference
model and to hand-computed cycles in test_store_buffers.py, whose worked examples run here too.
The random programs are in test_systemc_equal.py, the waveform in test_systemc_vcd.py."""
import json

import pytest

import test_store_buffers as worked
from s2mc.isa import assemble
from systemc_helpers import assert_same, needs_systemc, run_child

pytestmark = needs_systemc

# A lock taken with xchg and released with a buffered store (after a fence in tso's favour or not),
# a shared counter, a barrier, then every core prints the counter and its own words.
LOCK = """
.code 0
  cid r1
  st r1 @8 r1
  mov r6 #3
:round
  mov r3 #1
  xchg r3 r0
  jt r3 round
  ld r5 count
  add r5 r5 #1
  st r5 count
  {fence}
  st r0 @0 r0
  sub r6 r6 #1
  jt r6 round
  sync
  ld r7 count
  trap r7 #1
  ld r8 @8 r1
  trap r8 #1
  trap r0 #0
.data 0
:lock
  0
:count
  0
.end
"""

# Strings written through the buffer and printed with trap #3 (a draining trap), then loads that
# are forwarded from the buffer (st then ld, push then pop) and one that is not.
STRINGS = """
.code 0
  cid r1
  shl r3 r1 #2
  add r3 r3 #16
  mov r2 #72
  st r2 @0 r3
  mov r2 #105
  st r2 @1 r3
  st r0 @2 r3
  trap r3 #3
  add r4 r1 #40
  st r1 @0 r4
  ld r5 @0 r4
  mov r10 #100
  shl r11 r1 #3
  add r10 r10 r11
  push r10 r5
  pop r10 r6
  ld r7 @1 r4
  add r7 r7 r6
  trap r7 #1
  trap r0 #0
.end
"""

# Each core stores its id then reads its neighbour's word, without and with a fence between:
# store buffering on every pair of cores, the barrier in between.
RING = """
.code 0
  cid r1
  ncore r2
  add r3 r1 #1
  mod r3 r3 r2
  add r4 r1 #1
  st r4 @0 r1
  ld r5 @0 r3
  sync
  st r4 @16 r1
  fence
  ld r6 @16 r3
  add r5 r5 r6
  st r5 @32 r1
  trap r0 #0
.end
"""

PROGRAMS = {
    "forward": worked.FORWARD, "full": worked.FULL, "fence3": worked.FENCE3, "race": worked.RACE,
    "turns": worked.TURNS, "fault": worked.FAULT_CYCLE,
    "lock": LOCK.format(fence=""), "lock_fence": LOCK.format(fence="fence"), "strings": STRINGS, "ring": RING,
}

# Machines that together take every value of each parameter: models, buffer sizes, policies, core
# counts, latencies, caches (a small one, so that drains miss, hit and evict) and hit latencies.
CACHE = dict(cache_lines=4, cache_ways=2, line_words=2)
CONFIGS = [
    dict(consistency="tso", store_buffer_entries=4, cores=1, mem_latency=2, arbitration="fifo"),
    dict(consistency="pso", store_buffer_entries=1, cores=2, mem_latency=1, arbitration="fixed"),
    dict(consistency="tso", store_buffer_entries=2, cores=3, mem_latency=5, arbitration="round_robin"),
    dict(consistency="pso", store_buffer_entries=8, cores=4, mem_latency=2, arbitration="burst4"),
    dict(consistency="pso", store_buffer_entries=2, cores=8, mem_latency=1, arbitration="fifo"),
    dict(consistency="tso", store_buffer_entries=1, cores=2, mem_latency=2, arbitration="fifo", cache="msi", **CACHE),
    dict(consistency="pso", store_buffer_entries=4, cores=3, mem_latency=1, arbitration="round_robin", cache="mesi",
         cache_hit_latency=2, **CACHE),
    dict(consistency="tso", store_buffer_entries=2, cores=4, mem_latency=5, arbitration="burst4", cache="moesi",
         **CACHE),
    dict(consistency="pso", store_buffer_entries=2, cores=2, mem_latency=2, arbitration="fixed", cache="dragon",
         cache_hit_latency=3, **CACHE),
    dict(consistency="tso", store_buffer_entries=4, cores=8, mem_latency=2, arbitration="round_robin",
         cache="mesi", **CACHE),
]


@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_hand_written_programs_on_both_engines(name, config):
    out = assert_same(assemble(PROGRAMS[name]), mem_words=256, max_cycles=20_000, **CONFIGS[config])
    if name != "fault":   # every buffered store reached memory by the end
        assert "fault" not in out, out
        buffered = sum(e[3] == "buffer" for e in out["trace"])
        assert sum(c["store_drains"] for c in out["cores"]) == buffered
        assert buffered > 0 or CONFIGS[config]["cores"] == 1   # fence3's and race's stores are core 1's


def test_the_lock_counts_every_round():
    """With a fence before the release the counter is exact under both models; another core's
    value of the counter comes from memory, not from a buffer of its own."""
    for cfg in CONFIGS:
        out = assert_same(assemble(LOCK.format(fence="fence")), mem_words=256, **cfg)
        assert out["memory"][1] == 3 * cfg["cores"], cfg


@pytest.mark.parametrize("line,message", [
    ("consistency sc 4", "unknown consistency 'sc' (choose tso, pso)"),
    ("consistency rc 4", "unknown consistency 'rc' (choose tso, pso)"),
    ("consistency tso 0", "store buffer entries '0' is not a number in 1..64"),
    ("consistency pso 65", "store buffer entries '65' is not a number in 1..64"),
    ("consistency tso", "store buffer entries 'code' is not a number in 1..64"),
])
def test_the_systemc_child_refuses_a_bad_consistency_line_in_one_line(tmp_path, line, message):
    out = run_child(tmp_path, line)
    assert (out.returncode, out.stderr) == (2, f"s2mc-systemc: error: {message}\n")
    assert not (tmp_path / "r.json").exists()


def test_the_systemc_child_reports_the_buffer_counters(tmp_path):
    out = run_child(tmp_path, "consistency pso 2")
    assert out.returncode == 0, out.stderr
    core = json.loads((tmp_path / "r.json").read_text())["cores"][0]
    assert core["store_drains"] == 0 and "fence_stall_cycles" in core
