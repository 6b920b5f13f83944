"""The seed papers' published numbers, transcribed, and the CSVs in analysis/reference/.

The tables below are copied from the seed papers cell by cell, with
tabs shown as `|`; `build()` turns them into records (source = reference) and
`python -m s2mc.analysis.seeds --write analysis/reference` regenerates analysis/reference/seed00N.csv. The CSVs are the
artefact the rest of s2mc reads (`load_reference()`); a test checks they match these tables.

Conventions (also in analysis/reference/README.md):
- `experiment` names the paper's table, e.g. `seed003_table3`; numbers quoted in a paper's running
  text are `seed000_text` / `seed002_text`. `run_id` is `ref-<experiment>`.
- `platform` is the paper's machine with the seed in brackets; the full citation of every
  experiment is in `CITATIONS` (written to analysis/reference/citations.json and README.md).
- Sizes: a paper's KB/MB are read as KiB/MiB (1024, 1048576 bytes). Times are stored in seconds,
  throughput in Gbit/s (the seeds' Mbps/Gbps are 10^6/10^9 bits per second: seed 000's 503.9 Mbps
  is exactly 16 x 8 / 0.254 s).
- Where a paper is ambiguous the choice is written in `NOTES` (rendered into the README).
"""
from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path

import pandas as pd

from s2mc.analysis import records
from s2mc.common.errors import S2mcError

REFERENCE_DIR = Path(__file__).resolve().parent / "reference"

# --------------------------------------------------------------------------------------------------
# Verbatim tables (cells separated by " | ", exactly as printed in the seed text)
# --------------------------------------------------------------------------------------------------

SEED000_TABLE1 = """
4 | .248 | .063 | .065 | .200 | .051 | .049 | .061 | .082 | .064 | .085 | .060 | .060
16 | 1.04 | .263 | .254 | .801 | .212 | .178 | .250 | .218 | .248 | .250 | .230 | .220
32 | 1.99 | .505 | .508 | 1.56 | .395 | .400 | .480 | .450 | .482 | .460 | .458 | .456
"""

SEED000_TABLE2 = """
4 | 0.00180448
16 | 0.00703747
32 | 0.01371405
"""

SEED001_TABLE1 = """
256 KB | 833 ms | 519 ms | 142 ms
512 KB | 1639 ms | 1015 ms | 217 ms
1 MB | 3285 ms | 2069 ms | 335 ms
2 MB | 6535 ms | 4123 ms | 570 ms
4 MB | 13123ms | 7998 ms | 1051 ms
8 MB | 26063 ms | 15359 ms | 2067 ms
16 MB | 52367 ms | 32138 ms | 4033 ms
32 MB | 105507 ms | 61524 ms | 7818 ms
64 MB | 208730 ms | 125044 ms | 16387 ms
128 MB | 416993 ms | 245823 ms | 31088 ms
256 MB | 834216 ms | 495718 ms | 63391 ms
"""

SEED001_TABLE2 = """
256 KB | 663 ms | 342 ms | 34 ms
512 KB | 1298 ms | 671 ms | 69 ms
1 MB | 2578 ms | 1360 ms | 138 ms
2 MB | 5146 ms | 2742 ms | 279 ms
4 MB | 10342ms | 5266 ms | 553 ms
8 MB | 20358 ms | 10219 ms | 1111 ms
16 MB | 41327 ms | 20714 ms | 2218 ms
32 MB | 83193 ms | 41006 ms | 4447 ms
64 MB | 164309 ms | 82095 ms | 8872 ms
128 MB | 328694 ms | 163641 ms | 17732 ms
256 MB | 657278 ms | 327999 ms | 35477 ms
"""

SEED001_TABLE3 = """
256 KB | 1.60 | 5.86 | 1.93 | 19.33
512 KB | 1.61 | 7.55 | 1.93 | 18.63
1 MB | 1.58 | 9.79 | 1.89 | 18.68
2 MB | 1.58 | 11.46 | 1.87 | 18.42
4 MB | 1.64 | 12.48 | 1.96 | 18.70
8 MB | 1.69 | 12.65 | 2.00 | 18.48
16 MB | 1.62 | 12.98 | 1.99 | 18.62
32 MB | 1.71 | 13.49 | 2.02 | 18.70
64 MB | 1.66 | 12.73 | 2.00 | 18.51
128MB | 1.69 | 13.41 | 2.00 | 18.53
256MB | 1.68 | 13.15 | 2.00 | 18.52
"""

