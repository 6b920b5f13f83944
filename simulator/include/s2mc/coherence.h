// Private data caches and their snooping coherence protocols (msi, mesi, moesi, dragon), defined
// once and shared by both engines, as semantics.h is for the instructions. The rules are those of
// docs/timing-model.md, "Caches and coherence": a lookup at issue (lookup()), and the transaction a
// missing access becomes, decided and performed at its grant (transact()).
//
// The caches hold states and tags only: the engines keep one array with the current value of every
// word, and a valid line's data is by construction that value. What each cache does is counted per
// core (CacheStats); with record(true) every state change is also kept for the engine's trace.
//
// Every miss is classified (docs/timing-model.md, "Miss classification"): cold, capacity or
// conflict (a shadow fully associative LRU cache per core tells them apart), or coherence, then
// true or false sharing by whether the new copy serves the core a word new to it. What a core has
// yet to receive is kept per line it ever held (History); the words a core writes while it holds a
// line are gathered in the slot (wmask_) and published to the other cores' histories only when the
// line leaves the core or another core's transaction touches it, so a hit never looks outside its
// own slot.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core_set.h"
#include "s2_counters.h"  // generated from simulator/counters.toml
#include "s2_params.h"  // generated from simulator/params.toml
#include "semantics.h"

namespace s2 {

// In the order of the `cache` choices of simulator/params.toml.
enum class Protocol : uint8_t { NONE, MSI, MESI, MOESI, DRAGON };
static_assert(params::CACHE_COUNT == 5, "the cache choices of simulator/params.toml and enum Protocol differ");

inline bool protocol_from_name(const std::string& name, Protocol& out) {
  return params::choice_from_name(name, params::CACHE_CHOICES, out);
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

// A hash map from a memory line's number to a value, with open addressing (linear probing; entries
// are never removed): no allocation per entry, so a miss's bookkeeping stays cheap, and a copy of
// the caches (the stepping history's snapshots) is a copy of two vectors.
template <class V> class LineMap {
 public:
  V* find(uint32_t line) { return const_cast<V*>(static_cast<const LineMap*>(this)->find(line)); }
  const V* find(uint32_t line) const {
    if (size_ == 0) return nullptr;
    for (size_t i = home(line);; i = (i + 1) & mask_) {
      if (keys_[i] == 0) return nullptr;
      if (keys_[i] == line + 1) return &vals_[i];
    }
  }
  // The value of `line`, inserted as V{} if absent.
  V& operator[](uint32_t line) {
    if (V* v = find(line)) return *v;
    if (2 * (size_ + 1) > keys_.size()) grow();
    size_t i = home(line);
    while (keys_[i] != 0) i = (i + 1) & mask_;
    keys_[i] = line + 1;
    vals_[i] = V{};
    ++size_;
    return vals_[i];
  }
  size_t size() const { return size_; }
  size_t bytes() const { return keys_.size() * (sizeof(uint32_t) + sizeof(V)); }

 private:
  size_t home(uint32_t line) const { return static_cast<size_t>((uint64_t{line} * 0x9E3779B97F4A7C15ull) >> 32) & mask_; }
  void grow() {
    std::vector<uint32_t> keys = std::move(keys_);
    std::vector<V> vals = std::move(vals_);
    const size_t n = keys.empty() ? 16 : 2 * keys.size();
    keys_.assign(n, 0);
    vals_.assign(n, V{});
    mask_ = n - 1;
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i)
      if (keys[i] != 0) (*this)[keys[i] - 1] = vals[i];
  }
  std::vector<uint32_t> keys_;  // line + 1; 0: empty
  std::vector<V> vals_;
  size_t mask_ = 0, size_ = 0;
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
    nw_ = (cfg.line_words + 63) / 64;
    flags_.assign(slots, 0);
    hslot_.assign(slots, 0);
    wmask_.assign(slots * nw_, 0);
    history_.resize(static_cast<size_t>(cores));
    last_.assign(static_cast<size_t>(cores), -1);
    // A fully associative cache is its own shadow: it has no conflict misses.
    shadowed_ = cfg.ways != cfg.lines;
    if (shadowed_) {
      sh_row_.assign(slots, 0);
      sh_prev_.assign(slots, NIL);
      sh_next_.assign(slots, NIL);
      sh_head_.assign(static_cast<size_t>(cores), NIL);
      sh_tail_.assign(static_cast<size_t>(cores), NIL);
      sh_size_.assign(static_cast<size_t>(cores), 0);
    }
  }

