"""Our GPU figures measured elsewhere (analysis/gpu_measurements/) reach the report as records
marked as such, on a machine without a GPU."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from s2mc.analysis import gpu_measured, records, report

DATA = Path(gpu_measured.__file__).parent / "gpu_measurements"


def test_every_source_names_its_gpu_commit_and_command_and_exists():
    srcs = gpu_measured.sources()
    assert {s["file"] for s in srcs} == {p.name for p in DATA.glob("*.csv")}
    for s in srcs:
        assert s["gpu"].startswith("NVIDIA ") and re.fullmatch(r"[0-9a-f]{7,40}", s["commit"])
        assert "run_on_gpu.sh" in s["command"] and s["layout"] in ("bench", "gbps", "backends", *gpu_measured.TABLE_LAYOUTS)
        assert "run_on_gpu.sh" in s["command"] and re.fullmatch(r"\d{4}-\d\d-\d\d", s["date"])


def test_records_are_marked_as_measured_elsewhere():
    df = gpu_measured.load()
    assert len(df) and df["experiment"].str.startswith(gpu_measured.PREFIX).all()
    assert df["run_id"].str.startswith("measured-").all()
    assert set(df["source"]) == {"cuda", "opencl"}
    assert set(df["platform"]) == {"NVIDIA H100 80GB HBM3", "NVIDIA H200"}
    records.validate(df)


def test_bench_csv_rows_keep_their_own_gbps():
    """The H100 file is the bench's CSV: every record's bytes_per_second agrees with the Gbps
    column the bench wrote itself (an independent division)."""
    df = gpu_measured.load()
    h100 = df[(df["platform"] == "NVIDIA H100 80GB HBM3") & (df["metric"] == "bytes_per_second")]
    with open(DATA / "gpu-h100-2026-11-22.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(h100) == len(rows)
    got = {(v, int(b)): x * 8 / 1e9 for v, b, x in zip(h100["variant"], h100["bytes"], h100["value"])}
    for r in rows:
        assert got[(f"{r['kernel']}/{r['measure']}", int(r["bytes"]))] == pytest.approx(float(r["gbps"]), rel=1e-3)


@pytest.fixture(scope="module")
def report_md(tmp_path_factory) -> str:
    """The report of one simulator record: no GPU result of this host, only those checked in."""
    tmp = tmp_path_factory.mktemp("report")
    res = tmp / "res"
    res.mkdir()
    records.write(records.make_records([dict(run_id="r1", experiment="x", source="sim", platform="s2",
                                             workload="aes-128-ecb-enc", variant="bytes/interleaved",
                                             engine="fast", cores=1, bytes=32, metric="cycles", value=9000)]),
                  res / "r.csv")
    report.build([res], tmp / "rep")
    return (tmp / "rep" / "report.md").read_text(encoding="utf-8")


def test_report_shows_them_without_any_gpu_results(report_md):
    md = report_md
    # seed 002 (Figs. 11-16): the H200's AES-128 keystream best, 5216 Gbit/s at 1 GB (its table)
    assert "Ours, aes on NVIDIA H200: best A 5088 Gbps" in md
    assert "| gpu-h200-2026-11-26.csv | NVIDIA H200 | 2026-11-26 | 03f1f4e |" in md
    # seed 000: extended/coarse on the H200 at 1 GB = 1785 / 2228
    assert f"| NVIDIA H200 | 1 GiB | 2228 | 1785 | {1785 / 2228:.2f} | 5088 |" in md
    # seed 004's GPU column at 1 MB: the paper's 24.2 ms beside the H200's host-overlap 123 Gbit/s
    ms = (1 << 20) * 8 / 123e9 * 1e3
    assert "| 1 MiB | 24.2 |" in md and f"{ms:.4f} ({24.2 / ms:.0f}x)" in md
    # seed 002 Table 2 beside ours
    assert "| aes | optimised-t4b2 | enc | 1024 | 32 | 128 KB | 1 | 0.50 |" in md
    assert "| 1 GiB | 1,972 |" in md   # seed 004's 1.972 s at 1 GB, in plain notation
    # CUDA against OpenCL: 5083 / 1407
    assert f"5083 ({5083 / 1407:.2f}x)" in md
    # the file path: cp's best 0.837 s, the CUDA path's best 3.035 s
    assert f"{0.837 / 3.035:.0%} of the copy bound" in md


def _section(doc: str, title: str) -> str:
    """The text of docs/<doc>'s section `title` (up to the next heading of its level or higher)."""
    text = (Path(__file__).resolve().parent.parent / "docs" / doc).read_text(encoding="utf-8")
    start = text.index(title)
    level = text.rfind("\n", 0, start) + 1
    hashes = title.split(" ")[0]
    assert level == start, title
    rest = text[start + len(title):]
    m = re.search(rf"^#{{1,{len(hashes)}}} ", rest, flags=re.M)
    return rest[:m.start()] if m else rest


