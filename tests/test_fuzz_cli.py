"""Permanent fuzz suite for the option values of every `s2mc` command (docs/reliability.md,
"Command-line options").

For each command, hypothesis picks one or two of its options (its argument too) and gives each a
value from a soup of hostile values (huge, negative, zero, -0, nan, inf, 1e309, 16G, empty, `,`,
`1,,2`, Unicode, control characters, a path into a missing folder, a device, a folder, stdout) or
from the option's own borderline values, on top of a tiny valid command line (small --bytes,
--quiet), in a fresh sandbox folder. The guarantee checked: exit 0; or exit 1 or 2 with exactly one
stderr line starting `s2mc`, no traceback, the runner's exception a SystemExit (nothing escaping);
and for a usage error (exit 2) nothing created at all.

Values that would make a valid run long (native buffers over 64K, --min-seconds over 10 ms, a
256 MiB simulated memory, huge pipeline chunks, coherence-native counts over 100,000) are left out; their range checks are unit-tested in
tests/test_cli_options.py. `s2mc gpu` runs with the GPU and every OpenCL device reported absent, so no CUDA or OpenCL runs here;
`report` and `demo` run with the report builder replaced by one that reads the records and creates
the folder as the real one does (the real one draws plots for seconds: tests/test_analysis_report.py).

Counts are per test at the default (ci) profile; HYPOTHESIS_PROFILE=thorough multiplies them by 16.
"""
import contextlib
import os
import shutil
import stat
import tempfile
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

import pandas as pd
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from s2mc.cli.main import all_commands, cli
from s2mc.isa import assemble
from s2mc.common.units import parse_size

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff"
PROG_S = ".code 0\n  cid r1\n  ld r2 @0 r1\n  trap r2 #1\n  sync\n  trap r0 #0\n.data 0\n  7 8\n.end\n"
PROG_RZ = "int main() { print(6 * 7); return 0; }\n"
RECORDS = ("run_id,experiment,source,platform,workload,variant,engine,cores,core,bytes,metric,value,unit\n"
           "r1,x,sim,s2,aes-128-ecb-enc,bytes/interleaved,fast,1,-1,16,cycles,9148,cycles\n")
BAD_RECORDS = RECORDS.replace(",1,-1,16,", ",99999999999999999999,-1,16,")


