"""The measurement method every real-hardware timing shares (s2mc.common.measure), driven by fake
samplers: a scripted clock makes every test deterministic, and the expected figures are worked out
by hand from the script."""
import pytest

from s2mc.common import measure as m
from s2mc.common.errors import S2mcError


class Script:
    """A sampler whose sample(loops) returns loops x the next per-loop time of `per_loop` (the last
    one repeats), and which remembers every call."""

    def __init__(self, per_loop, log=None, name="x"):
        self.per_loop, self.i, self.calls, self.log, self.name = list(per_loop), 0, [], log, name

    def __call__(self, loops):
        self.calls.append(loops)
        if self.log is not None:
            self.log.append(self.name)
        t = self.per_loop[min(self.i, len(self.per_loop) - 1)]
        self.i += 1
        return loops * t


def test_a_steady_clock_gives_its_time_with_no_spread():
    t = m.measure({"x": Script([2e-3])}, min_reps=5, min_seconds=0)["x"]
    assert t.median == 2e-3 and t.spread == 0 and not t.disturbed and t.why == ""
    assert len(t.seconds) == 5 and t.loops == 1 and t.reps == 5


def test_a_disturbed_sequence_marks_the_timing_disturbed():
    # warm-up, calibration, then samples 2, 2, 3, 4, 2 ms: median 2, deviations 0 0 1 2 0 -> MAD 0 -> quiet;
    # 2, 3, 4, 3, 2: median 3, deviations 1 0 1 0 1 -> MAD 1 ms = 33 % of the median -> disturbed
    quiet = m.measure({"x": Script([2e-3, 2e-3, 2e-3, 2e-3, 3e-3, 4e-3, 2e-3])}, min_reps=5, min_seconds=0)["x"]
    assert quiet.median == 2e-3 and quiet.spread == 0 and not quiet.disturbed
    loud = m.measure({"x": Script([2e-3, 2e-3, 2e-3, 3e-3, 4e-3, 3e-3, 2e-3])}, min_reps=5, min_seconds=0)["x"]
    assert loud.seconds == (2e-3, 3e-3, 4e-3, 3e-3, 2e-3)
    assert loud.median == 3e-3 and loud.spread == pytest.approx(1 / 3)
    assert loud.disturbed and loud.why == "spread 33.3% > 5%"


def test_tiny_times_lead_to_more_loops_never_to_a_zero_throughput():
    # 1 ns a run: calibration grows the loops until one sample lasts the 1 ms minimum
    s = Script([1e-9])
    t = m.measure({"x": s}, min_reps=3, min_seconds=0)["x"]
    assert t.loops * 1e-9 >= m.SAMPLE_SECONDS and t.loops < 10 * m.SAMPLE_SECONDS / 1e-9
    assert all(c == t.loops for c in s.calls[-3:]) and t.median == 1e-9
    gbps = 16 / t.median / 1e9              # 16 bytes a run
    assert m.figure(gbps) == "16.00"
    assert m.figure(0.0004) == "0.000400" and m.figure(0.5) == "0.500" and m.figure(0.00123) == "0.00123"   # never "0.00"


def test_a_clock_that_never_moves_is_an_error_not_a_figure():
    with pytest.raises(S2mcError, match="the clock does not see this work"):
        m.measure({"ours": Script([0.0])})


def test_samples_alternate_between_the_samplers():
    log = []
    a, b = Script([1e-3], log, "A"), Script([1e-3], log, "B")
    t = m.measure({"A": a, "B": b}, min_reps=4, min_seconds=0, warmup=1)
    # warm-up A, B; calibration A, B (1 ms at one loop: done); then A B, B A, A B, B A
    assert log == ["A", "B", "A", "B", "A", "B", "B", "A", "A", "B", "B", "A"]
    assert len(t["A"].seconds) == len(t["B"].seconds) == 4


def test_at_least_three_samples_and_at_least_min_seconds():
    assert len(m.measure({"x": Script([1e-3])}, min_reps=1, min_seconds=0)["x"].seconds) == m.MIN_SAMPLES
    # 10 ms of 1 ms samples
    assert len(m.measure({"x": Script([1e-3])}, min_reps=1, min_seconds=0.01)["x"].seconds) == 10


def test_the_ratio_of_alternated_medians_cancels_load_that_hits_both():
    # the machine's load multiplies both samplers' times alike, round by round
    load = [1, 3, 1.5, 7, 1, 2, 4]
    a = Script([2e-3] * 2 + [2e-3 * x for x in load])      # ours: 2 ms x load
    b = Script([5e-3] * 2 + [5e-3 * x for x in load])      # OpenSSL: 5 ms x load
    t = m.measure({"ours": a, "openssl": b}, min_reps=len(load), min_seconds=0)
    assert t["ours"].median == 4e-3 and t["openssl"].median == 1e-2        # the median load is 2
    r, spread = m.ratio(t["openssl"], t["ours"])
    # each spread: deviations from 2 of 1 1 .5 5 1 0 2 -> MAD 1, half the median; propagated: 0.5 x sqrt(2)
    assert r == pytest.approx(2.5) and spread == pytest.approx(0.5 * 2 ** 0.5)
    quiet = m.Timing((1e-3,) * 3, 1)
    assert m.ratio(quiet, m.Timing((4e-3,) * 3, 1)) == (0.25, 0.0)


def test_scaling_beyond_perfect_is_named():
    assert m.scaling_excess(1.9e6, 2, 1e6, 1) == ""
    assert m.scaling_excess(2e6, 2, 1e6, 1) == ""
    assert m.scaling_excess(4.2e6, 2, 1e6, 1) == ("2 threads ran 4.20x the rate of 1, above the 2x that "
                                                  "perfect scaling allows")
    assert m.scaling_excess(9e6, 4, 4e6, 2) != "" and m.scaling_excess(1e6, 1, 3e6, 2) == ""


def test_a_flagged_timing_keeps_its_figures_and_adds_the_reason():
    t = m.Timing((1e-3, 1e-3, 1e-3), 1).flagged("2 threads ran 3.00x")
    assert t.disturbed and t.why == "2 threads ran 3.00x" and t.median == 1e-3
