"""The JSON API of `s2mc serve` (docs/server.md), in-process: every answer checked against an
independent path to the same fact (the `s2mc` commands, the assembler's symbols, the declaration
of the parameters, the lab's own marking)."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from s2mc.isa import assemble
from s2mc.simulator.params import PARAMS
from s2mc.workloads.examples import all_examples

from serve_helpers import REPO, S2MC, client, example

pytest.importorskip("fastapi")


@pytest.fixture(scope="module")
def api():
    with client(workers=2) as c:
        yield c


def _cli_json(*args: str):
    out = subprocess.run([S2MC, "run", *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _page_sweep_cores() -> list[int]:
    """The core counts the page's Stalls-vs-cores tab sweeps before anyone changes its field."""
    page = (REPO / "server" / "static" / "index.html").read_text(encoding="utf-8")
    top = int(re.search(r'id="sweep-max"[^>]*value="(\d+)"', page)[1])
    return list(range(1, top + 1))


@pytest.fixture(scope="module")
def defaults():
    """A server at its default caps; only the wall time is raised, since that measures this shared
    machine's speed, not the program (bench/bench_serve.py and docs/benchmarks.md time it)."""
    with client(workers=2, wall_seconds=300.0) as c:
        yield c


@pytest.mark.parametrize("name", [e.name for e in all_examples()])
def test_every_example_runs_at_the_servers_defaults(defaults, name):
    """Each bundled example, at the page's default machine, runs and sweeps the page's default core
    counts (1..8) within the server's default cycle cap: fib.rz on 8 cores needs 22.4 M cycles."""
    from s2mc.server.limits import Limits
    language = "rz" if name.endswith(".rz") else "asm"
    body = {"source": example(name), "language": language}
    r = defaults.post("/api/run", json=body)
    assert r.status_code == 200, r.text
    r = defaults.post("/api/sweep", json={**body, "cores": _page_sweep_cores()})
    assert r.status_code == 200, r.text
    assert max(run["cycles"] for run in r.json()["runs"]) <= Limits().max_cycles


def test_params_are_every_declared_parameter(api):
    got = api.get("/api/params").json()
    assert [p["name"] for p in got["params"]] == list(PARAMS)
    by = {p["name"]: p for p in got["params"]}
    assert by["arbitration"]["choices"] == list(PARAMS["arbitration"].choices)
    assert by["mem_latency"]["max"] == PARAMS["mem_latency"].max
    # the server's caps are tighter than the declaration, and the page's defaults within them
    assert by["max_cycles"]["max"] < PARAMS["max_cycles"].max
    assert by["max_cycles"]["default"] <= by["max_cycles"]["max"]


def test_examples_are_the_bundled_ones(api):
    from s2mc.workloads.examples import all_examples
    got = api.get("/api/examples").json()
    assert [e["name"] for e in got] == [e.name for e in all_examples()]
    assert {e["language"] for e in got} == {"asm", "rz"}
    assert next(e for e in got if e["name"] == "fib.rz")["source"] == example("fib.rz")


@pytest.mark.parametrize("name, params, flags", [
    ("parallel_sum.s", {"cores": 4, "mem_latency": 3}, ["--cores", "4", "--mem-latency", "3"]),
    ("spinlock.rz", {"cores": 2, "arbitration": "round_robin"}, ["--cores", "2", "--arbitration", "round_robin"]),
])
def test_run_answers_what_s2mc_run_json_prints(api, name, params, flags):
    language = "rz" if name.endswith(".rz") else "asm"
    got = api.post("/api/run", json={"source": example(name), "language": language, "params": params})
    assert got.status_code == 200, got.text
    assert got.json() == _cli_json(name, *flags)


def test_run_at_O0_is_the_cli_at_O0(api):
    got = api.post("/api/run", json={"source": example("fib.rz"), "language": "rz", "opt": 0}).json()
    assert got == _cli_json("fib.rz", "-O", "0")


def test_compile_lists_the_programs_instructions(api, tmp_path):
    source = example("spin_lock.s")
    got = api.post("/api/compile", json={"source": source, "language": "asm"}).json()
    program = assemble(source, "x.s")
    assert len(got["instructions"]) == program.top("code")
    assert got["labels"]["acquire"] == program.symbols["acquire"].value
    # the listing `s2mc asm --listing` prints for the same words
    listing = subprocess.run([S2MC, "asm", "spin_lock.s", "-o", str(tmp_path / "x.obj"), "--listing"],
                             capture_output=True, text=True, check=True).stdout
    code = [line.split(None, 3) for line in listing.splitlines() if line.startswith("code")]
    assert [(int(c[1]), c[3]) for c in code] == [(i["pc"], i["text"]) for i in got["instructions"]]


