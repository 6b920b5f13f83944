"""Sweeps: an experiment's grids as independent configurations, run here or on a Dask cluster, stored
one configuration at a time so that an interrupted sweep resumes where it stopped (docs/sweeps.md).

    from s2mc.experiments import registry, specs, sweep
    exp = registry.from_spec(specs.load("experiments/studies/seed003.toml"))
    out = sweep.run(exp, "r.parquet", executor="dask", workers=2)     # or executor="local"

A configuration is one simulator run (AES: cores x bytes x the other fields), one native
measurement slice (threads x bytes, every implementation and strategy of the grid, so that an
OpenSSL baseline is measured once per slice as the library does) or one GPU measurement. Each is
one task, identified by a stable hash of what it computes (`Task.key`: the experiment, the
configuration and, for AES, a digest of its data, key and counter).

How it is stored: every finished configuration is written, atomically (s2mc.common.outputs), to
FILE.parts/<key>.parquet by the process that runs the sweep (the workers return rows, so they need
no shared file system); at the end the parts of this sweep's configurations are merged, in
configuration order, into FILE (also atomic) with a manifest. Beside each part, <key>.check.json
records its row count and SHA-256 (the merged manifest lists both per configuration): a re-run
skips every configuration whose part passes that check and runs again the ones that fail it (a
part truncated or edited, a part without its record), so no record is ever duplicated or lost; the
merge refuses a part that changes between the check and the merge. A kernel lock (flock) on the
FILE.parts/ folder itself stops two sweeps writing it at once, whatever happens to the files in it.
"""
from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import io
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from s2mc.common.errors import S2mcError, excerpt
from s2mc.common.outputs import write_output
from s2mc.common.units import human_size

from .registry import Experiment, unavailable
from .specs import KINDS

EXECUTORS = ("local", "dask")
#: A program grid's network shape: part of a configuration's point only on a ring or a mesh.
NETWORK_SHAPE = ("link_latency", "router_latency", "flit_words")


@dataclass(frozen=True)
class Task:
    """One configuration: what a worker needs to run it, and its stable key."""
    index: int                # position in the sweep: the merged file keeps this order
    key: str                  # stable hash: the name of its part file
    kind: str                 # aes | native | gpu | program
    experiment: str
    point: dict               # the configuration's parameters (JSON), for the manifest and messages
    args: tuple               # AES: (data, key, counter); native, GPU, program: (the one-slice grid,)


