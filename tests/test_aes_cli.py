"""`s2mc aes`: the grid, records, the seed 003 comparison, and every error path."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from s2mc.analysis import records
from s2mc.cli.main import cli


def run(*args):
    return CliRunner().invoke(cli, ["aes", *args], catch_exceptions=False)


def test_seed003_grid_prints_both_tables_with_ratios(tmp_path):
    out = tmp_path / "seed.parquet"
    r = run("--cores", "1,2,3,4", "--bytes", "32,64,128,256", "--style", "bytes", "--mode", "ecb",
            "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    text = r.output
    assert "Table 3: cycles" in text and "Table 4: memory stall cycles" in text
    assert "266173" in text and "289148" in text          # the paper's numbers are printed
    assert "Speedup over one core" in text
    df = records.load([str(out)])
    assert set(df["source"]) == {"sim"} and set(df["platform"]) == {"s2"}
    whole = df[(df["core"] == -1) & (df["metric"] == "cycles")]
    assert len(whole) == 16
    assert set(whole["workload"]) == {"aes-128-ecb-enc"}
    assert set(whole["variant"]) == {"bytes/interleaved"}   # matches analysis/reference/seed003.csv
    per_core = df[(df["core"] >= 0) & (df["metric"] == "stall_cycles")]
    # per-core rows sum to the whole-run stall count (the seed's Table 4 definition)
    for rid, g in per_core.groupby("run_id"):
        total = df[(df["run_id"] == rid) & (df["core"] == -1) & (df["metric"] == "stall_cycles")]
        assert g["value"].sum() == total["value"].iloc[0]
    assert (out.parent / "seed.manifest.json").exists()


def test_seed_grid_at_O0_is_compared_too():
    r = run("--cores", "1,2", "--bytes", "32,64", "--opt", "1,0", "--json", "-q")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert {x["variant"] for x in data["runs"]} == {"bytes/interleaved", "bytes/interleaved/O0"}
    assert sorted({x["opt"] for x in data["seed003"]}) == [0, 1]
    o0 = {(x["bytes"], x["cores"]): x for x in data["seed003"] if x["opt"] == 0}
    o1 = {(x["bytes"], x["cores"]): x for x in data["seed003"] if x["opt"] == 1}
    assert o0[(64, 1)]["cycles"] > o1[(64, 1)]["cycles"]          # -O0 code is bigger
    assert o0[(64, 1)]["paper_cycles"] == 69901


def test_json_output_and_list_valued_sweeps():
    r = run("--cores", "1,2", "--bytes", "64", "--mem-latency", "1,4", "--arbitration",
            "fifo,round_robin", "--style", "bytes,ttable", "--mode", "ctr", "--json", "-q")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    runs = data["runs"]
    assert len(runs) == 2 * 2 * 2 * 2
    assert all(x["checked"] for x in runs)
    variants = {x["variant"] for x in runs}
    assert "bytes/interleaved/L4/round_robin" in variants and "ttable/interleaved/L1" in variants
    one = next(x for x in runs if x["cores"] == 2)
    assert len(one["per_core"]) == 2 and one["cycles"] > 0


def test_partitions_key_sizes_and_directions():
    r = run("--cores", "3", "--bytes", "160", "--partition", "interleaved,contiguous,extended",
            "--ext-blocks", "2,5", "--key-bits", "192,256", "--direction", "enc,dec", "--json", "-q")
    assert r.exit_code == 0, r.output
    runs = json.loads(r.stdout)["runs"]
    assert len(runs) == 4 * 2 * 2
    assert {x["variant"] for x in runs} == {"bytes/interleaved", "bytes/contiguous",
                                            "bytes/extended-2", "bytes/extended-5"}
    assert {x["workload"] for x in runs} == {"aes-192-ecb-enc", "aes-192-ecb-dec",
                                             "aes-256-ecb-enc", "aes-256-ecb-dec"}


def test_tables_per_configuration():
    r = run("--cores", "1,2", "--bytes", "32,1K", "--style", "ttable", "--mode", "ctr", "-q")
    assert r.exit_code == 0, r.output
    assert "# aes-128-ctr-enc  ttable/interleaved  engine fast" in r.output
    for col in ("cycles", "speedup", "instructions", "stall cycles", "bus util"):
        assert col in r.output
    assert "Table 3" not in r.output                       # not the seed configuration


def test_fixed_key():
    r = run("--bytes", "16", "--cores", "1", "--key", "000102030405060708090a0b0c0d0e0f"
            "1011121314151617", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["runs"][0]["workload"] == "aes-192-ecb-enc"


@pytest.mark.parametrize("args,message", [
    (["--bytes", "33"], "ECB needs whole 16-byte blocks; 33 is not a multiple of 16"),
    (["--bytes", "64K", "--mem-words", "100000"], "raise --mem-words to at least"),
])
def test_error_paths(args, message):
    res = CliRunner().invoke(cli, ["aes", *args, "-q"])
    assert res.exit_code == 1
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("s2mc: error: ") and message in line


@pytest.mark.parametrize("args,message", [
    # option values, checked while parsing (cli/options.py)
    (["--style", "words"], "'--style': unknown value 'words' (choose bytes, ttable)"),
    (["--mode", "cbc"], "'--mode': unknown value 'cbc'"),
    (["--partition", "random"], "'--partition': unknown value 'random'"),
    (["--key-bits", "512"], "'--key-bits': unknown value '512'"),
    (["--direction", "up"], "'--direction': unknown value 'up'"),
    (["--opt", "2"], "'--opt': unknown value '2'"),
    (["--ext-blocks", "0"], "'--ext-blocks': '0' is out of range (1..8388608)"),
    (["--bytes", "0"], "'--bytes': '0' is out of range (1..128M bytes"),
    (["--bytes", "lots"], "'--bytes': 'lots' is not a size"),
    (["--key", "zz"], "'--key': not a hex string (bad character 'z')"),
    (["--key", "0011"], "'--key': 4 hex digits; AES keys need 32, 48 or 64"),
    # the machine parameters: their declaration (simulator/params.toml) states the range
    (["--cores", "0"], "'--cores': 0 is out of range (1..256)"),
    (["--cores", "1,257"], "'--cores': 257 is out of range (1..256)"),
    (["--cores", "two"], "'--cores': 'two' is not an integer"),
    (["--cores", ","], "'--cores': empty list"),
    (["--arbitration", "fifo,lottery"],
     "'--arbitration': unknown value 'lottery' (choose fifo, fixed, round_robin, burst4)"),
    (["--engine", "verilog"], "'--engine': unknown value 'verilog' (choose fast, systemc)"),
    (["--mem-latency", "0"], "'--mem-latency': 0 is out of range (1..1000)"),
    (["--mem-latency", "1001"], "'--mem-latency': 1001 is out of range (1..1000)"),
    (["--mem-words", "0"], "'--mem-words': 0 is out of range (1..67108864)"),
    (["--mem-words", "67108865"], "'--mem-words': 67108865 is out of range (1..67108864)"),
])
def test_machine_parameter_errors_are_usage_errors(args, message):
    res = CliRunner().invoke(cli, ["aes", *args, "-q"])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1
    assert " aes: error: Invalid value for " in res.output and message in res.output


def test_ctr_accepts_any_length():
    r = run("--mode", "ctr", "--bytes", "1,33,100", "--cores", "1,3", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert sorted({x["bytes"] for x in json.loads(r.stdout)["runs"]}) == [1, 33, 100]


@pytest.mark.slow
def test_scaling_sweep_to_64_cores_and_64k(tmp_path):
    out = tmp_path / "scaling.parquet"
    r = run("--cores", "1,2,4,8,16,32,64", "--bytes", "1K,4K,16K,64K", "--out", str(out), "-q")
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out)
    assert df[(df["core"] == -1) & (df["metric"] == "cycles")].shape[0] == 28
    assert df["cores"].max() == 64 and df["bytes"].max() == 65536


@pytest.mark.slow
@pytest.mark.parametrize("style", ["bytes", "ttable"])
def test_full_cross_product_larger_data(style):
    r = run("--style", style, "--cores", "1,2,3,4,8", "--bytes", "1K", "--mode", "ecb,ctr",
            "--direction", "enc,dec", "--key-bits", "128,192,256",
            "--partition", "interleaved,contiguous,extended", "--ext-blocks", "1,3,8", "--json", "-q")
    assert r.exit_code == 0, r.output
    assert len(json.loads(r.stdout)["runs"]) == 5 * 2 * 2 * 3 * 5


def test_systemc_engine_missing_is_a_clear_error(monkeypatch):
    from s2mc.simulator import systemc_engine
    monkeypatch.setattr(systemc_engine, "available", lambda: False)
    res = CliRunner().invoke(cli, ["aes", "--engine", "systemc", "-q"])
    assert res.exit_code == 1 and "SystemC engine is not built" in res.output
