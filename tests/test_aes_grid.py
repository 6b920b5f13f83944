"""The AES grid as a library (s2mc.workloads.cipher_sim.grid) and the seed 003 join (s2mc.analysis.seed003):
which runs a grid makes, its checks before running, its records against those of `s2mc aes`, and
the text tables on hand-made runs with hand-computed cells."""
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from s2mc.analysis import records, seed003
from s2mc.cli.main import cli
from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_sim.grid import AesGrid, format_tables, run_grid


def test_jobs_cross_product_and_order():
    grid = AesGrid(cores=(1, 2), sizes=(16, 32, 48), styles=("bytes", "ttable"),
                   partitions=("interleaved", "extended"), ext_blocks=(2, 3), mem_latencies=(1, 4))
    jobs = grid.jobs()
    # styles x (interleaved + 2 extended run lengths) x latencies = 12 configurations
    assert len(grid.configs()) == 2 * 3 * 2 and len(jobs) == 12 * 3 * 2
    assert [(c, n) for c, n, _ in jobs[:6]] == [(1, 16), (2, 16), (1, 32), (2, 32), (1, 48), (2, 48)]
    assert {cfg["ext_blocks"] for _, _, cfg in jobs if cfg["partition"] == "extended"} == {2, 3}


def test_a_fixed_key_sets_the_key_size():
    grid = AesGrid(key_bits=(128, 256), key=bytes(24))
    assert grid.key_sizes == (192,)
    assert {cfg["key_bits"] for cfg in grid.configs()} == {192}
    _, _, keys = grid.inputs()
    assert keys == {192: bytes(24)}
    assert grid.params()["key_given"] is True and grid.params()["key_bits"] == [192]


@pytest.mark.parametrize("grid,message", [
    (AesGrid(sizes=(16, 40)), "ECB needs whole 16-byte blocks; 40 is not a multiple of 16"),
    (AesGrid(sizes=(1 << 16,), mem_words=100_000), "raise --mem-words to at least"),
])
def test_checks_before_running(grid, message):
    with pytest.raises(S2mcError, match=message):
        run_grid(grid, new_run_id=lambda: "r")


def test_vcd_needs_the_systemc_engine():
    with pytest.raises(S2mcError, match="--vcd needs --engine systemc"):
        run_grid(AesGrid(cores=(1,), sizes=(16,)), new_run_id=lambda: "r", vcd="x.vcd")


def test_records_equal_those_of_the_command(tmp_path):
    ids = iter(f"run-{i}" for i in range(100))
    grid = AesGrid(cores=(1, 3), sizes=(32, 48), modes=("ctr",), styles=("ttable",), mem_latencies=(1,))
    runs, rows = run_grid(grid, new_run_id=lambda: next(ids), experiment="lib")
    assert all(r.checked for r in runs) and len(runs) == 4
    ours = records.make_records(rows)
    assert sorted(set(ours["run_id"])) == [f"run-{i}" for i in range(4)]   # one id per run
    out = tmp_path / "cli.parquet"
    res = CliRunner().invoke(cli, ["aes", "--cores", "1,3", "--bytes", "32,48", "--mode", "ctr", "--style",
                                   "ttable", "--mem-latency", "1", "--experiment", "lib", "--out", str(out), "-q"])
    assert res.exit_code == 0, res.output
    theirs = records.read(out)
    timing = ["sim_seconds", "sim_mips"]          # host time differs from run to run
    key = ["workload", "variant", "cores", "bytes", "core", "metric"]

    def same(df):
        return df[~df["metric"].isin(timing)].drop(columns="run_id").sort_values(key).reset_index(drop=True)
    assert same(ours).equals(same(theirs))


def _run(cores, nbytes, cycles, stalls, variant="bytes/interleaved", opt=1, workload="aes-128-ecb-enc"):
    cfg = SimpleNamespace(workload=workload, variant=variant, engine="fast", cores=cores, opt=opt, interconnect="bus")
    res = SimpleNamespace(cycles=cycles, stall_cycles=stalls, instructions=cycles // 2,
                          bus_utilisation=0.5)
    return SimpleNamespace(config=cfg, nbytes=nbytes, result=res)


def test_format_tables_by_hand():
    runs = [_run(2, 1024, 500, 70), _run(1, 1024, 1000, 0), _run(4, 16, 90, 7, variant="ttable/contiguous")]
    assert format_tables(runs) == "\n".join([
        "# aes-128-ecb-enc  bytes/interleaved  engine fast",
        "bytes  cores  cycles  speedup  instructions  stall cycles  bus util",
        "-----  -----  ------  -------  ------------  ------------  --------",
        "   1K      1    1000     1.00           500             0     50.0%",
        "   1K      2     500     2.00           250            70     50.0%",
        "",
        "# aes-128-ecb-enc  ttable/contiguous  engine fast",
        "bytes  cores  cycles  speedup vs 4c  instructions  stall cycles  bus util",
        "-----  -----  ------  -------------  ------------  ------------  --------",
        "   16      4      90           1.00            45             7     50.0%"])


def test_seed003_comparison_by_hand():
    # The paper (seed 003 Tables 3-4): 32 bytes, 1 core: 37189 cycles, 10346 stalls; 2 cores: 26917, 19459.
    runs = [_run(1, 32, 18594, 5173), _run(2, 32, 26917, 19459), _run(3, 32, 9000, 100),
            _run(1, 32, 1, 1, variant="ttable/interleaved"),          # not the paper's configuration
            _run(1, 48, 1, 1)]                                       # not one of the paper's sizes
    text, rows = seed003.comparison(runs)
    assert [(r["bytes"], r["cores"]) for r in rows] == [(32, 1), (32, 2), (32, 3)]
    one, two, three = rows
    assert one["paper_cycles"] == 37189 and one["cycles_ratio"] == pytest.approx(18594 / 37189)
    assert one["stall_ratio"] == pytest.approx(5173 / 10346)
    assert two["cycles_ratio"] == 1.0 and two["speedup"] == pytest.approx(18594 / 26917)
    assert two["paper_speedup"] == pytest.approx(37189 / 26917)
    assert three["paper_cycles"] is None and three["speedup"] == pytest.approx(18594 / 9000)
    # One column per core count, its parts aligned ('-' for a number the paper lacks)
    assert "   32  18594 | 37189 | 0.50  26917 | 26917 | 1.00  9000 | - | -" in text
    assert "1.00 | 1.00  0.69 | 1.38  2.07 | -" in text
    table3 = text.split("Table 3")[1].split("\n\n")[0].splitlines()
    bars = {line.index("|") for line in table3[3:]}          # the rows, under the title and the header
    assert len(bars) == 1                          # every row's first '|' in the same place
    assert "ours compiled at -O1" in text and "-O0" not in text
    # -O0 runs are compared on their own; other configurations give nothing
    text0, rows0 = seed003.comparison([_run(1, 64, 69901, 0, variant="bytes/interleaved/O0", opt=0)])
    assert rows0[0]["opt"] == 0 and rows0[0]["cycles_ratio"] == 1.0 and "-O0" in text0
    assert seed003.comparison([_run(1, 64, 1, 1, variant="bytes/contiguous")]) == ("", [])


def test_seed003_speedup_without_a_one_core_run_is_a_dash_not_an_empty_cell():
    text, _ = seed003.comparison([_run(4, 64, 16689, 37343)])
    # The paper's 4-core speedup at 64 bytes is 69901 / 49924 = 1.40; we have no 1-core run.
    assert "   64  - | 1.40" in text and "no 1-core run of ours" in text
