"""`s2mc litmus`: run a litmus program under many timings and count its outcomes, each checked
against an independent enumeration of the memory model (s2mc.experiments.litmus).

    s2mc litmus sb.s --model tso --runs 500          # a bundled test, by name
    s2mc litmus my_test.s --engine systemc --json
    s2mc litmus peterson.s --model tso --fence f1    # one fence, at the label f1
    s2mc litmus sb.s --model tso --interconnect mesh --coherence directory
"""
from __future__ import annotations

import json

import click

from .options import Choices, Integer, machine_option

MAX_RUNS = 1_000_000


def _models():
    from s2mc.experiments.litmus_model import MODELS
    return MODELS


def _coherences():
    from s2mc.simulator.params import PARAMS
    return PARAMS["coherence"].choices


def _engines():
    from s2mc.experiments.litmus import RUNNERS
    return RUNNERS


@click.command("litmus")
@click.argument("file")
@click.option("--model", type=Choices(_models, many=False), default="sc", show_default=True,
              help="Memory model of the simulated machine (tso and pso give each core a store buffer).")
@click.option("--engine", type=Choices(_engines, many=False), default="fast", show_default=True,
              help="Simulator engine, or the cycle-stepped reference model (slower; the engines' specification).")
@click.option("--runs", type=Integer(1, MAX_RUNS), default=500, show_default=True,
              help="Runs, each under its own timing (start delays, bus traffic, arbitration, latency, caches).")
@click.option("--seed", type=Integer(0, 2**63 - 1), default=0, show_default=True,
              help="Seed of the timings drawn after the first run (the same seed, the same runs).")
@click.option("--fence", "fences", default=None, metavar="LABELS",
              help="Comma-separated code labels: a `fence` at each (a label alone on its line), instead "
                   "of the program's own (NAME_fence.s puts one at every label its fence= names).")
@machine_option("interconnect", help="ring and mesh run the directory machine (caches msi or mesi).")
@click.option("--coherence", type=Choices(_coherences, many=False), default=None,
              help="How the caches stay coherent: snoop on the bus, directory on a ring or a mesh "
                   "(the default for each).")
@click.option("--json", "as_json", is_flag=True, help="Print the outcomes as JSON.")
def litmus_cmd(file, model, engine, runs, seed, fences, interconnect, coherence, as_json):
    """Run a litmus program (a bundled one by name: sb.s, mp.s, ...) under many timings; print each
    distinct output, how often it appeared and whether the model allows it (docs/consistency.md).
    An output the checker forbids is a bug in the engine: the command then fails."""
    from s2mc.common.errors import S2mcError
    from s2mc.common.text import text_table
    from s2mc.experiments.litmus import run_litmus

    labels = None if fences is None else tuple(f.strip() for f in fences.split(","))
    if labels is not None and not all(labels):
        raise S2mcError(f"litmus: --fence {fences!r}: give code labels separated by commas")
    r = run_litmus(file, model, engine, runs, seed, fences=labels, interconnect=interconnect, coherence=coherence)
    if as_json:
        click.echo(json.dumps(r.to_json(), indent=1))
    else:
        t = r.test
        on = "the reference model" if engine == "reference" else f"the {engine} engine"
        if r.interconnect != "bus":
            on += f", {r.interconnect} with directory coherence"
        click.echo(f"{t.name} under {model.upper()}: {r.runs} runs on {on} (seed {seed}), "
                   f"{len(r.outcomes)} distinct output{'s' * (len(r.outcomes) != 1)}")
        rows = [[t.label(o), str(n), f"{100 * n / r.runs:.1f}%", "allowed" if o in r.allowed else "FORBIDDEN"]
                for o, n in sorted(r.outcomes.items(), key=lambda kv: (-kv[1], kv[0]))]
        click.echo(text_table(["outcome", "runs", "share", f"{model.upper()} checker"], rows))
        unseen = sorted(set(r.allowed) - set(r.outcomes))
        if unseen:
            click.echo(f"Allowed by the checker, not seen: {', '.join(t.label(o) for o in unseen)}")
        if t.relaxed is not None:
            said = t.expected.get(model)
            click.echo(f"Relaxed outcome {t.label(t.relaxed)}: seen in {r.outcomes.get(t.relaxed, 0)} runs; "
                       f"the checker {'allows' if t.relaxed in r.allowed else 'forbids'} it"
                       + (f", the literature says {said}" if said else ""))
        machine = ("the default machine" if r.interconnect == "bus"
                   else f"the default {r.interconnect}, cache {r.first_cache}")
        click.echo(f"Run 0 (every core starting at once on {machine}): {r.first_cycles} cycles")
    if r.forbidden:
        raise S2mcError(f"litmus: {len(r.forbidden)} output(s) the {model} checker forbids: "
                        f"{'; '.join(r.test.label(o) for o in r.forbidden)} (a bug in the {engine} engine)")


COMMANDS = [litmus_cmd]
