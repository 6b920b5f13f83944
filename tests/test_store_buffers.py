"""Store buffers (consistency tso, pso) and `fence` (docs/timing-model.md, "Store buffers").

Every expected cycle and counter below was worked out by hand from the written rules before the
reference model ran it; the cycle-by-cycle tables are in docs/timing-model.md. Unless a test says
otherwise: L = 2, fifo, 4 entries per buffer.
"""
import pytest

from s2mc.common.errors import S2mcError
from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble, disassemble_word
from s2mc.simulator import Machine
from s2mc.simulator.reference import BUFFER_STATS, ReferenceMachine

MEM = 64
RZ_FENCE = "x, y\n\nmain()\n  x = 1\n  fence()\n  y = x\n"


def ref(src: str, **cfg):
    prog = assemble(src)
    m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, trace=True, **cfg)
    raw = m.run()
    for c, stall in zip(raw["cores"], raw["stall_cycles"]):
        # every cycle of a core before its finish: an instruction's first, a stall or a barrier wait
        assert stall == c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
    return raw, m


# -- the instruction, the builtin, the parameters -------------------------------------------------

def test_fence_assembles_and_disassembles():
    word = assemble(".code 0\n  fence\n  trap r0 #0\n").code_image[0]
    assert disassemble_word(word) == "fence"


def test_rz_fence_compiles_to_the_instruction():
    for opt in (0, 1):
        prog = compile_rz(RZ_FENCE, opt=opt).program
        words = [disassemble_word(w) for w in prog.code_image]
        assert words.count("fence") == 1
        without = compile_rz(RZ_FENCE.replace("  fence()\n", ""), opt=opt).program
        assert "fence" not in [disassemble_word(w) for w in without.code_image]


def test_under_sc_a_fence_is_one_cycle_on_every_engine():
    src = ".code 0\n  fence\n  fence\n  trap r0 #0\n"
    raw, _ = ref(src)
    assert raw["cycles"] == 3
    assert Machine(assemble(src), mem_words=MEM).run().cycles == 3


@pytest.mark.parametrize("engine", ["fast", "systemc"])
def test_an_engine_without_store_buffers_says_so(engine):
    with pytest.raises(S2mcError, match="^consistency tso: the .* engine does not simulate store buffers"):
        Machine(assemble(".code 0\n  trap r0 #0\n"), engine=engine, consistency="tso")


def test_the_consistency_and_the_buffer_size_are_checked():
    with pytest.raises(S2mcError, match=r"unknown consistency 'rc' \(choose sc, tso, pso\)"):
        ReferenceMachine([0], [], consistency="rc")
    with pytest.raises(S2mcError, match="store-buffer-entries 0 is out of range"):
        ReferenceMachine([0], [], consistency="tso", store_buffer_entries=0)


def test_sc_reports_no_store_buffer_counters():
    raw, _ = ref(".code 0\n  trap r0 #0\n")
    assert not set(BUFFER_STATS) & set(raw["cores"][0])
