"""The report's caches section (s2mc.analysis.caches) on records of reference-model runs: its tables
hold the runs' own counters and its sentences follow from them."""
import re

import pandas as pd

from s2mc.analysis import caches, records
from s2mc.isa import assemble
from s2mc.simulator import Config, build_result
from s2mc.simulator.records import result_rows, variant_parts
from s2mc.simulator.reference import ReferenceMachine
from test_caches_hand import SHARING

MEM = 256


def run(src, cores, cache):
    prog = assemble(src)
    m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=cores, mem_words=MEM, cache=cache)
    res = build_result(dict(m.run(), fault=None), prog, Config(cores=cores, mem_words=MEM, cache=cache))
    variant = "/".join(variant_parts(2, "fifo", cache, 64, 2, 4, 1))
    return res, result_rows(res, records.new_run_id("run"), workload="false_sharing", variant=variant,
                            experiment="lab")


def test_the_section_compares_protocols_with_the_runs_counters():
    rows, results = [], {}
    for cache in ("none", "mesi", "dragon"):
        for cores in (1, 2):
            res, r = run(SHARING.format(stride=1), cores, cache)
            rows += r
            results[cache, cores] = res
    df = records.make_records(rows)
    runs = caches.cache_runs(df)
    assert list(dict.fromkeys(runs["protocol"])) == ["none", "mesi", "dragon"]
    one = results["none", 1].cycles
    for (cache, cores), res in results.items():
        got = runs[(runs["protocol"] == cache) & (runs["cores"] == cores)].iloc[0]
        assert got["speedup"] == one / res.cycles
    parts = caches.report_parts(df)
    assert parts[0] == ("p", f"**false_sharing**: {caches.LAB['false_sharing']}")
    cycles = next(p[1] for p in parts if p[0] == "table")   # a lab program: cycles, not speedup
    assert list(cycles["caches"]) == ["none", "mesi", "dragon"]
    assert cycles.loc[1, "2 cores"] == f"{results['mesi', 2].cycles:,}"
    assert list(caches.speedup_table(runs)["2 cores"]) == [f"{one / results[c, 2].cycles:.2f}"
                                                          for c in ("none", "mesi", "dragon")]
    table = parts[-1][1].set_index("caches")
    mesi = results["mesi", 2]
    total = lambda k: sum(c[k] for c in mesi.cores)   # noqa: E731
    assert table.loc["mesi", "cycles"] == f"{mesi.cycles:,}"
    assert table.loc["mesi", "coherence (true / false sharing)"] == \
        f"{total('coherence_misses')} ({total('true_sharing_misses')} / {total('false_sharing_misses')})"
    assert table.loc["mesi", "invalidations"] == f"{total('invalidations_received')}"
    assert table.loc["none", "hit rate"] == "–"
    assert table.loc["dragon", "BusUpd"] == f"{sum(c['bus_upd'] for c in results['dragon', 2].cores)}"


def test_no_cached_runs_is_one_hint():
    res, rows = run(SHARING.format(stride=1), 1, "none")
    parts = caches.report_parts(records.make_records(rows))
    assert len(parts) == 1 and "s2mc sweep aes_caches" in parts[0][1]
    assert caches.report_parts(records.empty())[0] == parts[0]
    assert isinstance(caches.cache_runs(records.empty()), pd.DataFrame)


def test_the_report_has_the_caches_section(tmp_path):
    from s2mc.analysis import report
    rows = []
    for cache in ("none", "msi"):
        for cores in (1, 2):
            rows += run(SHARING.format(stride=1), cores, cache)[1]
    path = records.write(records.make_records(rows), tmp_path / "lab.parquet", params={"command": "test"})
    out = report.build([path], tmp_path / "report")
    md = out["md"].read_text()
    section = md.split("## 2b. Caches and coherence", 1)[1].split("\n## ", 1)[0]
    assert f"**false_sharing**: {caches.LAB['false_sharing']}" in section
    assert "| msi |" in section and "| none |" in section


TAS = """
.code 0
  mov r2 #lock
:try
  mov r1 #1
  xchg r1 r2
  jt r1 try
  st r0 lock
  trap r0 #0
.data 0
:lock
  0
.end
"""
TTAS = TAS.replace(":try\n", ":try\n  ld r3 lock\n  jt r3 try\n")


