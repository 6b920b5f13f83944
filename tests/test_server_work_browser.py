"""Work that lasts, in a real browser (headless Chromium driven by selenium, as
tests/test_server_browser.py): the program and the machine's fields kept across a reload and a
server restart, a share link opened in another browser, a program file downloaded and uploaded,
and the lecturer's page following a class's checks live. The expected values come from the API
(httpx) or the database, not from the page."""
import contextlib
import csv
import io
import sqlite3

import httpx2
import pytest

from serve_helpers import free_port, live_server

pytest.importorskip("fastapi")
pytest.importorskip("selenium")
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

from test_server_browser import CHROMIUM, DRIVER, _text, _wait, browser  # noqa: E402

pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs Debian's chromium and chromium-driver "
                                                                   "(make setup installs them)")
SOURCE = "// kept\nmain()\n  print(6 * 7)\n"


def _editor(page):
    return page.execute_script("return document.querySelector('.CodeMirror').CodeMirror.getValue()")


def _type_program(page, source):
    # the editor's own change event, as a keystroke makes it; then a field typed into for real
    page.execute_script("document.querySelector('.CodeMirror').CodeMirror.setValue(arguments[0])", source)
    cores = page.find_element(By.ID, "param-cores")
    cores.clear()
    cores.send_keys("3")
    Select(page.find_element(By.ID, "param-consistency")).select_by_value("pso")


def _saved(page):
    _wait(page, lambda d: _text(d, "work-status").startswith("saved on the server"), seconds=30)


