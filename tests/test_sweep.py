"""s2mc sweep (s2mc.experiments.sweep): an experiment spec run one configuration per task, locally or
on a real Dask cluster of two worker processes, stored configuration by configuration and resumed.

Oracles: the AES grid library run directly (run_grid), the local executor against Dask, the part
files left by an interrupted run (they must come through a re-run untouched), and a cluster whose
workers lack the SystemC engine that this process has (those configurations must fail there)."""
import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import dask
import pandas as pd
import pytest
from click.testing import CliRunner
from distributed import LocalCluster   # before any dask.config.set: it adds distributed's defaults

from s2mc.analysis import records
from s2mc.experiments import registry as experiments, specs, sweep
from s2mc.cli.main import cli
from s2mc.common.errors import S2mcError
from s2mc.simulator import systemc_engine
from s2mc.gpu.grid import GpuGrid
from gpu_fakes import install_fake_gpu
from s2mc.gpu.grid import run_grid as gpu_run_grid
from s2mc.workloads import native
from s2mc.workloads.cipher_sim.grid import run_grid
from s2mc.workloads.native.grid import NativeGrid
from s2mc.workloads.native.grid import run_grid as native_run_grid

S2MC = str(Path(sys.executable).with_name("s2mc"))
TIMING = ("sim_seconds", "sim_mips")     # host timings: the only metrics that may differ between runs

SMALL = """\
title = "a small sweep"
[[grid]]
kind = "aes"
cores = [1, 2]
sizes = [32, 48]
modes = ["ctr"]
styles = ["bytes", "ttable"]
[[grid]]
kind = "aes"
cores = [1, 2]
sizes = [32]
mem_latencies = [1, 3]
"""


def _spec(tmp_path, text=SMALL, name="small"):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def _exp(path):
    return experiments.from_spec(specs.load(path))


def _comparable(df):
    """The records without run ids and host timings, in a stable order."""
    df = df[~df["metric"].isin(TIMING)].drop(columns="run_id")
    return df.sort_values(list(df.columns)).reset_index(drop=True)


def _one_run_per_configuration(df):
    whole = df[(df["core"] == -1) & (df["metric"] == "cycles")]
    per_config = whole.groupby(["workload", "variant", "engine", "cores", "bytes"])["run_id"]
    assert (per_config.nunique() == 1).all() and (per_config.size() == 1).all(), "a configuration twice"
    assert whole["run_id"].is_unique and set(df["run_id"]) == set(whole["run_id"])
    return len(whole)


def test_tasks_have_stable_keys_that_follow_the_inputs(tmp_path):
    exp = _exp(_spec(tmp_path))
    tasks = sweep.tasks(exp)
    keys = {t.key for t in tasks}
    assert len(tasks) == 2 * 2 * 2 + 2 * 2 and len(keys) == len(tasks)
    assert [t.key for t in sweep.tasks(exp)] == [t.key for t in tasks]
    # the order of a list does not matter; the name, the data (another seed) and the parameters do
    reordered = _exp(_spec(tmp_path, SMALL.replace("cores = [1, 2]", "cores = [2, 1]"), "small2"))
    assert {t.key for t in sweep.tasks(replace(reordered, name=exp.name))} == keys
    assert not {t.key for t in sweep.tasks(reordered)} & keys
    seeded = replace(exp, grids=tuple(replace(g, seed=1) for g in exp.grids))
    assert not {t.key for t in sweep.tasks(seeded)} & keys
    slower = replace(exp, grids=tuple(replace(g, mem_latencies=(4,)) for g in exp.grids))
    assert not {t.key for t in sweep.tasks(slower)} & keys
    # a configuration two grids share is one task
    assert [t.key for t in sweep.tasks(replace(exp, grids=exp.grids + exp.grids[:1]))] == [t.key for t in tasks]


