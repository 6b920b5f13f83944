"""Values outside the checked domain, wherever they come in: the server's API fields, the options of
the `s2mc` commands, the notebooks `s2mc lab check` marks, spec files and records. Each hostile value
must be refused with one line that names where it came from (a 4xx answer naming the field, a usage
error naming the option, an S2mcError naming the key), never a traceback, a 500 or a silent run; and
a machine parameter is checked the same way whatever the other parameters are. The one shared
validator per kind of value is s2mc.common.values, tested first against hand-written expectations.
Each case failed (a 500, a traceback, an acceptance or a numpy repr) before the fix, unless its
comment says it was already refused and is kept as a guard."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
from pathlib import Path

import click
import numpy as np
import pytest

from s2mc.common.errors import S2mcError

from serve_helpers import client

SRC = "main()\n  print(6 * 7)\n"
BIG = 10 ** 400


# -- the shared validators ----------------------------------------------------------------------------

@pytest.mark.parametrize("value, shown", [
    (np.int64(-5), "-5"), (np.float64(math.inf), "inf"), (np.float64(0.25), "0.25"), (None, "None"),
    (True, "True"), (2 ** 63, "9223372036854775808"), (BIG, "an integer of 1329 bits"), ("ab", "'ab'"),
    ([1], "[1]")])
def test_plain_writes_numbers_as_people_do(value, shown):
    from s2mc.common.values import plain
    assert plain(value) == shown


@pytest.mark.parametrize("value, why", [
    (True, "True is not an integer"), (None, "None is not an integer"), (1.0, "1.0 is not an integer"),
    ("3", "'3' is not an integer"), ([3], "[3] is not an integer"), (2 ** 64, "18446744073709551616 is out of range (1..64)"),
    (0, "0 is out of range (1..64)"), (BIG, "an integer of 1329 bits is out of range (1..64)")])
def test_integer_refuses(value, why):
    from s2mc.common.values import BadValue, integer
    with pytest.raises(BadValue) as exc:
        integer(value, 1, 64)
    assert str(exc.value) == why


def test_integer_accepts_numpy_integers():
    from s2mc.common.values import integer
    assert integer(np.int32(7), 1, 64) == 7 and type(integer(np.int32(7), 1, 64)) is int


@pytest.mark.parametrize("value, why", [
    (math.nan, "nan is not a finite number (0..10)"), (math.inf, "inf is not a finite number (0..10)"),
    (BIG, "an integer of 1329 bits is not a finite number (0..10)"), (True, "True is not a number"),
    (None, "None is not a number"), ("1", "'1' is not a number"), (11, "11 is out of range (0..10)")])
def test_number_refuses(value, why):
    from s2mc.common.values import BadValue, number
    with pytest.raises(BadValue) as exc:
        number(value, 0, 10)
    assert str(exc.value) == why


def test_choice_takes_equal_values_of_the_choices_type_only():
    from s2mc.common.values import BadValue, choice
    assert choice(np.str_("fifo"), ("fifo", "fixed")) == "fifo"
    for value in (1.0, True, [1], None):
        with pytest.raises(BadValue, match=r"^unknown value .* \(choose 1, 0\)$"):
            choice(value, (1, 0))


# -- the options of the commands ----------------------------------------------------------------------

def _commands():
    from s2mc.cli.cmd_lab import check_cmd
    from s2mc.cli.cmd_serve import serve
    from s2mc.cli.main import cli
    ctx = click.Context(cli)
    return {"serve": serve, "lab check": check_cmd,
            **{name: cli.get_command(ctx, name) for name in ("sweep", "run", "aes", "debug")}}


OPTION_CASES = [
    ("serve", ["--wall-seconds", "nan"], "--wall-seconds"),     # started before, then every run 500
    ("run", ["p.s", "--cache-lines", "3"], "--cache-lines"),    # accepted before: no cache
    ("run", ["p.s", "--line-words", "3"], "--line-words"),      # accepted before: no cache
    ("run", ["p.s", "--cache-ways", "6"], "--cache-ways"),      # accepted before: no cache
    ("aes", ["--cache-lines", "3"], "--cache-lines"),           # accepted before: no cache
    # refused before too; kept as guards now that every option type goes through s2mc.common.values
    ("serve", ["--wall-seconds", "inf"], "--wall-seconds"),
    ("serve", ["--wall-seconds", "-inf"], "--wall-seconds"),
    ("serve", ["--wall-seconds", "1e309"], "--wall-seconds"),
    ("serve", ["--wall-seconds", "0"], "--wall-seconds"),
    ("serve", ["--wall-seconds", "soon"], "--wall-seconds"),
    ("serve", ["--max-cycles", str(10 ** 30)], "--max-cycles"),
    ("lab check", ["nb.ipynb", "--timeout", "nan"], "--timeout"),
    ("lab check", ["nb.ipynb", "--timeout", str(10 ** 30)], "--timeout"),
    ("lab check", ["nb.ipynb", "--timeout", "0"], "--timeout"),
    ("sweep", ["spec.toml", "--out", "r.parquet", "--workers", "nan"], "--workers"),
    ("sweep", ["spec.toml", "--out", "r.parquet", "--workers", "9" * 5000], "--workers"),
    ("run", ["p.s", "-O", "2"], "-O"),
    ("run", ["p.s", "-O", "nan"], "-O"),
    ("debug", ["p.s", "-O", str(10 ** 30)], "-O"),
    ("run", ["p.s", "--cores", "nan"], "--cores"),
    ("run", ["p.s", "--from-cycle", str(10 ** 30)], "--from-cycle"),
]


@pytest.mark.parametrize("command, args, option", OPTION_CASES, ids=[f"{c}{a[-2:]}" for c, a, _ in OPTION_CASES])
def test_options_refuse_values_outside_the_domain_while_parsing(tmp_path, monkeypatch, command, args, option):
    monkeypatch.chdir(tmp_path)
    cmd = _commands()[command]
    with pytest.raises(click.UsageError) as exc:     # BadParameter is a UsageError
        cmd.make_context(command, list(args))
    message = exc.value.format_message()
    assert option in message and "\n" not in message, message


def test_serve_with_nan_seconds_does_not_start():
    s2mc = str(Path(sys.executable).with_name("s2mc"))
    proc = subprocess.Popen([s2mc, "serve", "--port", "0", "--wall-seconds", "nan"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail("s2mc serve --wall-seconds nan started")
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1 and "--wall-seconds" in err, err


@pytest.mark.parametrize("change", [dict(wall_seconds=math.nan), dict(wall_seconds=math.inf), dict(queue=-1),
                                    dict(max_cycles=2 ** 64), dict(sessions=True), dict(idle_seconds=None)])
def test_server_limits_refuse_values_outside_their_range(change):     # all accepted before
    from s2mc.server.limits import Limits
    with pytest.raises(S2mcError, match=f"^limit {next(iter(change))}: "):
        Limits().replace(**change)


# -- spec files ---------------------------------------------------------------------------------------

SPEC_CASES = [
    ("aes", 'caches = ["none"]\ncache_lines = 3', "cache_lines"),     # accepted before
    ("aes", 'caches = ["none"]\ncache_ways = 6', "cache_ways"),       # accepted before
    ("aes", 'caches = ["none"]\nline_words = 12', "line_words"),      # accepted before
    ("program", 'caches = ["none"]\ncache_lines = 3', "cache_lines"),  # accepted before
    ("native", "min_seconds = inf", "min_seconds"),                  # accepted before
    ("native", "min_seconds = 1e400", "min_seconds"),                # accepted before (TOML: inf)
    ("native", "min_seconds = nan", "min_seconds"),                  # refused before too
    ("native", f"min_reps = {2 ** 64}", "min_reps"),                  # accepted before
    ("native", f"threads = [{10 ** 30}]", "threads"),                 # accepted before
    ("native", f"sizes = [{2 ** 70}]", "sizes"),                      # accepted before
    ("gpu", f"streams = [{2 ** 64}]", "streams"),                     # accepted before
    ("aes", "cores = [1.5]", "cores"),                                # refused before too
    ("aes", "key_bits = [true]", "key_bits"),                         # refused before too
]


@pytest.mark.parametrize("kind, lines, key", SPEC_CASES, ids=[f"{k}-{l.splitlines()[-1]}" for k, l, _ in SPEC_CASES])
def test_spec_refuses_values_outside_the_domain(tmp_path, kind, lines, key):
    from s2mc.experiments import specs
    path = tmp_path / "s.toml"
    path.write_text(f'[[grid]]\nkind = "{kind}"\n{lines}\n')
    with pytest.raises(S2mcError) as exc:
        specs.load(path)
    assert f"[[grid]] 1: {key}:" in str(exc.value) and "\n" not in str(exc.value), exc.value


# -- records ------------------------------------------------------------------------------------------

def _row(**changes):
    return {"run_id": "r", "source": "sim", "metric": "cycles", "value": 10.0, "cores": 2, "core": -1,
            **changes}


@pytest.mark.parametrize("changes, shown", [
    (dict(cores=-5), "(value -5)"), (dict(core=-2), "(value -2)"), (dict(core=3), "(value 3)"),
    (dict(bytes=-1), "(value -1)"), (dict(value=math.inf), "(value inf)"), (dict(value=math.nan), "(value nan)"),
    (dict(source="gpu?"), "(value 'gpu?')")])
def test_records_errors_print_plain_numbers(changes, shown):
    from s2mc.analysis import records
    with pytest.raises(S2mcError) as exc:
        records.make_records([_row(**changes)])
    assert shown in str(exc.value) and "np." not in str(exc.value), exc.value


# -- s2mc lab check -----------------------------------------------------------------------------------

NOTEBOOKS = {      # each a traceback before (AttributeError, TypeError, jsonschema's ValidationError)
    "array": [],
    "string": "notebook",
    "null": None,
    "no_cells": {"nbformat": 4, "nbformat_minor": 5, "metadata": {}},
    "cells_not_a_list": {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": 5},
    "cell_not_an_object": {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [5]},
    "nbformat_3": {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": []}]},
    "cell_without_source": {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [{"cell_type": "code"}]},
    "minor_text": {"nbformat": 4, "nbformat_minor": "5", "metadata": {}, "cells": []},
    "nbformat_text": {"nbformat": "4", "nbformat_minor": 5, "metadata": {}, "cells": []},   # refused before too
}


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_lab_check_refuses_a_file_that_is_not_a_v4_notebook(tmp_path, name):
    from s2mc.experiments import lab
    path = tmp_path / f"{name}.ipynb"
    path.write_text(json.dumps(NOTEBOOKS[name]))
    with pytest.raises(S2mcError) as exc:
        lab.execute(path, timeout=30)
    assert str(exc.value).startswith(f"{path}: ") and "\n" not in str(exc.value), exc.value


def test_lab_check_command_prints_one_line_for_a_json_array(tmp_path):
    path = tmp_path / "array.ipynb"
    path.write_text("[]")
    proc = subprocess.run([sys.executable, "-m", "s2mc.cli", "lab", "check", str(path)], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and str(path) in proc.stderr, proc.stderr


def _truths():
    from s2mc.experiments import lab
    return {q.name: 1.0 for _, q in lab.quantities()}


def _worked(**changes):
    """Every exercise predicted and measured right, then `changes` ({"predict": {name: v}} ...),
    through the JSON round trip the notebook's last cell makes (default=str, NaN allowed)."""
    answers = {"predict": dict(_truths()), "measured": dict(_truths())}
    for key, values in changes.items():
        if isinstance(values, dict):
            answers[key].update(values)
        else:
            answers[key] = values
    return json.loads(json.dumps(answers, default=str))


