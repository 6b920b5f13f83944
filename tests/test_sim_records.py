"""Result -> records in one place (s2mc.simulator.records), keeping the simulator's own mem_accesses;
`s2mc run` sweeps core counts and writes those records with --out.

Oracles: hand-computed counts for a small xchg program (docs/timing-model.md), Machine().run()'s
own counters, and the cycle-stepped reference model for spin_lock.s (which uses xchg, so
reads + writes differs from the number of bus accesses)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.analysis import records
from s2mc.cli.main import cli
from s2mc.isa import assemble, load_program
from s2mc.simulator import Machine
from s2mc.simulator.records import COUNTERS, result_rows
from s2mc.simulator.reference import ReferenceMachine
from s2mc.workloads.cipher_sim import run_aes
from s2mc.workloads.cipher_sim.runner import record_rows

REPO = Path(__file__).resolve().parent.parent
SPIN_LOCK = REPO / "workloads" / "asm" / "spin_lock.s"

# One xchg (one bus access: a read and a write) and one st per core, L = 2.
# 1 core: mov 0, mov 1, xchg granted 2 (bus 2-3), st granted 4 (bus 4-5), trap 6 -> 7 cycles.
# 2 cores, fifo: xchg: core 0 at 2, core 1 at 4; st: core 0 asks at 4, granted 6; core 1 asks at 6,
# granted 8; the traps at 8 and 10 finish the cores at 9 and 11.
XCHG = """
.code 0
  mov r1 #7
  mov r2 #cell
  xchg r1 r2
  st r1 out
  trap r0 #0
.data 0
:cell
  3
:out
  0
.end
"""
HAND = {1: dict(cycles=7, per_core_cycles=[7], waits=[0]),
        2: dict(cycles=11, per_core_cycles=[9, 11], waits=[2, 4])}


def whole(df, run_id, metric):
    (v,) = df[(df["run_id"] == run_id) & (df["core"] == -1) & (df["metric"] == metric)]["value"]
    return v


def per_core(df, run_id, metric):
    sub = df[(df["run_id"] == run_id) & (df["core"] >= 0) & (df["metric"] == metric)].sort_values("core")
    return sub["value"].tolist()


def test_result_rows_of_the_xchg_program_are_the_hand_computed_counts():
    res = Machine(assemble(XCHG), cores=1, mem_words=16).run()
    df = records.make_records(result_rows(res, "x", workload="xchg", variant="v", experiment="e"))
    assert set(df["source"]) == {"sim"} and set(df["platform"]) == {"s2"} and set(df["engine"]) == {"fast"}
    assert set(df["workload"]) == {"xchg"} and set(df["variant"]) == {"v"} and set(df["experiment"]) == {"e"}
    hand = dict(cycles=7, instructions=5, mem_reads=1, mem_writes=2, mem_accesses=2, stall_cycles=2,
                bus_wait_cycles=0, bus_busy_cycles=4, sync_wait_cycles=0, mem_latency=2)
    for metric, value in hand.items():
        assert whole(df, "x", metric) == value, metric
    assert whole(df, "x", "bus_utilisation") == pytest.approx(4 / 7)
    assert {m for m in df["metric"]} >= set(COUNTERS) | {"sim_seconds"}
    for metric in COUNTERS:       # one core: its rows equal the whole run's
        assert per_core(df, "x", metric) == [whole(df, "x", metric)], metric


def run_cli(*args):
    return CliRunner().invoke(cli, ["run", *map(str, args)])


def test_s2mc_run_sweep_of_the_xchg_program(tmp_path):
    src = tmp_path / "xchg.s"
    src.write_text(XCHG)
    out = tmp_path / "x.csv"
    res = run_cli(src, "--cores", "1,2", "--mem-words", 16, "--out", out)
    assert res.exit_code == 0, res.output
    df = records.load([out])
    for n, hand in HAND.items():
        (rid,) = set(df[df["cores"] == n]["run_id"])
        assert whole(df, rid, "cycles") == hand["cycles"]
        assert per_core(df, rid, "cycles") == hand["per_core_cycles"]
        assert per_core(df, rid, "bus_wait_cycles") == hand["waits"]
        assert per_core(df, rid, "mem_accesses") == [2] * n          # not reads + writes = 3
        assert per_core(df, rid, "mem_reads") == [1] * n and per_core(df, rid, "mem_writes") == [2] * n
        assert whole(df, rid, "mem_accesses") == 2 * n
    assert set(df["workload"]) == {"xchg"} and set(df["variant"]) == {""}
    manifest = records.read_manifest(records.manifest_path_for(out))
    assert manifest["params"]["command"] == "run" and manifest["params"]["cores"] == [1, 2]
    assert manifest["params"]["mem_words"] == 16


def test_spin_lock_records_hold_the_simulators_own_counts(tmp_path, undrawn):
    """The records' acceptance check: spin_lock.s (xchg) on 1, 2, 4 cores into r.parquet."""
    out = tmp_path / "r.parquet"
    res = run_cli(SPIN_LOCK, "--cores", "1,2,4", "--out", out)
    assert res.exit_code == 0, res.output
    df = records.load([out])
    prog = load_program(str(SPIN_LOCK))
    differs = False
    for n in (1, 2, 4):
        (rid,) = set(df[df["cores"] == n]["run_id"])
        mine = Machine(prog, cores=n).run()
        ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=n, mem_words=64).run()
        for metric in COUNTERS:
            assert per_core(df, rid, metric) == [c[metric] for c in mine.cores], (n, metric)
        assert per_core(df, rid, "mem_accesses") == [c["mem_accesses"] for c in ref["cores"]]
        assert whole(df, rid, "mem_accesses") == sum(c["mem_accesses"] for c in mine.cores)
        assert whole(df, rid, "cycles") == mine.cycles == ref["cycles"]
        differs |= whole(df, rid, "mem_accesses") != whole(df, rid, "mem_reads") + whole(df, rid, "mem_writes")
    assert differs       # the program uses xchg: the test tells the two counts apart
    # `s2mc report` reads such a file
    rep = CliRunner().invoke(cli, ["report", str(out), "--out", str(tmp_path / "report")])
    assert rep.exit_code == 0, rep.output
    assert "spin_lock" in (tmp_path / "report" / "report.md").read_text(encoding="utf-8")


