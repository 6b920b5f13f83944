"""The experiment registry as data (s2mc.experiments.registry): the grids of the standard
experiments, running one in process with the records labelled by its name, and `s2mc demo`
running them through the libraries (small stand-ins for the registry's grids keep it quick)."""
import dataclasses

import pytest
from click.testing import CliRunner

from s2mc import gpu
from s2mc.analysis import records, seeds
from s2mc.experiments import registry as experiments
from s2mc.experiments.registry import ALL_THREADS, Experiment
from s2mc.cli.main import cli
from s2mc.gpu.grid import GpuGrid
from s2mc.common.errors import S2mcError
from s2mc.workloads import native
from s2mc.workloads.cipher_sim.grid import AesGrid, preset
from s2mc.workloads.native.grid import NativeGrid
from s2mc.workloads.program_grid import ProgramGrid

needs_native = pytest.mark.skipif(not native.available(), reason="native AES extension not built")


def test_registry():
    assert set(experiments.DEMO) <= set(experiments.names())
    (seed,) = experiments.get("seed003_grid").grids_for()
    # the paper's configuration: AES-128-ECB, byte-oriented, interleaved, L = 2, fifo, 1-4 cores
    assert (seed.cores, seed.sizes, seed.key_sizes, seed.modes, seed.styles, seed.partitions,
            seed.mem_latencies, seed.arbitrations) == ((1, 2, 3, 4), (32, 64, 128, 256), (128,), ("ecb",),
                                                       ("bytes",), ("interleaved",), (2,), ("fifo",))
    coarse, extended = experiments.get("seed000_block_sizes").grids_for(quick=True, n_cpu=4)
    assert coarse.threads == extended.threads == (1, 2, 4)
    assert (coarse.strategies, extended.strategies, extended.block_bytes) == (("coarse",), ("extended",), (1024,))
    assert len(experiments.get("seed000_block_sizes").grids_for()[1].block_bytes) == 4
    for name in experiments.names():
        for ref in experiments.get(name).reference:
            seeds.citation(ref)
    with pytest.raises(S2mcError, match="unknown experiment 'nope'"):
        experiments.get("nope")


@pytest.mark.parametrize("n,counts", [(1, (1,)), (2, (1, 2)), (6, (1, 2, 4, 6)), (8, (1, 2, 4, 8))])
def test_thread_counts(n, counts):
    assert experiments.thread_counts(n) == counts


def test_run_writes_records_labelled_with_the_experiment(tmp_path):
    exp = dataclasses.replace(experiments.get("mem_latency_sweep"),
                              grids=(AesGrid(cores=(1, 2), sizes=(32,), mem_latencies=(1, 4)),))
    lines = []
    path, n = experiments.run(exp, tmp_path, log=lines.append)
    assert path == tmp_path / "mem_latency_sweep.parquet" and lines
    df = records.read(path)
    assert len(df) == n and set(df["experiment"]) == {"mem_latency_sweep"}
    whole = df[(df["core"] == -1) & (df["metric"] == "cycles")]
    assert sorted(zip(whole["variant"], whole["cores"])) == [
        ("bytes/interleaved/L1", 1), ("bytes/interleaved/L1", 2), ("bytes/interleaved/L4", 1),
        ("bytes/interleaved/L4", 2)]
    assert whole["run_id"].nunique() == 4
    manifest = records.read_manifest(records.manifest_path_for(path))["params"]
    assert manifest["experiment"] == "mem_latency_sweep" and manifest["grids"][0]["mem_latency"] == [1, 4]


@needs_native
def test_run_a_native_experiment_on_the_hosts_threads(tmp_path):
    exp = Experiment("native_small", "t", "native", (NativeGrid(threads=ALL_THREADS, sizes=(4096,), min_seconds=0,
                                                                min_reps=1),))
    path, _ = experiments.run(exp, tmp_path, n_cpu=2)
    df = records.read(path)
    assert set(df["cores"]) == {1, 2} and set(df["experiment"]) == {"native_small"}


def test_an_experiment_that_cannot_run_here_says_why(monkeypatch, tmp_path):
    monkeypatch.setattr(gpu, "status", lambda: {"built": True, "gpu_present": False, "devices": [],
                                                "reason": "no GPU: testing"})
    assert experiments.unavailable("cuda") == "no GPU: testing"
    with pytest.raises(S2mcError, match="^gpu_size_sweep: no GPU: testing$"):
        experiments.run("gpu_size_sweep", tmp_path)
    assert experiments.unavailable("sim") == ""


def _small_registry(monkeypatch, **grids):
    """The demo's experiments with small grids (the registry's quick forms take seconds each)."""
    registry = dict(experiments.REGISTRY)
    for name, grid in grids.items():
        registry[name] = dataclasses.replace(registry[name], grids=(grid,), quick=())
    monkeypatch.setattr(experiments, "REGISTRY", registry)


