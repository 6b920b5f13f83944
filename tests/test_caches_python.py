"""The caches as the Python side shows them, on the reference model (simulator/reference.py): its
invariants on random programs, the Result built from its counters (stall_cycles derived, the cache
counters only when caches are on), the records rows and variant names, the per-core table of
`s2mc run` and the text log."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2gen import programs
from s2mc.cli import cmd_sim
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import CACHE_COUNTERS, CORE_COUNTERS, Config, build_result, format_trace
from s2mc.simulator.records import cache_part, parse_cache_part, result_rows, variant_parts
from s2mc.simulator.reference import DIRTY, ReferenceMachine, RefFault
from test_caches_hand import HANDOVER, UPGRADE_LOST

MEM = 1024
SHAPES = [dict(cache_lines=1, cache_ways=1, line_words=1), dict(cache_lines=2, cache_ways=1, line_words=2),
          dict(cache_lines=4, cache_ways=2, line_words=4), dict(cache_lines=8, cache_ways=8, line_words=2),
          dict(cache_lines=64, cache_ways=2, line_words=4, cache_hit_latency=2)]
caches = st.fixed_dictionaries({"cache": st.sampled_from(["msi", "mesi", "moesi", "dragon"]),
                                "shape": st.sampled_from(SHAPES)})


class Checked(ReferenceMachine):
    """The reference model, checking the protocols' invariants after every cycle: at most one dirty
    copy of a line; an M or E copy is the only one; each protocol's own states only."""
    STATES = {"msi": {"M", "S"}, "mesi": {"M", "E", "S"}, "moesi": {"M", "O", "E", "S"},
              "dragon": {"M", "Sm", "E", "Sc"}}

    def step(self):
        going = super().step()
        held: dict[int, list[str]] = {}
        for cache in self.caches or ():
            for ways in cache.sets:
                for w in ways:
                    if w.line is not None:
                        assert w.state in self.STATES[self.protocol], w.state
                        held.setdefault(w.line, []).append(w.state)
        for line, copies in held.items():
            assert sum(s in DIRTY for s in copies) <= 1, (line, copies)
            assert len(copies) == 1 or not {"M", "E"} & set(copies), (line, copies)
        return going


def reference(src, cores=1, **cfg):
    prog = assemble(src)
    m = Checked(prog.code_image, prog.data_image, prog.entry, cores=cores, mem_words=MEM, max_cycles=20_000,
                trace=True, **cfg)
    return prog, m


def config(cores, cache, shape):
    return Config(cores=cores, mem_words=MEM, cache=cache, **shape)


@settings(max_examples=100)
@given(programs(), st.integers(1, 4), caches)
def test_random_programs_keep_the_invariants_and_the_derived_stalls(src, cores, c):
    """On random programs the protocols' invariants hold every cycle, and the Result's stall_cycles
    (derived from the engine counters) equals the reference's own count by the rule."""
    prog, m = reference(src, cores, cache=c["cache"], **c["shape"])
    try:
        raw = m.run()
    except RefFault:
        return
    res = build_result(dict(raw, fault=None), prog, config(cores, c["cache"], c["shape"]))
    for core, want, stall in zip(res.cores, raw["cores"], raw["stall_cycles"]):
        assert list(core) == ["core", *CORE_COUNTERS, *CACHE_COUNTERS]
        assert core["stall_cycles"] == stall == core["finish_cycle"] - core["instructions"] - core["sync_wait_cycles"]
        assert {k: core[k] for k in CACHE_COUNTERS} == {k: want[k] for k in CACHE_COUNTERS}
        assert core["cache_hits"] + core["cache_misses"] <= core["mem_reads"] + core["mem_writes"]
        assert core["mem_accesses"] >= core["cache_misses"]
        # every miss has exactly one class, every coherence miss one sharing kind
        assert core["cache_misses"] == (core["cold_misses"] + core["capacity_misses"] + core["conflict_misses"]
                                        + core["coherence_misses"])
        assert core["coherence_misses"] == core["true_sharing_misses"] + core["false_sharing_misses"]
        if c["cache"] == "dragon":                     # an update protocol invalidates nothing
            assert core["coherence_misses"] == 0
        if c["shape"]["cache_ways"] == c["shape"]["cache_lines"]:   # fully associative: no conflicts
            assert core["conflict_misses"] == 0


