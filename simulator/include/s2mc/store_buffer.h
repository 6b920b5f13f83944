// A core's store buffer (consistency tso, pso; docs/timing-model.md, "Store buffers"): the
// component both engines use, next to the caches of coherence.h.
#pragma once

#include <cstdint>
#include <vector>

#include "s2_params.h"

namespace s2 {

// In the order of the consistency choices in simulator/params.toml.
enum class Consistency : uint8_t { SC, TSO, PSO };

struct SbEntry {
  uint32_t addr;
  int32_t value;
  uint32_t pc;      // of the store, for the drain's trace event
  uint64_t since;   // the cycle it entered: it may start draining from since + 1
};

class StoreBuffer {
 public:
  explicit StoreBuffer(uint32_t capacity = static_cast<uint32_t>(params::STORE_BUFFER_ENTRIES_DEFAULT))
      : cap_(capacity) { entries_.reserve(capacity); }
  bool empty() const { return entries_.empty(); }
  bool full() const { return entries_.size() >= cap_; }
  size_t size() const { return entries_.size(); }
  const SbEntry& at(int i) const { return entries_[static_cast<size_t>(i)]; }
  void push(uint32_t addr, int32_t value, uint32_t pc, uint64_t cycle) { entries_.push_back({addr, value, pc, cycle}); }
  // A load of addr: the value of the newest buffered store there (true), or false.
  bool forward(uint32_t addr, int32_t& value) const {
    for (size_t i = entries_.size(); i-- > 0;)
      if (entries_[i].addr == addr) { value = entries_[i].value; return true; }
    return false;
  }
  // The entry a drain starting at cycle c takes, or -1: tso the oldest; pso the lowest address
  // among the oldest entry of each address; either only if it entered before c.
  int choose(Consistency model, uint64_t c) const {
    if (entries_.empty()) return -1;
    if (model == Consistency::TSO) return entries_[0].since < c ? 0 : -1;
    int best = -1;
    for (size_t i = 0; i < entries_.size(); ++i) {
      const SbEntry& e = entries_[i];
      if (e.since >= c || (best >= 0 && e.addr >= entries_[static_cast<size_t>(best)].addr)) continue;
      bool oldest = true;   // no older entry to the same address
      for (size_t j = 0; j < i && oldest; ++j) oldest = entries_[j].addr != e.addr;
      if (oldest) best = static_cast<int>(i);
    }
    return best;
  }
  SbEntry take(int i) {
    const SbEntry e = entries_[static_cast<size_t>(i)];
    entries_.erase(entries_.begin() + i);
    return e;
  }

 private:
  uint32_t cap_;
  std::vector<SbEntry> entries_;   // oldest first
};

}  // namespace s2
