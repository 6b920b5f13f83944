"""`s2mc serve` for a graded class (docs/server.md): an autograder that keeps its answers, an API
that only its own page can drive, students told apart by their tokens with limits of their own."""
import json
import time

import pytest

from serve_helpers import client

pytest.importorskip("fastapi")

CHECK = "/api/exercises/check"
TEACHER = {"Authorization": "Bearer the-lecturer"}
STUDENT = {"Authorization": "Bearer tuesday"}


def _quantities():
    from s2mc.experiments import lab
    return [q for _, q in lab.quantities()]


@pytest.fixture(scope="module")
def graded():
    """A class server with a shared token and a teacher token; the right values measured once."""
    with client(workers=2, token="tuesday", teacher_token="the-lecturer") as c:
        yield c


def test_a_check_tells_right_or_wrong_and_a_hint_never_the_expected_value(graded):
    qs = _quantities()
    blank = {q.name: {"predict": None, "measured": None} for q in qs}
    got = graded.post(CHECK, json={"answers": blank}, headers=STUDENT)
    assert got.status_code == 200, got.text
    for m in got.json()["marks"]:
        assert "expected" not in m and m["error"] is None, m
        assert m["hint"] and m["verdict"] in ("missing", "timing"), m
    # a wrong measurement with a prediction: told wrong, and nothing from which the value follows
    # (a prediction's error against the right value is shown only once the measurement is right)
    truths = graded.post(CHECK, json={"answers": blank}, headers=TEACHER).json()["marks"]
    right = {m["name"]: m["expected"] for m in truths}
    exact = [q for q in qs if q.exact]
    assert {q.name: right[q.name] for q in exact} == {q.name: q.truth() for q in exact}
    wrong = {q.name: {"predict": 7, "measured": right[q.name] + 1} for q in exact}
    marks = {m["name"]: m for m in graded.post(CHECK, json={"answers": wrong}, headers=STUDENT).json()["marks"]}
    for q in exact:
        m = marks[q.name]
        assert m["right"] is False and m["verdict"] == "WRONG" and m["error"] is None and "expected" not in m
        assert str(right[q.name]) not in m["hint"] and f"{right[q.name]:g}" not in m["hint"]
        assert m["measured"] == right[q.name] + 1 and m["predicted"] == 7     # the student's own, echoed
    good = {q.name: {"predict": right[q.name] * 2, "measured": right[q.name]} for q in qs}
    done = graded.post(CHECK, json={"answers": good}, headers=STUDENT).json()
    assert done["passed"] is True
    for m in done["marks"]:
        if m["right"] and right[m["name"]]:     # now the student knows the value: how far the prediction was
            assert m["error"] == pytest.approx(1.0) and "100%" in m["hint"], m


def test_only_the_teacher_token_sees_the_expected_values(graded):
    blank = {q.name: {"predict": None, "measured": None} for q in _quantities()}
    teacher = graded.post(CHECK, json={"answers": blank}, headers=TEACHER).json()
    assert all("expected" in m for m in teacher["marks"])
    assert all(m["expected"] == q.truth() for m, q in zip(teacher["marks"], _quantities()) if q.exact)
    assert graded.post(CHECK, json={"answers": blank}, headers={"Authorization": "Bearer nobody"}).status_code == 401


@pytest.mark.parametrize("body", [
    '{"answers": {"NAME": {"predict": 1, "measured": Infinity}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": NaN}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": -Infinity}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": 1e400}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": "Infinity"}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": "nan"}}}',
    '{"answers": {"NAME": {"predict": 1, "measured": 1%s}}}' % ("0" * 400),    # past a float's range
])
def test_an_answer_that_is_not_a_finite_number_is_wrong_not_an_error(graded, body):
    name = next(q.name for q in _quantities() if q.exact)
    r = graded.post(CHECK, content=body.replace("NAME", name),
                    headers={**STUDENT, "content-type": "application/json"})
    assert r.status_code == 200, r.text
    mark = next(m for m in r.json()["marks"] if m["name"] == name)
    assert mark["right"] is False and mark["verdict"] == "WRONG" and "finite" in mark["hint"], mark
    assert mark["measured"] is None and "expected" not in mark
    json.dumps(r.json(), allow_nan=False)      # the answer itself is strict JSON
    # a prediction that is not a finite number is not a prediction made
    r = graded.post(CHECK, content=body.replace("NAME", name).replace('"predict": 1, "measured"', '"predict"'),
                    headers={**STUDENT, "content-type": "application/json"})
    mark = next(m for m in r.json()["marks"] if m["name"] == name)
    assert r.status_code == 200 and mark["predicted"] is None and "finite" in mark["hint"], mark


