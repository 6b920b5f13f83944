"""The instruction table's operand roles and bus classes against what the engines actually do.

Every encoding (and every trap number) runs once on the fast engine with distinct values in all
registers: only the registers the table says it writes may change, and the outcome (registers,
memory, output, where control goes, counters) may depend only on the registers it says it reads.
The bus class must match the mem_reads / mem_writes / mem_accesses counters of the fast engine and
of the reference model.
"""
from importlib.resources import files
from pathlib import Path

import pytest

from s2mc.isa import assemble
from s2mc.isa.gen_header import render as render_header
from s2mc.isa.instructions import BY_KEY, INSTRUCTIONS, TRAPS
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.reference import ReferenceMachine, RefFault

REPO = Path(__file__).resolve().parents[1]
FIELD_REG = {"r1": 3, "r2": 5, "r3": 7}      # the registers the instruction's fields name
P = 31                                       # where the instruction under test sits
LANDING = 240                                # trap r0 #0 from P+1 on: any jump target halts
INIT = 600                                   # register values are loaded from here
MEM = 640
OBSERVED = 400                               # memory words compared (below INIT)
BASE = [0] + [33 + 2 * i for i in range(1, 32)]   # distinct; valid addresses and jump targets
DATA = [0 if a % 8 == 4 else 1000 + a for a in range(OBSERVED)]   # short strings for trap #3

# The expected counters (reads, writes, accesses) of one instruction of each bus class.
BUS_COUNTS = {"none": (0, 0, 0), "read": (1, 0, 1), "write": (0, 1, 1), "swap": (1, 1, 1),
              "string": (1, 0, 1)}
UNASSIGNED_TRAP = 9
CASES = [(i.key, t) for i in INSTRUCTIONS
         for t in ((*TRAPS, UNASSIGNED_TRAP) if i.bus == "trap" else (None,))]
# Halting and unassigned trap numbers ignore R[r1]; the table declares r1 for every trap number.
READ_NOT_USED = {("trap", 0), ("trap", UNASSIGNED_TRAP)}


def case_id(case):
    key, t = case
    return key if t is None else f"{key}#{t}"


def source(key: str, trap: int | None) -> str:
    ins = BY_KEY[key]
    ops = []
    for tok, field in zip(ins.shape.split(), ins.operand_fields):
        if field in FIELD_REG:
            ops.append(("+" if tok == "+r" else "") + f"r{FIELD_REG[field]}")
        elif field == "ads":
            ops.append(str(P + 5) if ins.kind == "jump" else "100")
        elif field == "disp":
            ops.append("@2")
        elif field == "t":
            ops.append(f"#{trap}")
        else:
            ops.append("#-12345" if tok == "#m" else "#13")   # 13: also in the alternatives below
    init = [f"ld r{i} {INIT + i}" for i in range(1, 32)]
    words = " ".join(map(str, DATA))
    return "\n".join([".code 0", *init, " ".join([ins.mnemonic, *ops]),
                      *["trap r0 #0"] * LANDING, ".data 0", words, ".end"]) + "\n"


def outcome(prog, values: list[int]):
    """Everything an instruction can affect, after running with R[i] = values[i] before it."""
    m = Machine(prog, mem_words=MEM, max_cycles=5000, mem_latency=3, trace=True)
    m.write(INIT, values)
    try:
        res = m.run()
    except SimFault as f:
        return {"fault": (f.fault["kind"], f.fault["pc"])}
    halt_pc = next(pc for _, _, pc, event, *_ in res.trace if event == "halt")
    c = res.cores[0]
    return {"registers": m.registers(0), "memory": m.read(0, OBSERVED), "output": res.events,
            "halt_pc": halt_pc, "cycles": res.cycles,
            "counts": (c["mem_reads"], c["mem_writes"], c["mem_accesses"])}


def declared(key: str) -> tuple[set[int], set[int]]:
    ins = BY_KEY[key]
    return {FIELD_REG[f] for f in ins.reads}, {FIELD_REG[f] for f in ins.writes}


