"""Store buffers in the lab (`s2mc serve`, docs/server.md): the page's machine parameters include
`consistency` and `store_buffer_entries` (from their declaration), a tso run answers with the
buffers' counters as `s2mc run --json` does, the debugger's `sb` and its state come through
/api/debug as the in-process interpreter gives them, and the timeline shows the buffers."""
import json
import subprocess

import pytest

from s2mc.isa import assemble
from s2mc.simulator.debugger import Debugger
from s2mc.simulator.params import PARAMS

from serve_helpers import S2MC, client, example

pytest.importorskip("fastapi")

TSO = {"cores": 2, "arbitration": "fixed", "consistency": "tso", "store_buffer_entries": 2}


@pytest.fixture(scope="module")
def api():
    with client(workers=2) as c:
        yield c


def test_params_offer_the_consistency_and_the_buffers_size(api):
    by = {p["name"]: p for p in api.get("/api/params").json()["params"]}
    assert by["consistency"]["choices"] == list(PARAMS["consistency"].choices) == ["sc", "tso", "pso"]
    assert by["consistency"]["default"] == "sc"
    entries = by["store_buffer_entries"]
    assert (entries["min"], entries["max"], entries["default"]) == (
        PARAMS["store_buffer_entries"].min, PARAMS["store_buffer_entries"].max, PARAMS["store_buffer_entries"].default)


def test_a_tso_run_answers_what_s2mc_run_json_prints(api):
    got = api.post("/api/run", json={"source": example("spin_lock.s"), "language": "asm", "params": TSO})
    assert got.status_code == 200, got.text
    out = subprocess.run([S2MC, "run", "spin_lock.s", "--cores", "2", "--arbitration", "fixed", "--consistency",
                          "tso", "--store-buffer-entries", "2", "--json"], capture_output=True, text=True, check=True)
    assert got.json() == json.loads(out.stdout)
    assert got.json()["config"]["consistency"] == "tso"
    assert all(c["store_drains"] > 0 and "fence_stall_cycles" in c for c in got.json()["cores"])


def test_a_bad_consistency_is_one_line(api):
    got = api.post("/api/run", json={"source": example("spin_lock.s"), "language": "asm",
                                     "params": {"consistency": "rc"}})
    assert got.status_code == 400
    assert got.json()["error"] == "params: unknown consistency 'rc' (choose sc, tso, pso)"


def _session(api, params):
    first = api.post("/api/debug", json={"source": example("spin_lock.s"), "language": "asm", "params": params})
    assert first.status_code == 200, first.text
    sid = first.json()["id"]

    def cmd(line):
        r = api.post(f"/api/debug/{sid}", json={"command": line})
        assert r.status_code == 200, r.text
        return r.json()
    return cmd


def test_sb_through_the_api_is_the_interpreters(api):
    cmd = _session(api, TSO)
    local = Debugger.for_program(assemble(example("spin_lock.s")), **TSO)
    for line in ("tick 9", "sb", "sb 1", "tick 3", "sb"):
        got = cmd(line)
        assert [o["text"] for o in got["output"]] == local.execute(line).splitlines()
        assert all(o["stream"] == "out" for o in got["output"])
    assert got["state"]["store_buffers"] == local.state()["store_buffers"]
    assert any(got["state"]["store_buffers"])     # something is buffered at cycle 12


@pytest.mark.parametrize("params, line, message", [
    ({"cores": 2}, "sb", "sb: this machine has no store buffers (consistency sc); debug with --consistency tso "
                         "or pso"),
    (TSO, "sb 99", "sb: core 99 does not exist (0..1)"),
])
def test_bad_sb_through_the_api_is_one_error_line(api, params, line, message):
    got = _session(api, params)(line)
    assert got["output"] == [{"stream": "err", "text": message}]


def test_the_timeline_shows_the_buffers(api):
    got = api.post("/api/timeline", json={"source": example("spin_lock.s"), "language": "asm", "params": TSO})
    assert got.status_code == 200, got.text
    html = got.json()["html"]
    assert '"entries":2' in html and '"consistency":"tso"' in html and "TSO store buffers of 2" in html
