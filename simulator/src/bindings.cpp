// Python binding of the fast engine: s2mc.simulator._fast.Engine. The Python layer (simulator/)
// turns its plain dicts into Result objects.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "s2mc/fast_engine.h"
#include "s2mc/networked.h"

namespace py = pybind11;
using namespace s2;

namespace {

// Cycles per slice of FastEngine.run: a few milliseconds of one core, a fraction of a second of
// 64 busy cores (how long Ctrl-C may wait); the pauses cost nothing measurable (bench/bench_fast.py).
constexpr uint64_t RUN_SLICE_CYCLES = uint64_t{1} << 20;

Arbitration parse_arbitration(const std::string& s) {
  Arbitration a;
  if (!arbitration_from_name(s, a))
    throw std::invalid_argument("unknown arbitration '" + s + "' (choose " + params::ARBITRATION_CHOICES_TEXT + ")");
  return a;
}

// s2mc.simulator checks first; this keeps the engine safe when the binding is called directly
// (the fast engine has room for MAX_CORES cores only).
template <typename T>
void check_range(const char* name, T v, uint64_t lo, uint64_t hi) {
  bool negative = false;
  if constexpr (std::is_signed_v<T>) negative = v < 0;
  if (negative || static_cast<uint64_t>(v) < lo || static_cast<uint64_t>(v) > hi)
    throw std::invalid_argument(std::string(name) + " " + std::to_string(v) + " is out of range (" + std::to_string(lo) +
                                ".." + std::to_string(hi) + ")");
}

Protocol parse_protocol(const std::string& s) {
  Protocol p;
  if (!protocol_from_name(s, p))
    throw std::invalid_argument("unknown cache '" + s + "' (choose " + params::CACHE_CHOICES_TEXT + ")");
  return p;
}

Consistency parse_consistency(const std::string& s) {
  Consistency c;
  if (consistency_from_name(s, c)) return c;
  throw std::invalid_argument("unknown consistency '" + s + "' (choose " + params::CONSISTENCY_CHOICES_TEXT + ")");
}

}  // namespace

// The counters of simulator/counters.toml under their names; the cache group only with caches on,
// the buffer group only with store buffers.
py::dict stats_to_dict(const CoreStats& s, bool cached, bool buffered = false) {
  py::dict c;
#define S2_COUNTER_ITEM(name) c[#name] = s.name;
  S2_BASE_COUNTERS(S2_COUNTER_ITEM)
  if (cached) { S2_CACHE_COUNTERS(S2_COUNTER_ITEM) }
  if (buffered) { S2_BUFFER_COUNTERS(S2_COUNTER_ITEM) }
#undef S2_COUNTER_ITEM
  return c;
}

py::list output_to_list(const std::vector<PrintEvent>& output) {
  py::list out;
  for (const PrintEvent& e : output) out.append(py::make_tuple(e.cycle, e.core, py::bytes(e.text)));
  return out;
}

// Converts an engine result to the dict shape shared with the SystemC engine's JSON output.
py::dict result_to_dict(const RunResult& r, bool cached, bool buffered = false) {
  py::dict d;
  d["cycles"] = r.cycles;
  d["bus_busy_cycles"] = r.bus_busy_cycles;
  py::list cores;
  for (const CoreStats& s : r.cores) cores.append(stats_to_dict(s, cached, buffered));
  d["cores"] = cores;
  d["output"] = output_to_list(r.output);
  if (r.fault.kind == FaultKind::NONE) {
    d["fault"] = py::none();
  } else {
    py::dict f;
    f["kind"] = fault_name(r.fault.kind);
    f["core"] = r.fault.core;
    f["pc"] = r.fault.pc;
    f["cycle"] = r.fault.cycle;
    f["word"] = r.fault.word;
    f["address"] = r.fault.address;
    d["fault"] = f;
  }
  return d;
}