def test_a_local_sweep_gives_the_librarys_records(tmp_path):
    exp = _exp(_spec(tmp_path))
    out = sweep.run(exp, tmp_path / "r.parquet")
    assert (out.total, out.ran, out.stored_before, out.failed) == (12, 12, 0, [])
    df = records.read(tmp_path / "r.parquet")
    assert len(df) == out.records and _one_run_per_configuration(df) == 12
    rows = []
    for grid in exp.grids:
        rows += run_grid(grid, new_run_id=lambda: records.new_run_id("aes"), experiment=exp.name)[1]
    pd.testing.assert_frame_equal(_comparable(df), _comparable(records.make_records(rows)))
    manifest = records.read_manifest(records.manifest_path_for(tmp_path / "r.parquet"))["params"]
    assert manifest["complete"] and manifest["executor"] == "local" and len(manifest["configurations"]) == 12
    assert sorted(manifest["run_ids"]) == sorted(set(df["run_id"]))


def test_a_rerun_skips_what_is_stored_and_never_duplicates(tmp_path, capsys):
    exp = _exp(_spec(tmp_path))
    target = tmp_path / "r.parquet"
    sweep.run(exp, target)
    first = records.read(target)
    parts = sorted(sweep.parts_dir(target).glob("*.parquet"))
    for p in parts[:3]:
        p.unlink()
    target.unlink()
    kept = {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in parts[3:]}
    again = sweep.run(exp, target)
    assert (again.stored_before, again.ran) == (9, 3)
    assert {p: (p.stat().st_ino, p.stat().st_mtime_ns) for p in parts[3:]} == kept
    second = records.read(target)
    assert _one_run_per_configuration(second) == 12
    assert len(set(first["run_id"]) & set(second["run_id"])) == 9   # the stored runs, not run again
    pd.testing.assert_frame_equal(_comparable(first), _comparable(second))
    fresh = sweep.run(exp, target, fresh=True, progress=True)
    assert (fresh.stored_before, fresh.ran) == (0, 12)
    assert "s2mc sweep:   0%|          | 0/12 [" in capsys.readouterr().err   # the progress bar
    assert not set(records.read(target)["run_id"]) & set(second["run_id"])


def test_a_second_sweep_into_the_same_file_is_refused(tmp_path):
    exp = _exp(_spec(tmp_path))
    parts = sweep.parts_dir(tmp_path / "r.parquet")
    parts.mkdir()
    held = os.open(parts, os.O_RDONLY)   # what a running sweep holds: a kernel lock on the folder
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(S2mcError, match="another s2mc sweep is writing this output now"):
            sweep.run(exp, tmp_path / "r.parquet")
    finally:
        os.close(held)
    assert not list(parts.glob("*.parquet"))


FAILING = """\
[[grid]]
kind = "aes"
cores = [1, 2]
sizes = [32]
engines = ["fast", "systemc"]
"""


@pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine is not built")
def test_a_failing_configuration_is_reported_and_the_rest_complete(tmp_path, monkeypatch):
    spec, target = _spec(tmp_path, FAILING, "failing"), tmp_path / "r.parquet"
    monkeypatch.setenv("S2MC_SYSTEMC", str(tmp_path / "missing"))    # this machine "lacks" SystemC
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(target)])
    assert res.exit_code == 1, res.output
    failed = [ln for ln in res.output.splitlines() if ln.startswith("s2mc sweep: failed: ")]
    assert len(failed) == 2 and all(" systemc O1: the systemc engine is not built" in ln for ln in failed)
    assert res.output.splitlines()[-1].startswith("s2mc: error: 2 of 4 configurations failed (listed above)")
    assert "Traceback" not in res.output
    df = records.read(target)
    assert set(df["engine"]) == {"fast"} and _one_run_per_configuration(df) == 2
    manifest = records.read_manifest(records.manifest_path_for(target))["params"]
    assert not manifest["complete"] and len(manifest["failed"]) == 2
    monkeypatch.delenv("S2MC_SYSTEMC")
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(target)])
    assert res.exit_code == 0 and "2 run now, 2 stored before, 0 failed" in res.output, res.output
    df = records.read(target)
    assert set(df["engine"]) == {"fast", "systemc"} and _one_run_per_configuration(df) == 4


