"""The lab's exercises (s2mc.experiments.lab: the tutorial's sections as predict-then-measure
questions) as the page shows and checks them. The questions, their right values and the marking
rule are the lab's own; this module only turns them into JSON and a student's form into the
{"predict": ..., "measured": ...} the lab marks.
"""
from __future__ import annotations

import math
import numbers

from s2mc.common import values
from s2mc.common.errors import S2mcError
from s2mc.experiments import lab


def listing() -> list[dict]:
    """The sections and their questions, in the lab's order."""
    return [{"title": sec.title, "text": sec.text, "why": "",
             "quantities": [{"name": q.name, "asks": q.asks, "code": q.code, "checked": q.exact,
                             "digits": q.digits} for q in sec.quantities]}
            for sec in lab.SECTIONS]


def names() -> set[str]:
    return {q.name for _, q in lab.quantities()}


def truths() -> dict:
    """Every quantity's right value (a timing: its typical value), measured now."""
    return {q.name: q.truth() for _, q in lab.quantities()}


def _not_finite(value) -> bool:
    """Whether an answer is a number that is not finite: NaN, an infinity, a number past a float's
    range, as JSON (the server's reader keeps its text) or as text. Such an answer is given, and
    wrong; anything else that is not a number is a malformed form."""
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, numbers.Real):
        try:
            return not math.isfinite(float(value))
        except OverflowError:
            return True
    if isinstance(value, (list, dict)):
        return False
    x = values.parse_number(str(value).strip())     # text, or the JSON text the reader kept
    return x is not None and not math.isfinite(x)


def answers(form: dict) -> tuple[dict, dict]:
    """({"predict": {...}, "measured": {...}}, not_finite) from a form {name: {"predict": x,
    "measured": y}}. A blank field is None, as in an unchanged worksheet; a number that is not
    finite is None there too and its text is in not_finite[(key, name)] (marked wrong); anything
    else must be a finite number (or its text), as `s2mc lab check` requires (lab.answer)."""
    unknown = sorted(set(form) - names())
    if unknown:
        raise S2mcError(f"answers: no exercise named {unknown[0]!r}")
    got: dict = {"predict": {}, "measured": {}}
    not_finite: dict = {}
    for name, fields in form.items():
        if not isinstance(fields, dict) or set(fields) - {"predict", "measured"}:
            raise S2mcError(f"answers.{name}: give an object with 'predict' and 'measured'")
        for key in ("predict", "measured"):
            value = fields.get(key)
            if isinstance(value, str):
                value = value.strip() or None
            if _not_finite(value):
                not_finite[key, name] = str(value)
                value = None
            got[key][name] = lab.answer(value, f"answers.{name}.{key}")
    return got, not_finite


def _precision(digits: int) -> str:
    return "a whole number" if digits == 0 else f"{digits} decimal{'s' if digits > 1 else ''}"


def _mark(q, k, not_finite: dict, teacher: bool) -> dict:
    """One question's mark as a student sees it: right or wrong, their own values and a hint that
    says what to do next, never the right value (the teacher sees it). How far the prediction was
    is shown once the student knows the value: their measurement is right (or a timing, their own)."""
    bad_m, bad_p = not_finite.get(("measured", k.name)), not_finite.get(("predict", k.name))
    right, verdict = k.right, k.verdict
    if bad_m is not None:
        hint = [f"the measurement {bad_m} is not a finite number"]
        if q.exact:
            right, verdict = False, "WRONG"
    elif k.measured is None:
        hint = ["no measurement: run the code under 'how to measure' and enter what it gives"]
    elif right is None:
        hint = [f"{k.measured:g} is a timing on your machine: shown, not marked"]
    elif right:
        hint = ["the measurement is right"]
    else:
        hint = [f"{k.measured:g} is not what the code under 'how to measure' gives "
                f"(marked as {_precision(q.digits)}): run it again"]
    known = right is True or (right is None and k.measured is not None)
    if bad_p is not None:
        hint.append(f"the prediction {bad_p} is not a finite number")
    elif k.predicted is None:
        hint.append("no prediction made: the lab asks for one before measuring")
    elif known:
        hint.append(f"the prediction was off by {k.error:.0%}")
    else:
        hint.append("how far off the prediction was shows once the measurement is right")
    mark = {"section": k.section, "name": k.name, "measured": k.measured, "right": right,
            "predicted": k.predicted, "error": k.error if known or teacher else None, "verdict": verdict,
            "hint": "; ".join(hint)}
    return {**mark, "expected": k.expected} if teacher else mark


def grade(form: dict, right: dict, teacher: bool = False) -> dict:
    """Marks a student's form with the lab's own marking (the one `s2mc lab check` applies);
    `right` is truths() (computed once by the server). Only the teacher's marks carry the
    expected values."""
    got, not_finite = answers(form)
    marks = lab.grade(got, truths=right)
    questions = {q.name: q for _, q in lab.quantities()}
    checked = [k for k in marks if k.right is not None]
    right_now = sum(k.right is True for k in marks)
    made = sum(k.predicted is not None for k in marks)
    return {"passed": lab.passed(marks), "right": right_now, "checked": len(checked),
            "marks": [_mark(questions[k.name], k, not_finite, teacher) for k in marks],
            "summary": f"{right_now}/{len(checked)} measurements right; {made}/{len(marks)} predictions made"}