# -- only the page drives the API ---------------------------------------------------------------------

SUM = {"source": "main()\n  print(6 * 7)\n", "params": {"cores": 1}}


@pytest.fixture(scope="module")
def loopback():
    """A server with no token (a lecturer's own machine), two debugging sessions at most."""
    with client(workers=1, sessions=2) as c:
        yield c


def _refused(r, status, *words):
    assert r.status_code == status, r.text
    text = r.json()["error"]
    assert "\n" not in text and all(w in text for w in words), text


@pytest.mark.parametrize("kind", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                                  None])
def test_the_api_takes_only_json_bodies(loopback, kind):
    headers = {} if kind is None else {"content-type": kind}
    _refused(loopback.post("/api/run", content=json.dumps(SUM), headers=headers), 415, "application/json")
    ok = loopback.post("/api/run", content=json.dumps(SUM), headers={"content-type": "application/json; charset=utf-8"})
    assert ok.status_code == 200 and ok.json()["output"] == "42\n", ok.text


@pytest.mark.parametrize("headers", [
    {"origin": "http://evil.example", "content-type": "text/plain"},          # a form or fetch from another page
    {"origin": "http://evil.example", "content-type": "application/json"},
    {"origin": "null", "content-type": "text/plain"},                          # a sandboxed frame, a file: page
    {"origin": "http://127.0.0.1:9", "content-type": "application/json"},      # another port is another site
    {"sec-fetch-site": "cross-site", "content-type": "application/json"},     # no Origin, but the browser says so
    {"host": "evil.example", "content-type": "application/json"},             # a name rebound to this machine
])
def test_a_request_from_another_site_is_refused(loopback, headers):
    for _ in range(5):      # more than the sessions there are: none is taken
        _refused(loopback.post("/api/debug", content=json.dumps(SUM), headers=headers), 403, "another")
    opened = [loopback.post("/api/debug", json=SUM) for _ in range(2)]
    assert [r.status_code for r in opened] == [200, 200], [r.text for r in opened]
    for r in opened:
        assert loopback.delete(f"/api/debug/{r.json()['id']}").status_code == 200


def test_the_pages_own_requests_pass(loopback):
    same = {"origin": str(loopback.base_url).rstrip("/"), "sec-fetch-site": "same-origin"}
    r = loopback.post("/api/run", json=SUM, headers=same)
    assert r.status_code == 200 and r.json()["output"] == "42\n", r.text
    # a server with a token answers to any name (the token is what keeps other pages out)
    with client(workers=1, token="tuesday") as c:
        r = c.post("/api/run", json=SUM, headers={**STUDENT, "host": "lab.example.edu:8000"})
        assert r.status_code == 200, r.text


# -- a roster: students told apart, with limits of their own ------------------------------------------

LOOP = {"source": ".code 0\n:loop\n  jmp loop\n", "language": "asm"}
ADA, BOB = {"Authorization": "Bearer tok-ada"}, {"Authorization": "Bearer tok-bob"}


def _class(**limits):
    return client(token="tuesday", teacher_token="the-lecturer", students={"tok-ada": "ada", "tok-bob": "bob",
                                                                           "tok-cy": "cy"}, **limits)


def test_each_student_may_have_only_a_few_jobs_and_the_others_are_still_served():
    import concurrent.futures
    with _class(workers=3, queue=8, student_jobs=1, wall_seconds=2.0, max_cycles=1 << 60) as c:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            ada = [pool.submit(c.post, "/api/run", json=LOOP, headers=ADA) for _ in range(4)]
            bob = pool.submit(c.post, "/api/run", json=SUM, headers=BOB)
            anon = pool.submit(c.post, "/api/run", json=SUM, headers=STUDENT)     # the shared token
            statuses = sorted(f.result().status_code for f in ada)
        assert statuses == [408, 429, 429, 429], statuses      # one admitted (stopped at 2 s), the rest told to wait
        for r in (f.result() for f in ada):
            if r.status_code == 429:
                _refused(r, 429, "you have 1 job", "per student")
                assert int(r.headers["retry-after"]) >= 1
        assert bob.result().status_code == 200 and bob.result().json()["output"] == "42\n"
        assert anon.result().status_code == 200
        # her job is over: she is served again
        assert c.post("/api/run", json=SUM, headers=ADA).status_code == 200


