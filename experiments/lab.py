"""The tutorial (docs/tutorial.md) as Jupyter notebooks: a worksheet where every section asks for a
prediction before the measurement, the instructor's answers with the exact numbers, and an
auto-check that runs a student's notebook and says, per section, whether the measured values are
right and how far the predictions were.

    s2mc lab write --to docs/lab        # worksheet.ipynb and answers.ipynb
    s2mc lab check student.ipynb        # run it, mark it: exit 1 unless every exercise is done
    lab.grade({"predict": {...}, "measured": {...}})   # the marking alone, for any front end

A lab is done when every exercise has a prediction and a right measurement: an unchanged worksheet
(every prediction None) fails. A prediction or measurement that is not a finite number (NaN, an
infinity, an integer past a float's range, a list) is refused with one line naming it, and so is a
file that is not a notebook of format 4.
The truth is computed here, fresh, from the simulator (deterministic to the cycle), never stored.
A quantity measured on real hardware (timing) is reported but not marked right or wrong.
"""
from __future__ import annotations

import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from s2mc.common import values
from s2mc.common.errors import S2mcError


# -- what the measurement cells call ------------------------------------------------------------------

def run(program: str, cores: int = 1, fences: tuple[str, ...] = (), **machine):
    """Run a program (a bundled example's name, or a path; .s, .rz or .obj) and return its Result;
    `fences`: labels of a .s program where a `fence` goes (as a litmus program's fence= labels)."""
    from s2mc.isa import load_program
    from s2mc.simulator import Machine
    from s2mc.workloads.examples import resolve
    path = resolve(program)
    if path.endswith(".rz"):
        from s2mc.compiler import compile as compile_rz
        opt = machine.pop("opt", 1)
        prog = compile_rz(Path(path).read_text(encoding="utf-8"), opt=opt, filename=program).program
    elif fences:
        from s2mc.experiments.litmus import fenced
        from s2mc.isa.assembler import assemble
        prog = assemble(fenced(Path(path).read_text(encoding="utf-8"), tuple(fences), program), program)
    else:
        prog = load_program(path)
    return Machine(prog, cores=cores, **machine).run()


#: How many runs a litmus exercise makes (the timings of seed 0, docs/consistency.md).
LITMUS_RUNS = 200
#: SB's relaxed share on this CPU as `s2mc litmus-native --test sb` measured it on our busy 2-CPU
#: development VM (docs/consistency.md, "On this CPU"): the answers' value for a real-hardware count.
NATIVE_SB_TYPICAL = 29.4


def relaxed_runs(program: str, model: str, fences: tuple[str, ...] = (), runs: int = LITMUS_RUNS) -> int:
    """How many of `runs` runs of a litmus program (`s2mc litmus PROGRAM --model MODEL --runs RUNS
    [--fence LABELS]`) printed its relaxed outcome; `fences`: labels where a `fence` goes."""
    from s2mc.experiments import litmus
    r = litmus.run_litmus(program, model, runs=runs, seed=0, fences=tuple(fences) or None)
    return r.outcomes.get(r.test.relaxed, 0)


def litmus_cycles(program: str, model: str, fences: tuple[str, ...] = ()) -> int:
    """The cycles of a litmus program's run 0: every core starts at once, on the default machine."""
    from s2mc.experiments import litmus
    return litmus.run_litmus(program, model, runs=1, fences=tuple(fences) or None).first_cycles


def native_relaxed_percent(test: str = "sb", iterations: int = 100_000) -> float:
    """On this CPU (`s2mc litmus-native --test TEST`, no fences): the percentage of `iterations`
    instances that ended with the test's interesting outcome (a real-hardware count: it varies)."""
    from s2mc.workloads.native import litmus
    r = litmus.run(test, fences=False, iterations=iterations)
    return round(100 * r["seen"] / r["iterations"], 1)


