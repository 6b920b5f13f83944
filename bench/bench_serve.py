"""A class on one server: N simulated students (asyncio tasks, httpx2) run, compile and step the
debugger against `s2mc serve` on loopback for a fixed time; prints the latency of each kind of
call (p50, p95, max), the answers by status, and fails when the server answered any 5xx or a
connection broke (docs/benchmarks.md, docs/server.md).

    python bench/bench_serve.py --students 50 --seconds 60          # starts its own server
    python bench/bench_serve.py --url http://127.0.0.1:8000          # or a running one
    python bench/bench_serve.py --fairness --seconds 40               # 45 students, then 45 + 5 abusers
    python bench/bench_serve.py --fairness --seconds 40 --rounds 3    # ... three pairs in turn

A student's loop, with a think time between calls (people read what they got): load an example,
run it on 1-4 cores, compile it, open a debugging session, step it 5 times, close it. A "busy, try
again" answer (429) is a correct answer under load: it is counted and retried after Retry-After.

--fairness: a graded class (`s2mc serve --class`, each simulated student with their own roster token,
so the per-student limits apply), twice on a fresh server: 45 students working normally, then the same
45 beside 5 who resubmit, with no pause, an endless program or a sweep of fib.rz over 16 core counts.
It prints the normal students' latencies of both runs and the ratio of their p95; the goal is at most
2 (docs/server.md, "Limits"). On a machine shared with other work one pair is noisy: --rounds N runs
N pairs in turn and takes the ratio of the p95 of all their answers.
"""
from __future__ import annotations

import argparse
import asyncio
import csv
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx2

PROGRAMS = ("parallel_sum.s", "spin_lock.s", "barrier.s", "sum.rz", "fib.rz", "spinlock.rz")
#: What an abusive student resubmits: a program that never ends (it runs to the cycle cap or the wall
#: time), and a sweep as large as the server takes of its longest example.
ENDLESS = ".code 0\n:loop\n  jmp loop\n"
NORMAL, ABUSERS = 45, 5


class Student:
    def __init__(self, client: httpx2.AsyncClient, examples: dict, stats, statuses, errors, think: float, rng,
                 token: str | None = None):
        self.c, self.examples, self.stats, self.statuses, self.errors = client, examples, stats, statuses, errors
        self.think, self.rng = think, rng
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def call(self, kind: str, method: str, path: str, body=None):
        while True:
            t0 = time.perf_counter()
            try:
                r = await self.c.request(method, path, json=body, headers=self.headers)
            except httpx2.HTTPError as exc:
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

    async def abuse(self, until: float):
        """No pause: an endless program, then the largest sweep, again and again."""
        sweep = {"source": self.examples["fib.rz"], "language": "rz", "cores": list(range(1, 17))}
        while time.monotonic() < until:
            await self.call("endless", "POST", "/api/run", {"source": ENDLESS, "language": "asm"})
            await self.call("sweep", "POST", "/api/sweep", sweep)


def _cpus(text: str) -> set[int]:
    """A list of CPU numbers, '0,1' or '0-3'."""
    cpus = set()
    try:
        for part in text.split(","):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of CPU numbers such as 0,1 or 0-3") from None
    return cpus


