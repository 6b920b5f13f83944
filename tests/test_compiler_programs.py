"""Every tests/rz/*.rz program, compiled at -O0 and -O1 and run on the simulator, prints exactly
what its `// expect:` comments say (clox style); the reference interpreter agrees."""
from __future__ import annotations

from pathlib import Path

import pytest

from s2mc.compiler import compile as compile_rz
from s2mc.compiler import interpret_source
from s2mc.simulator import run

RZ = Path(__file__).parent / "rz"
PROGRAMS = sorted(RZ.glob("*.rz"))


def expected(source: str) -> str:
    out = []
    for line in source.splitlines():
        if "// expect:" in line:
            text = line.split("// expect:", 1)[1]
            out.append(text[1:] if text.startswith(" ") else text)
    return "".join(t + "\n" for t in out)


def test_programs_exist():
    assert len(PROGRAMS) >= 10


@pytest.mark.parametrize("opt", [0, 1])
@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_program_on_simulator(path, opt):
    source = path.read_text()
    compiled = compile_rz(source, opt=opt, filename=str(path))
    assert run(compiled.program, max_cycles=20_000_000).output == expected(source)


@pytest.mark.parametrize("path", [p for p in PROGRAMS if "asm(" not in p.read_text()],
                         ids=lambda p: p.stem)
def test_program_in_interpreter(path):
    source = path.read_text()
    assert interpret_source(source, str(path)) == expected(source)


def test_expect_parser_is_not_vacuous():
    assert expected('print(1)  // expect: 1\n// expect:\n') == "1\n\n"
    for path in PROGRAMS:
        assert expected(path.read_text()), f"{path.name} expects nothing"
