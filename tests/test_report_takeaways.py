"""The report's sentences and short tables come from the data (s2mc.analysis.summaries), and its
HTML fits the page in a real browser. Oracles: hand-computed phrases, and the
simulator's own Result numbers recomputed here for runs the records were made from."""
import itertools
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from s2mc.analysis import records, report, summaries
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.records import result_rows, variant_parts
from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid

ROOT = Path(__file__).resolve().parents[1]
LOCK = assemble((ROOT / "workloads/asm/spin_lock.s").read_text())
_ids = itertools.count()


@pytest.mark.parametrize("value,base,phrase", [
    (68485, 59854, "14% slower"), (62567, 59854, "5% slower"), (50, 100, "50% faster"),
    (59302, 59854, "the same (within 1%)"), (101, 100, "1% slower")])
def test_compare_phrase(value, base, phrase):
    assert summaries.compare_phrase(value, base) == phrase


def test_legends_name_what_varies():
    labels, title = summaries.legend_labels([("aes-128-ecb-enc", "bytes/interleaved", 256),
                                             ("aes-128-ecb-enc", "bytes/interleaved/L4", 256)])
    assert labels == ["L = 2", "L = 4"] and title == "L"
    labels, title = summaries.legend_labels([("aes-128-ecb-enc", "bytes/interleaved", 1024),
                                             ("aes-128-ecb-enc", "ttable/interleaved/fixed", 16384)])
    assert labels == ["style bytes, policy fifo, 1 KiB", "style ttable, policy fixed, 16 KiB"]
    assert title == "style, policy, data size"
    assert summaries.describe_variant("aes-128-ecb-enc", "bytes/interleaved/L4/round_robin/O0") == \
        "bytes, L = 4, round_robin, -O0"
    assert summaries.describe_variant("spin_lock", "") == "spin_lock"
    # variants the parts do not read still get labels of their own
    labels, _ = summaries.legend_labels([("aes-128-ecb-enc", "sequential/total", 8 << 20, "vaes"),
                                         ("aes-128-ecb-enc", "sequential/encryption-only", 8 << 20, "vaes"),
                                         ("aes-128-ctr", "contiguous", 8 << 20, "ttable")])
    assert len(set(labels)) == 3 and "sequential/total" in labels[0] and "ttable" in labels[2]


def lock_records(policies=("fifo", "fixed", "round_robin"), cores=(1, 2, 4)):
    """The arbitration sweep on spin_lock.s: records, and the simulator's own results by (policy, cores)."""
    rows, results = [], {}
    for pol, n in itertools.product(policies, cores):
        res = Machine(LOCK, cores=n, arbitration=pol).run()
        results[pol, n] = res
        rows += result_rows(res, f"lock-{next(_ids)}", experiment="arbitration_sweep", workload="spin_lock",
                            variant="/".join(variant_parts(2, pol)))
    return records.make_records(rows), results


def test_arbitration_sentences_and_caption_follow_the_numbers():
    df, res = lock_records()
    runs = summaries.sim_runs(df)
    texts, caption = summaries.arbitration_takeaways(runs)
    fifo = res["fifo", 4].cycles
    for pol in ("fixed", "round_robin"):
        mine = res[pol, 4].cycles
        change = mine / fifo - 1        # recomputed from the simulator, not from the records
        word = f"{abs(change):.0%} {'slower' if change > 0 else 'faster'}" if abs(change) >= 0.01 else "the same"
        assert f"{pol} {word}" in caption and f"{pol} is {word}" in texts[0], (caption, texts)
        assert f"{mine:,}" in texts[0]
    stalls = [c["stall_cycles"] for c in res["fixed", 4].cores]
    assert f"range from {min(stalls):,}" in texts[0] and f"to {max(stalls):,}" in texts[0]
    # the pivot: one row per policy, one column per core count, the simulator's cycles in the cells
    t = summaries.pivot(runs, "cycles")
    assert list(t.columns) == ["configuration", "1 core", "2 cores", "4 cores"] and len(t) == 3
    assert t.iloc[1].tolist() == ["spin_lock, fixed"] + [f"{res['fixed', n].cycles:,}" for n in (1, 2, 4)]


