"""The debugger's `cache` command (docs/debugger.md) against the reference model's caches stopped at
the same cycle."""
import pytest

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator.debugger import Debugger
from s2mc.simulator.reference import ReferenceMachine
from s2mc.simulator.stepping import Stepper
from test_caches_hand import HANDOVER, SHARING

MEM = 256


def session(src, **cfg):
    prog = assemble(src)
    try:
        stepper = Stepper(prog, mem_words=MEM, **cfg)
    except S2mcError as exc:
        if "does not simulate caches" in str(exc):
            pytest.skip(str(exc))
        raise
    out, err = [], []
    return Debugger(stepper, out=out.append, err=err.append), out, err


def reference_at(src, cycle, **cfg):
    """The reference model with every cycle before `cycle` simulated (the debugger's 'at cycle')."""
    prog = assemble(src)
    m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, **cfg)
    while m.now < cycle and m.step():
        pass
    return m


@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi", "dragon"])
@pytest.mark.parametrize("cycle", [4, 10, 15, 17])
def test_cache_lists_what_the_reference_holds(protocol, cycle):
    cfg = dict(cores=2, cache=protocol)
    d, out, err = session(HANDOVER, **cfg)
    d.execute(f"until {cycle}")
    out.clear()
    d.execute("cache")
    assert not err
    ref = reference_at(HANDOVER, cycle, **cfg)
    want = []
    for core, cache in enumerate(ref.caches):
        lines = [(s, w, way) for s, ways in enumerate(cache.sets) for w, way in enumerate(ways) if way.line is not None]
        want.append(f"core {core}: {protocol.upper()}, {len(lines)} of 64 lines valid (32 sets x 2 ways, 4 words a line)")
        for s, w, way in lines:
            base = way.line * 4
            want.append(f"set {s} way {w} line {base} x {way.state} " + " ".join(map(str, ref.mem[base:base + 4])))
    assert [" ".join(ln.split()) for ln in out] == want


def test_cache_of_an_address_names_the_cores_holding_its_line():
    """The false-sharing program (test_caches_hand.py) on MESI: at cycle 12 core 0 holds the line
    in M (its BusRdX at 11), core 1 lost it then."""
    d, out, err = session(SHARING.format(stride=1), cores=2, cache="mesi")
    d.execute("until 12")
    out.clear()
    d.execute("cache cnt+1")
    d.execute("cache core 1")
    assert not err
    assert out[0] == "address 1 (cnt+1): line 0..3, set 0: core 0 M"
    assert out[1].startswith("core 1: MESI, 0 of 64 lines valid")


def test_cache_errors_are_one_line():
    d, out, err = session(HANDOVER, cores=2)
    d.execute("cache")
    assert err == ["cache: this machine has no caches (run s2mc debug with --cache msi|mesi|moesi|dragon)"] and not out
    d, out, err = session(HANDOVER, cores=2, cache="msi")
    for bad, why in [("cache core", "usage: cache core N"), ("cache core 5", "core 5 does not exist (0..1)"),
                     ("cache nowhere", "no data label 'nowhere' in the program"),
                     ("cache 1 2 3", "too many arguments (usage: cache [core N | ADDR|SYMBOL])")]:
        err.clear()
        d.execute(bad)
        assert len(err) == 1 and why in err[0], (bad, err)
