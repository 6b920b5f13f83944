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
    // Store buffers: the loop of buffered.cpp goes in cycle order (no core runs ahead while a
    // breakpoint or watch is set), so it stops at the first one met (sb_breaks, note_write).
    hit_ = ~0ull;
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

void FastEngine::note_write(int id, uint32_t pc, uint32_t addr, int32_t before, uint64_t g, bool drain) {
  // The state after the write is the state at g + 1.
  if (write_hit_.core < 0 || g < write_hit_.cycle) write_hit_ = WriteHit{id, pc, addr, before, mem_[addr], g, drain};
  break_at(g + 1);
}

bool FastEngine::sb_breaks(uint64_t c) const {
  // Only where the core arrives: one held back at its pc (held_since() != NEVER) tries again each cycle
  // and stopped there already, so a continue from it goes on.
  for (int i = 0; i < cfg_.cores; ++i) {
    const Core& k = cores_[i];
    const Buffered& b = sb_[static_cast<size_t>(i)];
    if (k.status != Status::RUNNING || b.next != c || b.buf.held_since() != ~0ull || k.pc >= brk_.size()) continue;
    if (brk_[k.pc].test(i) || (i == ret_core_ && k.pc == ret_pc_ && k.r[29] == ret_fp_)) return true;
  }
  return false;
}

FastEngine::SbView FastEngine::store_buffer(int id) const {
  SbView v{{}, -1, 0, 0, -1};
  if (sb_.empty()) return v;      // nothing has run yet: every buffer is empty
  const Buffered& b = sb_.at(static_cast<size_t>(id));
  for (size_t i = 0; i < b.buf.size(); ++i) v.entries.push_back(b.buf.at(static_cast<int>(i)));
  v.drain = b.buf.drain_index();
  v.drain_cycle = b.buf.drain_since();
  v.drain_free = b.buf.port_free();
  if (v.drain < 0) v.next = b.buf.choose(cfg_.consistency, std::max(pause_, v.drain_free));
  return v;
}

void FastEngine::set_break(uint32_t pc, const std::vector<int>& cores) {
  if (tracing_) throw std::logic_error("breakpoints need the trace off");
  CoreSet::set_break(brk_, pc, prog_.size(), cores, cfg_.cores);
  update_breaking();
}

void FastEngine::set_watch(uint32_t address, bool on) {
  if (tracing_) throw std::logic_error("watches need the trace off");
  if (address >= mem_.size()) throw std::out_of_range("watch outside memory");
  watch_.erase(std::remove(watch_.begin(), watch_.end(), address), watch_.end());
  if (on) watch_.push_back(address);
  brk_.resize(prog_.size());
  update_breaking();
}

void FastEngine::set_return_trap(int core, uint32_t pc, int32_t fp) {
  if (tracing_) throw std::logic_error("return traps need the trace off");
  if (core >= cfg_.cores) throw std::out_of_range("return trap for a core that does not exist");
  ret_core_ = core < 0 ? -1 : core;
  ret_pc_ = pc;
  ret_fp_ = fp;
  brk_.resize(prog_.size());
  update_breaking();
}

FastEngine::CoreView FastEngine::core_view(int id) const {
  // A core stopped before a lookup (LOOKUP) has not issued that instruction yet: running.
  static const char* const names[] = {"running", "waiting", "sync", "halted", "stopped", "running"};
  const Core& c = cores_.at(static_cast<size_t>(id));
  if (c.status == Status::RUNNING && !sb_.empty()) {
    // Store buffers: a core held back at its pc (a fence, xchg, sync or trap until its buffer is
    // empty, a store until it has room) since `since`; else it issues next at b.next.
    const Buffered& b = sb_[static_cast<size_t>(id)];
    if (b.buf.held_since() != ~0ull) return {"held", c.pc, b.buf.held_since(), c.req_addr, &c.s};
    return {"running", c.pc, b.next, c.req_addr, &c.s};
  }
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
  for (const Buffered& b : sb) n += sizeof(Buffered) + b.buf.size() * sizeof(SbEntry);
  for (const PrintEvent& e : output) n += sizeof(PrintEvent) + e.text.size();
  return n;
}

FastEngine::Snapshot FastEngine::save() const {
  return Snapshot{cores_, mem_, output_, std::vector<uint64_t>(req_, req_ + MAX_CORES), bus_free_, limit_,
                  last_grant_, burst_streak_, fault_, caches_, sb_, sb_cycle_, drain_last_};
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
  sb_ = s.sb;
  sb_cycle_ = s.sb_cycle;
  drain_last_ = s.drain_last;
}

}  // namespace s2
