"""Work that lasts in `s2mc serve` (docs/server.md, "Saved work and share links"): each one's saved
program, share links, the lecturer's progress, on SQLite and on a PostgreSQL server the test
starts itself (skipped, saying why, where none can start). Each database is also read without the
server's code (sqlite3, psql) as the independent witness of what was kept."""
import csv
import io
import json

import pytest

from serve_helpers import client

pytest.importorskip("fastapi")

TEACHER = {"Authorization": "Bearer the-lecturer"}
ADA, BOB = {"Authorization": "Bearer tok-ada"}, {"Authorization": "Bearer tok-bob"}
STUDENT = {"Authorization": "Bearer tuesday"}     # the shared token: an anonymous member of the class
ROSTER = {"tok-ada": "ada", "tok-bob": "bob", "tok-cy": "cy"}
# a program as the page sends it: parameters by name, only some of them
PROGRAM = {"source": "main()\n  print(6 * 7)\n", "language": "rz", "opt": 0,
           "params": {"cores": 3, "consistency": "tso", "mem_latency": 7}}
ASM = {"source": ".code 0\n  halt\n", "language": "asm", "opt": 1, "params": {}}


def _class(**limits):
    return client(token="tuesday", teacher_token="the-lecturer", students=ROSTER, **limits)


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    """(--db, a function that runs one SQL query on it without SQLAlchemy and gives its rows)."""
    if request.param == "sqlite":
        import sqlite3
        db = tmp_path / "lab.db"

        def query(sql):
            with sqlite3.connect(db) as conn:
                return [[str(v) for v in row] for row in conn.execute(sql)]
        yield str(db), query
        return
    from serve_helpers import postgres
    with postgres() as (url, query):
        yield url, query


def _one_line(r, status, *words):
    assert r.status_code == status, (r.status_code, r.text)
    error = r.json()["error"]
    assert "\n" not in error and "Traceback" not in error
    for w in words:
        assert w in error, error


def _saved(c, headers, browser=None):
    r = c.get("/api/work", headers=headers, params={"browser": browser} if browser else None)
    assert r.status_code == 200, r.text
    return r.json()["work"]


# -- saved work ---------------------------------------------------------------------------------------

def test_saved_work_is_each_ones_own_and_outlives_a_restart(database):
    db, query = database
    anon_a, anon_b = "a" * 16 + "-browser-1", "b" * 32
    with _class(workers=1, db=db) as c:
        assert _saved(c, ADA) is None
        assert c.post("/api/work", json=PROGRAM, headers=ADA).status_code == 200
        assert c.post("/api/work", json={**PROGRAM, "source": "// bob's\n"}, headers=BOB).status_code == 200
        assert c.post("/api/work", json={**ASM, "browser": anon_a}, headers=STUDENT).status_code == 200
        # the last save is what is kept, in place of the one before
        assert c.post("/api/work", json={**PROGRAM, "source": "// first\n"}, headers=TEACHER).status_code == 200
        assert c.post("/api/work", json=ASM, headers=TEACHER).status_code == 200
        # another browser of the anonymous class has nothing; a student of the roster needs no browser id
        assert _saved(c, STUDENT, anon_b) is None
        assert _saved(c, ADA, anon_a)["source"] == PROGRAM["source"]
        _one_line(c.get("/api/work", headers=STUDENT), 400, "browser")
        _one_line(c.get("/api/work", headers=STUDENT, params={"browser": "short"}), 400, "browser")
        _one_line(c.post("/api/work", json={**PROGRAM, "browser": "x/../y" * 4}, headers=STUDENT), 400, "browser")
    # the database itself: one row per owner, the parameters as they were named (no defaults added)
    # (the source's length: psql's rows are lines)
    rows = {r[0]: r for r in query("SELECT owner, length(source), language, opt, params FROM saved_work")}
    assert sorted(rows) == [f"browser:{anon_a}", "student:ada", "student:bob", "teacher"]
    assert json.loads(rows["student:ada"][4]) == PROGRAM["params"]
    assert rows["teacher"][1:4] == [str(len(ASM["source"])), "asm", "1"]
    # a restarted server gives each their own back, exactly
    with _class(workers=1, db=db) as c:
        for headers, browser, want in ((ADA, None, PROGRAM), (TEACHER, None, ASM), (STUDENT, anon_a, ASM)):
            got = _saved(c, headers, browser)
            assert got["saved"].endswith("+00:00")
            assert {k: got[k] for k in PROGRAM} == want
        assert _saved(c, BOB)["source"] == "// bob's\n"


