"""Caches and coherence by hand (docs/timing-model.md, "Caches and coherence").

Every expectation below was computed by hand from the written rules, cycle by cycle, before any
engine ran it; the table of each program is in its test's docstring. Unless a test says otherwise:
L = 2 (mem_latency), W = 4 (line_words), H = 1, 64 lines in 2 ways, fifo. So a line from memory
takes L + W - 1 = 5 bus cycles, a line from another cache W = 4, an upgrade or update 1.

Each program runs on the reference model and on every engine that simulates caches; they must all
give the hand-computed counters (every cache counter not named is 0) and state changes.
"""
import re
from pathlib import Path

import pytest

from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.reference import CACHE_STATS, ReferenceMachine

ROOT = Path(__file__).resolve().parents[1]
MEM = 256
ENGINES = ["reference", "fast", "systemc"]
PROTOCOLS = ["msi", "mesi", "moesi", "dragon"]
TIMING = ("instructions", "finish_cycle", "mem_accesses", "bus_wait_cycles", "bus_busy_cycles",
          "sync_wait_cycles", "stall_cycles")


def observe(src: str, engine: str, **cfg) -> dict:
    """cycles, per-core counters (finish_cycle, the timing and cache counters) and the event log
    of one run on the reference model or an engine (skipped while that engine has no caches)."""
    prog = assemble(src)
    if engine == "reference":
        m = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, mem_words=MEM, trace=True, **cfg)
        raw = m.run()
        cores = [dict(c, stall_cycles=stall) for c, stall in zip(raw["cores"], raw["stall_cycles"])]
        return {"cycles": raw["cycles"], "cores": cores, "trace": m.trace}
    if engine == "systemc":
        from s2mc.simulator import systemc_engine
        if not systemc_engine.available():
            pytest.skip("the SystemC engine (s2mc-systemc) is not built")
    m = Machine(prog, engine=engine, mem_words=MEM, trace=True, **cfg)
    r = m.run()
    cores = [dict(c, finish_cycle=c["cycles"]) for c in r.cores]
    return {"cycles": r.cycles, "cores": cores, "trace": r.trace}


def check(got: dict, cycles: int, *cores: dict) -> None:
    """The run took `cycles`; core i has the counters cores[i] names, and 0 for every cache counter
    it does not name."""
    assert got["cycles"] == cycles
    for i, want in enumerate(cores):
        want = {**dict.fromkeys(CACHE_STATS, 0), **want}
        have = {k: got["cores"][i][k] for k in want}
        assert have == want, f"core {i}"
        c = got["cores"][i]   # every cycle before the finish: an instruction's first, a stall or a barrier wait
        assert c["stall_cycles"] == c["finish_cycle"] - c["instructions"] - c["sync_wait_cycles"]
        if "cache_misses" in c:   # every miss has exactly one class, every coherence miss one sharing kind
            assert c["cache_misses"] == (c["cold_misses"] + c["capacity_misses"] + c["conflict_misses"]
                                         + c["coherence_misses"])
            assert c["coherence_misses"] == c["true_sharing_misses"] + c["false_sharing_misses"]


def states(got: dict) -> list[tuple]:
    """The state changes: (cycle, core, cause, line base, old, new, causing core)."""
    return [(e[0], e[1], e[3].split(" ", 1)[1], e[5], e[6], e[7], e[4]) for e in got["trace"]
            if e[3].startswith("state ")]


def grants(got: dict) -> list[tuple]:
    """The bus grants: (cycle, core, event)."""
    return [(e[0], e[1], e[3]) for e in got["trace"] if e[3].startswith("grant")]


