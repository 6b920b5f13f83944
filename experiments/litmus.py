"""`s2mc litmus`: run one litmus program on the simulated machine under many timings, count each
distinct output, and mark each as allowed or not by the independent checker (litmus_model).

A litmus program is S2 assembly with a header line (workloads/litmus/ holds the classic ones):

    ; litmus: cores=2 values=r0,r1 relaxed=0,0 sc=forbidden tso=allowed pso=allowed fence=f0,f1

`cores` it runs on; `values` names the numbers it prints (separated by spaces, then a newline);
`relaxed` is the interesting outcome, and `sc`/`tso`/`pso` what the literature (the Primer,
herd7's models) says of it under each model: the table in docs/consistency.md. `fence` names the
code labels where the program's fenced variant has a `fence`: `sb.s` is a file, `sb_fence.s` is
derived from it (a `fence` at each of those labels; its relaxed outcome forbidden under every model,
as s2mc.common.litmus's fenced variants). A program with a data label `v` and no label `show` of
its own gets the shared epilogue (EPILOGUE) at `show`: core 0 prints the values from `v` on once
every core has arrived.

The timings (docs/consistency.md, "How the runs vary the timing"): run 0 starts every core at
once on the default machine; every later run draws, from a random.Random(seed), a start delay of
0..MAX_DELAY cycles per core (a run of `nop`s in a prologue the runner adds: the machine has no
start-delay parameter), then 0..MAX_ACCESSES loads and 0..MAX_ACCESSES stores of a word outside
the program's data (bus traffic that holds up the other cores' accesses, and stores that keep the
core's own store buffer busy as the program starts, so that its first stores queue), the bus
arbitration, the memory latency, the cache protocol and, where the
machine has store buffers, their size. The same seed gives the same runs.

On a ring or a mesh with directory coherence (`interconnect`) the runs are the same, but the cache
protocol is drawn from the directory's (msi, mesi; run 0: msi) and there is no bus to arbitrate:
the prologue's accesses are network traffic instead.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from s2mc.common.errors import S2mcError
from s2mc.common.values import integer, named
from s2mc.isa import Program
from s2mc.isa.instructions import BY_KEY, BY_MNEMONIC, encode
from s2mc.isa.program import Segment
from s2mc.simulator import ENGINES, SimFault, run as simulate
from s2mc.simulator.params import DIRECTORY_PROTOCOLS, PARAMS, check

from .litmus_model import MODELS, allowed_outputs

#: Where the bundled litmus programs are (inside the installed package too).
FOLDER = Path(__file__).resolve().parent.parent / "workloads" / "litmus"
#: The longest start delay a run draws for a core, in cycles (a few memory accesses at the
#: largest drawn latency: enough to put any core's accesses before or after another's).
MAX_DELAY = 24
#: The most loads, and the most stores, a core's prologue makes before the program starts.
MAX_ACCESSES = 3
#: The memory latencies the runs draw from.
LATENCIES = (1, 2, 3, 4)
#: The cycle limit of one run: a litmus program ends in a few hundred cycles (Peterson spinning: a
#: few thousand).
MAX_CYCLES = 20_000
#: The reference model's memory: litmus programs use a few words (it allocates all of them per run).
REFERENCE_MEM_WORDS = 4096
#: Where a litmus program can run: the engines, and the cycle-stepped reference model.
RUNNERS = (*ENGINES, "reference")
HEADER = re.compile(r"^\s*;\s*litmus:\s*(.*)$", re.MULTILINE)
VERDICTS = ("allowed", "forbidden")
#: What a derived variant's name adds to its program's: `sb.s` -> `sb_fence.s`.
FENCED = "_fence"
#: The code a program jumps (or falls) to at `show` once it has stored what it read from `v` on:
#: every core meets at `sync`, then core 0 prints v[0 .. {n}-1], a space between, a newline at the
#: end ({n}: how many values the header names). Assembled as a code segment of its own after the
#: program's, so that the program's line numbers stay those of its file.
EPILOGUE = """\
:show
  sync
  cid r1
  jt r1 show_done
  mov r4 #0
:show_next
  ld r5 @v r4
  trap r5 #1
  add r4 r4 #1
  eq r6 r4 #{n}
  jt r6 show_last
  mov r7 #32
  trap r7 #2
  jmp show_next
:show_last
  mov r7 #10
  trap r7 #2
