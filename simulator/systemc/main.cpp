// s2mc-systemc: the SystemC engine as its own executable (SystemC allows one elaboration per
// process). The Python layer (s2mc.simulator.systemc_engine) writes the machine to an input file, runs this
// program, and reads back the result (the same fields as the fast engine's, as JSON), the final
// registers, and the final memory (raw little-endian 32-bit words).
//
//   s2mc-systemc --input IN --result OUT.json --memory OUT.bin [--vcd TRACE.vcd] [--trace EVENTS]
//
// --trace writes the event log as the run goes, in (cycle, core) order, as raw s2::TraceEvent
// records (40 bytes each, native byte order: s2mc.simulator.trace decodes them); the host passes a
// pipe (/dev/fd/N) so that the log never has to be held whole. The input's `trace` key
// must be 1 exactly when --trace is given.
//
// Input (whitespace-separated tokens; see docs/systemc.md):
//   s2mc-systemc-input 1
//   cores N  mem_latency L  arbitration fifo|fixed|round_robin|burst4  max_cycles N  mem_words N
//   entry N  trace 0|1  [cache PROTOCOL LINES WAYS LINE_WORDS HIT_LATENCY]
//   [network ring|mesh LINK_LATENCY ROUTER_LATENCY FLIT_WORDS]  [consistency tso|pso ENTRIES]
//   [stacks BASE WORDS COUNT]  code N w...     data N w...     (write ADDR N w...)*     end
// `cache` is there only when caches are on; `network` only over a ring or a mesh (directory
// coherence: after a cache line of msi or mesi); `consistency` only with store buffers (tso, pso);
// `stacks` only when the program declares its stacks (.stacks, docs/isa.md).
#include <systemc>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "system.h"

namespace {

using namespace s2sc;

struct bad_input : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class token_reader {
 public:
  explicit token_reader(std::istream& in) : m_in(in) {}
  std::string word(const char* what) {
    std::string s;
    if (!(m_in >> s)) throw bad_input(std::string("input ends early, expected ") + what);
    return s;
  }
  void expect(const char* key) {
    const std::string s = word(key);
    if (s != key) throw bad_input("expected '" + std::string(key) + "' in the input, found '" + s + "'");
  }
  uint64_t number(const char* what, uint64_t lo, uint64_t hi) {
    const std::string s = word(what);
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || *end || errno || v < lo || v > hi)
      throw bad_input(std::string(what) + " '" + s + "' is not a number in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
  int64_t integer(const char* what, int64_t lo, int64_t hi) {
    const std::string s = word(what);
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end || errno || v < lo || v > hi)
      throw bad_input(std::string(what) + " '" + s + "' is not a number in " + std::to_string(lo) + ".." + std::to_string(hi));
    return v;
  }
  uint64_t keyed(const char* key, uint64_t lo, uint64_t hi) {
    expect(key);
    return number(key, lo, hi);
  }