# -- one core reads, then writes a line ------------------------------------------------------------
READ_WRITE = """
.code 0
  ld r1 x       ; 0
  st r1 x       ; 1
  trap r0 #0    ; 2
.data 0
:x
  5
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_one_core_reads_then_writes_a_line(engine, protocol):
    """| cycle | msi | mesi, moesi, dragon |
    |---|---|---|
    | 0 | ld misses: BusRd from memory, D = 5, I -> S | BusRd, D = 5, I -> E (no other copy) |
    | 5 | st: S is not writable: BusUpgr, D = 1, S -> M | st hits, E -> M silently (PrWr) |
    | 6 | trap: finish 7 | trap: finish 7 |

    The same 7 cycles (an upgrade takes one cycle, as a hit does), but MSI used the bus twice.
    Both count the store as a hit: the line was present when it took effect."""
    got = observe(READ_WRITE, engine, cache=protocol)
    if protocol == "msi":
        check(got, 7, dict(instructions=3, finish_cycle=7, mem_accesses=2, bus_busy_cycles=6, stall_cycles=4,
                           cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upgr=1))
        assert grants(got) == [(0, 0, "grant BusRd 5"), (5, 0, "grant BusUpgr 1")]
        assert states(got) == [(0, 0, "BusRd", 0, "I", "S", 0), (5, 0, "BusUpgr", 0, "S", "M", 0)]
    else:
        check(got, 7, dict(instructions=3, finish_cycle=7, mem_accesses=1, bus_busy_cycles=5, stall_cycles=4,
                           cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1))
        assert grants(got) == [(0, 0, "grant BusRd 5")]
        assert states(got) == [(0, 0, "BusRd", 0, "I", "E", 0), (5, 0, "PrWr", 0, "E", "M", 0)]
        assert [e[3] for e in got["trace"] if e[0] == 5] == ["hit", "state PrWr"]


@pytest.mark.parametrize("engine", ENGINES)
def test_hit_latency_adds_its_stall(engine):
    """MESI with H = 3: the store at 5 hits and the trap issues at 8 (finish 9); the hit's two
    extra cycles are stalls: 4 (the fill) + 2 = 6."""
    got = observe(READ_WRITE, engine, cache="mesi", cache_hit_latency=3)
    check(got, 9, dict(finish_cycle=9, mem_accesses=1, bus_busy_cycles=5, stall_cycles=6,
                       cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, hit_stall_cycles=2))


# -- two cores hand a line back and forth across barriers ------------------------------------------
HANDOVER = """
.code 0
  cid r1            ; 0
  jt r1 one         ; 1
  mov r2 #7         ; 2   core 0
  st r2 x           ; 3
  sync              ; 4
  sync              ; 5
  ld r3 x           ; 6
  trap r0 #0        ; 7
:one
  sync              ; 8   core 1
  ld r3 x           ; 9
  add r3 r3 #1      ; 10
  st r3 x           ; 11
  sync              ; 12
  trap r0 #0        ; 13
.data 0
:x
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_two_cores_hand_a_line_back_and_forth(engine, protocol):
    """Core 0 writes x, both meet at a barrier, core 1 reads and writes it, a barrier, core 0 reads
    it again. The table (msi and mesi; moesi differs only where noted):

    | cycle | core 0 | core 1 | bus |
    |---|---|---|---|
    | 2 | mov | sync (arrives) | |
    | 3 | st misses: BusRdX from memory, D = 5, I -> M | waits | 3-7 |
    | 8 | sync: barrier completes (core 1 waited 6) | | |
    | 9 | sync (arrives) | ld misses: BusRd; core 0's M supplies, D = 4: core 0 M -> S and writes back (moesi: M -> O, no write-back); core 1 I -> S | 9-12 |
    | 13 | | add | |
    | 14 | | st: BusUpgr, D = 1: core 0 S (moesi: O) -> I; core 1 S -> M | 14 |
    | 15 | barrier completes (core 0 waited 6) | sync (arrives) | |
    | 16 | ld misses (a coherence miss, true sharing: it reads the x core 1 wrote at 14): BusRd, core 1's M supplies, D = 4; core 1 M -> S, writes back (moesi: M -> O) | trap: finish 17 | 16-19 |
    | 20 | trap: finish 21 | | |
    """
    got = observe(HANDOVER, engine, cores=2, cache=protocol)
    wb = 0 if protocol == "moesi" else 1
    check(got, 21,
          dict(instructions=8, finish_cycle=21, mem_accesses=2, bus_busy_cycles=9, sync_wait_cycles=6,
               stall_cycles=7, cache_misses=2, cold_misses=1, coherence_misses=1, true_sharing_misses=1, bus_rd=1,
               bus_rdx=1, cache_to_cache=1, writebacks=wb, invalidations_received=1),
          dict(instructions=8, finish_cycle=17, mem_accesses=2, bus_busy_cycles=5, sync_wait_cycles=6,
               stall_cycles=3, cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upgr=1, cache_to_cache=1,
               writebacks=wb))
    shared = "O" if protocol == "moesi" else "S"
    assert states(got) == [
        (3, 0, "BusRdX", 0, "I", "M", 0),
        (9, 0, "BusRd", 0, "M", shared, 1), (9, 1, "BusRd", 0, "I", "S", 1),
        (14, 0, "BusUpgr", 0, shared, "I", 1), (14, 1, "BusUpgr", 0, "S", "M", 1),
        (16, 0, "BusRd", 0, "I", "S", 0), (16, 1, "BusRd", 0, "M", shared, 0)]