def _key(experiment: str, kind: str, point: dict, inputs: bytes = b"") -> str:
    text = json.dumps({"experiment": experiment, "kind": kind, "point": point,
                       "inputs": hashlib.sha256(inputs).hexdigest() if inputs else ""},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def _points(kind: str, grid) -> Iterator[tuple[dict, tuple, bytes]]:
    """(point, args, inputs to hash) of every configuration of one grid, in the library's run order."""
    if kind == "aes":
        data, counter, keys = grid.inputs()
        for cores, n, cfg in grid.jobs():
            key = keys[cfg["key_bits"]]
            # the counter matters only in CTR: an ECB configuration keeps its key when it changes
            ctr = counter if cfg["mode"] == "ctr" else b""
            yield {"cores": cores, "bytes": n, **cfg}, (data[:n], key, counter), data[:n] + key + ctr
    elif kind == "native":
        rest = {k: (list(v) if isinstance(v, tuple) else v)
                for k, v in dataclasses.asdict(grid).items() if k not in ("threads", "sizes")}
        for t in grid.threads:
            for n in grid.sizes:
                yield ({"threads": t, "bytes": n, **rest},
                       (dataclasses.replace(grid, threads=(t,), sizes=(n,)),), b"")
    elif kind == "program":
        rest = {k: v for k, v in dataclasses.asdict(grid).items() if not isinstance(v, tuple)}
        for program, lat, interconnect, cache, cores in grid.jobs():
            one = dataclasses.replace(grid, programs=(program,), mem_latencies=(lat,), interconnects=(interconnect,),
                                      caches=(cache,), cores=(cores,))
            # the bus's point names no network, so a bus sweep's stored parts keep their keys
            net = ({"interconnect": interconnect} if interconnect != "bus" else {}) | {
                k: v for k, v in rest.items() if k not in NETWORK_SHAPE or interconnect != "bus"}
            yield {"program": program, "mem_latency": lat, "cache": cache, "cores": cores, **net}, (one,), b""
    else:
        rest = {k: v for k, v in dataclasses.asdict(grid).items()
                if not isinstance(v, tuple)}
        for kernel, measure, n, s in grid.configs():
            one = dataclasses.replace(grid, kernels=(kernel,), measures=(measure,), sizes=(n,),
                                      streams=(max(s, 1),))
            yield {"kernel": kernel, "measure": measure, "bytes": n, "streams": s, **rest}, (one,), b""


def tasks(exp: Experiment, *, quick: bool = False, n_cpu: int | None = None) -> list[Task]:
    """Every configuration of the experiment's grids (the quick ones when asked and declared), in
    run order; a configuration two grids share is one task."""
    out: dict[str, Task] = {}
    for grid in exp.grids_for(quick, n_cpu):
        kind = next(k for k, (cls, _) in KINDS.items() if isinstance(grid, cls))
        for point, args, inputs in _points(kind, grid):
            key = _key(exp.name, kind, point, inputs)
            out.setdefault(key, Task(len(out), key, kind, exp.name, point, args))
    return list(out.values())


def describe(task: Task) -> str:
    """One configuration in a few words, for progress and error lines."""
    p = task.point
    if task.kind == "aes":
        return (f"aes-{p['key_bits']}-{p['mode']}-{p['direction']} {p['style']}/{p['partition']} "
                f"{p['cores']}c {human_size(p['bytes'])}B L{p['mem_latency']} {p['arbitration']} "
                f"{p['engine']} O{p['opt']}")
    if task.kind == "program":
        net = f" {p['interconnect']}" if "interconnect" in p else ""     # a ring or a mesh
        return f"program {p['program']} {p['cores']}c {p['cache']} L{p['mem_latency']}{net} {p['engine']}"
    if task.kind == "native":
        return f"native {'/'.join(p['impls'])} {'/'.join(p['strategies'])} {p['threads']}t {human_size(p['bytes'])}B"
    return f"gpu {p['kernel']} {p['measure']} {human_size(p['bytes'])}B"


def run_task(task: Task) -> tuple[bytes, float]:
    """Run one configuration where the executor placed it: (its records, validated there, as the
    bytes of a Parquet file; the seconds it took).

    What the machine lacks (the SystemC engine, the native library, a GPU) is an S2mcError here,
    so that a cluster of mixed machines reports it per configuration."""
    from s2mc.analysis import records
    t0 = time.perf_counter()
    why = unavailable(KINDS[task.kind][1])
    if why:
        raise S2mcError(why)
    if task.kind == "aes":
        from s2mc.workloads.cipher_sim.runner import record_rows, run_aes
        data, key, counter = task.args
        cfg = {k: v for k, v in task.point.items() if k not in ("cores", "bytes")}
        run = run_aes(data, key, counter, cores=task.point["cores"], **cfg)
        rows = record_rows(run, records.new_run_id("aes"), task.experiment)
    elif task.kind == "program":
        from s2mc.workloads.program_grid import run_grid
        _, rows = run_grid(task.args[0], new_run_id=lambda: records.new_run_id("run"), experiment=task.experiment)
    elif task.kind == "native":
        from s2mc.workloads.native.grid import run_grid
        _, rows = run_grid(task.args[0], run_id=records.new_run_id("native"), experiment=task.experiment)
    else:
        from s2mc.gpu.grid import run_grid
        _, rows, _ = run_grid(task.args[0], run_id=records.new_run_id("cuda"), experiment=task.experiment)
    # Validated and encoded here: on a cluster the workers share this cost (the process running the
    # sweep only writes bytes), and a bad row fails its own configuration.
    buf = io.BytesIO()
    records.make_records(rows).to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue(), time.perf_counter() - t0


# --------------------------------------------------------------------------------------------------
# executors: each yields (task, (records, seconds) or None, error message or None) as tasks finish
# --------------------------------------------------------------------------------------------------

#: The longest error a failed configuration reports (a worker's exception can run to pages).
MESSAGE_CHARS = 200


def _message(exc: BaseException) -> str:
    """A configuration's error as one printable line of at most about MESSAGE_CHARS characters."""
    text = " ".join(str(exc).split())
    text = text if isinstance(exc, S2mcError) else f"{type(exc).__name__}: {text}"
    return excerpt(text, MESSAGE_CHARS)


def _local(todo: list[Task], **_) -> Iterator[tuple[Task, tuple | None, str | None]]:
    for task in todo:
        try:
            result = run_task(task)
        except Exception as exc:  # noqa: BLE001 - one failing configuration must not stop the rest
            yield task, None, _message(exc)
        else:
            yield task, result, None


def _dask(todo: list[Task], *, scheduler: str | None, workers: int | None
          ) -> Iterator[tuple[Task, tuple | None, str | None]]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise S2mcError("--executor dask: the dask and distributed packages are not installed "
                        "(`make setup` installs them)") from None
    cluster = client = None
    try:
        try:
            if scheduler:
                client = Client(scheduler)   # how long it tries: dask's distributed.comm.timeouts.connect
            else:
                # silence_logs: a failing configuration is our one line, not the workers' tracebacks
                cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                       processes=True, dashboard_address=None, silence_logs=logging.CRITICAL)
                client = Client(cluster)
        except Exception as exc:  # noqa: BLE001 - OSError, TimeoutError, ValueError from dask: one line
            where = f"--scheduler {scheduler}: cannot connect" if scheduler else \
                "--executor dask: cannot start a local cluster"
            raise S2mcError(f"{where} ({_message(exc)})") from None
        # key = the configuration's hash: a task the scheduler still holds is not run twice
        futures = client.map(run_task, todo, key=[f"s2mc-sweep-{t.key}" for t in todo], pure=False)
        pending = dict(zip(futures, todo))
        del futures
        finishing = as_completed(list(pending))
        for fut in finishing:
            if fut.status == "lost":
                # its result went down with a worker after it finished; the scheduler (still here)
                # computes it again, so wait for it once more
                finishing.add(fut)
                continue
            task = pending.pop(fut)
            if fut.status == "finished":
                yield task, fut.result(), None
            elif fut.status == "error":
                yield task, None, _message(fut.exception())
            else:   # cancelled: the scheduler went away; what is stored stays stored
                raise S2mcError(f"the Dask scheduler lost configuration {describe(task)} ({fut.status}); "
                                "run the same command again to finish")
            fut.release()
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()


