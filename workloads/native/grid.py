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

from . import CIPHER_IMPLS, bench_ctr, cryptrec, info, resolve_impl


@dataclass(frozen=True)
class NativeGrid:
    """One grid of native CTR measurements of one cipher (every field that is a tuple is swept).

    multi=True: every thread encrypts its own buffer of each size (like `openssl speed -multi`);
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
                for t in self.threads for n in self.sizes]


def run_grid(grid: NativeGrid, *, run_id: str, experiment: str = "native", progress: bool = False,
             log: Callable[[dict], None] | None = None) -> tuple[list[dict], list[dict]]:
    """Measure the grid; returns (summaries, records rows).

    A summary per measurement: impl, strategy, block_bytes, threads, bytes, total_bytes, seconds,
    gb_per_s, cycles_per_byte, reps (and openssl_gb_per_s, ratio with vs_openssl); `log` is called
    with each as it is measured. cycles_per_byte is time-stamp-counter ticks x threads / bytes
    processed (core cycles per byte).
    """
    if grid.vs_openssl and grid.cipher in cryptrec.CIPHERS:
        raise S2mcError(f"OpenSSL has no {grid.cipher}: --vs-openssl is for aes and camellia")
    platform = info().get("cpu", "unknown")
    workload = f"{grid.cipher}-{grid.key_bits}-ctr"
    configs = grid.configs()
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=len(configs), desc="s2mc native", unit="run", leave=False)
    rows, summaries, ossl_cache = [], [], {}

    def add(engine, variant, t, res):
        secs, total = res["seconds_best"], res["total_bytes"]
        base = dict(run_id=run_id, experiment=experiment, source="native", platform=platform,
                    workload=workload, variant=variant, engine=engine, cores=t, core=-1, bytes=total,
                    cipher=grid.cipher)
        rows.append(dict(base, metric="seconds", value=secs))
        rows.append(dict(base, metric="bytes_per_second", value=total / secs))
        rows.append(dict(base, metric="cycles_per_byte", value=res["tsc_cycles_best"] * t / total))
        return base

    def bench(engine, impl, strategy, t, n, bb):
        if grid.cipher in cryptrec.CIPHERS:
            return cryptrec.bench_ctr(grid.cipher, n, key_bits=grid.key_bits, threads=t, min_reps=grid.min_reps,
                                      min_seconds=grid.min_seconds, multi=strategy == "multi", impl=impl)
        return bench_ctr(n, key_bits=grid.key_bits, engine=engine, impl=impl,
                         strategy="contiguous" if strategy == "multi" else strategy, threads=t,
                         block_bytes=bb, min_reps=grid.min_reps, min_seconds=grid.min_seconds,
                         multi=strategy == "multi", cipher=grid.cipher)

    try:
        for impl, strategy, bb, t, n in configs:
            variant = f"extended-{bb}" if strategy == "extended" else strategy
            res = bench("ours", impl, strategy, t, n, bb)
            base = add(res["engine"], variant, t, res)
            total = res["total_bytes"]
            s = dict(cipher=grid.cipher, key_bits=grid.key_bits, impl=res["engine"], strategy=strategy,
                     block_bytes=bb if strategy == "extended" else None, threads=t, bytes=n,
                     total_bytes=total, seconds=res["seconds_best"],
                     gb_per_s=total / res["seconds_best"] / 1e9,
                     cycles_per_byte=res["tsc_cycles_best"] * t / total, reps=res["reps"])
            if grid.vs_openssl:
                if (t, n) not in ossl_cache:  # one OpenSSL baseline per (threads, size)
                    o = bench("openssl", "auto", "multi" if grid.multi else "contiguous", t, n, bb)
                    ossl_cache[(t, n)] = o
                    add("openssl", "evp-multi" if grid.multi else "evp-contiguous", t, o)
                o = ossl_cache[(t, n)]
                s["openssl_gb_per_s"] = o["total_bytes"] / o["seconds_best"] / 1e9
                s["ratio"] = o["seconds_best"] / res["seconds_best"]
                rows.append(dict(base, metric="speedup_vs_openssl", value=s["ratio"]))
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
            f"{'throughput':>13}  {'cycles/B':>11}")
    return line + (f"  | {'OpenSSL throughput':>20}  {'ratio':>11}" if vs_openssl else "")


def summary_legend(vs_openssl: bool = False) -> str:
    """Printed under the lines: what the less obvious columns mean."""
    return ("cycles/B (c/B): time-stamp-counter cycles x threads per byte, the CPU time one byte costs "
            "(lower is better)" + ("; ratio: OpenSSL's time / ours, above 1 ours is faster" if vs_openssl else ""))


def format_summary(s: dict) -> str:
    """One measurement as a line: cipher (and key size), impl, strategy[/block], threads, size, GB/s, cycles per byte
    (and OpenSSL's GB/s and the ratio when measured)."""
    strat = s["strategy"] + (f"/{s['block_bytes']}" if s.get("block_bytes") else "")
    cipher = f"{s['cipher']}-{s['key_bits']}" if s.get("key_bits") else s["cipher"]
    line = (f"{cipher:<{_CIPHER_WIDTH}} {s['impl']:<{_IMPL_WIDTH}} {strat:<15} {s['threads']:>3} thr {human_size(s['bytes']):>10}  "
            f"{s['gb_per_s']:8.2f} GB/s  {s['cycles_per_byte']:7.3f} c/B")
    if s["strategy"] == "multi":
        line = line.replace(" thr ", " x   ")
    if "ratio" in s:
        line += f"  | openssl {s['openssl_gb_per_s']:7.2f} GB/s  ratio {s['ratio']:.2f}x"
    return line
