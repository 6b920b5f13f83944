// The barrier of `sync` (docs/timing-model.md): it completes in the cycle c of the last arrival, or of the
// halt of the last core it was still waiting for (a halted core never blocks a barrier); every
// waiting core issues again at c + 1. Arrivals and halts are reported at their own cycle of
// simulated time, so "every running core has arrived" is decided in time order.
#pragma once

#include <vector>

#include "interfaces.h"

namespace s2sc {

class s2_barrier : public sc_core::sc_module, public s2_sync_if {
 public:
  s2_barrier(sc_core::sc_module_name name, int cores)
      : sc_module(name), m_live(cores), m_release(cores), m_done(cores, NEVER) {}

  uint64_t arrive(int core) override {
    m_waiting.push_back(core);
    if (!complete()) {
      m_done[core] = NEVER;
      wait(m_release[core]);
    }
    return m_done[core];
  }

  void halt(int) override {
    --m_live;
    complete();
  }

 private:
  bool complete() {
    if (m_waiting.empty() || static_cast<int>(m_waiting.size()) < m_live) return false;
    const uint64_t c = now_cycle();
    for (int k : m_waiting) {
      m_done[k] = c;
      m_release[k].notify();  // the core waiting in arrive() runs again in this evaluation phase
    }
    m_waiting.clear();
    return true;
  }

  int m_live;                          // cores that have not halted
  std::vector<int> m_waiting;          // cores that have arrived at the current barrier
  std::vector<sc_core::sc_event> m_release;
  std::vector<uint64_t> m_done;        // completion cycle handed to each released core
};

}  // namespace s2sc