def ceiling(one_core_result, mem_latency: int = 2) -> float:
    """The bus ceiling (Z + L) / L from a 1-core Result (Z = C1 / A - L)."""
    accesses = sum(c["mem_accesses"] for c in one_core_result.cores)
    return (one_core_result.cycles / accesses) / mem_latency


def aes_cycles(cores: int, nbytes: int = 256, opt: int = 1) -> int:
    """Cycles of seed 003's configuration (AES-128-ECB, byte-oriented, interleaved) on our simulator."""
    from s2mc.workloads.cipher_sim.grid import AesGrid, run_grid
    runs, _ = run_grid(AesGrid(cores=(cores,), sizes=(nbytes,), opts=(opt,)), new_run_id=lambda: "lab")
    return runs[0].result.cycles


def native_speedup(nbytes: int = 64 << 20, threads: int = 2) -> float:
    """Native AES-CTR: 1-thread time / `threads`-thread time on this host, each the median of its
    samples (a timing, not exact)."""
    from s2mc.workloads.native.grid import NativeGrid, run_grid
    summaries, _ = run_grid(NativeGrid(threads=(1, threads), sizes=(nbytes,), min_seconds=0.05), run_id="lab")
    return round(summaries[1]["gb_per_s"] / summaries[0]["gb_per_s"], 2)


# -- the sections -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Quantity:
    name: str                     # the key in `predict` and `measured`
    asks: str                     # what the student predicts
    code: str                     # the measurement: sets measured[name]
    exact: bool = True            # False: a timing on this host, reported but not checked
    digits: int = 0               # 0: an integer; n: rounded to n decimals
    typical: float | None = None  # a timing measured on an idle 2-CPU host (docs/benchmarks.md): the answers' value
    typical_on: str = "an idle 2-CPU host's"   # where `typical` was measured, as the answers say it

    def truth(self):
        """The right value, measured now with the same code the worksheet runs (a timing: typical)."""
        if not self.exact:
            return self.typical
        scope: dict = {"lab": sys.modules[__name__], "measured": {}}
        exec(self.code, scope)    # noqa: S102 - our own code, the same text as the worksheet's cell
        return scope["measured"][self.name]


@dataclass(frozen=True)
class Section:
    title: str
    text: str                     # what to read and think about before predicting
    quantities: tuple[Quantity, ...] = field(default_factory=tuple)
    why: str = ""                 # the explanation the answers notebook gives after the numbers


