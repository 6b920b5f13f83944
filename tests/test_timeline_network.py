"""The timeline's network view (docs/timeline.md, "The network view"): the links' flits and the
homes' occupancy per bucket, counted by hand for the worked read miss, equal to a plain count over
the reference model's log, the hottest home the one a hot-spot program targets; the page in a real
browser (Debian's chromium, headless) and the picture."""
import re

import pytest
from test_directory import MEM, SKIP_OTHERS
from test_timeline import _rgb, chromium, dump_dom

from s2mc.common.errors import S2mcError
from s2mc.isa import assemble
from s2mc.simulator import Machine
from s2mc.simulator.directory import DirectoryMachine
from s2mc.simulator.timeline import HOTTEST_COLOUR, NETWORK_BUCKETS, STATE_COLOURS, STATES, timeline_of

NET = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory", "mem_words": MEM}


def hot_spot(rounds: int) -> str:
    """Every core increments the word after the lock `rounds` times under an xchg spin lock: the lock
    and the counter share line 5 (words 20..23), whose home is tile 5 mod N; each core also writes
    the round into its own line (6 + core), so that the other homes have some work too."""
    return f"""
.code 0
  cid r3
  mul r3 r3 #4
  mov r6 #{rounds}
:again
  mov r1 #1
:spin
  mov r2 #20
  xchg r1 r2
  jt r1 spin
  ld r2 21
  add r2 r2 #1
  st r2 21
  st r0 20
  st r6 @24 r3
  sub r6 r6 #1
  jt r6 again
  trap r0 #0
"""


def test_the_worked_read_miss_by_hand():
    # docs/timing-model.md, "A read miss to a remote home": core 0 loads word 12 (line 3, home 3) at
    # t = 2. The GetS (1 flit) takes 0 x+ at t+1 = 3 and 1 y+ at 5; home 3 reads memory in 8..9; the
    # Data (2 flits) takes 3 x- in 11..12 and 2 y- in 13..14 and is delivered at 17; core 0 halts at 18.
    tl = Machine(assemble(SKIP_OTHERS.format(body="  ld r2 12")), timeline=True, **NET).run().timeline
    assert (tl.network, tl.start, tl.end, tl.net_bucket) == ("mesh 2x2", 0, 19, 1)
    assert [tl.link_name(i) for i in range(len(tl.links))] == [
        "0 x+ \u2192 1", "0 y+ \u2192 2", "1 x- \u2192 0", "1 y+ \u2192 3",
        "2 x+ \u2192 3", "2 y- \u2192 0", "3 x- \u2192 2", "3 y- \u2192 1"]
    busy = {tl.link_name(i): [b for b, n in enumerate(row) if n] for i, row in enumerate(tl.link_busy)}
    assert busy == {"0 x+ \u2192 1": [3], "0 y+ \u2192 2": [], "1 x- \u2192 0": [], "1 y+ \u2192 3": [5],
                    "2 x+ \u2192 3": [], "2 y- \u2192 0": [13, 14], "3 x- \u2192 2": [11, 12], "3 y- \u2192 1": []}
    assert all(n in (0, 1) for row in tl.link_busy for n in row)    # one flit a cycle each way
    assert [[b for b, n in enumerate(row) if n] for row in tl.home_busy] == [[], [], [], [8, 9]]
    assert tl.hottest_home() == 3
    # core 0 waits for its miss from its issue (2) to the cycle the load takes effect (17)
    assert tl.runs(0) == [(0, 2, "executing"), (2, 18, "miss wait"), (18, 19, "executing")]


def plain_count(log: list[tuple], tl) -> tuple[list[int], list[int]]:
    """Each link's flit-cycles and each home's occupied cycles inside the timeline's window, counted
    event by event from a log (an oracle for the view's buckets)."""
    index = {f"{r}:{p}": i for i, (r, p, _) in enumerate(tl.links)}
    links, homes = [0] * len(tl.links), [0] * tl.cores
    for cycle, at, _, event, *_ in log:
        what = event.split(" ")
        if what[0] == "port" and what[1] != "local":
            links[index[f"{at}:{what[1]}"]] += sum(tl.start <= c < tl.end for c in range(cycle, cycle + int(what[3])))
        elif what[0] == "home":
            homes[at] += sum(tl.start <= c < tl.end for c in range(cycle, cycle + int(what[2])))
    return links, homes


