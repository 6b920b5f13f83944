"""Core-to-core latency: this CPU's matrix (a pinned ping-pong per pair, s2mc.workloads.native.coherence),
and every bad input as one line.
Timings are never asserted against a target: only their shape and sign."""

import pytest

from s2mc.common.errors import S2mcError
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