def test_a_heavy_student_leaves_a_worker_to_the_others():
    """The pool's gate, 2 workers: a student who used more than a wall time of worker time lately is
    heavy, and the heavy ones hold at most one worker: her second job waits though a worker is
    free, and another student's job takes it; when hers ends, the second goes. Anonymous jobs are
    never heavy."""
    import threading

    from s2mc.server.limits import Limits
    from s2mc.server.pool import Gate
    gate = Gate(2, Limits(wall_seconds=1.0))
    with gate.enter("bob"):
        threading.Event().wait(0.05)
    assert 0 < gate.usage("bob", time.monotonic()) < 1         # a job's worker-seconds count
    gate._usage["ada"] = (100.0, time.monotonic())              # as after 100 s of endless programs
    assert gate.heavy("ada", time.monotonic()) and not gate.heavy("bob", time.monotonic())
    order, release = [], threading.Event()

    def job(owner, tag, hold=False):
        with gate.enter(owner):
            order.append(tag)
            if hold:
                release.wait(30)
    first = threading.Thread(target=job, args=("ada", "ada 1", True))
    first.start()
    while "ada 1" not in order:
        threading.Event().wait(0.01)
    second = threading.Thread(target=job, args=("ada", "ada 2"))
    second.start()
    while len(gate._waiting) < 1:
        threading.Event().wait(0.01)
    job("bob", "bob")                        # runs at once on the free worker
    job(None, "anonymous")
    assert order == ["ada 1", "bob", "anonymous"]
    release.set()
    first.join(30)
    second.join(30)
    assert order == ["ada 1", "bob", "anonymous", "ada 2"] and gate.admitted == 0


def test_a_heavy_student_may_have_one_job_only():
    """After endless programs stopped at the wall time (more CPU time than a wall time lately: two
    on an idle machine, more where others share its CPUs), her limit of 2 jobs is 1: a second at
    once is refused, naming why; bob keeps his 2."""
    import concurrent.futures
    with _class(workers=3, student_jobs=2, wall_seconds=0.5, max_cycles=1 << 60) as c:
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            for _ in range(40):      # two at once, while she is light both run
                hers = [pool.submit(c.post, "/api/run", json=LOOP, headers=ADA) for _ in range(2)]
                statuses = sorted(f.result().status_code for f in hers)
                if statuses != [408, 408]:
                    break
            assert statuses == [408, 429]
            his = [pool.submit(c.post, "/api/run", json=LOOP, headers=BOB) for _ in range(2)]
            assert [f.result().status_code for f in his] == [408, 408]
        refused = next(f.result() for f in hers if f.result().status_code == 429)
        _refused(refused, 429, "you have 1 job", "used the workers much lately")


def test_a_heavy_students_job_runs_at_the_lowest_cpu_priority():
    """Her endless program runs in a worker niced to HEAVY_NICE (seen from outside, psutil), stopped
    at the wall time; the worker goes with it, so the next light job runs at the usual priority."""
    import asyncio

    import psutil

    from s2mc.server.limits import Limits
    from s2mc.server.pool import HEAVY_NICE, JobError, LocalPool
    pool = LocalPool(1, Limits(wall_seconds=1.0))
    pool.gate._usage["ada"] = (100.0, time.monotonic())
    seen = {}

    def workers_nice(tag):
        for p in psutil.Process().children():     # the forkserver, whose children are the workers
            try:
                for w in p.children():
                    seen.setdefault(tag, set()).add(w.nice())
            except psutil.Error:
                pass

    async def lesson():
        body = {**LOOP, "params": {"max_cycles": 1 << 60}}
        job = asyncio.ensure_future(pool.submit("run", body, 1.0, owner="ada"))
        while not job.done():
            workers_nice("ada")
            await asyncio.sleep(0.05)
        with pytest.raises(JobError):
            await job
        # the niced worker is ended with its job (asynchronously: a moment after the job's answer)
        for _ in range(200):
            seen.pop("gone", None)
            workers_nice("gone")
            if HEAVY_NICE not in seen.get("gone", set()):
                break
            await asyncio.sleep(0.05)
        assert HEAVY_NICE not in seen.get("gone", set()), "the niced worker outlived its job"
        light = asyncio.ensure_future(pool.submit("run", {**SUM, "language": "rz"}, 30.0, owner="bob"))
        while not light.done():
            workers_nice("bob")
            await asyncio.sleep(0.01)
        assert (await light)["output"] == "42\n"
    try:
        asyncio.run(lesson())
    finally:
        pool.close()
    assert HEAVY_NICE in seen["ada"] and HEAVY_NICE not in seen.get("bob", {0})


