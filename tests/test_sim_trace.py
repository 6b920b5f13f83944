"""The --trace event log: both engines stream it in (cycle, core) order with bounded
memory. Oracles: the cycle-stepped reference model's own log (simulator/reference.py), the other
engine, the in-memory log of Result.trace and hand-made records."""
import glob
import re
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings

from s2gen import cache_configs, configs, programs
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import Machine, SimFault, format_trace
from s2mc.simulator import systemc_engine
from s2mc.simulator.reference import ReferenceMachine, RefFault
from s2mc.simulator.trace import RECORD, TraceList
from systemc_helpers import needs_systemc

ROOT = Path(__file__).resolve().parents[1]
MEM = 1024
ENGINES = ["fast", pytest.param("systemc", marks=needs_systemc)]


def reference_trace(prog, **cfg):
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, trace=True, **cfg)
    ref.run()
    return ref.trace


def fast_trace(prog, lane_cap, cores=1, mem_latency=2, arbitration="fifo", max_cycles=20_000, mem_words=MEM,
               **caches):
    """The fast engine's log with a chosen in-memory cap per core (a tiny cap makes cores that run
    ahead spill their events to a temporary file); returns it and the number of events spilled."""
    from s2mc.simulator import _fast
    eng = _fast.Engine([w & 0xFFFFFFFF for w in prog.code_image], prog.data_image, prog.entry, cores, mem_latency,
                       arbitration, max_cycles, mem_words, **caches)
    sink = TraceList()
    eng.enable_trace(sink, lane_cap=lane_cap)
    eng.run()
    sink.close(keep=True)
    return sink.events, eng.trace_spilled()


@settings(max_examples=150)
@given(programs(), configs)
def test_fast_trace_equals_the_reference_models_log(src, cfg):
    """Merged from per-core streams, with or without spilling, the log is the reference model's."""
    prog = assemble(src)
    try:
        expected = reference_trace(prog, mem_words=MEM, max_cycles=20_000, **cfg)
    except RefFault:
        return   # a faulting run's log ends wherever each engine stopped its cores: not compared
    assert Machine(prog, mem_words=MEM, max_cycles=20_000, trace=True, **cfg).run().trace == expected
    assert fast_trace(prog, lane_cap=2, **cfg)[0] == expected


@settings(max_examples=300)
@given(programs(), cache_configs())
def test_fast_trace_with_caches_equals_the_reference_models_log(src, cfg):
    """With caches: hits, coherence grants and every state change, in the reference model's order
    (other cores' changes come from a lane of their own, merged in after their own events)."""
    test_fast_trace_equals_the_reference_models_log.hypothesis.inner_test(src, cfg)


def test_a_core_far_ahead_spills_and_the_order_holds():
    # Core 0 computes alone for a long time (no bus access) while core 1 waits for the bus, so the
    # fast engine runs core 0 far ahead of core 1: its events must wait, and with a small cap they
    # go to the temporary file and come back in order.
    src = textwrap.dedent("""
        .code 0
          cid r1
          jt r1 core1
          mov r2 #3000
        :spin
          sub r2 r2 #1
          jt r2 spin
          st r2 @5 r0
          trap r0 #0
        :core1
          mov r2 #50
        :mem
          ld r3 @7 r0
          sub r2 r2 #1
          jt r2 mem
          trap r0 #0
    """)
    prog = assemble(src)
    cfg = dict(cores=2, mem_latency=3)
    expected = reference_trace(prog, mem_words=MEM, **cfg)
    events, spilled = fast_trace(prog, lane_cap=64, **cfg)
    assert spilled > 1000 and events == expected
    assert fast_trace(prog, lane_cap=1 << 20, **cfg) == (expected, 0)


def _programs():
    progs = [(Path(p).name, assemble(Path(p).read_text(), p))
             for p in sorted(glob.glob(str(ROOT / "workloads/asm/*.s")))[:4]]
    from s2mc.compiler import compile as compile_rz
    rz = ROOT / "workloads/rz/sum.rz"
    return progs + [("sum.rz", compile_rz(rz.read_text(), filename=str(rz)).program)]


PROGRAMS = _programs()
CONFIGS = [dict(cores=1, mem_latency=2, arbitration="fifo"), dict(cores=3, mem_latency=1, arbitration="fixed"),
           dict(cores=4, mem_latency=5, arbitration="round_robin")]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name,prog", PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_streamed_file_equals_the_in_memory_log(tmp_path, name, prog, engine):
    for cfg in CONFIGS:
        kw = dict(engine=engine, max_cycles=2_000_000, mem_words=8192, **cfg)
        kept = Machine(prog, trace=True, **kw).run().trace
        out = tmp_path / f"{name}.log"
        Machine(prog, trace_file=out, **kw).run()
        assert out.read_text() == format_trace(kept, prog, cfg["mem_latency"]), cfg
        assert not list(tmp_path.glob(".*.part"))
        if engine == "fast" and cfg["cores"] < 4:   # the reference model is slow: the smaller runs
            assert kept == reference_trace(prog, max_cycles=2_000_000, mem_words=8192, **cfg), cfg


