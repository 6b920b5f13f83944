"""Source-level debugging: the line table and variables of `compile -g` (isa/debuginfo.py), carried
through the assembly and the object file, and the debugger's commands on them
(s2mc.simulator.debugger): breakpoints on lines and functions, step/next/finish, p/x/list/disas,
info locals, reverse stepping, the page's API (execute, state). Oracles: the line table read by
hand from the listing, the program's arithmetic done by hand, the Rz interpreter, the reference
model (simulator/reference.py) at every cycle a stop lands on, and the states forward stepping saw."""
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s2gen import configs, programs
from s2mc.compiler import compile as compile_rz
from s2mc.compiler import interpret_source
from s2mc.isa import assemble
from s2mc.isa.program import Program
from s2mc.simulator.debugger import Debugger
from s2mc.simulator.reference import ReferenceMachine
from s2mc.simulator.stepping import Stepper
from s2mc.workloads.examples import resolve

ROOT = Path(__file__).resolve().parents[1]
MEM = 1 << 19          # room for the Rz stacks (256 + 64 x 4096 words), half the default memory

PROG = """\
// a program for the debugger's tests
scale = 3
table[4] = {10, 20, 30, 40}

weigh(v, w)
  t = v * w
  return t + scale

main()
  x = 7
  y = weigh(x, 2)
  i = 0
  while (i < 4)
    y = y + table[i]
    i = i + 1
  print(y)
"""


def compiled(opt=1, source=PROG):
    return compile_rz(source, opt=opt, filename="prog.rz", debug=True)


def session(cores=1, source=PROG, **kw):
    return Debugger.for_program(compiled(source=source).program, source=source, cores=cores, mem_words=MEM, **kw)


def lines_of(text: str) -> list[str]:
    return text.splitlines()


# -- the line table -------------------------------------------------------------------------------

def test_the_line_table_of_a_small_program_read_by_hand():
    # From the -O1 listing: __start is pc 0..5; weigh (a leaf: no entry code) is mul, ld scale, add,
    # ret at 6..9; main saves rads (10, 11: line 9), then x = 7 (12), the call (13..16), i = 0 (17),
    # the loop's jump to its test (18: line 13), the body (19, 20: line 14; 21: line 15), the test
    # at the bottom (22, 23: line 13 again), print (24..26), and the epilogue (27..30: no line).
    d = compiled().program.debug
    assert d.file == "prog.rz"
    assert d.rows == [(6, 6), (7, 7), (9, 0), (10, 9), (12, 10), (13, 11), (17, 12), (18, 13), (19, 14),
                      (21, 15), (22, 13), (24, 16), (27, 0)]
    # weigh keeps main's fp; main moves fp up one word (rads's)
    assert [(f.name, f.line, f.lo, f.body, f.hi, f.frame, f.params) for f in d.funcs] == [
        ("weigh", 5, 6, 6, 10, 0, 2), ("main", 9, 10, 12, 31, 1, 0)]
    assert d.lines() == [6, 7, 9, 10, 11, 12, 13, 14, 15, 16]
    assert d.locations(13) == (13, [18, 22]) and d.locations(8) == (9, [10]) and d.locations(17) == (0, [])
    assert d.line_at(3) is None and d.line_at(8) == 7 and d.line_at(28) is None
    places = {(v.scope, v.name): (v.kind, v.where, v.words) for v in d.vars}
    # the globals: scale at 256 (the first data word), table after it; the leaf keeps its
    # arguments where the caller put them (r20, r21), main its locals in callee-saved r1..r3
    assert places == {(None, "scale"): ("mem", 256, 1), (None, "table"): ("mem", 257, 4),
                      ("weigh", "v"): ("reg", 20, 1), ("weigh", "w"): ("reg", 21, 1), ("weigh", "t"): ("reg", 22, 1),
                      ("main", "x"): ("reg", 1, 1), ("main", "y"): ("reg", 2, 1), ("main", "i"): ("reg", 3, 1)}


def _rz_sources():
    names = sorted(p for p in (ROOT / "workloads" / "rz").glob("*.rz")) + sorted((ROOT / "tests" / "rz").glob("*.rz"))
    return [pytest.param(p, id=p.name) for p in names]


