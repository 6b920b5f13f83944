"""Which table and figure of the five seed papers the report shows, and how: the one declaration that
the report's coverage table and the table in docs/analysis.md are both generated from.

    from s2mc.analysis import coverage
    coverage.table(records)        # the report's table: what these records let it show
    coverage.markdown()            # the docs' table: what it shows when the records are there

Every table and figure the seed texts (/work/shared/seeds/) caption is listed, in the paper's order.
`shown` is what the report does with it when the records it `needs` are among its inputs:
  side by side   ours beside the paper's numbers
  paper only     the paper's numbers, not ours (`why`: e.g. ours needs a GPU)
  ours only      ours in the paper's layout; the paper gives no numbers (its figure is an image)
  not shown      neither (`why`: a diagram, an image with no numbers, ...)
When some of `needs` are missing, "side by side" reads "paper only" and "ours only" reads "not shown",
naming the missing records. `where` is the report section (its HTML anchor) that holds it.
`python -m s2mc.analysis.coverage --write-docs docs/analysis.md` regenerates the docs' table.
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

SIDE, PAPER, OURS, NONE = "side by side", "paper only", "ours only", "not shown"


@dataclass(frozen=True)
class Item:
    seed: str                      # "000" .. "004"
    item: str                      # as the paper captions it: "Table 3", "Fig. 10"
    holds: str                     # what it shows, in a few words
    shown: str                     # SIDE | PAPER | OURS | NONE (with every record of `needs`)
    where: str = ""                # the report section's anchor, e.g. "seed003"
    why: str = ""                  # why not side by side (or what is special about it)
    needs: tuple[str, ...] = ()    # experiments (records) ours comes from
    command: str = ""              # what makes those records


_DIAGRAM = "a diagram or code listing: no measurement"
_IMAGE = "an image in the paper, no numbers in its text"
_GPU = "ours needs an NVIDIA GPU (CUDA records: run_on_gpu.sh, docs/gpu.md)"
#: Our GPU runs checked in as data (s2mc.analysis.gpu_measured): the report has them everywhere.
_MEASURED = "measured elsewhere on an H100 and an H200 (analysis/gpu_measurements/)"
_SEED003 = ("s2mc aes --cores 1,2,3,4 --bytes 32,64,128,256 --style bytes --mode ecb --opt 1,0 "
            "--out results/seed003.parquet")
_SEED000 = "s2mc sweep seed000_block_sizes --out results/seed000.parquet"
_NATIVE = "python -m s2mc.experiments.seeds_native --out results/seeds_native.parquet"

ITEMS: tuple[Item, ...] = (
    # seed 000: Tran et al., AES-CTR on a 4-core CPU and a GeForce 8800 GT
    *(Item("000", f"Fig. {n}", h, NONE, why=_DIAGRAM) for n, h in (
        (1, "AES-128 steps"), (2, "AES-CTR applications"), (3, "multicore architecture"),
        (4, "GPU architecture"), (5, "AES-CTR routines"), (6, "fine-grain threads"),
        (7, "coarse-grain threads"), (8, "extended blocks"), (9, "extended-block parallelisation"))),
    Item("000", "Table 1", "run time, coarse vs extended blocks, 1/4/8 threads, 4-core CPU", SIDE, "seed000",
         needs=("seed000_block_sizes",), command=_SEED000),
    Item("000", "Fig. 10", "Table 1's 4-thread run times as bars", SIDE, "seed000",
         why="its numbers are Table 1's, shown in Table 1's table", needs=("seed000_block_sizes",),
         command=_SEED000),
    Item("000", "Fig. 11", "fine vs coarse grain on the GeForce 8800 GT", NONE, why=f"{_IMAGE}; {_GPU}"),
    Item("000", "Fig. 12", "extended blocks on the GPU, run time", OURS, "seed000",
         why=f"{_IMAGE}; ours: coarse and extended-4096 per size as throughput (its inverse), {_MEASURED}",
         needs=("cuda",)),
    Item("000", "Fig. 13", "extended blocks on the GPU, speedup", SIDE, "seed000",
         why=f"the speedup its text quotes (7.25x at 32 MB) beside ours extended/coarse per size, {_MEASURED}",
         needs=("cuda",)),
    Item("000", "Fig. 14", "extended blocks on the GPU, throughput", SIDE, "seed000",
         why=f"the two throughputs its text quotes (12 and 87 Gbit/s at 32 MB) beside ours per size, "
             f"{_MEASURED}; also stars in the throughput figure", needs=("cuda",)),
    Item("000", "Table 2", "host-to-GPU transfer time", NONE,
         why=f"transcribed (analysis/reference/seed000.csv) but not drawn; {_GPU}"),
    Item("000", "Fig. 15", "effect of multithreading on the GPU", NONE, why=f"{_IMAGE}; {_GPU}"),
    Item("000", "Fig. 16", "block size against threads, 32 MB, GPU", NONE, why=f"{_IMAGE}; {_GPU}"),
    # seed 001: Ortega et al., AES on an i5/i7 and GT 330M/Quadro FX 1800
    Item("001", "Figure 1", "AES overview", NONE, why=_DIAGRAM),
    Item("001", "Figure 2", "GPU memory transfers", NONE, why=_DIAGRAM),
    Item("001", "Table 1", "total time with file I/O, i5 M 450 + GT 330M", SIDE, "seed001",
         why="CPU columns; its GPU column is the paper's only", needs=("seed001_ours",), command=_NATIVE),
    Item("001", "Table 2", "encryption-only time, i5 M 450 + GT 330M", SIDE, "seed001",
         why="CPU columns; its GPU column is the paper's only", needs=("seed001_ours",), command=_NATIVE),
    Item("001", "Table 3", "speedups, i5 M 450", SIDE, "seed001",
         why="the CPU speedups, as a column of Tables 1-2's tables", needs=("seed001_ours",), command=_NATIVE),
    Item("001", "Table 4", "total time with file I/O, i7 960 + Quadro FX 1800", NONE,
         why="transcribed but not drawn: ours is compared with the i5 (Table 1)"),
    Item("001", "Table 5", "encryption-only time, i7 960 + Quadro FX 1800", PAPER, "native",
         why="its 8-thread column as a curve in the throughput figure"),
    Item("001", "Table 6", "speedups, i7 960", NONE,
         why="transcribed but not drawn: ours is compared with the i5 (Table 3)"),
    # seed 002: Nishikawa et al., five block ciphers on a Core i7-2600K and CUDA GPUs
    *(Item("002", f"Figure {n}", h, NONE, why=_DIAGRAM) for n, h in (
        (1, "CUDA architecture"), (2, "Camellia"), (3, "CIPHERUNICORN-A"), (4, "Hierocrypt-3"),
        (5, "SC2000"), (6, "16 bytes per thread"), (7, "AES memory allocation code"),
        (8, "overlapped transfers"), (9, "overlap code"))),
    Item("002", "Table 1", "the test machines", NONE, why="a specification, no measurement"),
    Item("002", "Figure 10", "five ciphers x threads on a Core i7-2600K", SIDE, "seed002-cpu",
         why="the paper's numbers are those its text quotes; CIPHERUNICORN-A is not built",
         needs=("seed002_cpu",), command=_NATIVE),
    Item("002", "Figure 11", "AES on GPUs against input size", OURS, "seed002-gpu",
         why=f"{_IMAGE}; ours {_MEASURED} and this host's CUDA records", needs=("cuda",)),
    Item("002", "Figure 12", "Camellia on GPUs against input size", OURS, "seed002-gpu",
         why=f"{_IMAGE}; ours {_MEASURED} and this host's CUDA records", needs=("cuda",)),
    Item("002", "Figure 13", "CIPHERUNICORN-A on GPUs", NONE, why=f"{_IMAGE}; no GPU kernel of it here"),
    Item("002", "Figure 14", "Hierocrypt-3 on GPUs", NONE, why=f"{_IMAGE}; no GPU kernel of it here"),
    Item("002", "Figure 15", "SC2000 on GPUs", NONE, why=f"{_IMAGE}; no GPU kernel of it here"),
    Item("002", "Figure 16", "best throughput of the five ciphers", SIDE, "seed002-gpu",
         why=f"the throughputs its text quotes; AES and Camellia only; ours {_MEASURED}", needs=("cuda",)),
    Item("002", "Table 2", "registers, shared memory, occupancy per kernel", SIDE, "seed002-gpu",
         why=f"ours for the kernel the H200 run kept ({_MEASURED}); `s2mc gpu --occupancy` prints every "
             "kernel on a GPU"),
    Item("002", "Figure 17", "AES-NI against a Tesla C2050", SIDE, "seed002-cpu",
         why="the AES-NI throughput its text quotes beside our AES-instruction line; the GPU bar needs a GPU",
         needs=("seed002_cpu",), command=_NATIVE),
    # seed 003: Thongsuk and Chongstitvatana, AES on the S2 multicore
    Item("003", "Table 1", "AES key lengths and rounds", NONE, why="a definition, no measurement"),
    Item("003", "Fig. 1", "AES encryption flow", NONE, why=_DIAGRAM),
    Item("003", "Fig. 2", "multicore architectures", NONE, why=_DIAGRAM),
    Item("003", "Table 2", "S2's instruction types", NONE, why="the ISA, not a measurement (docs/isa.md)"),
    Item("003", "Fig. 3", "AES on the multicore", NONE, why=_DIAGRAM),
    Item("003", "Fig. 4", "test methodology", NONE, why=_DIAGRAM),
    Item("003", "Table 3", "cycles, 1-4 cores, 32-256 bytes", SIDE, "seed003",
         needs=("sim",), command=_SEED003),
    Item("003", "Table 4", "memory-stall cycles summed over cores", SIDE, "seed003",
         needs=("sim",), command=_SEED003),
    Item("003", "Fig. 5", "Table 3 as single- against multi-core bars", SIDE, "seed003",
         why="its numbers are Table 3's (the cycles figure and the speedup table)", needs=("sim",),
         command=_SEED003),
    # seed 004: Munteanu et al., AES with C++ AMP
    Item("004", "Fig. 1", "ECB mode", NONE, why=_DIAGRAM),
    Item("004", "Fig. 2", "CBC mode", NONE, why=_DIAGRAM),
    Item("004", "Fig. 3", "CTR mode (referred to; its caption is not in the seed text)", NONE, why=_DIAGRAM),
    Item("004", "Fig. 4", "little-endian data extraction", NONE, why=_DIAGRAM),
    Item("004", "Table 2", "run times, system 1 (i7 960 + GTX 480): CPU S, CPU P, GPU", SIDE, "seed004",
         why=f"the GPU column beside our CUDA kernels host to host ({_MEASURED}) and our OpenCL kernels "
             "when they ran", needs=("seed004_ours",), command=_NATIVE),
    Item("004", "Fig. 5", "Table 2's CPU S against CPU P", SIDE, "seed004",
         why="its numbers are Table 2's", needs=("seed004_ours",), command=_NATIVE),
    Item("004", "Fig. 6", "Table 2's CPU P against the GPU", SIDE, "seed004",
         why="its numbers are Table 2's; the GPU beside our OpenCL kernels", needs=("seed004_ours",),
         command=_NATIVE),
    Item("004", "Fig. 7", "performance ratios, system 1", NONE,
         why="ratios of Table 2's columns; the report gives its crossover size instead"),
    Item("004", "Table 3", "run times, system 2 (i5-4200M + Radeon HD 8750M)", PAPER, "native",
         why="its GPU column as a curve in the throughput figure; ours is compared with system 1"),
    Item("004", "Fig. 8", "Table 3's CPU S against CPU P", NONE, why="Table 3's numbers, not drawn"),
    Item("004", "Fig. 9", "Table 3's CPU P against the GPU", NONE, why="Table 3's numbers, not drawn"),
    Item("004", "Fig. 10", "performance ratios, system 2", NONE, why="ratios of Table 3's columns"),
)


def _present(records: pd.DataFrame | None) -> set[str]:
    """The experiments and sources (sim, native, cuda, ...) among the records: what `needs` names."""
    if records is None or len(records) == 0:
        return set()
    return set(records["experiment"].astype(str)) | set(records["source"].astype(str))


def status(item: Item, present: set[str] | None) -> tuple[str, str]:
    """(shown, why) for these records (`present`; None: as declared, every record there)."""
    missing = [n for n in item.needs if present is not None and n not in present]
    if not missing or item.shown not in (SIDE, OURS):
        return item.shown, item.why
    add = f" (add them: `{item.command}`)" if item.command else ""
    why = f"no {', '.join(missing)} records in these results{add}"
    if item.why:
        why += f"; {item.why}"
    return (PAPER if item.shown == SIDE else NONE), why


def table(records: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per table and figure: seed, item, what it holds, how the report shows it and why.
    `records`: the report's records (None: as declared, with every record it needs)."""
    present = None if records is None else _present(records)
    rows = []
    for it in ITEMS:
        shown, why = status(it, present)
        rows.append({"seed": it.seed, "item": it.item, "holds": it.holds, "shown": shown,
                     "section": SECTIONS.get(it.where, "") if shown != NONE else "", "why": why})
    return pd.DataFrame(rows)


