"""The network lab's tooling: sweeps over `interconnects` (ProgramGrid, AesGrid, spec files, `s2mc sweep`),
the records they write, and the report's networks section (s2mc.analysis.network).

Oracles: a Machine run directly with the same parameters, `cryptography` (every AES run is checked),
the zero-load latency of docs/timing-model.md's worked examples counted by hand, and the mesh's
geometry (tile i at (i mod X, i div X)) for the distances."""
import json
import math
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from s2mc.analysis import network, records
from s2mc.common.errors import S2mcError
from s2mc.common.variants import network_part, parse_network_part
from s2mc.experiments import specs
from s2mc.simulator import Machine
from s2mc.simulator.params import PARAMS
from s2mc.workloads import examples
from s2mc.workloads.cipher_sim.grid import AesGrid
from s2mc.workloads.cipher_sim.grid import run_grid as aes_run_grid
from s2mc.workloads.program_grid import ProgramGrid, run_grid

MESH = dict(interconnect="mesh", coherence="directory")


def new_id():
    return records.new_run_id("run")


def test_a_program_grid_runs_each_interconnect_with_the_caches_it_can_keep():
    grid = ProgramGrid(programs=("spin_lock.s",), cores=(4,), caches=("none", "mesi"), interconnects=("bus", "mesh"))
    # a mesh keeps a directory, which needs msi or mesi caches: (mesh, none) is not a run
    assert [(j[2], j[3]) for j in grid.jobs()] == [("bus", "none"), ("bus", "mesi"), ("mesh", "mesi")]
    results, rows = run_grid(grid, new_run_id=new_id)
    direct = Machine(examples.load("spin_lock.s"), cores=4, cache="mesi", **MESH).run()
    assert results[2].cycles == direct.cycles and results[2].network == direct.network
    df = records.make_records(rows)
    whole = df[(df["core"] == -1)]
    mesh = whole[whole["variant"] == "mesi-64x2-w4/mesh-directory-lk1-r1-f4"]
    got = dict(zip(mesh["metric"], mesh["value"]))
    assert got["cycles"] == direct.cycles
    assert got["messages_sent"] == sum(c["messages_sent"] for c in direct.cores) > 0
    assert set(whole["variant"]) == {"", "mesi-64x2-w4", "mesi-64x2-w4/mesh-directory-lk1-r1-f4"}


def test_a_grid_whose_interconnect_no_cache_can_go_with_is_one_line():
    with pytest.raises(S2mcError, match="^interconnect ring: coherence directory needs cache msi or mesi"):
        ProgramGrid(programs=("spin_lock.s",), caches=("none",), interconnects=("ring",)).check()
    with pytest.raises(S2mcError, match="^interconnect mesh: coherence directory needs cache msi or mesi"):
        AesGrid(cores=(4,), sizes=(64,), caches=("moesi",), interconnects=("mesh",)).check()


S2MC = str(Path(sys.executable).with_name("s2mc"))


