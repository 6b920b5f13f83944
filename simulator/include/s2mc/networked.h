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

  std::vector<int32_t>& memory() { return mem_; }   // after run(): the coherent memory
  const int32_t* registers(int core) const { return cores_[static_cast<size_t>(core)].r; }
  int core_count() const { return cfg_.cores; }

  uint32_t cache_lines() const { return cfg_.cache.lines; }
  // Stepping (docs/debugger.md; networked_stepping.cpp), as FastEngine's: advance(pause) runs the
  // cycles before `pause`, or to an earlier breakpoint or watched write; false when the run ended
  // (then result(), once the network has gone quiet). The loop goes in cycle order, so the first
  // breakpoint or watch met is the earliest and no rerun is needed.
  bool advance(uint64_t pause);
  const NetworkedResult& result();
  uint64_t paused_at() const { return now_; }
  void set_break(uint32_t pc, uint64_t cores);
  void set_watch(uint32_t address, bool on);
  void set_return_trap(int core, uint32_t pc, int32_t fp);
  struct WriteHit { int core = -1; uint32_t pc = 0, address = 0; int32_t before = 0, after = 0; uint64_t cycle = 0; };
  const WriteHit& write_hit() const { return write_hit_; }
  struct CoreView { const char* status; uint32_t pc; uint64_t t; uint32_t req_addr; const CoreStats* stats; };
  CoreView core_view(int id) const;
  const Directory& directory() const { return *dir_; }
  int32_t word(uint32_t a) const { return dir_->word(a); }   // the coherent value now
  std::vector<PrintEvent> output_so_far() const;
  struct Snapshot;   // a copy of the whole machine at a pause (reverse stepping)
  Snapshot checkpoint() const;
  void rewind(const Snapshot& s, uint64_t cycle, uint64_t break_from);

 private:
  enum class Status : uint8_t { RUNNING, MISS, SYNC, HALTED };
  struct Core {
    int32_t r[NUM_REGS + 1] = {};  // r[32] absorbs writes to r0
    uint32_t pc = 0;
    uint64_t next = 0;             // RUNNING: the cycle it issues its next instruction; SYNC: since when
    Status status = Status::RUNNING;
    CoreStats s;
  };

 public:
  struct Snapshot {
    std::vector<Core> cores;
    std::vector<int32_t> mem;
    std::vector<PrintEvent> output;
    Fault fault;
    Directory dir;
    uint64_t now;
    size_t bytes() const;
  };

 private:
  bool issue(int id, uint64_t c);   // false on a fault
  uint64_t run_ahead(int id, uint64_t t);
  void complete(int id, int32_t* word, uint64_t c) override;
  void wrote(int id, uint32_t pc, uint32_t a, int32_t before, int32_t after, uint64_t c);   // a watch
  bool at_break(uint64_t c) const;   // a core is about to issue at a breakpoint (or the return trap) at c
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
  // stepping
  uint64_t now_ = 0;                 // the cycle the loop goes on from: every event before it happened
  uint64_t pause_ = ~0ull;           // advance's bound (a watched write lowers it)
  uint64_t break_from_ = 0;          // breakpoints stop from this cycle on
  bool ended_ = false, finished_ = false;
  NetworkedResult result_;
  std::vector<uint64_t> brk_;        // per pc: the cores a breakpoint stops
  std::vector<uint32_t> watch_;
  int ret_core_ = -1;
  uint32_t ret_pc_ = 0;
  int32_t ret_fp_ = 0;
  bool breaking_ = false;            // any breakpoint, watch or return trap is set
  WriteHit write_hit_;
  void update_breaking();
};

}  // namespace s2