def test_second_h200_tables_keep_the_ratios_the_measurement_printed():
    """The second H200 measurement's tables, checked in as seconds and Gbit/s: the speeds and ratios
    derived from them are the ones its report printed beside them (hand-copied here)."""
    (ring, src), = [(t, s) for t, s in gpu_measured.ring_tables() if s["commit"] == "f041a3d"]
    assert src["gpu"] == "NVIDIA H200" and src["date"] == "2026-11-26"
    printed = {"cp": (3.083, 1.00), "cuda before (pipeline, 256 MiB pieces)": (0.850, 3.63),
               "cuda ring (encrypt_file)": (2.820, 1.09), "opencl before (pipeline, 64MB segments)": (2.137, 1.44),
               "opencl ring (encrypt_file)": (2.020, 1.53)}
    assert set(ring["row"]) == set(printed)
    for row, got_gbs, got_ratio in zip(ring["row"], ring["GB/s"], ring["median / cp's"]):
        gbs, ratio = printed[row]
        # the medians were printed to the millisecond: 0.5 ms of 0.7 s moves the third digit
        assert got_gbs == pytest.approx(gbs, abs=0.005) and got_ratio == pytest.approx(ratio, abs=0.011)
    files, fsrc = gpu_measured.files_table("files-h200-2026-11-26b.csv")
    assert fsrc["commit"] == "f041a3d"
    vs_cp = dict(zip(files["command"], files["cp best / best"]))
    for cmd, want in {"cp": 1.00, "s2mc encrypt (native, 16 CPUs)": 0.74, "s2mc encrypt --backend cuda": 0.69,
                      "s2mc encrypt --backend opencl": 0.53, "s2mc encrypt --backend cuda --cipher camellia": 0.67,
                      "s2mc encrypt --backend opencl --cipher camellia": 0.35}.items():
        # run_on_gpu.sh divides in bash, which cuts the ratio to two decimals
        assert want - 0.001 <= vs_cp[cmd] < want + 0.011, cmd
    (h, _), = gpu_measured.host1m_tables()
    assert len(h) == 5 and (h["reps"] == 30).all() and (h["bytes"] == 1 << 20).all()
    assert h["gbps"].round().eq(122).all()   # "68.6 us for 1 MiB is 122 Gbps, in every mode"


def test_the_1mb_section_of_docs_gpu_states_the_checked_in_runs():
    """docs/gpu.md's 1 MB section carries every run of host1m-*.csv as a table row and the range
    of its medians in words, from the data."""
    text = _section("gpu.md", "## The 1 MB host-serial oddity")
    (h, src), = gpu_measured.host1m_tables()
    assert src["file"] in text
    for r in h.itertuples(index=False):
        row = (f"| {r.run} | {r.measure} | {r.wall_us:.1f} | {r.h2d_us:.1f} | {r.kernel_us:.1f} | "
               f"{r.d2h_us:.1f} | {r.stages_us:.1f} | {r.sync_us:.1f} | {r.gbps:.0f} |")
        assert row in text, row
    lo, hi = h["wall_us"].min(), h["wall_us"].max()
    assert f"{lo:.1f}-{hi:.1f} µs" in text and f"{h['gbps'].min():.0f} Gbit/s" in text


def test_the_opencl_ring_question_in_docs_gpu_uses_the_checked_in_runs():
    """docs/gpu.md's answer on the OpenCL ring quotes the ring's and the pipeline's medians, cp's,
    and the OpenCL host-to-host Gbit/s of the same measurement, as the data has them."""
    text = _section("gpu.md", "### Why the ring is no faster on NVIDIA's OpenCL")
    (ring, _), = [(t, s) for t, s in gpu_measured.ring_tables() if s["commit"] == "f041a3d"]
    med = dict(zip(ring["path"] + "/" + ring["backend"], ring["median_s"]))
    for key in ("ring/opencl", "pipeline/opencl", "copy/", "ring/cuda"):
        assert f"{med[key]:.3f} s" in text, key
    df = gpu_measured.load()
    cl = df[(df["experiment"] == "measured:cuda-vs-opencl-h200-2026-11-26b") & (df["source"] == "opencl")
            & (df["metric"] == "bytes_per_second")]
    for variant, v in zip(cl["variant"], cl["value"]):
        if variant.split("/")[1].startswith("host"):
            assert f"{v * 8 / 1e9:.1f} Gbit/s" in text, variant


def test_report_keeps_each_cuda_opencl_run_in_its_own_rows(report_md):
    """Two CUDA-against-OpenCL runs on the same GPU: each row's ratio is to its own run's OpenCL
    figure (the second H200 run: 209 / 33.3 host to host), never to the other run's."""
    md = report_md
    assert f"209 ({209 / 33.3:.2f}x)" in md and f"5071 ({5071 / 1407:.2f}x)" in md
    assert f"210 ({210 / 41:.2f}x)" in md
    rows = [line for line in md.splitlines() if line.startswith("| cuda-vs-opencl-h200-2026-11-26 |")]
    assert rows and not any("209" in r or "5071" in r for r in rows)


