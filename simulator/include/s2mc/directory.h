// Directory coherence over a network (docs/timing-model.md, "Directory coherence over a network"):
// each tile's home (its slice of the directory and of memory) and each core's private cache with its
// cache controller, exchanging the Primer's MSI or MESI messages over a Network (network.h). The
// reference model is simulator/directory.py; this follows it table row by table row.
//
// What a core meets (the engine's side, one call each):
//   access(core, write, addr, c, word)  a load, store or xchg at issue, or a store buffer's drain:
//                                       HIT (word: where it takes effect, now), MISS (the request
//                                       is sent; the engine's complete() is called when it takes
//                                       effect) or WAIT (the line is in the eviction buffer, or a
//                                       miss may not send its request now: try again at c + 1)
//   deliver(c); homes(c)                steps 1 and 2 of cycle c (deliveries, then the homes)
//   net().step(c)                       step 5
// Unlike the bus machine's caches (coherence.h), which hold states only, every copy here holds its
// words, and messages carry them: a load reads the copy it was sent.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "coherence.h"  // CacheConfig, LineMap
#include "machine.h"    // TraceEvent
#include "core_set.h"
#include "network.h"
#include "s2_counters.h"

namespace s2 {

// The directory run's per-core counters: the network group of simulator/counters.toml.
struct NetworkStats {
#define S2_FIELD(name) uint64_t name = 0;
  S2_NETWORK_COUNTERS(S2_FIELD)
#undef S2_FIELD
};

// In the order the counters print them (simulator/directory.py MESSAGES).
enum MsgKind : uint8_t { GETS, GETM, PUTS, PUTE, PUTM, FWD_GETS, FWD_GETM, INV, INV_ACK, DATA, PUT_ACK, MSG_KINDS };

inline const char* message_name(unsigned k) {
  static const char* const names[MSG_KINDS] = {"GetS", "GetM", "PutS", "PutE", "PutM", "Fwd-GetS", "Fwd-GetM",
                                               "Inv", "Inv-Ack", "Data", "Put-Ack"};
  return k < MSG_KINDS ? names[k] : "?";
}
// In the event log a message kind is an Xact after the bus's (s2mc.simulator.trace.XACTS).
constexpr uint8_t MSG_XACT = XA_COUNT;

// What the engine does when a miss's access takes effect: perform it on `word` (the requester's copy).
class DirectoryHost {
 public:
  virtual void complete(int core, int32_t* word, uint64_t c) = 0;
  virtual uint32_t pc(int core) const = 0;   // the core's current instruction (for the event log)
  virtual ~DirectoryHost() = default;
};

class Directory {
 public:
  enum Lookup : uint8_t { HIT, MISS, WAIT };
  // Cache states (I .. M stable, then the transients) and directory states.
  enum CState : uint8_t { I, S, E, M, IS_D, IM_AD, IM_A, SM_AD, SM_A, MI_A, EI_A, SI_A, II_A };
  enum DState : uint8_t { D_I, D_S, D_M, D_SD };

  Directory(int cores, const CacheConfig& cache, uint32_t mem_latency, const Topology& topo,
            uint32_t router_latency, uint32_t link_latency, uint32_t flit_words, std::vector<int32_t>* mem,
            DirectoryHost* host)
      : N_(cores), W_(cache.line_words), lines_(cache.lines), ways_(cache.ways), sets_(cache.lines / cache.ways),
        L_(mem_latency), mesi_(cache.protocol == Protocol::MESI),
        net_(topo, router_latency, link_latency, flit_words, 1 + cache.line_words), mem_(mem), host_(host) {
    const size_t slots = static_cast<size_t>(cores) * lines_;
    way_.assign(slots, Way{});
    data_.assign(slots * W_, 0);
    clock_.assign(static_cast<size_t>(cores), 0);
    evicting_.assign(static_cast<size_t>(cores), {});
    stalled_.assign(static_cast<size_t>(cores), {});
    pending_.assign(static_cast<size_t>(cores), Pending{});
    homes_.assign(static_cast<size_t>(cores), Home{});
    stats_.assign(static_cast<size_t>(cores), NetworkStats{});
    invals_.assign(static_cast<size_t>(cores) + 1, 0);
  }

