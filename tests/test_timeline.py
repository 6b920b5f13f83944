"""The timeline (docs/timeline.md): the cores' states and the bus owner, cycle by cycle.

Oracles: the hand-computed cycle table of docs/timing-model.md; the cycle-stepped reference model,
asked after every cycle what each core did in it (a recorder below, independent of the event log);
the engines' counters; the other engine; intervals clipped by hand for windows and summed by hand
for buckets; and a real browser (Debian's chromium, headless) for the page."""
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from s2gen import configs, programs
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import Machine, SimFault
from s2mc.simulator.reference import ReferenceMachine, RefFault
from s2mc.simulator.timeline import (BUCKETS, CORE_COLOURS, HALTED, MAX_INTERVALS, STATE_COLOURS, STATES, Interval, TimelineBuilder,
                                     timeline_of, to_html, to_trace_events, write_timeline)
from systemc_helpers import needs_systemc
from test_sim_trace import LOOP, PEAK   # a loop of loads and stores; a child's peak memory

ROOT = Path(__file__).resolve().parents[1]
MEM = 1024

# docs/timing-model.md, "A worked example": two cores, L = 2.
DOCS_EXAMPLE = """
.code 0
  cid r1            ; 0
  ld r2 @0 r1       ; 1   load word[cid]
  st r2 @8 r1       ; 2   store it to word[8 + cid]
  trap r0 #0        ; 3
.data 0
:vals
  11
  22
"""


def docs_timeline(**cfg):
    prog = assemble(DOCS_EXAMPLE)
    return Machine(prog, cores=2, mem_words=64, timeline=True, **cfg).run().timeline


def test_the_docs_example_by_hand():
    # The table of docs/timing-model.md: core 0 executes cid (0), holds the bus for its ld (1-2),
    # waits for it (3-4: core 1's ld, requested at 1, goes first), holds it for its st (5-6),
    # executes trap (7) and is halted (8-9); core 1 waits 1-2, holds 3-4, waits 5-6, holds 7-8,
    # executes trap at 9. The bus: free at 0, core 0, core 1, core 0, core 1, free at 9.
    tl = docs_timeline()
    assert (tl.start, tl.end, tl.run_end, tl.aggregated) == (0, 10, 10, False)
    assert tl.runs(0) == [(0, 1, "executing"), (1, 3, "bus hold"), (3, 5, "bus wait"), (5, 7, "bus hold"),
                          (7, 8, "executing"), (8, 10, "halted")]
    assert tl.runs(1) == [(0, 1, "executing"), (1, 3, "bus wait"), (3, 5, "bus hold"), (5, 7, "bus wait"),
                          (7, 9, "bus hold"), (9, 10, "executing")]
    assert [(iv.start, iv.end, iv.core) for iv in tl.bus()] == [(1, 3, 0), (3, 5, 1), (5, 7, 0), (7, 9, 1)]
    # One interval per instruction, with the access: core 1's ld of word 1 (22), waited 2 cycles.
    wait, hold = [iv for iv in tl.intervals if iv.core == 1 and iv.pc == 1]
    assert wait == Interval(1, 1, 3, STATES.index("bus wait"), 1, 2, 1, 22, 22)
    assert hold == Interval(1, 3, 5, STATES.index("bus hold"), 1, 2, 1, 22, 22)
    st_ = next(iv for iv in tl.intervals if iv.core == 1 and iv.pc == 2 and iv.start == 7)
    assert (st_.address, st_.before, st_.after) == (9, 0, 22)


def test_the_docs_example_with_fixed_priority_by_hand():
    # docs/timing-model.md: with --arbitration fixed core 0 wins at 3, finishes at 6, core 1 at 10.
    tl = docs_timeline(arbitration="fixed")
    assert tl.runs(0) == [(0, 1, "executing"), (1, 5, "bus hold"), (5, 6, "executing"), (6, 10, "halted")]
    assert tl.runs(1) == [(0, 1, "executing"), (1, 5, "bus wait"), (5, 9, "bus hold"), (9, 10, "executing")]