def test_s2mc_aes_runs_each_interconnect_and_says_messages_where_there_is_no_bus(tmp_path):
    proc = subprocess.run([S2MC, "aes", "--cores", "4", "--bytes", "64", "--style", "ttable", "--cache", "mesi",
                           "--interconnect", "bus,mesh", "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    bus, mesh = json.loads(proc.stdout)["runs"]
    assert "interconnect" not in bus and mesh["interconnect"] == "mesh" and mesh["coherence"] == "directory"
    direct = AesGrid(cores=(4,), sizes=(64,), styles=("ttable",), caches=("mesi",), interconnects=("mesh",))
    assert mesh["cycles"] == aes_run_grid(direct, new_run_id=new_id)[0][0].result.cycles
    proc = subprocess.run([S2MC, "aes", "--cores", "4", "--bytes", "64", "--style", "ttable", "--cache", "mesi",
                           "--interconnect", "mesh"], capture_output=True, text=True, timeout=120)
    table = (proc.stdout + proc.stderr).split("mesh-directory-lk1-r1-f4", 1)[1].splitlines()
    assert table[1].split()[-1] == "messages"
    assert table[3].split()[-1] == str(sum(c["messages_sent"] for c in mesh["per_core"]))
    proc = subprocess.run([S2MC, "aes", "--cores", "4", "--bytes", "64", "--interconnect", "ring"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == ["s2mc: error: interconnect ring: coherence directory needs cache msi "
                                                "or mesi (not none): the directory keeps private caches coherent"]


def test_the_aes_grid_runs_on_a_ring_and_a_mesh_checked_against_cryptography():
    grid = AesGrid(cores=(4,), sizes=(64,), styles=("ttable",), caches=("mesi",), interconnects=("bus", "ring", "mesh"))
    runs, rows = aes_run_grid(grid, new_run_id=new_id)
    assert [r.config.interconnect for r in runs] == ["bus", "ring", "mesh"]
    assert all(r.checked for r in runs)
    assert [r.config.variant.split("/")[-1] for r in runs] == ["mesi-64x2-w4", "ring-directory-lk1-r1-f4",
                                                                "mesh-directory-lk1-r1-f4"]
    assert runs[0].result.network is None and runs[2].result.network["topology"].startswith("mesh")
    assert len({r.result.cycles for r in runs}) == 3


def test_a_spec_sweeps_interconnects_and_leaves_out_cores_the_machine_cannot_have(tmp_path):
    top = PARAMS["cores"].max
    path = tmp_path / "net.toml"
    path.write_text('[[grid]]\nkind = "program"\nprograms = ["spin_lock.s"]\ncores = [2]\n'
                    f'cores_when_allowed = [4, {top * 4}]\ncaches = ["mesi"]\ninterconnects = ["bus", "ring"]\n')
    spec = specs.load(path)
    assert spec.grids[0].cores == (2, 4) and spec.grids[0].interconnects == ("bus", "ring")
    assert spec.notes == (f"net.toml: [[grid]] 1: {top * 4} cores not run: simulator/params.toml allows at most "
                          f"{top} cores",)
    path.write_text('[[grid]]\nkind = "program"\ninterconnects = ["torus"]\n')
    with pytest.raises(S2mcError, match=r"net.toml: \[\[grid\]\] 1: interconnects: .*torus"):
        specs.load(path)


def test_the_network_lab_specs_declare_the_cores_once_and_256_when_allowed():
    locks = specs.load(specs.spec_dir() / "network_lab.toml")    # the locks stop at 64 (the page says why)
    assert locks.grids[0].cores == (4, 8, 16, 32, 64) and not locks.notes
    for name in ("network_aes",):
        spec = specs.load(specs.spec_dir() / f"{name}.toml")
        if PARAMS["cores"].max < 256:
            assert spec.grids[0].cores == (4, 8, 16, 32, 64)
            assert spec.notes and "256 cores not run" in spec.notes[0]
        else:
            assert spec.grids[0].cores == (4, 8, 16, 32, 64, 256) and not spec.notes
        assert spec.grids[0].interconnects == ("bus", "ring", "mesh")


def test_the_network_part_round_trips():
    part = network_part("ring", "directory", 2, 3, 8)
    assert part == "ring-directory-lk2-r3-f8"
    assert parse_network_part(part) == dict(interconnect="ring", coherence="directory", link_latency=2,
                                            router_latency=3, flit_words=8)
    assert network_part("bus", "snoop", 1, 1, 4) == "" and parse_network_part("mesi-64x2-w4") is None


def test_the_zero_load_formula_is_the_worked_examples():
    # docs/timing-model.md: a read miss over 2 hops on the 2x2 mesh takes 6 + 2 + 7 = 15 cycles
    assert network.zero_load_miss(2, router_latency=1, link_latency=1, mem_latency=2, line_words=4, flit_words=4) == 15
    # no hops: the GetS ejects at once (R + 1), memory, the Data ejects (R + 2 flits)
    assert network.zero_load_miss(0, router_latency=1, link_latency=1, mem_latency=2, line_words=4, flit_words=4) == 7
    # 1-word flits: the data message is 5 flits
    assert network.zero_load_miss(1, router_latency=0, link_latency=1, mem_latency=3, line_words=4, flit_words=1) == 11


def distance_records(cores: int, interconnect: str = "mesh") -> pd.DataFrame:
    grid = ProgramGrid(programs=("miss_distance.s",), cores=(cores,), caches=("mesi",), interconnects=(interconnect,))
    results, rows = run_grid(grid, new_run_id=new_id, experiment="lab")
    assert results[0].output.split() == [str(cores)]
    return records.make_records(rows)


def test_each_cores_miss_in_miss_distance_takes_the_formulas_cycles_for_its_hops():
    points = network.distance_points(distance_records(16))
    assert list(points["core"]) == list(range(1, 16)) and (points["dir_misses"] == 1).all()
    side = math.isqrt(16)
    assert list(points["hops"]) == [i % side + i // side for i in range(1, 16)]   # to the home, tile 0
    assert list(points["latency"]) == [4 * h + 7 for h in points["hops"]]         # by hand, at the defaults
    assert (points["latency"] == points["formula"]).all()
    table = network.distance_table(points)
    assert list(table["hops"]) == list(range(1, 7)) and list(table["cores"]) == [2, 3, 4, 3, 2, 1]


def test_on_a_ring_the_distance_is_the_shorter_way_round():
    points = network.distance_points(distance_records(8, "ring"))
    assert list(points["hops"]) == [min(i, 8 - i) for i in range(1, 8)]
    assert (points["latency"] == points["formula"]).all()


def test_the_section_puts_the_bus_beside_the_ring_and_the_mesh_with_the_runs_counters(tmp_path):
    grid = ProgramGrid(programs=("spin_lock.s", "ttas_lock.s"), cores=(4, 8), caches=("mesi",),
                       interconnects=("bus", "ring", "mesh"))
    results, rows = run_grid(grid, new_run_id=new_id, experiment="lab")
    df = records.make_records(rows + list(distance_records(4).to_dict("records")))
    runs = network.network_runs(df)
    for program in ("spin_lock", "ttas_lock"):
        assert list(dict.fromkeys(runs[runs["workload"] == program]["machine"])) == [
            "bus, snoop MESI", "ring, directory MESI", "mesh, directory MESI"]
    for res, (program, _, interconnect, _, cores) in zip(results, grid.jobs()):
        r = runs[(runs["workload"] == program[:-2]) & (runs["cores"] == cores)
                 & (runs["interconnect"] == interconnect)].iloc[0]
        assert r["cycles"] == res.cycles
        assert r["stall_per_core"] == res.stall_cycles / cores
        if interconnect == "bus":
            assert r["traffic"] == sum(c[k] for c in res.cores for k in ("bus_rd", "bus_rdx", "bus_upgr", "bus_upd"))
            assert r["invals"] == sum(c["invalidations_received"] for c in res.cores)
        else:
            assert r["traffic"] == sum(c["messages_sent"] for c in res.cores)
            assert r["invals"] == sum(c["invalidations_sent"] for c in res.cores)
            busy = [c["home_busy_cycles"] for c in res.cores]
            assert r["hot_tile"] == busy.index(max(busy)) and r["hot_util"] == max(busy) / res.cycles
            assert r["hot_util"] == max(res.network["home_utilisation"])
    parts = network.report_parts(df, tmp_path)
    text = "\n".join(p[1] for p in parts if p[0] == "p")
    assert "**spin_lock**" in text and "**ttas_lock**" in text
    assert (tmp_path / "network_stalls.png").stat().st_size > 2000
    assert (tmp_path / "network_distance.png").stat().st_size > 2000
    assert "3 of the 3 misses take exactly the formula's cycles." in text


def test_no_network_runs_is_one_hint():
    parts = network.report_parts(records.empty())
    assert len(parts) == 1 and "s2mc sweep network_lab" in parts[0][1]


def test_a_cached_aes_sweep_without_a_one_core_run_still_reports():
    # the network lab's AES runs start at 4 cores: no speedup over one core can be stated, and the
    # caches section must say nothing about it rather than fail
    from s2mc.analysis import caches
    grid = AesGrid(cores=(2, 4), sizes=(64,), styles=("ttable",), caches=("mesi",))
    _, rows = aes_run_grid(grid, new_run_id=new_id)
    parts = caches.report_parts(records.make_records(rows))
    runs, = (r for r in [aes_run_grid(grid, new_run_id=new_id)[0]])
    tables = [p[1] for p in parts if p[0] == "table"]
    assert list(tables[0].iloc[0][1:]) == [f"{r.result.cycles:,}" for r in runs]   # cycles, not speedups
    assert any("no run on one core" in p[1] for p in parts if p[0] == "p")
    assert not any("peaks at" in p[1] for p in parts if p[0] == "p")


def test_two_network_shapes_of_one_program_are_two_rows():
    rows = []
    for lk in (1, 3):
        grid = ProgramGrid(programs=("ttas_lock.s",), cores=(4,), caches=("mesi",), interconnects=("mesh",),
                           link_latency=lk)
        rows += run_grid(grid, new_run_id=new_id)[1]
    lock = ProgramGrid(programs=("spin_lock.s",), cores=(4,), caches=("mesi",), interconnects=("bus", "mesh"))
    rows += run_grid(lock, new_run_id=new_id)[1]
    runs = network.network_runs(records.make_records(rows))
    ttas = runs[runs["workload"] == "ttas_lock"]
    assert list(ttas["machine"]) == ["mesh, directory MESI (mesi-64x2-w4/mesh-directory-lk1-r1-f4)",
                                     "mesh, directory MESI (mesi-64x2-w4/mesh-directory-lk3-r1-f4)"]
    assert ttas["cycles"].nunique() == 2
    # another program's one mesh keeps the short name
    assert list(runs[runs["workload"] == "spin_lock"]["machine"]) == ["bus, snoop MESI", "mesh, directory MESI"]