  Network& net() { return net_; }
  const Network& net() const { return net_; }
  const NetworkStats& stats(int core) const { return stats_[static_cast<size_t>(core)]; }
  uint64_t messages(unsigned kind) const { return by_type_[kind]; }
  // How many GetMs invalidated n copies (n = 0 .. cores).
  const std::vector<uint64_t>& invalidations() const { return invals_; }
  // -- what a debugger shows (docs/debugger.md, `dir`, `net`, `cache`) ------------------------------
  static const char* cache_state_name(uint8_t st) {
    static const char* const names[] = {"I", "S", "E", "M", "IS^D", "IM^AD", "IM^A", "SM^AD", "SM^A",
                                        "MI^A", "EI^A", "SI^A", "II^A"};
    return st < 13 ? names[st] : "?";
  }
  static const char* home_state_name(uint8_t st) {
    static const char* const names[] = {"I", "S", "M", "S^D"};
    return st < 4 ? names[st] : "?";
  }
  struct CopyView { bool valid; uint32_t line; uint8_t state; uint64_t use; };
  // Core k's way `slot` (set * ways + way), and the lines in its eviction buffer (line, state).
  CopyView slot(int k, uint32_t slot) const {
    const Way& w = way_.at(static_cast<size_t>(k) * lines_ + slot);
    return {w.valid, w.line, w.state, w.use};
  }
  const int32_t* slot_words(int k, uint32_t slot) const {   // the way's own copy of the line's words
    return &data_.at((static_cast<size_t>(k) * lines_ + slot) * W_);
  }
  std::vector<std::pair<uint32_t, uint8_t>> evicting(int k) const {
    std::vector<std::pair<uint32_t, uint8_t>> out;
    for (const Evicted& e : evicting_.at(static_cast<size_t>(k))) out.push_back({e.line, e.state});
    return out;
  }
  struct EntryView { uint8_t state; int owner; CoreSet sharers; };
  EntryView entry(uint32_t line) const {
    const Entry* e = entries_.find(line);
    return e != nullptr ? EntryView{e->state, e->owner, e->sharers} : EntryView{D_I, -1, CoreSet{}};
  }
  const std::vector<uint32_t>& home_queue(int h) const { return homes_.at(static_cast<size_t>(h)).queue; }
  uint64_t home_free(int h) const { return homes_.at(static_cast<size_t>(h)).free; }
  const std::vector<uint32_t>& stalled(int k) const { return stalled_.at(static_cast<size_t>(k)); }
  struct MsgView { uint8_t kind; uint32_t line; int src, dst, requester; bool to_home; uint64_t created; };
  MsgView message(uint32_t id) const {
    const Msg& m = msg_.at(id);
    return {m.kind, m.line, m.src, m.dst, m.requester, m.to_home, m.created};
  }
  uint32_t line_words() const { return W_; }
  size_t bytes() const {
    return sizeof(Directory) + way_.size() * sizeof(Way) + (data_.size() + words_.size()) * sizeof(int32_t) +
           msg_.size() * sizeof(Msg) + entries_.bytes() + net_.bytes();
  }

  int home_of(uint32_t line) const { return static_cast<int>(line % static_cast<uint32_t>(N_)); }

  // The event log (docs/timing-model.md, "The event log of a network"): with a log set, every event
  // of the caches, the homes and the network is appended to it in the order the reference model
  // logs them (simulator/directory.py); the engine orders them by (cycle, core).
  void enable_log(std::vector<TraceEvent>* log) {
    log_ = log;
    net_.record_grants(log ? &grants_ : nullptr);
  }
  // The states in the log: s2mc.simulator.trace.STATES, the bus's LineStates, then the transients.
  static uint8_t trace_state(uint8_t cache_state) {
    if (cache_state <= E) return cache_state;   // I, S, E
    return static_cast<uint8_t>(cache_state == M ? LS_M : LS_COUNT + cache_state - IS_D);
  }
  static uint8_t trace_dir_state(uint8_t dir_state) {
    static const uint8_t names[] = {LS_I, LS_S, LS_M, LS_COUNT + (II_A - IS_D) + 1};   // I, S, M, S^D
    return names[dir_state];
  }
  // Whether the last HIT was a store's silent E -> M.
  bool upgraded() const { return upgraded_; }

