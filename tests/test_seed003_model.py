"""The seed 003 model: `s2mc aes --preset seed003`. The preset's records, its
14 cells pinned (the simulator is deterministic), its errors against the paper's Tables 3 and 4,
the preset grid in the library, and its options."""
from click.testing import CliRunner

from s2mc.analysis import records, seed003
from s2mc.cli.main import cli
from s2mc.workloads.cipher_sim.grid import preset, run_grid


def cells_of(df, variant):
    """(bytes, cores) -> (cycles, stall_cycles) of the whole-run rows of one variant."""
    w = df[(df["variant"] == variant) & (df["core"] == -1)]
    get = {(int(r.bytes), int(r.cores), r.metric): int(r.value) for r in w.itertuples()}
    return {(b, c): (v, get[(b, c, "stall_cycles")]) for (b, c, m), v in get.items() if m == "cycles"}


# --------------------------------------------------------------------------------------------------
# the preset: the done-when command, its cells pinned
# --------------------------------------------------------------------------------------------------

#: s2mc aes --preset seed003: (bytes, cores) -> (cycles, summed stall cycles), deterministic.
PRESET_CELLS = {
    (32, 1): (37189, 10072), (32, 2): (28003, 20086), (32, 3): (29745, 24310), (32, 4): (31957, 30913),
    (64, 1): (69901, 19166), (64, 2): (50595, 36925), (64, 3): (46763, 62780), (64, 4): (50619, 83691),
    (128, 1): (135325, 37354), (128, 2): (95496, 70383), (128, 3): (86673, 119185), (128, 4): (91740, 153491),
    (256, 1): (266173, 73730), (256, 2): (185637, 137637), (256, 3): (176287, 222891), (256, 4): (174250, 293433),
}


def test_the_done_when_command_writes_the_pinned_cells(tmp_path):
    out = tmp_path / "r.parquet"
    res = CliRunner().invoke(cli, ["aes", "--cores", "1,2,3,4", "--bytes", "32,64,128,256", "--style", "bytes",
                                   "--mode", "ecb", "--preset", "seed003", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    df = records.load([out])
    assert set(df["variant"]) == {seed003.SEED003_MODEL_VARIANT}
    cells = cells_of(df, seed003.SEED003_MODEL_VARIANT)
    assert cells == PRESET_CELLS
    # the 1-core cycles are the paper's (calibrated); the multi-core cells are predictions
    e = seed003.errors(cells)
    assert all(e["cycles"][(b, 1)] == 0 for b in (32, 64, 128, 256))
    # the target, 3 % in both, met: 2.53 % and 2.19 %
    assert round(100 * e["multi_cycles"], 2) == 2.53 and round(100 * e["multi_stalls"], 2) == 2.19
    # what is left: every 2-core cell is 4.0-4.6 % slow (fixed priority: 4.8-5.8 %)
    assert all(0.039 < e["cycles"][k] < 0.047 for k in e["cycles"] if k[1] == 2)
    assert all(abs(e["cycles"][k]) < 0.03 for k in e["cycles"] if k[1] > 2)
    # the shape the paper reports: 4 cores slower than 3 at 64 and 128 bytes, a flat 1.5 speedup
    assert cells[(64, 4)][0] > cells[(64, 3)][0] and cells[(128, 4)][0] > cells[(128, 3)][0]
    assert "Error against the paper over its 10 multi-core cells" in res.output
    # per-core finish cycles and idle: the staircase (core 0 first, the last core sets the time)
    fin = df[(df["metric"] == "finish_cycle") & (df["cores"] == 4) & (df["bytes"] == 256) & (df["core"] >= 0)]
    fin = fin.sort_values("core")
    assert list(fin["value"]) == sorted(fin["value"]) and fin["value"].iloc[-1] == 174250
    idle = df[(df["metric"] == "idle_cycles") & (df["core"] == -1) & (df["cores"] == 4) & (df["bytes"] == 256)]
    assert idle["value"].iloc[0] == sum(174250 - v for v in fin["value"])


def test_the_preset_library_grid_is_the_command_and_options_replace_its_values():
    runs, _ = run_grid(preset("seed003", cores=(2,), sizes=(64,)), new_run_id=lambda: "r")
    assert [(r.result.cycles, r.result.stall_cycles) for r in runs] == [PRESET_CELLS[(64, 2)]]
    res = CliRunner().invoke(cli, ["aes", "--preset", "seed003", "--cores", "2", "--bytes", "64",
                                   "--arbitration", "fifo", "--json", "-q"])
    assert res.exit_code == 0, res.output
    assert '"variant": "bytes/interleaved/O0/per-core/cal-seed003"' in res.output


def test_the_preset_policy_is_named_in_legends():
    from s2mc.analysis import summaries
    assert summaries.variant_parts(seed003.SEED003_WORKLOAD, seed003.SEED003_MODEL_VARIANT)["policy"] == "burst4"


def test_a_preset_that_cannot_run_is_one_line():
    res = CliRunner().invoke(cli, ["aes", "--preset", "seed003", "--style", "ttable", "--cores", "1", "--bytes", "16"])
    assert res.exit_code == 1 and res.output.count("\n") == 1 and "calibration seed003 is fitted" in res.output




def test_errors_by_hand():
    # 64 bytes: 2 cores 10 % over the paper's 48,358 cycles, stalls exact; 1 core exact
    e = seed003.errors({(64, 1): (69901, 19444), (64, 2): (48358 * 1.1, 35475), (48, 2): (1, 1)})
    assert e["cells"] == 2 and e["multi_cells"] == 1           # 48 bytes is not one of the paper's
    assert abs(e["multi_cycles"] - 0.1) < 1e-12 and e["multi_stalls"] == 0
    assert abs(e["all_cycles"] - 0.05) < 1e-12
    assert "cycles 10.00 % and summed stalls 0.00 %" in seed003.error_text(e)


def test_the_docs_table_is_the_presets():
    """docs/aes-on-s2.md's table of the model is what the simulator computes (deterministic)."""
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "aes-on-s2.md").read_text(encoding="utf-8")
    paper = seed003.paper_cells()
    for (b, c), (cyc, st) in PRESET_CELLS.items():
        if (b, c) in paper:
            assert f"| {b} | {c} | {cyc:,} | {int(paper[(b, c)][0]):,} |" in text, (b, c)
            assert f"| {st:,} | {int(paper[(b, c)][1]):,} |" in text, (b, c)
    assert "**2.53 % in cycles and 2.19 % in summed\nstalls**" in text
