"""Directory coherence over a ring and a mesh (docs/timing-model.md, "Directory coherence over a
network"): its parameters, and what is refused.
"""
import pytest

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.reference import ReferenceMachine

MESH = dict(cores=4, cache="msi", interconnect="mesh", coherence="directory")
HALT = ".code 0\n  trap r0 #0\n"


@pytest.mark.parametrize("engine", ["fast", "systemc"])
@pytest.mark.parametrize("interconnect", ["ring", "mesh"])
def test_the_engines_refuse_a_network_in_one_line(engine, interconnect):
    with pytest.raises(S2mcError) as e:
        Machine(assemble(HALT), engine=engine, cache="msi", interconnect=interconnect, coherence="directory")
    assert str(e.value).startswith(f"interconnect {interconnect} with coherence directory: the {engine} engine "
                                   "simulates the bus only so far")


@pytest.mark.parametrize("cfg,message", [
    (dict(interconnect="mesh"), "interconnect mesh needs coherence directory"),
    (dict(coherence="directory", cache="msi"), "coherence directory needs interconnect ring or mesh"),
    (dict(interconnect="ring", coherence="directory"), r"coherence directory needs cache msi or mesi \(not none\)"),
    (dict(interconnect="ring", coherence="directory", cache="moesi"), "coherence directory needs cache msi or mesi"),
    (dict(interconnect="torus"), r"unknown interconnect 'torus' \(choose bus, ring, mesh\)"),
    (dict(router_latency=-1), r"router-latency -1 is out of range \(0..100\)"),
])
def test_impossible_combinations_are_one_line(cfg, message):
    for make in (lambda: Machine(assemble(HALT), **cfg), lambda: ReferenceMachine([0], [], **cfg)):
        with pytest.raises(S2mcError, match=f"^{message}"):
            make()


def test_the_default_is_the_bus_machine_bit_for_bit():
    src = ".code 0\n  ld r1 0\n  st r1 1\n  trap r0 #0\n"
    plain = Machine(assemble(src), cores=2).run().to_json()
    named = Machine(assemble(src), cores=2, interconnect="bus", coherence="snoop").run().to_json()
    assert named == plain and "interconnect" not in plain["config"]