SEED001_TABLE4 = """
256 KB | 546 ms | 350 ms | 168 ms
512 KB | 1082 ms | 664 ms | 196 ms
1 MB | 2169 ms | 1317 ms | 267 ms
2 MB | 4255 ms | 2623 ms | 404 ms
4 MB | 8386 ms | 5216 ms | 674 ms
8 MB | 17488 ms | 10420 ms | 1236 ms
16 MB | 34393 ms | 20964 ms | 2358 ms
32 MB | 68466 ms | 42113 ms | 4554 ms
64 MB | 136931 ms | 83933 ms | 9007 ms
128 MB | 270202 ms | 167718 ms | 18347 ms
256 MB | 555078 ms | 338793 ms | 37759 ms
"""

SEED001_TABLE5 = """
256 KB | 382 ms | 147 ms | 21 ms
512 KB | 761 ms | 259 ms | 42 ms
1 MB | 1530 ms | 508 ms | 84 ms
2 MB | 2983 ms | 1015 ms | 168 ms
4 MB | 5827 ms | 2008 ms | 336 ms
8 MB | 12309 ms | 4030 ms | 672 ms
16 MB | 24030 ms | 8127 ms | 1344 ms
32 MB | 47842 ms | 16450 ms | 2688 ms
64 MB | 95685 ms | 32401 ms | 5376 ms
128 MB | 187683 ms | 64993 ms | 10752 ms
256 MB | 389140 ms | 131613 ms | 21511 ms
"""

SEED001_TABLE6 = """
256 KB | 1.55 | 2.94 | 2.60 | 18.22
512 KB | 1.63 | 4.39 | 2.93 | 18.13
1 MB | 1.64 | 6.23 | 3.00 | 18.21
2 MB | 1.62 | 7.77 | 2.93 | 17.75
4 MB | 1.60 | 8.61 | 2.90 | 17.34
8 MB | 1.67 | 9.64 | 3.05 | 18.31
16 MB | 1.64 | 9.82 | 2.95 | 17.87
32 MB | 1.62 | 9.74 | 2.90 | 17.79
64 MB | 1.63 | 9.76 | 2.95 | 17.79
128 MB | 1.61 | 9.64 | 2.88 | 17.45
256 MB | 1.63 | 9.85 | 2.95 | 18.09
"""

SEED003_TABLE3 = """
32 | 37189 | 26917 | - | -
64 | 69901 | 48358 | 45664 | 49924
128 | 135325 | 91428 | 85669 | 90828
256 | 266173 | 177448 | 175088 | 172687
"""

SEED003_TABLE4 = """
32 | 10346 | 19459 | - | -
64 | 19444 | 35475 | 62383 | 81733
128 | 37640 | 67695 | 119257 | 150909
256 | 74000 | 131995 | 222702 | 289148
"""

SEED004_TABLE2 = """
1KB | 0.1 | 0.8 | 23.5
2KB | 0.2 | 0.8 | 22.4
4KB | 0.4 | 0.9 | 21.5
8KB | 0.7 | 0.9 | 22.1
16KB | 1.4 | 1 | 21.7
32KB | 2.8 | 1.3 | 21.5
64KB | 5.6 | 2.3 | 21.6
128KB | 11.1 | 3.2 | 23.1
256KB | 22.2 | 6.1 | 22.2
512KB | 44.4 | 11.4 | 22
1MB | 88.7 | 22.7 | 24.2
2MB | 177.5 | 46.2 | 26.9
4MB | 348.3 | 79.7 | 32.4
8MB | 695 | 166.3 | 41.5
16MB | 1386.6 | 319.4 | 56.2
32MB | 2761.7 | 631.1 | 85.6
64MB | 5514.9 | 1261.3 | 146.6
128MB | 11018.9 | 2520.1 | 261.2
256MB | 22053.6 | 5049.5 | 500.3
384MB | 33083.9 | 7554.8 | 746.8
512MB | 44136.8 | 10073.1 | 982.9
640MB | 55009.2 | 12580.8 | 1212.2
768MB | 66086.7 | 15101.1 | 1446.2
896MB | 77290.8 | 17628 | 1739.3
1024MB | 88288.1 | 20204.7 | 1972
"""

