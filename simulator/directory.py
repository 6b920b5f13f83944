"""Directory coherence over a ring or a mesh, in the reference model (docs/timing-model.md,
"Directory coherence over a network"): the Primer's baseline MSI and MESI directory protocols
(Nagarajan, Sorin, Hill and Wood, 2nd ed., ch. 8), message by message, cycle by cycle.

    m = DirectoryMachine(code, data, cores=4, cache="msi", interconnect="mesh", coherence="directory")
    raw = m.run()             # what ReferenceMachine.run returns, plus raw["network"]
    m.memory()                # the coherent memory at the end (the homes' words, and the M lines)

DirectoryMachine is a ReferenceMachine (which refuses coherence directory itself). It keeps the reference
model's cores, decoder, caches (sets, ways, LRU victims) and barrier, and replaces the bus: a miss
sends messages (simulator/network.py) and waits for them; each tile's home keeps a directory entry
per line and the words behind it. Unlike the bus model's caches, which hold states only, every copy
here holds its line's words, and messages carry them: a load reads the copy it was sent, which may
already be stale in memory (a race the bus cannot have), so values must travel with the messages.

Within one cycle c: 1. deliveries (a home queues its messages; a cache controller handles its own,
retrying the ones it stalled); 2. every free home handles its oldest message that is not stalled;
3. the cores issue; 4. the barrier; 5. the network's ports grant.
"""
from __future__ import annotations

from .counters import engine_counters
from .network import Message, Network, Topology
from .network import report as network_report
from .reference import ReferenceMachine, _Line

GETS, GETM, PUTS, PUTE, PUTM = "GetS", "GetM", "PutS", "PutE", "PutM"
FWD_GETS, FWD_GETM, INV, INV_ACK, DATA, PUT_ACK = "Fwd-GetS", "Fwd-GetM", "Inv", "Inv-Ack", "Data", "Put-Ack"
#: Every message type, in the order the counters print them.
MESSAGES = (GETS, GETM, PUTS, PUTE, PUTM, FWD_GETS, FWD_GETM, INV, INV_ACK, DATA, PUT_ACK)
#: The messages that carry the line's words after their header word.
WITH_DATA = (PUTM, DATA)

#: Cache states: the ones in which the core may read its copy, and write it (E becomes M).
READABLE = ("S", "E", "M", "SM^AD", "SM^A")
WRITABLE = ("E", "M")
#: The states of a line in the eviction buffer, by the state it left the cache in.
EVICTED = {"S": ("SI^A", PUTS), "E": ("EI^A", PUTE), "M": ("MI^A", PUTM)}


class _Home:
    """One tile's slice of the directory: an entry per line it has seen, its queue, when it is free."""
    def __init__(self):
        self.entries: dict[int, dict] = {}
        self.queue: list[Message] = []
        self.free = 0

    def entry(self, line: int) -> dict:
        return self.entries.setdefault(line, {"state": "I", "sharers": set(), "owner": None})