// A directory run's result: the bus machine's, each core's dict with its tile's network counters,
// and the machine-wide network counts under "network" (s2mc.simulator.network.report makes the table).
py::dict networked_to_dict(const NetworkedResult& r, bool buffered) {
  py::dict d = result_to_dict(r.run, false, buffered);
  if (r.run.fault.kind != FaultKind::NONE) return d;
  py::list cores = d["cores"];
  for (size_t i = 0; i < r.tiles.size(); ++i) {
    py::dict c = cores[i];
    const NetworkStats& s = r.tiles[i];
#define S2_COUNTER_ITEM(name) c[#name] = s.name;
    S2_NETWORK_COUNTERS(S2_COUNTER_ITEM)
#undef S2_COUNTER_ITEM
  }
  py::dict net;
  net["messages"] = std::vector<uint64_t>(r.messages, r.messages + MSG_KINDS);
  net["invalidations"] = r.invalidations;
  py::list links;
  for (const auto& [link, flits] : r.link_flits)
    links.append(py::make_tuple(link.first, Topology::port_name(link.second), flits));
  net["link_flits"] = links;
  net["quiet_cycle"] = r.quiet;
  d["network"] = net;
  return d;
}

// A protocol message as a debugger lists it: (type, source, destination, line, requester).
py::tuple message_tuple(const Directory& d, uint32_t id) {
  const Directory::MsgView m = d.message(id);
  return py::make_tuple(message_name(m.kind), m.src, m.dst, m.line, m.requester);
}

