#include "bus.h"

#include <stdexcept>

namespace s2sc {

using namespace sc_core;

s2_bus::s2_bus(sc_module_name name, run_control& ctl)
    : sc_module(name), owner("owner"), busy("busy"), m_ctl(ctl), m_granted(ctl.cfg.cores) {
  SC_METHOD(arbitrate);
  sensitive << m_wake;
  dont_initialize();
}

// Called in the requesting core's thread, at or before its request cycle.
uint64_t s2_bus::transfer(mem_request& rq) {
  const uint64_t now = now_cycle();
  if (rq.request_cycle < now || (rq.request_cycle == now && now != 0 && !m_ctl.vcd && !m_ctl.cfg.cache.on()))
    throw std::logic_error("bus request for cycle " + std::to_string(rq.request_cycle) + " posted at cycle " +
                           std::to_string(now) + " (internal timing error)");
  m_pending.push_back(&rq);
  const uint64_t w = std::max(rq.request_cycle, m_free);
  if (w > now) m_wake.notify(cycles(w - now));
  else m_wake.notify(SC_ZERO_TIME);
  wait(m_granted[rq.core]);
  return rq.grant_cycle;
}

void s2_bus::arbitrate() {
  const uint64_t now = now_cycle();
  if (m_ctl.vcd && now >= m_free) busy.write(false);  // overwritten below if a grant follows
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
  if (g >= m_ctl.limit) {
    // The run stops (fault or cycle limit) before any waiting request can be granted.
    for (mem_request* rq : m_pending) {
      rq->grant_cycle = NEVER;
      m_granted[rq->core].notify();
    }
    m_pending.clear();
    return;
  }
  const size_t k = arbiter->arbitrate(m_pending, g);
  mem_request* rq = m_pending[k];
  m_pending.erase(m_pending.begin() + static_cast<std::ptrdiff_t>(k));
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
    if (x.xact != s2::XA_NONE) {
      m_ctl.trace->push({g, rq->pc, static_cast<uint16_t>(rq->core), s2::TraceKind::XGRANT, x.xact, g - rq->request_cycle,
                         rq->address, before, memory->direct()[rq->address], x.span});
    } else {
      m_ctl.log(g, rq->pc, rq->core, s2::TraceKind::GRANT, g - rq->request_cycle, rq->address, before,
                memory->direct()[rq->address]);
    }
  }
  if (x.xact != s2::XA_NONE) m_ctl.log_changes(g, rq->pc, rq->core);  // after the grant's own event
  m_granted[rq->core].notify();  // the core runs again in this evaluation phase
  if (m_ctl.vcd) {
    owner.write(static_cast<unsigned>(rq->core));
    busy.write(true);
    m_wake.notify(cycles(m_free - g));  // to lower `busy` if no grant follows
  } else if (!m_pending.empty()) {
    m_wake.notify(cycles(m_free - g));
  }
}

}  // namespace s2sc