@pytest.mark.parametrize("engine", ENGINES)
def test_two_cores_hand_a_line_back_and_forth_dragon(engine):
    """The same program under Dragon: nothing is invalidated, the write at 14 updates core 0's copy.

    | cycle | core 0 | core 1 | bus |
    |---|---|---|---|
    | 3 | st misses: BusRd+BusUpd, no other copy: a plain fill, D = 5, I -> M | | 3-7 |
    | 9 | sync | ld: BusRd, core 0's M supplies, D = 4: core 0 M -> Sm, core 1 I -> Sc | 9-12 |
    | 14 | | st: BusUpd, D = 1: core 0 Sm -> Sc (updated), core 1 Sc -> Sm | 14 |
    | 16 | ld **hits** its updated Sc copy | trap: finish 17 | |
    | 17 | trap: finish 18 | | |
    """
    got = observe(HANDOVER, engine, cores=2, cache="dragon")
    check(got, 18,
          dict(instructions=8, finish_cycle=18, mem_accesses=1, bus_busy_cycles=5, sync_wait_cycles=6,
               stall_cycles=4, cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1),
          dict(instructions=8, finish_cycle=17, mem_accesses=2, bus_busy_cycles=5, sync_wait_cycles=6,
               stall_cycles=3, cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upd=1, cache_to_cache=1))
    assert grants(got) == [(3, 0, "grant BusRd+BusUpd 5"), (9, 1, "grant BusRd 4"), (14, 1, "grant BusUpd 1")]
    assert states(got) == [
        (3, 0, "BusRd+BusUpd", 0, "I", "M", 0),
        (9, 0, "BusRd", 0, "M", "Sm", 1), (9, 1, "BusRd", 0, "I", "Sc", 1),
        (14, 0, "BusUpd", 0, "Sm", "Sc", 1), (14, 1, "BusUpd", 0, "Sc", "Sm", 1)]


def _section(name: str) -> str:
    """The text of one ### section of docs/timing-model.md."""
    text = (ROOT / "docs" / "timing-model.md").read_text()
    start = text.index(f"### {name}")
    end = text.find("\n## ", start)
    nxt = text.find("\n### ", start + 1)
    return text[start:min(p for p in (end, nxt) if p != -1)]


def assert_example_is(doc: str, program: str) -> None:
    """The first code block of a page's section is `program`, comments aside."""
    code = re.search(r"```\n(.*?)```", doc, re.S).group(1)
    assert [ln.split(";")[0].split() for ln in code.splitlines()] == \
        [ln.split(";")[0].split() for ln in program.strip().splitlines()]


def test_the_worked_example_in_the_timing_model_page_is_current():
    """The page's worked example with caches is this test's program, and the totals it states
    are the reference model's."""
    doc = _section("A worked example with caches")
    assert_example_is(doc, HANDOVER)
    stated = {m.group(1): int(m.group(2)) for m in re.finditer(r"(\w+) takes (\d+) cycles", doc)}
    assert stated, "the page states no totals"
    for protocol, cycles in stated.items():
        assert observe(HANDOVER, "reference", cores=2, cache=protocol.lower())["cycles"] == cycles, protocol


