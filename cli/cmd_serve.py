"""`s2mc serve`: the browser lab for a class (docs/server.md)."""
from __future__ import annotations

import ipaddress
import os
import socket
from pathlib import Path

import click

from s2mc.common.errors import S2mcError

from s2mc.server.limits import RANGES, Limits

from .options import Integer, Seconds

DEFAULT = Limits()


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Beyond loopback (0.0.0.0) a class token is required.")
@click.option("--port", default=8000, show_default=True, type=Integer(0, 65535), help="Port (0: any free one).")
@click.option("--workers", default=os.cpu_count() or 1, show_default="the CPUs", type=Integer(1, 256),
              help="Jobs that run at once, each in its own capped process.")
@click.option("--queue", default=DEFAULT.queue, show_default=True, type=Integer(*RANGES["queue"]),
              help="Jobs that may wait for a worker; beyond, 'busy, try again' (429).")
@click.option("--token", default=None, help="The class token the API requires (or the environment "
              "variable S2MC_SERVE_TOKEN). Students open http://HOST:PORT/?token=TOKEN.")
@click.option("--teacher-token", default=None, help="The lecturer's token (or the environment variable "
              "S2MC_SERVE_TEACHER_TOKEN): with it the exercises' check shows the right values.")
@click.option("--class", "roster", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="A roster, CSV with the columns id and name: each student gets a token and link of their "
              "own, written with the teacher's to the --links file.")
@click.option("--links", default=None, type=click.Path(dir_okay=False, path_type=Path),
              help="Where --class writes the links (mode 0600), and reads those it gave before. "
              "[default: ROSTER.links.csv beside the roster]")
@click.option("--db", default=None, help="Keep the students' saved work, the share links and each student's "
              "submissions to the exercises' check here: a SQLite file (made when missing), or a SQLAlchemy URL; the "
              "teacher downloads the gradebook. [default: with --class, ROSTER.db beside the roster; else in "
              "memory, lost when the server stops]")
@click.option("--student-jobs", default=DEFAULT.student_jobs, show_default=True,
              type=Integer(*RANGES["student_jobs"]), help="Jobs one student of the roster may have running or "
              "waiting; beyond, 'busy, try again' (429).")
@click.option("--student-sessions", default=DEFAULT.student_sessions, show_default=True,
              type=Integer(*RANGES["student_sessions"]), help="Debugging sessions one student of the roster may "
              "have open.")
@click.option("--connections-per-address", default=DEFAULT.connections_per_address, show_default=True,
              type=Integer(*RANGES["connections_per_address"]), help="Connections open at once from one client "
              "address (a browser opens up to 6); beyond, 429 and closed.")
@click.option("--header-seconds", default=DEFAULT.header_seconds, show_default=True,
              type=Seconds(*RANGES["header_seconds"]), help="Seconds a request's header may take to arrive "
              "(408 and closed beyond).")
@click.option("--body-seconds", default=DEFAULT.body_seconds, show_default=True,
              type=Seconds(*RANGES["body_seconds"]), help="Seconds its body may take after the header (closed "
              "beyond).")
@click.option("--executor", default="local", show_default=True, type=click.Choice(["local", "dask"]),
              help="Where runs happen: worker processes here, or an existing Dask cluster.")
@click.option("--scheduler", default=None, help="The Dask scheduler's address (with --executor dask).")
@click.option("--wall-seconds", default=DEFAULT.wall_seconds, show_default=True, type=Seconds(*RANGES["wall_seconds"]),
              help="Seconds one run, sweep or debugger command of a student may take.")
@click.option("--teacher-wall-seconds", default=DEFAULT.teacher_wall_seconds, show_default=True,
              type=Seconds(*RANGES["teacher_wall_seconds"]), help="... and of the teacher.")
@click.option("--max-cycles", default=DEFAULT.max_cycles, show_default=True, type=Integer(*RANGES["max_cycles"]),
              help="The cycle limit of every run (a request's own is clamped to it).")
