#include "interconnect.h"

#include <stdexcept>
#include <string>

namespace s2sc {

using namespace sc_core;

s2_network::s2_network(sc_module_name name, run_control& ctl, std::vector<int32_t>& memory)
    : sc_module(name), m_ctl(ctl), m_request(static_cast<size_t>(ctl.cfg.cores), nullptr),
      m_waits(static_cast<size_t>(ctl.cfg.cores), waits::NOTHING), m_done(static_cast<size_t>(ctl.cfg.cores)),
      m_drain(static_cast<size_t>(ctl.cfg.cores)), m_drained(static_cast<size_t>(ctl.cfg.cores)),
      m_retry(static_cast<size_t>(ctl.cfg.cores), 0) {
  m_dir = s2::make_directory(ctl.cfg, ctl.net, &memory, static_cast<s2::DirectoryHost*>(this));
  SC_METHOD(cycle);
  sensitive << m_wake;
  dont_initialize();
}

void s2_network::wake_at(uint64_t c) { notify_at(m_wake, c); }

// Called in the core's thread, at or before its access's cycle.
uint64_t s2_network::access(mem_request& rq) {
  const uint64_t now = now_cycle();
  // With store buffers the core posts in cycle t itself, before step 3 (see ready()).
  if (rq.request_cycle < now || (rq.request_cycle == now && (m_ctl.cfg.buffered() ? m_stepped == now : now != 0)))
    throw std::logic_error("network access for cycle " + std::to_string(rq.request_cycle) + " posted at cycle " +
                           std::to_string(now) + " (internal timing error)");
  const size_t k = static_cast<size_t>(rq.core);
  m_request[k] = &rq;
  m_waits[k] = waits::ISSUE;
  wake_at(rq.request_cycle);
  wait(m_done[k]);
  return rq.grant_cycle;
}

void s2_network::halted(int) {
  m_last_halt = now_cycle();
  if (++m_halted == m_ctl.cfg.cores) wake_at(m_last_halt + 1);   // the first cycle that may be quiet
}

// Called in the core's thread at t (now): returns once steps 1 and 2 of t are done.
void s2_network::ready(int, uint64_t t) {
  while (m_begun != t) {
    wake_at(t);
    wait(m_began);
  }
}

uint64_t s2_network::drained(int core) {
  wait(m_drained[static_cast<size_t>(core)]);
  return m_retry[static_cast<size_t>(core)];
}

void s2_network::left(int core, uint64_t retry) {
  m_retry[static_cast<size_t>(core)] = retry;
  m_drained[static_cast<size_t>(core)].notify();   // the held core runs again in this evaluation phase
}

void s2_network::answer(int core, uint64_t g, uint64_t span) {
  const size_t k = static_cast<size_t>(core);
  m_request[k]->grant_cycle = g;
  m_request[k]->span = span;
  m_request[k] = nullptr;
  m_waits[k] = waits::NOTHING;
  m_done[k].notify();   // the core runs again in this evaluation phase
}

void s2_network::stop() {
  for (int i = 0; i < m_ctl.cfg.cores; ++i)
    if (m_waits[static_cast<size_t>(i)] != waits::NOTHING) answer(i, NEVER, 0);
}

void s2_network::cycle() {
  const uint64_t c = now_cycle();
  const int n = m_ctl.cfg.cores;
  if (m_stepped != NEVER && c <= m_stepped) return;   // woken again in a cycle already stepped
  if (m_halted == n && c > m_last_halt) {
    // After the last halt (the fast engine's loop after its run): those cycles are not counted.
    m_stepped = c;
    if (!m_dir->busy(c)) {
      m_quiet = c;
      m_dir->write_back_all();
      return;
    }
    m_dir->deliver(c);
    m_dir->homes(c);
    m_dir->net().step(c);
    return wake_at(c + 1);
  }
  if (c >= m_ctl.limit) return stop();   // a fault or the cycle limit
  const bool buffered = m_ctl.cfg.buffered();
  if (!buffered || m_begun != c) {
    m_dir->deliver(c);   // 1. deliveries
    m_dir->homes(c);     // 2. the homes
  }
  if (buffered && m_begun != c) {   // the cores look at their buffers and issue at c, one delta later
    m_begun = c;
    m_settled = false;
    m_began.notify(SC_ZERO_TIME);
    return m_wake.notify(SC_ZERO_TIME);
  }
  if (buffered && !m_settled) {   // ... while this process waits one more
    m_settled = true;
    return m_wake.notify(SC_ZERO_TIME);
  }
  m_stepped = c;
  for (int i = 0; i < n; ++i) {   // 3. the accesses of c, in core order
    const size_t k = static_cast<size_t>(i);
    if (m_waits[k] == waits::ISSUE && m_request[k]->request_cycle == c) issue(i, c);
  }
  if (buffered && m_ctl.fault.kind == s2::FaultKind::NONE) {   // 3b. the drains, in core order
    for (int i = 0; i < n; ++i) {
      const size_t k = static_cast<size_t>(i);
      if (m_drain[k].start(i, m_ctl.buffers[k], *m_dir, m_ctl.cfg, c, m_waits[k] == waits::MISS, m_ctl.drain_stats[k]))
        left(i, c + 1);
    }
  }
  for (int i : m_strings) {   // trap #3 prints the coherent string once every core has issued
    m_request[static_cast<size_t>(i)]->text = m_dir->text(m_request[static_cast<size_t>(i)]->address);
    answer(i, c, 1);
  }
  m_strings.clear();
  m_dir->net().step(c);   // 5. the network
  uint64_t next = m_dir->next_event(c);
  for (int i = 0; i < n; ++i) {
    const size_t k = static_cast<size_t>(i);
    if (m_waits[k] == waits::ISSUE) next = std::min(next, m_request[k]->request_cycle);
    if (buffered) next = std::min(next, m_drain[k].wake(m_ctl.buffers[k], c));
  }
  // The cycle after the last halt, where the quiet check starts (halted() asked for it, but a
  // delta-cycle wake-up above may have replaced that notification).
  if (m_halted == n) next = std::min(next, std::max(m_last_halt + 1, c + 1));
  if (next != NEVER) wake_at(std::max(next, c + 1));
}

void s2_network::issue(int core, uint64_t c) {
  mem_request& rq = *m_request[static_cast<size_t>(core)];
  if (rq.kind == s2::BUS_STRING) {   // read after every core has issued (cycle())
    m_strings.push_back(core);
    return;
  }
  const size_t k = static_cast<size_t>(core);
  const bool buffered = m_ctl.cfg.buffered();
  int32_t* word = nullptr;
  switch (m_dir->access(core, rq.kind != s2::BUS_READ, rq.address, c, word,
                        !buffered || m_drain[k].own_may_miss(m_ctl.buffers[k]))) {
    case s2::Directory::HIT:
      rq.miss = false;
      rq.rdata = s2::memory_word(rq.kind, 0, rq.wdata, word);   // on the core's copy of the word
      return answer(core, c, m_ctl.cfg.cache.hit_latency);
    case s2::Directory::MISS:
      rq.miss = true;
      m_waits[k] = waits::MISS;
      if (buffered) m_drain[k].own_missed(m_ctl.buffers[k]);
      return;
    default:   // the line is in the eviction buffer, or the request must wait: it issues again at c + 1
      rq.request_cycle = c + 1;
      return;
  }
}

// Called by the directory in step 1: the miss's access takes effect now, on the requester's copy.
// A drain's GetM: its store takes effect, its entry leaves, and a held instruction issues at c.
void s2_network::complete(int core, int32_t* word, uint64_t c) {
  const size_t k = static_cast<size_t>(core);
  if (m_ctl.cfg.buffered() && m_drain[k].out()) {
    m_drain[k].complete(m_ctl.buffers[k], word, c, m_ctl.drain_stats[k]);
    return left(core, c);
  }
  mem_request& rq = *m_request[static_cast<size_t>(core)];
  rq.rdata = s2::memory_word(rq.kind, 0, rq.wdata, word);
  answer(core, c, 1);
}

s2::NetworkedResult s2_network::counters() const {
  s2::NetworkedResult out;
  s2::collect_counters(*m_dir, m_ctl.cfg.cores, m_quiet, out);
  return out;
}

}  // namespace s2sc
