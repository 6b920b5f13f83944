"""The event log of a ring or a mesh (docs/timing-model.md, "The event log of a network"): the fast
engine's log equals the reference model's event for event (the hand-worked programs of
test_directory.py, its data-race-free random programs and s2gen's random programs, ring and mesh,
MSI and MESI, faults included), the messages of the worked read miss are where the hand-worked
example puts them, and `s2mc run --trace` writes them."""
from pathlib import Path

import pytest
from hypothesis import given, settings
from s2gen import programs
from test_directory import MEM, RACE_CFG, SKIP_OTHERS, cli, flooded_race
from test_directory_fast import HAND, HAND_IDS, drf_case, network_configs

from s2mc.isa import assemble
from s2mc.simulator import Machine, SimFault, format_trace
from s2mc.simulator.directory import DirectoryMachine
from s2mc.simulator.reference import RefFault

ROOT = Path(__file__).resolve().parents[1]
NET = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory", "mem_words": MEM}


def assert_same_log(src: str, **cfg) -> list[tuple]:
    """Runs src with the log on, on the reference model and on the fast engine; the logs must be
    equal (up to a fault, when the reference model faults). Returns the reference model's log."""
    cfg = {**NET, **cfg}
    prog = assemble(src)
    ref = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, stacks=prog.stacks, trace=True, **cfg)
    try:
        ref.run()
    except RefFault:
        with pytest.raises(SimFault) as e:
            Machine(prog, trace=True, **cfg).run()
        want = sorted(ref.trace, key=lambda e: (e[0], e[1]))    # run() sorts only at its end
        assert e.value.trace == want
        return want
    res = Machine(prog, trace=True, **cfg).run()
    assert res.trace == ref.trace
    return ref.trace


@pytest.mark.parametrize("interconnect", ["mesh", "ring"])
@pytest.mark.parametrize("cache", ["msi", "mesi"])
@pytest.mark.parametrize("src,cfg", HAND + [
    (".code 0\n  cid r1\n  ld r2 12\n  div r3 r2 r1\n  trap r0 #0\n", {}),        # core 0 divides by zero
], ids=HAND_IDS + ["fault"])
def test_hand_programs_log_what_the_reference_model_logs(src, cfg, cache, interconnect):
    log = assert_same_log(src, cache=cache, interconnect=interconnect, **cfg)
    assert any(e[3].startswith("port ") for e in log)


def test_an_inv_that_overtakes_the_owners_data_logs_what_the_reference_model_logs():
    log = assert_same_log(flooded_race(0), mem_words=1024, **RACE_CFG)
    assert [e for e in log if e[1] == 2 and e[3] == "state Inv"][0][6:] == ("S", "I")


@pytest.mark.parametrize("seed", range(8))
def test_random_drf_programs_log_what_the_reference_model_logs(seed):
    src, cfg = drf_case(seed, [2, 3, 4, 5, 6, 8, 9, 12][seed])
    cfg["cache_ways"] = min(cfg["cache_ways"], cfg["cache_lines"])
    assert_same_log(src, **cfg)


@settings(max_examples=30, deadline=None)
@given(programs(), network_configs)
def test_random_programs_log_what_the_reference_model_logs(src, cfg):
    lines, ways, words = cfg.pop("shape")
    assert_same_log(src, cache_lines=lines, cache_ways=ways, line_words=words, mem_words=1024, max_cycles=20_000,
                    **cfg)


def test_the_worked_read_miss_logs_its_messages_where_the_hand_worked_example_puts_them():
    # docs/timing-model.md, "A read miss to a remote home": core 0 loads word 12 (line 3, home 3)
    # at t = 2 (after cid, jt); the GetS leaves router 0 on x+ at t+1, router 1 on y+ at t+3,
    # ejects at router 3 at t+5; the home reads memory at t+6 for 2 cycles; the Data (2 flits)
    # leaves router 3 on x- at t+9, router 2 on y- at t+11, ejects at router 0 at t+13; the load
    # takes effect at t+15.
    res = Machine(assemble(SKIP_OTHERS.format(body="  ld r2 12")), trace=True, **NET).run()
    t = 2
    net = [(e[0] - t, e[1], e[3], e[4], e[5], e[6], e[7]) for e in res.trace
           if e[3].split(" ")[0] in ("send", "port", "home", "request", "done")]
    assert net == [
        (0, 0, "send GetS 1", 0, 12, 0, 3),       # the request is logged once its message is sent
        (0, 0, "request GetS", 0, 12, 0, 0),
        (1, 0, "port x+ GetS 1", 0, 12, 0, 3),
        (3, 1, "port y+ GetS 1", 0, 12, 0, 3),
        (5, 3, "port local GetS 1", 0, 12, 0, 3),
        (6, 3, "home GetS 2", 0, 12, "I", "S"),
        (8, 3, "send Data 2", 0, 12, 3, 0),
        (9, 3, "port x- Data 2", 0, 12, 3, 0),
        (11, 2, "port y- Data 2", 0, 12, 3, 0),
        (13, 0, "port local Data 2", 0, 12, 3, 0),
        (15, 0, "done Data", 15, 12, 77, 77),
    ]


def test_s2mc_run_writes_the_log_of_a_network_run(tmp_path):
    src = SKIP_OTHERS.format(body="  ld r2 12")
    out = tmp_path / "t.txt"
    r = cli(tmp_path, src, "--cores", 4, "--cache", "msi", "--interconnect", "mesh", "--coherence", "directory",
            "--mem-words", MEM, "--trace", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    # the same lines the library formats from the reference model's log
    prog = assemble(src)
    ref = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, trace=True, **NET)
    ref.run()
    assert text == format_trace(ref.trace, prog, NET.get("mem_latency", 2))
    assert "send GetS 0 -> 3, line 12, for core 0 (1 flit)" in text
    assert "router 1 y+: GetS 0 -> 3, line 12 (1 flit)" in text
    assert "home 3: GetS for core 0, line 12: I -> S (2 cycles)" in text
    assert "ld r2 12  = 77" in text and "miss done by Data (waited 15)" in text
    # the lines docs/timing-model.md shows, as this run writes them
    doc = (ROOT / "docs/timing-model.md").read_text().split("### The event log of a network")[1]
    shown = doc.split("```")[1].strip("\n").splitlines()
    assert len(shown) == 14 and all(line in text.splitlines() for line in shown), shown