PYBIND11_MODULE(_fast, m) {
  m.doc() = "The s2mc fast engine (event-driven, cycle-exact)";
  m.attr("MAX_CORES") = MAX_CORES;
  // A copy of the whole machine at a pause (reverse stepping): opaque, with its size.
  py::class_<FastEngine::Snapshot, std::shared_ptr<FastEngine::Snapshot>>(m, "Snapshot")
      .def_property_readonly("nbytes", &FastEngine::Snapshot::bytes);
  py::class_<FastEngine>(m, "Engine")
      .def(py::init([](const std::vector<uint32_t>& code, const std::vector<int32_t>& data, uint32_t entry,
                       int cores, int mem_latency, const std::string& arbitration, uint64_t max_cycles,
                       uint32_t mem_words, uint32_t stacks_base, uint32_t stacks_words, uint32_t stacks_count,
                       const std::string& cache, uint32_t cache_lines, uint32_t cache_ways, uint32_t line_words,
                       uint32_t cache_hit_latency, const std::string& consistency, uint32_t store_buffer_entries) {
             check_range("cores", cores, params::CORES_MIN, params::CORES_MAX);
             check_range("mem-latency", mem_latency, params::MEM_LATENCY_MIN, params::MEM_LATENCY_MAX);
             check_range("max-cycles", max_cycles, params::MAX_CYCLES_MIN, params::MAX_CYCLES_MAX);
             check_range("mem-words", mem_words, params::MEM_WORDS_MIN, params::MEM_WORDS_MAX);
             Config cfg;
             cfg.cores = cores;
             cfg.mem_latency = mem_latency;
             cfg.arbitration = parse_arbitration(arbitration);
             cfg.max_cycles = max_cycles;
             cfg.mem_words = mem_words;
             check_range("cache-lines", cache_lines, params::CACHE_LINES_MIN, params::CACHE_LINES_MAX);
             check_range("cache-ways", cache_ways, params::CACHE_WAYS_MIN, params::CACHE_WAYS_MAX);
             check_range("line-words", line_words, params::LINE_WORDS_MIN, params::LINE_WORDS_MAX);
             check_range("cache-hit-latency", cache_hit_latency, params::CACHE_HIT_LATENCY_MIN,
                         params::CACHE_HIT_LATENCY_MAX);
             cfg.cache = CacheConfig{parse_protocol(cache), cache_lines, cache_ways, line_words, cache_hit_latency};
             check_range("store-buffer-entries", store_buffer_entries, params::STORE_BUFFER_ENTRIES_MIN,
                         params::STORE_BUFFER_ENTRIES_MAX);
             cfg.consistency = parse_consistency(consistency);
             cfg.store_buffer_entries = store_buffer_entries;
             const std::string shape = cache_shape_problem(cfg.cache, mem_words);
             if (cfg.cache.on() && !shape.empty()) throw std::invalid_argument(shape);
             // The stack guard's offsets are 32-bit: the area must end within 32 bits.
             if (stacks_count != 0 &&
                 (stacks_words == 0 || stacks_base + static_cast<uint64_t>(stacks_words) * stacks_count > 0xFFFFFFFFull))
               throw std::invalid_argument("stacks " + std::to_string(stacks_base) + " " + std::to_string(stacks_words) +
                                           " " + std::to_string(stacks_count) + " do not describe an area within 32 bits");
             Image img{code, data, entry, Stacks{stacks_base, stacks_words, stacks_count}};
             return new FastEngine(img, cfg);
           }),
           py::arg("code"), py::arg("data"), py::arg("entry"), py::arg("cores"), py::arg("mem_latency"),
           py::arg("arbitration"), py::arg("max_cycles"), py::arg("mem_words"), py::arg("stacks_base") = 0,
           py::arg("stacks_words") = 0, py::arg("stacks_count") = 0,
           py::arg("cache") = params::CACHE_CHOICES[params::CACHE_DEFAULT],
           py::arg("cache_lines") = params::CACHE_LINES_DEFAULT, py::arg("cache_ways") = params::CACHE_WAYS_DEFAULT,
           py::arg("line_words") = params::LINE_WORDS_DEFAULT,
           py::arg("cache_hit_latency") = params::CACHE_HIT_LATENCY_DEFAULT,
           py::arg("consistency") = params::CONSISTENCY_CHOICES[params::CONSISTENCY_DEFAULT],
           py::arg("store_buffer_entries") = params::STORE_BUFFER_ENTRIES_DEFAULT)
      .def("write", [](FastEngine& e, uint32_t addr, const std::vector<int32_t>& words) {
             auto& mem = e.memory();
             if (addr + words.size() > mem.size()) throw std::out_of_range("write past the end of memory");
             std::copy(words.begin(), words.end(), mem.begin() + addr);
           })
      .def("read", [](FastEngine& e, uint32_t addr, uint32_t n) {
             auto& mem = e.memory();
             if (static_cast<uint64_t>(addr) + n > mem.size()) throw std::out_of_range("read past the end of memory");
             return std::vector<int32_t>(mem.begin() + addr, mem.begin() + addr + n);
           })
      // `sink(bytes)` receives the trace as it is made, in (cycle, core) order: 40-byte TraceEvent
      // records (s2mc.simulator.trace decodes them), called with the GIL held.
      // `lane_cap` (events a core holds in memory before it spills to a file) is for tests.
      .def("enable_trace", [](FastEngine& e, py::function sink, size_t lane_cap) {
             e.enable_trace([sink = std::move(sink)](const TraceEvent* ev, size_t n) {
               py::gil_scoped_acquire gil;
               sink(py::bytes(reinterpret_cast<const char*>(ev), n * sizeof(TraceEvent)));
             }, lane_cap);
           }, py::arg("sink"), py::arg("lane_cap") = TraceMerger::LANE_CAP)
      .def("trace_spilled", &FastEngine::trace_spilled)
      .def("registers", [](const FastEngine& e, int core) {
             const int32_t* r = e.registers(core);
             return std::vector<int32_t>(r, r + NUM_REGS);
           })
      // The run goes in slices of `slice_cycles` cycles (a pause changes nothing: stepping.cpp);
      // between slices, with the GIL, a signal handler runs, so that Ctrl-C stops a long run at
      // once (KeyboardInterrupt) instead of when it ends. 0: one slice.
      .def("run", [](FastEngine& e, uint64_t slice_cycles) {
             if (slice_cycles == 0) {
               RunResult r;
               {
                 py::gil_scoped_release release;
                 r = e.run();
               }
               return result_to_dict(r, e.caches().config().on(), e.buffered());
             }
             for (uint64_t pause = slice_cycles;; pause = pause > ~0ull - slice_cycles ? ~0ull : pause + slice_cycles) {
               bool paused;
               {
                 py::gil_scoped_release release;
                 paused = e.advance(pause);
               }
               if (!paused) break;
               if (PyErr_CheckSignals() != 0) throw py::error_already_set();
             }
             return result_to_dict(e.result(), e.caches().config().on(), e.buffered());
           }, py::arg("slice_cycles") = RUN_SLICE_CYCLES)
      // Stepping (s2mc.simulator.stepping): advance to a pause cycle, then look inside.
      .def("advance", [](FastEngine& e, uint64_t pause) {
             py::gil_scoped_release release;
             return e.advance(pause);
           })
      .def("result", [](FastEngine& e) { return result_to_dict(e.result(), e.caches().config().on(), e.buffered()); })
      // A core's cache, slot by slot (slot = set * ways + way): (line's base address, state name,
      // last use) for a valid line, None for an invalid one. [] without caches.
      .def("cache", [](const FastEngine& e, int core) {
             const Caches& c = e.caches();
             py::list out;
             if (!c.config().on()) return out;
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             for (uint32_t i = 0; i < c.config().lines; ++i) {
               const Caches::Line l = c.line(core, i);
               if (l.state == LS_I) out.append(py::none());
               else out.append(py::make_tuple(l.address, state_name(l.state), l.use));
             }
             return out;
           }, py::arg("core"))
      .def("set_break", &FastEngine::set_break, py::arg("pc"), py::arg("cores"))
      .def("set_watch", &FastEngine::set_watch, py::arg("address"), py::arg("on"))
      .def("set_return_trap", &FastEngine::set_return_trap, py::arg("core"), py::arg("pc"), py::arg("fp"))
      .def("write_hit", [](const FastEngine& e) -> py::object {
             const auto& h = e.write_hit();
             if (h.core < 0) return py::none();
             return py::make_tuple(h.cycle, h.core, h.pc, h.address, h.before, h.after, h.drain);
           })
      .def("core_view", [](const FastEngine& e, int core) {
             const auto v = e.core_view(core);
             CoreStats stats = *v.stats;
             // once every core has halted or stopped the run is over and its open copies end
             bool ended = true;
             for (int i = 0; i < e.core_count(); ++i) {
               const std::string st = e.core_view(i).status;
               ended = ended && (st == "halted" || st == "stopped");
             }
             e.caches().copy_to(core, stats, ended);
             return py::make_tuple(v.status, v.pc, v.t, v.req_addr,
                                   stats_to_dict(stats, e.caches().config().on(), e.buffered()));
           })
      .def("paused_at", &FastEngine::paused_at)
      .def("checkpoint", [](const FastEngine& e) { return std::make_shared<FastEngine::Snapshot>(e.checkpoint()); })
      .def("rewind", &FastEngine::rewind, py::arg("snapshot"), py::arg("cycle"), py::arg("break_from"))
      .def("bus", [](const FastEngine& e) { return py::make_tuple(e.bus_free(), e.last_grant(), e.drain_last()); })
      // A core's store buffer (None without store buffers): ([(address, value, pc, since), ...]
      // oldest first, the entry whose drain waits for the bus or -1, since when, the drain port's
      // next free cycle, the entry the next drain takes or -1).
      .def("store_buffer", [](const FastEngine& e, int core) -> py::object {
             if (!e.buffered()) return py::none();
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const FastEngine::SbView v = e.store_buffer(core);
             py::list entries;
             for (const SbEntry& x : v.entries) entries.append(py::make_tuple(x.addr, x.value, x.pc, x.since));
             return py::make_tuple(entries, v.drain, v.drain_cycle, v.drain_free, v.next);
           }, py::arg("core"))
      .def("output_so_far", [](const FastEngine& e) {
             auto out = e.output_so_far();
             std::stable_sort(out.begin(), out.end(), [](const PrintEvent& a, const PrintEvent& b) {
               return a.cycle != b.cycle ? a.cycle < b.cycle : a.core < b.core;
             });
             return output_to_list(out);
           });

  // Directory coherence over a ring or a mesh (networked.h): one run, then its memory and registers.
  py::class_<NetworkedEngine>(m, "NetworkedEngine")
      .def(py::init([](const std::vector<uint32_t>& code, const std::vector<int32_t>& data, uint32_t entry,
                       int cores, int mem_latency, uint64_t max_cycles, uint32_t mem_words, uint32_t stacks_base,
                       uint32_t stacks_words, uint32_t stacks_count, const std::string& cache, uint32_t cache_lines,
                       uint32_t cache_ways, uint32_t line_words, uint32_t cache_hit_latency,
                       const std::string& interconnect, uint32_t link_latency, uint32_t router_latency,
                       uint32_t flit_words, const std::string& consistency, uint32_t store_buffer_entries) {
             check_range("cores", cores, params::CORES_MIN, params::CORES_MAX);
             check_range("mem-latency", mem_latency, params::MEM_LATENCY_MIN, params::MEM_LATENCY_MAX);
             check_range("max-cycles", max_cycles, params::MAX_CYCLES_MIN, params::MAX_CYCLES_MAX);
             check_range("mem-words", mem_words, params::MEM_WORDS_MIN, params::MEM_WORDS_MAX);
             check_range("cache-lines", cache_lines, params::CACHE_LINES_MIN, params::CACHE_LINES_MAX);
             check_range("cache-ways", cache_ways, params::CACHE_WAYS_MIN, params::CACHE_WAYS_MAX);
             check_range("line-words", line_words, params::LINE_WORDS_MIN, params::LINE_WORDS_MAX);
             check_range("cache-hit-latency", cache_hit_latency, params::CACHE_HIT_LATENCY_MIN,
                         params::CACHE_HIT_LATENCY_MAX);
             check_range("link-latency", link_latency, params::LINK_LATENCY_MIN, params::LINK_LATENCY_MAX);
             check_range("router-latency", router_latency, params::ROUTER_LATENCY_MIN, params::ROUTER_LATENCY_MAX);
             check_range("flit-words", flit_words, params::FLIT_WORDS_MIN, params::FLIT_WORDS_MAX);
             check_range("store-buffer-entries", store_buffer_entries, params::STORE_BUFFER_ENTRIES_MIN,
                         params::STORE_BUFFER_ENTRIES_MAX);
             Config cfg;
             cfg.consistency = parse_consistency(consistency);
             cfg.store_buffer_entries = store_buffer_entries;
             cfg.cores = cores;
             cfg.mem_latency = mem_latency;
             cfg.max_cycles = max_cycles;
             cfg.mem_words = mem_words;
             cfg.cache = CacheConfig{parse_protocol(cache), cache_lines, cache_ways, line_words, cache_hit_latency};
             if (cfg.cache.protocol != Protocol::MSI && cfg.cache.protocol != Protocol::MESI)
               throw std::invalid_argument("coherence directory needs cache msi or mesi, not " + cache);
             const std::string shape = cache_shape_problem(cfg.cache, mem_words);
             if (!shape.empty()) throw std::invalid_argument(shape);
             NetworkConfig net;
             if (interconnect == "ring") net.kind = Topology::RING;
             else if (interconnect == "mesh") net.kind = Topology::MESH;
             else throw std::invalid_argument("no network for interconnect '" + interconnect + "' (choose ring, mesh)");
             net.link_latency = link_latency;
             net.router_latency = router_latency;
             net.flit_words = flit_words;
             if (stacks_count != 0 &&
                 (stacks_words == 0 || stacks_base + static_cast<uint64_t>(stacks_words) * stacks_count > 0xFFFFFFFFull))
               throw std::invalid_argument("stacks " + std::to_string(stacks_base) + " " + std::to_string(stacks_words) +
                                           " " + std::to_string(stacks_count) + " do not describe an area within 32 bits");
             Image img{code, data, entry, Stacks{stacks_base, stacks_words, stacks_count}};
             return new NetworkedEngine(img, cfg, net);
           }),
           py::arg("code"), py::arg("data"), py::arg("entry"), py::arg("cores"), py::arg("mem_latency"),
           py::arg("max_cycles"), py::arg("mem_words"), py::arg("stacks_base"), py::arg("stacks_words"),
           py::arg("stacks_count"), py::arg("cache"), py::arg("cache_lines"), py::arg("cache_ways"),
           py::arg("line_words"), py::arg("cache_hit_latency"), py::arg("interconnect"), py::arg("link_latency"),
           py::arg("router_latency"), py::arg("flit_words"),
           py::arg("consistency") = params::CONSISTENCY_CHOICES[params::CONSISTENCY_DEFAULT],
           py::arg("store_buffer_entries") = params::STORE_BUFFER_ENTRIES_DEFAULT)
      .def("write", [](NetworkedEngine& e, uint32_t addr, const std::vector<int32_t>& words) {
             auto& mem = e.memory();
             if (addr + words.size() > mem.size()) throw std::out_of_range("write past the end of memory");
             std::copy(words.begin(), words.end(), mem.begin() + addr);
           })
      // the coherent words (a writable copy's, else memory's): at a pause as after the run
      .def("read", [](NetworkedEngine& e, uint32_t addr, uint32_t n) {
             auto& mem = e.memory();
             if (static_cast<uint64_t>(addr) + n > mem.size()) throw std::out_of_range("read past the end of memory");
             std::vector<int32_t> out(n);
             for (uint32_t i = 0; i < n; ++i) out[i] = e.word(addr + i);
             return out;
           })
      .def("registers", [](const NetworkedEngine& e, int core) {
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const int32_t* r = e.registers(core);
             return std::vector<int32_t>(r, r + NUM_REGS);
           })
      // Stepping (s2mc.simulator.stepping), as Engine's.
      .def("advance", [](NetworkedEngine& e, uint64_t pause) {
             py::gil_scoped_release release;
             return e.advance(pause);
           })
      .def("result", [](NetworkedEngine& e) { return networked_to_dict(e.result(), e.buffered()); })
      .def("paused_at", &NetworkedEngine::paused_at)
      .def("set_break", &NetworkedEngine::set_break, py::arg("pc"), py::arg("cores"))
      .def("set_watch", &NetworkedEngine::set_watch, py::arg("address"), py::arg("on"))
      .def("set_return_trap", &NetworkedEngine::set_return_trap, py::arg("core"), py::arg("pc"), py::arg("fp"))
      .def("write_hit", [](const NetworkedEngine& e) -> py::object {
             const auto& h = e.write_hit();
             if (h.core < 0) return py::none();
             return py::make_tuple(h.cycle, h.core, h.pc, h.address, h.before, h.after, false);
           })
      .def("core_view", [](const NetworkedEngine& e, int core) {
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const auto v = e.core_view(core);
             py::dict c = stats_to_dict(*v.stats, false, e.buffered());
             const NetworkStats& s = e.directory().stats(core);
#define S2_COUNTER_ITEM(name) c[#name] = s.name;
             S2_NETWORK_COUNTERS(S2_COUNTER_ITEM)
#undef S2_COUNTER_ITEM
             return py::make_tuple(v.status, v.pc, v.t, v.req_addr, c);
           })
      .def("checkpoint", [](const NetworkedEngine& e) { return std::make_shared<NetworkedEngine::Snapshot>(e.checkpoint()); })
      .def("rewind", &NetworkedEngine::rewind, py::arg("snapshot"), py::arg("cycle"), py::arg("break_from"))
      .def("output_so_far", [](const NetworkedEngine& e) { return output_to_list(e.output_so_far()); })
      // A core's cache, slot by slot (slot = set * ways + way): (line's base address, state name,
      // last use, the copy's own words) for a valid line (transient states included), None for an
      // invalid one.
      .def("cache", [](const NetworkedEngine& e, int core) {
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const Directory& d = e.directory();
             py::list out;
             for (uint32_t i = 0; i < e.cache_lines(); ++i) {
               const Directory::CopyView v = d.slot(core, i);
               const int32_t* w = d.slot_words(core, i);
               if (!v.valid) out.append(py::none());
               else out.append(py::make_tuple(v.line * d.line_words(), Directory::cache_state_name(v.state), v.use,
                                              std::vector<int32_t>(w, w + d.line_words())));
             }
             return out;
           }, py::arg("core"))
      // A core's eviction buffer: [(line's base address, state), ...].
      .def("evicting", [](const NetworkedEngine& e, int core) {
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const Directory& d = e.directory();
             py::list out;
             for (const auto& [line, st] : d.evicting(core))
               out.append(py::make_tuple(line * d.line_words(), Directory::cache_state_name(st)));
             return out;
           }, py::arg("core"))
      // A line's directory entry at its home: (state, owner or -1, sharers as a list of cores).
      .def("entry", [](const NetworkedEngine& e, uint32_t line) {
             const Directory::EntryView v = e.directory().entry(line);
             std::vector<int> sharers;
             v.sharers.each([&](int k) { sharers.push_back(k); });
             return py::make_tuple(Directory::home_state_name(v.state), v.owner, sharers);
           }, py::arg("line"))
      // A home: (busy until, its queue oldest first as (type, source, destination, line, requester)).
      .def("home", [](const NetworkedEngine& e, int h) {
             check_range("tile", h, 0, static_cast<uint64_t>(e.core_count() - 1));
             const Directory& d = e.directory();
             py::list queue;
             for (uint32_t id : d.home_queue(h)) queue.append(message_tuple(d, id));
             return py::make_tuple(d.home_free(h), queue);
           }, py::arg("tile"))
      // The messages a core's cache controller stalled, oldest first (as home's queue).
      .def("stalled", [](const NetworkedEngine& e, int core) {
             check_range("core", core, 0, static_cast<uint64_t>(e.core_count() - 1));
             const Directory& d = e.directory();
             py::list out;
             for (uint32_t id : d.stalled(core)) out.append(message_tuple(d, id));
             return out;
           }, py::arg("core"))
      // The messages in the network, in the order they were sent: (type, source, destination, line,
      // requester, router, the port it waits for there or "" when arriving, ready, delivered or 0).
      .def("packets", [](const NetworkedEngine& e) {
             const Directory& d = e.directory();
             const Network& net = d.net();
             py::list out;
             for (const Packet& p : net.packets()) {
               const Directory::MsgView m = d.message(p.payload);
               const bool arriving = p.delivered != 0;
               out.append(py::make_tuple(message_name(m.kind), m.src, m.dst, m.line, m.requester, p.router,
                                         arriving ? "" : Topology::port_name(net.topology().port(p.router, p.dst)),
                                         p.ready, p.delivered));
             }
             return out;
           })
      // `sink(bytes)` receives the event log as the fast Engine's enable_trace gives it.
      .def("enable_trace", [](NetworkedEngine& e, py::function sink) {
             e.enable_trace([sink = std::move(sink)](const TraceEvent* ev, size_t n) {
               sink(py::bytes(reinterpret_cast<const char*>(ev), n * sizeof(TraceEvent)));
             });
           }, py::arg("sink"))
      .def("run", [](NetworkedEngine& e) {
             NetworkedResult r;
             if (e.tracing()) {   // the sink is Python: the run keeps the GIL
               r = e.run();
             } else {
               py::gil_scoped_release release;
               r = e.run();
             }
             return networked_to_dict(r, e.buffered());
           });
  py::class_<NetworkedEngine::Snapshot, std::shared_ptr<NetworkedEngine::Snapshot>>(m, "NetworkedSnapshot")
      .def_property_readonly("nbytes", &NetworkedEngine::Snapshot::bytes);
}
