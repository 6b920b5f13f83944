"""`s2mc debug` (s2mc.simulator.debugger, cli/cmd_debug.py): scripted from stdin in a subprocess,
and once in a real terminal (pexpect). The registers, memory and cycles it shows are checked
against hand computation, a plain run and the reference model."""
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.reference import ReferenceMachine
from s2mc.workloads.examples import resolve


def bundled(name: str):
    with open(resolve(name)) as f:
        return assemble(f.read())


def debug(script: str, *args, cwd):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", "debug", *map(str, args)], input=script,
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def regs(text: str, core: int) -> list[int]:
    """The 32 registers of `regs CORE`'s table in the output."""
    block = text.split(f"core {core}, cycle ", 1)[1]
    values = dict((int(n), int(v)) for n, v in re.findall(r"r(\d+)\s+(-?\d+)", block)[:32])
    return [values[i] for i in range(32)]


def ref_cycle_at(program, cores: int, pc: int, core: int) -> int:
    """The first cycle in which the reference model's core is about to issue the instruction at pc."""
    ref = ReferenceMachine(program.code_image, program.data_image, program.entry, cores=cores)
    while True:
        k = ref.cores[core]
        if k.state == "run" and k.next_issue == ref.now and k.pc == pc:
            return ref.now
        assert ref.step()


