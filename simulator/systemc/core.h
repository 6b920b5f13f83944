// One S2 core: private instruction memory (the shared predecoded program) and registers. Its
// thread runs instructions freely in its own local cycle count, which is never behind simulated
// time, and meets the SystemC kernel only when an instruction matters to others:
//  - a bus request: posted to the bus for its cycle t (ahead of time, see bus.h), then the core
//    blocks until the grant cycle g and goes on at g + L;
//  - with caches, a data access first waits until simulated time equals t and looks its line up
//    in the core's cache (s2::Caches, shared with the fast engine): a hit takes effect at t and
//    the core goes on at t + H, without the bus; a miss requests the bus as above (bus.h);
//  - over a ring or a mesh, a data access is posted to its tile (s2_net_if) for its cycle t
//    ahead of time, like a bus request; the core blocks until the access takes effect (t for a
//    hit, which goes on at t + H; the cycle a miss completes, which goes on one cycle later);
//  - a barrier arrival or a halt: the core first waits until simulated time equals its cycle, so
//    the barrier sees arrivals and halts in time order (docs/timing-model.md);
//  - with store buffers (tso, pso), every instruction but those that touch only its registers
//    (and, while tracing, those too) waits until simulated time equals its cycle and its drainer
//    is ready for it (s2_drain_if), since the buffer's state at t is known only then: a store
//    enters the core's buffer (the bus, or over a network the core's tile, drains it), a load may
//    be forwarded from it, and a held-back instruction waits for a drain to take an entry
//    (docs/timing-model.md, "Store buffers").
// Instructions that touch only the core's registers need no kernel time at all.
#pragma once

#include <systemc>

#include "interfaces.h"

namespace s2sc {

class s2_core : public sc_core::sc_module {
 public:
  sc_core::sc_port<s2_bus_if> bus;
  // Over a ring or a mesh (ctl.networked): the core's tile, where its data accesses go instead.
  sc_core::sc_port<s2_net_if, 1, sc_core::SC_ZERO_OR_MORE_BOUND> network;
  // With store buffers: what drains the core's buffer (the bus, or over a network the network).
  sc_core::sc_port<s2_drain_if> drains;
  sc_core::sc_port<s2_sync_if> barrier;
  // With caches: where a hit reads and writes its word. A valid line's data is by construction
  // the current value of each word (docs/timing-model.md), so the cache's data is the memory's.
  sc_core::sc_port<s2_mem_if> line_data;
  // Traced signals (driven only with --vcd).
  sc_core::sc_out<bool> request;  // from the request cycle to the middle of the grant cycle
  sc_core::sc_out<bool> grant;    // a pulse in the first half of the grant cycle, one per access
  sc_core::sc_out<bool> stall;    // high exactly in the core's stall cycles (bus wait + (L-1) per access)
  sc_core::sc_out<bool> waiting;  // waiting at a barrier, from its arrival to its release
  sc_core::sc_out<bool> halted;   // from the finish cycle on

  SC_HAS_PROCESS(s2_core);
  s2_core(sc_core::sc_module_name name, int id, run_control& ctl);

  int32_t regs[s2::NUM_REGS + 1] = {};  // regs[32] absorbs writes to r0
  uint32_t pc = 0;
  bool is_halted = false;
  s2::CoreStats stats;

 private:
  void main();  // the thread: run(), then tell the trace this core logs no more
  void run();
  void sync_to(uint64_t t);  // wait until simulated time reaches cycle t
  // With store buffers: the buffer's part of issuing u at t (may advance t).
  enum class buffered_step { DONE, STOP, AS_BEFORE };
  buffered_step issue_buffered(const s2::Uop& u, uint64_t& t, const s2::StackGuard& guard);

  mem_request request_for(const s2::Uop& u, uint32_t a, uint64_t t) const;
  // Over a ring or a mesh: a data access through the core's tile (core.cpp).
  bool access_tile(const s2::Uop& u, uint32_t a, uint64_t& t);

  int m_id;
  run_control& m_ctl;
};

}  // namespace s2sc