@pytest.fixture(scope="module")
def aes_records():
    runs, rows = run_grid(AesGrid(cores=(1, 2), sizes=(32, 64), opts=(1, 0)),
                          new_run_id=lambda: f"aes-{next(_ids)}", experiment="seed003_grid")
    return records.make_records(rows), {(r.nbytes, r.config.cores, r.config.opt): r.result for r in runs}


@pytest.fixture(scope="module")
def built(aes_records, tmp_path_factory):
    """A report of the small seed 003 grid (both levels) and the spin-lock arbitration sweep."""
    tmp = tmp_path_factory.mktemp("report")
    (tmp / "res").mkdir()
    records.write(records.concat([aes_records[0], lock_records()[0]]), tmp / "res" / "r.parquet")
    return report.build([tmp / "res"], tmp / "rep")


def test_seed003_sentences_compare_both_levels_with_the_paper(aes_records):
    df, res = aes_records
    from s2mc.analysis import seeds
    texts = summaries.seed003_takeaways(df[df["source"] == "sim"], seeds.load_reference())
    paper_1core = {32: 37189, 64: 69901}                 # seed 003 Table 3, 1 core
    o1 = [res[b, 1, 1].cycles / paper_1core[b] for b in (32, 64)]
    o0 = [res[b, 1, 0].cycles / paper_1core[b] for b in (32, 64)]

    def span(xs):
        lo, hi = f"{min(xs):.2f}", f"{max(xs):.2f}"
        return lo if lo == hi else f"{lo}-{hi}"
    assert f"takes {span(o1)}x the paper's cycles" in texts[0]
    assert f"Compiled at -O0" in texts[0] and f"takes {span(o0)}x the paper's cycles on one core" in texts[0]
    assert 0.4 < min(o1) and max(o0) < 1.0 and min(o0) > 2 * max(o1)      # the sizes the report explains
    sp = res[64, 1, 1].cycles / res[64, 2, 1].cycles
    assert f"on 2 cores is {sp:.2f}, the paper's {69901 / 48358:.2f}" in texts[1]


def test_report_tables_are_short_pivots(built):
    md = built["md"].read_text()
    tables = [block for block in md.split("\n\n") if block.startswith("|")]
    # the coverage table (first: one row per seed table or figure), the model's (a row per configuration:
    # the paper's four sizes and each of ours, never two in one) and the citations (last) excepted
    model = next(t for t in tables if t.startswith("| configuration | Z | L | ceiling"))
    names = [line.split("|")[1].strip() for line in model.splitlines()[2:]]
    assert len(names) == len(set(names)) == 4 + 4 + 3        # paper; ours -O1/-O0 x 2 sizes; 3 lock policies
    # the GPU measurements' sources (one row per measured file) are a list of provenance, not a pivot
    sources = [t for t in tables if t.startswith("| file | GPU | date | commit | command |")]
    assert tables and max(len(t.splitlines()) for t in tables[1:-1] if t != model and t not in sources) <= 2 + 8
    assert "Compiled at -O0" in md and "Arbitration at 4 cores" in md


def _browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


WIDTHS = """<script>window.addEventListener('load', () => {
  const cw = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > cw + 0.5);
  document.body.setAttribute('data-check', JSON.stringify({cw: cw, sw: document.documentElement.scrollWidth,
    wide: wide.slice(0, 5).map(e => e.tagName), images: [...document.images].map(i => i.naturalWidth)}));
});</script>"""


def page_widths(html_path: Path, width: int) -> dict:
    """Open the page in headless Chromium at `width` pixels; what is wider than the window, and the
    images' natural widths (0: not loaded)."""
    probe = html_path.with_name("probe.html")
    probe.write_text(html_path.read_text().replace("</body>", WIDTHS + "</body>"))
    proc = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                           f"--window-size={width},900", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    m = re.search(r'data-check="([^"]*)"', proc.stdout)
    assert m, proc.stderr[-500:]
    return json.loads(m.group(1).replace("&quot;", '"'))


