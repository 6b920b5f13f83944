"""A gdb-like command interpreter over a Stepper (`s2mc debug`, docs/debugger.md).

    d = Debugger.for_program(program, source=text, cores=2)   # history on: reverse stepping works
    d.execute("break 12")          # -> the text it printed, errors included, one line each
    d.execute("continue"); d.execute("next"); d.execute("p x"); d.execute("reverse-step")
    d.state()                      # the machine as JSON-able data: cycle, cores, breakpoints ...

Commands come from one table, COMMANDS (name, short forms, usage, what it does, whether Enter
repeats it); a command NAME is the method do_NAME(args). Every command prints what it did or one
line saying why it could not; execute() never raises for a bad command, so a script (or a person,
or the web page) goes on with the next one. With the program's debug information (the Rz
compiler's -g, isa/debuginfo.py) the commands speak Rz: lines, functions, variables.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

from s2mc.common.errors import S2mcError
from s2mc.isa.program import VALUE_MAX, VALUE_MIN

from . import CYCLE_ADVICE, SimFault
from .stepping import NEVER, Stop, Stepper
from .trace import Instructions

HISTORY_BYTES = 64 << 20     # checkpoints kept for reverse stepping (Debugger.for_program)
# how `p/F` and `x/F` show a word (show()); d, signed, is how every other command shows one
FORMATS = ("x", "d", "u", "t", "c")


@dataclass(frozen=True)
class Command:
    name: str
    aliases: tuple[str, ...]
    usage: str
    help: str
    repeats: bool = False        # an empty line (Enter) runs it again


COMMANDS = [
    Command("break", ("b",), "break LINE|FILE:LINE|FUNCTION|LABEL|*PC [core N]",
            "stop when a core (or core N) is about to issue the first instruction there"),
    Command("watch", ("w",), "watch ADDR|SYMBOL|VARIABLE",
            "stop after a write (st, push, xchg) to that word (with store buffers: after its drain)"),
    Command("delete", ("d",), "delete N", "remove breakpoint or watch N"),
    Command("step", ("s",), "step [N]", "N source lines (into calls); an instruction without a line table", True),
    Command("next", ("n",), "next [N]", "N source lines (over calls); an instruction without a line table", True),
    Command("stepi", ("si",), "stepi [N]", "N instructions of the current core (into calls)", True),
    Command("nexti", ("ni",), "nexti [N]", "N instructions of the current core (over calls)", True),
    Command("finish", ("fin",), "finish", "until the current core's function returns"),
    Command("continue", ("c", "cont"), "continue", "to the next breakpoint or watch, or to the end", True),
    Command("tick", ("t",), "tick [N]", "N clock cycles (1), or to an earlier breakpoint or watch", True),
    Command("until", ("u",), "until CYCLE", "to that cycle (back to it when it is earlier), or an earlier stop"),
    Command("reverse-step", ("rs",), "reverse-step", "back to the start of the previous source line (into calls)",
            True),
    Command("reverse-next", ("rn",), "reverse-next", "back to the start of the previous source line (over calls)",
            True),
    Command("reverse-stepi", ("rsi",), "reverse-stepi", "back one instruction of the current core", True),
    Command("reverse-continue", ("rc",), "reverse-continue", "back to the previous breakpoint or watch stop", True),
    Command("core", ("thread",), "core [N]", "the core the stepping commands and p follow (gdb's thread)"),
    Command("backtrace", ("bt", "where"), "backtrace", "the calls the current core is in, innermost first"),
    Command("print", ("p",), f"print[/{'|'.join(FORMATS)}] EXPR",
            "a variable, $register, ARRAY[i], *ADDR, &VAR, sums"),
    Command("x", (), "x[/NFMT] ADDR", f"N words of memory from ADDR, FMT {' '.join(FORMATS)}, or i: instructions",
            True),
    Command("list", ("l",), "list [LINE|FUNCTION]", "the source around the current line (again: the next lines)", True),
    Command("disas", ("disassemble",), "disas [FUNCTION|LABEL|PC]", "the instructions of a function, with its lines"),
    Command("info", ("i",), "info [locals|breakpoints|registers|line|cores|machine]",
            "every core's state, pc and line, the breakpoints and watches; or one of those; machine: "
            "the parameters (interconnect, coherence, caches, latencies)"),
    Command("regs", ("r",), "regs [CORE]", "the registers of a core (the current one)"),
    Command("mem", ("m",), "mem ADDR|SYMBOL [N]", "N words of memory (1), with their labels"),
    Command("bus", (), "bus", "who holds the bus, since when, and who waits for it"),
    Command("cache", (), "cache [core N | ADDR|SYMBOL]", "every valid line of each cache (or core N's): set, "
            "way, base, state, words; or which cores hold the line of ADDR, in what state"),
    Command("dir", (), "dir ADDR|SYMBOL", "a ring or a mesh: the line of ADDR, its home tile, directory state "
            "(S^D: transient), owner, sharers, every core's copy and state, and the home's queue"),
    Command("net", (), "net", "a ring or a mesh: the messages in flight (type, source, destination, line, "
            "where each is) and those held at the homes and the cache controllers"),
    Command("sb", (), "sb [CORE]", "each core's (or one core's) store buffer, oldest first: address, value, "
            "the store, which entry drains next or waits for the bus (consistency tso, pso)"),
    Command("cycle", (), "cycle", "the current cycle"),
    Command("output", (), "output", "what the program has printed so far"),
    Command("help", ("h", "?"), "help", "this list"),
    Command("quit", ("q", "exit"), "quit", "leave (end of input too)"),
]
BY_NAME = {c.name: c for c in COMMANDS} | {a: c for c in COMMANDS for a in c.aliases}


def help_text() -> str:
    width = max(len(c.usage) for c in COMMANDS) + 2
    lines = ["commands (a cycle is the machine's state before anything of that cycle happens):"]
    lines += [f"  {c.usage:<{width}}{c.help}" for c in COMMANDS]
    lines.append("short forms: " + ", ".join(f"{a} ({c.name})" for c in COMMANDS for a in c.aliases))
    lines.append("Enter on an empty line repeats " + ", ".join(c.name for c in COMMANDS if c.repeats))
    return "\n".join(lines)


SPECIAL_REGS = {"retval": 28, "fp": 29, "rads": 30, "sp": 31}
WORD = 1 << 32


def _number(text: str, what: str, lo: int = 0) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise S2mcError(f"{what} must be a number, not '{text}'") from None
    if value < lo:
        raise S2mcError(f"{what} must be at least {lo}, not {value}")
    return value


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _cycles(n: int) -> str:
    return _plural(n, "cycle")


def word_bits(value: int, what: str | None = None) -> int:
    """The 32 bits (0 .. 2^32-1) of a value that is a word: VALUE_MIN .. VALUE_MAX, its signed or
    its unsigned reading (as the assembler's .word takes it); anything else is no word."""
    if not VALUE_MIN <= value <= VALUE_MAX:
        raise S2mcError(f"{what or value} does not fit in a 32-bit word ({VALUE_MIN}..{VALUE_MAX})")
    return value % WORD


def signed(value: int) -> int:
    """A word's signed reading, as the machine's arithmetic and the registers see it."""
    u = word_bits(value)
    return u - WORD if u >> 31 else u


def wrap(value: int) -> int:
    """The result of word arithmetic: any integer, modulo 2^32, read signed."""
    return signed(value % WORD)


def show(value: int, f: str = "d") -> str:
    """The one way a word becomes text: x hex, d signed, u unsigned, t binary, c signed and its
    low byte as a character. Registers, memory, variables and values of every command use it."""
    u, s = word_bits(value), signed(value)
    if f == "x":
        return f"0x{u:08x}"
    if f == "u":
        return str(u)
    if f == "t":
        return f"{u:032b}"
    if f == "c":
        return f"{s} {chr(u & 255)!r}"
    if f == "d":
        return str(s)
    raise S2mcError(f"unknown format '/{f}' ({' '.join(FORMATS)})")


class Debugger:
    """Executes debugger commands on a Stepper. `out` and `err`, when given, also receive each
    line as it is printed (the terminal); execute() returns them all either way (the web page).
    `cycle_advice` is what a run that reaches its cycle limit is told to raise: the command line's
    --max-cycles unless the front end has another control for it."""

    def __init__(self, stepper: Stepper, out: Callable[[str], None] | None = None,
                 err: Callable[[str], None] | None = None, source: str | None = None,
                 source_dir: str | None = None, repeat_empty: bool = True, cycle_advice: str = CYCLE_ADVICE):
        self.cycle_advice = cycle_advice
        self.s = stepper
        self.program = stepper.program
        self.debug = stepper.program.debug
        self.out_cb, self.err_cb = out, err
        self.ins = Instructions(stepper.program)
        self.current = 0            # the core stepping follows: the last one that stopped, else 0
        self._printed = 0           # how much of the program's output has been shown
        self.repeat_empty = repeat_empty
        self.finished = False       # `quit` was given
        self.last_error: str | None = None
        self._last: str | None = None        # the last repeatable command line
        self._lines: list[str] = []
        self._list_next: int | None = None   # where `list` goes on (right after a `list`)
        self._previous: str | None = None    # the command before this one
        self._x_next: tuple[int, str, int] | None = None   # where `x` goes on: address, format, count
        self._waits: dict | None = None      # the stepped core's store-buffer waits before the step
        self.source = source.splitlines() if source is not None else self._find_source(source_dir)
        self._file = os.path.basename(self.debug.file) if self.debug else ""   # as lines name it

    @classmethod
    def for_program(cls, program, source: str | None = None, history: int = HISTORY_BYTES, **machine):
        """A debugger on a new Stepper with reverse stepping (`history` bytes of checkpoints) and
        Machine's options (cores, mem_latency, ...): what `s2mc debug` and the web page use."""
        return cls(Stepper(program, history=history, **machine), source=source)

    def _find_source(self, folder: str | None) -> list[str] | None:
        """The source file the debug information names, read only when a folder to look in is
        given (the terminal): a server passes the text instead and reads no file a program names."""
        if self.debug is None or not self.debug.file or folder is None:
            return None
        for path in (self.debug.file, os.path.join(folder, os.path.basename(self.debug.file))):
            try:
                with open(path, encoding="utf-8") as f:
                    return f.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
        return None

    # -- output ---------------------------------------------------------------------------------
    def out(self, line: str) -> None:
        self._lines.append(line)
        if self.out_cb:
            self.out_cb(line)

    def err(self, line: str) -> None:
        self._lines.append(line)
        self.last_error = line
        if self.err_cb:
            self.err_cb(line)

    # -- the interpreter ------------------------------------------------------------------------
    def execute(self, line: str) -> str:
        """Runs one command line; returns what it printed (lines ending in newlines). An empty
        line runs the last repeatable command again (when repeat_empty). After `quit`,
        self.finished is True."""
        self._lines, self.last_error = [], None
        text = line.strip()
        if not text and self.repeat_empty and self._last:
            text = self._last
        words = text.split()
        if not words or words[0].startswith("#"):
            return ""
        head, _, fmt = words[0].partition("/")
        cmd = BY_NAME.get(head.lower())
        if cmd is None:
            self.err(f"unknown command '{words[0]}' (help lists the commands)")
            return self._text()
        self._last = text if cmd.repeats else None
        if cmd.name == "quit":
            self.finished = True
            return ""
        if fmt and cmd.name not in ("x", "print"):
            self.err(f"{cmd.name}: takes no /format")
            return self._text()
        try:
            if cmd.name in ("x", "print"):
                getattr(self, f"do_{cmd.name.replace('-', '_')}")(words[1:], fmt)
            else:
                getattr(self, f"do_{cmd.name.replace('-', '_')}")(words[1:])
        except SimFault as fault:
            self._show_output(final=True)
            self.err(fault.advised(self.cycle_advice))
        except S2mcError as exc:
            self.err(f"{cmd.name}: {exc}")
        if cmd.name == "x" and self._x_next is not None:
            self._last = "x"                 # Enter goes on after the words shown
        if cmd.name == "list":
            self._last = "list"
        self._previous = cmd.name
        return self._text()

    def _text(self) -> str:
        return "".join(f"{line}\n" for line in self._lines)

    def _args(self, args: list[str], most: int, usage: str) -> None:
        if len(args) > most:
            raise S2mcError(f"too many arguments (usage: {usage})")

    def _count(self, args: list[str], usage: str) -> int:
        self._args(args, 1, usage)
        return _number(args[0], "N", 1) if args else 1

    # -- the state, for the web page ------------------------------------------------------------
    def state(self) -> dict:
        """The machine now, as plain data (json.dumps takes it): cycle, whether the run ended (and
        its fault), the current core, each core's state, pc, where, instruction, registers, source
        line and function (None without debug information), the bus, the breakpoints and watches,
        the store buffers and the caches (None on a machine without them)."""
        s = self.s
        cores = []
        for c in s.cores():
            func = self.debug.func_at(c.pc) if self.debug else None
            cores.append({"core": c.core, "state": c.state, "pc": c.pc, "where": s.where(c.pc),
                          "instruction": self.ins.text(c.pc), "since": c.since,
                          "registers": [signed(r) for r in s.registers(c.core)],
                          "line": self.debug.line_at(c.pc) if self.debug else None,
                          "function": func.name if func else None})
        breaks = []
        for n, (pc, core) in sorted(s.breakpoints.items()):
            breaks.append({"number": n, "pc": pc, "where": s.where(pc), "core": core,
                           "line": self.debug.line_at(pc) if self.debug else None})
        bus = None
        if not s.networked:
            b = s.bus()
            bus = {"holder": b.holder, "granted": b.granted, "free_at": b.free_at,
                   "waiting": [{"core": c, "since": t, "address": a} for c, t, a in b.waiting]}
        return {"cycle": s.cycle, "ended": s.done, "bus": bus, "network": self._network_data(),
                "fault": s.fault.advised(self.cycle_advice) if s.fault is not None else None,
                "current_core": self.current, "file": self._file or None,
                "cores": cores, "breakpoints": breaks,
                "watches": [{"number": n, "address": a, "where": self.ins.symbols.data(a)}
                            for n, a in sorted(s.watches.items())],
                "output": s.output, "history": s.history > 0,
                "store_buffers": self._buffers_data(), "caches": self._caches_data()}

    def _caches_data(self) -> dict | None:
        """The caches for state() (None without caches): the protocol, the geometry and, per core,
        every valid line (set, way, its base address and label, its coherence state), as `cache`
        prints them."""
        cfg = self.s.config
        if not cfg.cached:
            return None
        ways = cfg.cache_ways
        return {"protocol": cfg.cache, "lines": cfg.cache_lines, "ways": ways, "line_words": cfg.line_words,
                "cores": [[{"set": i // ways, "way": i % ways, "line": slot[0],
                            "where": self.ins.symbols.data(slot[0]), "state": slot[1]}
                           for i, slot in enumerate(self.s.cache(core)) if slot is not None]
                          for core in range(cfg.cores)]}

    def _network_data(self) -> dict | None:
        """A ring or a mesh for state() (None on the bus machine): the interconnect, every line in
        play (`dir`: home, directory state, owner, sharers, copies) and the messages in flight (`net`)."""
        s = self.s
        if not s.networked:
            return None
        lines = []
        for v in s.directory():
            lines.append({"line": v.line, "address": v.address, "where": self.ins.symbols.data(v.address),
                          "home": v.home, "state": v.state, "owner": v.owner, "sharers": list(v.sharers),
                          "copies": [{"core": k, "state": st, "evicting": place == "evicting"}
                                     for k, st, place in v.copies],
                          "queue": len(v.queue)})
        messages = [{"type": m.kind, "src": m.src, "dst": m.dst, "line": m.line, "requester": m.requester,
                     "router": m.router, "port": m.port, "ready": m.ready, "delivered": m.delivered}
                    for m in s.messages()]
        return {"interconnect": s.config.interconnect, "coherence": s.config.coherence,
                "lines": lines, "messages": messages}

    def _buffers_data(self) -> list | None:
        """Each core's store buffer for state() (None without store buffers)."""
        if not self.s.config.buffered:
            return None
        return [[{"address": e.address, "where": self.ins.symbols.data(e.address), "value": signed(e.value),
                  "pc": e.pc, "instruction": self.ins.text(e.pc),
                  "line": self.debug.line_at(e.pc) if self.debug else None,
                  "since": e.since, "state": e.state, "drain_since": e.drain_since}
                 for e in self.s.store_buffer(core)] for core in range(self.s.config.cores)]

    # -- places ---------------------------------------------------------------------------------
    def _need_debug(self, what: str) -> None:
        if self.debug is None:
            raise S2mcError(f"{what} needs debug information: debug the .rz, or compile it with "
                            "`s2mc compile -g`")

    def _line_spec(self, spec: str) -> int | None:
        """The line number of LINE or FILE:LINE, or None when spec is neither."""
        m = re.fullmatch(r"(?:(.+):)?(\d+)", spec)
        if not m or (m[1] is None and self.debug is None):
            return None
        self._need_debug("a breakpoint on a line")
        if m[1] is not None and os.path.basename(m[1]) != os.path.basename(self.debug.file):
            raise S2mcError(f"no file '{m[1]}' in the program (its source is {self._file})")
        return int(m[2])

    def _break_pcs(self, spec: str) -> tuple[list[int], str]:
        """The pcs a breakpoint spec names, and how to say where they are."""
        if spec.startswith("*"):
            pc = self.s.place(spec[1:], "code")
            return [pc], f"pc {pc} ({self.s.where(pc)}: {self.ins.text(pc)})"
        line = self._line_spec(spec)
        if line is not None:
            got, pcs = self.debug.locations(line)
            if line < 1 or not pcs:
                last = self.debug.lines()[-1] if self.debug.lines() else 0
                raise S2mcError(f"no code at or after line {line} of {self._file} "
                                f"(lines with code: {self.debug.lines()[0] if last else 0}..{last})")
            return pcs, f"{self._file}:{got}" + ("" if got == line else f" (line {line} has no code)")
        func = self.debug.function(spec) if self.debug else None
        if func is not None:
            return [func.body], f"{spec}, {self._file}:{self.debug.line_at(func.body) or func.line}"
        pc = self.s.place(spec, "code")
        return [pc], f"pc {pc} ({self.s.where(pc)}: {self.ins.text(pc)})"

    def _src(self, line: int) -> str:
        if self.source is not None and 1 <= line <= len(self.source):
            return self.source[line - 1].strip()
        return ""

    def _rz_line(self, pc: int) -> str | None:
        """`file:line: text` of the instruction at pc, when the line table knows it."""
        line = self.debug.line_at(pc) if self.debug else None
        if line is None:
            return None
        func = self.debug.func_at(pc)
        text = self._src(line)
        return f"{self._file}:{line}" + (f" in {func.name}()" if func else "") + (f": {text}" if text else "")

    # -- breakpoints ----------------------------------------------------------------------------
    def do_break(self, args):
        usage = "break LINE|FILE:LINE|FUNCTION|LABEL|*PC [core N]"
        if not args or len(args) not in (1, 3) or (len(args) == 3 and args[1].lower() != "core"):
            raise S2mcError(f"usage: {usage}")
        core = _number(args[2], "core") if len(args) == 3 else None
        if core is not None:
            self.s.check_core(core)
        pcs, where = self._break_pcs(args[0])
        who = f"core {core}" if core is not None else "every core"
        for pc in pcs:
            n = self.s.add_break(pc, core)
            extra = f" (pc {pc}, {self.s.where(pc)}: {self.ins.text(pc)})" if not where.startswith("pc ") else ""
            self.out(f"breakpoint {n} at {where}{extra}, {who}")

    def do_watch(self, args):
        if len(args) != 1:
            raise S2mcError("usage: watch ADDR|SYMBOL|VARIABLE")
        var = self._variable(args[0], quiet=True)
        if var is not None and var.kind == "reg":
            raise S2mcError(f"'{args[0]}' lives in {var.place()}, not in memory: a watch needs a word of memory")
        if var is not None and var.kind == "frame":      # this call's word of it
            where = self.s.registers(self.current)[SPECIAL_REGS["fp"]] + var.where
        else:
            where = var.where if var is not None else args[0]
        n = self.s.add_watch(where)
        a = self.s.watches[n]
        self.out(f"watch {n} on writes to address {a} ({self.ins.symbols.data(a)})")

    def do_delete(self, args):
        if len(args) != 1:
            raise S2mcError("usage: delete N")
        self.s.delete(_number(args[0], "N"))
        self.out(f"deleted {args[0]}")

    # -- advancing by cycles --------------------------------------------------------------------
    def do_tick(self, args):
        self._show_stop(self.s.step(self._count(args, "tick [N]")))

    def do_continue(self, args):
        self._args(args, 0, "continue")
        self._show_stop(self.s.cont())

    def do_until(self, args):
        if len(args) != 1:
            raise S2mcError("usage: until CYCLE")
        cycle = _number(args[0], "CYCLE")
        if cycle < self.s.cycle and self.s.history:
            self.s.goto(cycle)
            self._back()
            self.out(f"cycle {self.s.cycle}")
            return
        self._show_stop(self.s.run_until(cycle))

    def _show_stop(self, stop: Stop) -> None:
        self._show_output(final="end" in stop.reasons)
        if "request" in stop.reasons:
            self.out(f"interrupted at cycle {stop.cycle}")
            return
        if "end" in stop.reasons:
            res = self.s.result
            if res.network is not None:
                net = res.network
                how = (f"{sum(net['messages'].values())} messages, {net['flits']} flits over the "
                       f"{net['topology']}")
            else:
                how = f"bus utilisation {res.bus_utilisation:.1%}"
            self.out(f"the program ended at cycle {res.cycles}: {res.instructions} instructions, "
                     f"{res.stall_cycles} stall cycles, {how}")
            return
        for n, w in stop.watches:
            self.current = w.core
            how = f"core {w.core}'s store buffer drained" if w.drain else f"core {w.core} wrote"
            self.out(f"watch {n}: {how} {show(w.after)} to address {w.address} "
                     f"({self.ins.symbols.data(w.address)}; was {show(w.before)}) in cycle {w.cycle}: "
                     f"{self.ins.text(w.pc)} at pc {w.pc} ({self.s.where(w.pc)})")
        for n, core, pc in stop.breaks:
            self.current = core
            self.out(f"breakpoint {n}: core {core} at pc {pc} ({self.s.where(pc)}): {self.ins.text(pc)}")
            rz = self._rz_line(pc)
            if rz:
                self.out(f"  {rz}")
        self.out(f"cycle {stop.cycle}")

    def _show_output(self, final: bool = False) -> None:
        """The lines the program completed since the last look (at the end, the rest too)."""
        text = self.s.output
        upto = len(text) if final else text.rfind("\n") + 1
        new, self._printed = text[self._printed:upto], max(upto, self._printed)
        for line in new.splitlines():
            self.out(f"[output] {line}")

    def _back(self) -> None:
        """After going back: the output shown so far is cut to what was printed by now."""
        self._printed = min(self._printed, self.s.output.rfind("\n") + 1)

    # -- advancing by instructions and lines ----------------------------------------------------
    def _going(self) -> int:
        core = self.current
        c = self.s.core(core)
        if self.s.done:
            self.s.check_going()
        if c.state in ("halted", "stopped"):
            raise S2mcError(f"core {core} has halted (in cycle {c.since}); `core N` picks another")
        self._waits = self._buffer_waits(c)
        return core

    @staticmethod
    def _buffer_waits(c) -> dict:
        return {k: c.counters.get(k, 0) for k in ("fence_stall_cycles", "store_buffer_full_stalls")}

    def _show_core(self, stop: Stop | None, core: int) -> None:
        """Where a core stands after a step: its instruction, its Rz line, the cycle."""
        if stop is not None and stop.interrupted:
            self._show_stop(stop)
            return
        self._show_output()
        c = self.s.core(core)
        before, self._waits = self._waits, None
        if before is not None and c.state != "held":
            after = self._buffer_waits(c)
            drain = after["fence_stall_cycles"] - before["fence_stall_cycles"]
            room = after["store_buffer_full_stalls"] - before["store_buffer_full_stalls"]
            if drain:
                self.out(f"core {core} waited {_cycles(drain)} for its store buffer to drain (fence, xchg, sync, trap)")
            if room:
                self.out(f"core {core} waited {_cycles(room)} for room in its full store buffer")
        if c.state == "halted":
            self.out(f"core {core} halted in cycle {c.since}")
        else:
            self.out(f"core {core} at pc {c.pc} ({self.s.where(c.pc)}): {self.ins.text(c.pc)}")
            rz = self._rz_line(c.pc)
            if rz:
                self.out(f"  {rz}")
        self.out(f"cycle {self.s.cycle}")

    def _stepped(self, stop: Stop, core: int) -> bool:
        """Whether a step may go on: nothing stopped it and its core still runs."""
        return not stop.interrupted and self.s.core(core).state not in ("halted", "stopped")

    def do_stepi(self, args):
        n = self._count(args, "stepi [N]")
        core = self._going()
        stop = None
        for _ in range(n):
            stop = self.s.step_instruction(core)
            if not self._stepped(stop, core):
                break
        self._show_core(stop, core)

    def do_nexti(self, args):
        n = self._count(args, "nexti [N]")
        core = self._going()
        stop = None
        for _ in range(n):
            stop = self._next_instruction(core)
            if not self._stepped(stop, core):
                break
        self._show_core(stop, core)

    def _next_instruction(self, core: int) -> Stop:
        c = self.s.core(core)
        call = c.state == "running" and self.s.is_call(c.pc)
        back = (c.pc + 1, self.s.registers(core)[SPECIAL_REGS["fp"]])
        stop = self.s.step_instruction(core)
        if call and self._stepped(stop, core):
            stop = self.s.run_to_return(core, *back)
        return stop

    def _frame(self, core: int) -> tuple:
        """What identifies the line a core is in: the line, the function, the frame pointer."""
        pc = self.s.core(core).pc
        return self.debug.line_at(pc), self.debug.func_at(pc), self.s.registers(core)[SPECIAL_REGS["fp"]]

    def _at_statement(self, core: int) -> bool:
        """A core stands at the start of a line's instructions, past any function's entry code."""
        c = self.s.core(core)
        func = self.debug.func_at(c.pc)
        return (c.state == "running" and self.debug.row_start(c.pc)
                and (func is None or c.pc >= func.body))

    def _enters_line(self, core: int, before: tuple) -> bool:
        """Where a line step stops, going forward or back: a core about to issue the first
        instruction of a line when its previous instruction was of another line (or function, or
        frame). So a jump within one line (a loop on one line, a while's test) is no new line."""
        return self._at_statement(core) and self._frame(core) != before

    def _step_line(self, core: int, over: bool) -> Stop:
        while True:
            c = self.s.core(core)
            before = self._frame(core)
            call = c.state == "running" and self.s.is_call(c.pc)
            back = (c.pc + 1, self.s.registers(core)[SPECIAL_REGS["fp"]])
            stop = self.s.step_instruction(core)
            if not self._stepped(stop, core):
                return stop
            if call and (over or self.debug.line_at(self.s.core(core).pc) is None):
                stop = self.s.run_to_return(core, *back)   # over it, or into code without lines
                if not self._stepped(stop, core):
                    return stop
                before = (None, None, None)         # back in the line of the call, mid-line
            if self._enters_line(core, before):
                return stop

    def _lines_or_instructions(self, args, usage: str, over: bool):
        n = self._count(args, usage)
        if self.debug is None or not self.debug.rows:
            return (self.do_nexti if over else self.do_stepi)(args)
        core = self._going()
        stop = None
        for _ in range(n):
            stop = self._step_line(core, over)
            if not self._stepped(stop, core):
                break
        self._show_core(stop, core)

    def do_step(self, args):
        self._lines_or_instructions(args, "step [N]", over=False)

    def do_next(self, args):
        self._lines_or_instructions(args, "next [N]", over=True)

    def do_finish(self, args):
        self._args(args, 0, "finish")
        core = self._going()
        pc = self.s.core(core).pc
        func = self.debug.func_at(pc) if self.debug else None
        if self.debug is not None and func is None:
            raise S2mcError(f"core {core} is at pc {pc} ({self.s.where(pc)}), in no function to return from")
        self.out(f"run till {func.name}() returns on core {core}" if func else
                 f"run till the current function returns on core {core}")
        back = self._return_point(core, func)
        stop = self.s.run_to_return(core, *back) if back else self.s.finish_call(core)
        if self._stepped(stop, core):
            self.out(f"value returned: retval = {show(self.s.registers(core)[SPECIAL_REGS['retval']])}")
        self._show_core(stop, core)

    # -- going back ---------------------------------------------------------------------------
    def _history(self) -> None:
        if not self.s.history:
            raise S2mcError("this session keeps no history to go back in")
        if not self.s.started or self.s.cycle == 0:
            raise S2mcError("at cycle 0, the start of the run: there is nothing before it")

    def _issue_scan(self, core: int, value):
        """A scan (Stepper.last_before) that stops wherever `core` is about to issue; `value(c,
        first)` says what a stop holds (first: the window's start, nothing before it known)."""
        def scan(limit):
            c = self.s.core(core)
            if limit is not None:
                if c.state in ("halted", "stopped"):
                    return None
                self.s.step_instruction(core, limit)
                c = self.s.core(core)
            if c.state != "running" or self.s.cycle >= (limit or NEVER):
                return None
            return value(c, limit is None)
        return scan

    def _reverse(self, scan, pick=None, what: str = "") -> None:
        self._history()
        core = self.current
        start = self.s.cycle
        with self.s.no_breaks():
            got = self.s.last_before(scan, start, pick)
        self._back()
        if got is None:
            self.out(f"core {core} {what} before cycle {start}: it stays there")
            return
        self._show_core(None, core)

    def do_reverse_stepi(self, args):
        self._args(args, 0, "reverse-stepi")
        self._reverse(self._issue_scan(self.current, lambda c, first: c.pc), what="issued no instruction")

    def _line_scan(self, core: int, over: bool = False):
        """A scan of every issue point of `core`: (call depth before it, counted from the window's
        start; whether it enters a line), and the depth at the scan's end (a list of one). `over`:
        a call that returns before the scan's limit is run through at once, its insides unseen
        (they are deeper than any stop reverse-next takes); one that does not is stepped into."""
        depth, before, inside = [0], [None], set()

        def value(c, first):
            if first:
                depth[0] = 0
                inside.clear()
            here = (depth[0], not first and self._enters_line(core, before[0]))
            before[0] = self._frame(core)
            kind = self.s.mnemonic(c.pc)
            depth[0] += 1 if kind == "jal" else -1 if kind == "ret" else 0
            return here
        steps = self._issue_scan(core, value)

        def scan(limit):
            c = self.s.core(core)
            start = self.s.cycle
            if not (over and limit is not None and c.state == "running" and self.s.is_call(c.pc)
                    and start not in inside):
                return steps(limit)
            back = (c.pc + 1, self.s.registers(core)[SPECIAL_REGS["fp"]])
            saved = (depth[0], before[0])
            self.s.step_instruction(core, limit)
            if self.s.cycle < limit:
                self.s.run_to_return(core, *back, limit)
            c = self.s.core(core)
            if self.s.cycle < limit and c.state == "running" and c.pc == back[0]:
                depth[0] -= 1                       # back in the frame of the call
                return value(c, False)
            inside.add(start)                       # `limit` lies inside it: step through it
            self.s.goto(start)
            depth[0], before[0] = saved
            return steps(limit)
        return scan, depth

    def do_reverse_step(self, args):
        self._args(args, 0, "reverse-step")
        if self.debug is None or not self.debug.rows:
            return self.do_reverse_stepi(args)
        scan, _ = self._line_scan(self.current)

        def pick(stops):
            return next(((cycle, v) for cycle, v in reversed(stops) if v[1]), None)
        self._reverse(scan, pick, what="entered no source line")

    def do_reverse_next(self, args):
        self._args(args, 0, "reverse-next")
        if self.debug is None or not self.debug.rows:
            return self.do_reverse_stepi(args)
        scan, depth = self._line_scan(self.current, over=True)

        def pick(stops):
            """The last line entered in this frame or an outer one: not inside a call that has
            returned since (the path after it drops below its depth)."""
            at_end = lowest = depth[0]
            for cycle, (d, enters) in reversed(stops):
                if enters and d <= at_end and lowest >= d:
                    return cycle, d
                lowest = min(lowest, d)
            return None
        self._reverse(scan, pick, what="entered no source line in this function")

    def do_reverse_continue(self, args):
        self._args(args, 0, "reverse-continue")
        self._history()
        start = self.s.cycle

        def scan(limit):
            if limit is None:
                here = self.s.standing()
                return Stop(self.s.cycle, ("break",), here) if here and self.s.cycle < start else None
            stop = self.s.run_until(limit)
            return stop if (stop.breaks or stop.watches) and stop.cycle < limit else None
        got = self.s.last_before(scan, start)
        self._back()
        if got is None:
            self.s.goto(0)
            self._back()
            self.out(f"no breakpoint or watch stopped the run before cycle {start}: back at its start")
            self.out(f"cycle {self.s.cycle}")
            return
        self._show_stop(got)

    # -- looking inside -------------------------------------------------------------------------
    def do_core(self, args):
        self._args(args, 1, "core [N]")
        if args:
            self.current = self.s.check_core(_number(args[0], "N"))
        c = self.s.core(self.current)
        self.out(f"core {self.current}: {c.state} at pc {c.pc} ({self.s.where(c.pc)}): {self.ins.text(c.pc)}")
        rz = self._rz_line(c.pc)
        if rz:
            self.out(f"  {rz}")

    def do_backtrace(self, args):
        self._args(args, 0, "backtrace")
        self._need_debug("backtrace")
        core = self.current
        regs = self.s.registers(core)
        pc, fp = self.s.core(core).pc, regs[SPECIAL_REGS["fp"]]
        for depth in range(64):
            func = self.debug.func_at(pc)
            if func is None:
                if depth == 0:
                    self.out(f"#0  pc {pc} ({self.s.where(pc)}): outside the program's functions")
                return
            line = self.debug.line_at(pc)
            args = ""
            if depth == 0:
                params = self.debug.locals(func)[:func.params]
                args = ", ".join(f"{v.name}={self._shown(v.name)}" for v in params)
            self.out(f"#{depth}  {func.name} ({args}) at {self._file}:{line or func.line}")
            if pc < func.body or line is None:       # entry or exit code: fp and rads are moving
                self.out("(the calls above are not known while a function enters or leaves)")
                return
            if func.frame:     # its return address at fp + 0; its caller's fp below its frame
                ra = self.s.read(fp, 1)[0] if self._placed(fp, "data") else -1
                fp -= func.frame
            elif depth == 0:   # a leaf keeps the return address in rads
                ra = regs[SPECIAL_REGS["rads"]]
            else:
                return
            pc = ra - 1        # the call
            if not self._placed(pc, "code") or not self.s.is_call(pc):
                return

    def _return_point(self, core: int, func) -> tuple[int, int] | None:
        """Where a function returns to and the caller's fp, from its frame (in its body), or
        None where that is not known (no debug information, entry or exit code)."""
        pc = self.s.core(core).pc
        if func is None or pc < func.body or self.debug.line_at(pc) is None:
            return None
        regs = self.s.registers(core)
        fp = regs[SPECIAL_REGS["fp"]]
        if not func.frame:
            return regs[SPECIAL_REGS["rads"]], fp
        if not self._placed(fp, "data"):
            return None
        return self.s.read(fp, 1)[0], fp - func.frame

    def _placed(self, addr: int, kind: str) -> bool:
        """Whether the one address check takes addr (a frame pointer or a return address read
        from a frame need not be one while a function enters or leaves)."""
        try:
            self.s.place(addr, kind)
        except S2mcError:
            return False
        return True

    def do_regs(self, args):
        self._args(args, 1, "regs [CORE]")
        core = _number(args[0], "CORE") if args else self.current
        regs = self.s.registers(core)
        c = self.s.core(core)
        self.out(f"core {core}, cycle {self.s.cycle}, pc {c.pc} ({self.s.where(c.pc)}), {c.state}")
        for row in range(0, 32, 4):
            self.out("  ".join(f"r{i:<2} {show(regs[i]):>11}" for i in range(row, row + 4)))

    def do_mem(self, args):
        if len(args) not in (1, 2):
            raise S2mcError("usage: mem ADDR|SYMBOL [N]")
        n = _number(args[1], "N", 1) if len(args) == 2 else 1
        start = self.s.place(args[0], "data")
        words = self.s.read(start, n)
        width = max(len(self.ins.symbols.data(a)) for a in range(start, start + n))
        for i, w in enumerate(words):
            self.out(f"{start + i:>8}  {self.ins.symbols.data(start + i):<{width}}  {show(w)}")

    def do_cache(self, args):
        """`cache`, `cache core N` or `cache ADDR|SYMBOL`."""
        self._args(args, 2, "cache [core N | ADDR|SYMBOL]")
        cfg = self.s.config
        if not cfg.cached:
            raise S2mcError("this machine has no caches (run s2mc debug with --cache msi|mesi|moesi|dragon)")
        W, ways = cfg.line_words, cfg.cache_ways
        sets = cfg.cache_lines // ways
        if args and args[0].lower() != "core":
            self._args(args, 1, "cache ADDR|SYMBOL")
            a = self.s.place(args[0], "data")
            base = a - a % W
            held = [(core, slot[1]) for core in range(cfg.cores) for slot in self.s.cache(core)
                    if slot is not None and slot[0] == base]
            where = (f"address {a} ({self.ins.symbols.data(a)}): line {base}..{base + W - 1}, "
                     f"set {(a // W) % sets}")
            self.out(f"{where}: " + (", ".join(f"core {c} {state}" for c, state in held) if held
                                     else "in no cache"))
            return
        if args and len(args) != 2:
            raise S2mcError("usage: cache core N")
        cores = [_number(args[1], "N")] if args else range(cfg.cores)
        for core in cores:
            lines = [(i, slot) for i, slot in enumerate(self.s.cache(core)) if slot is not None]
            # a network's copies hold their own words; the bus machine's caches hold states only
            own = self.s.cache_words(core) if cfg.networked else None
            self.out(f"core {core}: {cfg.cache.upper()}, {len(lines)} of {cfg.cache_lines} lines valid "
                     f"({sets} sets x {ways} ways, {W} words a line" + (", the copy's own words)" if own else ")"))
            for i, (base, state) in lines:
                words = own[i] if own else self.s.read(base, min(W, cfg.mem_words - base))
                data = " ".join(show(w) for w in words)
                self.out(f"  set {i // ways:>4} way {i % ways:>2}  line {base:>6} "
                         f"{self.ins.symbols.data(base):<12} {state:<2}  {data}")

    # expressions of p and x: sums of terms; a term is a number, $reg, a variable (its value), a
    # label (a data label's word, a code label's address), NAME[i], *TERM, &NAME, (EXPR), -TERM
    _NUMBER = re.compile(r"0x[0-9a-fA-F]+|\d+")
    _TOKEN = re.compile(rf"\s*({_NUMBER.pattern}|\$\w+|[A-Za-z_.][\w.]*|[-+*&()\[\]])")

    def _variable(self, name: str, quiet: bool = False):
        if self.debug is None:
            return None
        func = self.debug.func_at(self.s.core(self.current).pc)
        var = self.debug.variable(name, func)
        if var is None and not quiet and self.program.symbols.get(name.lower()) is None:
            if any(v.name == name.lower() for v in self.debug.vars):
                scope = f"{func.name}()" if func else f"pc {self.s.core(self.current).pc}, outside every function"
                raise S2mcError(f"'{name}' is not in scope at core {self.current}'s {scope}")
        return var

    def _evaluate(self, text: str):
        """The value of an expression: an int, or a list of ints (an array)."""
        tokens = self._TOKEN.findall(text)
        if "".join(tokens) != re.sub(r"\s+", "", text) or not tokens:
            raise S2mcError(f"cannot read the expression '{text}'")
        pos = [0]

        def peek():
            return tokens[pos[0]] if pos[0] < len(tokens) else None

        def take(want=None):
            t = peek()
            if t is None or (want is not None and t != want):
                raise S2mcError(f"expected {want or 'more'} in '{text}'")
            pos[0] += 1
            return t

        def scalar(v):
            if isinstance(v, list):
                raise S2mcError(f"an array where a number is needed in '{text}'")
            return v

        def word(addr):             # the address as written: the memory's one check takes it or not
            return self.s.read(scalar(addr), 1)[0]

        def operand(v):             # arithmetic is on words: a number past 32 bits is refused, not cut
            v = scalar(v)
            word_bits(v, f"{v} in '{text}'")
            return v

        def sum_():
            v = term()
            while peek() in ("+", "-"):
                op = take()
                a, b = operand(v), operand(term())
                v = wrap(a + b if op == "+" else a - b)
            return v

        def term():
            t = take()
            if t == "(":
                v = sum_()
                take(")")
                return v
            if t == "-" and self._NUMBER.fullmatch(peek() or ""):
                return -int(take(), 0)      # a negative number as written: a word or refused, not wrapped
            if t == "-":
                return wrap(-operand(term()))
            if t == "*":
                return word(term())
            if t == "&":
                name = take()
                var = self._variable(name)
                if var is not None:
                    if var.kind == "reg":
                        raise S2mcError(f"'{name}' lives in {var.place()}: it has no address")
                    if var.kind == "frame":
                        return self.s.registers(self.current)[SPECIAL_REGS["fp"]] + var.where
                    return var.where
                return self.s.place(name, "data")
            if t.startswith("$"):
                return self._register(t[1:])
            if self._NUMBER.fullmatch(t):
                return int(t, 0)
            v = self._name(t)
            if peek() == "[":
                take("[")
                i = scalar(sum_())
                take("]")
                if isinstance(v, tuple):        # an array: (address, words)
                    if not 0 <= i < v[1]:
                        raise S2mcError(f"index {i} is outside {t}[0..{v[1] - 1}]")
                    return word(v[0] + i)
                return word(scalar(v) + i)      # a pointer: p[i] == *(p + i)
            if isinstance(v, tuple):
                return self.s.read(v[0], v[1])
            return v

        v = sum_()
        if peek() is not None:
            raise S2mcError(f"unexpected '{peek()}' in '{text}'")
        return v

    def _register(self, name: str) -> int:
        name = name.lower()
        core = self.current
        if name == "pc":
            return self.s.core(core).pc
        if name == "cycle":
            return self.s.cycle
        m = re.fullmatch(r"r(\d+)", name)
        n = int(m[1]) if m else SPECIAL_REGS.get(name)
        if n is None or not 0 <= n < 32:
            raise S2mcError(f"no register ${name} (r0..r31, pc, sp, fp, rads, retval, cycle)")
        return self.s.registers(core)[n]

    def _name(self, name: str):
        """A variable's value ((address, words) for an array), else a label's."""
        var = self._variable(name)
        core = self.current
        if var is not None:
            if var.kind == "reg":
                return self.s.registers(core)[var.where]
            if var.kind == "frame":
                return self.s.read(self.s.registers(core)[SPECIAL_REGS["fp"]] + var.where, 1)[0]
            return (var.where, var.words) if var.words > 1 else self.s.read(var.where, 1)[0]
        sym = self.program.symbols.get(name.lower())
        if sym is None:
            where = ""
            if self.debug is not None:
                func = self.debug.func_at(self.s.core(core).pc)
                where = f" in {func.name}() or among the globals" if func else " among the globals"
            raise S2mcError(f"no variable or label '{name}'{where}")
        if sym.kind == "data":
            return self.s.read(sym.value, 1)[0]
        return sym.value

    def _shown(self, name: str) -> str:
        """A variable's value as print shows it (an array: all its words)."""
        v = self._name(name)
        return "{" + ", ".join(show(w) for w in self.s.read(*v)) + "}" if isinstance(v, tuple) else show(v)

    def do_print(self, args, fmt=""):
        if not args:
            raise S2mcError("usage: print[/FMT] EXPR")
        if fmt and fmt not in FORMATS:
            raise S2mcError(f"unknown format '/{fmt}' ({' '.join(FORMATS)})")
        expr = " ".join(args)
        v = self._evaluate(expr)
        f = fmt or "d"
        if isinstance(v, list):
            self.out(f"{expr} = {{" + ", ".join(show(w, f) for w in v) + "}")
        else:
            self.out(f"{expr} = {show(v, f)}")

    def do_x(self, args, fmt=""):
        m = re.fullmatch(rf"(\d*)([{''.join(FORMATS)}i]?)", fmt or "")
        if not m:
            raise S2mcError(f"unknown format '/{fmt}' (a count, then {' '.join(FORMATS)} or i; words only)")
        if not args:
            if self._x_next is None:
                raise S2mcError("usage: x[/NFMT] ADDR")
            start, f, n = self._x_next
            if m[1]:
                n = int(m[1])
            f = m[2] or f
        else:
            n, f = int(m[1] or 1), m[2] or "x"
            v = self._evaluate(" ".join(args))
            if isinstance(v, list):                 # an array's name: its words
                v = self._variable(args[0]).where if self._variable(args[0], quiet=True) else v[0]
            start = v                       # as written: the one address check below takes it or not
        if n < 1:
            raise S2mcError("the count must be at least 1")
        if f == "i":
            for pc in range(self.s.place(start, "code", n), start + n):
                self.out(f"{pc:>8} <{self.s.where(pc)}>:  {self.ins.text(pc)}")
        else:
            words = self.s.read(start, n)
            for i in range(0, n, 4):
                a = start + i
                self.out(f"{a:>8} <{self.ins.symbols.data(a)}>:  " + "  ".join(show(w, f) for w in words[i:i + 4]))
        self._x_next = (start + n, f, n)

    def do_list(self, args):
        self._args(args, 1, "list [LINE|FUNCTION]")
        self._need_debug("list")
        if self.source is None:
            raise S2mcError(f"cannot read the source file '{self._file}' (no source was given)")
        if args:
            spec = args[0]
            func = self.debug.function(spec)
            if func is not None:
                center = func.line
            else:
                line = self._line_spec(spec)
                if line is None:
                    raise S2mcError(f"no function '{spec}' and not a line number")
                if not 1 <= line <= len(self.source):
                    raise S2mcError(f"line {line} is outside {self._file} (1..{len(self.source)})")
                center = line
            first = max(1, center - 5)
        elif self._previous == "list" and self._list_next is not None:
            first = self._list_next
        else:
            line = self.debug.line_at(self.s.core(self.current).pc)
            if line is None:
                main = self.debug.function("main")
                line = main.line if main else 1
            first = max(1, line - 5)
        if first > len(self.source):
            raise S2mcError(f"line {first} is past the end of {self._file} ({len(self.source)} lines)")
        last = min(len(self.source), first + 9)
        for n in range(first, last + 1):
            self.out(f"{n:<5}{self.source[n - 1]}")
        self._list_next = last + 1

    def do_disas(self, args):
        self._args(args, 1, "disas [FUNCTION|LABEL|PC]")
        pc = self.s.place(args[0], "code") if args else self.s.core(self.current).pc
        func = self.debug.func_at(pc) if self.debug else None
        if func is not None:
            lo, hi = func.lo, func.hi
        else:                 # from the label at or before pc to the next code label
            labels = sorted(s.value for s in self.program.symbols.values() if s.kind == "code")
            lo = max((v for v in labels if v <= pc), default=0)
            hi = min((v for v in labels if v > pc), default=self.program.top("code"))
        here = self.s.core(self.current).pc
        self.out(f"instructions of {func.name if func else self.s.where(lo)} (pc {lo}..{hi - 1}):")
        for p in range(lo, hi):
            if self.debug is not None and self.debug.row_start(p):
                line = self.debug.line_at(p)
                self.out(f"{self._file}:{line}: {self._src(line)}".rstrip(": "))
            mark = "=>" if p == here else "  "
            self.out(f"{mark}{p:>6} <{self.s.where(p)}>:  {self.ins.text(p)}")

    def do_bus(self, args):
        self._args(args, 0, "bus")
        b = self.s.bus()
        if b.holder is None:
            self.out(f"cycle {self.s.cycle}: the bus is free")
        else:
            # a granted access has moved its core's pc on by one
            access = "a drain of its store buffer" if b.drain else self.ins.text(self.s.core(b.holder).pc - 1)
            self.out(f"cycle {self.s.cycle}: core {b.holder} holds the bus since cycle {b.granted} for "
                     f"{access} (free from cycle {b.free_at})")
        for core, since, address in b.waiting:
            self.out(f"  waiting: core {core} since cycle {since} ({self.s.cycle - since} cycles) for address "
                     f"{address} ({self.ins.symbols.data(address)}): {self.ins.text(self.s.core(core).pc)}")
        drains = [(core, e) for core in range(self.s.config.cores) if self.s.config.buffered
                   for e in self.s.store_buffer(core) if e.state == "bus"]
        for core, e in drains:
            self.out(f"  waiting: core {core}'s store buffer since cycle {e.drain_since} to drain {show(e.value)} to "
                     f"address {e.address} ({self.ins.symbols.data(e.address)}): {self.ins.text(e.pc)}")
        if not b.waiting and not drains:
            self.out("  nobody waits")

    def _held_for(self, pc: int) -> str:
        """Why a held core waits: a store for room in its buffer, the others for it to drain."""
        return ("until its store buffer has room" if self.ins.bus_class(pc) == "write"
                else "until its store buffer has drained")

    def do_dir(self, args):
        """`dir ADDR|SYMBOL`: the line's directory entry at its home, its copies, the home's queue."""
        if len(args) != 1:
            raise S2mcError("usage: dir ADDR|SYMBOL")
        s = self.s
        v = s.line(args[0])
        a = s.place(args[0], "data")
        W = s.config.line_words
        entry = f"directory state {v.state}" + (f", owner core {v.owner}" if v.owner is not None else "") + \
            (", sharers " + " ".join(f"core {k}" for k in v.sharers) if v.sharers else ", no sharers")
        self.out(f"address {a} ({self.ins.symbols.data(a)}): line {v.line} (words {v.address}..{v.address + W - 1}), "
                 f"home tile {v.home}: {entry}")
        copies = [f"core {k} {st}" + (" (evicting)" if place == "evicting" else "") for k, st, place in v.copies]
        self.out("  copies: " + (", ".join(copies) if copies else "in no cache"))
        busy = f"busy until cycle {v.home_free - 1}" if v.home_free > s.cycle else "free"
        self.out(f"  home tile {v.home}: {busy}, {len(v.queue)} message{'s' if len(v.queue) != 1 else ''} queued"
                 + (":" if v.queue else ""))
        for kind, src, _, line, requester in v.queue:
            self.out(f"    {kind} from tile {src} for line {line}" + (f" (for core {requester})" if requester != src else ""))

    def do_net(self, args):
        """`net`: the messages in the network, then those the homes and the controllers hold."""
        self._args(args, 0, "net")
        s = self.s
        messages = s.messages()
        self.out(f"cycle {s.cycle}: {len(messages)} message{'s' if len(messages) != 1 else ''} in the "
                 f"{s.config.interconnect}")
        for m in messages:
            if m.arriving:
                where = f"arriving at tile {m.dst} in cycle {m.delivered}"
            elif m.ready > s.cycle:
                where = f"at router {m.router}, ready for port {m.port} in cycle {m.ready}"
            else:
                where = f"at router {m.router}, waiting for port {m.port} since cycle {m.ready}"
            self.out(f"  {m.kind:<8} {m.src:>3} -> {m.dst:<3} line {m.line:<6} "
                     + (f"for core {m.requester}, " if m.requester != m.src else "") + where)
        for h in range(s.config.cores):
            for kind, src, _, line, requester in s.home_queue(h):
                self.out(f"  {kind:<8} {src:>3} -> {h:<3} line {line:<6} queued at home tile {h}")
        for k in range(s.config.cores):
            for kind, src, _, line, requester in s.stalled(k):
                self.out(f"  {kind:<8} {src:>3} -> {k:<3} line {line:<6} held by core {k}'s controller "
                         "until its own miss is done")

    def do_sb(self, args):
        """`sb` or `sb CORE`: store buffers, oldest entry first."""
        self._args(args, 1, "sb [CORE]")
        cores = [self.s.check_core(_number(args[0], "CORE"))] if args else range(self.s.config.cores)
        cfg = self.s.config
        for core in cores:
            entries = self.s.store_buffer(core)
            c = self.s.core(core)
            held = f"; core {core} is held at {self.ins.text(c.pc)} since cycle {c.since} {self._held_for(c.pc)}" \
                if c.state == "held" else ""
            used = f"{len(entries)} of {cfg.store_buffer_entries} entries" if entries else "empty"
            self.out(f"core {core}: store buffer {used} ({cfg.consistency}, {cfg.store_buffer_entries} entries)"
                     f"{held}")
            for i, e in enumerate(entries):
                note = {"bus": f"; its drain waits for the bus since cycle {e.drain_since}",
                        "next": f"; drains next (from cycle {e.drain_since})", "": ""}[e.state]
                self.out(f"  {i}: address {e.address} ({self.ins.symbols.data(e.address)}) = {show(e.value)}, "
                         f"entered cycle {e.since}: {self.ins.text(e.pc)} at pc {e.pc} ({self.s.where(e.pc)}){note}")
                rz = self._rz_line(e.pc)
                if rz:
                    self.out(f"     {rz}")

    def do_cycle(self, args):
        self._args(args, 0, "cycle")
        self.out(f"cycle {self.s.cycle}")

    def do_info(self, args):
        self._args(args, 1, "info [locals|breakpoints|registers|line|cores|machine]")
        what = args[0].lower() if args else "all"
        handlers = {"locals": self._info_locals, "breakpoints": self._info_breaks, "break": self._info_breaks,
                    "registers": lambda: self.do_regs([]), "line": self._info_line, "cores": self._info_cores,
                    "machine": self._info_machine, "all": lambda: (self._info_cores(), self._info_breaks())}
        if what not in handlers:
            raise S2mcError(f"info has no '{args[0]}' (locals, breakpoints, registers, line, cores, machine)")
        handlers[what]()

    def _info_machine(self):
        cfg = self.s.config
        self.out(f"{cfg.cores} cores, {cfg.mem_words} words of memory, memory latency {_cycles(cfg.mem_latency)}, "
                 f"consistency {cfg.consistency}")
        if cfg.networked:
            from .network import Topology
            topo = Topology(cfg.interconnect, cfg.cores)
            shape = f"ring of {topo.tiles} tiles" if topo.kind == "ring" else f"mesh of {topo.columns}x{topo.rows} routers"
            self.out(f"interconnect {cfg.interconnect} ({shape}; router latency {_cycles(cfg.router_latency)}, "
                     f"link latency {_cycles(cfg.link_latency)}, {_plural(cfg.flit_words, 'word')} a flit), coherence "
                     f"{cfg.coherence} (each line's home: tile line mod {cfg.cores})")
        else:
            self.out(f"interconnect {cfg.interconnect} (arbitration {cfg.arbitration}), coherence {cfg.coherence}")
        if cfg.cached:
            self.out(f"cache {cfg.cache}: {cfg.cache_lines} lines, {cfg.cache_ways} ways, {cfg.line_words} words a "
                     f"line, hit latency {_cycles(cfg.cache_hit_latency)}")
        else:
            self.out("no caches")
        if cfg.buffered:
            self.out(f"store buffers of {cfg.store_buffer_entries} entries")

    def _info_cores(self):
        self.out(f"cycle {self.s.cycle}" + (" (the run has ended)" if self.s.done else ""))
        for c in self.s.cores():
            what = {"running": "issues it now",
                    "bus": f"on the bus since cycle {c.since} for {self.ins.text(c.pc - 1)}, "
                           f"issues this next at {c.next_issue}",
                    "waiting": (f"waits for its miss since cycle {c.since} (address {c.address})" if self.s.networked
                                else f"waits for the bus since cycle {c.since} (address {c.address})"),
                    "hit": f"hit its cache in cycle {c.since} for {self.ins.text(c.pc - 1)}, issues this next at "
                           f"{c.next_issue}",
                    "sync": f"waits at the barrier since cycle {c.since}",
                    "held": f"held back since cycle {c.since} {self._held_for(c.pc)}, tries again now",
                    "halted": f"halted in cycle {c.since}",
                    "stopped": "stopped"}[c.state]
            line = self.debug.line_at(c.pc) if self.debug else None
            at = f" [{self._file}:{line}]" if line else ""
            self.out(f"core {c.core}: {c.state:<8} pc {c.pc} ({self.s.where(c.pc)}): {self.ins.text(c.pc)}; {what}{at}")

    def _info_breaks(self):
        for n, (pc, core) in sorted(self.s.breakpoints.items()):
            line = self.debug.line_at(pc) if self.debug else None
            self.out(f"breakpoint {n}: pc {pc} ({self.s.where(pc)}), "
                     f"{'every core' if core is None else f'core {core}'}"
                     + (f", {self._file}:{line}" if line else ""))
        for n, a in sorted(self.s.watches.items()):
            self.out(f"watch {n}: address {a} ({self.ins.symbols.data(a)})")

    def _info_locals(self):
        self._need_debug("info locals")
        pc = self.s.core(self.current).pc
        func = self.debug.func_at(pc)
        if func is None:
            raise S2mcError(f"core {self.current} is at pc {pc} ({self.s.where(pc)}), outside the program's functions")
        if pc < func.body:
            self.out(f"(core {self.current} is in {func.name}()'s entry code: the locals are not in place yet)")
        local = self.debug.locals(func)
        if not local:
            self.out(f"{func.name}() has no locals")
        for v in local:
            self.out(f"{v.name} = {self._shown(v.name)}    ({v.place()})")

    def _info_line(self):
        self._need_debug("info line")
        pc = self.s.core(self.current).pc
        line = self.debug.line_at(pc)
        if line is None:
            self.out(f"pc {pc} ({self.s.where(pc)}) has no source line")
            return
        _, pcs = self.debug.locations(line)
        self.out(f"line {line} of {self._file} starts at pc " + ", ".join(
            f"{p} ({self.s.where(p)})" for p in pcs) + f"; core {self.current} is at pc {pc}")

    def do_output(self, args):
        self._args(args, 0, "output")
        text = self.s.output
        for line in text.splitlines():
            self.out(f"[output] {line}")
        self._printed = len(text)

    def do_help(self, args):
        for line in help_text().splitlines():
            self.out(line)
