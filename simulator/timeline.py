"""The timeline of a run: what every core and the bus do in every cycle, made from the
streamed event log (s2mc.simulator.trace) and written as a page, a Perfetto trace or a picture.

    events -> intervals (TimelineBuilder) -> Timeline -> writers (.html, .json, .png, .svg)

A core is in one of six states in each cycle of the run (docs/timeline.md):

    executing   the cycle an instruction issues (a sync or a halting trap too), unless it is a bus access
    bus wait    a memory instruction waits for the grant: cycles t .. g-1 (request at t, grant at g)
    bus hold    it holds the bus: cycles g .. g+L-1 (with caches g .. g+D-1, D the transaction's bus time)
    sync wait   after its sync, until the barrier completes: cycles t+1 .. c
    halted      from its finish cycle to the end of the run
    buffer wait (store buffers, tso and pso) held back by its store buffer: a fence, xchg, sync or
                trap until the buffer is empty, a store until it has room; from the end of the
                previous instruction to the cycle it issues
    miss wait   (a ring or a mesh) a cache miss, from its issue t to the cycle c its access takes
                effect: cycles t .. c (a `done` event carries c - t)

The states partition the cycles, so per core: bus wait = bus_wait_cycles, bus hold = bus_busy_cycles
(less drain_bus_cycles: a drain holds the bus, not the core), sync wait = sync_wait_cycles, buffer
wait = fence_stall_cycles + store_buffer_full_stalls, and they add up to the run's total cycles. The
bus row shows who holds the bus, a store buffer's drain included; with caches it is coloured by the
transaction on it (BusRd, BusRdX, ...: XACT_COLOURS), and a cache hit is `executing` for its H cycles.
With store buffers each core also has its buffer's occupancy over time (entries after each cycle's
issue step, as the worked examples of docs/timing-model.md count them): from the `buffer` events
(+1 at t) and the `drain` and `drain hit` events (-1 from g+1).

A run on a ring or a mesh also has a network view (docs/timeline.md, "The network view"): for each
link, the flits it carried in each bucket of cycles (a heat map, from the `port` events: a grant of
F flits at g makes the link busy in g .. g+F-1), and for each home the cycles it was occupied (from
the `home` events: c .. c+occupancy-1), the hottest home (the most occupied in the window) marked.
At most NETWORK_BUCKETS buckets, of equal width, whatever the run's length.

Memory stays bounded however long the run: the builder keeps intervals (one per instruction, one per
stretch of waiting, holding or halting), only those in the window [from_cycle, to_cycle), and at most
`max_intervals` of them (MAX_INTERVALS). A window with more is aggregated instead: at most `buckets`
(BUCKETS) buckets of equal width, each holding the cycles every core spent in every state.
"""
from __future__ import annotations

import html
import json
import os
import time
from dataclasses import dataclass
from importlib import resources
from typing import NamedTuple

import numpy as np

from s2mc.isa import Program
from s2mc.common import values
from s2mc.common.errors import S2mcError
from s2mc.common.outputs import Output

from .network import PORTS, Topology
from .params import PARAMS
from .trace import KINDS, RECORD, XACTS, Instructions, _Decoder

STATES = ("executing", "bus wait", "bus hold", "sync wait", "halted", "buffer wait", "miss wait")
EXECUTING, BUS_WAIT, BUS_HOLD, SYNC_WAIT, HALTED, BUFFER_WAIT, MISS_WAIT = range(len(STATES))
STATE_COLOURS = ("#6bbf59", "#f4d35e", "#d1495b", "#8e7dbe", "#e2e2e2", "#9edae5", "#e8a0bf")
# Kept beside the states' intervals, in the same columns: a store buffer's occupancy (the entries in
# the wait column) and a drain's bus tenure (the store's pc, address and values).
OCCUPANCY, DRAIN_HOLD = len(STATES), len(STATES) + 1
BUFFER_COLOUR = "#4a6fa5"     # the occupancy rows
# The bus row takes the colour of the core that holds it (a palette that repeats after ten cores),
# with no green, yellow, red, purple or grey, so that a core is never read as a state.
CORE_COLOURS = ("#1f77b4", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#393b79", "#008080", "#b5651d",
                "#222222", "#6baed6")

# With caches the bus row takes the colour of the transaction on it (an uncached trap #3 access: the
# first); the same palette rules as CORE_COLOURS.
XACT_COLOURS = {"": "#222222", "BusRd": "#1f77b4", "BusRdX": "#8c564b", "BusUpgr": "#ff7f0e", "BusUpd": "#17becf",
                "BusRd+BusUpd": "#393b79"}
BUS_XACTS = tuple(XACT_COLOURS)      # what a bus tenure can be, in legend order

MAX_INTERVALS = 100_000   # intervals kept for a window; beyond, the window is aggregated
NETWORK_BUCKETS = 200     # at most this many columns in a network's heat map (an even number)
HEAT_COLOURS = ("#ffffff", "#fdd49e", "#fc8d59", "#d7301f", "#7f0000")   # utilisation 0 .. 1
HOTTEST_COLOUR = "#0050c8"                                              # the hottest home's outline
BUCKETS = 2_000           # buckets of an aggregated window (an even number: two merge into one)
FORMATS = (".html", ".json", ".png", ".svg")


class Interval(NamedTuple):
    """A stretch of cycles [start, end) a core spends in one state for one instruction (pc). Bus
    intervals carry the access: its data address and the word there before and after it."""
    core: int
    start: int
    end: int
    state: int
    pc: int
    wait: int = 0                 # bus wait or sync wait of the instruction, in cycles
    address: int | None = None
    before: int | None = None
    after: int | None = None
    xact: str = ""                # a bus hold with caches: its transaction (BusRd, ...); "" uncached



def check_window(from_cycle: int, to_cycle: int | None, what=("from_cycle", "to_cycle")) -> None:
    """The window's ends (named `what` in messages) are cycle numbers below the largest cycle limit,
    to_cycle (None: the run's end) after from_cycle."""
    top = PARAMS["max_cycles"].max
    values.named(what[0], values.integer, from_cycle, 0, top - 1)
    if to_cycle is not None:
        values.named(what[1], values.integer, to_cycle, 1, top)
    if to_cycle is not None and to_cycle <= from_cycle:
        raise S2mcError(f"{what[1]} {to_cycle} must be greater than {what[0]} {from_cycle}")


def timeline_format(path: str | os.PathLike) -> str:
    """The writer a file name asks for (its suffix), or one error naming the choices."""
    suffix = os.path.splitext(os.fspath(path))[1].lower()
    if suffix not in FORMATS:
        raise S2mcError(f"{os.fspath(path)}: a timeline is written as {', '.join(FORMATS[:-1])} or "
                        f"{FORMATS[-1]}; the file name says which")
    return suffix


