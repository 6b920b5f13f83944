"""`s2mc debug PROG`: step a program on the simulated multicore at a gdb-like prompt (docs/debugger.md)."""
from __future__ import annotations

import os
import signal
import sys

import click

from s2mc.isa import read_text
from s2mc.workloads.examples import resolve

from .cmd_sim import load_any
from .options import Integer, cache_options, machine_option, network_options

PROMPT = "(s2mc) "


@click.command()
@click.argument("program", type=click.Path(dir_okay=False))
@machine_option("cores")
@machine_option("mem_latency")
@machine_option("arbitration")
@machine_option("engine", help="Only fast steps.")
@machine_option("max_cycles")
@machine_option("mem_words")
@cache_options
@machine_option("consistency")
@machine_option("store_buffer_entries")
@network_options
@click.option("-O", "opt", default=1, show_default=True, type=Integer(0, 1), help="Rz optimisation level.")
def debug(program, cores, mem_latency, arbitration, engine, max_cycles, mem_words, opt, **cache):
    # **cache: the cache options, the store buffers' (consistency, store_buffer_entries) and the network's
    """Step a .rz, .s or .obj program: by cycles, instructions or Rz lines, forward and back;
    breakpoints on lines, functions and labels, watches, variables, registers, memory, the bus.
    A .rz is compiled with its debug information (compile -g), and so speaks Rz.

    Reads commands (`help` lists them) from the terminal, or from stdin when it is not one, so a
    script can drive it: printf 'break acquire core 1\\ncontinue\\nregs\\n' | s2mc debug spin_lock.s --cores 2"""
    from s2mc.simulator.debugger import HISTORY_BYTES, Debugger
    from s2mc.simulator.stepping import Stepper

    prog, source = load_any(program, opt, debug=True), None
    path = resolve(program)
    if path.endswith(".rz"):
        source = read_text(path)
    stepper = Stepper(prog, history=HISTORY_BYTES, cores=cores, mem_latency=mem_latency, arbitration=arbitration,
                      max_cycles=max_cycles, mem_words=mem_words, engine=engine, **cache)
    tty = sys.stdin.isatty()
    # gdb repeats the last command on Enter at a terminal only; a script's blank lines do nothing
    d = Debugger(stepper, out=click.echo, err=lambda line: click.echo(line, err=True), source=source,
                 source_dir=os.path.dirname(os.path.abspath(path)), repeat_empty=tty)
    if tty:
        import readline  # noqa: F401  (line editing and history for input())
        # A shell that starts us in the background (cmd &, some CI runners) leaves SIGINT ignored and Python
        # then never raises KeyboardInterrupt; at an interactive prompt Ctrl-C must always give a new prompt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        cfg = stepper.config
        buffers = f", {cfg.consistency} store buffers of {cfg.store_buffer_entries}" if cfg.buffered else ""
        if cfg.networked:
            arbitration = f"{cfg.interconnect} with {cfg.coherence} coherence"
        click.echo(f"{program}: {cores} core{'s' if cores > 1 else ''}, L={mem_latency}, {arbitration}{buffers}; "
                   "at cycle 0. help lists the commands.")
    while True:
        try:
            line = input(PROMPT) if tty else sys.stdin.readline()
        except EOFError:            # Ctrl-D at the prompt: leave on a fresh line
            click.echo()
            break
        except KeyboardInterrupt:   # Ctrl-C at the prompt, like gdb: a new prompt
            click.echo()
            continue
        if not tty and not line:    # the end of the script
            break
        if tty:                     # Ctrl-C during a command: the stepper stops at its next pause, whole
            stepper.interruptible = True
            signal.signal(signal.SIGINT, lambda *_: stepper.request_stop())
        try:
            d.execute(line)
        finally:
            if tty:
                signal.signal(signal.SIGINT, signal.default_int_handler)
        if d.finished:
            break


COMMANDS = [debug]