class StateRecorder(ReferenceMachine):
    """The reference model, asked after each cycle what every core did in it: holding the bus (in
    the L cycles from its grant), waiting for it (a request not granted yet), executing (it issued
    an instruction that is no bus access), waiting at the barrier (after its sync, up to and
    including the cycle the barrier completes), halted, or (store buffers) held back by its buffer:
    it tried to issue and its instruction waits (`since` is set). `buffers[core]` holds the entries
    in its store buffer after each cycle's issue step."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.states = [[] for _ in self.cores]
        self.buffers = [[] for _ in self.cores]
        self._issued, self._granted = {}, {}

    def start_drains(self, c):   # step 1b, right after every core's issue
        for k in self.cores:
            self.buffers[k.id].append(len(k.buf))
        super().start_drains(c)

    def issue(self, core, c):
        self._issued[core.id] = c
        super().issue(core, c)

    def access(self, core, g):
        self._granted[core.id] = g
        super().access(core, g)

    def barrier(self, c):   # the last step of every cycle
        waiting = {k.id for k in self.cores if k.state == "sync"}
        super().barrier(c)
        for k in self.cores:
            g = self._granted.get(k.id)
            if g is not None and g <= c < g + self.L:
                s = "bus hold"
            elif k.state == "request":
                s = "bus wait"
            elif self._issued.get(k.id) == c and k.since is not None:
                s = "buffer wait"
            elif self._issued.get(k.id) == c:
                s = "executing"
            elif k.id in waiting:
                s = "sync wait"
            else:
                assert k.state == "halted", (c, k.id, k.state)
                s = "halted"
            self.states[k.id].append(s)


def reference_runs(prog, **cfg) -> list[list[tuple]]:
    ref = StateRecorder(prog.code_image, prog.data_image, prog.entry, **cfg)
    ref.run()
    out = []
    for states in ref.states:
        runs = []
        for c, s in enumerate(states):
            if runs and runs[-1][2] == s:
                runs[-1][1] = c + 1
            else:
                runs.append([c, c + 1, s])
        out.append([tuple(r) for r in runs])
    return out


@settings(max_examples=120)
@given(programs(), configs)
def test_timeline_equals_the_reference_models_cycles(src, cfg):
    """The timeline the fast engine streams equals the reference model's state in every cycle, and
    its totals are the engine's own counters."""
    prog = assemble(src)
    try:
        expected = reference_runs(prog, mem_words=MEM, max_cycles=20_000, **cfg)
    except RefFault:
        return
    res = Machine(prog, mem_words=MEM, max_cycles=20_000, timeline=True, **cfg).run()
    tl = res.timeline
    assert [tl.runs(c) for c in range(cfg["cores"])] == expected
    for c, tot in zip(res.cores, tl.totals()):
        counted = dict(zip(STATES, tot))
        assert counted["bus wait"] == c["bus_wait_cycles"]
        assert counted["bus hold"] == c["bus_busy_cycles"]
        assert counted["sync wait"] == c["sync_wait_cycles"]
        assert sum(tot) == res.cycles
        assert counted["halted"] == res.cycles - c["cycles"]


def _clip(intervals, lo, hi):
    return [iv._replace(start=max(iv.start, lo), end=min(iv.end, hi)) for iv in intervals
            if iv.end > lo and iv.start < hi]