# Thousands of sandboxes: in memory where the system has a tmpfs (removing folders on a disk costs
# milliseconds each).
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def examples(n: int):
    """n examples in the default profile, 16 x n under HYPOTHESIS_PROFILE=thorough."""
    return settings(max_examples=n * max(1, settings().max_examples // 300))


# -- the soup ----------------------------------------------------------------------------------------

# {name} stands for a path in the example's sandbox (see sandbox()).
SOUP = ["99999999999999999999", "9" * 400, "9" * 5000, "-1", "-99999999999999999999", "0", "-0", "+0", "00",
        "1", "2", "16", "nan", "-nan", "inf", "-inf", "1e309", "-1e309", "1e-309", "0.5", "16G", "64G", "1T",
        "0x10", "1_0", "", " ", ",", "1,,2", "1,2,", ",1", "all", "é", "名前", "\u0661", "\u2028", "a\nb", "\t",
        "\x07", "💥", "-", "--", "--help", "{missing}/x.out", "{missing}/", "{devnull}", "{folder}",
        "{folder}/", "{file}"]

TIMELINE = {"--timeline": ["t.html", "t.json", "t.txt"], "--from-cycle": ["0", "10", "-1"], "--to-cycle": ["5", "0"]}
# Each command: its positional arguments, its tiny valid options, its flags, and per option its own
# borderline values (valid and invalid). `None` in ARGS marks the positional argument.
SPECS = {
    "info": dict(base={}, flags=["--json"], options={}),
    "asm": dict(args=["{prog_s}"], base={"-o": "out.obj"}, flags=["--listing"],
                options={None: ["{prog_s}", "{prog_rz}", "{prog_obj}", "missing.s"], "-o": ["x.obj", "-"]}),
    "disasm": dict(args=["{prog_obj}"], base={}, flags=[],
                   options={None: ["{prog_obj}", "{prog_s}", "{records}"]}),
    "compile": dict(args=["{prog_rz}"], base={"-o": "out.s"}, flags=["-O0", "-O1", "-g"],
                    options={None: ["{prog_rz}", "{prog_s}", "x.rz"], "-o": ["x.s", "-"]}),
    "run": dict(args=["{prog_s}"], base={"--mem-words": "1024"}, flags=["--json", "-q"], options={
        None: ["{prog_s}", "{prog_rz}", "{prog_obj}", "sum.rz", "{records}"],
        "--cores": ["1,2", "64", "257", "1,64"], "--mem-latency": ["1", "1000", "1001"],
        "--arbitration": ["fifo", "fixed,round_robin", "lottery"], "--engine": ["fast", "systemc", "reference"],
        "--max-cycles": ["5", "4611686018427387904", "4611686018427387905"],
        "--mem-words": ["1", "16", "4096", "67108865"], "-O": ["0", "1", "2"],
        "--trace": ["t.log", "-"], "--vcd": ["w.vcd"], "--out": ["r.csv", "r.parquet"],
        "--experiment": ["e1"], "--cache": ["none", "mesi", "lru"], "--cache-lines": ["64", "6", "65537"],
        "--cache-ways": ["1", "3", "0"], "--line-words": ["4", "1025", "12"],
        "--cache-hit-latency": ["1", "101"], "--consistency": ["tso", "pso", "rc"],
        "--store-buffer-entries": ["1", "64", "0", "65"], "--interconnect": ["ring", "mesh", "torus"],
        "--coherence": ["directory", "snoop", "mesi"], "--link-latency": ["1", "101"],
        "--router-latency": ["0", "-1"], "--flit-words": ["1", "1025"], **TIMELINE}),
    "aes": dict(base={"--cores": "1", "--bytes": "16"}, flags=["--json", "-q"], options={
        "--cores": ["1,2", "64", "257"], "--bytes": ["32", "17", "1K", "128M", "134217729"],
        "--key-bits": ["192", "128,256", "512"], "--mode": ["ctr", "ecb,ctr", "cbc"],
        "--direction": ["dec", "enc,dec"], "--style": ["ttable", "bytes,ttable", "words"],
        "--partition": ["extended", "contiguous"], "--ext-blocks": ["1", "8388608", "8388609"],
        "--mem-latency": ["1000"], "--arbitration": ["round_robin"], "--engine": ["systemc", "fast,systemc"],
        "--vcd": ["w.vcd"], "--opt": ["0", "0,1"], "--mem-words": ["100", "4096", "67108865"],
        "--key": [KEY, KEY * 2, KEY[:-1], "zz"], "--seed": ["0", "9223372036854775807", "9223372036854775808"],
        "--experiment": ["e1"], "--out": ["r.parquet", "r.csv"], "--key-expansion": ["per-core", "core0,per-core", "all"],
        "--preset": ["seed003", "seed004"], "--cache": ["mesi", "none,dragon", "lru"],
        "--cache-lines": ["64", "6"], "--cache-ways": ["1", "3"], "--line-words": ["4", "1025"],
        "--cache-hit-latency": ["1", "101"], "--interconnect": ["mesh", "bus,ring", "torus"],
        "--link-latency": ["1", "101"], "--router-latency": ["2", "101"], "--flit-words": ["1", "0"], **TIMELINE}),
    # fidelity runs only the cheapest hypothesis (the engine's, 14 runs) unless --only changes it
    "fidelity": dict(base={"--only": "today"}, flags=["--json", "-q"], options={
        "--only": ["today", "fifo,rr", "model-x", ""], "--out": ["r.parquet", "r.csv", "-"]}),
    "litmus": dict(args=["sb.s"], base={"--runs": "5"}, flags=["--json"], options={
        None: ["sb.s", "peterson", "sb_fence.s", "{prog_s}", "{prog_rz}", "missing.s", "missing_fence.s"],
        "--model": ["sc", "tso", "pso", "rc"],
        "--engine": ["fast", "systemc", "reference"], "--runs": ["1", "20", "0", "1000001"], "--seed": ["0", "5", "-1"],
        "--fence": ["f0", "f0,f1", "nowhere", "", ","], "--interconnect": ["bus", "mesh", "ring", "torus"],
        "--coherence": ["snoop", "directory", "mesi"]}),
    "native": dict(base={"--bytes": "16", "--threads": "1", "--min-seconds": "0", "--reps": "1"},
                   flags=["-q", "--json", "--vs-openssl", "--multi"], options={
        "--threads": ["2", "all", "1,all", "1024", "1025"], "--bytes": ["1K", "16K", "1000"],
        "--impl": ["all", "ttable", "vaes512", "auto,ttable"], "--strategy": ["coarse", "extended,coarse"],
        "--block-bytes": ["32", "1G", "1000"], "--key-bits": ["256", "100"],
        "--min-seconds": ["0.001", "3600", "3601"], "--reps": ["5", "1000001"],
        "--experiment": ["e1"], "--out": ["r.parquet"], "--cipher": ["camellia", "aes,camellia", "des", "sc2000",
                                                                    "hierocrypt3", "sc2000,camellia"]}),
    "coherence-native": dict(base={"--iterations": "100", "--acquisitions": "100", "--round-trips": "100",
                                   "--reps": "1"}, flags=["-q", "--json", "--force"], options={
        "--bench": ["locks", "ping-pong,locks", "false-sharing", "cache", "core-to-core"],
        "--threads": ["2", "all", "1,all", "3", "0"], "--cores": ["2", "all", "3", "1"],
        "--mesh-cores": ["none", "same", "2,4", "65"], "--png": ["h.png"],
        "--increment": ["atomic", "plain,atomic", "cas"], "--lock": ["tas", "ttas,ticket", "mcs"],
        "--iterations": ["1", "1000", "1000000001"], "--acquisitions": ["1", "1000000001"],
        "--round-trips": ["200", "150", "99"], "--reps": ["2", "1000", "1001"], "--experiment": ["e1"],
        "--out": ["r.parquet", "r.csv"]}),
    "litmus-native": dict(base={"--iterations": "100", "--batch": "10"}, flags=["-q", "--json", "--force"], options={
        "--test": ["sb", "iriw,mp", "2+2w", "dekker"], "--fences": ["plain", "mfence,plain", "lfence"],
        "--iterations": ["1", "1000", "1000000001"], "--batch": ["1", "100000", "100001", "0"],
        "--experiment": ["e1"], "--out": ["r.parquet", "r.csv"]}),
    "encrypt": dict(base={"--in": "{file}", "--out": "o.bin", "--key": KEY, "--iv": IV}, flags=["-q", "--json", "--timings"],
                    options={
        "--in": ["{file}", "{prog_s}"], "--out": ["o.bin", "-", "{file}"], "--key": [KEY, KEY * 2, "-", "zz"],
        "--key-file": ["{key_file}", "{prog_s}"], "--key-env": ["S2MC_FUZZ_KEY", "S2MC_NOT_SET", "A=B"],
        "--iv": [IV, "-", IV[:-2]], "--iv-file": ["{iv_file}"], "--iv-env": ["S2MC_FUZZ_IV"],
        "--backend": ["cuda", "native", "opencl"], "--impl": ["ttable", "vaes512", "all"],
        "--threads": ["2", "1024", "1025"], "--chunk-bytes": ["16", "1M", "1G", "24", "2G"],
        "--mode": ["ecb", "ctr", "cbc"], "--records": ["r.csv", "r.parquet", "-", "o.bin"],
        "--cipher": ["camellia", "aes", "des", ""], "--segment": ["auto", "calibrate", "4K", "17", "2G"]}),
    "gpu": dict(base={"--bytes": "16", "--reps": "1"}, flags=["-q", "--json", "--occupancy", "--calibrate"], options={
        "--kernel": ["all", "coarse", "optimised-0", "warp"], "--bytes": ["1M", "8", "1,,2"],
        "--measure": ["host", "keystream,device", "warp"], "--key-bits": ["256", "512"],
        "--mode": ["ecb-enc", "cbc"], "--streams": ["64", "65", "1,4"], "--chunk-bytes": ["0", "1M"],
        "--ext-bytes": ["16", "24", "4K"], "--threads": ["32", "1024", "48", "2048"],
        "--reps": ["10000", "10001"], "--out": ["r.parquet"], "--markdown": ["t.md", "-"],
        "--cipher": ["aes", "camellia", "des"], "--backend": ["cuda", "opencl", "rocm"],
        "--segment": ["auto", "calibrate", "1M", "24", "2G"], "--budget": ["0.05", "0.01", "600", "601"],
        "--warmup": ["0", "3", "10001"], "--min-seconds": ["0", "0.5", "3601"]}),
    "report": dict(args=["{records}"], base={"--out": "rep"}, flags=["--json"], options={
        None: ["{records}", "{bad_records}", "{folder}", "{prog_s}", "missing.csv"], "--out": ["rep", "{folder}"],
        "--title": ["T", "x" * 300]}),
    "demo": dict(base={"--results": "res", "--out": "rep"}, always=["--quiet"], flags=["--full"], options={
        "--results": ["res", "{folder}"], "--out": ["rep", "{folder}"], "--skip": ["sim", "gpu", "cpu"]}),
}
SPECS["decrypt"] = SPECS["encrypt"]
# cipher: s2mc aes's options for any cipher, plus --cipher; --style takes every cipher's styles
SPECS["cipher"] = dict(base={"--cores": "1", "--bytes": "16", "--cipher": "camellia"}, flags=["--json", "-q"], options={
    **SPECS["aes"]["options"], "--cipher": ["aes", "aes,camellia", "des", "camellia,camellia"],
    "--style": ["sp", "ttable,sp", "bytes", "words"]})
# sweep: the spec is never a valid experiment here (a run would take long), so the options are
# parsed and the spec refused with one line
SPECS["sweep"] = dict(args=["{records}"], base={"--out": "s.parquet"}, flags=["--quick", "--fresh", "-q"], options={
    None: ["{records}", "{missing}/s.toml", "{folder}"], "--out": ["s.parquet", "{folder}"],
    "--executor": ["local", "dask"], "--scheduler": ["tcp://127.0.0.1:1"], "--workers": ["1", "0", "4097"]})
SPECS["examples"] = dict(base={}, flags=[], options={})
SPECS["lab"] = dict(base={}, flags=[], options={})
# lab write measures its answers (a second): few examples; lab check never gets a valid notebook
SPECS["lab write"] = dict(base={"--to": "{missing}"}, flags=[], options={"--to": ["{folder}", ".", "{file}"]})
SPECS["lab check"] = dict(args=["{records}"], base={"--timeout": "1"}, flags=[], options={
    None: ["{records}", "{prog_s}", "missing.ipynb"], "--timeout": ["1", "3600", "3601", "0"]})
SPECS["examples copy"] = dict(args=["fib.rz"], base={"--to": "ex"}, flags=["--force"], options={
    None: ["fib.rz", "sum.s", "nosuch.rz", "../fib.rz"], "--to": ["ex", ".", "{folder}"]})
SPECS["examples show"] = dict(args=["fib.rz"], base={}, flags=[], options={None: ["fib.rz", "barrier.s"]})
# debug reads its commands from stdin: empty here, so it loads the program and leaves
SPECS["debug"] = dict(args=["{prog_s}"], base={"--mem-words": "1024"}, flags=[], options={
    None: ["{prog_s}", "{prog_rz}", "{prog_obj}", "spin_lock.s", "{records}"],
    "--cores": ["1", "64", "257", "1,2"], "--mem-latency": ["1", "1000", "1001"],
    "--arbitration": ["fifo", "round_robin", "lottery"], "--engine": ["fast", "systemc"],
    "--max-cycles": ["5", "4611686018427387904", "4611686018427387905"],
    "--mem-words": ["1", "16", "4096", "67108865"], "-O": ["0", "1", "2"],
    "--cache": ["msi", "lru"], "--cache-lines": ["64", "6"], "--cache-ways": ["2", "0"],
    "--line-words": ["4", "12"], "--cache-hit-latency": ["1", "101"], "--consistency": ["tso", "pso", "rc"],
    "--store-buffer-entries": ["1", "64", "0", "65"], "--interconnect": ["ring", "mesh", "torus"],
    "--coherence": ["directory", "snoop", "mesi"], "--link-latency": ["1", "101"],
    "--router-latency": ["0", "-1"], "--flit-words": ["1", "1025"]})
# serve: the server is built (its socket bound, on --port 0 by default) but never started (tests/
# test_server_*.py start real ones); a scheduler never connects
SPECS["serve"] = dict(base={"--port": "0"}, flags=[], options={
    "--host": ["127.0.0.1", "0.0.0.0", "::1", "localhost", "no.such.host.invalid"],
    "--port": ["0", "65536", "-1"], "--workers": ["1", "256", "257", "0"], "--queue": ["0", "10000", "10001"],
    "--token": ["t", ""], "--executor": ["local", "dask"], "--scheduler": ["nonsense"],
    "--wall-seconds": ["0.1", "3600", "0.05", "3601"],
    "--max-cycles": ["1", "4611686018427387904", "4611686018427387905"],
    "--memory-mib": ["16", "15", "1048576", "1048577"],
    "--teacher-token": ["teacher", ""], "--class": ["no/such/roster.csv", "."], "--links": ["no/such/links.csv"],
    "--db": ["nonsense://x", "no/such/folder/lab.db"],
    "--student-jobs": ["1", "10000", "0", "10001"], "--student-sessions": ["1", "10000", "0", "10001"],
    "--connections-per-address": ["1", "100000", "0", "100001"],
    "--header-seconds": ["0.1", "3600", "0.05", "3601", "nan"], "--body-seconds": ["0.1", "3600", "0.05", "inf"],
    "--teacher-wall-seconds": ["0.1", "3600", "0.05", "3601"]})

# Every command that writes files takes --force (replace a read-only output: cli/options.py).
for _name in ("asm", "compile", "run", "aes", "cipher", "fidelity", "native", "encrypt", "decrypt", "gpu", "sweep",
              "coherence-native", "litmus-native"):
    if "--force" not in SPECS[_name]["flags"]:
        SPECS[_name]["flags"] = SPECS[_name]["flags"] + ["--force"]


def too_slow(option: str | None, value: str) -> bool:
    """Valid values that would make the run long (their ranges are unit-tested instead)."""
    def sizes():
        try:
            return [parse_size(v) or 0 for v in value.split(",")]
        except ValueError:
            return [0]
    if option in ("--bytes", "--block-bytes") and max(sizes()) > 64 << 10:
        return option == "--bytes"
    if option == "--chunk-bytes" and max(sizes()) > 16 << 20:
        return True
    def number():
        v = value.strip()
        return int(v) if v.isascii() and v.isdigit() and len(v) < 30 else None
    if option == "--mem-words":
        return (number() or 0) > 1 << 20 and number() <= 1 << 26
    if option == "--min-seconds":
        try:
            return 0.01 < float(value) <= 3600
        except ValueError:
            return False
    if option in ("--iterations", "--acquisitions", "--round-trips"):   # coherence-native's, litmus-native's counts
        return (number() or 0) > 100_000 and number() <= 10 ** 9
    if option == "--runs":   # s2mc litmus
        return (number() or 0) > 1000 and number() <= 10 ** 6
    if option == "--reps":
        return (number() or 0) > 1000 and number() <= 10 ** 6
    return False


# -- the sandbox and the check -------------------------------------------------------------------------

def _make_sandbox(root: Path) -> dict[str, str]:
    """The files every example may name, in a fresh folder; returns {name: path}."""
    fix = root / "fix"
    (fix / "dir").mkdir(parents=True)
    files = {"prog_s": ("p.s", PROG_S), "prog_rz": ("p.rz", PROG_RZ), "prog_obj": ("p.obj", assemble(PROG_S).to_text()),
             "records": ("r.csv", RECORDS), "bad_records": ("bad.csv", BAD_RECORDS), "file": ("in.bin", "x" * 100),
             "key_file": ("key.hex", KEY + "\n"), "iv_file": ("iv.hex", IV + "\n")}
    paths = {}
    for name, (fname, text) in files.items():
        (fix / fname).write_text(text)
        paths[name] = str(fix / fname)
    paths["folder"] = str(fix / "dir")
    paths["missing"] = str(root / "missing" / "deeper")
    paths["devnull"] = "/dev/null"
    if os.geteuid() == 0:   # root could replace /dev/null by mistake: a private node (tests/conftest.py)
        node = fix / "null"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        paths["devnull"] = str(node)
    return paths


def _tree(root: Path) -> list[tuple[str, int]]:
    out = []
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            p = os.path.join(d, n)
            st_ = os.lstat(p)
            out.append((os.path.relpath(p, root), st_.st_size if stat.S_ISREG(st_.st_mode) else -1))
    return sorted(out)


class _FakeReport:
    """report.build without the plots: reads the records and writes into the folder as it does."""

    @staticmethod
    def build(results, out_dir, title="s2mc report", empty_ok=False):
        from s2mc.analysis import records
        from s2mc.common.errors import S2mcError
        from s2mc.common.outputs import make_folder, write_output
        df = records.load(results)
        if df.empty and not empty_ok:
            raise S2mcError("report: no records")
        out = Path(make_folder(out_dir, "report"))
        write_output(out / "report.md", f"# {title}\n\n{len(df)} records\n", what="report")
        write_output(out / "report.html", f"<h1>{title}</h1>\n", what="report")
        return {"md": out / "report.md", "html": out / "report.html", "plots": [],
                "main_table": pd.DataFrame({"bytes": [], "cores": []}), "records": df}


@contextmanager
def _no_gpu_no_plots():
    from s2mc import gpu
    from s2mc.analysis import report
    from s2mc.experiments import registry as experiments
    from s2mc.gpu import opencl
    absent = {"built": True, "gpu_present": False, "devices": [], "reason": "no NVIDIA GPU (fuzz test)"}
    no_opencl = {"built": True, "devices": [], "device": None, "reason": "no OpenCL device (fuzz test)"}
    with ExitStack() as stack:
        stack.enter_context(mock.patch.object(gpu, "status", lambda: dict(absent)))
        stack.enter_context(mock.patch.object(opencl, "status", lambda: dict(no_opencl)))
        # gpu.kernels' signature; Camellia's list is the real one (it needs no built module)
        stack.enter_context(mock.patch.object(gpu, "kernels", lambda all_configs=False, cipher="aes": (
            list(gpu.CAMELLIA_KERNELS) if cipher == "camellia" else ["coarse", "extended", "optimised", "optimised-0"])))
        stack.enter_context(mock.patch.object(report, "build", _FakeReport.build))
        with contextlib.suppress(ImportError):   # s2mc serve: everything but the serving
            import uvicorn
            stack.enter_context(mock.patch.object(uvicorn.Server, "run", lambda self, sockets=None: None))
        experiments.DEMO   # noqa: B018 - loads the registry, so that the patch below can restore it
        stack.enter_context(mock.patch.object(experiments, "DEMO", ()))
        yield


def check(command: str, chosen: list[tuple[str | None, str]], flags: list[str]) -> None:
    spec = SPECS[command]
    root = Path(tempfile.mkdtemp(prefix="s2mc-fuzz-", dir=FAST_TMP))
    try:
        paths = _make_sandbox(root)
        fill = lambda v: v.format(**paths) if "{" in v else v  # noqa: E731
        args = list(spec.get("args", []))
        opts = dict(spec["base"])
        for option, value in chosen:
            if option is None:
                args = [value]
            else:
                if option in ("--key-file", "--key-env"):
                    opts.pop("--key", None)
                if option in ("--iv-file", "--iv-env"):
                    opts.pop("--iv", None)
                opts[option] = value
        argv = [*command.split(), *map(fill, args)]
        for option, value in opts.items():
            argv += [option, fill(value)]
        argv += spec.get("always", []) + flags
        work = root / "work"
        work.mkdir()
        before = _tree(root)
        old = os.getcwd()
        os.chdir(work)
        try:
            with _no_gpu_no_plots():
                res = CliRunner().invoke(cli, argv, input="", env={"S2MC_FUZZ_KEY": KEY, "S2MC_FUZZ_IV": IV,
                                                                   "S2MC_NOT_SET": None})
        finally:
            os.chdir(old)
        if res.exit_code == 0:
            assert res.exception is None, (argv, res.exc_info)
            return
        # One line from our handler (SystemExit), never an escaped exception.
        assert isinstance(res.exception, SystemExit), (argv, res.exc_info)
        assert res.exit_code in (1, 2), (argv, res.exit_code, res.stderr)
        err = res.stderr
        assert len(err.splitlines()) == 1 and err.startswith("s2mc") and err.endswith("\n"), (argv, err)
        assert "Traceback" not in err and len(err) < 1000, (argv, err)
        if res.exit_code == 2:   # refused while parsing: nothing may have been created or changed
            assert _tree(root) == before, argv
    finally:
        shutil.rmtree(root, ignore_errors=True)


@st.composite
def command_lines(draw, command: str, leave_out: tuple[str, ...] = ()):
    """One or two options with values, and up to two flags (none of `leave_out`)."""
    spec = SPECS[command]
    flags_of = [f for f in spec["flags"] if f not in leave_out]
    names = ([None] if spec.get("args") else []) + list(spec["options"])
    chosen = []
    for _ in range(draw(st.sampled_from([1, 1, 1, 2])) if names else 0):
        option = draw(st.sampled_from(names))
        own = spec["options"][option]
        value = draw(st.sampled_from(SOUP + own) if own else st.sampled_from(SOUP))
        if too_slow(option, value):
            value = "-1"
        chosen.append((option, value))
    flags = draw(st.lists(st.sampled_from(flags_of), unique=True, max_size=2)) if flags_of else []
    return chosen, flags


def _test(command: str, n: int, suffix: str = "", leave_out: tuple[str, ...] = ()):
    @examples(n)
    @given(command_lines(command, leave_out))
    def test(line):
        check(command, *line)
    test.__name__ = f"test_{command.replace(' ', '_')}_options{suffix}"
    return test


# Examples per command: more where a run is cheap.
test_info_options = _test("info", 2)
test_asm_options = _test("asm", 60)
test_disasm_options = _test("disasm", 40)
test_compile_options = _test("compile", 60)
test_run_options = _test("run", 150)
test_debug_options = _test("debug", 60)
test_aes_options = _test("aes", 150)
test_cipher_options = _test("cipher", 60)
test_fidelity_options = _test("fidelity", 20)
test_litmus_options = _test("litmus", 30)
test_native_options = _test("native", 120)
test_coherence_native_options = _test("coherence-native", 30)
test_litmus_native_options = _test("litmus-native", 30)
test_encrypt_options = _test("encrypt", 150)
test_decrypt_options = _test("decrypt", 50)
test_gpu_options = _test("gpu", 150)
test_report_options = _test("report", 40)
# A demo that runs is seconds of simulation, a --full one minutes: a few quick ones in the default run,
# fifty of either with the slow tests.
test_demo_options = _test("demo", 3, leave_out=("--full",))
test_demo_options_many = pytest.mark.slow(_test("demo", 50, "_many"))
test_sweep_options = _test("sweep", 40)
test_examples_options = _test("examples", 3)
test_lab_options = _test("lab", 2)
test_lab_write_options = _test("lab write", 12)
test_lab_check_options = _test("lab check", 30)
test_examples_copy_options = _test("examples copy", 50)
test_examples_show_options = _test("examples show", 30)
test_serve_options = _test("serve", 40)


def _commands(group, prefix=""):
    commands = all_commands() if group is cli else group.commands
    for name, command in commands.items():
        yield f"{prefix}{name}", command
        if hasattr(command, "commands"):
            yield from _commands(command, f"{prefix}{name} ")


def test_every_command_and_option_is_fuzzed():
    """A new command, or a new option of one, gets its values fuzzed: add it to SPECS."""
    for name, command in _commands(cli):
        assert name in SPECS, f"add a SPECS entry for `s2mc {name}` in tests/test_fuzz_cli.py"
        spec = SPECS[name]
        for p in command.params:
            if p.param_type_name == "argument":
                assert None in spec["options"], f"s2mc {name} {p.name}: add its values to SPECS"
            elif p.is_flag or p.count:
                assert set(p.opts) & set(spec["flags"] + spec.get("always", [])), \
                    f"s2mc {name} {p.opts}: add the flag to SPECS"
            else:
                assert set(p.opts) & set(spec["options"]), f"s2mc {name} {p.opts}: add the option to SPECS"
