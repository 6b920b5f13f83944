"""The machine parameters are declared once (simulator/params.toml): the Python Config, the CLI
options, the AES configuration, the reference model, the fast binding and the SystemC child's input
reader all accept exactly the declared range and say what it is. Values at and just past every bound
go through each of them; the oracle is the range the issue fixed by hand (below), not the code."""
from __future__ import annotations

import dataclasses
import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from s2mc.cli.main import cli
from s2mc.isa import assemble
from s2mc.common.errors import S2mcError
from s2mc.simulator import Config, Machine, _fast, systemc_engine
from s2mc.simulator.gen_params import render
from s2mc.simulator.params import DEFAULTS, PARAMS, check
from s2mc.simulator.reference import ReferenceMachine
from s2mc.workloads.cipher_sim import AesConfig
from systemc_helpers import needs_systemc

REPO = Path(__file__).resolve().parent.parent
HALT = ".code 0\n  trap r0 #0\n"

# The limits, written out by hand: the declaration must say exactly this.
RANGES = {"cores": (1, 256), "mem_latency": (1, 1000), "max_cycles": (1, 1 << 62), "mem_words": (1, 1 << 26)}
CHOICES = {"arbitration": ("fifo", "fixed", "round_robin", "burst4"), "engine": ("fast", "systemc")}
BOUNDS = [(name, lo, hi) for name, (lo, hi) in RANGES.items()]
# The cache parameters (docs/timing-model.md, "Caches and coherence"), by hand likewise.
CACHE_RANGES = {"cache_lines": (1, 1 << 16), "cache_ways": (1, 1 << 16), "line_words": (1, 1024),
                "cache_hit_latency": (1, 100)}
CACHE_CHOICES = {"cache": ("none", "msi", "mesi", "moesi", "dragon")}
# The store buffers (docs/timing-model.md, "Store buffers"), by hand likewise.
BUFFER_RANGES = {"store_buffer_entries": (1, 64)}
BUFFER_CHOICES = {"consistency": ("sc", "tso", "pso")}
# The network (docs/timing-model.md, "Directory coherence over a network"), by hand likewise.
NETWORK_RANGES = {"link_latency": (1, 100), "router_latency": (0, 100), "flit_words": (1, 1024)}
NETWORK_CHOICES = {"interconnect": ("bus", "ring", "mesh"), "coherence": ("snoop", "directory")}


def test_the_declaration_has_the_agreed_limits_and_defaults():
    assert {n: (p.min, p.max) for n, p in PARAMS.items() if p.type == "int"} == RANGES | CACHE_RANGES | BUFFER_RANGES | NETWORK_RANGES
    assert {n: p.choices for n, p in PARAMS.items() if p.type == "choice"} == \
        CHOICES | CACHE_CHOICES | BUFFER_CHOICES | NETWORK_CHOICES
    assert DEFAULTS == {"cores": 1, "mem_latency": 2, "arbitration": "fifo", "max_cycles": 100_000_000,
                        "mem_words": 1 << 21, "engine": "fast", "cache": "none", "cache_lines": 64,
                        "cache_ways": 2, "line_words": 4, "cache_hit_latency": 1, "consistency": "sc",
                        "store_buffer_entries": 4, "interconnect": "bus", "coherence": "snoop",
                        "link_latency": 1, "router_latency": 1, "flit_words": 4}
    assert all(p.help for p in PARAMS.values())


def test_config_is_derived_from_the_declaration():
    assert [f.name for f in dataclasses.fields(Config)] == list(PARAMS)
    assert dataclasses.asdict(Config()) == DEFAULTS
    # the compiler lays out one stack per core the simulator allows
    assert importlib.import_module("s2mc.compiler.layout").MAX_CORES == PARAMS["cores"].max


