"""Helpers of the `s2mc serve` tests: an app in-process (TestClient), a real server on a free port
that is always stopped with everything it started, and the examples' texts."""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parent.parent
S2MC = str(Path(sys.executable).with_name("s2mc"))


def example(name: str) -> str:
    from s2mc.workloads.examples import find
    return find(name).path.read_text(encoding="utf-8")


@contextlib.contextmanager
def client(**limits):
    """A TestClient of an app with these limits (and workers=, token= when given)."""
    from fastapi.testclient import TestClient

    from s2mc.server.app import Settings, create_app
    from s2mc.server.limits import Limits
    settings = {k: limits.pop(k) for k in ("workers", "token", "teacher_token", "students", "db", "executor", "scheduler") if k in limits}
    app = create_app(Settings(limits=Limits().replace(**limits), **settings))
    # the address a browser on this machine uses: a server without a token answers to no other name
    with TestClient(app, raise_server_exceptions=False, base_url="http://localhost") as c:
        yield c


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


@contextlib.contextmanager
def live_server(*args: str, ready_seconds: float = 60, info: dict | None = None, port: int | None = None,
                cwd=None):
    """`s2mc serve --port FREE ARGS` (or that `port`: a server started again where a page had it)
    in its own process group (in the folder `cwd` when given); yields its base URL (and, in `info`
    when given, the line it starts with as "banner" and its process id as "pid"). On the way out
    the server is stopped (SIGINT, as Ctrl-C) and its process group must be empty: no worker, no
    forkserver left behind (killed, and the test fails, if one is)."""
    port = port or free_port()
    proc = subprocess.Popen([S2MC, "serve", "--port", str(port), *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True, cwd=cwd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_seconds
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"s2mc serve exited with {proc.returncode}: {proc.stdout.read()}")
            try:
                if httpx2.get(url + "/", timeout=2).status_code == 200:
                    break
            except httpx2.TransportError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError("s2mc serve did not answer in time")
            time.sleep(0.2)
        if info is not None:
            info.update(banner=proc.stdout.readline(), pid=proc.pid)    # printed before it answers
        yield url
    finally:
        leftover = False
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        deadline = time.monotonic() + 10
        while _group_alive(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        if _group_alive(proc.pid):
            leftover = True
            os.killpg(proc.pid, signal.SIGKILL)
        proc.stdout.close()
        assert not leftover, "s2mc serve left processes behind"


def forked(pid: int) -> int:
    """How many live processes the forkserver under process `pid` holds now: its workers and
    debugging sessions (each a process of its own; a killed one, not yet collected, is not live)."""
    return len(forked_pids(pid))


def forked_pids(pid: int) -> set[int]:
    """The process ids of those live processes (to tell a test's own from other servers' in the
    same process, which may start or end meanwhile)."""
    import psutil

    def live(p) -> bool:
        try:
            return p.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False
    found = set()
    for p in psutil.Process(pid).children(recursive=True):
        try:
            if "forkserver" in " ".join(p.cmdline()):
                found |= {c.pid for c in p.children() if live(c)}
        except psutil.Error:        # gone meanwhile
            continue
    return found


@contextlib.contextmanager
def postgres():
    """A PostgreSQL server of the test's own (initdb and pg_ctl, Debian's postgresql), on a Unix
    socket in a fresh folder, stopped and removed afterwards; yields (its SQLAlchemy URL, a
    function that runs one SQL query through psql and gives its rows). Skips the test, saying
    why, where none can start."""
    import pwd
    import shutil
    import tempfile

    import pytest
    # Debian keeps the server's programs out of PATH, in /usr/lib/postgresql/VERSION/bin
    debian = sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=lambda d: int(d.parent.name)
                    if d.parent.name.isdigit() else 0)
    where = os.pathsep.join([os.environ.get("PATH", ""), *(str(d) for d in reversed(debian))])
    initdb, pg_ctl, psql = (shutil.which(p, path=where) for p in ("initdb", "pg_ctl", "psql"))
    if not (initdb and pg_ctl and psql):
        pytest.skip("no PostgreSQL here (initdb, pg_ctl, psql: make setup installs Debian's postgresql)")
    as_user = []
    folder = Path(tempfile.mkdtemp(prefix="s2mc-pg-"))     # short: a socket's path is at most 107 bytes
    if os.geteuid() == 0:       # PostgreSQL will not run as root: as the postgres user
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            shutil.rmtree(folder)
            pytest.skip("running as root and there is no postgres user to run PostgreSQL as")
        runuser = shutil.which("runuser", path=os.pathsep.join([where, "/usr/sbin", "/sbin"]))
        if not runuser:
            shutil.rmtree(folder)
            pytest.skip("running as root and there is no runuser to run PostgreSQL as the postgres user")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = [runuser, "-u", "postgres", "--"]
    data, port = folder / "data", free_port()
    started = False
    try:
        made = subprocess.run([*as_user, initdb, "-D", str(data), "-A", "trust", "-U", "postgres"],
                              capture_output=True, text=True, timeout=120)
        if made.returncode:
            pytest.skip(f"initdb failed: {(made.stderr.strip().splitlines() or ['?'])[-1]}")
        run = subprocess.run([*as_user, pg_ctl, "-D", str(data), "-w", "-t", "60", "-l", str(folder / "log"),
                              "-o", f"-k {folder} -p {port} -c listen_addresses=''", "start"],
                             capture_output=True, text=True, timeout=120)
        if run.returncode:
            pytest.skip(f"PostgreSQL did not start: {(run.stderr.strip().splitlines() or ['?'])[-1]}")
        started = True

        def query(sql: str) -> list[list[str]]:
            out = subprocess.run([psql, "-h", str(folder), "-p", str(port), "-U", "postgres", "-At", "-c", sql],
                                 capture_output=True, text=True, check=True, timeout=60).stdout
            return [line.split("|") for line in out.splitlines()]
        yield f"postgresql+psycopg://postgres@/postgres?host={folder}&port={port}", query
    finally:
        if started:
            subprocess.run([*as_user, pg_ctl, "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