SEED004_TABLE3 = """
1KB | 0.0001 | 0.0004 | 0.1827
2KB | 0.0001 | 0.0005 | 0.1962
4KB | 0.0003 | 0.0005 | 0.1809
8KB | 0.0006 | 0.0006 | 0.1845
16KB | 0.0013 | 0.0010 | 0.2064
32KB | 0.0025 | 0.0017 | 0.1786
64KB | 0.0048 | 0.0027 | 0.1767
128KB | 0.0093 | 0.0048 | 0.1747
256KB | 0.0191 | 0.0093 | 0.1738
512KB | 0.0369 | 0.0176 | 0.1701
1MB | 0.0766 | 0.0571 | 0.1856
2MB | 0.1526 | 0.0681 | 0.1820
4MB | 0.2971 | 0.1363 | 0.1998
8MB | 0.6045 | 0.2690 | 0.2212
16MB | 1.2020 | 0.5388 | 0.2488
32MB | 2.4047 | 1.1077 | 0.2854
64MB | 4.8478 | 2.2115 | 0.3760
128MB | 9.7037 | 4.3964 | 0.6431
256MB | 18.9783 | 8.7755 | 1.0113
384MB | 27.1826 | 13.1759 | 1.4071
512MB | 36.6942 | 17.2230 | 1.8321
640MB | 49.4872 | 21.4604 | 2.4205
768MB | 53.9524 | 25.8264 | 2.6469
896MB | 62.9661 | 30.0756 | 3.1884
1024MB | 71.8683 | 34.3292 | 3.4801
"""

# -- numbers quoted in running text (section given with each) --------------------------------------

#: seed 000 §6.1-6.2 (and Fig. 13/14 as described in the text).
SEED000_TEXT = [
    # (metric, value, variant, engine, cores, bytes, platform-key, where)
    ("gbps", 0.5039, "coarse", "openmp", 8, 16 << 20, "s000_cpu", "§6.1: coarse-grain, 8 threads, 16 MB: 503.9 Mbps"),
    ("gbps", 0.7191, "extended-1024", "openmp", 8, 16 << 20, "s000_cpu", "§6.1: 1 KB extended block, 8 threads, 16 MB: 719.1 Mbps"),
    ("speedup", 1.43, "extended-1024-vs-coarse", "openmp", 8, 16 << 20, "s000_cpu", "§6.1: new approach 1.43x the coarse-grain throughput (8 threads, 16 MB)"),
    ("gbps", 12.0, "coarse", "cuda", 1, 32 << 20, "s000_gpu", "§6.2: 16-byte blocks reach 12 Gbps (87/7.25 = 12, i.e. 32 MB)"),
    ("gbps", 53.0, "extended-min", "cuda", 1, 0, "s000_gpu", "§6.2: extended blocks reach 53~87 Gbps (low end; size not stated)"),
    ("gbps", 87.0, "extended-4096", "cuda", 1, 32 << 20, "s000_gpu", "§6.2: 87 Gbps with 4 KB blocks on 32 MB"),
    ("speedup", 7.25, "extended-4096-vs-coarse", "cuda", 1, 32 << 20, "s000_gpu", "§6.2/Fig. 13: 7.25x over coarse-grain"),
]

#: seed 002 §6.2.2, §6.2.4 and the abstract.
SEED002_TEXT = [
    ("gbps", 73.4, "sc2000-enc", "device-resident", "cuda", 1, 0, "s002_c2050", "§6.2.2: SC2000, method (A) without data transfer"),
    ("gbps", 33.4, "sc2000-enc", "host-to-host-overlap", "cuda", 1, 0, "s002_c2050", "abstract: SC2000, method (B) transfer overlapped with encryption"),
    ("gbps", 18.3, "sc2000-enc", "host-to-host", "cuda", 1, 0, "s002_c2050", "abstract: SC2000, method (C) transfer not overlapped"),
    ("gbps", 47.0, "sc2000-enc", "device-resident", "cuda", 1, 0, "s002_gtx285", "§6.2.2: SC2000 on GeForce GTX 285, without data transfer"),
    ("gbps", 7.1, "sc2000-enc", "openmp", "openmp", 8, 0, "s002_cpu", "§6.2.2: 8 threads on 4 cores, Core i7-2600K"),
    ("gbps", 44.2, "aes-128-enc", "aesni", "openssl", 4, 140 << 20, "s002_cpu", "§6.2.4: AES-NI (OpenSSL code), 4 threads, 140 MB"),
]

