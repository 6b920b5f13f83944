"""The web application of `s2mc serve` (docs/server.md): the page, its assets and the JSON API.

    app = create_app(Settings(workers=2))      # an ASGI app: uvicorn runs it

Every answer of the API is JSON; every failure is {"error": "one line"} with a 4xx status (5xx only
for a fault of ours), and the server goes on serving the others. State-changing calls are POST (or
DELETE); a client never names a file on the server: programs travel as text, examples by name.
"""
from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles

from s2mc.common import values
from s2mc.common.errors import S2mcError
from s2mc.simulator.params import PARAMS
from s2mc.simulator.timeline import check_window

from . import exercises, jobs
from .access import Access
from .gradebook import Gradebook
from .roster import Student
from .limits import Limits
from .pool import Busy, DaskPool, JobError, LocalPool
from .sessions import Sessions
from .work import Full, Work

#: Debian's libjs-codemirror (the page's editor), or where S2MC_CODEMIRROR says; without it the
#: page falls back to a textarea.
CODEMIRROR_ENV = "S2MC_CODEMIRROR"
CODEMIRROR = "/usr/share/javascript/codemirror"
#: The environment variable that may hold the class token instead of --token.
TOKEN_ENV = "S2MC_SERVE_TOKEN"
#: ... and the one that may hold the lecturer's (--teacher-token).
TEACHER_TOKEN_ENV = "S2MC_SERVE_TEACHER_TOKEN"


@dataclass
class Settings:
    workers: int = 2
    limits: Limits = field(default_factory=Limits)
    token: str | None = None           # the shared class token: required on /api/ when set
    teacher_token: str | None = None   # the lecturer's: sees the exercises' right values
    students: dict = field(default_factory=dict)   # a roster: each student's token -> their id
    roster: list = field(default_factory=list)     # ... and its rows (roster.Student), for the gradebook
    db: str | None = None              # where submissions are kept (a file for SQLite, or a URL)
    executor: str = "local"            # local | dask
    scheduler: str | None = None       # the Dask scheduler's address


class ApiError(Exception):
    def __init__(self, status: int, message: str, headers: dict | None = None):
        super().__init__(message)
        self.status, self.headers = status, headers or {}


def _error(status: int, message: str, headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": jobs._one_line(message)}, status_code=status, headers=headers)


class BodyLimit:
    """413 for a body over the limit: by its Content-Length, and by the bytes that actually arrive
    (a chunked body has no length). Starlette has no limit of its own."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        too_big = _error(413, f"the request body is over this server's limit of {self.limit} bytes")
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await too_big(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise ApiError(413, f"the request body is over this server's limit of {self.limit} bytes")
            return message
        return await self.app(scope, counted, send)


# -- reading a request --------------------------------------------------------------------------------

class NotANumber:
    """What the body held where Python's json would make a float that is not finite (NaN,
    Infinity, 1e400): no field accepts it, so each field's own check refuses it by name."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _float(text: str):
    x = float(text)
    return x if math.isfinite(x) else NotANumber(text)


def _field(name: str, check, *args, **kwargs):
    """check(*args, **kwargs) (s2mc.common.values), a refusal as 400 naming the field."""
    try:
        return values.named(name, check, *args, **kwargs)
    except S2mcError as exc:
        raise ApiError(400, str(exc)) from None


async def _body(request: Request, required: tuple, optional: tuple = ()) -> dict:
    raw = await request.body()
    try:
        data = json.loads(raw, parse_constant=NotANumber, parse_float=_float)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"malformed JSON in the request body: {exc}") from None
    except RecursionError:
        raise ApiError(400, "malformed JSON in the request body: nested too deeply") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    known = (*required, *optional)
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise ApiError(400, f"unknown field {unknown[0]!r} (this call takes {', '.join(known)})")
    missing = [k for k in required if k not in data]
    if missing:
        raise ApiError(400, f"missing field {missing[0]!r}")
    return data