def test_each_student_may_have_only_a_few_debugging_sessions():
    with _class(workers=2, student_sessions=1) as c:
        first = c.post("/api/debug", json=SUM, headers=ADA)
        assert first.status_code == 200
        _refused(c.post("/api/debug", json=SUM, headers=ADA), 429, "you have 1 debugging session", "Stop")
        other = c.post("/api/debug", json=SUM, headers=BOB)
        assert other.status_code == 200, other.text
        # she drives her own session; another student cannot
        mine = c.post(f"/api/debug/{first.json()['id']}", json={"command": "step"}, headers=ADA)
        assert mine.status_code == 200 and mine.json()["state"]["cycle"] > 0, mine.text
        _refused(c.post(f"/api/debug/{first.json()['id']}", json={"command": "step"}, headers=BOB), 404, "session")
        assert c.delete(f"/api/debug/{first.json()['id']}", headers=ADA).status_code == 200
        assert c.post("/api/debug", json=SUM, headers=ADA).status_code == 200


def test_students_have_a_shorter_wall_time_than_the_teacher():
    with _class(workers=2, wall_seconds=1.0, teacher_wall_seconds=2.5, max_cycles=1 << 60) as c:
        assert c.get("/api/params", headers=ADA).json()["limits"]["wall_seconds"] == 1.0
        assert c.get("/api/params", headers=TEACHER).json()["limits"]["wall_seconds"] == 2.5
        _refused(c.post("/api/run", json=LOOP, headers=ADA), 408, "limit of 1 s")
        _refused(c.post("/api/run", json=LOOP, headers=TEACHER), 408, "limit of 2.5 s")


@pytest.mark.parametrize("text, words", [
    ("", ["empty", "id,name"]),
    ("name\nAda\n", [":1:", "header", "id"]),
    ("id,name,mark\nada,Ada,3\n", [":1:", "header"]),
    ("id,name\n", ["no students"]),
    ("id,name\nada,Ada\nbob\n", [":3:", "1 fields", "2"]),
    ("id,name\nada,Ada\n\nada,Ada again\n", [":4:", "'ada' is already on line 2"]),
    ("id,name\nada lovelace,Ada\n", [":2:", "letters, digits"]),
    ("id,name\nada,\"Ada\n", [":2:", "unexpected end"]),
])
def test_a_bad_roster_is_one_line_naming_its_row(tmp_path, text, words):
    from s2mc.common.errors import S2mcError
    from s2mc.server import roster
    path = tmp_path / "roster.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(S2mcError) as err:
        roster.read(path)
    assert "\n" not in str(err.value) and str(err.value).startswith(str(path)), err.value
    assert all(w in str(err.value) for w in words), err.value


# -- a debugging session lives as long as its page -----------------------------------------------------

def test_70_pages_left_or_gone_hold_no_more_than_the_cap_of_sessions():
    """70 reloads of the page: half close their session as they go (the DELETE the page sends on
    pagehide), half vanish without a word (a crash, a lost network) and stop polling. Every one can
    open its session, and afterwards no session process is left."""
    import os
    import time
    from serve_helpers import forked_pids
    # other servers' workers in this process (this module's fixtures): one reniced by an earlier test
    # is replaced on a thread of its pool, so they are counted once they hold still, and only the
    # processes that were not there then count
    before = forked_pids(os.getpid())
    for _ in range(20):
        time.sleep(0.5)
        now = forked_pids(os.getpid())
        if now == before:
            break
        before = now
    with client(workers=1, sessions=8, poll_seconds=0.4) as c:
        for i in range(70):
            deadline = time.monotonic() + 10
            while (r := c.post("/api/debug", json={**SUM, "poll": True})).status_code == 429:
                assert time.monotonic() < deadline, r.text
                time.sleep(0.1)
            assert r.status_code == 200, r.text
            assert c.get(f"/api/debug/{r.json()['id']}").status_code == 200      # the page's poll
            if i % 2:
                assert c.delete(f"/api/debug/{r.json()['id']}").status_code == 200
            assert len(forked_pids(os.getpid()) - before) <= 8 + 1      # the sessions and the one worker
        deadline = time.monotonic() + 10
        while forked_pids(os.getpid()) - before and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not forked_pids(os.getpid()) - before


