"""Core-to-core latency: this CPU's matrix (a pinned ping-pong per pair, s2mc.workloads.native.coherence),
the simulated mesh's (s2mc.workloads.core_to_core) checked against the hand-worked chain of
docs/timing-model.md, and every bad input as one line.
Timings are never asserted against a target: only their shape and sign."""
import math

import pytest

from s2mc.common.errors import S2mcError
from s2mc.workloads import core_to_core
from s2mc.workloads.native import coherence

native = pytest.mark.skipif(not coherence.available(), reason="native coherence extension not built")
CPUS = coherence.cpus() if coherence.available() else []
two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 CPUs")


# -- this CPU ----------------------------------------------------------------------------------------

@native
@two_cpus
def test_pinned_ping_pong_on_this_cpu_gives_a_square_positive_matrix():
    m = coherence.core_to_core(len(CPUS), 200)
    n = len(CPUS)
    assert m["cpus"] == CPUS and len(m["ns"]) == n and all(len(row) == n for row in m["ns"])
    for i in range(n):
        assert m["ns"][i][i] is None                     # a core does not hand a line to itself
        for j in range(n):
            if i != j:
                assert m["ns"][i][j] > 0 and m["ns"][i][j] == m["ns"][j][i] and m["spread"][i][j] >= 0


@native
@two_cpus
def test_a_pair_is_pinned_where_asked_and_every_round_trip_is_answered():
    r = coherence.ping_pong(200, batch=100, pair=(CPUS[1], CPUS[0]), warmup=100)
    assert r["cpus"] == [CPUS[1], CPUS[0]]
    assert r["round_trips"] == 200 and len(r["batch_ns"]) == 2
    assert r["answered"] == 300 and r["final_flag"] == 600      # the warm-up's round trips happened too


@native
@pytest.mark.parametrize("call, needle", [
    (lambda: coherence.core_to_core(len(CPUS) + 1, 100), f"this process may use {len(CPUS)} CPU"),
    (lambda: coherence.core_to_core(1, 100), "a matrix needs at least 2"),
    (lambda: coherence.ping_pong(100, pair=(CPUS[0], CPUS[0])), "two distinct CPUs"),
    (lambda: coherence.ping_pong(100, pair=(max(CPUS) + 1, CPUS[0])), f"CPU {max(CPUS) + 1} is not one"),
    (lambda: coherence.ping_pong(100, warmup=-1), "warm-up round trips must be >= 0"),
])
def test_bad_matrix_arguments_are_one_line(call, needle):
    with pytest.raises(S2mcError, match=needle) as e:
        call()
    assert "\n" not in str(e.value)


# -- the simulated mesh ------------------------------------------------------------------------------

def xy(tile, cores):
    """A tile's place on the mesh (docs/timing-model.md, "The tiles and the routes")."""
    x = math.ceil(math.sqrt(cores))
    return tile % x, tile // x


def hops(a, b, cores):
    (xa, ya), (xb, yb) = xy(a, cores), xy(b, cores)
    return abs(xa - xb) + abs(ya - yb)


# (cores, ping, pong, phi + phi'): the loop-phase waits worked out by hand on the timeline of each hand-over
# (docs/timing-model.md, "Core-to-core latency on the mesh"), and whether the home's first port towards
# the two cores is the same (then each Inv queues 2 cycles behind its Data).
HAND = [(4, 0, 1, 3, False), (4, 0, 3, 2, False), (4, 1, 3, 2, True), (4, 2, 3, 1, False), (16, 5, 10, 2, True),
        (16, 0, 15, 1, False)]


@pytest.mark.parametrize("cores, a, b, phases, shared", HAND)
def test_mesh_entries_follow_the_hand_worked_formula(cores, a, b, phases, shared):
    # one-way = 4 (hP + hQ) + 2 hPQ + 19 + (phi + phi') / 2 + 2 [shared first port], with the defaults
    # (R = Lk = 1, L = 2, 1-flit requests, 2-flit data); the home of the line is tile 0.
    hp, hq, hpq = hops(a, 0, cores), hops(b, 0, cores), hops(a, b, cores)
    want = 4 * (hp + hq) + 2 * hpq + 19 + phases / 2 + 2 * shared
    assert core_to_core.round_trip_cycles(cores, a, b) / 2 == want


def test_mesh_matrix_of_four_tiles():
    m = core_to_core.mesh_matrix(4)
    c = m["cycles"]
    assert m["cores"] == 4 and m["home"] == 0 and m["engine"] in ("reference", "fast")
    assert [c[i][i] for i in range(4)] == [None] * 4
    assert all(c[i][j] == c[j][i] for i in range(4) for j in range(4))
    assert c[0][1] == 26.5 and c[0][3] == 32 and c[1][3] == 36 and c[2][3] == 33.5   # the hand-worked entries
    # the two tiles next to the home are the nearest pair, the two far from it the farthest
    off = {(i, j): c[i][j] for i in range(4) for j in range(i + 1, 4)}
    assert min(off, key=off.get) in ((0, 1), (0, 2)) and max(off, key=off.get) == (1, 3)


def test_the_ping_pong_program_hands_the_word_back_every_round():
    res = core_to_core.run_pair(4, 2, 1, 3)
    assert res.output == "6"                           # 3 round trips: core 1 stored 2, 4, 6


@pytest.mark.parametrize("cores", [1, 65])
def test_mesh_core_count_out_of_range_is_one_line(cores):
    with pytest.raises(S2mcError, match=r"core-to-core on the mesh: \d+ cores; the simulated machine has 2\.\.64"):
        core_to_core.mesh_matrix(cores)
