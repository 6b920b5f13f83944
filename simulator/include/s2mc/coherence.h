// Private data caches and their snooping coherence protocols (msi, mesi, moesi, dragon), defined
// once and shared by both engines, as semantics.h is for the instructions. The rules are those of
// docs/timing-model.md, "Caches and coherence": a lookup at issue (lookup()), and the transaction a
// missing access becomes, decided and performed at its grant (transact()).
//
// The caches hold states and tags only: the engines keep one array with the current value of every
// word, and a valid line's data is by construction that value. What each cache does is counted per
// core (CacheStats); with record(true) every state change is also kept for the engine's trace.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "s2_counters.h"  // generated from simulator/counters.toml
#include "s2_params.h"  // generated from simulator/params.toml
#include "semantics.h"

namespace s2 {

// In the order of the `cache` choices of simulator/params.toml.
enum class Protocol : uint8_t { NONE, MSI, MESI, MOESI, DRAGON };
static_assert(params::CACHE_COUNT == 5, "the cache choices of simulator/params.toml and enum Protocol differ");

inline bool protocol_from_name(const std::string& name, Protocol& out) {
  for (int i = 0; i < params::CACHE_COUNT; ++i) {
    if (name == params::CACHE_CHOICES[i]) {
      out = static_cast<Protocol>(i);
      return true;
    }
  }
  return false;
}

// Line states of every protocol. I is "not present" (dragon has no I of its own).
enum LineState : uint8_t { LS_I, LS_S, LS_E, LS_O, LS_M, LS_SC, LS_SM, LS_COUNT };
inline const char* state_name(unsigned s) {
  static const char* const names[LS_COUNT] = {"I", "S", "E", "O", "M", "Sc", "Sm"};
  return s < LS_COUNT ? names[s] : "?";
}
// The states whose line differs from memory: evicting one writes it back.
inline bool dirty(uint8_t s) { return s == LS_M || s == LS_O || s == LS_SM; }

// Bus transactions, and the other causes of a state change (the trace's `grant <T> <D>` and
// `state <cause>` events).
enum Xact : uint8_t { XA_NONE, XA_BUS_RD, XA_BUS_RDX, XA_BUS_UPGR, XA_BUS_UPD, XA_BUS_RD_UPD, XA_EVICT, XA_PR_WR, XA_COUNT };
inline const char* xact_name(unsigned x) {
  static const char* const names[XA_COUNT] = {"", "BusRd", "BusRdX", "BusUpgr", "BusUpd", "BusRd+BusUpd", "evict", "PrWr"};
  return x < XA_COUNT ? names[x] : "?";
}

struct CacheConfig {
  Protocol protocol = static_cast<Protocol>(params::CACHE_DEFAULT);
  uint32_t lines = static_cast<uint32_t>(params::CACHE_LINES_DEFAULT);
  uint32_t ways = static_cast<uint32_t>(params::CACHE_WAYS_DEFAULT);
  uint32_t line_words = static_cast<uint32_t>(params::LINE_WORDS_DEFAULT);
  uint32_t hit_latency = static_cast<uint32_t>(params::CACHE_HIT_LATENCY_DEFAULT);
  bool on() const { return protocol != Protocol::NONE; }
};

// The problem with a cache shape, or "" (simulator/params.py checks the same first; this keeps the
// engines safe when called directly).
inline std::string cache_shape_problem(const CacheConfig& c, uint32_t mem_words) {
  auto pow2 = [](uint32_t v) { return v != 0 && (v & (v - 1)) == 0; };
  if (!pow2(c.lines)) return "cache-lines " + std::to_string(c.lines) + " is not a power of two";
  if (!pow2(c.ways)) return "cache-ways " + std::to_string(c.ways) + " is not a power of two";
  if (!pow2(c.line_words)) return "line-words " + std::to_string(c.line_words) + " is not a power of two";
  if (c.ways > c.lines) return "cache-ways " + std::to_string(c.ways) + " is more than cache-lines " + std::to_string(c.lines);
  if (c.line_words > mem_words) return "line-words " + std::to_string(c.line_words) + " is more than mem-words " + std::to_string(mem_words);
  return "";
}

// Per-core cache counters: the cache group of simulator/counters.toml (S2_CACHE_COUNTERS, generated),
// what each means: docs/timing-model.md, "Counters". Engines copy them into their CoreStats (copy_to).
struct CacheStats {
#define S2_FIELD(name) uint64_t name = 0;
  S2_CACHE_COUNTERS(S2_FIELD)
#undef S2_FIELD
};

// One state change, for the trace: `core`'s line at `line_addr` went from `from` to `to` because of
// `cause`, a transaction of core `by` (or its own eviction or silent E -> M).
struct StateChange {
  uint16_t core, by;
  uint8_t from, to, cause;
  uint32_t line_addr;
  uint32_t slot;  // where in core's cache: set * ways + way
};

class Caches {
 public:
  Caches() = default;
  Caches(const CacheConfig& cfg, int cores, uint32_t mem_words, uint32_t mem_latency)
      : cfg_(cfg), cores_(cores), L_(mem_latency) {
    if (!cfg.on()) return;
    sets_ = cfg.lines / cfg.ways;
    while ((1u << shift_) < cfg.line_words) ++shift_;
    const size_t slots = static_cast<size_t>(cores) * cfg.lines;
    tag_.assign(slots, 0);
    state_.assign(slots, LS_I);
    use_.assign(slots, 0);
    clock_.assign(static_cast<size_t>(cores), 0);
    stats_.assign(static_cast<size_t>(cores), CacheStats{});
    lost_.resize(static_cast<size_t>(cores));
    lost_count_.assign((mem_words >> shift_) + 1, 0);
  }