@pytest.mark.parametrize("path", _rz_sources())
@pytest.mark.parametrize("opt", [0, 1])
def test_debug_information_does_not_change_the_code(path, opt):
    source = path.read_text()
    plain, debug = compile_rz(source, opt=opt, filename=path.name), compile_rz(source, opt=opt, filename=path.name,
                                                                              debug=True)
    assert debug.program.segments == plain.program.segments
    assert debug.program.symbols == plain.program.symbols and debug.program.entry == plain.program.entry
    directive = re.compile(r"\s*\.(file|func|body|line|var)\b")
    assert [x for x in debug.asm.splitlines() if not directive.match(x)] == plain.asm.splitlines()
    assert plain.program.debug is None and debug.program.debug.rows
    # every line the table names holds a statement of the source (not a comment or a blank)
    text = source.splitlines()
    for line in debug.program.debug.lines():
        assert text[line - 1].split("//")[0].strip(), line


def test_the_object_file_carries_the_debug_information():
    prog = compiled().program
    text = prog.to_text()
    assert "\nsource prog.rz\n" in text and "\nline 19 14\n" in text and "\nvar main x reg 1\n" in text
    again = Program.from_text(text)
    assert again == prog and again.to_text() == text
    # a program without debug information writes the object it always did
    plain = compile_rz(PROG, filename="prog.rz").program
    assert Program.from_text(plain.to_text()).debug is None and "source" not in plain.to_text()


@pytest.mark.parametrize("line, message", [
    ("line 5 6", "line table rows must come in increasing pc order"),
    ("var main x reg 40", "reg place out of range 0..31"),
    ("var main x stack 1", "a variable's place is reg N, frame N or mem ADDRESS WORDS"),
    ("func main 9 12 10 31 1 0", "a function's pcs must be first <= body <= end"),
    ("source again.rz", "source named twice"),
])
def test_bad_debug_lines_in_an_object_file_are_one_line(line, message):
    text = compiled().program.to_text() + line + "\n"
    n = text.count("\n")
    with pytest.raises(Exception) as err:
        Program.from_text(text, "p.obj")
    assert str(err.value).startswith(f"p.obj:{n}: bad object file: {message}")


@pytest.mark.parametrize("source, message", [
    (".code 0\n  .line x\n  nop\n", "undefined symbol 'x'"),
    (".code 0\n  .body\n", ".body once in each .func, without operands"),
    (".data 0\n  .line 3\n", ".line outside .code"),
    ('.file prog.rz\n', ".file takes one quoted name"),
    (".code 0\n.func f 1 0 0\n  .var a sp\n  nop\n", "'sp' is not a register"),
    (".code 0\n.func f 1\n  nop\n", ".func takes a name, its source line, its frame's size and its number"),
    (".data 0\n:g 1\n.var g h 1\n.code 0\n nop\n", "undefined symbol 'h'"),
    (".data 0\n:g 1\n.var g 0\n.code 0\n nop\n", ".var outside a .func takes a data label (or address) and a size"),
    (".code 0\n:f nop\n.var g f 1\n", ".var outside a .func takes a data label (or address) and a size"),
])
def test_bad_debug_directives_are_one_line(source, message):
    with pytest.raises(Exception) as err:
        assemble(source, "p.s")
    assert re.match(r"p\.s:\d+: ", str(err.value)) and message in str(err.value)


# -- the debugger on Rz ---------------------------------------------------------------------------

