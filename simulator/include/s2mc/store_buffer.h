// A core's store buffer (consistency tso, pso; docs/timing-model.md, "Store buffers"): the
// component both C++ engines use, next to the caches of coherence.h. It meets the core and the bus
// at the same interface in both:
//  - the core's side (step 1): holds() (rules 2 and 4), held_cycles(), push(), forward();
//  - the bus's side, the drain port (steps 1b and 2, rules 5-7): drain_ready(), then drain_hit()
//    or drain_request(); drain_competes() (the turns of rule 6), drain_granted(), own_granted().
// The engines decide only when they call it: the fast engine from its cycle-stepped loop
// (simulator/src/buffered.cpp), the SystemC engine from its core threads and its bus process.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "s2_params.h"

namespace s2 {

// In the order of the consistency choices in simulator/params.toml.
enum class Consistency : uint8_t { SC, TSO, PSO };

inline bool consistency_from_name(const std::string& name, Consistency& out) {
  return params::choice_from_name(name, params::CONSISTENCY_CHOICES, out);
}

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

  // -- the core's side (step 1) --
  // Whether the instruction issuing at c is held back: a draining one (fence, xchg, sync, a trap)
  // while entries wait, a store while the buffer is full. Remembers the first cycle it was.
  bool holds(bool draining, bool store, uint64_t c) {
    if (!((draining && !empty()) || (store && full()))) return false;
    if (held_ == NEVER) held_ = c;
    return true;
  }
  // The cycles the instruction issuing at c was held back (0: none); the next one starts afresh.
  uint64_t held_cycles(uint64_t c) {
    if (held_ == NEVER) return 0;
    const uint64_t n = c - held_;
    held_ = NEVER;
    return n;
  }

  // -- the bus's side: the drain port (steps 1b and 2) --
  // Step 1b at c: the entry a drain starts with (choose()), or -1 when the port is busy, a drain
  // already waits for the bus or no entry is ready.
  int drain_ready(Consistency model, uint64_t c) const {
    if (waiting() || port_free_ > c) return -1;
    return choose(model, c);
  }
  // Entry i is written at c without the bus (a cache hit), the port busy `busy` cycles: it leaves now.
  SbEntry drain_hit(int i, uint64_t c, uint64_t busy) {
    port_free_ = c + busy;
    return take(i);
  }
  // Entry i's drain requests the bus at c (kept while it waits: entries only leave by drains).
  void drain_request(int i, uint64_t c) {
    drain_ = i;
    drain_since_ = c;
  }
  bool waiting() const { return drain_ >= 0; }
  uint64_t drain_since() const { return drain_since_; }   // the cycle the waiting drain started
  const SbEntry& draining() const { return at(drain_); }
  // Step 2: the core competes with its drain rather than its own request (`own`: one waits for the
  // bus) when it has no own request or its last grant went to the own one while the drain waited.
  bool drain_competes(bool own) const { return waiting() && (!own || own_last_); }
  // The drain is granted at g and holds the bus D cycles: its entry leaves now.
  SbEntry drain_granted(uint64_t g, uint64_t D) {
    const SbEntry e = take(drain_);
    drain_ = -1;
    port_free_ = g + D;
    own_last_ = false;
    return e;
  }
  // The core's own request is granted: if its drain waited, the drain goes next.
  void own_granted() { own_last_ = waiting(); }
  // The same, for an engine that starts a drain only when it is granted (the fast engine without
  // caches): whether it had started (drain_start() <= the grant).
  void own_granted(bool drain_waited) { own_last_ = drain_waited; }
  bool own_last() const { return own_last_; }
  // The first cycle a drain can start (NEVER while one waits or the buffer is empty): the port is
  // free and the oldest entry entered before it (pso's choice includes that entry's address).
  uint64_t drain_start() const { return waiting() || empty() ? NEVER : std::max(port_free_, entries_[0].since + 1); }
  uint64_t port_free() const { return port_free_; }   // the first cycle a drain may start
  // For hosts that show the buffer (the debugger): the entry whose drain waits for the bus (-1:
  // none), and the cycle the instruction at the core's pc began to be held back (NEVER: it is not).
  int drain_index() const { return drain_; }
  uint64_t held_since() const { return held_; }

 private:
  static constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();
  SbEntry take(int i) {
    const SbEntry e = entries_[static_cast<size_t>(i)];
    entries_.erase(entries_.begin() + i);
    return e;
  }

  uint32_t cap_;
  std::vector<SbEntry> entries_;   // oldest first
  uint64_t held_ = NEVER;          // the cycle the instruction at the core's pc began to be held back
  int drain_ = -1;                 // the entry whose drain waits for the bus
  uint64_t drain_since_ = 0;       // ... since this cycle
  uint64_t port_free_ = 0;         // the drain port's next free cycle
  bool own_last_ = false;          // the core's last grant went to its own request while its drain waited
};

}  // namespace s2
