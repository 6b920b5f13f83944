"""Derived metrics and the bus model on hand-made frames, against hand-computed values."""
from __future__ import annotations

import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from s2mc.analysis import derive, model, records, seeds
from s2mc.common.errors import S2mcError


def _sim_frame():
    rows = []

    def add(rid, cores, metrics):
        for m, v in metrics.items():
            rows.append(dict(run_id=rid, source="sim", experiment="t", workload="aes-128-ecb-enc",
                             cores=cores, core=-1, bytes=64, metric=m, value=v))
    # 1 core: 100 cycles, 80 instructions, 10 accesses at L = 2 -> 10 stall cycles, no waiting;
    # two of the accesses are xchg (a read and a write each): 6 + 6 reads and writes, 10 accesses
    add("a", 1, dict(cycles=100, instructions=80, stall_cycles=10, bus_wait_cycles=0,
                     mem_reads=6, mem_writes=6, mem_accesses=10, bus_busy_cycles=20))
    # 2 cores: 60 cycles, the same work, 20 cycles of bus wait summed over the cores
    add("b", 2, dict(cycles=60, instructions=80, stall_cycles=30, bus_wait_cycles=20,
                     mem_reads=6, mem_writes=6, mem_accesses=10, bus_busy_cycles=20))
    return records.make_records(rows)


def _get(df, run, metric):
    v = df[(df["run_id"] == run) & (df["metric"] == metric)]["value"]
    assert len(v) == 1, (run, metric, len(v))
    return float(v.iloc[0])


def test_counter_metrics_and_speedup():
    out = derive.derive_all(_sim_frame())
    assert _get(out, "b", "speedup") == pytest.approx(100 / 60)
    assert _get(out, "b", "efficiency") == pytest.approx(100 / 60 / 2)
    assert _get(out, "a", "speedup") == 1.0
    assert _get(out, "b", "stall_fraction") == pytest.approx(30 / (60 * 2))
    assert _get(out, "a", "stall_fraction") == pytest.approx(0.1)
    assert _get(out, "b", "bus_wait_fraction") == pytest.approx(20 / 120)
    assert _get(out, "b", "bus_utilisation") == pytest.approx(20 / 60)
    assert _get(out, "b", "mem_latency_cycles") == 10
    assert _get(out, "b", "mem_accesses") == 10      # the measured count, not reads + writes
    assert _get(out, "b", "compute_cycles") == 80
    assert _get(out, "b", "ipc") == pytest.approx(80 / 60)
    # derive_all adds each metric once and never duplicates measured ones
    assert not out.duplicated(subset=["run_id", "core", "metric"]).any()
    again = derive.derive_all(out)
    assert len(again) == len(out)


def test_mem_accesses_is_never_reads_plus_writes():
    # one xchg at L = 3 without stall counters: 1 read, 1 write, 1 access -> 2 latency cycles
    rows = [dict(run_id="x", source="sim", cores=1, core=-1, metric=m, value=v)
            for m, v in dict(cycles=10, instructions=2, mem_reads=1, mem_writes=1, mem_latency=3).items()]
    out = derive.counter_metrics(records.make_records(rows))
    assert "mem_accesses" not in set(out["metric"])   # not derivable from reads and writes
    assert "mem_latency_cycles" not in set(out["metric"])
    rows.append(dict(run_id="x", source="sim", cores=1, core=-1, metric="mem_accesses", value=1))
    out = derive.counter_metrics(records.make_records(rows))
    assert _get(out, "x", "mem_latency_cycles") == 2


def test_model_counts_the_recorded_accesses():
    # 1 core, 100 cycles, 10 accesses at L = 2 of which 2 are xchg (12 reads + writes): Z = 8
    rows = [dict(run_id="a", source="sim", cores=1, core=-1, metric=m, value=v)
            for m, v in dict(cycles=100, mem_reads=6, mem_writes=6, mem_accesses=10,
                             mem_latency=2).items()]
    (m,) = model.fit_records(records.make_records(rows)).values()
    assert m.accesses == 10 and m.think == pytest.approx(8.0)


def test_bus_utilisation_from_per_core_counters():
    rows = [dict(run_id="r", source="sim", cores=2, core=-1, metric="cycles", value=50)]
    rows += [dict(run_id="r", source="sim", cores=2, core=c, metric="bus_busy_cycles", value=10)
             for c in (0, 1)]
    out = derive.counter_metrics(records.make_records(rows))
    assert _get(out[out["core"] == -1], "r", "bus_utilisation") == pytest.approx(20 / 50)


def test_throughput_units():
    rows = [dict(run_id="n1", source="native", cores=1, bytes=1_000_000_000, metric="seconds",
                 value=0.5),
            dict(run_id="n2", source="native", cores=2, bytes=0, metric="gbps", value=8.0)]
    out = derive.throughput(records.make_records(rows))
    assert _get(out, "n1", "bytes_per_second") == pytest.approx(2e9)
    assert _get(out, "n1", "gb_per_second") == pytest.approx(2.0)
    assert _get(out, "n1", "gbps") == pytest.approx(16.0)
    assert _get(out, "n2", "bytes_per_second") == pytest.approx(1e9)


