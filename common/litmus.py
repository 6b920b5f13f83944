"""The classic litmus tests, declared once: their code, what each observes, the outcome that makes
it interesting and whether the memory models allow that outcome. `s2mc litmus-native` runs them on
this CPU (s2mc.workloads.native.litmus), and the report's litmus table reads its verdicts from here.

    from s2mc.common import litmus
    t = litmus.TESTS["sb"]
    t.code(fences=True)         # (('x=1', 'mfence', 'r0=y'), ('y=1', 'mfence', 'r1=x'))
    t.interesting                # 'r0=0 r1=0'
    t.allowed("tso", fences=False)   # True: x86's store buffers let both loads pass the stores

An operation is `x=1` (store a constant), `r0=y` (load into a register) or `mfence` (a full fence).
The fenced variant puts a fence between every two operations of a thread (herd's SB+mfences,
MP+mfences, ...). An outcome is the observed registers and final locations as text,
`"r0=0 r1=0"`, the same way the simulated litmus programs print theirs. Registers and locations start
at 0. The verdicts are the published ones (Sorin, Hill and Wood, "A Primer on Memory Consistency
and Cache Coherence", 2nd ed., ch. 3-4; Sewell et al., "x86-TSO", CACM 2010; the SPARC V8 manual,
Appendix K, for PSO), as herd7 gives them for sc.cat and x86tso.cat.
"""
from __future__ import annotations

from dataclasses import dataclass

from s2mc.common.errors import S2mcError

#: The memory models the verdicts cover: sequential consistency, total store order (x86-TSO), partial
#: store order (SPARC PSO). A real x86 CPU is TSO.
MODELS: tuple[str, ...] = ("sc", "tso", "pso")
#: The model of the CPUs s2mc's native code runs on (x86-64).
X86_MODEL = "tso"
#: The full fence's operation name.
FENCE = "mfence"
#: The two variants of every test, by name: without fences and with a fence between every two operations.
FENCINGS: tuple[str, ...] = ("plain", FENCE)


@dataclass(frozen=True)
class LitmusTest:
    name: str
    title: str
    threads: tuple[tuple[str, ...], ...]     # each thread's operations, without fences
    observed: tuple[str, ...]                # registers, then final locations, in outcome order
    interesting: str                         # the outcome the test is about
    allowed_plain: frozenset[str]            # the models that allow `interesting` without fences
    # with a fence between every two operations no model allows it: every test here is then SC

    def code(self, fences: bool = False) -> tuple[tuple[str, ...], ...]:
        """Each thread's operations; with fences, a full fence between every two of them."""
        if not fences:
            return self.threads
        out = []
        for ops in self.threads:
            seq: list[str] = []
            for op in ops:
                if seq:
                    seq.append(FENCE)
                seq.append(op)
            out.append(tuple(seq))
        return tuple(out)

    def text(self, fences: bool = False) -> str:
        """The code as one line: `x=1; r0=y || y=1; r1=x`."""
        return " || ".join("; ".join(ops) for ops in self.code(fences))

    def allowed(self, model: str, fences: bool = False) -> bool:
        """Whether `model` allows the interesting outcome."""
        if model not in MODELS:
            raise S2mcError(f"unknown memory model {model!r} (known: {', '.join(MODELS)})")
        return not fences and model in self.allowed_plain


_TESTS = (
    LitmusTest("sb", "store buffering", (("x=1", "r0=y"), ("y=1", "r1=x")), ("r0", "r1"), "r0=0 r1=0",
               frozenset({"tso", "pso"})),
    LitmusTest("mp", "message passing", (("x=1", "y=1"), ("r0=y", "r1=x")), ("r0", "r1"), "r0=1 r1=0",
               frozenset({"pso"})),
    LitmusTest("lb", "load buffering", (("r0=x", "y=1"), ("r1=y", "x=1")), ("r0", "r1"), "r0=1 r1=1",
               frozenset()),
    LitmusTest("2+2w", "two stores each, opposite order", (("x=1", "y=2"), ("y=1", "x=2")), ("x", "y"), "x=1 y=1",
               frozenset({"pso"})),
    LitmusTest("iriw", "independent reads of independent writes", (("x=1",), ("y=1",), ("r0=x", "r1=y"),
                                                                   ("r2=y", "r3=x")),
               ("r0", "r1", "r2", "r3"), "r0=1 r1=0 r2=1 r3=0", frozenset()),
)
#: Every test by name, in the order tables list them.
TESTS: dict[str, LitmusTest] = {t.name: t for t in _TESTS}


def test(name: str) -> LitmusTest:
    """The test called `name`; S2mcError naming the known ones otherwise."""
    try:
        return TESTS[name]
    except KeyError:
        raise S2mcError(f"unknown litmus test {name!r} (known: {', '.join(TESTS)})") from None


def label(name: str, fences: bool) -> str:
    """A run's name as herd writes it: `sb`, `sb+mfences`."""
    return f"{name}+{FENCE}s" if fences else name


def verdict(runs: list[tuple[str, bool, int, int]], model: str = X86_MODEL, unit: str = "instances") -> str:
    """What counts say about `model`, from the counts alone: `runs` holds (test, fences, how many
    instances ended with its interesting outcome, instances). Says how many of the outcomes the
    model forbids appeared (naming them) and how often each allowed one did; tests not in TESTS are
    left out. `unit` names what was counted (a simulated machine's: `runs`)."""
    forbidden, broken, allowed = 0, [], []
    for name, fences, seen, total in runs:
        t = TESTS.get(name)
        if t is None or not total:
            continue
        if t.allowed(model, fences):
            times = "once" if seen == 1 else f"{seen} times"
            allowed.append(f"{label(name, fences)}'s {t.interesting} appeared {times} in {total} {unit} "
                           f"({_percent(seen, total)} %)")
        else:
            forbidden += 1
            if seen:
                broken.append(f"{label(name, fences)}'s {t.interesting} ({seen} of {total})")
    parts = []
    if forbidden and not broken:
        parts.append(f"none of the {forbidden} outcomes {model.upper()} forbids appeared" if forbidden > 1
                     else f"the outcome {model.upper()} forbids did not appear")
    elif broken:
        parts.append(f"{len(broken)} of the {forbidden} outcomes {model.upper()} forbids appeared: " + ", ".join(broken))
    return "; ".join(parts + allowed)


def _percent(part: int, whole: int) -> str:
    """100 part / whole with 3 significant digits, in plain notation (0.004, 33.3, 100)."""
    x = 100 * part / whole
    return "0" if x == 0 else f"{x:.3g}" if x >= 1e-3 else f"{x:.6f}".rstrip("0")