def test_the_locks_table_compares_the_locks_per_protocol():
    """Two stand-in locks run on the reference model under none and MESI on 1 and 2 cores: the
    table's cells are the runs' cycles and invalidations, and the sentence names the faster."""
    rows, cycles, inval = [], {}, {}
    for workload, src in [("spin_lock", TAS), ("ttas_lock", TTAS)]:
        for cache in ("none", "mesi"):
            for cores in (1, 2):
                prog = assemble(src)
                m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=cores, mem_words=MEM,
                                     cache=cache)
                res = build_result(dict(m.run(), fault=None), prog, Config(cores=cores, mem_words=MEM, cache=cache))
                variant = "/".join(variant_parts(2, "fifo", cache, 64, 2, 4, 1))
                rows += result_rows(res, records.new_run_id("run"), workload=workload, variant=variant)
                cycles[workload, cache, cores] = res.cycles
                inval[workload, cache, cores] = sum(c.get("invalidations_received", 0) for c in res.cores)
    parts = caches.report_parts(records.make_records(rows))
    at = next(i for i, p in enumerate(parts) if p[0] == "p" and p[1].startswith("**Spin locks as cores grow**"))
    t = parts[at + 1][1].set_index(["lock", "caches"])
    for (w, cache, cores), c in cycles.items():
        assert t.loc[(w, cache), f"{cores} core{'s' if cores > 1 else ''}"] == f"{c:,}"
    t = parts[at + 3][1].set_index(["lock", "caches"])
    assert ("spin_lock", "none") not in t.index
    assert t.loc[("spin_lock", "mesi"), "2 cores"] == f"{inval['spin_lock', 'mesi', 2]:,}"
    fast = min(("spin_lock", "ttas_lock"), key=lambda w: cycles[w, "mesi", 2])
    assert any(p[0] == "p" and p[1].startswith(f"On 2 cores with MESI caches, {fast} is the fastest") for p in parts[at:])


def test_the_knee_sentences_follow_from_the_runs():
    """A program outside the lab (padded counters, so no sharing) on 1, 2 and 4 cores: the speedup
    table and each protocol's knee sentence hold the runs' own numbers."""
    rows, res = [], {}
    for cache in ("none", "mesi"):
        for cores in (1, 2, 4):
            prog = assemble(SHARING.format(stride=4))
            m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=cores, mem_words=MEM, cache=cache)
            r = build_result(dict(m.run(), fault=None), prog, Config(cores=cores, mem_words=MEM, cache=cache))
            rows += result_rows(r, records.new_run_id("run"), workload="padded",
                                variant="/".join(variant_parts(2, "fifo", cache, 64, 2, 4, 1)))
            res[cache, cores] = r
    parts = caches.report_parts(records.make_records(rows))
    texts = [p[1] for p in parts if p[0] == "p"]
    speed = {c: [res["none", 1].cycles / res[c, n].cycles for n in (1, 2, 4)] for c in ("none", "mesi")}
    for cache, who in (("none", "No caches"), ("mesi", "MESI")):
        s = speed[cache]
        top = (1, 2, 4)[s.index(max(s))]
        line = next(t for t in texts if t.startswith(f"**{who}**"))
        assert f"peaks at {max(s):.2f} on {top}" in line
    mesi = res["mesi", 4]
    hits = sum(c["cache_hits"] for c in mesi.cores)
    misses = sum(c["cache_misses"] for c in mesi.cores)
    line = next(t for t in texts if t.startswith("**MESI**"))
    knee_line_has_rate = any(f"{h / (h + m):.1%} of its accesses hit" in line
                             for h, m in [(sum(c["cache_hits"] for c in res["mesi", n].cores),
                                           sum(c["cache_misses"] for c in res["mesi", n].cores)) for n in (1, 2, 4)])
    assert knee_line_has_rate and hits + misses > 0


def test_the_demos_caches_headline_gives_a_lab_program_cycles_not_a_speedup(capsys):
    # s2mc demo prints this after its caches steps: false_sharing's every core does the same work
    from s2mc.cli.cmd_demo import _caches_summary
    rows, results = [], {}
    for cache in ("none", "mesi"):
        for cores in (1, 2):
            res, r = run(SHARING.format(stride=1), cores, cache)
            rows += r
            results[cache, cores] = res
    _caches_summary(records.make_records(rows))
    out = capsys.readouterr().out
    assert "Caches, false_sharing: cycles (every core does the same work" in out and "speedup" not in out
    mesi = next(ln for ln in out.splitlines() if ln.startswith("| mesi"))
    assert [c.strip() for c in mesi.strip("|").split("|")] == ["mesi", f"{results['mesi', 1].cycles:,}",
                                                              f"{results['mesi', 2].cycles:,}"]


