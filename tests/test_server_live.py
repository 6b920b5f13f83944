"""`s2mc serve` as a real process: it answers on its port, takes its token from the environment,
runs on an existing Dask cluster when told, and leaves no process behind when stopped."""
import json
import os
import subprocess

import httpx2
import pytest

from serve_helpers import S2MC, example, live_server

pytest.importorskip("fastapi")


def _cli(*args):
    return json.loads(subprocess.run([S2MC, "run", *args, "--json"], capture_output=True, text=True,
                                     check=True).stdout)


def test_a_real_server_with_a_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("S2MC_SERVE_TOKEN", "class-7")
    with live_server("--workers", "1") as url:
        body = {"source": example("barrier.s"), "language": "asm", "params": {"cores": 3}}
        refused = httpx2.post(url + "/api/run", json=body, timeout=60)
        assert refused.status_code == 401
        got = httpx2.post(url + "/api/run", json=body, headers={"Authorization": "Bearer class-7"}, timeout=60)
        assert got.status_code == 200 and got.json() == _cli("barrier.s", "--cores", "3")
        # a session left open when the server stops is closed with it (live_server checks the processes)
        opened = httpx2.post(url + "/api/debug", json=body, headers={"Authorization": "Bearer class-7"}, timeout=60)
        assert opened.status_code == 200


def test_runs_on_an_existing_dask_cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        with live_server("--executor", "dask", "--scheduler", cluster.scheduler_address) as url:
            body = {"source": example("parallel_sum.s"), "language": "asm", "params": {"cores": 2}}
            got = httpx2.post(url + "/api/run", json=body, timeout=120)
            assert got.status_code == 200, got.text
            assert got.json() == _cli("parallel_sum.s", "--cores", "2")
            # the job ran on the cluster's worker, not here
            assert cluster.scheduler.task_prefixes and any("call" in p for p in cluster.scheduler.task_prefixes)