@dataclass
class Timeline:
    """The timeline of the window [start, end) of a run of `run_end` cycles: `intervals` (sorted by
    core, then start), or, when the window held more than the cap, `counts` per bucket of `bucket`
    cycles: counts[b][core][state] is the cycles the core spent in the state in bucket b."""
    cores: int
    mem_latency: int
    start: int
    end: int
    run_end: int
    intervals: list[Interval] | None
    bucket: int = 0
    counts: list[list[list[int]]] | None = None
    program: Program | None = None
    title: str = ""
    cache: str = "none"           # the caches' protocol; with one, the bus row shows transactions
    consistency: str = "sc"       # tso, pso: the cores have store buffers of `entries` entries
    entries: int = 0
    # with store buffers: the drains' bus tenures (Interval, state BUS_HOLD) and, per core, the
    # buffer's occupancy as (start, end, entries) runs of one or more entries; aggregated, per
    # bucket and core the entry-cycles and the drains' bus cycles
    drains: list[Interval] | None = None
    buffers: list[list[tuple[int, int, int]]] | None = None
    buffer_counts: list[list[int]] | None = None
    drain_counts: list[list[int]] | None = None
    # a ring or a mesh: its shape ("mesh 2x2"), its links as (router, port, next router), and per
    # bucket of net_bucket cycles from `start` the cycles each link carried a flit and each home was
    # occupied: link_busy[link][bucket], home_busy[home][bucket]
    network: str = ""
    links: list[tuple[int, str, int]] | None = None
    net_bucket: int = 0
    link_busy: list[list[int]] | None = None
    home_busy: list[list[int]] | None = None

    @property
    def cached(self) -> bool:
        return self.cache != "none"

    @property
    def buffered(self) -> bool:
        return self.entries > 0

    @property
    def aggregated(self) -> bool:
        return self.intervals is None

    @property
    def networked(self) -> bool:
        return self.links is not None

    def net_span(self, b: int) -> tuple[int, int]:
        """The cycles [lo, hi) of the network view's bucket b."""
        lo = self.start + b * self.net_bucket
        return lo, min(lo + self.net_bucket, self.end)

    def hottest_home(self) -> int:
        """The home occupied for the most cycles of the window (the lowest-numbered of equals)."""
        if not self.networked:
            raise S2mcError("this timeline has no network view: its machine has a bus (interconnect bus)")
        totals = [sum(row) for row in self.home_busy]
        return totals.index(max(totals))

    def link_name(self, i: int) -> str:
        router, port, to = self.links[i]
        return f"{router} {port} \u2192 {to}"

    def bus(self) -> list[Interval]:
        """Who holds the bus, access by access, in cycle order (the cores' bus-hold intervals and
        the store buffers' drains)."""
        return sorted([iv for iv in self.intervals if iv.state == BUS_HOLD] + (self.drains or []),
                      key=lambda iv: iv.start)

    def occupancy(self, core: int) -> list[int]:
        """The entries in a core's store buffer in every cycle of the window (after its issue step)."""
        if self.buffers is None:
            raise S2mcError("this timeline has no store buffer rows: its machine has none (consistency sc), "
                            "or its window is aggregated (see buffer_counts)")
        out = [0] * (self.end - self.start)
        for s, e, n in self.buffers[core]:
            out[s - self.start:e - self.start] = [n] * (e - s)
        return out

    def runs(self, core: int) -> list[tuple[int, int, str]]:
        """The core's states as (start, end, state name), neighbours in one state merged."""
        out: list[list] = []
        for iv in self.intervals:
            if iv.core != core:
                continue
            if out and out[-1][1] == iv.start and out[-1][2] == iv.state:
                out[-1][1] = iv.end
            else:
                out.append([iv.start, iv.end, iv.state])
        return [(s, e, STATES[k]) for s, e, k in out]

    def bucket_span(self, b: int) -> tuple[int, int]:
        lo = self.start + b * self.bucket
        return lo, min(lo + self.bucket, self.end)

    def totals(self) -> list[list[int]]:
        """Cycles per core per state in the window."""
        tot = [[0] * len(STATES) for _ in range(self.cores)]
        if self.aggregated:
            for per_core in self.counts:
                for c, per_state in enumerate(per_core):
                    for k, n in enumerate(per_state):
                        tot[c][k] += n
        else:
            for iv in self.intervals:
                tot[iv.core][iv.state] += iv.end - iv.start
        return tot


# The interval columns the builder keeps (int64 arrays; address -1: no access; xact: index in XACTS).
_CORE, _START, _END, _STATE, _PC, _WAIT, _ADDRESS, _BEFORE, _AFTER, _XACT = range(10)
(_ISSUE, _REQUEST, _GRANT, _SYNC, _RESUME, _HALT, _HIT, _XGRANT, _STATE_CHANGE, _BUFFER, _FORWARD, _DRAIN,
 _DRAIN_HIT, _DONE, _SEND, _PORT, _HOME) = range(len(KINDS))
# A raw record (s2::TraceEvent) as numpy reads it, field for field as trace.RECORD.
_RECORD_DTYPE = np.dtype([("cycle", "=u8"), ("pc", "=u4"), ("core", "=u2"), ("kind", "u1"), ("xact", "u1"),
                          ("wait", "=u8"), ("address", "=u4"), ("before", "=i4"), ("after", "=i4"),
                          ("span", "=u4")])
assert _RECORD_DTYPE.itemsize == RECORD.size