@click.option("--memory-mib", default=DEFAULT.memory_mib, show_default=True, type=Integer(*RANGES["memory_mib"]),
              help="Memory one worker may add (MiB, RLIMIT_AS).")
def serve(host, port, workers, queue, token, teacher_token, roster, links, db, student_jobs, student_sessions,
          connections_per_address, header_seconds, body_seconds, executor,
          scheduler, wall_seconds, teacher_wall_seconds, max_cycles, memory_mib):
    """Serve the browser lab: the page and its JSON API, for a whole class at once.

    Students open the page (http://127.0.0.1:8000/ by default) and edit, run, sweep, step and check
    the lab's exercises; every run happens in a worker process with caps on its size, cycles, time
    and memory."""
    try:
        import fastapi  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise S2mcError(f"s2mc serve: the Python package {exc.name} is not installed (`make setup` installs it, "
                        "or pip install 's2mc[serve]')") from None

    from s2mc.server.addresses import reachable, url
    from s2mc.server.app import TEACHER_TOKEN_ENV, TOKEN_ENV, Settings, create_app

    token = token or os.environ.get(TOKEN_ENV) or None
    teacher_token = teacher_token or os.environ.get(TEACHER_TOKEN_ENV) or None
    students, tokens = [], {}
    if roster is not None:
        from s2mc.server import roster as rosters
        links = links or roster.with_name(roster.stem + ".links.csv")
        db = db or str(roster.with_name(roster.stem + ".db"))    # a class's work and marks outlive the server
        students = rosters.read(roster)
        tokens = rosters.issue(students, links)
        teacher_token = teacher_token or tokens[rosters.TEACHER]
        tokens[rosters.TEACHER] = teacher_token
    elif links is not None:
        raise S2mcError("--links needs --class ROSTER")
    if not _loopback(host) and not (token or students):
        raise S2mcError(f"--host {host} is reachable beyond this machine: give a class token "
                        "(--token TOKEN or the environment variable S2MC_SERVE_TOKEN), or a roster (--class)")
    if executor == "dask" and not scheduler:
        raise S2mcError("--executor dask needs --scheduler ADDR (an existing Dask cluster)")
    if scheduler and executor != "dask":
        raise S2mcError("--scheduler needs --executor dask")
    limits = DEFAULT.replace(queue=queue, wall_seconds=wall_seconds, teacher_wall_seconds=teacher_wall_seconds,
                             max_cycles=max_cycles, memory_mib=memory_mib, student_jobs=student_jobs,
                             student_sessions=student_sessions, connections_per_address=connections_per_address,
                             header_seconds=header_seconds, body_seconds=body_seconds)
    app = create_app(Settings(workers=workers, limits=limits, token=token, teacher_token=teacher_token,
                              students={tokens[s.id]: s.id for s in students}, roster=students, db=db,
                              executor=executor, scheduler=scheduler))
    # the socket is bound here, so that a port in use is one error line and --port 0 tells its port
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise S2mcError(f"--host {host} --port {port}: {exc.strerror or exc}") from None
    port = sock.getsockname()[1]
    addresses = reachable(host)
    urls = " ".join(url(a, port, token) for a in addresses)
    from s2mc.server.database import where
    click.echo(f"s2mc serve: {urls} ({workers} worker{'s' if workers > 1 else ''}, {executor}; work kept "
               f"{where(db)}); Ctrl-C stops it", err=True)
    if students:
        try:
            rosters.write(links, students, tokens, [url(a, port) for a in addresses])
        except S2mcError:
            sock.close()
            raise
        click.echo(f"s2mc serve: {len(students)} student{'s' if len(students) > 1 else ''}' links and the "
                   f"teacher's are in {links} (readable by you only)", err=True)
    # uvicorn's own cap on connections at once (503 beyond): far above what the queue admits; the
    # guard keeps one address from taking them (a cap per address, the header's and body's time)
    from s2mc.server.connections import guarded
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=5, http=guarded(limits),
                            limit_concurrency=max(256, 4 * (workers + limits.queue + limits.sessions)))
    uvicorn.Server(config).run(sockets=[sock])


COMMANDS = [serve]
