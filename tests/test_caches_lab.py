"""docs/caches-lab.md works verbatim from an empty folder, in order, as far as the machine goes today:
every command line of its `sh` blocks that needs no cache protocol runs (the cacheless runs, the
examples it copies and edits, `s2mc coherence-native`), and its claim that without caches the
packed and padded false-sharing programs take the same cycles holds. The lines that name a protocol
wait for the engines; the test counts them, so a new one is seen."""
import os
from pathlib import Path

import pytest
from test_tour import commands, run_in_order

LAB = (Path(__file__).resolve().parents[1] / "docs" / "caches-lab.md").read_text()


def waits_for_caches(line: str) -> bool:
    """A line that needs the engines' caches (a protocol, `s2mc aes` with caches, the report of
    those runs), or the shell loop around such lines."""
    return "--cache" in line or line.startswith("for proto") or line == "done" or line.startswith("s2mc report")


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="the lab's native lines pin two threads")
def test_the_lab_runs_verbatim_today(tmp_path):
    lines = commands(LAB)
    today = [ln for ln in lines if not waits_for_caches(ln)]
    assert len(lines) - len(today) == 13          # the protocol runs, waiting for the engines
    done = run_in_order(today, tmp_path)
    packed = done["s2mc run false_sharing.s --cores 1,2,4,8"]
    padded = done["s2mc run padded.s --cores 1,2,4,8"]
    assert "stride 16" in (tmp_path / "padded.s").read_text()     # the sed really padded it
    # "the same cycles, to the cycle": the whole sweep table is identical
    assert packed.stdout == padded.stdout and packed.stderr == padded.stderr
    assert [ln for ln in packed.stdout.splitlines() if ln.isdigit()] == ["100", "200", "400", "800"]
    for name in ("coherence", "pingpong", "locks"):
        assert (tmp_path / "results" / f"{name}.parquet").exists()