@pytest.mark.skipif(_browser() is None, reason="chromium is not installed (make setup installs it)")
@pytest.mark.parametrize("width", [800, 1200])
def test_report_html_is_no_wider_than_the_page(built, width):
    out = built
    got = page_widths(out["html"], width)
    assert got["sw"] <= got["cw"] and not got["wide"], got
    assert len(got["images"]) == len(out["plots"]) and all(w > 0 for w in got["images"]), got


@pytest.mark.skipif(_browser() is None, reason="chromium is not installed (make setup installs it)")
def test_the_width_probe_sees_a_table_that_is_too_wide(tmp_path):
    # The probe itself can fail: a 30-column table of long numbers does not fit 800 pixels.
    wide = pd.DataFrame([[f"{10 ** 12 + i:,}" for i in range(30)]], columns=[f"c{i}" for i in range(30)])
    page = tmp_path / "wide.html"
    page.write_text(report.render_html([report.Block("table", table=wide)], "wide").replace(
        "div.table{max-width:100%;overflow-x:auto}", ""))
    got = page_widths(page, 800)
    assert got["sw"] > got["cw"] and "TABLE" in got["wide"]


def test_the_model_sentence_says_where_the_papers_table_is_fastest():
    """Seed 003's Table 3 is fastest at 3 cores for 64 and 128 bytes and at 4 cores for 256 bytes
    (45,664, 85,669 and 172,687 cycles), 6%, 7% and 3% faster than on two cores: the sentence says so,
    never that the ceiling made two cores the fastest."""
    from s2mc.analysis import seeds
    ref = seeds.load_reference()
    r34 = ref[ref["experiment"].isin(["seed003_table3", "seed003_table4"])].assign(
        experiment="seed003 (paper)", run_id="ref-seed003")
    text = summaries.model_takeaways(report.model_table(r34))[0]
    assert "is why two cores" not in text
    gains = {64: 48358 / 45664 - 1, 128: 91428 / 85669 - 1, 256: 177448 / 172687 - 1}
    assert (f"fastest on 3 cores at 64 bytes ({gains[64]:.0%} faster than on two), on 3 cores at 128 bytes "
            f"({gains[128]:.0%}) and on 4 cores at 256 bytes ({gains[256]:.0%})") in text, text
    assert "ceiling, 1.80" in text


def test_the_native_sentence_says_tables_only_of_table_implementations():
    """A host that ran only VAES says nothing of cipher tables (VAES has none); one that also ran the
    T-table AES says its tables fit in the caches, and names which implementation uses instructions."""
    from test_report_artefacts import native_rows
    from s2mc.analysis import derive
    nat = summaries.native_runs(derive.derive_all(native_rows()))
    vaes = nat[nat["implementation"] == "vaes"]
    text = summaries.native_takeaways(vaes, 16)[0]
    assert "tables fit" not in text and "vaes uses the AES instructions" in text, text
    text = summaries.native_takeaways(nat[nat["implementation"].isin(["vaes", "ttable"])], 16)[0]
    assert "ttable's tables fit in them" in text and "vaes uses the AES instructions" in text, text


def test_where_the_cycles_go_is_one_configuration(aes_records):
    """Byte-oriented AES at -O1 and -O0, 32 and 64 bytes, 1-2 cores: the sentence and the figure take the
    same single configuration, and the figure's shares are that configuration's own counters, summed
    over its cores by hand from the simulator's results (never the mean of the -O1 and -O0 runs)."""
    from s2mc.analysis import plots
    df, res = aes_records
    runs = summaries.sim_runs(df)
    config, ids = summaries.stall_subject(runs)
    chosen = runs[runs["run_id"].isin(ids)]
    assert chosen[summaries.SIM_CONFIG].drop_duplicates().shape[0] == 1 and sorted(chosen["cores"]) == [1, 2]
    assert summaries.stall_takeaways(runs)[0].startswith(config + ":")
    opt = 0 if chosen["variant"].iloc[0].endswith("/O0") else 1
    shares = plots.stall_shares(df[df["run_id"].isin(ids)])
    for n in (1, 2):
        r = res[64, n, opt]
        total = lambda k: sum(c[k] for c in r.cores)   # noqa: E731
        parts = {"compute_cycles": total("instructions"), "bus_wait_cycles": total("bus_wait_cycles"),
                 "mem_latency_cycles": total("stall_cycles") - total("bus_wait_cycles"),
                 "sync_wait_cycles": total("sync_wait_cycles")}
        whole = sum(parts.values())
        for k, v in parts.items():
            assert shares.loc[n, k] == pytest.approx(100 * v / whole), (n, k)
    with pytest.raises(Exception, match="2 configurations"):
        plots.stall_shares(df[df["bytes"] == 64])