def test_a_breakpoint_on_a_line_stops_at_its_first_instruction_when_the_reference_model_gets_there():
    d = session()
    out = d.execute("break 14")
    assert out == "breakpoint 1 at prog.rz:14 (pc 19, main+9: ld r22 @table r3), every core\n"
    out = lines_of(d.execute("continue"))
    ref = ReferenceMachine(d.program.code_image, d.program.data_image, d.program.entry, cores=1, mem_words=MEM)
    while not (ref.cores[0].state == "run" and ref.cores[0].next_issue == ref.now and ref.cores[0].pc == 19):
        assert ref.step()
    assert out == ["breakpoint 1: core 0 at pc 19 (main+9): ld r22 @table r3",
                   "  prog.rz:14 in main(): y = y + table[i]", f"cycle {ref.now}"]
    # x = 7 and y = weigh(7, 2) = 7 * 2 + scale = 17 when the loop's body starts, i = 0
    assert d.execute("info locals") == "x = 7    (r1)\ny = 17    (r2)\ni = 0    (r3)\n"
    assert d.execute("p table") == "table = {10, 20, 30, 40}\n"
    assert d.execute("p table[i + 2] + scale") == "table[i + 2] + scale = 33\n"
    assert d.execute("p &table") == "&table = 257\n"
    assert d.execute("p/x y") == "y = 0x00000011\n"
    assert d.execute("x/4d &table") == "     257 <table>:  10  20  30  40\n"
    assert d.execute("x/2i $pc") == "      19 <main+9>:  ld r22 @table r3\n      20 <main+10>:  add r2 r2 r22\n"


def test_a_line_without_code_moves_to_the_next_and_a_line_may_have_several_places():
    d = session()
    assert lines_of(d.execute("break 8")) == [
        "breakpoint 1 at prog.rz:9 (line 8 has no code) (pc 10, main: add r29 r29 #1), every core"]
    assert lines_of(d.execute("break prog.rz:13")) == [
        "breakpoint 2 at prog.rz:13 (pc 18, main+8: jmp .l4), every core",
        "breakpoint 3 at prog.rz:13 (pc 22, main+12: lt r23 r3 #4), every core"]


def test_break_on_a_function_stops_after_its_entry_code_and_finish_returns_its_value():
    d = session()
    d.execute("break main")
    assert "pc 12 (main+2): mov r1 #7" in d.execute("continue")      # past main's saving of rads
    d.execute("break weigh")
    out = d.execute("continue")
    assert "prog.rz:6 in weigh(): t = v * w" in out
    assert d.execute("p v") == "v = 7\n" and d.execute("p w") == "w = 2\n"
    out = lines_of(d.execute("finish"))
    # 7 * 2 + 3 = 17; back in main, at the instruction after the call (line 11, mid-line)
    assert out[:3] == ["run till weigh() returns on core 0", "value returned: retval = 17",
                       "core 0 at pc 16 (main+6): mov r2 r28"]
    assert out[3] == "  prog.rz:11 in main(): y = weigh(x, 2)"


def test_step_next_and_the_lines_they_visit():
    d = session()
    d.execute("break main")
    d.execute("continue")
    seen = []
    for cmd in ["next", "step", "step", "step", "next", "next", "next", "next", ""]:
        out = d.execute(cmd)
        seen.append(int(re.search(r"prog\.rz:(\d+)", out)[1]))
    # main starts at line 10; `step` on line 11 goes into weigh (6, 7) and back to main at
    # the next line start (12); the loop runs 13 (jump to the test), 13 is not stopped at twice
    # in a row (one line), body 14, 15, test 13, and Enter repeats `next`
    assert seen == [11, 6, 7, 12, 13, 14, 15, 13, 14]


def test_output_and_the_end_of_the_run_while_stepping():
    d = session()
    d.execute("break 16")
    d.execute("continue")
    out = lines_of(d.execute("next"))
    assert out[0] == "[output] 117" and interpret_source(PROG) == "117\n"


# -- reverse stepping -----------------------------------------------------------------------------

def machine_state(d):
    s = d.s
    return (s.cycle, [(c.state, c.pc, c.since) for c in s.cores()], [s.registers(i) for i in range(s.config.cores)],
            [c.counters for c in s.cores()], s.read(0, s.config.mem_words), s.events)


def assert_reference_agrees(d):
    """The reference model, run to the same cycle, has the same registers, pcs and memory."""
    p = d.program
    ref = ReferenceMachine(p.code_image, p.data_image, p.entry, cores=d.s.config.cores, mem_words=MEM)
    while ref.now < d.s.cycle:
        assert ref.step()
    for i, k in enumerate(ref.cores):
        assert d.s.registers(i) == k.r
        assert d.s.core(i).pc == k.pc
    assert d.s.read(0, MEM) == ref.mem


