"""`s2mc native`: the native CPU AES / Camellia grid, optionally against OpenSSL (`s2mc encrypt` / `decrypt`
are in cmd_crypt.py); `s2mc coherence-native`: false sharing, line ping-pong and spin locks on this CPU;
`s2mc litmus-native`: the litmus tests on this CPU."""
from __future__ import annotations

import json
import sys

import click

from s2mc.common import litmus as litmus_tests
from s2mc.common.errors import S2mcError
from s2mc.common.measure import MIN_SAMPLES
from s2mc.common.units import human_size
from s2mc.workloads.cipher_host import host_memory
from s2mc.workloads.native import CIPHER_IMPLS, CIPHERS, MAX_MIN_SECONDS, MAX_REPS, MAX_THREADS, STRATEGIES
from s2mc.workloads.native.coherence import BENCHES as COHERENCE_BENCHES
from s2mc.workloads.native.coherence import MATRIX as COHERENCE_MATRIX
from s2mc.workloads.native.coherence import INCREMENTS as COHERENCE_INCREMENTS
from s2mc.workloads.native.coherence import LOCKS as COHERENCE_LOCKS
from s2mc.workloads.native.coherence import MAX_ITERATIONS as COHERENCE_MAX
from s2mc.workloads.native.coherence import MAX_REPS as COHERENCE_MAX_REPS
from s2mc.workloads.native.cryptrec import CIPHERS as CRYPTREC_CIPHERS
from s2mc.workloads.native.cryptrec import IMPLS as CRYPTREC_IMPLS
from s2mc.workloads.native.litmus import DEFAULT_BATCH as LITMUS_BATCH
from s2mc.workloads.native.litmus import DEFAULT_ITERATIONS as LITMUS_ITERATIONS
from s2mc.workloads.native.litmus import EXPERIMENT as LITMUS_EXPERIMENT
from s2mc.workloads.native.litmus import MAX_BATCH as LITMUS_MAX_BATCH
from s2mc.workloads.native.litmus import MAX_ITERATIONS as LITMUS_MAX

from .options import Choices, Integer, OutputFile, Seconds, Size, Text


def _max_threads() -> int:
    from s2mc.workloads import native
    return min(native.max_threads(), native.MAX_THREADS) if native.available() else 1


_MEMORY = "this machine's memory"
#: Every implementation name once (AES and Camellia share vaes and aesni), from the libraries' tables.
_IMPL_NAMES = tuple(dict.fromkeys(("auto", *(i for c in CIPHERS for i in CIPHER_IMPLS[c]),
                                   *(i for c in CRYPTREC_CIPHERS for i in CRYPTREC_IMPLS[c]), "all")))
#: Which cipher each implementation belongs to, for the help: "aes: vaes512, vaes, ...; camellia: ...".
_IMPLS_PER_CIPHER = "; ".join(f"{c}: {', '.join(names)}" for c, names in (*CIPHER_IMPLS.items(),
                                                                          *CRYPTREC_IMPLS.items()))


@click.command("native")
@click.option("--threads", type=Integer(1, MAX_THREADS, many=True, names={"all": _max_threads, "max": _max_threads}),
              default="1,all", show_default=True,
              help=f"Comma-separated OpenMP thread counts, 1..{MAX_THREADS} ('all' = every core).")
@click.option("--bytes", "sizes", type=Size(1, host_memory, many=True, why=_MEMORY), default="16K,16M",
              show_default=True, help="Comma-separated buffer sizes (4096, 16K, 64M, 1G), at most this "
              "machine's memory.")
@click.option("--cipher", "ciphers", type=Choices(CIPHERS + CRYPTREC_CIPHERS), default="aes", show_default=True,
              help="Comma-separated ciphers: aes, camellia (RFC 3713), sc2000, hierocrypt3 (seed 002's "
                   "CRYPTREC ciphers: table implementations, contiguous chunks); each runs the whole grid.")
@click.option("--impl", "impls", type=Choices(_IMPL_NAMES), metavar="IMPL,...", default="auto", show_default=True,
              help="Comma-separated implementations of the chosen ciphers: " + _IMPLS_PER_CIPHER +
                   "; auto: the best this CPU runs, all: every one it runs.")
@click.option("--strategy", "strategies", type=Choices(STRATEGIES), default="contiguous", show_default=True,
              help="Comma-separated: coarse, extended, contiguous.")
@click.option("--block-bytes", type=Size(16, host_memory, multiple=16, many=True, why=_MEMORY), default="1024",
              show_default=True,
              help="Comma-separated extended block sizes (E x 16 bytes per task; seed 000: 512-4K).")
