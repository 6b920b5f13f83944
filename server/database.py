"""The database `s2mc serve` keeps its class's data in (`--db`), through SQLAlchemy Core: a SQLite
file, a SQLAlchemy URL (`postgresql+psycopg://user@host/lab`), or, without `--db`, SQLite in this
process's memory (kept while the server runs).

    engine = connect("lab.db")             # or a URL, or None for memory
    engine = connect("lab.db", tables)     # ... and makes the tables of a MetaData when missing

Every store of the server (server/gradebook.py, server/work.py) reaches its tables through here,
so that a URL works for all of them and a bad one is one error line naming `--db`.
"""
from __future__ import annotations

import datetime as dt

from s2mc.common.errors import S2mcError


def url(db: str | None) -> str:
    """The SQLAlchemy URL of a --db value: a URL as it is, a path as a SQLite file."""
    if db is None:
        return "sqlite://"
    return db if "://" in db else f"sqlite:///{db}"


def shown(db: str) -> str:
    """A --db value to print: a URL without its password."""
    if "://" not in db:
        return db
    import sqlalchemy as sa
    try:
        return sa.engine.make_url(db).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL SQLAlchemy reads: its scheme alone
        return f"{db.split('://', 1)[0]}://..."


def where(db: str | None) -> str:
    """Where the work is kept, for the line the server starts with."""
    return "in memory only: --db FILE keeps it" if db is None else f"in {shown(db)}"


def connect(db: str | None, meta=None):
    """An engine on `db` (see url()), with the tables of `meta` made when missing."""
    import sqlalchemy as sa
    address = url(db)
    args: dict = {}
    if address.startswith("sqlite"):
        # the server's threads share SQLite's connections (one writes at a time: SQLite's lock)
        args["connect_args"] = {"check_same_thread": False}
        if address == "sqlite://":
            # one connection for every thread: each new one would be another, empty, database
            args["poolclass"] = sa.pool.StaticPool
    try:
        engine = sa.create_engine(address, **args)
        if meta is not None:
            meta.create_all(engine)
    except Exception as exc:  # noqa: BLE001 - a bad URL or an unreachable database: one line
        # the driver's message may quote the URL, password and all
        message = str(exc).splitlines()[0].replace(address, shown(address)) if str(exc) else ""
        raise S2mcError(f"--db {shown(db or address)}: {type(exc).__name__}: {message}") from None
    return engine


def iso(at) -> str:
    """A time the database gave back (a datetime, or pandas' Timestamp) as ISO 8601 in UTC."""
    t = at.to_pydatetime() if hasattr(at, "to_pydatetime") else at
    if t.tzinfo is None:          # SQLite keeps no zone: the times were written in UTC
        t = t.replace(tzinfo=dt.timezone.utc)
    return t.isoformat(timespec="seconds")