 private:
  std::istream& m_in;
};

struct write_op {
  uint32_t addr;
  std::vector<int32_t> words;
};

struct machine_input {
  s2::Image image;
  s2::Config cfg;
  bool trace = false;
  bool networked = false;
  s2::NetworkConfig net;
  std::vector<write_op> writes;
};

machine_input read_input(std::istream& in) {
  token_reader tr(in);
  machine_input m;
  tr.expect("s2mc-systemc-input");
  if (tr.number("format version", 1, 1) != 1) throw bad_input("unsupported input version");
  // The ranges are the ones s2mc.simulator checks: both come from simulator/params.toml.
  namespace p = s2::params;
  m.cfg.cores = static_cast<int>(tr.keyed("cores", p::CORES_MIN, p::CORES_MAX));
  m.cfg.mem_latency = static_cast<int>(tr.keyed("mem_latency", p::MEM_LATENCY_MIN, p::MEM_LATENCY_MAX));
  tr.expect("arbitration");
  const std::string arb = tr.word("an arbitration policy");
  if (!s2::arbitration_from_name(arb, m.cfg.arbitration))
    throw bad_input("unknown arbitration '" + arb + "' (choose " + p::ARBITRATION_CHOICES_TEXT + ")");
  m.cfg.max_cycles = tr.keyed("max_cycles", p::MAX_CYCLES_MIN, p::MAX_CYCLES_MAX);
  m.cfg.mem_words = static_cast<uint32_t>(tr.keyed("mem_words", p::MEM_WORDS_MIN, p::MEM_WORDS_MAX));
  m.image.entry = static_cast<uint32_t>(tr.keyed("entry", 0, 0xFFFFFFFFu));
  m.trace = tr.keyed("trace", 0, 1) != 0;
  std::string key = tr.word("'cache', 'stacks' or 'code'");
  if (key == "cache") {
    const std::string proto = tr.word("a cache protocol");
    if (!s2::protocol_from_name(proto, m.cfg.cache.protocol) || !m.cfg.cache.on()) {
      std::string protocols;  // the choices but none (a cacheless run has no cache line)
      for (int i = 1; i < p::CACHE_COUNT; ++i) protocols += std::string(i > 1 ? ", " : "") + p::CACHE_CHOICES[i];
      throw bad_input("unknown cache protocol '" + proto + "' (choose " + protocols + ")");
    }
    m.cfg.cache.lines = static_cast<uint32_t>(tr.number("cache lines", p::CACHE_LINES_MIN, p::CACHE_LINES_MAX));
    m.cfg.cache.ways = static_cast<uint32_t>(tr.number("cache ways", p::CACHE_WAYS_MIN, p::CACHE_WAYS_MAX));
    m.cfg.cache.line_words = static_cast<uint32_t>(tr.number("line words", p::LINE_WORDS_MIN, p::LINE_WORDS_MAX));
    m.cfg.cache.hit_latency =
        static_cast<uint32_t>(tr.number("cache hit latency", p::CACHE_HIT_LATENCY_MIN, p::CACHE_HIT_LATENCY_MAX));
    const std::string problem = s2::cache_shape_problem(m.cfg.cache, m.cfg.mem_words);
    if (!problem.empty()) throw bad_input(problem);
    key = tr.word("'network', 'consistency', 'stacks' or 'code'");
  }
  if (key == "network") {
    const std::string kind = tr.word("an interconnect");
    if (kind == "ring") m.net.kind = s2::Topology::RING;
    else if (kind == "mesh") m.net.kind = s2::Topology::MESH;
    else throw bad_input("unknown network '" + kind + "' (choose ring, mesh)");
    if (m.cfg.cache.protocol != s2::Protocol::MSI && m.cfg.cache.protocol != s2::Protocol::MESI)
      throw bad_input("network " + kind + " needs a cache line of protocol msi or mesi before it (directory coherence)");
    m.net.link_latency = static_cast<uint32_t>(tr.number("link latency", p::LINK_LATENCY_MIN, p::LINK_LATENCY_MAX));
    m.net.router_latency =
        static_cast<uint32_t>(tr.number("router latency", p::ROUTER_LATENCY_MIN, p::ROUTER_LATENCY_MAX));
    m.net.flit_words = static_cast<uint32_t>(tr.number("flit words", p::FLIT_WORDS_MIN, p::FLIT_WORDS_MAX));
    m.networked = true;
    key = tr.word("'consistency', 'stacks' or 'code'");
  }
  if (key == "consistency") {
    const std::string model = tr.word("a consistency model");
    if (!s2::consistency_from_name(model, m.cfg.consistency) || !m.cfg.buffered()) {
      std::string models;  // the choices but sc (a run without store buffers has no such line)
      for (int i = 1; i < p::CONSISTENCY_COUNT; ++i) models += std::string(i > 1 ? ", " : "") + p::CONSISTENCY_CHOICES[i];
      throw bad_input("unknown consistency '" + model + "' (choose " + models + ")");
    }
    m.cfg.store_buffer_entries = static_cast<uint32_t>(
        tr.number("store buffer entries", p::STORE_BUFFER_ENTRIES_MIN, p::STORE_BUFFER_ENTRIES_MAX));
    key = tr.word("'stacks' or 'code'");
  }
  if (key == "stacks") {
    // The host sends what the assembler accepts: an area that ends within the 22-bit addresses.
    constexpr uint64_t ADDRESSES = 1u << 22;
    m.image.stacks.base = static_cast<uint32_t>(tr.number("stack base", 0, ADDRESSES - 1));
    m.image.stacks.words = static_cast<uint32_t>(tr.number("stack words", 1, ADDRESSES));
    m.image.stacks.count = static_cast<uint32_t>(tr.number("stack count", 1, ADDRESSES));
    const s2::Stacks& st = m.image.stacks;
    if (st.base + static_cast<uint64_t>(st.words) * st.count > ADDRESSES)
      throw bad_input("the stack area runs past the last address " + std::to_string(ADDRESSES - 1));
    key = tr.word("'code'");
  }
  if (key != "code") throw bad_input("expected 'code' in the input, found '" + key + "'");
  const uint64_t ncode = tr.number("code", 0, 1u << 22);
  m.image.code.reserve(ncode);
  for (uint64_t i = 0; i < ncode; ++i) m.image.code.push_back(static_cast<uint32_t>(tr.number("code word", 0, 0xFFFFFFFFu)));
  const uint64_t ndata = tr.keyed("data", 0, m.cfg.mem_words);
  m.image.data.reserve(ndata);
  for (uint64_t i = 0; i < ndata; ++i) m.image.data.push_back(static_cast<int32_t>(tr.integer("data word", INT32_MIN, INT32_MAX)));
  for (;;) {
    const std::string key = tr.word("'write' or 'end'");
    if (key == "end") break;
    if (key != "write") throw bad_input("expected 'write' or 'end' in the input, found '" + key + "'");
    write_op w;
    w.addr = static_cast<uint32_t>(tr.number("write address", 0, m.cfg.mem_words));
    const uint64_t n = tr.number("write length", 0, m.cfg.mem_words - w.addr);
    w.words.reserve(n);
    for (uint64_t i = 0; i < n; ++i) w.words.push_back(static_cast<int32_t>(tr.integer("write word", INT32_MIN, INT32_MAX)));
    m.writes.push_back(std::move(w));
  }
  return m;
}

void json_string(std::ostream& o, const std::string& s) {
  static const char* hex = "0123456789abcdef";
  o << '"';
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') o << '\\' << ch;
    else if (ch >= 0x20 && ch < 0x7F) o << ch;
    else o << "\\u00" << hex[ch >> 4] << hex[ch & 15];  // every byte is one code point (latin-1)
  }
  o << '"';
}