def _ready(page):
    _wait(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes")


def _fields(page):
    return (_editor(page), page.find_element(By.ID, "param-cores").get_attribute("value"),
            page.find_element(By.ID, "param-consistency").get_attribute("value"),
            page.find_element(By.ID, "language").get_attribute("value"))


def test_saved_work_survives_a_reload_and_a_server_restart(tmp_path):
    db, port = tmp_path / "lab.db", free_port()
    want = (SOURCE, "3", "pso", "rz")
    with contextlib.ExitStack() as first:
        url = first.enter_context(live_server("--workers", "1", "--db", str(db), port=port))
        with browser(url) as page:
            _type_program(page, SOURCE)
            _saved(page)
            page.refresh()
            _ready(page)
            assert _fields(page) == want
            first.close()          # the server stops; the page stays open
            (owner, source, params), = sqlite3.connect(db).execute("SELECT owner, source, params FROM saved_work")
            assert owner.startswith("browser:") and source == SOURCE and '"cores": 3' in params
            # this browser forgets its own copy (not its id): what comes back must be the server's
            page.execute_script("for (const k of Object.keys(localStorage)) "
                                "if (k.startsWith('s2mc-work:')) localStorage.removeItem(k)")
            with live_server("--workers", "1", "--db", str(db), port=port):
                page.refresh()
                _ready(page)
                assert _fields(page) == want
                assert _text(page, "work-status").startswith("your work as saved at")


def test_work_typed_while_the_server_is_down_is_sent_when_it_is_back(tmp_path):
    db, port = tmp_path / "lab.db", free_port()
    with contextlib.ExitStack() as first:
        url = first.enter_context(live_server("--workers", "1", "--db", str(db), port=port))
        with browser(url) as page:
            first.close()
            _type_program(page, SOURCE)
            _wait(page, lambda d: _text(d, "work-status").startswith("kept in this browser only"), seconds=30)
            with live_server("--workers", "1", "--db", str(db), port=port):
                page.refresh()         # the server has nothing: the browser's copy comes back, and is sent
                _ready(page)
                assert _fields(page) == (SOURCE, "3", "pso", "rz")
                _saved(page)
    (source, params), = sqlite3.connect(db).execute("SELECT source, params FROM saved_work")
    assert source == SOURCE and '"consistency": "pso"' in params


def test_a_share_link_opens_exactly_its_program_in_another_browser():
    with live_server("--workers", "1") as url:
        with browser(url) as page:
            _type_program(page, SOURCE)
            Select(page.find_element(By.ID, "opt")).select_by_value("0")
            page.find_element(By.ID, "share").click()
            _wait(page, lambda d: d.find_element(By.ID, "share-link").get_attribute("href"), seconds=30)
            link = page.find_element(By.ID, "share-link").get_attribute("href")
        pid = link.split("?program=", 1)[1]
        kept = httpx2.get(f"{url}/api/programs/{pid}", timeout=10).json()
        assert kept["source"] == SOURCE and kept["params"]["cores"] == 3 and kept["opt"] == 0
        with browser(url, "?program=" + pid) as other:
            assert _fields(other) == (SOURCE, "3", "pso", "rz")
            assert other.find_element(By.ID, "opt").get_attribute("value") == "0"
            # every other field at its declared default
            declared = {p["name"]: p["default"] for p in httpx2.get(f"{url}/api/params", timeout=10).json()["params"]}
            for name, default in declared.items():
                if name not in kept["params"]:
                    assert other.find_element(By.ID, f"param-{name}").get_attribute("value") == str(default), name
        with browser(url, "?program=AAAAAAAAAAAAAAAAAAAAAA") as gone:
            assert "no shared program" in _text(gone, "work-status")


def test_a_share_link_on_a_server_with_tokens_opens_in_a_new_tab_and_a_new_browser(tmp_path):
    """A class with a roster: ada opens her personal link once, shares, and the link (which names no
    token) opens in a new tab of her browser with no question; in a browser that never had a token
    the page asks for one, and with bob's it opens the program. Forget the token removes it."""
    roster = tmp_path / "roster.csv"
    roster.write_text("id\nada\nbob\n", encoding="utf-8")
    with live_server("--workers", "1", "--class", str(roster)) as url:
        with open(tmp_path / "roster.links.csv", encoding="utf-8") as f:
            tokens = {r["id"]: r["token"] for r in csv.DictReader(f) if r["role"] == "student"}
        made = httpx2.post(f"{url}/api/programs", json={"source": SOURCE, "params": {"cores": 3}},
                           headers={"Authorization": f"Bearer {tokens['ada']}"}, timeout=30)
        assert made.status_code == 201, made.text
        link = made.json()["url"]
        assert "token" not in link
        with browser(url, f"?token={tokens['ada']}") as page:
            page.switch_to.new_window("tab")
            page.get(link)
            _wait(page, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes",
                  seconds=30)
            assert _editor(page) == SOURCE and page.find_element(By.ID, "param-cores").get_attribute("value") == "3"
        with browser(url, "?program=" + link.split("?program=", 1)[1], ready=False) as fresh:
            _wait(fresh, lambda d: d.find_element(By.ID, "token-form").is_displayed(), seconds=30)
            assert "token" in _text(fresh, "token-why")
            fresh.find_element(By.ID, "token-input").send_keys(tokens["bob"])
            fresh.find_element(By.CSS_SELECTOR, "#token-form button").click()
            _ready(fresh)
            assert _editor(fresh) == SOURCE and not fresh.find_element(By.ID, "token-form").is_displayed()
            fresh.find_element(By.ID, "token-forget").click()
            _wait(fresh, lambda d: d.find_element(By.ID, "token-form").is_displayed(), seconds=30)
            assert fresh.execute_script("return localStorage.getItem('s2mc-token')") is None


def test_a_program_file_is_downloaded_and_uploaded(tmp_path):
    with live_server("--workers", "1") as url, browser(url) as page:
        page.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
        limit = httpx2.get(f"{url}/api/params", timeout=10).json()["limits"]["source_bytes"]
        good, big, text, binary = tmp_path / "mine.s", tmp_path / "big.rz", tmp_path / "notes.txt", tmp_path / "bin.rz"
        good.write_text(".code 0\n  halt\n", encoding="utf-8")
        big.write_text("x" * (limit + 1))
        text.write_text("hello")
        binary.write_bytes(b"\xff\xfe\x00main")
        refusals = ((big, f"big.rz is {limit + 1} bytes; this server takes programs of at most {limit}"),
                    (text, "notes.txt: not a program file (.rz or .s)"), (binary, "bin.rz: not UTF-8 text"))
        # every note the page shows, kept: a save's note may follow "loaded" before a poll sees it
        page.execute_script("window.notes = []; new MutationObserver(() => notes.push("
                            "document.getElementById('work-status').textContent))"
                            ".observe(document.getElementById('work-status'), {childList: true})")
        page.find_element(By.ID, "upload").send_keys(str(good))
        _wait(page, lambda d: "mine.s loaded" in d.execute_script("return notes"), seconds=30)
        assert _editor(page) == good.read_text() and page.find_element(By.ID, "language").get_attribute("value") == "asm"
        # refused within the save's pause: the save that lands after it leaves the refusal on show
        page.find_element(By.ID, "upload").send_keys(str(big))
        _wait(page, lambda d: _text(d, "work-status") == refusals[0][1], seconds=30)
        _wait(page, lambda d: d.execute_script(
            "const ks = Object.keys(localStorage).filter((k) => k.startsWith('s2mc-work:'));"
            "return ks.length > 0 && ks.every((k) => JSON.parse(localStorage.getItem(k)).synced)"), seconds=30)
        assert _text(page, "work-status") == refusals[0][1]
        page.find_element(By.ID, "download").click()
        got = tmp_path / "program.s"      # the browser may show the file before it has written it all
        _wait(page, lambda d: got.exists() and got.read_text(encoding="utf-8") == good.read_text(), seconds=30)
        for f, words in refusals:
            page.find_element(By.ID, "upload").send_keys(str(f))
            _wait(page, lambda d: _text(d, "work-status") == words, seconds=30)
            assert _editor(page) == good.read_text()      # a refused file changes nothing


def test_the_lecturers_page_follows_the_class_live(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada\nbob,Bob\n", encoding="utf-8")
    info = {}
    with live_server("--workers", "2", "--class", str(roster), info=info) as url:
        # with --class and no --db the class's work is kept beside the roster
        assert f"work kept in {tmp_path / 'roster.db'}" in info["banner"]
        tokens = {r["id"] or "teacher": r["token"] for r in csv.DictReader((tmp_path / "roster.links.csv").open())}
        with browser(url + "/lecturer", "?token=" + tokens["ada"]) as refused:
            assert "teacher" in _text(refused, "status")
        with browser(url + "/lecturer", "?token=" + tokens["teacher"]) as page:
            page.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)})
            assert _text(page, "summary").startswith("0 of 2 students submitted a check; 0 passed.")
            rows = lambda d: [r.text for r in d.find_elements(By.CSS_SELECTOR, "#progress tr[data-student]")]  # noqa: E731
            assert [r.split()[0] for r in rows(page)] == ["ada", "bob"]
            blank = {q["name"]: {"predict": None, "measured": None} for s in httpx2.get(
                f"{url}/api/exercises", headers={"Authorization": "Bearer " + tokens["ada"]}, timeout=10
            ).json()["sections"] for q in s["quantities"]}
            r = httpx2.post(f"{url}/api/exercises/check", json={"answers": blank}, timeout=300,
                            headers={"Authorization": "Bearer " + tokens["ada"]})
            assert r.status_code == 200, r.text
            # the page asks again by itself: ada's check appears without a reload
            _wait(page, lambda d: _text(d, "summary").startswith("1 of 2 students submitted a check; 0 passed."),
                  seconds=30)
            ada = page.find_element(By.CSS_SELECTOR, "#progress tr[data-student=ada]")
            cells = ada.find_elements(By.TAG_NAME, "td")
            assert cells[2].text == "1" and cells[7].text == "no"
            assert {c.get_attribute("title") for c in cells[8:]} <= {"missing", "timing"}
            counts = page.find_elements(By.CSS_SELECTOR, "#question-counts th")
            assert counts[0].text == "students right (of 2)" and {c.text for c in counts[8:]} == {"0"}
            page.find_element(By.ID, "gradebook").click()
            want = httpx2.get(f"{url}/api/gradebook.csv", headers={"Authorization": "Bearer " + tokens["teacher"]},
                              timeout=10).text
            got = tmp_path / "gradebook.csv"
            _wait(page, lambda d: got.exists() and got.read_text(encoding="utf-8") == want, seconds=30)
            assert [r["id"] for r in csv.DictReader(io.StringIO(want))] == ["ada", "bob"]
