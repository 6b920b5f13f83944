#include "bus.h"

#include <stdexcept>

namespace s2sc {

using namespace sc_core;

s2_bus::s2_bus(sc_module_name name, run_control& ctl)
    : sc_module(name), owner("owner"), busy("busy"), m_ctl(ctl), m_granted(ctl.cfg.cores), m_drained(ctl.cfg.cores),
      m_drain_rq(ctl.cfg.cores) {
  SC_METHOD(arbitrate);
  sensitive << m_wake;
  dont_initialize();
}

void s2_bus::wake_at(uint64_t c) { notify_at(m_wake, c); }

// Called in the requesting core's thread, at or before its request cycle.
uint64_t s2_bus::transfer(mem_request& rq) {
  const uint64_t now = now_cycle();
  const bool settles = m_ctl.vcd || m_ctl.cfg.cache.on() || m_ctl.cfg.buffered();
  if (rq.request_cycle < now || (rq.request_cycle == now && now != 0 && !settles))
    throw std::logic_error("bus request for cycle " + std::to_string(rq.request_cycle) + " posted at cycle " +
                           std::to_string(now) + " (internal timing error)");
  m_pending.push_back(&rq);
  wake_at(std::max(rq.request_cycle, m_free));
  wait(m_granted[rq.core]);
  return rq.grant_cycle;
}

void s2_bus::buffered(int, uint64_t t) { wake_at(t + 1); }

uint64_t s2_bus::drained(int core) {
  wait(m_drained[static_cast<size_t>(core)]);
  return now_cycle() + 1;
}

void s2_bus::arbitrate() {
  const uint64_t now = now_cycle();
  if (m_ctl.vcd && now >= m_free) busy.write(false);  // overwritten below if a grant follows
  if (m_ctl.cfg.buffered()) return step_buffered(now);
  if (m_pending.empty()) return;
  uint64_t first = NEVER;
  for (const mem_request* rq : m_pending) first = std::min(first, rq->request_cycle);
  const uint64_t g = std::max({now, m_free, first});
  if (g > now) {
    m_wake.notify(cycles(g - now));
    return;
  }
  if ((now == 0 || m_ctl.vcd || m_ctl.cfg.cache.on()) && m_settled != now) {
    m_settled = now;
    m_wake.notify(SC_ZERO_TIME);
    return;
  }
  if (g >= m_ctl.limit) return stop_pending();
  const size_t k = arbiter->arbitrate(m_pending, g);
  mem_request* rq = m_pending[k];
  m_pending.erase(m_pending.begin() + static_cast<std::ptrdiff_t>(k));
  grant(rq, g);
  if (m_ctl.vcd || !m_pending.empty()) m_wake.notify(cycles(m_free - g));  // with --vcd: to lower `busy`
}

// The run stops (fault or cycle limit) before any waiting request can be granted.
void s2_bus::stop_pending() {
  for (mem_request* rq : m_pending) {
    rq->grant_cycle = NEVER;
    m_granted[rq->core].notify();
  }
  m_pending.clear();
}

// A core's own access, granted at g.
void s2_bus::grant(mem_request* rq, uint64_t g) {
  // The access takes effect at g; the slave's answer travels back in the transaction. The trace
  // shows the word at the address before and after it (read from the memory's host view).
  // With caches a data access is the coherence transaction decided now, from the states at g: the
  // caches snoop it (s2::Caches::transact) before the access takes effect, and it holds the bus D.
  const int32_t before = m_ctl.trace ? memory->direct()[rq->address] : 0;
  s2::Caches::Grant x{s2::XA_NONE, static_cast<uint32_t>(m_ctl.cfg.mem_latency)};
  if (rq->kind == s2::BUS_STRING) {
    rq->text = memory->read_string(rq->address);
  } else {
    if (m_ctl.cfg.cache.on()) x = m_ctl.caches.transact(rq->core, rq->kind, rq->address);
    rq->rdata = memory->access(rq->kind, rq->address, rq->wdata);
  }
  rq->grant_cycle = g;
  rq->span = x.span;
  m_free = g + x.span;
  if (m_ctl.trace) {
    const int32_t after = memory->direct()[rq->address];
    if (x.xact != s2::XA_NONE)
      m_ctl.log(g, rq->pc, rq->core, s2::TraceKind::XGRANT, g - rq->request_cycle, rq->address, before, after, x.xact, x.span);
    else
      m_ctl.log(g, rq->pc, rq->core, s2::TraceKind::GRANT, g - rq->request_cycle, rq->address, before, after);
  }
  if (x.xact != s2::XA_NONE) m_ctl.log_changes(g, rq->pc, rq->core);  // after the grant's own event
  m_granted[rq->core].notify();  // the core runs again in this evaluation phase
  if (m_ctl.vcd) {
    owner.write(static_cast<unsigned>(rq->core));
    busy.write(true);
  }
}

// -- with store buffers ------------------------------------------------------------------------------

void s2_bus::step_buffered(uint64_t now) {
  if (now >= m_ctl.limit) return stop_pending();
  if (m_stepped != now) {
    // Step 1 of this cycle happens in its first delta cycle: decide one delta later.
    if (m_settled != now) {
      m_settled = now;
      m_wake.notify(SC_ZERO_TIME);
      return;
    }
    m_stepped = now;
    start_drains(now);
    if (m_free <= now) grant_buffered(now);
  }
  // The next cycle in which a drain can start or a request be granted (with --vcd: `busy` falls).
  uint64_t next = NEVER;
  for (const mem_request* rq : m_pending) next = std::min(next, std::max({rq->request_cycle, m_free, now + 1}));
  for (const s2::StoreBuffer& b : m_ctl.buffers) {
    if (b.waiting()) next = std::min(next, std::max(m_free, now + 1));
    else if (!b.empty()) next = std::min(next, std::max(b.port_free(), now + 1));
  }
  if (m_ctl.vcd && m_free > now) next = std::min(next, m_free);
  if (next != NEVER) wake_at(std::min(next, m_ctl.limit));
}

// Step 1b: each core whose drain port is free starts draining an entry that entered before c, in
// core order: with caches a write hit takes effect now, else the drain requests the bus.
void s2_bus::start_drains(uint64_t c) {
  for (int i = 0; i < m_ctl.cfg.cores; ++i) {
    s2::StoreBuffer& b = m_ctl.buffers[static_cast<size_t>(i)];
    const int k = b.drain_ready(m_ctl.cfg.consistency, c);
    if (k < 0) continue;
    const uint32_t a = b.at(k).addr;
    if (!m_ctl.cfg.cache.on() || !m_ctl.caches.lookup(i, s2::BUS_WRITE, a, false)) {
      b.drain_request(k, c);
      continue;
    }
    const s2::SbEntry e = b.drain_hit(k, c, m_ctl.cfg.cache.hit_latency);
    m_ctl.log(c, e.pc, i, s2::TraceKind::DRAIN_HIT, 0, a, memory->direct()[a], e.value);
    m_ctl.log_changes(c, e.pc, i);
    memory->access(s2::BUS_WRITE, a, e.value);
    s2::CoreStats& s = m_ctl.drain_stats[static_cast<size_t>(i)];
    ++s.store_drains;
    ++s.mem_writes;
    left(i);
  }
}

// Step 2 at g (the bus is free): each core competes with one request, its own or its drain's
// (they take turns); the arbiter picks among them by its policy.
void s2_bus::grant_buffered(uint64_t g) {
  std::vector<mem_request*> competing;
  for (int i = 0; i < m_ctl.cfg.cores; ++i) {
    mem_request* own = nullptr;
    for (mem_request* rq : m_pending)
      if (rq->core == i && rq->request_cycle <= g) own = rq;
    const s2::StoreBuffer& b = m_ctl.buffers[static_cast<size_t>(i)];
    if (b.drain_competes(own != nullptr)) {
      mem_request& d = m_drain_rq[static_cast<size_t>(i)];  // for fifo: requested when the drain started
      d.core = i;
      d.request_cycle = b.drain_since();
      d.pc = b.draining().pc;
      d.address = b.draining().addr;
      d.kind = s2::BUS_WRITE;
      d.wdata = b.draining().value;
      competing.push_back(&d);
    } else if (own) {
      competing.push_back(own);
    }
  }
  if (competing.empty()) return;
  mem_request* rq = competing[arbiter->arbitrate(competing, g)];
  if (rq == &m_drain_rq[static_cast<size_t>(rq->core)]) return drain_granted(rq->core, g);
  m_pending.erase(std::find(m_pending.begin(), m_pending.end(), rq));
  m_ctl.buffers[static_cast<size_t>(rq->core)].own_granted();
  grant(rq, g);
}

// The drain of core i is granted at g: its entry is written (with caches: the transaction a store
// would make), the bus is busy for its D cycles, and the core does not wait for it.
void s2_bus::drain_granted(int i, uint64_t g) {
  s2::StoreBuffer& b = m_ctl.buffers[static_cast<size_t>(i)];
  const uint64_t waited = g - b.drain_since();
  const uint32_t a = b.draining().addr;
  s2::Caches::Grant x{s2::XA_NONE, static_cast<uint32_t>(m_ctl.cfg.mem_latency)};
  if (m_ctl.cfg.cache.on()) x = m_ctl.caches.transact(i, s2::BUS_WRITE, a);
  const s2::SbEntry e = b.drain_granted(g, x.span);
  const int32_t before = memory->direct()[a];
  memory->access(s2::BUS_WRITE, a, e.value);
  m_ctl.log(g, e.pc, i, s2::TraceKind::DRAIN, waited, a, before, e.value, x.xact,
            x.xact != s2::XA_NONE ? x.span : 0);
  if (x.xact != s2::XA_NONE) m_ctl.log_changes(g, e.pc, i);
  s2::CoreStats& s = m_ctl.drain_stats[static_cast<size_t>(i)];
  ++s.store_drains;
  ++s.mem_writes;
  ++s.drain_bus_accesses;
  s.drain_bus_cycles += x.span;
  ++s.mem_accesses;
  s.bus_busy_cycles += x.span;
  m_free = g + x.span;
  left(i);
  if (m_ctl.vcd) {
    owner.write(static_cast<unsigned>(i));
    busy.write(true);
  }
}

// An entry left core i's buffer now: a held-back instruction may issue in the next cycle.
void s2_bus::left(int i) {
  m_drained[static_cast<size_t>(i)].notify();
  if (m_ctl.show_buffer) m_ctl.show_buffer(i);
}

}  // namespace s2sc
