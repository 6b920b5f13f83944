"""docs/network-lab.md works verbatim from an empty folder, in order: every command line of its `sh`
blocks runs as a reader would type it, and every number the page states (its tables and the figures
its prose quotes) is what those commands print: the report's section 2c, `homes.py`, `s2mc run`.

The quick test runs the same lines with the sweeps' `--quick` grids (4, 8 and 16 cores) and the hot
spot on 16 cores, and checks the lock tables' cells of those core counts and the page's claims that do
not depend on the core count; the slow test runs the page as written and checks every number.
S2MC_NETLAB_IMG=docs/img (from the checkout) also copies the report's two figures there."""
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from test_tour import commands, run_in_order

LAB = (Path(__file__).resolve().parents[1] / "docs" / "network-lab.md").read_text()
FLAT = " ".join(LAB.split())                       # prose wraps lines anywhere
#: The page's program names -> the report's.
PROGRAMS = {"AES T-table": "aes-128-ecb-enc (ttable/interleaved), 4096 bytes", "spin_lock (TAS)": "spin_lock",
            "ttas_lock": "ttas_lock", "ticket_lock": "ticket_lock"}
#: The page's tables of section 2, in order, and the place of each among a program's tables in the report.
SCALING = {"Stall cycles per core": 0, "Cycles (AES": 1, "Messages (on the bus": 2}


def assert_stated(text: str):
    text = " ".join(text.split())
    assert text in FLAT, f"the page should state:\n{text}"


def page_table(after: str) -> list[list[str]]:
    """The rows (cells) of the first table of the page after the text `after`."""
    rest = LAB.split(after, 1)[1]
    table = after + rest if after.startswith("|") else "|" + rest.split("\n|", 1)[1]
    rows = []
    for line in table.splitlines():
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip("|").split("|")])
    return [r for r in rows[2:]]                       # under the head and the rule


def report_tables(md: str) -> dict[str, list[list[list[str]]]]:
    """Section 2c of the report: the report's name of each program -> its tables (rows of cells)."""
    section = md.split("## 2c.", 1)[1].split("\n## ", 1)[0]
    out = {}
    for name, body in re.findall(r"\*\*([^*]+)\*\*\n(.*?)(?=\n\*\*|\Z)", section, re.S):
        tables, rows = [], []
        for line in body.splitlines() + [""]:
            if line.startswith("|"):
                rows.append([c.strip() for c in line.strip("|").split("|")])
            elif rows:
                tables.append(rows[2:])
                rows = []
        out[name] = tables
    return out


def homes(text: str) -> dict[str, list[str]]:
    return {ln.split()[0]: ln.split()[1:] for ln in text.splitlines() if ln.strip()}


def run_lab(tmp_path, quick: bool):
    lines = commands(LAB)
    assert "TODO" not in LAB
    if quick:
        lines = [ln.replace(" --out ", " --quick --out ") if ln.startswith("s2mc sweep") else
                 ln.replace("--cores 64 ", "--cores 16 ") if "homes" in ln or "padded.s" in ln else ln
                 for ln in lines]
    done = run_in_order(lines, tmp_path)
    md = (tmp_path / "report" / "report.md").read_text()
    return lines, done, report_tables(md), md


def check_scaling(tables, ncols: int):
    """The page's section 2 tables against the report's, in their first `ncols` core counts."""
    for head, k in SCALING.items():
        rows = page_table(head)
        assert len(rows) == 12
        for program, machine, *cells in rows:
            name = PROGRAMS[program]
            if name not in tables:                      # the quick AES encrypts less: another program key
                continue
            got = {r[0]: r[1:] for r in tables[name][k]}
            cells = cells[:ncols]
            while cells and cells[-1] == "–":           # a core count the program's sweep does not run
                cells.pop()
            assert got[machine][:ncols] == cells, (head, program, machine)


