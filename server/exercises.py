"""The lab's exercises (s2mc.experiments.lab: the tutorial's sections as predict-then-measure
questions) as the page shows and checks them. The questions, their right values and the marking
rule are the lab's own; this module only turns them into JSON and a student's form into the
{"predict": ..., "measured": ...} the lab marks.
"""
from __future__ import annotations

from s2mc.experiments import lab
from s2mc.common.errors import S2mcError


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


def answers(form: dict) -> dict:
    """{"predict": {...}, "measured": {...}} from a form {name: {"predict": x, "measured": y}}.
    A blank field is None, as in an unchanged worksheet; anything else must be a finite number
    (or its text), as `s2mc lab check` requires (lab.answer)."""
    unknown = sorted(set(form) - names())
    if unknown:
        raise S2mcError(f"answers: no exercise named {unknown[0]!r}")
    got: dict = {"predict": {}, "measured": {}}
    for name, fields in form.items():
        if not isinstance(fields, dict) or set(fields) - {"predict", "measured"}:
            raise S2mcError(f"answers.{name}: give an object with 'predict' and 'measured'")
        for key in ("predict", "measured"):
            value = fields.get(key)
            if isinstance(value, str):
                value = value.strip() or None
            got[key][name] = lab.answer(value, f"answers.{name}.{key}")
    return got


def grade(form: dict, right: dict) -> dict:
    """Marks a student's form with the lab's own marking (the one `s2mc lab check` applies);
    `right` is truths() (computed once by the server)."""
    marks = lab.grade(answers(form), truths=right)
    checked = [k for k in marks if k.right is not None]
    right_now = sum(k.right is True for k in marks)
    made = sum(k.predicted is not None for k in marks)
    return {"passed": lab.passed(marks), "right": right_now, "checked": len(checked),
            "marks": [{"section": k.section, "name": k.name, "expected": k.expected, "measured": k.measured,
                       "right": k.right, "predicted": k.predicted, "error": k.error, "verdict": k.verdict}
                      for k in marks],
            "summary": f"{right_now}/{len(checked)} measurements right; {made}/{len(marks)} predictions made"}
