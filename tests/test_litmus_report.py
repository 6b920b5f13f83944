"""The report's litmus section (s2mc.analysis.litmus_native) from hand-made records: every cell and
sentence checked against counts worked out by hand, simulated rows in columns of their own, runs of
the same machine summed."""
import pandas as pd

from s2mc.analysis import litmus_native, records


def row(run, source, platform, test, variant, count):
    return dict(run_id=run, experiment="litmus_native", source=source, platform=platform, workload=test,
                variant=variant, engine="openmp" if source == "native" else "fast", cores=2, core=-1, bytes=0,
                cipher="", metric="outcome_count", value=float(count))


CPU = "Test CPU 9000"
ROWS = [
    # two native runs of SB without fences: 3 + 1 relaxed outcomes of 8 + 4 instances
    row("a", "native", CPU, "sb", "plain/r0=0 r1=0", 3), row("a", "native", CPU, "sb", "plain/r0=1 r1=0", 5),
    row("b", "native", CPU, "sb", "plain/r0=0 r1=0", 1), row("b", "native", CPU, "sb", "plain/r0=1 r1=1", 3),
    row("a", "native", CPU, "sb", "mfence/r0=0 r1=0", 0), row("a", "native", CPU, "sb", "mfence/r0=1 r1=1", 8),
    # a CPU that broke TSO once in MP
    row("a", "native", CPU, "mp", "plain/r0=1 r1=0", 1), row("a", "native", CPU, "mp", "plain/r0=0 r1=0", 9),
    # the simulated machine under TSO, its model before the fencing
    row("s", "sim", "s2", "sb", "tso/plain/r0=0 r1=0", 2), row("s", "sim", "s2", "sb", "tso/plain/r0=0 r1=1", 6),
    # not a litmus row: ignored
    dict(row("x", "native", CPU, "sum", "ttable", 1), metric="seconds", unit="s"),
]


def frame():
    return records.make_records(ROWS)


def test_interesting_table_counts_and_verdicts():
    t = litmus_native.interesting_table(litmus_native.outcome_rows(frame()))
    real, sim = f"real {CPU}", "simulated s2 tso"
    assert list(t.columns) == ["test", "fences", "outcome", "SC", "TSO", "PSO", real, sim]
    cells = {(r.test, r.fences): r for r in t.itertuples(index=False)}
    assert list(cells) == [("sb", "plain"), ("sb", "mfence"), ("mp", "plain")]   # declared order
    sb = t.iloc[0]
    assert (sb["outcome"], sb["SC"], sb["TSO"], sb["PSO"]) == ("r0=0 r1=0", "forbidden", "allowed", "allowed")
    assert sb[real] == "4 / 12" and sb[sim] == "2 / 8"
    assert t.iloc[1][real] == "0 / 8" and t.iloc[1]["TSO"] == "forbidden" and t.iloc[1][sim] == "–"
    assert t.iloc[2][real] == "1 / 10" and t.iloc[2]["PSO"] == "allowed"


def test_sentences_are_the_counts():
    s = litmus_native.sentences(litmus_native.outcome_rows(frame()))
    assert s == [f"On {CPU}: 1 of the 2 outcomes TSO forbids appeared: mp's r0=1 r1=0 (1 of 10); "
                 "sb's r0=0 r1=0 appeared 4 times in 12 instances (33.3 %)."]
    kept = frame()
    kept = kept[kept["workload"] != "mp"]
    assert litmus_native.sentences(litmus_native.outcome_rows(kept))[0].startswith(
        f"On {CPU}: the outcome TSO forbids did not appear; sb's")


def test_outcomes_table_has_every_outcome_once():
    t = litmus_native.outcomes_table(litmus_native.outcome_rows(frame()))
    got = {(r[0], r[1], r[2]): r[3:] for r in t.itertuples(index=False)}
    assert got[("sb", "plain", "r0=0 r1=0")] == (4, 2)
    assert got[("sb", "plain", "r0=1 r1=0")] == (5, "–")
    assert got[("sb", "plain", "r0=0 r1=1")] == ("–", 6)
    assert len(t) == 8


def test_report_has_the_section_only_with_litmus_rows(tmp_path, undrawn):
    from s2mc.analysis import report
    (tmp_path / "res").mkdir()
    records.write(frame(), tmp_path / "res" / "lit.parquet")
    md = report.build([tmp_path / "res"], tmp_path / "rep")["md"].read_text()
    assert "### 4.7 Litmus tests: this CPU beside the memory models" in md
    assert "| sb | plain | r0=0 r1=0 | forbidden | allowed | allowed | 4 / 12 | 2 / 8 |" in md
    assert litmus_native.blocks(records.make_records([ROWS[-1]]), report.Block) == []
    assert litmus_native.outcome_rows(pd.DataFrame(columns=records.COLUMNS)).empty