SECTIONS: tuple[Section, ...] = (
    Section("1. One program, more cores",
            "`parallel_sum.s` adds 1..100: core k takes elements k, k+N, ..., then core 0 adds the partial "
            "sums after a barrier. With one core the bus is busy 28% of the time.",
            (Quantity("s1_speedup_4", "speedup of 4 cores over 1 (cycles(1) / cycles(4))",
                      "r1, r4 = lab.run('parallel_sum.s', 1), lab.run('parallel_sum.s', 4)\n"
                      "measured['s1_speedup_4'] = round(r1.cycles / r4.cycles, 2)", digits=2),
             Quantity("s1_speedup_8", "speedup of 8 cores over 1",
                      "r1, r8 = lab.run('parallel_sum.s', 1), lab.run('parallel_sum.s', 8)\n"
                      "measured['s1_speedup_8'] = round(r1.cycles / r8.cycles, 2)", digits=2)),
            "Eight cores are slower than four: the bus is busy nearly all the time, extra cores only queue."),
    Section("3. Arbitration is a policy choice",
            "`spin_lock.s`: four cores each increment a shared counter ten times inside an `xchg` lock. "
            "Which policy finishes first: fifo, fixed (lowest core id wins) or round_robin?",
            tuple(Quantity(f"s3_cycles_{a}", f"cycles with --arbitration {a}",
                           f"measured['s3_cycles_{a}'] = lab.run('spin_lock.s', 4, arbitration='{a}').cycles")
                  for a in ("fifo", "fixed", "round_robin")),
            "fixed wins: core 0 takes the lock back-to-back while the others starve; round_robin hands "
            "the lock over every time, and every hand-over costs spinning."),
    Section("4. A model that predicts the saturation",
            "From one core: Z = C1 / A - L cycles between accesses; the bus can feed at most (Z + L) / L "
            "cores. Predict the ceiling for parallel_sum.s at L = 4, then the measured 4-core speedup.",
            (Quantity("s4_ceiling_L4", "the ceiling (Z + L) / L at L = 4",
                      "measured['s4_ceiling_L4'] = round(lab.ceiling(lab.run('parallel_sum.s', 1, mem_latency=4), 4), 2)",
                      digits=2),
             Quantity("s4_speedup_L4", "the 4-core speedup at L = 4",
                      "a, b = (lab.run('parallel_sum.s', n, mem_latency=4) for n in (1, 4))\n"
                      "measured['s4_speedup_L4'] = round(a.cycles / b.cycles, 2)", digits=2)),
            "The speedup sits just under the ceiling: the bus is full."),
    Section("5. Optimisation levels on a shared bus",
            "`fib.rz` compiled at -O0 (every variable in memory) and -O1 (registers). Predict how many "
            "bus accesses -O1 makes, as a fraction of -O0's.",
            (Quantity("s5_access_ratio", "bus accesses at -O1 / at -O0 (one core)",
                      "acc = [sum(c['mem_accesses'] for c in lab.run('fib.rz', 1, opt=o).cores) for o in (1, 0)]\n"
                      "measured['s5_access_ratio'] = round(acc[0] / acc[1], 2)", digits=2),),
            "The optimiser removes loads and stores: on a shared bus it is also a contention reducer."),
    Section("6. AES: reproducing seed 003",
            "Seed 003 measured 266,173 cycles for 256 bytes on one core and 177,448 on two. Predict our "
            "-O1 cycles as a fraction of theirs, and our 2-core speedup.",
            (Quantity("s6_ratio_1core", "our -O1 cycles / the paper's, 256 bytes, one core",
                      "measured['s6_ratio_1core'] = round(lab.aes_cycles(1) / 266173, 2)", digits=2),
             Quantity("s6_speedup_2", "our 2-core speedup at 256 bytes",
                      "measured['s6_speedup_2'] = round(lab.aes_cycles(1) / lab.aes_cycles(2), 2)", digits=2)),
            "Our -O1 code keeps variables in registers, so it makes far fewer bus accesses; at -O0 ours "
            "is 0.92x theirs. The speedup stops below 2x in both: the bus ceiling (Z + L) / L."),
    Section("6b. Private caches: false sharing",
            "`false_sharing.s`: each core increments its own counter 100 times; the counters are "
            "neighbouring words, so no core reads another's until core 0 adds them up at the end. Give "
            "every core a MESI cache (docs/caches-lab.md). Predict the false-sharing misses, summed over "
            "2 cores, with 8-word lines, then with 1-word lines.",
            tuple(Quantity(f"s6b_false_sharing_w{w}", f"false-sharing misses, 2 cores, MESI, {w}-word lines",
                           f"r = lab.run('false_sharing.s', 2, cache='mesi', line_words={w})\n"
                           f"measured['s6b_false_sharing_w{w}'] = sum(c['false_sharing_misses'] for c in r.cores)")
                  for w in (8, 1)),
            "With 8-word lines both counters live in one line: every store needs the line in M and "
            "takes it from the other core, about one miss per increment after the first. All but one "
            "are false sharing: the copy serves a core only its own counter. The exception is core 0's "
            "last miss, whose copy serves it core 1's counter when it adds them up: true sharing. With "
            "1-word lines each counter has a line of its own: nothing is shared, so no coherence misses."),
    Section("7. Real hardware",
            "Native AES-CTR with OpenMP on this machine. Predict the speedup of 2 threads over 1 on a "
            "64 MiB buffer (each core has its own caches; there is no shared bus).",
            (Quantity("s7_native_speedup", "2-thread speedup at 64 MiB",
                      "measured['s7_native_speedup'] = lab.native_speedup(64 << 20, 2)", exact=False, digits=2,
                      typical=1.91),),
            "A timing: it depends on the host and on its load. Our 2-vCPU development VM, idle, gave 1.91x "
            "(docs/benchmarks.md, \"All threads (2) — rerun on a quiet machine\"); shared with other engineers' "
            "builds, two threads ran slower than one (\"Native timings under load\"). `s2mc native --threads 1,2 "
            "--bytes 64M` ends a line in DISTURBED when the machine's load changed it. Small buffers scale "
            "worse."),
    Section("8. Memory consistency: store buffers",
            "With `consistency='tso'` every core has a FIFO store buffer (docs/consistency.md): a store waits "
            "in it while the core goes on, and a later load of another address may overtake it. `s2mc litmus` "
            f"runs a litmus program {LITMUS_RUNS} times under varied timings (seed 0) and counts its outputs. "
            "SB is x=1; r0=y || y=1; r1=x. Peterson's lock (`peterson.s`) prints count=1 when both cores "
            "were in its critical section at once; its label f1 is after turn=j, before the waiting loop. "
            "`store_fill.s` fills an array on 4 cores, one store and no load per word; its label f0 is "
            "after the store. Last, SB on this CPU: x86 is TSO.",
            (Quantity("s8_sb_sc", f"runs of {LITMUS_RUNS} in which SB prints r0=0 r1=0 under sc",
                      "measured['s8_sb_sc'] = lab.relaxed_runs('sb.s', 'sc')"),
             Quantity("s8_sb_tso", f"runs of {LITMUS_RUNS} in which SB prints r0=0 r1=0 under tso",
                      "measured['s8_sb_tso'] = lab.relaxed_runs('sb.s', 'tso')"),
             Quantity("s8_peterson_tso", f"runs of {LITMUS_RUNS} in which both cores enter Peterson's critical "
                      "section (count=1) under tso",
                      "measured['s8_peterson_tso'] = lab.relaxed_runs('peterson.s', 'tso')"),
             Quantity("s8_peterson_fence_tso", "the same with one fence, at f1",
                      "measured['s8_peterson_fence_tso'] = lab.relaxed_runs('peterson.s', 'tso', fences=('f1',))"),
             Quantity("s8_fence_cost", "cycles that fence adds to Peterson's lock under tso, both cores "
                      "starting at once (run 0)",
                      "measured['s8_fence_cost'] = (lab.litmus_cycles('peterson.s', 'tso', fences=('f1',))\n"
                      "                             - lab.litmus_cycles('peterson.s', 'tso'))"),
             Quantity("s8_buffer_speedup", "store_fill.s on 4 cores: cycles under sc / cycles under tso",
                      "sc, tso = (lab.run('store_fill.s', 4, consistency=m).cycles for m in ('sc', 'tso'))\n"
                      "measured['s8_buffer_speedup'] = round(sc / tso, 2)", digits=2),
             Quantity("s8_fenced_speedup", "the same with a fence after every store (at f0): cycles under sc "
                      "/ cycles under tso",
                      "sc = lab.run('store_fill.s', 4, consistency='sc').cycles\n"
                      "tso = lab.run('store_fill.s', 4, fences=('f0',), consistency='tso').cycles\n"
                      "measured['s8_fenced_speedup'] = round(sc / tso, 2)", digits=2),
             Quantity("s8_native_sb", "SB on this CPU (`s2mc litmus-native --test sb`): the percentage of "
                      "100,000 instances that end r0=0 r1=0",
                      "measured['s8_native_sb'] = lab.native_relaxed_percent('sb', 100_000)", exact=False,
                      digits=1, typical=NATIVE_SB_TYPICAL, typical_on="a busy 2-CPU host's")),
            "Under sc the machine performs every access in program order, so SB can never print r0=0 r1=0; "
            "under tso both stores can still sit in their buffers while the loads read memory. Peterson's "
            "lock is SB in disguise: each core's flag and turn wait in its buffer while it reads the other's "
            "flag. One fence after turn=j empties the buffer before the first read, which is all TSO needs "
            "(its buffers are FIFO; under pso the release may still pass the critical section's store: "
            "`s2mc litmus peterson_fence.s --model pso` has the three fences that fix it there). The fence "
            "costs its own cycle and the cycles its core waits for its buffer to drain. A store-heavy loop gains "
            "from the buffers only while the bus has time to drain them; a fence after every store makes "
            "each core wait again, as under sc, and pays the fence's own cycle besides. The CPU you are on "
            "shows SB's relaxed outcome too: x86 has store buffers (and never shows the outcomes TSO "
            "forbids: `s2mc litmus-native`)."),
)


