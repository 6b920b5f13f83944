"""The lab notebooks (docs/lab/, s2mc.experiments.lab, `s2mc lab`): the worksheet is generated from the
library, the answers hold the exact numbers of a fresh run (recomputed here with the simulator's API,
not with the lab's code), and the auto-check executes notebooks (nbclient) and marks them."""
import json
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from s2mc.experiments import lab
from s2mc.compiler import compile as compile_rz
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid

ROOT = Path(__file__).resolve().parents[1]
LAB = ROOT / "docs" / "lab"


def asm(name):
    return assemble((ROOT / "workloads/asm" / name).read_text())


def fresh_truths() -> dict:
    """Every exact quantity, computed independently of s2mc.experiments.lab."""
    ps, lock = asm("parallel_sum.s"), asm("spin_lock.s")
    cyc = {n: Machine(ps, cores=n).run().cycles for n in (1, 4, 8)}
    one4 = Machine(ps, cores=1, mem_latency=4).run()
    acc4 = sum(c["mem_reads"] + c["mem_writes"] for c in one4.cores)     # no xchg in parallel_sum
    z = one4.cycles / acc4 - 4                                          # Z = C1 / A - L
    fib = (ROOT / "workloads/rz/fib.rz").read_text()
    fib_acc = {o: sum(c["mem_accesses"] for c in Machine(compile_rz(fib, opt=o).program).run().cores) for o in (0, 1)}
    aes = {r.config.cores: r.result.cycles for r in run_grid(AesGrid(cores=(1, 2), sizes=(256,)),
                                                             new_run_id=lambda: "t")[0]}
    return {"s1_speedup_4": round(cyc[1] / cyc[4], 2), "s1_speedup_8": round(cyc[1] / cyc[8], 2),
            **{f"s3_cycles_{a}": Machine(lock, cores=4, arbitration=a).run().cycles
               for a in ("fifo", "fixed", "round_robin")},
            "s4_ceiling_L4": round((z + 4) / 4, 2),
            "s4_speedup_L4": round(one4.cycles / Machine(ps, cores=4, mem_latency=4).run().cycles, 2),
            "s5_access_ratio": round(fib_acc[1] / fib_acc[0], 2),
            "s6_ratio_1core": round(aes[1] / 266173, 2),          # seed 003 Table 3: 256 bytes, 1 core
            "s6_speedup_2": round(aes[1] / aes[2], 2),
            **{f"s6b_false_sharing_w{w}": sum(c["false_sharing_misses"] for c in Machine(
                asm("false_sharing.s"), cores=2, cache="mesi", line_words=w).run().cores) for w in (8, 1)},
            **consistency_truths()}


def consistency_truths() -> dict:
    """Section 8's numbers on the other engine: the litmus counts on the cycle-stepped reference model
    (the lab runs the fast engine), the cycles with the fences written into the text here."""
    from s2mc.experiments import litmus
    from s2mc.simulator.reference import ReferenceMachine

    def relaxed(name, model, fences=None):
        t = litmus.load(name, fences=fences)
        r = litmus.run_litmus(name, model, "reference", runs=lab.LITMUS_RUNS, seed=0, test=t)
        return r.outcomes.get(t.relaxed, 0)

    def ref_cycles(prog, cores, model):
        return ReferenceMachine(prog.code_image, prog.data_image, prog.entry, cores=cores, consistency=model,
                                mem_words=4096).run()["cycles"]

    pet = [litmus.load("peterson.s", fences=f).program for f in (None, ("f1",))]
    fill_text = (ROOT / "workloads/asm/store_fill.s").read_text()
    fill, fill_fenced = assemble(fill_text), assemble(fill_text.replace("\n:f0 ", "\n:f0 fence "))
    sc = Machine(fill, cores=4).run().cycles
    return {"s8_sb_sc": relaxed("sb.s", "sc"), "s8_sb_tso": relaxed("sb.s", "tso"),
            "s8_peterson_tso": relaxed("peterson.s", "tso"),
            "s8_peterson_fence_tso": relaxed("peterson.s", "tso", ("f1",)),
            "s8_fence_cost": ref_cycles(pet[1], 2, "tso") - ref_cycles(pet[0], 2, "tso"),
            "s8_buffer_speedup": round(sc / Machine(fill, cores=4, consistency="tso").run().cycles, 2),
            "s8_fenced_speedup": round(sc / Machine(fill_fenced, cores=4, consistency="tso").run().cycles, 2)}