@pytest.mark.parametrize("shape,problem", [
    (dict(cache_lines=6), "cache-lines 6 is not a power of two"),
    (dict(cache_ways=3), "cache-ways 3 is not a power of two"),
    (dict(line_words=12), "line-words 12 is not a power of two"),
    (dict(cache_lines=4, cache_ways=8), "cache-ways 8 is more than cache-lines 4"),
    (dict(line_words=8, mem_words=4), "line-words 8 is more than mem-words 4"),
])
def test_a_cache_shape_that_cannot_work_is_one_line(shape, problem):
    with pytest.raises(S2mcError, match=f"^{problem}$"):
        check(cache="mesi", **shape)
    with pytest.raises(S2mcError, match=f"^{problem}$"):
        Config(cache="msi", **shape).check()
    if "power of two" in problem:    # a parameter on its own: refused whatever the others are
        with pytest.raises(S2mcError, match=f"^{problem}$"):
            check(cache="none", **shape)
    else:                            # a relation of the sizes: without caches they are unused
        check(cache="none", **shape)


def out_of_range(name, value):
    lo, hi = RANGES[name]
    return f"{name.replace('_', '-')} {value} is out of range ({lo}..{hi})"


@pytest.mark.parametrize("name,lo,hi", BOUNDS)
def test_python_config_accepts_the_bounds_and_names_the_range_past_them(name, lo, hi):
    for ok in (lo, hi):
        Config(**{name: ok}).check()
        check(**{name: ok})
    for bad in (lo - 1, hi + 1):
        with pytest.raises(S2mcError) as e:
            Config(**{name: bad}).check()
        assert str(e.value) == out_of_range(name, bad)


def test_issue_12_reproducer_states_the_real_range():
    with pytest.raises(S2mcError) as e:
        Config(max_cycles=(1 << 63) - 1).check()
    assert str(e.value) == "max-cycles 9223372036854775807 is out of range (1..4611686018427387904)"


@pytest.mark.parametrize("value,message", [
    ("4", "cores '4' is not an integer"),
    (2.0, "cores 2.0 is not an integer"),
    (True, "cores True is not an integer"),
])
def test_a_non_integer_is_named(value, message):
    with pytest.raises(S2mcError, match=re.escape(message)):
        Config(cores=value).check()


@pytest.mark.parametrize("name,value", [("arbitration", "lottery"), ("engine", "verilog")])
def test_choices_name_the_allowed_values(name, value):
    with pytest.raises(S2mcError) as e:
        Config(**{name: value}).check()
    assert str(e.value) == f"unknown {name} '{value}' (choose {', '.join(CHOICES[name])})"


def test_unknown_parameter_name():
    with pytest.raises(S2mcError, match="unknown machine parameter 'core'"):
        check(core=2)


def test_machine_runs_at_the_largest_cycle_limit_and_latency():
    res = Machine(assemble(".code 0\n  ld r1 0\n  trap r0 #0\n"), cores=64, mem_latency=1000,
                  max_cycles=1 << 62, mem_words=1).run()
    assert res.cycles == 64 * 1000 + 1      # 64 loads one after another, then the halt
    with pytest.raises(S2mcError, match=re.escape(out_of_range("max_cycles", (1 << 62) + 1))):
        Machine(assemble(HALT), max_cycles=(1 << 62) + 1)


@pytest.mark.parametrize("name,lo,hi", [b for b in BOUNDS if b[0] != "max_cycles"])
def test_aes_config_checks_the_same_ranges(name, lo, hi):
    AesConfig(**{name: hi}).check()
    for bad in (lo - 1, hi + 1):
        with pytest.raises(S2mcError) as e:
            AesConfig(**{name: bad}).check()
        assert str(e.value) == out_of_range(name, bad)


@pytest.mark.parametrize("name,lo,hi", BOUNDS)
def test_reference_model_checks_the_same_ranges(name, lo, hi):
    code = assemble(HALT).code_image
    if name != "mem_words":       # a list of 2^26 words is too much for a test
        ReferenceMachine(code, [], **{name: hi, "mem_words": 16})
    for bad in (lo - 1, hi + 1):
        with pytest.raises(S2mcError) as e:
            ReferenceMachine(code, [], **{name: bad})
        assert str(e.value) == out_of_range(name, bad)


def test_reference_model_defaults_are_the_declared_ones():
    import inspect
    sig = inspect.signature(ReferenceMachine)
    assert {n: sig.parameters[n].default for n in DEFAULTS if n != "engine"} == \
        {n: v for n, v in DEFAULTS.items() if n != "engine"}