@click.option("--key-bits", type=click.Choice(["128", "192", "256"]), default="128", show_default=True)
@click.option("--vs-openssl", is_flag=True, help="Also time OpenSSL EVP aes-*-ctr (camellia-*-ctr) on the same buffers "
              "in this run and print the ratio ours/OpenSSL.")
@click.option("--multi", is_flag=True, help="Every thread encrypts its own buffer of each size (like "
              "`openssl speed -multi N`) and the aggregate throughput is reported; --strategy is ignored.")
@click.option("--min-seconds", type=Seconds(0, MAX_MIN_SECONDS), default=0.1, show_default=True,
              help=f"Time each measurement's samples for at least this long, 0..{MAX_MIN_SECONDS:g} s (the "
              "median sample is reported, with the spread; 0: --reps alone decides).")
@click.option("--reps", type=Integer(1, MAX_REPS), default=3, show_default=True,
              help=f"At least this many timed samples (1..{MAX_REPS}; never fewer than {MIN_SAMPLES}: a median "
              "and a spread need them).")
@click.option("--experiment", type=Text(), default="native", show_default=True, help="The records' experiment name.")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False), help="Write records (Parquet, or CSV "
              "when the name ends in .csv) and a manifest next to it.")
@click.option("--json", "as_json", is_flag=True, help="Print results and records as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def native_cmd(threads, sizes, ciphers, impls, strategies, block_bytes, key_bits, vs_openssl, multi, min_seconds, reps,
               experiment, out_path, as_json, quiet):
    """Benchmark native CPU AES-CTR (or Camellia, SC2000, Hierocrypt-3 CTR) over threads x bytes x impl x strategy x block size."""
    from s2mc.analysis import records
    from s2mc.workloads import native
    from s2mc.workloads.native import cryptrec
    from s2mc.workloads.native.grid import NativeGrid, format_summary, run_grid, summary_header, summary_legend

    if not native.available():
        raise S2mcError("native AES library not built; run `make setup`")
    max_t = native.max_threads()
    thread_list = list(dict.fromkeys(threads))
    size_list = list(sizes)
    if multi and max(thread_list) * max(size_list) > host_memory():
        # every thread has its own buffer
        raise click.UsageError(f"--multi: {max(thread_list)} threads x {human_size(max(size_list))} bytes "
                               f"do not fit in this machine's memory ({human_size(host_memory())})")
    cipher_list = list(dict.fromkeys(ciphers))
    impl_lists = {}   # per cipher: the names that belong to it ("auto" and "all" to every one)
    # seed 002's other ciphers (s2mc.workloads.native.cryptrec) first: no OpenSSL, contiguous chunks
    for cipher in sorted(cipher_list, key=lambda c: c not in CRYPTREC_CIPHERS):
        other = cipher in CRYPTREC_CIPHERS
        if other and vs_openssl:
            raise S2mcError(f"--vs-openssl: OpenSSL has no {cipher} (it compares aes and camellia)")
        if other and not multi and set(strategies) != {"contiguous"}:
            raise S2mcError(f"--strategy {','.join(strategies)}: {cipher} runs contiguous chunks only")
        names = CRYPTREC_IMPLS[cipher] if other else CIPHER_IMPLS[cipher]
        mine = [i for i in impls if i in ("auto", "all") or i in names]
        if not mine:
            raise S2mcError(f"--impl {','.join(impls)}: no implementation of {cipher} "
                            f"(its implementations: auto, {', '.join(names)})")
        every = names if other else native.supported_impls(cipher)
        impl_lists[cipher] = list(dict.fromkeys(n for i in mine for n in (
            every if i == "all" else
            [cryptrec.resolve_impl(cipher, i) if other else native.resolve_impl(i, cipher)])))
    impl_list = [i for c in cipher_list for i in impl_lists[c]]
    strat_list = list(strategies)
    bb_list = list(block_bytes)

    def log(s):
        if not as_json:
            click.echo(format_summary(s))

    if not as_json:
        click.echo(f"# {native.info()['cpu']}; OpenMP threads available: {max_t}; "
                   f"{native.openssl_version()}", err=True)
        click.echo(summary_header(vs_openssl))
    summaries, rows = [], []
    for cipher in cipher_list:
        grid = NativeGrid(threads=tuple(thread_list), sizes=tuple(size_list), impls=tuple(impl_lists[cipher]),
                          strategies=tuple(strat_list), block_bytes=tuple(bb_list), key_bits=int(key_bits),
                          cipher=cipher, vs_openssl=vs_openssl, multi=multi, min_seconds=min_seconds,
                          min_reps=reps)
        s, r = run_grid(grid, run_id=records.new_run_id("native"), experiment=experiment,
                        progress=not quiet and sys.stderr.isatty(), log=log)
        summaries += s
        rows += r
    df = records.make_records(rows)
    if out_path:
        params = dict(command="native", threads=thread_list, bytes=size_list, ciphers=cipher_list, impls=impl_list,
                      strategies=strat_list, block_bytes=bb_list, key_bits=int(key_bits),
                      vs_openssl=vs_openssl, multi=multi, min_seconds=min_seconds, reps=reps, experiment=experiment,
                      native=native.info())
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if not as_json:
        click.echo(summary_legend(summaries, vs_openssl))
    if as_json:
        click.echo(json.dumps({"results": summaries, "records": df.astype(object).to_dict("records")},
                              indent=2, default=str))