# -- a victim write-back ---------------------------------------------------------------------------
VICTIM = """
.code 0
  st r0 a       ; 0   line 0
  ld r1 b       ; 1   line 1: evicts the dirty line 0
  ld r2 a       ; 2   line 0 again: evicts the clean line 1
  trap r0 #0    ; 3
.data 0
:a
  0
  0
:b
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_dirty_victim_is_written_back(engine, protocol):
    """A one-line cache, W = 2 (a line from memory: L + W - 1 = 3 cycles):

    | cycle | event | D |
    |---|---|---|
    | 0 | st a misses: BusRdX (dragon: BusRd+BusUpd, no other copy), I -> M | 3 |
    | 3 | ld b misses; the victim, line 0 in M, is written back first: M -> I (evict), then I -> S (msi) or E | 3 + 3 = 6 |
    | 9 | ld a misses (a capacity miss: the cache has one line); the victim, line 1, is clean: no write-back | 3 |
    | 12 | trap: finish 13 | |

    Stalls: 2 + 5 + 2 = 9."""
    got = observe(VICTIM, engine, cache=protocol, cache_lines=1, cache_ways=1, line_words=2)
    write = "BusRd+BusUpd" if protocol == "dragon" else "BusRdX"
    read = "S" if protocol == "msi" else "E"
    check(got, 13, dict(instructions=4, finish_cycle=13, mem_accesses=3, bus_busy_cycles=12, stall_cycles=9,
                        cache_misses=3, cold_misses=2, capacity_misses=1, bus_rd=3 if protocol == "dragon" else 2,
                        bus_rdx=0 if protocol == "dragon" else 1, writebacks=1))
    assert grants(got) == [(0, 0, f"grant {write} 3"), (3, 0, "grant BusRd 6"), (9, 0, "grant BusRd 3")]
    assert states(got) == [(0, 0, write, 0, "I", "M", 0),
                           (3, 0, "evict", 0, "M", "I", 0), (3, 0, "BusRd", 2, "I", read, 0),
                           (9, 0, "evict", 2, read, "I", 0), (9, 0, "BusRd", 0, "I", read, 0)]


LRU = """
.code 0
  ld r1 a       ; 0
  ld r1 b       ; 1
  ld r1 a       ; 2   hit: a is now the most recently used
  ld r1 c       ; 3   evicts b
  ld r1 a       ; 4   hit
  ld r1 b       ; 5   evicts c
  trap r0 #0    ; 6
.data 0
:a
  1
:b
  2
:c
  3
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_lru_evicts_the_least_recently_used_way(engine):
    """Two lines, fully associative, W = 1 (a fill takes L = 2):

    | cycle | access | way 0 | way 1 |
    |---|---|---|---|
    | 0 | ld a misses (the lowest invalid way) | a | |
    | 2 | ld b misses | a | b |
    | 4 | ld a hits | a (newest) | b |
    | 5 | ld c misses: b is older | a | c |
    | 7 | ld a hits | a (newest) | c |
    | 8 | ld b misses (capacity: the cache is fully associative): c is older | a | b |
    | 10 | trap: finish 11 | | |
    """
    got = observe(LRU, engine, cache="mesi", cache_lines=2, cache_ways=2, line_words=1)
    check(got, 11, dict(finish_cycle=11, mem_accesses=4, bus_busy_cycles=8, stall_cycles=4,
                        cache_hits=2, cache_misses=4, cold_misses=3, capacity_misses=1, bus_rd=4))
    assert [(c, base, new) for c, _, why, base, _, new, _ in states(got) if why == "evict"] == [(5, 1, "I"), (8, 2, "I")]


