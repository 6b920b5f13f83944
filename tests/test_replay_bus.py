"""The replay bus (s2mc.simulator.replay_bus): hand-computed streams on every arbiter it knows, and
the AES programs' traced streams replayed on each bus the fast engine implements, which must give
exactly the engine's counters."""
import pytest

from s2mc.simulator.replay_bus import Bus, replay, streams
from s2mc.workloads.cipher_sim.runner import run_aes

# --------------------------------------------------------------------------------------------------
# the replay: hand-computed streams, then the engines' own runs
# --------------------------------------------------------------------------------------------------

# docs/timing-model.md's worked example as streams: cid (1 instruction), ld, st, trap.
P2 = [[(1, "m"), (0, "m"), (0, "h")]] * 2
# Three cores: core 0 accesses twice, core 1 once, core 2 once a cycle later (requests at 0, 0, 1).
S3 = [[(0, "m"), (0, "m"), (0, "h")], [(0, "m"), (0, "h")], [(1, "m"), (0, "h")]]


@pytest.mark.parametrize("bus,finish,waits", [
    # the worked example: fifo / fixed / round robin as docs/timing-model.md computes them
    (Bus("fifo"), [8, 10], [2, 4]),
    (Bus("fixed"), [6, 10], [0, 4]),
    (Bus("round_robin"), [8, 10], [2, 4]),
    # a dead cycle before another core: c0 ld 1, c0 st 3 (the same core: no dead cycle), c1 ld
    # 5 + 1 = 6 (waited 5), c1 st 8 (its own again) -> trap 10, finish 11
    (Bus("fifo", handover=1), [6, 11], [0, 5]),
    # the bus held 1 cycle: c0 ld 1 (bus free 2), c1 ld 2 (waited 1), c0 st 3, c1 st 4 -> finish 6, 7
    (Bus("fixed", hold=1), [6, 7], [0, 1]),
    # fetch on the bus, fixed: c0 takes every cycle 0-5 (cid, ld 1-2, st 3-4, trap 5 -> finish 6);
    # c1's cid is fetched at 6 (waited 6), ld 7, st 9, trap 11 -> finish 12
    (Bus("fixed", fetch=True), [6, 12], [0, 6]),
])
def test_replay_of_the_worked_example(bus, finish, waits):
    r = replay(P2, bus)
    assert r["finish"] == finish and r["bus_wait"] == waits and r["cycles"] == max(finish)
    assert r["stalls"] == [w + 2 for w in waits]          # 2 data accesses each, L - 1 = 1


@pytest.mark.parametrize("bus,finish,waits", [
    # grants at 0, 2, 4, 6; c0 is served first at 0 (a tie), then:
    (Bus("fixed"), [5, 7, 9], [0, 4, 5]),           # c0 again at 2 (lowest id), c1 at 4, c2 at 6
    (Bus("fifo"), [9, 5, 7], [4, 2, 3]),            # c1 (asked at 0), c2 (1), c0 (2)
    (Bus("round_robin"), [9, 5, 7], [4, 2, 3]),     # after c0: c1, c2, c0
    (Bus("reverse"), [9, 3, 5], [4, 0, 1]),         # c1 at 0, c2 at 2, c0 at 4 and 6
    # at 2, c1 (asked at 0) and c2 (at 1) were waiting, c0 asks at 2: c1; at 4, c0 (asked at 2) is
    # waiting too, and is the lowest id: c0; c2 at 6
    (Bus("waiting_first"), [7, 5, 9], [2, 2, 5]),
    (Bus("yield"), [7, 5, 9], [2, 2, 5]),          # c0 just served goes last at 2; at 4 c1 does
    # waited 2 or more goes first, oldest first: c1 (0) at 2; at 4, c2 (asked at 1) before c0 (2)
    (Bus("aging", age=2), [9, 5, 7], [4, 2, 3]),
])
def test_replay_of_three_cores_by_hand(bus, finish, waits):
    r = replay(S3, bus)
    assert r["finish"] == finish and r["bus_wait"] == waits


# c0 three accesses, c1 one (both ask at 0); c0 asks at 2 after 2 instructions, c1 twice at 0, 2.
S_BURST = [[(0, "m"), (0, "m"), (0, "m"), (0, "h")], [(0, "m"), (0, "h")]]
S_HIGH = [[(2, "m"), (0, "h")], [(0, "m"), (0, "m"), (0, "h")]]