:show_done
  trap r0 #0
"""
#: Registers the delay prologue uses (and sets back to 0 before the program starts).
_R_ID, _R_TMP = 31, 30


@dataclass(frozen=True)
class LitmusTest:
    """One litmus program and what its header declares."""
    name: str
    path: str
    program: Program
    cores: int
    values: tuple[str, ...]
    relaxed: str | None                  # the interesting outcome as the program prints it
    expected: dict = field(default_factory=dict)   # model -> "allowed" | "forbidden" (the literature)
    fences: tuple[str, ...] = ()         # the labels where a fence was put (the fenced variant's)

    @property
    def shown(self) -> str:
        """How messages name the file: a bundled program by its name, any other by its path."""
        return Path(self.path).name if Path(self.path).parent == FOLDER else self.path

    def label(self, output: str) -> str:
        """An output with the names of its values: `r0=0 r1=1` for `0 1\\n`."""
        got = output.split()
        if len(got) != len(self.values):
            return output.strip() or "(nothing)"
        return " ".join(f"{n}={v}" for n, v in zip(self.values, got))


def bundled() -> list[Path]:
    """The bundled litmus programs, sorted by name: each file of FOLDER and, where its header names
    fence= labels, its derived fenced variant (`sb_fence.s`: no such file, `load` derives it)."""
    out = []
    for path in FOLDER.glob("*.s"):
        out.append(path)
        if "fence" in _header(path.read_text(encoding="utf-8"), str(path)):
            out.append(path.with_name(f"{path.stem}{FENCED}.s"))
    return sorted(out)


def _names() -> str:
    return ", ".join(p.name for p in bundled())


def _plain_of(path: str) -> Path | None:
    """The program a derived name is the fenced variant of (`sb_fence.s` -> `sb.s`), when there is
    no file of that name and there is one of the plain name."""
    p = Path(path)
    if p.exists() or not p.stem.endswith(FENCED):
        return None
    plain = p.with_name(p.stem[:-len(FENCED)] + p.suffix)
    return plain if plain.is_file() else None


def resolve(path: str) -> str:
    """The file a program argument names: the path itself, or the bundled litmus program of that
    name (`sb.s` or `sb`, a derived `sb_fence.s` too) when there is no such file here, or a bundled
    example (which then is no litmus program)."""
    from s2mc.workloads import examples
    p = Path(path)
    if p.exists() or len(p.parts) != 1:
        return path
    for cand in (FOLDER / p.name, FOLDER / f"{p.name}.s"):
        if cand.is_file() or _plain_of(str(cand)):
            return str(cand)
    return examples.resolve(path)


def _header(text: str, where: str) -> dict:
    m = HEADER.search(text)
    if m is None:
        raise S2mcError(f"{where}: not a litmus program (no '; litmus: cores=N values=a,b' line; "
                        f"the bundled ones: {_names()})")
    fields = {}
    for item in m[1].split():
        key, eq, value = item.partition("=")
        if not eq or not value:
            raise S2mcError(f"{where}: litmus header: {item!r} is not name=value")
        fields[key.lower()] = value
    unknown = set(fields) - {"cores", "values", "relaxed", "fence", *MODELS}
    if unknown:
        raise S2mcError(f"{where}: litmus header: unknown field {sorted(unknown)[0]!r} "
                        f"(cores, values, relaxed, fence, {', '.join(MODELS)})")
    return fields


def load(path: str, fences: tuple[str, ...] | None = None) -> LitmusTest:
    """A litmus program (.s) with its header; S2mcError naming the file when it is not one. A derived
    name (`sb_fence.s`) is its program with a `fence` at each label the header's fence= names;
    `fences` puts them at those labels instead (any of the program's: Peterson's lock with one
    fence, say)."""
    from s2mc.isa.assembler import assemble
    path = resolve(path)
    if not path.endswith(".s"):
        raise S2mcError(f"{path}: a litmus program is S2 assembly (.s)")
    plain = _plain_of(path)
    try:
        text = Path(plain or path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise S2mcError(f"{path}: no such file (the bundled litmus programs: {_names()})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise S2mcError(f"{path}: cannot read it ({exc.__class__.__name__})") from None
    fields = _header(text, path)
    if "cores" not in fields:
        raise S2mcError(f"{path}: litmus header: no cores=N")
    cores = named(f"{path}: litmus header: cores", integer, _int(fields["cores"]), 1, PARAMS["cores"].max)
    values = tuple(v for v in fields.get("values", "").split(",") if v)
    relaxed = None
    if "relaxed" in fields:
        relaxed = " ".join(fields["relaxed"].split(",")) + "\n"
        if len(relaxed.split()) != len(values):
            raise S2mcError(f"{path}: litmus header: relaxed= has {len(relaxed.split())} values, "
                            f"values= names {len(values)}")
    expected = {}
    for model in MODELS:
        if model in fields:
            if fields[model] not in VERDICTS:
                raise S2mcError(f"{path}: litmus header: {model}={fields[model]} is not allowed or forbidden")
            expected[model] = fields[model]
    own = tuple(v for v in fields.get("fence", "").split(",") if v)
    if plain is not None and fences is None:
        if not own:
            raise S2mcError(f"{path}: {plain.name} has no fenced variant (its litmus header names no fence= labels)")
        fences = own
    fences = tuple(fences or ())
    base = Path(plain or path).stem
    if fences and set(fences) == set(own):
        # the fences order every pair of accesses that matters: the relaxed outcome is SC's verdict
        expected, name = dict.fromkeys(expected, "forbidden"), f"{base}{FENCED}"
    elif fences:
        # fences of the caller's choice: no published verdict to compare
        expected, name = {}, f"{base}{FENCED}_{'_'.join(fences)}"
    else:
        name = base
    text = _with_epilogue(fenced(text, fences, path), len(values), path)
    return LitmusTest(name, path, assemble(text, path), cores, values, relaxed, expected, fences)


def _label_line(name: str) -> re.Pattern:
    """A line that holds the label `name` alone (a comment may follow)."""
    return re.compile(rf"^(\s*:{re.escape(name)})[ \t]*(;.*)?$", re.MULTILINE | re.IGNORECASE)


def fenced(text: str, fences: tuple[str, ...], where: str) -> str:
    """S2 assembly with a `fence` after each named label, on the label's own line (so that every
    other line keeps its number); S2mcError naming `where` for a label with no line of its own."""
    for name in fences:
        text, n = _label_line(name).subn(lambda m: f"{m[1]} fence" + (f" {m[2]}" if m[2] else ""), text, count=1)
        if not n:
            raise S2mcError(f"{where}: fence={name}: no line with the label {name!r} alone")
    return text


def _with_epilogue(text: str, values: int, where: str) -> str:
    """The program with EPILOGUE after its code when it has a data label `v` and no `show`."""
    from s2mc.isa.assembler import assemble
    labels = re.compile(r"^\s*:(\w+)", re.MULTILINE)
    defined = {m.lower() for m in labels.findall(text)}
    if "show" in defined or "v" not in defined:
        return text
    if not values:
        raise S2mcError(f"{where}: litmus header: values= names nothing for the epilogue to print from v")
    body = re.split(r"^\s*\.end\b.*$", text, maxsplit=1, flags=re.MULTILINE | re.IGNORECASE)[0]
    body = body if body.endswith("\n") else body + "\n"
    # where the program's code ends, with `show` standing for any address
    top = assemble(body + ".symbol\n  show 0\n.end\n", where).top("code")
    return body + f".code {top}\n" + EPILOGUE.format(n=values) + ".end\n"


def _int(text: str):
    try:
        return int(text)
    except ValueError:
        return text


# -- the timings ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Timing:
    """One run's machine, start delays and prologue accesses."""
    delays: tuple[int, ...]
    loads: tuple[int, ...]
    stores: tuple[int, ...]
    arbitration: str
    mem_latency: int
    cache: str
    store_buffer_entries: int | None = None    # None: the machine's default (or none)
    interconnect: str = "bus"                  # ring, mesh: with coherence directory, no arbiter

    def machine(self) -> dict:
        out = {"mem_latency": self.mem_latency, "cache": self.cache}
        if self.interconnect == "bus":
            out["arbitration"] = self.arbitration
        else:
            out.update(interconnect=self.interconnect, coherence="directory")
        if self.store_buffer_entries is not None:
            out["store_buffer_entries"] = self.store_buffer_entries
        return out


