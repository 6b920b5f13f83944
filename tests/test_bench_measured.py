"""The fairness figures docs/benchmarks.md quotes are those of the raw outputs kept in
bench/measured/ (a changed digit on either side fails)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MEASURED = sorted((ROOT / "bench" / "measured").glob("fairness-*.txt"))


def test_every_raw_output_is_listed_in_the_readme():
    readme = (ROOT / "bench" / "measured" / "README.md").read_text(encoding="utf-8")
    assert MEASURED
    for path in MEASURED:
        assert f"| {path.name} |" in readme, path.name


@pytest.mark.parametrize("path", MEASURED, ids=lambda p: p.name)
def test_the_docs_table_row_is_the_outputs_pooled_line(path):
    text = path.read_text(encoding="utf-8")
    pooled = re.search(r"p95 over (\d+) rounds: (\d+) ms alone \((\d+) answers\), (\d+) ms beside 5 abusers "
                       r"\((\d+) answers\): ([\d.]+)x", text)
    assert pooled, path.name
    rounds, alone, n_alone, beside, n_beside, ratio = pooled.groups()
    each = re.findall(r"^round \d+: the normal students' p95 \d+ ms alone, \d+ ms beside 5 abusers: ([\d.]+)x",
                      text, re.M)
    assert len(each) == int(rounds)
    rows = [line for line in (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8").splitlines()
            if f"| {alone} ms | {beside} ms |" in line]
    assert len(rows) == 1, (path.name, rows)
    row = rows[0]
    assert f"{ratio}x" in row and f"{n_alone} / {n_beside}" in row, row
    # the rounds' own ratios, where the row gives them, in their order
    assert ", ".join(f"{r}x" for r in each) in row or ", ".join(each) in row, (row, each)