  const CacheConfig& config() const { return cfg_; }
  bool dragon() const { return cfg_.protocol == Protocol::DRAGON; }
  const CacheStats& stats(int core) const { return stats_[static_cast<size_t>(core)]; }
  // Puts core's cache counters into an engine's per-core counters (s2::CoreStats).
  template <class Stats> void copy_to(int core, Stats& s) const {
    if (!cfg_.on()) return;
    const CacheStats& c = stats(core);
#define S2_COPY(name) s.name = c.name;
    S2_CACHE_COUNTERS(S2_COPY)
#undef S2_COPY
  }
  // Keep every state change of the next lookup() or transact() in changes() (for the trace and
  // the VCD waveforms).
  void record(bool on) { record_ = on; }
  const std::vector<StateChange>& changes() const { return changes_; }
  // About what the caches hold in memory, for the stepping history's budget (its snapshots copy them).
  size_t bytes() const {
    size_t n = sizeof(*this) + tag_.size() * sizeof(uint32_t) + state_.size() + use_.size() * sizeof(uint64_t) +
               clock_.size() * sizeof(uint64_t) + stats_.size() * sizeof(CacheStats) +
               lost_count_.size() * sizeof(uint32_t) + changes_.capacity() * sizeof(StateChange);
    for (const auto& lost : lost_) n += lost.size() * (sizeof(uint32_t) + sizeof(Loss) + 2 * sizeof(void*));
    return n;
  }
  uint32_t line_of(uint32_t addr) const { return addr >> shift_; }

  // A slot of a core's cache, for hosts that show the caches: slot = set * ways + way.
  struct Line { uint32_t address; uint8_t state; uint64_t use; };
  Line line(int core, uint32_t slot) const {
    const size_t s = static_cast<size_t>(core) * cfg_.lines + slot;
    return {tag_[s] << shift_, state_[s], use_[s]};
  }

  // Rule 1: the lookup of core's access of class `bus` at `addr`, at its issue cycle. A hit takes effect
  // now (the engine performs the data access); false: the access requests the bus.
  S2_INLINE bool lookup(int core, Bus bus, uint32_t addr) {
    if (record_) changes_.clear();
    const int64_t s = find(core, line_of(addr));
    if (s < 0) return false;
    if (bus != BUS_READ) {
      if (state_[s] == LS_E) set(core, s, LS_M, XA_PR_WR, core);  // written silently: no other copy
      else if (state_[s] != LS_M) return false;
      wrote(core, addr);
    }
    use_[s] = ++clock_[static_cast<size_t>(core)];
    CacheStats& st = stats_[static_cast<size_t>(core)];
    ++st.cache_hits;
    st.hit_stall_cycles += cfg_.hit_latency - 1;  // the cycles of a hit beyond its first
    return true;
  }

