"""The replay bus: a core's run as a stream of bus requests, replayed through any arbiter.

    from s2mc.simulator.replay_bus import Bus, replay, streams
    res = machine.run(program, trace=True)             # any run whose paths do not depend on timing
    r = replay(streams(res.trace, cores), Bus("burst", burst=2))
    r["cycles"], r["finish"], r["stalls"]              # what the machine would count on that bus

A program whose path does not depend on the timing (the AES programs: no data-dependent branch, a
static block split) issues the same instructions whatever the bus does, so a traced run gives each
core's stream of (instructions before it, bus access | barrier | halt), and `replay` runs those
streams through another bus under the rules of docs/timing-model.md. It knows the engines' policies
(fifo, fixed, round_robin and burst4 as `Bus("burst", burst=4)`), on which it gives the engines'
counters exactly (tests/test_replay_bus.py), and arbiters and timings the engines lack (reverse,
aging, waiting_first, yield, burst limits, 2x2 trees, a request latch, in-place scans, hand-over
cycles, a pipelined bus, fetches on the bus, blocks taken from a shared counter). It is what scores
the seed 003 fidelity hypotheses (s2mc.experiments.fidelity): the engines run the policies they
implement much faster (bench/bench_replay.py), the replay tries the ones they do not.
"""
from __future__ import annotations

from dataclasses import dataclass

from s2mc.common.errors import S2mcError
from s2mc.simulator.params import DEFAULTS

#: The memory latency: cycles a core waits per data access, and the bus is busy by default.
L = DEFAULTS["mem_latency"]


def streams(trace, cores: int) -> list[list[tuple[int, str]]]:
    """Each core's stream from a run's event log (s2mc.simulator.trace tuples): (non-memory
    instructions issued before it, kind) with kind `m` (a bus access), `s` (a barrier) or `h` (the
    halting trap)."""
    out: list[list[tuple[int, str]]] = [[] for _ in range(cores)]
    gap = [0] * cores
    kinds = {"request": "m", "sync": "s", "halt": "h"}
    for e in trace:
        core, event = e[1], e[3]
        if event == "issue":
            gap[core] += 1
        elif event in kinds:
            out[core].append((gap[core], kinds[event]))
            gap[core] = 0
    return out


