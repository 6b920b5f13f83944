"""The page of `s2mc serve` in a real browser: headless Chromium (Debian's) driven by selenium
through chromedriver, against a real server on a free port. A student's path through it: open the
page, load an example, run it, read the output and the counters, step the debugger, submit a blank
exercise and see it fail. The expected values come from `s2mc run --json`, not from the page.

S2MC_SERVE_SCREENSHOT=docs/img/serve-page.png also saves a picture of the page (docs/server.md).
"""
import contextlib
import json
import os
import shutil
import subprocess

import pytest

from s2mc.isa import assemble
from s2mc.simulator.debugger import Debugger

from serve_helpers import S2MC, example, live_server

pytest.importorskip("fastapi")
selenium = pytest.importorskip("selenium")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

CHROMIUM, DRIVER = shutil.which("chromium"), shutil.which("chromedriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver "
                                                                   "(make setup installs them)")


@contextlib.contextmanager
def browser(url, query="", width=1500, ready=True):
    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},1000"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        driver.get(url + "/" + query)
        if ready:      # else the caller waits for what it expects (a page that asks for a token)
            _wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes")
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page():
    with live_server("--workers", "2") as url, browser(url) as driver:
        yield driver


def _wait(driver, condition, seconds=120):
    # the page redraws its tables as answers come: an element read mid-redraw is read again
    return WebDriverWait(driver, seconds, ignored_exceptions=[StaleElementReferenceException]).until(condition)


def _text(driver, element_id):
    return driver.find_element(By.ID, element_id).text


def test_a_students_path_through_the_page(page):
    # one test, in order, so that a parallel run never splits the path between two browsers
    assert "codemirror" in page.find_element(By.TAG_NAME, "body").get_attribute("class")
    assert page.find_elements(By.CSS_SELECTOR, ".CodeMirror-linenumber")
    # a field for every declared machine parameter, whatever params.toml holds
    from s2mc.simulator.params import PARAMS
    assert [e.get_attribute("name") for e in page.find_elements(By.CSS_SELECTOR, "#params [name]")] == list(PARAMS)
    _run_an_example(page)
    _the_other_views(page)
    _step_the_debugger(page)
    _debug_rz_by_its_lines(page)
    _screenshot(page)      # docs/server.md's picture: sum.rz stopped in the debugger, as its caption says
    _store_buffers(page)
    _check_a_blank_exercise(page)
    # no script error and no failed request on the way
    assert [e["message"] for e in page.get_log("browser") if e["level"] == "SEVERE"] == []


def _screenshot(page):
    """S2MC_SERVE_SCREENSHOT=PATH: the page as it is now, from its top, saved there."""
    path = os.environ.get("S2MC_SERVE_SCREENSHOT")
    if path:
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
        page.execute_script("window.scrollTo(0, 0)")
        assert page.save_screenshot(path)


def _counter(page, name) -> list[int]:
    """One row of the counters table (a row per counter, a column per core): its value per core."""
    row = page.find_element(By.CSS_SELECTOR, f'#counters tr[data-counter="{name}"]')
    return [int(c.text) for c in row.find_elements(By.TAG_NAME, "td")[1:]]


def _cycle(page) -> int:
    return int(_text(page, "dbg-where").split(";")[0].split()[1])


def _debug_rz_by_its_lines(page):
    """sum.rz on 2 cores: its lines beside their instructions, a breakpoint by a click on line 12
    (`data[i] = i + 1`), continue to it, the line marked, and one step back."""
    Select(page.find_element(By.ID, "example")).select_by_value("sum.rz")
    cores = page.find_element(By.ID, "param-cores")
    cores.clear()
    cores.send_keys("2")
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=asm]").click()
    page.find_element(By.ID, "compile").click()
    _wait(page, lambda d: any(r.text.startswith("12 data[i] = i + 1")
                              for r in d.find_elements(By.CSS_SELECTOR, "#asm-view tr")))
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
    page.find_element(By.ID, "dbg-start").click()
    _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0"))
    _gutter(page, 12).click()
    _wait(page, lambda d: "breakpoint 1 at" in _text(d, "dbg-log") and d.find_elements(By.CSS_SELECTOR, ".breakpoint"))
    page.find_element(By.ID, "dbg-cont").click()
    _wait(page, lambda d: "; line 12" in _text(d, "dbg-where"))
    marked = page.execute_script("const cm = document.querySelector('.CodeMirror').CodeMirror; "
                                 "return [...Array(cm.lineCount()).keys()].filter("
                                 "(n) => (cm.lineInfo(n).bgClass || '').includes('current-line')).map((n) => n + 1)")
    assert 12 in marked
    there = _cycle(page)
    page.find_element(By.ID, "dbg-rstep").click()
    _wait(page, lambda d: _cycle(d) < there)


