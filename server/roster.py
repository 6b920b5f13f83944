"""A class's roster (`s2mc serve --class roster.csv`) and the file of personal links the lecturer
hands out.

The roster is CSV with a header: `id` (required: 1 to 64 letters, digits, `.`, `_` or `-`, unique;
what the server counts a student's jobs by) and `name` (optional, free text), one student a row.

    students = read(Path("roster.csv"))                        # [Student("ada", "Ada L."), ...]
    tokens = issue(students, Path("roster.tokens.csv"))        # {"ada": "...", TEACHER: "..."}
    write(Path("roster.tokens.csv"), students, tokens, ["http://10.0.0.5:8000/"])

The links file (mode 0600: it holds every token) has one row per student and one for the teacher:
role, id, name, token, url. Started again with the same roster, the server keeps the tokens the
file already gives, so the links handed out stay good; a student new to the roster gets a new one.
"""
from __future__ import annotations

import csv
import io
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from s2mc.common.errors import S2mcError

COLUMNS = ("id", "name")
LINK_COLUMNS = ("role", "id", "name", "token", "url")
ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
#: the key of the teacher's token in issue()'s answer (no student id can be empty)
TEACHER = ""


@dataclass(frozen=True)
class Student:
    id: str
    name: str = ""


def _rows(path: Path, what: str):
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise S2mcError(f"{what} {path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise S2mcError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise S2mcError(f"{what} {path}: {exc.strerror or exc}") from None
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise S2mcError(f"{path}:{reader.line_num}: {exc}") from None


def read(path: Path) -> list[Student]:
    """The students of a roster file; S2mcError naming the file and line of the first bad row."""
    rows = _rows(path, "--class")
    header = next(((n, r) for n, r in rows if any(c.strip() for c in r)), None)
    if header is None:
        raise S2mcError(f"{path}: empty: give a header line `id,name` and one student a row")
    line, names = header[0], [c.strip().lower() for c in header[1]]
    unknown = [c for c in names if c not in COLUMNS]
    if unknown or "id" not in names or len(set(names)) != len(names):
        raise S2mcError(f"{path}:{line}: the header must name the columns id (required) and name, each once; "
                        f"got {','.join(header[1])[:100]!r}")
    students, seen = [], {}
    for line, row in rows:
        if not any(c.strip() for c in row):
            continue            # a blank line
        if len(row) != len(names):
            raise S2mcError(f"{path}:{line}: {len(row)} fields; the header has {len(names)} ({','.join(names)})")
        fields = dict(zip(names, (c.strip() for c in row)))
        sid = fields["id"]
        if not ID.fullmatch(sid):
            raise S2mcError(f"{path}:{line}: id {sid[:70]!r} must be 1 to 64 letters, digits, '.', '_' or '-'")
        if sid in seen:
            raise S2mcError(f"{path}:{line}: id {sid!r} is already on line {seen[sid]}")
        seen[sid] = line
        students.append(Student(sid, fields.get("name", "")))
    if not students:
        raise S2mcError(f"{path}: no students: give one a row under the header")
    return students


def issue(students: list[Student], links: Path) -> dict[str, str]:
    """Each student's token by id, and the teacher's (key TEACHER): those the links file already
    holds for them, new ones for the others."""
    kept: dict[str, str] = {}
    if links.exists():
        rows = list(_rows(links, "the links file"))
        if not rows or [c.strip() for c in rows[0][1]] != list(LINK_COLUMNS):
            raise S2mcError(f"{links}:1: not a links file of `s2mc serve --class` (columns "
                            f"{','.join(LINK_COLUMNS)}): move it away, or name another with --links")
        for line, row in rows[1:]:
            if len(row) != len(LINK_COLUMNS):
                raise S2mcError(f"{links}:{line}: {len(row)} fields; a links file has {len(LINK_COLUMNS)}")
            role, sid, _, token, _ = row
            kept[TEACHER if role == "teacher" else sid] = token
    return {s.id: kept.get(s.id) or secrets.token_urlsafe(16) for s in students} | \
        {TEACHER: kept.get(TEACHER) or secrets.token_urlsafe(16)}


def write(links: Path, students: list[Student], tokens: dict[str, str], bases: list[str]) -> None:
    """The links file, readable by its owner only (0600) from its first byte: one row per student
    and one for the teacher, each with a URL (the first of `bases`) carrying the token."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(LINK_COLUMNS)
    base = bases[0]
    w.writerow(["teacher", "", "", tokens[TEACHER], f"{base}?token={tokens[TEACHER]}"])
    for s in students:
        w.writerow(["student", s.id, s.name, tokens[s.id], f"{base}?token={tokens[s.id]}"])
    tmp = links.with_name(f".{links.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(out.getvalue())
        os.replace(tmp, links)       # whole or not at all
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise S2mcError(f"--links {links}: {exc.strerror or exc}") from None