def _bucket_sums(intervals, cores, start, end, width):
    """counts[b][core][state], summed by hand from the intervals."""
    n = -(-(end - start) // width)
    counts = [[[0] * len(STATES) for _ in range(cores)] for _ in range(n)]
    for b in range(n):
        lo, hi = start + b * width, min(start + (b + 1) * width, end)
        for iv in _clip(intervals, lo, hi):
            counts[b][iv.core][iv.state] += iv.end - iv.start
    return counts


@settings(max_examples=60)
@given(programs(), configs, st.data())
def test_windows_and_buckets_by_hand(src, cfg, data):
    prog = assemble(src)
    try:
        res = Machine(prog, mem_words=MEM, max_cycles=20_000, trace=True, timeline=True, **cfg).run()
    except SimFault:
        return
    full = res.timeline
    lo = data.draw(st.integers(0, res.cycles - 1))
    hi = data.draw(st.none() | st.integers(lo + 1, res.cycles + 5))
    end = res.cycles if hi is None else min(hi, res.cycles)
    win = timeline_of(res.trace, cfg["cores"], cfg["mem_latency"], lo, hi)
    assert (win.start, win.end) == (lo, end)
    assert win.intervals == _clip(full.intervals, lo, end)
    # Few intervals allowed and few buckets: the window is aggregated, growing its buckets while
    # the run goes on when it has no end.
    agg = timeline_of(res.trace, cfg["cores"], cfg["mem_latency"], lo, hi, max_intervals=3, buckets=4)
    if len(win.intervals) > 3:
        assert agg.aggregated and len(agg.counts) <= 4
        assert agg.counts == _bucket_sums(full.intervals, cfg["cores"], lo, end, agg.bucket)
        assert agg.totals() == win.totals()


def test_a_long_run_is_aggregated_in_bounded_memory():
    # 3 cores x 24 000 cycles give 52 000 intervals; a cap of 1000 makes buckets, which double in
    # width as the run goes on (no --to-cycle), never more than `buckets` of them.
    prog = assemble(LOOP.format(iters=2000))
    res = Machine(prog, cores=3, mem_words=256, trace=True).run()
    b = TimelineBuilder(3, 2, max_intervals=1000, buckets=64)
    for i in range(0, len(res.trace), 500):
        b.add(res.trace[i:i + 500])
        assert b._kept is None or b._n <= 1000
        assert b._counts is None or b._counts.shape == (64, 3, len(STATES))
    tl = b.finish()
    full = timeline_of(res.trace, 3, 2)
    assert tl.aggregated and len(tl.counts) <= 64 and 64 * tl.bucket >= res.cycles
    assert tl.counts == _bucket_sums(full.intervals, 3, 0, res.cycles, tl.bucket)
    assert MAX_INTERVALS == 100_000 and BUCKETS == 2_000    # the caps docs/timeline.md states


def _timeline_peak_kib(tmp_path, iters: int) -> int:
    src = tmp_path / f"loop{iters}.s"
    src.write_text(LOOP.format(iters=iters))
    page = tmp_path / f"loop{iters}.html"
    cmd = [sys.executable, "-m", "s2mc.cli", "run", str(src), "--cores", "2", "--mem-words", "256",
           "--timeline", str(page)]
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], capture_output=True, text=True, timeout=600, check=True)
    assert '"mode":"aggregate"' in page.read_text()
    return int(out.stdout)


def test_timeline_memory_is_bounded(tmp_path):
    """250 000 and 1 000 000 cycles on 2 cores (700 000 and 2.8 million intervals, far over the cap):
    the longer run may not need more than a few MiB more (kept whole, 2.1 million more intervals
    would take hundreds of MiB)."""
    small, large = _timeline_peak_kib(tmp_path, 25_000), _timeline_peak_kib(tmp_path, 100_000)
    assert large - small < 8 * 1024, (small, large)


@pytest.mark.parametrize("engine", [pytest.param("systemc", marks=needs_systemc)])
def test_both_engines_give_the_same_timeline(engine):
    for name in ("spin_lock.s", "barrier.s", "parallel_sum.s"):
        prog = assemble((ROOT / "workloads/asm" / name).read_text())
        kw = dict(cores=3, mem_latency=3, arbitration="round_robin", mem_words=4096, timeline=True)
        fast = Machine(prog, **kw).run().timeline
        other = Machine(prog, engine=engine, **kw).run().timeline
        assert fast.intervals == other.intervals, name


def test_a_fault_keeps_the_timeline_up_to_it(tmp_path):
    # Core 0 divides by zero at cycle 3 (after its ld): the page still shows the cycles before.
    prog = assemble(".code 0\ncid r1\nmov r2 #5\nld r3 @0 r0\ndiv r4 r2 r1\ntrap r0 #0\n")
    out = tmp_path / "fault.json"
    with pytest.raises(SimFault, match="division by zero"):
        Machine(prog, cores=2, mem_words=64, timeline=out).run()
    events = json.loads(out.read_text())["traceEvents"]
    assert {e["args"]["instruction"] for e in events if e["ph"] == "X"} >= {"cid r1", "ld r3 @0 r0"}


