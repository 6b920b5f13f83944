// The fast engine's machine with directory coherence over a ring or a mesh (docs/timing-model.md,
// "Directory coherence over a network"): the cores of the bus machine (semantics.h), each with a
// private cache, meeting the homes through a Network (network.h) under a Directory (directory.h).
// The bus machine (fast_engine.h) is untouched: a networked config selects this engine.
//
// A cycle-stepped loop in the order of the rules (simulator/src/networked.cpp), skipping the cycles
// in which nothing can happen; a core runs ahead alone only through instructions that touch its
// registers alone and cannot fault.
#pragma once

#include <algorithm>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "directory.h"
#include "machine.h"
#include "store_buffer.h"
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

// The directory of a machine of cfg's cores and caches over `net`, keeping `mem`'s words as the
// homes' slices (both C++ engines build theirs so).
inline std::unique_ptr<Directory> make_directory(const Config& cfg, const NetworkConfig& net, std::vector<int32_t>* mem,
                                                 DirectoryHost* host) {
  return std::make_unique<Directory>(cfg.cores, cfg.cache, static_cast<uint32_t>(cfg.mem_latency),
                                     Topology(net.kind, cfg.cores), net.router_latency, net.link_latency,
                                     net.flit_words, mem, host);
}

// The network's counters of a finished run into `out` (both C++ engines report them so).
inline void collect_counters(const Directory& dir, int cores, uint64_t quiet, NetworkedResult& out) {
  for (int i = 0; i < cores; ++i) out.tiles.push_back(dir.stats(i));
  for (unsigned t = 0; t < MSG_KINDS; ++t) out.messages[t] = dir.messages(t);
  out.invalidations = dir.invalidations();
  const Network& net = dir.net();
  for (const auto& link : net.topology().links()) out.link_flits.push_back({link, net.carried(link.first, link.second)});
  out.quiet = quiet;
}

// A core's store buffer drained through its cache over the network (docs/timing-model.md, "Store
// buffers over the network"), the part both C++ engines share: which entry is being drained, whether
// its GetM is out (the core's one request) and since when. The engines call it at the same points
// of the cycle: start() in step 3b, complete() when the drain's GetM takes effect (step 1),
// own_may_miss() and own_missed() at the core's own access in step 3.
class NetworkDrain {
 public:
  // Step 3b for `core` at c (own_out: the core's own miss is out): its port free and no GetM out,
  // the entry being drained (chosen now if none is) is written through the cache as a store: a hit
  // now (the port busy H cycles), a miss sends its GetM if the core's one request is free, else it
  // tries again at c + 1. Counts into s; returns whether an entry left the buffer.
  bool start(int core, StoreBuffer& buf, Directory& dir, const Config& cfg, uint64_t c, bool own_out, CoreStats& s) {
    if (buf.empty() || out_ || buf.port_free() > c) return false;
    if (entry_ < 0) {
      entry_ = buf.choose(cfg.consistency, c);
      if (entry_ < 0) return false;
    }
    int32_t* word = nullptr;
    switch (dir.access(core, true, buf.at(entry_).addr, c, word, !own_out)) {
      case Directory::HIT:
        *word = buf.drain_hit(entry_, c, cfg.cache.hit_latency).value;
        entry_ = -1;
        ++s.store_drains;
        ++s.mem_writes;
        return true;
      case Directory::MISS:
        out_ = true;
        sent_ = c;
        buf.own_granted(false);   // the request went to the drain
        ++s.mem_accesses;
        ++s.drain_bus_accesses;
        return false;
      default:
        return false;
    }
  }
  // The drain's GetM took effect at c on `word`: its store is written, the entry leaves, the port
  // is free from c + 1.
  void complete(StoreBuffer& buf, int32_t* word, uint64_t c, CoreStats& s) {
    *word = buf.drain_hit(entry_, c, 1).value;
    entry_ = -1;
    out_ = false;
    ++s.store_drains;
    ++s.mem_writes;
    s.drain_bus_cycles += c - sent_;
  }
  bool out() const { return out_; }
  // The core's own access may send a request (its own miss is not out): the drain's GetM is not
  // out, and it is not its waiting drain's turn.
  bool own_may_miss(const StoreBuffer& buf) const { return !out_ && !(entry_ >= 0 && buf.own_last()); }
  // The core's own miss sent its request: the drain that waited goes next.
  void own_missed(StoreBuffer& buf) const { buf.own_granted(entry_ >= 0); }
  // The first cycle after c in which the drain may act (NEVER: none can until a delivery).
  uint64_t wake(const StoreBuffer& buf, uint64_t c) const {
    if (buf.empty() || out_) return std::numeric_limits<uint64_t>::max();
    return entry_ >= 0 ? c + 1 : std::max(c + 1, buf.drain_start());
  }

