"""The report says exactly what was measured: every check here reads the produced artefact (the HTML
page, its Markdown twin, the figures as they are written) and fails on the defect it names."""
import html as _html
import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from s2mc.analysis import coverage, plots, records, report, summaries
from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid

ROOT = Path(__file__).resolve().parents[1]
SEEDS = Path("/work/shared/seeds")


def native_rows(run_id="nat", cores=(1, 2)):
    """Hand-made native records: AES (two implementations) and Camellia, each at two sizes and 1-2
    threads, with throughputs chosen so that every series differs (seconds = bytes / rate)."""
    rows = []
    rates = {("aes-128-ctr", "vaes"): 4e9, ("aes-128-ctr", "ttable"): 1e9, ("camellia-128-ctr", "auto"): 5e8,
             ("aes-256-ctr", "vaes"): 3e9}
    gain = {("aes-128-ctr", "vaes"): 1.95, ("aes-128-ctr", "ttable"): 1.9, ("camellia-128-ctr", "auto"): 1.45,
            ("aes-256-ctr", "vaes"): 1.9}
    for (wl, engine), rate in rates.items():
        for n in (16 << 10, 16 << 20):
            for t in cores:
                r = rate * (gain[wl, engine] if t == 2 else 1)
                base = dict(run_id=f"{run_id}-{wl}-{engine}-{n}-{t}", experiment="native_thread_scaling",
                            source="native", platform="test cpu", workload=wl, variant="contiguous",
                            engine=engine, cores=t, core=-1, bytes=n)
                rows.append(dict(base, metric="seconds", value=n / r))
                rows.append(dict(base, metric="bytes_per_second", value=r))
    return records.make_records(rows)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A report of a small seed 003 grid, byte and T-table AES at two core counts, and native runs,
    with a manifest that names a 16-CPU host."""
    tmp = tmp_path_factory.mktemp("artefacts")
    (tmp / "res").mkdir()
    ids = iter(range(10 ** 6))
    _, rows = run_grid(AesGrid(cores=(1, 2), sizes=(32, 64), opts=(1,)), new_run_id=lambda: f"s3-{next(ids)}",
                       experiment="seed003_grid")
    _, rows2 = run_grid(AesGrid(cores=(1, 2, 4), sizes=(64,), styles=("bytes", "ttable")),
                        new_run_id=lambda: f"sc-{next(ids)}", experiment="core_scaling")
    sim = records.make_records(rows + rows2)
    records.write(sim, tmp / "res" / "sim.parquet", params={"command": "test"})
    records.write(native_rows(), tmp / "res" / "native.parquet", params={"command": "test"})
    mans = list((tmp / "res").glob("*manifest.json"))
    assert len(mans) == 2
    for p in mans:
        m = json.loads(p.read_text())
        m.update(host_cpu="Test CPU 9000", host_cpu_count=16)
        p.write_text(json.dumps(m))
    return report.build([tmp / "res"], tmp / "rep", title="A lecturer's report")


def page(built) -> str:
    return built["html"].read_text()


def tables(html_text: str) -> list[list[list[str]]]:
    """Every table of the page as rows of cell texts (header row first)."""
    out = []
    for t in re.findall(r"<table>(.*?)</table>", html_text, re.S):
        rows = []
        for tr in re.findall(r"<tr>(.*?)</tr>", t, re.S):
            rows.append([_html.unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<t[hd]>(.*?)</t[hd]>", tr, re.S)])
        out.append(rows)
    return out


def section(html_text: str, anchor: str) -> str:
    """The HTML from the heading with this id to the next heading of the same or a higher level."""
    m = re.search(rf"<(h[23]) id='{anchor}'>", html_text)
    assert m, anchor
    level = int(m.group(1)[1])
    stop = re.compile("|".join(f"<h{i}[ >]" for i in range(1, level + 1)))
    rest = html_text[m.end():]
    n = stop.search(rest)
    return rest[: n.start() if n else len(rest)]


def test_the_title_is_the_reports(built):
    assert re.search(r"<title>(.*?)</title>", page(built)).group(1) == "A lecturer&#x27;s report"
    assert built["md"].read_text().startswith("# A lecturer's report\n")


def test_a_table_of_contents_links_every_section(built):
    text = page(built)
    nav = re.search(r"<nav class='toc'>(.*?)</nav>", text, re.S).group(1)
    links = re.findall(r"href='#([^']+)'", nav)
    ids = re.findall(r"<h[23] id='([^']+)'>", text)
    assert links == ids and len(ids) >= 12
    # the seeds measured on real hardware have headings of their own
    assert {"seed000", "seed001", "seed002-cpu", "seed002-gpu", "seed004"} <= set(ids)


def test_native_tables_keep_cipher_key_mode_and_implementation_apart(built):
    nat = section(page(built), "native")
    throughput, speedup = [t for t in tables(nat) if "cipher" in t[0]][:2]
    head = throughput[0]
    assert head[:7] == summaries.NATIVE_KEYS and head[7:] == ["1 thread", "2 threads"]
    keys = [tuple(r[:7]) for r in throughput[1:]]
    assert len(keys) == len(set(keys)) == 4 * 2          # 4 cipher/implementation series x 2 sizes
    # each row is its own series: the throughput read back is the one measured for it
    for r in throughput[1:]:
        _, cipher, bits, mode, impl, _, _ = r[:7]
        # two decimals from 1 up, three significant digits below (never 0.00)
        rate = {("aes", "128", "vaes"): "4.00", ("aes", "128", "ttable"): "1.00", ("camellia", "128", "auto"): "0.500",
                ("aes", "256", "vaes"): "3.00"}[cipher, bits, impl]
        assert mode == "ctr" and r[7] == rate, r
    # the speedup table agrees with the throughput table, row for row, and has no row of dashes
    for t_row, s_row in zip(throughput[1:], speedup[1:]):
        assert t_row[:7] == s_row[:7]
        assert float(s_row[8]) == pytest.approx(float(t_row[8]) / float(t_row[7]), abs=0.011)
        assert "–" not in s_row[7:]


def test_native_takeaways_name_each_series_and_the_manifests_host(built):
    nat = section(page(built), "native")
    assert "camellia-128 ctr, auto (contiguous): 1.45x at 16 MiB" in nat
    assert "aes-128 ctr, vaes (contiguous): 1.95x at 16 MiB" in nat
    assert "this host (16 CPUs)" in nat and "2 shared vCPUs" not in page(built)


def test_the_model_table_keeps_byte_and_ttable_styles_apart(built):
    model = section(page(built), "model")
    rows = [r for t in tables(model) for r in t[1:] if r[0].startswith("core_scaling")]
    names = [r[0] for r in rows]
    assert len(names) == len(set(names)) == 2
    assert any("bytes" in n for n in names) and any("ttable" in n for n in names)


def test_no_number_in_scientific_notation(built):
    text = re.sub(r"<[^>]+>", " ", page(built))
    assert not re.search(r"\d\.?\d*e[+-]\d+", text), re.search(r".{40}\d\.?\d*e[+-]\d+.{20}", text)


@pytest.mark.parametrize("v,text", [(1.2345e-5, "0.0000123"), (834216.0, "834,216"), (0.5, "0.500"),
                                    (12.345, "12.3"), (3.14159, "3.14"), (1234.5, "1,234"), (0.0, "0")])
def test_fixed_is_never_scientific(v, text):
    assert report.fixed(v) == text


def test_coverage_lists_every_table_and_figure_of_the_seeds():
    """The declaration against the seed texts themselves: every table and figure the five papers
    caption or refer to ("Table 3", "Fig. 10", "Figure 2", "TABLE IV") has its item, and no item names
    one the paper does not have."""
    if not SEEDS.exists():
        pytest.skip("the seed texts are not on this machine")
    roman = {"I": 1, "II": 2, "III": 3, "IV": 4, "V": 5, "VI": 6}
    kind_of = {"table": "Table", "fig.": "Figure", "figure": "Figure"}
    found = set()
    for f in sorted(SEEDS.glob("*.txt")):
        for kind, n in re.findall(r"\b(Table|TABLE|Fig\.|Figure)\s?([0-9]+|[IVX]+)\b", f.read_text()):
            found.add((f.name[:3], kind_of[kind.lower()], int(roman.get(n, n))))
    declared = {(it.seed, kind_of[it.item.rsplit(" ", 1)[0].lower()], int(it.item.rsplit(" ", 1)[1]))
                for it in coverage.ITEMS}
    assert found == declared, (sorted(found - declared), sorted(declared - found))


def test_coverage_in_the_report_is_the_declared_one_and_honest(built):
    text = page(built)
    cov = section(text, "coverage")
    t = tables(cov)[0]
    assert t[0] == ["seed", "item", "holds", "shown", "section", "why"]
    got = {(r[0], r[1]): r[3] for r in t[1:]}
    # the seed 003 grid ran: its tables are side by side; no seed 001/004 runs: paper only, saying why
    assert got["003", "Table 3"] == coverage.SIDE and got["003", "Table 4"] == coverage.SIDE
    row = next(r for r in t[1:] if r[:2] == ["001", "Table 1"])
    assert row[3] == coverage.PAPER and "no seed001_ours records" in row[5]
    # every section a row points to is a heading of the report
    headings = [_html.unescape(h) for h in re.findall(r"<h[23] id='[^']+'>(.*?)</h[23]>", text)]
    for r in t[1:]:
        assert any(h.startswith(r[4]) for h in headings), r
    # side by side means both numbers are in that section: the paper's Table 3 cycles and ours
    s3 = re.sub(r"<[^>]+>", "", section(text, "seed003"))
    assert " / 37,189 (" in s3


def test_docs_coverage_table_is_generated_from_the_declaration():
    docs = coverage.docs_block(ROOT / "docs" / "analysis.md")
    assert docs == coverage.markdown(), "run: python -m s2mc.analysis.coverage --write-docs docs/analysis.md"
    assert len(re.findall(r"^\| \d{3} \|", docs, re.M)) == len(coverage.ITEMS)


def _browser() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


# Every word of a table cell, caption or paragraph on one line: a word whose characters lie on two
# lines was broken mid-word (slashes, commas and hyphens are allowed break points: they split words here).
BROKEN = """<script>window.addEventListener('load', () => {
  const broken = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const re = /[^\\s\\/,-]+/g; let m;
    while ((m = re.exec(n.data)) !== null) {
      const r = document.createRange(); r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter(q => q.width > 0).map(q => Math.round(q.top)));
      if (tops.size > 1) broken.push(m[0]);
    }
  }
  document.body.setAttribute('data-broken', JSON.stringify(broken.slice(0, 10)));
});</script>"""


def broken_words(html_path: Path, width: int) -> list[str]:
    probe = html_path.with_name("probe_words.html")
    probe.write_text(html_path.read_text().replace("</body>", BROKEN + "</body>"))
    proc = subprocess.run([_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                           f"--window-size={width},900", "--dump-dom", probe.as_uri()],
                          capture_output=True, text=True, timeout=120)
    m = re.search(r'data-broken="([^"]*)"', proc.stdout)
    assert m, proc.stderr[-500:]
    return json.loads(_html.unescape(m.group(1)))


@pytest.mark.skipif(_browser() is None, reason="chromium is not installed (make setup installs it)")
@pytest.mark.parametrize("width", [800, 1200])
def test_no_word_is_broken_mid_word(built, width):
    assert broken_words(built["html"], width) == []


@pytest.mark.skipif(_browser() is None, reason="chromium is not installed (make setup installs it)")
def test_the_broken_word_probe_sees_a_broken_word(tmp_path):
    # The probe can fail: a long word in a narrow cell that may break anywhere.
    t = pd.DataFrame([["x " * 30 + "supercalifragilisticexpialidocious" * 3]], columns=["c"])
    p = tmp_path / "w.html"
    p.write_text(report.render_html([report.Block("table", table=t)], "w").replace(
        "overflow-wrap:normal", "overflow-wrap:anywhere").replace("</style>", "td{max-width:120px}</style>"))
    assert broken_words(p, 800)


@pytest.fixture
def figures(monkeypatch):
    """Every figure the plots write, inspected as it is saved: its legend texts and whether any text
    lies outside the figure (clipped in the PNG)."""
    seen = []
    real = plots._save

    def spy(fig, path):
        fig.tight_layout()
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        box = fig.bbox
        legends = [[t.get_text() for t in leg.get_texts()] for ax in fig.axes for leg in [ax.get_legend()] if leg]
        outside = []
        def out(e):
            return e.x0 < box.x0 - 1 or e.x1 > box.x1 + 1 or e.y0 < box.y0 - 1 or e.y1 > box.y1 + 1
        for ax in fig.axes:
            for t in ax.texts:
                if t.get_visible() and out(t.get_window_extent(r)):
                    outside.append(t.get_text())
            leg = ax.get_legend()
            if leg is not None and out(leg.get_window_extent(r)):
                outside.append(f"the legend of {ax.get_title()!r}")
        seen.append({"path": Path(path).name, "legends": legends, "outside": outside})
        return real(fig, path)
    monkeypatch.setattr(plots, "_save", spy)
    return seen


def test_figures_have_no_duplicate_legend_entries_and_no_clipped_text(figures, tmp_path):
    (tmp_path / "res").mkdir()
    records.write(native_rows(), tmp_path / "res" / "native.parquet")
    records.write(seed_rows(), tmp_path / "res" / "seeds.parquet")      # seeds' own runs: sequential/parallel
    ids = iter(range(10 ** 6))
    _, rows = run_grid(AesGrid(cores=(1, 2), sizes=(32, 64), styles=("bytes", "ttable")),
                       new_run_id=lambda: f"f-{next(ids)}", experiment="core_scaling")
    records.write(records.make_records(rows), tmp_path / "res" / "sim.parquet")
    report.build([tmp_path / "res"], tmp_path / "rep")
    assert {"throughput_vs_size.png", "sim_vs_native_speedup.png", "sim_cycles_speedup.png"} <= {
        f["path"] for f in figures}
    for f in figures:
        for legend in f["legends"]:
            assert len(legend) == len(set(legend)), (f["path"], legend)
        assert not f["outside"], f
    # the throughput figure (AES only, as its title says) keeps key size, mode and implementation apart
    tv = next(f for f in figures if f["path"] == "throughput_vs_size.png")
    ours = {t for t in tv["legends"][0] if t.startswith("ours:")}
    assert ours == {"ours: native AES-128-CTR, vaes (best threads)", "ours: native AES-128-CTR, ttable (best threads)",
                    "ours: native AES-256-CTR, vaes (best threads)",
                    "ours: native AES-128-ECB, native (best threads)",      # the seeds' runs (engine native)
                    "ours: native AES-128-ECB, opencl (best threads)"}      # and seed 004's OpenCL column


def seed_rows() -> pd.DataFrame:
    """Hand-made records of the seeds measured on a host: seed 001 (encryption only), seed 004 and seed
    002's Figure 10 at 1, 2, 4 and 8 threads."""
    rows = []

    def add(exp, variant, cores, n, metric, value, workload="aes-128-ecb-enc", engine="native"):
        rows.append(dict(run_id=f"{exp}-{variant}-{cores}-{n}", experiment=exp, source="native", platform="Test CPU",
                         workload=workload, variant=variant, engine=engine, cores=cores, core=-1, bytes=n,
                         metric=metric, value=value))
    for n in (256 << 10, 1 << 20):
        add("seed001_ours", "sequential/encryption-only", 1, n, "seconds", n / 2e9)
        add("seed001_ours", "openmp/encryption-only", 16, n, "seconds", n / 8e9)
    for n in (1 << 10, 1 << 20):
        add("seed004_ours", "sequential", 1, n, "seconds", n / 2e9)
        add("seed004_ours", "parallel", 16, n, "seconds", n / 6e9)
        add("seed004_ours", "opencl", 1, n, "seconds", n / 1e5, engine="opencl")   # slow: a ratio in the hundreds
    for t in (1, 2, 4, 8):
        add("seed002_cpu", "contiguous", t, 16 << 20, "bytes_per_second", 1e9 * min(t, 2),
            workload="camellia-128-ctr-enc", engine="sptable")
    return records.make_records(rows)


