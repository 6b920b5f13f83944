"""The native benchmark grid: threads x sizes x implementations x strategies x block sizes, measured
in C++ and returned as summaries and records rows (docs/records.md).

    from s2mc.workloads.native.grid import NativeGrid, run_grid, format_summary
    summaries, rows = run_grid(NativeGrid(threads=(1, 2), sizes=(1 << 20,)), run_id="native-1")
    for s in summaries: print(format_summary(s))

`s2mc native`, `s2mc demo` (through s2mc.experiments.registry) and bench/bench_native.py all run
this. The rows are plain dicts with the records' columns: data flows one way, so this module does
not import s2mc.analysis; the caller validates them with `records.make_records(rows)`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from s2mc.common.errors import S2mcError
from s2mc.common.units import human_size

from s2mc.common.measure import MAX_SPREAD, Timing, figure, measure, ratio, scaling_excess, spread_text

from . import CIPHER_IMPLS, check_timing, cryptrec, info, make_bench, resolve_impl


@dataclass(frozen=True)
class NativeGrid:
    """One grid of native CTR measurements of one cipher (every field that is a tuple is swept).

    Thread counts run in increasing order (each is checked against the smaller ones: no
    configuration may beat perfect scaling). multi=True: every thread encrypts its own buffer of each size (like `openssl speed -multi`);
    the strategy is then "multi" and throughput is the aggregate over the threads. Block sizes
    apply to the extended strategy only; the other strategies run once per (impl, threads, size).
    """
    threads: tuple[int, ...] = (1,)
    sizes: tuple[int, ...] = (16 << 10, 16 << 20)
    impls: tuple[str, ...] = ("auto",)
    strategies: tuple[str, ...] = ("contiguous",)
    block_bytes: tuple[int, ...] = (1024,)
    key_bits: int = 128
    cipher: str = "aes"              # aes | camellia | sc2000 | hierocrypt3 (records: workload <cipher>-<bits>-ctr)
    vs_openssl: bool = False
    multi: bool = False
    min_seconds: float = 0.1
    min_reps: int = 3

    def configs(self) -> list[tuple[str, str, int, int, int]]:
        """(impl, strategy, block_bytes, threads, bytes) of every measurement, in run order."""
        strategies, blocks = self.strategies, self.block_bytes
        if self.cipher in cryptrec.CIPHERS:  # seed 002's other ciphers: their table implementations, contiguous chunks
            impls = list(dict.fromkeys(n for i in self.impls
                                       for n in (cryptrec.IMPLS[self.cipher] if i == "all"
                                                 else [cryptrec.resolve_impl(self.cipher, i)])))
            strategies = ("contiguous",)
        else:
            impls = list(dict.fromkeys(resolve_impl(i, self.cipher) for i in self.impls))
        if self.multi:
            strategies, blocks = ("multi",), blocks[:1]
        return [(impl, strategy, bb, t, n)
                for impl in impls for strategy in strategies
                for bb in (blocks if strategy == "extended" else blocks[:1])
                for t in sorted(set(self.threads)) for n in self.sizes]


def _make_bench(grid: NativeGrid, engine: str, impl: str, strategy: str, t: int, n: int, bb: int):
    """The C++ bench of one measurement (s2mc.workloads.native / cryptrec make_bench)."""
    if grid.cipher in cryptrec.CIPHERS:
        return cryptrec.make_bench(grid.cipher, n, key_bits=grid.key_bits, threads=t, multi=strategy == "multi",
                                   impl=impl)
    return make_bench(n, key_bits=grid.key_bits, engine=engine, impl=impl,
                      strategy="contiguous" if strategy == "multi" else strategy, threads=t, block_bytes=bb,
                      multi=strategy == "multi", cipher=grid.cipher)


def run_grid(grid: NativeGrid, *, run_id: str, experiment: str = "native", progress: bool = False,
             log: Callable[[dict], None] | None = None, make: Callable | None = None) -> tuple[list[dict], list[dict]]:
    """Measure the grid by s2mc.common.measure's method; returns (summaries, records rows).

    With vs_openssl, ours and OpenSSL are timed in alternation (a sample of one, then of the
    other) so that load on the machine hits both alike; the ratio is OpenSSL's median / ours, its
    spread propagated from theirs, and the row is disturbed when either timing is. A summary per
    measurement: impl, strategy, block_bytes, threads, bytes,
    total_bytes, seconds (the median sample), gb_per_s, cycles_per_byte, spread, samples, reps,
    disturbed and why (and openssl_gb_per_s, openssl_spread, ratio, ratio_spread with vs_openssl);
    `log` is called with each as it is measured. cycles_per_byte is time-stamp-counter ticks x
    threads / bytes processed (core cycles per byte). A measurement is disturbed when a spread
    exceeds s2mc.common.measure.MAX_SPREAD or when it is faster than perfect scaling from a measured
    smaller thread count of the same configuration (thread counts run in increasing order, so
    each is checked against the ones before it). `make(engine, impl, strategy, threads, bytes,
    block_bytes)` builds a bench (default: the C++ one; tests inject a fake clock).
    """
    if grid.vs_openssl and grid.cipher in cryptrec.CIPHERS:
        raise S2mcError(f"OpenSSL has no {grid.cipher}: --vs-openssl is for aes and camellia")
    check_timing(grid.min_reps, grid.min_seconds)
    make = make or (lambda *a: _make_bench(grid, *a))
    platform = info().get("cpu", "unknown")
    workload = f"{grid.cipher}-{grid.key_bits}-ctr"
    configs = grid.configs()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc native", unit="run", leave=False)
    rows, summaries, ossl_rows = [], [], set()
    rates: dict[tuple, list[tuple[int, float]]] = {}   # (engine, impl, strategy, bb, n) -> [(threads, B/s)]

    def checked(key: tuple, t: int, total: int, timing: Timing) -> Timing:
        """timing, disturbed when it beats perfect scaling from a smaller measured thread count."""
        rate = total / timing.median
        for t0, rate0 in rates.setdefault(key, []):
            why = scaling_excess(rate, t, rate0, t0)
            if why:
                timing = timing.flagged(why)
        rates[key].append((t, rate))
        return timing

    def add(engine, variant, t, total, timing: Timing):
        base = dict(run_id=run_id, experiment=experiment, source="native", platform=platform,
                    workload=workload, variant=variant, engine=engine, cores=t, core=-1, bytes=total,
                    cipher=grid.cipher, spread=timing.spread, disturbed=timing.disturbed)
        rows.append(dict(base, metric="seconds", value=timing.median))
        rows.append(dict(base, metric="bytes_per_second", value=total / timing.median))
        rows.append(dict(base, metric="cycles_per_byte", value=timing.median_cycles * t / total))
        return base

    try:
        for impl, strategy, bb, t, n in configs:
            variant = f"extended-{bb}" if strategy == "extended" else strategy
            benches = {"ours": make("ours", impl, strategy, t, n, bb)}
            if grid.vs_openssl:
                benches["openssl"] = make("openssl", "auto", "multi" if grid.multi else "contiguous", t, n, bb)
            timings = measure({k: b.sample for k, b in benches.items()}, min_reps=grid.min_reps,
                              min_seconds=grid.min_seconds)
            ours, total = benches["ours"], benches["ours"].total_bytes
            tm = checked(("ours", ours.engine, strategy, bb, n), t, total, timings["ours"])
            s = dict(cipher=grid.cipher, key_bits=grid.key_bits, impl=ours.engine, strategy=strategy,
                     block_bytes=bb if strategy == "extended" else None, threads=t, bytes=n,
                     total_bytes=total, seconds=tm.median, gb_per_s=total / tm.median / 1e9,
                     cycles_per_byte=tm.median_cycles * t / total, spread=tm.spread, samples=len(tm.seconds),
                     reps=tm.reps)
            why = [tm.why] if tm.why else []
            if grid.vs_openssl:
                om = timings["openssl"]
                if (t, n) not in ossl_rows:   # one OpenSSL row per (threads, size): the first pairing's
                    om = checked(("openssl", "", "", 0, n), t, total, om)
                    add("openssl", "evp-multi" if grid.multi else "evp-contiguous", t, total, om)
                    ossl_rows.add((t, n))
                r, r_spread = ratio(om, tm)
                s.update(openssl_gb_per_s=total / om.median / 1e9, openssl_spread=om.spread, ratio=r,
                         ratio_spread=r_spread)
                why += [f"openssl {om.why}"] if om.why else []
            s.update(disturbed=bool(why), why="; ".join(why))
            base = add(ours.engine, variant, t, total, tm)
            if grid.vs_openssl:
                rows.append(dict(base, metric="speedup_vs_openssl", value=s["ratio"], spread=s["ratio_spread"],
                                 disturbed=s["disturbed"]))
            summaries.append(s)
            if log:
                log(s)
            if bar:
                bar.update(1)
    finally:
        if bar:
            bar.close()
    return summaries, rows


#: The longest implementation name (SC2000's table-6-5-5-5-5-6), so lines printed one by one stay aligned.
_IMPL_WIDTH = max(len(n) for names in (*CIPHER_IMPLS.values(), *cryptrec.IMPLS.values()) for n in names)


#: The widest cipher name with its key size (hierocrypt3-128), for the same alignment.
_CIPHER_WIDTH = max(len(f"{c}-256") for c in ("aes", "camellia", *cryptrec.CIPHERS))


def summary_header(vs_openssl: bool = False) -> str:
    """The column names above format_summary's lines, aligned with them."""
    line = (f"{'cipher':<{_CIPHER_WIDTH}} {'impl':<{_IMPL_WIDTH}} {'strategy':<15} {'threads':>7} {'bytes':>10}  "
            f"{'throughput':>13} {'spread':>7}  {'cycles/B':>11}")
    return line + (f"  | {'OpenSSL throughput':>20} {'spread':>7}  {'ratio':>12} {'spread':>7}" if vs_openssl else "")


