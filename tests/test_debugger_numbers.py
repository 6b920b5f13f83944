"""The debugger's numbers and addresses (s2mc.simulator.debugger): every command that shows a word
shows it through one conversion (`show`: d signed, u unsigned, x hex, t binary, c character), and
every command that takes an address takes it through one check (Stepper.place). The same session,
in `s2mc debug` and through `/api/debug`, is checked line by line against values computed by hand:
a negative word, the word with only bit 31 set, literals past 32 bits, addresses past the memory
and past 2^32, which must be refused naming the address as written, never taken modulo 2^32."""
import re
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from s2mc.common.errors import S2mcError
from s2mc.compiler import compile as compile_rz
from s2mc.simulator.debugger import Debugger, show
from s2mc.simulator.stepping import Stepper

from serve_helpers import client

SOURCE = """\
g[2]

f(a)
  b = a - 1
  return b

main()
  x = 0 - 5
  big = 2147483647 + 1
  g[0] = x
  g[1] = f(x)
  print(x)
"""
MEM = 4096                  # --mem-words: the memory's last address is 4095
PROGRAM = compile_rz(SOURCE, filename="neg.rz", debug=True).program
G = PROGRAM.symbols["g"].value          # where g lives, from the compiler's own symbols
CODE = PROGRAM.top("code")              # pcs 0 .. CODE-1
WORD = r"\(-2147483648\.\.4294967295\)"
NUM = r"\d+"


def outside(addr: int) -> str:
    return rf"data address {addr} is outside the memory \(0\.\.{MEM - 1}\)"


def at(addr: int, label: str, *words: str) -> str:
    """A line of `x`: the address right-aligned, its label, the words."""
    return rf"{addr:>8} <{re.escape(label)}>:  " + "  ".join(words)


def neg5_bits() -> str:
    return "1" * 29 + "011"