def _machine_params():
    from s2mc.common.variants import NOT_IN_VARIANT
    from s2mc.simulator.params import PARAMS
    return [p for p in PARAMS if p not in NOT_IN_VARIANT]


#: A value other than the default for every machine parameter a variant names (a new parameter in
#: simulator/params.toml needs one here, or a reason in common.variants.NOT_IN_VARIANT).
VARIED = {"mem_latency": 4, "arbitration": "fixed", "cache": "mesi", "cache_lines": 16, "cache_ways": 1,
          "line_words": 8, "cache_hit_latency": 3, "consistency": "tso", "store_buffer_entries": 2,
          "interconnect": "mesh", "coherence": "directory", "link_latency": 2, "router_latency": 2,
          "flit_words": 2}
#: The machine a parameter is varied from, where the default machine gives it no meaning: a cache's
#: shape needs a cache, the buffer's size store buffers, the network's parameters a network.
NETWORK = {"cache": "mesi", "coherence": "directory", "interconnect": "ring"}
BASE = {**dict.fromkeys(("cache_lines", "cache_ways", "line_words", "cache_hit_latency"), {"cache": "mesi"}),
        "store_buffer_entries": {"consistency": "tso"}, "coherence": {"cache": "mesi"},
        **dict.fromkeys(("interconnect", "link_latency", "router_latency", "flit_words"), NETWORK)}
#: ... and what must change with it: the directory needs a network (and a network a directory).
WITH = {"coherence": {"interconnect": "mesh"}}


def test_every_machine_parameter_is_varied():
    assert set(_machine_params()) == set(VARIED) and DEFAULT_RUN <= set(VARIED)


#: One parameter of each kind runs by default (the bus, a cache's shape under MESI, the memory model, the
#: network); the others take the same path through the report and run under `make test-all`.
DEFAULT_RUN = {"mem_latency", "cache_lines", "consistency", "link_latency"}


@pytest.mark.parametrize("name", [n if n in DEFAULT_RUN else pytest.param(n, marks=pytest.mark.slow)
                                  for n in sorted(VARIED)])
def test_no_table_merges_runs_that_differ_in_one_machine_parameter(name, tmp_path):
    """spin_lock.s on 1 and 2 cores with the default machine and with `name` changed (a cache parameter
    under MESI): two configurations in every table of the report that shows them, each row holding its
    own runs' numbers, and two lines in the figures (never one row of their mean)."""
    from s2mc.analysis import caches
    from s2mc.simulator.params import DEFAULTS
    from s2mc.common.variants import parse_cache_part
    machine = _machine_params()
    base = BASE.get(name, {})
    rows, cycles, variants = [], {}, []
    for i, cfg in enumerate([base, dict(base, **{name: VARIED[name]}, **WITH.get(name, {}))]):
        full = {k: cfg.get(k, DEFAULTS[k]) for k in machine}
        variant = "/".join(variant_parts(**full))
        variants.append(variant)
        for n in (1, 2):
            res = Machine(LOCK, cores=n, **full).run()
            rows += result_rows(res, f"{name}-{i}-{n}", experiment="core_scaling", workload="spin_lock",
                                variant=variant)
            cycles[variant, n] = res.cycles
    assert variants[0] != variants[1]
    df = records.make_records(rows)
    runs = summaries.sim_runs(df)
    t = summaries.pivot(runs, "cycles")
    assert len(t) == 2, t
    # each row holds its own runs' numbers (rows are ordered by their labels, not by `variants`)
    assert sorted(tuple(row[1:]) for row in t.itertuples(index=False)) == \
        sorted(tuple(f"{cycles[v, n]:,}" for n in (1, 2)) for v in variants), t
    labels, _ = summaries.legend_labels([(w, v, 0, "fast") for w, v in zip(["spin_lock"] * 2, variants)])
    assert len(set(labels)) == 2                                   # the figures' lines (plots._lines)
    if any(parse_cache_part(p) for v in variants for p in v.split("/")):
        # the caches section: a paragraph per machine apart from its caches (a network's runs are
        # their own), then its table; the two configurations are two rows in all
        parts, firsts, header = caches.report_parts(df), [], False
        for kind, body in parts:
            if kind == "p" and str(body).startswith("**"):
                header = True
            elif kind == "table" and header:
                firsts.append(body)
                header = False
        assert sum(len(t) for t in firsts) == 2, firsts
    (tmp_path / "res").mkdir()
    records.write(df, tmp_path / "res" / "r.parquet")
    md = report.build([tmp_path / "res"], tmp_path / "rep")["md"].read_text()
    scaling = md.split("## 2. Simulated scaling", 1)[1].split("\n## ", 1)[0]
    speedups = [b for b in scaling.split("\n\n") if b.startswith("| configuration |")][0]
    assert len(speedups.splitlines()) == 2 + 2, speedups


