"""The page of `s2mc serve` with a ring or a mesh, in a real browser (headless Chromium through
selenium, as tests/test_server_browser.py): the form's network fields, a run's totals with the
network's counters (as `s2mc run --json` says), and the debugger panel's directory view and
messages in flight while stepping (as the debugger's own state says)."""
import json
import subprocess

import pytest

from s2mc.isa import assemble
from s2mc.simulator import NETWORK_PARAMS
from s2mc.simulator.debugger import Debugger

from serve_helpers import S2MC, example, live_server

pytest.importorskip("fastapi")
pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402
from test_server_browser import CHROMIUM, DRIVER, _counter, _text, _wait, browser  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver "
                                                                   "(make setup installs them)")
MESH = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory"}
CYCLE = 157      # spin_lock.s: three GetMs chained at line 0's home (docs/debugger.md)


def _rows(page, table_id):
    return [[c.text for c in r.find_elements(By.TAG_NAME, "td")]
            for r in page.find_elements(By.CSS_SELECTOR, f"#{table_id} tr")[1:]]


def test_a_mesh_runs_and_steps_with_its_directory_in_the_page():
    with live_server("--workers", "2") as url, browser(url) as page:
        fields = [e.get_attribute("name") for e in page.find_elements(By.CSS_SELECTOR, "#params [name]")]
        assert all(name in fields for name in NETWORK_PARAMS)
        Select(page.find_element(By.ID, "example")).select_by_value("spin_lock.s")
        for name, value in MESH.items():
            field = page.find_element(By.ID, f"param-{name}")
            if field.tag_name == "select":
                Select(field).select_by_value(value)
            else:
                field.clear()
                field.send_keys(str(value))
        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=result]").click()
        page.find_element(By.ID, "run").click()
        flags = [f for k, v in MESH.items() for f in (f"--{k}", str(v))]
        want = json.loads(subprocess.run([S2MC, "run", "spin_lock.s", *flags, "--json"], capture_output=True,
                                         text=True, check=True).stdout)
        _wait(page, lambda d: _text(d, "totals").startswith(f"{want['cycles']} cycles"))
        totals, net = _text(page, "totals"), want["network"]
        assert f"{sum(net['messages'].values())} messages (GetS {net['messages']['GetS']}, " in totals
        assert f"{net['flits']} flits, {net['hops']} hops over the {net['topology']}" in totals
        assert f"went quiet in cycle {net['quiet_cycle']}" in totals and "bus busy" not in totals
        assert _counter(page, "messages_sent") == [c["messages_sent"] for c in want["cores"]]

        page.find_element(By.CSS_SELECTOR, "#tabs [data-tab=debug]").click()
        page.find_element(By.ID, "dbg-start").click()
        _wait(page, lambda d: _text(d, "dbg-where").startswith("cycle 0"))
        page.find_element(By.ID, "dbg-command").send_keys(f"tick {CYCLE}\n")
        _wait(page, lambda d: _text(d, "dbg-where").startswith(f"cycle {CYCLE}"))
        assert page.find_element(By.ID, "dbg-dir-box").is_displayed()
        local = Debugger.for_program(assemble(example("spin_lock.s")), **MESH)
        local.execute(f"tick {CYCLE}")
        state = local.state()["network"]
        assert state["lines"] and state["messages"]
        got = _rows(page, "dbg-dir")
        assert [r[:8] for r in got] == [[str(v["line"]), str(v["address"]), v["where"], str(v["home"]), v["state"],
                                         "" if v["owner"] is None else str(v["owner"]),
                                         " ".join(map(str, v["sharers"])),
                                         ", ".join(f"core {c['core']} {c['state']}" for c in v["copies"])]
                                        for v in state["lines"]]
        assert [r[:5] for r in _rows(page, "dbg-net")] == \
            [[m["type"], str(m["src"]), str(m["dst"]), str(m["line"]), str(m["requester"])] for m in state["messages"]]
        page.find_element(By.ID, "dbg-command").send_keys("dir counter\n")
        _wait(page, lambda d: "home tile 0: directory state" in _text(d, "dbg-log"))
        page.find_element(By.ID, "dbg-stop").click()
        assert [e["message"] for e in page.get_log("browser") if e["level"] == "SEVERE"] == []