def test_saves_of_one_owner_at_once_keep_one_program_and_fail_none(database):
    """Two tabs of one student save at the same moment: each save succeeds and one row is kept (a
    plain update-else-insert lets both insert on PostgreSQL, and one fails on the key)."""
    import concurrent.futures
    import threading
    from s2mc.server.work import Work
    db, query = database
    work = Work(db)
    try:
        for round_ in range(10):
            gate = threading.Barrier(6)

            def save(i):
                gate.wait()
                return work.save(f"student:s{round_}", {**PROGRAM, "source": f"// tab {i}\n"}, 100)
            with concurrent.futures.ThreadPoolExecutor(6) as pool:
                list(pool.map(save, range(6)))     # raises what a save raised
    finally:
        work.close()
    assert query("SELECT count(*), count(DISTINCT owner) FROM saved_work") == [["10", "10"]]


def test_saved_work_is_checked_as_a_run_is():
    with _class(workers=1) as c:
        _one_line(c.post("/api/work", json={**PROGRAM, "params": {"cores": 257}}, headers=ADA), 400, "cores 257")
        _one_line(c.post("/api/work", json={**PROGRAM, "language": "c"}, headers=ADA), 400, "language")
        _one_line(c.post("/api/work", json={**PROGRAM, "source": "x" * 70_000}, headers=ADA), 413, "source")
        _one_line(c.post("/api/work", json={**PROGRAM, "colour": 1}, headers=ADA), 400, "colour")
        assert _saved(c, ADA) is None
        # without --db the work is kept in memory while the server runs
        assert c.post("/api/work", json=PROGRAM, headers=ADA).status_code == 200
        assert {k: _saved(c, ADA)[k] for k in PROGRAM} == PROGRAM


# -- share links --------------------------------------------------------------------------------------

def test_a_share_link_loads_exactly_its_program_and_outlives_a_restart(database):
    db, query = database
    with _class(workers=1, db=db) as c:
        made = c.post("/api/programs", json=PROGRAM, headers=ADA)
        assert made.status_code == 201, made.text
        pid, url = made.json()["id"], made.json()["url"]
        assert url == f"http://localhost/?program={pid}"
        other = c.post("/api/programs", json=ASM, headers=STUDENT).json()["id"]
        # anyone of the class opens it (another student, the teacher); the same program, as given
        for who in (BOB, TEACHER, STUDENT):
            got = c.get(f"/api/programs/{pid}", headers=who).json()
            assert {k: got[k] for k in PROGRAM} == PROGRAM and got["id"] == pid
        assert c.get(f"/api/programs/{other}", headers=ADA).json()["source"] == ASM["source"]
        # the link is the token's business: without one, 401
        _one_line(c.get(f"/api/programs/{pid}"), 401, "token")
    assert sorted(r[0] for r in query("SELECT id FROM shared_programs")) == sorted([pid, other])
    with _class(workers=1, db=db) as c:
        got = c.get(f"/api/programs/{pid}", headers=BOB).json()
        assert {k: got[k] for k in PROGRAM} == PROGRAM


def test_share_ids_are_unguessable_and_a_bad_id_is_one_line_404():
    with _class(workers=1) as c:
        ids = [c.post("/api/programs", json=PROGRAM, headers=ADA).json()["id"] for _ in range(40)]
        # 128 random bits each, URL-safe base64: nothing in one id tells another
        assert len(set(ids)) == 40 and all(len(i) == 22 for i in ids)
        assert len({i[:4] for i in ids}) > 30
        for bad in ("nope", ids[0][:-1] + ("A" if ids[0][-1] != "A" else "B"), ids[0] + "x", "..%2F..%2Fetc",
                    "x" * 5000, "%00"):
            r = c.get(f"/api/programs/{bad}", headers=ADA)
            assert r.status_code == 404, (bad, r.text)
            assert "\n" not in r.json()["error"]


