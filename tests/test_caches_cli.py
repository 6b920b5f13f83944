"""The cache options where users meet them: `s2mc run` (its table, --json, records) and the cipher
grid (`s2mc aes`/`s2mc cipher`, experiment specs): names, variants and one-line errors."""
import json
import subprocess
import sys

import pytest

from s2mc.common.errors import S2mcError
from s2mc.simulator import CACHE_COUNTERS, Machine
from s2mc.workloads import examples
from s2mc.workloads.cipher_sim.grid import AesGrid
from s2mc.workloads.cipher_sim.runner import AesConfig


def s2mc(*args):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300)



def test_the_cipher_grid_runs_each_protocol_with_one_shape():
    grid = AesGrid(cores=(1, 2), sizes=(32,), styles=("ttable",), caches=("none", "mesi", "dragon"),
                   cache_lines=16, cache_ways=4, line_words=2)
    variants = [AesConfig(**cfg).variant for cfg in grid.configs()]
    assert variants == ["ttable/interleaved", "ttable/interleaved/mesi-16x4-w2", "ttable/interleaved/dragon-16x4-w2"]
    assert grid.params()["cache"] == ["none", "mesi", "dragon"] and grid.params()["line_words"] == 2
    assert "cache" not in AesGrid().params()      # a cacheless grid's manifest is as before
    with pytest.raises(S2mcError, match="cache-ways 8 is more than cache-lines 4"):
        AesGrid(caches=("msi",), cache_lines=4, cache_ways=8).check()


def test_cache_option_errors_are_one_line():
    for args, why in [(["--cache", "mosi"], "mosi"), (["--cache", "mesi", "--cache-lines", "6"],
                                                      "'--cache-lines': 6 is not a power of two")]:
        proc = s2mc("run", "spin_lock.s", *args)
        assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1 and why in proc.stderr, proc.stderr
    proc = s2mc("aes", "--cache", "msi", "--cache-ways", "3", "--bytes", "32", "--cores", "1", "-q")
    assert proc.returncode != 0 and "'--cache-ways': 3 is not a power of two" in proc.stderr


def test_s2mc_run_json_and_table_with_caches(tmp_path):
    proc = s2mc("run", "spin_lock.s", "--cores", "2", "--cache", "mesi", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["config"]["cache"] == "mesi" and list(doc["cores"][0])[-len(CACHE_COUNTERS):] == list(CACHE_COUNTERS)
    res = Machine(examples.load("spin_lock.s"), cores=2, cache="mesi").run()
    assert doc["cores"] == res.cores
    table = s2mc("run", "spin_lock.s", "--cores", "2", "--cache", "mesi").stderr.splitlines()
    at = next(i for i, ln in enumerate(table) if ln.startswith("MESI caches:"))
    assert [int(v) for v in table[at + 2].split()][:3] == [0, res.cores[0]["cache_hits"], res.cores[0]["cache_misses"]]


def test_s2mc_run_records_name_the_cache(tmp_path):
    out = tmp_path / "r.parquet"
    proc = s2mc("run", "spin_lock.s", "--cores", "1,2", "--cache", "moesi", "--line-words", "2", "--out", out)
    assert proc.returncode == 0, proc.stderr
    from s2mc.analysis import records
    df = records.load([out])
    assert set(df["variant"]) == {"moesi-64x2-w2"}
    assert {"bus_rdx", "invalidations_received", "hit_stall_cycles"} <= set(df["metric"])