def has_store_buffers() -> bool:
    """Whether this build's machine has the `consistency` parameter (tso and pso runs need it)."""
    return "consistency" in PARAMS


def timings(cores: int, runs: int, seed: int, model: str = "sc", interconnect: str = "bus") -> list[Timing]:
    """The runs' timings: the first starts every core at once on the default machine; the others
    are drawn from random.Random(seed) (module docstring); the store buffers' size only under a
    model that has them; on a ring or a mesh the caches are the directory's."""
    rng = random.Random(seed)
    protocols = PARAMS["cache"].choices if interconnect == "bus" else DIRECTORY_PROTOCOLS
    sizes = None
    if model != "sc" and "store_buffer_entries" in PARAMS:
        p = PARAMS["store_buffer_entries"]
        sizes = range(max(p.min, 1), min(p.max, 8) + 1)
    default = Timing((0,) * cores, (0,) * cores, (0,) * cores, PARAMS["arbitration"].default, PARAMS["mem_latency"].default,
                     PARAMS["cache"].default if interconnect == "bus" else protocols[0], interconnect=interconnect)
    out = [default]
    while len(out) < runs:
        out.append(Timing(tuple(rng.randint(0, MAX_DELAY) for _ in range(cores)),
                          tuple(rng.randint(0, MAX_ACCESSES) for _ in range(cores)),
                          tuple(rng.randint(0, MAX_ACCESSES) for _ in range(cores)),
                          rng.choice(PARAMS["arbitration"].choices), rng.choice(LATENCIES),
                          rng.choice(protocols),
                          rng.choice(sizes) if sizes else None, interconnect))
    return out[:runs]


