"""The S2 multicore simulator (docs/timing-model.md): load a Program, put inputs in memory, run, read results.

    from s2mc.simulator import Machine, run
    m = Machine(program, cores=4)
    m.write("data", [1, 2, 3])
    result = m.run()            # raises SimFault on a fault or when max_cycles is reached
    m.read("out", 3)
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from s2mc.isa import Program, disassemble_word
from s2mc.common.errors import S2mcError
from s2mc.isa.instructions import ADS_MAX
from s2mc.isa.program import Stacks, stacks_problem

from .counters import core_counters
from .params import DEFAULTS, PARAMS, check
from .trace import Fanout, TraceFile, TraceList, format_trace

# Shorthands derived from the one declaration of the machine parameters (simulator/params.toml).
ARBITRATIONS = PARAMS["arbitration"].choices
ENGINES = PARAMS["engine"].choices
MAX_CORES = PARAMS["cores"].max
MAX_MEM_WORDS = PARAMS["mem_words"].max
MAX_LATENCY = PARAMS["mem_latency"].max
DEFAULT_MAX_CYCLES = PARAMS["max_cycles"].default
DEFAULT_MEM_WORDS = PARAMS["mem_words"].default

# The cache parameters: in a run's description only when caches are on, so that a cacheless run is
# described exactly as before they existed.
CACHE_PARAMS = ("cache", "cache_lines", "cache_ways", "line_words", "cache_hit_latency")
# The store buffers' parameters: in a run's description only with store buffers (tso, pso), so that
# an sc run is described exactly as before they existed.
BUFFER_PARAMS = ("consistency", "store_buffer_entries")
# The network's parameters: in a run's description only off the bus, so that a bus run is described
# exactly as before they existed.
NETWORK_PARAMS = ("interconnect", "coherence", "link_latency", "router_latency", "flit_words")
#: The engines that simulate a ring or a mesh with directory coherence so far (besides the reference
#: model, docs/timing-model.md, "Directory coherence over a network").
NETWORK_ENGINES: tuple[str, ...] = ("fast",)

# Per-core counters of a run without caches, in the order the CLI and the records print them
# (declared in simulator/counters.toml). A core's `cycles` is its finish cycle (also named
# `finish_cycle`); `idle_cycles` the cycles from then to the end of the run (total cycles - finish),
# in which it is neither working nor stalled nor waiting at a barrier.
CORE_COUNTERS = core_counters(cached=False)
#: The per-core counters only runs with caches report (after CORE_COUNTERS).
CACHE_COUNTERS = tuple(k for k in core_counters(cached=True) if k not in CORE_COUNTERS)


class SimFault(S2mcError):
    """A simulated fault: names the core, PC, cycle and the disassembled instruction."""

    def __init__(self, message: str, fault: dict, trace: list | None = None):
        super().__init__(message)
        self.fault = fault
        self.trace = trace or []


@dataclass
class Config:
    """The machine parameters of one run: the fields, defaults and ranges of simulator/params.toml."""
    cores: int = DEFAULTS["cores"]
    mem_latency: int = DEFAULTS["mem_latency"]
    arbitration: str = DEFAULTS["arbitration"]
    max_cycles: int = DEFAULTS["max_cycles"]
    mem_words: int = DEFAULTS["mem_words"]
    engine: str = DEFAULTS["engine"]
    cache: str = DEFAULTS["cache"]
    cache_lines: int = DEFAULTS["cache_lines"]
    cache_ways: int = DEFAULTS["cache_ways"]
    line_words: int = DEFAULTS["line_words"]
    cache_hit_latency: int = DEFAULTS["cache_hit_latency"]
    consistency: str = DEFAULTS["consistency"]
    store_buffer_entries: int = DEFAULTS["store_buffer_entries"]
    interconnect: str = DEFAULTS["interconnect"]
    coherence: str = DEFAULTS["coherence"]
    link_latency: int = DEFAULTS["link_latency"]
    router_latency: int = DEFAULTS["router_latency"]
    flit_words: int = DEFAULTS["flit_words"]

    def check(self) -> None:
        check(**{name: getattr(self, name) for name in PARAMS})

    @property
    def cached(self) -> bool:
        """Whether the cores have private caches (any protocol but `none`)."""
        return self.cache != "none"

    @property
    def buffered(self) -> bool:
        """Whether the cores have store buffers (consistency tso or pso, not sc)."""
        return self.consistency != "sc"

    @property
    def networked(self) -> bool:
        """Whether the cores sit on a ring or a mesh with directory coherence (not the bus)."""
        return self.interconnect != "bus"


@dataclass
class Result:
    """Totals, per-core counters and output of one run."""
    cycles: int
    instructions: int
    output: str
    cores: list[dict]
    bus_busy_cycles: int
    config: Config
    events: list[tuple[int, int, str]] = field(default_factory=list)  # (cycle, core, text)
    trace: list[tuple] = field(default_factory=list)  # event tuples (s2mc.simulator.trace), with trace=True
    timeline: object = None    # s2mc.simulator.timeline.Timeline, with timeline=
    sim_seconds: float = 0.0   # host wall-clock seconds the engine took (Machine.run)
    network: dict | None = None  # a ring or a mesh: the machine-wide network counters (simulator.network.report)

    @property
    def bus_utilisation(self) -> float:
        return self.bus_busy_cycles / self.cycles if self.cycles else 0.0

    @property
    def stall_cycles(self) -> int:
        return sum(c["stall_cycles"] for c in self.cores)

    @property
    def finish_cycles(self) -> list[int]:
        """Each core's finish cycle (the cycle after its halting trap), core 0 first."""
        return [c["cycles"] for c in self.cores]

    @property
    def idle_cycles(self) -> int:
        """Core-cycles spent halted before the run ended, summed over the cores."""
        return sum(c["idle_cycles"] for c in self.cores)

    def stats_frame(self):
        """Per-core counters as a pandas DataFrame, one row per core."""
        import pandas as pd
        return pd.DataFrame(self.cores, columns=["core", *core_counters(self.config.cached, self.config.buffered, self.config.networked)]).set_index("core")

    def to_json(self) -> dict:
        """The object `s2mc run --json` prints (docs/architecture.md)."""
        return {
            "cycles": self.cycles,
            "instructions": self.instructions,
            "output": self.output,
            "bus_busy_cycles": self.bus_busy_cycles,
            "bus_utilisation": round(self.bus_utilisation, 6),
            "stall_cycles": self.stall_cycles,
            "config": {k: getattr(self.config, k) for k in ("cores", "mem_latency", "arbitration", "engine")
                       + (CACHE_PARAMS if self.config.cached else ())
                       + (BUFFER_PARAMS if self.config.buffered else ())
                       + (NETWORK_PARAMS if self.config.networked else ())},
            "cores": self.cores,
            **({"network": self.network} if self.network is not None else {}),
        }


