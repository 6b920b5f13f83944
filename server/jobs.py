"""The work behind each API call, as plain functions of checked, JSON-able arguments that return
JSON-able answers. They run in a worker process (s2mc.server.pool), never in the server's own, so
that a runaway program costs one capped worker; the same functions run on a Dask worker.

The answers reuse the library's own objects: `run` returns Result.to_json(), the object
`s2mc run --json` prints; `timeline` the page simulator/timeline.py writes for `--timeline F.html`.
"""
from __future__ import annotations

from s2mc.isa import Program, assemble, disassemble_word
from s2mc.common.errors import S2mcError

#: The languages a request may name: (what the page calls it, the file name a message uses).
LANGUAGES = {"rz": ("Rz", "program.rz"), "asm": ("S2 assembly", "program.s")}


def load(source: str, language: str, opt: int = 1):
    """(Program, Compiled or None) from a program's text; a compile or assembler error names
    program.rz:LINE:COL or program.s:LINE."""
    filename = LANGUAGES[language][1]
    if language == "rz":
        from s2mc.compiler import compile as compile_rz
        # with the line table and the variables' places (compile -g): the same instructions
        compiled = compile_rz(source, opt=opt, filename=filename, debug=True)
        return compiled.program, compiled
    return assemble(source, filename), None


#: The page's field for the cycle limit: the page labels each parameter by its name, "_" as " ".
CYCLE_FIELD = "max_cycles".replace("_", " ")
#: What the page tells a run that reached its cycle limit: its control is that field, not the
#: command line's --max-cycles (s2mc.simulator.CYCLE_ADVICE).
CYCLE_ADVICE = (f"if the program is only long, raise '{CYCLE_FIELD}' under Machine, up to this server's cap "
                "(the field's maximum)")


def simulate(program: Program, params: dict, **options):
    """Machine(program, **params, **options).run(); a run that reaches the cycle limit says so in
    the page's words (its Machine field), not the command line's (--max-cycles)."""
    from s2mc.simulator import Machine, SimFault
    try:
        return Machine(program, **params, **options).run()
    except SimFault as exc:
        if exc.fault["kind"] != "cycle_limit":
            raise
        raise S2mcError(exc.advised(CYCLE_ADVICE)) from None


def run(source: str, language: str, params: dict, opt: int = 1) -> dict:
    program, _ = load(source, language, opt)
    return simulate(program, params).to_json()


def line_of(program: Program):
    """pc -> the source line of that instruction (None where it has none), when the program
    carries debug information (s2mc.isa.debuginfo: an Rz program here); else None."""
    return program.debug.line_at if program.debug is not None else None


def compile(source: str, language: str, opt: int = 1) -> dict:  # noqa: A001
    """The program as the machine sees it: one row per instruction (pc, its words disassembled, the
    source line it came from when known) and, for Rz, the generated assembly text."""
    program, compiled = load(source, language, opt)
    lines = line_of(program)
    rows = [{"pc": pc, "text": disassemble_word(w), "line": lines(pc) if lines else None}
            for pc, w in enumerate(program.code_image)]
    return {"asm": compiled.asm if compiled is not None else source, "instructions": rows,
            "labels": _labels(program), "line_table": lines is not None}


def _labels(program: Program) -> dict[str, int]:
    return {s.name: s.value for s in program.symbols.values() if s.kind == "code"}


def sweep(source: str, language: str, params: dict, cores: list[int], opt: int = 1) -> dict:
    """The program once per core count: the totals the stall-against-cores plot needs, and whether
    the program says its work grows with the cores (`; work: per core`: the page then shows a time
    ratio, not a speedup)."""
    from s2mc.workloads.examples import declares_work_per_core
    program, _ = load(source, language, opt)
    runs = []
    for n in cores:
        try:
            res = simulate(program, {**params, "cores": n})
        except S2mcError as fault:
            raise S2mcError(f"with {n} cores: {fault}") from None
        runs.append({"cores": n, "cycles": res.cycles, "instructions": res.instructions,
                     "stall_cycles": res.stall_cycles,
                     "bus_wait_cycles": sum(c["bus_wait_cycles"] for c in res.cores),
                     "bus_utilisation": round(res.bus_utilisation, 6)})
    return {"runs": runs, "work_per_core": declares_work_per_core(source)}


def timeline(source: str, language: str, params: dict, from_cycle: int = 0, to_cycle: int | None = None,
             opt: int = 1, mark_cycle: int | None = None) -> dict:
    from s2mc.simulator.timeline import check_window, to_html
    check_window(from_cycle, to_cycle)
    program, _ = load(source, language, opt)
    res = simulate(program, params, timeline=True, timeline_window=(from_cycle, to_cycle))
    return {"html": to_html(res.timeline, mark=mark_cycle), "cycles": res.cycles}


def truths() -> dict:
    """The right value of every checked exercise (the lab's quantities), measured now."""
    from .exercises import truths as compute
    return compute()


#: What a worker may be asked to do, by name (a request never names a function itself).
JOBS = {"run": run, "compile": compile, "sweep": sweep, "timeline": timeline, "truths": truths}


def call(name: str, kwargs: dict):
    """Runs one job; the outcome as ("ok", value) or ("error", status, one line). An S2mcError is
    the program's or the request's fault (422); MemoryError the memory cap (422); anything else
    is a fault of ours (500), still one line."""
    try:
        return ("ok", JOBS[name](**kwargs))
    except S2mcError as exc:
        return ("error", 422, _one_line(str(exc)))
    except MemoryError:
        return ("error", 422, "the run needed more memory than this server allows a run")
    except RecursionError:
        return ("error", 422, "the program is nested too deeply to compile")
    except Exception as exc:  # noqa: BLE001 - the server answers with one line and goes on
        return ("error", 500, _one_line(f"internal error: {type(exc).__name__}: {exc}"))


def _one_line(text: str) -> str:
    from s2mc.common.errors import excerpt
    return excerpt(" ".join(text.split()), 500)