def delayed(program: Program, delays: tuple[int, ...], loads: tuple[int, ...] | None = None,
            stores: tuple[int, ...] | None = None) -> Program:
    """The program with a prologue, after its code, that holds core k for delays[k] `nop`s, then
    makes loads[k] loads and stores[k] stores (of 0) to the word at the program's data top + k,
    sets its registers back to 0 and jumps to the program's entry (the new entry)."""
    loads, stores = loads or (0,) * len(delays), stores or (0,) * len(delays)
    if not any(delays) and not any(loads) and not any(stores):
        return program
    base, scratch = program.top("code"), program.top("data")
    dispatch = 1 + 2 * len(delays)                # cid, then eq + jt per core
    starts, at = [], base + dispatch
    for d, n, m in zip(delays, loads, stores):
        starts.append(at)
        at += d + n + m + 3                       # the nops, loads and stores, two movs, the jmp
    words = [encode(BY_KEY["cid"], _R_ID)]
    for k, start in enumerate(starts):
        words += [encode(BY_KEY["eq.imm"], _R_TMP, _R_ID, imm=k), encode(BY_KEY["jt"], _R_TMP, imm=start)]
    for k, (d, n, m) in enumerate(zip(delays, loads, stores)):
        words += [encode(BY_KEY["nop"])] * d + [encode(BY_KEY["ld.abs"], _R_TMP, imm=scratch + k)] * n
        words += [encode(BY_KEY["st.abs"], 0, imm=scratch + k)] * m
        words += [encode(BY_KEY["mov.imm"], _R_ID, imm=0), encode(BY_KEY["mov.imm"], _R_TMP, imm=0),
                  encode(BY_KEY["jmp"], imm=program.entry)]
    return Program(segments=[*program.segments, Segment("code", base, words)], symbols=program.symbols,
                   entry=base, stacks=program.stacks)


# -- running ----------------------------------------------------------------------------------

@dataclass
class LitmusResult:
    test: LitmusTest
    model: str
    engine: str
    seed: int
    outcomes: Counter              # output text -> runs that printed it
    allowed: frozenset             # every output the checker allows under the model
    first_cycles: int = 0          # the cycles of run 0 (every core starts at once, default machine)
    interconnect: str = "bus"      # ring, mesh: with coherence directory
    first_cache: str = "none"      # run 0's cache protocol

    @property
    def runs(self) -> int:
        return sum(self.outcomes.values())

    @property
    def forbidden(self) -> list[str]:
        """Outputs the engine printed that the checker forbids: each one is a bug."""
        return sorted(o for o in self.outcomes if o not in self.allowed)

    def to_json(self) -> dict:
        return {"program": self.test.name, "model": self.model, "engine": self.engine, "seed": self.seed,
                **({"interconnect": self.interconnect, "coherence": "directory"} if self.interconnect != "bus" else {}),
                "runs": self.runs, "outcomes": dict(sorted(self.outcomes.items())),
                "allowed": {o: o in self.allowed for o in sorted(self.outcomes)},
                "checker_outcomes": sorted(self.allowed), "first_cycles": self.first_cycles}


