"""The on-chip network of the directory machine (docs/timing-model.md, "Directory coherence over a
network"), cycle by cycle, written for clarity like simulator/reference.py.

    topo = Topology("mesh", 4)            # 2 x 2: tiles 0 (0,0), 1 (1,0), 2 (0,1), 3 (1,1)
    topo.route(0, 3)                      # [(0, 'x+'), (1, 'y+'), (3, 'local')]
    net = Network(topo, router_latency=1, link_latency=1, flit_words=4)
    net.send(message, c)                  # created at tile message.src in cycle c
    net.step(c)                           # every free output port grants its oldest ready message
    net.delivered(c)                      # the messages whose last flit arrived at c, by tile

Every output port (a link, or a router's `local` ejection port into its tile) carries one flit per
cycle. A port free at c grants the message with the smallest (ready cycle, sequence number) among
those waiting for it and ready at c; the port is busy F cycles (F = the message's flits); on a link
the head is ready at the next router Lk + R cycles after the grant (virtual cut-through), through
the ejection port the message is delivered F cycles after the grant. Queues are unbounded.
"""
from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

#: The output port that leaves the network into a tile.
LOCAL = "local"
#: Every output port, in the order a router's ports grant within a cycle (and log their grants).
PORTS = (LOCAL, "cw", "ccw", "x+", "x-", "y+", "y-")