def test_two_sweeps_of_the_same_policies_are_never_one_sentence():
    """The arbitration sweep on spin_lock.s at L = 2 and at L = 4 (and burst4 beside fifo): one sentence
    per latency, each with its own runs' cycles, and burst4 never counted as fifo; the same variants run in
    two experiments stay two rows of the tables."""
    rows, res = [], {}
    for lat in (2, 4):
        for pol in ("fifo", "fixed", "burst4"):
            for n in (1, 4):
                r = Machine(LOCK, cores=n, arbitration=pol, mem_latency=lat).run()
                res[lat, pol, n] = r
                rows += result_rows(r, f"arb-{lat}-{pol}-{n}", experiment="arbitration_sweep", workload="spin_lock",
                                    variant="/".join(variant_parts(lat, pol)))
    df = records.make_records(rows)
    texts, caption = summaries.arbitration_takeaways(summaries.sim_runs(df))
    assert len(texts) == 2, texts
    for lat, text in zip((2, 4), texts):
        assert f"against fifo's {res[lat, 'fifo', 4].cycles:,} cycles" in text, text
        assert f"({res[lat, 'burst4', 4].cycles:,} cycles)" in text and f"({res[lat, 'fixed', 4].cycles:,} cycles)" in text
    assert ("L = 4" in texts[1]) and "L = 4" not in texts[0]
    again = df.assign(run_id="again-" + df["run_id"], experiment="other")
    runs = summaries.sim_runs(records.concat([df, again]))
    assert runs.groupby("config")[summaries.SIM_CONFIG].nunique().max().max() == 1
    assert len(summaries.pivot(runs, "cycles")) == 2 * 6


def test_the_latency_sentence_is_one_per_program():
    """A memory-latency sweep of two programs (spin_lock.s and ttas_lock.s at L = 1 and 2): one sentence
    each, with each program's own best speedups, never the two programs' L = 1 runs in one list."""
    ttas = assemble((ROOT / "workloads/asm/ttas_lock.s").read_text())
    rows, best = [], {}
    for name, prog in (("spin_lock", LOCK), ("ttas_lock", ttas)):
        for lat in (1, 2):
            res = {n: Machine(prog, cores=n, mem_latency=lat).run() for n in (1, 2)}
            best[name, lat] = max(res[1].cycles / res[n].cycles for n in (1, 2))
            for n, r in res.items():
                rows += result_rows(r, f"lat-{name}-{lat}-{n}", experiment="mem_latency_sweep", workload=name,
                                    variant="/".join(variant_parts(lat, "fifo")))
    texts = summaries.latency_takeaways(summaries.sim_runs(records.make_records(rows)))
    assert len(texts) == 2, texts
    for name, text in zip(("spin_lock", "ttas_lock"), texts):
        assert f"({name})" in text and text.count("L = 1:") == 1, text
        assert f"L = 1: {best[name, 1]:.2f}x" in text and f"L = 2: {best[name, 2]:.2f}x" in text


