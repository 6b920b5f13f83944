"""Seed 002's GPU results (Figs. 11-16, Table 2) beside our CUDA records.

Seed 002 (Nishikawa, Iwai, Kurokawa 2012) measured AES and Camellia (and three other CRYPTREC
ciphers) on a Tesla C2050 and a GeForce GTX 285 with three methods: (A) without data transfer,
(B) with transfers overlapped with encryption, (C) with transfers not overlapped. Its Figs. 11-16
are images: the only GPU throughputs its text states are SC2000's (seed002_text in
analysis/reference) and, for AES, that AES-NI's 44.2 Gbps was "approximately 1.4 times higher"
than the C2050 with transfers overlapped (method B, 140 MB, §6.2.4). Its Table 2 (thread blocks,
threads, registers, shared memory, occupancy) is text and is transcribed here for AES and Camellia.

Our side: records with source "cuda": the runs measured elsewhere and checked in
(analysis/gpu_measurements/, s2mc.analysis.gpu_measured; the report always adds them) and this
host's (`s2mc gpu --out`, `s2mc gpu --cipher camellia --out`, the
demo's gpu_size_sweep, run_on_gpu.sh's gpu.parquet / gpu-camellia.parquet). The measures map onto
the methods: device-resident = A, host-overlap-sN = B, host-serial = C (docs/gpu.md).
"""
from __future__ import annotations

import pandas as pd

#: Seed 002 Table 2, the AES and Camellia columns, verbatim ("Summary of performance factors
#: information"; the other three ciphers' columns are not built here).
TABLE2 = """
GPU | cipher | thread blocks | threads per thread block | registers per thread | shared memory per thread block | occupancy
Tesla C2050 | AES | 28 | 512 | 63 | 4.25 KB | 0.33
Tesla C2050 | Camellia | 28 | 512 | 63 | 4.27 KB | 0.33
GeForce GTX 285 | AES | 60 | 256 | 15 | 4.30 KB | 0.75
GeForce GTX 285 | Camellia | 60 | 256 | 15 | 4.30 KB | 0.75
"""

#: The seed's measures by method letter, and ours.
METHODS = {"A": "without transfer (device-resident)", "B": "transfer overlapped (host-overlap)",
           "C": "transfer not overlapped (host-serial)"}

#: What seed 002's text states about AES/Camellia GPU throughput (Gbps); everything else in its
#: Figs. 11-16 is an image. AES method B on the C2050 is derived from §6.2.4's ratio.
PAPER_TEXT = {("aes", "B", "Tesla C2050"): (44.2 / 1.4, "≈ 31.6 (§6.2.4: AES-NI's 44.2 Gbps ≈ 1.4x it, 140 MB)")}

NEED_GPU = ("No CUDA records among the inputs: our AES and Camellia GPU figures need a GPU run "
            "(`bash gpu-backends/run_on_gpu.sh`, which writes gpu.parquet and gpu-camellia.parquet, "
            "or `s2mc gpu --cipher camellia --out gpu-camellia.parquet`); the report then shows them "
            "here, beside the runs checked in under analysis/gpu_measurements/ (s2mc.analysis.gpu_measured).")


def table2() -> pd.DataFrame:
    """Seed 002 Table 2 (AES and Camellia) as a frame of strings, as printed."""
    rows = [[c.strip() for c in line.split("|")] for line in TABLE2.strip().splitlines()]
    return pd.DataFrame(rows[1:], columns=rows[0])


def method_of(variant: str) -> str | None:
    """'optimised-t4b2/host-overlap-s4' -> 'B'; keystream -> None (the seed has no such method)."""
    what = variant.split("/", 1)[-1]
    if what == "device-resident":
        return "A"
    if what.startswith("host-overlap"):
        return "B"
    if what == "host-serial":
        return "C"
    return None