def test_compile_of_rz_gives_the_assembly_s2mc_compile_writes(api):
    got = api.post("/api/compile", json={"source": example("sum.rz"), "language": "rz"}).json()
    text = subprocess.run([S2MC, "compile", "sum.rz", "-o", "-"], capture_output=True, text=True,
                          check=True).stdout
    # the same instructions (the page's assembly may carry the line table's directives besides)
    program = assemble(text, "sum.s")
    assert [i["pc"] for i in got["instructions"]] == list(range(program.top("code")))


def test_sweep_is_one_run_per_core_count(api):
    source = example("parallel_sum.s")
    got = api.post("/api/sweep", json={"source": source, "language": "asm", "cores": [1, 2, 4],
                                       "params": {"mem_latency": 2}}).json()
    every = _cli_json("parallel_sum.s", "--cores", "1,2,4")
    assert [r["cores"] for r in got["runs"]] == [1, 2, 4]
    assert [(r["cycles"], r["stall_cycles"]) for r in got["runs"]] == [(e["cycles"], e["stall_cycles"]) for e in every]
    assert got["work_per_core"] is False                      # fixed work: the page shows a speedup


@pytest.mark.parametrize("name,language", [("spin_lock.s", "asm"), ("spinlock.rz", "rz")])
def test_sweep_says_when_the_work_grows_with_the_cores(api, name, language):
    # the lock programs' every core does the same increments: the page shows a time ratio, as the CLI does
    got = api.post("/api/sweep", json={"source": example(name), "language": language, "cores": [1, 2],
                                       "params": {}}).json()
    assert got["work_per_core"] is True
    assert "time vs 1c" in subprocess.run([S2MC, "run", name, "--cores", "1,2"], capture_output=True, text=True,
                                          check=True).stderr


def test_timeline_is_the_page_s2mc_run_writes(api, tmp_path):
    page = tmp_path / "t.html"
    subprocess.run([S2MC, "run", "barrier.s", "--cores", "2", "--timeline", str(page)], capture_output=True,
                   check=True)
    got = api.post("/api/timeline", json={"source": example("barrier.s"), "language": "asm",
                                          "params": {"cores": 2}}).json()
    assert got["html"] == page.read_text(encoding="utf-8")


def test_a_compile_error_names_the_line(api):
    got = api.post("/api/run", json={"source": "x = ;\n", "language": "rz"})
    assert got.status_code == 422
    assert got.json()["error"].startswith("program.rz:1:")


def test_a_debug_session_steps_and_stops_at_a_breakpoint(api):
    source = example("spin_lock.s")
    acquire = assemble(source, "x.s").symbols["acquire"].value
    first = api.post("/api/debug", json={"source": source, "language": "asm", "params": {"cores": 2}})
    assert first.status_code == 200, first.text
    sid, st = first.json()["id"], first.json()["state"]
    assert st["cycle"] == 0 and len(st["cores"]) == 2 and len(st["cores"][1]["registers"]) == 32

    def cmd(line):
        r = api.post(f"/api/debug/{sid}", json={"command": line})
        assert r.status_code == 200, r.text
        return r.json()

    stepped = cmd("step 3")
    assert stepped["state"]["cycle"] == 3
    hit = cmd("break acquire core 1")
    assert any("breakpoint 1" in line["text"] for line in hit["output"])
    assert hit["state"]["breakpoints"][0]["pc"] == acquire
    stop = cmd("continue")
    assert stop["state"]["cores"][1]["pc"] == acquire
    assert stop["state"]["current_core"] == 1
    bad = cmd("frobnicate")
    assert bad["output"][0]["stream"] == "err" and "frobnicate" in bad["output"][0]["text"]
    assert api.delete(f"/api/debug/{sid}").status_code == 200
    gone = api.post(f"/api/debug/{sid}", json={"command": "step"})
    assert gone.status_code == 404 and "session" in gone.json()["error"]


