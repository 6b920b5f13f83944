"""The records schema: building, validating, writing, loading; docs/records.md is current."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from s2mc.analysis import records
from s2mc.common.errors import S2mcError

ROOT = Path(__file__).resolve().parents[1]


def _rows(n=2):
    return [{"run_id": "r1", "source": "sim", "metric": "cycles", "value": 100 + i, "cores": 2,
             "core": i - 1, "bytes": 64, "workload": "aes-128-ecb-enc"} for i in range(n)]


def test_make_records_fills_defaults_and_units():
    df = records.make_records(_rows())
    assert list(df.columns) == list(records.COLUMNS)
    assert (df["unit"] == "cycles").all()
    assert df["engine"].tolist() == ["", ""]
    assert str(df["cores"].dtype) == "int64" and str(df["value"].dtype) == "float64"



def test_cipher_comes_from_the_workload_unless_given():
    rows = [dict(_rows(1)[0], workload=w, **extra) for w, extra in
            (("aes-128-ecb-enc", {}), ("camellia-256-ctr-enc", {}), ("hello", {}), ("", {}),
             ("aes-128-ecb-enc", {"cipher": ""}), ("aes-128-ecb-enc", {"cipher": "camellia"}))]
    assert records.make_records(rows)["cipher"].tolist() == ["aes", "camellia", "", "", "", "camellia"]
    old = records.make_records(_rows()).drop(columns="cipher")        # records written before the column
    assert records.validate(old)["cipher"].tolist() == ["aes", "aes"]

def test_spread_and_disturbed_are_columns_with_defaults(tmp_path):
    rows = _rows(3)
    rows[1].update(spread=0.125, disturbed=True)
    df = records.make_records(rows)
    assert df["spread"].tolist() == [0.0, 0.125, 0.0] and df["disturbed"].tolist() == [False, True, False]
    assert str(df["disturbed"].dtype) == "bool" and str(df["spread"].dtype) == "float64"
    for name in ("r.csv", "r.parquet"):       # both file kinds keep them
        back = records.read(records.write(df, tmp_path / name))
        assert back["disturbed"].tolist() == [False, True, False] and back["spread"].tolist() == [0.0, 0.125, 0.0]
    # records written before the columns existed, and empty CSV cells, read as the defaults
    old = df.drop(columns=["spread", "disturbed"])
    assert not records.validate(old)["disturbed"].any() and (records.validate(old)["spread"] == 0).all()
    csv = tmp_path / "old.csv"
    old.to_csv(csv, index=False)
    assert records.read(csv)["disturbed"].tolist() == [False] * 3
    with pytest.raises(S2mcError, match="column 'spread': spread must be finite and >= 0"):
        records.make_records([dict(_rows(1)[0], spread=-0.1)])
    with pytest.raises(S2mcError, match="column 'disturbed'"):
        records.make_records([dict(_rows(1)[0], disturbed="maybe")])


@pytest.mark.parametrize("change, column", [
    ({"source": "gpu"}, "source"),
    ({"metric": "furlongs"}, "metric"),
    ({"unit": "s"}, "unit"),
    ({"cores": "four"}, "cores"),
    ({"core": 5}, "core"),
    ({"bytes": -1}, "bytes"),
    ({"value": float("nan")}, "value"),
    ({"run_id": ""}, "run_id"),
])
def test_validate_names_the_bad_column(change, column):
    df = records.make_records(_rows())
    for k, v in change.items():
        df[k] = df[k].astype(object)
        df.loc[1, k] = v
    with pytest.raises(S2mcError, match=f"'{column}'"):
        records.validate(df)


def test_validate_gives_the_schemas_dtypes_whatever_the_frame_holds():
    """A validated frame validates to itself (its columns are left as they are); columns of a near dtype
    (pandas' `str`, whose missing value is NaN, float counts, booleans as objects) come back as the
    schema's, and a canonical column with a missing value is still refused."""
    df = records.make_records(_rows())
    pd.testing.assert_frame_equal(records.validate(df), df)
    near = df.astype({"run_id": "str", "source": "str", "cores": "float64", "spread": "object", "disturbed": "object"})
    out = records.validate(near)
    want = {c: pd.api.types.pandas_dtype(d) for c, d in records.DTYPES.items()}
    assert {c: out[c].dtype for c in records.COLUMNS} == want
    pd.testing.assert_frame_equal(out, df)
    missing = df.copy()
    missing.loc[1, "platform"] = pd.NA
    with pytest.raises(S2mcError, match="'platform': missing value at row 1"):
        records.validate(missing)


def test_validate_missing_and_extra_columns():
    df = records.make_records(_rows())
    with pytest.raises(S2mcError, match="'platform' is missing"):
        records.validate(df.drop(columns=["platform"]))
    with pytest.raises(S2mcError, match="'citation' is not in the schema"):
        records.validate(df.assign(citation="x"))
    with pytest.raises(S2mcError, match="'value' is required"):
        records.make_records([{"run_id": "a", "source": "sim", "metric": "cycles"}])


def test_write_and_load_mixed(tmp_path):
    df = records.make_records(_rows())
    records.write(df, tmp_path / "a.parquet", params={"cores": [1, 2]})
    (tmp_path / "sub").mkdir()   # records.write creates no folders (s2mc.common.outputs)
    records.write(df.assign(run_id="r2"), tmp_path / "sub" / "b.csv")
    man = json.loads((tmp_path / "a.manifest.json").read_text())
    assert man["params"]["cores"] == [1, 2] and man["params"]["run_ids"] == ["r1"]
    for key in ("s2mc_version", "git_commit", "host_cpu", "host_gpus", "compiler"):
        assert key in man
    both = records.load([tmp_path])
    assert len(both) == 4 and set(both["run_id"]) == {"r1", "r2"}
    pd.testing.assert_frame_equal(records.load(tmp_path / "sub" / "b.csv"),
                                  df.assign(run_id="r2").astype(records.DTYPES))


def test_load_errors(tmp_path):
    with pytest.raises(S2mcError, match="no such file"):
        records.load(tmp_path / "nope.parquet")
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(records.COLUMNS) + "\nr,e,sim,p,w,v,fast,1,-1,0,bogus,1.0,x\n")
    with pytest.raises(S2mcError, match="bad.csv.*'metric'"):
        records.load(bad)


def test_every_metric_declared_once_with_unit_and_description():
    names = [m.name for m in records._METRIC_LIST]
    assert len(names) == len(set(names))
    for m in records._METRIC_LIST:
        assert m.unit and m.description


def test_docs_records_md_is_current():
    doc = (ROOT / "docs" / "records.md").read_text(encoding="utf-8")
    assert doc == records.render_doc(), (
        "docs/records.md is stale: run `python -m s2mc.analysis.records --write-docs docs/records.md`")
