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

// An instruction whose issue touches only its core's registers and pc, and cannot fault.
static inline bool pure(const Uop& u) {
  switch (u.op) {
    case OP_DIV_IMM: case OP_MOD_IMM: case OP_DIV_REG: case OP_MOD_REG: case OP_FENCE: case OP_SYNC: case OP_TRAP:
    case OP_UNDEFINED:
      return false;
    default:
      return u.bus == BUS_NONE;
  }
}

// After an instruction that issued at t - 1, the core runs on from t through what it can decide
// now, as it would issue it, whatever the other cores and the bus do meanwhile (never while
// tracing: the log goes in cycle order): instructions that touch only its registers and cannot
// fault; a store to a buffer that has room now (drains only make more); and, when its buffer is
// empty (nothing to forward) and there are no caches (no lookup), a load, which becomes its
// request at its issue cycle. Never past a pause, nor while a breakpoint or watch is set (a stop
// found later in cycle order must see this core as it was then). Returns the cycle of the
// instruction it stopped before (RUNNING), or, after a load, of that request (PENDING).
uint64_t FastEngine::run_ahead(int id, uint64_t t) {
  Core& k = cores_[id];
  Buffered& b = sb_[static_cast<size_t>(id)];
  int32_t* r = k.r;
  const uint32_t n = static_cast<uint32_t>(prog_.size());
  uint64_t done = 0;
  while (!tracing_ && !breaking_ && t < cfg_.max_cycles && t < pause_ && k.pc < n) {
    const Uop& v = prog_[k.pc];
    if (pure(v)) {
      execute(r, k.pc, v, id, cfg_.cores);
    } else if (v.bus == BUS_WRITE || (v.bus == BUS_READ && b.buf.empty() && !cached_)) {
      if (v.bus == BUS_WRITE && b.buf.full()) break;
      const uint32_t a = mem_address(r, v);
      if (a >= cfg_.mem_words || (guarded_ && StackGuard(stacks_, id).violates(a))) break;   // faults in order
      ++done;
      if (v.bus == BUS_READ) {
        k.t = t;
        k.req_addr = a;
        k.status = Status::PENDING;
        break;
      }
      const int32_t value = store_value(r, v, a);
      if (v.op == OP_PUSH) r[v.d1] = static_cast<int32_t>(a);
      b.buf.push(a, value, k.pc, t);
      k.pc += 1;
      ++t;
      continue;
    } else {
      break;
    }
    ++t;
    ++done;
  }
  k.s.instructions += done;
  return t;
}

// Step 1 for core id at cycle c: issue its next instruction (or hold it back). False on a fault.
bool FastEngine::buffered_issue(int id, uint64_t c) {
  Core& k = cores_[id];
  Buffered& b = sb_[static_cast<size_t>(id)];
  int32_t* r = k.r;
  k.t = c;
  if (k.pc >= prog_.size()) { fault(id, FaultKind::PC_OUT_OF_RANGE); return false; }
  const Uop& u = prog_[k.pc];
  if (u.op == OP_UNDEFINED) { fault(id, FaultKind::UNDEFINED_OPCODE); return false; }
  const bool drains = u.op == OP_FENCE || u.op == OP_XCHG || u.op == OP_SYNC || u.op == OP_TRAP;
  const bool store = u.bus == BUS_WRITE;
  if (b.buf.holds(drains, store, c)) {   // held back: tries again at c + 1
    b.next = c + 1;
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
      b.next = c + 1;
      return true;
    }
  }
  if (u.op == OP_FENCE) { sb_log(c, here, id, TraceKind::ISSUE); k.pc += 1; ++k.s.instructions; b.next = c + 1; return true; }
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
        b.next = c + cfg_.cache.hit_latency;
        return true;
      }
      sb_log(c, here, id, TraceKind::REQUEST, 0, a);
      k.req_addr = a;
      k.status = Status::PENDING;
      return true;
    }
    case Next::CONTINUE: ++k.s.instructions; b.next = run_ahead(id, c + 1); return true;
    case Next::PRINT: output_.push_back({c, id, trap_text(r, u)}); ++k.s.instructions; b.next = c + 1; return true;
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

// Step 1b: each core with a free drain port starts draining an entry that entered before c; with
// caches a write hit takes effect now, else the drain requests the bus.
void FastEngine::start_drains(uint64_t c) {
  for (int id = 0; id < cfg_.cores; ++id) {
    Buffered& b = sb_[static_cast<size_t>(id)];
    const int i = b.buf.drain_ready(cfg_.consistency, c);
    if (i < 0) continue;
    if (cached_ && caches_.lookup(id, BUS_WRITE, b.buf.at(i).addr, false)) {
      const SbEntry e = b.buf.drain_hit(i, c, cfg_.cache.hit_latency);
      sb_log(c, e.pc, id, TraceKind::DRAIN_HIT, 0, e.addr, mem_[e.addr], e.value);
      sb_log_changes(c, e.pc);
      const int32_t before = mem_[e.addr];
      mem_[e.addr] = e.value;
      if (breaking_ && watching(e.addr)) note_write(id, e.pc, e.addr, before, c, true);
      CoreStats& s = cores_[id].s;
      ++s.store_drains;
      ++s.mem_writes;
      continue;
    }
    b.buf.drain_request(i, c);
  }
}