def test_scripted_stop_at_a_label_prints_the_registers(tmp_path):
    # spin_lock.s: core 1 issues `mov r7 #rounds` in cycle 0 and `mov r1 #1` in cycle 1, so it
    # stands at `acquire` (pc 2) in cycle 2 with r7 = rounds = 10, r1 = 1 and nothing else set.
    proc = debug("break acquire core 1\ncontinue\nregs\n", "spin_lock.s", "--cores", 2, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "breakpoint 1: core 1 at pc 2 (acquire): mov r2 #0\ncycle 2\n" in proc.stdout
    assert regs(proc.stdout, 1) == [0, 1] + [0] * 5 + [10] + [0] * 24


def test_scripted_session_agrees_with_a_plain_run_and_the_reference_model(tmp_path):
    # parallel_sum.s on 2 cores: core 1 sums array[1], array[3], ... = 2 + 4 + ... + 100 = 2550 and
    # core 0 the rest, 2500; at `finish` core 1 still holds its partial sum in r3, core 0 the total
    # it prints.
    prog = bundled("parallel_sum.s")
    plain = Machine(prog, cores=2).run()
    finish = prog.address_of("finish")
    script = "break finish core 1\ncontinue\nregs 1\nmem partial 2\nbreak finish core 0\ncontinue\nregs\n" \
             "continue\n"
    proc = debug(script, "parallel_sum.s", "--cores", 2, cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    out = proc.stdout
    stops = [int(c) for c in re.findall(r"^cycle (\d+)$", out, re.M)]
    assert stops == [ref_cycle_at(prog, 2, finish, 1), ref_cycle_at(prog, 2, finish, 0)]
    assert regs(out, 1)[3] == 2550 and regs(out, 1)[1] == 1
    assert re.search(r"^\s+0\s+partial\s+2500\n\s+1\s+partial\+1\s+2550$", out, re.M)
    assert regs(out, 0)[3] == 5050 and plain.output == "5050\n"
    assert "[output] 5050\n" in out
    assert f"the program ended at cycle {plain.cycles}: {plain.instructions} instructions, " \
           f"{plain.stall_cycles} stall cycles" in out


def test_steps_to_the_end_give_the_plain_runs_cycles(tmp_path):
    prog = bundled("spin_lock.s")
    plain = Machine(prog, cores=3, mem_latency=3, arbitration="round_robin").run()
    script = "tick 7\nuntil 50\nwatch counter\ncontinue\ncontinue\ndelete 1\ntick 1000\ncontinue\ncycle\n"
    proc = debug(script, "spin_lock.s", "--cores", 3, "--mem-latency", 3, "--arbitration", "round_robin",
                 cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert plain.cycles < 50 + 1000
    assert proc.stdout.startswith("cycle 7\ncycle 50\nwatch 1 on writes to address 1 (counter)\nwatch 1: core ")
    assert proc.stdout.count("watch 1: core ") == 2 and "deleted 1\n[output] 30\n" in proc.stdout
    assert proc.stdout.endswith(f"the program ended at cycle {plain.cycles}: {plain.instructions} instructions, "
                                f"{plain.stall_cycles} stall cycles, bus utilisation {plain.bus_utilisation:.1%}\n"
                                f"cycle {plain.cycles}\n")
    assert proc.stderr == "continue: the run has ended (cycle %d)\n" % plain.cycles


def test_bad_commands_are_one_line_and_the_session_goes_on(tmp_path):
    script = "\n".join(["frobnicate", "break", "break nowhere", "break acquire core 9", "break acquire cpu 1",
                        "step -1", "step x", "until 0", "mem 99999999", "regs 5", "delete 3", "watch",
                        "# a comment", "", "cycle", "step 2 3", "help"]) + "\n"
    proc = debug(script, "spin_lock.s", "--cores", 2, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [
        "unknown command 'frobnicate' (help lists the commands)",
        "break: usage: break LINE|FILE:LINE|FUNCTION|LABEL|*PC [core N]",
        "break: no code label 'nowhere' in the program",
        "break: core 9 does not exist (0..1)",
        "break: usage: break LINE|FILE:LINE|FUNCTION|LABEL|*PC [core N]",
        "step: N must be at least 1, not -1",
        "step: N must be a number, not 'x'",
        "until: cycle 0 is not after the current cycle 0",
        "mem: data address 99999999 is outside the memory (0..2097151)",
        "regs: core 5 does not exist (0..1)",
        "delete: no breakpoint or watch number 3",
        "watch: usage: watch ADDR|SYMBOL|VARIABLE",
        "step: too many arguments (usage: step [N])",
    ]
    assert proc.stdout.startswith("cycle 0\ncommands")


def test_end_of_input_and_quit_leave_cleanly(tmp_path):
    proc = debug("", "spin_lock.s", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    proc = debug("quit\ncycle\n", "spin_lock.s", cwd=tmp_path)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


def test_a_fault_is_reported_and_the_state_stays_readable(tmp_path):
    (tmp_path / "div.s").write_text(".code 0\n  mov r2 #5\n  div r3 r2 r0\n  trap r0 #0\n")
    proc = debug("continue\nregs\nstep\n", "div.s", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stderr.splitlines() == [
        "simulated fault: division by zero at core 0, pc 1, cycle 1: 'div r3 r2 r0'",
        "step: the run stopped with a fault at cycle 1"]
    assert regs(proc.stdout, 0)[2] == 5


@pytest.mark.parametrize("args, message", [
    (["--engine", "systemc"], "s2mc: error: the systemc engine cannot step"),
    (["--cores", "0"], "s2mc debug: error: Invalid value for '--cores'"),
    (["--bogus"], "s2mc debug: error: No such option '--bogus'"),
])
def test_bad_options_are_one_line(tmp_path, args, message):
    proc = debug("", "spin_lock.s", *args, cwd=tmp_path)
    assert proc.returncode != 0 and proc.stderr.startswith(message) and proc.stderr.count("\n") == 1


def test_a_missing_program_is_one_line(tmp_path):
    proc = debug("", "nothing.s", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "nothing.s: no such file" in proc.stderr


def test_in_a_real_terminal(tmp_path):
    # Started with SIGINT ignored, as a background job or a CI runner starts it: Ctrl-C must still give a prompt.
    child = pexpect.spawn(sys.executable, ["-m", "s2mc.cli", "debug", "spin_lock.s", "--cores", "2"], cwd=str(tmp_path),
                          encoding="utf-8", timeout=60, dimensions=(40, 120),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        child.expect_exact("at cycle 0. help lists the commands.")
        child.expect_exact("(s2mc) ")
        child.sendline("break acquire core 1")
        child.expect_exact("breakpoint 1 at pc 2 (acquire: mov r2 #0), core 1")
        child.expect_exact("(s2mc) ")
        child.sendline("continue")
        child.expect_exact("cycle 2")
        child.expect_exact("(s2mc) ")
        child.sendline("regs")
        child.expect(r"r4\s+0\s+r5\s+0\s+r6\s+0\s+r7\s+10")
        child.expect_exact("(s2mc) ")
        child.sendline("nonsense")
        child.expect_exact("unknown command 'nonsense' (help lists the commands)")
        child.expect_exact("(s2mc) ")
        child.sendintr()                    # Ctrl-C at the prompt: a fresh prompt, the session goes on
        child.expect_exact("(s2mc) ")
        child.sendline("bus")
        child.expect_exact("cycle 2: the bus is free")
        child.expect_exact("(s2mc) ")
        child.sendeof()                     # Ctrl-D leaves
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def _doc_sessions():
    text = (Path(__file__).resolve().parents[1] / "docs" / "debugger.md").read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("$ printf '")[1:]]
    return [pytest.param(b, id=b.split("| s2mc debug ", 1)[1].split()[0]) for b in blocks]


@pytest.mark.parametrize("block", _doc_sessions())
def test_the_sessions_in_the_docs_are_what_they_print(tmp_path, block):
    """docs/debugger.md's sessions (spin_lock.s, sum.rz), run again ('...' in the docs stands for
    lines left out)."""
    script, shown = block.split("' \\\n", 1)
    args = shown.split("| s2mc debug ", 1)[1].split("\n", 1)
    proc = debug(script.encode().decode("unicode_escape"), *args[0].split(), cwd=tmp_path)
    assert proc.returncode == 0 and proc.stderr == ""
    got, want = proc.stdout.splitlines(), args[1].rstrip("\n").splitlines()
    i = 0
    for k, line in enumerate(want):
        if line == "...":
            while got[i] != want[k + 1]:
                i += 1
            continue
        assert got[i] == line
        i += 1
    assert i == len(got)


def test_enter_repeats_the_last_step_in_a_real_terminal(tmp_path):
    # sum.rz: core 0 fills data[] in the loop of lines 11-13; `next` from line 12 goes to 13, Enter to
    # the loop's test (11), Enter again to 12 with i one larger; `p i` shows it.
    child = pexpect.spawn(sys.executable, ["-m", "s2mc.cli", "debug", "sum.rz"], cwd=str(tmp_path),
                          encoding="utf-8", timeout=60, dimensions=(40, 120),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        child.expect_exact("(s2mc) ")
        child.sendline("break 12")
        child.expect_exact("(s2mc) ")
        child.sendline("continue")
        child.expect_exact("sum.rz:12 in main(): data[i] = i + 1")
        child.expect_exact("(s2mc) ")
        for line in (13, 11, 12):
            child.sendline("" if line != 13 else "next")
            child.expect_exact(f"sum.rz:{line} in main(): ")
            child.expect_exact("(s2mc) ")
        child.sendline("p i")
        child.expect_exact("i = 1")
        child.expect_exact("(s2mc) ")
        child.sendline("reverse-step")
        child.expect_exact("sum.rz:11 in main(): while (i < N)")
        child.expect_exact("(s2mc) ")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_ctrl_c_stops_a_long_continue_with_the_state_whole(tmp_path):
    # A loop of add and jmp, one cycle each: at cycle C the add has run ceil(C / 2) times.
    (tmp_path / "spin.s").write_text(".code 0\n:top\n  add r1 r1 #1\n  jmp top\n")
    child = pexpect.spawn(sys.executable, ["-m", "s2mc.cli", "debug", "spin.s", "--max-cycles", str(10 ** 12)],
                          cwd=str(tmp_path), encoding="utf-8", timeout=60, dimensions=(40, 120),
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        child.expect_exact("(s2mc) ")
        child.sendline("continue")
        child.expect_exact("continue")
        time.sleep(1)
        child.sendintr()
        child.expect(r"interrupted at cycle (\d+)")
        cycle = int(child.match.group(1))
        child.expect_exact("(s2mc) ")
        child.sendline("p $r1")
        child.expect(r"\$r1 = (\d+)")
        assert int(child.match.group(1)) == (cycle + 1) // 2 and cycle > 0
        child.expect_exact("(s2mc) ")
        child.sendline("reverse-stepi")
        child.expect_exact(f"cycle {cycle - 1}")
        child.expect_exact("(s2mc) ")
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0


def test_the_error_lines_the_docs_quote_are_what_the_debugger_prints(tmp_path):
    """docs/debugger.md's bad commands, run as written: stderr is exactly its text block, line for line."""
    from test_tour import run_in_order, stated_outputs
    text = (Path(__file__).resolve().parents[1] / "docs" / "debugger.md").read_text()
    [(cmds, want)] = [(c, w) for c, w in stated_outputs(text) if any("frobnicate" in line for line in c)]
    done = run_in_order(cmds, tmp_path)
    got = [ln for c in cmds for ln in done[c].stderr.splitlines()]
    assert got == want
    assert all(done[c].stdout == "" for c in cmds)          # every line of the block is an error line
