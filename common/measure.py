"""How s2mc times real hardware: one method for every native measurement (`s2mc native`, its
OpenSSL baseline, the CRYPTREC ciphers, `s2mc coherence-native`), so a figure means the same
thing in every table and a disturbed one is said to be disturbed.

    from s2mc.common.measure import measure
    t = measure({"ours": ours.sample, "openssl": ossl.sample}, min_reps=3, min_seconds=0.1)
    t["ours"].median, t["ours"].spread, t["ours"].disturbed, t["ours"].why
    r, spread = ratio(t["openssl"], t["ours"])

A sampler is `sample(loops) -> seconds` (or `(seconds, cycles)`): it runs the work `loops` times
and returns how long that took (the native ones time inside C++, with the GIL released). The
method, after pyperf (warm-up, loops calibrated so that one sample lasts long enough, median and
spread, a warning when the spread is large) and Google Benchmark (repetitions and their median):

1. warm-up: each sampler runs `warmup` times untimed (page faults, thread pools, caches, clocks);
2. calibration: the loops per sample grow until one sample lasts `sample_seconds`, so that no
   sample is too short for the clock (a sampler that keeps returning ~0 s gets more loops, never
   a throughput of 0 or infinity; one that stays at 0 s is an error, not a figure);
3. A/B alternation: the samplers take turns, one sample each per round (A B, then B A), until
   every one has `min_reps` samples (at least `MIN_SAMPLES`) and `min_seconds` of them, so
   load that lasts longer than a sample hits all of them alike;
4. statistics (the standard library's `statistics`): the median of the per-loop times is the
   figure, the spread is their median absolute deviation over the median (robust: one
   outlier moves neither), and a timing whose spread exceeds `max_spread` is disturbed.

`scaling_excess` is the invariant check the grids add on top: t threads doing what one thread
does cannot be more than t times as fast, so a row that is says the machine disturbed the
measurement it is compared with.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from .errors import S2mcError

#: The shortest sample: a thousand times the steady clock's resolution and long enough to amortise
#: an OpenMP fork/join of tiny buffers.
SAMPLE_SECONDS = 1e-3
#: The fewest samples a timing has: a median and a spread need three.
MIN_SAMPLES = 3
#: The most samples of one timing (a safety stop: `min_seconds` at the shortest sample).
MAX_SAMPLES = 100_000
#: Calibration gives up beyond this many loops per sample: a sampler that still reports no time
#: is broken, and a figure from it would be 0 or infinite.
MAX_LOOPS = 1 << 40
#: Above this spread (median absolute deviation / median) a timing is disturbed (pyperf warns from a
#: standard deviation of 10 % of the mean; 5 % MAD is about 7.4 % of a normal spread's deviation).
MAX_SPREAD = 0.05

Sampler = Callable[[int], "float | tuple[float, float]"]


@dataclass(frozen=True)
class Timing:
    """One sampler's samples and what the method concludes from them. `seconds` and `cycles` are
    per loop (one run of the work), one value per sample, in the order they were taken."""
    seconds: tuple[float, ...]
    loops: int
    cycles: tuple[float, ...] = ()
    max_spread: float = MAX_SPREAD
    why_extra: tuple[str, ...] = field(default=())

    @property
    def median(self) -> float:
        return statistics.median(self.seconds)

    @property
    def best(self) -> float:
        return min(self.seconds)

    @property
    def median_cycles(self) -> float:
        return statistics.median(self.cycles) if self.cycles else 0.0

    @property
    def spread(self) -> float:
        return relative_spread(self.seconds)

    @property
    def reps(self) -> int:
        """Runs of the work that were timed (samples x loops)."""
        return len(self.seconds) * self.loops

    @property
    def why(self) -> str:
        """Why the timing is disturbed ('' when it is not)."""
        own = (f"spread {self.spread:.1%} > {self.max_spread:.0%}",) if self.spread > self.max_spread else ()
        return "; ".join(own + self.why_extra)

    @property
    def disturbed(self) -> bool:
        return bool(self.why)

    def flagged(self, why: str) -> "Timing":
        """This timing, disturbed for one more reason (an invariant the grid checked)."""
        return Timing(self.seconds, self.loops, self.cycles, self.max_spread, self.why_extra + (why,))


def relative_spread(values: Sequence[float]) -> float:
    """Median absolute deviation / median (0 for one value)."""
    med = statistics.median(values)
    if med <= 0:
        return 0.0
    return statistics.median(abs(v - med) for v in values) / med


def _call(sample: Sampler, loops: int) -> tuple[float, float]:
    got = sample(loops)
    secs, cycles = (got if isinstance(got, tuple) else (got, 0.0))
    return float(secs), float(cycles)


def calibrate(sample: Sampler, sample_seconds: float = SAMPLE_SECONDS, *, name: str = "sample") -> int:
    """The loops per sample that make one sample last at least `sample_seconds` (pyperf's
    calibration: grow the loops from 1, by the measured shortfall but at most 10x a step)."""
    loops = 1
    while True:
        secs, _ = _call(sample, loops)
        if secs >= sample_seconds:
            return loops
        if loops >= MAX_LOOPS:
            raise S2mcError(f"{name}: {loops} runs still took {secs:.3g} s (under {sample_seconds:g} s): "
                            "the clock does not see this work, so no throughput can be given")
        grow = 10 if secs <= 0 else min(10.0, max(2.0, 1.2 * sample_seconds / secs))
        loops = min(MAX_LOOPS, int(loops * grow))


def measure(samplers: Mapping[str, Sampler], *, min_reps: int = MIN_SAMPLES, min_seconds: float = 0.1,
            sample_seconds: float = SAMPLE_SECONDS, warmup: int = 1, max_spread: float = MAX_SPREAD,
            max_samples: int = MAX_SAMPLES) -> dict[str, Timing]:
    """Time every sampler by the method above, interleaved; returns a Timing per name."""
    names = list(samplers)
    if not names:
        raise S2mcError("measure: nothing to time")
    for name in names:
        for _ in range(warmup):
            _call(samplers[name], 1)
    loops = {name: calibrate(samplers[name], sample_seconds, name=name) for name in names}
    secs: dict[str, list[float]] = {n: [] for n in names}
    cycles: dict[str, list[float]] = {n: [] for n in names}
    total = dict.fromkeys(names, 0.0)
    want = max(MIN_SAMPLES, min_reps)

    def done(n: str) -> bool:
        return len(secs[n]) >= max_samples or (len(secs[n]) >= want and total[n] >= min_seconds)

    rnd = 0
    while not all(done(n) for n in names):
        order = names if rnd % 2 == 0 else names[::-1]   # A B, B A: neither always goes first
        for n in order:
            if len(secs[n]) >= max_samples:
                continue
            s, c = _call(samplers[n], loops[n])
            secs[n].append(s / loops[n])
            cycles[n].append(c / loops[n])
            total[n] += s
        rnd += 1
    for n in names:
        if min(secs[n]) <= 0:
            raise S2mcError(f"{n}: a sample of {loops[n]} runs took no time: the clock does not see this work")
    return {n: Timing(tuple(secs[n]), loops[n], tuple(cycles[n]), max_spread) for n in names}


def ratio(num: Timing, den: Timing) -> tuple[float, float]:
    """num's median / den's, and its spread propagated from theirs (hyperfine's relative speed:
    the root of the sum of the squared relative spreads). Both were sampled in alternation over the
    same stretch of time, so load that lasts longer than a sample hits both medians alike; a burst
    shorter than a sample hits one sample of one of them, and the medians ignore it."""
    return num.median / den.median, (num.spread ** 2 + den.spread ** 2) ** 0.5


def scaling_excess(rate: float, threads: int, base_rate: float, base_threads: int) -> str:
    """'' when `threads` threads doing `rate` (work per second, higher is better) are at most
    threads/base_threads as fast as `base_threads` threads at `base_rate`; otherwise the sentence that
    marks the faster row disturbed (no parallel section beats perfect scaling: the slower run was
    disturbed, or this one only seemed to run in parallel)."""
    if threads <= base_threads or base_rate <= 0:
        return ""
    bound = threads / base_threads
    got = rate / base_rate
    if got <= bound:
        return ""
    return (f"{threads} threads ran {got:.2f}x the rate of {base_threads}, above the {bound:g}x "
            "that perfect scaling allows")


def figure(x: float, width: int = 0) -> str:
    """A measured figure as text, right-aligned in `width`: two decimals from 1 up (12.35), three
    significant digits below (0.0123), so a small figure never reads 0.00."""
    text = f"{x:.2f}" if abs(x) >= 0.995 else f"{x:#.3g}"
    return f"{text:>{width}}"


def spread_text(spread: float) -> str:
    """A spread as the tables print it: ±1.2%."""
    return f"±{spread:.1%}"