def _cpus() -> int:
    from s2mc.workloads.native import coherence
    return len(coherence.cpus()) if coherence.available() else 1


_CPUS = "the CPUs this process may use: each thread is pinned to its own"


def _mesh_max() -> int:
    from s2mc.simulator import MAX_CORES   # here, not at the top: the native commands start without the simulator
    return MAX_CORES


@click.command("coherence-native")
@click.option("--bench", "benches", type=Choices(COHERENCE_BENCHES + (COHERENCE_MATRIX,)),
              help="Comma-separated experiments: false-sharing (counters packed in one line against padded a line "
              "apart), ping-pong (a line handed between two cores), locks (spin locks), core-to-core (the "
              "latency matrix: a ping-pong between every pair of --cores CPUs, beside the simulated mesh's). "
              "Default: the first three (ping-pong only where this process may use 2 CPUs).")
@click.option("--cores", type=Integer(2, _cpus, names={"all": _cpus, "max": _cpus}, why=_CPUS), default="all",
              show_default=True, help="CPUs of the core-to-core matrix (the first ones this process may use).")
@click.option("--mesh-cores", type=Integer(2, _mesh_max, many=True, names={"same": lambda: 0, "none": lambda: -1}),
              default="same", show_default=True, help="Comma-separated tile counts of the simulated mesh's "
              "core-to-core matrices ('same' = --cores, 'none'). Two runs per pair of tiles: 64 takes many minutes.")
@click.option("--png", "png_path", type=OutputFile("heat map", stdout=False),
              help="Write the core-to-core matrices as heat maps (PNG), this CPU's beside the mesh's.")
@click.option("--threads", type=Integer(1, _cpus, many=True, names={"all": _cpus, "max": _cpus}, why=_CPUS),
              default="1,all", show_default=True,
              help="Comma-separated thread counts for false-sharing and locks ('all' = every CPU this process "
                   "may use).")
@click.option("--increment", "increments", type=Choices(COHERENCE_INCREMENTS), default=",".join(COHERENCE_INCREMENTS),
              show_default=True, help="Comma-separated false-sharing increments: plain (a load and a store) and "
              "atomic (a locked add, which needs the line for every increment).")
@click.option("--lock", "locks", type=Choices(COHERENCE_LOCKS), default=",".join(COHERENCE_LOCKS), show_default=True,
              help="Comma-separated spin locks: tas (test-and-set), ttas (test-and-test-and-set), ticket.")
@click.option("--iterations", type=Integer(1, COHERENCE_MAX), default=2_000_000, show_default=True,
              help="Increments per thread in false-sharing.")
@click.option("--acquisitions", type=Integer(1, COHERENCE_MAX), default=200_000, show_default=True,
              help="Lock acquisitions per thread in locks.")
@click.option("--round-trips", type=Integer(100, COHERENCE_MAX, multiple=100), default=20_000, show_default=True,
              help="Line round trips in ping-pong (a multiple of 100: they are timed 100 at a time).")
@click.option("--reps", type=Integer(1, COHERENCE_MAX_REPS), default=3, show_default=True,
              help="Repetitions of each false-sharing and lock measurement after an untimed warm-up (the "
              "median is reported, with the spread).")
@click.option("--experiment", type=Text(), default="coherence_native", show_default=True,
              help="The records' experiment name.")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False), help="Write records (Parquet, or CSV "
              "when the name ends in .csv) and a manifest next to it.")