def check_common_claims(done, tables, lines):
    """What holds at any core count: the locks lose on the networks, the lab's programs print their
    counts, the sweeps run every core count they declare (this build allows 256)."""
    for name in ("spin_lock", "ttas_lock", "ticket_lock"):
        cycles = {r[0]: [int(c.replace(",", "")) for c in r[1:]] for r in tables[name][1]}
        bus = cycles["bus, snoop MESI"]
        for machine in ("ring, directory MESI", "mesh, directory MESI"):
            assert all(n > b for n, b in zip(cycles[machine], bus))      # "slower on both networks ... every count"
        assert all(m < r for m, r in zip(cycles["mesh, directory MESI"][1:], cycles["ring, directory MESI"][1:]))
    for line in lines:
        if line.startswith("s2mc sweep"):
            assert not [ln for ln in done[line].stderr.splitlines() if "cores not run" in ln]
    padded = [ln for ln in lines if ln.startswith("s2mc run padded.s") and "--json" not in ln][0]
    n = int(re.search(r"--cores (\d+)", padded)[1])
    assert done[padded].stdout.strip() == str(n * 10)


def test_the_lab_runs_quick_and_its_lock_tables_hold(tmp_path):
    lines, done, tables, md = run_lab(tmp_path, quick=True)
    check_scaling(tables, ncols=3)
    check_common_claims(done, tables, lines)
    hot = homes(done[next(ln for ln in lines if ln.startswith("for p in spin_lock"))].stdout)
    padded = homes("padded " + done["python3 homes.py hot_padded.json"].stdout)
    for name, row in hot.items():              # one home takes every lock request; padded counters spread them
        assert row[6] == "0" and float(row[8].rstrip("%")) <= 1.2
    assert int(padded["padded"][2]) == 2 * 16 - 1                      # one own miss a core + core 0's sum
    assert int(padded["padded"][1]) < min(int(r[1]) for r in hot.values())