// Step 2: the bus, free at c, goes to one core's own request or its drain's (they take turns).
void FastEngine::buffered_grant(uint64_t c) {
  const int N = cfg_.cores;
  int win = -1;
  uint64_t win_since = NEVER;
  bool win_drain = false;
  auto rank = [&](int i) -> uint64_t {   // lower wins; fifo ranks by request cycle, then id
    switch (cfg_.arbitration) {
      case Arbitration::FIXED: return static_cast<uint64_t>(i);
      case Arbitration::BURST4:
        return (i == last_grant_ && burst_streak_ >= BURST_LIMIT ? 1ull << 32 : 0) + static_cast<uint64_t>(i);
      case Arbitration::ROUND_ROBIN: return static_cast<uint64_t>(((i - last_grant_ - 1) % N + N) % N);
      default: return 0;
    }
  };
  for (int i = 0; i < N; ++i) {
    const Core& k = cores_[i];
    const Buffered& b = sb_[static_cast<size_t>(i)];
    uint64_t since;
    bool drain = false;
    const bool own = k.status == Status::PENDING && k.t <= c;   // a request run ahead waits for its cycle
    if (b.buf.drain_competes(own)) { since = b.buf.drain_since(); drain = true; }
    else if (own) since = k.t;
    else continue;
    const bool better = win < 0 || (cfg_.arbitration == Arbitration::FIFO ? since < win_since : rank(i) < rank(win));
    if (better) { win = i; win_since = since; win_drain = drain; }
  }
  if (win < 0) return;
  Core& k = cores_[win];
  Buffered& b = sb_[static_cast<size_t>(win)];
  uint64_t D = static_cast<uint64_t>(cfg_.mem_latency);
  if (win_drain) {
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
  } else {
    b.buf.own_granted();
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
    b.next = c + D;
  }
  k.s.mem_accesses += 1;
  k.s.bus_busy_cycles += D;
  bus_free_ = c + D;
  burst_streak_ = win == last_grant_ ? burst_streak_ + 1 : 1;
  last_grant_ = win;
  drain_last_ = win_drain;
}

// Simulates the cycles before `pause` (see advance()): true when it paused there, false when the
// run ended (every core halted, a fault, or the cycle limit).
bool FastEngine::run_buffered(uint64_t pause) {
  const int N = cfg_.cores;
  if (sb_.empty()) {
    for (int i = 0; i < N; ++i) {
      sb_.emplace_back();
      sb_.back().buf = StoreBuffer(cfg_.store_buffer_entries);
    }
  }
  uint64_t c = sb_cycle_;
  for (;;) {
    if (c >= cfg_.max_cycles || fault_.kind != FaultKind::NONE) return false;
    // pause_: a watched write lowers it to the cycle after; a breakpoint stops before cycle c
    if (c >= std::min(pause, pause_) || (breaking_ && c >= break_from_ && sb_breaks(c))) {
      pause_ = std::min({pause, pause_, c});
      sb_cycle_ = c;
      return true;
    }
    // step 1, counting the cores that halted or wait at the barrier. A fault ends the run after its
    // cycle, as without store buffers: the other cores still issue, drain and get the bus in it.
    int halted = 0, synced = 0;
    for (int i = 0; i < N; ++i) {
      const Status st = cores_[i].status;
      if (st == Status::RUNNING && sb_[static_cast<size_t>(i)].next == c) buffered_issue(i, c);
      halted += cores_[i].status == Status::HALTED;
      synced += cores_[i].status == Status::SYNC;
    }
    if (halted == N) return false;
    start_drains(c);
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
      }
    }
    if (fault_.kind != FaultKind::NONE) return false;
    // the next cycle in which something can happen
    uint64_t next = NEVER;
    bool waiting = false;
    for (int i = 0; i < N; ++i) {
      const Core& k = cores_[i];
      const Buffered& b = sb_[static_cast<size_t>(i)];
      if (k.status == Status::RUNNING) next = std::min(next, b.next);
      if (k.status == Status::PENDING) next = std::min(next, std::max({k.t, bus_free_, c + 1}));
      waiting |= b.buf.waiting();
      if (!b.buf.empty() && !b.buf.waiting()) next = std::min(next, std::max(b.buf.port_free(), c + 1));
    }
    if (waiting) next = std::min(next, std::max(bus_free_, c + 1));
    if (next == NEVER) return false;   // nothing can happen any more (the result says why)
    c = std::max(next, c + 1);
  }
}

}  // namespace s2