@settings(max_examples=100)
@given(programs(), caches)
def test_one_core_computes_the_same_with_and_without_caches(src, c):
    """On one core the interleaving cannot change: every protocol and shape leaves the memory,
    registers, output and instruction counts of the cacheless machine; only the timing differs."""
    prog, plain = reference(src)
    _, cached = reference(src, cache=c["cache"], **c["shape"])
    try:
        want = plain.run()
    except RefFault as f:
        with pytest.raises(RefFault) as got:
            cached.run()
        assert (got.value.kind, got.value.pc) == (f.kind, f.pc)
        return
    got = cached.run()
    assert [t for _, _, t in got["output"]] == [t for _, _, t in want["output"]]
    assert cached.mem == plain.mem and cached.cores[0].r == plain.cores[0].r
    for k in ("instructions", "mem_reads", "mem_writes"):
        assert got["cores"][0][k] == want["cores"][0][k]
    s = got["cores"][0]
    # every cached access is one hit or one transaction of the log
    assert s["cache_hits"] + s["cache_misses"] == sum(1 for e in cached.trace
                                                      if e[3] == "hit" or e[3].startswith("grant "))
    assert s["coherence_misses"] == s["invalidations_received"] == 0


def test_a_cacheless_result_is_what_it_was():
    """cache none: the counters of before, stall_cycles by the seed's formula."""
    prog, m = reference(HANDOVER, 2)
    raw = m.run()
    res = build_result(dict(raw, fault=None), prog, Config(cores=2, mem_words=MEM))
    assert list(res.cores[0]) == ["core", *CORE_COUNTERS]
    for core, want, stall in zip(res.cores, raw["cores"], raw["stall_cycles"]):
        assert core["stall_cycles"] == want["bus_wait_cycles"] + (2 - 1) * want["mem_accesses"] == stall
    assert "cache" not in res.to_json()["config"]
    names = {r["metric"] for r in result_rows(res, "run-x")}
    assert not names & set(CACHE_COUNTERS)


def _cached_result(src=UPGRADE_LOST, cache="mesi"):
    prog, m = reference(src, 2, cache=cache)
    raw = m.run()
    return prog, m, build_result(dict(raw, fault=None), prog, Config(cores=2, mem_words=MEM, cache=cache))


def test_json_and_records_carry_the_cache_counters():
    _, m, res = _cached_result()
    doc = res.to_json()
    assert doc["config"]["cache"] == "mesi" and doc["config"]["line_words"] == 4
    assert doc["cores"][1]["bus_rdx"] == 1 and doc["cores"][1]["coherence_misses"] == 1
    rows = result_rows(res, "run-x", variant="/".join(variant_parts(2, "fifo", cache="mesi", cache_lines=64,
                                                                    cache_ways=2, line_words=4,
                                                                    cache_hit_latency=1)))
    whole = {r["metric"]: r["value"] for r in rows if r["core"] == -1}
    for k in CACHE_COUNTERS:   # the whole run sums the cores
        assert whole[k] == sum(c[k] for c in res.cores), k
    assert whole["invalidations_received"] == 2 and whole["bus_upgr"] == 1
    assert rows[0]["variant"] == "mesi-64x2-w4"


@pytest.mark.parametrize("shape", [("msi", 64, 2, 4, 1), ("dragon", 1, 1, 2, 3), ("moesi", 65536, 65536, 1024, 100)])
def test_the_cache_variant_part_names_the_shape_and_reads_back(shape):
    part = cache_part(*shape)
    assert parse_cache_part(part) == dict(zip(("cache", "cache_lines", "cache_ways", "line_words",
                                               "cache_hit_latency"), shape))
    assert ("-h" in part) == (shape[4] != 1)
    assert cache_part("none", 64, 2, 4, 1) == "" and parse_cache_part("round_robin") is None


def test_the_run_table_shows_the_cache_counters(capsys):
    _, _, res = _cached_result()
    cmd_sim._print_table(res)
    err = capsys.readouterr().err.splitlines()
    at = next(i for i, ln in enumerate(err) if ln.startswith("MESI caches: 64 lines x 4 words, 2-way"))
    head = err[at + 1].split()
    assert head[:3] == ["core", "hits", "misses"]
    rows = [dict(zip(["core", *CACHE_COUNTERS], map(int, ln.split()))) for ln in err[at + 2:at + 4]]
    assert rows == [{"core": c["core"], **{k: c[k] for k in CACHE_COUNTERS}} for c in res.cores]
    assert "D-1 cycles per bus transaction" in err[-1]


def test_the_cacheless_run_table_has_no_cache_rows(capsys):
    prog, m = reference(HANDOVER, 2)
    res = build_result(dict(m.run(), fault=None), prog, Config(cores=2, mem_words=MEM))
    cmd_sim._print_table(res)
    err = capsys.readouterr().err
    assert "caches" not in err and "BusRd" not in err and "L-1 = 1 cycle" in err