# -- writers ------------------------------------------------------------------------------------------

def test_json_is_the_trace_event_format():
    tl = docs_timeline()
    doc = to_trace_events(tl)
    json.loads(json.dumps(doc))
    ev = doc["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    assert names == {0: "bus", 1: "core 0", 2: "core 1"}
    xs = [e for e in ev if e["ph"] == "X"]
    for e in xs:
        assert {"name", "ph", "ts", "dur", "pid", "tid", "args"} <= e.keys() and e["dur"] > 0
    cores = [e for e in xs if e["tid"] > 0]
    assert [(e["tid"] - 1, e["ts"], e["ts"] + e["dur"], e["name"]) for e in cores] == \
        [(iv.core, iv.start, iv.end, STATES[iv.state]) for iv in tl.intervals]
    bus = [(e["ts"], e["args"]["core"]) for e in xs if e["tid"] == 0]
    assert bus == [(1, 0), (3, 1), (5, 0), (7, 1)]
    ld = next(e for e in cores if e["tid"] == 2 and e["name"] == "bus hold" and e["ts"] == 3)
    assert ld["args"] == {"pc": 1, "instruction": "ld r2 @vals r1", "state": "bus hold", "wait": 2, "address": 1,
                          "symbol": "vals+1", "access": "[vals+1] = 22"}


def test_aggregated_json_has_a_bucket_per_core():
    prog = assemble(LOOP.format(iters=300))
    res = Machine(prog, cores=2, mem_words=256, trace=True).run()
    tl = timeline_of(res.trace, 2, 2, max_intervals=100, buckets=10)
    xs = [e for e in to_trace_events(tl)["traceEvents"] if e["ph"] == "X"]
    assert tl.aggregated and len([e for e in xs if e["tid"] == 1]) == len(tl.counts)
    for e in xs:
        if e["tid"] > 0:
            assert abs(sum(e["args"].values()) - 1) < 1e-3 and e["name"] in STATES


def test_png_and_svg_are_written(tmp_path):
    tl = docs_timeline()
    write_timeline(tl, tmp_path / "t.png")
    write_timeline(tl, tmp_path / "t.svg")
    assert (tmp_path / "t.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    root = ET.fromstring((tmp_path / "t.svg").read_bytes())
    assert root.tag.endswith("svg")
    assert "bus hold" in (tmp_path / "t.svg").read_text()    # the legend names the states
    res = Machine(assemble(LOOP.format(iters=300)), cores=2, mem_words=256, trace=True).run()
    write_timeline(timeline_of(res.trace, 2, 2, max_intervals=100), tmp_path / "agg.png")
    assert (tmp_path / "agg.png").stat().st_size > 1000 and not list(tmp_path.glob(".*.part"))


def test_a_timeline_needs_a_known_suffix(tmp_path):
    with pytest.raises(S2mcError, match=r"t\.txt: a timeline is written as \.html, \.json, \.png or \.svg"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), timeline=tmp_path / "t.txt")
    with pytest.raises(S2mcError, match="to_cycle 3 must be greater than from_cycle 3"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), timeline=True, timeline_window=(3, 3))
    with pytest.raises(S2mcError, match="starts at cycle 50, but the run has only 1 cycles"):
        Machine(assemble(".code 0\ntrap r0 #0\n"), timeline=True, timeline_window=(50, None)).run()


# -- the page in a real browser ---------------------------------------------------------------------