def test_a_worked_lab_passes():
    from s2mc.experiments import lab
    assert lab.passed(lab.grade(_worked(), _truths()))


LAB_VALUES = [
    ("predict", math.nan), ("predict", math.inf), ("predict", -math.inf), ("predict", "nan"),
    ("predict", True), ("predict", [1]), ("measured", BIG), ("measured", -BIG), ("measured", "1e400"),
    ("measured", {}), ("measured", np.float64(math.nan)),
]


@pytest.mark.parametrize("key, value", LAB_VALUES, ids=[f"{k}-{str(v)[:20]}" for k, v in LAB_VALUES])
def test_lab_grade_refuses_a_value_that_is_not_a_finite_number(key, value):
    from s2mc.experiments import lab
    with pytest.raises(S2mcError) as exc:
        lab.grade(_worked(**{key: {ANSWER: value}}), _truths())
    assert str(exc.value).startswith(f"{key}[{ANSWER!r}]: ") and "\n" not in str(exc.value), exc.value


@pytest.mark.parametrize("key", ["predict", "measured"])
def test_lab_grade_refuses_answers_that_are_not_a_mapping(key):
    from s2mc.experiments import lab
    with pytest.raises(S2mcError, match=f"^{key} must be a dict"):
        lab.grade(_worked(**{key: [1, 2]}), _truths())


