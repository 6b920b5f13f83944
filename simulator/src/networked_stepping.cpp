// Stepping the networked machine (networked.h; docs/debugger.md): breakpoints, watches, the return
// trap, what a core is doing at a pause, and copies of the whole machine for going back.
//
// The loop of networked.cpp goes cycle by cycle in order, so a breakpoint is checked at the top of
// the cycle in which a core would issue there, and a watched write lowers the pause to the cycle
// after it. Only a core's run ahead through register-only instructions leaves cycle order: it
// stops before the pause, and does not run at all while a breakpoint, watch or return trap is set
// (another core's stop would otherwise find it past the stop's cycle).
#include <algorithm>
#include <stdexcept>

#include "s2mc/networked.h"

namespace s2 {

void NetworkedEngine::update_breaking() {
  breaking_ = !watch_.empty() || ret_core_ >= 0 || std::any_of(brk_.begin(), brk_.end(), [](const CoreSet& m) { return m.any(); });
}

void NetworkedEngine::set_break(uint32_t pc, const std::vector<int>& cores) {
  CoreSet::set_break(brk_, pc, prog_.size(), cores, cfg_.cores);
  update_breaking();
}

void NetworkedEngine::set_watch(uint32_t address, bool on) {
  if (address >= mem_.size()) throw std::out_of_range("watch outside memory");
  watch_.erase(std::remove(watch_.begin(), watch_.end(), address), watch_.end());
  if (on) watch_.push_back(address);
  update_breaking();
}

void NetworkedEngine::set_return_trap(int core, uint32_t pc, int32_t fp) {
  if (core >= cfg_.cores) throw std::out_of_range("return trap for a core that does not exist");
  ret_core_ = core < 0 ? -1 : core;
  ret_pc_ = pc;
  ret_fp_ = fp;
  update_breaking();
}

bool NetworkedEngine::at_break(uint64_t c) const {
  for (int i = 0; i < cfg_.cores; ++i) {
    const Core& k = cores_[static_cast<size_t>(i)];
    if (k.status != Status::RUNNING || k.next != c) continue;
    if ((k.pc < brk_.size() && brk_[k.pc].test(i)) || (i == ret_core_ && k.pc == ret_pc_ && k.r[29] == ret_fp_))
      return true;
  }
  return false;
}

void NetworkedEngine::wrote(int id, uint32_t pc, uint32_t a, int32_t before, int32_t after, uint64_t c) {
  if (std::find(watch_.begin(), watch_.end(), a) == watch_.end()) return;
  // the state after the write is the state at c + 1; the first write met is the earliest
  if (write_hit_.core < 0) write_hit_ = WriteHit{id, pc, a, before, after, c};
  pause_ = std::min(pause_, c + 1);
}

NetworkedEngine::CoreView NetworkedEngine::core_view(int id) const {
  const Core& k = cores_.at(static_cast<size_t>(id));
  const uint32_t pc = k.pc;
  const bool live = k.status != Status::HALTED;
  if (live && fault_.kind != FaultKind::NONE) return {"stopped", pc, fault_.cycle, 0, &k.s};
  switch (k.status) {
    case Status::RUNNING: return {"running", pc, k.next, 0, &k.s};
    case Status::MISS:    // waiting for its miss since it issued (the pc stays until it completes)
      return {"waiting", pc, k.next, pc < prog_.size() ? mem_address(k.r, prog_[pc]) : 0, &k.s};
    case Status::SYNC: return {"sync", pc, k.next, 0, &k.s};
    default: return {"halted", pc, k.s.finish_cycle - 1, 0, &k.s};
  }
}

std::vector<PrintEvent> NetworkedEngine::output_so_far() const {
  std::vector<PrintEvent> out = output_;
  std::stable_sort(out.begin(), out.end(), [](const PrintEvent& a, const PrintEvent& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
  });
  return out;
}

NetworkedEngine::Snapshot NetworkedEngine::checkpoint() const {
  return Snapshot{cores_, mem_, output_, fault_, *dir_, now_};
}

void NetworkedEngine::rewind(const Snapshot& s, uint64_t cycle, uint64_t break_from) {
  cores_ = s.cores;
  mem_ = s.mem;
  output_ = s.output;
  fault_ = s.fault;
  *dir_ = s.dir;
  now_ = s.now;
  pause_ = cycle;
  break_from_ = break_from;
  ended_ = finished_ = false;
  result_ = NetworkedResult{};
  write_hit_ = WriteHit{};
}

size_t NetworkedEngine::Snapshot::bytes() const {
  size_t n = sizeof(Snapshot) + cores.size() * sizeof(Core) + mem.size() * sizeof(int32_t) + dir.bytes();
  for (const PrintEvent& e : output) n += sizeof(PrintEvent) + e.text.size();
  return n;
}

}  // namespace s2