def _machine(args) -> str:
    """The CPUs of this run, as its header says them."""
    if not args.server_cpus:
        return f"{os.cpu_count()} CPUs"
    return (f"{os.cpu_count()} CPUs (the server on CPUs {','.join(map(str, sorted(args.server_cpus)))}, "
            "the students on the others)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def lesson(url: str, students: int, seconds: float, think: float, seed: int, tokens=(), abusers: int = 0):
    """`students` working normally and `abusers` more (their calls are the kinds "endless" and
    "sweep"), each with the next of `tokens` when given."""
    stats, statuses, errors = defaultdict(list), Counter(), {}
    everyone = students + abusers
    # idle connections are dropped here before the server's keep-alive (uvicorn's 5 s) closes them:
    # with both at 5 s, a request now and then went out on a connection the server was closing (a
    # ReadError, as a browser would see and resend)
    limits = httpx2.Limits(max_connections=everyone + 10, max_keepalive_connections=everyone + 10,
                          keepalive_expiry=2.0)
    tokens = list(tokens) or [None] * everyone
    async with httpx2.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        examples = {e["name"]: e["source"] for e in (await client.get(
            "/api/examples", headers={"Authorization": f"Bearer {tokens[0]}"} if tokens[0] else {})).json()}
        until = time.monotonic() + seconds
        rngs = [random.Random(seed + i) for i in range(everyone)]
        await asyncio.gather(
            *(Student(client, examples, stats, statuses, errors, think, rngs[i], tokens[i]).lesson(until)
              for i in range(students)),
            *(Student(client, examples, stats, statuses, errors, think, rngs[i], tokens[i]).abuse(until)
              for i in range(students, everyone)))
    return stats, statuses, errors


def _pct(xs: list[float], q: float) -> float:
    return statistics.quantiles(xs, n=100, method="inclusive")[q - 1] if len(xs) > 1 else xs[0]


def _start(args, extra: list[str], clients: int):
    """`s2mc serve` on a free loopback port with these options; (the process, its URL)."""
    port = _free_port()
    s2mc = str(Path(sys.executable).with_name("s2mc"))
    # every simulated student comes from 127.0.0.1: one address, so its cap is the class's
    cpus = args.server_cpus
    server = subprocess.Popen([s2mc, "serve", "--port", str(port), "--workers", str(args.workers),
                               "--connections-per-address", str(clients + 10), *extra],
                              start_new_session=True, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx2.get(url + "/", timeout=1)
            break
        except httpx2.TransportError:
            time.sleep(0.1)
    return server, url


def _stop(server) -> None:
    server.send_signal(signal.SIGINT)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)


def _table(stats, kinds) -> list[float]:
    """Prints p50, p95 and max of each kind of call; all the latencies of those kinds."""
    every = [x for k in kinds for x in stats.get(k, ())]
    print(f"{'call':<12}{'answers':>8}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}")
    for kind in kinds:
        xs = stats.get(kind)
        if xs:
            print(f"{kind:<12}{len(xs):>8}{1000 * _pct(xs, 50):>9.0f}{1000 * _pct(xs, 95):>9.0f}{1000 * max(xs):>9.0f}")
    if every:
        print(f"{'all':<12}{len(every):>8}{1000 * _pct(every, 50):>9.0f}{1000 * _pct(every, 95):>9.0f}"
              f"{1000 * max(every):>9.0f}")
    return every


def _failures(statuses) -> int:
    return sum(v for k, v in statuses.items() if not k.split()[-1].isdigit() or k.split()[-1].startswith("5"))


KINDS = ("run", "compile", "debug-open", "debug-step", "debug-close")


def fairness(args) -> int:
    """The normal students' p95 alone and beside the abusers, each run on a fresh `s2mc serve --class`;
    with --rounds N, N such pairs in turn (so that both see the machine's load alike), the ratio
    taken of the p95 of all the rounds' answers."""
    every = {0: [], ABUSERS: []}
    failed = 0
    with tempfile.TemporaryDirectory(prefix="s2mc-bench-") as folder:
        roster = Path(folder) / "roster.csv"
        roster.write_text("id\n" + "".join(f"s{i:02d}\n" for i in range(NORMAL + ABUSERS)), encoding="utf-8")
        for round_ in range(1, args.rounds + 1):
            p95 = {}
            for abusers in (0, ABUSERS):
                server, url = _start(args, ["--class", str(roster)], NORMAL + abusers)
                try:
                    with open(roster.with_name("roster.links.csv"), encoding="utf-8") as f:
                        tokens = [r["token"] for r in csv.DictReader(f) if r["role"] == "student"]
                    t0 = time.monotonic()
                    load = os.getloadavg()[0]
                    stats, statuses, errors = asyncio.run(lesson(url, NORMAL, args.seconds, args.think, args.seed,
                                                                 tokens, abusers))
                    wall = time.monotonic() - t0
                finally:
                    _stop(server)
                print(f"\n{f'round {round_}: ' if args.rounds > 1 else ''}{NORMAL} students working normally" +
                      (f" and {abusers} resubmitting endless programs and 16-point sweeps of fib.rz" if abusers
                       else ", alone") +
                      f": {wall:.0f} s, server --workers {args.workers} --class ({NORMAL + ABUSERS} students), "
                      f"{_machine(args)}, load average (1 min) {load:.1f} at the start")
                latencies = _table(stats, KINDS)
                every[abusers] += latencies
                p95[abusers] = _pct(latencies, 95)
                if abusers:
                    _table(stats, ("endless", "sweep"))
                print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
                for k, text in sorted(errors.items()):
                    print(f"first {k}: {text}")
                failed += _failures(statuses)
            if args.rounds > 1:
                print(f"\nround {round_}: the normal students' p95 {1000 * p95[0]:.0f} ms alone, "
                      f"{1000 * p95[ABUSERS]:.0f} ms beside {ABUSERS} abusers: {p95[ABUSERS] / p95[0]:.2f}x")
    alone, beside = _pct(every[0], 95), _pct(every[ABUSERS], 95)
    ratio = beside / alone
    print(f"\nthe normal students' p95{f' over {args.rounds} rounds' if args.rounds > 1 else ''}: "
          f"{1000 * alone:.0f} ms alone ({len(every[0])} answers), {1000 * beside:.0f} ms beside {ABUSERS} abusers "
          f"({len(every[ABUSERS])} answers): {ratio:.2f}x (goal: at most 2x); server errors: {failed}")
    return 1 if failed or ratio > 2 else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--think", type=float, default=1.0, help="mean seconds a student waits between calls")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="the server's --workers")
    ap.add_argument("--server-cpus", type=_cpus, default=None, metavar="LIST",
                    help="run the server on these CPUs (e.g. 0,1) and the simulated students on the others")
    ap.add_argument("--url", help="a running server (default: start one on a free loopback port)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=1,
                    help="--fairness: this many pairs of runs in turn, the ratio of all their answers' p95")
    ap.add_argument("--fairness", action="store_true",
                    help=f"{NORMAL} students alone, then beside {ABUSERS} abusers, with roster tokens")
    args = ap.parse_args()
    if args.server_cpus:
        # the server and its workers on these CPUs, the simulated students on the others: a class
        # server's CPUs of its own, so that its scheduling is seen apart from the clients' load
        mine = os.sched_getaffinity(0)
        if not args.server_cpus < mine:
            ap.error(f"--server-cpus {','.join(map(str, sorted(args.server_cpus)))}: this process may use "
                     f"CPUs {','.join(map(str, sorted(mine)))}, and needs at least one more for the students")
        os.sched_setaffinity(0, mine - args.server_cpus)
    if args.fairness:
        return fairness(args)
    server = None
    url = args.url
    if url is None:
        server, url = _start(args, [], args.students)
    load_before = os.getloadavg()
    try:
        t0 = time.monotonic()
        stats, statuses, errors = asyncio.run(lesson(url, args.students, args.seconds, args.think, args.seed))
        wall = time.monotonic() - t0
    finally:
        if server is not None:
            _stop(server)
    every = [x for xs in stats.values() for x in xs]
    print(f"{args.students} students, {wall:.0f} s on {url}, server --workers {args.workers}, "
          f"{_machine(args)}; {len(every)} answers ({len(every) / wall:.1f}/s)")
    _table(stats, KINDS)
    print("statuses: " + ", ".join(f"{k}: {v}" for k, v in sorted(statuses.items())))
    for k, text in sorted(errors.items()):
        print(f"first {k}: {text}")
    failed = _failures(statuses)
    print(f"server errors (5xx or broken connections): {failed}")
    print(f"load average (1 min) before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f}: the machine's, "
          "other work on it included")
    return 1 if failed or not every else 0


if __name__ == "__main__":
    sys.exit(main())