class Topology:
    """Where the routers are and how a message goes from tile to tile."""

    def __init__(self, kind: str, tiles: int):
        self.kind, self.tiles = kind, tiles
        if kind == "mesh":
            self.columns = math.isqrt(tiles - 1) + 1 if tiles > 1 else 1     # ceil(sqrt(N))
            self.rows = -(-tiles // self.columns)
            self.routers = self.columns * self.rows   # positions past the last tile: a router only
        elif kind == "ring":
            self.columns, self.rows, self.routers = tiles, 1, tiles
        else:
            raise ValueError(f"no network for interconnect {kind}")

    @property
    def name(self) -> str:
        """What the counters and the timeline call it: `ring of 6 tiles`, `mesh 3x3`."""
        return f"ring of {self.tiles} tiles" if self.kind == "ring" else f"mesh {self.columns}x{self.rows}"

    def place(self, router: int) -> tuple[int, int]:
        """The (x, y) of a mesh router (on the ring: (position, 0))."""
        return router % self.columns, router // self.columns

    def next_router(self, router: int, port: str) -> int:
        n, x = self.routers, self.columns
        return {"cw": (router + 1) % n, "ccw": (router - 1) % n, "x+": router + 1, "x-": router - 1,
                "y+": router + x, "y-": router - x}[port]

    def port(self, router: int, dst: int) -> str:
        """The output port a message at `router` takes towards tile `dst` (LOCAL when it is there)."""
        if router == dst:
            return LOCAL
        if self.kind == "ring":
            d = (dst - router) % self.routers
            return "cw" if d <= self.routers - d else "ccw"     # the shorter way; a tie goes cw
        (x, y), (tx, ty) = self.place(router), self.place(dst)
        if x != tx:                                              # XY: first along x, then along y
            return "x+" if tx > x else "x-"
        return "y+" if ty > y else "y-"

    def route(self, src: int, dst: int) -> list[tuple[int, str]]:
        """The (router, output port) pairs a message from src to dst takes, ending with dst's LOCAL."""
        hops, router = [], src
        while True:
            p = self.port(router, dst)
            hops.append((router, p))
            if p == LOCAL:
                return hops
            router = self.next_router(router, p)

    def hops(self, src: int, dst: int) -> int:
        return len(self.route(src, dst)) - 1

    def links(self) -> list[tuple[int, str]]:
        """Every link, as (router, output port), in router then port order."""
        if self.kind == "ring":
            return [(r, p) for r in range(self.routers) for p in ("cw", "ccw")]
        out = []
        for r in range(self.routers):
            x, y = self.place(r)
            out += [(r, p) for p, ok in (("x+", x + 1 < self.columns), ("x-", x > 0),
                                         ("y+", y + 1 < self.rows), ("y-", y > 0)) if ok]
        return out


@dataclass(eq=False)
class Message:
    """One protocol message. `parent` is the message whose handling created it (None for a
    request), so a miss's latency can be split along the chain that completed it."""
    kind: str
    line: int
    src: int                  # the sending tile
    dst: int                  # the receiving tile
    requester: int            # the core whose request this serves
    to_home: bool             # for the home at dst (else for the cache controller there)
    words: int
    acks: int = 0             # Data from the home: the Inv-Acks the requester must collect
    data: list | None = None  # the line's words (Data, PutM)
    exclusive: bool = False   # Data from the home in MESI's I state: the line arrives in E
    from_home: bool = False
    parent: "Message | None" = None
    seq: int = 0
    flits: int = 1
    created: int = 0
    ready: int = 0
    queued: int = 0           # cycles waited for output ports beyond the ready cycles
    delivered: int = 0
    route: list = field(default_factory=list)
    at: int = 0               # index into route of the port it waits for

    @property
    def hops(self) -> int:
        return len(self.route) - 1


class Network:
    def __init__(self, topology: Topology, router_latency: int, link_latency: int, flit_words: int):
        self.topo, self.R, self.Lk, self.fw = topology, router_latency, link_latency, flit_words
        self.waiting: dict[tuple[int, str], list[Message]] = defaultdict(list)
        self.free: dict[tuple[int, str], int] = defaultdict(int)       # the first cycle a port is free
        self.busy: dict[tuple[int, str], int] = defaultdict(int)       # flits each port carried
        self.arriving: dict[int, list[Message]] = defaultdict(list)    # delivery cycle -> messages
        self.seq = 0
        self.in_flight = 0
        self.on_grant = None      # called (c, router, port, message) for every grant, when set

    def flits(self, words: int) -> int:
        return -(-words // self.fw)

    def send(self, m: Message, c: int) -> None:
        """m enters the network at its source router in cycle c (c may be later than now: a home
        sends at the end of its occupancy); its sequence number is the order of the calls."""
        m.seq, self.seq = self.seq, self.seq + 1
        m.flits, m.created, m.ready = self.flits(m.words), c, c + self.R
        m.route, m.at = self.topo.route(m.src, m.dst), 0
        self.waiting[m.route[0]].append(m)
        self.in_flight += 1

    def step(self, c: int) -> None:
        """Every output port free at c grants its oldest ready message (ports are independent: a
        message granted at c is ready again at c + Lk + R > c at the earliest), router by router
        and in PORTS order, the order the event log lists the grants of a cycle."""
        for port in sorted(self.waiting, key=lambda p: (p[0], PORTS.index(p[1]))):
            queue = self.waiting[port]
            if not queue or self.free[port] > c:
                continue
            ready = [m for m in queue if m.ready <= c]
            if not ready:
                continue
            m = min(ready, key=lambda m: (m.ready, m.seq))
            queue.remove(m)
            m.queued += c - m.ready
            self.free[port] = c + m.flits
            self.busy[port] += m.flits
            if self.on_grant is not None:
                self.on_grant(c, port[0], port[1], m)
            if port[1] == LOCAL:
                m.delivered = c + m.flits
                self.arriving[m.delivered].append(m)
            else:
                m.at += 1
                m.ready = c + self.Lk + self.R
                self.waiting[m.route[m.at]].append(m)

    def delivered(self, c: int) -> list[Message]:
        """The messages whose last flit arrives at c, in tile order (one a tile: its ejection port
        carries one message at a time)."""
        out = sorted(self.arriving.pop(c, ()), key=lambda m: m.dst)
        self.in_flight -= len(out)
        return out


def report(topology: Topology, tiles: list[dict], messages: dict[str, int], invals: dict[int, int],
           link_flits: dict[tuple[int, str], int], cycles: int, quiet: int) -> dict:
    """The machine-wide network counters of a directory run (docs/timing-model.md, "Counters
    (directory runs)"), from what an engine counted: each tile's counters, the messages by type, the
    GetMs by how many copies they invalidated, the flits each link carried, the total cycles and the
    cycle the network went quiet. The reference model and the fast engine both report through it."""
    getms = sum(invals.values())
    links = topology.links()
    return {
        "topology": topology.name,
        "messages": dict(messages),
        "flits": sum(t["flits_sent"] for t in tiles),
        "hops": sum(t["message_hops"] for t in tiles),
        "copies_invalidated_per_getm": dict(sorted(invals.items())),
        "mean_copies_invalidated_per_getm": sum(n * k for n, k in invals.items()) / getms if getms else 0.0,
        "link_flits": {f"{r}:{p}": link_flits.get((r, p), 0) for r, p in links},
        "link_utilisation": {f"{r}:{p}": link_flits.get((r, p), 0) / cycles for r, p in links},
        "home_utilisation": [t["home_busy_cycles"] / cycles for t in tiles],
        "quiet_cycle": quiet,
    }