def _program(data: dict, limits: Limits) -> dict:
    """source, language, opt and the checked machine parameters of a request."""
    source, language, opt = data["source"], data.get("language", "rz"), data.get("opt", 1)
    if not isinstance(source, str):
        raise ApiError(400, "source must be a string (the program's text)")
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > limits.source_bytes:
        raise ApiError(413, f"source is {size} bytes; this server takes programs of at most {limits.source_bytes}")
    _field("language", values.choice, language, tuple(jobs.LANGUAGES))
    _field("opt", values.integer, opt, 0, 1)
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ApiError(400, "params must be an object of machine parameters")
    try:
        params = limits.machine(params)
    except S2mcError as exc:
        raise ApiError(400, f"params: {exc}") from None
    return {"source": source, "language": language, "opt": opt, "params": params}


PROGRAM_FIELDS = ("source", "language", "params", "opt")
#: an anonymous page's id of its browser (random, kept in its localStorage): whose saved work it is
BROWSER = re.compile(r"[A-Za-z0-9_-]{16,64}")


def _kept(data: dict, limits: Limits) -> dict:
    """A program to keep (saved work, a share link): checked as a run's, kept as it was given
    (its parameters as named, without the defaults a run fills in), so that it loads exactly."""
    checked = _program(data, limits)
    return {**checked, "params": data.get("params", {})}


# -- who may drive the API ----------------------------------------------------------------------------

def _media_type(headers) -> str:
    return headers.get("content-type", "").split(";", 1)[0].strip().lower()