def quantities() -> list[tuple[Section, Quantity]]:
    return [(s, q) for s in SECTIONS for q in s.quantities]


# -- notebooks ----------------------------------------------------------------------------------------

HEADER = ("# {title}\n\nThe lab of docs/tutorial.md, predict then measure. In every section first write "
          "your prediction in the `predict[...]` cell (replace `None` with a number), then run the "
          "measurement cell. The simulator is deterministic: your measured numbers must be the "
          "instructor's exactly (section 7 and the last question of section 8 measure your machine). A lecturer checks a notebook "
          "with `s2mc lab check NOTEBOOK.ipynb`.")


def notebook(answers: bool = False, truths: dict | None = None):
    """The worksheet, or with `answers` the instructor's copy: predictions filled with the right
    values and each section's numbers and explanation (`truths`: name -> value, default fresh)."""
    import nbformat
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
    if answers and truths is None:
        truths = {q.name: q.truth() for _, q in quantities()}
    title = "s2mc lab: instructor's answers" if answers else "s2mc lab: why does a shared bus stop helping?"
    cells = [new_markdown_cell(HEADER.format(title=title)),
             new_code_cell("from s2mc.experiments import lab\npredict, measured = {}, {}")]
    for sec in SECTIONS:
        cells.append(new_markdown_cell(f"## {sec.title}\n\n{sec.text}"))
        for q in sec.quantities:
            value = truths[q.name] if answers else None
            cells.append(new_code_cell(f"# Predict: {q.asks}\npredict[{q.name!r}] = {value!r}"))
            cells.append(new_code_cell(f"{q.code}\nmeasured[{q.name!r}]"))
        if answers:
            lines = [f"- {q.asks}: **{truths[q.name]}**" + ("" if q.exact else f" ({q.typical_on}: a "
                     "timing, yours differs)") for q in sec.quantities]
            cells.append(new_markdown_cell("**Answer.**\n\n" + "\n".join(lines) + f"\n\n{sec.why}"))
    nb = new_notebook(cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                             "language": "python"}})
    nbformat.validate(nb)
    return nb


