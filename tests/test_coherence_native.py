"""The native cache-coherence microbenchmarks (s2mc.workloads.native.coherence, `s2mc coherence-native`):
the work is really done (every count exact), the layouts are what they claim (addresses checked
against the line size), the figures are derived from the measured times as documented, the records
validate, and every bad option is one line. Timings are never asserted against a target."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.workloads.native import coherence

if not coherence.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native coherence extension not built", allow_module_level=True)

from s2mc.analysis import records  # noqa: E402
from s2mc.cli.main import cli  # noqa: E402

CPUS = coherence.cpus()
THREADS = list(range(1, len(CPUS) + 1))
S2MC = Path(sys.executable).parent / "s2mc"
SMALL = ["--iterations", "2000", "--acquisitions", "500", "--round-trips", "200", "--reps", "1", "-q"]
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 CPUs")


def run(*args):
    return CliRunner().invoke(cli, ["coherence-native", *args], catch_exceptions=False)


def test_line_size_is_what_the_os_reports():
    # An independent reading of the same fact: sysfs (or getconf) against the module's sysconf call.
    sysfs = Path("/sys/devices/system/cpu/cpu0/cache/index0/coherency_line_size")
    if sysfs.exists():
        assert coherence.line_bytes() == int(sysfs.read_text())
    assert coherence.line_bytes() in (32, 64, 128, 256)


def test_cpus_are_this_process_affinity():
    assert CPUS == sorted(os.sched_getaffinity(0))


@pytest.mark.parametrize("increment", coherence.INCREMENTS)
@pytest.mark.parametrize("threads", THREADS)
def test_padded_counters_are_a_line_apart_and_count_exactly(threads, increment):
    r = coherence.false_sharing(threads, 10_000, "padded", increment=increment, reps=2)
    line = coherence.line_bytes()
    addrs = r["addresses"]
    assert len(addrs) == threads and all(a % line == 0 for a in addrs)
    assert [b - a for a, b in zip(addrs, addrs[1:])] == [line] * (threads - 1)
    assert len({a // line for a in addrs}) == threads            # every counter in a line of its own
    assert r["counters"] == [10_000] * threads and sum(r["counters"]) == threads * 10_000
    assert r["stride_bytes"] == line and r["cpus"] == CPUS[:threads]
    assert len(r["seconds"]) == 2 and r["seconds_best"] == min(r["seconds"])
    assert r["seconds_best"] <= r["seconds_median"]
    assert len(r["concurrency"]) == 2 and all(0 < c <= 1 for c in r["concurrency"])


@pytest.mark.parametrize("increment", coherence.INCREMENTS)
@pytest.mark.parametrize("threads", THREADS)
def test_packed_counters_share_one_line_and_count_exactly(threads, increment):
    r = coherence.false_sharing(threads, 10_000, "packed", increment=increment, reps=1)
    addrs, line = r["addresses"], coherence.line_bytes()
    assert [b - a for a, b in zip(addrs, addrs[1:])] == [8] * (threads - 1)
    assert len({a // line for a in addrs}) == 1                  # 2 (or up to line/8) counters: one line
    assert r["counters"] == [10_000] * threads


@two_cpus
def test_ping_pong_hands_the_line_back_every_time():
    r = coherence.ping_pong(300, batch=50)   # few: on a busy machine a hand-over may wait for a time slice
    # Thread 0 writes 1, 3, 5, ...; thread 1 answers 2, 4, 6, ...: the last answer is 2 x round trips.
    assert r["round_trips"] == 300 and r["answered"] == 300 and r["final_flag"] == 600
    assert 0 < r["min_ns"] <= r["median_ns"] and r["cpus"] == CPUS[:2]


@pytest.mark.parametrize("kind", coherence.LOCKS)
@pytest.mark.parametrize("threads", THREADS)
def test_every_lock_loses_no_increment(kind, threads):
    r = coherence.lock(kind, threads, 5000, reps=2)
    assert r["counter"] == threads * 5000
    assert r["acquisitions_per_second"] == pytest.approx(threads * 5000 / r["seconds_median"])
    assert sorted(r["seconds"])[1] == r["seconds_median"] and all(0 < c <= 1 for c in r["concurrency"])


@pytest.mark.parametrize("call, needle", [
    (lambda: coherence.false_sharing(1, 10, "diagonal"), "layout must be 'packed' or 'padded'"),
    (lambda: coherence.false_sharing(1, 0, "packed"), "iterations must be >= 1"),
    (lambda: coherence.false_sharing(1, 10, "packed", increment="cas"), "increment must be 'plain' or 'atomic'"),
    (lambda: coherence.false_sharing(len(CPUS) + 1, 10, "packed"), "spinning threads beyond the CPUs"),
    (lambda: coherence.lock("mcs", 1, 10), "lock must be 'tas', 'ttas' or 'ticket'"),
    (lambda: coherence.lock("tas", 0, 10), "threads must be >= 1"),
    (lambda: coherence.lock("tas", 1, 10, reps=0), "reps must be >= 1"),
    (lambda: coherence.ping_pong(10, batch=20), r"round trips \(10\) must be a multiple of the batch \(20\)"),
    (lambda: coherence.ping_pong(150, batch=100), "must be a multiple of the batch"),
    (lambda: coherence.ping_pong(0), "round trips must be >= 1"),
])
def test_bad_arguments_are_one_clear_error(call, needle):
    from s2mc.common.errors import S2mcError
    with pytest.raises(S2mcError, match=needle):
        call()


def test_grid_records_derive_from_the_measurements():
    benches = coherence.BENCHES if len(CPUS) >= 2 else ("false-sharing", "locks")
    grid = coherence.CoherenceGrid(benches=benches, threads=tuple(THREADS), iterations=3000, acquisitions=400,
                                   round_trips=200, reps=1)
    summaries, rows = coherence.run_grid(grid, run_id="coh-test")
    df = records.make_records(rows)          # validates: declared metrics and units, core -1, finite values
    assert set(df["source"]) == {"native"} and set(df["engine"]) == {"openmp"}
    # no `seconds`: the report would derive a meaningless speedup over one thread from it
    assert "seconds" not in set(df["metric"])
    fs = df[df["workload"] == "false_sharing"].set_index(["variant", "cores", "metric"])["value"]
    seconds = {(s["variant"], s["threads"]): s["seconds"] for s in summaries if "ns_per_increment" in s}
    for t in THREADS:
        for inc in coherence.INCREMENTS:
            for layout in coherence.LAYOUTS:
                v = f"{layout}/{inc}"
                assert fs[(v, t, "ns_per_increment")] == pytest.approx(seconds[(v, t)] * 1e9 / 3000)
                assert 0 < fs[(v, t, "thread_concurrency")] <= 1
            assert fs[(f"packed-vs-padded/{inc}", t, "false_sharing_ratio")] == pytest.approx(
                fs[(f"packed/{inc}", t, "ns_per_increment")] / fs[(f"padded/{inc}", t, "ns_per_increment")])
    locks = df[df["workload"] == "spin_lock"]
    assert set(locks["variant"]) == set(coherence.LOCKS) and set(locks["cores"]) == set(THREADS)
    assert all(s["counter"] == s["threads"] * 400 for s in summaries if s["bench"] == "locks")
    assert all(s["increments"] == s["threads"] * 3000 for s in summaries if "increments" in s)
    pp = df[df["workload"] == "line_ping_pong"]
    assert list(pp["cores"]) == ([2] if len(CPUS) >= 2 else [])


def test_configs_follow_the_grid():
    grid = coherence.CoherenceGrid(benches=("locks", "false-sharing"), threads=(1, 2), increments=("atomic",),
                                   locks=("ticket",))
    # run order is the fixed BENCHES order, whatever order they were asked in
    assert grid.configs() == [("false-sharing", "padded/atomic", 1), ("false-sharing", "packed/atomic", 1),
                              ("false-sharing", "padded/atomic", 2), ("false-sharing", "packed/atomic", 2),
                              ("locks", "ticket", 1), ("locks", "ticket", 2)]


@two_cpus
def test_cli_prints_every_measurement_and_writes_records(tmp_path):
    out = tmp_path / "coh.parquet"
    res = run("--threads", "1,2", "--out", str(out), *SMALL)
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.strip()]
    # 2 increments x 2 threads x (padded, packed, ratio) + ping-pong + 3 locks x 2 threads
    assert len(lines) == 12 + 1 + 6
    assert sum("ns/increment" in ln for ln in lines) == 8 and sum("M acquisitions/s" in ln for ln in lines) == 6
    df = records.read(out)
    assert list(df.columns) == list(records.COLUMNS)
    manifest = json.loads(records.manifest_path_for(out).read_text())
    assert manifest["params"]["command"] == "coherence-native" if "params" in manifest else \
        manifest["command"] == "coherence-native"
    # the printed figures are the records' figures
    ratio = df[df["metric"] == "false_sharing_ratio"].set_index(["variant", "cores"])["value"]
    from s2mc.common.measure import figure
    assert f"{figure(ratio[('packed-vs-padded/atomic', 2)], 9)}x" in res.stdout


def test_cli_json_has_results_and_records():
    res = run("--bench", "locks", "--lock", "ttas", "--threads", "1", "--json", *SMALL)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [r["counter"] for r in doc["results"]] == [500]
    assert {r["metric"] for r in doc["records"]} == {"acquisitions_per_second", "thread_concurrency"}


@pytest.mark.parametrize("args, needle", [
    (["--threads", str(len(CPUS) + 1)], "the CPUs this process may use"),
    (["--threads", "0"], "out of range"),
    (["--lock", "mcs"], "unknown value 'mcs'"),
    (["--bench", "cache"], "unknown value 'cache'"),
    (["--increment", "cas"], "unknown value 'cas'"),
    (["--round-trips", "150"], "not a multiple of 100"),
    (["--iterations", "0"], "out of range"),
    (["--reps", "1001"], "out of range"),
])
def test_cli_bad_options_are_one_line(args, needle):
    proc = subprocess.run([str(S2MC), "coherence-native", *args, "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset")
def test_cli_ping_pong_on_one_cpu_says_why():
    # A process confined to one CPU cannot hand a line between two cores.
    proc = subprocess.run(["taskset", "-c", str(CPUS[0]), str(S2MC), "coherence-native", "--bench", "ping-pong", "-q"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "--bench ping-pong needs 2 CPUs; this process may use 1" in proc.stderr, proc.stderr


def test_report_section_is_computed_from_the_records(tmp_path):
    from s2mc.analysis import report
    benches = coherence.BENCHES if len(CPUS) >= 2 else ("false-sharing", "locks")
    grid = coherence.CoherenceGrid(benches=benches, threads=tuple(THREADS), iterations=2000, acquisitions=300,
                                   round_trips=200, reps=1)
    frames = [records.make_records(coherence.run_grid(grid, run_id=f"coh-{i}")[1]) for i in range(2)]
    df = records.concat(frames)
    (tmp_path / "res").mkdir()
    records.write(df, tmp_path / "res" / "coh.parquet")
    md = report.build([tmp_path / "res"], tmp_path / "rep")["md"].read_text()
    assert "4.6 Cache coherence on this CPU" in md
    top = max(THREADS)
    for inc in coherence.INCREMENTS:   # the table's cells: medians over the two runs, recomputed here
        for t in THREADS:
            at = (df["cores"] == t) & (df["metric"] == "ns_per_increment")
            cells = [df[at & (df["variant"] == f"{layout}/{inc}")]["value"].median() for layout in coherence.LAYOUTS]
            ratio = df[(df["variant"] == f"packed-vs-padded/{inc}") & (df["cores"] == t)]["value"].median()
            assert f"| {inc} | {t} | {cells[0]:.2f} | {cells[1]:.2f} | {ratio:.2f} |" in md
        if top > 1:
            ratio = df[(df["variant"] == f"packed-vs-padded/{inc}") & (df["cores"] == top)]["value"].median()
            assert f"False sharing, {inc} increments: {top} threads whose counters share one cache line take " \
                   f"{ratio:.2f}x" in md
    if len(CPUS) >= 2:
        rt = df[df["metric"] == "round_trip_ns"]["value"].median()
        assert f"{rt:.1f} ns per round trip (median of 2 runs)" in md
    # the AES thread-scaling tables stay empty: these rows are no AES run
    assert "native tas" not in md and "No native or GPU results" in md


def test_info_says_what_the_benchmarks_pin_to():
    from s2mc.cli.cmd_sim import info_rows
    base = {"s2mc": "0", "python": "3", "platform": "Linux", "cpu": "x86_64", "cpu_features": [], "cpu_count": 2,
            "engines": {"fast": True, "systemc": True}, "native": {"built": False, "error": "x"},
            "cuda": {"built": False, "gpu_present": False, "devices": [], "reason": "no"}}
    rows = dict(info_rows(base | {"coherence": {"built": True, "cpus": [0, 3], "line_bytes": 64}}))
    assert rows["coherence"] == "built; threads pinned to CPUs 0, 3; cache line 64 bytes"
    rows = dict(info_rows(base | {"coherence": {"built": False, "error": "no module"}}))
    assert rows["coherence"] == "not built (no module)"
    assert coherence.info() == {"built": True, "cpus": CPUS, "line_bytes": coherence.line_bytes()}
    res = CliRunner().invoke(cli, ["info", "--json"], catch_exceptions=False)
    assert json.loads(res.stdout)["coherence"]["cpus"] == CPUS


@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset")
def test_cli_on_one_cpu_runs_what_it_can_by_default():
    proc = subprocess.run(["taskset", "-c", str(CPUS[0]), str(S2MC), "coherence-native", *SMALL],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "# ping-pong left out: it needs 2 CPUs and this process may use 1" in proc.stderr
    assert "ping-pong" not in proc.stdout and "false-sharing" in proc.stdout and "locks" in proc.stdout


@two_cpus
def test_cli_when_openmp_gives_fewer_threads_says_so():
    env = dict(os.environ, OMP_THREAD_LIMIT="1")
    proc = subprocess.run([str(S2MC), "coherence-native", "--bench", "locks", "--threads", "2", *SMALL],
                          capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == \
        "s2mc: error: OpenMP gave 1 thread(s), not 2 (OMP_THREAD_LIMIT or OMP_DYNAMIC in the environment?)"


def fake_lock(script):
    """coherence.lock replaced: script[threads] is the repetitions' seconds."""
    def lock(kind, threads, acquisitions, *, reps=3):
        secs = script[threads]
        return dict(seconds=secs, concurrency_median=1.0, counter=threads * acquisitions)
    return lock