@pytest.mark.parametrize("forward, back", [("stepi", "reverse-stepi"), ("next", "reverse-next"),
                                           ("step", "reverse-step")])
def test_reverse_lands_on_the_states_forward_stepping_had(forward, back):
    d = session(cores=2)
    d.execute("break main")
    d.execute("continue")
    d.execute("delete 1")        # else core 1 reaching main interrupts core 0's steps (as in gdb)
    states = [machine_state(d)]
    for _ in range(8):
        assert "error" not in d.execute(forward)
        states.append(machine_state(d))
    for i in range(8):
        d.execute(back)
        assert machine_state(d) == states[-2 - i], i
    assert_reference_agrees(d)


def test_reverse_continue_goes_back_to_the_previous_breakpoint_stop():
    d = session(cores=2)
    d.execute("break 15")
    stops = []
    for _ in range(5):
        d.execute("continue")
        stops.append(machine_state(d))
    out = d.execute("reverse-continue")
    assert "breakpoint 1:" in out and machine_state(d) == stops[-2]
    d.execute("reverse-continue")
    assert machine_state(d) == stops[-3]
    assert_reference_agrees(d)
    d.execute("continue")
    assert machine_state(d) == stops[-2]      # forward again from there: the same run


def test_reverse_after_the_end_and_back_to_the_start():
    d = session()
    d.execute("continue")
    end = d.s.cycle
    assert d.s.done
    out = lines_of(d.execute("reverse-stepi"))
    assert out[-1] == f"cycle {end - 1}" and not d.s.done     # the halting trap, about to issue
    assert "halted" not in d.execute("info")
    d.execute("break weigh")
    assert "the program ended" in d.execute("continue")
    # back from the end to where the breakpoint, had it been set, would have stopped the run
    out = lines_of(d.execute("reverse-continue"))
    assert out[0] == "breakpoint 1: core 0 at pc 6 (weigh): mul r22 r20 r21"
    assert d.s.registers(0)[20:22] == [7, 2]
    out = lines_of(d.execute("reverse-continue"))
    assert out[-1] == "cycle 0" and "back at its start" in out[0]
    assert d.execute("reverse-stepi") == "reverse-stepi: at cycle 0, the start of the run: there is nothing before it\n"


@given(programs(), configs, st.lists(st.integers(1, 40), min_size=1, max_size=8), st.data())
def test_goto_gives_the_state_the_forward_run_had(src, cfg, gaps, data):
    prog = assemble(src)
    s = Stepper(prog, history=1 << 16, checkpoint_every=8, mem_words=1024, max_cycles=20_000, **cfg)
    seen = {}

    def state():
        return ([(c.state, c.pc, c.since, c.counters) for c in s.cores()],
                [s.registers(i) for i in range(cfg["cores"])], s.read(0, 1024), s.events, s.bus())
    seen[0] = state()
    for gap in gaps:
        try:
            stop = s.run_until(s.cycle + gap)
        except Exception:
            break
        if "end" in stop.reasons:
            break
        seen[s.cycle] = state()
    assert len(s.checkpoints) <= max(4, (1 << 16) // (1024 * 4)) + 1
    for cycle in data.draw(st.permutations(sorted(seen))):
        s.goto(cycle)
        assert s.cycle == cycle and state() == seen[cycle]


# -- errors ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("command, message", [
    ("break 99", "break: no code at or after line 99 of prog.rz (lines with code: 6..16)"),
    ("break other.rz:7", "break: no file 'other.rz' in the program (its source is prog.rz)"),
    ("p n", "print: no variable or label 'n' in main() or among the globals"),
    ("p v", "print: 'v' is not in scope at core 0's main()"),
    ("p &x", "print: 'x' lives in r1: it has no address"),
    ("p table[4]", "print: index 4 is outside table[0..3]"),
    ("p/q x", "print: unknown format '/q' (x d u t c)"),
    ("p x +", "print: expected more in 'x +'"),
    ("p $r40", "print: no register $r40 (r0..r31, pc, sp, fp, rads, retval, cycle)"),
    ("x/4q table", "x: unknown format '/4q' (a count, then x d u t c or i; words only)"),
    ("list 500", "list: line 500 is outside prog.rz (1..16)"),
    ("info frames", "info: info has no 'frames' (locals, breakpoints, registers, line, cores, machine)"),
    ("watch x", "watch: 'x' lives in r1, not in memory: a watch needs a word of memory"),
    ("step/x", "step: takes no /format"),
    ("core 3", "core: core 3 does not exist (0..0)"),
])
def test_bad_requests_are_one_line(command, message):
    d = session()
    d.execute("break main")
    d.execute("continue")
    assert d.execute(command) == message + "\n" and d.last_error == message


