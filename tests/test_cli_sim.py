"""The CLI for the foundation: info, asm, disasm, run; every bad input gives one clear line and a
non-zero exit, never a traceback."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUM = ROOT / "workloads" / "asm" / "parallel_sum.s"


def s2mc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


def one_line_error(proc, *needles):
    assert proc.returncode != 0
    err = proc.stderr.strip()
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for n in needles:
        assert n in err, err
    return err


def test_run_json_prints_the_contract_object():
    proc = s2mc("run", SUM, "--cores", 4, "--json")
    assert proc.returncode == 0, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj["output"] == "5050\n"
    assert {"cycles", "instructions", "output", "cores"} <= set(obj)
    assert len(obj["cores"]) == 4
    for i, c in enumerate(obj["cores"]):
        assert c["core"] == i
        assert {"instructions", "cycles", "stall_cycles", "bus_wait_cycles", "mem_reads", "mem_writes"} <= set(c)
    assert obj["instructions"] == sum(c["instructions"] for c in obj["cores"])
    assert obj["cycles"] == max(c["cycles"] for c in obj["cores"])


def test_asm_then_disasm_then_run_object(tmp_path):
    obj = tmp_path / "sum.obj"
    assert s2mc("asm", SUM, "-o", obj).returncode == 0
    dis = s2mc("disasm", obj)
    assert dis.returncode == 0 and "ld r5 @array r1" in dis.stdout     # the label, not 64
    (tmp_path / "again.s").write_text(dis.stdout)
    assert s2mc("asm", tmp_path / "again.s", "-o", tmp_path / "again.obj").returncode == 0
    assert (tmp_path / "again.obj").read_text() == obj.read_text()
    assert json.loads(s2mc("run", obj, "--json").stdout)["output"] == "5050\n"


def test_trace_logs_requests_grants_and_waits(tmp_path):
    trace = tmp_path / "t.log"
    assert s2mc("run", SUM, "--cores", 2, "--trace", trace).returncode == 0
    lines = trace.read_text().splitlines()
    assert lines[0].split() == ["cycle", "core", "bus", "pc", "instruction", "event"]
    assert any("bus request" in l for l in lines) and any("bus grant (waited 2)" in l for l in lines)
    assert any("barrier" in l for l in lines) and lines[-1].endswith("halt")


def test_info_reports_engines():
    proc = s2mc("info", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["engines"]["fast"] is True


def test_runaway_program_hits_max_cycles(tmp_path):
    src = tmp_path / "loop.s"
    src.write_text(".code 0\n:x jmp x\n")
    err = one_line_error(s2mc("run", src, "--max-cycles", 5000), "cycle limit of 5000 reached", "core 0", "'jmp 0'",
                         "raise --max-cycles")
    assert "Machine" not in err      # the command line's control, not the page's field


def test_default_cycle_limit_catches_infinite_loops(tmp_path):
    src = tmp_path / "loop.s"
    src.write_text(".code 0\n:x add r1 r1 #1\njmp x\n")
    one_line_error(s2mc("run", src), "cycle limit of 100000000 reached")


def test_simulated_fault_names_core_pc_cycle_instruction(tmp_path):
    src = tmp_path / "div.s"
    src.write_text(".code 0\ncid r1\njf r1 3\ndiv r2 r2 r0\ntrap r0 #0\n")
    one_line_error(s2mc("run", src, "--cores", 2), "division by zero", "core 1", "pc 2", "cycle 2", "'div r2 r2 r0'")


@pytest.mark.parametrize("args,needles", [
    (["run", "missing.s"], ["missing.s", "no such file"]),
    (["run", "missing.rz"], ["missing.rz"]),
    (["asm", "missing.s"], ["missing.s"]),
    (["disasm", "missing.obj"], ["missing.obj"]),
    (["run", SUM, "--cores", 0], ["--cores", "0"]),
    (["run", SUM, "--cores", 257], ["--cores", "257"]),
    (["run", SUM, "--arbitration", "lottery"], ["--arbitration", "lottery"]),
    (["run", SUM, "--mem-latency", 0], ["--mem-latency"]),
    (["run", SUM, "--max-cycles", 0], ["--max-cycles"]),
    (["run", SUM, "--mem-words", 10], ["needs", "words of memory"]),
    (["run", SUM, "--vcd", "x.vcd"], ["--vcd needs --engine systemc"]),
    (["run", ROOT / "README.md"], ["expected a .rz, .s or .obj file"]),
])
def test_bad_input_gives_one_clear_line(args, needles):
    one_line_error(s2mc(*args), *needles)


def test_malformed_source_and_object(tmp_path):
    bad = tmp_path / "bad.s"
    bad.write_text(".code 0\n  mov r1 r2 r3\n")
    one_line_error(s2mc("asm", bad), "bad.s:2:", "wrong operands for mov")
    one_line_error(s2mc("run", bad), "bad.s:2:")
    obj = tmp_path / "bad.obj"
    obj.write_text("s2obj 1\ncode 0\nzzzz\n")
    one_line_error(s2mc("run", obj), "bad.obj:3: bad object file")
    binary = tmp_path / "bin.obj"
    binary.write_bytes(b"\xff\xfe\x00\x81")
    one_line_error(s2mc("disasm", binary), "not a text file")


def _sweep_table(stderr: str) -> tuple[list[str], dict[int, list[str]]]:
    """A sweep's table on stderr: its head and, by core count, its row."""
    lines = stderr.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("cores  cycles"))
    head = [h for h in lines[at].split("  ") if h.strip()]
    body = {}
    for ln in lines[at + 1:]:
        if not ln.split() or not ln.split()[0].isdigit():
            break
        body[int(ln.split()[0])] = ln.split()
    return [h.strip() for h in head], body


@pytest.mark.parametrize("program,extra", [("spin_lock.s", ()), ("false_sharing.s", ("--cache", "mesi")),
                                           ("spinlock.rz", ())])
def test_sweep_of_a_program_whose_work_grows_says_time_ratio_not_speedup(tmp_path, program, extra):
    # the lock programs do cores x rounds increments: 8 cores do 8 times the work of one
    proc = s2mc("run", program, "--cores", "1,2,4", *extra, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    head, body = _sweep_table(proc.stderr)
    assert head[2] == "time vs 1c" and not any("speedup" in h for h in head)
    for n in (2, 4):   # the cycles over the 1-core run's, from the same table
        assert body[n][2] == f"{int(body[n][1]) / int(body[1][1]):.2f}"
    assert float(body[4][2]) > 1
    assert "the program says `work: per core` (its work grows with the cores)" in proc.stderr


def test_sweep_of_fixed_work_and_of_an_undeclared_copy_says_speedup(tmp_path):
    proc = s2mc("run", "parallel_sum.s", "--cores", "2,4", cwd=tmp_path)
    head, body = _sweep_table(proc.stderr)
    assert head[2] == "speedup vs 2c" and body[4][2] == f"{int(body[2][1]) / int(body[4][1]):.2f}"
    # the declaration travels with the file: a copy without it is the user's claim of fixed work
    src = (ROOT / "workloads" / "asm" / "spin_lock.s").read_text()
    (tmp_path / "mine.s").write_text("\n".join(ln for ln in src.splitlines() if "work: per core" not in ln) + "\n")
    head, _ = _sweep_table(s2mc("run", "mine.s", "--cores", "1,2", cwd=tmp_path).stderr)
    assert head[2] == "speedup"