def stall_cycles(c: dict) -> int:
    """A core's derived stall cycles (simulator/counters.toml) from its engine counters: every bus
    cycle of its own transactions beyond the first is a stall, so without caches and store buffers
    this is seed 003's bus wait + (L-1) x accesses. The store buffer's drains use the bus while the
    core runs on: they are not stalls, but a full buffer and a drain wait are. Over a network
    (directory runs) every cycle of a core before its finish that is neither an instruction's first
    cycle nor a barrier wait is a stall: a miss's cycles after its issue, hits beyond their first."""
    if "miss_cycles" in c:
        return c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
    return (c["bus_wait_cycles"] + c["bus_busy_cycles"] - c.get("drain_bus_cycles", 0)
            - (c["mem_accesses"] - c.get("drain_bus_accesses", 0)) + c.get("hit_stall_cycles", 0)
            + c.get("store_buffer_full_stalls", 0) + c.get("fence_stall_cycles", 0))


def build_result(raw: dict, program: Program, cfg: Config) -> Result:
    """Turns an engine's raw result (fast binding or SystemC child) into a Result, or raises SimFault."""
    if raw["fault"] is not None:
        raise SimFault(fault_message(raw["fault"], cfg, program), raw["fault"], raw.get("trace"))
    cores = []
    names = core_counters(cfg.cached, cfg.buffered, cfg.networked)
    for i, c in enumerate(raw["cores"]):
        row = {"cycles": c["finish_cycle"], "idle_cycles": raw["cycles"] - c["finish_cycle"],
               "stall_cycles": stall_cycles(c), **c}
        cores.append({"core": i, **{k: row[k] for k in names}})
    events = [(cyc, core, text.decode("latin-1") if isinstance(text, bytes) else text)
              for cyc, core, text in raw["output"]]
    return Result(cycles=raw["cycles"], instructions=sum(c["instructions"] for c in cores),
                  output="".join(e[2] for e in events), cores=cores,
                  bus_busy_cycles=raw["bus_busy_cycles"], config=cfg, events=events,
                  trace=list(raw.get("trace", [])))


