"""`s2mc serve` with a ring or a mesh (docs/server.md): the run form's network parameters come from
the declaration (simulator/params.toml), a run answers what `s2mc run --json` prints (the network
counters included), and a debugging session's state has the directory view (every line in play:
home, state, sharers) and the messages in flight, as the debugger's `dir` and `net` print them."""
import json
import subprocess

import pytest

from s2mc.simulator import NETWORK_PARAMS
from s2mc.simulator.params import PARAMS

from serve_helpers import S2MC, client, example

pytest.importorskip("fastapi")

MESH = {"cores": 4, "cache": "msi", "interconnect": "mesh", "coherence": "directory"}
FLAGS = ["--cores", "4", "--cache", "msi", "--interconnect", "mesh", "--coherence", "directory"]


@pytest.fixture(scope="module")
def api():
    with client(workers=2) as c:
        yield c


def test_the_network_parameters_are_the_declared_ones(api):
    by = {p["name"]: p for p in api.get("/api/params").json()["params"]}
    for name in NETWORK_PARAMS:
        p = PARAMS[name]
        assert (by[name]["type"], by[name]["default"], by[name]["choices"], by[name]["min"], by[name]["max"]) == \
            (p.type, p.default, list(p.choices), p.min, p.max)
    assert by["interconnect"]["choices"] == ["bus", "ring", "mesh"]


@pytest.mark.parametrize("extra, flags", [
    ({}, []),
    ({"interconnect": "ring", "link_latency": 2, "router_latency": 0, "flit_words": 2},
     ["--interconnect", "ring", "--link-latency", "2", "--router-latency", "0", "--flit-words", "2"]),
])
def test_a_network_run_answers_what_s2mc_run_json_prints(api, extra, flags):
    got = api.post("/api/run", json={"source": example("spin_lock.s"), "language": "asm",
                                     "params": {**MESH, **extra}})
    assert got.status_code == 200, got.text
    want = json.loads(subprocess.run([S2MC, "run", "spin_lock.s", *FLAGS, *flags, "--json"], capture_output=True,
                                     text=True, check=True).stdout)
    assert got.json() == want
    assert got.json()["network"]["messages"]["GetM"] > 0


def test_a_debug_sessions_state_has_the_directory_and_the_messages(api):
    body = {"source": example("spin_lock.s"), "language": "asm", "params": MESH}
    opened = api.post("/api/debug", json=body).json()
    sid = opened["id"]
    try:
        assert opened["state"]["bus"] is None and opened["state"]["network"]["lines"] == []
        state = api.post(f"/api/debug/{sid}", json={"command": "tick 9"}).json()["state"]
        net = state["network"]
        assert state["cycle"] == 9 and net["interconnect"] == "mesh" and net["lines"]
        for row in net["lines"]:
            printed = [o["text"] for o in api.post(f"/api/debug/{sid}", json={"command": f"dir {row['address']}"})
                       .json()["output"]]
            entry = printed[0].split("directory state ", 1)[1]
            owner = f", owner core {row['owner']}" if row["owner"] is not None else ""
            sharers = ", sharers " + " ".join(f"core {k}" for k in row["sharers"]) if row["sharers"] else \
                ", no sharers"
            assert entry == f"{row['state']}{owner}{sharers}"
            assert f"home tile {row['home']}:" in printed[0]
            copies = ", ".join(f"core {c['core']} {c['state']}" + (" (evicting)" if c["evicting"] else "")
                               for c in row["copies"])
            assert printed[1] == "  copies: " + (copies or "in no cache")
        printed = [o["text"] for o in api.post(f"/api/debug/{sid}", json={"command": "net"}).json()["output"]]
        assert printed[0] == f"cycle 9: {len(net['messages'])} message{'s' if len(net['messages']) != 1 else ''} " \
                             "in the mesh"
        for text, m in zip(printed[1:], net["messages"]):
            assert text.split()[:4] == [m["type"], str(m["src"]), "->", str(m["dst"])]
    finally:
        api.delete(f"/api/debug/{sid}")


def test_a_bad_network_parameter_is_refused_by_name(api):
    r = api.post("/api/run", json={"source": example("spin_lock.s"), "language": "asm",
                                   "params": {**MESH, "interconnect": "torus"}})
    assert r.status_code == 400 and r.json()["error"].startswith("params: "), r.text
    assert "interconnect" in r.json()["error"]
    r = api.post("/api/run", json={"source": example("spin_lock.s"), "language": "asm",
                                   "params": {**MESH, "cache": "none"}})
    assert r.status_code == 400, r.text
