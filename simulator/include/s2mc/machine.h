// The S2 multicore as both engines see it: configuration, counters, results and faults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "s2_counters.h"  // generated from simulator/counters.toml: the counters' names
#include "s2_params.h"  // generated from simulator/params.toml: defaults and ranges
#include "coherence.h"
#include "semantics.h"
#include "store_buffer.h"

namespace s2 {

// In the order of the arbitration choices in simulator/params.toml.
enum class Arbitration : uint8_t { FIFO, FIXED, ROUND_ROBIN, BURST4 };
constexpr bool same_name(const char* a, const char* b) { return *a == *b && (*a == 0 || same_name(a + 1, b + 1)); }
static_assert(params::ARBITRATION_COUNT == 4 && same_name(params::ARBITRATION_CHOICES[0], "fifo") &&
                  same_name(params::ARBITRATION_CHOICES[1], "fixed") &&
                  same_name(params::ARBITRATION_CHOICES[2], "round_robin") &&
                  same_name(params::ARBITRATION_CHOICES[3], "burst4"),
              "the arbitration choices of simulator/params.toml and enum Arbitration differ");

// The policy named `name` (a choice of params.toml); false when there is none.
inline bool arbitration_from_name(const std::string& name, Arbitration& out) {
  return params::choice_from_name(name, params::ARBITRATION_CHOICES, out);
}

// burst4: fixed priority, but a core granted this many times in a row (no other core granted in
// between) goes last: a burst limit of a 4-beat burst (docs/timing-model.md).
constexpr int BURST_LIMIT = 4;

constexpr int MAX_CORES = static_cast<int>(params::CORES_MAX);

struct Config {
  int cores = static_cast<int>(params::CORES_DEFAULT);
  int mem_latency = static_cast<int>(params::MEM_LATENCY_DEFAULT);  // L: bus busy cycles per access
  Arbitration arbitration = static_cast<Arbitration>(params::ARBITRATION_DEFAULT);
  uint64_t max_cycles = params::MAX_CYCLES_DEFAULT;  // the run faults if a core is still running at this cycle
  uint32_t mem_words = static_cast<uint32_t>(params::MEM_WORDS_DEFAULT);  // size of the shared data memory
  CacheConfig cache;  // protocol NONE: no caches (every access uses the bus)
  Consistency consistency = static_cast<Consistency>(params::CONSISTENCY_DEFAULT);  // SC: no store buffers
  uint32_t store_buffer_entries = static_cast<uint32_t>(params::STORE_BUFFER_ENTRIES_DEFAULT);
  bool buffered() const { return consistency != Consistency::SC; }
};

static_assert(params::CONSISTENCY_COUNT == 3 && same_name(params::CONSISTENCY_CHOICES[0], "sc") &&
                  same_name(params::CONSISTENCY_CHOICES[1], "tso") && same_name(params::CONSISTENCY_CHOICES[2], "pso"),
              "the consistency choices of simulator/params.toml and enum Consistency differ");

// Per-core counters, one field per counter the engines count in simulator/counters.toml (what each
// means: docs/timing-model.md, "Counters"). The cache group is counted only with caches on.
struct CoreStats {
#define S2_COUNTER_FIELD(name) uint64_t name = 0;
  S2_BASE_COUNTERS(S2_COUNTER_FIELD)
  S2_CACHE_COUNTERS(S2_COUNTER_FIELD)
  S2_BUFFER_COUNTERS(S2_COUNTER_FIELD)
#undef S2_COUNTER_FIELD
};

enum class FaultKind : uint8_t {
  NONE, UNDEFINED_OPCODE, PC_OUT_OF_RANGE, ADDRESS_OUT_OF_RANGE, DIVISION_BY_ZERO, CYCLE_LIMIT, STACK_OVERFLOW
};

// The name both engines report a fault by (s2mc.simulator's fault_message reads it).
inline const char* fault_name(FaultKind k) {
  switch (k) {
    case FaultKind::UNDEFINED_OPCODE: return "undefined_opcode";
    case FaultKind::PC_OUT_OF_RANGE: return "pc_out_of_range";
    case FaultKind::ADDRESS_OUT_OF_RANGE: return "address_out_of_range";
    case FaultKind::DIVISION_BY_ZERO: return "division_by_zero";
    case FaultKind::CYCLE_LIMIT: return "cycle_limit";
    case FaultKind::STACK_OVERFLOW: return "stack_overflow";
    default: return "none";
  }
}

struct Fault {
  FaultKind kind = FaultKind::NONE;
  int core = -1;
  uint32_t pc = 0;
  uint64_t cycle = 0;
  uint32_t word = 0;     // the instruction word at pc (0 when pc is outside the program)
  uint32_t address = 0;  // the data address, for ADDRESS_OUT_OF_RANGE and STACK_OVERFLOW
};

struct PrintEvent {
  uint64_t cycle;
  int core;
  std::string text;
};

// One line of a --trace log. Events are made only when tracing is on, and go to a sink (trace.h).
// With caches: HIT (an access served by the core's cache, logged like a grant), XGRANT (the grant
// of a coherence transaction: `xact` names it, `span` is its bus time D) and STATE (a line's state
// change: `wait` is the core whose transaction caused it, `address` the line's base, `before` and
// `after` the LineStates, `xact` the cause).
// Over a network (directory.h): REQUEST with `xact` (the request message), DONE (a miss's access
// takes effect: `xact` the message that completed it, `wait` its latency), and per message SEND (at
// its source), PORT (an output port's grant: `span` the flits, the port in its top byte) and HOME
// (a home handled it: `span` its occupancy, `before` and `after` the directory states).
enum class TraceKind : uint8_t { ISSUE, REQUEST, GRANT, SYNC, RESUME, HALT, HIT, XGRANT, STATE, BUFFER, FORWARD, DRAIN, DRAIN_HIT,
                                 DONE, SEND, PORT, HOME };
struct TraceEvent {
  uint64_t cycle;
  uint32_t pc;
  uint16_t core;
  TraceKind kind;
  uint8_t xact = 0;  // XGRANT: the transaction; STATE: the cause (an Xact)
  uint64_t wait;     // GRANT: cycles waited for the bus; RESUME: cycles waited at the barrier
  uint32_t address;  // REQUEST, GRANT: the data address
  int32_t before;    // GRANT: the word at the address before the access (what a load or xchg read)
  int32_t after;     // GRANT: the word there after it (what a store or xchg wrote; a load leaves it)
  uint32_t span = 0; // XGRANT: the bus time D
};

struct RunResult {
  uint64_t cycles = 0;           // the largest finish cycle
  uint64_t bus_busy_cycles = 0;
  std::vector<CoreStats> cores;
  std::vector<PrintEvent> output;  // ordered by (cycle, core)
  Fault fault;
};

// The per-core stack regions a program declares (`.stacks BASE WORDS COUNT`, docs/isa.md): core c
// owns [base + c*words, base + (c+1)*words) for c < count. count 0: none declared. The host checks
// that the area ends within 32 bits.
struct Stacks {
  uint32_t base = 0, words = 0, count = 0;
};

// One core's view of the declared stacks, made once per core: a data access faults STACK_OVERFLOW
// when it falls in the area of all the regions but outside the core's own region (rule 6 of
// docs/timing-model.md). Two unsigned compares, offsets from the area's base: an address below
// the base wraps to a large offset, outside the area. With nothing declared the area is empty, so
// the first compare is always false; the fast engine does not even call it then.
struct StackGuard {
  uint32_t base = 0, area = 0;  // the area: [base, base + area)
  uint32_t own = 0, own_words = 0;  // this core's region: offsets [own, own + own_words); none: 0 words
  StackGuard() = default;
  StackGuard(const Stacks& s, int core)
      : base(s.base), area(s.words * s.count),
        own(static_cast<uint32_t>(core) < s.count ? static_cast<uint32_t>(core) * s.words : 0),
        own_words(static_cast<uint32_t>(core) < s.count ? s.words : 0) {}
  bool violates(uint32_t address) const {
    const uint32_t off = address - base;
    return off < area && off - own >= own_words;
  }
};

// The program as the engines load it: a private image per core (all identical), the initial
// shared data memory and the declared stacks.
struct Image {
  std::vector<uint32_t> code;
  std::vector<int32_t> data;
  uint32_t entry = 0;
  Stacks stacks;
};

}  // namespace s2