def test_finish_outside_every_function_is_one_line():
    d = session()
    assert d.execute("finish") == "finish: core 0 is at pc 0 (__start), in no function to return from\n"
    assert d.s.cycle == 0


def test_without_debug_information_the_source_commands_say_so():
    with open(resolve("spin_lock.s")) as f:
        d = Debugger.for_program(assemble(f.read()), cores=2)
    assert d.execute("info locals") == ("info: info locals needs debug information: debug the .rz, or compile it "
                                        "with `s2mc compile -g`\n")
    assert d.execute("list").startswith("list: list needs debug information")
    # stepping is by instructions; `break 2` is a pc
    assert d.execute("break 2") == "breakpoint 1 at pc 2 (acquire: mov r2 #0), every core\n"
    assert lines_of(d.execute("step"))[0] == "core 0 at pc 1 (again): mov r1 #1"


# -- the page's API --------------------------------------------------------------------------------

def test_state_is_plain_data_that_follows_the_machine():
    d = session(cores=2)
    d.execute("break 14 core 1")
    d.execute("continue")
    st_ = json.loads(json.dumps(d.state()))
    assert st_["cycle"] == d.s.cycle and st_["current_core"] == 1 and st_["file"] == "prog.rz"
    core1 = st_["cores"][1]
    assert (core1["pc"], core1["line"], core1["function"], core1["state"]) == (19, 14, "main", "running")
    assert core1["registers"] == d.s.registers(1) and core1["instruction"] == "ld r22 @table r3"
    assert st_["breakpoints"] == [{"number": 1, "pc": 19, "where": "main+9", "core": 1, "line": 14}]
    assert st_["ended"] is False and st_["fault"] is None and st_["history"] is True
    bus = d.s.bus()
    assert st_["bus"] == {"holder": bus.holder, "granted": bus.granted, "free_at": bus.free_at,
                          "waiting": [{"core": c, "since": t, "address": a} for c, t, a in bus.waiting]}
    d.execute("delete 1")
    d.execute("continue")
    st_ = d.state()
    assert st_["ended"] and st_["output"] == "117\n117\n" and st_["breakpoints"] == []


def test_the_command_table_gives_help_and_every_command_has_its_method():
    from s2mc.simulator import debugger
    d = session()
    text = d.execute("help")
    for c in debugger.COMMANDS:
        assert c.usage in text
        assert c.name == "quit" or hasattr(d, "do_" + c.name.replace("-", "_"))
    d.execute("quit")
    assert d.finished


# -- the command line ------------------------------------------------------------------------------

def debug_cli(script: str, *args, cwd):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", "debug", *map(str, args)], input=script,
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_the_rz_the_assembly_and_the_object_debug_alike(tmp_path):
    (tmp_path / "prog.rz").write_text(PROG)
    subprocess.run([sys.executable, "-m", "s2mc.cli", "compile", "-g", "prog.rz"], cwd=tmp_path, check=True,
                   capture_output=True)
    subprocess.run([sys.executable, "-m", "s2mc.cli", "asm", "prog.s", "-o", "prog.obj"], cwd=tmp_path, check=True,
                   capture_output=True)
    script = "break weigh\ncontinue\ninfo locals\nnext\nlist 6\n"
    runs = [debug_cli(script, name, cwd=tmp_path) for name in ("prog.rz", "prog.s", "prog.obj")]
    for proc in runs:
        assert proc.returncode == 0 and proc.stderr == ""
        assert "prog.rz:6 in weigh(): t = v * w" in proc.stdout and "v = 7    (r20)" in proc.stdout
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout


def test_locals_in_registers_and_in_the_frame_have_their_values():
    # tests/rz/spill.rz: many(p) sets a = p + 1, b = a + 1, ... ee = dd + 1 (30 locals after p):
    # more than the registers hold, so s .. ee live in the frame (fp - D). Called first with p = 0.
    source = (ROOT / "tests" / "rz" / "spill.rz").read_text()
    d = Debugger.for_program(compile_rz(source, filename="spill.rz", debug=True).program, source=source,
                             mem_words=MEM)
    d.execute("break 33")
    assert "spill.rz:33 in many()" in d.execute("continue")
    listing = d.execute("info locals")
    got = {m[1]: (int(m[2]), m[3]) for m in re.finditer(r"^(\w+) = (-?\d+)    \((.+)\)$", listing, re.M)}
    names = [c for c in "abcdefghijklmnoqrstuvwxyz"] + ["aa", "bb", "cc", "dd", "ee"]
    assert {n: v for n, (v, _) in got.items()} == {"p": 0} | {n: i + 1 for i, n in enumerate(names)}
    assert got["r"][1] == "r18" and got["ee"][1] == "fp-20"
    fp = d.s.registers(0)[29]
    assert d.execute("p &ee") == f"&ee = {fp - 20}\n" and d.execute("p *(&ee) - s") == "*(&ee) - s = 12\n"


def test_backtrace_through_recursion():
    # fib.rz on one core: fib(20) from main's line 9, then fib(19) and fib(18) from line 5 (fib(n - 1))
    source = (ROOT / "workloads" / "rz" / "fib.rz").read_text()
    d = Debugger.for_program(compile_rz(source, filename="fib.rz", debug=True).program, source=source,
                             mem_words=MEM)
    d.execute("break fib")
    for _ in range(3):
        d.execute("continue")
    assert lines_of(d.execute("bt")) == ["#0  fib (n=18) at fib.rz:4", "#1  fib () at fib.rz:5",
                                         "#2  fib () at fib.rz:5", "#3  main () at fib.rz:9"]
    d.execute("delete 1")         # else fib(17) stops the finish at the breakpoint
    out = lines_of(d.execute("finish"))
    # fib(18) = 2584 returns into fib(19)'s line 5, mid-line
    assert out[1] == "value returned: retval = 2584"
    assert lines_of(d.execute("bt"))[:2] == ["#0  fib (n=19) at fib.rz:5", "#1  fib () at fib.rz:5"]
    assert d.execute("up") == "unknown command 'up' (help lists the commands)\n"


_NAMES = sorted({c.name for c in __import__("s2mc.simulator.debugger", fromlist=["COMMANDS"]).COMMANDS} - {"quit"})
_WORDS = st.sampled_from(["x", "y", "i", "n", "v", "table", "scale", "main", "weigh", "prog.rz:7", "0", "3", "14",
                          "-2", "99", "0x10", "*6", "$pc", "$r40", "&x", "&table", "table[9]", "(", ")", "[", "*",
                          "core", "1", "+", "x + 1", ":", "prog.rz:", "locals", "#", "/", "$", "\x00", "é"])


@given(st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(["", "/x", "/4d", "/i", "/0", "/q", "/s"]),
                          st.lists(_WORDS, max_size=3)), min_size=1, max_size=12))
def test_any_command_line_prints_lines_and_never_raises(commands):
    d = session(cores=2)
    for name, fmt, args in commands:
        out = d.execute(" ".join([name + fmt, *args]))
        assert out == "" or out.endswith("\n")
        assert d.last_error is None or "\n" not in d.last_error


@pytest.mark.parametrize("opt", [0, 1])
def test_the_disassembly_keeps_the_debug_information(opt):
    from s2mc.isa import disassemble
    prog = compiled(opt).program
    again = assemble(disassemble(prog))
    assert again.debug == prog.debug and again.segments == prog.segments