  // Step 5: every free output port grants; their grants logged router by router, in port order.
  void step_network(uint64_t c) {
    net_.step(c);
    if (!log_ || grants_.empty()) return;
    std::sort(grants_.begin(), grants_.end(), [](const Network::Grant& a, const Network::Grant& b) {
      return a.router != b.router ? a.router < b.router : a.port < b.port;
    });
    for (const Network::Grant& g : grants_)
      log_net(c, g.router, TraceKind::PORT, msg_[g.payload], g.flits | static_cast<uint32_t>(g.port) << 24);
    grants_.clear();
  }

  // Step 3: the access of a core's memory instruction at c (or step 3b: its drain's); a miss sends
  // its request only if may_miss (the core's one request is free).
  Lookup access(int k, bool write, uint32_t addr, uint64_t c, int32_t*& word, bool may_miss = true) {
    const uint32_t line = addr / W_;
    if (evicted(k, line) >= 0) return WAIT;   // wait for the Put-Ack that frees the line
    int64_t s = find(k, line);
    if (s >= 0) {
      const uint8_t st = way_[s].state;
      if (write ? (st == E || st == M) : (st == S || st == E || st == M || st == SM_AD || st == SM_A)) {
        touch(k, s);
        word = &data_[static_cast<size_t>(s) * W_ + addr % W_];
        ++stats_[static_cast<size_t>(k)].dir_hits;
        upgraded_ = write && st == E;
        if (upgraded_) way_[s].state = M;
        return HIT;
      }
      if (!may_miss) return WAIT;
    } else {
      if (!may_miss) return WAIT;
      s = victim(k, line);
      if (way_[s].valid) evict(k, s, c);
      way_[s].valid = true;
      way_[s].line = line;
      way_[s].state = I;
    }
    const uint8_t kind = write ? GETM : GETS;
    set_state(k, s, way_[s].state == S ? SM_AD : write ? IM_AD : IS_D, kind, c);
    pending_[static_cast<size_t>(k)] = Pending{c, addr, 0, false};
    ++stats_[static_cast<size_t>(k)].dir_misses;
    send(kind, k, home_of(line), line, k, c, NONE, true);
    return MISS;
  }

  // Step 1: the messages delivered at c (tiles in id order): to the home's queue, or handled by the
  // cache controller (then its stalled messages are retried).
  void deliver(uint64_t c) {
    for (const Packet& p : net_.delivered(c)) {
      Msg& m = msg_[p.payload];
      m.queued = p.queued;
      m.delivered = p.delivered;
      if (m.to_home) homes_[static_cast<size_t>(m.dst)].queue.push_back(p.payload);
      else at_cache(p.payload, c);
    }
  }

  // Step 2: every free home handles its oldest message that is not stalled.
  void homes(uint64_t c) {
    for (int h = 0; h < N_; ++h) {
      Home& home = homes_[static_cast<size_t>(h)];
      if (home.free > c || home.queue.empty()) continue;
      for (size_t i = 0; i < home.queue.size(); ++i) {
        const uint32_t id = home.queue[i];
        const uint8_t before = log_ ? entries_[msg_[id].line].state : 0;
        const int occupancy = home_handles(h, id, c);
        if (occupancy < 0) continue;
        if (log_) {
          const Msg& m = msg_[id];
          log_net(c, h, TraceKind::HOME, m, static_cast<uint32_t>(occupancy), trace_dir_state(before),
                  trace_dir_state(entries_[m.line].state));
        }
        home.queue.erase(home.queue.begin() + static_cast<std::ptrdiff_t>(i));
        home.free = c + static_cast<uint64_t>(occupancy);
        stats_[static_cast<size_t>(h)].home_busy_cycles += static_cast<uint64_t>(occupancy);
        release(id);
        break;
      }
    }
  }

