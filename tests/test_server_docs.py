"""docs/server.md's checklist for a lecturer: it names every option of `s2mc serve`, and its
commands run as written (a roster, the server on its address with its database and every limit,
the teacher's progress and gradebook through curl)."""
import csv
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from serve_helpers import REPO, S2MC, free_port, live_server

pytest.importorskip("fastapi")
DOCS = REPO / "docs" / "server.md"


def _checklist() -> str:
    text = DOCS.read_text(encoding="utf-8")
    start = text.index("## Running a class: the lecturer's checklist")
    return text[start:text.index("\n## ", start + 1)]


def test_the_checklist_names_every_option_of_serve():
    from s2mc.cli.cmd_serve import serve
    section = _checklist()
    options = [o for p in serve.params for o in p.opts if o.startswith("--")]
    assert len(options) > 15
    missing = [o for o in options if not re.search(re.escape(o) + r"\b", section)]
    assert missing == [], f"docs/server.md's checklist does not name {missing}"


def test_the_checklists_commands_run_as_written(tmp_path):
    block = re.search(r"```\n(.*?)```", _checklist(), re.S).group(1)
    lines = [line for line in block.splitlines() if line.strip()]
    serve = next(i for i, line in enumerate(lines) if line.startswith("s2mc serve "))
    port = str(free_port())

    def shell(script: str) -> subprocess.CompletedProcess:
        # `s2mc` as this checkout installed it; the documented port replaced by a free one
        script = script.replace("8000", port)
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120, env={"PATH": f"{Path(S2MC).parent}:/usr/bin:/bin"})
        assert done.returncode == 0, (script, done.stderr)
        return done
    shell("\n".join(lines[:serve]))
    args = shlex.split(lines[serve].replace("8000", port))[2:]
    info = {}
    with live_server(*args, cwd=tmp_path, info=info, port=int(port)):
        done = shell("\n".join(lines[serve + 1:]))
        assert "work kept in lab.db" in info["banner"], info["banner"]
        progress = __import__("json").loads(done.stdout)
        assert [s["id"] for s in progress["students"]] == ["ada", "bob"], progress
    with open(tmp_path / "gradebook.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [r["id"] for r in rows] == ["ada", "bob"] and rows[0]["name"] == "Ada Lovelace"
    assert (tmp_path / "lab.db").stat().st_size > 0
    assert (tmp_path / "roster.links.csv").stat().st_mode & 0o077 == 0
