// The `fast` engine: event-driven, exact to the cycle-stepped model of docs/timing-model.md.
//
// Cores run freely, instruction after instruction, until they need the shared bus (or reach a
// barrier, halt or fault). The bus is granted in exact arbitration order: a request is granted at
// once, without returning to the scheduler, when no other core could possibly compete for that
// cycle; otherwise the scheduler compares the pending requests.
#pragma once

#include <algorithm>
#include <memory>
#include <vector>

#include "machine.h"
#include "trace.h"

namespace s2 {

class FastEngine {
 public:
  FastEngine(const Image& image, const Config& cfg);

  RunResult run();

  // Stepping (s2mc.simulator.stepping; docs/debugger.md). advance(pause) simulates every event of
  // the cycles before `pause` and nothing of `pause` or later, then returns true: the state is the
  // cycle-stepped machine's at the start of cycle `pause`. It returns false when the run ended
  // first (every core halted, or a fault); result() then gives what run() would have.
  // With breakpoints or watches set it stops earlier, at the first one met (see stepping.cpp).
  bool advance(uint64_t pause);
  RunResult result();
  // Breakpoints at pc: the cores of `cores` (a bit each) stop before they issue the instruction
  // there. Replaces what was set at pc; 0 clears it.
  void set_break(uint32_t pc, const std::vector<int>& cores);
  // Watch: stop after a write (st, push, xchg) to `address`, in the cycle after the grant.
  void set_watch(uint32_t address, bool on);
  // A return trap: core `core` stops before it issues at `pc` while r29 (the frame pointer) holds
  // `fp`: back after a call in the caller's frame, not in a deeper one. core -1 clears it.
  void set_return_trap(int core, uint32_t pc, int32_t fp);
  // The watched write that made the last advance() stop (core -1: none); `cycle` is its grant.
  // `drain`: the write was a store buffer's drain (pc: the store's), not an instruction's grant.
  struct WriteHit { int core = -1; uint32_t pc = 0, address = 0; int32_t before = 0, after = 0; uint64_t cycle = 0;
                    bool drain = false; };
  const WriteHit& write_hit() const { return write_hit_; }
  uint64_t paused_at() const { return pause_; }  // after advance() returned true: the cycle
  // What a core is doing at the pause, for hosts that show it.
  struct CoreView { const char* status; uint32_t pc; uint64_t t; uint32_t req_addr; const CoreStats* stats; };
  CoreView core_view(int id) const;
  uint64_t bus_free() const { return bus_free_; }
  int last_grant() const { return last_grant_; }
  bool drain_last() const { return drain_last_; }   // the last grant was a store buffer's drain
  // A core's store buffer at the pause (consistency tso, pso), for hosts that show it: its entries
  // oldest first, the one whose drain waits for the bus (-1: none) and since when, the drain
  // port's next free cycle, and the entry its next drain takes when none waits (-1: none yet).
  struct SbView { std::vector<SbEntry> entries; int drain; uint64_t drain_cycle, drain_free; int next; };
  SbView store_buffer(int id) const;
  const std::vector<PrintEvent>& output_so_far() const { return output_; }
  // Logs every event to `sink` in (cycle, core) order, in batches (trace.h).
  void enable_trace(TraceMerger::Sink sink, size_t lane_cap = TraceMerger::LANE_CAP) {
    trace_ = std::make_unique<TraceMerger>(cfg_.cores, std::move(sink), lane_cap);
    tracing_ = true;
    caches_.record(true);
  }
  uint64_t trace_spilled() const { return trace_ ? trace_->spilled() : 0; }

  // Shared memory and registers, for hosts that load inputs and read outputs.
  std::vector<int32_t>& memory() { return mem_; }
  const int32_t* registers(int core) const { return cores_[core].r; }
  // The caches (their config says whether there are any), for hosts that show or count them.
  const Caches& caches() const { return caches_; }
  int core_count() const { return cfg_.cores; }
  bool buffered() const { return cfg_.buffered(); }

