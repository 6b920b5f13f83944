// The interfaces between the modules of the SystemC engine, one per role, in the manner of
// SystemC's simple_bus example: a core is a bus *master* (s2_bus_if) and a barrier *participant*
// (s2_sync_if); the bus asks an *arbiter* (s2_arbiter_if) whom to grant and performs the access
// on the *slave*, the memory (s2_mem_if).
//
// What an instruction does is defined once, in s2mc/semantics.h, shared with the fast engine;
// these modules decide only *when* it happens (docs/timing-model.md).
#pragma once

#include <systemc>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "s2mc/machine.h"
#include "s2mc/networked.h"
#include "s2mc/trace.h"

namespace s2sc {

constexpr uint64_t NEVER = std::numeric_limits<uint64_t>::max();

// One bus transaction: a memory instruction of one core, from its request to its grant. The core
// fills in the request half at issue; the bus fills in the response half at the grant with what
// the memory returned. Only words travel: the core applies the result to its own registers
// (s2::writeback), and neither the bus nor the memory sees them.
struct mem_request {
  // request: from the core, at issue
  int core = 0;
  uint64_t request_cycle = 0;  // t: the cycle the instruction issued and requested the bus
  uint32_t pc = 0;             // the instruction's address (for the trace)
  uint32_t address = 0;        // checked against the memory size at issue
  s2::Bus kind = s2::BUS_NONE; // read, write, swap or string (trap #3)
  int32_t wdata = 0;           // the word a write or swap stores (s2::store_value)
  // response: from the bus, at the grant
  uint64_t grant_cycle = NEVER;  // g, or NEVER when the run stopped before a grant
  uint64_t span = 0;           // the cycles the access holds the bus: L, or a transaction's D; over
                               // a network the cycles until the core issues again (H for a hit, else 1)
  bool miss = false;           // over a network: the access missed in the core's cache
  int32_t rdata = 0;           // the word a read or swap found at the address
  std::string text;            // a string access: the characters it read
};

// Master side of the bus. Blocking: returns once the request is granted and the access has taken
// effect (at the grant cycle g, the current simulation time), or with NEVER when the run stopped
// (fault or cycle limit) before the request could be granted.
class s2_bus_if : public virtual sc_core::sc_interface {
 public:
  virtual uint64_t transfer(mem_request& rq) = 0;
};

// What drains a core's store buffer (consistency tso, pso): its stores wait in its buffer
// (run_control::buffers) and the bus drains them (docs/timing-model.md, "Store buffers"), or over
// a ring or a mesh the core's tile, through its cache ("Store buffers over the network").
// ready(): the core stands at cycle t (now) about to look at its buffer; returns once every change
// the buffer meets before the core's step at t has happened (over a network: step 1's deliveries).
// buffered(): the core's buffer took an entry at cycle t (now); its drain may start at t + 1.
// drained(): blocks until an entry of the core's buffer has left it; returns the cycle the
// instruction it held back tries again (the cycle after, or over a network the same cycle when
// the entry left in step 1, before the cores issue).
class s2_drain_if : public virtual sc_core::sc_interface {
 public:
  virtual void ready(int core, uint64_t t) = 0;
  virtual void buffered(int core, uint64_t t) = 0;
  virtual uint64_t drained(int core) = 0;
};

// Master side of a ring or a mesh with directory coherence (docs/timing-model.md, "Directory
// coherence over a network"): the core's cache controller and its tile, the counterpart of
// s2_bus_if. access() is called at or before the request cycle t (with store buffers at t, after
// s2_drain_if::ready) and blocks until the access has
// taken effect at g (the current simulation time): t for a hit (span H), the cycle its miss's last
// message arrived (span 1), or t for a string (trap #3, read from the coherent memory after every
// core issued at t); NEVER when the run stopped first. The response half of `rq` says which.
// halted(): the core halted at the current cycle (after the last halt the network runs on until
// every write-back has reached its home).
class s2_net_if : public virtual sc_core::sc_interface {
 public:
  virtual uint64_t access(mem_request& rq) = 0;
  virtual void halted(int core) = 0;
};

// The bus asks the arbiter which of the requests made at or before cycle g gets the bus at g.
// Returns an index into `pending`; the arbiter may keep state (round-robin remembers the last
// grantee), so each call is one grant.
class s2_arbiter_if : public virtual sc_core::sc_interface {
 public:
  virtual size_t arbitrate(const std::vector<mem_request*>& pending, uint64_t g) = 0;
};

// Slave side: performs one granted access and returns what it read; it knows nothing of cores.
// `direct()` is the debug/host view of the words (inputs written before the run, outputs read
// after it), outside simulated time.
class s2_mem_if : public virtual sc_core::sc_interface {
 public:
  // A word access (read, write or swap): stores `wdata` for a write or swap and returns the word
  // that was at `address` before the access.
  virtual int32_t access(s2::Bus kind, uint32_t address, int32_t wdata) = 0;
  // A string access (trap #3): the 0-terminated string at `address`, one character per word.
  virtual std::string read_string(uint32_t address) = 0;
  virtual std::vector<int32_t>& direct() = 0;
};

// The barrier of `sync`. Both calls are made at the simulation time of the event (the cycle the
// core issued sync, or issued its halting trap). arrive() blocks until the barrier completes and
// returns the completion cycle c (the waiting cores issue again at c + 1).
class s2_sync_if : public virtual sc_core::sc_interface {
 public:
  virtual uint64_t arrive(int core) = 0;
  virtual void halt(int core) = 0;
};

// Simulated time: one cycle is one nanosecond; the time resolution (1 ps) leaves room for the
// half-cycle clock and grant pulses of the VCD trace.
constexpr uint64_t TICKS_PER_CYCLE = 1000;
inline uint64_t now_cycle() { return sc_core::sc_time_stamp().value() / TICKS_PER_CYCLE; }
inline sc_core::sc_time cycles(uint64_t n) { return sc_core::sc_time::from_value(n * TICKS_PER_CYCLE); }
// Notifies e at cycle c >= now (now: one delta cycle later); an earlier pending notification wins.
inline void notify_at(sc_core::sc_event& e, uint64_t c) {
  const uint64_t now = now_cycle();
  if (c > now) e.notify(cycles(c - now));
  else e.notify(sc_core::SC_ZERO_TIME);
}
inline const sc_core::sc_time& half_cycle() {
  static const sc_core::sc_time h = sc_core::sc_time::from_value(TICKS_PER_CYCLE / 2);
  return h;
}

// What the whole run shares: the configuration, the program, the limit cycle at which every core
// stops issuing, the first fault, the output and the optional event trace. Not a module: a plain
// record the modules write into, like the fast engine's members.
struct run_control {
  s2::Config cfg;
  std::vector<s2::Uop> prog;
  uint32_t entry = 0;
  s2::Stacks stacks;          // the declared stack regions (count 0: none)
  uint64_t limit = 0;         // max_cycles, lowered to c + 1 by a fault at cycle c
  s2::Fault fault;
  std::vector<s2::PrintEvent> output;
  bool vcd = false;           // drive the traced signals (--vcd)
  std::unique_ptr<s2::TraceMerger> trace;  // the per-event log (--trace), when asked for
  // With caches (cfg.cache): every core's cache, looked up by the cores at issue and changed by
  // the bus's transactions at their grants (docs/timing-model.md, "Caches and coherence").
  s2::Caches caches;
  std::function<void()> show_lines;  // with --vcd and caches: drive the signals of changed lines
  // With store buffers (cfg.buffered()): every core's buffer (s2::StoreBuffer, shared with the
  // fast engine), filled by its core at issue and drained by the bus or the network; the counters
  // of the drains, which the drainer counts for each core and the result adds to the core's own;
  // with --vcd, the signal of each buffer's occupancy, driven by whoever changed it.
  std::vector<s2::StoreBuffer> buffers;
  std::vector<s2::CoreStats> drain_stats;
  std::function<void(int)> show_buffer;
  // Over a ring or a mesh (coherence directory): the network's shape; the cores then meet the
  // s2_network module (network.h) instead of the bus, and the caches above stay off.
  bool networked = false;
  s2::NetworkConfig net;
  int halted = 0;             // cores that have halted
  uint64_t last_finish = 0;   // the largest finish cycle so far

