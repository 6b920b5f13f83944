"""docs/caches-lab.md works verbatim from an empty folder, in order: every command line of its `sh`
blocks runs as a reader would type it, and every simulated number the page states (its tables and the
figures its prose quotes) is what those commands print. The native numbers are one machine's
measurements, so for them only the commands are run."""
import json
import os
import re
from pathlib import Path

import pytest
from test_tour import commands, run_in_order

LAB = (Path(__file__).resolve().parents[1] / "docs" / "caches-lab.md").read_text()
PROTOCOLS = ("msi", "mesi", "moesi", "dragon")


def rows(text: str) -> list[list[int | str]]:
    """The lines made only of numbers that a command printed (a sweep's table, totals.py): whole
    numbers as int, ratios, percentages and sizes (1K) as their text."""
    out = []
    for line in text.splitlines():
        cells = line.split()
        if cells and all(re.fullmatch(r"-?\d+|\d+K|[\d.]+%?", c) for c in cells):
            out.append([int(c) if c.isdigit() else c for c in cells])
    return out


def sweep(text: str) -> dict[int, tuple[int, str, str]]:
    """A `s2mc run --cores 1,2,...` or `s2mc aes` summary table: cores -> (cycles, speedup, bus util)."""
    out = {}
    for cells in rows(text):
        if cells[0] == "1K":
            cells = cells[1:]
        if len(cells) < 4:                          # the program's own output
            continue
        out[cells[0]] = (cells[1], cells[2], cells[-1])
    return out


FLAT = " ".join(LAB.split())                       # prose wraps lines anywhere


