"""The counter table (simulator/counters.toml) drives every engine, the records and the docs.

Each test compares something generated or produced with the declaration read as plain data, so a
counter added to one place and not the table (or the other way round) fails here.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from s2mc.analysis.records import METRICS
from s2mc.isa import assemble
from s2mc.simulator import Config, _fast, run
from s2mc.simulator.counters import COUNTERS, core_counters, doc_table, engine_counters
from s2mc.simulator.gen_counters import render
from s2mc.simulator.reference import ReferenceMachine
from s2mc.simulator.systemc_engine import SystemCEngine
from systemc_helpers import needs_systemc

REPO = Path(__file__).resolve().parent.parent
TABLE = tomllib.loads((REPO / "simulator" / "counters.toml").read_text(encoding="utf-8"))["counter"]
# Counted by the engines in every run, as the table says (read here without s2mc's loader).
ENGINE = [r["name"] for r in TABLE if r["source"] == "engine" and r["group"] == "base"]
PROGRAM = assemble(".code 0\n  cid r1\n  ld r2 @0 r1\n  st r2 @8 r1\n  sync\n  trap r0 #0\n")


def test_the_loader_keeps_the_table_in_order():
    assert list(COUNTERS) == [r["name"] for r in TABLE]
    assert engine_counters(cached=False) == tuple(ENGINE)
    assert set(engine_counters(cached=True)) - set(ENGINE) == {
        r["name"] for r in TABLE if r["source"] == "engine" and r["group"] == "cache"}


def test_the_docs_table_is_generated_from_the_declaration():
    assert doc_table() in (REPO / "docs" / "timing-model.md").read_text(encoding="utf-8")


def test_the_cpp_header_lists_the_engine_counters():
    header = render((REPO / "simulator" / "counters.toml").read_text(encoding="utf-8"))
    base = header[header.index("S2_BASE_COUNTERS"):header.index("S2_CACHE_COUNTERS")]
    assert re.findall(r"X\((\w+)\)", base) == ENGINE
    built = sorted(REPO.glob("build/*/generated/s2_counters.h"))
    assert all(b.read_text(encoding="utf-8") == header for b in built)


def test_no_counter_name_is_written_out_in_the_cpp_serialisers():
    # the binding and the SystemC child name the per-core counters only through the generated
    # lists (the whole run's bus_busy_cycles, a field of the result itself, is named once in each)
    for src in ("simulator/src/bindings.cpp", "simulator/systemc/main.cpp"):
        text = (REPO / src).read_text(encoding="utf-8")
        quoted = re.findall(r'"(\w+)\\?"', text)     # "name" in C++, \"name\" inside a JSON string
        assert [n for n in ENGINE if n in quoted and n != "bus_busy_cycles"] == [], src
        assert quoted.count("bus_busy_cycles") == 1, src


def _raw_fast(cores):
    e = _fast.Engine([w & 0xFFFFFFFF for w in PROGRAM.code_image], list(PROGRAM.data_image), 0, cores, 2, "fifo",
                     1000, 64)
    return e.run()


@pytest.mark.parametrize("cores", [1, 3])
def test_the_fast_engine_reports_exactly_the_declared_counters(cores):
    raw = _raw_fast(cores)
    assert [list(c) for c in raw["cores"]] == [ENGINE] * cores


@pytest.mark.parametrize("cores", [1, 3])
def test_the_reference_model_reports_exactly_the_declared_counters(cores):
    raw = ReferenceMachine(PROGRAM.code_image, PROGRAM.data_image, cores=cores, mem_words=64).run()
    assert [sorted(c) for c in raw["cores"]] == [sorted(ENGINE)] * cores
    assert raw["cores"] == _raw_fast(cores)["cores"]


@pytest.mark.parametrize("cores", [1, 3])
def test_the_systemc_engine_reports_exactly_the_declared_counters(cores):
    raw = SystemCEngine(PROGRAM.code_image, PROGRAM.data_image, 0, Config(cores=cores, mem_words=64)).run()
    assert [sorted(c) for c in raw["cores"]] == [sorted(ENGINE)] * cores
    assert raw["cores"] == _raw_fast(cores)["cores"]


for _mark in needs_systemc:
    test_the_systemc_engine_reports_exactly_the_declared_counters = _mark(
        test_the_systemc_engine_reports_exactly_the_declared_counters)


def test_a_result_and_the_records_carry_every_core_counter():
    res = run(PROGRAM, cores=2, mem_words=64)
    assert [list(c) for c in res.cores] == [["core", *core_counters(cached=False)]] * 2
    # the derived ones, by their definitions in the table
    for c in res.cores:
        assert c["cycles"] == c["finish_cycle"] and c["idle_cycles"] == res.cycles - c["finish_cycle"]
        assert c["stall_cycles"] == c["bus_wait_cycles"] + c["bus_busy_cycles"] - c["mem_accesses"]


@pytest.mark.parametrize("engine", ["fast", pytest.param("systemc", marks=needs_systemc)])
def test_with_caches_every_engine_reports_the_cache_group_too(engine):
    prog = assemble(".code 0\n  cid r1\n  ld r2 @0 r1\n  ld r3 @0 r1\n  st r2 @8 r1\n  sync\n  trap r0 #0\n")
    res = run(prog, cores=2, mem_words=64, engine=engine, cache="mesi", cache_lines=4, cache_ways=2,
              line_words=2, cache_hit_latency=3)
    assert [list(c) for c in res.cores] == [["core", *core_counters(cached=True)]] * 2
    for c in res.cores:
        assert c["hit_stall_cycles"] == 2 * (c["cache_hits"] - c["bus_upgr"] - c["bus_upd"])
        assert c["stall_cycles"] == (c["bus_wait_cycles"] + c["bus_busy_cycles"] - c["mem_accesses"]
                                     + c["hit_stall_cycles"])
        # every cycle before the finish is an instruction's first, a stall or a barrier wait
        assert c["stall_cycles"] == c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
        assert c["cache_hits"] > 0 and c["cache_misses"] > 0


def test_every_counter_is_a_records_metric_with_its_unit_and_help():
    for r in TABLE:
        m = METRICS[r["name"]]
        assert (m.unit, m.description) == (r["unit"], r["help"])