@pytest.mark.slow
def test_the_lab_runs_verbatim_and_states_what_it_prints(tmp_path):
    lines, done, tables, md = run_lab(tmp_path, quick=False)
    check_scaling(tables, ncols=6)
    check_common_claims(done, tables, lines)
    num = lambda c: int(c.replace(",", ""))  # noqa: E731

    # 2. the sentences about AES and the stalls on 64 cores
    aes = tables[PROGRAMS["AES T-table"]]
    cyc = {r[0]: r[1:] for r in aes[1]}
    stall = {r[0]: r[1:] for r in aes[0]}
    bus, ring, mesh = (cyc[m] for m in ("bus, snoop MESI", "ring, directory MESI", "mesh, directory MESI"))
    assert num(bus[0]) < min(num(ring[0]), num(mesh[0]))
    assert_stated(f"on 4 cores the bus is still the fastest ({bus[0]} cycles against {mesh[0]} on the mesh)")
    assert min(range(5), key=lambda i: num(bus[i])) == 2 and num(bus[3]) > num(bus[2]) < num(bus[4])
    assert_stated(f"the bus then stops scaling at 16 cores ({bus[2]} cycles)")
    assert [num(c) for c in mesh[:5]] == sorted((num(c) for c in mesh[:5]), reverse=True)
    assert_stated(f"keeps gaining up to 64 cores ({mesh[4]} cycles)")
    assert min(range(5), key=lambda i: num(ring[i])) == 3
    assert_stated(f"turns at 32 cores ({ring[3]})")
    assert abs(num(mesh[5]) - num(mesh[4])) < num(mesh[4]) * 0.05 < num(ring[5]) - num(ring[4])   # "holds its time"
    assert_stated(f"On 256 cores the mesh holds its time ({mesh[5]} cycles) while the bus and the ring take "
                  f"{bus[5]} and {ring[5]}: a core stalls {stall['mesh, directory MESI'][5]} cycles on the mesh "
                  f"against {stall['bus, snoop MESI'][5]} on the bus")
    assert_stated(f"every lock hands one line round {256 * 10:,} times there")
    assert_stated(f"On 64 cores a core stalls {stall['bus, snoop MESI'][4]} cycles on the bus, "
                  f"{stall['ring, directory MESI'][4]} on the ring and {stall['mesh, directory MESI'][4]} on the mesh")

    # 3. snooping against the directory on 64 cores
    for program, machine, *cells in page_table("| program | machine | cycles | writes"):
        got = {r[0]: r[1:] for r in tables[PROGRAMS[program]][3]}
        assert got[machine] == cells, (program, machine)
    tas = {r[0]: r[1:] for r in tables["spin_lock"][3]}
    ticket = {r[0]: r[1:] for r in tables["ticket_lock"][3]}
    assert_stated(f"the one copy the last owner holds ({tas['bus, snoop MESI'][5]} copies a write)")
    assert_stated(f"no `Inv` at all ({tas['mesh, directory MESI'][4]} in {tas['mesh, directory MESI'][1]} writes")
    assert_stated(f"invalidates all of them ({ticket['bus, snoop MESI'][5]} copies a write at 64 cores)")
    assert_stated(f"it invalidates about one copy ({ticket['mesh, directory MESI'][5]})")
    assert num(ticket["mesh, directory MESI"][1]) > 3 * num(ticket["bus, snoop MESI"][1])      # "far more writes"
    assert_stated(f"({ticket['mesh, directory MESI'][2]} against the bus's {ticket['bus, snoop MESI'][2]} "
                  "transactions for the ticket lock)")

    # 4. the hot spot: homes.py's lines against the page's table
    hot = homes(done[next(ln for ln in lines if ln.startswith("for p in spin_lock"))].stdout)
    hot["padded"] = done["python3 homes.py hot_padded.json"].stdout.split()
    names = {"spin_lock (TAS)": "spin_lock", "ttas_lock": "ttas_lock", "ticket_lock": "ticket_lock",
             "padded counters": "padded"}
    for program, *cells in page_table("| program | cycles | misses | cycles per miss"):
        cores, cycles, misses, mc, queue, home, tile, util, nxt = hot[names[program]]
        m = int(mc)
        assert cells == [f"{int(cycles):,}", f"{int(misses):,}", f"{m / int(misses):.1f}", f"{int(queue) / m:.1%}",
                         f"{int(home) / m:.1%}", f"tile {tile}, {util}", nxt], program
        assert cores == "64"
    row = {p: r for p, *r in page_table("| program | cycles | misses | cycles per miss")}
    next_busiest = max(float(hot[n][8].rstrip("%")) for n in names.values() if n != "padded")
    assert_stated(f"the next busiest home is at most {next_busiest:.1f}% busy")
    assert_stated(f"TAS keeps it busy only {hot['spin_lock'][7]} of the cycles")
    assert_stated(f"{row['spin_lock (TAS)'][4]} of a TAS miss's {row['spin_lock (TAS)'][2]} cycles is that wait")
    assert_stated(f"(queueing {row['spin_lock (TAS)'][3]})")
    assert_stated(f"the run takes {row['padded counters'][0]} cycles instead of {row['spin_lock (TAS)'][0]}")
    assert int(hot["padded"][2]) == 2 * 64 - 1
    assert_stated("core 0 reads 63 other lines")
    assert_stated(f"Every program prints {64 * 10} (64 cores x 10)")
    for name in names.values():
        assert json.loads((tmp_path / f"hot_{name}.json").read_text())["output"].split() == [str(64 * 10)]

    # 5. the latency against the distance
    section = md.split("## 2c.", 1)[1].split("\n## ", 1)[0]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in
            section.split("| machine | hops |", 1)[1].split("\n\n", 1)[0].splitlines()[2:]]
    dist = {(r[0], r[1]): r for r in rows}
    for cells in page_table("| machine | hops | cores"):
        assert dist[(cells[0], cells[1])] == cells
        assert int(cells[4]) == 4 * int(cells[1]) + 7                  # "4h + 7 cycles with the defaults"
    n = {m: sum(int(r[2]) for r in rows if r[0] == m) for m in dict.fromkeys(r[0] for r in rows)}
    total = sum(n.values())
    assert f"{total} of the {total} misses take exactly the formula's cycles." in section
    assert_stated(f"{total} of the {total} misses take exactly the formula's cycles: "
                  f"{n['mesh, directory MESI, 16 cores']} on the 16-core mesh, {n['mesh, directory MESI, 64 cores']} "
                  f"on the 64-core mesh and {n['ring, directory MESI, 16 cores']} on the 16-core ring")
    far = {m: max(int(r[1]) for r in rows if r[0] == m) for m in n}
    assert_stated(f"farthest tile is {far['ring, directory MESI, 16 cores']} hops away (the 8x8 mesh's is "
                  f"{far['mesh, directory MESI, 64 cores']})")

    # the figures, made by the report's code
    for name in ("network_stalls.png", "network_distance.png"):
        assert (tmp_path / "report" / name).stat().st_size > 2000
    target = os.environ.get("S2MC_NETLAB_IMG")
    if target:
        for name in ("network_stalls.png", "network_distance.png"):
            shutil.copyfile(tmp_path / "report" / name, Path(target) / name.replace("_", "-"))