def chromium(tmp_path, *args) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    assert exe, "the timeline tests need Debian's chromium (make setup installs it)"
    cmd = [exe, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
           f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def dump_dom(tmp_path, page: Path) -> str:
    proc = chromium(tmp_path, "--window-size=1200,800", "--dump-dom", page.as_uri())
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


def test_the_page_is_self_contained():
    page = to_html(docs_timeline())
    assert not re.search(r"""(src|href)\s*=|https?://|fetch\(|XMLHttpRequest|@import|url\(""", page)


# Moves the pointer over the canvas (the page's own geometry: labels 70 px, axis 22 px, rows 20 px
# with 5 px gaps) and writes what the tooltip says into the page, so --dump-dom shows it.
HOVER_PROBE = """<script>
(function () {
  const c = document.getElementById("plot"), r = c.getBoundingClientRect(), D = JSON.parse(
    document.getElementById("data").textContent), out = [];
  for (const [cyc, row] of %s) {
    const x = r.left + 70 + (cyc + 0.5 - D.start) / (D.end - D.start) * (c.clientWidth - 80);
    c.dispatchEvent(new MouseEvent("mousemove", {clientX: x, clientY: r.top + 22 + row * 25 + 10, bubbles: true}));
    out.push(document.getElementById("tip").textContent);
  }
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = out.join("\\n@@\\n");
  document.body.appendChild(pre);
})();
</script></body>"""


def test_the_page_runs_in_chromium_and_shows_every_row(tmp_path):
    page = tmp_path / "docs.html"
    write_timeline(docs_timeline(), page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", HOVER_PROBE % "[[3, 0], [3, 1], [4, 2], [9, 1]]"))
    dom = dump_dom(tmp_path, probe)
    assert '<body data-ready="2 cores">' in dom, dom[:3000]
    assert "data-error" not in dom
    assert '<ul id="rows"><li>bus</li><li>core 0</li><li>core 1</li></ul>' in dom
    tips = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).replace("&lt;", "<").split("\n@@\n")
    # cycle 3: core 1 holds the bus for its ld of vals+1 (22) after waiting 2 cycles; core 0 waits
    # for it with its st; cycle 9: core 0 has halted.
    assert tips[0].splitlines()[:2] == ["cycle 3", "bus held by core 1"]
    assert "ld r2 @vals r1" in tips[0] and "address     1  (vals+1)" in tips[0] and "value       = 22" in tips[0]
    assert tips[1].splitlines()[1] == "core 0  bus wait  (cycles 3..4)" and "st r2 @8 r1" in tips[1]
    assert tips[2].splitlines()[1] == "core 1  bus hold  (cycles 3..4)" and "wait        2 cycles" in tips[2]
    assert tips[3].splitlines()[1] == "core 0  halted  (cycles 8..9)"


def _rgb(colour: str) -> tuple:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_screenshot_shows_the_states(tmp_path):
    import numpy as np
    from matplotlib.image import imread
    prog = assemble((ROOT / "workloads/asm/barrier.s").read_text())
    page = tmp_path / "barrier.html"
    Machine(prog, cores=5, mem_words=4096, timeline=page).run()
    dom = dump_dom(tmp_path, page)
    assert '<body data-ready="5 cores">' in dom and "data-error" not in dom
    assert "".join(f"<li>core {c}</li>" for c in range(5)) in dom
    shot = tmp_path / "shot.png"
    proc = chromium(tmp_path, "--window-size=1200,500", "--hide-scrollbars", f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    rgb = np.rint(imread(shot)[..., :3] * 255).astype(int).reshape(-1, 3)
    pixels = {tuple(p) for p in np.unique(rgb, axis=0)}
    for state in ("executing", "bus wait", "bus hold", "sync wait", "halted"):
        assert _rgb(STATE_COLOURS[STATES.index(state)]) in pixels, state


def test_an_aggregated_page_runs_in_chromium(tmp_path):
    res = Machine(assemble(LOOP.format(iters=400)), cores=3, mem_words=256, trace=True).run()
    page = tmp_path / "agg.html"
    write_timeline(timeline_of(res.trace, 3, 2, max_intervals=200, buckets=50), page)
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text().replace("</body>", HOVER_PROBE % "[[100, 0], [100, 1]]"))
    dom = dump_dom(tmp_path, probe)
    assert '<body data-ready="3 cores">' in dom and "data-error" not in dom
    tips = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S).group(1).split("\n@@\n")
    # A pixel spans several cycles here: the tip names the cycle under the pointer and its bucket.
    assert re.match(r"cycle \d+  \(bucket: cycles \d+\.\.\d+\)\nbus busy 100\.0%\ncore 0 holds it", tips[0]), tips[0]
    assert "core 0" in tips[1] and "executing:" in tips[1]