def write(folder: str | Path) -> list[Path]:
    """worksheet.ipynb and answers.ipynb (unexecuted) into `folder`."""
    import nbformat
    from s2mc.common.outputs import one_unit, write_output
    out = []
    with one_unit():   # the worksheet and its answers: both or neither
        for name, answers in (("worksheet.ipynb", False), ("answers.ipynb", True)):
            path = Path(folder) / name
            write_output(path, nbformat.writes(notebook(answers)) + "\n", what="notebook")
            out.append(path)
    return out


# -- the check ----------------------------------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")   # the colour codes of IPython's tracebacks
_DUMP = ("import json as _json\nprint('S2MC-LAB ' + _json.dumps({'predict': globals().get('predict', {}), "
         "'measured': globals().get('measured', {})}, default=str))")


def _read(path: Path):
    """A notebook of format 4 (what `s2mc lab write` writes) that nbformat's schema accepts, or one
    S2mcError naming the file and what is wrong with it."""
    import nbformat
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, ValueError) as exc:      # json's errors and UnicodeDecodeError are ValueErrors
        raise S2mcError(f"{path}: not a notebook ({_first_line(exc)})") from None
    if not isinstance(data, dict):
        raise S2mcError(f"{path}: not a notebook (a JSON {type(data).__name__}, not an object)")
    version = data.get("nbformat")
    if version != 4 or isinstance(version, bool):
        raise S2mcError(f"{path}: notebook format {values.plain(version)}; the lab's notebooks are format 4 "
                        "(save it from a current Jupyter)")
    # the schema's own errors say which part is wrong (data.cells must be array); nbformat.validate
    # would stumble over such a file with a TypeError or KeyError first
    from nbformat.validator import get_validator
    minor = data.get("nbformat_minor")
    known = isinstance(minor, int) and not isinstance(minor, bool)
    schema = (get_validator(version=4, version_minor=minor) if known else None) or get_validator(version=4)
    problems = list(schema.iter_errors(data))
    if problems:
        raise S2mcError(f"{path}: not a valid notebook ({_first_line(problems[0].message)})")
    try:
        return nbformat.reads(text, as_version=4)
    except (nbformat.ValidationError, ValueError, TypeError, AttributeError, KeyError) as exc:
        raise S2mcError(f"{path}: not a valid notebook ({_first_line(exc)})") from None