  void record_fault(s2::FaultKind kind, int core, uint32_t pc, uint64_t cycle, uint32_t address) {
    // Keep the earliest fault by (cycle, core), as a cycle-stepped machine would meet it first.
    if (fault.kind == s2::FaultKind::NONE || cycle < fault.cycle || (cycle == fault.cycle && core < fault.core)) {
      fault = s2::Fault{kind, core, pc, cycle, pc < prog.size() ? prog[pc].word : 0u, address};
      if (cycle + 1 < limit) limit = cycle + 1;  // the others run on only up to this cycle
    }
  }
  void log(uint64_t cycle, uint32_t pc, int core, s2::TraceKind kind, uint64_t wait = 0, uint32_t address = 0,
           int32_t before = 0, int32_t after = 0, uint8_t xact = 0, uint32_t span = 0) {
    if (trace) trace->push({cycle, pc, static_cast<uint16_t>(core), kind, xact, wait, address, before, after, span});
  }
  // The state changes of the caches' last lookup or transaction, made by core's instruction at pc:
  // its own to its lane, the others' to the lane of others' changes (s2::TraceMerger::push_other).
  // With --vcd also drives the signals of the lines that changed.
  void log_changes(uint64_t cycle, uint32_t pc, int core) {
    if (show_lines) show_lines();
    if (!trace) return;
    for (const s2::StateChange& ch : caches.changes()) {
      const s2::TraceEvent e{cycle, pc, ch.core, s2::TraceKind::STATE, ch.cause, ch.by, ch.line_addr, ch.from, ch.to, 0};
      if (ch.core == core) trace->push(e);
      else trace->push_other(e);
    }
  }
};

}  // namespace s2sc
