"""A small gdb-like command interpreter over a Stepper (`s2mc debug`, docs/debugger.md).

    d = Debugger(Stepper(program, cores=2), out=print, err=print)
    d.execute("break acquire core 1")     # False once the command was `quit`
    d.execute("continue")

Every command prints what it did or one line saying why it could not; the interpreter never
raises for a bad command, so a script (or a person) goes on with the next one.
"""
from __future__ import annotations

from typing import Callable

from s2mc.common.errors import S2mcError

from . import SimFault
from .stepping import Stop, Stepper
from .trace import Instructions

HELP = """\
commands (a cycle is the machine's state before anything of that cycle happens):
  break LABEL|PC [core N]   stop when a core (or core N) is about to issue the instruction there
  watch ADDR|SYMBOL         stop after a write (st, push, xchg) to that word
  delete N                  remove breakpoint or watch N
  step [N]                  advance N cycles (1), or to an earlier breakpoint or watch
  continue                  advance to the next breakpoint or watch, or to the end
  until CYCLE               advance to that cycle, or to an earlier breakpoint or watch
  regs [CORE]               the registers of a core (the last one stopped, else 0)
  mem ADDR|SYMBOL [N]       N words of memory (1)
  bus                       who holds the bus, since when, and who waits for it
  cache [core N]            each valid line of every cache (or core N's): set, way, base, state, data
  cache ADDR|SYMBOL         which cores hold that address's line, and in what state
  cycle                     the current cycle
  info                      every core's state and pc; the breakpoints and watches
  output                    what the program has printed so far
  help                      this list
  quit                      leave (end of input too)
short forms: b, w, d, s, c, u, r, m, i, h, q"""

ALIASES = {"b": "break", "w": "watch", "d": "delete", "s": "step", "c": "continue", "cont": "continue",
           "u": "until", "r": "regs", "m": "mem", "i": "info", "h": "help", "?": "help", "q": "quit",
           "exit": "quit"}


def _number(text: str, what: str, lo: int = 0) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise S2mcError(f"{what} must be a number, not '{text}'") from None
    if value < lo:
        raise S2mcError(f"{what} must be at least {lo}, not {value}")
    return value