 private:
  // LOOKUP (with caches): stopped before a data access at t, whose lookup must wait until every
  // grant before t has been made (docs/timing-model.md, "How the fast engine stays exact").
  enum class Status : uint8_t { RUNNING, PENDING, SYNC, HALTED, STOPPED, LOOKUP };
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
  // Break: check breakpoints and watches (only while stepping with some set; never with Trace).
  // Cached: the cores have caches. Without, the loop is the one that ran before caches existed.
  template <bool Trace, bool Guard, bool Break, bool Cached> void run_free_impl(int id, uint64_t bound);
  template <bool Cached> void run_free_as(int id, uint64_t bound) {
    if (breaking_) guarded_ ? run_free_impl<false, true, true, Cached>(id, bound) : run_free_impl<false, false, true, Cached>(id, bound);
    else if (tracing_) guarded_ ? run_free_impl<true, true, false, Cached>(id, bound) : run_free_impl<true, false, false, Cached>(id, bound);
    else guarded_ ? run_free_impl<false, true, false, Cached>(id, bound) : run_free_impl<false, false, false, Cached>(id, bound);
  }
  template <bool Cached> bool schedule_as();
  // With store buffers (buffered.cpp): a cycle-stepped loop; each core's buffer with its drain port.
  struct Buffered {
    StoreBuffer buf;
    uint64_t next = 0;             // the cycle the core (RUNNING) issues its next instruction
  };
  std::vector<Buffered> sb_;
  // Per core, what the loop needs of cores_ and sb_ in small arrays (NEVER when none): the next
  // cycle it must be visited (its issue; with caches also its drain's start, which looks its cache
  // up); the cycle of its own request for the bus; the cycle its drain requests it (without caches
  // a drain starts without a visit, in the cycle its entry and its port allow); the earlier of the
  // two; its buffer's turn (own_last). The loop finds the next cycle in which anything happens, and
  // the arbiter its candidates, in them. Derived only: sb_update() keeps a core's after every
  // change to it, and run_buffered computes them all again when it starts (after a pause, a
  // snapshot's restore).
  std::vector<uint64_t> sb_wake_, sb_own_, sb_drain_, sb_bus_;
  std::vector<uint8_t> sb_turn_;
  void sb_update(int id);
  // An entry of b left in step 1b or 2 of cycle c: an instruction it held back tries again at c + 1.
  static void let_go(Buffered& b, uint64_t c) {
    if (b.buf.held_since() != ~0ull) b.next = c + 1;
  }
  bool run_buffered(uint64_t pause);
  // With store buffers the loop runs in cycle order (no core runs ahead while tracing), so every
  // event goes to its core's lane in the order it happens, the caches' changes of other cores too.
  void sb_log(uint64_t cycle, uint32_t pc, int id, TraceKind kind, uint64_t wait = 0, uint32_t address = 0,
              int32_t before = 0, int32_t after = 0, uint8_t xact = 0, uint32_t span = 0) {
    if (tracing_) trace_->push({cycle, pc, static_cast<uint16_t>(id), kind, xact, wait, address, before, after, span});
  }
  void sb_log_changes(uint64_t cycle, uint32_t pc) {
    if (!tracing_) return;
    for (const StateChange& ch : caches_.changes())
      trace_->push({cycle, pc, ch.core, TraceKind::STATE, ch.cause, ch.by, ch.line_addr, ch.from, ch.to, 0});
  }
  uint64_t sb_cycle_ = 0;          // the next cycle run_buffered simulates
  bool drain_last_ = false;        // the last grant went to a drain
  bool sb_breaks(uint64_t c) const;   // a core about to issue at c stands on a breakpoint
  bool buffered_issue(int id, uint64_t c);
  uint64_t run_ahead(int id, uint64_t t);
  void start_drain(int id, uint64_t c);
  void buffered_grant(uint64_t c);
  bool schedule() { return cached_ ? schedule_as<true>() : schedule_as<false>(); }
  template <bool Cached> void grant(int id, uint64_t g);
  uint64_t bound_excluding(int id) const;
  void fault(int id, FaultKind kind, uint32_t address = 0);
  void release_barrier();