def test_an_unreachable_scheduler_is_one_line():
    r = subprocess.run([S2MC, "serve", "--executor", "dask", "--scheduler", "tcp://127.0.0.1:9"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert r.stderr.startswith("s2mc: error: --scheduler tcp://127.0.0.1:9: cannot connect"), r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr


def test_a_port_in_use_is_one_line():
    with live_server() as url:
        port = url.rsplit(":", 1)[1]
        r = subprocess.run([S2MC, "serve", "--port", port], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert r.returncode == 1 and r.stderr == f"s2mc: error: --host 127.0.0.1 --port {port}: Address already in use\n"


def test_the_start_up_line_names_the_machines_addresses():
    """Bound to every interface, the line names each address beyond loopback (the oracle: iproute2's
    `ip -j addr`), then localhost, each with the token, and each answers; never 0.0.0.0."""
    import shutil
    if not shutil.which("ip"):
        pytest.skip("no `ip` (iproute2) to read this machine's addresses with")
    found = json.loads(subprocess.run(["ip", "-j", "-4", "addr"], capture_output=True, text=True, check=True).stdout)
    mine = [a["local"] for i in found for a in i.get("addr_info", []) if a.get("scope") == "global"]
    info = {}
    with live_server("--host", "0.0.0.0", "--token", "t1", info=info) as url:
        port = url.rsplit(":", 1)[1]
        line = info["banner"]
        assert "0.0.0.0" not in line, line
        urls = line.split("s2mc serve: ", 1)[1].split(" (", 1)[0].split()
        assert urls == [f"http://{a}:{port}/?token=t1" for a in mine] + [f"http://localhost:{port}/?token=t1"], line
        for u in urls:
            base = u.split("?", 1)[0]
            assert httpx2.get(base + "api/params", headers={"Authorization": "Bearer t1"}, timeout=10).status_code == 200


def test_a_roster_gives_each_student_a_link_of_their_own(tmp_path):
    import csv
    import stat
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada Lovelace\nbob,\"Babbage, Charles\"\ncy,Cy\n", encoding="utf-8")
    links = tmp_path / "roster.links.csv"
    with live_server("--class", str(roster), "--token", "shared") as url:
        assert stat.S_IMODE(links.stat().st_mode) == 0o600
        rows = list(csv.DictReader(links.open(encoding="utf-8")))
        assert [(r["role"], r["id"], r["name"]) for r in rows] == [
            ("teacher", "", ""), ("student", "ada", "Ada Lovelace"), ("student", "bob", "Babbage, Charles"),
            ("student", "cy", "Cy")]
        assert len({r["token"] for r in rows}) == 4 and all(len(r["token"]) >= 16 for r in rows)
        port = url.rsplit(":", 1)[1]
        assert all(r["url"] == f"http://127.0.0.1:{port}/?token={r['token']}" for r in rows)
        for r in rows:       # each link works, and says whose it is by its wall time
            got = httpx2.get(url + "/api/params", headers={"Authorization": f"Bearer {r['token']}"}, timeout=10)
            assert got.status_code == 200
            assert got.json()["limits"]["wall_seconds"] == (60 if r["role"] == "teacher" else 10)
        for token in ("shared", None, "made-up"):
            got = httpx2.get(url + "/api/params", timeout=10,
                             headers={"Authorization": f"Bearer {token}"} if token else {})
            assert got.status_code == (200 if token == "shared" else 401)
    # started again, the links handed out stay good
    with live_server("--class", str(roster)) as url:
        again = list(csv.DictReader(links.open(encoding="utf-8")))
        assert [r["token"] for r in again] == [r["token"] for r in rows]


def test_a_bad_roster_stops_the_server_with_one_line(tmp_path):
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\nada,Ada\nada,Ada again\n", encoding="utf-8")
    r = subprocess.run([S2MC, "serve", "--class", str(roster), "--port", "0"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert r.stderr == f"s2mc: error: {roster}:3: id 'ada' is already on line 2\n"
    assert not (tmp_path / "roster.links.csv").exists()


def _flood(port: int, count: int, data: bytes) -> list:
    import socket
    socks = []
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port), timeout=10)
        s.sendall(data)
        socks.append(s)
    return socks


def _answers(socks, wait: float = 0.0) -> list:
    """What each socket received so far (after `wait` seconds): b"" for a connection closed with
    no answer, None for one still open with nothing to read."""
    import select
    import time
    time.sleep(wait)
    got = []
    for s in socks:
        if select.select([s], [], [], 0)[0]:
            try:
                got.append(s.recv(4096))
            except ConnectionResetError:
                got.append(b"")
        else:
            got.append(None)
    return got


def test_340_half_open_connections_from_one_address_stop_nobody_else():
    """A real socket flood: 340 connections from 127.0.0.1 that send half a request header and stop.
    Another student (127.0.0.2) is answered 200 at once; the flood beyond the cap per address is
    refused 429 before anything is read; the rest are closed with 408 when their header's time is
    up, and then the flooding address is served again."""
    body = {"source": "main()\n  print(6 * 7)\n"}
    with live_server("--workers", "1", "--header-seconds", "2", "--connections-per-address", "32") as url:
        port = int(url.rsplit(":", 1)[1])
        socks = _flood(port, 340, b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Ty")
        try:
            other = httpx2.Client(transport=httpx2.HTTPTransport(local_address="127.0.0.2"), timeout=5)
            with other:
                r = other.post(url + "/api/run", json=body)
                assert r.status_code == 200 and r.json()["output"] == "42\n", r.text
            first = _answers(socks, wait=0.5)
            refused = [a for a in first if a is not None]
            assert len(refused) == 340 - 32 and all(a.startswith(b"HTTP/1.1 429 ") and b"32 connections" in a
                                                    and b"retry-after: 2" in a for a in refused)
            held = [s for s, a in zip(socks, first) if a is None]
            late = _answers(held, wait=3.0)      # past the header's 2 s
            assert all(a is not None and a.startswith(b"HTTP/1.1 408 ") for a in late), late[:3]
            r = httpx2.post(url + "/api/run", json=body, timeout=5)
            assert r.status_code == 200, r.text
        finally:
            for s in socks:
                s.close()


def test_a_body_that_stops_is_cut_off_and_frees_its_place():
    body = b'{"source": "main()\\n  print(6 * 7)\\n"}'
    with live_server("--workers", "1", "--body-seconds", "1", "--connections-per-address", "4") as url:
        port = int(url.rsplit(":", 1)[1])
        socks = _flood(port, 4, b"POST /api/run HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
                                 b"content-length: %d\r\n\r\n%s" % (len(body), body[:10]))
        try:
            assert httpx2.get(url + "/api/params", timeout=5).status_code == 429     # the 4 places are taken
            assert all(a == b"" for a in _answers(socks, wait=2.0))                 # closed, no answer
            assert httpx2.post(url + "/api/run", content=body, timeout=5,
                               headers={"content-type": "application/json"}).status_code == 200
        finally:
            for s in socks:
                s.close()


def test_a_database_that_cannot_be_opened_is_one_line(tmp_path):
    where = tmp_path / "missing" / "lab.db"
    r = subprocess.run([S2MC, "serve", "--db", str(where), "--port", "0"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith(f"s2mc: error: --db {where}: OperationalError"), r.stderr