class TimelineBuilder:
    """Turns events (in log order, in any number of batches) into a Timeline with bounded memory.

    Every interval but a halt, and a wait cut short by the end of the run, follows from one event
    (a grant carries its wait, a resume the barrier's), so a batch becomes intervals column-wise."""

    def __init__(self, cores: int, mem_latency: int, from_cycle: int = 0, to_cycle: int | None = None,
                 max_intervals: int = MAX_INTERVALS, buckets: int = BUCKETS, hit_latency: int = 1,
                 store_buffer_entries: int = 0, interconnect: str = "bus"):
        """hit_latency: H, the cycles a cache hit takes (runs with caches); store_buffer_entries:
        the buffers' size (tso, pso; 0: none); interconnect: ring or mesh for the network view."""
        check_window(from_cycle, to_cycle)
        self._topo = Topology(interconnect, cores) if interconnect != "bus" else None
        if self._topo is not None:
            self._links = self._topo.links()
            self._link_of = np.full(self._topo.routers * len(PORTS), -1, dtype=np.int64)   # (router, port) -> link
            for i, (r, port) in enumerate(self._links):
                self._link_of[r * len(PORTS) + PORTS.index(port)] = i
            self._net = np.zeros((NETWORK_BUCKETS, len(self._links) + cores), dtype=np.int64)   # links, then homes
            self._net_width = 1
            self._net_pending = np.zeros((2, 0), dtype=np.int64)   # (cycle, row) maybe past the run's end
        self.hit_latency = hit_latency
        self.entries = store_buffer_entries
        self._front = np.zeros(cores, dtype=np.int64)    # where each core's last interval ended
        self._level = np.zeros(cores, dtype=np.int64)    # its buffer's entries ...
        self._since = np.zeros(cores, dtype=np.int64)    # ... since this cycle
        self._pending = np.zeros((3, 0), dtype=np.int64)  # occupancy changes after the last batch's cycle
        if buckets < 2 or buckets % 2:
            raise ValueError("buckets must be an even number of at least 2")
        self.cores, self.latency = cores, mem_latency
        self.lo, self.hi = from_cycle, to_cycle
        self.max_intervals, self.buckets = max_intervals, buckets
        self._request: list[tuple | None] = [None] * cores  # (cycle, pc): waiting for a grant
        self._sync: list[tuple | None] = [None] * cores     # (cycle, pc): waiting at the barrier
        self._halt: list[tuple | None] = [None] * cores     # (finish cycle, pc)
        self.end = 0                                        # one past the last cycle seen
        self._kept: list[np.ndarray] | None = []            # interval columns, batch by batch
        self._n = 0
        self._counts: np.ndarray | None = None              # [bucket, core, state]: cycles
        self._width = 0

    # -- events in ------------------------------------------------------------------------------
    def add(self, events) -> None:
        """Event tuples (s2mc.simulator.trace), such as Result.trace or the reference model's log."""
        if not events:
            return
        kind = {k: i for i, k in enumerate(KINDS)}
        xact = {x: i for i, x in enumerate(XACTS)}

        def row(e):
            name = e[3]
            if name.startswith(("request ", "done ")):   # a miss over a network
                what, x = name.split(" ")
                return (e[0], e[1], e[2], kind[what], e[4], *e[5:8], xact[x], 0)
            if name.startswith(("send ", "home ")):      # `send <M> <flits>`, `home <M> <occupancy>`
                what, x, n = name.split(" ")
                return (e[0], e[1], e[2], kind[what], e[4], e[5], 0, 0, xact[x], int(n))
            if name.startswith("port "):                 # `port <port> <M> <flits>`
                _, port, x, n = name.split(" ")
                return (e[0], e[1], e[2], _PORT, e[4], e[5], e[6], e[7], xact[x], int(n) | PORTS.index(port) << 24)
            if name.startswith("grant "):    # a coherence transaction: `grant <T> <D>`
                _, t, span = name.split(" ")
                return (e[0], e[1], e[2], _XGRANT, e[4], *e[5:8], xact[t], int(span))
            if name.startswith("state "):    # a line's state change: no interval of its own
                return (e[0], e[1], e[2], _STATE_CHANGE, e[4], 0, 0, 0, 0, 0)
            if name.startswith("drain B"):   # a drain as a coherence transaction: `drain <T> <D>`
                _, t, span = name.split(" ")
                return (e[0], e[1], e[2], _DRAIN, e[4], *e[5:8], xact[t], int(span))
            if name == "drain hit":
                return (e[0], e[1], e[2], _DRAIN_HIT, e[4], *e[5:8], 0, 0)
            return (e[0], e[1], e[2], kind[name], e[4], *(e[5:8] if len(e) > 5 else (-1, 0, 0)), 0, 0)
        self._add(*np.array([row(e) for e in events], dtype=np.int64).T)

    def add_records(self, raw) -> None:
        """Whole raw records (s2::TraceEvent), as the engines hand them over."""
        r = np.frombuffer(raw, dtype=_RECORD_DTYPE)
        if len(r):
            self._add(*(r[f].astype(np.int64) for f in ("cycle", "core", "pc", "kind", "wait", "address",
                                                        "before", "after", "xact", "span")))

    def _add(self, cycle, core, pc, kind, wait, address, before, after, xact, span) -> None:
        if self._topo is not None:
            # trap #3 over a network reads the coherent memory in its one cycle: no miss to wait for
            kind = np.where((kind == _REQUEST) & (xact == 0), _ISSUE, kind)
            self._track(cycle, core, pc, kind)
            self._network(cycle, core, kind, span)
        else:
            self._track(cycle, core, pc, kind)
        # a bus hold lasts L cycles, or with caches the transaction's own bus time D
        bus_xact = (kind == _XGRANT) | ((kind == _DRAIN) & (span > 0))
        lat = np.where(bus_xact, span, self.latency)
        xact = np.where(bus_xact, xact, 0)     # the field means nothing in other records
        ex = (kind == _ISSUE) | (kind == _SYNC) | (kind == _HALT) | (kind == _BUFFER) | (kind == _FORWARD)
        hit = kind == _HIT
        gr = (kind == _GRANT) | (kind == _XGRANT)
        gw = gr & (wait > 0)
        rs = (kind == _RESUME) & (wait > 0)
        dn = kind == _DONE
        none = lambda m: np.full(int(m.sum()), -1, dtype=np.int64)   # noqa: E731
        zero = lambda m: np.zeros(int(m.sum()), dtype=np.int64)      # noqa: E731
        state = lambda m, k: np.full(int(m.sum()), k, dtype=np.int64)   # noqa: E731
        # The pc of a sync is the one before the pc its resume names (sync only advances the pc).
        cols = [np.concatenate(parts) for parts in zip(
            (core[ex], cycle[ex], cycle[ex] + 1, state(ex, EXECUTING), pc[ex], zero(ex), none(ex), zero(ex), zero(ex),
             zero(ex)),
            (core[hit], cycle[hit], cycle[hit] + self.hit_latency, state(hit, EXECUTING), pc[hit], zero(hit),
             address[hit], before[hit], after[hit], zero(hit)),
            (core[gw], cycle[gw] - wait[gw], cycle[gw], state(gw, BUS_WAIT), pc[gw], wait[gw], address[gw],
             before[gw], after[gw], zero(gw)),
            (core[gr], cycle[gr], cycle[gr] + lat[gr], state(gr, BUS_HOLD), pc[gr], wait[gr], address[gr], before[gr],
             after[gr], xact[gr]),
            (core[rs], cycle[rs] - wait[rs], cycle[rs], state(rs, SYNC_WAIT), pc[rs] - 1, wait[rs], none(rs),
             zero(rs), zero(rs), zero(rs)),
            (core[dn], cycle[dn] - wait[dn], cycle[dn] + 1, state(dn, MISS_WAIT), pc[dn], wait[dn], address[dn],
             before[dn], after[dn], zero(dn)))]
        iv = np.stack(cols)
        if self.entries:
            dr = kind == _DRAIN
            drains = np.stack([core[dr], cycle[dr], cycle[dr] + lat[dr], state(dr, DRAIN_HOLD), pc[dr], wait[dr],
                               address[dr], before[dr], after[dr], xact[dr]])
            iv = np.concatenate([iv, self._held(iv), drains, self._occupancy(cycle, core, kind)], axis=1)
        self._keep(iv)

    def _held(self, iv: np.ndarray) -> np.ndarray:
        """The buffer waits: every gap between a core's intervals (its instruction was held back
        from the end of the one before until it issued)."""
        iv = iv[:, np.lexsort((iv[_START], iv[_CORE]))]
        core, s, e = iv[_CORE], iv[_START], iv[_END]
        prev = np.empty_like(e)
        first = np.ones(len(core), dtype=bool)
        first[1:] = core[1:] != core[:-1]
        prev[1:] = e[:-1]
        prev[first] = self._front[core[first]]
        np.maximum.at(self._front, core, e)
        g = s > prev
        n = int(g.sum())
        return np.stack([core[g], prev[g], s[g], np.full(n, BUFFER_WAIT), iv[_PC][g], s[g] - prev[g],
                         np.full(n, -1), np.zeros(n), np.zeros(n), np.zeros(n)]).astype(np.int64)

    def _occupancy(self, cycle, core, kind, last: bool = False) -> np.ndarray:
        """Runs of one occupancy per core (OCCUPANCY intervals, the entries in the wait column) from
        the changes: a store enters at t (+1), a drain leaves after g (-1 from g+1). A change after
        the batch's last cycle waits for the next batch (or `last`), where earlier ones may come."""
        m = (kind == _BUFFER) | (kind == _DRAIN) | (kind == _DRAIN_HIT)
        buf = kind[m] == _BUFFER
        changes = np.concatenate([self._pending, np.stack([core[m], np.where(buf, cycle[m], cycle[m] + 1),
                                                           np.where(buf, 1, -1)])], axis=1)
        top = np.iinfo(np.int64).max if last else (int(cycle.max()) if len(cycle) else -1)
        later = changes[1] > top
        self._pending, changes = changes[:, later], changes[:, ~later]
        changes = changes[:, np.lexsort((changes[1], changes[0]))]
        out = []
        for c in np.unique(changes[0]):
            _, at, delta = changes[:, changes[0] == c]
            levels = self._level[c] + np.cumsum(delta)
            starts = np.concatenate([[self._since[c]], at])
            n = np.concatenate([[self._level[c]], levels])[:-1]
            keep = (starts[1:] > starts[:-1]) & (n > 0)
            k = int(keep.sum())
            out.append(np.stack([np.full(k, c), starts[:-1][keep], starts[1:][keep], np.full(k, OCCUPANCY),
                                 np.zeros(k), n[keep], np.full(k, -1), np.zeros(k), np.zeros(k), np.zeros(k)]))
            self._since[c], self._level[c] = at[-1], levels[-1]
        return np.concatenate(out, axis=1).astype(np.int64) if out else np.zeros((10, 0), dtype=np.int64)

    def _track(self, cycle, core, pc, kind) -> None:
        """What each core still waits for at the end of the batch: a grant, a barrier; its halt."""
        at = np.arange(len(kind))

        def last(k) -> np.ndarray:
            out = np.full(self.cores, -1, dtype=np.int64)
            m = kind == k
            np.maximum.at(out, core[m], at[m])
            return out

        req, sync, resume, halt = (last(k) for k in (_REQUEST, _SYNC, _RESUME, _HALT))
        grant = np.maximum(np.maximum(last(_GRANT), last(_XGRANT)), last(_DONE))
        for c in np.nonzero((req >= 0) | (grant >= 0) | (sync >= 0) | (resume >= 0) | (halt >= 0))[0]:
            if req[c] > grant[c]:
                self._request[c] = (int(cycle[req[c]]), int(pc[req[c]]))
            elif grant[c] >= 0:
                self._request[c] = None
            if sync[c] > resume[c]:
                self._sync[c] = (int(cycle[sync[c]]), int(pc[sync[c]]))
            elif resume[c] >= 0:
                self._sync[c] = None
            if halt[c] >= 0:
                self._halt[c] = (int(cycle[halt[c]]) + 1, int(pc[halt[c]]))

    def _run_end(self) -> int | None:
        """The run's end once every core has halted (the log's later events are the network's
        write-backs after it), else None."""
        if any(h is None for h in self._halt):
            return None
        return max(t for t, _ in self._halt)

    def _network(self, cycle, core, kind, span) -> None:
        """The cycles each link carried a flit (a `port` grant of F flits at g: g .. g+F-1) and each
        home was occupied (a `home` event at c: c .. c+occupancy-1), counted per bucket. A cycle past
        the batch's last one may be past the run's end (a home's occupancy, a message's flits): it
        waits until a later batch, or the end, says."""
        pt = kind == _PORT
        link = self._link_of[core[pt] * len(PORTS) + (span[pt] >> 24)]
        on = link >= 0                      # a `local` port ejects into the tile: not a link
        hm = kind == _HOME
        rows = np.concatenate([link[on], len(self._links) + core[hm]])
        starts = np.concatenate([cycle[pt][on], cycle[hm]])
        lens = np.concatenate([(span[pt] & 0xFFFFFF)[on], span[hm]])
        ends = np.cumsum(lens)
        cyc = np.repeat(starts - (ends - lens), lens) + np.arange(int(ends[-1]) if len(ends) else 0)
        cells = np.concatenate([self._net_pending, np.stack([cyc, np.repeat(rows, lens)])], axis=1)
        end = self._run_end()
        if end is None:
            top = int(cycle.max()) if len(cycle) else -1
            later = cells[0] > top
            self._net_pending, cells = cells[:, later], cells[:, ~later]
        else:
            self._net_pending = np.zeros((2, 0), dtype=np.int64)
            cells = cells[:, cells[0] < end]
        self._net_count(cells)

    def _net_count(self, cells: np.ndarray) -> None:
        hi = self.hi if self.hi is not None else np.iinfo(np.int64).max
        cells = cells[:, (cells[0] >= self.lo) & (cells[0] < hi)]
        if not cells.shape[1]:
            return
        at = cells[0] - self.lo
        self._net_reach(int(at.max()) + 1)
        np.add.at(self._net, (at // self._net_width, cells[1]), 1)

    def _net_reach(self, span: int) -> None:
        """Widens the network's buckets until they cover `span` cycles from the window's start: two
        neighbouring buckets become one."""
        while span > NETWORK_BUCKETS * self._net_width:
            half = self._net.reshape(NETWORK_BUCKETS // 2, 2, -1).sum(axis=1)
            self._net = np.concatenate([half, np.zeros_like(half)])
            self._net_width *= 2

    def _keep(self, iv: np.ndarray) -> None:
        """Keeps the part of these intervals (columns) inside the window."""
        if not iv.shape[1]:
            return
        # the run ends with its cores' last cycle: a drain may hold the bus beyond it
        states = iv[_STATE] < len(STATES)
        if states.any():
            self.end = max(self.end, int(iv[_END][states].max()))
        hi = self.hi if self.hi is not None else np.iinfo(np.int64).max
        iv = iv[:, (iv[_END] > self.lo) & (iv[_START] < hi)]
        if not iv.shape[1]:
            return
        iv[_START] = np.maximum(iv[_START], self.lo)
        iv[_END] = np.minimum(iv[_END], hi)
        if self._kept is None:
            self._count(iv)
            return
        self._kept.append(iv)
        self._n += iv.shape[1]
        if self._n > self.max_intervals:
            self._aggregate()

    # -- aggregation ------------------------------------------------------------------------------
    def _aggregate(self) -> None:
        """Too many intervals for the window: from now on, cycles per state per bucket."""
        span = (self.hi if self.hi is not None else self.end) - self.lo
        self._width = max(1, -(-span // self.buckets))
        # the states, then the occupancy's entry-cycles and the drains' bus cycles
        per = DRAIN_HOLD + 1 if self.entries else len(STATES)
        self._counts = np.zeros((self.buckets, self.cores, per), dtype=np.int64)
        kept, self._kept = self._kept, None
        self._count(np.concatenate(kept, axis=1))

    def _count(self, iv: np.ndarray) -> None:
        lo, n = self.lo, self.buckets
        while int(iv[_END].max()) - lo > n * self._width:
            # Two neighbouring buckets become one, so that the window can grow (it has no end yet).
            half = self._counts.reshape(n // 2, 2, *self._counts.shape[1:]).sum(axis=1)
            self._counts = np.concatenate([half, np.zeros_like(half)])
            self._width *= 2
        w, shape = self._width, self._counts.shape
        s, e, core, k = iv[_START], iv[_END], iv[_CORE], iv[_STATE]
        b0, b1 = (s - lo) // w, (e - 1 - lo) // w
        per = shape[2]
        at = core * per + k                          # (core, state) within a bucket
        cells = self.cores * per
        x = np.where(k == OCCUPANCY, iv[_WAIT], 1)   # an occupancy counts entry-cycles
        add = lambda b, v: np.bincount(b * cells + at, weights=v * x, minlength=self._counts.size)   # noqa: E731
        one = b0 == b1
        total = add(b0, np.where(one, e - s, lo + (b0 + 1) * w - s))     # inside b0, or its part of b0
        total += add(b1, np.where(one, 0, e - (lo + b1 * w)))              # the part in b1
        mid = b1 > b0 + 1
        if mid.any():   # whole buckets b0+1 .. b1-1: a running sum of +w at b0+1 and -w at b1
            steps = np.zeros(self._counts.size + cells)
            np.add.at(steps, (b0[mid] + 1) * cells + at[mid], w * x[mid])
            np.add.at(steps, b1[mid] * cells + at[mid], -w * x[mid])
            total += np.cumsum(steps.reshape(n + 1, cells), axis=0)[:n].ravel()
        self._counts += np.rint(total).astype(np.int64).reshape(shape)

    # -- the end ----------------------------------------------------------------------------------
    def finish(self, program: Program | None = None, title: str = "", cache: str = "none",
               consistency: str = "sc") -> Timeline:
        """The timeline, once every event is in. A core still waiting when the run stopped (a
        simulated fault) waits to the end; a halted core is halted from its finish cycle."""
        if self.entries:
            empty = np.zeros(0, dtype=np.int64)
            self._keep(self._occupancy(empty, empty, empty, last=True))
        end = self.end
        rest = [(core, int(self._since[core]), end, OCCUPANCY, 0, int(self._level[core]), -1, 0, 0, 0)
                for core in range(self.cores) if self._level[core] > 0]     # left in the buffer by a fault
        for core in range(self.cores):
            if self._request[core] is not None:     # a bus request, or a miss over a network
                t, pc = self._request[core]
                rest.append((core, t, end, BUS_WAIT if self._topo is None else MISS_WAIT, pc, end - t, -1, 0, 0, 0))
            if self._sync[core] is not None:
                t, pc = self._sync[core]
                rest.append((core, t + 1, end, SYNC_WAIT, pc, end - t - 1, -1, 0, 0, 0))
            if self._halt[core] is not None:
                t, pc = self._halt[core]
                rest.append((core, t, end, HALTED, pc, 0, -1, 0, 0, 0))
        rest = [r for r in rest if r[2] > r[1]]
        if rest:
            self._keep(np.array(rest, dtype=np.int64).T.copy())
        hi = end if self.hi is None else min(self.hi, end)
        if self.lo >= hi:
            raise S2mcError(f"the timeline window starts at cycle {self.lo}, but the run has only {end} cycles")
        tl = Timeline(self.cores, self.latency, self.lo, hi, end, None, program=program, title=title, cache=cache,
                      consistency=consistency, entries=self.entries)
        if self._topo is not None:
            cells, self._net_pending = self._net_pending, np.zeros((2, 0), dtype=np.int64)
            self._net_count(cells[:, cells[0] < end])
            self._net_reach(hi - self.lo)      # a quiet stretch at the end needs buckets too
            t, n = self._topo, len(self._links)
            used = -(-(hi - self.lo) // self._net_width)
            tl.network = t.name
            tl.links = [(r, p, t.next_router(r, p)) for r, p in self._links]
            tl.net_bucket = self._net_width
            tl.link_busy = self._net[:used, :n].T.tolist()
            tl.home_busy = self._net[:used, n:].T.tolist()
        if self._kept is not None:
            iv = np.concatenate(self._kept, axis=1) if self._kept else np.zeros((10, 0), dtype=np.int64)
            iv = iv[:, np.lexsort((iv[_START], iv[_CORE]))]
            every = [Interval(c, s, e, k, pc, w, None if a < 0 else a, None if a < 0 else b,
                              None if a < 0 else f, XACTS[x])
                     for c, s, e, k, pc, w, a, b, f, x in zip(*iv.tolist())]
            tl.intervals = [v for v in every if v.state < len(STATES)]
            if self.entries:
                tl.drains = [v._replace(state=BUS_HOLD, end=min(v.end, hi)) for v in every if v.state == DRAIN_HOLD]
                tl.buffers = [[] for _ in range(self.cores)]
                for v in every:
                    if v.state == OCCUPANCY:
                        tl.buffers[v.core].append((v.start, v.end, v.wait))
        else:
            tl.bucket = self._width
            used = -(-(hi - self.lo) // self._width)
            tl.counts = self._counts[:used, :, :len(STATES)].tolist()
            if self.entries:
                tl.buffer_counts = self._counts[:used, :, OCCUPANCY].tolist()
                tl.drain_counts = self._counts[:used, :, DRAIN_HOLD].tolist()
        return tl


def timeline_of(events, cores: int, mem_latency: int, from_cycle: int = 0, to_cycle: int | None = None,
                program: Program | None = None, cache: str = "none", consistency: str = "sc",
                **limits) -> Timeline:
    """The timeline of a whole list of events (Result.trace, the reference model's log); limits:
    TimelineBuilder's (store_buffer_entries with tso or pso, interconnect ring or mesh)."""
    b = TimelineBuilder(cores, mem_latency, from_cycle, to_cycle, **limits)
    b.add(events)
    return b.finish(program, cache=cache, consistency=consistency)


class TimelineSink:
    """A trace sink (s2mc.simulator.trace) that builds the timeline as the run goes and, when the
    run ends (a simulated fault included: the timeline up to it), writes it to `path` by the output
    rules of s2mc.common.outputs; `timeline` holds it afterwards."""

    def __init__(self, program: Program, cores: int, mem_latency: int, path: str | os.PathLike | None = None,
                 from_cycle: int = 0, to_cycle: int | None = None, title: str = "", cache: str = "none",
                 hit_latency: int = 1, consistency: str = "sc", store_buffer_entries: int = 0,
                 interconnect: str = "bus"):
        self.path = os.fspath(path) if path is not None else None
        self._format = timeline_format(path) if path is not None else None
        self._out = Output(path, "wb", what="timeline") if path is not None else None   # checks the path now
        self._program, self._title = program, title
        self._decode = _Decoder()
        self._build = TimelineBuilder(cores, mem_latency, from_cycle, to_cycle, hit_latency=hit_latency,
                                      store_buffer_entries=store_buffer_entries if consistency != "sc" else 0,
                                      interconnect=interconnect)
        self._cache, self._consistency = cache, consistency
        self.timeline: Timeline | None = None
        self.seconds = 0.0    # host time spent building the timeline during the run (not simulating)

    def __call__(self, chunk: bytes) -> None:
        t0 = time.perf_counter()
        self._build.add_records(self._decode.whole(chunk))
        self.seconds += time.perf_counter() - t0

    def close(self, keep: bool) -> None:
        if not keep:
            return
        self._decode.check_done()
        self.timeline = self._build.finish(self._program, self._title, self._cache, self._consistency)
        if self._out is not None:
            write_timeline(self.timeline, self._out, self._format)


# -- writers ----------------------------------------------------------------------------------------

def write_timeline(tl: Timeline, path: str | os.PathLike | Output, fmt: str | None = None) -> None:
    """Write the timeline as .html, .json, .png or .svg (by `fmt`, else the file name)."""
    out = path if isinstance(path, Output) else Output(path, "wb", what="timeline")
    fmt = fmt or timeline_format(out.path)
    f = out.open()
    try:
        if fmt in (".png", ".svg"):
            _figure(tl).savefig(f, format=fmt[1:], bbox_inches="tight", dpi=110)
        else:
            f.write((to_html(tl) if fmt == ".html" else json.dumps(to_trace_events(tl))).encode())
    except BaseException:
        out.discard()
        raise
    out.commit()


class _Names:
    """Instruction texts and address names, made once per pc and address."""

    def __init__(self, program: Program | None):
        self._ins = Instructions(program) if program is not None else None

    def instruction(self, pc: int) -> str:
        return self._ins.text(pc) if self._ins else f"pc {pc}"

    def bus_class(self, pc: int) -> str:
        return self._ins.bus_class(pc) if self._ins else "none"

    def address(self, a: int) -> str:
        return self._ins.symbols.data(a) if self._ins else str(a)

    def access(self, iv: Interval) -> str:
        if iv.address is None or self._ins is None:
            return ""
        return self._ins.access(iv.pc, iv.address, iv.before, iv.after)


def _title(tl: Timeline) -> str:
    caches = f", {tl.cache.upper()} caches" if tl.cached else ""
    buffers = f", {tl.consistency.upper()} store buffers of {tl.entries}" if tl.buffered else ""
    network = f", {tl.network} with a directory" if tl.networked else ""
    return tl.title or f"{tl.cores} core{'s' if tl.cores > 1 else ''}, L = {tl.mem_latency}{caches}{buffers}{network}"


def _bus_name(tl: Timeline, iv: Interval) -> str:
    """A bus tenure as the bus row names it: the core, and with caches the transaction first."""
    return f"{iv.xact or 'uncached'}, core {iv.core}" if tl.cached else f"core {iv.core}"


def to_trace_events(tl: Timeline) -> dict:
    """The Trace Event Format (Perfetto, chrome://tracing): one thread per core and one for the
    bus, a complete event ("X") per interval, or per bucket when aggregated. One cycle is shown as
    one microsecond."""
    names = _Names(tl.program)
    bus_tid = 0
    ev: list[dict] = [{"ph": "M", "pid": 1, "tid": bus_tid, "name": "process_name", "args": {"name": f"s2mc: {_title(tl)}"}},
                      {"ph": "M", "pid": 1, "tid": bus_tid, "name": "thread_name", "args": {"name": "bus"}},
                      {"ph": "M", "pid": 1, "tid": bus_tid, "name": "thread_sort_index", "args": {"sort_index": 0}}]
    for c in range(tl.cores):
        ev.append({"ph": "M", "pid": 1, "tid": c + 1, "name": "thread_name", "args": {"name": f"core {c}"}})
        ev.append({"ph": "M", "pid": 1, "tid": c + 1, "name": "thread_sort_index", "args": {"sort_index": c + 1}})
    if not tl.aggregated:
        def args(iv: Interval) -> dict:
            a = {"pc": iv.pc, "instruction": names.instruction(iv.pc), "state": STATES[iv.state]}
            if iv.wait:
                a["wait"] = iv.wait
            if iv.address is not None:
                a.update(address=iv.address, symbol=names.address(iv.address), access=names.access(iv))
            return a
        for iv in tl.intervals:
            ev.append({"ph": "X", "pid": 1, "tid": iv.core + 1, "ts": iv.start, "dur": iv.end - iv.start,
                       "name": STATES[iv.state], "cat": "core", "args": args(iv)})
        drains = {id(iv) for iv in tl.drains or ()}
        for iv in tl.bus():
            extra = {"transaction": iv.xact or "uncached"} if tl.cached else {}
            drain = id(iv) in drains
            ev.append({"ph": "X", "pid": 1, "tid": bus_tid, "ts": iv.start, "dur": iv.end - iv.start,
                       "name": ("drain, " if drain else "") + _bus_name(tl, iv), "cat": "drain" if drain else "bus",
                       "args": {"core": iv.core, **extra, **args(iv), **({"state": "drain"} if drain else {})}})
        for c, runs in enumerate(tl.buffers or ()):     # a counter track per core: its buffer's entries
            for i, (s, e, n) in enumerate(runs):
                ev.append({"ph": "C", "pid": 1, "ts": s, "name": f"core {c} store buffer", "args": {"entries": n}})
                if i + 1 == len(runs) or runs[i + 1][0] != e:
                    ev.append({"ph": "C", "pid": 1, "ts": e, "name": f"core {c} store buffer", "args": {"entries": 0}})
    else:
        for b, per_core in enumerate(tl.counts):
            lo, hi = tl.bucket_span(b)
            for c, per_state in enumerate(per_core):
                frac = {STATES[k]: round(n / (hi - lo), 4) for k, n in enumerate(per_state) if n}
                top = max(range(len(STATES)), key=lambda k: per_state[k])
                ev.append({"ph": "X", "pid": 1, "tid": c + 1, "ts": lo, "dur": hi - lo, "name": STATES[top],
                           "cat": "bucket", "args": frac})
            for c in range(tl.cores) if tl.buffered else ():
                ev.append({"ph": "C", "pid": 1, "ts": lo, "name": f"core {c} store buffer",
                           "args": {"entries": round(tl.buffer_counts[b][c] / (hi - lo), 4)}})
            held = [s[BUS_HOLD] + (tl.drain_counts[b][c] if tl.buffered else 0) for c, s in enumerate(per_core)]
            busy = {f"core {c}": round(n / (hi - lo), 4) for c, n in enumerate(held) if n}
            if busy:
                ev.append({"ph": "X", "pid": 1, "tid": bus_tid, "ts": lo, "dur": hi - lo, "name": "busy",
                           "cat": "bucket", "args": {"busy": round(sum(busy.values()), 4), **busy}})
    if tl.networked:   # a counter track per link and per home: the share of each bucket it was busy
        names = [f"link {tl.link_name(i)}" for i in range(len(tl.links))] + [f"home {h}" for h in range(tl.cores)]
        for name, busy in zip(names, tl.link_busy + tl.home_busy):
            for b, n in enumerate(busy):
                lo, hi = tl.net_span(b)
                ev.append({"ph": "C", "pid": 1, "ts": lo, "name": name, "args": {"busy": round(n / (hi - lo), 4)}})
    return {"traceEvents": ev, "displayTimeUnit": "ms",
            "otherData": {"tool": "s2mc", "time_unit": "1 us = 1 cycle", "cores": tl.cores,
                          **({"network": tl.network, "network_bucket_cycles": tl.net_bucket,
                              "hottest_home": tl.hottest_home()} if tl.networked else {}),
                          "mem_latency": tl.mem_latency, "window": [tl.start, tl.end], "run_cycles": tl.run_end,
                          "aggregated": tl.aggregated, "bucket_cycles": tl.bucket,
                          **({"cache": tl.cache} if tl.cached else {}),
                          **({"consistency": tl.consistency, "store_buffer_entries": tl.entries}
                             if tl.buffered else {})}}


def _page_data(tl: Timeline) -> dict:
    """What the page draws, as compact columns."""
    names = _Names(tl.program)
    d = {"title": _title(tl), "cores": tl.cores, "L": tl.mem_latency, "start": tl.start, "end": tl.end,
         "runEnd": tl.run_end, "states": STATES, "colours": STATE_COLOURS, "coreColours": CORE_COLOURS,
         "maxIntervals": MAX_INTERVALS, "cache": tl.cache if tl.cached else "",
         "xacts": BUS_XACTS, "xactColours": [XACT_COLOURS[x] for x in BUS_XACTS],
         "entries": tl.entries, "consistency": tl.consistency, "bufferColour": BUFFER_COLOUR}
    if tl.networked:
        hot = tl.hottest_home()
        d["net"] = {"name": tl.network, "bucket": tl.net_bucket, "links": [tl.link_name(i) for i in range(len(tl.links))],
                    "linkBusy": tl.link_busy, "homeBusy": tl.home_busy, "hottest": hot,
                    "hottestCycles": sum(tl.home_busy[hot]), "heat": HEAT_COLOURS, "hotColour": HOTTEST_COLOUR}
    if tl.aggregated:
        d.update(mode="aggregate", bucket=tl.bucket,
                 counts=[[[tl.counts[b][c][k] for b in range(len(tl.counts))] for k in range(len(STATES))]
                         for c in range(tl.cores)])
        if tl.buffered:   # per core, per bucket: entry-cycles, and the drains' bus cycles
            d.update(bufferCounts=[[row[c] for row in tl.buffer_counts] for c in range(tl.cores)],
                     drainCounts=[[row[c] for row in tl.drain_counts] for c in range(tl.cores)])
        return d
    rows = [{"s": [], "d": [], "k": [], "p": [], "w": [], "a": [], "b": [], "f": []} for _ in range(tl.cores)]
    pcs, addrs = set(), set()
    for iv in tl.intervals:
        r = rows[iv.core]
        r["s"].append(iv.start); r["d"].append(iv.end - iv.start); r["k"].append(iv.state)  # noqa: E702
        r["p"].append(iv.pc); r["w"].append(iv.wait); r["a"].append(iv.address)            # noqa: E702
        r["b"].append(iv.before); r["f"].append(iv.after)                                   # noqa: E702
        pcs.add(iv.pc)
        if iv.address is not None:
            addrs.add(iv.address)
    # a tenure's access: the core row's interval (i), or a store buffer's drain (n: in drains)
    bus = {"s": [], "d": [], "c": [], "i": [], "x": [], "n": []}
    drains = {"p": [], "w": [], "a": [], "b": [], "f": []}
    index = {}
    for c, r in enumerate(rows):
        for i, s in enumerate(r["s"]):
            if r["k"][i] == BUS_HOLD:
                index[(s, c)] = i
    for iv in tl.bus():
        bus["s"].append(iv.start); bus["d"].append(iv.end - iv.start)   # noqa: E702
        bus["c"].append(iv.core); bus["i"].append(index.get((iv.start, iv.core), -1))   # noqa: E702
        bus["x"].append(BUS_XACTS.index(iv.xact))
        bus["n"].append(-1 if bus["i"][-1] >= 0 else len(drains["p"]))
        if bus["i"][-1] < 0:
            for key, value in zip("pwabf", (iv.pc, iv.wait, iv.address, iv.before, iv.after)):
                drains[key].append(value)
            pcs.add(iv.pc)
            addrs.add(iv.address)
    if tl.buffered:
        d["drains"] = drains
        d["buffers"] = [{"s": [s for s, _, _ in runs], "d": [e - s for s, e, _ in runs], "n": [n for _, _, n in runs]}
                        for runs in tl.buffers]
    d.update(mode="detail", rows=rows, bus=bus,
             ins={pc: [names.instruction(pc), names.bus_class(pc)] for pc in sorted(pcs)},
             addr={a: names.address(a) for a in sorted(addrs)})
    return d


def to_html(tl: Timeline, mark: int | None = None) -> str:
    """One self-contained page: the data, the script and the style inline, nothing fetched. `mark`:
    a cycle to draw a line at (the web page's debugger marks its current cycle)."""
    page = resources.files("s2mc.simulator").joinpath("timeline.html").read_text(encoding="utf-8")
    data = json.dumps({**_page_data(tl), "mark": mark}, separators=(",", ":")).replace("</", "<\\/")
    return page.replace("@TITLE@", html.escape(_title(tl))).replace("@DATA@", data)


def _figure(tl: Timeline):
    """A static picture: a row per core under the bus row, with store buffers each followed by its
    buffer's occupancy; over a ring or a mesh no bus row, and under the cores the network's heat
    maps (_network_axes) (matplotlib, no pyplot state)."""
    from matplotlib.figure import Figure
    from matplotlib.patches import Patch

    per = 2 if tl.buffered else 1
    bus_row = 0 if tl.networked else 1
    rows = tl.cores * per + bus_row
    if tl.networked:
        heights = [0.4 + 0.32 * rows, *_net_inches(len(tl.links), tl.cores)]
        fig = Figure(figsize=(12, sum(heights) + 1.2))
        grid = fig.add_gridspec(3, 1, height_ratios=heights, hspace=0.9 / sum(heights) * 3)
        ax = fig.add_subplot(grid[0])
    else:
        fig = Figure(figsize=(12, 0.4 + 0.32 * rows))
        ax = fig.add_subplot()
    h = 0.8
    y = lambda row: rows - 1 - row - h / 2   # noqa: E731 - the bus row (0) on top
    row_of = lambda c: bus_row + c * per     # noqa: E731 - core c's row; its buffer's is the next
    if not tl.aggregated:
        for c in range(tl.cores):
            for k in range(len(STATES)):
                spans = [(iv.start, iv.end - iv.start) for iv in tl.intervals if iv.core == c and iv.state == k]
                if spans:
                    ax.broken_barh(spans, (y(row_of(c)), h), facecolors=STATE_COLOURS[k], linewidth=0)
            for n in sorted({n for _, _, n in tl.buffers[c]}) if tl.buffered else ():   # a bar as high as its entries
                ax.broken_barh([(s, e - s) for s, e, m in tl.buffers[c] if m == n],
                               (y(row_of(c) + 1), h * n / tl.entries), facecolors=BUFFER_COLOUR, linewidth=0)
        bus = tl.bus()
        # White edges part the boxes while they are wide; with many narrow boxes (16 cores) the edges
        # would cover the fill and the busy bus would look empty, so then there are none.
        edges = dict(edgecolor="white", linewidth=0.3) if len(bus) <= 60 else dict(linewidth=0, antialiased=False)
        if tl.cached:    # coloured by transaction, the owner's number inside
            for x in BUS_XACTS:
                spans = [(iv.start, iv.end - iv.start) for iv in bus if iv.xact == x]
                if spans:
                    ax.broken_barh(spans, (y(0), h), facecolors=XACT_COLOURS[x], **edges)
        for c in sorted({iv.core for iv in bus}) if not tl.cached else ():
            ax.broken_barh([(iv.start, iv.end - iv.start) for iv in bus if iv.core == c], (y(0), h),
                           facecolors=CORE_COLOURS[c % len(CORE_COLOURS)], **edges)
        if len(bus) <= 60:   # the owner's number in each box, while they are wide enough to read
            for iv in bus:
                ax.text((iv.start + iv.end) / 2, y(0) + h / 2, str(iv.core), ha="center", va="center",
                        fontsize=7, color="white")
    else:
        edges = [tl.bucket_span(b)[0] for b in range(len(tl.counts))] + [tl.end]
        widths = [edges[i + 1] - edges[i] for i in range(len(tl.counts))]
        for c in range(tl.cores):
            if tl.buffered:    # the mean entries of each bucket
                low = y(row_of(c) + 1)
                ax.stairs([low + h * tl.buffer_counts[i][c] / widths[i] / tl.entries for i in range(len(widths))],
                          edges, baseline=low, fill=True, color=BUFFER_COLOUR, linewidth=0)
            base = [y(row_of(c))] * len(widths)
            for k in range(len(STATES)):
                top = [b + h * tl.counts[i][c][k] / widths[i] for i, b in enumerate(base)]
                ax.stairs(top, edges, baseline=base, fill=True, color=STATE_COLOURS[k], linewidth=0)
                base = top
        base = [y(0)] * len(widths)
        for c in range(tl.cores) if bus_row else ():   # its own accesses and its store buffer's drains
            top = [b + h * (tl.counts[i][c][BUS_HOLD] + (tl.drain_counts[i][c] if tl.buffered else 0)) / widths[i]
                   for i, b in enumerate(base)]
            # not antialiased: sixteen thin bands, each blended with white at its edges, read as an empty row
            ax.stairs(top, edges, baseline=base, fill=True, color=CORE_COLOURS[c % len(CORE_COLOURS)], linewidth=0,
                      antialiased=False)
            base = top
    names = [name for c in range(tl.cores) for name in (f"core {c}", f"core {c} buffer")[:per]]
    ax.set_yticks([rows - 1 - r for r in range(rows)], ["bus"][:bus_row] + names)
    ax.set_ylim(-0.6, rows - 0.4)
    ax.set_xlim(tl.start, tl.end)
    ax.set_xlabel("cycle")
    ax.grid(axis="x", alpha=0.3)
    by_xact = tl.cached and not tl.aggregated
    how = (f"aggregated: each bar a bucket of {tl.bucket} cycles, its height the share of each state"
           if tl.aggregated else "one box per instruction" + ("" if not bus_row else "; the bus row in the colour of the "
           + ("transaction on it, the owner's number inside" if by_xact else "core that holds it")))
    ax.set_title(f"s2mc timeline: {_title(tl)}, cycles {tl.start}..{tl.end - 1} of {tl.run_end} ({how})", fontsize=9)
    # The key: the core states, and under it what the bus row's colours say: whose it is (repeating
    # after ten cores), or with caches the transaction on it (those that occur)
    key_ax = _network_axes(fig, grid, ax, tl) if tl.networked else ax
    inch = 1 / key_ax.get_position().height / fig.get_figheight()   # one inch of the figure, in axes fractions
    # a bus machine's states, or a network's (its misses wait for messages, not for a bus)
    shown = [k for k, s in enumerate(STATES) if (not s.startswith("bus") and (s != "buffer wait" or tl.buffered)
                                                 if tl.networked else s != "miss wait")]
    keys = [Patch(color=STATE_COLOURS[k], label=STATES[k]) for k in shown]
    if tl.buffered:
        keys.append(Patch(color=BUFFER_COLOUR, label=f"store buffer entries (the bar's height, of {tl.entries})"))
    states = key_ax.legend(handles=keys, loc="upper center", bbox_to_anchor=(0.5, -0.6 * inch), ncol=len(keys),
                           frameon=False,
                           fontsize=8, title="core states", title_fontsize=8)
    if not bus_row:
        return fig
    key_ax.add_artist(states)
    if by_xact:
        seen = {iv.xact for iv in tl.bus()}
        key = [Patch(color=XACT_COLOURS[x], label=x or "uncached") for x in BUS_XACTS if x in seen]
        title = "the bus row: the transaction on it"
    else:
        key = [Patch(color=CORE_COLOURS[c], label=f"core {c}" + (f", {c + len(CORE_COLOURS)}, ..." if tl.cores >
                                                                 c + len(CORE_COLOURS) else ""))
               for c in range(min(tl.cores, len(CORE_COLOURS)))]
        title = "the bus row: held by"
    ax.legend(handles=key, loc="upper center", bbox_to_anchor=(0.5, -1.1 * inch), ncol=max(len(key), 1),
              frameon=False, fontsize=8, title=title, title_fontsize=8)
    return fig


def _net_inches(links: int, homes: int) -> tuple[float, float]:
    """The heights of the heat maps of the links and of the homes, in inches."""
    return 0.3 + 0.11 * links, 0.3 + 0.11 * homes


def _network_axes(fig, grid, ax, tl: Timeline):
    """The network's heat maps under the cores: the links' share of each bucket's cycles carrying a
    flit, the homes' share occupied, the hottest home outlined and named. Returns the last axes."""
    import numpy as np
    from matplotlib.colors import LinearSegmentedColormap
    from matplotlib.patches import Rectangle

    cmap = LinearSegmentedColormap.from_list("s2mc-heat", HEAT_COLOURS)
    spans = [tl.net_span(b) for b in range(len(tl.home_busy[0]))]
    widths = np.array([hi - lo for lo, hi in spans], dtype=float)
    edges = [lo for lo, _ in spans] + [tl.end]
    hot = tl.hottest_home()
    out = []
    for i, (busy, names, what) in enumerate((
            (tl.link_busy, [tl.link_name(k) for k in range(len(tl.links))], "links: share of the cycles carrying a flit"),
            (tl.home_busy, [f"home {h}" + (" (hottest)" if h == hot else "") for h in range(tl.cores)],
             "homes: share of the cycles occupied"))):
        a = fig.add_subplot(grid[i + 1], sharex=ax)
        share = np.array(busy, dtype=float) / widths
        # the scale runs to the busiest cell, so that light traffic still shows; the bar says how busy
        mesh = a.pcolormesh(edges, np.arange(len(names) + 1), share, cmap=cmap, vmin=0, vmax=share.max() or 1)
        a.set_yticks(np.arange(len(names)) + 0.5, names, fontsize=max(4, min(8, 400 / max(len(names), 1))))
        a.set_ylim(len(names), 0)
        a.set_title(f"{tl.network}, {what} (buckets of {tl.net_bucket} cycle{'s' if tl.net_bucket > 1 else ''})",
                    fontsize=9)
        fig.colorbar(mesh, ax=a, fraction=0.02, pad=0.01, format=lambda v, _: f"{v:.0%}")
        out.append(a)
    homes = out[-1]
    homes.add_patch(Rectangle((tl.start, hot), tl.end - tl.start, 1, fill=False, edgecolor=HOTTEST_COLOUR, linewidth=2))
    label = homes.get_yticklabels()[hot]
    label.set_color(HOTTEST_COLOUR)
    label.set_fontweight("bold")
    homes.set_xlabel("cycle")
    return homes


__all__ = ["BUCKETS", "BUS_XACTS", "FORMATS", "Interval", "MAX_INTERVALS", "STATES", "XACT_COLOURS", "Timeline", "TimelineBuilder",
           "TimelineSink", "check_window", "timeline_format", "timeline_of", "to_html", "to_trace_events",
           "write_timeline"]
