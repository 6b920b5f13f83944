"""The Python API of the simulator: memory by symbol, results, DataFrame, configuration errors."""
import pytest

from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import CORE_COUNTERS, Machine, run

DOUBLE = """
.code 0
  cid r1
  ld r2 @inp r1
  add r2 r2 r2
  st r2 @out r1
  trap r0 #0
.data 10
:inp 0 0 0 0
:out 0 0 0 0
"""


def test_write_run_read_by_symbol():
    m = Machine(assemble(DOUBLE), cores=4, mem_words=64)
    m.write("inp", [1, -2, 3, 2**31 - 1])
    res = m.run()
    assert m.read("out", 4) == [2, -4, 6, -2]
    assert m.read("inp", 2, offset=2) == [3, 2**31 - 1]
    assert res.instructions == 20 and len(res.cores) == 4


def test_stats_frame_has_every_counter_per_core():
    res = run(assemble(DOUBLE), cores=3, mem_words=64)
    df = res.stats_frame()
    assert list(df.columns) == list(CORE_COUNTERS) and list(df.index) == [0, 1, 2]
    assert df["mem_reads"].tolist() == [1, 1, 1] and df["cycles"].max() == res.cycles
    assert res.to_json()["cores"][2]["core"] == 2


@pytest.mark.parametrize("kwargs,message", [
    ({"cores": 0}, "cores 0 is out of range"),
    ({"cores": 257}, "cores 257 is out of range"),
    ({"mem_latency": 0}, "mem-latency 0 is out of range"),
    ({"arbitration": "lottery"}, "unknown arbitration 'lottery'"),
    ({"engine": "verilog"}, "unknown engine 'verilog'"),
    ({"mem_words": 0}, "mem-words 0 is out of range"),
    ({"mem_words": 12}, "needs 18 words of memory"),
])
def test_bad_configuration(kwargs, message):
    with pytest.raises(S2mcError, match=message):
        Machine(assemble(DOUBLE), **kwargs)


def test_memory_errors_say_how_much_is_needed():
    m = Machine(assemble(DOUBLE), mem_words=32)
    with pytest.raises(S2mcError, match="need 40"):
        m.write("out", [0] * 26)
    with pytest.raises(S2mcError, match="no symbol 'nope'"):
        m.read("nope", 1)


def test_a_machine_runs_once():
    m = Machine(assemble(DOUBLE), mem_words=64)
    m.run()
    with pytest.raises(S2mcError, match="runs once"):
        m.run()
