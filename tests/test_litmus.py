"""`s2mc litmus` (s2mc.experiments.litmus) and its checker (s2mc.experiments.litmus_model): the
checker against the literature's verdicts and hand-derived outcome sets, the engines' outcomes
inside the checker's, the timings, the docs table, and every bad input as one line."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from s2gen import programs as random_programs
from systemc_helpers import needs_systemc

from s2mc.common.errors import S2mcError
from s2mc.experiments import litmus
from s2mc.experiments.litmus_model import MODELS, allowed_outputs
from s2mc.isa import disassemble_word
from s2mc.isa.assembler import assemble
from s2mc.simulator import SimFault, run as simulate, systemc_engine

ROOT = Path(__file__).resolve().parents[1]
S2MC = Path(sys.executable).parent / "s2mc"
FILES = sorted(p.name for p in (ROOT / "workloads/litmus").glob("*.s"))
PROGRAMS = [p.name for p in litmus.bundled()]          # the files and their derived fenced variants
NO_FENCE = pytest.mark.skipif(not litmus.has_fence(), reason="this build's ISA has no `fence` instruction")


def simulates(model: str, engine: str = "fast") -> bool:
    """Whether this build's engine runs a program with consistency=model."""
    if not litmus.has_store_buffers():
        return model == "sc"
    try:
        simulate(assemble(".code 0\ntrap r0 #0\n.end\n"), consistency=model, engine=engine)
    except S2mcError:
        return False
    return True


NO_BUFFERS = pytest.mark.skipif(not (simulates("tso") and simulates("pso")),
                                reason="the fast engine does not simulate store buffers yet "
                                       "(machine parameter 'consistency' = tso, pso)")


def programs():
    """Every bundled program; those with fences skipped while the ISA has no `fence`."""
    return [pytest.param(n, marks=NO_FENCE) if "fence" in n else n for n in PROGRAMS]


def engine_models():
    return [m if m == "sc" else pytest.param(m, marks=NO_BUFFERS) for m in MODELS]