@pytest.mark.parametrize("interconnect,cores", [("mesh", 8), ("ring", 6), ("mesh", 12)])
def test_the_hottest_home_is_the_hot_spots_and_the_view_equals_a_plain_count(interconnect, cores):
    cfg = {**NET, "cores": cores, "interconnect": interconnect, "cache": "mesi", "mem_words": 128}
    prog = assemble(hot_spot(3))
    ref = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, trace=True, **cfg)
    ref.run()
    for window in ((0, None), (40, 200)):
        m = Machine(prog, timeline=True, timeline_window=window, **cfg)
        res = m.run()
        tl = res.timeline
        if window == (0, None):    # a miss waits from its issue to the cycle it takes effect
            waits = [sum(e - s for s, e, k in tl.runs(c) if k == "miss wait") for c in range(cores)]
            assert waits == [c["miss_cycles"] + c["dir_misses"] for c in res.cores]
        assert m.read(21, 1) == [3 * cores]
        assert tl.hottest_home() == 5 % cores
        links, homes = plain_count(ref.trace, tl)
        assert [sum(row) for row in tl.link_busy] == links and [sum(row) for row in tl.home_busy] == homes
        # the reference model's log draws the same view
        other = timeline_of(ref.trace, cores, 2, *window, interconnect=interconnect)
        assert (other.link_busy, other.home_busy) == (tl.link_busy, tl.home_busy)
        if window == (0, None):    # the other homes work too, less
            assert sorted(homes)[-1] > sorted(homes)[-2] > 0 and max(homes) == homes[5 % cores]


