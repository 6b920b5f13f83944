// The shared bus: cores call transfer() (s2_bus_if) from their own threads; the bus's process
// grants one request per free bus cycle, choosing through the arbiter port, and performs the
// access on the memory port. The bus is then busy for L cycles (docs/timing-model.md).
//
// Timing without polling: the bus process (an SC_METHOD) runs only at cycles where a grant can
// happen: the first cycle g >= max(earliest request, end of the previous access). A grant for
// cycle g is decided only when every request for cycles <= g has been posted:
//  - without a VCD trace, a core posts each request ahead of its cycle (at the simulated time it
//    last met the kernel, which is never later than the request cycle, and earlier except at
//    time 0), because nothing can change an instruction once it has issued in the core's local
//    time; so at time g all requests for g are known, except at time 0 (posted in delta 0);
//  - with a VCD trace, a core first waits until its request cycle (so its signals change at the
//    right time), so requests for g arrive in the first delta of g.
// In both cases the bus settles one delta cycle before deciding when a request could still be
// arriving in the current delta (time 0, or VCD mode).
//
// With store buffers (tso, pso) the bus also drains them, and each cycle it wakes in is stepped in
// the order of the rules (docs/timing-model.md, "Store buffers"): every core issues what it issues
// at c in the first delta cycle of c (step 1), then the bus, one delta later, starts the drains
// (step 1b: a write hit takes effect, or the drain requests the bus) and grants the bus to one
// core's own request or its drain's (step 2, the turns of rule 6 decided here, the policy by the
// arbiter as before). It wakes at every cycle in which a drain can start or a request be granted.
#pragma once

#include <systemc>

#include <algorithm>
#include <vector>

#include "interfaces.h"

namespace s2sc {

class s2_bus : public sc_core::sc_module, public s2_bus_if, public s2_drain_if {
 public:
  sc_core::sc_port<s2_arbiter_if> arbiter;
  sc_core::sc_port<s2_mem_if> memory;
  // Traced signals (driven only with --vcd): the core that owns the bus, and whether it is busy.
  sc_core::sc_out<sc_dt::sc_uint<8>> owner;
  sc_core::sc_out<bool> busy;

  SC_HAS_PROCESS(s2_bus);
  s2_bus(sc_core::sc_module_name name, run_control& ctl);

  uint64_t transfer(mem_request& rq) override;
  void ready(int, uint64_t) override {}   // the bus drains one delta cycle after the cores issue
  void buffered(int core, uint64_t t) override;
  uint64_t drained(int core) override;

 private:
  void arbitrate();  // SC_METHOD, triggered by m_wake
  void grant(mem_request* rq, uint64_t g);  // performs a core's own access at g
  void stop_pending();                       // the run stopped: no waiting request is granted
  // With store buffers: steps 1b and 2 of cycle `now`, once, then the next cycle to wake in.
  void step_buffered(uint64_t now);
  void start_drains(uint64_t c);
  void grant_buffered(uint64_t g);
  void drain_granted(int core, uint64_t g);
  void left(int core);
  void wake_at(uint64_t c);  // m_wake at cycle c >= now (the earliest pending notification wins)

  run_control& m_ctl;
  uint64_t m_free = 0;                       // first cycle at which the bus is idle
  uint64_t m_settled = NEVER;                // the cycle at which one delta has passed (see above)
  std::vector<mem_request*> m_pending;       // requests waiting for a grant
  sc_core::sc_event m_wake;                  // run the bus process (timed or delta notification)
  std::vector<sc_core::sc_event> m_granted;  // per core: its request was granted (or stopped)
  // With store buffers: per core, an entry left its buffer; each core's waiting drain as a
  // request (for the arbiter); the last cycle stepped.
  std::vector<sc_core::sc_event> m_drained;
  std::vector<mem_request> m_drain_rq;
  uint64_t m_stepped = NEVER;
};

}  // namespace s2sc
