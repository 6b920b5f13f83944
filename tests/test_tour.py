"""The README tour and the tutorial work verbatim from an empty folder, in order, with the installed
`s2mc`: every command line of their `sh` blocks runs as a user would type it, and
the last step writes a complete report."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent                 # the virtual environment's bin/, where s2mc is


def commands(markdown: str, section: str | None = None) -> list[str]:
    """The command lines of the ```sh blocks (of one `## ` section when given), comments and the
    venv activation left out (the test puts the venv on PATH itself)."""
    if section is not None:
        markdown = markdown.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in re.findall(r"```sh\n(.*?)```", markdown, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip() if not line.lstrip().startswith("#") else ""
            if line and not line.startswith("source "):
                out.append(line)
    return out


def run_in_order(lines: list[str], folder: Path) -> dict[str, subprocess.CompletedProcess]:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    done = {}
    for line in lines:
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=folder, env=env, capture_output=True,
                              text=True, timeout=600)
        if line.startswith("s2mc gpu") and proc.returncode != 0:
            # no GPU here: one line that says so is the documented outcome
            assert "GPU" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        else:
            assert proc.returncode == 0, f"{line!r} failed in {folder}:\n{proc.stderr[-2000:]}"
        done[line] = proc
    return done


def check_complete_report(folder: Path) -> str:
    md = (folder / "report" / "report.md").read_text()
    for heading in ("1. Seed 003", "2. Simulated scaling", "3. The bus-contention model", "4. Real hardware",
                    "5. Reference data"):
        assert f"## {heading}" in md
    assert "No simulator results" not in md and "No native or GPU results" not in md, "a section is empty"
    assert "(No figure:" not in md
    figures = re.findall(r"\]\((\w+\.png)\)", md)
    assert len(figures) >= 8 and all((folder / "report" / f).stat().st_size > 2000 for f in figures)
    return md


def test_the_readme_tour_runs_verbatim_from_an_empty_folder(tmp_path):
    lines = commands((ROOT / "README.md").read_text(), "A five-minute tour")
    assert lines[0] == "s2mc info" and lines[-1].startswith("s2mc report")
    done = run_in_order(lines, tmp_path)
    assert done["s2mc run parallel_sum.s --cores 4"].stdout == "5050\n"
    assert (tmp_path / "big.enc").stat().st_size == 16 << 20           # and openssl decrypted it: cmp passed
    md = check_complete_report(tmp_path)
    assert "Compiled at -O0" in md                                     # the tour ran both levels
    assert sorted(p.name for p in (tmp_path / "results").glob("*.parquet")) == [
        "lock.parquet", "native.parquet", "scaling.parquet", "seed003.parquet", "seed003_model.parquet"]
    assert "cycles 2.53 % and summed stalls 2.19 %" in md              # the model, report section 1b


def stated_outputs(markdown: str) -> list[tuple[list[str], list[str]]]:
    """Every ```sh block in order: its command lines and the lines that the ```text block under it (before
    the next ```sh block) says they print, [] when there is none."""
    out = []
    parts = re.split(r"```sh\n(.*?)```", markdown, flags=re.S)
    for block, after in zip(parts[1::2], parts[2::2]):
        m = re.match(r"[^`]*```text\n(.*?)```", after, re.S)
        out.append((commands(f"```sh\n{block}```"),
                    [ln.rstrip() for ln in m.group(1).splitlines() if ln.strip()] if m else []))
    return out


