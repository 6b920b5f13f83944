"""Program variants of the AES workloads (s2mc.workloads.cipher_sim.variants): where the key is expanded and
the seed 003 calibration. Every run is checked against `cryptography` by run_aes itself; the tests
below check what the variants change, each against a count that does not come from the variant."""
import os

import pytest

from s2mc.compiler import compile as rz_compile
from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_sim import runner, variants
from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid
from s2mc.workloads.cipher_sim.runner import AesConfig, run_aes
from s2mc.simulator import systemc_engine

KEY = bytes(range(16))
SEED003 = dict(style="bytes", opt=0, key_expansion="per-core", calibration="seed003", arbitration="fixed")


@pytest.mark.parametrize("style", ["bytes", "ttable"])
def test_the_default_source_is_the_file_and_the_variant_lines_are_comments(style):
    text = variants.SOURCES[style].read_text(encoding="utf-8")
    assert variants.source(style) == text
    tagged = [line for line in text.splitlines() if "//@" in line.split("//", 1)[-1] or line.lstrip().startswith("//@")]
    assert tagged and all("//" in line for line in tagged)
    # the per-core variant changes exactly the one line of main that calls expand_key
    per = variants.source(style, "per-core").splitlines()
    changed = [(a, b) for a, b in zip(text.splitlines(), per) if a != b]
    assert [b.strip() for _, b in changed] == ["expand_key()"] and len(per) == len(text.splitlines())


@pytest.mark.parametrize("style", ["bytes", "ttable"])
@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("mode,direction", [("ecb", "enc"), ("ecb", "dec"), ("ctr", "enc")])
def test_per_core_key_expansion_is_right_on_every_core_count(style, opt, mode, direction):
    data = os.urandom(80 if mode == "ecb" else 75)
    for cores in (1, 2, 3, 4):
        for key in (KEY, bytes(range(24)), bytes(range(32))):
            r = run_aes(data, key, os.urandom(16) if mode == "ctr" else None, style=style, opt=opt,
                        mode=mode, direction=direction, cores=cores, key_expansion="per-core")
            assert r.checked and r.config.variant.endswith("/per-core")


@pytest.mark.parametrize("style", ["bytes", "ttable"])
def test_per_core_every_core_runs_the_expansion_itself(style):
    # 16 bytes on 2 cores: core 1 has no block. With the key expanded per core it runs exactly the
    # path of a 1-core run of no data (set-up, expansion, barrier, an empty block loop, halt); with
    # core 0 expanding, it skips the expansion and so runs fewer instructions and accesses.
    alone = run_aes(b"", KEY, style=style, cores=1, key_expansion="per-core").result.cores[0]
    for kx in ("per-core", "core0"):
        c1 = run_aes(bytes(16), KEY, style=style, cores=2, key_expansion=kx).result.cores[1]
        same = [c1[k] == alone[k] for k in ("instructions", "mem_accesses")]
        assert same == ([True, True] if kx == "per-core" else [False, False]), kx
        if kx == "core0":
            assert c1["instructions"] < alone["instructions"] and c1["sync_wait_cycles"] > 0


def _line(cfg: dict):
    """(cycles, accesses) per block and fixed, from 1-core runs of 2 and 16 blocks."""
    r = {n: run_aes(bytes(n), KEY, cores=1, **cfg).result for n in (32, 256)}
    cyc = {n: r[n].cycles for n in r}
    acc = {n: r[n].cores[0]["mem_accesses"] for n in r}
    per = ((cyc[256] - cyc[32]) / 14, (acc[256] - acc[32]) / 14)
    return per, (cyc[32] - 2 * per[0], acc[32] - 2 * per[1])


def test_the_calibration_adds_exactly_its_work_per_block_and_per_run():
    cal = variants.CALIBRATIONS["seed003"]
    plain = dict(style="bytes", opt=0, key_expansion="per-core")
    (pc, pa), (fc, fa) = _line(plain)
    (qc, qa), (gc, ga) = _line({**plain, "calibration": "seed003"})
    assert (qc - pc, qa - pa) == (cal.block_ops + 2 * cal.block_mem, cal.block_mem)
    assert (gc - fc, ga - fa) == (cal.run_ops + 2 * cal.run_mem, cal.run_mem)
    # where it goes: an equal share at each of the 40 sites of a block, the rest on the 4 edge sites
    sites = cal.sites()
    assert 36 * sites["round"][0][1] + sum(m for _, m in sites["edge"]) == cal.block_mem
    assert 36 * sites["round"][0][0] + sum(o for o, _ in sites["edge"]) == cal.block_ops
    assert 40 * sites["key"][0][1] + sites["key-start"][0][1] == cal.run_mem
    assert max(m for _, m in sites["edge"]) - sites["round"][0][1] < 8


def test_the_preset_program_is_right_on_one_to_four_cores():
    data = os.urandom(256)
    for cores in (1, 2, 3, 4):
        r = run_aes(data, KEY, cores=cores, **SEED003)
        assert r.checked and r.config.variant == "bytes/interleaved/fixed/O0/per-core/cal-seed003"