def test_the_consistency_section_shows_what_the_models_say():
    """Section 8's exact numbers against what the models guarantee: SC never shows SB's relaxed
    outcome, TSO does; Peterson breaks under TSO and one fence mends it, at a cost; store buffers
    speed up the store loop and a fence after every store takes it back."""
    t = consistency_truths()
    assert t["s8_sb_sc"] == 0 < t["s8_sb_tso"] and t["s8_peterson_fence_tso"] == 0 < t["s8_peterson_tso"]
    assert t["s8_fence_cost"] > 0 and t["s8_fenced_speedup"] < 1 < t["s8_buffer_speedup"]


@pytest.fixture(scope="module")
def truths():
    return fresh_truths()


def predictions(nb) -> dict:
    """The predict[...] = value lines of a notebook."""
    out = {}
    for cell in nb.cells:
        for line in cell.source.splitlines():
            if cell.cell_type == "code" and line.startswith("predict["):
                key, value = line.split("] = ", 1)
                out[key[len("predict['"):-1]] = eval(value)      # noqa: S307 - a literal we wrote
    return out


def test_the_committed_worksheet_is_the_generated_one():
    committed = nbformat.read(LAB / "worksheet.ipynb", as_version=4)
    assert [c.source for c in committed.cells] == [c.source for c in lab.notebook(answers=False).cells], \
        "regenerate: s2mc lab write --to docs/lab"
    every = {q.name for _, q in lab.quantities()}
    assert predictions(committed) == dict.fromkeys(every)               # every prediction left to the student
    sections = [c.source for c in committed.cells if c.cell_type == "markdown" and c.source.startswith("## ")]
    assert len(sections) == len(lab.SECTIONS) >= 6


def test_the_answers_hold_the_numbers_of_a_fresh_run(truths):
    committed = nbformat.read(LAB / "answers.ipynb", as_version=4)
    got = predictions(committed)
    for name, value in truths.items():
        assert got[name] == value, name
        assert f"**{value}**" in "\n".join(c.source for c in committed.cells if c.cell_type == "markdown")
    assert got["s7_native_speedup"] == lab.Quantity("x", "", "", exact=False, typical=1.91).truth()
    assert got["s8_native_sb"] == lab.NATIVE_SB_TYPICAL == 29.4          # docs/consistency.md, "On this CPU"
    # the lab's own truths (what `check` marks against) are the same numbers
    assert {q.name: q.truth() for _, q in lab.quantities() if q.exact} == truths


def test_check_marks_a_student_notebook(tmp_path, truths):
    nb = lab.notebook(answers=False)
    for cell in nb.cells:
        if cell.source.startswith("# Predict: speedup of 4 cores"):
            cell.source = cell.source.replace("= None", "= 3.5")           # 3.5 against the truth
        if cell.source.startswith("measured['s3_cycles_fixed']"):
            cell.source = cell.source.replace("arbitration='fixed'", "arbitration='fifo'")   # measured wrongly
    path = tmp_path / "student.ipynb"
    nbformat.write(nb, path)
    marks = {m.name: m for m in lab.check(path)}
    assert marks["s3_cycles_fixed"].right is False and marks["s3_cycles_fixed"].measured == truths["s3_cycles_fifo"]
    assert all(m.right for n, m in marks.items() if n != "s3_cycles_fixed" and n in truths)
    for timing in set(marks) - set(truths):
        assert marks[timing].right is None and marks[timing].measured > 0
    s1 = marks["s1_speedup_4"]
    assert s1.predicted == 3.5 and s1.error == pytest.approx(abs(3.5 - truths["s1_speedup_4"]) / truths["s1_speedup_4"])
    assert marks["s1_speedup_8"].predicted is None and marks["s1_speedup_8"].error is None
    text = lab.format_marks(list(marks.values()))
    assert "WRONG" in text and f"{len(truths) - 1}/{len(truths)} measurements right" in text
    # the command: the same marks, exit 1 for the wrong measurement
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "lab", "check", str(path)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1 and "s3_cycles_fixed" in proc.stdout and "WRONG" in proc.stdout