def s2mc(*args, cwd=None):
    return subprocess.run([str(S2MC), "litmus", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def one_line_error(proc, needle):
    assert proc.returncode != 0 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


# -- the checker alone ----------------------------------------------------------------------

#: Every test of the bundle with the literature's verdict on its relaxed outcome (the Primer,
#: chapters 3-4; herd7's sc, tso and SPARC PSO models), written here apart from the programs.
LITERATURE = {
    "sb": ("forbidden", "allowed", "allowed"), "mp": ("forbidden", "forbidden", "allowed"),
    "lb": ("forbidden", "forbidden", "forbidden"), "iriw": ("forbidden", "forbidden", "forbidden"),
    "2+2w": ("forbidden", "forbidden", "allowed"), "dekker": ("forbidden", "allowed", "allowed"),
    "peterson": ("forbidden", "allowed", "allowed"),
}


def test_the_bundle_has_each_classic_test_with_and_without_fences():
    # one file per test; its fenced variant is derived from it, not a second copy
    assert FILES == sorted(f"{n}.s" for n in LITERATURE)
    assert PROGRAMS == sorted(f"{n}{s}.s" for n in LITERATURE for s in ("", "_fence"))


@pytest.mark.parametrize("name", FILES)
def test_the_fenced_variant_is_the_program_with_a_fence_at_each_named_label(name):
    """Each file's fenced variant: the same instructions with one `fence` more at each label that its
    header's fence= names (counted here from the file's own text), and the same data."""
    from s2mc.isa.instructions import decode
    text = (ROOT / "workloads/litmus" / name).read_text()
    labels = text.split(" fence=", 1)[1].split()[0].split(",")
    plain, fenced = (litmus.load(str(litmus.FOLDER / n)) for n in (name, name.replace(".s", "_fence.s")))
    assert fenced.fences == tuple(labels) and plain.fences == ()
    assert fenced.shown == name.replace(".s", "_fence.s") and fenced.name == name[:-2] + "_fence"
    ops = [[decode(w).ins.mnemonic for w in t.program.code_image] for t in (plain, fenced)]
    assert ops[1].count("fence") == len(labels) and ops[0].count("fence") == 0
    assert [o for o in ops[1] if o != "fence"] == ops[0]
    for label in labels:        # a fence where each label is
        assert ops[1][fenced.program.address_of(label)] == "fence"
    assert fenced.program.data_image == plain.program.data_image


def test_derived_names_resolve_from_any_folder_and_by_path(tmp_path):
    for arg in ("sb_fence.s", "sb_fence", str(ROOT / "workloads/litmus/sb_fence.s")):
        proc = s2mc(arg, "--model", "tso", "--runs", 30, "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        got = json.loads(proc.stdout)
        assert got["program"] == "sb_fence" and "0 0\n" not in got["checker_outcomes"]
    assert list(tmp_path.iterdir()) == []


def test_the_epilogue_prints_v_for_a_program_of_ones_own(tmp_path):
    """A program with a data label `v` and no `show` gets the shared epilogue: core 0 prints v[0], v[1]
    once both cores have stored them; its own lines keep their numbers in errors."""
    prog = tmp_path / "mine.s"
    prog.write_text("; litmus: cores=2 values=a,b\n.code 0\n  cid r1\n  add r2 r1 #7\n  st r2 @v r1\n"
                    ".data 0\n:v 0 0\n.end\n")
    r = litmus.run_litmus(str(prog), runs=5)
    assert dict(r.outcomes) == {"7 8\n": 5}
    prog.write_text("; litmus: cores=2 values=a,b\n.code 0\n  cid r1\n  st r2 @v r1\n.data 0\n:v 0 0\n"
                    ":w bogus\n.end\n")
    with pytest.raises(S2mcError, match=r"mine.s:7: "):
        litmus.load(str(prog))


@pytest.mark.parametrize("name", programs())
def test_each_program_declares_the_literature_verdicts(name):
    t = litmus.load(name)
    want = ("forbidden",) * 3 if name.endswith("_fence.s") else LITERATURE[name[:-2]]
    assert tuple(t.expected[m] for m in MODELS) == want


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("name", programs())
def test_the_checker_agrees_with_the_literature(name, model):
    t = litmus.load(name)
    allowed = allowed_outputs(t.program, t.cores, model).outputs
    assert ("allowed" if t.relaxed in allowed else "forbidden") == t.expected[model]
    assert allowed and all(len(o.split()) == len(t.values) for o in allowed)


# The whole outcome sets, derived by hand from the models' definitions.
HAND = {
    ("sb.s", "sc"): {"0 1", "1 0", "1 1"}, ("sb.s", "tso"): {"0 0", "0 1", "1 0", "1 1"},
    ("mp.s", "tso"): {"0 0", "0 1", "1 1"}, ("mp.s", "pso"): {"0 0", "0 1", "1 0", "1 1"},
    ("2+2w.s", "tso"): {"1 2", "2 1", "2 2"}, ("2+2w.s", "pso"): {"1 1", "1 2", "2 1", "2 2"},
    ("peterson.s", "sc"): {"2"}, ("peterson.s", "tso"): {"1", "2"},
    ("lb.s", "pso"): {"0 0", "0 1", "1 0"},
}


@pytest.mark.parametrize("name,model", sorted(HAND))
def test_the_checker_finds_exactly_the_hand_derived_outcomes(name, model):
    t = litmus.load(name)
    assert allowed_outputs(t.program, t.cores, model).outputs == {o + "\n" for o in HAND[name, model]}


def checker(body: str, cores: int, model: str, data: str = ":x 0\n:y 0"):
    return allowed_outputs(assemble(f".code 0\n{body}\n.data 0\n{data}\n.end\n"), cores, model).outputs


def test_a_load_reads_its_own_buffered_store_first():
    # core 0 stores x=1 and reads x back: its own buffer forwards 1, never the 0 still in memory
    body = "cid r1\njt r1 out\nmov r2 #1\nst r2 x\nld r3 x\ntrap r3 #1\n:out\ntrap r0 #0"
    assert checker(body, 2, "tso") == checker(body, 2, "pso") == {"1"}


def test_pso_keeps_stores_to_one_address_in_order():
    # x=1; x=2 on core 0, core 1 reads x twice: never 2 then 1
    body = ("cid r1\njt r1 rd\nmov r2 #1\nst r2 x\nmov r2 #2\nst r2 x\ntrap r0 #0\n"
            ":rd\nld r3 x\nld r4 x\ntrap r3 #1\ntrap r4 #1\ntrap r0 #0")
    got = checker(body, 2, "pso")
    assert "21" not in got and {"00", "01", "02", "11", "12", "22"} == got


def test_the_checker_refuses_what_is_no_litmus_test():
    with pytest.raises(S2mcError, match="core 0 pc 1: address 5000 is outside the program's data"):
        checker("mov r1 #5000\nld r2 @0 r1\ntrap r0 #0", 1, "sc")
    with pytest.raises(S2mcError, match="a loop that cannot end"):
        checker(":l\njmp l", 1, "sc")
    with pytest.raises(S2mcError, match="model 'rc' is not one of sc, tso, pso"):
        checker("trap r0 #0", 1, "rc")


@settings(max_examples=150, deadline=None)
@given(random_programs())
def test_on_one_core_the_checker_prints_what_the_fast_engine_prints(source):
    # random programs of every instruction (tests/s2gen.py): the checker's own interpreter of the
    # ISA against the engine's, one output each; with one core the store buffers change nothing
    # and every register printed at the end, so that a wrong result shows even when not printed
    show = "".join(f"trap r{r} #1\ntrap r0 #2\n" for r in range(1, 32))
    prog = assemble(source.replace("trap r0 #0\n.data", show + "trap r0 #0\n.data"))
    try:
        want = simulate(prog, cores=1, mem_words=512).output
    except SimFault:
        assume(False)
    for model in MODELS:
        assert allowed_outputs(prog, 1, model, mem_words=512).outputs == {want}


# -- the engines against the checker ------------------------------------------------------

@pytest.mark.parametrize("model", engine_models())
@pytest.mark.parametrize("name", programs())
def test_the_fast_engine_prints_only_what_the_checker_allows(name, model):
    r = litmus.run_litmus(name, model, runs=60, seed=7)
    assert r.runs == 60 and not r.forbidden, r.forbidden
    assert len(r.outcomes) >= 2 or name.startswith("peterson")   # the timings really vary


@pytest.mark.parametrize("model", [pytest.param(m, marks=needs_systemc) for m in MODELS])
@pytest.mark.parametrize("name", ["sb.s", "mp.s"])
def test_the_systemc_engine_prints_only_what_the_checker_allows(name, model):
    r = litmus.run_litmus(name, model, engine="systemc", runs=8, seed=3)
    assert r.runs == 8 and not r.forbidden


@pytest.mark.parametrize("model", [pytest.param(m, marks=needs_systemc) for m in MODELS])
def test_s2mc_litmus_on_the_systemc_engine_matches_the_fast_engine(model):
    """The command on the systemc engine: the same outcomes, run by run, as on the fast engine
    (the engines are equal to the cycle), none of them forbidden under the model."""
    runs = {engine: json.loads(s2mc("sb.s", "--model", model, "--engine", engine, "--runs", 12, "--seed", 5,
                                    "--json").stdout) for engine in ("fast", "systemc")}
    assert runs["systemc"].pop("engine", "systemc") == "systemc"
    runs["fast"].pop("engine", None)
    assert runs["systemc"] == runs["fast"]


@NO_BUFFERS
@pytest.mark.parametrize("model", ["tso", "pso"])
def test_store_buffers_show_the_relaxed_outcome_of_sb(model):
    r = litmus.run_litmus("sb.s", model, runs=100, seed=0)
    assert r.outcomes[r.test.relaxed] > 0 and not r.forbidden


@NO_BUFFERS
def test_pso_shows_the_relaxed_outcome_of_mp():
    # rare on this machine (the writer's buffer must be busy, the reader favoured by the arbiter):
    # 3 of 5000 runs with seed 1
    r = litmus.run_litmus("mp.s", "pso", runs=2000, seed=1)
    assert r.outcomes[r.test.relaxed] > 0 and not r.forbidden


# The cycle-stepped reference model (simulator/reference.py) already simulates the store buffers the
# engines will: the same checks on it.
REF_MODELS = [pytest.param(m, marks=pytest.mark.skipif(not litmus.has_store_buffers(),
                                                         reason="no machine parameter 'consistency'"))
              for m in ("tso", "pso")]


@pytest.mark.parametrize("model", REF_MODELS)
def test_the_reference_model_shows_the_relaxed_outcome_of_sb_and_dekker(model):
    for name in ("sb.s", "dekker.s"):
        r = litmus.run_litmus(name, model, engine="reference", runs=150, seed=0)
        assert r.outcomes[r.test.relaxed] > 0 and not r.forbidden, r.outcomes


@pytest.mark.parametrize("model", REF_MODELS)
@pytest.mark.parametrize("name", [n for n in PROGRAMS if not n.startswith(("peterson.", "iriw"))])
def test_the_reference_model_prints_only_what_the_checker_allows(name, model):
    r = litmus.run_litmus(name, model, engine="reference", runs=40, seed=7)
    assert not r.forbidden


@pytest.mark.parametrize("engine", ["fast", "reference"])
@pytest.mark.parametrize("model", REF_MODELS)
def test_the_machine_ends_petersons_lock_without_fences(model, engine):
    """A core spinning on loads still drains its stores (its own requests and its drain take turns
    for the bus), so the lock without fences ends, and breaks: both cores enter."""
    r = litmus.run_litmus("peterson.s", model, engine=engine, runs=320, seed=0)
    assert not r.forbidden and r.outcomes[r.test.relaxed] > 0, r.outcomes


# -- timings --------------------------------------------------------------------------------

def test_the_timings_are_drawn_from_the_seed_and_start_with_all_cores_at_once():
    a, b = litmus.timings(2, 50, 11), litmus.timings(2, 50, 11)
    assert all(t.store_buffer_entries is None for t in a)        # sc: no store buffers to size
    if litmus.has_store_buffers():
        sizes = [t.store_buffer_entries for t in litmus.timings(2, 50, 11, "tso")]
        assert sizes[0] is None and set(sizes[1:]) <= set(range(1, 9)) and len(set(sizes)) > 3
    assert a == b and a != litmus.timings(2, 50, 12) and len(a) == 50
    assert a[0].delays == (0, 0) and a[0].arbitration == "fifo" and a[0].cache == "none"
    assert {t.arbitration for t in a} == {"fifo", "fixed", "round_robin", "burst4"}
    assert len({t.cache for t in a}) > 2 and max(max(t.delays) for t in a) <= litmus.MAX_DELAY


def test_the_prologue_delays_each_core_by_its_nops_and_changes_nothing_else():
    prog = litmus.load("sb.s").program
    # the prologue costs the same fixed cycles whatever the delays, plus the nops: one cycle each
    r1 = simulate(litmus.delayed(prog, (1, 1)), cores=2)
    r9 = simulate(litmus.delayed(prog, (9, 9)), cores=2)
    assert r9.cycles - r1.cycles == 8 and r9.output == r1.output
    assert r9.instructions - r1.instructions == 2 * 8            # the nops, and nothing else
    assert litmus.delayed(prog, (0, 0)) is prog and litmus.delayed(prog, (0, 0), (0, 0), (0, 0)) is prog


def test_the_prologue_accesses_go_to_each_cores_own_word_past_the_data():
    prog = litmus.load("sb.s").program
    top = prog.top("data")
    base = simulate(litmus.delayed(prog, (1, 1)), cores=2)
    r = simulate(litmus.delayed(prog, (1, 1), (2, 1), (1, 3)), cores=2)
    assert r.output == base.output and r.instructions - base.instructions == 2 + 1 + 1 + 3
    reads = [c["mem_reads"] - b["mem_reads"] for c, b in zip(r.cores, base.cores)]
    writes = [c["mem_writes"] - b["mem_writes"] for c, b in zip(r.cores, base.cores)]
    assert reads == [2, 1] and writes == [1, 3]
    listing = [disassemble_word(w) for w in litmus.delayed(prog, (0, 0), (1, 0), (0, 1)).image("code")]
    assert f"ld r30 {top}" in listing and f"st r0 {top + 1}" in listing


# -- the docs table -------------------------------------------------------------------------

@NO_FENCE
def test_the_docs_table_is_the_generated_one():
    doc = (ROOT / "docs/consistency.md").read_text()
    assert litmus.literature_table() in doc


@pytest.mark.slow
@NO_BUFFERS
def test_the_docs_measured_table_is_the_generated_one():
    # 15 s or more: every bundled program, 500 runs, three models on the fast engine, two on the reference
    doc = (ROOT / "docs/consistency.md").read_text()
    assert "<!-- measured table -->\n" + litmus.measured_table(500, 0) + "<!-- end of measured table -->" in doc


def test_the_measured_table_counts_each_cell_from_its_runs(monkeypatch):
    # each cell is run_litmus's count of the relaxed outcome; a run that never ends stops only its cell
    monkeypatch.setattr(litmus, "bundled", lambda: [litmus.FOLDER / "sb.s", litmus.FOLDER / "sb_fence.s"])
    monkeypatch.setattr(litmus, "MEASURED", (("sc", "fast"), ("tso", "fast")) if simulates("tso") else (("sc", "fast"),))
    got = litmus.measured_table(40, 3).splitlines()
    for line, name in zip(got[2:], ("sb.s", "sb_fence.s")):
        want = [f"{litmus.run_litmus(name, m, e, 40, 3).outcomes.get('0 0' + chr(10), 0)} / 40"
                for m, e in litmus.MEASURED]
        assert line == f"| {name} | " + " | ".join(want) + " |"
    monkeypatch.setattr(litmus, "MAX_CYCLES", 30)
    assert litmus.measured_table(3, 0).splitlines()[2].startswith("| sb.s | never ends in run 0 |")


# -- the command ----------------------------------------------------------------------------

def test_the_command_finds_a_bundled_test_by_name_and_prints_json(tmp_path):
    proc = s2mc("sb", "--runs", 20, "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["model"] == "sc" and got["runs"] == 20 and sum(got["outcomes"].values()) == 20
    assert set(got["allowed"]) == set(got["outcomes"]) and all(got["allowed"].values())
    assert sorted(got["checker_outcomes"]) == ["0 1\n", "1 0\n", "1 1\n"]
    assert list(tmp_path.iterdir()) == []


def test_the_command_table_comes_from_the_run(tmp_path):
    proc = s2mc("mp.s", "--runs", 30, "--seed", 2, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    r = litmus.run_litmus("mp.s", "sc", runs=30, seed=2)
    assert proc.stdout.startswith(f"mp under SC: 30 runs on the fast engine (seed 2), {len(r.outcomes)} distinct")
    for out, n in r.outcomes.items():
        assert f"{r.test.label(out)}  {n:>4}" in proc.stdout


@NO_BUFFERS
def test_the_command_puts_fences_where_asked_and_says_run_0s_cycles(tmp_path):
    """--fence f1 on Peterson's lock: the checker forbids count=1 under TSO (one fence after turn=j
    is enough where buffers are FIFO), not under PSO; run 0's cycles are those of the program run
    with every core at once, on the reference model too."""
    from s2mc.simulator.reference import ReferenceMachine
    got = {m: json.loads(s2mc("peterson.s", "--model", m, "--runs", 40, "--fence", "f1", "--json",
                              cwd=tmp_path).stdout) for m in ("tso", "pso")}
    assert got["tso"]["program"] == "peterson_fence_f1" and got["tso"]["checker_outcomes"] == ["2\n"]
    assert got["pso"]["checker_outcomes"] == ["1\n", "2\n"]
    prog = litmus.load("peterson.s", fences=("f1",)).program
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=2, consistency="tso",
                           mem_words=4096).run()["cycles"]
    assert got["tso"]["first_cycles"] == ref == simulate(prog, cores=2, consistency="tso").cycles
    text = s2mc("sb.s", "--runs", 3, cwd=tmp_path).stdout
    assert f"Run 0 (every core starting at once on the default machine): " \
           f"{simulate(litmus.load('sb.s').program, cores=2).cycles} cycles" in text
    # the header's own labels by hand are the derived variant; --fence on a derived name overrides it
    both = json.loads(s2mc("sb.s", "--fence", "f1,f0", "--runs", 5, "--json", cwd=tmp_path).stdout)
    assert both["program"] == "sb_fence" and both["checker_outcomes"] == ["0 1\n", "1 0\n", "1 1\n"]
    one = json.loads(s2mc("sb_fence.s", "--model", "tso", "--fence", "f0", "--runs", 5, "--json", cwd=tmp_path).stdout)
    assert one["program"] == "sb_fence_f0" and "0 0\n" in one["checker_outcomes"]
    one_line_error(s2mc("sb.s", "--fence", "f0,,f1", cwd=tmp_path), "--fence 'f0,,f1': give code labels")
    one_line_error(s2mc("sb.s", "--fence", "nowhere", cwd=tmp_path), "fence=nowhere: no line with the label")


LITMUS_HEADER = "; litmus: cores=1 values=a\n"


@pytest.mark.parametrize("args,needle", [
    (["spin_lock.s"], "not a litmus program"),
    ([str(ROOT / "workloads/asm/spin_lock.s")], "not a litmus program"),
    (["nothere.s"], "nothere.s: no such file"),
    (["sb.s", "--runs", "0"], "--runs"),
    (["sb.s", "--runs", "x"], "--runs"),
    (["sb.s", "--model", "rc"], "--model"),
    (["sb.s", "--engine", "slow"], "--engine"),
    (["silent.s"], "run 0 printed nothing"),
    (["badcores.s"], "litmus header: cores"),
    (["badfield.s"], "litmus header: unknown field 'colour'"),
    (["badverdict.s"], "tso=maybe is not allowed or forbidden"),
    (["badrelaxed.s"], "relaxed= has 2 values"),
    (["prog.rz"], "a litmus program is S2 assembly"),
    (["spins.s"], "run 0 ("),
    (["nofence_fence.s"], "nofence.s has no fenced variant"),
    (["lost_fence.s"], "fence=f9: no line with the label 'f9' alone"),
    (["novalues.s"], "values= names nothing for the epilogue"),
    (["dekker_fenced.s"], "dekker_fenced.s: no such file"),
])
def test_bad_input_is_one_line(tmp_path, args, needle):
    (tmp_path / "silent.s").write_text(LITMUS_HEADER + ".code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "badcores.s").write_text("; litmus: cores=lots\n.code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "badfield.s").write_text("; litmus: cores=1 colour=red\n.code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "badverdict.s").write_text("; litmus: cores=1 tso=maybe\n.code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "badrelaxed.s").write_text("; litmus: cores=1 values=a relaxed=1,2\n.code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "prog.rz").write_text("int main() { return 0; }\n")
    (tmp_path / "spins.s").write_text(LITMUS_HEADER + ".code 0\n:l\nld r1 x\njmp l\n.data 0\n:x 0\n.end\n")
    (tmp_path / "nofence.s").write_text(LITMUS_HEADER + ".code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "lost.s").write_text("; litmus: cores=1 values=a fence=f9\n.code 0\ntrap r0 #0\n.end\n")
    (tmp_path / "novalues.s").write_text("; litmus: cores=1\n.code 0\n.data 0\n:v 0\n.end\n")
    before = sorted(tmp_path.iterdir())
    one_line_error(s2mc(*args, cwd=tmp_path), needle)
    assert sorted(tmp_path.iterdir()) == before


@pytest.mark.skipif(simulates("tso"), reason="this build's fast engine has store buffers")
def test_tso_without_store_buffers_says_what_is_missing():
    one_line_error(s2mc("sb.s", "--model", "tso"), "tso")


def test_an_output_the_checker_forbids_is_shown_and_fails_the_command(monkeypatch):
    # a checker that allows only one of SB's SC outcomes: the others the engine prints are bugs
    from click.testing import CliRunner

    from s2mc.cli.main import cli
    from s2mc.experiments.litmus_model import Allowed
    monkeypatch.setattr(litmus, "allowed_outputs", lambda *a: Allowed("sc", frozenset({"0 1\n"}), 1))
    res = CliRunner().invoke(cli, ["litmus", "sb.s", "--runs", "40"])
    assert res.exit_code == 1
    assert "r0=0 r1=1" in res.stdout and "FORBIDDEN" in res.stdout
    assert res.stderr.count("\n") == 1 and "the sc checker forbids: r0=1 r1=0" in res.stderr