def test_exercises_are_the_labs_and_a_blank_answer_fails(api):
    from s2mc.experiments import lab
    listing = api.get("/api/exercises").json()["sections"]
    assert [q["name"] for s in listing for q in s["quantities"]] == [q.name for _, q in lab.quantities()]
    blank = {q.name: {"predict": None, "measured": None} for _, q in lab.quantities()}
    got = api.post("/api/exercises/check", json={"answers": blank}).json()
    assert got["passed"] is False and got["right"] == 0
    empty = api.post("/api/exercises/check", json={"answers": {}}).json()
    assert empty["passed"] is False
    # the right answers, measured by the lab itself, pass
    right = {q.name: {"predict": q.truth(), "measured": q.truth()} for _, q in lab.quantities()}
    good = api.post("/api/exercises/check", json={"answers": right}).json()
    exact = sum(q.exact for _, q in lab.quantities())
    assert good["passed"] is True and good["right"] == good["checked"] == exact
    assert good["summary"] == f"{exact}/{exact} measurements right; {len(right)}/{len(right)} predictions made"
    # one wrong measurement fails the whole
    name = next(q.name for _, q in lab.quantities() if q.exact)
    wrong = {**right, name: {"predict": 1, "measured": right[name]["measured"] + 1}}
    assert api.post("/api/exercises/check", json={"answers": wrong}).json()["passed"] is False


def test_the_docs_give_the_limits_the_server_has():
    from s2mc.server.limits import Limits
    text = (Path(__file__).resolve().parent.parent / "docs" / "server.md").read_text(encoding="utf-8")
    table = text[text.index("| cap | default |"):]
    table = table[:table.index("\n\n")]
    rows = {line.split("|")[1].strip(): line.split("|")[2].strip() for line in table.splitlines()[2:]}
    d = Limits()
    assert rows["request body"] == f"{d.body_bytes // 1024} KiB"
    assert rows["program text"] == f"{d.source_bytes // 1024} KiB"
    assert rows["cores"].startswith(f"{d.max_cores} ")
    assert rows["cycles"] == f"{d.max_cycles:,}"
    assert rows["simulated memory"] == f"2^{d.max_mem_words.bit_length() - 1} words ({d.max_mem_words * 4 >> 20} MiB)"
    assert rows["wall time of a run, sweep, timeline or debugger command"] == f"{d.wall_seconds:g} s"
    assert rows["memory a worker may add"] == f"{d.memory_mib} MiB"
    assert rows["jobs waiting"] == f"{d.queue}"
    assert rows["the same for the teacher's token"] == f"{d.teacher_wall_seconds:g} s"
    assert rows["jobs of one student of the roster, running or waiting"] == f"{d.student_jobs}"
    assert rows["debugging sessions of one student of the roster"] == f"{d.student_sessions}"
    assert rows["a page's session without a poll"] == f"{d.poll_seconds:g} s"
    assert rows["connections from one address"] == f"{d.connections_per_address}"
    assert rows["a request's header"] == f"{d.header_seconds:g} s"
    assert rows["a request's body after its header"] == f"{d.body_seconds:g} s"
    assert rows["debugging sessions"] == f"{d.sessions}"
    assert rows["a session's checkpoints for reverse stepping"] == f"{d.history_mib} MiB"
    assert f"Retry-After: {d.retry_after}" in table and f"idle for {d.idle_seconds / 60:g} minutes" in table


def test_the_rz_to_assembly_view_maps_each_line_to_its_instructions(api):
    source = example("sum.rz")
    got = api.post("/api/compile", json={"source": source, "language": "rz"}).json()
    if not got["line_table"]:
        pytest.skip("this compiler keeps no line table")
    lines = source.splitlines()
    mapped = [i for i in got["instructions"] if i["line"]]
    assert mapped and all(1 <= i["line"] <= len(lines) and lines[i["line"] - 1].strip() for i in mapped)
    # `data[i] = i + 1` (line 12) is the one store into data; `print(...)` (line 28) traps
    store = [i["text"] for i in got["instructions"] if i["line"] == 12]
    assert any(t.startswith("st ") and "@" in t for t in store), store
    assert any(t.startswith("trap") for t in (i["text"] for i in got["instructions"] if i["line"] == 28))
    # the same instructions as without the line table (s2mc compile)
    plain = subprocess.run([S2MC, "compile", "sum.rz", "-o", "-"], capture_output=True, text=True, check=True).stdout
    program = assemble(plain, "sum.s")
    from s2mc.isa import disassemble_word
    assert [i["text"] for i in got["instructions"]] == [disassemble_word(w) for w in program.code_image]


