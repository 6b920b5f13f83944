"""Seeds 001 and 004 on this host beside the papers (s2mc.experiments.seeds_native): the
crossover rule by hand, the tables against the reference rows, a tiny real measurement, and the
report's section."""
import pytest

from s2mc.analysis import records, seeds
from s2mc.analysis import seeds_native as sn
from s2mc.experiments import seeds_native as measure
from s2mc.workloads import native

KB, MB = 1 << 10, 1 << 20


@pytest.mark.parametrize("seq,par,want", [
    ([1, 2, 4, 8], [2, 3, 3, 4], 4 * KB),       # parallel ahead from 4 KB on
    ([1, 2, 4, 8], [0.5, 3, 3, 4], 4 * KB),     # ahead at 1 KB, behind at 2 KB: the later one counts
    ([1, 2, 4, 8], [2, 3, 5, 9], None),         # never ahead
    ([1, 2, 4, 8], [2, 3, 5, 7], 8 * KB),       # only the largest
])
def test_crossover_by_hand(seq, par, want):
    sizes = [KB, 2 * KB, 4 * KB, 8 * KB]
    assert sn.crossover(sizes, seq, par) == want


def test_paper_crossovers_from_the_reference():
    """Seed 004 Table 2: parallel 0.9 vs sequential 0.7 ms at 8 KB, 1.0 vs 1.4 at 16 KB and ahead from there."""
    ref = seeds.load_reference()
    c = sn.seed004_crossovers(records.empty(), ref)
    assert c["paper, system 1 (i7 960)"] == 16 * KB
    assert c["ours"] is None


def _ours(rows):
    return records.make_records([dict(run_id="r", source="native", workload="aes-128-ecb-enc", metric="seconds",
                                      **r) for r in rows])


def test_seed004_beside_ratios():
    ref = seeds.load_reference()
    ours = _ours([dict(experiment="seed004_ours", variant="sequential", cores=1, bytes=KB, value=1e-6),
                  dict(experiment="seed004_ours", variant="parallel", cores=2, bytes=KB, value=4e-6)])
    t = sn.seed004_beside(ours, ref).set_index("bytes")
    assert t.loc[KB, "paper seq ms"] == pytest.approx(0.1)
    assert t.loc[KB, "ours seq ms"] == pytest.approx(1e-3)
    assert t.loc[KB, "paper/ours seq"] == pytest.approx(1e-4 / 1e-6)
    assert t.loc[KB, "paper/ours par"] == pytest.approx(8e-4 / 4e-6)
    assert len(t) == 25 and t["ours seq ms"].notna().sum() == 1


def test_seed001_beside_speedups():
    ref = seeds.load_reference()
    ours = _ours([dict(experiment="seed001_ours", variant="sequential/total", cores=1, bytes=256 * KB, value=2e-3),
                  dict(experiment="seed001_ours", variant="openmp/total", cores=2, bytes=256 * KB, value=1e-3)])
    t = sn.seed001_beside(ours, ref, "total").set_index("bytes")
    assert t.loc[256 * KB, "ours speedup"] == pytest.approx(2.0)
    assert t.loc[256 * KB, "paper seq s"] == pytest.approx(0.833)   # Table 1, 833 ms
    assert t.loc[256 * KB, "paper speedup"] == pytest.approx(0.833 / 0.519)


@pytest.mark.skipif(not native.available(), reason="native AES extension not built")
def test_tiny_measurement_and_report_section(tmp_path, undrawn):
    from s2mc.analysis import report
    df = measure.measure([256 * KB], [KB, 16 * KB], min_seconds=0.0, min_reps=1)
    assert set(df["experiment"]) == {"seed001_ours", "seed004_ours"}
    assert set(df[df["experiment"] == "seed001_ours"]["variant"]) == {
        "sequential/total", "openmp/total", "sequential/encryption-only", "openmp/encryption-only"}
    assert (df["value"] > 0).all() and (df["metric"] == "seconds").all()
    (tmp_path / "res").mkdir()
    records.write(df, tmp_path / "res" / "s.parquet")
    out = report.build([tmp_path / "res"], tmp_path / "rep")
    md = out["md"].read_text()
    assert "Seed 004 crossover" in md and "Seed 004 Table 2 (system 1) beside this host" in md
    assert "Seed 001 Tables 1/3, total time with file I/O" in md and "What differs" in md


def test_report_without_the_runs_says_how():
    from s2mc.analysis import report
    hint = "`python -m s2mc.experiments.seeds_native --out results/seeds_native.parquet`"
    for name, anchor in (("seed001_ours", "seed001"), ("seed004_ours", "seed004")):
        b = []
        (report._seeds_native_blocks if anchor == "seed001" else report._seed004_blocks)(
            b, records.empty(), seeds.load_reference(), "this host", lambda c, n: f"`{c} --out results/{n}.parquet`")
        assert b[0].kind == "h3" and b[0].anchor == anchor
        assert b[1].text.startswith(f"No {name} records in these results") and hint in b[1].text
