// A ring or a mesh with directory coherence as one SystemC module (docs/timing-model.md, "Directory
// coherence over a network"): every tile's cache controller and home, and the routers between them.
// The cores are its masters (s2_net_if), as they are the bus's (s2_bus_if) on the bus machine. What
// the network and the protocol do is s2::Network and s2::Directory (network.h, directory.h), shared
// with the fast engine unchanged, called at the same points of the cycle as its loop
// (simulator/src/networked.cpp): this module decides only when each step runs.
//
// Timing: the process (an SC_METHOD) runs only in the cycles in which something can happen: a core's
// access is issued, a message is delivered, a home is free with a message waiting, or a port can
// grant (s2::Directory::next_event). A core posts its access ahead of the access's cycle t (at the
// simulated time it last met the kernel, never later than t and earlier except at time 0, where
// every core posts in the first delta cycle and the process runs one delta later), so when the
// process runs cycle c every access of c is known, and it steps c in the order of the rules:
//   1. deliveries (a miss whose last message arrives takes effect on the requester's copy),
//   2. the homes,
//   3. the accesses of c in core order (a hit takes effect at once; a miss sends its request;
//      a line in the eviction buffer: the access issues again at c + 1),
//      then the strings of trap #3 from the coherent memory,
//   5. the network's ports.
// (Step 4, the barrier, is the barrier module's, as on the bus machine.) After the last halt the
// network runs on, a cycle at a time, until every write-back has reached its home (the quiet cycle).
//
// With store buffers (tso, pso; docs/timing-model.md, "Store buffers over the network") the module
// also drains them (s2_drain_if), through the caches as networked.cpp does (s2::NetworkDrain), and
// a cycle c takes three delta cycles: steps 1 and 2 first (a drain's GetM that takes effect lets
// its entry leave), then every core looks at its buffer at c (s2_drain_if::ready waits for steps 1
// and 2) and issues what it issues at c, and two delta cycles after steps 1 and 2 the process steps
// 3 (the accesses posted for c), 3b (the drains, in core order), the strings and 5.
#pragma once

#include <systemc>

#include <memory>
#include <vector>

#include "interfaces.h"
#include "s2mc/directory.h"

namespace s2sc {

class s2_network : public sc_core::sc_module, public s2_net_if, public s2_drain_if, private s2::DirectoryHost {
 public:
  SC_HAS_PROCESS(s2_network);
  // `memory`: the shared memory's words (the homes' slices; the coherent memory after the run).
  s2_network(sc_core::sc_module_name name, run_control& ctl, std::vector<int32_t>& memory);

  uint64_t access(mem_request& rq) override;
  void halted(int core) override;
  void ready(int core, uint64_t t) override;
  void buffered(int, uint64_t) override {}   // the cycle's step 3b sees the entry
  uint64_t drained(int core) override;

  // After the run: the network's counters in the fast engine's shape (run left empty).
  s2::NetworkedResult counters() const;

 private:
  enum class waits : uint8_t { NOTHING, ISSUE, MISS };
  void cycle();                                    // SC_METHOD, triggered by m_wake
  void issue(int core, uint64_t c);                // step 3 for the core's access at c
  void complete(int core, int32_t* word, uint64_t c) override;   // a miss takes effect at c
  // The event log's pc of a core's access (this engine keeps no log of a network yet: Machine refuses it).
  uint32_t pc(int core) const override {
    const mem_request* rq = m_request[static_cast<size_t>(core)];
    return rq != nullptr ? rq->pc : 0;
  }
  void answer(int core, uint64_t g, uint64_t span);   // the core runs again (g NEVER: stopped)
  void stop();                                     // the run stopped: no waiting access completes
  void wake_at(uint64_t c);
  void left(int core, uint64_t retry);   // an entry left the core's buffer: a held instruction retries then

  run_control& m_ctl;
  std::unique_ptr<s2::Directory> m_dir;
  std::vector<mem_request*> m_request;   // per core: its access, while it waits
  std::vector<waits> m_waits;
  std::vector<sc_core::sc_event> m_done; // per core: its access took effect (or the run stopped)
  std::vector<int> m_strings;            // cores whose trap #3 issued this cycle
  sc_core::sc_event m_wake;
  uint64_t m_stepped = NEVER;            // the last cycle stepped
  // With store buffers: each core's drain, an entry left its buffer (and when the instruction it
  // held retries); the last cycle whose steps 1 and 2 are done, and whether a delta cycle has
  // passed since (the cores issue in it), announced by m_began.
  std::vector<s2::NetworkDrain> m_drain;
  std::vector<sc_core::sc_event> m_drained;
  std::vector<uint64_t> m_retry;
  uint64_t m_begun = NEVER;
  bool m_settled = false;
  sc_core::sc_event m_began;
  int m_halted = 0;
  uint64_t m_last_halt = 0;
  uint64_t m_quiet = 0;                  // the cycle the network went quiet after the last halt
};

}  // namespace s2sc