// `net`: over a ring or a mesh, the network's counters (none after a fault, as the fast engine).
void write_result(std::ostream& o, const s2::RunResult& r, const s2_system& sys, const s2::NetworkedResult* net) {
  o << "{\"cycles\":" << r.cycles << ",\"bus_busy_cycles\":" << r.bus_busy_cycles << ",\"cores\":[";
  for (size_t i = 0; i < r.cores.size(); ++i) {
    const s2::CoreStats& s = r.cores[i];
    // The counters of simulator/counters.toml under their names; the cache group only with caches.
    const char* sep = "{";
#define S2_COUNTER_JSON(name) o << sep << "\"" #name "\":" << s.name, sep = ",";
    o << (i ? "," : "");
    S2_BASE_COUNTERS(S2_COUNTER_JSON)
    if (sys.caches().config().on()) { S2_CACHE_COUNTERS(S2_COUNTER_JSON) }
    if (sys.buffered()) { S2_BUFFER_COUNTERS(S2_COUNTER_JSON) }
#undef S2_COUNTER_JSON
    if (net) {   // the tile's counters (the network group of counters.toml)
      const s2::NetworkStats& t = net->tiles[i];
#define S2_COUNTER_JSON(name) o << ",\"" #name "\":" << t.name;
      S2_NETWORK_COUNTERS(S2_COUNTER_JSON)
#undef S2_COUNTER_JSON
    }
    o << "}";
  }
  o << "],\"output\":[";
  for (size_t i = 0; i < r.output.size(); ++i) {
    o << (i ? "," : "") << "[" << r.output[i].cycle << "," << r.output[i].core << ",";
    json_string(o, r.output[i].text);
    o << "]";
  }
  o << "],\"fault\":";
  if (r.fault.kind == s2::FaultKind::NONE) {
    o << "null";
  } else {
    o << "{\"kind\":\"" << s2::fault_name(r.fault.kind) << "\",\"core\":" << r.fault.core << ",\"pc\":" << r.fault.pc
      << ",\"cycle\":" << r.fault.cycle << ",\"word\":" << r.fault.word << ",\"address\":" << r.fault.address << "}";
  }
  o << ",\"registers\":[";
  for (int i = 0; i < static_cast<int>(r.cores.size()); ++i) {
    o << (i ? "," : "") << "[";
    for (int k = 0; k < s2::NUM_REGS; ++k) o << (k ? "," : "") << sys.cores[i].regs[k];
    o << "]";
  }
  o << "],\"pcs\":[";
  for (int i = 0; i < static_cast<int>(r.cores.size()); ++i) o << (i ? "," : "") << sys.cores[i].pc;
  o << "]";
  if (net) {   // the machine-wide network counts, as the fast engine's binding returns them
    o << ",\"network\":{\"messages\":[";
    for (unsigned k = 0; k < s2::MSG_KINDS; ++k) o << (k ? "," : "") << net->messages[k];
    o << "],\"invalidations\":[";
    for (size_t k = 0; k < net->invalidations.size(); ++k) o << (k ? "," : "") << net->invalidations[k];
    o << "],\"link_flits\":[";
    for (size_t k = 0; k < net->link_flits.size(); ++k) {
      const auto& [link, flits] = net->link_flits[k];
      o << (k ? "," : "") << "[" << link.first << ",\"" << s2::Topology::port_name(link.second) << "\"," << flits << "]";
    }
    o << "],\"quiet_cycle\":" << net->quiet << "}";
  }
  o << "}\n";
}

