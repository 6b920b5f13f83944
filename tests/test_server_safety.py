"""Bad input through the API of `s2mc serve`: each class gets a clear 4xx with one line of reason,
and the server goes on serving the others (docs/server.md, "Limits")."""
import concurrent.futures
import subprocess
import time

import pytest

from serve_helpers import S2MC, client, example

pytest.importorskip("fastapi")

LOOP = ".code 0\n:loop\n  jmp loop\n"              # an S2 program that never halts
SUM = example("parallel_sum.s")


def _one_line(r, status: int, *words: str) -> str:
    assert r.status_code == status, r.text
    text = r.json()["error"]
    assert "\n" not in text and text.strip() == text and text
    for w in words:
        assert w in text, text
    return text


def _serves(c) -> None:
    """The server still answers a good run after the bad request (its cycles those of the CLI's)."""
    r = c.post("/api/run", json={"source": SUM, "language": "asm", "params": {"cores": 2}})
    assert r.status_code == 200, r.text
    cli = subprocess.run([S2MC, "run", "parallel_sum.s", "--cores", "2", "--json"], capture_output=True,
                         text=True, check=True).stdout
    assert f'"cycles": {r.json()["cycles"]},' in cli


@pytest.fixture(scope="module")
def api():
    with client(workers=2, max_cycles=200_000, source_bytes=4096, body_bytes=16384) as c:
        yield c


def test_a_huge_source_is_413(api):
    _one_line(api.post("/api/run", json={"source": "; x\n" * 2000, "language": "asm"}), 413, "source", "4096")
    _serves(api)


def test_a_huge_body_is_413_by_length_and_by_bytes(api):
    _one_line(api.post("/api/run", content=b"{" + b" " * 20000 + b"}",
                       headers={"content-type": "application/json"}), 413, "16384")

    def chunks():      # no Content-Length: the bytes that arrive are counted
        for _ in range(40):
            yield b" " * 1000
    _one_line(api.post("/api/run", content=chunks(), headers={"content-type": "application/json"}), 413)
    _serves(api)


@pytest.mark.parametrize("body, words", [
    (b"{not json", ["malformed JSON"]),
    (b"[1, 2]", ["JSON object"]),
    (b"[" * 15000, ["nested too deeply"]),
    (b"\xff\xfe", ["malformed JSON"]),
    (b'{"source": "halt", "colour": 1}', ["unknown field 'colour'"]),
    (b'{"language": "asm"}', ["missing field 'source'"]),
    (b'{"source": 5}', ["source must be a string"]),
    (b'{"source": "x", "language": "cobol"}', ["language: unknown value 'cobol' (choose rz, asm)"]),
    (b'{"source": "x", "opt": 3}', ["opt: 3 is out of range (0..1)"]),
])
def test_malformed_requests_are_400(api, body, words):
    _one_line(api.post("/api/run", content=body, headers={"content-type": "application/json"}), 400, *words)


@pytest.mark.parametrize("params, words", [
    ({"colour": 3}, ["unknown machine parameter 'colour'"]),
    ({"cores": 257}, ["cores", "257", "1..256"]),
    ({"cores": 0}, ["cores", "0"]),
    ({"mem_latency": "fast"}, ["mem-latency", "not an integer"]),
    ({"arbitration": "lottery"}, ["arbitration", "lottery"]),
    ({"mem_words": 1 << 26}, ["mem_words", "cap"]),
])
def test_unknown_or_out_of_range_parameters_are_400(api, params, words):
    _one_line(api.post("/api/run", json={"source": SUM, "language": "asm", "params": params}), 400, "params", *words)
    _serves(api)


def test_a_runaway_program_stops_at_the_servers_cycle_cap(api):
    # the request's own max_cycles is clamped to the server's 200000
    r = api.post("/api/run", json={"source": LOOP, "language": "asm", "params": {"max_cycles": 10**12}})
    text = _one_line(r, 422, "cycle limit of 200000", "max cycles", "Machine")
    assert "--max-cycles" not in text      # the page has a field, not the command line's option
    # a sweep and a timeline say the same
    r = api.post("/api/sweep", json={"source": LOOP, "language": "asm", "cores": [1, 2]})
    _one_line(r, 422, "with 1 cores", "cycle limit of 200000", "max cycles", "Machine")
    r = api.post("/api/timeline", json={"source": LOOP, "language": "asm"})
    _one_line(r, 422, "cycle limit of 200000", "max cycles", "Machine")
    _serves(api)


def test_the_debuggers_cycle_limit_names_the_pages_field_and_the_clis_its_option(api, tmp_path):
    """The same runaway in the page's debugger and in `s2mc debug`: each says the control its user
    has there, the Machine field in the page, --max-cycles on the command line."""
    opened = api.post("/api/debug", json={"source": LOOP, "language": "asm"})
    assert opened.status_code == 200, opened.text
    sid = opened.json()["id"]
    r = api.post(f"/api/debug/{sid}", json={"command": "continue"})
    assert r.status_code == 200, r.text
    said = " ".join(o["text"] for o in r.json()["output"] if o["stream"] == "err")
    for text in (said, r.json()["state"]["fault"]):
        assert "cycle limit of 200000" in text and "'max cycles' under Machine" in text, text
        assert "--max-cycles" not in text, text
    api.delete(f"/api/debug/{sid}")
    program = tmp_path / "loop.s"
    program.write_text(LOOP)
    cli = subprocess.run([S2MC, "debug", str(program), "--max-cycles", "5000"], input="continue\nquit\n",
                         capture_output=True, text=True, timeout=60)
    assert "cycle limit of 5000" in cli.stdout + cli.stderr, cli
    assert "raise --max-cycles" in cli.stdout + cli.stderr and "Machine" not in cli.stdout + cli.stderr, cli
    _serves(api)


