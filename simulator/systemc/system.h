// The whole S2 multicore as one SystemC module: N cores (bus masters and barrier participants),
// the bus with its arbiter, the shared memory (the bus's slave) and the barrier; over a ring or a
// mesh the cores' data accesses go to the network module instead (interconnect.h), which holds
// their caches and the homes and keeps the shared memory's words as the homes' slices; plus the signals
// a VCD trace shows and the clock whose edges are the simulated cycles.
#pragma once

#include <systemc>

#include <memory>
#include <string>

#include "arbiter.h"
#include "barrier.h"
#include "bus.h"
#include "core.h"
#include "interconnect.h"
#include "memory.h"

namespace s2sc {

class s2_system : public sc_core::sc_module {
 public:
  SC_HAS_PROCESS(s2_system);
  // `ctl` must be filled in (config, program, vcd flag) before the system is built.
  s2_system(sc_core::sc_module_name name, run_control& ctl);
  ~s2_system() override;

  // Traces the signals to `path` (VCD). Call before sc_start().
  void trace_to(const std::string& path);
  // Closes the trace file (after the run) so it is complete on disk.
  void close_trace();
  // The run's result in the engines' common shape (after sc_start() returns).
  s2::RunResult result() const;
  const s2::Caches& caches() const { return m_ctl.caches; }
  bool buffered() const { return m_ctl.cfg.buffered(); }

  s2_memory memory;
  s2_arbiter arbiter;
  s2_bus bus;
  s2_barrier barrier;
  sc_core::sc_vector<s2_core> cores;
  std::unique_ptr<s2_network> network;   // over a ring or a mesh only (ctl.networked)

  // Signals, driven only when ctl.vcd is set.
  sc_core::sc_signal<bool> clk;
  sc_core::sc_vector<sc_core::sc_signal<bool>> request, grant, stall, waiting, halted;
  sc_core::sc_signal<sc_dt::sc_uint<8>> owner;
  sc_core::sc_signal<bool> busy;
  // With store buffers (tso, pso): per core, the entries in its buffer. Written by the core (a
  // store enters) and by the bus (an entry leaves), never in the same delta cycle.
  sc_core::sc_vector<sc_core::sc_signal<sc_dt::sc_uint<8>, sc_core::SC_MANY_WRITERS>> buffer;
  // With caches: per core, per traced slot of its cache (set * ways + way), the line's state (an
  // s2::LineState: 0 I, 1 S, 2 E, 3 O, 4 M, 5 Sc, 6 Sm) and its base address (docs/systemc.md).
  // Written by the core (hits) and by the bus (transactions), never in the same delta cycle.
  static constexpr uint32_t TRACED_SLOTS = 256;
  sc_core::sc_vector<sc_core::sc_signal<sc_dt::sc_uint<3>, sc_core::SC_MANY_WRITERS>> line_state;
  sc_core::sc_vector<sc_core::sc_signal<sc_dt::sc_uint<32>, sc_core::SC_MANY_WRITERS>> line_address;

 private:
  void clock();  // SC_THREAD, only with --vcd

  uint32_t traced_slots() const;
  run_control& m_ctl;
  sc_core::sc_trace_file* m_tf = nullptr;
  std::string m_path, m_written;
};

}  // namespace s2sc