def test_log_lines_by_hand():
    # cid at 0, ld requests at 1 and is granted at once (L=2), trap at 3: four lines, hand-written.
    prog = assemble(".code 0\ncid r1\nld r2 @0 r1\ntrap r0 #0\n.data 0\n:x\n7\n")
    text = format_trace(Machine(prog, mem_words=64, trace=True).run().trace, prog, 2)
    assert text.splitlines() == [
        "   cycle  core  bus      pc  instruction                         event",
        "       0     0    -       0  cid r1",
        "       1     0    0       1  ld r2 @x r1                         bus request",
        "       1     0    0       1  ld r2 @x r1  [x] = 7                bus grant (waited 0)",
        "       3     0    -       2  trap r0 #0                          halt",
    ]


# The two-core example of docs/timing-model.md with symbols, a jump and an xchg: the bus column,
# the named operands and the values, written out by hand from the cycle table there.
SYMBOLIC = """
.code 0
  cid r1
  ld r2 @0 r1           ; load word[cid]
  st r2 out             ; both cores store to `out`
  mov r3 #lock
  xchg r1 r3            ; r1 = old lock, lock = cid
  jt r0 done
:done
  trap r0 #0
.data 0
:vals
  42
  7
:out
  0
:lock
  5
"""


def test_log_lines_with_the_bus_owner_symbols_and_values():
    prog = assemble(SYMBOLIC)
    res = Machine(prog, cores=2, mem_words=64, trace=True).run()
    lines = format_trace(res.trace, prog, 2).splitlines()[1:]
    # core 0: cid 0, ld granted 1 (bus 1-2), st requests 3, granted 5 (bus 5-6), mov 7, xchg
    # requests 8 while core 1 holds the bus (7-8) and is granted 9 (9-10), jt 11, trap 12.
    # core 1: cid 0, ld granted 3 (3-4), st requests 5, granted 7 (7-8), mov 9, xchg requests 10,
    # granted 11 (11-12), jt 13, trap 14. Core 0 swaps its id 0 into lock (5 before), core 1 its 1.
    assert [" ".join(line.split()) for line in lines] == [
        "0 0 - 0 cid r1",
        "0 1 - 0 cid r1",
        "1 0 0 1 ld r2 @vals r1 bus request",
        "1 0 0 1 ld r2 @vals r1 [vals] = 42 bus grant (waited 0)",
        "1 1 0 1 ld r2 @vals r1 bus request",
        "3 0 1 2 st r2 out bus request",
        "3 1 1 1 ld r2 @vals r1 [vals+1] = 7 bus grant (waited 2)",
        "5 0 0 2 st r2 out <- 42 bus grant (waited 2)",
        "5 1 0 2 st r2 out bus request",
        "7 0 1 3 mov r3 #3",
        "7 1 1 2 st r2 out <- 7 bus grant (waited 2)",
        "8 0 1 4 xchg r1 r3 bus request",
        "9 0 0 4 xchg r1 r3 [lock] old=5 new=0 bus grant (waited 1)",
        "9 1 0 3 mov r3 #3",
        "10 1 0 4 xchg r1 r3 bus request",
        "11 0 1 5 jt r0 done",
        "11 1 1 4 xchg r1 r3 [lock] old=0 new=1 bus grant (waited 1)",
        "12 0 1 6 trap r0 #0 halt",
        "13 1 - 5 jt r0 done",
        "14 1 - 6 trap r0 #0 halt",
    ]
    assert res.cycles == 15


def test_the_logs_in_the_timing_model_page_are_current():
    # docs/timing-model.md, "The event log": the worked example with data, and spin_lock.s excerpted.
    doc = (ROOT / "docs/timing-model.md").read_text().split("## The event log")[1]
    blocks = re.findall(r"```\n(.*?)```", doc, re.S)
    prog = assemble(".code 0\n  cid r1\n  ld r2 @0 r1\n  st r2 @8 r1\n  trap r0 #0\n.data 0\n:vals\n  11\n  22\n")
    assert blocks[0] == format_trace(Machine(prog, cores=2, mem_words=64, trace=True).run().trace, prog, 2)
    lock = assemble((ROOT / "workloads/asm/spin_lock.s").read_text())
    full = format_trace(Machine(lock, cores=2, mem_words=64, trace=True).run().trace, lock, 2).splitlines()
    assert all(line in full for line in blocks[1].splitlines())