@pytest.mark.systemc
@pytest.mark.skipif(not systemc_engine.available(), reason="the SystemC engine is not built")
@pytest.mark.parametrize("arbitration", ["fixed", "burst4"])      # the first round's and the preset's
def test_the_preset_runs_the_same_on_systemc(arbitration):
    cfg = {**SEED003, "arbitration": arbitration}
    fast = run_aes(bytes(48), KEY, cores=3, **cfg)
    sysc = run_aes(bytes(48), KEY, cores=3, engine="systemc", **cfg)
    assert sysc.result.cores == fast.result.cores and sysc.result.cycles == fast.result.cycles


@pytest.mark.parametrize("cfg,message", [
    (dict(key_expansion="everywhere"), "unknown key expansion 'everywhere' (choose core0, per-core)"),
    (dict(calibration="seed004"), "unknown calibration 'seed004' (choose seed003)"),
    (dict(calibration="seed003", opt=0, key_expansion="per-core", style="ttable"),
     "calibration seed003 is fitted for the bytes style at -O0 with the key expanded per-core, not the "
     "ttable style at -O0 with the key expanded per-core"),
    (dict(calibration="seed003", opt=1, key_expansion="per-core"), "not the bytes style at -O1"),
    (dict(calibration="seed003", opt=0), "with the key expanded core0"),
])
def test_bad_variants_are_one_line(cfg, message):
    with pytest.raises(S2mcError) as e:
        AesConfig(**cfg).check()
    assert message in str(e.value) and "\n" not in str(e.value)
    # a grid refuses them before it runs anything
    with pytest.raises(S2mcError, match="calibration|key expansion"):
        AesGrid(cores=(1,), sizes=(16,), styles=(cfg.get("style", "bytes"),), opts=(cfg.get("opt", 1),),
                key_expansions=(cfg.get("key_expansion", "core0"),),
                calibrations=(cfg.get("calibration"),)).check()


def test_a_bad_calibrate_line_names_the_file_and_line():
    text = "main()\n  x = 1\n  //@calibrate: pad nowhere\n"
    with pytest.raises(S2mcError, match=r"^f.rz:3: a calibrate line is 'pad SITE'"):
        variants.apply(text, {"calibrate"}, {"round": [(1, 1)]}, "f.rz")
    with pytest.raises(S2mcError, match="needs round site lines"):
        variants.apply("main()\n  x = 1\n", {"calibrate"}, {"round": [(1, 1)]}, "f.rz")
    out = variants.apply("main()\n  x = 1\n  //@calibrate: pad round\n", {"calibrate"}, {"round": [(1, 2)]})
    assert out.splitlines()[-1] == '  asm("ld r0 nr\\nld r0 nr\\nnop")'
    assert rz_compile("nr\n" + out.replace("x = 1", "nr = 1"), opt=0).program


def test_grid_variants_and_their_records():
    g = AesGrid(cores=(1, 2), sizes=(32,), opts=(0,), key_expansions=("core0", "per-core"))
    cfgs = g.configs()
    # the default variant adds no key, so every other configuration keeps its sweep identity
    assert "key_expansion" not in cfgs[0] and cfgs[1]["key_expansion"] == "per-core"
    runs, rows = run_grid(g, new_run_id=lambda: "r")
    assert {r.config.variant for r in runs} == {"bytes/interleaved/O0", "bytes/interleaved/O0/per-core"}
    assert g.params()["key_expansion"] == ["core0", "per-core"] and g.params()["calibration"] == [None]
    assert runner.summary(runs[-1])["key_expansion"] == "per-core"


@pytest.mark.parametrize("arbitration", ["fixed", "burst4"])
def test_the_preset_program_on_the_reference_model(arbitration):
    """The cycle-stepped reference model runs the preset's program (per-core key expansion, the
    calibration's loads and nops, fixed priority or burst4) to the same counters as the fast engine."""
    from s2mc.simulator.reference import ReferenceMachine
    prog = runner.program("bytes", 0, "per-core", "seed003")
    data = bytes(range(100, 132))
    heap = prog.address_of("__heap")
    mem = list(prog.data_image) + [0] * (heap + 64 - len(prog.data_image))
    for name, words in (("keybits", [128]), ("key", list(KEY)), ("mode", [0]), ("decrypt", [0]),
                        ("partition", [0]), ("ext", [4]), ("nbytes", [32]), ("src", [heap]), ("dst", [heap + 32])):
        a = prog.address_of(name)
        mem[a:a + len(words)] = words
    mem[heap:heap + 32] = list(data)
    ref = ReferenceMachine(prog.code_image, mem, prog.entry, cores=3, arbitration=arbitration,
                           stacks=prog.stacks).run()
    fast = run_aes(data, KEY, cores=3, **{**SEED003, "arbitration": arbitration}).result
    assert ref["cycles"] == fast.cycles
    assert [c["finish_cycle"] for c in ref["cores"]] == fast.finish_cycles
    for k in ("instructions", "mem_accesses", "bus_wait_cycles", "sync_wait_cycles"):
        assert [c[k] for c in ref["cores"]] == [c[k] for c in fast.cores], k