_FAULT_TEXT = {
    "undefined_opcode": "undefined opcode",
    "pc_out_of_range": "PC outside the program",
    "address_out_of_range": "data address {address} outside memory (0..{top})",
    "division_by_zero": "division by zero",
    "stack_overflow": "stack overflow: data address {address} is outside the core's stack region",
}


def code_label(program: Program, pc: int) -> str | None:
    """The name of the code label at or before pc (a function of a compiled Rz program), skipping
    the compiler's local labels (.L1, ...); None when there is none."""
    names = sorted(s.name for s in program.symbols.values()
                   if s.kind == "code" and s.value <= pc and not s.name.startswith("."))
    return max(names, key=lambda n: program.symbols[n].value, default=None)   # ties: the first name


def _stack_text(f: dict, program: Program) -> str:
    """What a stack_overflow fault touched: the address, whose region it is in, and the core's own."""
    stacks, a, core = Stacks(*program.stacks), f["address"], f["core"]
    owner = stacks.owner(a)
    lo, hi = stacks.region(owner)
    own = stacks.region(core)
    mine = (f"outside core {core}'s ({own[0]}..{own[1]})" if own else
            f"and core {core} has none (.stacks declares {stacks.count})")
    return f"stack overflow: data address {a} is in core {owner}'s stack region ({lo}..{hi}), {mine},"


def fault_message(f: dict, cfg: Config, program: Program | None = None) -> str:
    ins = "<outside the program>" if f["kind"] == "pc_out_of_range" else disassemble_word(f["word"])
    pc = f"pc {f['pc']}"
    if f["kind"] == "stack_overflow" and program is not None:
        label = code_label(program, f["pc"])
        pc += f" (in {label})" if label else ""
    where = f"core {f['core']}, {pc}, cycle {f['cycle']}: '{ins}'"
    if f["kind"] == "cycle_limit":
        return (f"cycle limit of {cfg.max_cycles} reached with {where} still running; "
                "raise --max-cycles if the program is only long")
    if f["kind"] == "stack_overflow" and program is not None and program.stacks is not None:
        what = _stack_text(f, program)
    else:
        what = _FAULT_TEXT[f["kind"]].format(address=f["address"], top=cfg.mem_words - 1)
    return f"simulated fault: {what} at {where}"