@pytest.mark.parametrize("args,code,message", [
    (["--executor", "local", "--workers", "2"], 2, "s2mc sweep: error: --workers needs --executor dask"),
    (["--scheduler", "tcp://127.0.0.1:1"], 2, "s2mc sweep: error: --scheduler needs --executor dask"),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], 2,
     "s2mc sweep: error: --workers: the scheduler's own workers run the sweep"),
    (["--executor", "dask", "--scheduler", "tcp://127.0.0.1:1"], 1,
     "s2mc: error: --scheduler tcp://127.0.0.1:1: cannot connect (OSError: Timed out trying to connect"),
    (["--executor", "dask", "--scheduler", "nonsense://here"], 1,
     "s2mc: error: --scheduler nonsense://here: cannot connect (ValueError: unknown address scheme 'nonsense'"),
])
def test_bad_options_are_one_line(tmp_path, args, code, message):
    spec = _spec(tmp_path)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        res = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(tmp_path / "r.parquet"), *args])
    assert res.exit_code == code and res.output.startswith(message), res.output
    assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "r.parquet").exists()
    assert not sweep.parts_dir(tmp_path / "r.parquet").exists()     # nothing stored, nothing left


# --out is an output file like every other (cli/options.py OutputFile): refused while parsing, exit 2
@pytest.mark.parametrize("spec,out,message,code", [
    ("nope", "r.parquet", "s2mc: error: nope: no such spec file or shipped experiment (shipped: aes_caches, arbitration_sweep", 1),
    ("bad.toml", "r.parquet", "s2mc: error: {tmp}/bad.toml: [[grid]] 1: sizes: 40 is not a multiple of 16", 1),
    ("small.toml", "missing/r.parquet", "s2mc sweep: error: Invalid value for '--out': {tmp}/missing/r.parquet: "
                                        "cannot write records: folder {tmp}/missing does not exist", 2),
    ("small.toml", "-", "s2mc sweep: error: Invalid value for '--out': the records cannot go to stdout", 2),
])
def test_bad_input_is_one_line(tmp_path, monkeypatch, spec, out, message, code):
    monkeypatch.chdir(tmp_path)
    _spec(tmp_path)
    _spec(tmp_path, FAILING.replace("[32]", "[40]"), "bad")
    target = out if out == "-" else str(tmp_path / out)
    res = CliRunner().invoke(cli, ["sweep", spec if spec == "nope" else str(tmp_path / spec), "--out", target])
    assert res.exit_code == code and res.output.startswith(message.format(tmp=tmp_path)), res.output
    assert len(res.output.strip().splitlines()) == 1


def test_a_shipped_experiment_by_name(tmp_path, monkeypatch):
    monkeypatch.setattr(specs, "shipped", lambda: [_spec(tmp_path, SMALL, "tiny")])
    res = CliRunner().invoke(cli, ["sweep", "tiny", "--out", str(tmp_path / "r.csv"), "--quiet"])
    assert res.exit_code == 0 and "s2mc sweep: tiny: 12 configurations: 12 run now" in res.output, res.output
    assert _one_run_per_configuration(records.read(tmp_path / "r.csv")) == 12


def _cells(df):
    """(variant, engine, cores, bytes, metric) of every row: what was measured, not how fast."""
    return sorted(zip(df["variant"], df["engine"], df["cores"], df["bytes"], df["metric"]))


@pytest.mark.skipif(not native.available(), reason="the native AES library is not built")
def test_a_native_sweep_measures_what_the_library_measures(tmp_path):
    grid = NativeGrid(threads=(1, 2), sizes=(4096, 8192), impls=("ttable",), strategies=("contiguous", "coarse"),
                      min_seconds=0, min_reps=1, vs_openssl=True)
    exp = experiments.Experiment("native_small", "t", "native", (grid,))
    out = sweep.run(exp, tmp_path / "r.parquet")
    assert (out.total, out.ran, out.failed) == (4, 4, [])      # a task per (threads, size)
    df = records.read(tmp_path / "r.parquet")
    _, rows = native_run_grid(grid, run_id="native-lib", experiment="native_small")
    assert _cells(df) == _cells(records.make_records(rows))     # one OpenSSL baseline per (threads, size)
    assert df.groupby(["cores", "bytes"])["run_id"].nunique().eq(1).all() and df["run_id"].nunique() == 4


