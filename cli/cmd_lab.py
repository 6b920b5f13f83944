"""`s2mc lab`: the tutorial as Jupyter notebooks (s2mc.experiments.lab): write the worksheet (and the
instructor's answers), and check a student's notebook."""
from __future__ import annotations

import sys

import click

from s2mc.common.errors import S2mcError

from .options import Integer


@click.group("lab")
def lab_cmd():
    """The lab notebooks: a predict-then-measure worksheet, its answers, an auto-check."""
    import importlib.util
    try:
        import nbclient  # noqa: F401
        import nbformat  # noqa: F401
        missing = [] if importlib.util.find_spec("ipykernel") else ["ipykernel"]
    except ImportError as exc:
        missing = [exc.name]
    if missing:
        raise S2mcError(f"s2mc lab: the Python package {missing[0]} is not installed (`make setup` installs "
                        "it, or pip install 's2mc[lab]')")


@lab_cmd.command("write")
@click.option("--to", "dest", default=".", show_default=True, type=click.Path(file_okay=False),
              help="Folder for worksheet.ipynb and answers.ipynb (it must exist).")
def write_cmd(dest):
    """Write worksheet.ipynb and answers.ipynb (the answers measured now, exactly)."""
    from s2mc.experiments import lab
    for path in lab.write(dest):
        click.echo(f"wrote {path}", err=True)


@lab_cmd.command("check")
@click.argument("notebook", type=click.Path(dir_okay=False))
@click.option("--timeout", default=600, show_default=True, type=Integer(1, 3600),
              help="Seconds a cell may run.")
def check_cmd(notebook, timeout):
    """Run a student's notebook and mark it: per quantity, whether the measured value is right and
    how far the prediction was. Exit 1 unless every exercise is done: a prediction made (not None) and
    the measurement right."""
    from s2mc.experiments import lab
    marks = lab.check(notebook, timeout=timeout)
    click.echo(lab.format_marks(marks))
    sys.exit(0 if lab.passed(marks) else 1)


COMMANDS = [lab_cmd]
