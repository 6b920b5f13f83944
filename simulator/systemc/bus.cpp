#include "bus.h"

namespace s2sc {

using namespace sc_core;

s2_bus::s2_bus(sc_module_name name, run_control& ctl)
    : sc_module(name), grant("grant", ctl.cfg.cores), owner("owner"), busy("busy"), m_ctl(ctl),
      m_granted(ctl.cfg.cores) {
  SC_THREAD(main);
}

// Called in the requesting core's thread at its request cycle t (the current time).
uint64_t s2_bus::transfer(mem_request& rq) {
  m_pending.push_back(&rq);
  m_request_event.notify(SC_ZERO_TIME);
  wait(m_granted[rq.core]);
  return rq.grant_cycle;
}

// Why the delta cycles: every request made in cycle t is posted in the first evaluation phase of
// time t (cores post requests straight after a timed wait, or at time 0), so the bus decides a
// grant for cycle g only in a later delta of g, when every competitor for g is known.
void s2_bus::main() {
  const uint64_t L = static_cast<uint64_t>(m_ctl.cfg.mem_latency);
  bool settled = false;  // true in a delta of the current cycle after all its requests are posted
  for (;;) {
    if (m_pending.empty()) {
      wait(m_request_event);  // a delta notification: we run after the requests of this cycle
      settled = true;
    }
    const uint64_t now = now_cycle();
    const uint64_t g = std::max(now, m_free);
    if (g > now) {
      wait(cycles(g - now));
      settled = false;
    }
    if (!settled) {
      wait(SC_ZERO_TIME);
      settled = true;
    }
    if (g >= m_ctl.limit) {
      // The run stops (fault or cycle limit) before any waiting request can be granted.
      for (mem_request* rq : m_pending) {
        rq->grant_cycle = NEVER;
        m_granted[rq->core].notify();
      }
      m_pending.clear();
      continue;
    }
    const size_t k = arbiter->arbitrate(m_pending, g);
    mem_request* rq = m_pending[k];
    m_pending.erase(m_pending.begin() + static_cast<std::ptrdiff_t>(k));
    rq->counts = memory->access(*rq);  // the access takes effect at g
    rq->grant_cycle = g;
    m_free = g + L;
    m_ctl.log(g, *rq->pc - 1, rq->core, s2::TraceKind::GRANT, g - rq->request_cycle);
    m_granted[rq->core].notify();
    settled = false;
    if (m_ctl.vcd) {
      grant[rq->core].write(true);
      owner.write(static_cast<unsigned>(rq->core));
      busy.write(true);
      wait(half_cycle());
      grant[rq->core].write(false);
      wait(cycles(L) - half_cycle());
      wait(SC_ZERO_TIME);
      settled = true;
      if (m_pending.empty()) busy.write(false);
    }
  }
}

}  // namespace s2sc