def test_records_split_across_chunks_are_decoded():
    # A pipe delivers any number of bytes: a record cut in two waits for its second half.
    # Fields: cycle, pc, core, kind, xact, wait, address, before, after, span (s2::TraceEvent).
    raw = (RECORD.pack(7, 3, 1, 2, 0, 5, 2**26 - 1, -2**31, 2**31 - 1, 0) + RECORD.pack(9, 4, 0, 4, 0, 0, 0, 0, 0, 0)
           + RECORD.pack(2**40, 2**22 - 1, 63, 5, 0, 0, 0, 0, 0, 0)
           # with caches: a BusRdX (2) grant of 5 cycles, and line 8 of core 2 going S (1) -> I (0)
           # by core 1's BusRdX
           + RECORD.pack(11, 6, 1, 7, 2, 3, 9, 4, 7, 5) + RECORD.pack(11, 6, 2, 8, 2, 1, 8, 1, 0, 0))
    sink = TraceList()
    for a, b in [(0, 5), (5, 50), (50, 111), (111, 170), (170, len(raw))]:
        sink(raw[a:b])
    sink.close(keep=True)
    assert sink.events == [(7, 1, 3, "grant", 5, 2**26 - 1, -2**31, 2**31 - 1), (9, 0, 4, "resume", 0, 0, 0, 0),
                           (2**40, 63, 2**22 - 1, "halt", 0, 0, 0, 0),
                           (11, 1, 6, "grant BusRdX 5", 3, 9, 4, 7), (11, 2, 6, "state BusRdX", 1, 8, "S", "I")]
    bad = TraceList()
    bad(raw[:50])
    with pytest.raises(S2mcError, match="partial record"):
        bad.close(keep=True)
    assert RECORD.size == 40 and struct.calcsize("=QIHBxQIii4x") == 40


FAULTY = ".code 0\ncid r1\nmov r2 #5\nld r3 @0 r0\ndiv r4 r2 r1\ntrap r0 #0\n"   # core 0 divides by 0


@pytest.mark.parametrize("engine", ENGINES)
def test_a_simulated_fault_keeps_the_log_up_to_it(tmp_path, engine):
    prog = assemble(FAULTY)
    out = tmp_path / "fault.log"
    with pytest.raises(SimFault) as kept:
        Machine(prog, cores=2, mem_words=64, engine=engine, trace=True).run()
    with pytest.raises(SimFault):
        Machine(prog, cores=2, mem_words=64, engine=engine, trace_file=out).run()
    assert out.read_text() == format_trace(kept.value.trace, prog, 2)
    assert "bus grant" in out.read_text() and not list(tmp_path.glob(".*.part"))


@pytest.mark.parametrize("engine", ENGINES)
def test_an_unwritable_trace_file_is_one_error_naming_it(tmp_path, engine):
    prog = assemble(".code 0\ntrap r0 #0\n")
    bad = tmp_path / "no such dir" / "t.log"
    with pytest.raises(S2mcError, match=re.escape(f"{bad}: cannot write trace file: folder {bad.parent} does not exist")):
        Machine(prog, engine=engine, trace_file=bad).run()


@pytest.fixture
def crashing_systemc(tmp_path, monkeypatch):
    """A stand-in SystemC engine that dies of SIGSEGV at once; returns its path."""
    fake = tmp_path / "s2mc-systemc"
    fake.write_text("#!/bin/sh\nkill -SEGV $$\n")
    fake.chmod(0o755)
    monkeypatch.setenv(systemc_engine.ENV_OVERRIDE, str(fake))
    return fake


def test_a_failed_run_leaves_no_trace_file(tmp_path, crashing_systemc):
    # A child that dies is an error, not a result: neither the file nor a temporary file remains.
    fake = crashing_systemc
    out = tmp_path / "t.log"
    with pytest.raises(S2mcError, match="crashed"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc", trace_file=out).run()
    assert list(tmp_path.iterdir()) == [fake]


def test_cli_trace_error_is_one_line(tmp_path):
    bad = tmp_path / "missing" / "t.log"
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(ROOT / "workloads/asm/parallel_sum.s"),
                           "--trace", str(bad)], capture_output=True, text=True, timeout=120)
    # Checked while the options are parsed (cli/options.py, OutputFile): a usage error, exit 2.
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == (f"s2mc run: error: Invalid value for '--trace': {bad}: cannot write trace: "
                                   f"folder {bad.parent} does not exist")


