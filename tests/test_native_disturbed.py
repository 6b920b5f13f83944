"""Real-hardware rows a user can trust on a busy machine: `s2mc native` times by s2mc.common.measure's
method and says, in the line, the records and the legend, which rows the machine's other load
disturbed. The grid runs here on fake benches with a scripted clock (the C++ work replaced, the
method and the tables real), so every figure is worked out by hand."""
import json

import pytest
from click.testing import CliRunner

from s2mc.analysis import records
from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from s2mc.cli.main import cli  # noqa: E402
from s2mc.workloads.native.grid import NativeGrid, format_summary, run_grid, summary_legend  # noqa: E402


class FakeBench:
    """A bench whose every sample takes loops x the next scripted per-run time (the last repeats)."""

    def __init__(self, engine, nbytes, per_run):
        self.engine, self.bytes, self.total_bytes = engine, nbytes, nbytes
        self.per_run, self.i = list(per_run), 0

    def sample(self, loops):
        t = self.per_run[min(self.i, len(self.per_run) - 1)]
        self.i += 1
        return loops * t, loops * t * 3e9      # a 3 GHz time-stamp counter


def fake(script):
    """make(...) for run_grid: script[(engine, threads)] is the per-run times of that bench."""
    return lambda engine, impl, strategy, t, n, bb: FakeBench("ttable" if engine == "ours" else engine, n,
                                                              script[(engine, t)])


MB = 1 << 20
STEADY = [4e-3]                                     # 1 MiB in 4 ms: 0.262 GB/s, every sample
NOISY = [4e-3, 4e-3, 4e-3, 6e-3, 4e-3, 8e-3]        # warm-up, calibration, then 4 6 4 8 8 ms: MAD 2 of 6 ms


def grid(**kw):
    return NativeGrid(**{**dict(threads=(1,), sizes=(MB,), impls=("ttable",), min_seconds=0, min_reps=5), **kw})


def test_a_steady_row_is_its_median_and_not_disturbed():
    (s,), rows = run_grid(grid(), run_id="r", make=fake({("ours", 1): STEADY}))
    assert s["seconds"] == 4e-3 and s["spread"] == 0 and not s["disturbed"] and s["samples"] == 5
    assert s["gb_per_s"] == pytest.approx(MB / 4e-3 / 1e9) and s["cycles_per_byte"] == pytest.approx(4e-3 * 3e9 / MB)
    assert "DISTURBED" not in format_summary(s) and "±0.0%" in format_summary(s)
    df = records.make_records(rows)
    assert not df["disturbed"].any() and (df["spread"] == 0).all()


def test_a_noisy_row_is_marked_disturbed_in_the_line_the_records_and_the_legend():
    (s,), rows = run_grid(grid(), run_id="r", make=fake({("ours", 1): NOISY}))
    # samples 4 6 4 8 8 ms: median 6, deviations 2 0 2 2 2 -> MAD 2 ms, a third of the median
    assert s["seconds"] == 6e-3 and s["spread"] == pytest.approx(1 / 3) and s["disturbed"]
    line = format_summary(s)
    assert line.endswith("DISTURBED: spread 33.3% > 5%") and "±33.3%" in line
    df = records.make_records(rows)
    assert df["disturbed"].all() and df["spread"].tolist() == pytest.approx([1 / 3] * 3)
    assert set(df["metric"]) == {"seconds", "bytes_per_second", "cycles_per_byte"}
    assert df.loc[df["metric"] == "seconds", "value"].iloc[0] == 6e-3      # the median, not the best 4 ms
    assert "1 of 1 rows DISTURBED" in summary_legend([s])
    assert "DISTURBED" not in summary_legend([dict(s, disturbed=False)])