  // The earliest cycle after c in which a delivery, a home or a port can act (NEVER: none).
  uint64_t next_event(uint64_t c) const {
    uint64_t next = net_.in_flight() ? net_.next_event(c) : Network::NEVER;
    for (const Home& h : homes_)
      if (!h.queue.empty()) next = std::min(next, std::max(h.free, c + 1));
    return next;
  }
  // Something is still in flight or a home is still busy at `now`.
  bool busy(uint64_t now) const {
    if (net_.in_flight()) return true;
    for (const Home& h : homes_)
      if (!h.queue.empty() || h.free > now) return true;
    return false;
  }

  // The coherent value of word a now: the writable copy's, else memory's.
  int32_t word(uint32_t a) const {
    const uint32_t line = a / W_;
    for (int k = 0; k < N_; ++k) {
      const int64_t s = find(k, line);
      if (s >= 0 && (way_[s].state == E || way_[s].state == M)) return data_[static_cast<size_t>(s) * W_ + a % W_];
    }
    return (*mem_)[a];
  }
  // Trap #3's string at a: the coherent words up to a 0 or the end of memory, a character each.
  std::string text(uint32_t a) const {
    std::string out;
    for (uint32_t i = a; i < mem_->size(); ++i) {
      const int32_t w = word(i);
      if (w == 0) break;
      out.push_back(static_cast<char>(w & 0xFF));
    }
    return out;
  }
  // Puts every writable copy's words into memory (at the end: the coherent memory).
  void write_back_all() {
    for (size_t s = 0; s < way_.size(); ++s)
      if (way_[s].valid && (way_[s].state == E || way_[s].state == M))
        std::copy(&data_[s * W_], &data_[s * W_] + W_, mem_->begin() + static_cast<std::ptrdiff_t>(way_[s].line) * W_);
  }

 private:
  static constexpr uint32_t NONE = ~0u;
  struct Way {
    uint32_t line = 0;
    bool valid = false;
    uint8_t state = I;
    uint64_t use = 0;
  };
  struct Evicted {
    uint32_t line;
    uint8_t state;
    std::vector<int32_t> data;
  };
  struct Pending {
    uint64_t issued = 0;
    uint32_t addr = 0;
    int64_t acks = 0;
    bool data = false;
  };
  // One protocol message. The latency split of the chain that led to it (docs/timing-model.md,
  // "Counters (directory runs)") is summed along as it goes, so a handled message can be freed.
  struct Msg {
    uint8_t kind = 0;
    bool to_home = false, from_home = false, exclusive = false;
    uint32_t line = 0;
    int src = 0, dst = 0, requester = 0;
    int64_t acks = 0;
    uint32_t data = NONE;   // a slot of words_ (Data, PutM)
    uint64_t created = 0, queued = 0, delivered = 0;
    // the chain before it: its messages' queueing, network and controller cycles; the root's creation
    uint64_t chain_q = 0, chain_n = 0, chain_h = 0, root = 0;
  };
  struct Home {
    std::vector<uint32_t> queue;
    uint64_t free = 0;
  };
  struct Entry {
    uint8_t state = D_I;
    int owner = -1;
    CoreSet sharers;
  };