def _startup(run: str):
    (t, src), = [(t, s) for t, s in gpu_measured.startup_tables() if s["file"] == f"startup-h200-2026-11-26{run}.csv"]
    return t, src


def test_startup_tables_derive_what_the_bench_printed():
    """The three start-up runs, checked in as seconds: the ratios derived here are those the bench
    printed beside them (hand-copied), and each run's phases add up to its command line."""
    printed = {"c": {"cuda": (0.73, 0.92), "opencl": (0.37, 0.43), "native": (0.90, 1.07)},
               "d": {"cuda": (0.73, 1.09), "opencl": (0.77, 1.00), "native": (0.95, 1.04)},
               "e": {"cuda": (0.72, 0.89), "native": (0.97, 0.95)}}
    for run, want in printed.items():
        t, src = _startup(run)
        assert src["layout"] == "startup" and src["gpu"] == "NVIDIA H200"
        assert set(t.columns) == set(want)
        for backend, (line, one) in want.items():
            assert round(t.loc["command line: speed vs cp", backend], 2) == line, (run, backend)
            assert round(t.loc["in one process: speed vs cp", backend], 2) == one, (run, backend)
            phases = t[backend].iloc[:t.index.get_loc("command line, spawn to exit")].sum()
            # the bench prints each phase to the millisecond: the sum may be off by a few
            assert phases == pytest.approx(t.loc["command line, spawn to exit", backend], abs=0.006)


def test_docs_state_the_start_up_runs_from_the_data():
    """docs/benchmarks.md's H200 table and docs/gpu.md's answer on the OpenCL ring quote the
    checked-in runs: every cell of the table and every figure of the answer."""
    text = _section("benchmarks.md", "## Encrypt from the command line: where the time goes")
    cols = [("c", "cuda"), ("d", "cuda"), ("e", "cuda"), ("c", "opencl"), ("d", "opencl")]
    tables = {run: _startup(run)[0] for run in "cde"}
    ratios = ("command line: speed vs cp", "in one process: speed vs cp")
    for phase in tables["c"].index:
        if phase in ("key, IV, option checks", "read, encrypt, write, close (the backend's one call)",
                     "command line over the call in one process"):
            continue
        fmt = "{:.2f}" if phase in ratios else "{:.3f}"
        cells = [fmt.format(tables[r].loc[phase, b]) for r, b in cols]
        if phase == "command line, spawn to exit":
            cells, phase = [f"**{c}**" for c in cells], f"**{phase}**"
        assert f"| {phase} | " + " | ".join(cells) + " |" in text, phase
    ans = " ".join(_section("gpu.md", "### Why the ring is no faster on NVIDIA's OpenCL").split())
    (rc, _), = gpu_measured.ringcheck_tables()
    sec = dict(zip(rc["row"], rc["seconds"]))
    host = rc[rc["row"].str.startswith("host-segmented")]
    assert f"{host['gb_s'].min():.2f} to {host['gb_s'].max():.2f} GB/s" in ans
    for q in (1, 2, 4):
        assert f"{sec[f'file ring, mapped buffers, 8 x 256MB, {q} queue(s)']:.3f} s" in ans
    cp, ring2 = sec["cp of the file"], sec["file ring, mapped buffers, 8 x 256MB, 2 queue(s)"]
    seg = sec["host-segmented, pageable memory, 1 queue, 256MB segments"]
    assert f"cp's {cp:.3f} s" in ans and f"{seg:.3f} s for the copies" in ans
    assert f"{cp / ring2:.2f} of cp's speed" in ans and f"({cp + seg:.3f} s)" in ans
    c, d = tables["c"], tables["d"]
    start, close = "backend start-up left (device, context, buffers)", "close the output, free the backend's buffers"
    assert f"left {c.loc[start, 'opencl']:.3f} s" in ans and f"took {c.loc[close, 'opencl']:.3f} s to free" in ans
    assert f"CUDA's {c.loc[start, 'cuda']:.3f} s and {c.loc[close, 'cuda']:.3f} s" in ans
    assert f"start-up {d.loc[start, 'opencl']:.3f} s, close {d.loc[close, 'opencl']:.3f} s" in ans
    line, one = "command line, spawn to exit", "the same call inside one process"
    assert f"{c.loc[line, 'opencl']:.3f} s → {d.loc[line, 'opencl']:.3f} s" in ans
    for r in ratios:
        assert f"{c.loc[r, 'opencl']:.2f} → {d.loc[r, 'opencl']:.2f}" in ans, r
    assert "`opencl.FILE_PIECE_BYTES`" in ans and "capped at 32 MiB" in ans