@needs_native
def test_demo_runs_the_experiments_in_process(monkeypatch, tmp_path):
    small = AesGrid(cores=(1, 2), sizes=(32,))
    fast = dict(min_seconds=0, min_reps=1, sizes=(4096,), threads=ALL_THREADS)
    _small_registry(monkeypatch, seed003_grid=small, core_scaling=small, mem_latency_sweep=small,
                    arbitration_sweep=AesGrid(cores=(1,), sizes=(32,), arbitrations=("fifo", "fixed")),
                    native_thread_scaling=NativeGrid(**fast),
                    seed000_block_sizes=NativeGrid(strategies=("coarse",), **fast),
                    gpu_size_sweep=GpuGrid(sizes=(1 << 20,)),
                    seed003_model=dataclasses.replace(preset("seed003"), cores=(1, 2), sizes=(32,)),
                    aes_caches=AesGrid(cores=(1, 2), sizes=(32,), styles=("ttable",), caches=("none", "mesi")),
                    caches_lab=ProgramGrid(cores=(1, 2), caches=("none", "mesi")))
    from s2mc.experiments import seeds_native   # seeds 001/004 on this host: a tiny form here
    monkeypatch.setattr(seeds_native, "measure_quick",
                        lambda: seeds_native.measure([256 << 10], [1024], min_seconds=0, min_reps=1))
    measure_seed002 = seeds_native.measure_seed002   # seed 002 Figure 10: tiny too
    monkeypatch.setattr(seeds_native, "measure_seed002_quick",
                        lambda: measure_seed002(4096, threads=(1, 2), min_seconds=0, min_reps=1))
    _small_consistency(monkeypatch)
    res = CliRunner().invoke(cli, ["demo", "--results", str(tmp_path / "res"), "--out", str(tmp_path / "rep"),
                                   "--skip", "gpu"])
    assert res.exit_code == 0, res.output
    assert "Skipped: gpu: left out (--skip gpu)" in res.output and "Report:" in res.output
    files = sorted((tmp_path / "res" / "demo").glob("*.parquet"))
    names = [n for n in experiments.DEMO if n != "gpu_size_sweep"] + ["seeds_native", "consistency"]
    assert sorted(p.stem for p in files) == sorted(names)
    for p in files:
        want = {"seed001_ours", "seed002_cpu", "seed004_ours"} if p.stem == "seeds_native" else {p.stem}
        assert set(records.read(p)["experiment"]) == want
    assert (tmp_path / "rep" / "report.html").exists()
    # the consistency step: this CPU's litmus column beside the simulated ones, in the summary and the report
    cons = records.read(tmp_path / "res" / "demo" / "consistency.parquet")
    assert {"native", "sim"} <= set(cons["source"])
    from s2mc.analysis import consistency, litmus_native
    said = litmus_native.sentences(litmus_native.outcome_rows(cons)) + consistency.sentences(cons)
    assert "Memory consistency (report sections 4.7, 4.8):" in res.output
    assert all(f"- {line}" in res.output for line in said) and len(said) == 6   # CPU, 3 models, Peterson, store
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "4.8 Memory consistency on the simulated machine" in md and "simulated s2 pso" in md


def _small_consistency(monkeypatch):
    """The demo's consistency step with few runs (its quick form takes about ten seconds)."""
    from s2mc.experiments import consistency
    monkeypatch.setattr(consistency, "RUNS", {True: 12, False: 12})
    monkeypatch.setattr(consistency, "NATIVE_ITERATIONS", {True: 500, False: 500})


def test_demo_goes_on_after_a_failed_experiment(monkeypatch, tmp_path):
    import pandas as pd

    from s2mc.analysis import report
    # the report is checked above; here only which experiments ran
    monkeypatch.setattr(report, "build", lambda *a, **k: {"main_table": pd.DataFrame(), "plots": [],
                                                          "md": "report.md", "html": "report.html"})
    _small_registry(monkeypatch, seed003_grid=AesGrid(cores=(1,), sizes=(40,)),   # ECB needs whole blocks
                    core_scaling=AesGrid(cores=(1,), sizes=(16,)), mem_latency_sweep=AesGrid(cores=(1,), sizes=(16,)),
                    arbitration_sweep=AesGrid(cores=(1,), sizes=(16,)),
                    seed003_model=dataclasses.replace(preset("seed003"), cores=(1,), sizes=(16,)),
                    aes_caches=AesGrid(cores=(1,), sizes=(16,), caches=("mesi",)),
                    caches_lab=ProgramGrid(cores=(1,), caches=("mesi",)))
    _small_consistency(monkeypatch)
    res = CliRunner().invoke(cli, ["demo", "--results", str(tmp_path / "res"), "--out", str(tmp_path / "rep"),
                                   "--skip", "native", "--skip", "gpu"])
    assert res.exit_code == 0, res.output
    assert "! failed: --bytes: ECB needs whole 16-byte blocks; 40 is not a multiple of 16" in res.output
    assert "seed003_grid: failed" in res.output
    assert sorted(p.stem for p in (tmp_path / "res" / "demo").glob("*.parquet")) == [
        "aes_caches", "arbitration_sweep", "caches_lab", "consistency", "core_scaling", "mem_latency_sweep",
        "seed003_model"]
    # --skip native: the simulated litmus tests only
    assert set(records.read(tmp_path / "res" / "demo" / "consistency.parquet")["source"]) == {"sim"}