def test_a_session_lives_while_its_page_polls_and_one_without_polling_is_kept():
    import time
    with client(workers=1, poll_seconds=0.4) as c:
        page = c.post("/api/debug", json={**SUM, "poll": True}).json()["id"]
        script = c.post("/api/debug", json=SUM).json()["id"]      # a client that does not poll (curl)
        for _ in range(10):
            assert c.get(f"/api/debug/{page}").status_code == 200
            time.sleep(0.1)
        assert c.post(f"/api/debug/{page}", json={"command": "step"}).status_code == 200
        assert c.post(f"/api/debug/{script}", json={"command": "step"}).status_code == 200
        time.sleep(1.2)      # the page went quiet: its session is dropped, the script's is not
        _refused(c.get(f"/api/debug/{page}"), 404, "session")
        assert c.post(f"/api/debug/{script}", json={"command": "step"}).status_code == 200
        _refused(c.post("/api/debug", json={**SUM, "poll": 1}), 400, "poll")


# -- submissions and the gradebook ---------------------------------------------------------------------

@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """(--db, the rows (student, passed) of its submissions read without SQLAlchemy): a SQLite
    file read with sqlite3, or a PostgreSQL server of the test's own read with psql."""
    if request.param == "sqlite":
        import sqlite3
        db = tmp_path / "lab.db"

        def rows():
            with sqlite3.connect(db) as conn:
                return [(s, bool(p)) for s, p in conn.execute("SELECT student, passed FROM submissions ORDER BY id")]
        yield str(db), rows
        return
    from serve_helpers import postgres
    with postgres() as (url, query):
        yield url, lambda: [(s, p == "t") for s, p in query("SELECT student, passed FROM submissions ORDER BY id")]


def test_submissions_are_kept_per_student_and_the_teacher_downloads_the_gradebook(database):
    import csv
    import io
    db, kept = database
    qs = _quantities()
    with _class(workers=2, db=str(db)) as c:
        blank = {q.name: {"predict": None, "measured": None} for q in qs}
        right = {m["name"]: m["expected"] for m in c.post(CHECK, json={"answers": blank}, headers=TEACHER).json()["marks"]}
        good = {q.name: {"predict": right[q.name], "measured": right[q.name]} for q in qs}
        assert c.post(CHECK, json={"answers": blank}, headers=ADA).status_code == 200
        assert c.post(CHECK, json={"answers": good}, headers=ADA).json()["passed"] is True
        assert c.post(CHECK, json={"answers": blank}, headers=BOB).status_code == 200
        assert c.post(CHECK, json={"answers": good}, headers=STUDENT).status_code == 200    # anonymous: not kept
        _refused(c.get("/api/gradebook.csv", headers=ADA), 403, "teacher")
        _refused(c.get("/api/gradebook.csv", headers=STUDENT), 403, "teacher")
        first = c.get("/api/gradebook.csv", headers=TEACHER)
        assert first.status_code == 200 and first.headers["content-type"].startswith("text/csv")
    # the database itself, read without the server's code: one row per submission of a roster student
    assert kept() == [("ada", False), ("ada", True), ("bob", False)]
    # a restarted server finds them all
    with _class(workers=1, db=str(db)) as c:
        again = c.get("/api/gradebook.csv", headers=TEACHER).text
    assert again == first.text
    rows = {r["id"]: r for r in csv.DictReader(io.StringIO(again))}
    assert list(rows) == ["ada", "bob", "cy"]
    exact = sum(q.exact for q in qs)
    ada, bob, cy = rows["ada"], rows["bob"], rows["cy"]
    assert (ada["submissions"], ada["passed"], ada["right"], ada["checked"]) == ("2", "True", str(exact), str(exact))
    assert ada["predictions"] == str(len(qs)) and ada["first"] <= ada["last"] and ada["last"].endswith("+00:00")
    assert (bob["submissions"], bob["passed"], bob["right"], bob["predictions"]) == ("1", "False", "0", "0")
    assert cy["submissions"] == "0" and cy["passed"] == ""
    assert {ada[q.name] for q in qs} <= {"right", "timing"} and {bob[q.name] for q in qs} <= {"missing", "timing"}