  // req_[i]: the earliest cycle core i could next use the bus: its request cycle when pending, its
  // next issue cycle when running, NEVER otherwise. Kept apart from Core so the scheduler's scans
  // touch one small array.
  uint64_t req_[MAX_CORES];
  void set_status(int id, Status st) {
    cores_[id].status = st;
    req_[id] = (st == Status::RUNNING || st == Status::PENDING || st == Status::LOOKUP) ? cores_[id].t : ~0ull;
    if (tracing_ && (st == Status::HALTED || st == Status::STOPPED)) trace_->close(id);
  }
  void log(uint64_t cycle, uint32_t pc, int id, TraceKind kind, uint64_t wait, uint32_t address = 0,
           int32_t before = 0, int32_t after = 0) {
    trace_->push({cycle, pc, static_cast<uint16_t>(id), kind, 0, wait, address, before, after, 0});
  }
  template <bool Cached> uint64_t access(int id, const Uop& u, uint32_t addr, uint64_t t_req, uint64_t g, uint32_t& pc);
  // The state changes the caches made in the last lookup or transaction of core id, caused by its
  // instruction at pc, to the trace: its own in its lane, the others' in the lane of others.
  void log_changes(uint64_t cycle, uint32_t pc, int id) {
    for (const StateChange& ch : caches_.changes()) {
      TraceEvent e{cycle, pc, ch.core, TraceKind::STATE, ch.cause, ch.by, ch.line_addr, ch.from, ch.to, 0};
      if (ch.core == id) trace_->push(e);
      else trace_->push_other(e);
    }
  }

  Config cfg_;
  std::vector<Uop> prog_;
  std::vector<int32_t> mem_;
  std::vector<Core> cores_;
  std::vector<PrintEvent> output_;
  uint64_t bus_free_ = 0;          // first cycle at which the bus is idle
  uint64_t limit_;                 // cores stop issuing at this cycle (max_cycles or a fault)
  int last_grant_ = -1;            // for round-robin
  int burst_streak_ = 0;           // grants in a row to last_grant_ (burst4)
  Fault fault_;
  uint32_t entry_;
  Stacks stacks_;
  bool guarded_;                   // stacks are declared
  bool tracing_ = false;
  std::unique_ptr<TraceMerger> trace_;
  bool cached_;                    // the cores have caches (cfg_.cache.protocol is not NONE)
  Caches caches_;

  // Stepping (stepping.cpp). Cores issue nothing at or after pause_, and no grant happens there.
  uint64_t pause_ = ~0ull;
  bool breaking_ = false;          // some breakpoint or watch is set
  std::vector<CoreSet> brk_;       // per pc: the cores that stop there
  std::vector<uint32_t> watch_;    // watched addresses (a few)
  uint64_t break_from_ = 0;        // breakpoints count from this cycle (not the one just stopped at)
  uint64_t hit_ = ~0ull;           // the earliest stop a breakpoint or watch asked for in this advance
  int ret_core_ = -1;              // the return trap (set_return_trap): core, pc, frame pointer
  uint32_t ret_pc_ = 0;
  int32_t ret_fp_ = 0;
  void update_breaking() {
    breaking_ = !watch_.empty() || ret_core_ >= 0 ||
                std::any_of(brk_.begin(), brk_.end(), [](const CoreSet& m) { return m.any(); });
  }
  WriteHit write_hit_;
  bool watching(uint32_t addr) const { return std::find(watch_.begin(), watch_.end(), addr) != watch_.end(); }
  bool watched(const Uop& u, uint32_t addr) const { return (u.bus == BUS_WRITE || u.bus == BUS_SWAP) && watching(addr); }
  void break_at(uint64_t t) {      // a breakpoint or watch asks to stop at t: the earliest wins
    hit_ = std::min(hit_, t);
    pause_ = std::min(pause_, t);
  }
  void note_write(int id, uint32_t pc, uint32_t addr, int32_t before, uint64_t g, bool drain = false);
  // What advance() puts back when a breakpoint turns out to lie behind a core that already ran
  // past it (the cores run out of cycle order), and what reverse stepping keeps (checkpoint(),
  // rewind()): every member a run changes, but the trace (off while breaking). A new such member
  // belongs here too.
 public:
  struct Snapshot {
    std::vector<Core> cores;
    std::vector<int32_t> mem;
    std::vector<PrintEvent> output;
    std::vector<uint64_t> req;
    uint64_t bus_free, limit;
    int last_grant, burst_streak;
    Fault fault;
    Caches caches;
    std::vector<Buffered> sb;
    uint64_t sb_cycle;
    bool drain_last;
    size_t bytes() const;          // about what it holds in memory
  };
  // Reverse stepping (s2mc.simulator.stepping): the state at a pause, and back to one saved at
  // `cycle`; the next advance counts breakpoints from `break_from`.
  Snapshot checkpoint() const { return save(); }
  void rewind(const Snapshot& s, uint64_t cycle, uint64_t break_from);

 private:
  Snapshot save() const;
  void restore(const Snapshot& s);
};

}  // namespace s2