  const CacheConfig& config() const { return cfg_; }
  bool dragon() const { return cfg_.protocol == Protocol::DRAGON; }
  const CacheStats& stats(int core) const { return stats_[static_cast<size_t>(core)]; }
  // Puts core's cache counters into an engine's per-core counters (s2::CoreStats). At the end of a
  // run (ended) a coherence miss whose copy is still held and has not proved true sharing ends
  // there: it counts as false sharing; a paused run counts only the copies that have ended.
  template <class Stats> void copy_to(int core, Stats& s, bool ended) const {
    if (!cfg_.on()) return;
    const CacheStats& c = stats(core);
#define S2_COPY(name) s.name = c.name;
    S2_CACHE_COUNTERS(S2_COPY)
#undef S2_COPY
    if (!ended) return;
    const size_t base = static_cast<size_t>(core) * cfg_.lines;
    for (size_t i = base; i < base + cfg_.lines; ++i)
      if (state_[i] != LS_I && (flags_[i] & F_PENDING)) ++s.false_sharing_misses;
  }
  // Keep every state change of the next lookup() or transact() in changes() (for the trace and
  // the VCD waveforms).
  void record(bool on) { record_ = on; }
  const std::vector<StateChange>& changes() const { return changes_; }
  // About what the caches hold in memory, for the stepping history's budget (its snapshots copy them).
  size_t bytes() const {
    size_t n = sizeof(*this) + tag_.size() * sizeof(uint32_t) + state_.size() + use_.size() * sizeof(uint64_t) +
               clock_.size() * sizeof(uint64_t) + stats_.size() * sizeof(CacheStats) + flags_.size() +
               hslot_.size() * sizeof(uint32_t) + wmask_.size() * sizeof(uint64_t) +
               (sh_row_.size() + sh_prev_.size() + sh_next_.size()) * sizeof(uint32_t) +
               changes_.capacity() * sizeof(StateChange);
    for (const History& h : history_)
      n += h.index.bytes() + h.left.size() + h.shared.size() + h.node.size() * sizeof(uint32_t) +
           h.news.size() * sizeof(uint64_t);
    return n + seen_.bytes();
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
  // stalls = false: a store buffer's drain, which the core does not wait for (no hit stall).
  S2_INLINE bool lookup(int core, Bus bus, uint32_t addr, bool stalls = true) {
    if (record_) changes_.clear();
    const int64_t s = find(core, line_of(addr));
    if (s < 0) return false;
    if (bus != BUS_READ) {
      if (state_[s] == LS_E) set(core, s, LS_M, XA_PR_WR, core);  // written silently: no other copy
      else if (state_[s] != LS_M) return false;
    }
    access(core, s, bus, addr);
    CacheStats& st = stats_[static_cast<size_t>(core)];
    ++st.cache_hits;
    if (stalls) st.hit_stall_cycles += cfg_.hit_latency - 1;  // the cycles of a hit beyond its first
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
        access(R, present, bus, addr);
        return {XA_BUS_UPD, 1};
      }
      for (int j = 0; j < cores_; ++j) {
        if (j == R) continue;
        const int64_t o = find(j, line);
        if (o >= 0) invalidate(j, o, R, XA_BUS_UPGR);
      }
      set(R, present, LS_M, XA_BUS_UPGR, R);
      ++rs.bus_upgr;
      access(R, present, bus, addr);
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
      end_copy(R, v, LEFT_EVICTED);
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
      publish(j, o);  // the line is no longer that core's alone: what it wrote becomes the others' news
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
    tag_[v] = line;
    set(R, v, now, xact, R);
    begin_copy(R, v, line);
    access(R, v, bus, addr);
    return {xact, span};
  }

