"""What keeping a class's work costs `s2mc serve`: the latency of a save (POST /api/work, what a
page sends after each pause in typing) and of a share link (POST /api/programs), in-process
(FastAPI's TestClient, no network), against a database (docs/server.md, "Saved work and share
links"; docs/benchmarks.md).

    python bench/bench_serve_work.py                                # a SQLite file in a temp folder
    python bench/bench_serve_work.py --db postgresql+psycopg://user@host/lab

Each of --students roster students saves in turn (a 40-line program, --saves in all), then the
shared token makes --shares links; prints p50, p95 and max of each.
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from s2mc.server.app import Settings, create_app
from s2mc.server.database import shown

PROGRAM = {"source": "main()\n  print(6 * 7)\n" * 20, "language": "rz", "opt": 1, "params": {"cores": 4}}


def _times(c: TestClient, n: int, path: str, token, status: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        r = c.post(path, json=PROGRAM, headers={"Authorization": f"Bearer {token(i)}"})
        out.append(time.perf_counter() - t0)
        if r.status_code != status:
            raise SystemExit(f"{path}: {r.status_code} {r.text}")
    return sorted(out)


def _line(name: str, t: list[float]) -> str:
    pick = lambda q: 1000 * t[min(len(t) - 1, int(q * len(t)))]  # noqa: E731
    return f"{name:<20} n={len(t):<5} p50 {pick(0.5):6.1f} ms  p95 {pick(0.95):6.1f} ms  max {1000 * t[-1]:6.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="a SQLite file or a SQLAlchemy URL (default: a SQLite file in a temp folder)")
    ap.add_argument("--students", type=int, default=50)
    ap.add_argument("--saves", type=int, default=500)
    ap.add_argument("--shares", type=int, default=200)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = a.db or str(Path(tmp) / "lab.db")
        students = {f"tok-{i}": f"s{i}" for i in range(a.students)}
        app = create_app(Settings(workers=1, token="shared", students=students, db=db))
        with TestClient(app, base_url="http://localhost") as c:
            saves = _times(c, a.saves, "/api/work", lambda i: f"tok-{i % a.students}", 200)
            shares = _times(c, a.shares, "/api/programs", lambda i: "shared", 201)
        print(f"database: {shown(db)}; {a.students} students, a program of {len(PROGRAM['source'])} bytes")
        print(_line("POST /api/work", saves))
        print(_line("POST /api/programs", shares))


if __name__ == "__main__":
    main()