# --------------------------------------------------------------------------------------------------
# Machines and citations
# --------------------------------------------------------------------------------------------------

PLATFORMS = {
    "s003": "S2 multicore simulator (seed 003)",
    "s000_cpu": "Intel 4-core 2.2 GHz, 2 GB DRAM (seed 000)",
    "s000_gpu": "NVIDIA GeForce 8800 GT (seed 000)",
    "s001_i5": "Intel Core i5 M 450 2.4 GHz (seed 001)",
    "s001_330m": "NVIDIA GeForce GT 330M (seed 001)",
    "s001_i7": "Intel Core i7 960 3.2 GHz (seed 001)",
    "s001_fx1800": "NVIDIA Quadro FX 1800 (seed 001)",
    "s002_cpu": "Intel Core i7-2600K 3.4 GHz (seed 002)",
    "s002_c2050": "NVIDIA Tesla C2050 (seed 002)",
    "s002_gtx285": "NVIDIA GeForce GTX 285 (seed 002)",
    "s004_i7": "Intel Core i7 960 (seed 004, system 1)",
    "s004_gtx480": "NVIDIA GeForce GTX 480 (seed 004, system 1)",
    "s004_i5": "Intel Core i5-4200M 2.5 GHz (seed 004, system 2)",
    "s004_hd8750m": "AMD Radeon HD 8750M (seed 004, system 2)",
}

_PAPERS = {
    "000": ("Nhat-Phuong Tran, Myungho Lee, Sugwon Hong, Seung-Jae Lee",
            "High Throughput Parallelization of AES-CTR Algorithm",
            "IEICE Transactions on Information and Systems, vol. E96-D (2013), "
            "doi:10.1587/transinf.E96.D.1685", "000_acd7a873e0cdf6b7.txt"),
    "001": ("Julián Ortega, Helmuth Trefftz, Christian Trefftz",
            "Parallelizing AES on Multicores and GPUs", "(venue not given in the seed text)",
            "001_d5454e034ec03028.txt"),
    "002": ("Naoki Nishikawa, Keisuke Iwai, Takakazu Kurokawa",
            "High-Performance Symmetric Block Ciphers on Multicore CPU and GPUs",
            "accepted June 19, 2012 (journal not named in the seed text)",
            "002_fbfaabde64d8faa8.txt"),
    "003": ("Supachai Thongsuk, Prabhas Chongstitvatana",
            "An implementation of AES algorithm on multicore processors for high throughput",
            "ECTI-CARD 2014, Chiang Mai, Thailand", "003_32752158d994d415.txt"),
    "004": ("Gabriel Munteanu, Ştefan Mocanu, Daniela Saru",
            "GPGPU optimized parallel implementation of AES using C++AMP",
            "University Politehnica of Bucharest (venue not given in the seed text)",
            "004_e43e4a61b9126ce5.txt"),
}

#: experiment -> (seed, where in the paper, what it holds)
_EXPERIMENTS = {
    "seed003_table3": ("003", "Table 3", "Time in CPU cycles to complete the task, 1-4 cores, 32-256 bytes"),
    "seed003_table4": ("003", "Table 4", "Total memory-stall cycles summed over all cores"),
    "seed000_table1": ("000", "Table 1", "Run time (s) on a 4-core Intel processor: coarse-grain vs extended blocks, 1/4/8 threads"),
    "seed000_table2": ("000", "Table 2", "Host-to-GPU data transfer time (s), GeForce 8800 GT"),
    "seed000_text": ("000", "§6.1-6.2 text", "Throughputs and speedups quoted in the text"),
    "seed001_table1": ("001", "Table 1", "Total execution time, i5 + GT 330M (sequential, 4 threads, GPU)"),
    "seed001_table2": ("001", "Table 2", "Encryption-only time, i5 + GT 330M"),
    "seed001_table3": ("001", "Table 3", "Speedups, i5 + GT 330M"),
    "seed001_table4": ("001", "Table 4", "Total execution time, i7 + Quadro FX 1800 (sequential, 8 threads, GPU)"),
    "seed001_table5": ("001", "Table 5", "Encryption-only time, i7 + Quadro FX 1800"),
    "seed001_table6": ("001", "Table 6", "Speedups, i7 + Quadro FX 1800"),
    "seed002_text": ("002", "abstract, §6.2.2, §6.2.4", "Headline throughputs (best of Figs. 10-17 as quoted in the text)"),
    "seed004_table2": ("004", "Table 2", "AES encryption time, system 1 (i7 960 + GTX 480): CPU sequential, CPU parallel, GPU"),
    "seed004_table3": ("004", "Table 3", "AES encryption time, system 2 (i5-4200M + Radeon HD 8750M)"),
}