@click.option("--json", "as_json", is_flag=True, help="Print results and records as JSON on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def coherence_native_cmd(benches, cores, mesh_cores, png_path, threads, increments, locks, iterations, acquisitions,
                         round_trips, reps, experiment, out_path, as_json, quiet):
    """Cache coherence on this CPU: false sharing, line ping-pong latency and spin-lock scaling (OpenMP)."""
    from s2mc.analysis import records
    from s2mc.workloads.native import coherence

    if not coherence.available():
        raise S2mcError("native coherence benchmarks not built; run `make setup`")
    cpus = coherence.cpus()
    if not benches:   # every experiment this process can run
        benches = [b for b in COHERENCE_BENCHES if b != "ping-pong" or len(cpus) >= 2]
        if len(benches) < len(COHERENCE_BENCHES) and not as_json:
            click.echo(f"# ping-pong left out: it needs 2 CPUs and this process may use {len(cpus)}", err=True)
    elif "ping-pong" in benches and len(cpus) < 2:
        raise S2mcError(f"--bench ping-pong needs 2 CPUs; this process may use {len(cpus)}")
    matrix = COHERENCE_MATRIX in benches
    if png_path and not matrix:
        raise S2mcError("--png draws the core-to-core matrices: add --bench core-to-core")
    benches = [b for b in benches if b != COHERENCE_MATRIX]
    grid = coherence.CoherenceGrid(benches=tuple(dict.fromkeys(benches)), threads=tuple(dict.fromkeys(threads)),
                                   increments=tuple(dict.fromkeys(increments)), locks=tuple(dict.fromkeys(locks)),
                                   iterations=iterations, acquisitions=acquisitions, round_trips=round_trips, reps=reps)

    def log(s):
        if not as_json:
            click.echo(coherence.format_summary(s))

    if not as_json:
        click.echo(f"# {len(cpus)} CPU(s) usable (threads pinned one per CPU); cache line "
                   f"{coherence.line_bytes()} bytes", err=True)
    progress = not quiet and sys.stderr.isatty()
    summaries, rows = [], []
    if grid.benches:
        summaries, rows = coherence.run_grid(grid, run_id=records.new_run_id("coherence"), experiment=experiment,
                                             progress=progress, log=log)
    matrices = {}
    if matrix:
        from s2mc.workloads import core_to_core
        matrices = _core_to_core(cores, mesh_cores, round_trips, progress=progress, as_json=as_json)
        rows += coherence.core_to_core_rows(matrices["native"], run_id=records.new_run_id("c2c"),
                                            experiment=experiment)
        for m in matrices["mesh"]:
            rows += core_to_core.mesh_rows(m, run_id=records.new_run_id("c2c-mesh"), experiment=experiment)
    df = records.make_records(rows)
    if png_path:
        from s2mc.analysis import plots
        plots.core_to_core_heatmaps(df, png_path)
        click.echo(f"wrote the heat maps to {png_path}", err=True)
    if out_path:
        params = dict(command="coherence-native", benches=list(grid.benches), threads=list(grid.threads),
                      increments=list(grid.increments), locks=list(grid.locks), iterations=iterations,
                      acquisitions=acquisitions,
                      round_trips=round_trips, reps=reps, experiment=experiment, cpus=cpus,
                      line_bytes=coherence.line_bytes())
        if matrix:
            params.update(core_to_core_cpus=matrices["native"]["cpus"],
                          mesh_cores=[m["cores"] for m in matrices["mesh"]], mesh_machine=core_to_core.MACHINE,
                          mesh_home=core_to_core.HOME)
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        doc = {"results": summaries, "records": df.astype(object).to_dict("records")}
        if matrix:
            doc["core_to_core"] = matrices
        click.echo(json.dumps(doc, indent=2, default=str))


def _core_to_core(cores: int, mesh_cores: list[int], round_trips: int, *, progress: bool, as_json: bool) -> dict:
    """This CPU's core-to-core matrix and the simulated mesh's for each count of `mesh_cores` (0: the
    same as `cores`; -1: none), printed as tables unless `as_json`."""
    from s2mc.workloads import core_to_core
    from s2mc.workloads.native import coherence
    counts = list(dict.fromkeys(cores if n == 0 else n for n in mesh_cores if n != -1))
    pairs = cores * (cores - 1) // 2 + sum(n * (n - 1) // 2 for n in counts)
    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=pairs, desc="s2mc core-to-core", unit="pair", leave=False)
    step = bar.update if bar else None
    try:
        native = coherence.core_to_core(cores, round_trips, step=step)
        mesh = [core_to_core.mesh_matrix(n, step=step) for n in counts]
    finally:
        if bar:
            bar.close()
    if not as_json:
        click.echo(f"core-to-core on {coherence.platform_name()}: one-way latency, ns (per pair: the median of "
                   f"{round_trips // native['batch']} timed batches of {native['batch']} round trips, / 2)")
        click.echo(coherence.format_core_to_core(native) + "\n")
        for m in mesh:
            click.echo(f"core-to-core on the simulated {m['cores']}-tile mesh ({m['engine']} engine, line home "
                       f"tile {m['home']}): one-way latency, cycles")
            click.echo(core_to_core.format_mesh_matrix(m) + "\n")
    return {"native": native, "mesh": mesh}