def _first_line(why) -> str:
    """The first line of a message (or an exception's), cut: what a one-line error may quote of it."""
    return (str(why).strip().splitlines() or [type(why).__name__])[0][:200]


def execute(path: str | Path, timeout: int = 600) -> dict:
    """Run a notebook top to bottom (nbclient, in its folder) and return its predict/measured dicts.
    A cell that fails is one S2mcError naming the cell."""
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError
    path = Path(path)
    nb = _read(path)
    nb.cells.append(nbformat.v4.new_code_cell(_DUMP))
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent.resolve())}})
    # The kernel's own stderr (warnings of the Jupyter machinery, such as its TCP ports) goes to a file:
    # the student's errors come back as cell outputs, and only the last line of it is shown if the
    # kernel dies.
    with tempfile.TemporaryFile("w+") as kernel_err:
        try:
            client.execute(stderr=kernel_err)
        except CellExecutionError as exc:
            text = _ANSI.sub("", str(exc))
            last = [line for line in text.splitlines() if line.strip()][-1]
            raise S2mcError(f"{path}: a cell failed: {last[:200]}") from None
        except (RuntimeError, TimeoutError) as exc:     # the kernel died or did not start
            kernel_err.seek(0)
            tail = [line for line in _ANSI.sub("", kernel_err.read()).splitlines() if line.strip()][-1:]
            raise S2mcError(f"{path}: the notebook's kernel failed: {_ANSI.sub('', str(exc))[:200]}"
                            + (f" ({tail[0][:200]})" if tail else "")) from None
    for output in nb.cells[-1].get("outputs", []):
        for line in output.get("text", "").splitlines():
            if line.startswith("S2MC-LAB "):
                return json.loads(line[len("S2MC-LAB "):])
    raise S2mcError(f"{path}: the notebook did not define predict and measured")


@dataclass
class Mark:
    section: str
    name: str
    expected: float
    measured: float | None
    right: bool | None            # None: a timing, not checked
    predicted: float | None
    error: float | None           # |predicted - expected| / |expected|

    @property
    def verdict(self) -> str:
        """right | WRONG | missing (no measurement) | timing (not checked)."""
        if self.right is None:
            return "timing"
        return "right" if self.right else "WRONG" if self.measured is not None else "missing"

    @property
    def done(self) -> bool:
        """A finished exercise: a prediction made, and the measurement right (a timing: made)."""
        return self.predicted is not None and self.right is not False and self.measured is not None


