// The fast engine with store buffers (consistency tso, pso; docs/timing-model.md, "Store buffers").
//
// A buffered core's drains compete for the bus while the core runs on, so the free-running scheme
// of fast_engine.cpp (a core runs alone until it needs the bus) does not hold. This loop steps the
// machine cycle by cycle in the order of the rules, skipping the cycles in which nothing can happen.
#include <algorithm>
#include <limits>

#include "s2mc/fast_engine.h"

namespace s2 {

namespace {
constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();
}

// An instruction whose issue touches only its core's registers and pc, and cannot fault (a division
// can: execute() then changes nothing and says so).
static inline bool pure(const Uop& u) {
  switch (u.op) {
    case OP_FENCE: case OP_SYNC: case OP_TRAP: case OP_UNDEFINED:
      return false;
    default:
      return u.bus == BUS_NONE;
  }
}

// After an instruction that issued at t - 1, the core runs on from t through what it can decide
// now, as it would issue it, whatever the other cores and the bus do meanwhile (never while
// tracing, as the log goes in cycle order, or with a breakpoint or watch set, nor past a pause,
// where the state must be the cycle-stepped machine's): instructions that touch only its registers and cannot
// fault; a store to a buffer that has room now (drains only make more); and, without caches (no
// lookup), a load whose address is in none of its buffered stores: only its own stores enter the
// buffer, all of them before t, so none serves the load at t either, and it becomes its request
// at its issue cycle (the arbiter ignores it until then, and the core's drains compete meanwhile).
// Returns the cycle of the instruction it stopped before (RUNNING), or, after a load, of that
// request (PENDING). Inline (as the other helpers of this loop): a call to a function of the
// library from within it would go through the PLT.
inline uint64_t FastEngine::run_ahead(int id, uint64_t t) {
  if (tracing_ || breaking_) return t;
  Core& k = cores_[id];
  StoreBuffer& buf = sb_[static_cast<size_t>(id)].buf;
  int32_t* const r = k.r;
  const Uop* const prog = prog_.data();
  const uint32_t n = static_cast<uint32_t>(prog_.size());
  const uint64_t lim = std::min(limit_, pause_);   // never past a pause or a fault's cycle
  uint32_t pc = k.pc;   // a local: the register writes below could alias the member
  uint64_t done = 0;
  for (; t < lim && pc < n; ++t, ++done) {
    const Uop& v = prog[pc];
    if (pure(v)) {
      if (execute(r, pc, v, id, cfg_.cores) != Next::CONTINUE) break;   // a division by zero, in order
      continue;
    }
    if (v.bus != BUS_WRITE && (v.bus != BUS_READ || cached_)) break;
    if (v.bus == BUS_WRITE && buf.full()) break;
    const uint32_t a = mem_address(r, v);
    if (a >= cfg_.mem_words || (guarded_ && StackGuard(stacks_, id).violates(a))) break;   // faults in order
    if (v.bus == BUS_READ) {
      int32_t buffered;
      if (buf.forward(a, buffered)) break;   // served at t or by memory: depends on when that store drains
      ++done;
      k.t = t;
      k.req_addr = a;
      k.status = Status::PENDING;
      break;
    }
    const int32_t value = store_value(r, v, a);
    if (v.op == OP_PUSH) r[v.d1] = static_cast<int32_t>(a);
    buf.push(a, value, pc, t);
    pc += 1;
  }
  k.pc = pc;
  k.s.instructions += done;
  return t;
}

// Step 1 for core id at cycle c: issue its next instruction (or hold it back). False on a fault.
inline bool FastEngine::buffered_issue(int id, uint64_t c) {
  Core& k = cores_[id];
  Buffered& b = sb_[static_cast<size_t>(id)];
  int32_t* r = k.r;
  k.t = c;
  if (k.pc >= prog_.size()) { fault(id, FaultKind::PC_OUT_OF_RANGE); return false; }
  const Uop& u = prog_[k.pc];
  if (u.op == OP_UNDEFINED) { fault(id, FaultKind::UNDEFINED_OPCODE); return false; }
  const bool drains = u.op == OP_FENCE || u.op == OP_XCHG || u.op == OP_SYNC || u.op == OP_TRAP;
  const bool store = u.bus == BUS_WRITE;
  if (b.buf.holds(drains, store, c)) {
    // Held back: nothing but its own drains can let it go, so it tries again in the cycle after
    // an entry leaves (let_go), not in every cycle.
    b.next = NEVER;
    return true;
  }
  (store ? k.s.store_buffer_full_stalls : k.s.fence_stall_cycles) += b.buf.held_cycles(c);
  const uint32_t here = k.pc;
  if (store || u.bus == BUS_READ) {
    const uint32_t a = mem_address(r, u);
    if (a >= cfg_.mem_words) { fault(id, FaultKind::ADDRESS_OUT_OF_RANGE, a); return false; }
    if (guarded_ && StackGuard(stacks_, id).violates(a)) { fault(id, FaultKind::STACK_OVERFLOW, a); return false; }
    if (store) {
      const int32_t v = store_value(r, u, a);
      if (u.op == OP_PUSH) r[u.d1] = static_cast<int32_t>(a);
      const int32_t before = mem_[a];
      b.buf.push(a, v, here, c);
      sb_log(c, here, id, TraceKind::BUFFER, b.buf.size(), a, before, v);
      k.pc += 1;
      ++k.s.instructions;
      b.next = run_ahead(id, c + 1);
      return true;
    }
    int32_t v;
    if (b.buf.forward(a, v)) {
      writeback(r, k.pc, u, a, v);
      sb_log(c, here, id, TraceKind::FORWARD, 0, a, v, v);
      ++k.s.store_forwards;
      ++k.s.mem_reads;
      ++k.s.instructions;
      b.next = run_ahead(id, c + 1);
      return true;
    }
  }
  if (u.op == OP_FENCE) {
    sb_log(c, here, id, TraceKind::ISSUE);
    k.pc += 1;
    ++k.s.instructions;
    b.next = run_ahead(id, c + 1);
    return true;
  }
  const Next nx = execute(r, k.pc, u, id, cfg_.cores);
  if (nx != Next::MEMORY && nx != Next::UNDEFINED)
    sb_log(c, here, id, nx == Next::SYNC ? TraceKind::SYNC : nx == Next::HALT ? TraceKind::HALT : TraceKind::ISSUE);
  switch (nx) {
    case Next::MEMORY: {
      const uint32_t a = mem_address(r, u);
      if (a >= cfg_.mem_words) { fault(id, FaultKind::ADDRESS_OUT_OF_RANGE, a); return false; }
      if (guarded_ && StackGuard(stacks_, id).violates(a)) { fault(id, FaultKind::STACK_OVERFLOW, a); return false; }
      ++k.s.instructions;
      if (cached_ && u.bus != BUS_STRING && caches_.lookup(id, u.bus, a)) {
        const int32_t before = mem_[a];
        const AccessCount ac = mem_access(r, k.pc, u, a, mem_.data(), cfg_.mem_words, nullptr);
        if (breaking_ && watched(u, a)) note_write(id, here, a, before, c);
        sb_log(c, here, id, TraceKind::HIT, 0, a, before, mem_[a]);
        sb_log_changes(c, here);
        k.s.mem_reads += ac.reads;
        k.s.mem_writes += ac.writes;
        b.next = run_ahead(id, c + cfg_.cache.hit_latency);
        return true;
      }
      sb_log(c, here, id, TraceKind::REQUEST, 0, a);
      k.req_addr = a;
      k.status = Status::PENDING;
      return true;
    }
    case Next::CONTINUE: ++k.s.instructions; b.next = run_ahead(id, c + 1); return true;
    case Next::PRINT:
      output_.push_back({c, id, trap_text(r, u)});
      ++k.s.instructions;
      b.next = run_ahead(id, c + 1);
      return true;
    case Next::SYNC: ++k.s.instructions; k.status = Status::SYNC; return true;
    case Next::HALT:
      ++k.s.instructions;
      k.status = Status::HALTED;
      k.s.finish_cycle = c + 1;
      if (tracing_) trace_->close(id);
      return true;
    case Next::DIV_ZERO: fault(id, FaultKind::DIVISION_BY_ZERO); return false;
    default: fault(id, FaultKind::UNDEFINED_OPCODE); return false;
  }
}

// Step 1b for core id by cycle c: its drain starts at s = drain_start() when s <= c. With caches
// the loop visits s (the lookup there sees the caches as they are at s: s == c), and a write hit
// takes effect now; else the drain requests the bus at s. Without caches nothing depends on the
// start but that request, so the grant (the next event at which anyone can see it) starts it
// then, as of s, and so does a pause.
inline void FastEngine::start_drain(int id, uint64_t c) {
  Buffered& b = sb_[static_cast<size_t>(id)];
  const uint64_t s = b.buf.drain_start();
  if (s > c) return;
  const int i = b.buf.choose(cfg_.consistency, s);
  if (cached_ && caches_.lookup(id, BUS_WRITE, b.buf.at(i).addr, false)) {
    const SbEntry e = b.buf.drain_hit(i, c, cfg_.cache.hit_latency);
    sb_log(c, e.pc, id, TraceKind::DRAIN_HIT, 0, e.addr, mem_[e.addr], e.value);
    sb_log_changes(c, e.pc);
    const int32_t before = mem_[e.addr];
    mem_[e.addr] = e.value;
    if (breaking_ && watching(e.addr)) note_write(id, e.pc, e.addr, before, c, true);
    CoreStats& st = cores_[id].s;
    ++st.store_drains;
    ++st.mem_writes;
    let_go(b, c);
    return;
  }
  b.buf.drain_request(i, s);
}

// Keeps the loop's view of core id (sb_wake_, sb_own_, sb_drain_, sb_bus_, sb_turn_) after a change to it.
inline void FastEngine::sb_update(int id) {
  const Core& k = cores_[id];
  const StoreBuffer& buf = sb_[static_cast<size_t>(id)].buf;
  const size_t i = static_cast<size_t>(id);
  sb_wake_[i] = k.status == Status::RUNNING ? sb_[i].next : NEVER;
  sb_own_[i] = k.status == Status::PENDING ? k.t : NEVER;
  sb_drain_[i] = buf.waiting() ? buf.drain_since() : cached_ ? NEVER : buf.drain_start();
  if (cached_) sb_wake_[i] = std::min(sb_wake_[i], buf.drain_start());
  sb_bus_[i] = std::min(sb_own_[i], sb_drain_[i]);
  sb_turn_[i] = buf.own_last();
}

// Step 2: the bus, free at c, goes to one core's own request or its drain's (they take turns).
inline void FastEngine::buffered_grant(uint64_t c) {
  const int N = cfg_.cores;
  const uint64_t* own = sb_own_.data();
  const uint64_t* drn = sb_drain_.data();
  const uint8_t* turn = sb_turn_.data();
  // Whether core i competes at c with its drain (else with its own request, if any).
  auto drains = [&](int i) { return drn[i] <= c && (own[i] > c || turn[i]); };
  // The cycle of core i's request at c, NEVER if it has none (no branch: the scans below are the
  // loop's hottest part, and which cores compete changes every grant).
  auto since = [&](int i) {
    const uint64_t s = drains(i) ? drn[i] : own[i];
    return s <= c ? s : NEVER;
  };
  int win = -1;
  if (cfg_.arbitration == Arbitration::FIFO) {   // the earliest request cycle, then the lowest id
    uint64_t win_since = NEVER;
    for (int i = 0; i < N; ++i) {
      const uint64_t s = since(i);
      win = s < win_since ? i : win;
      win_since = std::min(win_since, s);
    }
  } else {
    // fixed and burst4 scan from core 0, round-robin from the core after the last grantee;
    // burst4 passes over the last grantee after BURST_LIMIT grants in a row, unless it is alone.
    const int start = cfg_.arbitration == Arbitration::ROUND_ROBIN ? last_grant_ + 1 : 0;
    const int skip = cfg_.arbitration == Arbitration::BURST4 && burst_streak_ >= BURST_LIMIT ? last_grant_ : -1;
    for (int j = 0; j < N && win < 0; ++j) {
      const int i = start + j < N ? start + j : start + j - N;
      if (i != skip && since(i) != NEVER) win = i;
    }
    if (win < 0 && skip >= 0 && since(skip) != NEVER) win = skip;
  }
  if (win < 0) return;
  Core& k = cores_[win];
  Buffered& b = sb_[static_cast<size_t>(win)];
  uint64_t D = static_cast<uint64_t>(cfg_.mem_latency);
  const bool win_drain = drains(win);
  if (win_drain) {
    if (!b.buf.waiting()) {   // without caches: started as of its cycle, now
      b.buf.drain_request(b.buf.choose(cfg_.consistency, drn[win]), drn[win]);
    }
    const uint64_t waited = c - b.buf.drain_since();
    Caches::Grant x{XA_NONE, 0};
    if (cached_) {
      x = caches_.transact(win, BUS_WRITE, b.buf.draining().addr);
      D = x.span;
    }
    const SbEntry e = b.buf.drain_granted(c, D);
    sb_log(c, e.pc, win, TraceKind::DRAIN, waited, e.addr, mem_[e.addr], e.value, x.xact, x.xact ? x.span : 0);
    sb_log_changes(c, e.pc);
    const int32_t before = mem_[e.addr];
    mem_[e.addr] = e.value;
    if (breaking_ && watching(e.addr)) note_write(win, e.pc, e.addr, before, c, true);
    ++k.s.store_drains;
    ++k.s.mem_writes;
    ++k.s.drain_bus_accesses;
    k.s.drain_bus_cycles += D;
    let_go(b, c);
  } else {
    b.buf.own_granted(drn[win] <= c);   // its drain waited (perhaps not started yet)
    const Uop& u = prog_[k.pc];
    const uint32_t here = k.pc;
    const int32_t before = mem_[k.req_addr];
    Caches::Grant x{XA_NONE, 0};
    AccessCount ac;
    if (u.bus == BUS_STRING) {
      std::string text;
      ac = mem_access(k.r, k.pc, u, k.req_addr, mem_.data(), cfg_.mem_words, &text);
      output_.push_back({k.t, win, std::move(text)});
    } else {
      if (cached_) {
        x = caches_.transact(win, u.bus, k.req_addr);
        D = x.span;
      }
      ac = mem_access(k.r, k.pc, u, k.req_addr, mem_.data(), cfg_.mem_words, nullptr);
      if (breaking_ && watched(u, k.req_addr)) note_write(win, here, k.req_addr, before, c);
    }
    if (x.xact != XA_NONE) {
      sb_log(c, here, win, TraceKind::XGRANT, c - k.t, k.req_addr, before, mem_[k.req_addr], x.xact, x.span);
      sb_log_changes(c, here);
    } else {
      sb_log(c, here, win, TraceKind::GRANT, c - k.t, k.req_addr, before, mem_[k.req_addr]);
    }
    k.s.mem_reads += ac.reads;
    k.s.mem_writes += ac.writes;
    k.s.bus_wait_cycles += c - k.t;
    k.status = Status::RUNNING;
    b.next = run_ahead(win, c + D);
  }
  k.s.mem_accesses += 1;
  k.s.bus_busy_cycles += D;
  bus_free_ = c + D;
  burst_streak_ = win == last_grant_ ? burst_streak_ + 1 : 1;
  last_grant_ = win;
  drain_last_ = win_drain;
  sb_update(win);
}

// Simulates the cycles before `pause` (see advance()): true when it paused there, false when the
// run ended (every core halted, a fault, or the cycle limit). Visits only the cycles in which some
// core issues (or, with caches, starts a drain) or the bus can be granted, and in them only the
// cores concerned.
bool FastEngine::run_buffered(uint64_t pause) {
  const int N = cfg_.cores;
  if (sb_.empty()) {
    for (int i = 0; i < N; ++i) {
      sb_.emplace_back();
      sb_.back().buf = StoreBuffer(cfg_.store_buffer_entries);
    }
  }
  for (auto* v : {&sb_wake_, &sb_own_, &sb_drain_, &sb_bus_}) v->assign(static_cast<size_t>(N), NEVER);
  sb_turn_.assign(static_cast<size_t>(N), 0);
  for (int i = 0; i < N; ++i) sb_update(i);
  int halted = 0, synced = 0;   // the cores that halted or wait at the barrier
  for (const Core& k : cores_) {
    halted += k.status == Status::HALTED;
    synced += k.status == Status::SYNC;
  }
  uint64_t c = sb_cycle_;
  for (;;) {
    if (c >= cfg_.max_cycles || fault_.kind != FaultKind::NONE) return false;
    // pause_: a watched write lowers it to the cycle after; a breakpoint stops before cycle c
    if (c >= std::min(pause, pause_) || (breaking_ && c >= break_from_ && sb_breaks(c))) {
      pause_ = std::min({pause, pause_, c});
      // The state at the start of c, as the rules have it: the drains that started before c
      // without a visit (no caches) wait for the bus.
      for (int i = 0; i < N && !cached_ && c > 0; ++i) start_drain(i, c - 1);
      sb_cycle_ = c;
      return true;
    }
    // step 1. A fault ends the run after its cycle, as without store buffers: the other cores
    // still issue, drain and get the bus in it.
    for (int i = 0; i < N; ++i) {
      if (sb_wake_[static_cast<size_t>(i)] != c) continue;
      const Core& k = cores_[i];
      if (k.status == Status::RUNNING && sb_[static_cast<size_t>(i)].next == c) {
        buffered_issue(i, c);
        halted += k.status == Status::HALTED;
        synced += k.status == Status::SYNC;
      }
      if (!cached_) sb_update(i);
    }
    if (halted == N) return false;
    if (cached_) {   // step 1b: the drains that start now (without caches the grant starts them)
      for (int i = 0; i < N; ++i) {
        if (sb_wake_[static_cast<size_t>(i)] != c) continue;
        start_drain(i, c);
        sb_update(i);
      }
    }
    if (bus_free_ <= c) buffered_grant(c);   // a grant changes no core's SYNC or HALTED
    // step 3: the barrier completes when every core that has not halted has arrived
    if (synced > 0 && synced + halted == N) {
      for (int i = 0; i < N; ++i) {
        Core& k = cores_[i];
        if (k.status != Status::SYNC) continue;
        k.s.sync_wait_cycles += c - k.t;
        sb_log(c + 1, k.pc, i, TraceKind::RESUME, c - k.t);
        k.status = Status::RUNNING;
        sb_[static_cast<size_t>(i)].next = c + 1;
        sb_update(i);
      }
      synced = 0;
    }
    if (fault_.kind != FaultKind::NONE) return false;
    // the next cycle in which something can happen
    uint64_t wake = NEVER, bus = NEVER;
    for (int i = 0; i < N; ++i) {
      wake = std::min(wake, sb_wake_[static_cast<size_t>(i)]);
      bus = std::min(bus, sb_bus_[static_cast<size_t>(i)]);
    }
    const uint64_t next = std::min(wake, bus == NEVER ? NEVER : std::max(bus, bus_free_));
    if (next == NEVER) return false;   // nothing can happen any more (the result says why)
    c = std::max(next, c + 1);
  }
}

}  // namespace s2