class Debugger:
    """Executes debugger commands on a Stepper; `out` and `err` each take one line of text."""

    def __init__(self, stepper: Stepper, out: Callable[[str], None], err: Callable[[str], None]):
        self.s = stepper
        self.out, self.err = out, err
        self.ins = Instructions(stepper.program)
        self.current = 0            # the core regs shows by default: the last one that stopped
        self._printed = 0           # how much of the program's output has been shown

    # -- the interpreter ------------------------------------------------------------------------
    def execute(self, line: str) -> bool:
        """Runs one command line; False when it was `quit`."""
        words = line.split()
        if not words or words[0].startswith("#"):
            return True
        name = ALIASES.get(words[0].lower(), words[0].lower())
        if name == "quit":
            return False
        handler = getattr(self, f"do_{name}", None)
        if handler is None:
            self.err(f"unknown command '{words[0]}' (help lists the commands)")
            return True
        try:
            handler(words[1:])
        except SimFault as fault:
            self._show_output(final=True)
            self.err(str(fault))
        except S2mcError as exc:
            self.err(f"{name}: {exc}")
        return True

    def _args(self, args: list[str], most: int, usage: str) -> None:
        if len(args) > most:
            raise S2mcError(f"too many arguments (usage: {usage})")

    # -- breakpoints ----------------------------------------------------------------------------
    def do_break(self, args):
        usage = "break LABEL|PC [core N]"
        if not args or len(args) not in (1, 3) or (len(args) == 3 and args[1].lower() != "core"):
            raise S2mcError(f"usage: {usage}")
        core = _number(args[2], "core") if len(args) == 3 else None
        n = self.s.add_break(args[0], core)
        pc = self.s.breakpoints[n][0]
        who = f"core {core}" if core is not None else "every core"
        self.out(f"breakpoint {n} at pc {pc} ({self.s.where(pc)}: {self.ins.text(pc)}), {who}")

    def do_watch(self, args):
        if len(args) != 1:
            raise S2mcError("usage: watch ADDR|SYMBOL")
        n = self.s.add_watch(args[0])
        a = self.s.watches[n]
        self.out(f"watch {n} on writes to address {a} ({self.ins.symbols.data(a)})")

    def do_delete(self, args):
        if len(args) != 1:
            raise S2mcError("usage: delete N")
        self.s.delete(_number(args[0], "N"))
        self.out(f"deleted {args[0]}")

    # -- advancing ------------------------------------------------------------------------------
    def do_step(self, args):
        self._args(args, 1, "step [N]")
        self._show_stop(self.s.step(_number(args[0], "N", 1) if args else 1))

    def do_continue(self, args):
        self._args(args, 0, "continue")
        self._show_stop(self.s.cont())

    def do_until(self, args):
        if len(args) != 1:
            raise S2mcError("usage: until CYCLE")
        self._show_stop(self.s.run_until(_number(args[0], "CYCLE")))

    def _show_stop(self, stop: Stop) -> None:
        self._show_output(final="end" in stop.reasons)
        if "end" in stop.reasons:
            res = self.s.result
            self.out(f"the program ended at cycle {res.cycles}: {res.instructions} instructions, "
                     f"{res.stall_cycles} stall cycles, bus utilisation {res.bus_utilisation:.1%}")
            return
        for n, w in stop.watches:
            self.current = w.core
            self.out(f"watch {n}: core {w.core} wrote {w.after} to address {w.address} "
                     f"({self.ins.symbols.data(w.address)}; was {w.before}) in cycle {w.cycle}: "
                     f"{self.ins.text(w.pc)} at pc {w.pc} ({self.s.where(w.pc)})")
        for n, core, pc in stop.breaks:
            self.current = core
            self.out(f"breakpoint {n}: core {core} at pc {pc} ({self.s.where(pc)}): {self.ins.text(pc)}")
        self.out(f"cycle {stop.cycle}")

    def _show_output(self, final: bool = False) -> None:
        """The lines the program completed since the last look (at the end, the rest too)."""
        text = self.s.output
        upto = len(text) if final else text.rfind("\n") + 1
        new, self._printed = text[self._printed:upto], max(upto, self._printed)
        for line in new.splitlines():
            self.out(f"[output] {line}")

    # -- looking inside -------------------------------------------------------------------------
    def do_regs(self, args):
        self._args(args, 1, "regs [CORE]")
        core = _number(args[0], "CORE") if args else self.current
        regs = self.s.registers(core)
        c = self.s.core(core)
        self.out(f"core {core}, cycle {self.s.cycle}, pc {c.pc} ({self.s.where(c.pc)}), {c.state}")
        for row in range(0, 32, 4):
            self.out("  ".join(f"r{i:<2} {regs[i]:>11}" for i in range(row, row + 4)))

    def do_mem(self, args):
        if len(args) not in (1, 2):
            raise S2mcError("usage: mem ADDR|SYMBOL [N]")
        n = _number(args[1], "N", 1) if len(args) == 2 else 1
        start = self.s.place(args[0], "data")
        words = self.s.read(start, n)
        width = max(len(self.ins.symbols.data(a)) for a in range(start, start + n))
        for i, w in enumerate(words):
            self.out(f"{start + i:>8}  {self.ins.symbols.data(start + i):<{width}}  {w}")

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
            self.out(f"core {core}: {cfg.cache.upper()}, {len(lines)} of {cfg.cache_lines} lines valid "
                     f"({sets} sets x {ways} ways, {W} words a line)")
            for i, (base, state) in lines:
                data = " ".join(str(w) for w in self.s.read(base, min(W, cfg.mem_words - base)))
                self.out(f"  set {i // ways:>4} way {i % ways:>2}  line {base:>6} "
                         f"{self.ins.symbols.data(base):<12} {state:<2}  {data}")

    def do_bus(self, args):
        self._args(args, 0, "bus")
        b = self.s.bus()
        if b.holder is None:
            self.out(f"cycle {self.s.cycle}: the bus is free")
        else:
            # a granted access has moved its core's pc on by one
            access = self.ins.text(self.s.core(b.holder).pc - 1)
            self.out(f"cycle {self.s.cycle}: core {b.holder} holds the bus since cycle {b.granted} for "
                     f"{access} (free from cycle {b.free_at})")
        for core, since, address in b.waiting:
            self.out(f"  waiting: core {core} since cycle {since} ({self.s.cycle - since} cycles) for address "
                     f"{address} ({self.ins.symbols.data(address)}): {self.ins.text(self.s.core(core).pc)}")
        if not b.waiting:
            self.out("  nobody waits")

    def do_cycle(self, args):
        self._args(args, 0, "cycle")
        self.out(f"cycle {self.s.cycle}")

    def do_info(self, args):
        self._args(args, 0, "info")
        self.out(f"cycle {self.s.cycle}" + (" (the run has ended)" if self.s.done else ""))
        for c in self.s.cores():
            what = {"running": "issues it now",
                    "bus": f"on the bus since cycle {c.since} for {self.ins.text(c.pc - 1)}, "
                           f"issues this next at {c.next_issue}",
                    "waiting": f"waits for the bus since cycle {c.since} (address {c.address})",
                    "sync": f"waits at the barrier since cycle {c.since}",
                    "halted": f"halted in cycle {c.since}",
                    "stopped": "stopped"}[c.state]
            self.out(f"core {c.core}: {c.state:<8} pc {c.pc} ({self.s.where(c.pc)}): {self.ins.text(c.pc)}; {what}")
        for n, (pc, core) in sorted(self.s.breakpoints.items()):
            self.out(f"breakpoint {n}: pc {pc} ({self.s.where(pc)}), "
                     f"{'every core' if core is None else f'core {core}'}")
        for n, a in sorted(self.s.watches.items()):
            self.out(f"watch {n}: address {a} ({self.ins.symbols.data(a)})")

    def do_output(self, args):
        self._args(args, 0, "output")
        text = self.s.output
        for line in text.splitlines():
            self.out(f"[output] {line}")
        self._printed = len(text)

    def do_help(self, args):
        for line in HELP.splitlines():
            self.out(line)