def test_a_long_run_keeps_at_most_the_buckets_of_the_view():
    cfg = {**NET, "cores": 4}
    prog = assemble(hot_spot(60))
    ref = DirectoryMachine(prog.code_image, prog.data_image, prog.entry, trace=True, **cfg)
    ref.run()
    tl = Machine(prog, timeline=True, **cfg).run().timeline
    assert tl.end > NETWORK_BUCKETS and tl.net_bucket > 1
    assert len(tl.home_busy[0]) <= NETWORK_BUCKETS and -(-tl.end // tl.net_bucket) == len(tl.home_busy[0])
    links, homes = plain_count(ref.trace, tl)
    assert [sum(row) for row in tl.link_busy] == links and [sum(row) for row in tl.home_busy] == homes
    for b, (lo, hi) in enumerate(tl.net_span(b) for b in range(len(tl.home_busy[0]))):
        assert all(row[b] <= hi - lo for row in tl.link_busy + tl.home_busy)


def test_the_json_has_a_counter_track_per_link_and_home():
    tl = Machine(assemble(SKIP_OTHERS.format(body="  ld r2 12")), timeline=True, **NET).run().timeline
    from s2mc.simulator.timeline import to_trace_events
    j = to_trace_events(tl)
    busy = {(e["name"], e["ts"]): e["args"]["busy"] for e in j["traceEvents"] if e["ph"] == "C"}
    assert busy[("link 3 x- \u2192 2", 11)] == 1 and busy[("link 3 x- \u2192 2", 10)] == 0
    assert busy[("home 3", 8)] == 1 and len(busy) == (8 + 4) * 19
    assert (j["otherData"]["network"], j["otherData"]["hottest_home"]) == ("mesh 2x2", 3)


def test_a_quiet_end_is_covered_by_the_buckets():
    # one miss, then 1000 cycles of arithmetic: no message after cycle 17, but the view spans the run
    src = SKIP_OTHERS.format(body="  ld r2 12\n  mov r3 #500\n:l\n  sub r3 r3 #1\n  jt r3 l")
    tl = Machine(assemble(src), timeline=True, **NET).run().timeline
    assert tl.end > 1000 and tl.net_bucket == 8
    assert len(tl.home_busy[3]) == -(-tl.end // 8) <= NETWORK_BUCKETS and tl.net_span(len(tl.home_busy[3]) - 1)[1] == tl.end
    assert tl.home_busy[3][1] == 2 and sum(tl.home_busy[3]) == 2       # cycles 8 and 9


def test_a_bus_timeline_has_no_network_view():
    tl = Machine(assemble(".code 0\n  trap r0 #0\n"), timeline=True).run().timeline
    assert not tl.networked
    with pytest.raises(S2mcError, match="^this timeline has no network view"):
        tl.hottest_home()


def test_the_page_shows_the_network_view_in_chromium(tmp_path):
    import numpy as np
    from matplotlib.image import imread
    page = tmp_path / "hot.html"
    Machine(assemble(hot_spot(3)), timeline=page, **{**NET, "cores": 8}).run()
    dom = dump_dom(tmp_path, page)
    assert '<body data-ready="8 cores" data-hottest="home 5">' in dom or (
        'data-hottest="home 5"' in dom and 'data-ready="8 cores"' in dom), dom[:2000]
    assert "data-error" not in dom
    rows = re.search(r'<ul id="rows">(.*?)</ul>', dom).group(1)
    assert "<li>bus</li>" not in rows and "<li>core 7</li>" in rows
    assert "<li>0 x+ \u2192 1</li>" in rows and "<li>home 5 (hottest)</li>" in rows
    assert "Network: mesh 3x3, 24 links and 8 homes; the hottest home is home 5" in dom
    shot = tmp_path / "shot.png"
    proc = chromium(tmp_path, "--window-size=1200,1400", "--hide-scrollbars", f"--screenshot={shot}", page.as_uri())
    assert proc.returncode == 0 and shot.exists(), proc.stderr[-2000:]
    rgb = np.rint(imread(shot)[..., :3] * 255).astype(int).reshape(-1, 3)
    pixels = {tuple(p) for p in np.unique(rgb, axis=0)}
    assert _rgb(HOTTEST_COLOUR) in pixels                        # the hottest home's outline
    assert _rgb(STATE_COLOURS[STATES.index("miss wait")]) in pixels


def test_the_picture_draws_the_heat_maps(tmp_path):
    from s2mc.simulator.timeline import _figure
    for suffix in (".png", ".svg"):
        out = tmp_path / f"hot{suffix}"
        tl = Machine(assemble(hot_spot(3)), timeline=out, **{**NET, "cores": 8}).run().timeline
        assert out.stat().st_size > 1000
    fig = _figure(tl)
    cores, links, homes = fig.axes[0], fig.axes[1], fig.axes[3]     # each heat map has its colour bar
    assert [t.get_text() for t in cores.get_yticklabels()] == [f"core {c}" for c in range(8)]
    assert [t.get_text() for t in links.get_yticklabels()] == [tl.link_name(i) for i in range(24)]
    hot = [t for t in homes.get_yticklabels() if t.get_text() == "home 5 (hottest)"]
    assert len(hot) == 1 and hot[0].get_fontweight() == "bold"
    assert links.get_title().startswith("mesh 3x3, links") and homes.get_title().startswith("mesh 3x3, homes")


# Moves the pointer down the middle of the canvas, a pixel at a time, and returns the first tooltip
# that names `what` (the page's rows differ in height, so the script searches rather than computes).
HOVER_SEARCH = """
const c = document.getElementById("plot"), r = c.getBoundingClientRect(), tip = document.getElementById("tip");
for (let y = 0; y < c.clientHeight; y++) {
  c.dispatchEvent(new MouseEvent("mousemove", {clientX: r.left + c.clientWidth / 2, clientY: r.top + y, bubbles: true}));
  if (tip.style.display === "block" && tip.textContent.includes(arguments[0])) return tip.textContent;
}
return null;
"""


def test_hovering_the_hottest_home_in_a_browser_driven_by_selenium(tmp_path):
    import shutil
    pytest.importorskip("selenium")
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait
    chromium, driver_exe = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver_exe, "needs Debian's chromium and chromium-driver (make setup installs them)"
    page = tmp_path / "hot.html"
    Machine(assemble(hot_spot(3)), timeline=page, **{**NET, "cores": 8}).run()
    opts = Options()
    opts.binary_location = chromium
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1000"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(driver_exe), options=opts)
    try:
        driver.get(page.as_uri())
        WebDriverWait(driver, 30).until(lambda d: d.execute_script("return document.body.dataset.ready") == "8 cores")
        assert driver.execute_script("return document.body.dataset.error || null") is None
        assert driver.execute_script("return document.body.dataset.hottest") == "home 5"
        tip = driver.execute_script(HOVER_SEARCH, "home 5")
        assert tip is not None and "home 5: occupied in " in tip and "the hottest home of the window" in tip, tip
        tip = driver.execute_script(HOVER_SEARCH, "link 0 x+")
        assert re.search(r"link 0 x\+ \u2192 1: carried a flit in \d+ of \d+ cycles \(\d+\.\d%\)", tip), tip
    finally:
        driver.quit()