def test_a_run_past_the_wall_time_is_killed():
    with client(workers=1, max_cycles=1 << 60, wall_seconds=1.0) as c:
        r = c.post("/api/run", json={"source": LOOP, "language": "asm", "params": {"cores": 64}})
        _one_line(r, 408, "1 s", "stopped")
        _serves(c)


def test_a_run_past_the_memory_cap_fails_alone():
    with client(workers=1, memory_mib=64, max_mem_words=1 << 26) as c:
        r = c.post("/api/run", json={"source": SUM, "language": "asm", "params": {"mem_words": 1 << 25}})
        _one_line(r, 422, "memory")
        _serves(c)


def test_a_runaway_debugger_command_ends_its_session_only():
    with client(workers=1, max_cycles=1 << 60, wall_seconds=1.0) as c:
        sid = c.post("/api/debug", json={"source": LOOP, "language": "asm"}).json()["id"]
        _one_line(c.post(f"/api/debug/{sid}", json={"command": "continue"}), 408, "session was ended")
        _one_line(c.post(f"/api/debug/{sid}", json={"command": "step"}), 404, "session")
        _serves(c)


def test_a_flood_is_told_to_wait_and_others_are_still_served():
    slow = {"source": LOOP, "language": "asm"}
    with client(workers=1, queue=1, max_cycles=1 << 60, wall_seconds=2.0) as c:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            floods = [pool.submit(c.post, "/api/run", json=slow) for _ in range(8)]
            page = pool.submit(c.get, "/api/params")
            answers = [f.result() for f in floods]
        assert page.result().status_code == 200
        busy = [r for r in answers if r.status_code == 429]
        assert busy, [r.status_code for r in answers]
        for r in busy:
            _one_line(r, 429, "busy", "try again")
            assert int(r.headers["retry-after"]) >= 1
        # those admitted were stopped at the wall time, not the server
        assert {r.status_code for r in answers} <= {408, 429}
        _serves(c)


def test_too_many_debugging_sessions_are_told_to_wait():
    with client(sessions=1) as c:
        first = c.post("/api/debug", json={"source": SUM, "language": "asm"})
        assert first.status_code == 200
        _one_line(c.post("/api/debug", json={"source": SUM, "language": "asm"}), 429, "sessions")
        c.delete(f"/api/debug/{first.json()['id']}")
        assert c.post("/api/debug", json={"source": SUM, "language": "asm"}).status_code == 200


def test_the_token_is_required_when_set():
    with client(token="s3cret") as c:
        _one_line(c.get("/api/params"), 401, "token")
        _one_line(c.get("/api/params", headers={"Authorization": "Bearer wrong"}), 401)
        assert c.get("/api/params", headers={"Authorization": "Bearer s3cret"}).status_code == 200
        assert c.get("/").status_code == 200        # the page itself; it sends the token it was given


def test_unknown_paths_and_methods_are_one_line(api):
    _one_line(api.get("/api/nothing"), 404, "/api/nothing")
    _one_line(api.get("/api/run"), 405, "GET")
    _one_line(api.post("/api/debug/nope", json={"command": "step"}), 404, "session")
    _one_line(api.post("/api/sweep", json={"source": SUM, "language": "asm", "cores": list(range(1, 40))}), 400,
              "cores")
    _one_line(api.post("/api/timeline", json={"source": SUM, "language": "asm", "from_cycle": -1}), 400,
              "from_cycle")


def test_serve_beyond_loopback_without_a_token_refuses_to_start():
    r = subprocess.run([S2MC, "serve", "--host", "0.0.0.0"], capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "token" in r.stderr and "0.0.0.0" in r.stderr


def test_serve_with_dask_needs_a_scheduler():
    r = subprocess.run([S2MC, "serve", "--executor", "dask"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and "--scheduler" in r.stderr


def test_an_idle_debugging_session_is_closed():
    with client(idle_seconds=0.0) as c:
        first = c.post("/api/debug", json={"source": SUM, "language": "asm"}).json()["id"]
        second = c.post("/api/debug", json={"source": SUM, "language": "asm"})   # reaps the idle one
        assert second.status_code == 200
        _one_line(c.post(f"/api/debug/{first}", json={"command": "step"}), 404, "idle")


def test_a_session_the_debugger_cannot_make_is_one_line(api):
    r = api.post("/api/debug", json={"source": SUM, "language": "asm", "params": {"engine": "systemc"}})
    _one_line(r, 422, "systemc")
    _serves(api)


def test_a_session_closes_while_every_worker_is_busy():
    with client(workers=1, queue=0, max_cycles=1 << 60, wall_seconds=3.0) as c:
        sid = c.post("/api/debug", json={"source": SUM, "language": "asm"}).json()["id"]
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            for _ in range(20):     # until the runaway holds the one worker
                runaway = pool.submit(c.post, "/api/run", json={"source": LOOP, "language": "asm"})
                time.sleep(0.5)
                if not runaway.done():
                    break
            assert c.post("/api/run", json={"source": SUM, "language": "asm"}).status_code == 429
            closed = c.delete(f"/api/debug/{sid}")
            assert closed.status_code == 200 and closed.json() == {"closed": sid}
            assert runaway.result().status_code == 408
