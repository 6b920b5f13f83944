"""Plain programs as an experiment grid (s2mc.workloads.program_grid, spec kind "program"): the runs
are those of `s2mc run`, their records name the program and the cache configuration."""
import pytest

from s2mc.analysis import records
from s2mc.common.errors import S2mcError
from s2mc.experiments import specs
from s2mc.simulator import Machine
from s2mc.workloads import examples
from s2mc.workloads.program_grid import ProgramGrid, run_grid



@pytest.mark.parametrize("caches", [("none",), ("none", "mesi")])
def test_the_grid_runs_what_s2mc_run_runs(caches):
    grid = ProgramGrid(programs=("spin_lock.s",), cores=(1, 2), caches=caches)
    results, rows = run_grid(grid, new_run_id=lambda: records.new_run_id("run"), experiment="t")
    assert [(r.config.cache, r.config.cores) for r in results] == [(c, n) for c in caches for n in (1, 2)]
    prog = examples.load("spin_lock.s")
    for res in results:   # the same run as Machine with the same parameters
        alone = Machine(prog, cores=res.config.cores, cache=res.config.cache).run()
        assert (alone.cycles, alone.cores) == (res.cycles, res.cores)
    df = records.make_records(rows)
    whole = df[(df["core"] == -1) & (df["metric"] == "cycles")]
    assert list(whole["workload"]) == ["spin_lock"] * len(results)
    assert list(whole["variant"]) == ["" if c == "none" else "mesi-64x2-w4" for c in caches for _ in (1, 2)]
    assert list(whole["value"]) == [r.cycles for r in results]


def test_a_spec_of_kind_program_is_checked(tmp_path):
    good = tmp_path / "good.toml"
    good.write_text('title = "t"\n[[grid]]\nkind = "program"\nprograms = ["spin_lock.s"]\ncores = [1, 2]\n'
                    'caches = ["none", "dragon"]\n')
    spec = specs.load(good)
    assert spec.source == "sim" and spec.grids[0] == ProgramGrid(programs=("spin_lock.s",), cores=(1, 2),
                                                                  caches=("none", "dragon"))
    for body, why in [('programs = ["nowhere.s"]', "nowhere.s: no such file"),
                      ('caches = ["mosi"]', "caches: unknown value 'mosi'"),
                      ('caches = ["mesi"]\ncache_lines = 3', "cache_lines: 3 is not a power of two")]:
        bad = tmp_path / "bad.toml"
        bad.write_text(f'title = "t"\n[[grid]]\nkind = "program"\n{body}\n')
        with pytest.raises(S2mcError, match=why):
            specs.load(bad)


def test_a_sweep_runs_a_program_grid_one_run_a_task(tmp_path):
    from s2mc.experiments import registry, sweep
    exp = registry.Experiment("t", "t", "sim", (ProgramGrid(programs=("spin_lock.s",), cores=(1, 2),
                                                            caches=("none", "mesi")),))
    tasks = sweep.tasks(exp)
    assert [(t.kind, t.point["cache"], t.point["cores"]) for t in tasks] == \
        [("program", c, n) for c in ("none", "mesi") for n in (1, 2)]
    assert sweep.describe(tasks[3]) == "program spin_lock.s 2c mesi L2 fast"
    out = tmp_path / "s.parquet"
    sweep.run(exp, out)
    df = records.load([out])
    cycles = df[(df["core"] == -1) & (df["metric"] == "cycles")]["value"].tolist()
    prog = examples.load("spin_lock.s")
    assert cycles == [Machine(prog, cores=n, cache=c).run().cycles for c in ("none", "mesi") for n in (1, 2)]
