"""Work that outlasts a page and a server (`s2mc serve`, docs/server.md "Saved work and share
links"): each owner's program as they last typed it, and the programs shared by a link.

    work = Work("lab.db")                      # or a SQLAlchemy URL; None: in this process's memory
    work.save("student:ada", program, cap=100_000)   # program: {source, language, opt, params}
    work.load("student:ada")                   # that program, with `saved` (UTC), or None
    pid = work.share(program, cap=100_000)     # an unguessable id
    work.shared(pid)                           # the program, with `shared` (UTC), or None

An owner is a key the server makes: `student:ID` (a student of the roster), `teacher`, or
`browser:ID` (an anonymous page, by the random id it keeps in its browser). The program is kept
as it was given (its parameters as named, not filled with defaults), so that it loads exactly.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import secrets

from s2mc.common.errors import S2mcError

from .database import connect, iso

#: a share link's id: 128 random bits (secrets.token_urlsafe(16): 22 characters)
ID_BYTES = 16
ID = re.compile(r"[A-Za-z0-9_-]{22}")
FIELDS = ("source", "language", "opt", "params")


class Full(S2mcError):
    """The server holds as many shared programs as its cap allows."""


class Work:
    def __init__(self, db: str | None):
        import sqlalchemy as sa
        self.sa = sa
        meta = sa.MetaData()

        def program_columns():
            return [sa.Column("source", sa.Text, nullable=False), sa.Column("language", sa.String(8), nullable=False),
                    sa.Column("opt", sa.Integer, nullable=False),
                    sa.Column("params", sa.Text, nullable=False),          # JSON, as given
                    sa.Column("at", sa.DateTime(timezone=True), nullable=False)]
        self.saved = sa.Table("saved_work", meta, sa.Column("owner", sa.String(100), primary_key=True),
                              *program_columns())
        self.programs = sa.Table("shared_programs", meta, sa.Column("id", sa.String(32), primary_key=True),
                                 *program_columns())
        self.engine = connect(db, meta)

    @staticmethod
    def _row(program: dict) -> dict:
        return {"source": program["source"], "language": program["language"], "opt": program["opt"],
                "params": json.dumps(program["params"]), "at": dt.datetime.now(dt.timezone.utc)}

    @staticmethod
    def _program(row, when: str) -> dict:
        return {"source": row.source, "language": row.language, "opt": row.opt, "params": json.loads(row.params),
                when: iso(row.at)}

    def save(self, owner: str, program: dict, cap: int) -> str:
        """Keeps `program` as `owner`'s work, in place of what they had; answers the time (UTC).
        Full when `owner` is new and `cap` owners have work here already."""
        row = self._row(program)
        t = self.saved
        for again in (False, True):
            try:
                with self.engine.begin() as conn:
                    # update, else insert: the same on SQLite and PostgreSQL
                    if conn.execute(t.update().where(t.c.owner == owner).values(**row)).rowcount:
                        break
                    self._room(conn, t, cap, "owners of saved work")
                    conn.execute(t.insert().values(owner=owner, **row))
                    break
            except self.sa.exc.IntegrityError:
                # another save of this owner inserted first (two tabs at once, PostgreSQL): the
                # row is there now, and the second try updates it
                if again:
                    raise
        return iso(row["at"])

    def _room(self, conn, table, cap: int, what: str) -> None:
        have = conn.execute(self.sa.select(self.sa.func.count()).select_from(table)).scalar_one()
        if have >= cap:
            raise Full(f"this server holds its limit of {cap} {what}; ask the lecturer")

    def load(self, owner: str) -> dict | None:
        with self.engine.connect() as conn:
            row = conn.execute(self.sa.select(self.saved).where(self.saved.c.owner == owner)).first()
        return None if row is None else self._program(row, "saved")

    def share(self, program: dict, cap: int) -> str:
        """Keeps `program` under a new id (128 random bits) and answers it; Full past `cap` programs."""
        t = self.programs
        with self.engine.begin() as conn:
            self._room(conn, t, cap, "shared programs")
            pid = secrets.token_urlsafe(ID_BYTES)
            conn.execute(t.insert().values(id=pid, **self._row(program)))
        return pid

    def shared(self, pid: str) -> dict | None:
        if not ID.fullmatch(pid):
            return None
        with self.engine.connect() as conn:
            row = conn.execute(self.sa.select(self.programs).where(self.programs.c.id == pid)).first()
        return None if row is None else {"id": pid, **self._program(row, "shared")}

    def close(self) -> None:
        self.engine.dispose()

