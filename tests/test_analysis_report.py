"""Reference tables, the experiment registry, plots, `s2mc report` and `s2mc demo`."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from s2mc.analysis import model, records, report, seeds
from s2mc.cli.main import cli
from s2mc.common.errors import S2mcError

PNG = b"\x89PNG\r\n\x1a\n"


def small_results() -> pd.DataFrame:
    """Simulated runs (1, 2, 4 cores x 32, 64 B, with per-core counters) and native runs."""
    rows = []
    base = dict(experiment="seed003_grid", source="sim", platform="s2", workload="aes-128-ecb-enc",
                variant="bytes/interleaved", engine="fast")
    for nbytes in (32, 64):
        acc = 320.0 * nbytes
        m = model.fit(3.7 * acc, acc, 2)
        for cores in (1, 2, 4):
            rid = f"sim-{nbytes}-{cores}"
            cyc = round(m.cycles(cores))
            instr = acc * (m.think + 1)
            wait = max(0.0, cyc * cores - instr - acc)
            tot = dict(cycles=cyc, instructions=instr, mem_reads=0.7 * acc, mem_writes=0.3 * acc,
                       bus_wait_cycles=wait, stall_cycles=wait + acc, bus_busy_cycles=2 * acc,
                       sync_wait_cycles=0, mem_latency=2)
            for k, v in tot.items():
                rows.append(dict(base, run_id=rid, cores=cores, core=-1, bytes=nbytes, metric=k,
                                 value=round(v)))
                if k not in ("cycles", "mem_latency"):
                    for c in range(cores):
                        rows.append(dict(base, run_id=rid, cores=cores, core=c, bytes=nbytes,
                                         metric=k, value=round(v / cores)))
            for c in range(cores):
                rows.append(dict(base, run_id=rid, cores=cores, core=c, bytes=nbytes,
                                 metric="cycles", value=cyc))
    for nbytes in (1 << 20, 16 << 20):
        for t in (1, 2):
            rows.append(dict(run_id=f"nat-{nbytes}-{t}", experiment="native_thread_scaling",
                             source="native", platform="cpu", workload="aes-128-ctr",
                             variant="contiguous", engine="vaes", cores=t, bytes=nbytes,
                             metric="seconds", value=nbytes / 2e9 / (1.9 if t == 2 else 1)))
    return records.make_records(rows)


# -- reference data ------------------------------------------------------------------------------

def test_reference_csvs_match_the_transcription(tmp_path):
    for name, df in seeds.build().items():
        on_disk = records.read(seeds.REFERENCE_DIR / f"{name}.csv")
        pd.testing.assert_frame_equal(on_disk, df)
    assert (seeds.REFERENCE_DIR / "README.md").read_text(encoding="utf-8") == seeds.render_readme()


@pytest.mark.parametrize("experiment, where, value", [
    ("seed003_table3", dict(cores=4, bytes=256), 172687),
    ("seed003_table4", dict(cores=3, bytes=64), 62383),
    ("seed000_table1", dict(cores=8, bytes=16 << 20, variant="extended-1024"), 0.178),
    ("seed000_table2", dict(bytes=32 << 20), 0.01371405),
    ("seed001_table2", dict(cores=4, bytes=4 << 20), 5.266),
    ("seed001_table5", dict(cores=8, bytes=256 << 20), 131.613),
    ("seed001_table6", dict(variant="gpu/encryption-only", bytes=8 << 20), 18.31),
    ("seed004_table2", dict(variant="gpu", bytes=1 << 30), 1.972),
    ("seed004_table3", dict(variant="parallel", bytes=1 << 20), 0.0571),
    ("seed002_text", dict(variant="device-resident", platform="NVIDIA Tesla C2050 (seed 002)"), 73.4),
])
def test_reference_spot_values(experiment, where, value):
    df = seeds.load_reference(experiment)
    for k, v in where.items():
        df = df[df[k] == v]
    assert len(df) == 1 and df["value"].iloc[0] == pytest.approx(value)
    assert (df["source"] == "reference").all()


def test_reference_row_counts_and_citations():
    df = seeds.load_reference()
    counts = df["experiment"].value_counts()
    assert counts["seed003_table3"] == 14 and counts["seed000_table1"] == 36
    assert counts["seed001_table1"] == 33 and counts["seed004_table2"] == 75
    for exp in counts.index:
        assert "seed" in seeds.citation(exp)
    with pytest.raises(S2mcError, match="unknown experiment"):
        seeds.load_reference("seed009_table1")


def test_reference_rows_changed_by_a_caller_are_not_the_next_callers():
    """The CSVs are read once a process: every caller gets its own copy to change."""
    on_disk = records.read(sorted(seeds.REFERENCE_DIR.glob("seed*.csv"))[0])
    first = seeds.load_reference()
    first.loc[first.index[0], "value"] = -1.0
    first["workload"] = "changed"
    again = seeds.load_reference()
    assert again["value"].iloc[0] == on_disk["value"].iloc[0] != -1.0
    assert (again["workload"] != "changed").all()


# -- report ----------------------------------------------------------------------------------------

def _check_report(out: Path, main: pd.DataFrame | None = None):
    md = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    pngs = sorted(out.glob("*.png"))
    assert pngs
    for p in pngs:
        data = p.read_bytes()
        assert data.startswith(PNG) and len(data) > 2000, p
        assert f"]({p.name})" in md and f"src='{p.name}'" in page
    return md, page, pngs


def test_report_on_small_results(tmp_path):
    res = tmp_path / "results"
    res.mkdir()   # records.write creates no folders (s2mc.common.outputs)
    records.write(small_results(), res / "small.parquet", params={"what": "test"})
    out = report.build([res], tmp_path / "report")
    md, page, pngs = _check_report(tmp_path / "report")
    names = {p.name for p in pngs}
    assert {"seed003_table3.png", "seed003_table4.png", "sim_cycles_speedup.png",
            "sim_stall_breakdown.png", "model_vs_sim.png", "model_vs_seed003.png",
            "sim_vs_native_speedup.png", "throughput_vs_size.png"} <= names
    main = out["main_table"]
    # every paper cell (14) plus our 32 B / 4-core run the paper does not have
    assert len(main) == 15
    ours = main[main["cycles (ours)"].notna()]
    assert sorted(zip(ours["bytes"], ours["cores"])) == [(32, 1), (32, 2), (32, 4), (64, 1),
                                                         (64, 2), (64, 4)]
    one = main[(main["bytes"] == 256) & (main["cores"] == 4)].iloc[0]
    assert one["cycles (paper)"] == 172687 and one["stalls (paper)"] == 289148
    # the cycles table: a row per size, a column per core count, cells 'ours / paper (ratio)'
    row256 = next(line for line in md.splitlines() if line.startswith("| 256 |"))
    assert row256.endswith("| – / 172,687 |") and "| 32 | " in md and " (0." in md
    assert "<table>" in page and "172,687" in page
    assert "## 4. Real hardware" in md and "contiguous" in md


def test_report_cli_and_errors(tmp_path):
    res = tmp_path / "r.csv"
    records.write(small_results(), res)
    runner = CliRunner()
    r = runner.invoke(cli, ["report", str(res), "--out", str(tmp_path / "rep"), "--json"])
    assert r.exit_code == 0, r.output
    assert '"html"' in r.output
    _check_report(tmp_path / "rep")
    r = runner.invoke(cli, ["report", str(tmp_path / "missing"), "--out", str(tmp_path / "x")])
    assert r.exit_code == 1 and "missing: no such file" in r.output
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(records.COLUMNS) + "\nr,e,gpu,p,w,v,,1,-1,0,cycles,1,cycles\n")
    r = runner.invoke(cli, ["report", str(bad), "--out", str(tmp_path / "y")])
    assert r.exit_code == 1 and "'source'" in r.output


def test_demo_with_every_part_skipped_still_writes_the_report(tmp_path):
    r = CliRunner().invoke(cli, ["demo", "--results", str(tmp_path / "res"), "--out",
                                 str(tmp_path / "rep"), "--skip", "sim", "--skip", "native",
                                 "--skip", "gpu", "--quiet"])
    assert r.exit_code == 0, r.output
    assert "Report:" in r.output and "172,687" in r.output
    assert (tmp_path / "rep" / "report.html").exists()
    _check_report(tmp_path / "rep")


def test_report_marks_disturbed_native_figures(tmp_path):
    """A native row the records flag disturbed is marked in the report's throughput and speedup tables,
    with a paragraph that counts them; the quiet rows are not."""
    rows = []
    for nbytes in (1 << 20, 16 << 20):
        for t in (1, 2):
            rows.append(dict(run_id=f"nat-{nbytes}-{t}", experiment="native", source="native", platform="cpu",
                             workload="aes-128-ctr", variant="contiguous", engine="vaes", cores=t, bytes=nbytes,
                             metric="seconds", value=20.0 if nbytes == 16 << 20 and t == 2 else nbytes / 2e9 / t,
                             spread=0.3 if t == 2 else 0.01, disturbed=nbytes == 16 << 20 and t == 2))
    res = tmp_path / "results"
    res.mkdir()
    records.write(records.make_records(rows), res / "n.parquet")
    report.build([res], tmp_path / "report")
    md = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    table = [line for line in md.split("## 4.")[1].splitlines() if line.startswith("| ")]
    marked = [line for line in table if "(disturbed)" in line]
    # the 16 MiB row of the throughput table and of the speedup table, at 2 threads only
    assert len(marked) == 2 and all("16 MiB" in line or "16M" in line for line in marked)
    assert all(line.count("(disturbed)") == 1 and line.rstrip(" |").endswith("(disturbed)") for line in marked)
    assert "1 of these figures is marked *disturbed*" in md
    # 16 MiB in 20 s: 0.000839 GB/s, with its digits (not 0.00), and a speedup of 0.000419
    assert "0.000839 (disturbed)" in md and "0.000419 (disturbed)" in md and "| 0.00 |" not in "\n".join(table)


def test_the_same_records_given_twice_count_once(tmp_path):
    """A file named twice, or named beside the folder that holds it: every record is read once, and
    the report's count is the file's."""
    res = tmp_path / "results"
    res.mkdir()
    df = small_results()
    path = records.write(df, res / "small.parquet")
    for given in ([path, path], [res, path], [res, res / "." / "small.parquet"]):
        assert len(records.load(given)) == len(df), given
    r = CliRunner().invoke(cli, ["report", str(path), str(path), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert f": {len(df)} records of {df['run_id'].nunique()} runs" in md


def test_a_folder_without_records_is_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no records here\n")
    r = CliRunner().invoke(cli, ["report", str(tmp_path / "empty"), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("s2mc: error: report: ") and "empty" in lines[0], r.output
    assert "no records" in lines[0]
    assert not (tmp_path / "rep").exists()