# -- the commands -----------------------------------------------------------------------------------

def s2mc(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_run_writes_one_timeline_per_core_count(tmp_path):
    prog = ROOT / "workloads/asm/spin_lock.s"
    proc = s2mc("run", prog, "--cores", "1,2", "--timeline", tmp_path / "lock.json", "--from-cycle", "10",
                "--to-cycle", "60")
    assert proc.returncode == 0, proc.stderr
    for n in (1, 2):
        doc = json.loads((tmp_path / f"lock-{n}c.json").read_text())
        assert doc["otherData"]["window"] == [10, 60] and doc["otherData"]["cores"] == n
        xs = [e for e in doc["traceEvents"] if e["ph"] == "X"]
        assert min(e["ts"] for e in xs) == 10 and max(e["ts"] + e["dur"] for e in xs) == 60
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lock-1c.json", "lock-2c.json"]


@pytest.mark.parametrize("args,message", [
    (["--from-cycle", "5"], "--from-cycle and --to-cycle choose the cycles of a --timeline; give --timeline FILE"),
    (["--timeline", "T.html", "--from-cycle", "9", "--to-cycle", "9"], "--to-cycle 9 must be greater than --from-cycle 9"),
    (["--timeline", "T.txt"], "a timeline is written as .html, .json, .png or .svg"),
    (["--timeline", "T.html", "--from-cycle", "-1"], "--from-cycle"),
    (["--timeline", "T.html", "--from-cycle", "100000"], "the timeline window starts at cycle 100000, but the run has only"),
])
def test_run_timeline_errors_are_one_line(tmp_path, args, message):
    args = [a.replace("T.", str(tmp_path / "t.")) for a in args]
    proc = s2mc("run", ROOT / "workloads/asm/parallel_sum.s", "--cores", "2", *args)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and message in proc.stderr, proc.stderr
    assert not list(tmp_path.iterdir())


def test_aes_writes_a_timeline_per_run(tmp_path):
    proc = s2mc("aes", "--cores", "1,2", "--bytes", "16", "--style", "ttable", "--mode", "ctr",
                "--timeline", tmp_path / "aes.html", "--to-cycle", "500", "--quiet")
    assert proc.returncode == 0, proc.stderr
    for i, n in enumerate((1, 2)):
        page = (tmp_path / f"aes-{i}.html").read_text()
        data = json.loads(re.search(r'<script type="application/json" id="data">(.*?)</script>', page, re.S).group(1))
        assert (data["cores"], data["start"], data["end"]) == (n, 0, 500)
        assert f"wrote {tmp_path / f'aes-{i}.html'}: " in proc.stderr
    one = s2mc("aes", "--cores", "2", "--bytes", "16", "--style", "ttable", "--mode", "ctr",
               "--timeline", tmp_path / "one.svg", "--quiet")
    assert one.returncode == 0 and (tmp_path / "one.svg").exists(), one.stderr


# -- the picture, read back -----------------------------------------------------------------------------

def _is(px, colour: str, tol: float = 0.08) -> "np.ndarray":
    import numpy as np
    rgb = np.array([int(colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return (np.abs(px[..., :3] - rgb) < tol).all(axis=-1)


def bus_row_fill(png: Path) -> float:
    """The share of the bus row painted in a core's colour over the run's width, read from the PNG:
    core rows are found by their state colours (and the run's width with them), the bus row above them."""
    import matplotlib.image
    import numpy as np
    px = matplotlib.image.imread(png)
    state = np.zeros(px.shape[:2], bool)
    for col in STATE_COLOURS[:HALTED]:      # not the halted grey: the axes' frame is nearly that grey
        state |= _is(px, col)
    rows = np.where(state.sum(axis=1) > 0.2 * px.shape[1])[0]        # pixel rows of the core rows
    top = rows.min()                                                 # core 0's first pixel row
    xs = np.where(state[rows].any(axis=0))[0]
    x0, x1 = xs.min(), xs.max()
    owner = np.zeros(px.shape[:2], bool)     # in the colour of a core, as the key shows it
    for col in CORE_COLOURS:
        owner |= _is(px, col, 0.1)
    # the bus row: the rows just above core 0 with a core's colour somewhere along the run
    band = [y for y in range(top - 1, max(top - 80, 0), -1) if owner[y, x0:x1].mean() > 0.02]
    band = [y for k, y in enumerate(band) if y == band[0] - k]       # contiguous from the first
    mid = band[len(band) // 2]
    # painted: a core's colour (a colour blended with white edges is not)
    return float(owner[mid, x0:x1].mean())


# AES (a long run, a big picture) under `make test-all`; parallel_sum's busy bus by default
@pytest.mark.parametrize("program,cores,kw", [("workloads/asm/parallel_sum.s", 16, {}),
                                              pytest.param("aes", 16, {}, marks=pytest.mark.slow)])
def test_a_busy_bus_row_looks_busy_at_16_cores(tmp_path, program, cores, kw):
    """The bus row's painted share is the run's bus utilisation (the engine's counter): white box edges
    or blended thin bands must not make a busy bus look empty."""
    if program == "aes":
        from s2mc.workloads.cipher_sim import run_aes
        res = run_aes(bytes(256), bytes(16), mode="ecb", cores=cores, style="bytes",
                      timeline=str(tmp_path / "t.png")).result
    else:
        res = Machine(assemble((ROOT / program).read_text()), cores=cores, timeline=tmp_path / "t.png").run()
    fill = bus_row_fill(tmp_path / "t.png")
    assert res.bus_utilisation > 0.7
    assert fill == pytest.approx(res.bus_utilisation, abs=0.1), (fill, res.bus_utilisation)


def test_the_picture_has_a_key_for_states_and_bus_owners(tmp_path):
    Machine(assemble((ROOT / "workloads/asm/parallel_sum.s").read_text()), cores=12, timeline=tmp_path / "t.svg").run()
    svg = (tmp_path / "t.svg").read_text()
    texts = set(re.findall(r"<!-- (.*?) -->", svg))     # matplotlib names every text it draws
    # a bus machine's states: its misses wait for the bus, never for a network's messages
    assert set(STATES) - {"miss wait"} <= texts and "miss wait" not in texts
    assert {"core states", "the bus row: held by"} <= texts
    assert {"core 0, 10, ...", "core 1, 11, ...", "core 2", "core 9"} <= texts


def test_a_timeline_run_reports_simulation_time_without_the_drawing(tmp_path, monkeypatch):
    """Drawing the picture takes far longer than simulating parallel_sum: sim_seconds must not hold it.
    The drawing is slowed down on purpose (a sleep in the writer), so the check is not a timing race."""
    import time as _time
    from s2mc.simulator import timeline as tl_mod
    real = tl_mod.write_timeline

    def slow(*a, **k):
        _time.sleep(1.0)
        return real(*a, **k)
    monkeypatch.setattr(tl_mod, "write_timeline", slow)
    res = Machine(assemble((ROOT / "workloads/asm/parallel_sum.s").read_text()), cores=2,
                  timeline=tmp_path / "t.png").run()
    assert (tmp_path / "t.png").exists() and 0 < res.sim_seconds < 0.5


@pytest.mark.parametrize("opt,suffix", [("--trace", "log"), ("--timeline", "png")])
def test_run_says_where_each_file_went(tmp_path, opt, suffix):
    proc = s2mc("run", ROOT / "workloads/asm/parallel_sum.s", "--cores", "1,2", opt, tmp_path / f"f.{suffix}")
    assert proc.returncode == 0, proc.stderr
    for n in (1, 2):
        f = tmp_path / f"f-{n}c.{suffix}"
        assert f.exists() and f"wrote {f}\n" in proc.stderr