  // -- messages ---------------------------------------------------------------------------------
  // Sends a message created at c, made while handling `parent` (NONE: a request); `words`: the line's.
  uint32_t send(uint8_t kind, int src, int dst, uint32_t line, int requester, uint64_t c, uint32_t parent,
                bool to_home, bool from_home = false, const int32_t* words = nullptr, int64_t acks = 0,
                bool exclusive = false) {
    uint32_t id;
    if (!free_msgs_.empty()) { id = free_msgs_.back(); free_msgs_.pop_back(); }
    else { id = static_cast<uint32_t>(msg_.size()); msg_.emplace_back(); }
    Msg m;
    m.kind = kind;
    m.to_home = to_home;
    m.from_home = from_home;
    m.exclusive = exclusive;
    m.line = line;
    m.src = src;
    m.dst = dst;
    m.requester = requester;
    m.acks = acks;
    m.created = c;
    if (parent == NONE) {
      m.root = c;
    } else {
      const Msg& p = msg_[parent];
      m.chain_q = p.chain_q + p.queued;
      m.chain_n = p.chain_n + (p.delivered - p.created - p.queued);
      m.chain_h = p.chain_h + (c - p.delivered);
      m.root = p.root;
    }
    if (words != nullptr) {
      if (free_words_.empty()) {
        m.data = static_cast<uint32_t>(words_.size() / W_);
        words_.resize(words_.size() + W_);
      } else {
        m.data = free_words_.back();
        free_words_.pop_back();
      }
      std::copy(words, words + W_, &words_[static_cast<size_t>(m.data) * W_]);
    }
    msg_[id] = m;
    const uint32_t w = words != nullptr ? 1 + W_ : 1;
    NetworkStats& st = stats_[static_cast<size_t>(src)];
    ++st.messages_sent;
    st.flits_sent += net_.flits(w);
    st.message_hops += static_cast<uint64_t>(net_.topology().hops(src, dst));
    ++by_type_[kind];
    net_.send(id, src, dst, w, c);
    if (log_) log_net(c, src, TraceKind::SEND, m, net_.flits(w));
    return id;
  }
  // A network event of tile (or router) `at`: the requester, the line's base, source and destination.
  void log_net(uint64_t c, int at, TraceKind kind, const Msg& m, uint32_t span, int32_t before, int32_t after) {
    log_->push_back({c, 0, static_cast<uint16_t>(at), kind, static_cast<uint8_t>(MSG_XACT + m.kind),
                     static_cast<uint64_t>(m.requester), m.line * W_, before, after, span});
  }
  void log_net(uint64_t c, int at, TraceKind kind, const Msg& m, uint32_t span) {
    log_net(c, at, kind, m, span, m.src, m.dst);
  }
  // A copy's state change in core k's cache or eviction buffer, caused by a message of `kind`.
  void log_state(int k, uint64_t c, uint32_t line, uint8_t from, uint8_t to, uint8_t kind) {
    log_->push_back({c, host_->pc(k), static_cast<uint16_t>(k), TraceKind::STATE, static_cast<uint8_t>(MSG_XACT + kind),
                     static_cast<uint64_t>(k), line * W_, trace_state(from), trace_state(to), 0});
  }
  // A cache way's state change (logged when the state changes).
  void set_state(int k, int64_t s, uint8_t to, uint8_t kind, uint64_t c) {
    if (log_ && way_[s].state != to) log_state(k, c, way_[s].line, way_[s].state, to, kind);
    way_[s].state = to;
  }
  void release(uint32_t id) {
    if (msg_[id].data != NONE) free_words_.push_back(msg_[id].data);
    free_msgs_.push_back(id);
  }
  const int32_t* words_of(const Msg& m) const { return &words_[static_cast<size_t>(m.data) * W_]; }
  // A message the tables say cannot arrive in this state (as the reference model, an internal error).
  [[noreturn]] void internal(const Msg& m, const char* where, int at, uint8_t st, uint64_t c) const {
    const bool at_home = where[0] == 'h';
    throw std::logic_error(std::string("internal: ") + message_name(m.kind) + " for line " + std::to_string(m.line) +
                           " reached " + where + " " + std::to_string(at) + " in state " +
                           (at_home ? home_state_name(st) : cache_state_name(st)) + " at cycle " +
                           std::to_string(c));
  }