def test_without_a_database_the_gradebook_says_how_to_keep_one():
    with _class(workers=1) as c:
        _refused(c.get("/api/gradebook.csv", headers=TEACHER), 404, "--db")


def test_the_links_file_keeps_the_tokens_it_gave_and_a_foreign_file_is_refused(tmp_path):
    import stat
    from s2mc.common.errors import S2mcError
    from s2mc.server import roster
    links = tmp_path / "class.links.csv"
    first = [roster.Student("ada", "Ada"), roster.Student("bob", "Bob")]
    tokens = roster.issue(first, links)
    roster.write(links, first, tokens, ["http://10.0.0.5:8000/"])
    assert stat.S_IMODE(links.stat().st_mode) == 0o600
    # bob left, cy joined: ada and the teacher keep theirs, cy gets a new one
    again = roster.issue([first[0], roster.Student("cy")], links)
    assert again["ada"] == tokens["ada"] and again[roster.TEACHER] == tokens[roster.TEACHER]
    assert "bob" not in again and again["cy"] not in tokens.values()
    links.write_text("name,mark\nada,3\n", encoding="utf-8")
    with pytest.raises(S2mcError, match=r"class.links.csv:1: not a links file"):
        roster.issue(first, links)


def _count(n: int) -> dict:
    """A program of about 10 * n cycles whose answer is known by hand: 3 * n."""
    return {"source": f"main()\n  s = 0\n  i = 0\n  while (i < {n})\n    s = s + 3\n    i = i + 1\n  print(s)\n",
            "language": "rz", "params": {"cores": 1, "max_cycles": 1 << 40}}


def _long_job(gate):
    """The process of the job the gate has running (psutil), once it has used more than the gate's
    slice of CPU (a long job, which may be paused)."""
    import psutil
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with gate._cond:
            pids = [j._pid for j in gate._started if j._pid is not None]
        for pid in pids:
            try:
                w = psutil.Process(pid)
                if sum(w.cpu_times()[:2]) > gate.SLICE + 0.1:
                    return w
            except psutil.Error:
                pass
        time.sleep(0.01)
    raise AssertionError("no job went on for longer than a slice")


def test_a_long_job_is_paused_and_reniced_while_a_lighter_students_job_needs_its_worker():
    """One worker: ada, who used a little more CPU lately than bob, runs a long program; bob's job, which
    finds the worker busy, pauses hers (SIGSTOP, seen from outside with psutil: no CPU while he
    holds the worker) and her worker goes to the lowest priority; hers goes on when his is done,
    and her answer is still exact (3 n, by hand)."""
    import asyncio

    import psutil

    from s2mc.server.limits import Limits
    from s2mc.server.pool import HEAVY_NICE, LocalPool
    pool = LocalPool(1, Limits(wall_seconds=60.0))
    pool.gate._usage["ada"] = (0.5, time.monotonic())       # more than bob, too little to be niced yet
    pool.gate.SLICE = 0.2      # a slice that a loaded machine's CPUs give her soon
    n = 30_000_000
    seen = {}

    def bob():
        # bob's job runs in the place of ada's: hers is stopped (a signal takes a moment to land)
        deadline = time.monotonic() + 10
        while heavy.status() != psutil.STATUS_STOPPED and time.monotonic() < deadline:
            time.sleep(0.01)
        seen["state"], seen["nice"] = heavy.status(), heavy.nice()
        time.sleep(1.0)
        seen["cpu"] = sum(heavy.cpu_times()[:2])
        time.sleep(0.5)
        seen["cpu later"] = sum(heavy.cpu_times()[:2])
        return "bob's"

    async def lesson():
        nonlocal heavy
        hers = asyncio.ensure_future(pool.submit("run", _count(n), owner="ada"))
        heavy = await asyncio.get_running_loop().run_in_executor(None, _long_job, pool.gate)
        # past its slice, a long job goes behind the others on the CPUs at once, paused or not
        deadline = time.monotonic() + 10
        while heavy.nice() != HEAVY_NICE and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        seen["demoted"] = heavy.nice()
        assert await pool.blocking(bob, owner="bob") == "bob's"
        return await hers
    heavy = None
    try:
        result = asyncio.run(lesson())
    finally:
        pool.close()
    assert seen["state"] == psutil.STATUS_STOPPED and seen["cpu"] == seen["cpu later"]
    assert seen["demoted"] == seen["nice"] == HEAVY_NICE
    assert result["output"] == f"{3 * n}\n"
    assert pool.gate.admitted == 0