NOTES = [
    "Seed 003 does not state the key size or mode; it encrypts independent 16-byte blocks with one "
    "key (ECB) and the S2 programs of that era used AES-128: stored as `aes-128-ecb-enc`, variant "
    "`bytes/interleaved` (byte-oriented code, block i on core i mod N, its Fig. 3). `-` cells "
    "(32 bytes on 3 and 4 cores) are omitted.",
    "Seed 000 Table 1: the thread count is stored in `cores` (8 threads ran on 4 cores). Variants "
    "`coarse` (16-byte blocks) and `extended-<E x 16 bytes>`. Key size: the paper shows AES-128 "
    "(its Fig. 1); stored as `aes-128-ctr-enc`.",
    "Seed 000's 12 Gbps (coarse, GPU) is placed at 32 MB because the text says 87 Gbps at 32 MB is "
    "7.25x it; the low end of its 53~87 Gbps range has no stated size (bytes = 0).",
    "Seed 001: 16-byte blocks encrypted independently with a 128-bit key in 256 KB chunks: "
    "`aes-128-ecb-enc`. Its table captions are garbled in the text (\"TABLE II\" twice, "
    "\"Compression times\"); they are numbered 1-6 here in the order the text refers to them. "
    "Variants are `<sequential|openmp|gpu>/<total|encryption-only>`; cores = threads (4 on the i5, "
    "8 on the i7), 1 for sequential and GPU rows.",
    "Seed 002's headline throughputs are SC2000 (not AES) except the AES-NI figure; the message size "
    "of the 'best' figures is not stated (bytes = 0). Its Table 1 names the CPU as a Core i7-2600K "
    "(the text also mentions an i7-920); the i7-2600K is used.",
    "Seed 004 Table 3 is headed `ms` but its values are consistent only with seconds (71.9 ms for "
    "1 GB sequential would be 14 GB/s for byte-oriented AES in 2014, and Table 2's same test takes "
    "88 s): stored as seconds. CPU P uses all virtual processors: cores = 8 (i7 960) and 4 "
    "(i5-4200M). Mode ECB, key size assumed 128 (the paper fixes the key; size not stated).",
]


def citation(experiment: str) -> str:
    """One-line citation of a reference experiment."""
    try:
        seed, where, _ = _EXPERIMENTS[experiment]
    except KeyError:
        raise S2mcError(f"reference: unknown experiment {experiment!r}") from None
    authors, title, venue, fname = _PAPERS[seed]
    return f"{authors}, \"{title}\", {venue}; {where} (seed {seed})"


CITATIONS = {exp: {"seed": v[0], "where": v[1], "holds": v[2], "citation": citation(exp)}
             for exp, v in _EXPERIMENTS.items()}

# --------------------------------------------------------------------------------------------------
# Parsing the verbatim tables
# --------------------------------------------------------------------------------------------------

_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30}


