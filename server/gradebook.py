"""Submissions to the exercises' check, kept per student in a database (`s2mc serve --db lab.db`),
and the lecturer's gradebook made from them.

    book = Gradebook("lab.db")                 # SQLite at that path; or a SQLAlchemy URL
    book.record("ada", marks)                  # marks: exercises.grade(..., teacher=True)
    book.csv([Student("ada", "Ada")])          # the gradebook, one student a row

The database is reached through SQLAlchemy (Core), so a URL (`postgresql://...`) works as well as
a file; the table is made when missing, and a restarted server finds every submission it had.
One row per submission: the student's id, the time (UTC), the counts of the check (right,
checked, predictions made, passed) and the verdict of each question, as JSON.
"""
from __future__ import annotations

import datetime as dt
import json

from .database import connect, iso
from .roster import Student


class Gradebook:
    def __init__(self, db: str):
        import sqlalchemy as sa
        self.sa = sa
        meta = sa.MetaData()
        self.table = sa.Table(
            "submissions", meta,
            sa.Column("id", sa.Integer, primary_key=True),
            sa.Column("student", sa.String(64), nullable=False, index=True),
            sa.Column("at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("right", sa.Integer, nullable=False),
            sa.Column("checked", sa.Integer, nullable=False),
            sa.Column("predictions", sa.Integer, nullable=False),
            sa.Column("passed", sa.Boolean, nullable=False),
            sa.Column("verdicts", sa.Text, nullable=False))      # {question: verdict}, JSON
        self.engine = connect(db, meta)

    def record(self, student: str, graded: dict) -> None:
        """One submission: the answer of exercises.grade()."""
        row = {"student": student, "at": dt.datetime.now(dt.timezone.utc), "right": graded["right"],
               "checked": graded["checked"], "passed": graded["passed"],
               "predictions": sum(m["predicted"] is not None for m in graded["marks"]),
               "verdicts": json.dumps({m["name"]: m["verdict"] for m in graded["marks"]})}
        with self.engine.begin() as conn:
            conn.execute(self.table.insert().values(**row))

    def frame(self, students: list[Student]):
        """The gradebook as a pandas DataFrame: one row per student of the roster (and any other id
        the database holds), with their submissions, the first and last times, the last
        submission's counts, whether any passed, and the last verdict of each question."""
        import pandas as pd
        with self.engine.connect() as conn:
            subs = pd.read_sql(self.sa.select(self.table).order_by(self.table.c.id), conn)
        names = {s.id: s.name for s in students}
        ids = [s.id for s in students] + sorted(set(subs["student"]) - set(names))
        rows = []
        for sid in ids:
            mine = subs[subs["student"] == sid]
            row = {"id": sid, "name": names.get(sid, ""), "submissions": len(mine)}
            if len(mine):
                last = mine.iloc[-1]
                row.update(first=iso(mine["at"].iloc[0]), last=iso(last["at"]), right=int(last["right"]),
                           checked=int(last["checked"]), predictions=int(last["predictions"]),
                           passed=bool(mine["passed"].any()), **json.loads(last["verdicts"]))
            rows.append(row)
        # a student with no submission has none of the counts: nullable types keep the others whole
        return pd.DataFrame(rows, columns=_columns()).astype(
            {"submissions": "Int64", "right": "Int64", "checked": "Int64", "predictions": "Int64",
             "passed": "boolean"})

    def progress(self, students: list[Student]) -> dict:
        """The class's progress for the lecturer's page, from the same frame as the gradebook:
        `students` (its rows, a missing value null), `questions` (each question's name and how
        many students' last verdict is right), `submitted` and `passed` (students)."""
        frame = self.frame(students)
        rows = frame.astype(object).where(frame.notna(), None).to_dict("records")
        questions = [c for c in frame.columns if c not in _HEAD]
        return {"students": rows,
                "questions": [{"name": q, "right": int((frame[q] == "right").sum())} for q in questions],
                "submitted": int((frame["submissions"] > 0).sum()),
                "passed": int(frame["passed"].fillna(False).astype(bool).sum())}

    def csv(self, students: list[Student]) -> str:
        return self.frame(students).to_csv(index=False)

    def close(self) -> None:
        self.engine.dispose()


def _columns() -> list[str]:
    from s2mc.experiments import lab
    return _HEAD + [q.name for _, q in lab.quantities()]


#: the gradebook's columns before each question's verdict
_HEAD = ["id", "name", "submissions", "first", "last", "right", "checked", "predictions", "passed"]
