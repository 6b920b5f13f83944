#include "system.h"

#include <algorithm>
#include <cstdio>

namespace s2sc {

using namespace sc_core;

s2_system::s2_system(sc_module_name name, run_control& ctl)
    : sc_module(name),
      memory("memory", ctl.cfg.mem_words),
      arbiter("arbiter", ctl.cfg.arbitration, ctl.cfg.cores),
      bus("bus", ctl),
      barrier("barrier", ctl.cfg.cores),
      cores("core"),
      clk("clk"),
      request("request", ctl.cfg.cores),
      grant("grant", ctl.cfg.cores),
      stall("stall", ctl.cfg.cores),
      waiting("waiting", ctl.cfg.cores),
      halted("halted", ctl.cfg.cores),
      owner("owner"),
      busy("busy"),
      buffer("buffer"),
      line_state("line_state"),
      line_address("line_address"),
      m_ctl(ctl) {
  cores.init(ctl.cfg.cores, [&ctl](const char* nm, size_t i) { return new s2_core(nm, static_cast<int>(i), ctl); });
  if (ctl.networked) network = std::make_unique<s2_network>("network", ctl, memory.direct());
  bus.arbiter(arbiter);
  bus.memory(memory);
  bus.owner(owner);
  bus.busy(busy);
  for (int i = 0; i < ctl.cfg.cores; ++i) {
    s2_core& c = cores[i];
    c.bus(bus);
    c.barrier(barrier);
    c.line_data(memory);
    if (network) c.network(*network);
    if (network) c.drains(*network);
    else c.drains(bus);
    c.request(request[i]);
    c.stall(stall[i]);
    c.waiting(waiting[i]);
    c.halted(halted[i]);
    c.grant(grant[i]);
  }
  if (ctl.vcd) SC_THREAD(clock);
  if (ctl.cfg.buffered()) {
    ctl.buffers.assign(static_cast<size_t>(ctl.cfg.cores), s2::StoreBuffer(ctl.cfg.store_buffer_entries));
    ctl.drain_stats.assign(static_cast<size_t>(ctl.cfg.cores), s2::CoreStats{});
    if (ctl.vcd) {
      buffer.init(static_cast<size_t>(ctl.cfg.cores));
      ctl.show_buffer = [this](int i) {
        buffer[static_cast<size_t>(i)].write(static_cast<unsigned>(m_ctl.buffers[static_cast<size_t>(i)].size()));
      };
    }
  }
  if (ctl.vcd && ctl.cfg.cache.on()) {
    const uint32_t n = traced_slots();
    line_state.init(static_cast<size_t>(ctl.cfg.cores) * n);
    line_address.init(static_cast<size_t>(ctl.cfg.cores) * n);
    ctl.show_lines = [this, n]() {
      for (const s2::StateChange& ch : m_ctl.caches.changes()) {
        if (ch.slot >= n) continue;
        const size_t k = static_cast<size_t>(ch.core) * n + ch.slot;
        line_state[k].write(ch.to);
        line_address[k].write(ch.line_addr);
      }
    };
  }
}

// The cache slots the VCD shows per core: all of them up to TRACED_SLOTS (a bigger cache shows its
// first TRACED_SLOTS, so that a trace of 64 cores stays readable and small).
uint32_t s2_system::traced_slots() const { return std::min(m_ctl.cfg.cache.lines, TRACED_SLOTS); }

s2_system::~s2_system() { close_trace(); }

// Rising edge at the start of every cycle, falling edge in its middle. The clock stops at the
// run's total cycles (every core halted) or at the limit (fault or cycle limit), so the trace ends
// where the run does.
void s2_system::clock() {
  const int n = m_ctl.cfg.cores;
  for (uint64_t c = 0;; ++c) {
    if ((m_ctl.halted == n && c >= m_ctl.last_finish) || c >= m_ctl.limit) return;
    clk.write(true);
    wait(half_cycle());
    clk.write(false);
    wait(half_cycle());
  }
}

void s2_system::trace_to(const std::string& path) {
  // sc_create_vcd_trace_file appends ".vcd" to the name it is given.
  const std::string ext = ".vcd";
  const bool has_ext = path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  m_path = path;
  const std::string base = has_ext ? path.substr(0, path.size() - ext.size()) : path;
  m_written = base + ext;
  m_tf = sc_create_vcd_trace_file(base.c_str());
  if (!m_tf) throw std::runtime_error("cannot create the VCD file " + path);
  m_tf->set_time_unit(100, SC_PS);
  sc_trace(m_tf, clk, "clk");
  sc_trace(m_tf, owner, "bus.owner");
  sc_trace(m_tf, busy, "bus.busy");
  for (int i = 0; i < m_ctl.cfg.cores; ++i) {
    const std::string p = "core" + std::to_string(i) + ".";
    sc_trace(m_tf, request[i], p + "request");
    sc_trace(m_tf, grant[i], p + "grant");
    sc_trace(m_tf, stall[i], p + "stall");
    sc_trace(m_tf, waiting[i], p + "sync_wait");
    sc_trace(m_tf, halted[i], p + "halted");
    if (m_ctl.cfg.buffered()) sc_trace(m_tf, buffer[i], p + "store_buffer");
    if (!m_ctl.cfg.cache.on()) continue;
    const uint32_t n = traced_slots();
    for (uint32_t j = 0; j < n; ++j) {
      const std::string q = p + "cache.slot" + std::to_string(j) + ".";
      sc_trace(m_tf, line_state[static_cast<size_t>(i) * n + j], q + "state");
      sc_trace(m_tf, line_address[static_cast<size_t>(i) * n + j], q + "line");
    }
  }
}

void s2_system::close_trace() {
  if (!m_tf) return;
  sc_close_vcd_trace_file(m_tf);
  m_tf = nullptr;
  if (m_written != m_path) std::rename(m_written.c_str(), m_path.c_str());
}

s2::RunResult s2_system::result() const {
  s2::RunResult res;
  res.fault = m_ctl.fault;
  const int n = m_ctl.cfg.cores;
  if (res.fault.kind == s2::FaultKind::NONE) {
    for (int i = 0; i < n; ++i) {
      const s2_core& c = cores[i];
      if (!c.is_halted) {
        res.fault = s2::Fault{s2::FaultKind::CYCLE_LIMIT, i, c.pc, m_ctl.cfg.max_cycles,
                              c.pc < m_ctl.prog.size() ? m_ctl.prog[c.pc].word : 0u, 0};
        break;
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    s2::CoreStats s = cores[i].stats;
    if (m_ctl.cfg.buffered()) {  // the drains the bus counted for the core
      const s2::CoreStats& d = m_ctl.drain_stats[static_cast<size_t>(i)];
#define S2_ADD_COUNTER(name) s.name += d.name;
      S2_BASE_COUNTERS(S2_ADD_COUNTER)
      S2_BUFFER_COUNTERS(S2_ADD_COUNTER)
#undef S2_ADD_COUNTER
    }
    m_ctl.caches.copy_to(i, s, true);   // nothing over a network: its caches count in the tiles
    res.cores.push_back(s);
    res.cycles = std::max(res.cycles, s.finish_cycle);
    res.bus_busy_cycles += s.bus_busy_cycles;
  }
  res.output = m_ctl.output;
  std::stable_sort(res.output.begin(), res.output.end(), [](const s2::PrintEvent& a, const s2::PrintEvent& b) {
    return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
  });
  return res;
}

}  // namespace s2sc