@pytest.mark.parametrize("streams_,bus,finish,waits", [
    # the arbiters fairer than fixed priority at 2 cores (the second round of hypotheses), by hand. S3 on the 2x2 trees: pairs (0, 1), (2).
    # Round-robin pairs, fixed root: c0 at 0; at 2 the pair's other core c1; at 4 c0 (its pair
    # granted c1 last), c2 (the lower pair first) at 6.
    (S3, Bus("tree_rr_fixed"), [7, 5, 9], [2, 2, 5]),
    # fixed pairs, round-robin root: c0 at 0; at 2 the other leaf: c2; at 4 leaf 0's c0; c1 at 6.
    (S3, Bus("tree_fixed_rr"), [7, 9, 5], [2, 6, 1]),
    # the latch: c1 loses at 0 and is latched, c2 (asks at 1) finds it full; at 2 c1 goes first, and
    # c0, losing at 2, is latched: at 4 c0 before the older c2, who is not in the latch; c2 at 6.
    (S3, Bus("latch"), [7, 5, 9], [2, 2, 5]),
    # burst 2: c0 at 0 and 2 (2 in a row), so at 4 c1 goes first; c0 at 6. Fixed: c0 at 0, 2, 4.
    (S_BURST, Bus("burst", burst=2), [9, 7], [2, 4]),
    (S_BURST, Bus("burst", burst=4), [7, 9], [0, 6]),
    (S_BURST, Bus("fixed"), [7, 9], [0, 6]),
    # in-place scan, early release: c0 at 0 frees the bus in its step at 1, c1 (stepped after it)
    # is granted at 1; c1 frees at 2 in its step, c2 granted at 2; c0 (asked at 2, stepped before
    # c1) saw it busy at 2 and c2's at 3: granted at 4.
    (S3, Bus("fixed", release="early"), [7, 4, 5], [2, 1, 1]),
    # S_HIGH: c1 at 0 (bus free 2). Early: at 2 c0 (lower id, stepped first) wins over c1's second
    # access; c0 frees it in its step at 3, c1 granted at 3. Late: c1 frees it in its own step at 2,
    # after c0 was stepped: c1 takes it again at 2, c0 (busy until 4, freed in c1's step) gets it at 5.
    (S_HIGH, Bus("fixed", release="early"), [5, 6], [0, 1]),
    (S_HIGH, Bus("fixed", release="late"), [8, 5], [3, 0]),
    (S_HIGH, Bus("fixed"), [5, 7], [0, 2]),
])
def test_replay_of_the_second_round_by_hand(streams_, bus, finish, waits):
    r = replay(streams_, bus)
    assert r["finish"] == finish and r["bus_wait"] == waits


def test_an_unknown_bus_is_an_error():
    with pytest.raises(Exception, match="unknown bus policy"):
        replay(P2, Bus("lottery"))
    with pytest.raises(Exception, match="unknown bus release"):
        replay(P2, Bus("fixed", release="never"))


def test_replay_of_a_barrier_and_of_takes():
    # c0 arrives at 2, c1 at 0: the barrier completes at 2, both go on at 3 (c1 waited 2); their
    # loads at 3: c0 first (fifo tie), c1 at 5; trap 5 -> 6, 7 -> 8.
    r = replay([[(2, "s"), (0, "m"), (0, "h")], [(0, "s"), (0, "m"), (0, "h")]], Bus("fifo"))
    assert r["finish"] == [6, 8] and r["sync_wait"] == [0, 2] and r["bus_wait"] == [0, 2]
    # three blocks of one access taken from a shared counter by 2 cores, fixed priority: core 0
    # takes at 0, runs its block's access at 2, takes again at 4 (it asks the cycle the bus frees
    # and wins every tie) ... all three blocks, then its fourth take at 12 finds none (halts 14,
    # finish 15); core 1's first take is granted at 14 (waited 14) and finds none: finish 17.
    r = replay([[(0, "g")], [(0, "g")]], Bus("fixed"), take=([(0, "m")], 3))
    assert r["finish"] == [15, 17] and r["accesses"] == [7, 1] and r["bus_wait"] == [0, 14]


CELLS_FOR_ENGINES = [(32, 2), (64, 3), (128, 4)]
#: The programs replayed: the bytes style with the key on core 0 as compiled, and the seed 003
#: model's program (key on every core, calibrated), both at -O0.
PROGRAMS = {"core0": dict(key_expansion="core0"), "model": dict(key_expansion="per-core", calibration="seed003")}


@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("policy", ["fifo", "fixed", "round_robin", "burst4"])
def test_replay_of_aes_streams_is_the_engines_run(program, policy):
    """Every policy both know: the streams of a run under fifo, replayed on the bus the engine has,
    give exactly the engine's counters under that bus (the programs' paths do not depend on timing).
    burst4 is the replay's burst limit of 4, written separately: an independent check of the
    engine's rule."""
    bus = Bus("burst", burst=4) if policy == "burst4" else Bus(policy)
    for nbytes, cores in CELLS_FOR_ENGINES:
        data, key = bytes(range(nbytes)), bytes(16)

        def run(**kw):
            return run_aes(data, key, cores=cores, style="bytes", opt=0, **PROGRAMS[program], **kw).result
        traced, engine = run(trace=True, arbitration="fifo"), run(arbitration=policy)
        r = replay(streams(traced.trace, cores), bus)
        assert r["cycles"] == engine.cycles and r["finish"] == engine.finish_cycles
        assert r["stalls"] == [c["stall_cycles"] for c in engine.cores]
        assert r["sync_wait"] == [c["sync_wait_cycles"] for c in engine.cores]