def _run_an_example(page):
    Select(page.find_element(By.ID, "example")).select_by_value("parallel_sum.s")
    assert page.execute_script("return document.querySelector('.CodeMirror').CodeMirror.getValue()") == \
        example("parallel_sum.s")
    cores = page.find_element(By.ID, "param-cores")
    cores.clear()
    cores.send_keys("4")
    page.find_element(By.ID, "run").click()
    _wait(page, lambda d: _text(d, "totals"))
    want = json.loads(subprocess.run([S2MC, "run", "parallel_sum.s", "--cores", "4", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    assert _text(page, "output") == want["output"].strip()
    head = [c.text for c in page.find_elements(By.CSS_SELECTOR, "#counters tr:first-child th")]
    assert head == ["counter"] + [f"core {c}" for c in range(4)]
    assert _counter(page, "cycles") == [c["cycles"] for c in want["cores"]]
    assert _text(page, "totals").startswith(f"{want['cycles']} cycles")


def _the_other_views(page):
    """The assembly view, the timeline and the sweep of the loaded example (4 cores)."""
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=asm]").click()
    page.find_element(By.ID, "compile").click()
    _wait(page, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#asm-view tr")) > 1)
    listing = subprocess.run([S2MC, "asm", "parallel_sum.s", "-o", os.devnull, "--listing"], capture_output=True,
                             text=True, check=True).stdout
    code = [line.split(None, 3)[3] for line in listing.splitlines() if line.startswith("code")]
    rows = page.find_elements(By.CSS_SELECTOR, "#asm-view tr")[1:]
    assert [r.find_elements(By.TAG_NAME, "td")[3].text for r in rows] == code

    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=timeline]").click()
    page.find_element(By.ID, "timeline-go").click()
    _wait(page, lambda d: d.find_element(By.ID, "timeline-frame").get_attribute("srcdoc"))
    page.switch_to.frame("timeline-frame")
    try:
        # the page simulator/timeline.py writes, its plot drawn by its own script
        assert page.find_element(By.ID, "plot").size["height"] > 0
    finally:
        page.switch_to.default_content()

    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=sweep]").click()
    top = page.find_element(By.ID, "sweep-max")
    top.clear()
    top.send_keys("4")
    page.find_element(By.ID, "sweep-go").click()
    _wait(page, lambda d: d.find_elements(By.CSS_SELECTOR, "#sweep-svg circle"))
    every = json.loads(subprocess.run([S2MC, "run", "parallel_sum.s", "--cores", "1,2,3,4", "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    points = page.find_elements(By.CSS_SELECTOR, "#sweep-svg circle title")
    assert [p.get_attribute("textContent") for p in points] == \
        [f"{r['config']['cores']} cores: {r['stall_cycles']} stall cycles" for r in every]


def _step_the_debugger(page):
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
    page.find_element(By.ID, "dbg-start").click()
    _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0"))
    page.find_element(By.ID, "dbg-step").click()
    _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 1"))
    assert len(page.find_elements(By.CSS_SELECTOR, "#dbg-cores tr")) == 1 + 4
    page.find_element(By.ID, "dbg-command").send_keys("regs 2\n")
    _wait(page, lambda d: "core 2, cycle 1" in _text(d, "dbg-log"))
    # a click on the line number of `:done` (line 18) sets a breakpoint on that label
    loop = assemble(example("parallel_sum.s"), "x.s").symbols["done"].value
    _gutter(page, 18).click()
    _wait(page, lambda d: f"breakpoint 1 at pc {loop}" in _text(d, "dbg-log"))
    assert page.find_elements(By.CSS_SELECTOR, ".breakpoint")
    page.find_element(By.ID, "dbg-cont").click()
    _wait(page, lambda d: f"at pc {loop} (done)" in _text(d, "dbg-where"))
    # a second click clears it
    _gutter(page, 18).click()
    _wait(page, lambda d: "deleted 1" in _text(d, "dbg-log") and not d.find_elements(By.CSS_SELECTOR, ".breakpoint"))


def _store_buffers(page):
    """spin_lock.s on 2 cores under tso: the run's counters have the buffers' columns and its
    totals name the model (as `s2mc run --json` says); the debugger's Store buffers button prints
    `sb` and the table shows every entry the session's state holds. Back to sc at the end."""
    Select(page.find_element(By.ID, "example")).select_by_value("spin_lock.s")
    cores = page.find_element(By.ID, "param-cores")
    cores.clear()
    cores.send_keys("2")
    consistency = Select(page.find_element(By.ID, "param-consistency"))
    assert [o.text for o in consistency.options] == ["sc", "tso", "pso"]
    consistency.select_by_value("tso")
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=result]").click()
    page.find_element(By.ID, "run").click()
    want = json.loads(subprocess.run([S2MC, "run", "spin_lock.s", "--cores", "2", "--consistency", "tso", "--json"],
                                     capture_output=True, text=True, check=True).stdout)
    _wait(page, lambda d: _text(d, "totals").startswith(f"{want['cycles']} cycles"))
    assert _text(page, "totals").endswith("tso store buffers of 4")
    assert _counter(page, "store_drains") == [c["store_drains"] for c in want["cores"]]

    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
    page.find_element(By.ID, "dbg-start").click()
    _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0"))
    page.find_element(By.ID, "dbg-command").send_keys("tick 12\n")     # core 0's store of the counter is buffered
    _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 12"))
    page.find_element(By.ID, "sb-go").click()
    _wait(page, lambda d: "core 1: store buffer" in _text(d, "dbg-log"))
    assert page.find_element(By.ID, "dbg-sb-box").is_displayed()
    local = Debugger.for_program(assemble(example("spin_lock.s")), cores=2, consistency="tso")
    local.execute("tick 12")
    assert all(line in _text(page, "dbg-log") for line in local.execute("sb").splitlines())
    buffers = local.state()["store_buffers"]
    assert [len(b) for b in buffers] == [1, 0]
    rows = page.find_elements(By.CSS_SELECTOR, "#dbg-sb tr")[1:]
    assert len(rows) == sum(max(1, len(b)) for b in buffers)
    assert [r.find_elements(By.TAG_NAME, "td")[2].text for r in rows] == \
        [str(e["address"]) if b else "" for b in buffers for e in (b or [None])]
    page.find_element(By.ID, "dbg-stop").click()
    consistency.select_by_value("sc")


def _gutter(page, line):
    return next(e for e in page.find_elements(By.CSS_SELECTOR, ".CodeMirror-linenumber") if e.text == str(line))


def _check_a_blank_exercise(page):
    page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=exercises]").click()
    page.find_element(By.ID, "check").click()
    _wait(page, lambda d: _text(d, "grade"), seconds=300)
    assert _text(page, "grade").startswith("Not passed: 0/")
    verdicts = [v.text for v in page.find_elements(By.CSS_SELECTOR, ".verdict")]
    assert verdicts and all(v.startswith(("missing", "timing")) and "no prediction made" in v for v in verdicts)


def test_without_codemirror_the_page_is_a_textarea(monkeypatch, tmp_path):
    monkeypatch.setenv("S2MC_CODEMIRROR", str(tmp_path / "none"))
    with live_server("--workers", "1") as url, browser(url) as page:
        assert "plain" in page.find_element(By.TAG_NAME, "body").get_attribute("class")
        Select(page.find_element(By.ID, "example")).select_by_value("fib.rz")
        assert page.find_element(By.ID, "source").get_attribute("value") == example("fib.rz")
        page.find_element(By.ID, "run").click()
        _wait(page, lambda d: _text(d, "totals"))
        want = json.loads(subprocess.run([S2MC, "run", "fib.rz", "--json"], capture_output=True, text=True,
                                         check=True).stdout)
        assert _text(page, "output") == want["output"].strip()


@pytest.mark.parametrize("reloads", [3, pytest.param(70, marks=pytest.mark.slow)])
def test_a_reloaded_page_closes_its_debugging_session(reloads):
    """Each reload starts the debugger again; the page closes the old session as it goes (pagehide,
    with the class token), so 70 reloads (more than the server's 64 sessions) leave one session
    process, not 70."""
    from serve_helpers import forked
    info = {}
    with live_server("--workers", "1", "--token", "t7", info=info) as url, browser(url, "?token=t7") as page:
        for i in range(reloads):
            if i:
                page.refresh()
                _wait(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes")
            Select(page.find_element(By.ID, "example")).select_by_value("parallel_sum.s")
            page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
            page.find_element(By.ID, "dbg-start").click()
            _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0"), seconds=30)
        _wait(page, lambda d: forked(info["pid"]) == 1, seconds=20)
        page.get("about:blank")        # leaving the page closes the last one too
        _wait(page, lambda d: forked(info["pid"]) == 0, seconds=20)
