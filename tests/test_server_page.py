"""The page of `s2mc serve` as a place to work, in real Chromium: the keys (Ctrl+Enter runs, F10
and F11 step, Esc and Tab leave the editor), a name for every control in Chromium's accessibility
tree, the editor opening on an example, the caches coloured by coherence state while stepping, the
debugger's cycle on the timeline, two runs side by side, and the counters fitting a 1280-pixel
window at 8 cores with caches. Every value is checked against `s2mc run --json` or the debugger run
here, not against the page."""
import json
import subprocess

import pytest

from s2mc.isa import assemble
from s2mc.simulator.debugger import Debugger

from serve_helpers import S2MC, example, live_server
from test_server_browser import CHROMIUM, DRIVER, _text, _wait, browser

pytest.importorskip("fastapi")
pytest.importorskip("selenium")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver "
                                                                   "(make setup installs them)")

#: The roles of Chromium's accessibility tree a user operates: each needs a name a reader speaks.
CONTROLS = {"button", "textbox", "combobox", "spinbutton", "checkbox", "radio", "slider", "searchbox", "tab",
            "listbox", "link", "DisclosureTriangle"}


def _cli(*args):
    return json.loads(subprocess.run([S2MC, "run", *args, "--json"], capture_output=True, text=True,
                                     check=True).stdout)


def _unnamed(page) -> list[str]:
    """The controls shown now that Chromium's accessibility tree gives no name."""
    page.execute_cdp_cmd("Accessibility.enable", {})
    nodes = page.execute_cdp_cmd("Accessibility.getFullAXTree", {})["nodes"]
    return [f"{n['role']['value']} (node {n.get('backendDOMNodeId')})" for n in nodes
            if not n.get("ignored") and n.get("role", {}).get("value") in CONTROLS
            and not (n.get("name", {}).get("value") or "").strip()]


def _focus_in_editor(page) -> bool:
    return page.execute_script("return document.getElementById('editor-box').contains(document.activeElement)")


def _keys(page, *keys):
    ActionChains(page).send_keys(*keys).perform()


def _ctrl(page, key):
    ActionChains(page).key_down(Keys.CONTROL).send_keys(key).key_up(Keys.CONTROL).perform()


def _cycle(page) -> int:
    return int(_text(page, "dbg-where").split(";")[0].split()[1])


def _param(page, name, value):
    field = page.find_element(By.ID, "param-" + name)
    if field.tag_name == "select":
        Select(field).select_by_value(value)
    else:
        field.clear()
        field.send_keys(value)


def _counters(page) -> dict[str, list[int]]:
    """The counters table: counter -> its value per core (a row per counter, a column per core)."""
    rows = page.find_elements(By.CSS_SELECTOR, "#counters tr")[1:]
    return {r.get_attribute("data-counter"): [int(c.text) for c in r.find_elements(By.TAG_NAME, "td")[1:]]
            for r in rows}


def test_the_keys_the_labels_and_the_first_example():
    with live_server("--workers", "2") as url, browser(url) as page:
        # the editor opens on an example, named in the example list
        assert Select(page.find_element(By.ID, "example")).first_selected_option.get_attribute("value") == "sum.rz"
        assert page.execute_script("return document.querySelector('.CodeMirror').CodeMirror.getValue()") == \
            example("sum.rz")
        # the keys are listed on the page
        listed = [e.text for e in page.find_elements(By.CSS_SELECTOR, "#keys dt")]
        assert {"Ctrl+Enter", "F10", "F11", "Esc"} <= set(listed)
        # every control of every tab has a name a screen reader reads
        for tab in page.find_elements(By.CSS_SELECTOR, "#tabs button"):
            tab.click()
            assert _unnamed(page) == [], tab.text
        assert page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=exercises]").get_attribute("aria-selected") == "true"

        # Tab moves on from the editor; Esc leaves it too
        page.find_element(By.CSS_SELECTOR, ".CodeMirror").click()
        assert _focus_in_editor(page)
        _keys(page, Keys.TAB)
        assert not _focus_in_editor(page)
        assert page.execute_script("return document.querySelector('.CodeMirror').CodeMirror.getValue()") == \
            example("sum.rz")          # and typed no tab into the program
        page.find_element(By.CSS_SELECTOR, ".CodeMirror").click()
        assert _focus_in_editor(page)
        _keys(page, Keys.ESCAPE)
        assert not _focus_in_editor(page)

        # Ctrl+Enter runs, from the editor too
        page.find_element(By.CSS_SELECTOR, ".CodeMirror").click()
        _ctrl(page, Keys.ENTER)
        want = _cli("sum.rz")
        _wait(page, lambda d: _text(d, "totals").startswith(f"{want['cycles']} cycles"))
        assert _counters(page)["cycles"] == [c["cycles"] for c in want["cores"]]

        # F11 steps (starting the debugger), F10 goes to the next line, as `s2mc debug` does
        local = Debugger.for_program(_compiled("sum.rz"), cores=1)
        local.execute("step")
        _keys(page, Keys.F11)
        _wait(page, lambda d: _text(d, "dbg-where").startswith(f"cycle {local.state()['cycle']};"))
        assert page.find_element(By.ID, "tab-debug").is_displayed()
        local.execute("next")
        _keys(page, Keys.F10)
        _wait(page, lambda d: _text(d, "dbg-where").startswith(f"cycle {local.state()['cycle']};"))
        assert [e["message"] for e in page.get_log("browser") if e["level"] == "SEVERE"] == []