def test_next_and_reverse_next_over_a_deep_recursion():
    # fib.rz: `next` over line 9, f = fib(20), runs the 21,891 calls of the recursion at once and
    # stops where a breakpoint on line 10 stops the run; reverse-next comes back to line 9's state.
    source = (ROOT / "workloads" / "rz" / "fib.rz").read_text()
    program = compile_rz(source, filename="fib.rz", debug=True).program
    d = Debugger.for_program(program, source=source, mem_words=MEM)
    d.execute("break 9")
    d.execute("continue")
    d.execute("delete 1")
    at9 = machine_state(d)
    out = d.execute("next")
    assert "fib.rz:10 in main(): turn = 0" in out and d.s.registers(0)[2] == 6765     # f = fib(20)
    other = Debugger.for_program(program, source=source, mem_words=MEM)
    other.execute("break 10")
    other.execute("continue")
    assert machine_state(d) == machine_state(other)
    d.execute("reverse-next")
    assert machine_state(d) == at9
    out = d.execute("reverse-step")         # before line 9 comes line 8 (me = cid())
    assert "fib.rz:8 in main(): me = cid()" in out


def test_a_watch_on_a_local_in_the_frame():
    # spill.rz: s = r + 1 (line 20) is the first local kept in the frame; with p = 0 it is 18
    source = (ROOT / "tests" / "rz" / "spill.rz").read_text()
    d = Debugger.for_program(compile_rz(source, filename="spill.rz", debug=True).program, source=source,
                             mem_words=MEM)
    d.execute("break 20")
    d.execute("continue")
    fp = d.s.registers(0)[29]
    assert d.execute("watch s").startswith(f"watch 2 on writes to address {fp - 32} ")
    out = lines_of(d.execute("continue"))
    assert out[0].startswith(f"watch 2: core 0 wrote 18 to address {fp - 32} ")
    assert d.execute("p s") == "s = 18\n"


def test_list_centres_on_the_current_line_and_goes_on():
    d = session()
    d.execute("break 14")
    d.execute("continue")
    out = lines_of(d.execute("list"))
    assert out[0] == "9    main()" and out[-1] == "16     print(y)" and len(out) == 8   # 9 .. the last line
    assert d.execute("list") == "list: line 17 is past the end of prog.rz (16 lines)\n"
    d.execute("next")                       # line 15: a list after a step starts again around it
    assert lines_of(d.execute("list"))[0] == "10     x = 7"
    assert lines_of(d.execute("list 2"))[0] == "1    // a program for the debugger's tests"
    assert lines_of(d.execute(""))[0] == "11     y = weigh(x, 2)"


def test_reverse_continue_stops_after_the_previous_watched_write():
    # spin_lock.s on 3 cores, each adding to counter under the lock: the states after each write
    with open(resolve("spin_lock.s")) as f:
        d = Debugger.for_program(assemble(f.read()), cores=3, mem_words=4096)
    d.execute("watch counter")
    seen = []
    for _ in range(4):
        out = d.execute("continue")
        seen.append((machine_state(d), out))
    for back in (2, 3, 4):
        out = d.execute("reverse-continue")
        assert (machine_state(d), out) == seen[-back]
    assert d.execute("p counter") == "counter = 1\n"      # after the first write: 0 + 1


def test_the_page_s_debugger_reads_no_file_a_program_names(tmp_path):
    secret = tmp_path / "secret.rz"
    secret.write_text("a line nobody may see\n" * 20)
    prog = compile_rz(PROG, filename=str(secret), debug=True).program
    d = Debugger.for_program(prog, mem_words=MEM)                 # no source given, no folder
    assert d.execute("list 1") == "list: cannot read the source file 'secret.rz' (no source was given)\n"


def test_going_back_needs_a_history():
    d = Debugger(Stepper(compiled().program, mem_words=MEM))       # a stepper that keeps none
    d.execute("tick 5")
    for command in ("reverse-step", "reverse-next", "reverse-stepi", "reverse-continue"):
        assert d.execute(command) == f"{command}: this session keeps no history to go back in\n"
    assert d.execute("until 2") == "until: cycle 2 is not after the current cycle 5\n"