  // -- the caches -------------------------------------------------------------------------------
  int64_t find(int k, uint32_t line) const {
    const int64_t base = static_cast<int64_t>(k) * lines_ + static_cast<int64_t>(line % sets_) * ways_;
    for (uint32_t w = 0; w < ways_; ++w)
      if (way_[base + w].valid && way_[base + w].line == line) return base + w;
    return -1;
  }
  // The way a fill of `line` takes: the lowest-numbered invalid way, else the least recently used.
  int64_t victim(int k, uint32_t line) const {
    const int64_t base = static_cast<int64_t>(k) * lines_ + static_cast<int64_t>(line % sets_) * ways_;
    for (uint32_t w = 0; w < ways_; ++w)
      if (!way_[base + w].valid) return base + w;
    int64_t v = base;
    for (uint32_t w = 1; w < ways_; ++w)
      if (way_[base + w].use < way_[v].use) v = base + w;
    return v;
  }
  void touch(int k, int64_t s) { way_[s].use = ++clock_[static_cast<size_t>(k)]; }
  int evicted(int k, uint32_t line) const {
    const std::vector<Evicted>& ev = evicting_[static_cast<size_t>(k)];
    for (size_t i = 0; i < ev.size(); ++i)
      if (ev[i].line == line) return static_cast<int>(i);
    return -1;
  }
  // The victim leaves its way for the eviction buffer and its Put goes to the home.
  void evict(int k, int64_t s, uint64_t c) {
    Way& w = way_[s];
    const uint8_t held = w.state == S ? SI_A : w.state == E ? EI_A : MI_A;
    const uint8_t kind = w.state == S ? PUTS : w.state == E ? PUTE : PUTM;
    const int32_t* d = &data_[static_cast<size_t>(s) * W_];
    if (log_) log_state(k, c, w.line, w.state, held, kind);
    evicting_[static_cast<size_t>(k)].push_back(Evicted{w.line, held, std::vector<int32_t>(d, d + W_)});
    send(kind, k, home_of(w.line), w.line, k, c, NONE, true, false, kind == PUTM ? d : nullptr);
    w.valid = false;
    w.state = I;
  }

  // -- step 1: the cache controllers ------------------------------------------------------------
  void at_cache(uint32_t id, uint64_t c) {
    const int k = msg_[id].dst;
    std::vector<uint32_t>& stalled = stalled_[static_cast<size_t>(k)];
    if (!cache_handles(id, c)) {
      stalled.push_back(id);
      return;
    }
    release(id);
    for (bool progress = true; progress;) {
      progress = false;
      for (size_t i = 0; i < stalled.size(); ++i) {
        const uint32_t s = stalled[i];
        if (cache_handles(s, c)) {
          stalled.erase(stalled.begin() + static_cast<std::ptrdiff_t>(i));
          release(s);
          progress = true;
          break;
        }
      }
    }
  }