 private:
  static constexpr uint32_t NIL = ~0u;
  // How a line last left a core's cache (History::left), and a slot's copy (flags_).
  enum : uint8_t { LEFT_EVICTED = 1, LEFT_INVALIDATED = 2 };
  enum : uint8_t { F_PENDING = 1,  // a coherence miss's copy that has not served a new word yet
                   F_WATCH = 2 };  // the core's news of the line was not empty at the fill
  // Per core, every line it ever held (a row each): how the line last left (0 while it never did);
  // whether another core ever held it too; its node in the shadow cache (NIL: not there); its news,
  // the words another core wrote that this core has yet to receive (nw_ words of bits).
  struct History {
    LineMap<uint32_t> index;  // line -> row
    std::vector<uint8_t> left, shared;
    std::vector<uint32_t> node;
    std::vector<uint64_t> news;
  };

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
    end_copy(j, s, LEFT_INVALIDATED);
    set(j, s, LS_I, cause, by);
    ++stats_[static_cast<size_t>(j)].invalidations_received;
  }

  // The access of class `bus` to word addr, taking effect in core's slot s (a hit, an upgrade or
  // update, or the fill's own access): the LRU clocks, then the read (ld, pop, xchg), then the write.
  S2_INLINE void access(int core, int64_t s, Bus bus, uint32_t addr) {
    use_[s] = ++clock_[static_cast<size_t>(core)];
    // Again the line of the core's last access (not a fill: begin_copy forgets it): already the
    // shadow's most recent.
    if (shadowed_ && last_[static_cast<size_t>(core)] != s) {
      shadow_touch(core, s);
      last_[static_cast<size_t>(core)] = s;
    }
    const uint32_t off = addr & (cfg_.line_words - 1);
    if (bus != BUS_WRITE && (flags_[s] & F_WATCH)) read_news(core, s, off);
    if (bus != BUS_READ) wmask_[static_cast<size_t>(s) * nw_ + (off >> 6)] |= uint64_t{1} << (off & 63);
  }
  // A read of word `off` of a copy whose core had news of the line at the fill: a new word (not
  // since overwritten by the core itself) means the copy served it; its news is then all received.
  void read_news(int core, int64_t s, uint32_t off) {
    uint64_t* news = &history_[static_cast<size_t>(core)].news[static_cast<size_t>(hslot_[s]) * nw_];
    const uint64_t bit = uint64_t{1} << (off & 63);
    if (!(news[off >> 6] & bit) || (wmask_[static_cast<size_t>(s) * nw_ + (off >> 6)] & bit)) return;
    std::fill(news, news + nw_, 0);
    if (flags_[s] & F_PENDING) ++stats_[static_cast<size_t>(core)].true_sharing_misses;
    flags_[s] = 0;
  }
  // Core j's writes to the line in slot s since it last published them become news to every other
  // core that ever held the line, and are no longer news to j. Dragon never invalidates, so it has
  // no coherence misses and keeps no news.
  void publish(int j, int64_t s) {
    if (dragon()) return;
    uint64_t* mask = &wmask_[static_cast<size_t>(s) * nw_];
    if (!history_[static_cast<size_t>(j)].shared[hslot_[s]]) {  // nobody else to tell: no news either
      std::fill(mask, mask + nw_, 0);
      return;
    }
    if (std::all_of(mask, mask + nw_, [](uint64_t w) { return w == 0; })) return;
    const uint32_t line = tag_[s];
    seen_.find(line)->each([&](int k) {
      if (k == j) return;
      History& h = history_[static_cast<size_t>(k)];
      uint64_t* news = &h.news[static_cast<size_t>(*h.index.find(line)) * nw_];
      for (uint32_t i = 0; i < nw_; ++i) news[i] |= mask[i];
    });
    uint64_t* own = &history_[static_cast<size_t>(j)].news[static_cast<size_t>(hslot_[s]) * nw_];
    for (uint32_t i = 0; i < nw_; ++i) own[i] &= ~mask[i];
    std::fill(mask, mask + nw_, 0);
  }
  // A fill of `line` into core R's slot v: the miss's class, and the new copy's flags.
  void begin_copy(int R, int64_t v, uint32_t line) {
    CacheStats& rs = stats_[static_cast<size_t>(R)];
    History& h = history_[static_cast<size_t>(R)];
    uint8_t f = 0;
    const uint32_t* known = h.index.find(line);
    uint32_t row;
    if (!known) {
      ++rs.cold_misses;
      row = static_cast<uint32_t>(h.left.size());
      h.index[line] = row;
      h.left.push_back(0);
      h.node.push_back(NIL);
      h.news.resize(h.news.size() + nw_, 0);
      CoreSet& seen = seen_[line];
      h.shared.push_back(seen.any());
      seen.each([&](int k) {  // the first time another core holds it: now shared
        History& o = history_[static_cast<size_t>(k)];
        o.shared[*o.index.find(line)] = 1;
      });
      seen.set(R);
    } else {
      row = *known;
      if (h.left[row] == LEFT_INVALIDATED) {
        ++rs.coherence_misses;
        f = F_PENDING;
      } else if (shadowed_ && h.node[row] != NIL) {
        ++rs.conflict_misses;
      } else {
        ++rs.capacity_misses;
      }
      const uint64_t* news = &h.news[static_cast<size_t>(row) * nw_];
      if (std::any_of(news, news + nw_, [](uint64_t w) { return w != 0; })) f |= F_WATCH;
    }
    hslot_[v] = row;
    flags_[v] = f;
    last_[static_cast<size_t>(R)] = -1;
    std::fill(&wmask_[static_cast<size_t>(v) * nw_], &wmask_[static_cast<size_t>(v) * nw_] + nw_, 0);
  }
  // Core j's copy in slot s ends (`how`: evicted or invalidated): its writes are published, and a
  // coherence miss's copy that served no new word was a false-sharing miss.
  void end_copy(int j, int64_t s, uint8_t how) {
    publish(j, s);
    if (flags_[s] & F_PENDING) ++stats_[static_cast<size_t>(j)].false_sharing_misses;
    flags_[s] = 0;
    History& h = history_[static_cast<size_t>(j)];
    h.left[hslot_[s]] = how;
  }

  // The shadow cache of each core: fully associative, LRU, as many lines as the real one, seeing the
  // same accesses, never invalidated; nodes core * lines + n in a list from the most recently used
  // (sh_head_) on. A node keeps its line's History row, a row its node.
  void shadow_touch(int core, int64_t s) {
    const size_t c = static_cast<size_t>(core), base = c * cfg_.lines;
    std::vector<uint32_t>& node = history_[c].node;
    const uint32_t row = hslot_[s];
    uint32_t n = node[row];
    if (n != NIL) {
      if (n == sh_head_[c]) return;
      shadow_unlink(c, n);
    } else if (sh_size_[c] < cfg_.lines) {
      n = sh_size_[c]++;
    } else {  // the shadow's least recently used line leaves it
      n = sh_tail_[c];
      shadow_unlink(c, n);
      node[sh_row_[base + n]] = NIL;
    }
    sh_row_[base + n] = row;
    node[row] = n;
    sh_prev_[base + n] = NIL;
    sh_next_[base + n] = sh_head_[c];
    if (sh_head_[c] != NIL) sh_prev_[base + sh_head_[c]] = n;
    sh_head_[c] = n;
    if (sh_tail_[c] == NIL) sh_tail_[c] = n;
  }
  void shadow_unlink(size_t c, uint32_t n) {
    const size_t base = c * cfg_.lines;
    const uint32_t p = sh_prev_[base + n], q = sh_next_[base + n];
    if (p != NIL) sh_next_[base + p] = q; else sh_head_[c] = q;
    if (q != NIL) sh_prev_[base + q] = p; else sh_tail_[c] = p;
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
  // Miss classification. Per slot: the copy's flags, its row in its core's History, the words the
  // core wrote since it last published them (nw_ words of bits).
  uint32_t nw_ = 1;
  std::vector<uint8_t> flags_;
  std::vector<uint32_t> hslot_;
  std::vector<uint64_t> wmask_;
  std::vector<History> history_;                  // per core
  LineMap<CoreSet> seen_;   // line -> the cores that ever held it
  // The shadow caches (not kept when the cache is fully associative).
  bool shadowed_ = false;
  std::vector<uint32_t> sh_row_, sh_prev_, sh_next_, sh_head_, sh_tail_, sh_size_;
  std::vector<int64_t> last_;  // per core: the slot of its last access, -1 after a fill
  bool record_ = false;
  std::vector<StateChange> changes_;
};

}  // namespace s2