def test_a_paused_job_is_not_stopped_for_the_time_it_was_paused():
    """Her endless program, paused for longer than her wall time while bob holds the only worker,
    is still going when he is done (the clock stopped), and is stopped at its wall time of running
    after that (408)."""
    import asyncio

    from s2mc.server.limits import Limits
    from s2mc.server.pool import JobError, LocalPool
    wall = 6.0
    pool = LocalPool(1, Limits(wall_seconds=wall))
    pool.gate._usage["ada"] = (0.3, time.monotonic())
    pool.gate.SLICE = 0.2
    seen = {}

    async def lesson():
        hers = asyncio.ensure_future(pool.submit("run", {**LOOP, "params": {"max_cycles": 1 << 60}}, owner="ada"))
        await asyncio.get_running_loop().run_in_executor(None, _long_job, pool.gate)

        def bob():
            time.sleep(wall + 0.5)
            seen["hers done"] = hers.done()
        await pool.blocking(bob, owner="bob")
        with pytest.raises(JobError) as stopped:
            await hers
        return stopped.value
    try:
        stopped = asyncio.run(lesson())
    finally:
        pool.close()
    assert seen["hers done"] is False
    assert stopped.status == 408 and f"limit of {wall:g} s" in str(stopped)


def test_a_students_cpu_priority_falls_with_their_cpu_use_lately():
    """The niceness of a student's next job, by hand: 19 x (CPU seconds lately / wall time), whole,
    at most 19; nobody's for an anonymous job; and it comes back as the use is halved."""
    from s2mc.server.limits import Limits
    from s2mc.server.pool import HEAVY_NICE, Gate
    gate = Gate(2, Limits(wall_seconds=10.0))
    now = time.monotonic()
    for used, nice in ((0.0, 0), (0.5, 0), (1.0, 1), (5.0, 9), (10.0, 19), (100.0, 19)):
        gate._usage["ada"] = (used, now)
        assert gate.nice("ada", now) == nice, used
    assert HEAVY_NICE == 19 and gate.nice(None, now) == 0 and gate.nice("bob", now) == 0
    gate._usage["ada"] = (10.0, now)
    later = now + Gate.HALF_LIFE * 10.0           # one half-life on: 5 CPU seconds
    assert gate.nice("ada", later) == 9


def test_a_job_that_becomes_long_while_another_waits_yields_without_another_event():
    """One worker: bob's job comes while ada's is still short (under its slice), so it waits; when
    hers passes the slice, nothing starts or ends, yet the gate's watch pauses hers and his runs,
    long before hers is done (it needs several seconds more); her answer is still exact."""
    import asyncio

    from s2mc.server.limits import Limits
    from s2mc.server.pool import LocalPool
    pool = LocalPool(1, Limits(wall_seconds=60.0))
    pool.gate._usage["ada"] = (0.5, time.monotonic())
    pool.gate.SLICE = 0.3
    n = 30_000_000
    seen = {}

    async def lesson():
        hers = asyncio.ensure_future(pool.submit("run", _count(n), owner="ada"))
        while not pool.gate._started:      # hers has the worker
            await asyncio.sleep(0.001)
        seen["hers cpu when he came"] = pool.gate._started[0].cpu_now(time.monotonic())
        his = await pool.blocking(lambda: hers.done(), owner="bob")
        seen["hers done when his ran"] = his
        return await hers
    try:
        result = asyncio.run(lesson())
    finally:
        pool.close()
    assert seen["hers cpu when he came"] < pool.gate.SLICE, "hers was long already: no test of the watch"
    assert seen["hers done when his ran"] is False
    assert result["output"] == f"{3 * n}\n"