def test_a_gpu_sweep_runs_a_task_per_measurement(tmp_path, monkeypatch):
    # a fake GPU of 10 MiB: the 8 MiB device-resident measurement is skipped (a task with no records)
    calls = install_fake_gpu(monkeypatch, 10 << 20)
    grid = GpuGrid(kernels=("coarse",), sizes=(1 << 20, 8 << 20), streams=(1, 4))
    out = sweep.run(experiments.Experiment("gpu_small", "t", "cuda", (grid,)), tmp_path / "r.parquet")
    assert (out.total, out.ran, out.failed) == (len(grid.configs()), 8, []) and len(calls) == 7
    df = records.read(tmp_path / "r.parquet")
    _, rows, _ = gpu_run_grid(grid, run_id="cuda-lib", experiment="gpu_small")
    assert _cells(df) == _cells(records.make_records(rows)) and df["run_id"].nunique() == 7


# --------------------------------------------------------------------------------------------------
# A real Dask cluster: two worker processes. Its workers lack the SystemC engine (this process has
# it), so a configuration that needs it can only fail if it really ran on a worker.
# --------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def scheduler(tmp_path_factory):
    missing = tmp_path_factory.mktemp("no-systemc") / "s2mc-systemc"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      env={"S2MC_SYSTEMC": str(missing)}) as cluster:
        yield cluster.scheduler_address


def test_dask_gives_the_same_records_as_local(tmp_path, scheduler):
    exp = _exp(_spec(tmp_path))
    local = sweep.run(exp, tmp_path / "local.parquet")
    remote = sweep.run(exp, tmp_path / "dask.parquet", executor="dask", scheduler=scheduler)
    assert (remote.total, remote.ran, remote.failed) == (local.total, local.ran, []) == (12, 12, [])
    a, b = records.read(tmp_path / "local.parquet"), records.read(tmp_path / "dask.parquet")
    assert _one_run_per_configuration(b) == 12 and not set(a["run_id"]) & set(b["run_id"])
    pd.testing.assert_frame_equal(_comparable(a), _comparable(b))


@pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine is not built")
def test_dask_reports_a_configuration_that_fails_on_the_workers(tmp_path, scheduler):
    target = tmp_path / "r.parquet"
    res = CliRunner().invoke(cli, ["sweep", str(_spec(tmp_path, FAILING, "failing")), "--out", str(target),
                                   "--executor", "dask", "--scheduler", scheduler])
    assert res.exit_code == 1, res.output
    failed = [ln for ln in res.output.splitlines() if ln.startswith("s2mc sweep: failed: ")]
    assert len(failed) == 2 and all("systemc O1: the systemc engine is not built" in ln for ln in failed)
    assert "2 run now, 0 stored before, 2 failed" in res.output and "Traceback" not in res.output
    assert set(records.read(target)["engine"]) == {"fast"}