def test_speedup_median_baseline_and_no_trivial_rows():
    rows = [dict(run_id=f"r{i}", source="native", cores=c, bytes=64, metric="seconds", value=v)
            for i, (c, v) in enumerate([(1, 1.0), (1, 3.0), (1, 2.0), (4, 0.5)])]
    rows.append(dict(run_id="lonely", source="native", variant="x", cores=8, bytes=64,
                     metric="seconds", value=1.0))
    out = derive.speedup(records.make_records(rows))
    assert _get(out, "r3", "speedup") == pytest.approx(4.0)      # median baseline 2.0 / 0.5
    assert _get(out, "r3", "efficiency") == pytest.approx(1.0)
    assert "lonely" not in set(out["run_id"])


_RUN = st.fixed_dictionaries(dict(
    variant=st.sampled_from(["a", "b", "c"]), bytes=st.sampled_from([64, 128]), cores=st.sampled_from([1, 2, 3, 4, 8]),
    metric=st.sampled_from(["cycles", "seconds"]), value=st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 7.0])))


@settings(max_examples=60, deadline=None)
@given(st.lists(_RUN, max_size=24))
def test_speedup_is_its_definition_run_by_run(runs):
    """derive.speedup (one pass over all configurations) against its docstring applied run by run."""
    rows = [dict(r, run_id=f"r{i}", source="native", experiment="t") for i, r in enumerate(runs)]
    out = derive.speedup(records.make_records(rows)) if rows else records.empty()
    want = {}
    for r in rows:
        mine = [q for q in rows if (q["variant"], q["bytes"]) == (r["variant"], r["bytes"])]
        metric = "cycles" if any(q["metric"] == "cycles" for q in mine) else "seconds"
        mine = [q for q in mine if q["metric"] == metric]
        cores = {q["cores"] for q in mine}
        if r["metric"] != metric or (1 not in cores and len(cores) < 2):
            continue
        base_cores = 1 if 1 in cores else min(cores)
        base = statistics.median(q["value"] for q in mine if q["cores"] == base_cores)
        if base > 0 and r["value"] > 0:
            want[r["run_id"], "speedup"] = base / r["value"]
            want[r["run_id"], "efficiency"] = base / r["value"] * base_cores / r["cores"]
    got = {(r.run_id, r.metric): r.value for r in out.itertuples()}
    assert got.keys() == want.keys() and len(out) == len(want)
    for k, v in want.items():
        assert got[k] == pytest.approx(v), k


def test_merge_with_reference_seed003():
    ref = seeds.load_reference(["seed003_table3"])
    ours = records.make_records([
        dict(run_id="s1", source="sim", workload="aes-128-ecb-enc", cores=1, bytes=256,
             metric="cycles", value=266173 * 2),
        dict(run_id="s2", source="sim", workload="aes-128-ecb-enc", cores=2, bytes=256,
             metric="cycles", value=177448)])
    both = records.concat([ours, ref])
    assert set(both["source"]) == {"sim", "reference"}
    cmp = derive.compare(ours, ref, "cycles")
    row = cmp[(cmp["cores"] == 1) & (cmp["bytes"] == 256)].iloc[0]
    assert row["ratio"] == pytest.approx(2.0)
    assert cmp[(cmp["cores"] == 2) & (cmp["bytes"] == 256)]["ratio"].iloc[0] == 1.0
    assert len(cmp) == 14  # every paper cell, ours or not
    # one pandas merge on the shared keys lines ours up with the paper
    m = ours.merge(ref, on=["workload", "cores", "bytes", "metric"], suffixes=("", "_paper"))
    assert len(m) == 2


def test_model_hand_computed_case():
    # Z = 2, S = 2: n=1: R=2, X=1/4, Q=1/2; n=2: R=3, X=2/5, Q=6/5; n=3: R=4.4, X=3/6.4
    m = model.BusModel(think=2.0, service=2.0, accesses=100)
    xs = [x for x, _, _ in m.mva(3)]
    assert xs == pytest.approx([0.25, 0.4, 3 / 6.4])
    assert [q for _, _, q in m.mva(2)] == pytest.approx([0.5, 1.2])
    assert m.speedup(2) == pytest.approx(1.6)
    assert m.speedup(3) == pytest.approx(1.875)
    assert m.saturation_speedup == 2.0
    assert m.speedup_bound(1) == 1 and m.speedup_bound(5) == 2.0
    assert m.speedup(200) == pytest.approx(2.0, rel=1e-3)
    assert m.cycles(1) == pytest.approx(400) and m.cycles(2) == pytest.approx(250)
    assert m.utilisation(2) == pytest.approx(0.8)


def test_model_fit_and_errors():
    m = model.fit(cycles_1core=100, accesses=25, latency=2)
    assert m.think == 2.0 and m.service == 2.0
    with pytest.raises(S2mcError, match="no memory accesses"):
        model.fit(100, 0)
    with pytest.raises(S2mcError, match="cannot hold"):
        model.fit(10, 25)
    with pytest.raises(S2mcError, match="service"):
        model.BusModel(1, 0)


def test_model_fits_seed003_from_stall_counts():
    ref = seeds.load_reference(["seed003_table3", "seed003_table4"]).assign(
        experiment="seed003", run_id="ref")
    models = model.fit_records(ref)
    assert len(models) == 4
    m256 = [m for k, m in models.items() if k[-1] == 256][0]
    # 1 core, 256 B: 266173 cycles and 74000 stalls = 74000 accesses at L = 2
    assert m256.accesses == 74000
    assert m256.think == pytest.approx(266173 / 74000 - 2)
    pred = model.predict_records(ref, [1, 2])
    assert set(pred["metric"]) == {"model_speedup", "model_cycles"}