def test_aes_records_keep_mem_accesses():
    r = run_aes(bytes(32), bytes(16), cores=2, mem_latency=3)
    df = records.make_records(record_rows(r, "a"))
    acc = sum(c["mem_accesses"] for c in r.result.cores)
    assert whole(df, "a", "mem_accesses") == acc
    # the seed's stall count is bus wait + (L - 1) x accesses: an independent check of the count
    assert acc == (whole(df, "a", "stall_cycles") - whole(df, "a", "bus_wait_cycles")) / 2
    assert set(df["variant"]) == {"bytes/interleaved/L3"}


def test_sweep_prints_each_output_and_one_summary_row_per_run(tmp_path):
    res = CliRunner().invoke(cli, ["run", str(SPIN_LOCK), "--cores", "1,2,4"])
    assert res.exit_code == 0, res.output
    assert res.stdout == "== 1 core ==\n10\n== 2 cores ==\n20\n== 4 cores ==\n40\n"
    lines = res.stderr.strip().splitlines()
    # spin_lock's work grows with the cores (its `work: per core` line): the column is a time ratio
    assert lines[0].split()[:5] == ["cores", "cycles", "time", "vs", "1c"] and len(lines) == 6
    assert lines[4].startswith("time vs 1c = cycles / cycles on 1 core")   # the legend under the table
    assert lines[5].startswith("stalls = ")
    cycles = {n: Machine(load_program(str(SPIN_LOCK)), cores=n).run().cycles for n in (1, 2, 4)}
    for line, n in zip(lines[1:], (1, 2, 4)):
        cells = line.split()
        assert int(cells[0]) == n and int(cells[1]) == cycles[n]
        assert float(cells[2]) == pytest.approx(cycles[n] / cycles[1], abs=0.005)
    assert "%|" not in res.stderr      # no progress bar when stderr is not a terminal


def test_sweep_json_is_a_list_and_one_run_is_the_object(tmp_path):
    src = tmp_path / "xchg.s"
    src.write_text(XCHG)
    res = run_cli(src, "--cores", "1,2", "--json")
    assert res.exit_code == 0, res.output
    objs = json.loads(res.stdout)
    assert [o["cycles"] for o in objs] == [HAND[1]["cycles"], HAND[2]["cycles"]]
    one = json.loads(run_cli(src, "--cores", "2", "--json").stdout)
    assert one["cycles"] == HAND[2]["cycles"] and one["config"]["cores"] == 2


def test_variant_names_the_non_default_timing(tmp_path):
    rz = tmp_path / "t.rz"
    rz.write_text((REPO / "workloads" / "rz" / "sum.rz").read_text(encoding="utf-8"))
    out = tmp_path / "t.csv"
    res = run_cli(rz, "--cores", "2", "--mem-latency", 3, "--arbitration", "round_robin", "-O", 0, "--out", out)
    assert res.exit_code == 0, res.output
    df = records.load([out])
    assert set(df["variant"]) == {"L3/round_robin/O0"} and set(df["workload"]) == {"t"}
    assert set(df[df["metric"] == "mem_latency"]["value"]) == {3}


def test_sweep_writes_one_trace_per_core_count(tmp_path):
    src = tmp_path / "xchg.s"
    src.write_text(XCHG)
    res = run_cli(src, "--cores", "1,2", "--trace", tmp_path / "t.log")
    assert res.exit_code == 0, res.output
    for n in (1, 2):
        lines = (tmp_path / f"t-{n}c.log").read_text().splitlines()
        assert lines[0].split()[:2] == ["cycle", "core"]
        assert {int(line.split()[1]) for line in lines[1:]} == set(range(n))
    assert not (tmp_path / "t.log").exists()


def test_a_fault_in_a_sweep_names_the_core_count(tmp_path):
    src = tmp_path / "div.s"
    src.write_text(".code 0\n  cid r1\n  mov r2 #1\n  sub r1 r1 #1\n  div r2 r2 r1\n  trap r0 #0\n")
    res = run_cli(src, "--cores", "1,2", "--out", tmp_path / "d.csv")
    assert res.exit_code == 1
    assert res.stderr.count("\n") == 1
    assert res.stderr.startswith("s2mc: error: with --cores 2: simulated fault: division by zero at core 1")
    assert not (tmp_path / "d.csv").exists()