def test_a_killed_worker_loses_nothing(tmp_path, scheduler):
    """A worker process dies midway: its configurations go to the other worker (or its
    replacement), and the sweep completes with every configuration once."""
    from distributed import Client
    spec, target = _spec(tmp_path, KILLED, "worker"), tmp_path / "r.parquet"
    with Client(scheduler) as client:
        victim = next(iter(client.run(os.getpid).values()))
    proc = subprocess.Popen([S2MC, "sweep", str(spec), "--out", str(target), "--executor", "dask",
                             "--scheduler", scheduler, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        _wait_for_parts(proc, sweep.parts_dir(target), 2)
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0 and "16 run now, 0 stored before, 0 failed" in out, err
    assert _one_run_per_configuration(records.read(target)) == 16


def test_a_result_lost_after_it_finished_is_computed_again(tmp_path, scheduler):
    """Results finish on a worker while the sweep is busy with earlier ones, then that worker dies
    before the sweep fetches them: the scheduler computes them again and the sweep waits for them
    (it used to stop with 'lost')."""
    from distributed import Client
    todo = sweep.tasks(_exp(_spec(tmp_path)))
    results = sweep._dask(todo, scheduler=scheduler, workers=None)
    first = next(results)            # the sweep now "writes" this one while the rest finish
    keys = {f"s2mc-sweep-{t.key}" for t in todo if t is not first[0]}
    with Client(scheduler) as client:
        deadline = time.monotonic() + 120
        while True:
            held = client.run_on_scheduler(
                lambda keys, dask_scheduler=None: {k: [w.address for w in dask_scheduler.tasks[k].who_has]
                                                   for k in keys if k in dask_scheduler.tasks
                                                   and dask_scheduler.tasks[k].state == "memory"}, keys)
            if len(held) == len(keys) or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert len(held) == len(keys), "the configurations did not finish"
        victim = next(iter(held.values()))[0]
        pids = client.run(os.getpid)
        os.kill(pids[victim], signal.SIGKILL)
        rest = list(results)
    done = [first] + rest
    assert sorted(t.key for t, _, _ in done) == sorted(t.key for t in todo)
    assert all(res is not None and err is None for _, res, err in done)


KILLED = """\
[[grid]]
kind = "aes"
cores = [1, 2, 3, 4, 5, 6, 7, 8]
sizes = ["2K", "4K"]
"""


def _wait_for_parts(proc, parts: Path, n: int, limit: float = 120) -> list[Path]:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = list(parts.glob("*.parquet")) if parts.is_dir() else []
        if len(found) >= n:
            return found
        if proc.poll() is not None:
            raise AssertionError(f"the sweep ended before {n} configurations were stored: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError(f"no {n} configurations stored in {limit} s")


def _kept(paths):
    return {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in paths}


def test_a_sweep_killed_midway_resumes_without_duplicates(tmp_path):
    """The machine running a Dask sweep is lost (SIGKILL to it and its workers): the same command
    again finishes, keeps what was stored and gives the records of an uninterrupted local run."""
    spec, target = _spec(tmp_path, KILLED, "killed"), tmp_path / "r.parquet"
    command = [S2MC, "sweep", str(spec), "--out", str(target), "--executor", "dask", "--workers", "2", "--quiet"]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_parts(proc, sweep.parts_dir(target), 2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)     # the sweep and its worker processes, nothing else
        proc.communicate()
    stored = list(sweep.parts_dir(target).glob("*.parquet"))
    assert 2 <= len(stored) < 16 and not target.exists()
    kept = _kept(stored)
    rerun = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert f"16 configurations: {16 - len(stored)} run now, {len(stored)} stored before, 0 failed" in rerun.stdout
    assert _kept(stored) == kept                     # what was stored was not run again
    df = records.read(target)
    assert _one_run_per_configuration(df) == 16
    assert {rid for p in stored for rid in records.read(p)["run_id"]} <= set(df["run_id"])
    uninterrupted = sweep.run(_exp(spec), tmp_path / "local.parquet")
    assert uninterrupted.ran == 16
    pd.testing.assert_frame_equal(_comparable(df), _comparable(records.read(tmp_path / "local.parquet")))


def test_ctrl_c_stops_a_local_sweep_and_the_same_command_finishes_it(tmp_path):
    spec, target = _spec(tmp_path, KILLED, "interrupted"), tmp_path / "r.parquet"
    command = [S2MC, "sweep", str(spec), "--out", str(target)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for_parts(proc, sweep.parts_dir(target), 2)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    n = len(list(sweep.parts_dir(target).glob("*.parquet")))
    assert f"s2mc sweep: interrupted: {n} of 16 configurations are stored in {target}.parts/" in err
    assert "Traceback" not in err and not target.exists()
    res = CliRunner().invoke(cli, ["sweep", str(spec), "--out", str(target)])
    assert res.exit_code == 0 and f"{16 - n} run now, {n} stored before" in res.output, res.output
    assert _one_run_per_configuration(records.read(target)) == 16
