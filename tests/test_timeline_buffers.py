"""The timeline with store buffers (consistency tso, pso; docs/timeline.md, "Store buffers"): the
cores' states with `buffer wait`, the drains on the bus row, each core's buffer occupancy.

Oracles: the worked examples of docs/timing-model.md, by hand; the cycle-stepped reference model,
asked after every cycle what each core did and how many entries its buffer held (the recorder of
test_timeline.py); the engine's counters; sums by hand over buckets; headless Chromium for the page."""
import json
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings

from s2gen import buffered_configs, programs
from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.reference import RefFault
from s2mc.simulator.timeline import STATES, timeline_of, to_trace_events, write_timeline
from test_timeline import HOVER_PROBE, StateRecorder, dump_dom
from buffer_programs import FORWARD, FENCE3

MEM = 1024




def run(src, **cfg):
    return Machine(assemble(src), mem_words=64, timeline=True, trace=True, **cfg).run()


def test_a_store_then_a_forwarded_load_by_hand():
    # The table: the buffer after step 1 holds - , x, x y, y, y, - in cycles 0..5; x drains at 2
    # (bus 2-3), y at 4 (bus 4-5); the trap is held back in 4 and halts in 5.
    res = run(FORWARD, consistency="tso")
    tl = res.timeline
    assert tl.occupancy(0) == [0, 1, 2, 1, 1, 0]
    assert tl.buffers == [[(1, 2, 1), (2, 3, 2), (3, 5, 1)]]
    assert tl.runs(0) == [(0, 4, "executing"), (4, 5, "buffer wait"), (5, 6, "executing")]
    assert [(iv.start, iv.end, iv.core, iv.pc, iv.address, iv.after) for iv in tl.bus()] == [
        (2, 4, 0, 1, 0, 5), (4, 6, 0, 2, 1, 5)]


def test_a_fence_behind_three_stores_by_hand():
    # Core 1's stores enter at 2, 3, 4 and drain at 8, 10, 12 (each leaves after its cycle); its
    # fence is held back 5..12 and issues at 13, the trap at 14. Core 0's loads hold the bus at
    # 2, 4, 6; it halts at 8.
    tl = run(FENCE3, consistency="tso", cores=2, arbitration="fixed").timeline
    assert tl.occupancy(1) == [0, 0, 1, 2, 3, 3, 3, 3, 3, 2, 2, 1, 1, 0, 0]
    assert tl.occupancy(0) == [0] * 15
    assert tl.runs(1) == [(0, 5, "executing"), (5, 13, "buffer wait"), (13, 15, "executing")]
    assert [(iv.start, iv.core) for iv in tl.bus()] == [(2, 0), (4, 0), (6, 0), (8, 1), (10, 1), (12, 1)]
    assert [(iv.start, iv.wait) for iv in tl.drains] == [(8, 5), (10, 0), (12, 0)]


@settings(max_examples=60)
@given(programs(), buffered_configs())
def test_the_timeline_equals_the_reference_models_cycles_and_buffers(src, cfg):
    prog = assemble(src)
    ref = StateRecorder(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, max_cycles=20_000, trace=True,
                        **cfg)
    try:
        ref.run()
    except RefFault:
        return
    res = Machine(prog, mem_words=MEM, max_cycles=20_000, timeline=True, **cfg).run()
    tl = res.timeline
    for c in range(cfg["cores"]):
        assert [name for s, e, name in tl.runs(c) for _ in range(e - s)] == ref.states[c]
        assert tl.occupancy(c) == ref.buffers[c] + [0] * (res.cycles - len(ref.buffers[c]))
    for c, tot in zip(res.cores, tl.totals()):
        counted = dict(zip(STATES, tot))
        assert counted["buffer wait"] == c["fence_stall_cycles"] + c["store_buffer_full_stalls"]
        assert counted["bus hold"] == c["bus_busy_cycles"] - c["drain_bus_cycles"]
        assert counted["bus wait"] == c["bus_wait_cycles"]
        assert sum(tot) == res.cycles
    # the drains' bus time, but what lies after the run's last cycle (a drain may hold the bus then)
    drained = [[g for g, k, _, e, *_ in ref.trace if e == "drain" and k == c] for c in range(cfg["cores"])]
    assert [sum(iv.end - iv.start for iv in tl.drains if iv.core == c) for c in range(cfg["cores"])] == \
        [sum(min(g + cfg["mem_latency"], res.cycles) - g for g in gs) for gs in drained]