def without_register(o: dict, k: int) -> dict:
    if "registers" not in o:
        return o
    regs = list(o["registers"])
    regs[k] = None
    return {**o, "registers": regs}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_only_the_declared_write_registers_change(case):
    reads, writes = declared(case[0])
    o = outcome(assemble(source(*case)), BASE)
    assert "fault" not in o
    changed = {k for k in range(1, 32) if o["registers"][k] != BASE[k]}
    assert changed <= writes, f"{case_id(case)} changed undeclared registers {sorted(changed - writes)}"
    assert changed == writes, f"{case_id(case)} did not change declared registers {sorted(writes - changed)}"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_the_outcome_depends_only_on_the_declared_read_registers(case):
    reads, writes = declared(case[0])
    prog = assemble(source(*case))
    base = outcome(prog, BASE)
    for k in range(1, 32):
        if k in reads:
            continue
        other = list(BASE)
        other[k] = BASE[k] + 1
        got = outcome(prog, other)
        if k in writes:       # its old value must not leak into the result
            assert got == base, f"{case_id(case)} depends on r{k}"
        else:
            assert without_register(got, k) == without_register(base, k), f"{case_id(case)} depends on r{k}"


@pytest.mark.parametrize("case", [c for c in CASES if c not in READ_NOT_USED], ids=case_id)
def test_every_declared_read_register_is_used(case):
    reads, _ = declared(case[0])
    prog = assemble(source(*case))
    base = outcome(prog, BASE)
    for k in reads:
        alternatives = {BASE[k] + 1, BASE[k] + 100, 0, -BASE[k], 13, *(BASE[j] for j in reads)} - {BASE[k]}
        outcomes = []
        for v in sorted(alternatives):
            other = list(BASE)
            other[k] = v
            outcomes.append(without_register(outcome(prog, other), k))
        assert any(o != without_register(base, k) for o in outcomes), f"{case_id(case)} never uses r{k}"


def bus_class(key: str, trap: int | None) -> str:
    ins = BY_KEY[key]
    if ins.bus == "trap":
        return TRAPS[trap].bus if trap in TRAPS else "none"
    return ins.bus


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_bus_class_matches_the_counters_of_both_models(case):
    init = 31                                 # the loads that set the registers up
    reads, writes, accesses = BUS_COUNTS[bus_class(*case)]
    expected = (init + reads, writes, init + accesses)
    prog = assemble(source(*case))
    assert outcome(prog, BASE)["counts"] == expected
    data = prog.data_image + [0] * (INIT - len(prog.data_image)) + BASE
    ref = ReferenceMachine(prog.code_image, data, prog.entry, mem_latency=3, mem_words=MEM).run()
    c = ref["cores"][0]
    assert (c["mem_reads"], c["mem_writes"], c["mem_accesses"]) == expected
    assert ref["bus_busy_cycles"] == 3 * expected[2]


def test_a_bus_access_costs_the_latency():
    # On one core only the bus accesses scale with L: the 31 loads and this instruction if it has
    # a bus class.
    for key, trap in CASES:
        prog = assemble(source(key, trap))
        cycles = {}
        for L in (2, 5):
            m = Machine(prog, mem_words=MEM, mem_latency=L)
            m.write(INIT, BASE)
            cycles[L] = m.run().cycles
        accesses = 31 + (bus_class(key, trap) != "none")
        assert cycles[5] - cycles[2] == 3 * accesses, (key, trap)


def test_the_installed_table_is_the_repositorys():
    installed = files("s2mc.isa").joinpath("instructions.toml").read_text(encoding="utf-8")
    assert installed == (REPO / "isa" / "instructions.toml").read_text(encoding="utf-8"), "run make setup"


def test_the_cpp_header_has_one_entry_per_row_in_table_order():
    header = render_header((REPO / "isa" / "instructions.toml").read_text(encoding="utf-8"))
    enum = header.split("enum Op : uint8_t {")[1].split("};")[0].split()
    assert enum[:3] == ["OP_UNDEFINED", "=", "0,"]
    assert [e.rstrip(",") for e in enum[3:-1]] == ["OP_" + i.key.replace(".", "_").upper() for i in INSTRUCTIONS]
    op_bus = header.split("OP_BUS[OP_COUNT] = {")[1].split("}")[0].split(", ")
    assert op_bus == ["BUS_NONE"] + [f"BUS_{i.bus.upper()}" for i in INSTRUCTIONS]
    trap_bus = header.split("TRAP_BUS[32] = {")[1].split("}")[0].split(", ")
    assert trap_bus == [f"BUS_{TRAPS[n].bus.upper()}" if n in TRAPS else "BUS_NONE" for n in range(32)]
