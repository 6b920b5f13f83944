"""`s2mc demo`: the headline experiment end to end (what `make demo` runs).

1. the seed 003 grid, a core-scaling sweep to 64 cores (both AES styles), and memory-latency and
   arbitration sweeps on the simulator (`s2mc aes`);
2. native AES thread scaling and seed 000's block sizes on this host (`s2mc native`);
3. the GPU size sweep when a GPU is present (`s2mc gpu`);
4. the report (`s2mc report`) under report/, with every plot and the seed tables.

Each step runs the public command line (docs/architecture.md) in a child process, sized by the experiment
registry's `quick` forms to finish in minutes on a 2-core machine. A step whose command is not
built yet is skipped with a message saying so; the report is written from whatever ran.
"""
from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
from pathlib import Path

import click



def _commands() -> set[str]:
    from s2mc.cli.main import cli
    return set(cli.commands)


def step_available(command: str) -> tuple[bool, str]:
    """Whether the component behind `s2mc <command>` is there; else why not."""
    if command == "aes":
        if importlib.util.find_spec("s2mc.workloads.aes") is None or "aes" not in _commands():
            return False, ("AES on the simulator (s2mc.workloads.aes, `s2mc aes`) is not built "
                           "yet: skipping the simulated experiments")
    elif command == "native":
        try:
            from s2mc.workloads import native
            ok = native.available()
        except ImportError:
            ok = False
        if not ok or "native" not in _commands():
            return False, ("native CPU AES (s2mc.workloads.native, `s2mc native`) is not built yet: "
                           "skipping native thread scaling")
    elif command == "gpu":
        from s2mc.analysis.records import host_gpus
        if not host_gpus():
            return False, "no NVIDIA GPU on this machine: skipping the GPU sweep"
        if "gpu" not in _commands():
            return False, "the CUDA backend (`s2mc gpu`) is not built: skipping the GPU sweep"
    return True, ""


def _relabel(path: Path, experiment: str, argv: list[str]) -> int:
    """Set `experiment` on the rows a producer wrote and make sure a manifest exists."""
    from s2mc.analysis import records
    df = records.read(path)
    df["experiment"] = experiment
    records.write(df, path)
    man = records.manifest_path_for(path)
    if not man.exists():
        records.write_manifest(man, {"experiment": experiment, "argv": ["s2mc", *argv],
                                     "run_ids": sorted(df["run_id"].unique().tolist())})
    return len(df)


def run_experiment(name: str, results: Path, quick: bool, timeout: float, log) -> list[Path]:
    from s2mc.analysis import experiments
    exp = experiments.get(name)
    written = []
    for argv in exp.argv(str(results / f"{name}.parquet"), quick=quick):
        cmd = [sys.executable, "-m", "s2mc.cli", *argv]
        log(f"  $ s2mc {' '.join(argv)}")
        t0 = time.monotonic()
        try:
            proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            log(f"  ! timed out after {timeout:.0f} s: skipped")
            continue
        if proc.returncode != 0:
            tail = (proc.stderr or "").strip().splitlines()[-1:] or ["(no message)"]
            log(f"  ! failed (exit {proc.returncode}): {tail[0]}")
            continue
        out = Path(argv[argv.index("--out") + 1])
        if not out.exists():
            log(f"  ! {out} was not written")
            continue
        n = _relabel(out, name, argv)
        log(f"    {n} records in {time.monotonic() - t0:.1f} s -> {out}")
        written.append(out)
    return written


@click.command()
@click.option("--results", "results_dir", default="results", show_default=True,
              type=click.Path(file_okay=False), help="Where the records go.")
@click.option("--out", "report_dir", default="report", show_default=True,
              type=click.Path(file_okay=False), help="Where the report goes.")
@click.option("--full", is_flag=True, help="The registry's full experiments instead of the quick "
                                           "forms (much longer).")
@click.option("--skip", multiple=True, type=click.Choice(["sim", "native", "gpu"]),
              help="Leave a part out (repeatable).")
@click.option("--timeout", default=300, show_default=True, type=float,
              help="Seconds allowed per command before it is skipped.")
@click.option("--quiet", is_flag=True, help="Only the final summary.")
def demo(results_dir, report_dir, full, skip, timeout, quiet):
    """Run the headline experiment end to end and write the report.

    Simulated seed 003 grid and core scaling, native thread scaling, the GPU when present; then
    the report with the seed papers' tables beside ours.
    """
    from s2mc.analysis import report as rep

    def log(msg: str) -> None:
        if not quiet:
            click.echo(msg, err=True)

    results = Path(results_dir) / "demo"
    results.mkdir(parents=True, exist_ok=True)
    for old in list(results.glob("*.parquet")) + list(results.glob("*.manifest.json")):
        old.unlink()
    plan = [("sim", "aes", ["seed003_grid", "core_scaling", "mem_latency_sweep", "arbitration_sweep"]),
            ("native", "native", ["native_thread_scaling", "seed000_block_sizes"]),
            ("gpu", "gpu", ["gpu_size_sweep"])]
    t0 = time.monotonic()
    ran, skipped = [], []
    for part, command, names in plan:
        if part in skip:
            skipped.append(f"{part}: left out (--skip {part})")
            continue
        ok, why = step_available(command)
        if not ok:
            log(f"s2mc demo: {why}")
            skipped.append(why)
            continue
        for name in names:
            log(f"s2mc demo: {name}")
            ran += run_experiment(name, results, quick=not full, timeout=timeout, log=log)
    log("s2mc demo: writing the report")
    out = rep.build([results], report_dir, title="s2mc demo: simulated bus vs real hardware")
    main = out["main_table"]
    click.echo("")
    click.echo("Seed 003, cycles (ours vs paper):")
    cols = [c for c in ("bytes", "cores", "cycles (ours)", "cycles (paper)", "speedup (ours)",
                        "speedup (paper)") if c in main]
    click.echo(rep.md_table(main[cols]))
    click.echo("")
    if skipped:
        click.echo("Skipped: " + "; ".join(skipped))
    click.echo(f"{len(ran)} result files in {results}/, {len(out['plots'])} plots; "
               f"finished in {time.monotonic() - t0:.0f} s.")
    click.echo(f"Report: {Path(out['md']).resolve()}")
    click.echo(f"        {Path(out['html']).resolve()}")


COMMANDS = [demo]