@pytest.mark.parametrize("cpus", [16, 2])
def test_host_sentences_come_from_the_manifest(tmp_path, cpus, undrawn):
    """The same records reported from a 16-CPU and a 2-CPU manifest: every sentence about the host says
    what the manifest says (never '2 shared vCPUs' as fixed text), and only the threads beyond its CPUs
    are called oversubscribed."""
    (tmp_path / "res").mkdir()
    records.write(seed_rows(), tmp_path / "res" / "seeds.parquet", params={"command": "test"})
    man = next((tmp_path / "res").glob("*manifest.json"))
    m = json.loads(man.read_text())
    m.update(host_cpu="Test CPU 9000", host_cpu_count=cpus)
    man.write_text(json.dumps(m))
    text = report.build([tmp_path / "res"], tmp_path / "rep")["html"].read_text()
    host = f"this host&#x27;s {cpus} CPUs (Test CPU 9000)"
    for anchor in ("seed001", "seed002-cpu", "seed004"):
        assert host in section(text, anchor), anchor
    assert "vCPU" not in text and "OpenCL kernels on Test CPU" in text
    assert not re.search(r"\d\.?\d*e[+-]\d+", re.sub(r"<[^>]+>", " ", text))     # no scientific notation
    oversubscribed = "so 4 and 8 threads are oversubscribed" in section(text, "seed002-cpu")
    assert oversubscribed == (cpus == 2)