def counts(t: pd.DataFrame) -> dict[str, int]:
    return {s: int((t["shown"] == s).sum()) for s in (SIDE, PAPER, OURS, NONE)}


#: The report's sections that hold a seed's table or figure: anchor -> the start of its heading
#: (report.py writes each heading as this text, a colon and more words).
SECTIONS = {"seed003": "1. Seed 003", "native": "4. Real hardware", "seed000": "4.1 Seed 000",
            "seed001": "4.2 Seed 001", "seed002-cpu": "4.3 Seed 002 on the CPU",
            "seed002-gpu": "4.4 Seed 002 on GPUs", "seed004": "4.5 Seed 004"}

_BEGIN, _END = "<!-- coverage: begin (generated by s2mc.analysis.coverage) -->", "<!-- coverage: end -->"


def markdown() -> str:
    """The declared coverage as a Markdown table (docs/analysis.md), with its counts."""
    t = table(None)
    lines = ["| seed | item | holds | shown (with its records) | section | needs | why |",
             "|---|---|---|---|---|---|---|"]
    for it, r in zip(ITEMS, t.itertuples()):
        cell = lambda v: str(v).replace("|", "/")   # noqa: E731
        lines.append(f"| {it.seed} | {it.item} | {cell(it.holds)} | {r.shown} | {cell(r.section) or '-'} | "
                     f"{', '.join(it.needs) or '-'} | {cell(it.why) or '-'} |")
    c = counts(t)
    lines.append("")
    lines.append(f"{len(t)} tables and figures: " + ", ".join(f"{n} {s}" for s, n in c.items()) + ".")
    return "\n".join(lines)


def write_docs(path: str | Path) -> None:
    """Replace the generated block of `path` (between its coverage markers) by markdown()."""
    p = Path(path)
    text = p.read_text()
    pattern = re.compile(re.escape(_BEGIN) + r".*?" + re.escape(_END), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{p}: no coverage block ({_BEGIN} ... {_END}) to replace")
    p.write_text(pattern.sub(lambda _: f"{_BEGIN}\n{markdown()}\n{_END}", text))


def docs_block(path: str | Path) -> str:
    """The generated block as it stands in `path` (for the test that it is up to date)."""
    m = re.search(re.escape(_BEGIN) + r"\n(.*?)\n" + re.escape(_END), Path(path).read_text(), re.S)
    return m.group(1) if m else ""


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--write-docs":
        write_docs(sys.argv[2])
    else:
        print(markdown())