@click.command("litmus-native")
@click.option("--test", "names", type=Choices(tuple(litmus_tests.TESTS)), default=",".join(litmus_tests.TESTS),
              show_default=True, help="Comma-separated litmus tests: " + "; ".join(
                  f"{t.name} ({t.title}: {t.text()})" for t in litmus_tests.TESTS.values()) + ".")
@click.option("--fences", "fencings", type=Choices(litmus_tests.FENCINGS), default=",".join(litmus_tests.FENCINGS),
              show_default=True, help="Comma-separated variants: plain (relaxed loads and stores, plain movs on "
              "x86) and mfence (a full fence between every two operations of a thread).")
@click.option("--iterations", type=Integer(1, LITMUS_MAX), default=LITMUS_ITERATIONS, show_default=True,
              help="Instances of each test (the threads meet before every one).")
@click.option("--batch", type=Integer(1, LITMUS_MAX_BATCH), default=LITMUS_BATCH, show_default=True,
              help="Instances per batch: each runs on its own locations, reset and flushed from the caches "
                   "between batches.")
@click.option("--experiment", type=Text(), default=LITMUS_EXPERIMENT, show_default=True,
              help="The records' experiment name.")
@click.option("--out", "out_path", type=OutputFile("records", stdout=False), help="Write records (Parquet, or CSV "
              "when the name ends in .csv) and a manifest next to it.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object per run (test, fences, iterations, "
              "outcomes and counts, ...) as a list on stdout.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def litmus_native_cmd(names, fencings, iterations, batch, experiment, out_path, as_json, quiet):
    """Litmus tests on this CPU: SB, MP, LB, 2+2W and IRIW as pinned threads, with and without mfence,
    each outcome with its count."""
    from s2mc.analysis import records
    from s2mc.workloads.native import coherence, litmus

    if not litmus.available():
        raise S2mcError("native litmus tests not built; run `make setup`")
    runs = [(name, fencing == litmus_tests.FENCE) for name in dict.fromkeys(names)
            for fencing in dict.fromkeys(fencings)]
    cpus = litmus.cpus()
    plat = coherence.platform_name()
    if not as_json:
        click.echo(f"# {plat}: {len(cpus)} CPU(s) usable, thread i pinned to CPU i mod {len(cpus)}; fenced "
                   f"variant: {litmus.fence_instruction()}; {litmus_tests.X86_MODEL.upper()} verdicts", err=True)
    bar = None
    if not quiet and sys.stderr.isatty():
        from tqdm import tqdm
        bar = tqdm(total=len(runs) * iterations, desc="s2mc litmus-native", unit="inst", unit_scale=True,
                   leave=False)
    results, rows = [], []
    run_id = records.new_run_id("litmus")
    try:
        for name, fences in runs:
            r = litmus.run(name, fences=fences, iterations=iterations, batch=batch,
                           step=bar.update if bar else None)
            results.append(r)
            rows += litmus.rows(r, run_id=run_id, platform=plat, experiment=experiment)
            if not as_json:
                if bar:
                    bar.clear()
                click.echo(litmus.format_result(r) + "\n")
    finally:
        if bar:
            bar.close()
    df = records.make_records(rows)
    if out_path:
        params = dict(command="litmus-native", tests=list(dict.fromkeys(names)), fences=list(dict.fromkeys(fencings)),
                      iterations=iterations, batch=batch, experiment=experiment, cpus=cpus,
                      fence_instruction=litmus.fence_instruction())
        path = records.write(df, out_path, params=params)
        click.echo(f"wrote {len(df)} records to {path}", err=True)
    if as_json:
        click.echo(json.dumps(results, indent=2))
    else:
        click.echo(litmus.verdict_line(results))


COMMANDS = [native_cmd, coherence_native_cmd, litmus_native_cmd]