@pytest.mark.parametrize("name,lo,hi", BOUNDS)
def test_the_fast_binding_checks_the_same_ranges(name, lo, hi):
    args = dict(code=[0], data=[], entry=0, cores=1, mem_latency=2, arbitration="fifo", max_cycles=10,
                mem_words=16)
    if name != "mem_words":
        _fast.Engine(**{**args, name: hi})
    for bad in (lo - 1, hi + 1):
        with pytest.raises(ValueError) as e:
            _fast.Engine(**{**args, name: bad})
        assert str(e.value) == out_of_range(name, bad)
    with pytest.raises(ValueError, match=r"unknown arbitration 'x' \(choose fifo, fixed, round_robin, burst4\)"):
        _fast.Engine(**{**args, "arbitration": "x"})


# -- the CLI ----------------------------------------------------------------------------------------

def cli_run(tmp_path, *args, command="run"):
    src = tmp_path / "halt.s"
    src.write_text(HALT)
    return CliRunner().invoke(cli, [command, *([str(src)] if command == "run" else []), *map(str, args)])


@pytest.mark.parametrize("name,lo,hi", BOUNDS)
def test_s2mc_run_accepts_the_bounds_and_names_the_range_past_them(tmp_path, name, lo, hi):
    flag = "--" + name.replace("_", "-")
    for ok in (lo, hi) if name != "mem_words" else (lo,):   # 2^26 words would take 256 MiB
        res = cli_run(tmp_path, flag, ok)
        assert res.exit_code == 0, res.output
    for bad in (lo - 1, hi + 1):
        res = cli_run(tmp_path, flag, bad)
        assert res.exit_code == 2
        lines = res.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].endswith(
            f"run: error: Invalid value for '{flag}': {bad} is out of range ({lo}..{hi})"), res.output


def test_s2mc_run_issue_12_reproducer():
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "run", str(REPO / "workloads/asm/spin_lock.s"),
                           "--max-cycles", "9223372036854775807"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == ("s2mc run: error: Invalid value for '--max-cycles': 9223372036854775807 is out of "
                           "range (1..4611686018427387904)\n")


@pytest.mark.parametrize("args,message", [
    (["--cores", "1,x"], "'--cores': 'x' is not an integer"),
    (["--cores", ""], "'--cores': empty list"),
    (["--max-cycles", "1,2"], "'--max-cycles': '1,2' is not an integer"),
    (["--arbitration", "lottery"], "'--arbitration': unknown value 'lottery' (choose fifo, fixed, round_robin, burst4)"),
])
def test_s2mc_run_malformed_values(tmp_path, args, message):
    res = cli_run(tmp_path, *args)
    assert res.exit_code == 2 and message in res.output and res.output.count("\n") == 1, res.output


@pytest.mark.parametrize("command,names", [
    ("run", list(PARAMS)),
    ("aes", ["cores", "mem_latency", "arbitration", "engine", "mem_words"]),  # it sizes max_cycles itself
])
def test_the_options_are_derived_from_the_declaration(command, names):
    cmd = cli.get_command(None, command)   # the commands load on demand
    opts = {p.opts[0]: p for p in cmd.params if p.opts[0].startswith("--")}
    for name in names:
        p = PARAMS[name]
        opt = opts["--" + p.flag]
        assert opt.type.param is p
        assert f"Range {p.min}..{p.max}" in opt.help if p.type == "int" else p.help in opt.help


# -- the SystemC child's input reader --------------------------------------------------------------

def child_input(**over):
    cfg = dict(cores=1, mem_latency=2, arbitration="fifo", max_cycles=100, mem_words=16)
    cfg.update(over)
    word = assemble(HALT).code_image[0] & 0xFFFFFFFF
    return (f"s2mc-systemc-input 1\ncores {cfg['cores']} mem_latency {cfg['mem_latency']} arbitration "
            f"{cfg['arbitration']}\nmax_cycles {cfg['max_cycles']} mem_words {cfg['mem_words']} entry 0 trace 0\n"
            f"code 1\n{word}\ndata 0\n\nend\n")


def with_systemc(test):
    for mark in needs_systemc:
        test = mark(test)
    return test