def test_the_answers_notebook_checks_clean(tmp_path):
    marks = lab.check(LAB / "answers.ipynb")
    assert all(m.right is not False for m in marks) and lab.passed(marks)
    assert all(m.error == 0 for m in marks if m.right)


@pytest.mark.parametrize("content,needle", [("not json", "not a notebook"), (None, "a cell failed")])
def test_check_errors_are_one_line(tmp_path, content, needle):
    path = tmp_path / "bad.ipynb"
    if content is None:
        nb = lab.notebook()
        nb.cells.insert(2, nbformat.v4.new_code_cell("1 / 0"))
        nbformat.write(nb, path)
    else:
        path.write_text(content)
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "lab", "check", str(path)], capture_output=True,
                          text=True, timeout=600)
    err = proc.stderr.splitlines()        # one line: no kernel warnings, no colour codes
    assert proc.returncode == 1 and len(err) == 1 and needle in err[0], proc.stderr
    assert "\x1b[" not in proc.stderr + proc.stdout


def test_an_unchanged_worksheet_is_not_done(tmp_path):
    """The worksheet as handed out (every prediction None) measures right but is not finished: the
    check says which predictions are missing and exits 1, with nothing but its marks on its output."""
    path = tmp_path / "worksheet.ipynb"
    path.write_text((LAB / "worksheet.ipynb").read_text())
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "lab", "check", str(path)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 1, proc.stdout
    last = proc.stdout.strip().splitlines()[-1]
    n = len(lab.exercises())
    assert last.startswith(f"NOT DONE: {n} of {n} exercises unfinished: no prediction for s1_speedup_4, ")
    assert f"0/{n} predictions made" in proc.stdout and proc.stdout.count("no prediction") >= n
    assert proc.stderr == "" and "\x1b[" not in proc.stdout


def test_grade_is_the_marking_for_any_front_end(truths):
    """lab.grade on answers given as data (no notebook): done only with every prediction made and every
    measurement right; the exercises are the worksheet's."""
    names = [e["name"] for e in lab.exercises()]
    assert names == list(predictions(lab.notebook(answers=False)))
    assert set(truths) <= set(names) and {e["name"] for e in lab.exercises() if not e["exact"]} == \
        set(names) - set(truths)
    measured = dict(truths, s7_native_speedup=1.7, s8_native_sb=20.5)   # timings: any measured value
    timings = {"s7_native_speedup", "s8_native_sb"}
    full = lab.grade({"predict": dict(measured), "measured": measured})
    assert lab.passed(full) and [m.verdict for m in full] == ["timing" if n in timings else "right" for n in names]
    assert all(m.error == 0 for m in full)
    blank = lab.grade({"predict": {n: None for n in names}, "measured": measured})
    assert not lab.passed(blank) and not any(m.done for m in blank)
    one_off = lab.grade({"predict": measured, "measured": dict(measured, s1_speedup_8=truths["s1_speedup_8"] + 1)})
    assert not lab.passed(one_off) and [m.name for m in one_off if not m.done] == ["s1_speedup_8"]
    assert [m.verdict for m in lab.grade({})] == ["timing" if n in timings else "missing" for n in names]


