// The `fast` engine: event-driven, exact to the cycle-stepped model of docs/timing-model.md.
//
// Cores run freely, instruction after instruction, until they need the shared bus (or reach a
// barrier, halt or fault). The bus is granted in exact arbitration order: a request is granted at
// once, without returning to the scheduler, when no other core could possibly compete for that
// cycle; otherwise the scheduler compares the pending requests.
#pragma once

#include <memory>
#include <vector>

#include "machine.h"
#include "trace.h"

namespace s2 {

class FastEngine {
 public:
  FastEngine(const Image& image, const Config& cfg);

  RunResult run();
  // Logs every event to `sink` in (cycle, core) order, in batches (trace.h).
  void enable_trace(TraceMerger::Sink sink, size_t lane_cap = TraceMerger::LANE_CAP) {
    trace_ = std::make_unique<TraceMerger>(cfg_.cores, std::move(sink), lane_cap);
    tracing_ = true;
  }
  uint64_t trace_spilled() const { return trace_ ? trace_->spilled() : 0; }

  // Shared memory and registers, for hosts that load inputs and read outputs.
  std::vector<int32_t>& memory() { return mem_; }
  const int32_t* registers(int core) const { return cores_[core].r; }

 private:
  enum class Status : uint8_t { RUNNING, PENDING, SYNC, HALTED, STOPPED };
  struct Core {
    int32_t r[NUM_REGS + 1] = {};  // r[32] absorbs writes to r0
    uint32_t pc = 0;
    uint64_t t = 0;                // issue cycle of the next (or pending) instruction
    Status status = Status::RUNNING;
    uint32_t req_addr = 0;         // data address of the pending request
    std::string print_buf;
    CoreStats s;
  };

  // Trace: log events; Guard: check the declared stacks. Both are compiled out when off, so a
  // program that declares no stacks runs the same loop as before they existed.
  template <bool Trace, bool Guard> void run_free_impl(int id, uint64_t bound);
  void run_free(int id, uint64_t bound) {
    if (tracing_) guarded_ ? run_free_impl<true, true>(id, bound) : run_free_impl<true, false>(id, bound);
    else guarded_ ? run_free_impl<false, true>(id, bound) : run_free_impl<false, false>(id, bound);
  }
  void grant(int id, uint64_t g);
  uint64_t bound_excluding(int id) const;
  void fault(int id, FaultKind kind, uint32_t address = 0);
  void release_barrier();

  // req_[i]: the earliest cycle core i could next use the bus: its request cycle when pending, its
  // next issue cycle when running, NEVER otherwise. Kept apart from Core so the scheduler's scans
  // touch one small array.
  uint64_t req_[MAX_CORES];
  void set_status(int id, Status st) {
    cores_[id].status = st;
    req_[id] = (st == Status::RUNNING || st == Status::PENDING) ? cores_[id].t : ~0ull;
    if (tracing_ && (st == Status::HALTED || st == Status::STOPPED)) trace_->close(id);
  }
  void log(uint64_t cycle, uint32_t pc, int id, TraceKind kind, uint64_t wait, uint32_t address = 0,
           int32_t before = 0, int32_t after = 0) {
    trace_->push({cycle, pc, static_cast<uint16_t>(id), kind, wait, address, before, after});
  }
  uint64_t access(int id, const Uop& u, uint32_t addr, uint64_t t_req, uint64_t g, uint32_t& pc);

  Config cfg_;
  std::vector<Uop> prog_;
  std::vector<int32_t> mem_;
  std::vector<Core> cores_;
  std::vector<PrintEvent> output_;
  uint64_t bus_free_ = 0;          // first cycle at which the bus is idle
  uint64_t limit_;                 // cores stop issuing at this cycle (max_cycles or a fault)
  int last_grant_ = -1;            // for round-robin
  Fault fault_;
  uint32_t entry_;
  Stacks stacks_;
  bool guarded_;                   // stacks are declared
  bool tracing_ = false;
  std::unique_ptr<TraceMerger> trace_;
};

}  // namespace s2