def test_the_tutorial_runs_verbatim_from_an_empty_folder(tmp_path):
    """Every command of docs/tutorial.md, in order, from an empty folder; every line a `text` block says
    its commands print is among the lines they print (stdout and stderr)."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    blocks = stated_outputs(text)
    assert [c for cmds, _ in blocks for c in cmds] == commands(text) and commands(text)[-1].startswith("s2mc report")
    assert sum(bool(expected) for _, expected in blocks) >= 4
    for cmds, expected in blocks:
        done = run_in_order(cmds, tmp_path)
        printed = {ln.rstrip() for c in cmds for ln in (done[c].stdout + done[c].stderr).splitlines()}
        missing = [ln for ln in expected if ln not in printed]
        assert not missing, f"{cmds} does not print {missing}"
    check_complete_report(tmp_path)


def test_stated_outputs_pairs_a_command_with_the_text_under_it():
    text = "```sh\ns2mc a   # x\n```\n\nIt prints:\n\n```text\n1\n2\n```\n```sh\ns2mc b\n```\n"
    assert stated_outputs(text) == [(["s2mc a"], ["1", "2"]), (["s2mc b"], [])]


def test_commands_ignores_comments_and_activation():
    text = "## T\n```sh\nsource .venv/bin/activate\n# a comment\ns2mc info   # what is built\n```\n## U\n"
    assert commands(text, "T") == ["s2mc info"]


def test_the_tutorials_numbers_are_the_simulators():
    """The tables of docs/tutorial.md, recomputed: the simulator is deterministic, so they must match."""
    from s2mc.compiler import compile as compile_rz
    from s2mc.isa import assemble
    from s2mc.simulator import Machine
    text = (ROOT / "docs" / "tutorial.md").read_text()
    ps = assemble((ROOT / "workloads/asm/parallel_sum.s").read_text())
    lock = assemble((ROOT / "workloads/asm/spin_lock.s").read_text())
    base = Machine(ps, cores=1).run().cycles
    for n in (1, 2, 4, 8):
        r = Machine(ps, cores=n).run()
        assert re.search(rf"^ +{n} +{r.cycles} +{base / r.cycles:.2f} +{r.instructions} +{r.stall_cycles} .* "
                         rf"{100 * r.bus_utilisation:.1f}%$", text, re.M), n
    for a in ("fifo", "fixed", "round_robin"):
        r = Machine(lock, cores=4, arbitration=a).run()
        waits = ", ".join(str(c["bus_wait_cycles"]) for c in r.cores)
        assert re.search(rf"\| {a}[^|]* \| {r.cycles} \| {waits} \|", text), a
    for lat in (1, 2, 4):
        c1, c4 = (Machine(ps, cores=n, mem_latency=lat).run() for n in (1, 4))
        assert f"| {lat} | {c1.cycles} | {c4.cycles} | {c1.cycles / c4.cycles:.2f} |" in text
    fib = (ROOT / "workloads/rz/fib.rz").read_text()
    # each column named as the program prints it: the stall cycles of the total line, the reads + writes
    assert "| fib.rz, 1 core | cycles | instructions | stall cycles | bus accesses (reads + writes) |" in text
    for o in (0, 1):
        r = Machine(compile_rz(fib, opt=o).program).run()
        acc = sum(c["mem_reads"] + c["mem_writes"] for c in r.cores)
        assert f"| `-O{o}` | {r.cycles:,} | {r.instructions:,} | {r.stall_cycles:,} | {acc:,} |" in text
        assert acc == sum(c["mem_accesses"] for c in r.cores)
    # section 8: the store buffers' speedup on store_fill.s and the cost of Peterson's one fence
    fill = assemble((ROOT / "workloads/asm/store_fill.s").read_text())
    sc, tso = (Machine(fill, cores=4, consistency=m).run().cycles for m in ("sc", "tso"))
    assert f"{sc / tso:.2f}x as fast" in text
    from s2mc.experiments import litmus
    pet = [Machine(litmus.load("peterson.s", fences=f).program, cores=2, consistency="tso").run().cycles
           for f in (None, ("f1",))]
    assert f"The fence costs {pet[1] - pet[0]} cycles in run 0" in text


def _run_the_reports_hints(folder: Path, quick: bool = False) -> list[tuple[str, str]]:
    """A results folder with no run of the main sections (one spin-lock measurement of this CPU: a
    folder with no records at all is an error), the report's commands to fill each section, run as
    written from the same folder (with `quick`, a sweep as its --quick form: seed 000's full sweep
    measures for half a minute): (command, the report command after it) pairs."""
    run_in_order(["mkdir results", "s2mc coherence-native --bench locks --threads 1 --acquisitions 10 --reps 1 -q "
                  "--out results/locks.parquet", "s2mc report results --out report"], folder)
    md = (folder / "report" / "report.md").read_text()
    hints = re.findall(r"`(s2mc [^`]+--out results/(\w+)\.parquet)`, then `(s2mc report results --out report)`", md)
    assert len(hints) == 4, md[:3000]                # seed 003, simulated scaling, native, seed 000
    run_in_order([h[0] + (" --quick" if quick and h[0].startswith("s2mc sweep ") else "") for h in hints], folder)
    assert sorted(p.stem for p in (folder / "results").glob("*.parquet")) == sorted(["locks", *(h[1] for h in hints)])
    return [(h[0], h[2]) for h in hints]


def test_the_reports_hints_run_verbatim(tmp_path):
    """An empty results folder: the report names the commands that fill each section; run as written
    (a sweep --quick), from the same folder, each writes its records. The slow test below runs them
    exactly as written and builds the full report."""
    _run_the_reports_hints(tmp_path, quick=True)


@pytest.mark.slow
def test_the_reports_hints_work_verbatim(tmp_path):
    """... and the report of what they wrote has every section and its figures."""
    hints = _run_the_reports_hints(tmp_path)
    run_in_order([hints[0][1]], tmp_path)
    check_complete_report(tmp_path)


def test_the_tutorials_real_hardware_figures_are_measured_ones():
    """Section 7's timings depend on the machine and its load: every figure it quotes is a measurement
    that a section of docs/benchmarks.md it names records with its conditions, and it tells the reader
    how to tell a disturbed line."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    sec = text.split("## 7. Real hardware", 1)[1].split("\n## ", 1)[0]
    bench = (ROOT / "docs" / "benchmarks.md").read_text()
    named = re.findall(r'\("([^"]+)"\)', " ".join(sec.split()))
    assert named, "section 7 names no measurement"
    quoted = []
    for heading in named:
        m = re.search(rf"^#+ {re.escape(heading)}.*\n", bench, re.M)
        assert m, heading
        quoted.append(bench[m.end():].split("\n#", 1)[0])
    for figure in re.findall(r"(\d+\.\d+)x", sec):
        assert any(f"{figure}×" in q or f"{figure}x" in q for q in quoted), figure
    assert "DISTURBED" in sec and "Reading a disturbed row" in sec