def test_the_ceiling_comparison_follows_the_numbers(aes_records):
    """Our ceiling (Z + L) / L = C1 / (L x A) against the paper's 266,173 / (2 x 74,000) at 256 bytes (here
    64 bytes: 69,901 / (2 x 19,444)): the words say higher or lower as the numbers do, also when the
    records make ours the lower (their 1-core accesses raised by half)."""
    from s2mc.analysis import seeds
    df, res = aes_records
    ref = seeds.load_reference()
    theirs = 69901 / (2 * 19444)
    r1 = res[64, 1, 1]
    ours = r1.cycles / (2 * sum(c["mem_accesses"] for c in r1.cores))
    text = summaries.seed003_takeaways(df[df["source"] == "sim"], ref)[1]
    assert f"({ours:.2f} for ours, {theirs:.2f} for theirs" in text
    assert ("so our ceiling is higher" in text) == (ours > theirs) and ("lower" in text) == (ours < theirs)
    one = (df["cores"] == 1) & (df["metric"] == "mem_accesses") & ~df["variant"].str.endswith("/O0")
    more = df.assign(value=df["value"].where(~one, df["value"] * 1.5))
    text = summaries.seed003_takeaways(more[more["source"] == "sim"], ref)[1]
    assert f"({ours / 1.5:.2f} for ours" in text and "more often per cycle, so our ceiling is lower" in text, text


def test_native_runs_of_two_hosts_are_never_one_row():
    """The same native configurations measured on two hosts (the second at half the throughput): the
    tables have a row per host with its own figures, and the sentence names the hosts."""
    from s2mc.analysis import derive
    from test_report_artefacts import native_rows
    a = native_rows("a")
    b = native_rows("b").assign(platform="other cpu")
    b = b.assign(value=b["value"].where(b["metric"] != "seconds", b["value"] * 2))
    b = b.assign(value=b["value"].where(b["metric"] != "bytes_per_second", b["value"] / 2))
    nat = summaries.native_runs(derive.derive_all(records.concat([a, b])))
    t = summaries.native_pivot(nat, "gb_per_second", lambda v: f"{v:.2f}")
    assert "host" in t.columns and len(t) == 2 * 8
    one = t[(t["implementation"] == "ttable") & (t["size"] == "16 MiB")].set_index("host")
    assert one.loc["test cpu", "1 thread"] == "1.00" and one.loc["other cpu", "1 thread"] == "0.50"
    text = summaries.native_takeaways(nat, 16)[0]
    assert "on test cpu" in text and "on other cpu" in text


def test_the_extra_cores_only_wait_only_on_a_saturated_bus():
    """Hand-made runs: a configuration whose bus is 60% busy at 4 cores (and still speeding up) is not said
    to have cores that 'only wait'; one at 99% with a flat speedup is."""
    runs = pd.DataFrame({"config": ["a"] * 3 + ["b"] * 3, "cores": [1, 2, 4] * 2,
                         "speedup": [1.0, 1.9, 3.6, 1.0, 1.9, 1.95], "bus_utilisation": [0.2, 0.35, 0.6, 0.5, 0.97, 0.99],
                         "workload": "x", "variant": "v", "bytes": 0, "mem_accesses": float("nan"),
                         "experiment": "e", "engine": "fast"})
    texts = summaries.scaling_takeaways(runs)
    assert texts[0].startswith("a:") and "only wait" not in texts[0] and texts[0].endswith("60% of the time.")
    assert texts[1].startswith("b:") and texts[1].endswith("so the extra cores only wait.")


def test_the_models_worst_miss_names_its_configuration(aes_records):
    df, _ = aes_records
    mt = report.model_table(df[df["source"] == "sim"])
    worst = mt.loc[(mt["model/measured"] - 1).abs().idxmax()]
    text = summaries.model_takeaways(mt)[-1]
    want = summaries.describe_variant(worst["workload"], worst["variant"])
    assert f"at {int(worst['cores'])} cores ({want}, {summaries.human_bytes(worst['bytes'])}," in text, text