def test_the_text_log_of_an_upgrade_turned_busrdx():
    """The lines of cycles 12 and 13 of the upgrade test (test_caches_hand.py), by hand."""
    prog, m, _ = _cached_result()
    text = format_trace(m.trace, prog, 2).splitlines()
    at = [ln for ln in text if ln.split()[0] in ("12", "13")]
    assert [" ".join(ln.split()) for ln in at] == [
        "12 0 0 3 st r2 x bus request",
        "12 0 0 3 st r2 x <- 0 bus grant BusUpgr (waited 0, 1 cycle)",
        "12 0 0 3 line 0: S -> M (BusUpgr by core 0)",
        "12 1 0 3 st r2 x bus request",
        "12 1 0 3 line 0: S -> I (BusUpgr by core 0)",
        "13 0 1 4 trap r0 #0 halt",              # core 0's issue of cycle 13 comes before the grant
        "13 0 1 3 line 0: M -> I (BusRdX by core 1)",
        "13 1 1 3 st r2 x <- 1 bus grant BusRdX (waited 1, 4 cycles)",
        "13 1 1 3 line 0: I -> M (BusRdX by core 1)",
    ]
    # the bus column follows each transaction's own bus time: core 1 holds it 13..16
    assert [ln.split()[2] for ln in text[1:] if ln.split()[0] == "17"] == ["-"]


def test_the_text_log_of_a_hit_and_a_silent_upgrade():
    prog, m = reference("""
.code 0
  ld r1 x
  st r1 x
  trap r0 #0
.data 0
:x
  5
.end
""", cache="mesi")
    m.run()
    text = [" ".join(ln.split()) for ln in format_trace(m.trace, prog, 2).splitlines()]
    assert "5 0 - 1 st r1 x <- 5 cache hit" in text
    assert "5 0 - 1 line 0: E -> M (PrWr)" in text


def test_an_impossible_cache_shape_is_one_error():
    with pytest.raises(S2mcError, match="power of two"):
        ReferenceMachine([0], [], cache="mesi", cache_lines=3)


# -- the timeline with caches ------------------------------------------------------------------------
def _timeline(src=UPGRADE_LOST, cache="mesi", **cfg):
    from s2mc.simulator.timeline import timeline_of
    prog, m = reference(src, 2, cache=cache, **cfg)
    m.run()
    return timeline_of(m.trace, 2, 2, program=prog, cache=cache, hit_latency=cfg.get("cache_hit_latency", 1))


def test_the_timeline_bus_row_holds_each_transaction_for_its_bus_time():
    """The upgrade test's bus (test_caches_hand.py): BusRd 0-4 and 5-9, BusUpgr 12, BusRdX 13-16;
    the cores' states still add up to the run, bus hold to each core's bus_busy_cycles."""
    from s2mc.simulator.timeline import BUS_HOLD
    tl = _timeline()
    assert [(iv.start, iv.end, iv.core, iv.xact) for iv in tl.bus()] == [
        (0, 5, 0, "BusRd"), (5, 10, 1, "BusRd"), (12, 13, 0, "BusUpgr"), (13, 17, 1, "BusRdX")]
    totals = tl.totals()
    assert [sum(t) for t in totals] == [18, 18]
    assert [t[BUS_HOLD] for t in totals] == [6, 9]


def test_a_hit_is_executing_for_its_hit_latency():
    from s2mc.simulator.timeline import EXECUTING
    tl = _timeline(src="""
.code 0
  ld r1 x
  ld r1 x
  trap r0 #0
.data 0
:x
  5
.end
""", cache_hit_latency=3)
    core0 = [(iv.start, iv.end, iv.state) for iv in tl.intervals if iv.core == 0]
    assert (5, 8, EXECUTING) in core0 and sum(e - s for s, e, _ in core0) == tl.end