@dataclass(frozen=True)
class Bus:
    """A bus to replay: who is granted among the cores waiting when it is free, and its timing.

    policy: fifo (oldest request; ties to the lowest id), fixed (lowest id), round_robin (the core
    after the last one granted first), reverse (highest id), aging (fixed, but a request that has
    waited `age` cycles or more goes first, oldest first), waiting_first (requests made before the
    cycle the bus frees go first, lowest id first; then new ones), yield (fixed, but the core just
    granted goes last), and the candidates for the 2-core cells (each
    defined before it was scored):
    - burst: fixed, but a core that has had `burst` grants in a row (no other core granted in
      between, idle bus or not) goes last (a burst limit; yield is burst 1);
    - tree_rr_fixed / tree_fixed_rr: a two-level tree of arbiters as a 4-port bus is built from
      2-input cells: the leaves arbitrate the pairs (0, 1), (2, 3), ..., the root the leaves; either
      round-robin leaves (the other core of the pair than the one its leaf granted last first) under
      a fixed root (the leaf with the lower ids first), or fixed leaves (the lower id of the pair)
      under a round-robin root (the leaf after the one granted last first);
    - latch: fixed, with a one-deep request latch: a request that is not granted in the cycle it is
      made is latched if the latch is empty (the earliest such request, ties to the lowest id; the
      latch is loaded by arrivals only: a request already waiting when it empties is not); a
      latched request is granted as soon as the bus is free, before any other; the rest by id.
    release: when the cores see the bus free again after an access granted at g. `cycle`: at
    g + hold for every core (a synchronous machine; the engines' rule). The other two are a
    sequential simulator that steps the cores in id order each cycle and updates the bus in place
    (the scan order is then a fixed priority): `early`, the holder frees it in its own step in the
    access's last cycle g + hold - 1, so a higher id, stepped after it, is granted in that cycle
    and a lower one from g + hold; `late`, the holder frees it in its step at g + hold, when it goes
    on (and takes it again at once if it asks), so a lower id, stepped before it, is granted from
    g + hold + 1 and a higher one from g + hold.
    hold: cycles the bus is busy per access (the core still takes L). handover: dead cycles before
    the bus serves another core than the last. fetch: every instruction fetch takes the bus for one
    cycle (a memory instruction's fetch overlaps its access).
    """
    policy: str = "fifo"
    hold: int = L
    handover: int = 0
    age: int = 0
    fetch: bool = False
    burst: int = 0
    release: str = "cycle"

    def rank(self, i: int, req: int, x: int, st: dict):
        """The sort key of core i (requested at req) at grant cycle x; st: the arbiter's state
        (last: the core granted last, n: cores, streak: its grants in a row, leaf_last: per leaf
        of the tree the core its leaf granted last)."""
        p, last, n = self.policy, st["last"], st["n"]
        if p in ("fifo",):
            return (req, i)
        if p in ("fixed", "latch"):            # the latch is served before the ranking (replay)
            return i
        if p == "round_robin":
            return (i - last - 1) % n
        if p == "reverse":
            return -i
        if p == "aging":
            old = x - req >= self.age
            return (not old, req if old else 0, i)
        if p == "waiting_first":
            return (req >= x, i)
        if p == "yield":
            return (i == last, i)
        if p == "burst":
            return (i == last and st["streak"] >= self.burst, i)
        if p == "tree_rr_fixed":
            return (i // 2, i == st["leaf_last"].get(i // 2), i)
        if p == "tree_fixed_rr":
            leaves = (n + 1) // 2
            return ((i // 2 - last // 2 - 1) % leaves, i)
        raise S2mcError(f"unknown bus policy {p!r}")

    def free_for(self, i: int, last: int, bus_free: int) -> int:
        """The first cycle core i may be granted after the access that frees the bus at bus_free."""
        if self.release == "early":
            return bus_free - 1 if last >= 0 and i > last else bus_free
        if self.release == "late":
            return bus_free + 1 if i < last else bus_free
        if self.release != "cycle":
            raise S2mcError(f"unknown bus release {self.release!r}")
        return bus_free + (0 if i == last else self.handover)


def replay(core_streams: list[list[tuple[int, str]]], bus: Bus = Bus(),
           take: tuple[list[tuple[int, str]], int] | None = None) -> dict:
    """Run the cores' streams through `bus` (the rules of docs/timing-model.md otherwise): per core
    the finish cycle, bus wait, data accesses, stalls (bus wait + (L-1) per data access; with
    bus.fetch the fetches' waits too) and barrier wait; the total cycles.

    take = (block, n): a stream item of kind `g` is a bus access that takes the next of n blocks
    from a shared counter; when granted, the core goes on with `block` and another take, or halts
    when none is left (the dynamic split)."""
    n = len(core_streams)
    todo = [list(s) for s in core_streams]
    if bus.fetch:          # every other instruction becomes a one-cycle bus access of its own (its
        # fetch: the instruction issues in the cycle it is granted); a sync or halting trap too
        todo = [[it for g, k in s for it in [(0, "f")] * g + [(0, k if k in "mg" else k.upper())]]
                for s in todo]
    left = take[1] if take else 0
    pos, t = [0] * n, [0] * n
    state, when = ["run"] * n, [0] * n
    finish, wait, data, syncw = [0] * n, [0] * n, [0] * n, [0] * n
    bus_free, last = 0, -1
    st = {"last": -1, "n": n, "streak": 0, "leaf_last": {}}
    latch, latch_open = None, 0        # policy latch: the core in it, the cycle it last emptied

    def advance(i: int) -> None:
        g, k = todo[i][pos[i]]
        pos[i] += 1
        x = t[i] + g
        if k == "s":
            state[i], when[i] = "sync", x
        elif k == "h":
            state[i], finish[i] = "halt", x + 1
        else:              # m: a data access, g: a take, f / S / H: the fetch of an instruction / sync / halt
            state[i], when[i] = k, x

    def earliest(i: int) -> int:
        return max(when[i], bus.free_for(i, last, bus_free))

    for i in range(n):
        advance(i)
    while True:
        live = [i for i in range(n) if state[i] != "halt"]
        if not live:
            break
        if all(state[i] == "sync" for i in live):
            c = max(when[i] for i in live)
            for i in live:
                syncw[i] += c - when[i]
                t[i] = c + 1
                advance(i)
            continue
        rq = [i for i in range(n) if state[i] in ("m", "g", "f", "S", "H")]
        x = min(earliest(i) for i in rq)
        if bus.policy == "latch" and latch is None:     # the first request that arrived (and was
            # not granted) since the latch emptied has been sitting in it
            came = [i for i in rq if latch_open <= when[i] < x]
            latch = min(came, key=lambda i: (when[i], i)) if came else None
        if latch is not None and earliest(latch) <= x:
            w = latch
            latch, latch_open = None, x
        else:
            w = min((i for i in rq if earliest(i) <= x), key=lambda i: bus.rank(i, when[i], x, st))
        kind = state[w]
        wait[w] += x - when[w]
        st["streak"] = st["streak"] + 1 if w == last else 1
        st["leaf_last"][w // 2] = w
        last = st["last"] = w
        if kind in ("f", "S", "H"):      # a fetch: its instruction issues at x, the next at x + 1
            bus_free, t[w] = x + 1, x + 1
            if kind == "S":
                state[w], when[w] = "sync", x
            elif kind == "H":
                state[w], finish[w] = "halt", x + 1
            else:
                advance(w)
            continue
        data[w] += 1
        bus_free, t[w] = x + bus.hold, x + L
        if kind == "g":
            if left:
                left -= 1
                todo[w] += take[0] + [(0, "g")]
            else:
                todo[w].append((0, "h"))
        advance(w)
    stalls = [wait[i] + (L - 1) * data[i] for i in range(n)]
    return {"cycles": max(finish), "finish": finish, "bus_wait": wait, "accesses": data,
            "stalls": stalls, "sync_wait": syncw}


__all__ = ["Bus", "replay", "streams"]
