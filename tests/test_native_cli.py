"""`s2mc native`: the grid, records in the tidy schema (Parquet via --out), --json, --vs-openssl,
and every bad option. Timings are never asserted, only shapes and validity."""
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from s2mc.workloads import native

if not native.available():  # pragma: no cover - only with S2MC_WITH_NATIVE=OFF
    pytest.skip("native AES extension not built", allow_module_level=True)

from s2mc.analysis import records  # noqa: E402
from s2mc.cli.main import cli  # noqa: E402

FAST = ["--min-seconds", "0", "--reps", "1", "-q"]


def run(*args):
    return CliRunner().invoke(cli, ["native", *args], catch_exceptions=False)


def test_grid_json_and_parquet(tmp_path):
    out = tmp_path / "r.parquet"
    res = run("--threads", "1,2", "--bytes", "4K,1000", "--impl", "ttable,auto", "--strategy",
              "coarse,extended,contiguous", "--block-bytes", "512,1K", "--vs-openssl", "--out", str(out),
              "--json", *FAST)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    results = doc["results"]
    # 2 impls x (coarse + 2 extended + contiguous) x 2 threads x 2 sizes
    assert len(results) == 2 * 4 * 2 * 2
    assert {r["impl"] for r in results} == {"ttable", native.best_impl()}
    assert all(r["gb_per_s"] > 0 and r["ratio"] > 0 for r in results)
    df = records.read(out)
    assert list(df.columns) == list(records.COLUMNS)
    assert set(df["source"]) == {"native"}
    assert set(df["metric"]) == {"seconds", "bytes_per_second", "cycles_per_byte", "speedup_vs_openssl"}
    assert "openssl" in set(df["engine"]) and "extended-512" in set(df["variant"])
    assert set(df["cores"]) == {1, 2} and set(df["bytes"]) == {4096, 1000}
    assert (df["core"] == -1).all() and set(df["workload"]) == {"aes-128-ctr"}
    assert records.manifest_path_for(out).exists()
    assert pd.read_parquet(out).shape == df.shape


def test_vs_openssl_prints_ratio():
    res = run("--threads", "1", "--bytes", "16K", "--vs-openssl", "--key-bits", "256", *FAST)
    assert res.exit_code == 0, res.output
    assert "openssl" in res.output and "ratio" in res.output and "GB/s" in res.output


def test_csv_output(tmp_path):
    out = tmp_path / "r.csv"
    res = run("--threads", "1", "--bytes", "256", "--out", str(out), *FAST)
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(out)) == 3


@pytest.mark.parametrize("args,message", [
    (["--threads", "0"], "'--threads': '0' is out of range (1..1024)"),
    (["--threads", "-2"], "'--threads': '-2' is out of range (1..1024)"),
    (["--threads", "two"], "'--threads': 'two' is not an integer (or all, max)"),
    (["--threads", ","], "'--threads': empty list"),
    (["--bytes", "0"], "'--bytes': '0' is out of range (1.."),
    (["--bytes", "12Q"], "'--bytes': '12Q' is not a size"),
    (["--impl", "rot13"], "'--impl': unknown value 'rot13'"),
    (["--strategy", "fine"], "'--strategy': unknown value 'fine' (choose coarse, extended, contiguous)"),
    (["--block-bytes", "1000"], "'--block-bytes': '1000' is not a multiple of 16 bytes"),
    (["--block-bytes", "0"], "'--block-bytes': '0' is out of range (16.."),
    (["--reps", "0"], "'--reps': '0' is out of range (1..1000000)"),
    (["--min-seconds", "-1"], "'--min-seconds': '-1' is out of range (0..3600 s)"),
])
def test_bad_options(args, message):
    # usage errors (exit 2), checked while parsing the options (cli/options.py)
    extra = [] if "--bytes" in args else ["--bytes", "16"]
    res = run(*args, *extra, "-q")
    assert res.exit_code == 2, res.output
    assert res.output.startswith("s2mc native: error: Invalid value for ") and message in res.output, res.output
    assert res.output.count("\n") == 1


def test_unsupported_impl_is_a_clear_error():
    missing = [i for i in native.IMPLS if i not in native.supported_impls()]
    if not missing:
        pytest.skip("this CPU supports every compiled implementation")
    res = run("--impl", missing[0], "--bytes", "16")
    assert res.exit_code == 1 and "not supported by this CPU" in res.output


def test_bad_key_bits_is_a_usage_error():
    res = run("--key-bits", "100")
    assert res.exit_code == 2 and "--key-bits" in res.output


def test_info_lists_native():
    res = CliRunner().invoke(cli, ["info", "--json"], catch_exceptions=False)
    assert res.exit_code == 0
    facts = json.loads(res.output)
    assert facts["native"]["built"] is True and facts["native"]["best"] == native.best_impl()


def test_multi_mode_aggregates_over_threads(tmp_path):
    out = tmp_path / "m.parquet"
    res = run("--multi", "--threads", "1,2", "--bytes", "4K", "--vs-openssl", "--strategy", "coarse",
              "--out", str(out), "--json", *FAST)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output[res.output.index("{"):])
    assert [r["strategy"] for r in doc["results"]] == ["multi", "multi"]
    assert [r["total_bytes"] for r in doc["results"]] == [4096, 8192]
    df = records.read(out)
    assert set(df["variant"]) == {"multi", "evp-multi"} and set(df["bytes"]) == {4096, 8192}


def test_bench_ctr_python_api():
    r = native.bench_ctr(4096, impl="ttable", threads=2, min_reps=2, min_seconds=0, multi=True)
    assert r["engine"] == "ttable" and r["total_bytes"] == 8192 and r["reps"] >= 2
    assert 0 < r["seconds_best"] <= r["seconds_median"]


def test_native_help_lists_each_implementation_once():
    text = CliRunner().invoke(cli, ["native", "--help"], terminal_width=200).stdout
    block = text[text.index("--impl"):text.index("--strategy")]
    for name in ("sptable", "table-11-10-11", "table-6-5-5-5-5-6", "vaes512", "ttable"):
        assert block.count(name) == 1, name
