// pybind11 module s2mc.workloads.native._litmus: litmus tests on this CPU, the real-hardware twin of
// the simulated `s2mc litmus` (docs/consistency.md). A generic executor: the test comes from Python
// (s2mc.common.litmus declares every test once) as one list of operations per thread:
//   "x=1"    store the constant 1 to location x        (a relaxed atomic store: a plain mov on x86)
//   "r0=y"   load location y into register r0          (a relaxed atomic load: a plain mov)
//   "mfence" a full fence                              (mfence on x86, a seq_cst fence elsewhere)
// Between any two operations there is a compiler-only barrier (atomic_signal_fence), so the order
// the hardware sees is the program's and what the test observes is the CPU's memory model, not the
// compiler's.
//
// The method is litmus7's: the threads run `iterations` instances of the test, `batch` at a time,
// each instance on its own locations (arrays of them, every location alone in its cache line), and
// they meet at a barrier before every instance so that they start each one nearly together. Between
// batches one thread counts the outcomes (the observed registers and final values), resets the
// locations and flushes their lines from the caches, so that every instance starts with its
// locations in memory and each access misses: the window in which a store waits in the store
// buffer is a memory access long. Thread i is pinned to the process's CPU i mod the CPU count
// (pinning.h); more threads than CPUs time-slice, and the barrier then yields the CPU while it waits.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <sched.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define S2MC_X86 1
#endif

#include "pinning.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

constexpr size_t kLine = 64;          // the alignment of every location (x86-64's line; see line_bytes())
constexpr int kMaxThreads = 8;
constexpr int kMaxRegisters = 8;     // r0..r7
constexpr int kMaxLocations = 4;
constexpr int kMaxValue = 9;         // stored constants 1..9 (0 is every location's initial value)

struct alignas(kLine) Location {
  std::atomic<int> v{0};
};

enum class Kind { Store, Load, Fence };

struct Op {
  Kind kind;
  int loc = 0;    // index into the test's locations
  int reg = 0;    // load: the register
  int value = 0;  // store: the constant
};

// What one outcome is made of: a register (its value in the instance) or a location (its final value).
struct Observed {
  bool is_reg;
  int index;
};

struct Test {
  std::vector<std::vector<Op>> threads;
  std::vector<std::string> locations;   // in order of first use
  std::vector<std::string> observed_names;
  std::vector<Observed> observed;
  int registers = 0;
};

bool is_register(const std::string& s) {
  return s.size() == 2 && s[0] == 'r' && s[1] >= '0' && s[1] < char('0' + kMaxRegisters);
}

bool is_location(const std::string& s) {
  if (s.empty() || is_register(s)) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}

int location_index(Test& t, const std::string& name, const std::string& where) {
  if (!is_location(name))
    throw std::invalid_argument(where + ": '" + name + "' is not a location (lower-case letters, not rN)");
  auto it = std::find(t.locations.begin(), t.locations.end(), name);
  if (it != t.locations.end()) return int(it - t.locations.begin());
  if (int(t.locations.size()) == kMaxLocations)
    throw std::invalid_argument(where + ": more than " + std::to_string(kMaxLocations) + " locations");
  t.locations.push_back(name);
  return int(t.locations.size()) - 1;
}