def our_runs(df: pd.DataFrame) -> pd.DataFrame:
    """Our CUDA throughput rows: cipher, platform, kernel, measure, method, bytes, gbps."""
    if df is None or df.empty:
        return pd.DataFrame(columns=["cipher", "platform", "kernel", "measure", "method", "bytes", "gbps"])
    d = df[(df["source"] == "cuda") & (df["metric"] == "bytes_per_second")]
    cipher = d["workload"].str.split("-").str[0]
    if "cipher" in d.columns:
        cipher = d["cipher"].where(d["cipher"].fillna("") != "", cipher)
    return pd.DataFrame({
        "cipher": cipher.astype(str), "platform": d["platform"].astype(str),
        "kernel": d["variant"].str.split("/").str[0].astype(str),
        "measure": d["variant"].str.split("/", n=1).str[-1].astype(str),
        "method": d["variant"].map(method_of), "bytes": d["bytes"].astype("int64"),
        "gbps": d["value"].astype(float) * 8 / 1e9}).reset_index(drop=True)


def best_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Fig. 16's layout: per cipher and method, the paper's stated figure (or that it is only in
    an image) beside our best Gbps on each GPU (any kernel, any size) and where it was reached."""
    out = []
    plats = sorted(runs["platform"].unique()) if len(runs) else []
    for cipher in ("aes", "camellia"):
        for m in "ABC":
            row = {"cipher": cipher, "method": f"{m}: {METHODS[m]}"}
            for gpu in ("Tesla C2050", "GeForce GTX 285"):
                row[f"seed 002 {gpu}"] = PAPER_TEXT.get((cipher, m, gpu), (None, "image only (Fig. 16)"))[1]
            for p in plats:
                r = runs[(runs["cipher"] == cipher) & (runs["method"] == m) & (runs["platform"] == p)]
                if r.empty:
                    row[f"ours {p}"] = "–"
                else:
                    best = r.loc[r["gbps"].idxmax()]
                    row[f"ours {p}"] = (f"{best['gbps']:.1f} ({best['kernel']}, "
                                        f"{_size(int(best['bytes']))})")
            out.append(row)
    return pd.DataFrame(out)


def size_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Figs. 11/12's content as a table: Gbps per (GPU, cipher, kernel, method) and input size."""
    d = runs[runs["method"].notna()]
    if d.empty:
        return pd.DataFrame()
    t = d.pivot_table(index=["platform", "cipher", "kernel", "method"], columns="bytes", values="gbps",
                      aggfunc="median")
    t.columns = [_size(int(c)) for c in t.columns]
    return t.reset_index().map(lambda v: f"{v:.1f}" if isinstance(v, float) else v).fillna("–")


def sentences(runs: pd.DataFrame) -> list[str]:
    """What the section says in words."""
    text = ["Seed 002 measured AES and Camellia (and SC2000, Hierocrypt-3, CIPHERUNICORN-A) on a Tesla "
            "C2050 and a GeForce GTX 285 with methods A (no transfer), B (transfer overlapped) and C "
            "(transfer not overlapped), 16 bytes per thread with the tables in shared memory. Its "
            "Figs. 11-16 are images: the only GPU throughputs its text states are SC2000's (73.4 / 33.4 / "
            "18.3 Gbps for A / B / C on the C2050, 47.0 for A on the GTX 285) and that AES-NI's 44.2 Gbps "
            "was about 1.4x the C2050's AES with overlapped transfers. Only those numbers appear below; "
            "the other cells say 'image only'."]
    if runs.empty:
        text.append(NEED_GPU)
    else:
        for (p, c), g in runs.groupby(["platform", "cipher"]):
            a = g[g["method"] == "A"]
            b = g[g["method"] == "B"]
            part = [f"A {a['gbps'].max():.0f} Gbps" if len(a) else None,
                    f"B {b['gbps'].max():.0f} Gbps" if len(b) else None]
            part = [x for x in part if x]
            if part:
                text.append(f"Ours, {c} on {p}: best " + ", ".join(part) + ".")
        for cipher, name in (("aes", "AES"), ("camellia", "Camellia")):
            if cipher not in set(runs["cipher"]):
                text.append(f"No {name} CUDA records among the inputs: run `bash gpu-backends/run_on_gpu.sh` "
                            f"(or `s2mc gpu --cipher {cipher} --out ...`) on a GPU.")
    return text


def _size(n: int) -> str:
    for unit, shift in (("GB", 30), ("MB", 20), ("KB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return f"{n >> shift} {unit}"
    return f"{n} B"
