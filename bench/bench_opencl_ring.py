"""Why the OpenCL file ring is no faster than the old pipeline on a device: the check of the
hypotheses in docs/gpu.md ("Why the ring is no faster on NVIDIA's OpenCL"), in one run.

On one OpenCL device (the default one, S2MC_OPENCL_DEVICE picks another), AES-128-CTR:
1. host to host from pageable memory in seed 004's segments, one queue (`opencl/host-segmented`)
   at several segment sizes: if the rate stays the same from 16 MiB to 1 GiB segments, the fixed
   cost per piece is not what limits it;
2. the file ring itself (FileRing.crypt_fds, mapped CL_MEM_ALLOC_HOST_PTR buffers) over a
   page-cached file with 1, 2 and 4 queues: if more queues do not help, the copies of one queue
   do not overlap another's (or the kernels);
3. beside them, cp of the same file and the kernel alone (device-resident), for the bounds.

    .venv/bin/python bench/bench_opencl_ring.py [--size 1G] [--reps 3] [--dir /dev/shm]
                                                [--segments 16M,64M,256M,1G]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from s2mc.common.units import human_size, parse_size
from random_data import write_random_file

NAME = "bench_opencl_ring"

KEY, IV = bytes(range(16)), bytes(16)


def _median_s(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default=None, help="default: 1G on a GPU, 16M on a CPU device (PoCL)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dir", default=os.environ.get("FILE_DIR") or ("/dev/shm" if os.path.isdir("/dev/shm") else None))
    ap.add_argument("--segments", default="16M,64M,256M,1G", help="host-segmented segment sizes")
    args = ap.parse_args(argv)
    from s2mc.gpu import opencl

    st = opencl.status()
    if not st["devices"]:   # nothing to check here, as `make bench` runs every bench
        print(f"{NAME}: skipped: no OpenCL device: {st['reason']}")
        return 0
    dev = st["devices"][st["device"]]
    if args.size is None:   # a CPU device moves ~0.1 GB/s: 1 GiB would take minutes per row
        args.size = "1G" if "GPU" in str(dev.get("type", "")).upper() else "16M"
    n = parse_size(args.size)
    segments = [parse_size(x) for x in args.segments.split(",")]
    if n is None or None in segments:
        raise SystemExit(f"{NAME}: --size or --segments: not a size ({args.size!r}, {args.segments!r}; e.g. 64M)")
    if n < 16 or args.reps < 1 or min(segments) < 16:
        raise SystemExit(f"{NAME}: --size and each segment must be at least 16 bytes, --reps at least 1")
    ext = opencl._require()
    auto = opencl.resolve_segment("auto", cipher="aes", op="ctr", key_bits=128)
    gbs = lambda s: n / s / 1e9   # noqa: E731
    rows = []
    d = opencl.bench("aes", "device", nbytes=min(n, dev.get("max_alloc_bytes", n)), reps=args.reps)
    rows.append(("kernel alone (device-resident)", "-", d["seconds"] * n / d["bytes"]))
    for seg in sorted({min(seg, n) for seg in segments}):   # no segment beyond the data
        r = opencl.bench("aes", "host", nbytes=n, reps=args.reps, segment=seg)
        rows.append((f"host-segmented, pageable memory, 1 queue, {human_size(seg)}B segments", "-", r["seconds"]))
    with tempfile.TemporaryDirectory(dir=args.dir, prefix="s2mc-ocl-ring-") as tmp:
        src, dst = write_random_file(os.path.join(tmp, "in.bin"), n), os.path.join(tmp, "out.bin")

        def cp() -> None:
            subprocess.run(["cp", src, dst], check=True)
        rows.append(("cp of the file", "-", _median_s(cp, args.reps)))
        piece = auto or (64 << 20)
        for queues in sorted({1, opencl.FILE_QUEUES, 4}):
            ring = ext.FileRing(KEY, IV, cipher="aes", op="ctr", device=-1, slot_bytes=piece,
                                slots=opencl.FILE_SLOTS, queues=queues)

            def run() -> None:
                with open(src, "rb") as fi, open(dst, "wb") as fo:
                    _, err, stage, msg, _ = ring.crypt_fds(fi.fileno(), fo.fileno(), 0, n)
                    if stage:
                        raise SystemExit(f"{NAME}: the ring stopped at {stage}: {msg or os.strerror(err)}")
            rows.append((f"file ring, mapped buffers, {opencl.FILE_SLOTS} x {human_size(piece)}B, {queues} queue(s)",
                         str(queues),
                         _median_s(run, args.reps)))
            del ring
    print(f"\nOpenCL on {dev['name']} ({dev.get('platform', '')}); {human_size(n)}B, AES-128-CTR, median of "
          f"{args.reps}; seed 004's stored segment (auto) for this device: "
          f"{human_size(auto) + 'B' if auto else 'none'}\n")
    print("| row | seconds | GB/s | Gbit/s |\n|---|---:|---:|---:|")
    for name, _, s in rows:
        print(f"| {name} | {s:.3f} | {gbs(s):.2f} | {gbs(s) * 8:.1f} |")
    seg_s = [s for name, _, s in rows if name.startswith("host-segmented")]
    ring = {int(q): s for _, q, s in rows if q != "-"}
    cp_s = next(s for name, _, s in rows if name == "cp of the file")
    host_at_piece = opencl.bench("aes", "host", nbytes=n, reps=args.reps, segment=min(piece, n))["seconds"]
    print(f"\nhost-segmented: {gbs(max(seg_s)):.2f} to {gbs(min(seg_s)):.2f} GB/s over the segment sizes "
          f"({max(seg_s) / min(seg_s):.2f}x between the slowest and the fastest).")
    print("The ring against 1 queue: " + ", ".join(f"{q} queues {ring[q] / ring[1]:.2f}x the time"
                                                   for q in sorted(ring) if q != 1) + ".")
    q = opencl.FILE_QUEUES
    print(f"The ring with {q} queue(s) (what `s2mc encrypt --backend opencl` runs): {ring[q]:.3f} s; cp "
          f"{cp_s:.3f} s and host-segmented at the ring's piece {host_at_piece:.3f} s: "
          f"{cp_s + host_at_piece:.3f} s one after the other, {max(cp_s, host_at_piece):.3f} s fully overlapped.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