def exercises() -> list[dict]:
    """The lab's exercises, one per quantity to predict and measure, in order: what a front end (the
    notebook, a browser lab) shows and runs. Each: name, section, asks, code (the measurement: sets
    measured[name]), exact (False: a timing, not marked), digits (the precision it is marked to)."""
    return [{"name": q.name, "section": sec.title, "asks": q.asks, "code": q.code, "exact": q.exact,
             "digits": q.digits} for sec, q in quantities()]


def grade(answers: dict, truths: dict | None = None) -> list[Mark]:
    """Mark a student's answers, {"predict": {name: number}, "measured": {name: number}} (a missing or
    None prediction or measurement: not done), against the right values (`truths`: name -> value,
    default measured now). One Mark per exercise, in exercises() order; passed() says whether the
    whole lab is done."""
    given = {}
    for key in ("predict", "measured"):
        given[key] = answers.get(key) or {}
        if not isinstance(given[key], dict):
            raise S2mcError(f"{key} must be a dict of {{name: number}}, not {type(given[key]).__name__}")
    predict, measured = given["predict"], given["measured"]
    marks = []
    for sec, q in quantities():
        expected = truths[q.name] if truths and q.name in truths else q.truth()
        m = answer(measured.get(q.name), f"measured[{q.name!r}]")
        p = answer(predict.get(q.name), f"predict[{q.name!r}]")
        right = None if not q.exact else (m is not None and abs(m - expected) <= 0.5 * 10 ** -q.digits)
        ref = expected if q.exact or m is None else m
        error = None if p is None else abs(p - ref) / abs(ref) if ref else abs(p - ref)
        marks.append(Mark(sec.title, q.name, expected, m, right, p, error))
    return marks


def passed(marks: list[Mark]) -> bool:
    """Every exercise done: each prediction made and each measurement present and right."""
    return bool(marks) and all(k.done for k in marks)


def check(path: str | Path, timeout: int = 600) -> list[Mark]:
    """Execute a student's notebook and mark every quantity against a fresh measurement here."""
    return grade(execute(path, timeout))


def answer(value, where: str) -> float | None:
    """A prediction or a measurement as a finite float, None when not given (None: an unchanged
    worksheet); S2mcError naming `where` for anything else (NaN, an infinity, an integer past a
    float's range, a bool, a list). Text is read as a number: the notebook's last cell writes
    what JSON cannot hold (a numpy number) as text."""
    if value is None:
        return None
    if isinstance(value, str):
        x = values.parse_number(value)
        return values.named(where, values.number, value if x is None else x, shown=values.plain(value))
    return values.named(where, values.number, value)


def format_marks(marks: list[Mark]) -> str:
    head = ["section", "quantity", "expected", "measured", "", "predicted", "off by"]
    rows = []
    for k in marks:
        rows.append([k.section.split(".")[0], k.name, f"{k.expected:g}",
                     "-" if k.measured is None else f"{k.measured:g}", k.verdict,
                     "no prediction" if k.predicted is None else f"{k.predicted:g}",
                     "-" if k.error is None else f"{k.error:.0%}"])
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    right = sum(k.right is True for k in marks)
    checked = sum(k.right is not None for k in marks)
    guessed = [k.error for k in marks if k.error is not None]
    lines.append(f"{right}/{checked} measurements right; {len(guessed)}/{len(marks)} predictions made"
                 + (f", median {sorted(guessed)[len(guessed) // 2]:.0%} off" if guessed else ""))
    undone = [k for k in marks if not k.done]
    if undone:
        no_pred = [k.name for k in undone if k.predicted is None]
        bad = [k.name for k in undone if k.predicted is not None]
        why = []
        if no_pred:
            why.append(f"no prediction for {', '.join(no_pred)} (replace None in its predict cell)")
        if bad:
            why.append(f"measurement wrong or missing for {', '.join(bad)}")
        lines.append(f"NOT DONE: {len(undone)} of {len(marks)} exercises unfinished: " + "; ".join(why) + ".")
    else:
        lines.append(f"DONE: all {len(marks)} exercises predicted and measured.")
    return "\n".join(lines)
