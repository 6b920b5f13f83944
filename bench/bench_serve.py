"""A class on one server: N simulated students (asyncio tasks, httpx) run, compile and step the
debugger against `s2mc serve` on loopback for a fixed time; prints the latency of each kind of
call (p50, p95, max), the answers by status, and fails when the server answered any 5xx or a
connection broke (docs/benchmarks.md, docs/server.md).

    python bench/bench_serve.py --students 50 --seconds 60          # starts its own server
    python bench/bench_serve.py --url http://127.0.0.1:8000          # or a running one

A student's loop, with a think time between calls (people read what they got): load an example,
run it on 1-4 cores, compile it, open a debugging session, step it 5 times, close it. A "busy, try
again" answer (429) is a correct answer under load: it is counted and retried after Retry-After.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

PROGRAMS = ("parallel_sum.s", "spin_lock.s", "barrier.s", "sum.rz", "fib.rz", "spinlock.rz")


class Student:
    def __init__(self, client: httpx.AsyncClient, examples: dict, stats, statuses, errors, think: float, rng):
        self.c, self.examples, self.stats, self.statuses, self.errors = client, examples, stats, statuses, errors
        self.think, self.rng = think, rng

    async def call(self, kind: str, method: str, path: str, body=None):
        while True:
            t0 = time.perf_counter()
            try:
                r = await self.c.request(method, path, json=body)
            except httpx.HTTPError as exc:
                self.statuses[f"{kind} {type(exc).__name__}"] += 1
                return None
            self.statuses[f"{kind} {r.status_code}"] += 1
            if r.status_code not in (200, 429):
                self.errors.setdefault(f"{kind} {r.status_code}", r.text[:300])
            if r.status_code == 429:
                await asyncio.sleep(float(r.headers.get("retry-after", "1")))
                continue
            self.stats[kind].append(time.perf_counter() - t0)
            return r

    async def pause(self):
        await asyncio.sleep(self.rng.uniform(0.5, 1.5) * self.think)

    async def lesson(self, until: float):
        while time.monotonic() < until:
            name = self.rng.choice(PROGRAMS)
            prog = {"source": self.examples[name], "language": "rz" if name.endswith(".rz") else "asm"}
            await self.call("run", "POST", "/api/run", {**prog, "params": {"cores": self.rng.choice((1, 2, 4))}})
            await self.pause()
            await self.call("compile", "POST", "/api/compile", prog)
            await self.pause()
            r = await self.call("debug-open", "POST", "/api/debug", {**prog, "params": {"cores": 2}})
            if r is not None and r.status_code == 200:
                sid = r.json()["id"]
                for _ in range(5):
                    await self.call("debug-step", "POST", f"/api/debug/{sid}", {"command": "step"})
                    await self.pause()
                await self.call("debug-close", "DELETE", f"/api/debug/{sid}")
            await self.pause()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def lesson(url: str, students: int, seconds: float, think: float, seed: int):
    stats, statuses, errors = defaultdict(list), Counter(), {}
    limits = httpx.Limits(max_connections=students + 10, max_keepalive_connections=students + 10)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        examples = {e["name"]: e["source"] for e in (await client.get("/api/examples")).json()}
        until = time.monotonic() + seconds
        rngs = [random.Random(seed + i) for i in range(students)]
        await asyncio.gather(*(Student(client, examples, stats, statuses, errors, think, rngs[i]).lesson(until)
                               for i in range(students)))
    return stats, statuses, errors


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--think", type=float, default=1.0, help="mean seconds a student waits between calls")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="the server's --workers")
    ap.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    server = None
    url = args.url
    if url is None:
        port = _free_port()
        s2mc = str(Path(sys.executable).with_name("s2mc"))
        # every simulated student comes from 127.0.0.1: one address, so its cap is the class's
        server = subprocess.Popen([s2mc, "serve", "--port", str(port), "--workers", str(args.workers),
                                   "--connections-per-address", str(args.students + 10)],
                                  start_new_session=True, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                httpx.get(url + "/api/params", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
    load_before = os.getloadavg()
    try:
        t0 = time.monotonic()
        stats, statuses, errors = asyncio.run(lesson(url, args.students, args.seconds, args.think, args.seed))
        wall = time.monotonic() - t0
    finally:
        if server is not None:
            server.send_signal(signal.SIGINT)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
    every = [x for xs in stats.values() for x in xs]
    print(f"{args.students} students, {wall:.0f} s on {url}, server --workers {args.workers}, "
          f"{os.cpu_count()} CPUs; {len(every)} answers ({len(every) / wall:.1f}/s)")
    print(f"{'call':<12}{'answers':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for kind in ("run", "compile", "debug-open", "debug-step", "debug-close"):
        xs = stats.get(kind)
        if xs:
            print(f"{kind:<12}{len(xs):>8}{1000 * _pct(xs, 50):>9.0f}{1000 * _pct(xs, 95):>9.0f}{1000 * max(xs):>9.0f}")
    if every:
        print(f"{'all':<12}{len(every):>8}{1000 * _pct(every, 50):>9.0f}{1000 * _pct(every, 95):>9.0f}"
              f"{1000 * max(every):>9.0f}")
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    for k, text in sorted(errors.items()):
        print(f"first {k}: {text}")
    failed = sum(v for k, v in statuses.items() if not k.split()[-1].isdigit() or k.split()[-1].startswith("5"))
    print(f"server errors (5xx or broken connections): {failed}")
    print(f"load average (1 min) before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}: the machine's, "
          "other work on it included")
    return 1 if failed or not every else 0


if __name__ == "__main__":
    sys.exit(main())
