// The `fast` engine (see fast_engine.h for the idea, docs/timing-model.md for the rules it implements).
#include "s2mc/fast_engine.h"

#include <algorithm>
#include <limits>

namespace s2 {

namespace {
constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();
}

FastEngine::FastEngine(const Image& image, const Config& cfg)
    : cfg_(cfg), mem_(cfg.mem_words, 0), cores_(cfg.cores), limit_(cfg.max_cycles), entry_(image.entry),
      stacks_(image.stacks), guarded_(image.stacks.count != 0), cached_(cfg.cache.on()),
      caches_(cfg.cache, cfg.cores, cfg.mem_words, static_cast<uint32_t>(cfg.mem_latency)) {
  prog_.reserve(image.code.size());
  for (uint32_t w : image.code) prog_.push_back(predecode(w));
  std::copy(image.data.begin(), image.data.begin() + std::min<size_t>(image.data.size(), mem_.size()), mem_.begin());
  for (auto& c : cores_) c.pc = entry_;
  for (int i = 0; i < MAX_CORES; ++i) req_[i] = i < cfg_.cores ? 0 : NEVER;
}

// Performs core id's access, granted at g and requested at t_req, advancing its pc; returns the
// cycle its next instruction issues. Both the scheduler and the on-the-spot grant use it.
// Cached: a data access is a coherence transaction of bus time D (trap #3 stays uncached, L).
template <bool Cached>
__attribute__((always_inline)) inline uint64_t FastEngine::access(int id, const Uop& u, uint32_t addr, uint64_t t_req, uint64_t g, uint32_t& pc) {
  Core& c = cores_[id];
  uint64_t D = static_cast<uint64_t>(cfg_.mem_latency);
  const uint32_t here = pc;
  const int32_t before = tracing_ ? mem_[addr] : 0;  // for the trace: the word before and after the access
  AccessCount ac;
  Caches::Grant x{XA_NONE, 0};
  if (__builtin_expect(u.bus == BUS_STRING, 0)) {
    std::string text;
    ac = mem_access(c.r, pc, u, addr, mem_.data(), cfg_.mem_words, &text);
    output_.push_back({t_req, id, std::move(text)});
  } else {
    if (Cached) {
      x = caches_.transact(id, u.bus, addr);
      D = x.span;
    }
    ac = mem_access(c.r, pc, u, addr, mem_.data(), cfg_.mem_words, nullptr);
  }
  if (tracing_) {
    if (Cached && x.xact != XA_NONE) {
      TraceEvent e{g, here, static_cast<uint16_t>(id), TraceKind::XGRANT, x.xact, g - t_req, addr, before, mem_[addr],
                   x.span};
      trace_->push(e);
      log_changes(g, here, id);
    } else {
      log(g, here, id, TraceKind::GRANT, g - t_req, addr, before, mem_[addr]);
    }
  }
  c.s.mem_reads += ac.reads;
  c.s.mem_writes += ac.writes;
  c.s.mem_accesses += 1;
  c.s.bus_wait_cycles += g - t_req;
  c.s.bus_busy_cycles += D;
  bus_free_ = g + D;
  burst_streak_ = id == last_grant_ ? burst_streak_ + 1 : 1;
  last_grant_ = id;
  return g + D;
}

// The earliest cycle at which any core other than `id` could request the bus: a running core
// may request as soon as its next issue cycle, a pending one at its request cycle.
uint64_t FastEngine::bound_excluding(int id) const {
  uint64_t b = NEVER;
  for (int i = 0; i < cfg_.cores; ++i) b = std::min(b, i == id ? NEVER : req_[i]);
  return b;
}

void FastEngine::fault(int id, FaultKind kind, uint32_t address) {
  Core& c = cores_[id];
  set_status(id, Status::STOPPED);
  // Keep the earliest fault by (cycle, core), as a cycle-stepped machine would meet it first.
  if (fault_.kind == FaultKind::NONE || c.t < fault_.cycle || (c.t == fault_.cycle && id < fault_.core)) {
    fault_ = Fault{kind, id, c.pc, c.t, c.pc < prog_.size() ? prog_[c.pc].word : 0u, address};
    limit_ = std::min<uint64_t>(limit_, c.t + 1);  // others run on only up to this cycle
  }
}

// `bound` is the earliest cycle any other core could request the bus (see bound_excluding).
// With caches, a lookup at t is decided here only when t <= bound: no other core can be granted the
// bus before t (a lookup of cycle t precedes the grant of cycle t); otherwise the core stops as
// LOOKUP, at the instruction, for the scheduler.
template <bool Trace, bool Guard, bool Break, bool Cached>
void FastEngine::run_free_impl(int id, uint64_t bound) {
  Core& c = cores_[id];
  const uint32_t n = static_cast<uint32_t>(prog_.size());
  const uint32_t mem_words = cfg_.mem_words;
  const int ncores = cfg_.cores;
  const StackGuard guard = Guard ? StackGuard(stacks_, id) : StackGuard();
  int32_t* r = c.r;
  uint64_t t = c.t;
  uint32_t pc = c.pc;
  uint64_t issued = 0;
  // A faulting instruction is not counted; the core stops at its pc and issue cycle.
  auto stop_with_fault = [&](FaultKind kind, uint32_t at, uint32_t address) {
    c.t = t;
    c.pc = at;
    c.s.instructions += issued;
    fault(id, kind, address);
  };
  // Only this core's own fault (which returns) can lower limit_; a breakpoint (Break) can lower
  // pause_, and then the core leaves at once.
  const uint64_t lim = std::min(limit_, pause_);
  const CoreSet* const brk = Break ? brk_.data() : nullptr;
  const uint64_t break_from = break_from_;
  // A bus access at t (the instruction at `here`, counted): granted on the spot when no other core
  // can request before its grant g, as then it is the only candidate under every policy; true when
  // the core runs on. Otherwise it waits for the scheduler (PENDING), or stops after a watched write.
  auto grant_or_wait = [&](const Uop& u, uint32_t a, uint32_t here) __attribute__((always_inline)) {
    const uint64_t g = std::max(bus_free_, t);
    if (g < bound && g < lim) {
      const int32_t before = Break ? mem_[a] : 0;
      t = access<Cached>(id, u, a, t, g, pc);
      if (!(Break && watched(u, a))) return true;
      note_write(id, here, a, before, g);
      c.t = t;   // set_status reads it
      set_status(id, Status::RUNNING);
    } else {
      c.req_addr = a;
      c.t = t;
      set_status(id, Status::PENDING);
    }
    return false;
  };
  for (;;) {
    if (t >= lim) {
      c.t = t;
      // At the pause the core stays RUNNING: a later advance() goes on from t.
      set_status(id, t >= limit_ ? Status::STOPPED : Status::RUNNING);
      break;
    }
    if (pc >= n) return stop_with_fault(FaultKind::PC_OUT_OF_RANGE, pc, 0);
    // r[29]: fp, the frame a return trap waits for (s2mc.simulator.stepping.run_to_return)
    if (Break && (brk[pc].test(id) || (id == ret_core_ && pc == ret_pc_ && r[29] == ret_fp_)) &&
        t >= break_from) {
      break_at(t);  // stop before issuing: the core is at pc in cycle t
      c.t = t;
      set_status(id, Status::RUNNING);
      break;
    }
    const Uop& u = prog_[pc];
    const uint32_t here = pc;
    const Next nx = execute(r, pc, u, id, ncores);
    if (Cached && nx == Next::MEMORY && u.bus != BUS_STRING) {
      // A data access: faults at issue, then the lookup (when no grant can come before it).
      const uint32_t a = mem_address(r, u);
      if (a >= mem_words || (Guard && guard.violates(a))) {
        if (Trace) log(t, here, id, TraceKind::REQUEST, 0, a);  // the faulting request, as without caches
        return stop_with_fault(a >= mem_words ? FaultKind::ADDRESS_OUT_OF_RANGE : FaultKind::STACK_OVERFLOW, pc, a);
      }
      if (t > bound) {
        c.t = t;
        c.pc = pc;
        c.s.instructions += issued;
        set_status(id, Status::LOOKUP);
        return;
      }
      ++issued;
      if (caches_.lookup(id, u.bus, a)) {
        const int32_t before = (Trace || Break) ? mem_[a] : 0;
        const AccessCount ac = mem_access(r, pc, u, a, mem_.data(), mem_words, nullptr);
        c.s.mem_reads += ac.reads;
        c.s.mem_writes += ac.writes;
        if (Trace) {
          log(t, here, id, TraceKind::HIT, 0, a, before, mem_[a]);
          log_changes(t, here, id);
        }
        if (Break && watched(u, a)) {
          note_write(id, here, a, before, t);
          t += cfg_.cache.hit_latency;
          c.t = t;
          set_status(id, Status::RUNNING);
          break;
        }
        t += cfg_.cache.hit_latency;
        continue;
      }
      if (Trace) log(t, here, id, TraceKind::REQUEST, 0, a);
      if (grant_or_wait(u, a, here)) continue;
      break;
    }
    if (Trace) {
      const TraceKind k = nx == Next::MEMORY ? TraceKind::REQUEST : nx == Next::SYNC ? TraceKind::SYNC
                          : nx == Next::HALT ? TraceKind::HALT : TraceKind::ISSUE;
      log(t, here, id, k, 0, nx == Next::MEMORY ? mem_address(r, u) : 0);
    }
    if (nx == Next::CONTINUE) { ++t; ++issued; continue; }
    if (nx == Next::MEMORY) {
      const uint32_t a = mem_address(r, u);
      if (a >= mem_words) return stop_with_fault(FaultKind::ADDRESS_OUT_OF_RANGE, pc, a);
      if (Guard && guard.violates(a)) return stop_with_fault(FaultKind::STACK_OVERFLOW, pc, a);
      ++issued;
      if (grant_or_wait(u, a, here)) continue;
      break;
    }
    if (nx == Next::PRINT) { output_.push_back({t, id, trap_text(r, u)}); ++t; ++issued; continue; }
    if (nx == Next::SYNC) { ++issued; c.t = t; set_status(id, Status::SYNC); break; }
    if (nx == Next::HALT) { ++issued; c.t = t; set_status(id, Status::HALTED); c.s.finish_cycle = t + 1; break; }
    return stop_with_fault(nx == Next::DIV_ZERO ? FaultKind::DIVISION_BY_ZERO : FaultKind::UNDEFINED_OPCODE, here, 0);
  }
  c.t = t;
  c.pc = pc;
  c.s.instructions += issued;
}

template <bool Cached>
__attribute__((always_inline)) inline void FastEngine::grant(int id, uint64_t g) {
  Core& c = cores_[id];
  const uint32_t pc = c.pc;
  const Uop& u = prog_[pc];
  if (__builtin_expect(breaking_, 0)) {
    const int32_t before = mem_[c.req_addr];
    c.t = access<Cached>(id, u, c.req_addr, c.t, g, c.pc);
    if (watched(u, c.req_addr)) note_write(id, pc, c.req_addr, before, g);
  } else {
    c.t = access<Cached>(id, u, c.req_addr, c.t, g, c.pc);
  }
  set_status(id, Status::RUNNING);
}

// Every running core has issued its sync (the others halted): the barrier completes in the cycle of
// the last arrival or of the last halt it waited for, and the waiting cores go on one cycle later.
void FastEngine::release_barrier() {
  uint64_t c = 0;
  for (const Core& o : cores_) {
    if (o.status == Status::SYNC) c = std::max(c, o.t);
    if (o.status == Status::HALTED) c = std::max(c, o.s.finish_cycle - 1);
  }
  for (Core& o : cores_) {
    if (o.status != Status::SYNC) continue;
    o.s.sync_wait_cycles += c - o.t;
    if (tracing_) log(c + 1, o.pc, static_cast<int>(&o - cores_.data()), TraceKind::RESUME, c - o.t);
    o.t = c + 1;
    set_status(static_cast<int>(&o - cores_.data()), Status::RUNNING);
  }
}

RunResult FastEngine::run() {
  pause_ = NEVER;
  if (cfg_.buffered()) run_buffered(NEVER);
  else schedule();
  return result();
}

// Runs the cores that are free to run, then grants the bus in order, until every event before
// pause_ has happened (true) or the run is over (false). From the start, or from a pause.
// Cached: cores also stop at lookups they could not decide; before a grant at g every lookup at a
// cycle <= g is decided (in cycle order; lookups of one cycle do not affect each other).
template <bool Cached>
bool FastEngine::schedule_as() {
  const int N = cfg_.cores;
  for (int i = 0; i < N; ++i)
    if (cores_[i].status == Status::RUNNING) run_free_as<Cached>(i, bound_excluding(i));
  for (;;) {
    // No core is running now (but those paused at pause_). The next grant goes at the first cycle
    // the bus is free and someone is waiting.
    // One pass finds the two earliest candidates: the earliest is the fifo winner, and the other
    // bounds how far the winner may then run on its own.
    uint64_t first = NEVER, second = NEVER;
    int argfirst = -1;
    uint64_t look = NEVER, asked = NEVER;  // Cached: the earliest pending lookup, and request
    int arglook = -1, argasked = -1;
    for (int i = 0; i < N; ++i) {
      const uint64_t v = req_[i];
      if (v < first) { second = first; first = v; argfirst = i; }
      else if (v < second) second = v;
      if (Cached && v != NEVER) {
        const Status st = cores_[i].status;
        if (st == Status::LOOKUP && v < look) { look = v; arglook = i; }
        else if (st == Status::PENDING && v < asked) { asked = v; argasked = i; }
      }
    }
    if (first != NEVER) {
      // Cached: without a request (paused cores only) the next event is at `first`, beyond the pause.
      const uint64_t g = Cached ? (asked == NEVER ? std::max(first, look) : std::max(bus_free_, asked))
                                : std::max(bus_free_, first);
      if (Cached && look <= g && look < std::min(limit_, pause_)) {
        // A lookup before (or in the cycle of) the next grant: the core decides it and runs on.
        run_free_as<true>(arglook, std::max(look, bound_excluding(arglook)));
        continue;
      }
      if (g >= std::min(limit_, pause_)) {
        if (pause_ < limit_) return true;  // the requests wait on in the state at pause_
        // Paused cores (RUNNING here) stand at or after pause_, so at or after limit_ too.
        for (int i = 0; i < N; ++i)
          if (cores_[i].status == Status::PENDING || cores_[i].status == Status::RUNNING ||
              cores_[i].status == Status::LOOKUP)
            set_status(i, Status::STOPPED);
        continue;
      }
      // Cached: every pending lookup is after g now, and a paused core at or after pause_ > g, so
      // the cores with req_ <= g are the requesting ones, and the earliest of them is argasked.
      int win = Cached ? argasked : argfirst;  // fifo: earliest request, ties to the lowest id
      if (cfg_.arbitration != Arbitration::FIFO) {
        // fixed and burst4 scan from core 0, round-robin from the core after the last grantee;
        // burst4 passes over the last grantee after BURST_LIMIT grants in a row, unless it is alone.
        const int start = cfg_.arbitration == Arbitration::ROUND_ROBIN ? last_grant_ + 1 : 0;
        const int skip = cfg_.arbitration == Arbitration::BURST4 && burst_streak_ >= BURST_LIMIT ? last_grant_ : -1;
        win = skip;
        for (int k = 0; k < N; ++k) {
          const int i = (start + k) % N;
          if (req_[i] <= g && i != skip) { win = i; break; }
        }
      }
      grant<Cached>(win, g);
      run_free_as<Cached>(win, win == argfirst ? second : first);
      continue;
    }
    bool waiting = false, stopped = false;
    for (const Core& o : cores_) {
      waiting |= o.status == Status::SYNC;
      stopped |= o.status == Status::STOPPED;
    }
    if (waiting && !stopped) {
      release_barrier();
      for (int i = 0; i < N; ++i)
        if (cores_[i].status == Status::RUNNING) run_free_as<Cached>(i, bound_excluding(i));
      continue;
    }
    return false;
  }
}

// stepping.cpp schedules too.
template bool FastEngine::schedule_as<false>();
template bool FastEngine::schedule_as<true>();

RunResult FastEngine::result() {
  const int N = cfg_.cores;
  RunResult res;
  res.fault = fault_;
  if (res.fault.kind == FaultKind::NONE) {
    for (int i = 0; i < N; ++i) {
      const Core& o = cores_[i];
      if (o.status != Status::HALTED) {
        res.fault = Fault{FaultKind::CYCLE_LIMIT, i, o.pc, cfg_.max_cycles, o.pc < prog_.size() ? prog_[o.pc].word : 0u, 0};
        break;
      }
    }
  }
  for (const Core& o : cores_) {
    res.cores.push_back(o.s);
    caches_.copy_to(static_cast<int>(&o - cores_.data()), res.cores.back(), true);
    res.cycles = std::max(res.cycles, o.s.finish_cycle);
    res.bus_busy_cycles += o.s.bus_busy_cycles;
  }
  if (tracing_) trace_->finish();
  res.output = output_;
  std::stable_sort(res.output.begin(), res.output.end(), [](const PrintEvent& a, const PrintEvent& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
  });
  return res;
}

}  // namespace s2