class Machine:
    """One configured S2 multicore with a program loaded.

    trace=True keeps the event log (the --trace events) in Result.trace, for small runs;
    trace_file=PATH formats it into that file as the run goes, with bounded memory (s2mc.simulator.trace).
    timeline=True builds the timeline of the cycles in timeline_window (from, to; to None: the end)
    into Result.timeline; timeline=PATH also writes it there (.html, .json, .png or .svg;
    s2mc.simulator.timeline).
    """

    def __init__(self, program: Program, cores: int = DEFAULTS["cores"],
                 mem_latency: int = DEFAULTS["mem_latency"], arbitration: str = DEFAULTS["arbitration"],
                 max_cycles: int = DEFAULTS["max_cycles"], mem_words: int = DEFAULTS["mem_words"],
                 engine: str = DEFAULTS["engine"], trace: bool = False, trace_file=None,
                 timeline=None, timeline_window: tuple[int, int | None] = (0, None),
                 cache: str = DEFAULTS["cache"], cache_lines: int = DEFAULTS["cache_lines"],
                 cache_ways: int = DEFAULTS["cache_ways"], line_words: int = DEFAULTS["line_words"],
                 cache_hit_latency: int = DEFAULTS["cache_hit_latency"],
                 consistency: str = DEFAULTS["consistency"],
                 store_buffer_entries: int = DEFAULTS["store_buffer_entries"],
                 interconnect: str = DEFAULTS["interconnect"], coherence: str = DEFAULTS["coherence"],
                 link_latency: int = DEFAULTS["link_latency"], router_latency: int = DEFAULTS["router_latency"],
                 flit_words: int = DEFAULTS["flit_words"], **engine_options):
        self.program = program
        self.config = Config(cores, mem_latency, arbitration, max_cycles, mem_words, engine,
                             cache, cache_lines, cache_ways, line_words, cache_hit_latency,
                             consistency, store_buffer_entries, interconnect, coherence, link_latency,
                             router_latency, flit_words)
        self.config.check()
        if self.config.networked and engine not in NETWORK_ENGINES:
            raise S2mcError(f"interconnect {interconnect} with coherence {coherence}: the {engine} engine "
                            "simulates the bus only so far; the reference model does "
                            "(s2mc run --engine reference)")
        if self.config.networked and (trace or trace_file or (timeline is not None and timeline is not False)):
            raise S2mcError(f"interconnect {interconnect}: the fast engine keeps no trace or timeline of a "
                            "network yet; the reference model does (s2mc run --engine reference --trace)")
        # Sizes and the entry are checked before any image is built: a Program made in Python can
        # name any address, and a list of that many words would exhaust memory first.
        if not 0 <= program.entry <= ADS_MAX:
            raise S2mcError(f"entry {program.entry} is outside the program addresses 0..{ADS_MAX}")
        if program.top("code") > ADS_MAX + 1:
            raise S2mcError(f"the program's code runs past the last program address {ADS_MAX}")
        if program.top("data") > mem_words:
            raise S2mcError(f"the program's data needs {program.top('data')} words of memory but only "
                            f"{mem_words} are configured")
        stacks = program.stacks
        problem = stacks_problem(*stacks) if stacks is not None else None
        if problem:
            raise S2mcError(f"the program's stacks: {problem}")
        code = [w & 0xFFFFFFFF for w in program.code_image]
        data = program.data_image
        sinks = [TraceFile(trace_file, program, mem_latency)] if trace_file else [TraceList()] if trace else []
        self._timeline = None
        if timeline is not None and timeline is not False:
            from .timeline import TimelineSink
            self._timeline = TimelineSink(program, cores, mem_latency, None if timeline is True else timeline,
                                          *timeline_window, cache=cache, hit_latency=cache_hit_latency,
                                          consistency=consistency, store_buffer_entries=store_buffer_entries)
            sinks.append(self._timeline)
        self._trace = Fanout(sinks) if sinks else None
        if engine == "fast" and self.config.networked:
            from . import _fast
            self._engine = _fast.NetworkedEngine(code, data, program.entry, cores, mem_latency, max_cycles,
                                                 mem_words, *(stacks or (0, 0, 0)), cache, cache_lines, cache_ways,
                                                 line_words, cache_hit_latency, interconnect, link_latency,
                                                 router_latency, flit_words)
        elif engine == "fast":
            from . import _fast
            self._engine = _fast.Engine(code, data, program.entry, cores, mem_latency, arbitration,
                                        max_cycles, mem_words, *(stacks or (0, 0, 0)), cache, cache_lines,
                                        cache_ways, line_words, cache_hit_latency, consistency,
                                        store_buffer_entries)
            if self._trace is not None:
                self._engine.enable_trace(self._trace)
        else:
            from .systemc_engine import SystemCEngine
            self._engine = SystemCEngine(code, data, program.entry, self.config, trace=self._trace, stacks=stacks,
                                         **engine_options)
        self._ran = False

    def _address(self, where: str | int, offset: int, n: int) -> int:
        addr = (self.program.address_of(where) if isinstance(where, str) else where) + offset
        if addr < 0 or addr + n > self.config.mem_words:
            raise S2mcError(f"{n} words at address {addr} do not fit in the simulated memory of "
                            f"{self.config.mem_words} words (need {addr + n}); raise mem_words")
        return addr

    def write(self, where: str | int, words, offset: int = 0) -> None:
        """Write words to shared memory at a data symbol (or address), before running."""
        words = [((int(w) + (1 << 31)) & 0xFFFFFFFF) - (1 << 31) for w in words]
        self._engine.write(self._address(where, offset, len(words)), words)

    def read(self, where: str | int, n: int, offset: int = 0) -> list[int]:
        return list(self._engine.read(self._address(where, offset, n), n))

    def registers(self, core: int = 0) -> list[int]:
        if not 0 <= core < self.config.cores:
            raise S2mcError(f"core {core} is not one of the {self.config.cores} cores")
        return list(self._engine.registers(core))

    def cache(self, core: int = 0) -> list[tuple[int, str, int] | None]:
        """Core's data cache now, slot by slot (slot = set x ways + way): (the line's base address,
        its state, its last use on the cache's LRU clock), or None for an invalid slot; [] without
        caches."""
        if not 0 <= core < self.config.cores:
            raise S2mcError(f"core {core} is not one of the {self.config.cores} cores")
        if self.config.networked:
            raise S2mcError(f"interconnect {self.config.interconnect}: the caches' lines of a network run "
                            "cannot be read yet (the reference model's DirectoryMachine holds them)")
        if self.config.engine != "fast":
            raise S2mcError("the caches' lines can be read from the fast engine only (the systemc engine "
                            "shows them in its VCD waveforms)")
        return [tuple(s) if s is not None else None for s in self._engine.cache(core)]

    def _run_engine(self) -> dict:
        """The engine's raw result; the trace sink is finished here: a trace file is kept when the
        run ends (a simulated fault included: the log up to it) and removed when the run fails."""
        sink = self._trace
        t0 = time.perf_counter()
        if sink is None:
            raw = self._engine.run()
            self._engine_seconds = time.perf_counter() - t0
            return raw
        sink.open()
        try:
            raw = self._engine.run()
        except BaseException:
            sink.close(keep=False)
            raise
        # the simulation ends here: building the timeline as the events come (its sink's own time) and
        # writing its picture or page (sink.close) are not simulating
        self._engine_seconds = time.perf_counter() - t0 - (self._timeline.seconds if self._timeline else 0.0)
        sink.close(keep=True)
        if isinstance(sink.sinks[0], TraceList):
            raw["trace"] = sink.sinks[0].events
        return raw

    def run(self) -> Result:
        if self._ran:
            raise S2mcError("a Machine runs once; make a new one to run again")
        self._ran = True
        raw = self._run_engine()
        result = build_result(raw, self.program, self.config)
        if "network" in raw:
            result.network = _network_report(raw, result, self.config)
        result.sim_seconds = self._engine_seconds
        result.timeline = self._timeline.timeline if self._timeline is not None else None
        return result


