// The fast engine's machine with directory coherence over a ring or a mesh (docs/timing-model.md,
// "Directory coherence over a network"): the cores of the bus machine (semantics.h), each with a
// private cache, meeting the homes through a Network (network.h) under a Directory (directory.h).
// The bus machine (fast_engine.h) is untouched: a networked config selects this engine.
//
// A cycle-stepped loop in the order of the rules (simulator/src/networked.cpp), skipping the cycles
// in which nothing can happen; a core runs ahead alone only through instructions that touch its
// registers alone and cannot fault.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "directory.h"
#include "machine.h"
#include "trace.h"   // TraceMerger::Sink

namespace s2 {

struct NetworkConfig {
  Topology::Kind kind = Topology::MESH;
  uint32_t link_latency = static_cast<uint32_t>(params::LINK_LATENCY_DEFAULT);
  uint32_t router_latency = static_cast<uint32_t>(params::ROUTER_LATENCY_DEFAULT);
  uint32_t flit_words = static_cast<uint32_t>(params::FLIT_WORDS_DEFAULT);
};

struct NetworkedResult {
  RunResult run;
  std::vector<NetworkStats> tiles;   // per core (its tile)
  uint64_t messages[MSG_KINDS] = {};
  std::vector<uint64_t> invalidations;   // GetMs that invalidated n copies, n = 0 .. cores
  std::vector<std::pair<std::pair<int, Topology::Port>, uint64_t>> link_flits;   // in Topology::links() order
  uint64_t quiet = 0;                // the cycle the network went quiet after the run
};

class NetworkedEngine : private DirectoryHost {
 public:
  // cfg.cache must be msi or mesi, cfg.consistency sc (the host checks).
  NetworkedEngine(const Image& image, const Config& cfg, const NetworkConfig& net);
  NetworkedResult run();
  // Logs every event to `sink` in (cycle, core) order (docs/timing-model.md, "The event log of a
  // network"). The cores then issue one instruction a cycle, as the reference model logs them.
  void enable_trace(TraceMerger::Sink sink);
  bool tracing() const { return tracing_; }

  std::vector<int32_t>& memory() { return mem_; }   // after run(): the coherent memory
  const int32_t* registers(int core) const { return cores_[static_cast<size_t>(core)].r; }
  int core_count() const { return cfg_.cores; }

 private:
  enum class Status : uint8_t { RUNNING, MISS, SYNC, HALTED };
  struct Core {
    int32_t r[NUM_REGS + 1] = {};  // r[32] absorbs writes to r0
    uint32_t pc = 0;
    uint64_t next = 0;             // RUNNING: the cycle it issues its next instruction; SYNC: since when
    Status status = Status::RUNNING;
    CoreStats s;
  };
  bool issue(int id, uint64_t c);   // false on a fault
  uint64_t run_ahead(int id, uint64_t t);
  void complete(int id, int32_t* word, uint64_t c) override;
  uint32_t pc(int id) const override { return cores_[static_cast<size_t>(id)].pc; }
  void log(uint64_t c, uint32_t pc, int id, TraceKind kind, uint64_t wait = 0, uint32_t address = 0, int32_t before = 0,
           int32_t after = 0, uint8_t xact = 0) {
    log_.push_back({c, pc, static_cast<uint16_t>(id), kind, xact, wait, address, before, after, 0});
  }
  void emit_before(uint64_t c);   // hands the logged events of the cycles before c to the sink
  void fault(int id, FaultKind kind, uint64_t c, uint32_t address = 0);
  std::string text_at(uint32_t a) const;   // trap #3's string, from the coherent memory

  Config cfg_;
  std::vector<Uop> prog_;
  std::vector<int32_t> mem_;
  std::vector<Core> cores_;
  std::vector<PrintEvent> output_;
  std::vector<std::pair<int, uint32_t>> strings_;   // trap #3 issued this cycle: core, address
  Stacks stacks_;
  bool guarded_;
  Fault fault_;
  std::unique_ptr<Directory> dir_;
  // The events not yet handed over, in the order the reference model logs them: those of the cycles
  // before the one being simulated are final (a home's messages are logged ahead, at the end of its
  // occupancy), so emit_before() sorts them stably by (cycle, core) and hands them over.
  bool tracing_ = false;
  std::vector<TraceEvent> log_;
  TraceMerger::Sink sink_;
};

}  // namespace s2