class DirectoryMachine(ReferenceMachine):
    """The reference model with a ring or a mesh and directory coherence (the parameters of
    ReferenceMachine).
    check_invariants=True checks at the end of every cycle that every line has one writer or only
    readers, and that every readable copy holds the same words."""

    def __init__(self, *args, check_invariants: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.topology = Topology(self.interconnect, len(self.cores))
        self.net = Network(self.topology, self.router_latency, self.link_latency, self.flit_words)
        self.homes = [_Home() for _ in self.cores]
        self.evicting: list[dict[int, _Line]] = [{} for _ in self.cores]   # the eviction buffers
        self.stalled: list[list[Message]] = [[] for _ in self.cores]       # at the cache controllers
        self.pending: list[dict | None] = [None for _ in self.cores]       # each core's miss
        self.check_invariants = check_invariants
        self.invals: dict[int, int] = {}          # copies a GetM invalidated -> how many GetMs did
        self.by_type = dict.fromkeys(MESSAGES, 0)
        self.quiet = 0                            # the cycle the network went quiet after the run
        if self.trace is not None:
            self.net.on_grant = self.log_grant
        names = engine_counters(cached=False, buffered=self.buffered, networked=True)
        for k in self.cores:
            k.stats = dict.fromkeys(names, 0)
            for ways in self.caches[k.id].sets:
                for way in ways:
                    way.data = [0] * self.W

    # -- sending ----------------------------------------------------------------------------------
    def send(self, kind: str, src: int, dst: int, line: int, requester: int, c: int, parent=None,
             to_home: bool = False, from_home: bool = False, **extra) -> None:
        words = 1 + self.W if kind in WITH_DATA else 1
        m = Message(kind, line, src, dst, requester, to_home, words, parent=parent, from_home=from_home, **extra)
        self.net.send(m, c)
        self.log_network(c, src, f"send {kind} {m.flits}", m)
        s = self.cores[src].stats
        s["messages_sent"] += 1
        s["flits_sent"] += m.flits
        s["message_hops"] += m.hops
        self.by_type[kind] += 1

    def log_network(self, c: int, tile: int, event: str, m: Message, before=None, after=None) -> None:
        """A network event of tile (or router) `tile` (docs/timing-model.md, "The event log of a
        network"): wait is the requester, address the line's base, before and after the message's
        source and destination tiles unless given (a home's directory states)."""
        if self.trace is not None:
            self.trace.append((c, tile, 0, event, m.requester, m.line * self.W,
                               m.src if before is None else before, m.dst if after is None else after))

    def log_grant(self, c: int, router: int, port: str, m: Message) -> None:
        self.log_network(c, router, f"port {port} {m.kind} {m.flits}", m)

    def home_of(self, line: int) -> int:
        return line % len(self.cores)

    # -- step 3: the core's access ----------------------------------------------------------------
    def lookup(self, core, d, a: int, c: int) -> bool:
        """The access of core's memory instruction at c: a hit takes effect now; a miss evicts the
        set's victim when it must and sends its request. Always True: nothing goes to a bus."""
        write = d.bus != "read"
        got, way = self.line_access(core, write, a, c, self.own_may_miss(core))
        if got == "wait":                             # issues again in the next cycle
            core.stats["instructions"] -= 1
            core.next_issue = c + 1
            self.stalls[core.id] += 1
            return True
        if got == "hit":
            before, after = self.perform(core, d, a)
            self.stalls[core.id] += self.H - 1
            self.log(c, core, "hit", 0, a, before, after)
            if write and way.state == "E":
                self.set_state(c, core, way, "M", "PrWr")
            core.pc += 1
            core.next_issue = c + self.H
            return True
        self.pending[core.id] = {"d": d, "a": a, "issued": c, "acks": 0, "data": False}
        core.own_last = core.drain is not None        # the drain that waited goes next
        core.state = "miss"
        self.log(c, core, f"request {GETM if write else GETS}", 0, a)
        return True

    def own_may_miss(self, core) -> bool:
        """A core has one request outstanding at a time, its own access's or its store buffer's
        drain's: its access may send one when none is out and it is not the waiting drain's turn
        (the two take turns, as on the bus)."""
        return self.pending[core.id] is None and not (core.drain is not None and core.own_last)

    def line_access(self, core, write: bool, a: int, c: int, may_miss: bool) -> tuple[str, _Line | None]:
        """A read or a write of word a through core's cache at c, an instruction's or a drain's:
        ("wait", None) while the line is in the eviction buffer (until its Put-Ack) or when a miss
        may not send its request now; ("hit", way), the way touched, for the caller to perform; or
        ("miss", way): the set's victim evicted when it must be, the GetS or GetM sent."""
        cache, line = self.caches[core.id], a // self.W
        if line in self.evicting[core.id]:
            return "wait", None
        way = cache.find(line)
        if way is not None and way.state in (WRITABLE if write else READABLE):
            cache.touch(way)
            core.stats["dir_hits"] += 1
            return "hit", way
        if not may_miss:
            return "wait", None
        if way is None:
            way = cache.victim(line)
            if way.line is not None:
                self.evict(core, way, c)
            way.line, way.state = line, "I"
        kind = GETM if write else GETS
        new = "SM^AD" if way.state == "S" else "IM^AD" if write else "IS^D"
        self.set_state(c, core, way, new, kind)
        core.stats["dir_misses"] += 1
        core.stats["mem_accesses"] += 1
        self.send(kind, core.id, self.home_of(line), line, core.id, c, to_home=True)
        return "miss", way

    # -- step 3b: the store buffers' drains -------------------------------------------------------
    def start_drains(self, c: int) -> None:
        """After every core's issue, in core order: a core whose drain port is free and whose drain
        is not on its way writes one entry (the bus machine's choice, made once and kept while it
        waits) through its cache, as a store would: a write hit takes effect now, the port busy H
        cycles; a miss sends the GetM when the core's one request is free, and the entry leaves
        when the line arrives writable (done()); else it tries again in the next cycle."""
        for core in self.cores:
            p = self.pending[core.id]
            if not core.buf or core.drain_free > c or (p is not None and "drain" in p):
                continue
            if core.drain is None:
                core.drain = self.choose_drain(core, c)
                if core.drain is None:
                    continue
                core.drain_cycle = c
            entry = core.drain
            a = entry[0]
            with self.acting_for(core, entry):
                got, way = self.line_access(core, True, a, c, p is None)
                if got == "hit":
                    self.drain_write(core, way, entry, c, "drain hit", 0)
                    if way.state == "E":
                        self.set_state(c, core, way, "M", "PrWr")
                    core.drain_free = c + self.H
            if got == "miss":
                self.pending[core.id] = {"a": a, "issued": c, "acks": 0, "data": False, "drain": entry}
                core.own_last = False
                core.stats["drain_bus_accesses"] += 1

    def drain_write(self, core, way: _Line, entry: list[int], c: int, event: str, wait: int) -> None:
        """A buffered store takes effect in core's copy of its line at c and leaves the buffer."""
        a, value, pc, _ = entry
        w = a % self.W
        before, way.data[w] = way.data[w], value
        core.buf.remove(entry)
        core.drain = None
        core.stats["store_drains"] += 1
        core.stats["mem_writes"] += 1
        if self.trace is not None:
            self.trace.append((c, core.id, pc, event, wait, a, before, value))

    def evict(self, core, way: _Line, c: int) -> None:
        """The victim leaves its way for the eviction buffer and its Put goes to the home."""
        state, kind = EVICTED[way.state]
        held = _Line()
        held.line, held.state, held.data = way.line, state, list(way.data)
        self.evicting[core.id][way.line] = held
        self.log(c, core, f"state {kind}", core.id, way.line * self.W, way.state, state)
        extra = {"data": list(way.data)} if kind == PUTM else {}
        self.send(kind, core.id, self.home_of(way.line), way.line, core.id, c, to_home=True, **extra)
        way.line, way.state = None, "I"

    def set_state(self, c: int, core, way: _Line, new: str, why: str) -> None:
        if self.trace is not None and way.state != new:
            self.trace.append((c, core.id, core.pc, f"state {why}", core.id, way.line * self.W, way.state, new))
        way.state = new

    def cell(self, core, a: int) -> tuple[list, int]:
        """A core's accesses read and write the words of its own copy of the line."""
        return self.caches[core.id].find(a // self.W).data, a % self.W

    def arbitrate(self, c: int) -> None:
        """No bus: the only request left is `trap #3`, which prints the coherent string at once."""
        for core in self.cores:
            if core.state == "request":
                d, a = core.request
                text, i = [], a
                while i < len(self.mem) and self.word(i) != 0:
                    text.append(chr(self.word(i) & 0xFF))
                    i += 1
                self.output.append((c, core.id, "".join(text)))
                core.stats["mem_reads"] += 1
                core.pc += 1
                core.state, core.next_issue = "run", c + 1

    # -- step 1: the cache controllers ------------------------------------------------------------
    def at_cache(self, m: Message, c: int) -> None:
        """A message delivered to a cache controller, then every stalled one that can now go."""
        k = m.dst
        if not self.cache_handles(m, c):
            self.stalled[k].append(m)
            return
        progress = True
        while progress:
            progress = False
            for s in list(self.stalled[k]):
                if self.cache_handles(s, c):
                    self.stalled[k].remove(s)
                    progress = True
                    break

    def copy_of(self, k: int, line: int) -> _Line | None:
        """The line's way in core k's cache, or its eviction buffer entry, or None."""
        way = self.caches[k].find(line)
        return way if way is not None else self.evicting[k].get(line)

    def cache_handles(self, m: Message, c: int) -> bool:
        """The cache controller's table: False when the message must stall."""
        k, core = m.dst, self.cores[m.dst]
        way = self.copy_of(k, m.line)
        st = way.state if way is not None else "I"
        home = self.home_of(m.line)

        def fail():
            raise RuntimeError(f"internal: {m.kind} for line {m.line} reached core {k} in state {st} at cycle {c}")

        if m.kind == INV:
            if st == "IS^D":
                return False
            new = {"S": "I", "SM^AD": "IM^AD", "SI^A": "II^A"}.get(st) or fail()
            self.send(INV_ACK, k, m.requester, m.line, m.requester, c, parent=m)
            self.change_copy(c, k, way, new, m.kind)
        elif m.kind in (FWD_GETS, FWD_GETM):
            if st in ("IM^AD", "IM^A", "SM^AD", "SM^A"):
                return False                                   # until our own access is done
            if st not in ("M", "E", "MI^A", "EI^A"):
                fail()
            self.send(DATA, k, m.requester, m.line, m.requester, c, parent=m, data=list(way.data))
            if m.kind == FWD_GETS:
                self.send(DATA, k, home, m.line, m.requester, c, parent=m, data=list(way.data), to_home=True)
                new = "S" if st in ("M", "E") else "SI^A"
            else:
                new = "I" if st in ("M", "E") else "II^A"
            self.change_copy(c, k, way, new, m.kind)
        elif m.kind == PUT_ACK:
            if st not in ("MI^A", "EI^A", "SI^A", "II^A"):
                fail()
            del self.evicting[k][m.line]
            self.log(c, core, f"state {m.kind}", k, m.line * self.W, st, "I")
        elif m.kind == DATA:
            p = self.pending[k]
            if st not in ("IS^D", "IM^AD", "SM^AD"):
                fail()
            way.data = list(m.data)
            if st == "IS^D":
                self.set_state(c, core, way, "E" if m.exclusive else "S", m.kind)
                self.complete(k, m, c)
            else:
                p["data"], p["acks"] = True, p["acks"] + (m.acks if m.from_home else 0)
                self.collect(k, way, m, c)
        elif m.kind == INV_ACK:
            if st not in ("IM^AD", "IM^A", "SM^AD", "SM^A"):
                fail()
            self.pending[k]["acks"] -= 1
            self.collect(k, way, m, c)
        else:
            fail()
        return True

    def change_copy(self, c: int, k: int, way: _Line, new: str, why: str) -> None:
        """A copy in the cache or the eviction buffer changes state; I frees a cache way."""
        core = self.cores[k]
        if way is self.evicting[k].get(way.line):
            self.log(c, core, f"state {why}", k, way.line * self.W, way.state, new)
            way.state = new
            return
        self.set_state(c, core, way, new, why)
        if new == "I":
            way.line = None

    def collect(self, k: int, way: _Line, m: Message, c: int) -> None:
        """A write miss's Data and Inv-Acks: M when the Data is in and no ack is outstanding."""
        p = self.pending[k]
        if p["data"] and p["acks"] == 0:
            self.set_state(c, self.cores[k], way, "M", m.kind)
            self.complete(k, m, c)
        elif p["data"]:
            self.set_state(c, self.cores[k], way, "IM^A" if way.state == "IM^AD" else
                           "SM^A" if way.state == "SM^AD" else way.state, m.kind)

    def complete(self, k: int, m: Message, c: int) -> None:
        """Core k's access takes effect at c, completed by message m; its latency is split along
        the chain of messages that led to m (queueing, network, controllers)."""
        core, p = self.cores[k], self.pending[k]
        a = p["a"]
        way = self.caches[k].find(a // self.W)
        self.caches[k].touch(way)
        s = core.stats
        s["miss_cycles"] += c - p["issued"]
        chain = m
        while chain is not None:
            s["miss_queueing_cycles"] += chain.queued
            s["miss_network_cycles"] += chain.delivered - chain.created - chain.queued
            start = chain.parent.delivered if chain.parent is not None else p["issued"]
            s["miss_home_cycles"] += chain.created - start
            chain = chain.parent
        self.pending[k] = None
        entry = p.get("drain")
        if entry is not None:                 # the drain's store; the core did not wait for it
            self.drain_write(core, way, entry, c, f"drain {GETM} {c - p['issued']}",
                             p["issued"] - core.drain_cycle)
            s["drain_bus_cycles"] += c - p["issued"]
            core.drain_free = c + 1
            return
        before, after = self.perform(core, p["d"], a)
        self.log(c, core, f"done {m.kind}", c - p["issued"], a, before, after)
        self.stalls[k] += c - p["issued"]
        core.pc += 1
        core.state, core.next_issue = "run", c + 1

    # -- step 2: the homes ------------------------------------------------------------------------
    def home_step(self, h: int, c: int) -> None:
        home = self.homes[h]
        if home.free > c:
            return
        for m in home.queue:
            before = home.entry(m.line)["state"]
            occupancy = self.home_handles(h, m, c)
            if occupancy is not None:
                self.log_network(c, h, f"home {m.kind} {occupancy}", m, before, home.entry(m.line)["state"])
                home.queue.remove(m)
                home.free = c + occupancy
                self.cores[h].stats["home_busy_cycles"] += occupancy
                return

    def home_handles(self, h: int, m: Message, c: int) -> int | None:
        """The directory's table: the home's occupancy, or None when the message must stall.
        Messages the home sends are created at the end of the occupancy."""
        e, R, L = self.homes[h].entry(m.line), m.requester, self.L
        st = e["state"]

        def reply(kind, dst, occupancy, **extra):
            self.send(kind, h, dst, m.line, R, c + occupancy, parent=m, from_home=True, **extra)

        def line_words():
            return self.mem[m.line * self.W:(m.line + 1) * self.W]

        if m.kind in (GETS, GETM) and st == "S^D":
            return None
        if m.kind == GETS:
            if st == "M":
                reply(FWD_GETS, e["owner"], 1)
                e.update(state="S^D", sharers={e["owner"], R}, owner=None)
                return 1
            if st == "I" and self.protocol == "mesi":
                reply(DATA, R, L, data=line_words(), exclusive=True)
                e.update(state="M", owner=R)
            else:
                reply(DATA, R, L, data=line_words())
                e["state"] = "S"
                e["sharers"].add(R)
            return L
        if m.kind == GETM:
            if st == "M":
                reply(FWD_GETM, e["owner"], 1)
                e["owner"] = R
                self.invals[1] = self.invals.get(1, 0) + 1      # the owner's copy goes
                return 1
            others = sorted(e["sharers"] - {R})
            reply(DATA, R, L, data=line_words(), acks=len(others))
            for s in others:
                reply(INV, s, L)
            self.cores[h].stats["invalidations_sent"] += len(others)
            self.invals[len(others)] = self.invals.get(len(others), 0) + 1
            e.update(state="M", owner=R, sharers=set())
            return L
        if m.kind in (PUTM, PUTE) and st == "M" and e["owner"] == R:
            occupancy = 1
            if m.kind == PUTM:
                self.mem[m.line * self.W:(m.line + 1) * self.W] = m.data
                occupancy = L
            reply(PUT_ACK, R, occupancy)
            e.update(state="I", owner=None)
            return occupancy
        if m.kind in (PUTS, PUTM, PUTE):      # a sharer's Put, or a stale one from a former owner
            if st in ("S", "S^D"):
                e["sharers"].discard(R)
                if st == "S" and not e["sharers"]:
                    e["state"] = "I"
            reply(PUT_ACK, R, 1)
            return 1
        if m.kind == DATA and st == "S^D":    # the owner's answer to a Fwd-GetS
            self.mem[m.line * self.W:(m.line + 1) * self.W] = m.data
            e["state"] = "S"
            return L
        raise RuntimeError(f"internal: {m.kind} for line {m.line} reached home {h} in state {st} at cycle {c}")

    # -- the cycle --------------------------------------------------------------------------------
    def network_step(self, c: int) -> None:
        """Steps 1 and 2: deliveries, then the homes."""
        for m in self.net.delivered(c):
            if m.to_home:
                self.homes[m.dst].queue.append(m)
            else:
                self.at_cache(m, c)
        for h in range(len(self.homes)):
            self.home_step(h, c)

    def step(self) -> bool:
        c = self.now
        if not self.running(c):
            return False
        self.network_step(c)
        self.issue_all(c)
        if self.buffered:
            self.start_drains(c)
        self.arbitrate(c)
        self.barrier(c)
        self.net.step(c)
        if self.check_invariants:
            self.check_coherence(c)
        self.now = c + 1
        return True

    def busy(self) -> bool:
        return self.net.in_flight > 0 or any(h.queue or h.free > self.now for h in self.homes)

    def run(self) -> dict:
        while self.step():
            pass
        cycles = max(k.stats["finish_cycle"] for k in self.cores)
        while self.busy():                       # the write-backs still on their way reach memory
            if self.now > cycles + 10 * len(self.cores) * (self.L + 100) * 1000:
                raise RuntimeError(f"internal: the network is still busy at cycle {self.now}")
            self.network_step(self.now)
            self.net.step(self.now)
            self.now += 1
        self.quiet = self.now
        self.output.sort(key=lambda e: (e[0], e[1]))
        if self.trace is not None:
            self.trace.sort(key=lambda e: (e[0], e[1]))
        return {"cycles": cycles, "cores": [dict(k.stats) for k in self.cores], "stall_cycles": list(self.stalls),
                "output": self.output, "bus_busy_cycles": 0, "network": self.report(cycles)}

    # -- what the run reports ---------------------------------------------------------------------
    def report(self, cycles: int) -> dict:
        """The machine-wide network counters (docs/timing-model.md, "Counters (directory runs)")."""
        return network_report(self.topology, [k.stats for k in self.cores], self.by_type, self.invals,
                              dict(self.net.busy), cycles, self.quiet)

    def word(self, a: int) -> int:
        """The coherent value of word a now: the writable copy's, else memory's."""
        line = a // self.W
        for cache in self.caches:
            way = cache.find(line)
            if way is not None and way.state in WRITABLE:
                return way.data[a % self.W]
        return self.mem[a]

    def memory(self) -> list[int]:
        """The coherent memory (after run(): every write-back has reached its home)."""
        out = list(self.mem)
        for cache in self.caches:
            for way in (w for ways in cache.sets for w in ways):
                if way.line is not None and way.state in WRITABLE:
                    out[way.line * self.W:(way.line + 1) * self.W] = way.data
        return out

    def check_coherence(self, c: int) -> None:
        """Single writer or many readers for every line, and every readable copy the same words."""
        copies: dict[int, list[tuple[int, _Line]]] = {}
        for k, cache in enumerate(self.caches):
            for way in (w for ways in cache.sets for w in ways):
                if way.line is not None and way.state in READABLE:
                    copies.setdefault(way.line, []).append((k, way))
        for line, held in copies.items():
            writers = [k for k, w in held if w.state in WRITABLE]
            if writers and len(held) > 1:
                raise AssertionError(f"cycle {c}: line {line} writable at core {writers[0]} and readable at "
                                     f"{[k for k, _ in held]}")
            if any(w.data != held[0][1].data for _, w in held):
                raise AssertionError(f"cycle {c}: the readable copies of line {line} differ")