def run_child(tmp_path, text):
    (tmp_path / "in.txt").write_text(text)
    env = dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    return subprocess.run([str(systemc_engine.executable()), "--input", str(tmp_path / "in.txt"),
                           "--result", str(tmp_path / "r.json"), "--memory", str(tmp_path / "m.bin")],
                          capture_output=True, text=True, env=env, timeout=60)


@with_systemc
@pytest.mark.parametrize("name,lo,hi", BOUNDS)
def test_systemc_child_input_accepts_the_bounds_and_names_the_range_past_them(tmp_path, name, lo, hi):
    for ok in (lo, hi):
        out = run_child(tmp_path, child_input(**{name: ok}))
        assert out.returncode == 0, out.stderr
    for bad in (lo - 1, hi + 1):
        out = run_child(tmp_path, child_input(**{name: bad}))
        assert out.returncode == 2
        assert out.stderr == f"s2mc-systemc: error: {name} '{bad}' is not a number in {lo}..{hi}\n"


@with_systemc
def test_systemc_child_names_the_declared_arbitrations(tmp_path):
    out = run_child(tmp_path, child_input(arbitration="lottery"))
    assert out.returncode == 2
    assert out.stderr == "s2mc-systemc: error: unknown arbitration 'lottery' (choose fifo, fixed, round_robin, burst4)\n"
    for policy in CHOICES["arbitration"]:
        assert run_child(tmp_path, child_input(arbitration=policy)).returncode == 0


# -- the generated C++ header ----------------------------------------------------------------------

def header_constants(text: str) -> dict[str, str]:
    return dict(re.findall(r"constexpr [\w\s*]+? (\w+)(?:\[\w+\])? = (.+?);", text))


def test_the_generated_header_equals_the_declaration():
    consts = header_constants(render((REPO / "simulator" / "params.toml").read_text(encoding="utf-8")))
    expected = {}
    for name, (lo, hi) in (RANGES | CACHE_RANGES | BUFFER_RANGES | NETWORK_RANGES).items():
        up = name.upper()
        expected.update({f"{up}_MIN": f"{lo}ull", f"{up}_MAX": f"{hi}ull", f"{up}_DEFAULT": f"{DEFAULTS[name]}ull"})
    for name, choices in (CHOICES | CACHE_CHOICES | BUFFER_CHOICES | NETWORK_CHOICES).items():
        up = name.upper()
        expected.update({f"{up}_COUNT": str(len(choices)),
                         f"{up}_CHOICES": "{" + ", ".join(f'"{c}"' for c in choices) + "}",
                         f"{up}_CHOICES_TEXT": '"' + ", ".join(choices) + '"',
                         f"{up}_DEFAULT": str(choices.index(DEFAULTS[name]))})
    assert consts == expected


def test_the_built_header_is_the_generated_one():
    built = sorted(REPO.glob("build/*/generated/s2_params.h"))
    if not built:
        pytest.skip("no build folder (the package was built elsewhere)")
    want = render((REPO / "simulator" / "params.toml").read_text(encoding="utf-8"))
    assert all(b.read_text(encoding="utf-8") == want for b in built)


def test_no_copied_limits_in_the_cpp_sources():
    # the limits reach C++ only through the generated header
    sources = [*REPO.glob("simulator/src/*.cpp"), *REPO.glob("simulator/include/s2mc/*.h"),
               *REPO.glob("simulator/systemc/*.cpp"), *REPO.glob("simulator/systemc/*.h")]
    copied = re.compile(r"\b(1000000|100'000'000|100000000|1u? << (20|26|28|62)|uint64_t\{1\} << \d+)\b")
    # Constants that are powers of two like the limits but no machine parameter, by name: the fast
    # binding's run slice (cycles between checks for Ctrl-C).
    not_limits = ("RUN_SLICE_CYCLES =",)
    for path in sources:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if any(name in line for name in not_limits):
                continue
            assert not copied.search(line), f"{path.relative_to(REPO)}:{i}: {line.strip()}"


def test_the_timing_model_page_shows_the_declaration():
    from s2mc.simulator.params import doc_table
    page = (REPO / "docs" / "timing-model.md").read_text(encoding="utf-8")
    assert doc_table() in page
    assert "| `max_cycles` | `--max-cycles` | 100000000 | 1..4611686018427387904 | cycles |" in page
