"""Experiment spec files (experiments/studies/*.toml, s2mc.experiments.specs): the registry is the
files, they ship in the package, and a bad file is one line naming the file, the table and the key."""
from pathlib import Path

import pytest

from s2mc.analysis import seed003
from s2mc.experiments import registry as experiments, specs
from s2mc.common.errors import S2mcError
from s2mc.common.units import parse_size
from s2mc.workloads.cipher_sim.grid import AesGrid
from s2mc.workloads.native.grid import NativeGrid

REPO = Path(__file__).resolve().parent.parent
SPECS = REPO / "experiments" / "studies"


def _write(tmp_path, text, name="spec"):
    path = tmp_path / f"{name}.toml"
    path.write_text(text)
    return path


def test_the_registry_is_the_spec_files(tmp_path):
    loaded = [specs.load(p) for p in sorted(SPECS.glob("*.toml"))]
    assert sorted(s.name for s in loaded) == sorted(experiments.names())
    assert experiments.DEMO == tuple(s.name for s in sorted((s for s in loaded if s.demo), key=lambda s: s.demo))
    for s in loaded:
        e = experiments.get(s.name)
        assert (e.grids, e.quick, e.source, e.reference, e.title) == (s.grids, s.quick, s.source, s.reference, s.title)
    seed = specs.load(SPECS / "seed003.toml")
    assert seed.name == "seed003_grid" and seed.grids[0].sizes == seed003.SEED003_BYTES
    assert (seed.grids[0].cores, seed.grids[0].modes, seed.grids[0].styles) == ((1, 2, 3, 4), ("ecb",), ("bytes",))
    mine = AesGrid(cores=(1, 2, 3, 4), sizes=(32, 64, 128, 256), modes=("ecb",))
    assert specs.load(_write(tmp_path, "[[grid]]\nkind = 'aes'\ncores = [1, 2, 3, 4]\nsizes = [32, 64, 128, 256]\n")).grids == (mine,)
    coarse, extended = specs.load(SPECS / "seed000_block_sizes.toml").grids
    assert extended == NativeGrid(threads=specs.ALL_THREADS, sizes=(4 << 20, 16 << 20, 32 << 20), impls=("ttable",),
                                  strategies=("extended",), block_bytes=(512, 1024, 2048, 4096))


def test_the_spec_files_ship_in_the_package():
    installed = {p.name: p.read_text() for p in specs.shipped()}
    assert installed == {p.name: p.read_text() for p in SPECS.glob("*.toml")}
    assert specs.spec_dir().parent.name == "experiments" and "site-packages" in specs.spec_dir().parts


@pytest.mark.parametrize("text,sizes", [("4096", 4096), ("16K", 16384), ("64m", 64 << 20), ("1G", 1 << 30),
                                        ("4KiB", 4096), ("2KB", 2048), ("x", None), ("1.5K", None), ("-1", None),
                                        ("", None), ("K", None)])
def test_parse_size(text, sizes):
    assert parse_size(text) == sizes


GOOD = 'title = "t"\n[[grid]]\nkind = "aes"\ncores = [1, 2]\nsizes = [32]\n'


@pytest.mark.parametrize("text,message", [
    ("colour = 1\n" + GOOD, r"colour: unknown key \(keys: name, title"),
    ('name = "Bad Name"\n' + GOOD, "name: 'Bad Name' must be lower-case"),
    ('title = "t"\n', r"grid: no \[\[grid\]\] table"),
    ('[[grid]]\ncores = [1]\n', r"\[\[grid\]\] 1: kind: missing"),
    ('[[grid]]\nkind = "fpga"\n', r"\[\[grid\]\] 1: kind: unknown value 'fpga' \(choose aes, native, gpu, program\)"),
    (GOOD + 'core = [1]\n', r"\[\[grid\]\] 1: core: unknown key for kind 'aes' \(keys: cores, sizes"),
    (GOOD.replace("[1, 2]", "[1, 257]"), r"\[\[grid\]\] 1: cores: 257 is out of range \(1..256\)"),
    (GOOD.replace("[1, 2]", '["two"]'), r"\[\[grid\]\] 1: cores: 'two' is not an integer"),
    (GOOD.replace("[1, 2]", "[]"), r"\[\[grid\]\] 1: cores: empty list"),
    (GOOD + 'modes = ["cbc"]\n', r"\[\[grid\]\] 1: modes: unknown value 'cbc' \(choose ecb, ctr\)"),
    (GOOD + 'arbitrations = ["lottery"]\n', r"\[\[grid\]\] 1: arbitrations: unknown value 'lottery'"),
    (GOOD.replace("[32]", "[40]"), r"\[\[grid\]\] 1: sizes: 40 is not a multiple of 16"),
    (GOOD.replace("[32]", '["lots"]'), r"\[\[grid\]\] 1: sizes: 'lots' is not a size"),
    (GOOD + "mem_words = 100\n", r"\[\[grid\]\] 1: sizes: 32 bytes need \d+ words of simulated memory in the bytes program but "
                                 "mem_words is 100"),
    (GOOD + 'key = "00ff"\n', r"\[\[grid\]\] 1: key: 4 hex digits; AES keys are 32, 48 or 64"),
    (GOOD + '[[quick]]\nkind = "native"\n', r"\[\[quick\]\] 1: kind: 'native', but the spec's other grids are 'aes'"),
    (GOOD.replace('kind = "aes"', 'kind = "native"') .replace("cores", "threads") + 'impls = ["sse"]\n',
     r"\[\[grid\]\] 1: impls: unknown value 'sse'"),
    (GOOD + "[grid2\n", r"not valid TOML: .*line 6"),
    ('reference = ["seed009"]\n' + GOOD, "reference: unknown seed table 'seed009'"),
    ("demo = 0\n" + GOOD, "demo: 0 must be a positive integer"),
])
def test_a_bad_spec_is_one_line_naming_the_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(S2mcError, match=f"^{path}: {message}") as exc:
        specs.load(path)
    assert "\n" not in str(exc.value)


def test_a_good_spec_and_its_defaults(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(GOOD + '[[grid]]\nkind = "aes"\ncores = 4\nsizes = ["1K"]\nmodes = "ctr"\n')
    s = specs.load(path)
    assert (s.name, s.title, s.source, s.demo, s.quick) == ("mine", "t", "sim", None, ())
    assert s.grids == (AesGrid(cores=(1, 2), sizes=(32,)), AesGrid(cores=(4,), sizes=(1024,), modes=("ctr",)))


def test_a_missing_spec_file(tmp_path):
    with pytest.raises(S2mcError, match=f"^{tmp_path}/nope.toml: no such spec file$"):
        specs.load(tmp_path / "nope.toml")


def test_the_seed003_model_spec_is_the_preset():
    """The demo's model run (experiments/studies/seed003_model.toml) is `s2mc aes --preset seed003`."""
    from s2mc.workloads.cipher_sim.grid import preset
    (grid,) = specs.load(SPECS / "seed003_model.toml").grids
    assert grid == preset("seed003")