def check_model(model: str) -> str:
    if model not in MODELS:
        raise S2mcError(f"litmus: --model {model!r} is not one of {', '.join(MODELS)}")
    if model != "sc" and not has_store_buffers():
        raise S2mcError(f"litmus: --model {model} needs the machine parameter 'consistency' "
                        "(store buffers), which this build does not have")
    return model


def run_litmus(path: str, model: str = "sc", engine: str = "fast", runs: int = 100, seed: int = 0,
               test: LitmusTest | None = None, fences: tuple[str, ...] | None = None,
               interconnect: str = "bus", coherence: str | None = None) -> LitmusResult:
    """Run a litmus program `runs` times under the timings of `seed`; count each output. `fences`:
    labels where a `fence` goes instead (load's). `interconnect` ring or mesh: on that network with
    directory coherence (`coherence`: snoop on the bus, directory off it, when not given)."""
    check_model(model)
    coherence = coherence or ("snoop" if interconnect == "bus" else "directory")
    try:
        check(interconnect=interconnect, coherence=coherence,
              cache=PARAMS["cache"].default if interconnect == "bus" else DIRECTORY_PROTOCOLS[0])
    except S2mcError as exc:
        raise S2mcError(f"litmus: {exc}") from None
    if engine not in RUNNERS:
        raise S2mcError(f"litmus: --engine {engine!r} is not one of {', '.join(RUNNERS)}")
    runs = named("litmus: --runs", integer, runs, 1, 1_000_000)
    seed = named("litmus: --seed", integer, seed, 0, 2**63 - 1)
    test = test or load(path, fences)
    outcomes: Counter = Counter()
    first_cycles = 0
    drawn = timings(test.cores, runs, seed, model, interconnect)
    for i, timing in enumerate(drawn):
        output, cycles = run_once(delayed(test.program, timing.delays, timing.loads, timing.stores), test.cores, engine, model, timing,
                          f"litmus: {test.shown}: run {i} ({describe(timing)})")
        if not output:
            raise S2mcError(f"litmus: {test.shown}: run {i} printed nothing: a litmus program prints its "
                            "outcome (trap #1, #2 or #3)")
        outcomes[output] += 1
        first_cycles = first_cycles or cycles
    return LitmusResult(test, model, engine, seed, outcomes, allowed_outputs(test.program, test.cores, model).outputs,
                        first_cycles, interconnect, drawn[0].cache)


def run_once(program: Program, cores: int, engine: str, model: str, timing: Timing, where: str) -> tuple[str, int]:
    """One run's output and cycles, on an engine or on the cycle-stepped reference model (engine
    `reference`: slow, but the specification the engines follow)."""
    machine = {**timing.machine(), **({"consistency": model} if has_store_buffers() else {})}
    try:
        if engine == "reference":
            from s2mc.simulator.directory import DirectoryMachine
            from s2mc.simulator.reference import RefFault, ReferenceMachine
            machine_class = ReferenceMachine if timing.interconnect == "bus" else DirectoryMachine
            try:
                raw = machine_class(program.code_image, program.data_image, program.entry, cores=cores,
                                    max_cycles=MAX_CYCLES, mem_words=REFERENCE_MEM_WORDS, **machine).run()
            except RefFault as exc:
                raise _stopped(exc.kind, exc.core, exc.pc, exc.kind.replace("_", " ")) from None
            return "".join(text for _, _, text in sorted(raw["output"], key=lambda e: (e[0], e[1]))), raw["cycles"]
        try:
            r = simulate(program, cores=cores, engine=engine, max_cycles=MAX_CYCLES, **machine)
            return r.output, r.cycles
        except SimFault as exc:
            raise _stopped(exc.fault.get("kind"), exc.fault.get("core"), exc.fault.get("pc"), str(exc)) from None
    except S2mcError as exc:
        raise S2mcError(f"{where}: {exc}") from None


def _stopped(kind: str, core: int, pc: int, message: str) -> S2mcError:
    """A run's fault; the cycle limit said in the litmus runner's terms (it has no --max-cycles)."""
    if kind == "cycle_limit":
        return S2mcError(f"still running after {MAX_CYCLES} cycles (core {core} at pc {pc}): "
                         "a litmus program that never ends under this timing")
    return S2mcError(message)


