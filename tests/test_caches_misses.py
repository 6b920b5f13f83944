"""The miss classification by hand (docs/timing-model.md, "Miss classification"): every miss is cold,
capacity, conflict or coherence, and every coherence miss true or false sharing.

Each program's classes were worked out by hand from the definitions, access by access (the table is
in the test's docstring), and every engine and the reference model must give them. Unless a test
says otherwise: L = 2, W = 4, 64 lines in 2 ways, fifo (test_caches_hand's defaults). The other
counters of these programs follow the rules test_caches_hand checks; here only the classes count.
"""
import pytest

from s2mc.isa import assemble
from s2mc.simulator.reference import ReferenceMachine
from s2mc.simulator.stepping import Stepper
from test_caches_hand import ENGINES, SHARING, _section, assert_example_is, observe

CLASSES = ("cache_misses", "cold_misses", "capacity_misses", "conflict_misses", "coherence_misses",
           "true_sharing_misses", "false_sharing_misses")


def classes(got: dict) -> list[dict]:
    """Per core: the miss counters (None where an engine lacks one)."""
    return [{k: c.get(k) for k in CLASSES} for c in got["cores"]]


def want(misses=0, cold=0, capacity=0, conflict=0, coherence=0, true=0, false=0) -> dict:
    return dict(zip(CLASSES, (misses, cold, capacity, conflict, coherence, true, false)))


# Phases separated by barriers: in each phase only the cores named act.
THREE = """
.code 0
  cid r1            ; 0
  jt r1 notzero     ; 1
  ld r2 w0          ; 2   phase 1, core 0: reads word 0
:notzero
  sync              ; 3
  eq r3 r1 #1       ; 4
  jf r3 notone      ; 5
  st r1 w1          ; 6   phase 2, core 1: writes word 1
:notone
  sync              ; 7
  eq r3 r1 #2       ; 8
  jf r3 nottwo      ; 9
  st r1 w0          ; 10  phase 3, core 2: writes word 0
:nottwo
  sync              ; 11
  jt r1 done        ; 12
  ld r2 w0          ; 13  phase 4, core 0: reads word 0
:done
  trap r0 #0        ; 14
.data 0
:w0
  0
:w1
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_a_word_written_by_a_third_core_is_true_sharing(engine, protocol):
    """| phase | core 0 | core 1 | core 2 |
    |---|---|---|---|
    | 1 | ld w0: cold | | |
    | 2 | its copy invalidated | st w1: cold (BusRdX) | |
    | 3 | | its copy invalidated | st w0: cold (BusRdX) |
    | 4 | ld w0: coherence miss; w0 is core 2's value: **true sharing** | | |

    The core that invalidated core 0 (core 1) never wrote word 0, but the copy brings core 0 the
    value core 2 wrote: a communication, so an essential miss."""
    got = observe(THREE, engine, cores=3, cache=protocol)
    assert classes(got) == [want(2, cold=1, coherence=1, true=1), want(1, cold=1), want(1, cold=1)]


TWO = """
.code 0
  cid r1            ; 0
  jt r1 one         ; 1
  ld r2 w0          ; 2   core 0: reads word 0
  sync              ; 3
  sync              ; 4   (core 1 writes word 1)
  ld r2 w0          ; 5   reads word 0 again: a miss
  ld r3 w1          ; 6   then word 1, from the same copy
  trap r0 #0        ; 7
:one
  sync              ; 8
  st r1 w1          ; 9   core 1: writes word 1
  sync              ; 10
  trap r0 #0        ; 11
.data 0
:w0
  0
:w1
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_a_new_word_read_later_in_the_copy_is_true_sharing(engine, protocol):
    """| step | core 0 | core 1 |
    |---|---|---|
    | 1 | ld w0: cold | |
    | 2 | its copy invalidated | st w1: cold (BusRdX) |
    | 3 | ld w0: coherence miss, w0 is not new: undecided | its M copy supplies the line |
    | 4 | ld w1 **hits**, w1 is core 1's value: the miss of step 3 was **true sharing** | |

    Judged at the miss alone (the word accessed then), step 3 would look like false sharing."""
    got = observe(TWO, engine, cores=2, cache=protocol)
    assert classes(got) == [want(2, cold=1, coherence=1, true=1), want(1, cold=1)]


SPLIT = """
.code 0
  cid r1            ; 0
  jt r1 one         ; 1
  ld r2 w0          ; 2   core 0
  sync              ; 3
  sync              ; 4   (core 1 writes word 1)
  ld r2 w0          ; 5
  sync              ; 6
  sync              ; 7   (core 1 writes word 2)
  ld r2 w1          ; 8
  trap r0 #0        ; 9
:one
  sync              ; 10
  st r1 w1          ; 11  core 1
  sync              ; 12
  sync              ; 13
  st r1 w2          ; 14
  sync              ; 15
  trap r0 #0        ; 16
.data 0
:w0
  0
:w1
  0
:w2
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_a_word_not_read_by_a_false_sharing_copy_is_still_new(engine, protocol):
    """| step | core 0 | core 1 |
    |---|---|---|
    | 1 | ld w0: cold | |
    | 2 | invalidated | st w1: cold |
    | 3 | ld w0: coherence miss, reads no new word | M -> S (supplies) |
    | 4 | invalidated: the copy of step 3 ends, **false sharing** | st w2: BusUpgr |
    | 5 | ld w1: coherence miss; w1 was written after core 0's last essential miss (step 1) and never read since: **true sharing** | |

    Counting only the writes since the last invalidation (step 4) would call step 5 false sharing
    too, and then no miss would account for w1's value reaching core 0."""
    got = observe(SPLIT, engine, cores=2, cache=protocol)
    assert classes(got) == [want(3, cold=1, coherence=2, true=1, false=1), want(1, cold=1)]