# (command, the regex its whole output must match; None: a step the session takes, not checked).
# The session: stop after `g[0] = x` wrote -5 (x = -5, big = -2^31 in registers), then in f(-5),
# then after f returned -6 and `g[1] = ...` wrote it.
CASES = [
    ("break f", None),
    ("watch g", None),
    ("continue", rf"watch 2: core 0 wrote -5 to address {G} \(g; was 0\) in cycle {NUM}: .*\ncycle {NUM}"),
    # print: every format of a negative word, of bit 31 alone, of literals
    ("p x", r"x = -5"),
    ("print x", r"x = -5"),
    ("p/d x", r"x = -5"),
    ("p/u x", r"x = 4294967291"),
    ("p/x x", r"x = 0xfffffffb"),
    ("p/t x", rf"x = {neg5_bits()}"),
    ("p/c x", r"x = -5 'û'"),
    ("p big", r"big = -2147483648"),
    ("p/u big", r"big = 2147483648"),
    ("p/x big", r"big = 0x80000000"),
    ("p 0x80000000", r"0x80000000 = -2147483648"),
    ("p/u 0x80000000", r"0x80000000 = 2147483648"),
    ("p 0xffffffff", r"0xffffffff = -1"),
    ("p/u -1", r"-1 = 4294967295"),
    ("p 0x80000000 + 0", r"0x80000000 \+ 0 = -2147483648"),
    ("p 2147483647 + 1", r"2147483647 \+ 1 = -2147483648"),
    ("p -2147483648", r"-2147483648 = -2147483648"),
    ("p x - 1", r"x - 1 = -6"),
    ("p -x", r"-x = 5"),
    ("p/c 0x80000041", r"0x80000041 = -2147483583 'A'"),
    ("p/c -191", r"-191 = -191 'A'"),
    ("p 4294967296", rf"print: 4294967296 does not fit in a 32-bit word {WORD}"),
    ("p 99999999999", rf"print: 99999999999 does not fit in a 32-bit word {WORD}"),
    ("p 99999999999 + 1", rf"print: 99999999999 in '99999999999 \+ 1' does not fit in a 32-bit word {WORD}"),
    ("p $r0 + 4294967296", rf"print: 4294967296 in '\$r0 \+ 4294967296' does not fit in a 32-bit word {WORD}"),
    ("p 1 - 99999999999999", rf"print: 99999999999999 in '1 - 99999999999999' does not fit in a 32-bit word "
                             rf"{WORD}"),
    ("p -4294967296", rf"print: -4294967296 does not fit in a 32-bit word {WORD}"),
    ("p -2147483649", rf"print: -2147483649 does not fit in a 32-bit word {WORD}"),
    ("p -2147483649 + 0", rf"print: -2147483649 in '-2147483649 \+ 0' does not fit in a 32-bit word {WORD}"),
    ("p 1 - -5", r"1 - -5 = 6"),
    ("p -(5)", r"-\(5\) = -5"),
    ("p/xd x", r"print: unknown format '/xd' \(x d u t c\)"),
    ("p/du x", r"print: unknown format '/du' \(x d u t c\)"),
    # print of memory: arrays, *ADDR, the address check
    ("p g", r"g = \{-5, 0\}"),
    ("p/u g", r"g = \{4294967291, 0\}"),
    ("p g[0]", r"g\[0\] = -5"),
    ("p &g", rf"&g = {G}"),
    (f"p *{G}", rf"\*{G} = -5"),
    ("p *&g", r"\*&g = -5"),
    (f"p *{MEM - 1}", rf"\*{MEM - 1} = 0"),
    (f"p *{MEM}", f"print: {outside(MEM)}"),
    ("p *4294967296", f"print: {outside(4294967296)}"),
    (f"p *{4294967296 + G}", f"print: {outside(4294967296 + G)}"),
    ("p *-1", f"print: {outside(-1)}"),
    ("p *0xffffffff", f"print: {outside(4294967295)}"),
    # x: every format, and the same address check
    ("x &g", at(G, "g", "0xfffffffb")),
    ("x/2d &g", at(G, "g", "-5", "0")),
    ("x/2u &g", at(G, "g", "4294967291", "0")),
    ("x/2x &g", at(G, "g", "0xfffffffb", "0x00000000")),
    ("x/2t &g", at(G, "g", neg5_bits(), "0" * 32)),
    ("x/2c &g", at(G, "g", "-5 'û'", r"0 '\\x00'")),
    (f"x/1d {G}", at(G, "g", "-5")),
    ("x/2d 4294967296", f"x: {outside(4294967296)}"),
    (f"x/2d {4294967296 + G}", f"x: {outside(4294967296 + G)}"),
    ("x/4d 99999999999", f"x: {outside(99999999999)}"),
    ("x -1", f"x: {outside(-1)}"),
    ("x -2147483649", f"x: {outside(-2147483649)}"),
    (f"x/2x {MEM - 1}", rf"x: 2 words at address {MEM - 1} do not fit in the memory \(0\.\.{MEM - 1}\)"),
    ("x/i 4294967296", rf"x: pc 4294967296 is outside the program \(0\.\.{CODE - 1}\)"),
    (f"x/3i {CODE - 2}", rf"x: 3 instructions at pc {CODE - 2} do not fit in the program \(0\.\.{CODE - 1}\)"),
    ("x/2i -1", rf"x: 2 instructions at pc -1 do not fit in the program \(0\.\.{CODE - 1}\)"),
    ("x/0x 0", r"x: the count must be at least 1"),
    # the other commands that show words, and those that take addresses
    ("info locals", r"x = -5    \(r\d+\)\nbig = -2147483648    \(r\d+\)"),
    ("regs", r"core 0, cycle \d+, .*\n(?:(?:r\d+ +-?\d+ *)+\n){7}(?:r\d+ +-?\d+ *)+"),
    ("mem g 2", rf"{G:>8}  g    -5\n{G + 1:>8}  g\+1  0"),
    ("mem 4294967296", f"mem: {outside(4294967296)}"),
    ("mem -1", f"mem: {outside(-1)}"),
    (f"mem {MEM - 1} 2", rf"mem: 2 words at address {MEM - 1} do not fit in the memory \(0\.\.{MEM - 1}\)"),
    ("watch 4294967296", f"watch: {outside(4294967296)}"),
    ("watch -1", f"watch: {outside(-1)}"),
    ("watch g+4294967296", f"watch: {outside(G + 4294967296)}"),
    ("mem g-4294967296", f"mem: {outside(G - 4294967296)}"),
    ("p *(&g + 4294967296)", rf"print: 4294967296 in '\*\(&g \+ 4294967296\)' does not fit in a 32-bit word {WORD}"),
    ("p g[4294967296]", r"print: index 4294967296 is outside g\[0\.\.1\]"),
    ("cache 4294967296", f"cache: {outside(4294967296)}"),
    ("cache g", rf"address {G} \(g\): line {G}\.\.{G + 3}, set {NUM}: core 0 M"),
    ("cache core 0", rf"core 0: MSI, .*(?:\n.*)*\n  set +\d+ way +\d+  line +{G} g +M   -5 0 0 0(?:\n.*)*"),
    ("break *4294967296", rf"break: pc 4294967296 is outside the program \(0\.\.{CODE - 1}\)"),
    ("disas 4294967296", rf"disas: pc 4294967296 is outside the program \(0\.\.{CODE - 1}\)"),
    ("break *-1", rf"break: pc -1 is outside the program \(0\.\.{CODE - 1}\)"),
    ("break f+4294967296", rf"break: pc {PROGRAM.symbols['f'].value + 4294967296} is outside the program "
                           rf"\(0\.\.{CODE - 1}\)"),
    ("watch g+1", None),
    # in f(-5): its parameter, the backtrace, finish's value
    ("continue", None),
    ("p a", r"a = -5"),
    ("p/x a", r"a = 0xfffffffb"),
    ("backtrace", r"#0  f \(a=-5\) at \w+\.rz:4\n#1  main \(\) at \w+\.rz:11"),
    ("finish", rf"run till f\(\) returns on core 0\nvalue returned: retval = -6\n(?:.*\n)*cycle {NUM}"),
    ("p $retval", r"\$retval = -6"),
    ("p/u $retval", r"\$retval = 4294967290"),
    ("continue", rf"watch 3: core 0 wrote -6 to address {G + 1} \(g\+1; was 0\) in cycle {NUM}: .*\ncycle {NUM}"),
    ("p g", r"g = \{-5, -6\}"),
    ("x/2d g", at(G, "g", "-5", "-6")),
]
CHECKED = [(i, cmd, want) for i, (cmd, want) in enumerate(CASES) if want is not None]
ARGS = ["--mem-words", str(MEM), "--cache", "msi"]
PARAMS = {"mem_words": MEM, "cache": "msi"}
SEPARATOR = "@"             # an unknown command: its one error line separates the answers


