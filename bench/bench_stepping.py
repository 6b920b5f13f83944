"""Benchmark: what stepping costs (s2mc.simulator.stepping, docs/debugger.md), and why the debugger
steps the fast engine rather than the cycle-stepped reference model.

- a whole run of bench_fast.py's loop (4 cores): Machine.run, a Stepper's finish(), a cont() with
  a watch that is never met (the loop that checks breakpoints and watches), a cont() to a
  breakpoint on the last core's halt (that loop, then the rerun to the breakpoint) and the same run
  cut into 1000 run_until pauses;
- the reference model's speed on the same loop (cycles per second, on a shorter run), and what that
  makes of the whole run;
- one `step` at the prompt: without breakpoints, and with one (each breaking advance copies the
  machine's state first, so it costs about one copy of the memory: 4 MiB by default);
- going back (the debugger's history: 64 MiB of checkpoints, the default 1M-word memory): a whole
  run recorded against one not recorded, `goto` to the middle of the run, and from the end
  `reverse-stepi` and `reverse-continue` to a breakpoint in the middle; `next` over the call
  f = fib(20) of fib.rz (21,891 calls: one engine run to a return trap) and `reverse-next` back;
- with TSO store buffers (docs/debugger.md, "Store buffers"): Machine.run, finish() and a cont()
  with a watch never met, which runs the buffered loop with no core running ahead.

Run: make bench   (or .venv/bin/python bench/bench_stepping.py)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fast import LOOP  # noqa: E402

from s2mc.isa import assemble  # noqa: E402
from s2mc.simulator import Machine  # noqa: E402
from s2mc.simulator.reference import ReferenceMachine  # noqa: E402
from s2mc.simulator.stepping import Stepper  # noqa: E402

CORES = 4
CFG = dict(cores=CORES, mem_words=1 << 16, max_cycles=1 << 40)


def best(fn, repeat: int = 9) -> float:
    """Best host CPU seconds of `repeat` calls (process time: less disturbed by other load)."""
    times = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        times.append(time.process_time() - t0)
    return min(times)


def main() -> None:
    prog = assemble(LOOP.format(iters=250_000))
    res = Machine(prog, **CFG).run()
    cycles = res.cycles
    print(f"bench_fast loop, {CORES} cores: {cycles:,} cycles, {res.instructions:,} instructions")

    def plain():
        Machine(prog, **CFG).run()

    def finish():
        Stepper(prog, **CFG).finish()

    def never_met():
        s = Stepper(prog, **CFG)
        s.add_watch(CFG["mem_words"] - 1)    # no core writes there: the breaking loop, no stop
        assert s.cont().reasons == ("end",)

    def met_at_the_end():
        s = Stepper(prog, **CFG)
        s.add_break(prog.top("code") - 1, core=CORES - 1)   # the last core's halt
        assert s.cont().reasons == ("break",)
        s.finish()

    def pauses():
        s = Stepper(prog, **CFG)
        for i in range(1, 1000):
            s.run_until(cycles * i // 1000)
        s.finish()

    rows = [("Machine.run", plain), ("Stepper.finish", finish), ("cont, a watch never met", never_met),
            ("cont to a breakpoint at the end", met_at_the_end),
            ("1000 pauses, then finish", pauses)]
    base = None
    print(f"{'':32} {'seconds':>8} {'Mcycles/s':>10} {'vs run':>7}")
    for name, fn in rows:
        t = best(fn)
        base = base or t
        print(f"{name:32} {t:>8.3f} {cycles / t / 1e6:>10.1f} {t / base:>7.2f}")

    short = assemble(LOOP.format(iters=2_000))
    ref = ReferenceMachine(short.code_image, short.data_image, short.entry, **CFG)
    t0 = time.process_time()
    ref_cycles = ref.run()["cycles"]
    t = time.process_time() - t0
    rate = ref_cycles / t
    print(f"{'reference model (2000 iterations)':32} {t:>8.3f} {rate / 1e6:>10.3f}   "
          f"the whole run would take {cycles / rate:,.0f} s")

    big = Stepper(prog, cores=CORES, max_cycles=1 << 40)    # the default memory: 1M words
    n = 2000
    t0 = time.perf_counter()
    for _ in range(n):
        big.step()
    plain_step = (time.perf_counter() - t0) / n
    big.add_break(0, core=0)    # met only at cycle 0, long past
    t0 = time.perf_counter()
    for _ in range(n):
        big.step()
    breaking_step = (time.perf_counter() - t0) / n
    print(f"one step, 1M words of memory: {plain_step * 1e6:.1f} us; with a breakpoint set: "
          f"{breaking_step * 1e6:.1f} us")
    history(prog, cycles)
    buffered(prog)


def buffered(prog) -> None:
    cfg = dict(CFG, consistency="tso")
    cycles = Machine(prog, **cfg).run().cycles

    def never_met():
        s = Stepper(prog, **cfg)
        s.add_watch(cfg["mem_words"] - 1)
        assert s.cont().reasons == ("end",)
    rows = [("tso: Machine.run", lambda: Machine(prog, **cfg).run()),
            ("tso: Stepper.finish", lambda: Stepper(prog, **cfg).finish()),
            ("tso: cont, a watch never met", never_met)]
    base = None
    print(f"tso, {cycles:,} cycles")
    for name, fn in rows:
        t = best(fn, 3)
        base = base or t
        print(f"{name:32} {t:>8.3f} {cycles / t / 1e6:>10.1f} {t / base:>7.2f}")


def history(prog, cycles: int) -> None:
    from s2mc.simulator.debugger import HISTORY_BYTES, Debugger

    cfg = dict(cores=CORES, max_cycles=1 << 40)             # the default memory, as `s2mc debug`

    def recorded(history_bytes):
        def run():
            Stepper(prog, history=history_bytes, **cfg).cont()
        return run
    plain, rec = best(recorded(0), 3), best(recorded(HISTORY_BYTES), 3)
    s = Stepper(prog, history=HISTORY_BYTES, **cfg)
    s.cont()
    print(f"a whole run, not recorded: {plain:.3f} s; recorded: {rec:.3f} s ({rec / plain:.2f}x), "
          f"{len(s.checkpoints)} checkpoints kept, {s._spacing:,} cycles apart")

    def middle():
        s.goto(cycles // 2)
        s.goto(cycles)           # and forward again, from the last checkpoint
    print(f"goto the middle and back to the end: {best(middle, 3) * 1e3:.1f} ms")
    d = Debugger(Stepper(prog, history=HISTORY_BYTES, **cfg))
    d.execute("continue")
    t0 = time.process_time()
    out = d.execute("reverse-stepi")
    print(f"reverse-stepi from the end: {(time.process_time() - t0) * 1e3:.1f} ms ({out.splitlines()[-1]})")
    d.execute("continue")
    mid = Stepper(prog, **cfg)
    mid.run_until(cycles // 2)
    pc = mid.core(0).pc
    d.execute(f"break *{pc} core 0")
    t0 = time.process_time()
    out = d.execute("reverse-continue")
    print(f"reverse-continue from the end to a breakpoint of every loop turn: "
          f"{(time.process_time() - t0) * 1e3:.1f} ms ({out.splitlines()[-1]})")

    from s2mc.compiler import compile as compile_rz
    from s2mc.workloads.examples import resolve
    with open(resolve("fib.rz")) as f:
        source = f.read()
    fib = compile_rz(source, filename="fib.rz", debug=True).program

    def over():
        d = Debugger.for_program(fib, source=source)
        for line in ("break 9", "continue", "delete 1"):
            d.execute(line)
        t0 = time.process_time()
        d.execute("next")
        t1 = time.process_time()
        d.execute("reverse-next")
        return t1 - t0, time.process_time() - t1
    forward, back = min(over() for _ in range(3))
    print(f"fib.rz: next over f = fib(20): {forward * 1e3:.1f} ms; reverse-next back over it: {back * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