  // Rule 2: the transaction a missed access becomes at its grant, performed (state changes and
  // counters of every cache); returns it and its bus time D. The engine then performs the access.
  struct Grant { uint8_t xact; uint32_t span; };
  Grant transact(int R, Bus bus, uint32_t addr) {
    if (record_) changes_.clear();
    const uint32_t line = line_of(addr);
    const bool write = bus != BUS_READ;
    CacheStats& rs = stats_[static_cast<size_t>(R)];
    const int64_t present = find(R, line);
    if (present >= 0) {  // a write to a line it may not write yet: no data moves
      use_[present] = ++clock_[static_cast<size_t>(R)];
      ++rs.cache_hits;
      if (dragon()) {
        bool others = false;
        for (int j = 0; j < cores_; ++j) {
          if (j == R) continue;
          const int64_t o = find(j, line);
          if (o < 0) continue;
          others = true;
          if (state_[o] == LS_SM) set(j, o, LS_SC, XA_BUS_UPD, R);
        }
        set(R, present, others ? LS_SM : LS_M, XA_BUS_UPD, R);
        ++rs.bus_upd;
        wrote(R, addr);
        return {XA_BUS_UPD, 1};
      }
      for (int j = 0; j < cores_; ++j) {
        if (j == R) continue;
        const int64_t o = find(j, line);
        if (o >= 0) invalidate(j, o, R, XA_BUS_UPGR);
      }
      set(R, present, LS_M, XA_BUS_UPGR, R);
      ++rs.bus_upgr;
      wrote(R, addr);
      return {XA_BUS_UPGR, 1};
    }
    // A fill. First room: the lowest-numbered invalid way, else the least recently used.
    const uint32_t W = cfg_.line_words;
    uint32_t span = 0;
    const int64_t base = static_cast<int64_t>(R) * cfg_.lines + static_cast<int64_t>(line & (sets_ - 1)) * cfg_.ways;
    int64_t v = -1;
    for (uint32_t w = 0; w < cfg_.ways && v < 0; ++w)
      if (state_[base + w] == LS_I) v = base + w;
    if (v < 0) {
      v = base;
      for (uint32_t w = 1; w < cfg_.ways; ++w)
        if (use_[base + w] < use_[v]) v = base + w;
      if (dirty(state_[v])) {
        ++rs.writebacks;
        span += L_ + W - 1;
      }
      set(R, v, LS_I, XA_EVICT, R);
    }
    const Protocol p = cfg_.protocol;
    const uint8_t xact = p == Protocol::DRAGON ? (write ? XA_BUS_RD_UPD : XA_BUS_RD) : (write ? XA_BUS_RDX : XA_BUS_RD);
    bool others = false, from_cache = false;
    for (int j = 0; j < cores_; ++j) {
      if (j == R) continue;
      const int64_t o = find(j, line);
      if (o < 0) continue;
      others = true;
      const uint8_t st = state_[o];
      if (p == Protocol::MSI || p == Protocol::MESI) {
        if (st == LS_M) {  // flushes: the data to R, and memory picks it up (a write-back)
          from_cache = true;
          ++stats_[static_cast<size_t>(j)].writebacks;
        }
        if (xact == XA_BUS_RDX) invalidate(j, o, R, xact);
        else if (st == LS_M || st == LS_E) set(j, o, LS_S, xact, R);
      } else if (p == Protocol::MOESI) {
        from_cache |= st == LS_M || st == LS_O;  // the owner supplies; memory stays stale
        if (xact == XA_BUS_RDX) invalidate(j, o, R, xact);
        else if (st == LS_M) set(j, o, LS_O, xact, R);
        else if (st == LS_E) set(j, o, LS_S, xact, R);
      } else {
        from_cache |= st == LS_M || st == LS_SM;
        // BusRd: M -> Sm, E -> Sc; the update of BusRd+BusUpd then makes every other copy Sc.
        if (xact == XA_BUS_RD_UPD) set(j, o, LS_SC, xact, R);
        else if (st == LS_M) set(j, o, LS_SM, xact, R);
        else if (st == LS_E) set(j, o, LS_SC, xact, R);
      }
    }
    span += from_cache ? W : L_ + W - 1;
    uint8_t now;
    switch (xact) {
      case XA_BUS_RDX: now = LS_M; ++rs.bus_rdx; break;
      case XA_BUS_RD_UPD:
        now = others ? LS_SM : LS_M;
        ++rs.bus_rd;
        if (others) { ++rs.bus_upd; span += 1; }
        break;
      default:
        now = p == Protocol::MSI ? LS_S : others ? (p == Protocol::DRAGON ? LS_SC : LS_S) : LS_E;
        ++rs.bus_rd;
    }
    ++rs.cache_misses;
    if (from_cache) ++rs.cache_to_cache;
    auto& lost = lost_[static_cast<size_t>(R)];
    const auto it = lost.find(line);
    if (it != lost.end()) {  // a coherence miss; false sharing unless the invalidator wrote this word since
      ++rs.coherence_misses;
      const uint32_t off = addr & (W - 1);
      if (!((it->second.written[off >> 6] >> (off & 63)) & 1)) ++rs.false_sharing_misses;
      lost.erase(it);
      --lost_count_[line];
    }
    tag_[v] = line;
    set(R, v, now, xact, R);
    use_[v] = ++clock_[static_cast<size_t>(R)];
    if (write) wrote(R, addr);
    return {xact, span};
  }

