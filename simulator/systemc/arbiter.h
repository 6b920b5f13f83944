// The arbiter: a separate module with one entry point, so the policy is a swappable part
// (docs/timing-model.md): fifo (earliest request, ties to the lowest core id), fixed (lowest core id),
// round_robin (rotating priority starting after the last grantee), burst4 (fixed, but the last
// grantee goes last after s2::BURST_LIMIT grants in a row).
#pragma once

#include "interfaces.h"

namespace s2sc {

class s2_arbiter : public sc_core::sc_module, public s2_arbiter_if {
 public:
  s2_arbiter(sc_core::sc_module_name name, s2::Arbitration policy, int cores)
      : sc_module(name), m_policy(policy), m_cores(cores) {}

  size_t arbitrate(const std::vector<mem_request*>& pending, uint64_t g) override {
    size_t win = pending.size();
    int best = 0;
    for (size_t k = 0; k < pending.size(); ++k) {
      const mem_request& rq = *pending[k];
      if (rq.request_cycle > g) continue;  // not requesting yet
      int rank;  // lower wins
      switch (m_policy) {
        case s2::Arbitration::FIFO: rank = 0; break;
        case s2::Arbitration::FIXED: rank = rq.core; break;
        case s2::Arbitration::BURST4:
          rank = rq.core == m_last && m_streak >= s2::BURST_LIMIT ? rq.core + m_cores : rq.core;
          break;
        default: rank = (rq.core - m_last - 1 + 2 * m_cores) % m_cores; break;
      }
      if (win == pending.size() || better(rq, rank, *pending[win], best)) { win = k; best = rank; }
    }
    m_streak = pending[win]->core == m_last ? m_streak + 1 : 1;
    m_last = pending[win]->core;
    return win;
  }

 private:
  bool better(const mem_request& a, int rank_a, const mem_request& b, int rank_b) const {
    if (m_policy == s2::Arbitration::FIFO)
      return a.request_cycle != b.request_cycle ? a.request_cycle < b.request_cycle : a.core < b.core;
    return rank_a < rank_b;
  }

  s2::Arbitration m_policy;
  int m_cores;
  int m_last = -1;  // the last grantee, for round-robin and burst4
  int m_streak = 0;  // its grants in a row (burst4)
};

}  // namespace s2sc