# -- memory -------------------------------------------------------------------------------------------
LOOP = """
.code 0
  cid r1
  mul r2 r1 #64
  mov r3 #{iters}
:loop
  and r4 r3 #63
  add r4 r4 r2
  ld r5 @0 r4
  add r5 r5 r3
  st r5 @0 r4
  sub r3 r3 #1
  jt r3 loop
  trap r0 #0
"""

# Runs `s2mc run` in a child of a fresh interpreter and prints the largest resident set among its
# descendants (the SystemC engine's own child included), so no earlier test's children count.
PEAK = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def _peak_kib(tmp_path, engine, iters):
    src = tmp_path / f"loop{iters}.s"
    src.write_text(LOOP.format(iters=iters))
    log = tmp_path / f"loop{iters}.log"
    cmd = [sys.executable, "-m", "s2mc.cli", "run", str(src), "--cores", "2", "--engine", engine,
           "--mem-words", "256", "--trace", str(log)]
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True, timeout=600, check=True)
    lines = log.stat().st_size
    log.unlink()
    return int(out.stdout), lines


def _check_bounded(tmp_path, engine, iters):
    """A run 4x longer (its log 4x bigger) may not need more than a few MiB more memory: a log kept
    whole grows by hundreds of bytes per event (1.6 GB for 4 million cycles)."""
    small, small_log = _peak_kib(tmp_path, engine, iters)
    large, large_log = _peak_kib(tmp_path, engine, 4 * iters)
    assert large_log > 3.9 * small_log
    assert large - small < 8 * 1024, (small, large, large_log)


@pytest.mark.parametrize("engine", ENGINES)
def test_traced_run_memory_is_bounded(tmp_path, engine):
    _check_bounded(tmp_path, engine, 10_000)     # 100 000 and 400 000 cycles: a whole log would be 100+ MB more


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_traced_run_memory_is_bounded_millions_of_cycles(tmp_path, engine):
    _check_bounded(tmp_path, engine, 100_000)    # 1 and 4 million cycles


def test_a_failed_run_keeps_the_old_trace_file(tmp_path, crashing_systemc):
    # The trace goes through s2mc.common.outputs: an older log is replaced only by a finished one.
    out = tmp_path / "t.log"
    out.write_text("the old log\n")
    with pytest.raises(S2mcError, match="crashed"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), engine="systemc", trace_file=out).run()
    assert out.read_text() == "the old log\n" and not list(tmp_path.glob(".*.part"))


def test_cli_trace_to_stdout(tmp_path):
    prog = ROOT / "workloads/asm/parallel_sum.s"
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(prog), "--cores", "2", "--trace", "-"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "bus grant (waited" in proc.stdout and not list(tmp_path.iterdir())


def _undefined_after_nop():
    prog = assemble(".code 0\nnop\n")
    prog.segments[0].words.append(0xFFFFFFFF)   # xop 4095: undefined
    return prog


# Each fault kind on one core, with the log's last event computed by hand: one cycle per
# instruction, the faulting one logged at its issue cycle (a memory one as its request, with the
# address), nothing logged for a pc past the program.
FAULT_LOGS = {
    "division_by_zero": (lambda: assemble(".code 0\nnop\nmov r2 #5\ndiv r3 r2 r0\n"), (2, 0, 2, "issue", 0, 0, 0, 0)),
    "address_out_of_range": (lambda: assemble(".code 0\nnop\nmov r1 #5000\nld r2 @0 r1\n"),
                             (2, 0, 2, "request", 0, 5000, 0, 0)),
    "undefined_opcode": (_undefined_after_nop, (1, 0, 1, "issue", 0, 0, 0, 0)),
    "pc_out_of_range": (lambda: assemble(".code 0\nnop\njmp 100\n"), (1, 0, 1, "issue", 0, 0, 0, 0)),
}


@pytest.mark.parametrize("kind", FAULT_LOGS)
@pytest.mark.parametrize("engine", ENGINES)
def test_the_faulting_cycle_is_logged_alike_by_both_engines(tmp_path, engine, kind):
    make, last = FAULT_LOGS[kind]
    prog = make()
    with pytest.raises(SimFault) as fault:
        Machine(prog, mem_words=1024, engine=engine, trace=True).run()
    assert fault.value.fault["kind"] == kind and fault.value.trace[-1] == last
    out = tmp_path / f"{engine}.log"
    with pytest.raises(SimFault):
        Machine(prog, mem_words=1024, engine=engine, trace_file=out).run()
    assert out.read_text() == format_trace(fault.value.trace, prog, 1)