@pytest.fixture(scope="module")
def cli_answers(tmp_path_factory):
    folder = tmp_path_factory.mktemp("numbers")
    (folder / "neg.rz").write_text(SOURCE)
    script = "".join(f"{cmd}\n{SEPARATOR}\n" for cmd, _ in CASES)
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "debug", "neg.rz", *ARGS], input=script,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=folder, timeout=120)
    assert proc.returncode == 0, proc.stdout
    sep = f"unknown command '{SEPARATOR}' (help lists the commands)\n"
    answers = proc.stdout.split(sep)
    assert len(answers) == len(CASES) + 1 and answers[-1] == "", proc.stdout
    return [a.rstrip("\n") for a in answers[:-1]]


@pytest.fixture(scope="module")
def api_answers():
    with client(workers=1) as api:
        first = api.post("/api/debug", json={"source": SOURCE, "language": "rz", "params": PARAMS})
        assert first.status_code == 200, first.text
        sid = first.json()["id"]
        answers, states = [], []
        for cmd, _ in CASES:
            r = api.post(f"/api/debug/{sid}", json={"command": cmd})
            assert r.status_code == 200, r.text
            answers.append("\n".join(line["text"] for line in r.json()["output"]))
            states.append(r.json()["state"])
        api.delete(f"/api/debug/{sid}")
    return answers, states


@pytest.mark.parametrize("i, cmd, want", CHECKED, ids=[cmd for _, cmd, _ in CHECKED])
def test_the_cli_shows_each_value_and_refuses_each_address(cli_answers, i, cmd, want):
    assert re.fullmatch(want, cli_answers[i]), cli_answers[i]


@pytest.mark.parametrize("i, cmd, want", CHECKED, ids=[cmd for _, cmd, _ in CHECKED])
def test_the_api_shows_each_value_and_refuses_each_address(api_answers, i, cmd, want):
    assert re.fullmatch(want, api_answers[0][i]), api_answers[0][i]