def test_a_worker_that_goes_is_replaced_before_the_next_job_needs_it():
    """A heavy student's worker is reniced, so it goes after her job; a fresh one takes its place off
    the answer's path: the next job finds a started worker at the usual priority waiting on top
    (before, an empty place: the next job waited for a worker to start)."""
    import asyncio

    import psutil

    from s2mc.server.limits import Limits
    from s2mc.server.pool import LocalPool, Worker
    pool = LocalPool(1, Limits(wall_seconds=30.0))
    pool.gate._usage["ada"] = (100.0, time.monotonic())
    try:
        assert asyncio.run(pool.submit("run", {**SUM, "language": "rz"}, owner="ada"))["output"] == "42\n"
        pool._spares.submit(lambda: None).result(30)     # the replacement is made by now
        top = pool._idle.get_nowait()
        pool._idle.put(top)
        assert isinstance(top, Worker) and top.alive
        assert psutil.Process(top.proc.pid).nice() == 0
    finally:
        pool.close()


def test_students_who_used_about_as_little_wait_in_turn_and_one_who_used_more_after_them():
    """One worker, held; then jobs arrive from cy (0.4 CPU s lately), ada (0.1), dan (3.0) and bob
    (0.2). With the 10 s wall time the first band is below 0.5 s, the next ones up to 1, 2, 4 s: cy,
    ada and bob are in the first and go in their order of arrival (by the seconds themselves, cy
    would wait for both, and for as long as lighter students kept coming); dan, in the fourth, goes
    last."""
    import threading

    from s2mc.server.limits import Limits
    from s2mc.server.pool import Gate
    gate = Gate(1, Limits(wall_seconds=10.0), pause=False)
    now = time.monotonic()
    for owner, used in (("cy", 0.4), ("ada", 0.1), ("dan", 3.0), ("bob", 0.2)):
        gate._usage[owner] = (used, now)
    assert [gate.band(o, now) for o in ("cy", "ada", "dan", "bob")] == [0, 0, 3, 0]
    assert gate.band(None, now) == 0
    for used, band in ((0.49, 0), (0.5, 1), (0.99, 1), (1.0, 2), (1.99, 2), (2.0, 3), (64.0, 8)):
        gate._usage["eve"] = (used, now)
        assert gate.band("eve", now) == band, used
    order, release, held = [], threading.Event(), threading.Event()

    def hold():
        with gate.enter("eve"):
            held.set()
            release.wait(30)

    def job(owner):
        with gate.enter(owner):
            order.append(owner)
    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(30)
    threads = []
    for owner in ("cy", "ada", "dan", "bob"):
        threads.append(threading.Thread(target=job, args=(owner,)))
        threads[-1].start()
        while len(gate._waiting) < len(threads):
            threading.Event().wait(0.005)
    release.set()
    for t in [holder, *threads]:
        t.join(30)
    assert order == ["cy", "ada", "bob", "dan"] and gate.admitted == 0


def test_a_short_job_of_a_student_a_band_heavier_yields_to_a_lighter_students():
    """One worker: dan (3 CPU s lately, a band above bob; not heavy, and his job has used no CPU)
    holds it; bob's job does not wait for dan's to end: the gate pauses dan's and bob's runs."""
    import threading

    from s2mc.server.limits import Limits
    from s2mc.server.pool import Gate
    gate = Gate(1, Limits(wall_seconds=10.0))
    gate._usage["dan"] = (3.0, time.monotonic())
    assert not gate.heavy("dan", time.monotonic())
    held, release, seen = threading.Event(), threading.Event(), {}

    def dan():
        with gate.enter("dan"):
            held.set()
            release.wait(30)
    holder = threading.Thread(target=dan)
    holder.start()
    held.wait(30)
    with gate.enter("bob"):
        seen["dan still holds"] = holder.is_alive()
    release.set()
    holder.join(30)
    assert seen["dan still holds"] and gate.admitted == 0


def test_a_job_that_ends_after_the_pool_closed_starts_no_worker():
    """A job may end after close() (its thread is not waited for): its place comes back empty, with
    no error and no new process (before, its replacement was asked of a closed executor)."""
    import psutil

    from s2mc.server.limits import Limits
    from s2mc.server.pool import LocalPool
    pool = LocalPool(1, Limits())
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    pool.close()
    pool._give_back(None)
    assert pool._idle.get_nowait() is None
    assert {p.pid for p in psutil.Process().children(recursive=True)} <= before