def assert_stated(text: str):
    text = " ".join(text.split())
    assert text in FLAT, f"the page should state:\n{text}"


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the lab's native lines pin two threads")
def test_the_lab_runs_verbatim_and_states_what_it_prints(tmp_path):
    lines = commands(LAB)
    assert "TODO" not in LAB
    done = run_in_order(lines, tmp_path)

    def out(start: str) -> str:
        hits = [line for line in done if line.startswith(start)]
        assert len(hits) == 1, (start, hits)
        return done[hits[0]].stdout + done[hits[0]].stderr          # a sweep's table goes to stderr

    # 1. False sharing. Without caches the timing model ignores addresses: the same sweep, to the cycle.
    assert "stride 16" in (tmp_path / "padded.s").read_text()          # the sed really padded it
    bare = done["s2mc run false_sharing.s --cores 1,2,4,8"]
    assert bare.stdout == done["s2mc run padded.s --cores 1,2,4,8"].stdout
    assert bare.stderr == done["s2mc run padded.s --cores 1,2,4,8"].stderr
    assert [ln for ln in bare.stdout.splitlines() if ln.isdigit()] == ["100", "200", "400", "800"]
    padded = sweep(out("s2mc run padded.s --cores 1,2,4,8 --cache mesi"))
    padded_accesses = [r[6] for r in rows(out("s2mc run padded.s --cores 1,2,4,8 --cache mesi")) if len(r) == 8]
    assert padded_accesses == [2 * n - 1 for n in (1, 2, 4, 8)]
    assert_stated(f"adds them up: {', '.join(map(str, padded_accesses))})")
    packed = {r[0]: r[1:] for r in rows(out("python3 totals.py packed.json"))}
    assert sorted(packed) == [1, 2, 4, 8]
    for n, (cycles, fsm, tsm, inval, rdx, upgr) in packed.items():
        pc = padded[n][0]
        assert rdx + upgr == (100 * n if n > 1 else 0)                  # "from 2 cores on ... 100 times"
        assert tsm == (n > 1)                                           # "the one true-sharing miss"
        assert_stated(f"| {n} | {cycles} | {pc} | {cycles / pc:.2f} | {fsm} | {tsm} | {inval} |")
    assert_stated(f"({packed[2][3]}, {packed[4][3]}, {packed[8][3]} invalidations received in all)")
    assert_stated(f"({packed[2][1]}, {packed[4][1]}, {packed[8][1]} in all;")
    assert sweep(done["s2mc run false_sharing.s --cores 1,2,4,8 --cache mesi --line-words 8"].stderr)[8][0] == packed[8][0]

    stride = rows(out("for s in 1 2 4 8 16"))
    assert len(stride) == 5
    for s, (cores, cycles, fsm) in zip((1, 2, 4, 8, 16), stride):
        assert cores == 2
        assert_stated(f"| {s} | {cycles} | {fsm} |")
    assert stride[0][1] == stride[2][1] > stride[3][1] == stride[4][1]   # "one step, between 4 and 8"

    # 2. Ping-pong: 10 round trips, 2 cores.
    pp = {}
    for line in out("for proto in msi mesi moesi dragon; do printf '%s ' $proto; python3 totals.py pp_").splitlines():
        proto, cores, _cycles, busy, rd, upgr, rdx, upd, wb = line.split()
        pp[proto] = [int(x) for x in (busy, rd, upgr, rdx, upd, wb)]
    predicted = {"msi": 10, "mesi": 10, "moesi": 10, "dragon": 2}
    names = {"msi": "MSI", "mesi": "MESI", "moesi": "MOESI", "dragon": "Dragon"}
    for proto, (busy, rd, upgr, rdx, upd, wb) in pp.items():
        traffic = f"{rd} BusRd + {upd} BusUpd" if proto == "dragon" else f"{rd} + {upgr}"
        assert_stated(f"| {names[proto]} | {predicted[proto]} | {busy / 10:.1f} | {traffic} | {wb} |")
        if proto != "dragon":
            assert (upgr, rdx, upd) == (19, 1, 0)                        # "19 BusUpgr and one BusRdX"
    assert pp["msi"][5] == pp["mesi"][5] and pp["moesi"][5] == pp["dragon"][5] == 0
    assert_stated(f"({pp['msi'][5]} write-backs, one per hand-over)")

    # 3. Locks.
    locks = rows(out("for p in spin_lock ttas_lock ticket_lock; do s2mc run $p.s --cores 1,2,4,8 --cache mesi --json"))
    assert len(locks) == 12
    tas, ttas, ticket = ({r[0]: r[1:] for r in locks[i:i + 4]} for i in (0, 4, 8))
    for n in (1, 2, 4, 8):
        cells = [tas[n][0], ttas[n][0], ticket[n][0]] + [f"{d[n][1]} + {d[n][2]}" for d in (tas, ttas, ticket)]
        assert_stated(f"| {n} | " + " | ".join(map(str, cells)) + " |")
    loop = done["for p in spin_lock.s ttas_lock.s ticket_lock.s; do s2mc run $p --cores 1,2,4,8; done"].stderr
    tables = loop.split("cores  cycles")[1:]                        # one sweep table per lock
    bare_sweeps = [sweep(t) for t in tables]
    assert len(bare_sweeps) == 3 and all(sorted(t) == [1, 2, 4, 8] for t in bare_sweeps)
    ones = rows(out("for p in spin_lock ttas_lock ticket_lock; do s2mc run $p.s --json"))
    reads, writes = [r[2] for r in ones], [r[3] for r in ones]
    assert_stated(f"make {reads[0]}, {reads[1]} and {reads[2]} reads")
    assert_stated(f"{writes[0]}, {writes[1]} and {writes[2]} writes")
    assert_stated(f"({tas[1][0]}, {ttas[1][0]} and {ticket[1][0]} cycles against {bare_sweeps[0][1][0]}, "
                  f"{bare_sweeps[1][1][0]} and {bare_sweeps[2][1][0]})")
    assert_stated(f"({tas[8][1] + tas[8][2]} at 8 cores)")
    assert_stated(f"({tas[8][0]} against {bare_sweeps[0][8][0]} cycles at 8 cores)")
    assert_stated(f"({ttas[4][0]} and {ttas[8][0]} cycles, against {bare_sweeps[1][4][0]} and {bare_sweeps[1][8][0]} "
                  "without caches)")
    assert_stated(f"({ticket[8][1] + ticket[8][2]} at 8 cores)")
    assert_stated(f"{ticket[8][3]} in all at 8")
    assert_stated(f"({ticket[8][0]} cycles, about what it costs without caches: {bare_sweeps[2][8][0]})")

    # TAS's verdict under other parameters: each row's W, L and cycles, and that caches lose only where W > L.
    tas_rows = {}
    for line in out('for opts in "--cache none"').splitlines():
        opts, totals = line.split(" | ")
        cores, cycles = map(int, totals.split())
        words = re.search(r"--line-words (\d+)", opts)
        latency = re.search(r"--mem-latency (\d+)", opts)
        cache = opts.split()[1]
        w = "-" if cache == "none" else words[1] if words else "4"          # the defaults: line_words 4,
        l_ = latency[1] if latency else "2"                                 # mem_latency 2
        assert cores == 8
        assert_stated(f"| {names.get(cache, cache)} | {w} | {l_} | {cycles} |")
        tas_rows[(cache, w, l_)] = cycles
    assert len(tas_rows) == 7
    assert tas_rows[("none", "-", "2")] == bare_sweeps[0][8][0] and tas_rows[("mesi", "4", "2")] == tas[8][0]
    for (cache, w, l_), cycles in tas_rows.items():
        if cache != "none":
            loses = cycles > tas_rows[("none", "-", l_)]
            assert loses == (cache == "mesi" and int(w) > int(l_)), (cache, w, l_)   # "only where W > L"
    assert_stated(f"MESI wins ({tas_rows[('mesi', '2', '2')]} against {tas_rows[('none', '-', '2')]})")
    assert_stated(f"never a whole line ({tas_rows[('dragon', '4', '2')]})")
    assert_stated(f"pays more for every try ({tas_rows[('none', '-', '4')]})")
    assert_stated(f"MESI wins again ({tas_rows[('mesi', '4', '4')]})")

    fixed = done["s2mc run ticket_lock.rz --cores 8 --arbitration fixed --cache mesi"]
    fixed_cycles = re.search(r"total: (\d+) cycles", fixed.stderr)[1]
    assert_stated(f"prints `{fixed.stdout.strip()}` after {fixed_cycles} cycles")
    assert fixed.stdout.split()[2] == fixed.stdout.split()[5]              # the count is right

    # 4. AES: speedups and bus utilisation from the three sweeps, hit rates from totals.py.
    aes = [sweep(done[line].stdout + done[line].stderr) for line in lines if line.startswith("s2mc aes") and "--out" in line]
    hits = [rows(out(f"python3 totals.py {f}.json cache_hits")) for f in ("aes_mesi", "aes_mesi512")]
    for i, n in enumerate((1, 2, 4, 8, 16)):
        rate = [pct(h[i][2] / (h[i][2] + h[i][3])) for h in hits]
        assert hits[0][i][0] == n
        assert_stated(f"| {n} | {aes[0][n][1]} | {aes[1][n][1]} | {aes[2][n][1]} | "
                      f"{aes[0][n][2]} / {aes[1][n][2]} / {aes[2][n][2]} | {rate[0]} / {rate[1]} |")
    assert_stated(f"{aes[0][1][0]} cycles without caches, {aes[1][1][0]} with the default cache and "
                  f"{aes[2][1][0]} with 512 lines")
    assert_stated(f"it hits only {100 * hits[0][0][2] / (hits[0][0][2] + hits[0][0][3]):.0f}% of the time")
    assert_stated(f"flattens at 4 cores ({aes[0][4][1]})")
    assert_stated(f"flat from 4 cores ({aes[1][4][1]})")
    assert_stated(f"With 512 lines u = {aes[2][1][2]}")
    assert_stated(f"peaks at 8 cores ({aes[2][8][1]}) and falls at 16 ({aes[2][16][1]})")
    assert max(aes[2], key=lambda n: float(aes[2][n][1])) == 8
    one = hits[0][0]                                                 # cores, cycles, hits, misses, 3 classes
    assert_stated(f"on one core {one[4]} of the {one[3]}, against {one[5]} conflict misses")
    assert [h[6] for h in hits[0]] == [0] * 5                           # "no coherence miss at any core count"
    r512 = [pct(h[2] / (h[2] + h[3])) for h in hits[1]]
    assert_stated(f"({r512[0]} to {r512[-1]})")
    assert_stated(f"({aes[2][16][2]} at 16)")
    for k, name in ((0, "Without caches"), (1, "With the default cache")):
        u = float(aes[k][1][2].rstrip("%")) / 100
        assert_stated(f"{name} u = {aes[k][1][2]}: ceiling {1 / u:.2f}")
    # the closing report: the two MESI shapes are rows of their own, each with its own 16-core cycles
    md = (tmp_path / "report" / "report.md").read_text()
    section = md.split("## 2b.", 1)[1].split("\n## ", 1)[0]
    for shape, k in (("mesi 64x2-w4", 1), ("mesi 512x2-w4", 2)):
        row = next(ln for ln in section.splitlines() if ln.startswith(f"| {shape} | {int(aes[k][16][0]):,} |"))
        assert row, shape

    # 5. Four protocols.
    def by_proto(start):
        return {ln.split()[0]: [int(x) for x in ln.split()[1:]] for ln in out(start).splitlines()}
    fs = by_proto("for proto in msi mesi moesi dragon; do printf '%s ' $proto; python3 totals.py fs_")
    ta = by_proto("for proto in msi mesi moesi dragon; do printf '%s ' $proto; python3 totals.py tas_")
    tt = by_proto("for proto in msi mesi moesi dragon; do printf '%s ' $proto; python3 totals.py ttas_")
    for proto in PROTOCOLS:
        assert fs[proto][0] == ta[proto][0] // 2 == tt[proto][0] // 2 == 4
        assert_stated(f"| {names[proto]} | {fs[proto][1]} | {sum(fs[proto][2:])} | {ta[proto][1]} | {tt[proto][1]} | "
                      f"{tt[proto][2]} | {tt[proto][3]} |")
    for d in (fs, ta, tt):                      # "MSI and MESI differ by a handful of cycles at most"
        assert abs(d["msi"][1] - d["mesi"][1]) <= 10
        assert min(d, key=lambda p: d[p][1]) == "dragon"               # "by far the fastest on all three"
    mesi = json.loads((tmp_path / "fs_mesi.json").read_text())
    assert mesi["cycles"] == packed[4][0]                                # the same run as section 1's
    for name in ("coherence", "pingpong", "locks"):
        assert (tmp_path / "results" / f"{name}.parquet").exists()