def shaped_runs(shapes, cores=(1, 2), workload="padded"):
    """SHARING (padded) on the fast engine under MESI with each cache shape in `shapes` (dicts of
    cache_lines, cache_ways, line_words, cache_hit_latency over the defaults) and without caches:
    records, and each run's cycles by (variant, cores)."""
    from s2mc.simulator import Machine
    from s2mc.simulator.params import DEFAULTS
    prog = assemble(SHARING.format(stride=4))
    rows, cycles = [], {}
    shape_keys = ("cache_lines", "cache_ways", "line_words", "cache_hit_latency")
    for shape in [None, *shapes]:
        cache = "none" if shape is None else "mesi"
        full = {k: DEFAULTS[k] for k in shape_keys} | (shape or {})
        for n in cores:
            res = Machine(prog, cores=n, cache=cache, **full).run()
            variant = "/".join(variant_parts(2, "fifo", cache, *(full[k] for k in shape_keys)))
            rows += result_rows(res, records.new_run_id("run"), workload=workload, variant=variant)
            cycles[variant, n] = res.cycles
    return records.make_records(rows), cycles


def test_each_cache_shape_is_its_own_row():
    """MESI with the default cache beside MESI with one shape parameter changed, for each of the
    cache's shape parameters: never one 'mesi' row holding the mean of both (the caches lab's 64 and
    512 lines merged into 39,366 cycles, matching neither run)."""
    for key, value in [("cache_lines", 16), ("cache_ways", 1), ("line_words", 8), ("cache_hit_latency", 3)]:
        df, cycles = shaped_runs([{}, {key: value}])
        parts = caches.report_parts(df)
        comparison = parts[-1][1]
        assert len(comparison) == 3, (key, comparison)       # none, MESI default, MESI changed
        shown = set(comparison["cycles"])
        for (variant, n), c in cycles.items():
            if n == 2:
                assert f"{c:,}" in shown, (key, variant, comparison)
        speed = next(p[1] for p in parts if p[0] == "table")
        assert len(speed) == 3 and len(set(speed["caches"])) == 3, (key, speed)


def test_the_comparison_is_at_the_most_cores_every_configuration_ran():
    """The cacheless runs go to 4 cores, the cached ones to 2: the side-by-side table is at 2 cores,
    where every configuration has a run (not a table of one row), and says so."""
    df, _ = shaped_runs([{}], cores=(1, 2))
    more, _ = shaped_runs([], cores=(4,))
    parts = caches.report_parts(records.concat([df, more]))
    assert len(parts[-1][1]) == 2
    assert parts[-2][1].startswith("The caches side by side on 2 cores")


def test_the_hit_rate_sentence_names_its_core_count():
    df, _ = shaped_runs([{}], cores=(1, 2, 4))
    runs = caches.cache_runs(df)
    line = next(t for t in caches._knee(runs) if t.startswith("**MESI"))
    m = re.search(r"On (\d+) cores? ([\d.]+)% of its accesses hit", line)
    assert m, line
    at = runs[(runs["protocol"] == "mesi") & (runs["cores"] == int(m.group(1)))].iloc[0]
    assert f"{at['hit_rate']:.1%}" == m.group(2) + "%"


def test_the_section_title_names_the_protocols_of_the_records(tmp_path):
    from s2mc.analysis import report
    df, _ = shaped_runs([{}])
    path = records.write(df, tmp_path / "lab.parquet", params={"command": "test"})
    md = report.build([path], tmp_path / "report")["md"].read_text()
    title = next(line for line in md.splitlines() if line.startswith("## 2b."))
    assert title == "## 2b. Caches and coherence: MESI against no caches"
    contents = md.split("**Contents**", 1)[1].split("\n## ", 1)[0]
    assert "- 2b. Caches and coherence: MESI against no caches" in contents
    section = md.split(title, 1)[1].split("\n## ", 1)[0]
    assert "64 lines x 2 ways of 4-word lines" in section     # the cache's shape is stated
