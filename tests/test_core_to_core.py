"""Core-to-core latency: this CPU's matrix (a pinned ping-pong per pair, s2mc.workloads.native.coherence),
the simulated mesh's (s2mc.workloads.core_to_core) checked against the hand-worked chain of
docs/timing-model.md, their records, heat maps and report section, and every bad input as one line.
Timings are never asserted against a target: only their shape and sign."""
import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from s2mc.analysis import plots, records, summaries
from s2mc.common.errors import S2mcError
from s2mc.workloads import core_to_core
from s2mc.workloads.native import coherence

native = pytest.mark.skipif(not coherence.available(), reason="native coherence extension not built")
CPUS = coherence.cpus() if coherence.available() else []
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 CPUs")
S2MC = Path(sys.executable).parent / "s2mc"


# -- this CPU ----------------------------------------------------------------------------------------

@native
@two_cpus
def test_pinned_ping_pong_on_this_cpu_gives_a_square_positive_matrix():
    m = coherence.core_to_core(len(CPUS), 200)
    n = len(CPUS)
    assert m["cpus"] == CPUS and len(m["ns"]) == n and all(len(row) == n for row in m["ns"])
    for i in range(n):
        assert m["ns"][i][i] is None                     # a core does not hand a line to itself
        for j in range(n):
            if i != j:
                assert m["ns"][i][j] > 0 and m["ns"][i][j] == m["ns"][j][i] and m["spread"][i][j] >= 0


@native
@two_cpus
def test_a_pair_is_pinned_where_asked_and_every_round_trip_is_answered():
    r = coherence.ping_pong(200, batch=100, pair=(CPUS[1], CPUS[0]), warmup=100)
    assert r["cpus"] == [CPUS[1], CPUS[0]]
    assert r["round_trips"] == 200 and len(r["batch_ns"]) == 2
    assert r["answered"] == 300 and r["final_flag"] == 600      # the warm-up's round trips happened too


@native
@pytest.mark.parametrize("call, needle", [
    (lambda: coherence.core_to_core(len(CPUS) + 1, 100), f"this process may use {len(CPUS)} CPU"),
    (lambda: coherence.core_to_core(1, 100), "a matrix needs at least 2"),
    (lambda: coherence.ping_pong(100, pair=(CPUS[0], CPUS[0])), "two distinct CPUs"),
    (lambda: coherence.ping_pong(100, pair=(max(CPUS) + 1, CPUS[0])), f"CPU {max(CPUS) + 1} is not one"),
    (lambda: coherence.ping_pong(100, warmup=-1), "warm-up round trips must be >= 0"),
])
def test_bad_matrix_arguments_are_one_line(call, needle):
    with pytest.raises(S2mcError, match=needle) as e:
        call()
    assert "\n" not in str(e.value)


# -- the simulated mesh ------------------------------------------------------------------------------

def xy(tile, cores):
    """A tile's place on the mesh (docs/timing-model.md, "The tiles and the routes")."""
    x = math.ceil(math.sqrt(cores))
    return tile % x, tile // x


def hops(a, b, cores):
    (xa, ya), (xb, yb) = xy(a, cores), xy(b, cores)
    return abs(xa - xb) + abs(ya - yb)


def T(h, flits):
    """A message's cycles over h hops at zero load, R = Lk = 1 (docs/timing-model.md, "The network")."""
    return (h + 1) + h + flits


def first_port(tile, cores):
    """The home's (tile 0's) output port towards a tile under XY routing."""
    x, y = xy(tile, cores)
    return "x+" if x else "y+" if y else "local"


def chain(cores, a, b, hand_overs=8):
    """The hand-overs of the ping-pong of a (first to store) and b, in cycles from one store's issue to
    the next, by the table of docs/timing-model.md, "Core-to-core latency on the mesh": returns
    (the last two hand-overs, phi + phi' of that round trip, sigma). L = 2; each spin loop issues a
    load every 3 cycles from the first one after its own store took effect (2 instructions after it for
    the first core, `add` then `ld`; 4 for the second, `lt`, `jt`, `add`, `ld`)."""
    L, tail, to_loop = 2, {a: 6, b: 4}, {a: 2, b: 4}
    sigma = first_port(a, cores) == first_port(b, cores) != "local"
    w, r, s, first_load, times, phis = a, b, 0, {b: 0}, [], []
    for _ in range(hand_overs):
        hw, hr, hwr = hops(w, 0, cores), hops(r, 0, cores), hops(w, r, cores)
        data = s + T(hw, 1) + L                              # the home's Data (acks 1) to w and Inv to r
        inv = data + T(hr, 1) + 2 * sigma                    # the Inv at r (behind the Data's 2 flits)
        done = max(data + T(hw, 2), inv + T(hwr, 1))         # w's store takes effect
        phi = (first_load[r] - inv) % 3                      # r's next load after the Inv
        loaded = max(inv + phi + T(hr, 1) + 1 + T(hw, 1), done) + T(hwr, 2)
        first_load[w] = done + to_loop[w]
        times.append(loaded + tail[r] - s)
        phis.append(phi)
        s, w, r = loaded + tail[r], r, w
    return times[-2:], phis[-1] + phis[-2], sigma