def _host_name(host: str) -> str:
    """The name in a Host header, without its port ([::1]:8000 -> ::1)."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _from_elsewhere(headers, token_required: bool) -> str | None:
    """Why a request comes from a page of another site, or None: a browser names the page's origin
    (Origin; Sec-Fetch-Site where it leaves Origin out), and it must be this server's own (the Host
    the browser addressed). A page elsewhere could otherwise drive a server without a token with a
    text/plain POST, which needs no CORS preflight. A server without a token also answers only to
    localhost or an IP address: another site's DNS name, rebound to this machine, would make its
    page the same origin. A server with a token answers to any name; the token keeps others out."""
    host = headers.get("host", "").lower()
    origin = headers.get("origin")
    if origin is not None and origin.lower().split("://", 1)[-1] != host:
        return f"this request comes from another site's page (Origin {origin[:100]}); the API serves its own page only"
    if origin is None and headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        return "this request comes from another site's page (Sec-Fetch-Site: cross-site); the API serves its own page only"
    if not token_required:
        name = _host_name(host)
        try:
            ipaddress.ip_address(name)
        except ValueError:
            if name != "localhost":
                return (f"Host {host[:100]}: a server without a class token answers only to localhost or an IP "
                        "address (another site's name may point here)")
    return None


# -- the application ----------------------------------------------------------------------------------

def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    limits = settings.limits
    # made here, so that a scheduler out of reach is one error line before the server starts
    pool = (DaskPool(settings.workers, limits, settings.scheduler) if settings.executor == "dask"
            else LocalPool(settings.workers, limits))
    state: dict = {"pool": pool, "sessions": Sessions(pool.ctx, limits), "truths": None}
    access = Access(token=settings.token, teacher=settings.teacher_token, students=settings.students)
    jobs_of: dict[str, int] = {}       # a roster student's jobs running or waiting (the event loop's own)
    book = Gradebook(settings.db) if settings.db else None
    work = Work(settings.db)        # without --db, in this process's memory
    # the database's calls wait here, apart from the pool's closer: a slow database never holds
    # up the closing of debugging sessions
    database = ThreadPoolExecutor(max_workers=4, thread_name_prefix="s2mc-db")
    roster = settings.roster or [Student(s) for s in settings.students.values()]

    def wall(request: Request) -> float:
        """The caller's wall time of one job: the teacher's is longer than the students'."""
        return limits.teacher_wall_seconds if request.state.caller.teacher else limits.wall_seconds

    @contextlib.contextmanager
    def counted(request: Request):
        """Holds one of a roster student's Limits.student_jobs while the job runs or waits."""
        who = request.state.caller.student
        if who is None:
            yield
            return
        have = jobs_of.get(who, 0)
        # a heavy student (the pool's gate: much CPU time lately) keeps one job, not a queue's worth
        heavy = pool.gate.heavy(who, time.monotonic())
        if have >= (1 if heavy else limits.student_jobs):
            raise Busy(f"busy: you have {have} job{'s' * (have != 1)} running or waiting, this server's limit per "
                       f"student{' who used the workers much lately' if heavy else ''}; "
                       f"try again in {limits.retry_after} s", limits.retry_after)
        jobs_of[who] = have + 1
        try:
            yield
        finally:
            jobs_of[who] -= 1
            if not jobs_of[who]:
                del jobs_of[who]

    async def stored(fn, *args):
        """A call of the database, off the event loop."""
        return await asyncio.get_running_loop().run_in_executor(database, fn, *args)

    def owner(request: Request, browser) -> str:
        """Whose saved work a request names: a student of the roster or the teacher by their token;
        an anonymous page by its browser's id."""
        caller = request.state.caller
        if caller.teacher:
            return "teacher"
        if caller.student is not None:
            return f"student:{caller.student}"
        if not isinstance(browser, str) or not BROWSER.fullmatch(browser):
            raise ApiError(400, "browser: an anonymous page names its browser's id, 16 to 64 letters, digits, "
                                "'_' or '-'")
        return f"browser:{browser}"

    def teacher_book(request: Request) -> Gradebook:
        if not request.state.caller.teacher:
            raise ApiError(403, "the gradebook is the teacher's: call with the teacher token")
        if book is None:
            raise ApiError(404, "this server keeps no submissions: start it with --db FILE")
        return book

    async def submit(request: Request, name: str, data: dict, seconds: float | None = None):
        with counted(request):
            return await pool.submit(name, data, seconds or wall(request), owner=request.state.caller.student)

    async def reaper():
        """Closes the sessions whose page went away without a word, while nobody opens one."""
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(min(limits.poll_seconds, limits.idle_seconds) / 2 + 0.05)
            await loop.run_in_executor(pool.closer, state["sessions"].reap)

    @asynccontextmanager
    async def lifespan(app):
        task = asyncio.create_task(reaper())
        try:
            yield
        finally:
            task.cancel()
            state["sessions"].close_all()
            pool.close()
            database.shutdown(wait=True, cancel_futures=True)
            if book is not None:
                book.close()
            work.close()

    app = FastAPI(title="s2mc", lifespan=lifespan, docs_url=None, redoc_url=None, openapi_url=None)
    app.add_middleware(BodyLimit, limit=limits.body_bytes)
    static = resources.files(__package__).joinpath("static")

    @app.exception_handler(ApiError)
    async def api_error(request, exc: ApiError):
        return _error(exc.status, str(exc), exc.headers)

    @app.exception_handler(JobError)
    async def job_error(request, exc: JobError):
        return _error(exc.status, str(exc))

    @app.exception_handler(Full)
    async def full(request, exc: Full):
        return _error(507, str(exc))

    @app.exception_handler(Busy)
    async def busy(request, exc: Busy):
        return _error(429, str(exc), {"Retry-After": str(exc.retry_after)})

    @app.exception_handler(404)
    async def not_found(request, exc):
        return _error(404, f"no such page: {request.url.path[:100]}")

    @app.exception_handler(405)
    async def not_allowed(request, exc):
        return _error(405, f"{request.method} is not allowed on {request.url.path[:100]}")

    @app.exception_handler(Exception)
    async def internal(request, exc):
        return _error(500, f"internal error: {type(exc).__name__}: {exc}")

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if request.url.path.startswith("/api/"):
            refused = _from_elsewhere(request.headers, access.required)
            if refused:
                return _error(403, refused)
            given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
            request.state.caller = access.caller(given)
            if request.state.caller is None:
                return _error(401, "this server needs the class token (the page's address ?token=..., "
                                   "or the header Authorization: Bearer TOKEN)")
            if request.method == "POST" and _media_type(request.headers) != "application/json":
                return _error(415, "the API takes only JSON bodies: send the header "
                                   "Content-Type: application/json")
        try:
            return await call_next(request)
        except ApiError as exc:   # raised while the body was read (BodyLimit)
            return _error(exc.status, str(exc), exc.headers)

    # -- the page -------------------------------------------------------------------------------
    @app.get("/", response_class=HTMLResponse)
    async def page():
        return HTMLResponse(static.joinpath("index.html").read_text(encoding="utf-8"))

    app.mount("/static", StaticFiles(directory=str(static)), name="static")
    codemirror = Path(os.environ.get(CODEMIRROR_ENV, CODEMIRROR))
    if codemirror.is_dir():
        app.mount("/vendor/codemirror", StaticFiles(directory=str(codemirror), follow_symlink=True),
                  name="codemirror")

    # -- what the page shows --------------------------------------------------------------------
    @app.get("/api/examples")
    async def examples():
        from s2mc.workloads.examples import all_examples
        return [{"name": e.name, "language": "asm" if e.folder == "asm" else "rz", "description": e.description,
                 "source": e.path.read_text(encoding="utf-8")} for e in all_examples()]

    @app.get("/api/params")
    async def params(request: Request):
        from s2mc.compiler.lexer import KEYWORDS
        caps = {"cores": limits.max_cores, "max_cycles": limits.max_cycles, "mem_words": limits.max_mem_words}
        out = []
        for p in PARAMS.values():
            top = min(p.max, caps[p.name]) if p.name in caps else p.max
            default = min(p.default, top) if p.type == "int" else p.default
            out.append({"name": p.name, "flag": p.flag, "type": p.type, "default": default, "min": p.min,
                        "max": top, "choices": list(p.choices), "unit": p.unit, "help": p.help})
        return {"params": out, "limits": {"source_bytes": limits.source_bytes, "wall_seconds": wall(request),
                                          "poll_seconds": limits.poll_seconds,
                                          "sweep_points": limits.sweep_points},
                "languages": {k: v[0] for k, v in jobs.LANGUAGES.items()},
                "files": {k: v[1] for k, v in jobs.LANGUAGES.items()},    # what Download names a program
                "rz_keywords": sorted(KEYWORDS)}

    # -- the jobs -------------------------------------------------------------------------------
    @app.post("/api/run")
    async def run(request: Request):
        data = _program(await _body(request, ("source",), PROGRAM_FIELDS[1:]), limits)
        return await submit(request, "run", data)

    @app.post("/api/compile")
    async def compile_(request: Request):
        data = _program(await _body(request, ("source",), ("language", "opt")), limits)
        del data["params"]
        return await submit(request, "compile", data)

    @app.post("/api/sweep")
    async def sweep(request: Request):
        body = await _body(request, ("source", "cores"), PROGRAM_FIELDS[1:])
        cores = body.pop("cores")
        if not isinstance(cores, list) or not 1 <= len(cores) <= limits.sweep_points:
            raise ApiError(400, f"cores must be a list of 1..{limits.sweep_points} core counts")
        for i, n in enumerate(cores):
            _field(f"cores[{i}]", values.integer, n, 1, limits.max_cores)
        data = _program(body, limits)
        return await submit(request, "sweep", {**data, "cores": cores})

    @app.post("/api/timeline")
    async def timeline(request: Request):
        body = await _body(request, ("source",), (*PROGRAM_FIELDS[1:], "from_cycle", "to_cycle", "mark_cycle"))
        window = {k: body.pop(k) for k in ("from_cycle", "to_cycle") if k in body}
        if "mark_cycle" in body:      # the page's debugger's cycle, drawn as a line
            window["mark_cycle"] = _field("mark_cycle", values.integer, body.pop("mark_cycle"), 0,
                                          PARAMS["max_cycles"].max)
        for k, v in window.items():
            if v is None:
                raise ApiError(400, f"{k}: null is not a cycle number (leave the field out for its default)")
        try:
            check_window(window.get("from_cycle", 0), window.get("to_cycle"))
        except S2mcError as exc:
            raise ApiError(400, str(exc)) from None
        data = _program(body, limits)
        return await submit(request, "timeline", {**data, **window})

    # -- debugging ------------------------------------------------------------------------------
    @app.post("/api/debug")
    async def debug_open(request: Request):
        body = await _body(request, ("source",), (*PROGRAM_FIELDS[1:], "poll"))
        poll = body.pop("poll", False)
        if not isinstance(poll, bool):
            raise ApiError(400, "poll must be true or false (true: the caller polls GET /api/debug/ID)")
        data = _program(body, limits)
        sessions, owner, seconds = state["sessions"], request.state.caller.student, wall(request)
        with counted(request):
            return await pool.blocking(lambda: sessions.open(owner=owner, seconds=seconds, poll=poll, **data),
                                       owner=owner)

    @app.get("/api/debug/{sid}")
    async def debug_poll(sid: str, request: Request):
        # the page's "still here", every few seconds while it shows the session
        state["sessions"].get(sid, request.state.caller.student).touch()
        return {"id": sid, "poll_seconds": limits.poll_seconds}

    @app.post("/api/debug/{sid}")
    async def debug_command(sid: str, request: Request):
        body = await _body(request, ("command",))
        line = body["command"]
        if not isinstance(line, str) or len(line) > 1000 or "\n" in line:
            raise ApiError(400, "command must be one line of text (at most 1000 characters)")
        sessions = state["sessions"]
        owner = request.state.caller.student
        sessions.get(sid, owner)      # 404 at once, before taking a worker
        with counted(request):
            return await pool.blocking(sessions.command, sid, line, owner, owner=owner)

    @app.delete("/api/debug/{sid}")
    async def debug_close(sid: str, request: Request):
        # off the event loop, and outside the gate: closing a session is always possible
        await asyncio.get_running_loop().run_in_executor(pool.closer, state["sessions"].close, sid,
                                                         request.state.caller.student)
        return {"closed": sid}

    # -- exercises ------------------------------------------------------------------------------
    @app.get("/api/exercises")
    async def exercise_list():
        return {"sections": exercises.listing()}

    @app.post("/api/exercises/check")
    async def exercise_check(request: Request):
        body = await _body(request, ("answers",))
        if not isinstance(body["answers"], dict):
            raise ApiError(400, "answers must be an object: {name: {predict, measured}}")
        try:
            exercises.answers(body["answers"])     # a bad form is refused before any measurement
        except S2mcError as exc:
            raise ApiError(400, str(exc)) from None
        if state["truths"] is None:    # measured once, in a worker like any run, then kept
            state["truths"] = await submit(request, "truths", {}, seconds=max(120.0, wall(request)))
        caller = request.state.caller
        graded = exercises.grade(body["answers"], state["truths"], teacher=caller.teacher)
        if book is not None and caller.student is not None:
            await stored(book.record, caller.student, graded)
        return graded

    @app.get("/api/gradebook.csv")
    async def gradebook(request: Request):
        text = await stored(teacher_book(request).csv, roster)
        return Response(text, media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="gradebook.csv"'})

    @app.get("/api/progress")
    async def progress(request: Request):
        # the lecturer's page asks every progress_seconds: the submissions as they are now
        out = await stored(teacher_book(request).progress, roster)
        return {**out, "progress_seconds": limits.progress_seconds}

    @app.get("/lecturer", response_class=HTMLResponse)
    async def lecturer():
        return HTMLResponse(static.joinpath("lecturer.html").read_text(encoding="utf-8"))

    # -- work that lasts: each one's saved program, and share links -----------------------------
    @app.get("/api/work")
    async def work_load(request: Request, browser: str | None = None):
        return {"work": await stored(work.load, owner(request, browser))}

    @app.post("/api/work")
    async def work_save(request: Request):
        body = await _body(request, ("source",), (*PROGRAM_FIELDS[1:], "browser"))
        who = owner(request, body.pop("browser", None))
        return {"saved": await stored(work.save, who, _kept(body, limits), limits.saved_work)}

    @app.post("/api/programs", status_code=201)
    async def share(request: Request):
        program = _kept(await _body(request, ("source",), PROGRAM_FIELDS[1:]), limits)
        pid = await stored(work.share, program, limits.shared_programs)
        return {"id": pid, "url": f"{request.base_url}?program={pid}"}

    @app.get("/api/programs/{pid}")
    async def shared(pid: str):
        program = await stored(work.shared, pid)
        if program is None:
            raise ApiError(404, f"no shared program {pid[:40]!r}: check the link")
        return program

    return app