def test_an_integer_prediction_of_a_float_quantity_is_a_prediction():
    from s2mc.experiments import lab
    marks = lab.grade(_worked(predict={ANSWER: 1}), _truths())
    assert lab.passed(marks)


# -- the server's API ---------------------------------------------------------------------------------

class JSONRaw:
    """A value written into a JSON body as it is (NaN, Infinity, 1e400), which json.dumps cannot."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text


def _body(fields: dict) -> str:
    raw = {}

    def mark(o):
        raw[f"@raw{len(raw)}@"] = o.text
        return f"@raw{len(raw) - 1}@"
    text = json.dumps(fields, default=mark)
    for key, value in raw.items():
        text = text.replace(f'"{key}"', value)
    return text


NAN, INF = JSONRaw("NaN"), JSONRaw("Infinity")
ANSWER = "s1_speedup_4"

API_CASES = [
    # /api/timeline: the cycle window (500 before: OverflowError, TypeError; to_cycle null was taken
    # as the run's end and from_cycle 2^64 was run, then refused with a 422 that named no field)
    ("timeline", dict(to_cycle=2 ** 63), "to_cycle"),
    ("timeline", dict(to_cycle=10 ** 21), "to_cycle"),
    ("timeline", dict(to_cycle=BIG), "to_cycle"),
    ("timeline", dict(from_cycle=None), "from_cycle"),
    ("timeline", dict(to_cycle=None), "to_cycle"),
    ("timeline", dict(from_cycle=2 ** 64), "from_cycle"),
    # machine parameters checked on their own (accepted before: no cache)
    ("run", dict(params={"cache_lines": 3}), "cache-lines"),
    ("run", dict(params={"line_words": 3}), "line-words"),
    ("run", dict(params={"cache_ways": 6}), "cache-ways"),
    # the program's other fields
    ("run", dict(language=[]), "language"),                  # 500 before: unhashable
    ("run", dict(language={}), "language"),                  # 500 before: unhashable
    ("run", dict(opt=1.0), "opt"),                           # accepted before, as 1.0
    # exercise answers that are not numbers, refused before the right values are measured (a list
    # or true was taken as no answer); a number that is not finite (NaN, Infinity, 1e400, 10**400,
    # 'nan') is a wrong answer instead (tests/test_server_class.py)
    ("exercises/check", dict(answers={ANSWER: {"predict": [1]}}), f"answers.{ANSWER}.predict"),
    ("exercises/check", dict(answers={ANSWER: {"predict": True}}), f"answers.{ANSWER}.predict"),
    # refused before too, kept as guards
    ("timeline", dict(from_cycle=NAN), "from_cycle"),
    ("timeline", dict(to_cycle=INF), "to_cycle"),
    ("timeline", dict(to_cycle=1.5), "to_cycle"),
    ("timeline", dict(from_cycle=True), "from_cycle"),
    ("timeline", dict(from_cycle=-1), "from_cycle"),
    ("run", dict(params={"cores": NAN}), "cores"),
    ("run", dict(params={"cores": INF}), "cores"),
    ("run", dict(params={"cores": 2 ** 64}), "cores"),
    ("run", dict(params={"cores": None}), "cores"),
    ("run", dict(params={"cores": True}), "cores"),
    ("run", dict(params={"cores": 1.0}), "cores"),
    ("run", dict(params={"mem_latency": [1]}), "mem-latency"),
    ("run", dict(params={"arbitration": {}}), "arbitration"),
    ("run", dict(language=None), "language"),
    ("run", dict(opt=NAN), "opt"),
    ("run", dict(source=None), "source"),
    ("run", dict(params=[]), "params"),
    ("sweep", dict(cores=[NAN]), "cores"),
    ("sweep", dict(cores=[2 ** 64]), "cores"),
    ("sweep", dict(cores=None), "cores"),
    ("sweep", dict(cores=[True]), "cores"),
]


@pytest.fixture(scope="module")
def api():
    with client(workers=1) as c:
        yield c


@pytest.mark.parametrize("call, fields, needle", API_CASES, ids=[f"{c}-{f}" for c, f, _ in API_CASES])
def test_api_refuses_values_outside_the_domain_with_one_line(api, call, fields, needle):
    body = fields if call == "exercises/check" else (
        {"source": SRC, "cores": [1, 2], **fields} if call == "sweep" else {"source": SRC, **fields})
    r = api.post(f"/api/{call}", content=_body(body), headers={"content-type": "application/json"})
    assert r.status_code == 400, (r.status_code, r.text)
    error = r.json()["error"]
    assert "\n" not in error and needle in error, error
    # and the server goes on serving
    assert api.post("/api/run", json={"source": SRC}).json()["output"].startswith("42")


def test_a_cap_refusal_names_its_field_once(api):
    r = api.post("/api/run", json={"source": SRC, "params": {"mem_words": 1 << 23}})
    assert r.status_code == 400
    assert r.json()["error"] == "params: mem_words 8388608 is over this server's cap of 4194304"


def test_nan_where_text_goes_is_refused_by_that_field(api):     # refused before too
    r = api.post("/api/debug/x", content='{"command": NaN}', headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["error"].startswith("command must be")


def test_params_answers_json_with_the_server_caps(api):
    p = api.get("/api/params")
    assert p.status_code == 200 and p.json()["limits"]["wall_seconds"] == 10.0