# Pairs of the 2x2 and 4x4 meshes: beside the home, far from it, sharing the home's first port or not.
HAND = [(4, 0, 1), (4, 0, 3), (4, 1, 3), (4, 2, 3), (16, 5, 10), (16, 0, 15), (16, 3, 12)]


@pytest.mark.parametrize("cores, a, b", HAND)
def test_mesh_entries_follow_the_hand_worked_chain(cores, a, b):
    times, phases, sigma = chain(cores, a, b)
    hp, hq, hpq = hops(a, 0, cores), hops(b, 0, cores), hops(a, b, cores)
    # the chain summed: one-way = 4 (hP + hQ) + 2 hPQ + 19 + (phi + phi') / 2 + 2 sigma
    assert sum(times) / 2 == 4 * (hp + hq) + 2 * hpq + 19 + phases / 2 + 2 * sigma
    assert core_to_core.round_trip_cycles(cores, a, b) / 2 == sum(times) / 2


def test_mesh_matrix_of_four_tiles():
    m = core_to_core.mesh_matrix(4)
    c = m["cycles"]
    assert m["cores"] == 4 and m["home"] == 0 and m["engine"] in ("reference", "fast")
    assert [c[i][i] for i in range(4)] == [None] * 4
    assert all(c[i][j] == c[j][i] for i in range(4) for j in range(4))
    assert c[0][1] == 26.5 and c[0][3] == 32 and c[1][3] == 36 and c[2][3] == 33.5   # the hand-worked entries
    # the two tiles next to the home are the nearest pair, the two far from it the farthest
    off = {(i, j): c[i][j] for i in range(4) for j in range(i + 1, 4)}
    assert min(off, key=off.get) in ((0, 1), (0, 2)) and max(off, key=off.get) == (1, 3)


def test_the_ping_pong_program_hands_the_word_back_every_round():
    res = core_to_core.run_pair(4, 2, 1, 3)
    assert res.output == "6"                           # 3 round trips: core 1 stored 2, 4, 6


@pytest.mark.parametrize("cores", [1, 257])
def test_mesh_core_count_out_of_range_is_one_line(cores):
    with pytest.raises(S2mcError, match=r"core-to-core on the mesh: \d+ cores; the simulated machine has 2\.\.256"):
        core_to_core.mesh_matrix(cores)


# -- records, heat maps, report ----------------------------------------------------------------------

def fake_native(n=3):
    ns = [[None if i == j else 40.0 + 10 * abs(i - j) for j in range(n)] for i in range(n)]
    return {"cpus": list(range(n)), "ns": ns, "spread": [[0.01] * n for _ in range(n)],
            "why": [[""] * n for _ in range(n)], "round_trips": 100, "batch": 100}