def describe(t: Timing) -> str:
    """A timing in words, for messages."""
    sb = f", {t.store_buffer_entries}-entry store buffers" if t.store_buffer_entries else ""
    where = f"{t.arbitration} arbitration" if t.interconnect == "bus" else f"{t.interconnect} with directory"
    return (f"start delays {','.join(map(str, t.delays))}, prologue loads {','.join(map(str, t.loads))}, "
            f"stores {','.join(map(str, t.stores))}, "
            f"{where}, "
            f"latency {t.mem_latency}, cache {t.cache}{sb}")


def has_fence() -> bool:
    """Whether this build's ISA has the `fence` instruction (the fenced variants need it)."""
    return "fence" in BY_MNEMONIC


# -- the docs table ---------------------------------------------------------------------------

def literature_table() -> str:
    """docs/consistency.md's table: for each bundled test, its relaxed outcome, what the
    literature says of it under each model, and what the checker finds (every outcome it allows)."""
    rows = ["| test | cores | relaxed outcome | " + " | ".join(f"{m.upper()} (literature / checker)" for m in MODELS)
            + " | outcomes the checker allows (SC; TSO; PSO) |",
            "|---|---|---|" + "---|" * len(MODELS) + "---|"]
    for path in bundled():
        t = load(str(path))
        allowed = {m: allowed_outputs(t.program, t.cores, m).outputs for m in MODELS}
        cells = []
        for m in MODELS:
            got = "allowed" if t.relaxed in allowed[m] else "forbidden"
            cells.append(f"{t.expected.get(m, '?')} / {got}")
        sets = "; ".join(_outcomes(allowed[m]) for m in MODELS)
        rows.append(f"| {path.name} | {t.cores} | {t.label(t.relaxed)} | " + " | ".join(cells) + f" | {sets} |")
    return "\n".join(rows) + "\n"


def _outcomes(outputs) -> str:
    """A set of outputs for the table: each as its values with commas, or their count when long."""
    if len(outputs) > 6:
        return f"{len(outputs)} outcomes"
    return " ".join(sorted(o.strip().replace(" ", ",") for o in outputs))


#: The columns of docs/consistency.md's measured table: (model, engine), or (model, engine,
#: interconnect) for the directory machine on a ring or a mesh.
MEASURED = (("sc", "fast"), ("tso", "fast"), ("pso", "fast"), ("tso", "reference"), ("pso", "reference"),
            ("sc", "fast", "mesh"), ("tso", "fast", "mesh"), ("pso", "fast", "mesh"))


def measured_table(runs: int = 500, seed: int = 0, log=lambda msg: None) -> str:
    """docs/consistency.md's "Measured" table: for each bundled test and each (model, engine) of
    MEASURED, how many of `runs` runs (timings of `seed`) printed its relaxed outcome; a run that
    still runs at the cycle limit stops the cell (`never ends in run N`), and an outcome the checker
    forbids is marked FORBIDDEN in the cell."""
    head = [", ".join((m.upper(), *rest)) for m, *rest in MEASURED]
    rows = ["| test | " + " | ".join(head) + " |", "|---|" + "---|" * len(head)]
    for path in bundled():
        test = load(str(path))
        cells = []
        for model, engine, *network in MEASURED:
            log(f"{path.name} {model} {engine} {' '.join(network)}")
            try:
                r = run_litmus(str(path), model, engine, runs, seed, test=test, interconnect=(network or ["bus"])[0])
            except S2mcError as exc:
                m = re.search(r"run (\d+) \(.*still running after", str(exc))
                if not m:
                    raise
                cells.append(f"never ends in run {m[1]}")
                continue
            bad = f" ({len(r.forbidden)} FORBIDDEN)" if r.forbidden else ""
            cells.append(f"{r.outcomes.get(test.relaxed, 0)} / {r.runs}{bad}")
        rows.append(f"| {path.name} | " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    # python -m s2mc.experiments.litmus: docs/consistency.md's literature table; with --measured
    # [RUNS [SEED]]: its measured table (500 runs, seed 0 by default)
    import sys
    if sys.argv[1:2] == ["--measured"]:
        args = [int(a) for a in sys.argv[2:4]]
        print(measured_table(*args, log=lambda msg: print(msg, file=sys.stderr)), end="")
    else:
        print(literature_table(), end="")
