"""The GPU backends' file path before and after the ring, side by side in one run.

Rows, on one page-cached file (FILE_DIR, default /dev/shm), each a fresh output per round:
`cp`; "before": the pipeline the backends used until the ring (s2mc.workloads.cipher_host's
three-stage Python pipeline in pieces, each piece one host-to-host call that returns or fills a
Python buffer: 256 MiB pieces, two in flight for CUDA; 64 MiB pieces in seed 004's segments for
OpenCL); "ring": `encrypt_file` as `s2mc encrypt --backend ...` runs it now (pinned or mapped
buffers allocated once, a reader and a writer thread, several pieces in flight). Rounds alternate
between the rows; the table gives each row's median and best wall seconds and its ratio to cp's.
Outputs are checked equal to each other. Backends without a device are skipped with one line.

    .venv/bin/python bench/bench_gpu_files.py [--backend opencl,cuda] [--size 64M] [--rounds 5]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from typing import Callable

from s2mc.common.units import human_size, parse_size
from random_data import write_random_file
from s2mc.workloads.cipher_host import counter_add, crypt_file

KEY, IV = bytes(range(16)), bytes.fromhex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff")


def _before_cuda(src: str, dst: str) -> None:
    from s2mc import gpu
    ext = gpu._load()

    def transform(view: memoryview, offset: int) -> None:   # a fresh bytes object per piece, copied back
        view[:] = ext.crypt(view, KEY, counter_add(IV, offset // 16), kernel=gpu.default_kernel(), op="ctr",
                            streams=4, chunk_bytes=0, cipher="aes")
    crypt_file(src, dst, transform, chunk_bytes=256 << 20, nbuffers=2)


def _before_opencl(src: str, dst: str, segment: int) -> None:
    from s2mc.gpu import opencl

    def transform(view: memoryview, offset: int) -> None:   # in place, one call per piece
        opencl._run(view, view, KEY, counter_add(IV, offset // 16), cipher="aes", op="ctr", segment=segment,
                    device=None)
    crypt_file(src, dst, transform, chunk_bytes=max(64 << 20, segment), nbuffers=2)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="opencl,cuda")
    ap.add_argument("--size", default="64M")
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    n = parse_size(args.size)
    rows: dict[str, Callable[[str, str], object]] = {}
    cp = shutil.which("cp")
    for backend in args.backend.split(","):
        if backend == "opencl":
            from s2mc.gpu import opencl
            st = opencl.status()
            if not st["devices"]:
                print(f"bench_gpu_files: opencl skipped: {st['reason']}")
                continue
            seg = opencl.resolve_segment("auto", cipher="aes", op="ctr", key_bits=128)
            rows[f"opencl before (pipeline, {human_size(seg)}B segments)"] = lambda s, d, seg=seg: _before_opencl(s, d, seg)
            rows["opencl ring (encrypt_file)"] = lambda s, d, seg=seg: opencl.encrypt_file(s, d, KEY, IV, segment=seg)
        elif backend == "cuda":
            from s2mc import gpu
            st = gpu.status()
            if not st["gpu_present"]:
                print(f"bench_gpu_files: cuda skipped: {st['reason']}")
                continue
            rows["cuda before (pipeline, 256 MiB pieces)"] = _before_cuda
            rows["cuda ring (encrypt_file)"] = lambda s, d: gpu.encrypt_file(s, d, KEY, IV)
        else:
            print(f"bench_gpu_files: unknown backend {backend!r} (opencl, cuda)")
            return 2
    if not rows:
        return 0
    rows = {"cp": lambda s, d: subprocess.run([cp, s, d], check=True), **rows}
    folder = os.environ.get("FILE_DIR", "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir())
    work = tempfile.mkdtemp(prefix="s2mc-bench-files-", dir=folder)
    try:
        src = write_random_file(os.path.join(work, "in.bin"), n)
        times: dict[str, list[float]] = {k: [] for k in rows}
        outputs: dict[str, bytes] = {}
        for _ in range(args.rounds):
            for name, fn in rows.items():
                dst = os.path.join(work, "out.bin")
                if os.path.exists(dst):
                    os.remove(dst)   # outside the timing: freeing tmpfs pages costs
                t0 = time.perf_counter()
                fn(src, dst)
                times[name].append(time.perf_counter() - t0)
                if name != "cp" and name not in outputs:
                    with open(dst, "rb") as f:
                        outputs[name] = f.read()
        same = len(set(outputs.values())) <= 1
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"{human_size(n)}B random file in {folder}, AES-128-CTR, {args.rounds} rounds alternating, "
              f"{os.cpu_count()} CPUs, load average {load:.2f} at the end; outputs "
              f"{'identical' if same else 'DIFFERENT'}\n")
        cp_med = statistics.median(times["cp"])
        print("| row | median s | best s | GB/s (median) | median / cp's |")
        print("|---|---:|---:|---:|---:|")
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"| {name} | {med:.3f} | {min(ts):.3f} | {n / med / 1e9:.3f} | {med / cp_med:.2f} |")
        return 0 if same else 1
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