Test parse(const std::vector<std::vector<std::string>>& code, const std::vector<std::string>& observed) {
  Test t;
  if (code.empty() || code.size() > size_t(kMaxThreads))
    throw std::invalid_argument("a litmus test has 1.." + std::to_string(kMaxThreads) + " threads (got " +
                                std::to_string(code.size()) + ")");
  std::vector<bool> loaded(kMaxRegisters, false);
  for (size_t i = 0; i < code.size(); ++i) {
    std::vector<Op> ops;
    for (const std::string& text : code[i]) {
      const std::string where = "thread " + std::to_string(i) + " '" + text + "'";
      if (text == "mfence") {
        ops.push_back({Kind::Fence});
        continue;
      }
      const size_t eq = text.find('=');
      if (eq == std::string::npos) throw std::invalid_argument(where + ": expected LOC=VALUE, rN=LOC or mfence");
      const std::string lhs = text.substr(0, eq), rhs = text.substr(eq + 1);
      if (is_register(lhs)) {
        const int reg = lhs[1] - '0';
        if (loaded[size_t(reg)]) throw std::invalid_argument(where + ": " + lhs + " is loaded twice");
        loaded[size_t(reg)] = true;
        t.registers = std::max(t.registers, reg + 1);
        ops.push_back({Kind::Load, location_index(t, rhs, where), reg, 0});
      } else {
        if (rhs.size() != 1 || rhs[0] < '1' || rhs[0] > char('0' + kMaxValue))
          throw std::invalid_argument(where + ": a store writes a constant 1.." + std::to_string(kMaxValue));
        ops.push_back({Kind::Store, location_index(t, lhs, where), 0, rhs[0] - '0'});
      }
    }
    t.threads.push_back(std::move(ops));
  }
  if (observed.empty()) throw std::invalid_argument("a litmus test observes at least one register or location");
  for (const std::string& name : observed) {
    if (is_register(name)) {
      if (!loaded[size_t(name[1] - '0')]) throw std::invalid_argument("observed " + name + " is never loaded");
      t.observed.push_back({true, name[1] - '0'});
    } else {
      auto it = std::find(t.locations.begin(), t.locations.end(), name);
      if (it == t.locations.end()) throw std::invalid_argument("observed '" + name + "' is neither a loaded register "
                                                               "nor a location of the test");
      t.observed.push_back({false, int(it - t.locations.begin())});
    }
    t.observed_names.push_back(name);
  }
  return t;
}