REFILL = """
.code 0
  cid r1            ; 0
  jt r1 one         ; 1
  ld r2 w0          ; 2   core 0
  ld r2 b           ; 3   evicts line 0 (a one-line cache)
  sync              ; 4
  sync              ; 5   (core 1 writes w1)
  ld r2 w1          ; 6   line 0 again
  sync              ; 7
  sync              ; 8   (core 1 writes w0)
  ld r2 w1          ; 9
  trap r0 #0        ; 10
:one
  sync              ; 11
  st r1 w1          ; 12  core 1
  sync              ; 13
  sync              ; 14
  st r1 w0          ; 15
  sync              ; 16
  trap r0 #0        ; 17
.data 0
:w0
  0
:w1
  0
:b
  0
  0
.end
"""


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi"])
def test_a_replacement_copy_that_reads_a_new_word_receives_it(engine, protocol):
    """One line of two words per cache: line 0 = w0 w1, line 1 = b.

    | step | core 0 | core 1 | new to core 0 |
    |---|---|---|---|
    | 1 | ld w0: cold; ld b: cold, evicts line 0 | | — |
    | 2 | | st w1: cold (core 0 holds nothing to invalidate) | w1 |
    | 3 | ld w1: **capacity** (evicted; the cache is fully associative); reads w1, new: received | M -> S | — |
    | 4 | invalidated | st w0: BusUpgr | w0 |
    | 5 | ld w1: coherence; w1 arrived at step 3, w0 is new but not read: **false sharing** (at the end) | | w0 |
    """
    got = observe(REFILL, engine, cores=2, cache=protocol, cache_lines=1, cache_ways=1, line_words=2)
    assert classes(got) == [want(4, cold=2, capacity=1, coherence=1, false=1), want(1, cold=1)]


REPLACE = """
.code 0
  ld r1 a           ; 0
  ld r1 c           ; 1
  ld r1 a           ; 2
  ld r1 b           ; 3
  ld r1 c           ; 4
  trap r0 #0        ; 5
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
@pytest.mark.parametrize("protocol", ["msi", "mesi", "moesi", "dragon"])
def test_capacity_against_conflict(engine, protocol):
    """Two lines of one word; lines a = 0, b = 1, c = 2. The shadow is a fully associative LRU
    cache of two lines (most recent last).

    Direct-mapped (sets: a, c -> 0; b -> 1):
    | access | cache (set 0, set 1) | shadow | class |
    |---|---|---|---|
    | ld a | a, - | a | cold |
    | ld c | c, - (a evicted) | a c | cold |
    | ld a | a, - (c evicted) | c a | **conflict**: the shadow still holds a |
    | ld b | a, b | a b | cold |
    | ld c | c, b (a evicted) | b c | **capacity**: the shadow lost c too |

    Fully associative (2 ways): ld a, ld c cold; ld a hits; ld b cold, evicts c (least recent);
    ld c: capacity. A fully associative cache has no conflict misses."""
    direct = observe(REPLACE, engine, cache=protocol, cache_lines=2, cache_ways=1, line_words=1)
    assert classes(direct) == [want(5, cold=3, capacity=1, conflict=1)]
    assoc = observe(REPLACE, engine, cache=protocol, cache_lines=2, cache_ways=2, line_words=1)
    assert classes(assoc) == [want(4, cold=3, capacity=1)]


def test_the_worked_example_in_the_timing_model_page_is_current():
    """The page's worked example of the classification is SPLIT, and the classes its prose sums up
    are the reference model's."""
    doc = _section("Miss classification")
    assert_example_is(doc, SPLIT)
    c0, c1 = classes(observe(SPLIT, "reference", cores=2, cache="mesi"))
    assert (f"Core 0: {c0['cache_misses']} misses = {c0['cold_misses']} cold + {c0['coherence_misses']} coherence "
            f"({c0['true_sharing_misses']} true, {c0['false_sharing_misses']} false); core 1: {c1['cold_misses']} cold."
            in " ".join(doc.split()))


def test_a_paused_run_counts_only_the_copies_that_ended():
    """SHARING of test_caches_hand, MESI: core 0's coherence miss at 11 only writes, and its copy is
    invalidated at 15: false sharing, counted then. Core 1's coherence miss at 15 only writes too,
    but its copy is still held at cycle 17, so a run paused there has not counted it; the run ends
    at 20 with the copy held: false sharing, counted at the end. The reference model stepped to
    the same cycles counts the same."""
    prog = assemble(SHARING.format(stride=1))
    cfg = dict(mem_words=256, cores=2, cache="mesi")
    kinds = lambda counters: [(c["coherence_misses"], c["false_sharing_misses"]) for c in counters]  # noqa: E731
    stepper = Stepper(prog, **cfg)
    ref = ReferenceMachine(prog.code_image, prog.data_image, prog.entry, **cfg)
    stepper.run_until(17)
    while ref.now < 17:
        ref.step()
    assert kinds(stepper.core(i).counters for i in (0, 1)) == kinds(k.stats for k in ref.cores) == [(1, 1), (1, 0)]
    stepper.cont()
    ended = ref.run()["cores"]
    assert kinds(stepper.core(i).counters for i in (0, 1)) == kinds(ended) == [(1, 1), (1, 1)]
    assert kinds(stepper.result.cores) == [(1, 1), (1, 1)]