def test_aggregated_buckets_hold_the_entry_and_drain_cycles():
    res = run(FENCE3, consistency="pso", cores=2, arbitration="fixed", store_buffer_entries=2)
    detail = res.timeline
    agg = timeline_of(res.trace, 2, 2, max_intervals=4, buckets=4, store_buffer_entries=2, consistency="pso")
    assert agg.aggregated and detail.end == agg.end
    for b in range(len(agg.buffer_counts)):
        lo, hi = agg.bucket_span(b)
        for c in range(2):
            assert agg.buffer_counts[b][c] == sum(detail.occupancy(c)[lo:hi])
            assert agg.drain_counts[b][c] == sum(max(0, min(hi, iv.end) - max(lo, iv.start))
                                                 for iv in detail.drains if iv.core == c)


def test_a_window_shows_its_part_of_the_occupancy():
    prog = assemble(FENCE3)
    cfg = dict(cores=2, arbitration="fixed", consistency="tso", mem_words=64)
    whole = Machine(prog, timeline=True, **cfg).run().timeline
    part = Machine(prog, timeline=True, timeline_window=(6, 12), **cfg).run().timeline
    assert [part.occupancy(c) for c in range(2)] == [whole.occupancy(c)[6:12] for c in range(2)]
    assert [(iv.start, iv.end) for iv in part.drains] == [(8, 10), (10, 12)]


def test_occupancy_without_buffer_rows_is_one_line():
    for tl in (run(FORWARD).timeline, timeline_of(run(FORWARD, consistency="tso").trace, 1, 2, max_intervals=1,
                                                  store_buffer_entries=4, consistency="tso")):
        with pytest.raises(S2mcError, match=r"^this timeline has no store buffer rows: its machine has none "
                                            r"\(consistency sc\), or its window is aggregated \(see buffer_counts\)$"):
            tl.occupancy(0)


def test_the_json_has_the_drains_and_a_counter_per_buffer(tmp_path):
    tl = run(FORWARD, consistency="tso").timeline
    ev = to_trace_events(tl)["traceEvents"]
    assert [(e["ts"], e["args"]["entries"]) for e in ev if e["ph"] == "C"] == [(1, 1), (2, 2), (3, 1), (5, 0)]
    assert [(e["ts"], e["name"]) for e in ev if e.get("cat") == "drain"] == [(2, "drain, core 0"), (4, "drain, core 0")]
    for suffix in (".png", ".svg", ".json"):
        write_timeline(tl, tmp_path / f"t{suffix}")
    assert json.loads((tmp_path / "t.json").read_text())["otherData"]["consistency"] == "tso"
    texts = set(re.findall(r"<!-- (.*?) -->", (tmp_path / "t.svg").read_text()))   # matplotlib names its texts
    assert {"core 0", "core 0 buffer", "buffer wait", "store buffer entries (the bar's height, of 4)"} <= texts


def test_s2mc_run_writes_a_page_that_renders_with_the_buffers(tmp_path):
    src = tmp_path / "fence3.s"
    src.write_text(FENCE3)
    page = tmp_path / "t.html"
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(src), "--cores", "2", "--arbitration",
                           "fixed", "--consistency", "tso", "--timeline", str(page)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    probe = tmp_path / "probe.html"
    # rows: bus 0, core 0 1, core 0 buffer 2, core 1 3, core 1 buffer 4
    probe.write_text(page.read_text().replace("</body>", HOVER_PROBE % "[[6, 4], [8, 0], [7, 3], [3, 2]]"))
    dom = dump_dom(tmp_path, probe)
    assert '<body data-ready="2 cores">' in dom and "data-error" not in dom, dom[:3000]
    assert ('<ul id="rows"><li>bus</li><li>core 0</li><li>core 0 buffer</li><li>core 1</li>'
            '<li>core 1 buffer</li></ul>') in dom
    tips = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&lt;", "<").split("\n@@\n")
    assert tips[0].splitlines() == ["cycle 6", "core 1 buffer: 3 of 4 entries (tso)  (cycles 4..8)"]
    assert tips[1].splitlines()[:3] == ["cycle 8", "bus held by core 1's store buffer (cycles 8..9)",
                                        "drain of   6  st r1 @flag r0"]
    assert "value       <- 1" in tips[1] and "wait        5 cycles" in tips[1]
    assert tips[2].splitlines()[1] == "core 1  buffer wait  (cycles 5..12)"
    assert tips[3].splitlines() == ["cycle 3", "core 0 buffer: 0 of 4 entries (tso)"]
    assert "tso store buffers of 4 entries" in dom
