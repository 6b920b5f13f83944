// The S2 multicore as both engines see it: configuration, counters, results and faults.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "semantics.h"

namespace s2 {

enum class Arbitration : uint8_t { FIFO, FIXED, ROUND_ROBIN };

constexpr int MAX_CORES = 64;

struct Config {
  int cores = 1;
  int mem_latency = 2;                 // L: bus busy cycles per access
  Arbitration arbitration = Arbitration::FIFO;
  uint64_t max_cycles = 100'000'000;   // the run faults if a core is still running at this cycle
  uint32_t mem_words = 1u << 20;       // size of the shared data memory
};

// Per-core counters (docs/timing-model.md). stall_cycles is derived: bus_wait + (L-1) * accesses.
struct CoreStats {
  uint64_t instructions = 0;
  uint64_t finish_cycle = 0;     // cycle after the core's halting trap
  uint64_t mem_reads = 0;
  uint64_t mem_writes = 0;
  uint64_t mem_accesses = 0;     // bus transactions (xchg is one access, one read and one write)
  uint64_t bus_wait_cycles = 0;  // sum of (grant - request)
  uint64_t bus_busy_cycles = 0;  // L per access
  uint64_t sync_wait_cycles = 0;
};

enum class FaultKind : uint8_t { NONE, UNDEFINED_OPCODE, PC_OUT_OF_RANGE, ADDRESS_OUT_OF_RANGE, DIVISION_BY_ZERO, CYCLE_LIMIT };

struct Fault {
  FaultKind kind = FaultKind::NONE;
  int core = -1;
  uint32_t pc = 0;
  uint64_t cycle = 0;
  uint32_t word = 0;     // the instruction word at pc (0 when pc is outside the program)
  uint32_t address = 0;  // the data address, for ADDRESS_OUT_OF_RANGE
};

struct PrintEvent {
  uint64_t cycle;
  int core;
  std::string text;
};

// One line of a --trace log. Events are kept only when tracing is on.
enum class TraceKind : uint8_t { ISSUE, REQUEST, GRANT, SYNC, RESUME, HALT };
struct TraceEvent {
  uint64_t cycle;
  uint32_t pc;
  uint16_t core;
  TraceKind kind;
  uint64_t wait;  // GRANT: cycles waited for the bus; RESUME: cycles waited at the barrier
};

struct RunResult {
  uint64_t cycles = 0;           // the largest finish cycle
  uint64_t bus_busy_cycles = 0;
  std::vector<CoreStats> cores;
  std::vector<PrintEvent> output;  // ordered by (cycle, core)
  Fault fault;
  std::vector<TraceEvent> trace;
};

// The program as the engines load it: a private image per core (all identical) and the initial
// shared data memory.
struct Image {
  std::vector<uint32_t> code;
  std::vector<int32_t> data;
  uint32_t entry = 0;
};

}  // namespace s2