inline void full_fence() {
#ifdef S2MC_X86
  _mm_mfence();
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

inline void flush_line(const void* p) {
#ifdef S2MC_X86
  _mm_clflush(p);
#else
  (void)p;
#endif
}

inline void cpu_relax() {
#ifdef S2MC_X86
  _mm_pause();
#endif
}

// The per-instance meeting point: every thread adds one and waits until all `threads` have, for the
// k-th time. Spinning is what starts the threads together on their own CPUs; on a busy machine a
// waiter gives its CPU away after `spin` tries, and when threads share CPUs (spin = 0) at once, or
// the one it waits for may not run until the waiter's time slice ends.
struct alignas(kLine) Meeting {
  std::atomic<long> arrived{0};
};

inline void meet(Meeting& m, long target, int spin) {
  m.arrived.fetch_add(1, std::memory_order_acq_rel);
  int spins = 0;
  while (m.arrived.load(std::memory_order_acquire) < target) {
    if (++spins < spin)
      cpu_relax();
    else
      sched_yield();
  }
}

template <typename T>
struct Array {   // line-aligned storage for n items
  explicit Array(size_t n) : n_(n) {
    const size_t bytes = (n * sizeof(T) + kLine - 1) / kLine * kLine;
    void* p = std::aligned_alloc(kLine, bytes ? bytes : kLine);
    if (!p) throw std::bad_alloc();
    ptr_ = static_cast<T*>(p);
    for (size_t i = 0; i < n; ++i) new (ptr_ + i) T();
  }
  ~Array() {
    for (size_t i = 0; i < n_; ++i) ptr_[i].~T();
    std::free(ptr_);
  }
  Array(const Array&) = delete;
  Array& operator=(const Array&) = delete;
  T& operator[](size_t i) { return ptr_[i]; }

 private:
  T* ptr_;
  size_t n_;
};

py::dict run(const std::vector<std::vector<std::string>>& code, const std::vector<std::string>& observed,
             long iterations, long batch) {
  const Test t = parse(code, observed);
  if (iterations < 1) throw std::invalid_argument("iterations must be >= 1 (got " + std::to_string(iterations) + ")");
  if (batch < 1) throw std::invalid_argument("batch must be >= 1 (got " + std::to_string(batch) + ")");
  batch = std::min(batch, iterations);
  const std::vector<int> cpus = s2mc_native::allowed_cpus();
  if (cpus.empty()) throw std::runtime_error("this process may run on no CPU (sched_getaffinity failed)");
  const int threads = int(t.threads.size());
  std::vector<int> where(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) where[size_t(i)] = cpus[size_t(i) % cpus.size()];

  const size_t nb = size_t(batch), nloc = t.locations.size();
  Array<Location> locs(nloc * nb);   // location l of instance k: locs[l * nb + k]
  std::vector<int> regs(size_t(std::max(1, t.registers)) * nb, 0);   // register r of instance k: regs[r * nb + k]
  Meeting meeting;
  const int spin = size_t(threads) > cpus.size() ? 0 : 4000;
  std::map<long, long> counts;   // outcome code (base kMaxValue + 1 digits, first observed lowest) -> instances
  {
    py::gil_scoped_release nogil;
    s2mc_native::parallel_pinned(threads, where, [&](int id) {
      const std::vector<Op>& prog = t.threads[size_t(id)];
      for (long done = 0; done < iterations; done += batch) {
        const long n = std::min(batch, iterations - done);
        if (id == 0) {   // a fresh batch: zero locations, out of every cache
          for (size_t i = 0; i < nloc * nb; ++i) {
            locs[i].v.store(0, std::memory_order_relaxed);
            flush_line(&locs[i]);
          }
          meeting.arrived.store(0, std::memory_order_relaxed);
          full_fence();
        }
#pragma omp barrier
        for (long k = 0; k < n; ++k) {
          meet(meeting, long(threads) * (k + 1), spin);
          for (const Op& op : prog) {
            std::atomic_signal_fence(std::memory_order_seq_cst);
            switch (op.kind) {
              case Kind::Store:
                locs[size_t(op.loc) * nb + size_t(k)].v.store(op.value, std::memory_order_relaxed);
                break;
              case Kind::Load:
                regs[size_t(op.reg) * nb + size_t(k)] =
                    locs[size_t(op.loc) * nb + size_t(k)].v.load(std::memory_order_relaxed);
                break;
              case Kind::Fence:
                full_fence();
                break;
            }
          }
          std::atomic_signal_fence(std::memory_order_seq_cst);
        }
#pragma omp barrier
        if (id == 0) {
          for (long k = 0; k < n; ++k) {
            long code = 0, scale = 1;
            for (const Observed& o : t.observed) {
              const int v = o.is_reg ? regs[size_t(o.index) * nb + size_t(k)]
                                     : locs[size_t(o.index) * nb + size_t(k)].v.load(std::memory_order_relaxed);
              code += scale * std::clamp(v, 0, kMaxValue);
              scale *= kMaxValue + 1;
            }
            ++counts[code];
          }
        }
#pragma omp barrier
      }
    });
  }
  py::dict outcomes;
  for (const auto& [code, count] : counts) {
    std::string text;
    long c = code;
    for (const std::string& name : t.observed_names) {
      if (!text.empty()) text += ' ';
      text += name + "=" + std::to_string(c % (kMaxValue + 1));
      c /= kMaxValue + 1;
    }
    outcomes[py::str(text)] = count;
  }
  py::dict d;
  d["outcomes"] = outcomes;
  d["iterations"] = iterations;
  d["batch"] = batch;
  d["threads"] = threads;
  d["cpus"] = where;
  d["oversubscribed"] = size_t(threads) > cpus.size();
  d["locations"] = t.locations;
  return d;
}

}  // namespace

PYBIND11_MODULE(_litmus, m) {
  m.doc() = "Litmus tests on this CPU: pinned threads, many instances, outcome counts";
  m.def("run", &run, py::arg("code"), py::arg("observed"), py::arg("iterations"), py::arg("batch") = 1000,
        "Run a litmus test (one list of operations per thread) `iterations` times; returns the outcome counts.");
  m.def("allowed_cpus", &s2mc_native::allowed_cpus, "The CPUs this process may run on.");
#ifdef S2MC_X86
  m.attr("fence_instruction") = "mfence";
#else
  m.attr("fence_instruction") = "seq_cst fence";
#endif
}
