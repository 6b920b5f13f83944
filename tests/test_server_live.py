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
    banner = []
    with live_server("--host", "0.0.0.0", "--token", "t1", banner=banner) as url:
        port = url.rsplit(":", 1)[1]
        line = banner[0]
        assert "0.0.0.0" not in line, line
        urls = line.split("s2mc serve: ", 1)[1].split(" (", 1)[0].split()
        assert urls == [f"http://{a}:{port}/?token=t1" for a in mine] + [f"http://localhost:{port}/?token=t1"], line
        for u in urls:
            base = u.split("?", 1)[0]
            assert httpx2.get(base + "api/params", headers={"Authorization": "Bearer t1"}, timeout=10).status_code == 200
