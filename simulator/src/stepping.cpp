// Stepping the fast engine: pauses, breakpoints and watches (docs/debugger.md).
//
// A pause bound is cheap: a core stops issuing at the bound and the scheduler grants nothing at or
// after it, so every event before the bound happens exactly as in a plain run and the state is the
// cycle-stepped machine's at the bound. A breakpoint or watch is different: it is met while the
// cores run out of cycle order, so when one core meets it at cycle t another may already have run
// past t. advance() therefore runs once to find the earliest stop (the one met first in cycle
// order: each hit lowers the bound, so later cores only run up to it), then goes back to where it
// started and runs again to that stop with a plain bound.
#include <stdexcept>

#include "s2mc/fast_engine.h"

namespace s2 {

bool FastEngine::advance(uint64_t pause) {
  write_hit_ = WriteHit{};
  bool paused;
  if (cfg_.buffered()) {
    // Store buffers: the cycle-stepped loop of buffered.cpp (breakpoints are refused: set_break).
    pause_ = pause;
    paused = run_buffered(pause);
  } else if (!breaking_) {
    pause_ = pause;
    paused = schedule();
  } else {
    const Snapshot start = save();
    hit_ = ~0ull;
    pause_ = pause;
    paused = schedule();
    if (hit_ != ~0ull) {
      const uint64_t stop = hit_;
      const WriteHit write = write_hit_;
      restore(start);
      pause_ = stop;
      // The rerun meets nothing before `stop` (it was the earliest), so it runs the plain loop.
      breaking_ = false;
      paused = schedule();
      breaking_ = true;
      // Writes are granted in cycle order, so the first run met the earliest watched write; it is
      // the reason for the stop when it was in the cycle before.
      write_hit_ = write.core >= 0 && write.cycle + 1 == stop ? write : WriteHit{};
    }
  }
  // A breakpoint the machine stands on now does not stop the next advance again.
  if (paused) break_from_ = pause_ + 1;
  return paused;
}

void FastEngine::note_write(int id, uint32_t pc, uint32_t addr, int32_t before, uint64_t g) {
  // The state after the write is the state at g + 1.
  if (write_hit_.core < 0 || g < write_hit_.cycle) write_hit_ = WriteHit{id, pc, addr, before, mem_[addr], g};
  break_at(g + 1);
}

void FastEngine::set_break(uint32_t pc, uint64_t cores) {
  if (tracing_) throw std::logic_error("breakpoints need the trace off");
  if (cfg_.buffered()) throw std::logic_error("breakpoints need consistency sc (no store buffers yet)");
  if (pc >= prog_.size()) throw std::out_of_range("breakpoint outside the program");
  brk_.resize(prog_.size(), 0);
  brk_[pc] = cores;
  update_breaking();
}

void FastEngine::set_watch(uint32_t address, bool on) {
  if (tracing_) throw std::logic_error("watches need the trace off");
  if (cfg_.buffered()) throw std::logic_error("watches need consistency sc (no store buffers yet)");
  if (address >= mem_.size()) throw std::out_of_range("watch outside memory");
  watch_.erase(std::remove(watch_.begin(), watch_.end(), address), watch_.end());
  if (on) watch_.push_back(address);
  brk_.resize(prog_.size(), 0);
  update_breaking();
}

void FastEngine::set_return_trap(int core, uint32_t pc, int32_t fp) {
  if (tracing_) throw std::logic_error("return traps need the trace off");
  if (cfg_.buffered()) throw std::logic_error("return traps need consistency sc (no store buffers yet)");
  if (core >= cfg_.cores) throw std::out_of_range("return trap for a core that does not exist");
  ret_core_ = core < 0 ? -1 : core;
  ret_pc_ = pc;
  ret_fp_ = fp;
  brk_.resize(prog_.size(), 0);
  update_breaking();
}

FastEngine::CoreView FastEngine::core_view(int id) const {
  // A core stopped before a lookup (LOOKUP) has not issued that instruction yet: running.
  static const char* const names[] = {"running", "waiting", "sync", "halted", "stopped", "running"};
  const Core& c = cores_.at(static_cast<size_t>(id));
  return {names[static_cast<int>(c.status)], c.pc, c.t, c.req_addr, &c.s};
}

void FastEngine::rewind(const Snapshot& s, uint64_t cycle, uint64_t break_from) {
  restore(s);
  pause_ = cycle;
  break_from_ = break_from;
  hit_ = ~0ull;
  write_hit_ = WriteHit{};
}

size_t FastEngine::Snapshot::bytes() const {
  size_t n = sizeof(Snapshot) + cores.size() * sizeof(Core) + mem.size() * sizeof(int32_t) +
             req.size() * sizeof(uint64_t) + caches.bytes();
  for (const PrintEvent& e : output) n += sizeof(PrintEvent) + e.text.size();
  return n;
}

FastEngine::Snapshot FastEngine::save() const {
  return Snapshot{cores_, mem_, output_, std::vector<uint64_t>(req_, req_ + MAX_CORES), bus_free_, limit_,
                  last_grant_, burst_streak_, fault_, caches_};
}

void FastEngine::restore(const Snapshot& s) {
  cores_ = s.cores;
  mem_ = s.mem;
  output_ = s.output;
  std::copy(s.req.begin(), s.req.end(), req_);
  bus_free_ = s.bus_free;
  limit_ = s.limit;
  last_grant_ = s.last_grant;
  burst_streak_ = s.burst_streak;
  fault_ = s.fault;
  caches_ = s.caches;
}

}  // namespace s2