def test_records_and_sentences_come_from_the_matrices(tmp_path, monkeypatch):
    monkeypatch.setattr(coherence, "platform_name", lambda: "Test CPU")
    rows = coherence.core_to_core_rows(fake_native(), run_id="n1")
    rows += core_to_core.mesh_rows(core_to_core.mesh_matrix(4), run_id="s1")
    df = records.make_records(rows)      # validates metrics, units and core ranges
    assert set(df["metric"]) == {"core_to_core_ns", "core_to_core_cycles"} and len(df) == 6 + 12
    mats = summaries.core_to_core(df)
    assert [m["source"] for m in mats] == ["native", "sim"]
    assert mats[0]["sentence"] == ("On Test CPU, 3 CPUs, a cache line takes 50.0 ns one way between the nearest "
                                   "pair (CPUs 0 and 1) and 60.0 ns between the farthest (CPUs 0 and 2): a "
                                   "spread of 10.0 ns (1.20x).")
    assert mats[1]["sentence"] == ("On the simulated 4-tile mesh, a cache line takes 26.5 cycles one way between "
                                   "the nearest pair (tiles 0 and 1) and 36 cycles between the farthest (tiles 1 "
                                   "and 3): a spread of 9.5 cycles (1.36x).")
    assert np.isnan(mats[1]["matrix"][2, 2]) and mats[1]["matrix"][3, 1] == 36
    png = plots.core_to_core_heatmaps(df, tmp_path / "c2c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert plots.core_to_core_heatmaps(df[df["metric"] == "cycles"], tmp_path / "none.png") is None


def test_report_draws_both_matrices_with_a_sentence_each(tmp_path, monkeypatch):
    from s2mc.analysis import report
    monkeypatch.setattr(coherence, "platform_name", lambda: "Test CPU")
    rows = coherence.core_to_core_rows(fake_native(2), run_id="n1")
    rows += core_to_core.mesh_rows(core_to_core.mesh_matrix(2), run_id="s1")
    (tmp_path / "res").mkdir()
    records.write(records.make_records(rows), tmp_path / "res" / "c2c.parquet")
    built = report.build([tmp_path / "res"], tmp_path / "rep")
    md = built["md"].read_text()
    assert "4.7 Core-to-core latency: this CPU beside the simulated mesh" in md
    assert "On Test CPU, 2 CPUs, a cache line takes 50.0 ns one way between CPUs 0 and 1, the only pair." in md
    assert "On the simulated 2-tile mesh, a cache line takes" in md
    assert (tmp_path / "rep" / "core_to_core.png").exists()


@native
@two_cpus
def test_cli_prints_both_matrices_and_writes_records_and_png(tmp_path):
    from s2mc.cli.main import cli
    out, png = tmp_path / "c2c.parquet", tmp_path / "c2c.png"
    res = CliRunner().invoke(cli, ["coherence-native", "--bench", "core-to-core", "--cores", "2", "--round-trips",
                                   "200", "--out", str(out), "--png", str(png), "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert f"core-to-core on {coherence.platform_name()}: one-way latency, ns (per pair: the median of 2 timed " \
           "batches of 100 round trips, / 2)" in res.stdout
    assert "core-to-core on the simulated 2-tile mesh (" in res.stdout and "line home tile 0" in res.stdout
    df = records.read(out)
    nat = df[df["metric"] == "core_to_core_ns"]
    sim = df[df["metric"] == "core_to_core_cycles"]
    assert sorted(nat["variant"]) == ["0-1", "1-0"] and (nat["value"] > 0).all() and set(nat["cores"]) == {2}
    assert sorted(sim["variant"]) == ["0-1", "1-0"] and list(sim["value"]) == [
        core_to_core.round_trip_cycles(2, 0, 1) / 2] * 2
    # the printed cells are the records'
    assert f"{nat['value'].iloc[0]:.1f}" in res.stdout
    assert png.read_bytes()[:4] == b"\x89PNG"


@native
@pytest.mark.parametrize("args, needle", [
    (["--bench", "core-to-core", "--cores", str(len(CPUS) + 1)], "the CPUs this process may use"),
    (["--bench", "core-to-core", "--mesh-cores", "257"], "out of range"),
    (["--bench", "locks", "--png", "x.png"], "--png draws the core-to-core matrices"),
])
def test_cli_bad_core_counts_are_one_line(args, needle, tmp_path):
    proc = subprocess.run([str(S2MC), "coherence-native", *args, "-q"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr
    assert list(tmp_path.iterdir()) == []                 # no file left behind


def test_a_disturbed_cell_is_named_under_the_table_and_in_the_records(monkeypatch):
    monkeypatch.setattr(coherence, "platform_name", lambda: "Test CPU")
    m = fake_native(3)
    m["why"][0][2] = m["why"][2][0] = "spread 7.0% > 5%"
    text = coherence.format_core_to_core(m)
    assert text.splitlines()[2].split() == ["cpu0", "-", "50.0", "60.0"]
    assert text.splitlines()[-1] == "  DISTURBED cpu0-cpu2: spread 7.0% > 5%"
    df = records.make_records(coherence.core_to_core_rows(m, run_id="n1"))
    assert sorted(df[df["disturbed"]]["variant"]) == ["0-2", "2-0"]
    assert summaries.core_to_core(df)[0]["sentence"].endswith(
        "a spread of 10.0 ns (1.20x) (1 of 3 pair measurements disturbed).")


@native
@two_cpus
def test_cli_json_carries_both_matrices():
    from s2mc.cli.main import cli
    import json
    res = CliRunner().invoke(cli, ["coherence-native", "--bench", "core-to-core", "--cores", "2", "--mesh-cores",
                                   "none", "--round-trips", "100", "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["results"] == [] and doc["core_to_core"]["mesh"] == []
    ns = doc["core_to_core"]["native"]["ns"]
    assert ns[0][0] is None and ns[0][1] > 0
    assert [r["value"] for r in doc["records"]] == [ns[0][1], ns[1][0]]


@native
@pytest.mark.skipif(shutil.which("taskset") is None, reason="needs taskset")
def test_cli_matrix_on_one_cpu_says_why():
    proc = subprocess.run(["taskset", "-c", str(CPUS[0]), str(S2MC), "coherence-native", "--bench", "core-to-core",
                           "-q"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "s2mc: error: core-to-core needs 2 CPUs; this process may use 1"