def test_locks_report_the_median_and_mark_two_threads_at_over_twice_one(monkeypatch):
    # 1 thread: 1 000 acquisitions in 1, 5, 5 ms -> median 5 ms: 0.2 M/s (the best, 1 ms, would say 1 M/s);
    # 2 threads: 2 000 in 1 ms -> 2 M/s, 10x one thread: the lock serialises, so one of them was disturbed
    monkeypatch.setattr(coherence, "lock", fake_lock({1: [1e-3, 5e-3, 5e-3], 2: [1e-3, 1e-3, 1e-3]}))
    g = coherence.CoherenceGrid(benches=("locks",), threads=(1, 2), locks=("ttas",), acquisitions=1000)
    ss, rows = coherence.run_grid(g, run_id="c")
    assert [s["acquisitions_per_second"] for s in ss] == pytest.approx([2e5, 2e6])
    assert ss[0]["spread"] == 0 and not ss[0]["disturbed"]
    assert ss[1]["why"] == "2 threads ran 10.00x the rate of 1, above the 2x that perfect scaling allows"
    assert coherence.format_summary(ss[1]).endswith("DISTURBED: " + ss[1]["why"])
    df = records.make_records(rows)
    assert df.groupby("cores")["disturbed"].all().to_dict() == {1: False, 2: True}


def test_a_noisy_lock_is_disturbed(monkeypatch):
    monkeypatch.setattr(coherence, "lock", fake_lock({1: [1e-3, 2e-3, 3e-3]}))
    (s,), _ = coherence.run_grid(coherence.CoherenceGrid(benches=("locks",), threads=(1,), locks=("tas",),
                                                         acquisitions=1000), run_id="c")
    assert s["seconds"] == 2e-3 and s["spread"] == pytest.approx(0.5) and s["why"] == "spread 50.0% > 5%"
    assert "±50.0%" in coherence.format_summary(s)


def test_coherence_help_says_the_median_is_reported():
    text = CliRunner().invoke(cli, ["coherence-native", "--help"], terminal_width=200).stdout
    assert "the best is reported" not in text and "median is reported" in text