  // The cache controller's table: false when the message must stall.
  bool cache_handles(uint32_t id, uint64_t c) {
    const Msg m = msg_[id];   // a copy: sending may grow msg_
    const int k = m.dst;
    int64_t s = find(k, m.line);
    int ev = s < 0 ? evicted(k, m.line) : -1;
    std::vector<Evicted>& evs = evicting_[static_cast<size_t>(k)];
    const uint8_t st = s >= 0 ? way_[s].state : ev >= 0 ? evs[static_cast<size_t>(ev)].state : static_cast<uint8_t>(I);
    auto change = [&](uint8_t to) {   // the copy in the cache or the eviction buffer; I frees a way
      if (s >= 0) {
        set_state(k, s, to, m.kind, c);
        if (to == I) way_[s].valid = false;
      } else {
        if (log_) log_state(k, c, m.line, st, to, m.kind);
        evs[static_cast<size_t>(ev)].state = to;
      }
    };
    const int home = home_of(m.line);
    switch (m.kind) {
      case INV: {
        if (st == IS_D) return false;
        const uint8_t to = st == S ? I : st == SM_AD ? IM_AD : st == SI_A ? II_A : 0xFF;
        if (to == 0xFF) internal(m, "core", k, st, c);
        send(INV_ACK, k, m.requester, m.line, m.requester, c, id, false);
        change(to);
        return true;
      }
      case FWD_GETS: case FWD_GETM: {
        if (st == IM_AD || st == IM_A || st == SM_AD || st == SM_A) return false;   // until our own access is done
        if (st != M && st != E && st != MI_A && st != EI_A) internal(m, "core", k, st, c);
        // the words to send, copied: sending may move the eviction buffer's vectors
        std::vector<int32_t> d = s >= 0 ? std::vector<int32_t>(&data_[static_cast<size_t>(s) * W_], &data_[static_cast<size_t>(s) * W_] + W_)
                                        : evs[static_cast<size_t>(ev)].data;
        send(DATA, k, m.requester, m.line, m.requester, c, id, false, false, d.data());
        uint8_t to;
        if (m.kind == FWD_GETS) {
          send(DATA, k, home, m.line, m.requester, c, id, true, false, d.data());
          to = (st == M || st == E) ? S : SI_A;
        } else {
          to = (st == M || st == E) ? I : II_A;
        }
        change(to);
        return true;
      }
      case PUT_ACK:
        if (st != MI_A && st != EI_A && st != SI_A && st != II_A) internal(m, "core", k, st, c);
        if (log_) log_state(k, c, m.line, st, I, m.kind);
        evs.erase(evs.begin() + ev);
        return true;
      case DATA: {
        if (s < 0 || (st != IS_D && st != IM_AD && st != SM_AD)) internal(m, "core", k, st, c);
        std::copy(words_of(m), words_of(m) + W_, &data_[static_cast<size_t>(s) * W_]);
        Pending& p = pending_[static_cast<size_t>(k)];
        if (st == IS_D) {
          set_state(k, s, m.exclusive ? E : S, m.kind, c);
          complete(k, s, m, c);
        } else {
          p.data = true;
          if (m.from_home) p.acks += m.acks;
          collect(k, s, m, c);
        }
        return true;
      }
      case INV_ACK:
        if (s < 0 || (st != IM_AD && st != IM_A && st != SM_AD && st != SM_A)) internal(m, "core", k, st, c);
        pending_[static_cast<size_t>(k)].acks -= 1;
        collect(k, s, m, c);
        return true;
      default:
        internal(m, "core", k, st, c);
    }
  }

  // A write miss's Data and Inv-Acks: M when the Data is in and no ack is outstanding.
  void collect(int k, int64_t s, const Msg& m, uint64_t c) {
    const Pending& p = pending_[static_cast<size_t>(k)];
    if (p.data && p.acks == 0) {
      set_state(k, s, M, m.kind, c);
      complete(k, s, m, c);
    } else if (p.data) {
      if (way_[s].state == IM_AD) set_state(k, s, IM_A, m.kind, c);
      else if (way_[s].state == SM_AD) set_state(k, s, SM_A, m.kind, c);
    }
  }

  // Core k's access takes effect at c, completed by message m; its latency split along m's chain.
  void complete(int k, int64_t s, const Msg& m, uint64_t c) {
    const Pending& p = pending_[static_cast<size_t>(k)];
    touch(k, s);
    NetworkStats& st = stats_[static_cast<size_t>(k)];
    st.miss_cycles += c - p.issued;
    st.miss_queueing_cycles += m.chain_q + m.queued;
    st.miss_network_cycles += m.chain_n + (m.delivered - m.created - m.queued);
    st.miss_home_cycles += m.chain_h + (m.root - p.issued);
    int32_t* word = &data_[static_cast<size_t>(s) * W_ + p.addr % W_];
    if (!log_) {
      host_->complete(k, word, c);
      return;
    }
    const uint32_t pc = host_->pc(k);
    const int32_t before = *word;
    host_->complete(k, word, c);
    log_->push_back({c, pc, static_cast<uint16_t>(k), TraceKind::DONE, static_cast<uint8_t>(MSG_XACT + m.kind),
                     c - p.issued, p.addr, before, *word, 0});
  }