_EXECUTORS = {"local": _local, "dask": _dask}


# --------------------------------------------------------------------------------------------------
# the driver
# --------------------------------------------------------------------------------------------------

def parts_dir(out: str | os.PathLike) -> Path:
    """Where a sweep into `out` keeps its finished configurations: `out` + '.parts'."""
    return Path(f"{os.fspath(out)}.parts")


@dataclass
class Outcome:
    path: Path                    # the merged records file
    total: int                    # configurations of the sweep
    stored_before: int            # found in FILE.parts/ and skipped
    ran: int                      # run and stored now
    records: int                  # rows in the merged file
    failed: list[tuple[Task, str]] = field(default_factory=list)
    seconds: float = 0.0          # wall-clock seconds of the whole sweep
    task_seconds: float = 0.0     # seconds the configurations run now took, summed (where they ran)


@contextlib.contextmanager
def _locked(parts: Path):
    """Hold a kernel lock on the FILE.parts/ folder for the sweep: a second sweep into the same FILE
    fails at once instead of running the same configurations twice. The lock is on the folder, not
    on a file in it that someone could remove, and goes with the process, even when killed."""
    fd = os.open(parts, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise S2mcError(f"{parts}: another s2mc sweep is writing this output now; wait for it "
                            "or choose another --out") from None
        yield
    finally:
        os.close(fd)


def _check_path(part: Path) -> Path:
    """Where a part's check record goes: <key>.check.json."""
    return part.with_name(part.name.rsplit(".", 1)[0] + ".check.json")


def _check_record(data: bytes) -> dict:
    """A part's check: its row count (from the Parquet footer) and the SHA-256 of its bytes."""
    import pyarrow.parquet as pq
    return {"rows": pq.ParquetFile(io.BytesIO(data)).metadata.num_rows,
            "sha256": hashlib.sha256(data).hexdigest()}


def _read_part(part: Path) -> tuple[bytes | None, str | None]:
    """A part's bytes and None when they agree with its check record; else (None, why not)."""
    try:
        data = part.read_bytes()
    except FileNotFoundError:
        return None, "missing"
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    why = _verify(part, data)
    return (None, why) if why else (data, None)


def _verify(part: Path, data: bytes) -> str | None:
    """None when the bytes `data` of `part` agree with its check record; else why not."""
    try:
        want = json.loads(_check_path(part).read_text())
        rows, digest = int(want["rows"]), str(want["sha256"])
    except (OSError, ValueError, KeyError, TypeError):
        return "no valid check record beside it"
    if hashlib.sha256(data).hexdigest() != digest:
        return "its checksum does not match (truncated or changed)"
    try:
        if _check_record(data)["rows"] != rows:
            return "its row count does not match"
    except Exception as exc:  # noqa: BLE001 - pyarrow: damaged in a way the checksum agreed to
        return f"unreadable ({_message(exc)})"
    return None


def _check_out(out: Path) -> None:
    if os.fspath(out) in ("", "-"):
        raise S2mcError("--out: a sweep writes a records file (its parts go beside it), not stdout")
    if out.is_dir() or os.fspath(out).endswith("/"):
        raise S2mcError(f"--out {out}: is a folder; name the records file (.parquet or .csv)")
    if not out.parent.is_dir():
        raise S2mcError(f"--out {out}: folder {out.parent} does not exist")


def run(exp: Experiment, out: str | os.PathLike, *, executor: str = "local", scheduler: str | None = None,
        workers: int | None = None, quick: bool = False, fresh: bool = False, progress: bool = False,
        n_cpu: int | None = None, log: Callable[[str], None] | None = None) -> Outcome:
    """Run every configuration of `exp` not yet stored in OUT.parts/, store each as it finishes, and
    merge them all into `out` with a manifest. A failing configuration is logged (one line) and
    listed in the outcome while the others go on. `fresh` forgets the stored configurations first.
    KeyboardInterrupt leaves what is stored for the next run."""
    if executor not in _EXECUTORS:
        raise S2mcError(f"--executor: unknown value {executor!r} (choose {', '.join(EXECUTORS)})")
    from tqdm import tqdm

    from s2mc.analysis import records
    log = log or (lambda msg: None)
    t0 = time.perf_counter()
    out = Path(out)
    _check_out(out)
    todo_all = tasks(exp, quick=quick, n_cpu=n_cpu)
    parts = parts_dir(out)
    try:
        parts.mkdir(exist_ok=True)
    except OSError as exc:
        raise S2mcError(f"{parts}: cannot create the parts folder ({exc.strerror})") from None
    part = lambda t: parts / f"{t.key}.parquet"  # noqa: E731
    try:
        with _locked(parts):
            for stale in parts.glob(".*.part"):      # temporary files of a sweep that was killed
                stale.unlink(missing_ok=True)
            if fresh:
                for old in [*parts.glob("*.parquet"), *parts.glob("*.check.json")]:
                    old.unlink()
            todo = []
            for t in todo_all:
                why = _read_part(part(t))[1]
                if why is None:
                    continue
                if why != "missing":
                    log(f"s2mc sweep: stored configuration {describe(t)} ({part(t).name}) fails its check: "
                        f"{why}; running it again")
                    part(t).unlink(missing_ok=True)
                    _check_path(part(t)).unlink(missing_ok=True)
                todo.append(t)
            outcome = Outcome(out, len(todo_all), len(todo_all) - len(todo), 0, 0)
            bar = tqdm(total=len(todo_all), initial=outcome.stored_before, desc="s2mc sweep", unit="cfg",
                       disable=not progress, leave=False, dynamic_ncols=True)
            say = (lambda msg: bar.write(msg, file=sys.stderr)) if progress else log
            results = _EXECUTORS[executor](todo, scheduler=scheduler, workers=workers)
            try:
                for task, result, error in results:
                    if error is None:
                        data, secs = result
                        try:
                            check = _check_record(data)
                            # its check, then the part (both atomic): a part always has its check
                            # (a check alone, when killed between, is overwritten by the rerun)
                            # now: stored at once, even inside a unit, so that a stopped sweep keeps it
                            write_output(_check_path(part(task)), json.dumps(check), what="records check", now=True)
                            write_output(part(task), data, what="records", now=True)
                            outcome.ran += 1
                            outcome.task_seconds += secs
                        except S2mcError as exc:
                            error = f"storing its records: {exc}"
                    if error is not None:
                        outcome.failed.append((task, error))
                        say(f"s2mc sweep: failed: {describe(task)}: {error}")
                    bar.update(1)
                    bar.set_postfix_str(describe(task), refresh=False)
            except KeyboardInterrupt:
                done = sum(part(t).exists() for t in todo_all)
                say(f"s2mc sweep: interrupted: {done} of {len(todo_all)} configurations are stored in "
                    f"{parts}/; run the same command again to finish")
                raise
            finally:
                results.close()
                bar.close()
            stored = [t for t in todo_all if part(t).exists()]
            df, checks = _merge([part(t) for t in stored])
            failed = [dict(configuration=describe(t), key=t.key, error=e) for t, e in outcome.failed]
            params = dict(command="sweep", experiment=exp.name, title=exp.title, source=exp.source,
                          quick=quick, executor=executor, scheduler=scheduler, workers=workers,
                          parts=str(parts), complete=len(stored) == len(todo_all), failed=failed,
                          reference=list(exp.reference),
                          grids=[{"grid": type(g).__name__, **_plain(dataclasses.asdict(g))}
                                 for g in exp.grids_for(quick, n_cpu)],
                          configurations=[{"key": t.key, "stored": part(t).exists(),
                                           **checks.get(part(t), {}), **t.point}
                                          for t in todo_all])
            records.write(df, out, params=params)
    finally:
        if not any(parts.glob("*.parquet")):   # nothing stored (a scheduler out of reach): no litter
            (parts / ".lock").unlink(missing_ok=True)   # left by earlier versions
            for check in parts.glob("*.check.json"):
                check.unlink(missing_ok=True)
            with contextlib.suppress(OSError):
                parts.rmdir()
    outcome.records = len(df)
    outcome.seconds = time.perf_counter() - t0
    return outcome


def _plain(d: dict) -> dict:
    """A grid's fields as JSON can hold them (an AES key is not written, like AesGrid.params)."""
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in d.items()
            if not isinstance(v, bytes)}


def _merge(paths: list[Path]):
    """The stored configurations as one records frame, in configuration order, and each part's
    check ({path: {rows, sha256}}). A part that no longer passes its check (changed since this
    sweep checked or wrote it) is refused: the merged file would silently lack or repeat rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from s2mc.analysis import records
    tables, checks = [], {}
    for p in paths:
        data, why = _read_part(p)   # read once: what is checked is what is merged
        if why is not None:
            raise S2mcError(f"{p}: this stored configuration fails its check ({why}); run the same "
                            "command again to redo it")
        try:
            tables.append(pq.read_table(io.BytesIO(data)))
        except (OSError, ValueError) as exc:
            raise S2mcError(f"{p}: cannot read this stored configuration ({_message(exc)}); "
                            "delete it and run the same command again to redo it") from None
        checks[p] = _check_record(data)
    if not tables:
        return records.empty(), checks
    return records.validate(pa.concat_tables(tables, promote_options="default").to_pandas()), checks
