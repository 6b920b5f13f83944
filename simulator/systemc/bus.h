// The shared bus: cores call transfer() (s2_bus_if) from their own threads; the bus's thread
// grants one request per free bus cycle, choosing through the arbiter port, and performs the
// access on the memory port. The bus is then busy for L cycles (DESIGN.md §3).
#pragma once

#include <systemc>

#include <vector>

#include "interfaces.h"

namespace s2sc {

class s2_bus : public sc_core::sc_module, public s2_bus_if {
 public:
  sc_core::sc_port<s2_arbiter_if> arbiter;
  sc_core::sc_port<s2_mem_if> memory;
  // Traced signals (driven only with --vcd): one grant pulse per access, in the first half of the
  // grant cycle; the core that owns the bus and whether it is busy.
  sc_core::sc_vector<sc_core::sc_out<bool>> grant;
  sc_core::sc_out<sc_dt::sc_uint<8>> owner;
  sc_core::sc_out<bool> busy;

  SC_HAS_PROCESS(s2_bus);
  s2_bus(sc_core::sc_module_name name, run_control& ctl);

  uint64_t transfer(mem_request& rq) override;

 private:
  void main();

  run_control& m_ctl;
  uint64_t m_free = 0;                       // first cycle at which the bus is idle
  std::vector<mem_request*> m_pending;       // requests waiting for a grant
  sc_core::sc_event m_request_event;         // a request was posted (delta notification)
  std::vector<sc_core::sc_event> m_granted;  // per core: its request was granted (or stopped)
};

}  // namespace s2sc