def test_a_debug_session_stops_at_an_rz_line_and_steps_back(api):
    source = example("sum.rz")
    rows = api.post("/api/compile", json={"source": source, "language": "rz"}).json()["instructions"]
    line12 = {i["pc"] for i in rows if i["line"] == 12}
    sid = api.post("/api/debug", json={"source": source, "language": "rz", "params": {"cores": 2}}).json()["id"]

    def cmd(line):
        r = api.post(f"/api/debug/{sid}", json={"command": line})
        assert r.status_code == 200, r.text
        return r.json()

    cmd("break program.rz:12")
    stop = cmd("continue")["state"]
    core = stop["cores"][stop["current_core"]]
    assert core["line"] == 12 and core["pc"] in line12 and core["function"] == "main"
    back = cmd("reverse-step")["state"]
    assert back["cycle"] < stop["cycle"] and back["cores"][back["current_core"]]["line"] != 12
    again = cmd("")["state"]          # an empty line repeats the last command, as Enter does
    assert again["cycle"] < back["cycle"]
    listing = cmd("list 12")["output"]
    assert any("data[i] = i + 1" in line["text"] for line in listing)   # the text sent, not a file
    assert cmd("quit")["ended"] is True
    assert api.post(f"/api/debug/{sid}", json={"command": "step"}).status_code == 404


def test_the_docs_example_answers_what_the_docs_say(api):
    text = (Path(__file__).resolve().parent.parent / "docs" / "server.md").read_text(encoding="utf-8")
    body = json.loads(text.split("-d '", 1)[1].split("'", 1)[0])
    said = text.split("answers `", 1)[1].split(", ...}`", 1)[0] + "}"
    got = api.post("/api/run", json=body).json()
    assert {k: got[k] for k in json.loads(said)} == json.loads(said)


def test_the_test_client_loads_without_a_deprecation_warning():
    """Starlette's TestClient deprecates plain httpx for httpx2 (what `make setup` installs): loading it, as
    every server test does, prints no StarletteDeprecationWarning."""
    import sys
    proc = subprocess.run([sys.executable, "-W", "always", "-c", "import fastapi.testclient"], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0 and "DeprecationWarning" not in proc.stderr, proc.stderr


def test_a_debug_sessions_state_has_each_cores_cache_lines(api):
    """The state's caches are the lines `cache` prints (the debugger's own text, parsed here):
    false_sharing.s on 2 cores with MESI after 300 cycles; none on a machine without caches."""
    body = {"source": example("false_sharing.s"), "language": "asm", "params": {"cores": 2, "cache": "mesi"}}
    sid = api.post("/api/debug", json=body).json()["id"]
    got = api.post(f"/api/debug/{sid}", json={"command": "tick 300"}).json()["state"]["caches"]
    printed = api.post(f"/api/debug/{sid}", json={"command": "cache"}).json()["output"]
    api.delete(f"/api/debug/{sid}")
    want, core = [[], []], None
    for line in (o["text"] for o in printed):
        if line.startswith("core "):
            core = int(line.split()[1].rstrip(":"))
        else:   # "  set S way W  line BASE LABEL STATE  WORDS..."
            f = line.split()
            want[core].append({"set": int(f[1]), "way": int(f[3]), "line": int(f[5]), "where": f[6], "state": f[7]})
    assert any(want) and got["cores"] == want
    assert (got["protocol"], got["lines"], got["ways"], got["line_words"]) == \
        ("mesi", PARAMS["cache_lines"].default, PARAMS["cache_ways"].default, PARAMS["line_words"].default)
    plain = api.post("/api/debug", json={**body, "params": {"cores": 2}}).json()
    api.delete(f"/api/debug/{plain['id']}")
    assert plain["state"]["caches"] is None


def test_the_timeline_marks_a_cycle_when_asked(api):
    """mark_cycle (the page's debugger's cycle) goes into the page's data; without it there is none;
    a bad one is refused by name."""
    body = {"source": example("barrier.s"), "language": "asm", "params": {"cores": 2}}
    data = re.compile(r'<script type="application/json" id="data">(.*?)</script>', re.S)
    marked = api.post("/api/timeline", json={**body, "mark_cycle": 40}).json()["html"]
    assert json.loads(data.search(marked)[1].replace("<\\/", "</"))["mark"] == 40
    plain = api.post("/api/timeline", json=body).json()["html"]
    assert json.loads(data.search(plain)[1].replace("<\\/", "</"))["mark"] is None
    for bad in (-1, "40", None, 1.5):
        r = api.post("/api/timeline", json={**body, "mark_cycle": bad})
        assert r.status_code == 400 and r.json()["error"].startswith("mark_cycle"), r.text