def test_share_links_and_saved_work_are_capped_in_size_and_number():
    with _class(workers=1, shared_programs=2) as c:
        _one_line(c.post("/api/programs", json={**PROGRAM, "source": "x" * 70_000}, headers=ADA), 413, "source")
        _one_line(c.post("/api/programs", json={**PROGRAM, "params": {"mem_words": 1 << 23}}, headers=ADA), 400,
                  "mem_words")
        _one_line(c.post("/api/programs", content=json.dumps(PROGRAM), headers={**ADA, "content-type": "text/plain"}),
                  415, "JSON")
        for _ in range(2):
            assert c.post("/api/programs", json=PROGRAM, headers=ADA).status_code == 201
        _one_line(c.post("/api/programs", json=PROGRAM, headers=ADA), 507, "limit of 2 shared programs")
    # and the owners of saved work: one more owner is refused, those with work still save
    with _class(workers=1, saved_work=2) as c:
        assert c.post("/api/work", json=PROGRAM, headers=ADA).status_code == 200
        assert c.post("/api/work", json={**PROGRAM, "browser": "c" * 16}, headers=STUDENT).status_code == 200
        _one_line(c.post("/api/work", json={**PROGRAM, "browser": "d" * 16}, headers=STUDENT), 507,
                  "limit of 2 owners of saved work")
        assert c.post("/api/work", json={**PROGRAM, "source": "// again\n"}, headers=ADA).status_code == 200
        assert _saved(c, ADA)["source"] == "// again\n"
        assert _saved(c, STUDENT, "d" * 16) is None
        # and the page tells the names its Download gives: the same as the server's errors name
        assert c.get("/api/params", headers=ADA).json()["files"] == {"rz": "program.rz", "asm": "program.s"}


# -- the lecturer's progress --------------------------------------------------------------------------

def test_the_lecturers_progress_is_the_gradebooks_and_only_the_teachers(tmp_path):
    from s2mc.experiments import lab
    qs = [q for _, q in lab.quantities()]
    with _class(workers=2, db=str(tmp_path / "lab.db")) as c:
        blank = {q.name: {"predict": None, "measured": None} for q in qs}
        right = {m["name"]: m["expected"] for m in
                 c.post("/api/exercises/check", json={"answers": blank}, headers=TEACHER).json()["marks"]}
        good = {q.name: {"predict": right[q.name], "measured": right[q.name]} for q in qs}
        half = {**blank, qs[0].name: {"predict": None, "measured": right[qs[0].name]}}
        assert c.post("/api/exercises/check", json={"answers": good}, headers=ADA).json()["passed"] is True
        assert c.post("/api/exercises/check", json={"answers": half}, headers=BOB).status_code == 200
        _one_line(c.get("/api/progress", headers=ADA), 403, "teacher")
        _one_line(c.get("/api/progress", headers=STUDENT), 403, "teacher")
        p = c.get("/api/progress", headers=TEACHER).json()
        book = list(csv.DictReader(io.StringIO(c.get("/api/gradebook.csv", headers=TEACHER).text)))
    assert (p["submitted"], p["passed"], p["progress_seconds"]) == (2, 1, 3.0)
    assert [s["id"] for s in p["students"]] == [r["id"] for r in book] == ["ada", "bob", "cy"]
    for s, r in zip(p["students"], book):     # the same numbers as the gradebook's CSV
        assert {k: ("" if v is None else str(v)) for k, v in s.items()} == r
    counts = {q["name"]: q["right"] for q in p["questions"]}
    assert list(counts) == [q.name for q in qs]
    assert counts[qs[0].name] == 2 and all(counts[q.name] == 1 for q in qs[1:] if q.exact)


def test_without_a_database_the_progress_says_how_to_keep_one():
    with _class(workers=1) as c:
        _one_line(c.get("/api/progress", headers=TEACHER), 404, "--db")
        assert "/static/lecturer.js" in c.get("/lecturer").text


def test_a_database_out_of_reach_is_one_line_that_keeps_its_password():
    from s2mc.common.errors import S2mcError
    from s2mc.server.database import where
    from s2mc.server.work import Work
    url = "postgresql+psycopg://lab:s3cret@/lab?host=/nonexistent"
    with pytest.raises(S2mcError) as err:
        Work(url)
    message = str(err.value)
    assert message.startswith("--db postgresql+psycopg://lab:***@/lab") and "\n" not in message
    assert "s3cret" not in message and "s3cret" not in where(url)
    assert where(None) == "in memory only: --db FILE keeps it" and where("lab.db") == "in lab.db"