def test_two_threads_beyond_twice_one_thread_are_disturbed():
    # one thread 4 ms (its run was slowed), two threads 1 ms: 4x the rate, above the 2x perfect scaling allows
    ss, rows = run_grid(grid(threads=(2, 1)), run_id="r", make=fake({("ours", 1): STEADY, ("ours", 2): [1e-3]}))
    assert [s["threads"] for s in ss] == [1, 2]          # fewer threads first: each checked against them
    assert not ss[0]["disturbed"] and ss[1]["disturbed"]
    assert ss[1]["why"] == "2 threads ran 4.00x the rate of 1, above the 2x that perfect scaling allows"
    df = records.make_records(rows)
    assert df.groupby("cores")["disturbed"].all().to_dict() == {1: False, 2: True}
    # at twice the rate exactly it is fine
    ss, _ = run_grid(grid(threads=(1, 2)), run_id="r", make=fake({("ours", 1): STEADY, ("ours", 2): [2e-3]}))
    assert not any(s["disturbed"] for s in ss)


def test_openssl_is_timed_beside_ours_and_its_row_is_disturbed_with_it():
    # OpenSSL's samples 5 ms x load, load 1 3 1.5 7 1: median 7.5 ms, MAD 2.5 ms (a third); ours steady 2 ms
    load = [1, 1, 1, 3, 1.5, 7, 1]
    script = {("ours", 1): [2e-3], ("openssl", 1): [5e-3 * x for x in load]}
    (s,), rows = run_grid(grid(vs_openssl=True), run_id="r", make=fake(script))
    assert s["ratio"] == pytest.approx(3.75) and s["ratio_spread"] == pytest.approx(1 / 3)
    assert s["spread"] == 0 and s["openssl_spread"] == pytest.approx(1 / 3)
    assert s["disturbed"] and s["why"] == "openssl spread 33.3% > 5%"
    line = format_summary(s)
    assert "ratio  3.75x  ±33.3%" in line and line.endswith("DISTURBED: openssl spread 33.3% > 5%")
    df = records.make_records(rows)
    ratio = df[df["metric"] == "speedup_vs_openssl"]
    assert ratio["value"].iloc[0] == pytest.approx(3.75) and ratio["disturbed"].iloc[0]
    assert ratio["spread"].iloc[0] == pytest.approx(1 / 3)
    ossl = df[(df["engine"] == "openssl") & (df["metric"] == "seconds")]
    assert ossl["value"].iloc[0] == pytest.approx(7.5e-3) and ossl["disturbed"].iloc[0]
    # both steady: not disturbed
    (s,), _ = run_grid(grid(vs_openssl=True), run_id="r", make=fake({("ours", 1): [2e-3], ("openssl", 1): [5e-3]}))
    assert not s["disturbed"] and s["ratio"] == pytest.approx(2.5) and s["ratio_spread"] == 0


def test_a_clock_too_coarse_for_the_work_gets_more_loops_never_zero():
    # every run reads 1 ns: the samples are calibrated to >= 1 ms, and the throughput is 16 bytes / 1 ns
    (s,), _ = run_grid(grid(sizes=(16,)), run_id="r", make=fake({("ours", 1): [1e-9]}))
    assert s["gb_per_s"] == pytest.approx(16.0) and s["reps"] >= 5 * 1_000_000
    assert " 16.00 GB/s" in format_summary(s)
    # a tiny throughput keeps its digits
    assert "0.00262 GB/s" in format_summary(dict(s, gb_per_s=0.00262))


def test_native_cli_prints_spreads_and_records_them(tmp_path):
    out = tmp_path / "n.csv"
    r = CliRunner().invoke(cli, ["native", "--threads", "1", "--bytes", "4K", "--impl", "ttable", "--vs-openssl",
                                 "--min-seconds", "0", "--reps", "3", "--out", str(out), "-q"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    head, row = r.stdout.splitlines()[:2]
    assert head.count("spread") == 3 and row.count("±") == 3
    assert "throughput: the median of the timed samples" in r.stdout
    df = records.read(out)
    assert set(df["spread"] >= 0) == {True} and df["disturbed"].dtype == bool
    j = json.loads(CliRunner().invoke(cli, ["native", "--threads", "1", "--bytes", "4K", "--impl", "ttable",
                                            "--min-seconds", "0", "--json"]).stdout)
    assert {"spread", "disturbed", "why", "samples"} <= set(j["results"][0])


def test_native_help_says_the_median_is_reported():
    text = CliRunner().invoke(cli, ["native", "--help"], terminal_width=200).stdout
    assert "best run is reported" not in text and "the median sample is reported" in text