// The final memory, up to its last non-zero word (the rest reads as zero).
void write_memory(const std::string& path, const std::vector<int32_t>& mem) {
  size_t n = mem.size();
  while (n > 0 && mem[n - 1] == 0) --n;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
  std::vector<unsigned char> buf(n * 4);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t w = static_cast<uint32_t>(mem[i]);
    buf[4 * i] = w & 0xFF; buf[4 * i + 1] = (w >> 8) & 0xFF; buf[4 * i + 2] = (w >> 16) & 0xFF; buf[4 * i + 3] = w >> 24;
  }
  const bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size();
  if (std::fclose(f) != 0 || !ok) throw std::runtime_error("cannot write " + path);
}

// SystemC writes its waveform with unchecked stdio calls: on a full disk it would end short and
// still look written. So SystemC writes into a FIFO and this copier moves every byte into the
// real file with checked write(2) calls; `finish()` says whether all of it arrived.
class checked_vcd {
 public:
  // `fifo` (ending in .vcd) is created; `path` is the file the waveform goes to.
  checked_vcd(const std::string& fifo, const std::string& path) : m_fifo(fifo), m_path(path) {
    if (mkfifo(fifo.c_str(), 0600) != 0) throw std::runtime_error("cannot create " + fifo + ": " + std::strerror(errno));
    m_out = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (m_out < 0) throw bad_input("cannot write the VCD file " + path + ": " + std::strerror(errno));
    // Our own write end (opened after a non-blocking read end, so neither open blocks) keeps the
    // reader from seeing the end of the stream before SystemC has opened the FIFO.
    m_in = open(fifo.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    m_hold = m_in < 0 ? -1 : open(fifo.c_str(), O_WRONLY | O_CLOEXEC);
    if (m_in < 0 || m_hold < 0) throw std::runtime_error("cannot open " + fifo + ": " + std::strerror(errno));
    fcntl(m_in, F_SETFL, fcntl(m_in, F_GETFL) & ~O_NONBLOCK);
    m_thread = std::thread([this] { copy(); });
  }
  ~checked_vcd() {
    if (m_thread.joinable()) finish_quietly();
  }
  const std::string& fifo() const { return m_fifo; }
  // After SystemC closed its file: waits for the copy; throws when a write failed.
  void finish() {
    finish_quietly();
    if (m_errno) throw std::runtime_error("cannot write the VCD file " + m_path + ": " + std::strerror(m_errno));
  }

 private:
  void finish_quietly() {
    close(m_hold);
    m_thread.join();
    close(m_in);
    if (close(m_out) != 0 && !m_errno) m_errno = errno;
    unlink(m_fifo.c_str());
  }
  void copy() {
    std::vector<char> buf(1 << 16);
    for (;;) {
      const ssize_t n = read(m_in, buf.data(), buf.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      for (ssize_t done = 0; done < n && !m_errno;) {   // after a failure: drain, so SystemC never blocks
        const ssize_t w = write(m_out, buf.data() + done, static_cast<size_t>(n - done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) m_errno = w < 0 ? errno : EIO;
        else done += w;
      }
    }
  }
  std::string m_fifo, m_path;
  int m_out = -1, m_in = -1, m_hold = -1;
  int m_errno = 0;
  std::thread m_thread;
};

const char* USAGE =
    "usage: s2mc-systemc --input FILE|- --result FILE.json [--memory FILE.bin] [--vcd FILE.vcd] [--trace FILE]\n"
    "Runs one S2 multicore machine (the SystemC engine of s2mc); see docs/systemc.md.\n";

int run(int argc, char* argv[]) {
  std::string input, result, memory, vcd, trace;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw bad_input("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") input = value();
    else if (a == "--result") result = value();
    else if (a == "--memory") memory = value();
    else if (a == "--vcd") vcd = value();
    else if (a == "--trace") trace = value();
    else if (a == "-h" || a == "--help") { std::cout << USAGE; return 0; }
    else if (a == "--version") { std::cout << "s2mc-systemc 1 (SystemC " << sc_core::sc_release() << ")\n"; return 0; }
    else throw bad_input("unknown option '" + a + "'\n" + USAGE);
  }
  if (input.empty() || result.empty()) throw bad_input(std::string("--input and --result are required\n") + USAGE);

  machine_input m;
  if (input == "-") {
    m = read_input(std::cin);
  } else {
    std::ifstream in(input);
    if (!in) throw bad_input("cannot read the input file " + input + ": " + std::strerror(errno));
    m = read_input(in);
  }
  if (m.networked && (m.trace || !vcd.empty()))
    throw bad_input(std::string("the ") + (m.trace ? "event log (--trace)" : "VCD waveform (--vcd)") +
                    " of a network is not drawn yet: run it without");
  std::unique_ptr<checked_vcd> vcd_copy;
  if (!vcd.empty()) {
    // The FIFO goes beside the result, in the host's private folder.
    const size_t slash = result.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : result.substr(0, slash);
    vcd_copy = std::make_unique<checked_vcd>(folder + "/wave-fifo-" + std::to_string(getpid()) + ".vcd", vcd);
  }

  if (m.trace != !trace.empty())
    throw bad_input(m.trace ? "the input asks for the event log (trace 1) but no --trace FILE was given"
                            : "--trace needs 'trace 1' in the input");
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> trace_out(nullptr, std::fclose);
  if (!trace.empty()) {
    trace_out.reset(std::fopen(trace.c_str(), "wb"));
    if (!trace_out) throw bad_input("cannot write the trace file " + trace + ": " + std::strerror(errno));
  }

  // Informational reports (such as the trace file's time unit) would only clutter the output.
  sc_core::sc_report_handler::set_actions(sc_core::SC_INFO, sc_core::SC_DO_NOTHING);

  run_control ctl;
  ctl.cfg = m.cfg;
  ctl.entry = m.image.entry;
  ctl.stacks = m.image.stacks;
  ctl.limit = m.cfg.max_cycles;
  ctl.vcd = !vcd.empty();
  ctl.networked = m.networked;
  ctl.net = m.net;
  if (!m.networked)   // over a network the caches are the directory's (interconnect.h)
    ctl.caches = s2::Caches(m.cfg.cache, m.cfg.cores, m.cfg.mem_words, static_cast<uint32_t>(m.cfg.mem_latency));
  ctl.caches.record(trace_out != nullptr || !vcd.empty());
  if (trace_out) {
    ctl.trace = std::make_unique<s2::TraceMerger>(m.cfg.cores, [&](const s2::TraceEvent* ev, size_t n) {
      if (std::fwrite(ev, sizeof(s2::TraceEvent), n, trace_out.get()) != n)
        throw std::runtime_error("cannot write the trace file " + trace + ": " + std::strerror(errno));
    });
  }
  ctl.prog.reserve(m.image.code.size());
  for (uint32_t w : m.image.code) ctl.prog.push_back(s2::predecode(w));

  s2_system sys("s2", ctl);
  auto& mem = sys.memory.direct();
  std::copy(m.image.data.begin(), m.image.data.end(), mem.begin());
  for (const write_op& w : m.writes) std::copy(w.words.begin(), w.words.end(), mem.begin() + w.addr);
  if (vcd_copy) sys.trace_to(vcd_copy->fifo());

  sc_core::sc_start();
  if (!vcd.empty()) sc_core::sc_start(half_cycle());  // lets the kernel record the last cycle's values
  sys.close_trace();
  if (vcd_copy) vcd_copy->finish();
  if (ctl.trace) {
    ctl.trace->finish();
    if (std::fclose(trace_out.release()) != 0) throw std::runtime_error("cannot write the trace file " + trace);
  }

  const s2::RunResult r = sys.result();
  {
    std::ofstream out(result);
    if (!out) throw std::runtime_error("cannot write " + result + ": " + std::strerror(errno));
    const bool counted = sys.network && r.fault.kind == s2::FaultKind::NONE;
    const s2::NetworkedResult net = counted ? sys.network->counters() : s2::NetworkedResult{};
    write_result(out, r, sys, counted ? &net : nullptr);
    if (!out.flush()) throw std::runtime_error("cannot write " + result);
  }
  if (!memory.empty()) write_memory(memory, mem);
  return 0;
}

// The host names itself in S2MC_PARENT_PID: this process must not outlive it (a host killed by
// SIGKILL cannot stop it, and a long run would spin on alone). The kernel kills it when the thread
// that started it ends (PR_SET_PDEATHSIG, which a host thread pool could trigger early, so it is
// not used); a watcher thread instead checks every 50 ms that the host is still its parent.
void die_with_parent() {
  const char* env = std::getenv("S2MC_PARENT_PID");
  if (!env || !*env) return;
  const pid_t parent = static_cast<pid_t>(std::strtol(env, nullptr, 10));
  if (getppid() != parent) _exit(3);  // the host died before this process started
  std::thread([parent] {
    for (;;) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (getppid() != parent) _exit(3);
    }
  }).detach();
}

}  // namespace

int sc_main(int argc, char* argv[]) {
  die_with_parent();
  // A write past the file size limit fails with EFBIG, reported like a full disk, instead of
  // killing the process (the host's subprocess restores SIGXFSZ to its default).
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return run(argc, argv);
  } catch (const bad_input& e) {
    std::cerr << "s2mc-systemc: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "s2mc-systemc: error: " << e.what() << "\n";
    return 1;
  }
}