 private:
  // A line lost to another core's invalidation: by whom, and the words of the line that core wrote
  // from its invalidating access on (a bit per word).
  struct Loss { int by; std::vector<uint64_t> written; };

  // The slot holding `line` in core's cache, or -1.
  S2_INLINE int64_t find(int core, uint32_t line) const {
    const int64_t base = static_cast<int64_t>(core) * cfg_.lines + static_cast<int64_t>(line & (sets_ - 1)) * cfg_.ways;
    for (uint32_t w = 0; w < cfg_.ways; ++w)
      if (state_[base + w] != LS_I && tag_[base + w] == line) return base + w;
    return -1;
  }
  void set(int core, int64_t s, uint8_t to, uint8_t cause, int by) {
    if (record_ && state_[s] != to)
      changes_.push_back({static_cast<uint16_t>(core), static_cast<uint16_t>(by), state_[s], to, cause, tag_[s] << shift_,
                          static_cast<uint32_t>(s - static_cast<int64_t>(core) * cfg_.lines)});
    state_[s] = to;
  }
  void invalidate(int j, int64_t s, int by, uint8_t cause) {
    const uint32_t line = tag_[s];
    set(j, s, LS_I, cause, by);
    ++stats_[static_cast<size_t>(j)].invalidations_received;
    auto& lost = lost_[static_cast<size_t>(j)];
    auto it = lost.find(line);
    if (it == lost.end()) {
      ++lost_count_[line];
      it = lost.emplace(line, Loss{by, {}}).first;
    }
    it->second.by = by;
    it->second.written.assign((cfg_.line_words + 63) / 64, 0);
  }
  // A write by `core` to word addr: noted by every cache that lost the line to that core. Most
  // lines are lost by nobody, and one look at lost_count_ says so.
  void wrote(int core, uint32_t addr) {
    const uint32_t line = line_of(addr);
    if (lost_count_[line] == 0) return;
    const uint32_t off = addr & (cfg_.line_words - 1);
    for (auto& lost : lost_) {
      const auto it = lost.find(line);
      if (it != lost.end() && it->second.by == core) it->second.written[off >> 6] |= uint64_t{1} << (off & 63);
    }
  }

  CacheConfig cfg_;
  int cores_ = 0;
  uint32_t L_ = 0;
  uint32_t sets_ = 1, shift_ = 0;
  // Slot core * lines + set * ways + way: the line's number (address / W), state and last use.
  std::vector<uint32_t> tag_;
  std::vector<uint8_t> state_;
  std::vector<uint64_t> use_;
  std::vector<uint64_t> clock_;  // per core: its accesses so far (hits and fills), for LRU
  std::vector<CacheStats> stats_;
  // Per core: the lines it lost to another core's invalidation (coherence and false-sharing misses).
  std::vector<std::unordered_map<uint32_t, Loss>> lost_;
  std::vector<uint32_t> lost_count_;  // per memory line: the caches that keep a Loss of it
  bool record_ = false;
  std::vector<StateChange> changes_;
};

}  // namespace s2