  // -- step 2: the homes ------------------------------------------------------------------------
  // The directory's table: the home's occupancy, or -1 when the message must stall. Messages the
  // home sends are created at the end of the occupancy.
  int home_handles(int h, uint32_t id, uint64_t c) {
    const Msg m = msg_[id];
    Entry& e = entries_[m.line];
    const int R = m.requester, L = static_cast<int>(L_);
    int32_t* line_words = &(*mem_)[static_cast<size_t>(m.line) * W_];
    auto reply = [&](uint8_t kind, int dst, int occupancy, const int32_t* words = nullptr, int64_t acks = 0,
                     bool exclusive = false) {
      send(kind, h, dst, m.line, R, c + static_cast<uint64_t>(occupancy), id, false, true, words, acks, exclusive);
    };
    switch (m.kind) {
      case GETS:
        if (e.state == D_SD) return -1;
        if (e.state == D_M) {
          reply(FWD_GETS, e.owner, 1);
          e.state = D_SD;
          e.sharers.clear();
          e.sharers.set(e.owner);
          e.sharers.set(R);
          e.owner = -1;
          return 1;
        }
        if (e.state == D_I && mesi_) {
          reply(DATA, R, L, line_words, 0, true);
          e.state = D_M;
          e.owner = R;
        } else {
          reply(DATA, R, L, line_words);
          e.state = D_S;
          e.sharers.set(R);
        }
        return L;
      case GETM: {
        if (e.state == D_SD) return -1;
        if (e.state == D_M) {
          reply(FWD_GETM, e.owner, 1);
          e.owner = R;
          ++invals_[1];   // the owner's copy goes
          return 1;
        }
        CoreSet others = e.sharers;
        others.reset(R);
        const int n = others.count();
        reply(DATA, R, L, line_words, n);
        others.each([&](int o) { reply(INV, o, L); });
        stats_[static_cast<size_t>(h)].invalidations_sent += static_cast<uint64_t>(n);
        ++invals_[static_cast<size_t>(n)];
        e.state = D_M;
        e.owner = R;
        e.sharers.clear();
        return L;
      }
      case PUTS: case PUTM: case PUTE: {
        if ((m.kind == PUTM || m.kind == PUTE) && e.state == D_M && e.owner == R) {
          int occupancy = 1;
          if (m.kind == PUTM) {
            std::copy(words_of(m), words_of(m) + W_, line_words);
            occupancy = L;
          }
          reply(PUT_ACK, R, occupancy);
          e.state = D_I;
          e.owner = -1;
          return occupancy;
        }
        // a sharer's Put, or a stale one from a former owner
        if (e.state == D_S || e.state == D_SD) {
          e.sharers.reset(R);
          if (e.state == D_S && !e.sharers.any()) e.state = D_I;
        }
        reply(PUT_ACK, R, 1);
        return 1;
      }
      case DATA:
        if (e.state != D_SD) internal(m, "home", h, e.state, c);
        std::copy(words_of(m), words_of(m) + W_, line_words);   // the owner's answer to a Fwd-GetS
        e.state = D_S;
        return L;
      default:
        internal(m, "home", h, e.state, c);
    }
  }

  int N_;
  uint32_t W_, lines_, ways_, sets_, L_;
  bool mesi_;
  Network net_;
  std::vector<int32_t>* mem_;
  DirectoryHost* host_;
  std::vector<Way> way_;                       // core * lines + set * ways + way
  std::vector<int32_t> data_;                  // the ways' words, W a way
  std::vector<uint64_t> clock_;                // per core: the LRU clock
  std::vector<std::vector<Evicted>> evicting_;   // per core: the eviction buffer
  std::vector<std::vector<uint32_t>> stalled_;   // per core: messages its controller stalled
  std::vector<Pending> pending_;               // per core: its miss
  std::vector<Home> homes_;
  LineMap<Entry> entries_;                     // line -> its directory entry (at its home)
  std::vector<Msg> msg_;
  std::vector<uint32_t> free_msgs_;
  std::vector<int32_t> words_;                 // the words messages carry, W a slot
  std::vector<uint32_t> free_words_;
  std::vector<NetworkStats> stats_;
  uint64_t by_type_[MSG_KINDS] = {};
  std::vector<uint64_t> invals_;
  std::vector<TraceEvent>* log_ = nullptr;   // the event log, when on
  std::vector<Network::Grant> grants_;       // the grants of the cycle, when logging
  bool upgraded_ = false;
};

}  // namespace s2
