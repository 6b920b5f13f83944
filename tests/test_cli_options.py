"""Option values of every `s2mc` command: the reproducers (values that once ended in a traceback
or a wrong run), each through the real command
line (a subprocess, so a traceback would show) or click's runner, and the shared value types of
cli/options.py against hand-computed values. Every bad value gives exactly one stderr line starting
`s2mc`, exit 2 for a usage error (naming the option and the allowed range) or 1, and creates no
file or folder. The fuzz suite over every option is tests/test_fuzz_cli.py."""
import json
import os
import subprocess
import sys

import click
import pandas as pd
import pytest
from click.testing import CliRunner

from s2mc.analysis import records
from s2mc.cli.main import cli
from s2mc.cli.options import Choices, Integer, OutputFile, OutputFolder, Seconds, Size, Text
from s2mc.common.errors import S2mcError
from s2mc.workloads.cipher_sim.runner import max_bytes, words_needed
from s2mc.workloads.cipher_host import host_memory

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
SUM_S = """.code 0
  mov r1 #7
  trap r1 #1
  trap r0 #0
.end
"""


def s2mc(*args, cwd):
    return subprocess.run([sys.executable, "-m", "s2mc.cli", *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def tree(path) -> list[str]:
    return sorted(os.path.relpath(os.path.join(d, n), path) for d, ds, fs in os.walk(path) for n in ds + fs)


def one_line(err: str, code: int, rc: int, *needles) -> str:
    """The contract: exit code, one stderr line starting s2mc, the needles in it, no traceback."""
    assert rc == code, err
    assert "Traceback" not in err and len(err.splitlines()) == 1 and err.startswith("s2mc"), err
    for n in needles:
        assert n in err, err
    return err


def invoke(args, cwd, code, *needles):
    """Runs the CLI in-process in `cwd`; checks the contract and that nothing appeared in `cwd`."""
    before = tree(cwd)
    old = os.getcwd()
    os.chdir(cwd)
    try:
        res = CliRunner().invoke(cli, [str(a) for a in args])
    finally:
        os.chdir(old)
    assert isinstance(res.exception, SystemExit), res.exc_info
    one_line(res.stderr, code, res.exit_code, *needles)
    assert tree(cwd) == before
    return res.stderr


# -- the reproducers: values that once ended in a traceback or a wrong run ---------------------------

def test_aes_bytes_16G_states_the_simulated_memory_range(tmp_path):
    proc = s2mc("aes", "--bytes", "16G", cwd=tmp_path)
    # 2 x 2^26 words: the ttable style packs 4 bytes a word, input and output both in memory
    one_line(proc.stderr, 2, proc.returncode, "s2mc aes: error: Invalid value for '--bytes': '16G' is out of "
             "range (1..128M bytes: input and output must fit in the simulated memory, at most 67108864 words)")
    assert tree(tmp_path) == []


def test_aes_bytes_beyond_what_a_style_can_hold(tmp_path):
    most = max_bytes("bytes")
    # the inverse of words_needed: the largest size that fits, and one more that does not
    assert words_needed(most, "bytes") <= 1 << 26 < words_needed(most + 1, "bytes")
    assert words_needed(max_bytes("ttable"), "ttable") <= 1 << 26 < words_needed(max_bytes("ttable") + 4, "ttable")
    invoke(["aes", "--bytes", "64M", "--style", "bytes", "-q"], tmp_path, 1,
           f"--bytes 64M is out of range for the bytes program: at most {most} bytes fit in the largest "
           "simulated memory (--mem-words 67108864)")
    invoke(["aes", "--bytes", "64K", "--mem-words", "100000", "-q"], tmp_path, 1,
           "raise --mem-words to at least", "(at most 67108864)")


def test_aes_key_bits_that_contradict_the_key_are_refused(tmp_path):
    err = invoke(["aes", "--key-bits", "256", "--key", KEY, "--bytes", "16", "--cores", "1", "-q"], tmp_path, 2)
    assert err == ("s2mc aes: error: --key-bits 256 conflicts with --key, a 128-bit key (give one of them, "
                   "or matching ones)\n")
    invoke(["aes", "--key-bits", "128,256", "--key", KEY, "-q"], tmp_path, 2, "--key-bits 128,256 conflicts")
    # a matching --key-bits, or none, runs the key's size
    for args, bits in ((["--key-bits", "128", "--key", KEY], 128), (["--key", KEY * 2], 256)):
        res = CliRunner().invoke(cli, ["aes", *args, "--bytes", "16", "--cores", "1", "--json", "-q"])
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)["runs"][0]["workload"] == f"aes-{bits}-ecb-enc"


@pytest.mark.parametrize("args", [
    ["aes", "--bytes", "16", "--cores", "1", "-q", "--out", "{m}/x.parquet"],
    ["aes", "--bytes", "16", "--cores", "1", "-q", "--engine", "systemc", "--vcd", "{m}/x.vcd"],
    ["run", "{src}", "--out", "{m}/x.csv"],
    ["run", "{src}", "--trace", "{m}/x.log"],
    ["run", "{src}", "--engine", "systemc", "--vcd", "{m}/x.vcd"],
    ["asm", "{src}", "-o", "{m}/x.obj"],
    ["compile", "{rz}", "-o", "{m}/x.s"],
    ["native", "--bytes", "16", "--threads", "1", "--min-seconds", "0", "--reps", "1", "-q", "--out", "{m}/x.parquet"],
    ["coherence-native", "--bench", "locks", "--threads", "1", "--acquisitions", "10", "--reps", "1", "-q",
     "--out", "{m}/x.parquet"],
    ["litmus-native", "--test", "sb", "--iterations", "10", "-q", "--out", "{m}/x.parquet"],
    ["gpu", "--out", "{m}/x.parquet"],
    ["gpu", "--markdown", "{m}/x.md"],
    ["encrypt", "--in", "{src}", "--key", KEY, "--iv", IV, "--out", "{m}/x.enc"],
    ["decrypt", "--in", "{src}", "--key", KEY, "--iv", IV, "--out", "{m}/x.dec"],
    ["report", "--out", "{m}/report"],
    ["demo", "--out", "{m}/report"],
    ["demo", "--results", "{m}/results"],
])
def test_an_output_in_a_missing_folder_is_one_line_and_creates_nothing(tmp_path, args):
    work = tmp_path / "work"
    work.mkdir()
    src, rz = tmp_path / "p.s", tmp_path / "p.rz"
    src.write_text(SUM_S)
    rz.write_text("int main() { return 0; }\n")
    missing = tmp_path / "missing" / "deeper"
    args = [a.format(m=missing, src=src, rz=rz) for a in args]
    opt = args[next(i for i, a in enumerate(args) if str(missing) in a) - 1]
    err = invoke(args, work, 2, f"Invalid value for '{opt}'", f"folder {missing} does not exist")
    assert args[0] in err.split(":")[0]
    assert not (tmp_path / "missing").exists()
    assert tree(tmp_path) == ["p.rz", "p.s", "work"]


def test_native_sizes_beyond_this_machines_memory(tmp_path):
    mem = host_memory()
    rng = f"(1..{mem >> 20}M bytes: this machine's memory)"
    big = "64G" if mem < 64 << 30 else "1024G"
    proc = s2mc("native", "--bytes", big, "-q", cwd=tmp_path)
    one_line(proc.stderr, 2, proc.returncode, f"s2mc native: error: Invalid value for '--bytes': '{big}' is out "
             f"of range {rng}")
    for text in (f"{(mem >> 20) + 1}M", "99999999999999999999", "9" * 5000):
        invoke(["native", "--bytes", text, "-q"], tmp_path, 2, "'--bytes': '", f"is out of range {rng}")
    # the library refuses the same (no pybind TypeError, no bad_alloc)
    from s2mc.workloads import native
    with pytest.raises(S2mcError, match="do not fit in this machine's memory"):
        native.bench_ctr(10 ** 20, min_reps=1, min_seconds=0)
    with pytest.raises(S2mcError, match="do not fit in this machine's memory"):
        native.bench_ctr(mem // 2 + 16, threads=2, multi=True, min_reps=1, min_seconds=0)


@pytest.mark.parametrize("text,why", [
    ("nan", "'nan' is not a finite number (0..3600 s)"),
    ("inf", "'inf' is not a finite number (0..3600 s)"),
    ("-inf", "'-inf' is not a finite number (0..3600 s)"),
    ("1e309", "'1e309' is not a finite number (0..3600 s)"),
    ("-1", "'-1' is out of range (0..3600 s)"),
    ("3601", "'3601' is out of range (0..3600 s)"),
    ("soon", "'soon' is not a number"),
])
def test_native_min_seconds_is_finite_and_bounded(tmp_path, text, why):
    invoke(["native", "--bytes", "16", "--min-seconds", text, "-q"], tmp_path, 2,
           f"s2mc native: error: Invalid value for '--min-seconds': {why}")


def test_native_min_seconds_zero_means_reps_alone(tmp_path):
    res = CliRunner().invoke(cli, ["native", "--bytes", "16", "--threads", "1", "--min-seconds", "-0", "--reps",
                                   "2", "--json", "-q"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["results"][0]["reps"] >= 2


def test_encrypt_chunk_bytes_is_bounded(tmp_path):
    (tmp_path / "in").write_bytes(b"x" * 100)
    base = ["encrypt", "--in", "in", "--out", "out", "--key", KEY, "--iv", IV, "--chunk-bytes"]
    proc = s2mc(*base, "64G", cwd=tmp_path)
    one_line(proc.stderr, 2, proc.returncode,
             "s2mc encrypt: error: Invalid value for '--chunk-bytes': '64G' is out of range (16..1G bytes)")
    invoke(base + ["100"], tmp_path, 2, "'100' is not a multiple of 16 bytes")
    invoke(base + ["0"], tmp_path, 2, "'0' is out of range (16..1G bytes)")
    assert tree(tmp_path) == ["in"]
    # the pipeline itself refuses a chunk it cannot hold
    from s2mc.workloads.cipher_host import crypt_file
    with pytest.raises(S2mcError, match=r"chunk size must be a multiple of 16 bytes in 16..1G"):
        crypt_file(tmp_path / "in", tmp_path / "out", lambda v, o: None, chunk_bytes=64 << 30)
    assert tree(tmp_path) == ["in"]


HEADER = "run_id,experiment,source,platform,workload,variant,engine,cores,core,bytes,metric,value,unit\n"


@pytest.mark.parametrize("row,needles", [
    ("r1,,sim,s2,w,v,fast,99999999999999999999,-1,0,cycles,5,cycles",
     ["column 'cores': value 99999999999999999999 at row 0 is out of range (a 64-bit integer"]),
    ("r1,,sim,s2,w,v,fast,1,-1,-99999999999999999999,cycles,5,cycles", ["column 'bytes': value -9999"]),
    ("r1,,sim,s2,w,v,fast,1,-1,0,cycles,1" + "0" * 400 + ",cycles", ["column 'value': expected float values"]),
    ("r1,,sim,s2,w,v,fast,1,-1,0,cycles,1e400,cycles", ["column 'value': value must be finite at row 0"]),
    ("r1,,sim,s2,w,v,fast,1,-1,0,cycles,5,cycles\nr1,,sim,s2,w,v,fast,1,-1,0,cycles,5,cycles,extra,fields",
     ["cannot read (Error tokenizing data. C error: Expected 13 fields in line 3, saw 15)"]),
])
def test_report_on_a_bad_records_file_names_file_column_and_row(tmp_path, row, needles):
    (tmp_path / "bad.csv").write_text(HEADER + row + "\n")
    err = invoke(["report", "bad.csv", "--out", "rep"], tmp_path, 1, "s2mc: error: ", "bad.csv", *needles)
    assert len(err) < 400


# -- every command: one line for whatever value ------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    (["--bogus"], "s2mc: error: No such option '--bogus'"),
    (["nosuch"], "s2mc: error: No such command 'nosuch'"),
    (["aes", "--cores", "1,,2"], "'--cores': '1,,2': empty item in the list"),
    (["aes", "--cores", "9" * 5000], "'--cores': '99999"),
    (["aes", "--experiment", "a\nb"], "'--experiment': 'a\\nb' contains the character '\\n'"),
    (["aes", "--seed", "-1"], "'--seed': '-1' is out of range (0..9223372036854775807)"),
    (["run", "p.s", "--out", "-"], "'--out': the records cannot go to stdout"),
    (["run", "p.s", "--vcd", "x\u2028y/z.vcd"], "x\\u2028y does not exist"),
    (["native", "--threads", "1025"], "'--threads': '1025' is out of range (1..1024)"),
    (["native", "--threads", "all,0x10"], "'--threads': '0x10' is not an integer (or all, max)"),
    (["native", "--reps", "1000001"], "'--reps': '1000001' is out of range (1..1000000)"),
    (["native", "--impl", "auto,"], "'--impl': 'auto,': empty item in the list"),
    (["native", "--multi", "--threads", "1024", "--bytes", f"{(host_memory() >> 20) // 512}M"],
     "--multi: 1024 threads x"),
    (["encrypt", "--in", "p.s", "--out", "o", "--key-env", "A=B", "--iv", IV], "'--key-env': 'A=B' contains"),
    (["encrypt", "--in", "p.s", "--out", "o", "--key", KEY, "--iv", IV, "--threads", "0"],
     "'--threads': '0' is out of range (1..1024)"),
    (["encrypt", "--in", "p.s", "--out", "o", "--key", KEY, "--iv", IV, "--impl", "rot13"],
     "'--impl': unknown value 'rot13' (choose auto, vaes512, vaes, aesni, ttable, sptable)"),
    (["gpu", "--threads", "48"], "'--threads': '48' is not a multiple of 32"),
    (["gpu", "--threads", "2048"], "'--threads': '2048' is out of range (32..1024)"),
    (["gpu", "--streams", "65"], "'--streams': '65' is out of range (1..64)"),
    (["gpu", "--chunk-bytes", "-1"], "'--chunk-bytes': '-1' is not a size"),
    (["gpu", "--reps", "10001"], "'--reps': '10001' is out of range (1..10000)"),
    (["gpu", "--kernel", "a,\x07"], "'--kernel': '\\x07' contains the character '\\x07'"),
    (["report", "--out", "p.s"], "'--out': p.s: cannot write report: it exists and is not a folder"),
    (["report", "--title", "x" * 201], "is longer than 200 characters"),
    (["demo", "--results", ""], "'--results': records folder: empty folder name"),
])
def test_bad_values_are_one_usage_line(tmp_path, args, needle):
    (tmp_path / "p.s").write_text(SUM_S)
    invoke(args, tmp_path, 2, needle)


def test_gpu_without_a_gpu_is_one_line_after_its_options_are_checked(tmp_path):
    from s2mc import gpu
    if gpu.status()["gpu_present"]:
        pytest.skip("a GPU is present")
    invoke(["gpu", "--bytes", "16", "--reps", "1", "-q"], tmp_path, 1, "s2mc: error: gpu: ")


# -- the value types, against hand-computed values ---------------------------------------------------

def convert(ptype, text):
    return ptype.convert(text, None, None)


def bad(ptype, text) -> str:
    with pytest.raises(click.BadParameter) as info:
        ptype.convert(text, None, None)
    return info.value.message


def test_size_type():
    s = Size(1, 1 << 30)
    assert [convert(s, t) for t in ("1", "4096", "16K", "16k", "64M", "1G", "4KB", "4KiB", " 8 ", "007")] == [
        1, 4096, 16384, 16384, 64 << 20, 1 << 30, 4096, 4096, 8, 7]
    assert bad(s, "0") == "'0' is out of range (1..1G bytes)"
    assert bad(s, "2G") == "'2G' is out of range (1..1G bytes)"
    assert bad(s, "9" * 5000).endswith("... (5000 characters)' is out of range (1..1G bytes)")
    for text in ("", "-1", "1.5K", "0x10", "16T", "1e3", "\u0661", "K", "1,2"):
        assert bad(s, text).endswith("is not a size (examples: 4096, 16K, 64M, 1G)"), text
    assert bad(Size(16, 1 << 20, multiple=16), "24") == "'24' is not a multiple of 16 bytes"
    many = Size(1, 1 << 20, many=True)
    assert convert(many, "16, 1K,4K") == [16, 1024, 4096]
    assert bad(many, ",") == "empty list" and bad(many, "") == "empty list"
    assert bad(many, "1,,2") == "'1,,2': empty item in the list"
    assert convert(Size(1, lambda: 32), "32") == 32 and bad(Size(1, lambda: 32), "33").startswith("'33' is out")


def test_integer_seconds_choices_text_types():
    i = Integer(1, 64, names={"all": lambda: 7})
    assert [convert(i, t) for t in ("1", "+5", "064", "all", "ALL")] == [1, 5, 64, 7, 7]
    assert bad(i, "0") == "'0' is out of range (1..64)"
    assert bad(i, "-0") == "'-0' is out of range (1..64)"
    assert bad(i, "1" + "0" * 100).endswith("' is out of range (1..64)")
    assert bad(i, "1.0") == "'1.0' is not an integer (or all)"
    assert bad(Integer(32, 1024, multiple=32), "33") == "'33' is not a multiple of 32"
    sec = Seconds(0, 3600)
    assert convert(sec, "0.25") == 0.25 and str(convert(sec, "-0")) == "0.0" and convert(sec, "1e3") == 1000
    c = Choices(("ecb", "ctr"))
    assert convert(c, "ctr,ecb") == ["ctr", "ecb"]
    assert bad(c, "cbc") == "unknown value 'cbc' (choose ecb, ctr)"
    assert bad(Choices(("a",), many=False), "a,a") == "unknown value 'a,a' (choose a)"
    t = Text(5)
    assert convert(t, "é名") == "é名" and convert(t, "") == ""
    assert bad(t, "abcdef") == "'abcdef' is longer than 5 characters"
    assert bad(t, "a\tb") == "'a\\tb' contains the character '\\t'"
    assert bad(Text(empty=False), "") == "empty value"


def test_output_types(tmp_path, null_device):
    f = OutputFile("records", stdout=False)
    assert convert(f, str(tmp_path / "x.csv")) == str(tmp_path / "x.csv")
    assert convert(f, null_device) == null_device
    assert bad(f, "-") == "the records cannot go to stdout ('-'), which the command prints on; name a file"
    assert convert(OutputFile(), "-") == "-"
    assert bad(f, str(tmp_path)).endswith("is a directory; name an output file, not a folder")
    assert bad(f, "") == "records: empty output path"
    assert bad(f, "a\0b") == "'a\\x00b' contains a NUL byte"
    d = OutputFolder("report")
    assert convert(d, str(tmp_path / "new")) == str(tmp_path / "new") and not (tmp_path / "new").exists()
    assert convert(d, str(tmp_path)) == str(tmp_path)
    assert bad(d, null_device).endswith("cannot write report: it exists and is not a folder")
    assert bad(d, str(tmp_path / "a" / "b")) == f"{tmp_path / 'a' / 'b'}: cannot write report: folder " \
                                                f"{tmp_path / 'a'} does not exist"
    assert tree(tmp_path) == [] or tree(tmp_path) == ["null"]


def test_records_are_written_into_existing_folders_only(tmp_path, null_device):
    df = records.make_records([{"run_id": "r", "source": "sim", "metric": "cycles", "value": 5}])
    with pytest.raises(S2mcError, match="cannot write records: folder .* does not exist"):
        records.write(df, tmp_path / "no" / "x.parquet", params={"a": 1})
    assert tree(tmp_path) in ([], ["null"])
    # beside a device there is no manifest (it would be a new file in /dev)
    records.write(df, null_device, params={"a": 1})
    assert tree(tmp_path) in ([], ["null"])
    records.write(df, tmp_path / "x.csv", params={"a": 1})
    assert pd.read_csv(tmp_path / "x.csv")["value"].tolist() == [5.0]
    assert (tmp_path / "x.manifest.json").exists()