def test_the_regs_table_and_the_pages_registers_are_the_signed_words(cli_answers, api_answers):
    """`regs` (x in one register, big in another) and the state the page draws its registers from."""
    i = next(i for i, (cmd, _) in enumerate(CASES) if cmd == "regs")
    shown = [int(v) for v in re.findall(r"r\d+ +(-?\d+)", cli_answers[i])]
    assert len(shown) == 32 and -5 in shown and -2147483648 in shown
    assert all(-2**31 <= v < 2**31 for v in shown)
    assert api_answers[1][i]["cores"][0]["registers"] == shown


@pytest.mark.parametrize("value, f, text", [
    (-5, "d", "-5"), (-5, "u", "4294967291"), (-5, "x", "0xfffffffb"), (-5, "t", neg5_bits()),
    (4294967291, "d", "-5"), (4294967291, "c", "-5 'û'"), (-(1 << 31), "d", "-2147483648"),
    (1 << 31, "d", "-2147483648"), (1 << 31, "u", "2147483648"), ((1 << 32) - 1, "d", "-1"),
    (2**31 - 1, "d", "2147483647"), (0x41, "c", "65 'A'"), (0, "x", "0x00000000"),
])
def test_show_is_the_words_reading_by_hand(value, f, text):
    assert show(value, f) == text


@pytest.mark.parametrize("value", [1 << 32, -(1 << 31) - 1, 99999999999, -(1 << 40)])
def test_show_refuses_what_is_no_word(value):
    with pytest.raises(S2mcError, match=f"{value} does not fit in a 32-bit word"):
        show(value)


@pytest.mark.parametrize("where, n, message", [
    (4096, 1, "data address 4096 is outside the memory (0..4095)"),
    (1 << 32, 1, "data address 4294967296 is outside the memory (0..4095)"),
    (-1, 1, "data address -1 is outside the memory (0..4095)"),
    (4095, 2, "2 words at address 4095 do not fit in the memory (0..4095)"),
    (0, 0, "0 words at address 0 do not fit in the memory (0..4095)"),
])
def test_the_one_address_check_names_the_address_as_given(where, n, message):
    s = Stepper(PROGRAM, mem_words=MEM)
    with pytest.raises(S2mcError) as exc:
        s.place(where, "data", n)
    assert str(exc.value) == message
    with pytest.raises(S2mcError) as exc:
        s.read(where, n)
    assert str(exc.value) == message
    assert s.place(4095, "data") == 4095 and s.read(4094, 2) == [0, 0]


@given(st.integers(-(1 << 40), 1 << 40), st.sampled_from("xdutc"))
def test_any_literal_is_its_word_or_one_line_saying_it_is_none(value, f):
    """`p/F N` for any N: the word's reading computed here by hand, or one refusal naming N."""
    d = Debugger(Stepper(PROGRAM, mem_words=MEM))
    got = d.execute(f"p/{f} {value}")
    if -(1 << 31) <= value < (1 << 32):
        u = value % (1 << 32)
        s = u - (1 << 32) if u >= 1 << 31 else u
        want = {"x": f"0x{u:08x}", "d": str(s), "u": str(u), "t": format(u, "032b"),
                "c": f"{s} {chr(u & 255)!r}"}[f]
        assert got == f"{value} = {want}\n"
    else:
        assert got == f"print: {value} does not fit in a 32-bit word (-2147483648..4294967295)\n"


@given(st.integers(-(1 << 40), 1 << 40), st.integers(1, 8))
def test_any_address_is_read_whole_or_refused_as_given(addr, n):
    """`x/Nd A`, `p *A` and `mem A N` agree: the words there when all N lie in the memory, else one
    line naming A itself (never A modulo 2^32)."""
    d = Debugger(Stepper(PROGRAM, mem_words=MEM))
    inside = 0 <= addr and addr + n <= MEM
    for name, cmd, count in (("x", f"x/{n}d {addr}", n), ("mem", f"mem {addr} {n}", n), ("print", f"p *{addr}", 1)):
        got = d.execute(cmd)
        if 0 <= addr and addr + count <= MEM:
            assert d.last_error is None, got
        elif count == 1 or not 0 <= addr < MEM:
            assert got == f"{name}: data address {addr} is outside the memory (0..{MEM - 1})\n"
        else:
            assert got == f"{name}: {n} words at address {addr} do not fit in the memory (0..{MEM - 1})\n"
    assert inside == (d.execute(f"x/{n}x {addr}").count("0x") == n)