 private:
  int entry_ = -1;     // the entry being drained, chosen once and kept while it waits (-1: none)
  bool out_ = false;   // its GetM is out
  uint64_t sent_ = 0;  // ... since this cycle
};

class NetworkedEngine : private DirectoryHost {
 public:
  // cfg.cache must be msi or mesi (the host checks); with consistency tso or pso each core drains
  // its store buffer (store_buffer.h) into its cache through the directory.
  NetworkedEngine(const Image& image, const Config& cfg, const NetworkConfig& net);
  NetworkedResult run();
  // Logs every event to `sink` in (cycle, core) order (docs/timing-model.md, "The event log of a
  // network"). The cores then issue one instruction a cycle, as the reference model logs them.
  void enable_trace(TraceMerger::Sink sink);
  bool tracing() const { return tracing_; }

  std::vector<int32_t>& memory() { return mem_; }   // after run(): the coherent memory
  const int32_t* registers(int core) const { return cores_[static_cast<size_t>(core)].r; }
  int core_count() const { return cfg_.cores; }
  bool buffered() const { return buffered_; }

  uint32_t cache_lines() const { return cfg_.cache.lines; }
  // Stepping (docs/debugger.md; networked_stepping.cpp), as FastEngine's: advance(pause) runs the
  // cycles before `pause`, or to an earlier breakpoint or watched write; false when the run ended
  // (then result(), once the network has gone quiet). The loop goes in cycle order, so the first
  // breakpoint or watch met is the earliest and no rerun is needed.
  bool advance(uint64_t pause);
  const NetworkedResult& result();
  uint64_t paused_at() const { return now_; }
  void set_break(uint32_t pc, const std::vector<int>& cores);
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
    // tso, pso: the store buffer and its drain
    StoreBuffer buf;
    NetworkDrain drain;
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
  bool buffer_issue(int id, uint64_t c, bool& done);   // the store buffer's part of issue()
  uint64_t run_ahead(int id, uint64_t t);
  void complete(int id, int32_t* word, uint64_t c) override;
  void wrote(int id, uint32_t pc, uint32_t a, int32_t before, int32_t after, uint64_t c);   // a watch
  bool at_break(uint64_t c) const;   // a core is about to issue at a breakpoint (or the return trap) at c
  uint32_t pc(int id) const override { return cores_[static_cast<size_t>(id)].pc; }
  void log(uint64_t c, uint32_t pc, int id, TraceKind kind, uint64_t wait = 0, uint32_t address = 0, int32_t before = 0,
           int32_t after = 0, uint8_t xact = 0) {
    log_.push_back({c, pc, static_cast<uint16_t>(id), kind, xact, wait, address, before, after, 0});
  }
  void emit_before(uint64_t c);   // hands the logged events of the cycles before c to the sink
  void fault(int id, FaultKind kind, uint64_t c, uint32_t address = 0);
  std::string text_at(uint32_t a) const;   // trap #3's string, from the coherent memory

  Config cfg_;
  bool buffered_;
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
  std::vector<CoreSet> brk_;         // per pc: the cores a breakpoint stops
  std::vector<uint32_t> watch_;
  int ret_core_ = -1;
  uint32_t ret_pc_ = 0;
  int32_t ret_fp_ = 0;
  bool breaking_ = false;            // any breakpoint, watch or return trap is set
  WriteHit write_hit_;
  void update_breaking();
  // The events not yet handed over, in the order the reference model logs them: those of the cycles
  // before the one being simulated are final (a home's messages are logged ahead, at the end of its
  // occupancy), so emit_before() sorts them stably by (cycle, core) and hands them over.
  bool tracing_ = false;
  std::vector<TraceEvent> log_;
  TraceMerger::Sink sink_;
};

}  // namespace s2