def _network_report(raw: dict, result: Result, cfg: Config) -> dict:
    """The network counters of an engine's directory run, in the reference model's form."""
    from .directory import MESSAGES
    from .network import Topology, report
    net = raw["network"]
    return report(Topology(cfg.interconnect, cfg.cores), raw["cores"], dict(zip(MESSAGES, net["messages"])),
                  {n: k for n, k in enumerate(net["invalidations"]) if k},
                  {(r, p): flits for r, p, flits in net["link_flits"]}, result.cycles, net["quiet_cycle"])


def run(program: Program, **config) -> Result:
    """Load and run a program in one step; see Machine for the options."""
    return Machine(program, **config).run()


def run_reference(program: Program, **config) -> Result:
    """Run a program on the cycle-stepped reference model (simulator/reference.py; with a ring or a
    mesh simulator/directory.py) and return what Machine.run would: the same counters, output and
    faults, its config's engine "reference", and with a network result.network. Slow: the engines'
    specification, for small programs (the fast engine runs a ring or a mesh too, and equals it)."""
    from .directory import DirectoryMachine
    from .reference import RefFault, ReferenceMachine
    config.pop("engine", None)
    cfg = Config(**config)
    check(**{name: getattr(cfg, name) for name in PARAMS if name != "engine"})
    cfg.engine = "reference"
    if program.top("data") > cfg.mem_words:
        raise S2mcError(f"the program's data needs {program.top('data')} words of memory but only "
                        f"{cfg.mem_words} are configured")
    code = [w & 0xFFFFFFFF for w in program.code_image]
    params = {name: getattr(cfg, name) for name in PARAMS if name != "engine"}
    t0 = time.perf_counter()
    try:
        model = DirectoryMachine if cfg.coherence == "directory" else ReferenceMachine
        raw = model(code, program.data_image, program.entry, stacks=program.stacks, **params).run()
    except RefFault as f:
        fault = {"kind": f.kind, "core": f.core, "pc": f.pc, "cycle": f.cycle, "address": f.address,
                 "word": code[f.pc] if 0 <= f.pc < len(code) else 0}
        raise SimFault(fault_message(fault, cfg, program), fault) from None
    seconds = time.perf_counter() - t0
    raw["fault"] = None
    result = build_result(raw, program, cfg)
    result.sim_seconds, result.network = seconds, raw.get("network")
    return result


__all__ = ["format_trace", "ARBITRATIONS", "BUFFER_PARAMS", "NETWORK_PARAMS", "CACHE_COUNTERS", "CORE_COUNTERS", "Config", "ENGINES", "Machine", "Result", "SimFault", "run", "run_reference"]