# -- an upgrade that became a BusRdX ---------------------------------------------------------------
UPGRADE_LOST = """
.code 0
  ld r1 x       ; 0   both cores read x: shared
  sync          ; 1
  cid r2        ; 2
  st r2 x       ; 3   both write it in the same cycle
  trap r0 #0    ; 4
.data 0
:x
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_an_upgrade_becomes_busrdx_when_the_line_was_lost_while_waiting(engine, protocol):
    """| cycle | core 0 | core 1 | bus |
    |---|---|---|---|
    | 0 | ld: BusRd from memory, D = 5, I -> S (mesi, moesi: E) | ld waits | 0-4 |
    | 5 | sync | BusRd from memory (an E copy does not supply): core 0 E -> S; core 1 I -> S | 5-9 |
    | 10 | | sync: the barrier completes | |
    | 12 | st: S, BusUpgr granted (fifo tie: core 0), D = 1: core 1 S -> I, core 0 S -> M | st requests an upgrade of its S line, waits | 12 |
    | 13 | trap: finish 14 | granted: the line is gone, so a **BusRdX**; core 0's M supplies, D = 4 (msi, mesi: a flush, core 0 writes back), core 0 M -> I | 13-16 |
    | 17 | | trap: finish 18 | |

    Core 1's miss is a coherence miss, and false sharing although core 0 wrote x itself: core 1
    only overwrites x, so its copy never reads a value another core wrote (it ends with the run)."""
    got = observe(UPGRADE_LOST, engine, cores=2, cache=protocol)
    wb = 0 if protocol == "moesi" else 1
    check(got, 18,
          dict(instructions=5, finish_cycle=14, mem_accesses=2, bus_busy_cycles=6, sync_wait_cycles=5,
               stall_cycles=4, cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upgr=1, writebacks=wb,
               invalidations_received=1),
          dict(instructions=5, finish_cycle=18, bus_wait_cycles=6, mem_accesses=2, bus_busy_cycles=9,
               stall_cycles=13, cache_misses=2, cold_misses=1, coherence_misses=1, false_sharing_misses=1, bus_rd=1,
               bus_rdx=1, cache_to_cache=1, invalidations_received=1))
    assert grants(got) == [(0, 0, "grant BusRd 5"), (5, 1, "grant BusRd 5"), (12, 0, "grant BusUpgr 1"),
                           (13, 1, "grant BusRdX 4")]
    assert [(e[0], e[1], e[3]) for e in got["trace"] if e[3] == "request" and e[0] == 12] == \
        [(12, 0, "request"), (12, 1, "request")]


@pytest.mark.parametrize("engine", ENGINES)
def test_both_writers_update_under_dragon(engine):
    """Dragon never invalidates: both stores of cycle 12 are BusUpd of a present line.

    | cycle | core 0 | core 1 |
    |---|---|---|
    | 0 | BusRd, D = 5, I -> E | waits |
    | 5 | sync | BusRd from memory: core 0 E -> Sc, core 1 I -> Sc |
    | 12 | BusUpd, D = 1: Sc -> Sm (core 1's Sc updated) | waits |
    | 13 | trap: finish 14 | BusUpd, D = 1: core 0 Sm -> Sc, core 1 Sc -> Sm |
    | 14 | | trap: finish 15 |
    """
    got = observe(UPGRADE_LOST, engine, cores=2, cache="dragon")
    check(got, 15,
          dict(finish_cycle=14, mem_accesses=2, bus_busy_cycles=6, sync_wait_cycles=5, stall_cycles=4,
               cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upd=1),
          dict(finish_cycle=15, bus_wait_cycles=6, mem_accesses=2, bus_busy_cycles=6, stall_cycles=10,
               cache_hits=1, cache_misses=1, cold_misses=1, bus_rd=1, bus_upd=1))


# -- false sharing against padded ------------------------------------------------------------------
SHARING = """
.symbol
  stride {stride}
.code 0
  cid r1              ; 0
  mul r1 r1 #stride   ; 1
  st r1 @cnt r1       ; 2   write the own counter
  ld r2 @cnt r1       ; 3   read it
  st r2 @cnt r1       ; 4   write it again
  trap r0 #0          ; 5
.data 0
:cnt
  0 0 0 0 0 0 0 0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_false_sharing_against_padded(engine, protocol):
    """Two cores, each writing its own counter: words 0 and 1 (one line) or 0 and 4 (padded).

    Unpadded:
    | cycle | core 0 | core 1 | bus |
    |---|---|---|---|
    | 2 | st misses: BusRdX from memory, D = 5, M | st misses, waits | 2-6 |
    | 7 | ld **hits** (lookups come before the grant of the cycle) | BusRdX granted: core 0's M supplies, D = 4, core 0 M -> I | 7-10 |
    | 8 | st misses, waits | | |
    | 11 | BusRdX granted: core 1's M supplies, D = 4: a coherence miss | ld hits | 11-14 |
    | 12 | | st misses, waits | |
    | 15 | trap: finish 16; its copy of 11, invalidated, never read a word core 1 wrote: false sharing | BusRdX granted, D = 4: a coherence miss, false sharing at the end of the run (nothing read) | 15-18 |
    | 19 | | trap: finish 20 | |

    Padded: two fills from memory (2-6, 7-11), then only hits: core 0 finishes at 10, core 1 at 15."""
    got = observe(SHARING.format(stride=1), engine, cores=2, cache=protocol)
    wb = protocol != "moesi"
    check(got, 20,
          dict(finish_cycle=16, bus_wait_cycles=3, mem_accesses=2, bus_busy_cycles=9, stall_cycles=10,
               cache_hits=1, cache_misses=2, cold_misses=1, coherence_misses=1, false_sharing_misses=1, bus_rdx=2,
               cache_to_cache=1, writebacks=2 * wb, invalidations_received=2),
          dict(finish_cycle=20, bus_wait_cycles=8, mem_accesses=2, bus_busy_cycles=8, stall_cycles=14,
               cache_hits=1, cache_misses=2, cold_misses=1, coherence_misses=1, false_sharing_misses=1, bus_rdx=2,
               cache_to_cache=2, writebacks=1 * wb, invalidations_received=1))
    padded = observe(SHARING.format(stride=4), engine, cores=2, cache=protocol)
    check(padded, 15,
          dict(finish_cycle=10, mem_accesses=1, bus_busy_cycles=5, stall_cycles=4, cache_hits=2, cache_misses=1,
               cold_misses=1, bus_rdx=1),
          dict(finish_cycle=15, bus_wait_cycles=5, mem_accesses=1, bus_busy_cycles=5, stall_cycles=9,
               cache_hits=2, cache_misses=1, cold_misses=1, bus_rdx=1))


@pytest.mark.parametrize("engine", ENGINES)
def test_false_sharing_under_dragon_is_updates(engine):
    """Dragon on the unpadded counters: no misses after the fills, but every write updates the
    other copy.

    | cycle | core 0 | core 1 | bus |
    |---|---|---|---|
    | 2 | st: BusRd+BusUpd, no other copy, D = 5: M | waits | 2-6 |
    | 7 | ld hits (M, before the grant) | BusRd+BusUpd: core 0's M supplies (4) and is updated (1): D = 5; core 0 M -> Sc, core 1 Sm | 7-11 |
    | 8 | st: Sc, BusUpd requested, waits | | |
    | 12 | BusUpd granted, D = 1: core 1 Sm -> Sc, core 0 Sc -> Sm | ld hits (Sm, before the grant) | 12 |
    | 13 | trap: finish 14 | st: BusUpd, D = 1: core 0 Sm -> Sc, core 1 Sc -> Sm | 13 |
    | 14 | | trap: finish 15 | |
    """
    got = observe(SHARING.format(stride=1), engine, cores=2, cache="dragon")
    check(got, 15,
          dict(finish_cycle=14, bus_wait_cycles=4, mem_accesses=2, bus_busy_cycles=6, stall_cycles=8,
               cache_hits=2, cache_misses=1, cold_misses=1, bus_rd=1, bus_upd=1),
          dict(finish_cycle=15, bus_wait_cycles=5, mem_accesses=2, bus_busy_cycles=6, stall_cycles=9,
               cache_hits=2, cache_misses=1, cold_misses=1, bus_rd=1, bus_upd=2, cache_to_cache=1))
    assert states(got)[1:3] == [(7, 0, "BusRd+BusUpd", 0, "M", "Sc", 1), (7, 1, "BusRd+BusUpd", 0, "I", "Sm", 1)]


# -- test-and-set against test-and-test-and-set ----------------------------------------------------
TAS = """
.code 0
  mov r2 #lock      ; 0
  mov r3 #3         ; 1   three tries
:spin
  mov r1 #1         ; 2
  xchg r1 r2        ; 3   test-and-set: needs the line in M every time
  sub r3 r3 #1      ; 4
  jt r3 spin        ; 5
  trap r0 #0        ; 6
.data 0
:lock
  1
.end
"""

TTAS = """
.code 0
  mov r2 #lock      ; 0
  mov r3 #3         ; 1   three tries
:spin
  ld r1 lock        ; 2   test: spins on the cached copy
  jf r1 take        ; 3   free? (never here)
  sub r3 r3 #1      ; 4
  jt r3 spin        ; 5
  trap r0 #0        ; 6
:take
  mov r1 #1         ; 7
  xchg r1 r2        ; 8
  trap r0 #0        ; 9
.data 0
:lock
  1
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_tas_spin_storms_and_ttas_does_not(engine):
    """Two cores spin three times on a lock that stays held (MESI, W = 1: a fill from memory takes
    L = 2, from a cache 1).

    TAS: every xchg needs M, and the other core took it in between; each xchg after the first reads
    the lock word the other core wrote last, so each coherence miss is true sharing:
    | cycle | core 0 | core 1 |
    |---|---|---|
    | 3 | xchg: BusRdX from memory (2), M | xchg waits |
    | 5 | | BusRdX: core 0's M flushes (1); core 0 M -> I |
    | 8 | xchg: BusRdX, core 1 flushes (1), core 1 -> I | |
    | 9 | | xchg: BusRdX, core 0 -> I |
    | 12 | xchg: BusRdX, core 1 -> I | |
    | 13 | | xchg: BusRdX, core 0 -> I |
    | 15 | trap: finish 16 | |
    | 16 | | trap: finish 17 |

    TTAS: one BusRd each (0 -> E at 2, then S when core 1 reads at 4), then both spin on hits:
    core 0 loads at 2, 7, 11 and finishes at 16; core 1 at 4, 9, 13 and finishes at 18."""
    tas = observe(TAS, engine, cores=2, cache="mesi", line_words=1)
    check(tas, 17,
          dict(finish_cycle=16, mem_accesses=3, bus_busy_cycles=4, stall_cycles=1, cache_misses=3, cold_misses=1,
               coherence_misses=2, true_sharing_misses=2, bus_rdx=3, cache_to_cache=2, writebacks=3,
               invalidations_received=3),
          dict(finish_cycle=17, bus_wait_cycles=2, mem_accesses=3, bus_busy_cycles=3, stall_cycles=2,
               cache_misses=3, cold_misses=1, coherence_misses=2, true_sharing_misses=2, bus_rdx=3, cache_to_cache=3,
               writebacks=2, invalidations_received=2))
    ttas = observe(TTAS, engine, cores=2, cache="mesi", line_words=1)
    check(ttas, 18,
          dict(finish_cycle=16, mem_accesses=1, bus_busy_cycles=2, stall_cycles=1, cache_hits=2,
               cache_misses=1, cold_misses=1, bus_rd=1),
          dict(finish_cycle=18, bus_wait_cycles=2, mem_accesses=1, bus_busy_cycles=2, stall_cycles=3,
               cache_hits=2, cache_misses=1, cold_misses=1, bus_rd=1))
    storm = sum(c["invalidations_received"] + c["bus_rdx"] for c in tas["cores"])
    calm = sum(c["invalidations_received"] + c["bus_rdx"] for c in ttas["cores"])
    assert (storm, calm) == (11, 0)


# -- what does not change --------------------------------------------------------------------------
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_trap_3_bypasses_the_caches(protocol):
    """Printing a string stays an uncached access of L cycles: a plain grant, no state change."""
    src = """
.code 0
  mov r1 #msg
  trap r1 #3
  trap r0 #0
.data 0
:msg
  72 105 0
.end
"""
    got = observe(src, "reference", cache=protocol)
    check(got, 4, dict(finish_cycle=4, mem_accesses=1, bus_busy_cycles=2, stall_cycles=1))
    assert grants(got) == [(1, 0, "grant")] and states(got) == []


def test_cacheless_counters_are_unchanged():
    """cache none: no cache counter appears, and the model is seed 003's (the first worked example
    of the page: 10 cycles)."""
    src = """
.code 0
  cid r1
  ld r2 @0 r1
  st r2 @8 r1
  trap r0 #0
.end
"""
    got = observe(src, "reference", cores=2)
    assert got["cycles"] == 10
    assert not set(CACHE_STATS) & set(got["cores"][0])