def parse_size(text: str, default_unit: str = "B") -> int:
    """'256 KB' -> 262144; '1024MB' -> 1073741824; '32' (with default_unit) -> bytes."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*([KMG]?B)?\s*", text)
    if not m:
        raise S2mcError(f"reference: cannot read size {text!r}")
    return int(float(m.group(1)) * _UNITS[m.group(2) or default_unit])


def parse_number(text: str) -> float | None:
    """'13123ms' -> 13123.0; '.248' -> 0.248; '-' -> None."""
    t = text.strip()
    if t in ("-", ""):
        return None
    t = re.sub(r"\s*ms$", "", t)
    return float(t)


def _table(block: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")] for line in block.strip().splitlines()]


def _rows_for(experiment, block, size_unit, columns, divide=1, workload="aes-128-ecb-enc"):
    """columns: per value column, dict(variant, engine, cores, platform, metric).

    Times are divided by `divide` (1000 for tables in ms) to give seconds."""
    out = []
    for cells in _table(block):
        size = parse_size(cells[0], size_unit)
        if len(cells) - 1 != len(columns):
            raise S2mcError(f"reference: {experiment}: row {cells[0]!r} has {len(cells) - 1} "
                            f"cells, expected {len(columns)}")
        for col, cell in zip(columns, cells[1:]):
            v = parse_number(cell)
            if v is None:
                continue
            metric = col["metric"]
            out.append({"run_id": f"ref-{experiment}", "experiment": experiment,
                        "source": "reference", "platform": PLATFORMS[col["platform"]],
                        "workload": workload, "variant": col["variant"],
                        "engine": col.get("engine", ""), "cores": col["cores"], "core": -1,
                        "bytes": size, "metric": metric,
                        "value": round(v / divide, 12) if metric in ("seconds", "transfer_seconds") else v})
    return out


def _c(variant, cores, platform, metric="seconds", engine=""):
    return {"variant": variant, "cores": cores, "platform": platform, "metric": metric,
            "engine": engine}


def _seed001(tables, cpu, gpu, threads):
    t_total, t_enc, t_speed = tables
    n = {1: "table1", 2: "table2", 3: "table3"} if threads == 4 else \
        {1: "table4", 2: "table5", 3: "table6"}
    rows = []
    for key, block, part in ((1, t_total, "total"), (2, t_enc, "encryption-only")):
        rows += _rows_for(f"seed001_{n[key]}", block, "B", [
            _c(f"sequential/{part}", 1, cpu),
            _c(f"openmp/{part}", threads, cpu, engine="openmp"),
            _c(f"gpu/{part}", 1, gpu, engine="cuda"),
        ], divide=1000)
    rows += _rows_for(f"seed001_{n[3]}", t_speed, "B", [
        _c("openmp/total", threads, cpu, "speedup", "openmp"),
        _c("gpu/total", 1, gpu, "speedup", "cuda"),
        _c("openmp/encryption-only", threads, cpu, "speedup", "openmp"),
        _c("gpu/encryption-only", 1, gpu, "speedup", "cuda"),
    ])
    return rows


def build() -> dict[str, pd.DataFrame]:
    """Records per seed file name (seed000 ... seed004), from the verbatim tables above."""
    s003 = [_c("bytes/interleaved", k, "s003", m) for k in (1, 2, 3, 4) for m in ("cycles",)]
    seed003 = (_rows_for("seed003_table3", SEED003_TABLE3, "B", s003)
               + _rows_for("seed003_table4", SEED003_TABLE4, "B",
                           [dict(c, metric="stall_cycles") for c in s003]))

    t1cols = [_c("coarse", t, "s000_cpu", engine="openmp") for t in (1, 4, 8)]
    t1cols += [_c("extended-1024", t, "s000_cpu", engine="openmp") for t in (1, 4, 8)]
    for e in (2048, 4096, 512):
        t1cols += [_c(f"extended-{e}", t, "s000_cpu", engine="openmp") for t in (4, 8)]
    seed000 = _rows_for("seed000_table1", SEED000_TABLE1, "MB", t1cols,
                        workload="aes-128-ctr-enc")
    seed000 += _rows_for("seed000_table2", SEED000_TABLE2, "MB",
                         [_c("host-to-device", 1, "s000_gpu", "transfer_seconds", "cuda")],
                         workload="aes-128-ctr-enc")
    for metric, value, variant, engine, cores, nbytes, plat, _where in SEED000_TEXT:
        seed000.append({"run_id": "ref-seed000_text", "experiment": "seed000_text",
                        "source": "reference", "platform": PLATFORMS[plat],
                        "workload": "aes-128-ctr-enc", "variant": variant, "engine": engine,
                        "cores": cores, "core": -1, "bytes": nbytes, "metric": metric,
                        "value": value})

    seed001 = (_seed001((SEED001_TABLE1, SEED001_TABLE2, SEED001_TABLE3), "s001_i5", "s001_330m", 4)
               + _seed001((SEED001_TABLE4, SEED001_TABLE5, SEED001_TABLE6), "s001_i7",
                          "s001_fx1800", 8))

    seed002 = [{"run_id": "ref-seed002_text", "experiment": "seed002_text", "source": "reference",
                "platform": PLATFORMS[plat], "workload": wl, "variant": variant, "engine": engine,
                "cores": cores, "core": -1, "bytes": nbytes, "metric": metric, "value": value}
               for metric, value, wl, variant, engine, cores, nbytes, plat, _w in SEED002_TEXT]

    seed004 = _rows_for("seed004_table2", SEED004_TABLE2, "B", [
        _c("sequential", 1, "s004_i7"), _c("parallel", 8, "s004_i7"),
        _c("gpu", 1, "s004_gtx480", engine="c++amp")], divide=1000)
    seed004 += _rows_for("seed004_table3", SEED004_TABLE3, "B", [
        _c("sequential", 1, "s004_i5"), _c("parallel", 4, "s004_i5"),
        _c("gpu", 1, "s004_hd8750m", engine="c++amp")])  # see NOTES: read as seconds

    return {name: records.make_records(rows) for name, rows in
            (("seed000", seed000), ("seed001", seed001), ("seed002", seed002),
             ("seed003", seed003), ("seed004", seed004))}


def render_readme() -> str:
    lines = ["# Seed reference tables", "",
             "<!-- Generated by `python -m s2mc.analysis.seeds --write analysis/reference`; do not edit. -->", "",
             "The seed papers' published numbers in the records schema (docs/records.md), "
             "`source = reference`. One CSV per seed; `experiment` names the table and `run_id` is "
             "`ref-<experiment>`. The schema has no citation column: `platform` names the paper's "
             "machine and seed, and the citation of every experiment is below and in "
             "`citations.json` (`s2mc.analysis.seeds.citation(experiment)`).", "",
             "The tables are transcribed cell by cell in `analysis/seeds.py` (verbatim blocks from "
             "the seed text files), which writes these CSVs; a test checks they agree.", "",
             "| experiment | rows | where | holds | citation |", "|---|---|---|---|---|"]
    frames = build()
    counts = pd.concat(frames.values())["experiment"].value_counts()
    for exp, c in CITATIONS.items():
        lines.append(f"| `{exp}` | {int(counts.get(exp, 0))} | {c['where']} | {c['holds']} | "
                     f"{c['citation']} |")
    lines += ["", "## Transcription notes", ""] + [f"- {n}" for n in NOTES] + [""]
    return "\n".join(lines)


def write(directory: Path = REFERENCE_DIR) -> list[Path]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, df in build().items():
        out.append(records.write(df, directory / f"{name}.csv"))
    (directory / "citations.json").write_text(json.dumps(CITATIONS, indent=2, ensure_ascii=False)
                                              + "\n", encoding="utf-8")
    (directory / "README.md").write_text(render_readme(), encoding="utf-8")
    _reference_rows.cache_clear()     # what this process reads next is what it wrote
    return out


@functools.cache
def _reference_rows() -> pd.DataFrame:
    """analysis/reference/*.csv, read once a process: a report asks for them five times."""
    return records.load(sorted(REFERENCE_DIR.glob("seed*.csv")))


def load_reference(experiments: list[str] | str | None = None) -> pd.DataFrame:
    """The reference rows from analysis/reference/*.csv (optionally only some experiments)."""
    df = _reference_rows().copy()
    if experiments is not None:
        wanted = [experiments] if isinstance(experiments, str) else list(experiments)
        unknown = [e for e in wanted if e not in _EXPERIMENTS]
        if unknown:
            raise S2mcError(f"reference: unknown experiment {unknown[0]!r} "
                            f"(known: {', '.join(_EXPERIMENTS)})")
        df = df[df["experiment"].isin(wanted)].reset_index(drop=True)
    return df


if __name__ == "__main__":
    # Writes into a checkout's analysis/reference/ (the installed package is read-only data).
    if len(sys.argv) == 3 and sys.argv[1] == "--write":
        for p in write(Path(sys.argv[2])):
            print(p)
    else:
        sys.stderr.write("usage: python -m s2mc.analysis.seeds --write analysis/reference\n")
        sys.exit(2)