def summary_legend(summaries: list[dict], vs_openssl: bool = False) -> str:
    """Printed under the lines: what the less obvious columns mean, and how many rows of this run
    were disturbed."""
    n = sum(1 for s in summaries if s.get("disturbed"))
    legend = ("throughput: the median of the timed samples; spread: their median absolute deviation / median; "
              "cycles/B (c/B): time-stamp-counter cycles x threads per byte, the CPU time one byte costs "
              "(lower is better)" + ("; ratio: OpenSSL's median time / ours (timed in alternation), above 1 "
                                     "ours is faster" if vs_openssl else ""))
    if n:
        legend += (f"\n{n} of {len(summaries)} rows DISTURBED (spread over {MAX_SPREAD:.0%}, or faster than "
                   "perfect scaling from fewer threads): the machine's other load changed them; rerun them on a "
                   "quiet machine before drawing a conclusion (docs/native.md, \"Reading a disturbed row\")")
    return legend


def format_summary(s: dict) -> str:
    """One measurement as a line: cipher (and key size), impl, strategy[/block], threads, size, GB/s and
    its spread, cycles per byte (and OpenSSL's GB/s and the ratio, with their spreads, when measured);
    DISTURBED and why at the end of a disturbed row."""
    strat = s["strategy"] + (f"/{s['block_bytes']}" if s.get("block_bytes") else "")
    cipher = f"{s['cipher']}-{s['key_bits']}" if s.get("key_bits") else s["cipher"]
    line = (f"{cipher:<{_CIPHER_WIDTH}} {s['impl']:<{_IMPL_WIDTH}} {strat:<15} {s['threads']:>3} thr {human_size(s['bytes']):>10}  "
            f"{figure(s['gb_per_s'], 8)} GB/s {spread_text(s['spread']):>7}  {s['cycles_per_byte']:7.3f} c/B")
    if s["strategy"] == "multi":
        line = line.replace(" thr ", " x   ")
    if "ratio" in s:
        line += (f"  | openssl {figure(s['openssl_gb_per_s'], 7)} GB/s {spread_text(s['openssl_spread']):>7}  "
                 f"ratio {figure(s['ratio'], 5)}x {spread_text(s['ratio_spread']):>7}")
    if s.get("disturbed"):
        line += f"  DISTURBED: {s['why']}"
    return line
