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
                 "sb's r0=0 r1=0 appeared 4 times in 12 instances (33.3 %).",
                 # a simulated column speaks of the model it ran
                 "On s2 under TSO: sb's r0=0 r1=0 appeared 2 times in 8 runs (25 %)."]
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


# -- section 4.8: Peterson's lock and the store buffers (s2mc.analysis.consistency) ----------------

def cons(workload, variant, metric, value, cores=2):
    return dict(run_id="c", experiment="consistency", source="sim", platform="s2", workload=workload,
                variant=variant, engine="fast", cores=cores, core=-1, bytes=0, cipher="", metric=metric,
                value=float(value))


CONS = [cons("peterson", "tso/plain", "litmus_runs", 50), cons("peterson", "tso/plain/count=1", "relaxed_runs", 3),
        cons("peterson", "tso/plain", "consistency_cycles", 40),
        cons("peterson", "tso/fence@f1", "litmus_runs", 50), cons("peterson", "tso/fence@f1/count=1", "relaxed_runs", 0),
        cons("peterson", "tso/fence@f1", "consistency_cycles", 47),
        cons("fill.s", "sc", "consistency_cycles", 1200, 4), cons("fill.s", "tso", "consistency_cycles", 1000, 4),
        cons("fill.s", "tso/fence@f0", "consistency_cycles", 1500, 4)]


def test_consistency_sentences_are_the_records():
    from s2mc.analysis import consistency
    df = records.make_records(CONS + ROWS)
    assert consistency.sentences(df) == [
        "peterson under TSO printed count=1 in 3 of 50 runs without fences, and in 0 of 50 runs with a fence at "
        "f1; the fence at f1 cost 7 cycles in run 0, every core starting at once (47 against 40).",
        "fill.s on 4 cores takes 1200 cycles under SC, 1000 under TSO (1.20x SC's speed), 1500 under TSO with a "
        "fence at f0 (0.80x SC's speed)."]
    t = consistency.store_table(df)
    assert t.to_dict("records") == [
        {"program": "fill.s", "cores": 4, "machine": m, "cycles": c, "speedup over sc": x}
        for m, c, x in (("sc", 1200, "1.00"), ("tso", 1000, "1.20"), ("tso/fence@f0", 1500, "0.80"))]
    assert consistency.sentences(frame()) == [] and consistency.blocks(frame(), lambda *a, **k: a) == []


def test_report_has_section_4_8_with_the_consistency_rows(tmp_path, undrawn):
    from s2mc.analysis import report
    (tmp_path / "res").mkdir()
    records.write(records.make_records(CONS), tmp_path / "res" / "cons.parquet")
    md = report.build([tmp_path / "res"], tmp_path / "rep")["md"].read_text()
    assert "### 4.8 Memory consistency on the simulated machine: a lock and the store buffers" in md
    assert "the fence at f1 cost 7 cycles in run 0" in md and "| fill.s | 4 | tso/fence@f0 | 1500 | 0.80 |" in md
    assert "4.7 Litmus tests" not in md          # no outcome counts: no litmus table
    # simulated litmus rows alone: the section does not claim the CPU measured them
    records.write(records.make_records([r for r in ROWS if r["source"] == "sim"]), tmp_path / "res" / "lit.parquet")
    md = report.build([tmp_path / "res"], tmp_path / "rep2")["md"].read_text()
    sec = md.split("### 4.7", 1)[1].split("###", 1)[0]
    assert "litmus-native" not in sec and "each test run 8 times under varied timings by `s2mc litmus`" in sec


def test_the_consistency_step_records_what_the_runs_gave(monkeypatch):
    """s2mc.experiments.consistency's rows against the other engine and independent runs: each litmus
    count on the reference model (the engines agree run for run), Peterson's run 0 cycles and
    store_fill.s's cycles recomputed here with the fences written into the program text."""
    from s2mc.experiments import consistency, litmus
    from s2mc.isa.assembler import assemble
    from s2mc.simulator import Machine
    from s2mc.simulator.reference import ReferenceMachine
    monkeypatch.setattr(consistency, "RUNS", {True: 15, False: 15})
    df = consistency.measure(quick=True, native=False)
    assert set(df["source"]) == {"sim"} and set(df["experiment"]) == {"consistency"}
    got = {(r.workload, r.variant, r.metric): r.value for r in df.itertuples(index=False)}
    for name, model in (("sb", "tso"), ("mp", "pso"), ("2+2w", "pso")):
        for fenced, fencing in ((False, "plain"), (True, "mfence")):
            r = litmus.run_litmus(f"{name}{'_fence' if fenced else ''}.s", model, "reference", 15, 0)
            for out, n in r.outcomes.items():
                assert got[(name, f"{model}/{fencing}/{r.test.label(out)}", "outcome_count")] == n
    for fences, fencing in ((None, "plain"), (("f1",), "fence@f1")):
        r = litmus.run_litmus("peterson.s", "tso", "reference", 15, 0, fences=fences)
        assert got[("peterson", f"tso/{fencing}", "litmus_runs")] == 15
        assert got[("peterson", f"tso/{fencing}/count=1", "relaxed_runs")] == r.outcomes.get("1\n", 0)
    one = litmus.load("peterson.s", fences=("f1",)).program
    ref = [ReferenceMachine(p.code_image, p.data_image, p.entry, cores=2, consistency="tso", mem_words=4096).run()["cycles"]
           for p in (litmus.load("peterson.s").program, one)]
    assert [got[("peterson", f"tso/{f}", "consistency_cycles")] for f in ("plain", "fence@f1")] == ref
    fill = (litmus.FOLDER.parent / "asm" / "store_fill.s").read_text()
    want = {"sc": Machine(assemble(fill), cores=4).run().cycles,
            "tso": Machine(assemble(fill), cores=4, consistency="tso").run().cycles,
            "tso/fence@f0": Machine(assemble(fill.replace("\n:f0 ", "\n:f0 fence ")), cores=4,
                                    consistency="tso").run().cycles}
    assert {v: got[("store_fill.s", v, "consistency_cycles")] for v in want} == want
