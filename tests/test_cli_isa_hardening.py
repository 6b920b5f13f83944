"""Bad sources and object files that once ended in a traceback, through the real command line (a subprocess, so a traceback would show):
non-UTF-8 sources reach `run` and `disasm` as well as `asm`, and every bad source or object file is
one line on stderr with exit code 1."""
import json

import pytest

from test_cli_sim import one_line_error, s2mc

ADS_MAX = (1 << 22) - 1


def test_non_utf8_source_is_one_line_naming_file_and_line_in_every_command(tmp_path):
    src = tmp_path / "latin1.s"
    src.write_bytes(b".code 0\n  trap r0 #0 ; caf\xe9\n")
    for args in (["asm", src], ["run", src], ["disasm", src]):
        proc = s2mc(*args)
        assert proc.returncode == 1
        one_line_error(proc, "latin1.s:2: not a text file (byte 0xe9 is not UTF-8)")
    obj = tmp_path / "latin1.obj"
    obj.write_bytes(b"s2obj 1\nentry 0\n\xff\n")
    for args in (["run", obj], ["disasm", obj]):
        one_line_error(s2mc(*args), "latin1.obj:3: bad object file: not a text file (byte 0xff")


def test_a_byte_order_mark_is_not_part_of_the_source(tmp_path):
    src = tmp_path / "bom.s"
    src.write_bytes(b"\xef\xbb\xbf.code 0\n  mov r1 #7\n  trap r1 #1\n  trap r0 #0\n")
    proc = s2mc("run", src, "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["output"] == "7"


@pytest.mark.parametrize("name,content,needles", [
    ("octal.s", ".code 0\n  mov r1 #010\n  trap r1 #1\n  trap r0 #0\n", None),
    ("digits.s", ".code 0\n  mov r1 #" + "1" * 5000 + "\n", ["digits.s:2: immediate 1111", "out of range"]),
    ("long.s", ".code 0\n  frob " + "x" * 10_000_000 + "\n", ["long.s:2: unknown instruction 'frob'",
                                                             "(10000005 characters)"]),
    ("past.s", f".code {ADS_MAX}\n  nop\n  nop\n", ["past.s:3: .code segment runs past the last address"]),
    ("entry.obj", "s2obj 1\nentry 99999999999999999999999\ncode 0\n00000000\n", ["entry.obj:2:", "entry out of range"]),
    ("data.obj", "s2obj 1\ndata 999999999999\n00000001\n", ["data.obj:2:", "data address out of range"]),
])
def test_reproducers_through_run(tmp_path, name, content, needles):
    path = tmp_path / name
    path.write_text(content)
    proc = s2mc("run", path, "--json")
    if needles is None:                       # leading zeros: decimal, so this prints 10
        assert proc.returncode == 0 and json.loads(proc.stdout)["output"] == "10"
        return
    assert proc.returncode == 1
    err = one_line_error(proc, *needles)
    assert len(err) < 400


def test_disasm_of_odd_words_reassembles_to_the_same_object(tmp_path):
    obj = tmp_path / "odd.obj"
    # an undefined opcode, a nop with its unused address field set, a sync with r1 set, a real add
    obj.write_text("s2obj 1\nentry 0\ncode 0\nf8000fff 0000002a f840001f 50841fff\n")
    dis = s2mc("disasm", obj)
    assert dis.returncode == 0, dis.stderr
    assert dis.stdout.count(".word") == 3 and "add r2 r2 #8191" in dis.stdout
    (tmp_path / "odd.s").write_text(dis.stdout)
    assert s2mc("asm", tmp_path / "odd.s", "-o", tmp_path / "again.obj").returncode == 0
    assert (tmp_path / "again.obj").read_text() == obj.read_text()