def test_write_command(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "lab", "write", "--to", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "worksheet.ipynb").read_text())["cells"]
    assert predictions(nbformat.read(tmp_path / "answers.ipynb", as_version=4))["s3_cycles_fixed"] == 528


@pytest.mark.parametrize("package", ["nbclient", "nbformat"])
def test_lab_without_its_packages_is_one_line(tmp_path, package):
    # the package made unimportable, as on a pip install without the [lab] extra
    code = (f"import sys; sys.modules[{package!r}] = None; from s2mc.cli.main import main; "
            f"sys.argv = ['s2mc', 'lab', 'write', '--to', {str(tmp_path)!r}]; main()")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1 and not list(tmp_path.iterdir()), proc.stderr
    assert proc.stderr == (f"s2mc: error: s2mc lab: the Python package {package} is not installed "
                           "(`make setup` installs it, or pip install 's2mc[lab]')\n")


def test_the_lab_readme_runs_only_what_setup_installs():
    """Every command of docs/lab/README.md's command block is a program of the virtual environment that
    `make setup` makes (a notebook editor it does not install is named in the text, with how to add it)."""
    import re
    import shutil
    text = (LAB / "README.md").read_text()
    block = re.search(r"```\n(.*?)```", text, re.S).group(1)
    progs = {line.split()[0] for line in block.splitlines() if line.strip()}
    venv_bin = Path(sys.executable).parent
    assert progs and all((venv_bin / p).exists() for p in progs), progs
    # what the text names outside the block is installed where it says, or says how to install it
    if "jupyter notebook" in text:
        assert "pip install notebook" in text or shutil.which("jupyter", path=str(venv_bin))


def test_the_readme_and_the_server_page_name_every_exercise():
    """docs/lab/README.md lists the exercises as the generated worksheet titles them, 6b included, and
    docs/server.md's Exercises row names every section number."""
    import re
    readme = (LAB / "README.md").read_text()
    titles = [c.source.lstrip("# ").split("\n", 1)[0] for c in lab.notebook(answers=False).cells
              if c.cell_type == "markdown" and re.match(r"## \d", c.source)]
    assert titles == [s.title for s in lab.SECTIONS] and "6b. Private caches: false sharing" in titles
    assert re.findall(r"^- (\d+b?\. .+)$", readme, re.M) == titles
    row = next(ln for ln in (ROOT / "docs" / "server.md").read_text().splitlines() if ln.startswith("| Exercises |"))
    for t in titles:
        assert re.search(rf"\b{t.split('.')[0]}\b", row), t


def test_the_timing_answer_is_a_measured_one():
    """The one answer that depends on the machine, the native speedup, is the figure a section of
    docs/benchmarks.md records with its conditions, and the answer names that section."""
    import re
    sec = next(s for s in lab.SECTIONS if any(not q.exact for q in s.quantities))
    (q,) = [q for q in sec.quantities if not q.exact]
    bench = (Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    named = re.findall(r'"([^"]+)"', sec.why)
    assert named, sec.why
    m = re.search(rf"^#+ {re.escape(named[0])}.*\n", bench, re.M)
    assert m, named[0]
    quiet = bench[m.end():].split("\n#", 1)[0]
    assert f"{q.typical:.2f}×" in quiet and "64 MiB" in q.asks and "DISTURBED" in sec.why


def test_a_fence_at_a_label_the_program_lacks_is_one_error():
    from s2mc.common.errors import S2mcError
    with pytest.raises(S2mcError, match=r"^store_fill.s: fence=nowhere: no line with the label 'nowhere' alone$"):
        lab.run("store_fill.s", 4, fences=("nowhere",), consistency="tso")
    with pytest.raises(S2mcError, match="fence=nowhere"):
        lab.relaxed_runs("sb.s", "tso", fences=("nowhere",))