def _compiled(name):
    from s2mc.compiler import compile as compile_rz
    return compile_rz(example(name), filename="program.rz", debug=True).program


def test_the_views_at_1280_pixels():
    with live_server("--workers", "2") as url, browser(url, width=1280) as page:
        # the counters of 8 cores with caches fit the window: no sideways scrolling
        _param(page, "cores", "8")
        _param(page, "cache", "mesi")
        page.find_element(By.ID, "run").click()
        want = _cli("sum.rz", "--cores", "8", "--cache", "mesi")
        _wait(page, lambda d: _text(d, "totals").startswith(f"{want['cycles']} cycles"))
        got = _counters(page)
        assert {k: got[k] for k in want["cores"][0] if k != "core"} == \
            {k: [c[k] for c in want["cores"]] for k in want["cores"][0] if k != "core"}
        right, viewport, scroll = page.execute_script(
            "return [document.getElementById('counters').getBoundingClientRect().right, "
            "document.documentElement.clientWidth, document.documentElement.scrollWidth]")
        assert right <= viewport and scroll <= viewport

        # stepping false_sharing.s on 2 cores with MESI: each core's lines, coloured by their state
        Select(page.find_element(By.ID, "example")).select_by_value("false_sharing.s")
        _param(page, "cores", "2")
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
        page.find_element(By.ID, "dbg-start").click()
        _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0;"))
        page.find_element(By.ID, "dbg-command").send_keys("tick 300\n")
        _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 300;"))
        local = Debugger.for_program(assemble(example("false_sharing.s")), cores=2, cache="mesi")
        local.execute("tick 300")
        caches = local.state()["caches"]
        want_lines = [sorted((ln["line"], ln["state"]) for ln in core) for core in caches["cores"]]
        assert any(want_lines)
        shown = []
        for row in page.find_elements(By.CSS_SELECTOR, "#dbg-caches .cache-core"):
            cells = row.find_elements(By.CSS_SELECTOR, ".slot")
            assert len(cells) == caches["lines"]
            valid = [c for c in cells if c.get_attribute("data-state")]
            for c in valid:      # the colour is the state's class
                assert c.get_attribute("data-state") in c.get_attribute("class").split()
                assert c.text == c.get_attribute("data-state")
            shown.append(sorted((int(c.get_attribute("data-line")), c.get_attribute("data-state")) for c in valid))
        assert shown == want_lines
        colours = {c.get_attribute("data-state"): c.value_of_css_property("background-color")
                   for c in page.find_elements(By.CSS_SELECTOR, "#dbg-caches .slot[data-state]")}
        assert len(set(colours.values())) == len(colours)      # one colour per state

        # the timeline marks the debugger's cycle
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=timeline]").click()
        page.find_element(By.ID, "timeline-go").click()
        _wait(page, lambda d: d.find_element(By.ID, "timeline-frame").get_attribute("srcdoc"))
        assert "300" in _text(page, "timeline-mark")
        page.switch_to.frame("timeline-frame")
        try:
            _wait(page, lambda d: d.find_element(By.ID, "plot").get_attribute("data-mark-x"))
        finally:
            page.switch_to.default_content()
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
        page.find_element(By.ID, "dbg-stop").click()

        # MESI against Dragon, side by side, the differences marked
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=compare]").click()
        page.find_element(By.ID, "cmp-set-a").click()
        _param(page, "cache", "dragon")
        page.find_element(By.ID, "cmp-set-b").click()
        assert "cache dragon" in _text(page, "cmp-b") and "cache mesi" in _text(page, "cmp-a")
        page.find_element(By.ID, "cmp-go").click()
        _wait(page, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#cmp-table tr")) > 1)
        a, b = (_cli("false_sharing.s", "--cores", "2", "--cache", p) for p in ("mesi", "dragon"))
        rows = {r.get_attribute("data-counter"): r for r in page.find_elements(By.CSS_SELECTOR, "#cmp-table tr")[1:]}
        for name, ra, rb in [("cycles", a["cycles"], b["cycles"]), ("stall_cycles", a["stall_cycles"], b["stall_cycles"])] + \
                [(k + " (all cores)", sum(c[k] for c in a["cores"]), sum(c[k] for c in b["cores"]))
                 for k in a["cores"][0] if k not in ("core", "cycles", "instructions", "stall_cycles", "bus_busy_cycles")]:
            cells = [c.text for c in rows[name].find_elements(By.TAG_NAME, "td")]
            assert cells[1:3] == [str(ra), str(rb)], name
            assert ("differs" in rows[name].get_attribute("class")) == (ra != rb), name
            assert cells[3] == ("" if ra == rb else f"{rb - ra:+d}"), name
        assert any("differs" in r.get_attribute("class") for r in rows.values())
        assert [e["message"] for e in page.get_log("browser") if e["level"] == "SEVERE"] == []
