"""The experiment registry: the standard experiments of s2mc, as data.

Each experiment says which `s2mc` command lines (docs/architecture.md lists the commands) produce it, which
seed reference tables it is compared with, and a `quick` form used by `s2mc demo` (sized to run in
minutes on a 2-core machine). The analysis layer runs experiments only through that public
interface (a child `s2mc` process), never by reaching into the simulator.

    from s2mc.analysis import experiments
    exp = experiments.get("seed003_grid")
    exp.argv("results/seed003.parquet")   # -> [["aes", "--cores", "1,2,3,4", ..., "--out", ...]]
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from s2mc.isa.errors import S2mcError

#: A placeholder in argv replaced by the host's thread counts (1, 2, 4, ... up to os.cpu_count()).
ALL_THREADS = "{threads}"


def thread_counts(n_cpu: int | None = None) -> str:
    n = n_cpu or os.cpu_count() or 1
    counts, t = [], 1
    while t < n:
        counts.append(t)
        t *= 2
    counts.append(n)
    return ",".join(str(c) for c in counts)


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    source: str                      # sim | native | cuda
    command: str                     # the s2mc subcommand that produces it
    runs: tuple[tuple[str, ...], ...]        # argument lists (without the command and --out)
    quick: tuple[tuple[str, ...], ...] = ()  # smaller runs for `s2mc demo` (default: runs)
    reference: tuple[str, ...] = ()  # seed reference experiments it is compared with
    description: str = ""
    params: dict = field(default_factory=dict)  # the effective parameters, for manifests and docs

    def argv(self, out: str, quick: bool = False, n_cpu: int | None = None) -> list[list[str]]:
        """Full argument lists (after `s2mc`), one per run; run i writes `out` with suffix -i."""
        runs = (self.quick or self.runs) if quick else self.runs
        result = []
        for i, args in enumerate(runs):
            target = out if len(runs) == 1 else _suffix(out, i)
            args = [a.replace(ALL_THREADS, thread_counts(n_cpu)) for a in args]
            result.append([self.command, *args, "--out", target])
        return result

    def cli(self, quick: bool = False) -> list[str]:
        """The command lines as a user would type them."""
        return ["s2mc " + " ".join(a) for a in self.argv(f"results/{self.name}.parquet", quick)]


def _suffix(path: str, i: int) -> str:
    stem, dot, ext = path.rpartition(".")
    return f"{stem}-{i}.{ext}" if dot else f"{path}-{i}"


_SEED003 = ("--cores", "1,2,3,4", "--bytes", "32,64,128,256", "--key-bits", "128", "--mode", "ecb",
            "--style", "bytes", "--partition", "interleaved")

REGISTRY: dict[str, Experiment] = {e.name: e for e in (
    Experiment(
        "seed003_grid", "Seed 003 Tables 3-4: cycles and stalls, 1-4 cores, 32-256 bytes", "sim",
        "aes", (_SEED003,), reference=("seed003_table3", "seed003_table4"),
        description="AES-128-ECB, byte-oriented, interleaved blocks, L = 2, fifo arbitration: the "
                    "configuration of seed 003 §5.",
        params={"cores": [1, 2, 3, 4], "bytes": [32, 64, 128, 256], "key_bits": 128,
                "mode": "ecb", "style": "bytes", "partition": "interleaved"}),
    Experiment(
        "core_scaling", "Core scaling to 64 simulated cores", "sim", "aes",
        (("--cores", "1,2,4,8,16,32,64", "--bytes", "1024,4096,65536", "--mode", "ecb",
          "--style", "bytes", "--partition", "interleaved"),),
        quick=(("--cores", "1,2,4,8,16,32,64", "--bytes", "1024,16384", "--mode", "ecb",
                "--style", "bytes,ttable", "--partition", "interleaved"),),
        description="Where the shared bus saturates; compared with the bus-contention model.",
        params={"cores": [1, 2, 4, 8, 16, 32, 64], "bytes": [1024, 4096, 65536]}),
    Experiment(
        "ttable_scaling", "Core scaling of the T-table AES (fewer, wider accesses)", "sim", "aes",
        (("--cores", "1,2,4,8,16", "--bytes", "1024,4096", "--mode", "ecb", "--style", "ttable",
          "--partition", "interleaved"),),
        description="The same scaling with four bytes per word: a different compute/access ratio.",
        params={"cores": [1, 2, 4, 8, 16], "bytes": [1024, 4096], "style": "ttable"}),
    Experiment(
        "mem_latency_sweep", "Memory-latency sweep (L = 1, 2, 4, 8)", "sim", "aes",
        (("--cores", "1,2,4,8", "--bytes", "256", "--mode", "ecb", "--style", "bytes",
          "--mem-latency", "1,2,4,8"),),
        description="Longer accesses move the saturation point to fewer cores: (Z + L) / L.",
        params={"cores": [1, 2, 4, 8], "bytes": [256], "mem_latency": [1, 2, 4, 8]}),
    Experiment(
        "arbitration_sweep", "Bus arbitration policies (fifo, fixed, round_robin)", "sim", "aes",
        (("--cores", "1,2,4,8", "--bytes", "256", "--mode", "ecb", "--style", "bytes",
          "--arbitration", "fifo,fixed,round_robin"),),
        description="Total cycles barely move; the per-core stall distribution does (fixed "
                    "priority starves high core ids).",
        params={"cores": [1, 2, 4, 8], "bytes": [256],
                "arbitration": ["fifo", "fixed", "round_robin"]}),
    Experiment(
        "native_thread_scaling", "Native AES-128-CTR thread scaling on this host", "native",
        "native",
        (("--threads", ALL_THREADS, "--bytes", "16384,1048576,16777216,67108864",
          "--impl", "auto", "--strategy", "contiguous"),),
        quick=(("--threads", ALL_THREADS, "--bytes", "65536,1048576,16777216",
                "--impl", "auto", "--strategy", "contiguous"),),
        reference=("seed001_table2", "seed001_table5", "seed004_table2", "seed004_table3"),
        description="Real shared-memory scaling (OpenMP) beside the simulated bus.",
        params={"threads": "1,2,4,... up to the host's CPUs",
                "bytes": [16384, 1048576, 16777216, 67108864], "impl": "auto"}),
    Experiment(
        "seed000_block_sizes", "Seed 000 Table 1: coarse-grain vs extended blocks (512 B-4 KB)",
        "native", "native",
        tuple(("--threads", ALL_THREADS, "--bytes", "4194304,16777216,33554432",
               "--impl", "ttable", "--strategy", s, *(("--block-bytes", str(b)) if b else ()))
              for s, b in (("coarse", 0), ("extended", 512), ("extended", 1024),
                           ("extended", 2048), ("extended", 4096))),
        quick=tuple(("--threads", ALL_THREADS, "--bytes", "4194304",
                     "--impl", "ttable", "--strategy", s, *(("--block-bytes", str(b)) if b else ()))
                    for s, b in (("coarse", 0), ("extended", 1024))),
        reference=("seed000_table1", "seed000_text"),
        description="The portable T-table path (the seeds' algorithm), CTR mode.",
        params={"bytes": [4 << 20, 16 << 20, 32 << 20], "strategy": ["coarse", "extended"],
                "block_bytes": [512, 1024, 2048, 4096]}),
    Experiment(
        "gpu_size_sweep", "GPU throughput against data size", "cuda", "gpu",
        (("--bytes", "65536,1048576,16777216,268435456,1073741824"),),
        quick=(("--bytes", "1048576,16777216,268435456"),),
        reference=("seed000_text", "seed001_table2", "seed002_text", "seed004_table2"),
        description="Device-resident and host-to-host throughput; run only when a GPU is present.",
        params={"bytes": [1 << 16, 1 << 20, 1 << 24, 1 << 28, 1 << 30]}),
)}


def get(name: str) -> Experiment:
    try:
        return REGISTRY[name]
    except KeyError:
        raise S2mcError(f"experiments: unknown experiment {name!r} "
                        f"(known: {', '.join(REGISTRY)})") from None


def names() -> list[str]:
    return list(REGISTRY)
