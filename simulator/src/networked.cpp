// The fast engine over a ring or a mesh with directory coherence (networked.h): the cycle loop of
// docs/timing-model.md, "How a core's access meets the network", step by step as in
// simulator/directory.py, skipping the cycles in which nothing can happen.
#include "s2mc/networked.h"

#include <algorithm>
#include <limits>

namespace s2 {

namespace {
constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();

// An instruction whose issue touches only its core's registers and pc, and cannot fault (with store
// buffers a fence waits for its core's buffer).
inline bool pure(const Uop& u, bool buffered) {
  switch (u.op) {
    case OP_DIV_IMM: case OP_MOD_IMM: case OP_DIV_REG: case OP_MOD_REG: case OP_SYNC: case OP_TRAP:
    case OP_UNDEFINED:
      return false;
    case OP_FENCE:
      return !buffered;
    default:
      return u.bus == BUS_NONE;
  }
}

// The data effect of a memory instruction on `word` (the core's copy of address a); advances pc.
inline void perform(int32_t* r, uint32_t& pc, const Uop& u, uint32_t a, int32_t* word, CoreStats& s) {
  const int32_t v = store_value(r, u, a);
  const int32_t old = *word;
  if (u.bus == BUS_WRITE || u.bus == BUS_SWAP) *word = v;
  writeback(r, pc, u, a, old);
  const AccessCount ac = access_count(u.bus);
  s.mem_reads += ac.reads;
  s.mem_writes += ac.writes;
}

inline bool writes(const Uop& u) { return u.bus == BUS_WRITE || u.bus == BUS_SWAP; }
}  // namespace

NetworkedEngine::NetworkedEngine(const Image& image, const Config& cfg, const NetworkConfig& net)
    : cfg_(cfg), buffered_(cfg.buffered()), mem_(cfg.mem_words, 0), cores_(static_cast<size_t>(cfg.cores)), stacks_(image.stacks),
      guarded_(image.stacks.count != 0) {
  prog_.reserve(image.code.size());
  for (uint32_t w : image.code) prog_.push_back(predecode(w));
  std::copy(image.data.begin(), image.data.begin() + std::min<size_t>(image.data.size(), mem_.size()), mem_.begin());
  for (Core& k : cores_) {
    k.pc = image.entry;
    k.buf = StoreBuffer(cfg.store_buffer_entries);
  }
  dir_ = make_directory(cfg, net, &mem_, static_cast<DirectoryHost*>(this));
}

void NetworkedEngine::enable_trace(TraceMerger::Sink sink) {
  sink_ = std::move(sink);
  tracing_ = true;
  dir_->enable_log(&log_);
}

void NetworkedEngine::emit_before(uint64_t c) {
  if (log_.empty()) return;
  std::stable_sort(log_.begin(), log_.end(), [](const TraceEvent& a, const TraceEvent& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
  });
  size_t n = 0;
  while (n < log_.size() && log_[n].cycle < c) ++n;
  for (size_t i = 0; i < n; i += TraceMerger::BATCH) sink_(log_.data() + i, std::min(TraceMerger::BATCH, n - i));
  log_.erase(log_.begin(), log_.begin() + static_cast<std::ptrdiff_t>(n));
}

void NetworkedEngine::fault(int id, FaultKind kind, uint64_t c, uint32_t address) {
  const Core& k = cores_[static_cast<size_t>(id)];
  fault_ = Fault{kind, id, k.pc, c, k.pc < prog_.size() ? prog_[k.pc].word : 0u, address};
}

// From t on, the core runs alone through instructions that touch only its registers and cannot
// fault, as it would issue them whatever the others do; never up to the cycle limit (a run that
// reaches it reports the pc there). Returns the cycle of the instruction it stopped before.
uint64_t NetworkedEngine::run_ahead(int id, uint64_t t) {
  Core& k = cores_[static_cast<size_t>(id)];
  const uint32_t n = static_cast<uint32_t>(prog_.size());
  uint64_t done = 0;
  // A stepped machine is never ahead of its pause; a breakpoint or a watch met by another core
  // lowers the pause while this one would run on, so with one set every core goes in cycle order.
  if (breaking_) return t;
  const uint64_t end = std::min<uint64_t>(cfg_.max_cycles, pause_);
  while (t < end && k.pc < n && pure(prog_[k.pc], buffered_)) {
    execute(k.r, k.pc, prog_[k.pc], id, cfg_.cores);
    ++t;
    ++done;
  }
  k.s.instructions += done;
  return t;
}

// Step 3 for core id at cycle c. False on a fault (the run ends there, as the reference model's).
bool NetworkedEngine::issue(int id, uint64_t c) {
  Core& k = cores_[static_cast<size_t>(id)];
  if (k.pc >= prog_.size()) { fault(id, FaultKind::PC_OUT_OF_RANGE, c); return false; }
  const Uop& u = prog_[k.pc];
  const uint32_t here = k.pc;
  if (u.op == OP_UNDEFINED) { fault(id, FaultKind::UNDEFINED_OPCODE, c); return false; }
  if (buffered_) {
    bool done = false;
    if (!buffer_issue(id, c, done)) return false;
    if (done) return true;
  }
  if (u.bus != BUS_NONE) {
    const uint32_t a = mem_address(k.r, u);
    if (a >= cfg_.mem_words) { fault(id, FaultKind::ADDRESS_OUT_OF_RANGE, c, a); return false; }
    if (guarded_ && StackGuard(stacks_, id).violates(a)) { fault(id, FaultKind::STACK_OVERFLOW, c, a); return false; }
    ++k.s.instructions;
    if (u.bus == BUS_STRING) {   // read from the coherent memory after every core has issued
      if (tracing_) log(c, here, id, TraceKind::REQUEST, 0, a);
      strings_.push_back({id, a});
      k.next = NEVER;
      return true;
    }
    int32_t* word = nullptr;
    switch (dir_->access(id, u.bus != BUS_READ, a, c, word, k.drain.own_may_miss(k.buf))) {
      case Directory::HIT: {
        const uint32_t pc = k.pc;
        const int32_t before = *word;
        perform(k.r, k.pc, u, a, word, k.s);
        if (!watch_.empty() && writes(u)) wrote(id, pc, a, before, *word, c);
        k.next = c + cfg_.cache.hit_latency;
        if (tracing_) {
          log(c, here, id, TraceKind::HIT, 0, a, before, *word);
          if (dir_->upgraded())
            log(c, here, id, TraceKind::STATE, static_cast<uint64_t>(id), a - a % dir_->line_words(),
                Directory::trace_state(Directory::E), Directory::trace_state(Directory::M), XA_PR_WR);
        }
        return true;
      }
      case Directory::MISS:
        if (tracing_) log(c, here, id, TraceKind::REQUEST, 0, a, 0, 0, MSG_XACT + (u.bus != BUS_READ ? GETM : GETS));
        ++k.s.mem_accesses;
        k.status = Status::MISS;
        k.drain.own_missed(k.buf);
        return true;
      default:   // the line is in the eviction buffer, or the request must wait: issue again next cycle
        --k.s.instructions;
        k.next = c + 1;
        return true;
    }
  }
  const Next nx = execute(k.r, k.pc, u, id, cfg_.cores);
  if (tracing_ && nx != Next::UNDEFINED)
    log(c, here, id, nx == Next::SYNC ? TraceKind::SYNC : nx == Next::HALT ? TraceKind::HALT : TraceKind::ISSUE);
  switch (nx) {
    // running ahead would log its instructions before the events of other cores and tiles in
    // their cycles: with the log on, one a cycle
    case Next::CONTINUE: ++k.s.instructions; k.next = tracing_ ? c + 1 : run_ahead(id, c + 1); return true;
    case Next::PRINT: output_.push_back({c, id, trap_text(k.r, u)}); ++k.s.instructions; k.next = c + 1; return true;
    case Next::SYNC: ++k.s.instructions; k.status = Status::SYNC; k.next = c; return true;
    case Next::HALT:
      ++k.s.instructions;
      k.status = Status::HALTED;
      k.s.finish_cycle = c + 1;
      return true;
    case Next::DIV_ZERO: fault(id, FaultKind::DIVISION_BY_ZERO, c); return false;
    default: fault(id, FaultKind::UNDEFINED_OPCODE, c); return false;
  }
}

// The store buffer's part of issuing at c (simulator/reference.py, buffer_issue): done when it held
// the instruction back, buffered or forwarded it, or issued a fence; false on a fault.
bool NetworkedEngine::buffer_issue(int id, uint64_t c, bool& done) {
  Core& k = cores_[static_cast<size_t>(id)];
  const Uop& u = prog_[k.pc];
  const bool drains = u.op == OP_FENCE || u.op == OP_XCHG || u.op == OP_SYNC || u.op == OP_TRAP;
  const bool store = u.bus == BUS_WRITE;
  done = true;
  if (k.buf.holds(drains, store, c)) {   // tries again in the next cycle
    k.next = c + 1;
    return true;
  }
  (store ? k.s.store_buffer_full_stalls : k.s.fence_stall_cycles) += k.buf.held_cycles(c);
  if (store || u.bus == BUS_READ) {
    const uint32_t a = mem_address(k.r, u);
    if (a >= cfg_.mem_words) { fault(id, FaultKind::ADDRESS_OUT_OF_RANGE, c, a); return false; }
    if (guarded_ && StackGuard(stacks_, id).violates(a)) { fault(id, FaultKind::STACK_OVERFLOW, c, a); return false; }
    int32_t v = 0;
    if (store) {
      v = store_value(k.r, u, a);
      if (u.op == OP_PUSH) k.r[u.d1] = static_cast<int32_t>(a);
      k.buf.push(a, v, k.pc, c);
      ++k.pc;
    } else if (k.buf.forward(a, v)) {
      writeback(k.r, k.pc, u, a, v);
      ++k.s.store_forwards;
      ++k.s.mem_reads;
    } else {
      done = false;   // the cache and the network, as without a buffer
      return true;
    }
    ++k.s.instructions;
    k.next = run_ahead(id, c + 1);
    return true;
  }
  if (u.op == OP_FENCE) {
    ++k.pc;
    ++k.s.instructions;
    k.next = run_ahead(id, c + 1);
    return true;
  }
  done = false;
  return true;
}

// A miss's access takes effect at c on the requester's copy; the core issues again at c + 1. A
// drain's GetM: its store takes effect, the entry leaves, the drain port is free from c + 1.
void NetworkedEngine::complete(int id, int32_t* word, uint64_t c) {
  Core& k = cores_[static_cast<size_t>(id)];
  if (k.drain.out()) return k.drain.complete(k.buf, word, c, k.s);
  const Uop& u = prog_[k.pc];
  const uint32_t pc = k.pc, a = mem_address(k.r, u);
  const int32_t before = *word;
  perform(k.r, k.pc, u, a, word, k.s);
  if (!watch_.empty() && writes(u)) wrote(id, pc, a, before, *word, c);
  k.status = Status::RUNNING;
  k.next = c + 1;
}

std::string NetworkedEngine::text_at(uint32_t a) const { return dir_->text(a); }

NetworkedResult NetworkedEngine::run() {
  advance(NEVER);
  return result();
}

bool NetworkedEngine::advance(uint64_t pause) {
  const int N = cfg_.cores;
  pause_ = pause;
  write_hit_ = WriteHit{};
  if (ended_) return false;
  uint64_t& c = now_;
  for (;;) {
    int halted = 0;
    for (const Core& k : cores_) halted += k.status == Status::HALTED;
    if (halted == N) break;
    // "at cycle c": every event of the cycles before c has happened, none of c's
    if (c >= pause_ || (breaking_ && c >= break_from_ && at_break(c))) {
      pause_ = c;
      break_from_ = c + 1;   // a breakpoint the machine stands on does not stop the next advance
      return true;
    }
    if (tracing_ && log_.size() >= TraceMerger::BATCH) emit_before(c);   // in batches: few calls to the sink
    if (c >= cfg_.max_cycles) {   // a core still running at the limit: the first one
      for (int i = 0; i < N; ++i)
        if (cores_[static_cast<size_t>(i)].status != Status::HALTED) {
          fault(i, FaultKind::CYCLE_LIMIT, cfg_.max_cycles);
          break;
        }
      break;
    }
    dir_->deliver(c);   // 1. deliveries
    dir_->homes(c);     // 2. the homes
    for (int i = 0; i < N && fault_.kind == FaultKind::NONE; ++i) {   // 3. issue
      const Core& k = cores_[static_cast<size_t>(i)];
      if (k.status == Status::RUNNING && k.next == c) issue(i, c);
    }
    if (fault_.kind != FaultKind::NONE) break;
    for (int i = 0; i < N && buffered_; ++i) {   // 3b. the drains
      Core& k = cores_[static_cast<size_t>(i)];
      k.drain.start(i, k.buf, *dir_, cfg_, c, k.status == Status::MISS, k.s);
    }
    for (const auto& [id, a] : strings_) {   // trap #3 prints the coherent string at once
      Core& k = cores_[static_cast<size_t>(id)];
      output_.push_back({c, id, text_at(a)});
      ++k.s.mem_reads;
      ++k.pc;
      k.next = c + 1;
    }
    strings_.clear();
    // 4. the barrier: complete when every core that has not halted has arrived
    int synced = 0, live = 0;
    for (const Core& k : cores_) {
      live += k.status != Status::HALTED;
      synced += k.status == Status::SYNC;
    }
    if (live > 0 && synced == live) {
      for (Core& k : cores_) {
        if (k.status != Status::SYNC) continue;
        k.s.sync_wait_cycles += c - k.next;
        if (tracing_) log(c + 1, k.pc, static_cast<int>(&k - cores_.data()), TraceKind::RESUME, c - k.next);
        k.status = Status::RUNNING;
        k.next = c + 1;
      }
    }
    dir_->step_network(c);   // 5. the network
    if (std::all_of(cores_.begin(), cores_.end(), [](const Core& k) { return k.status == Status::HALTED; })) {
      ++c;   // the network runs on from the cycle after the last halt
      break;
    }
    uint64_t next = dir_->next_event(c);
    for (const Core& k : cores_) {
      if (k.status == Status::RUNNING) next = std::min(next, k.next);
      if (buffered_) next = std::min(next, k.drain.wake(k.buf, c));
    }
    c = std::max(c + 1, std::min({next, cfg_.max_cycles, pause_}));
  }
  ended_ = true;
  return false;
}

const NetworkedResult& NetworkedEngine::result() {
  if (finished_) return result_;
  finished_ = true;
  const int N = cfg_.cores;
  NetworkedResult& out = result_;
  uint64_t c = now_;
  out.run.fault = fault_;
  if (fault_.kind != FaultKind::NONE) {
    if (tracing_) emit_before(NEVER);   // the log up to the fault
    return out;
  }
  // The network runs on until every write-back has reached its home; those cycles are not counted.
  while (dir_->busy(c)) {
    dir_->deliver(c);
    dir_->homes(c);
    dir_->step_network(c);
    ++c;
  }
  if (tracing_) emit_before(NEVER);
  dir_->write_back_all();
  std::stable_sort(output_.begin(), output_.end(), [](const PrintEvent& a, const PrintEvent& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
  });
  out.run.output = output_;
  for (int i = 0; i < N; ++i) {
    const CoreStats& s = cores_[static_cast<size_t>(i)].s;
    out.run.cycles = std::max(out.run.cycles, s.finish_cycle);
    out.run.cores.push_back(s);
  }
  collect_counters(*dir_, N, c, out);
  return out;
}

}  // namespace s2