def test_the_timeline_writers_name_the_transactions(tmp_path):
    """Perfetto JSON: a bus event per tenure named by its transaction; the page: the transactions in
    its data and legend; the picture: a legend entry per transaction that occurs."""
    import json
    from s2mc.simulator.timeline import _figure, to_html, to_trace_events
    tl = _timeline()
    ev = to_trace_events(tl)
    bus = [(e["ts"], e["dur"], e["name"], e["args"]["transaction"]) for e in ev["traceEvents"]
           if e.get("cat") == "bus"]
    assert bus == [(0, 5, "BusRd, core 0", "BusRd"), (5, 5, "BusRd, core 1", "BusRd"),
                   (12, 1, "BusUpgr, core 0", "BusUpgr"), (13, 4, "BusRdX, core 1", "BusRdX")]
    assert ev["otherData"]["cache"] == "mesi"
    page = to_html(tl)
    data = json.loads(page.split('id="data">', 1)[1].split("</script>", 1)[0])
    assert data["cache"] == "mesi" and [data["xacts"][x] for x in data["bus"]["x"]] == \
        ["BusRd", "BusRd", "BusUpgr", "BusRdX"]
    key = _figure(tl).axes[0].get_legend()    # the bus row's key, under the core states'
    assert key.get_title().get_text() == "the bus row: the transaction on it"
    assert [t.get_text() for t in key.get_texts()] == ["BusRd", "BusRdX", "BusUpgr"]


def test_a_cacheless_timeline_is_coloured_by_core():
    from s2mc.simulator.timeline import _figure, to_trace_events
    tl = _timeline(cache="none")
    assert not tl.cached and {iv.xact for iv in tl.bus()} == {""}
    assert all(e["name"].startswith("core ") and "transaction" not in e["args"]
               for e in to_trace_events(tl)["traceEvents"] if e.get("cat") == "bus")
    key = _figure(tl).axes[0].get_legend()
    assert key.get_title().get_text() == "the bus row: held by"
    assert [t.get_text() for t in key.get_texts()] == ["core 0", "core 1"]


def test_the_variant_cache_part_default_is_the_declared_one():
    """common.variants leaves -h out at the declared default hit latency (simulator/params.toml)."""
    from s2mc.common.variants import DEFAULT_HIT_LATENCY
    from s2mc.simulator.params import DEFAULTS
    assert DEFAULT_HIT_LATENCY == DEFAULTS["cache_hit_latency"]


def test_the_analysis_names_cache_configurations_in_words():
    from s2mc.analysis.summaries import describe_variant, legend_labels
    assert describe_variant("aes-128-ecb-enc", "ttable/interleaved/mesi-64x2-w4") == \
        "ttable, MESI caches 64x2, 4-word lines"
    assert describe_variant("false_sharing", "dragon-1x1-w2-h3") == \
        "false_sharing, DRAGON caches 1x1, 2-word lines, hit 3"
    labels, title = legend_labels([("aes-128-ecb-enc", "ttable/interleaved", 1024),
                                   ("aes-128-ecb-enc", "ttable/interleaved/mesi-64x2-w4", 1024)])
    assert (labels, title) == (["no caches", "MESI caches 64x2, 4-word lines"], "cache")


def test_the_page_with_caches_in_chromium(tmp_path):
    """The upgrade test's page: the legend lists the transactions, and hovering the bus row at
    cycle 13 names core 1's BusRdX and its 4 cycles."""
    import re
    from test_timeline import HOVER_PROBE, dump_dom
    from s2mc.simulator.timeline import write_timeline
    page = tmp_path / "caches.html"
    write_timeline(_timeline(), page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", HOVER_PROBE % "[[13, 0], [12, 0]]"))
    dom = dump_dom(tmp_path, probe)
    assert "data-error" not in dom
    legend = re.search(r'<div id="legend">(.*?)</div>', dom, re.S).group(1)
    assert "bus row, by transaction:" in legend
    assert [t for t in re.findall(r'class="item xact"><span class="sw"[^>]*></span>([^<]+)', legend)] == \
        ["BusRd", "BusRdX", "BusUpgr"]
    tips = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).split("\n@@\n")
    assert tips[0].splitlines()[1] == "bus: BusRdX (4 cycles), held by core 1"
    assert tips[1].splitlines()[1] == "bus: BusUpgr (1 cycle), held by core 0"


def test_the_text_log_of_an_eviction():
    """The victim test (test_caches_hand.py) at cycle 3: the fill's grant, the dirty victim's
    eviction, then the fill's own state change."""
    from test_caches_hand import VICTIM
    prog, m = reference(VICTIM, cache="msi", cache_lines=1, cache_ways=1, line_words=2)
    m.run()
    text = [" ".join(ln.split()) for ln in format_trace(m.trace, prog, 2).splitlines() if ln.split()[0] == "3"]
    assert text == ["3 0 0 1 ld r1 b bus request", "3 0 0 1 ld r1 b = 0 bus grant BusRd (waited 0, 6 cycles)",
                    "3 0 0 1 line 0: M -> I (evict)", "3 0 0 1 line 2: I -> S (BusRd by core 0)"]
