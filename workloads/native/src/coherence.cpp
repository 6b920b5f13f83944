// pybind11 module s2mc.workloads.native._coherence: the real-hardware half of the cache-coherence lab.
// Three microbenchmarks of this CPU's coherence protocol, the same experiments the simulated
// machine runs with caches on (docs/caches-lab.md):
//   false_sharing: threads each increment their own counter; the counters are packed into one
//                  cache line or padded a line apart, so only the layout differs;
//   ping_pong:     two threads on two CPUs hand one line back and forth (a flag each waits for);
//                  run on every pair of CPUs it gives the core-to-core latency matrix;
//   lock:          threads take a test-and-set, test-and-test-and-set or ticket spin lock around
//                  a shared counter increment.
// Thread i is pinned to the i-th CPU of the process's affinity mask for the run and unpinned
// afterwards (pinning.h). Work runs with the GIL released; the results carry what the tests check
// (final counts, counter addresses).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <omp.h>
#include <immintrin.h>
#include <time.h>
#include <unistd.h>

#include "pinning.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
using s2mc_native::allowed_cpus;
using s2mc_native::parallel_pinned;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The L1 data cache line as the OS reports it; 64 when it does not say (every x86-64 so far).
size_t line_bytes() {
  const long n = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
  return n > 0 ? size_t(n) : 64;
}

// Line-aligned zeroed storage of `bytes`, rounded up to whole lines.
struct Aligned {
  explicit Aligned(size_t bytes) {
    const size_t line = line_bytes();
    size_ = (bytes + line - 1) / line * line;
    ptr_ = static_cast<unsigned char*>(std::aligned_alloc(line, size_));
    if (!ptr_) throw std::bad_alloc();
    std::fill(ptr_, ptr_ + size_, 0);
  }
  ~Aligned() { std::free(ptr_); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  unsigned char* get() const { return ptr_; }

 private:
  unsigned char* ptr_;
  size_t size_;
};

void check_threads(int threads, const std::vector<int>& cpus, const char* what) {
  if (threads < 1) throw std::invalid_argument(std::string(what) + ": threads must be >= 1");
  if (size_t(threads) > cpus.size())
    throw std::invalid_argument(std::string(what) + ": " + std::to_string(threads) +
                                " threads but this process may run on " + std::to_string(cpus.size()) +
                                " CPU(s): spinning threads beyond the CPUs measure the scheduler");
}

void check_positive(long n, const char* what) {
  if (n < 1) throw std::invalid_argument(std::string(what) + " must be >= 1 (got " + std::to_string(n) + ")");
}

// The middle value (the upper of the two middle ones for an even count).
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// One timed run: wall seconds from the start barrier to the end barrier, and concurrency: the
// threads' CPU time over their work / (threads x wall). Near 1 every thread held its CPU all along;
// well below 1 the machine was shared and the threads took turns, so they contended less than
// the thread count says (the figure to read beside every timing on a busy machine).
struct Sample {
  double seconds;
  double concurrency;
};

template <typename Work>
Sample timed_parallel(int threads, const std::vector<int>& cpus, Work&& work) {
  Clock::time_point t0;
  double elapsed = 0;
  std::vector<double> cpu(static_cast<size_t>(threads), 0.0);
  parallel_pinned(threads, cpus, [&](int id) {
#pragma omp barrier
#pragma omp master
    t0 = Clock::now();
    const double c0 = thread_cpu_seconds();
    work(id);
    cpu[size_t(id)] = thread_cpu_seconds() - c0;
#pragma omp barrier
#pragma omp master
    elapsed = seconds_since(t0);
  });
  double sum = 0;
  for (double c : cpu) sum += c;
  return {elapsed, std::min(1.0, sum / (double(threads) * elapsed))};
}

// Fills the timing fields every result shares from the repetitions' samples.
void put_samples(py::dict& d, const std::vector<Sample>& samples) {
  std::vector<double> secs, conc;
  for (const Sample& x : samples) {
    secs.push_back(x.seconds);
    conc.push_back(x.concurrency);
  }
  d["seconds"] = secs;
  d["seconds_best"] = *std::min_element(secs.begin(), secs.end());
  d["seconds_median"] = median(secs);
  d["concurrency"] = conc;
  d["concurrency_median"] = median(conc);
}

py::dict false_sharing(int threads, long iterations, const std::string& layout, const std::string& increment,
                       int reps) {
  const bool padded = layout == "padded";
  if (!padded && layout != "packed")
    throw std::invalid_argument("layout must be 'packed' or 'padded' (got '" + layout + "')");
  const bool atomic = increment == "atomic";
  if (!atomic && increment != "plain")
    throw std::invalid_argument("increment must be 'plain' or 'atomic' (got '" + increment + "')");
  check_positive(iterations, "iterations");
  check_positive(reps, "reps");
  const std::vector<int> cpus = allowed_cpus();
  check_threads(threads, cpus, "false sharing");
  const size_t line = line_bytes();
  // packed: 8-byte counters side by side (a line holds line/8 of them); padded: one per line.
  const size_t stride = padded ? line : sizeof(std::atomic<uint64_t>);
  Aligned mem(stride * size_t(threads));
  auto counter = [&](int i) { return reinterpret_cast<std::atomic<uint64_t>*>(mem.get() + stride * size_t(i)); };
  std::vector<Sample> samples;
  std::vector<uint64_t> finals(static_cast<size_t>(threads));
  {
    py::gil_scoped_release nogil;
    for (int r = -1; r < reps; ++r) {  // r = -1: the untimed warm-up (thread pool, pinning, caches)
      for (int i = 0; i < threads; ++i) counter(i)->store(0, std::memory_order_relaxed);
      const Sample x = timed_parallel(threads, cpus, [&](int id) {
        std::atomic<uint64_t>* c = counter(id);
        // plain: a load and a store (no lock prefix); each counter has one writer, so the count is
        // exact. A core may keep forwarding its own pending stores to its loads, so it needs the
        // line only when the stores drain. atomic: a locked read-modify-write, which needs the
        // line in M for every increment, as S2's xchg does in the simulated machine.
        if (atomic)
          for (long k = 0; k < iterations; ++k) c->fetch_add(1, std::memory_order_relaxed);
        else
          for (long k = 0; k < iterations; ++k)
            c->store(c->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      });
      if (r >= 0) samples.push_back(x);
      for (int i = 0; i < threads; ++i) finals[size_t(i)] = counter(i)->load();
    }
  }
  py::list addresses;
  for (int i = 0; i < threads; ++i) addresses.append(reinterpret_cast<uintptr_t>(counter(i)));
  py::dict d;
  d["layout"] = layout;
  d["increment"] = increment;
  d["threads"] = threads;
  d["iterations"] = iterations;
  d["reps"] = reps;
  put_samples(d, samples);
  d["counters"] = finals;  // of the last repetition
  d["addresses"] = addresses;
  d["stride_bytes"] = stride;
  d["line_bytes"] = line;
  d["cpus"] = std::vector<int>(cpus.begin(), cpus.begin() + threads);
  return d;
}

// The two CPUs of a ping-pong: `pair` when given (two distinct CPUs this process may use), else the
// first two of the affinity mask.
std::vector<int> ping_pong_cpus(const std::vector<int>& pair) {
  const std::vector<int> cpus = allowed_cpus();
  if (pair.empty()) {
    if (cpus.size() < 2)
      throw std::invalid_argument("line ping-pong needs 2 CPUs; this process may run on " +
                                  std::to_string(cpus.size()));
    return {cpus[0], cpus[1]};
  }
  if (pair.size() != 2 || pair[0] == pair[1])
    throw std::invalid_argument("line ping-pong needs two distinct CPUs (got " + std::to_string(pair.size()) +
                                (pair.size() == 2 ? " equal ones)" : ")"));
  for (int c : pair)
    if (std::find(cpus.begin(), cpus.end(), c) == cpus.end())
      throw std::invalid_argument("CPU " + std::to_string(c) + " is not one this process may run on (" +
                                  std::to_string(cpus.size()) + " usable)");
  return pair;
}

py::dict ping_pong(long round_trips, long batch, const std::vector<int>& pair, long warmup) {
  check_positive(round_trips, "round trips");
  check_positive(batch, "batch");
  if (warmup < 0) throw std::invalid_argument("warm-up round trips must be >= 0 (got " + std::to_string(warmup) + ")");
  if (round_trips % batch != 0)
    throw std::invalid_argument("round trips (" + std::to_string(round_trips) + ") must be a multiple of the batch (" +
                                std::to_string(batch) + ")");
  const std::vector<int> cpus = ping_pong_cpus(pair);
  // One flag alone in its line (and the next: adjacent-line prefetchers pair lines). Thread 0 writes
  // odd values, thread 1 answers with the next even one: each write moves the line to the writer's
  // cache in M, each wait brings it back, so one round trip is two line transfers.
  Aligned mem(2 * line_bytes());
  auto* flag = reinterpret_cast<std::atomic<uint64_t>*>(mem.get());
  const long batches = round_trips / batch;
  std::vector<double> per_trip(static_cast<size_t>(batches));
  uint64_t answered = 0;
  {
    py::gil_scoped_release nogil;
    parallel_pinned(2, cpus, [&](int id) {
      if (id == 0) {
        uint64_t v = 0;
        for (long k = 0; k < warmup; ++k) {  // untimed: both threads running and the line in play
          flag->store(++v, std::memory_order_release);
          ++v;
          while (flag->load(std::memory_order_acquire) != v) _mm_pause();
        }
        for (long b = 0; b < batches; ++b) {
          const auto t0 = Clock::now();
          for (long k = 0; k < batch; ++k) {
            flag->store(++v, std::memory_order_release);
            ++v;
            while (flag->load(std::memory_order_acquire) != v) _mm_pause();
          }
          per_trip[size_t(b)] = seconds_since(t0) * 1e9 / double(batch);
        }
      } else {
        uint64_t n = 0;
        for (long k = 0; k < warmup + batches * batch; ++k) {
          const uint64_t want = 2 * uint64_t(k) + 1;
          while (flag->load(std::memory_order_acquire) != want) _mm_pause();
          flag->store(want + 1, std::memory_order_release);
          ++n;
        }
        answered = n;
      }
    });
  }
  py::dict d;
  d["round_trips"] = batches * batch;
  d["batch"] = batch;
  d["warmup"] = warmup;
  d["answered"] = answered;
  d["final_flag"] = flag->load();
  d["batch_ns"] = per_trip;  // each batch's ns per round trip, in order (their spread)
  d["median_ns"] = median(per_trip);
  d["min_ns"] = *std::min_element(per_trip.begin(), per_trip.end());
  d["cpus"] = cpus;
  return d;
}

// The three spin locks, each word in its own line. Waiting spins with pause, as real locks do.
struct alignas(128) Word {
  std::atomic<uint64_t> v{0};
};

struct Locks {
  Word flag, next, serving;
};

void acquire(const std::string& kind, Locks& l, uint64_t* ticket) {
  if (kind == "tas") {            // every try is an atomic write: the line never settles
    while (l.flag.v.exchange(1, std::memory_order_acquire)) _mm_pause();
  } else if (kind == "ttas") {    // spin reading a shared copy; try the atomic only when it looks free
    for (;;) {
      while (l.flag.v.load(std::memory_order_relaxed)) _mm_pause();
      if (!l.flag.v.exchange(1, std::memory_order_acquire)) return;
    }
  } else {                         // ticket: take a number, wait for it to be served (FIFO)
    *ticket = l.next.v.fetch_add(1, std::memory_order_relaxed);
    while (l.serving.v.load(std::memory_order_acquire) != *ticket) _mm_pause();
  }
}

void release(const std::string& kind, Locks& l, uint64_t ticket) {
  if (kind == "ticket")
    l.serving.v.store(ticket + 1, std::memory_order_release);
  else
    l.flag.v.store(0, std::memory_order_release);
}

py::dict lock(const std::string& kind, int threads, long acquisitions, int reps) {
  if (kind != "tas" && kind != "ttas" && kind != "ticket")
    throw std::invalid_argument("lock must be 'tas', 'ttas' or 'ticket' (got '" + kind + "')");
  check_positive(acquisitions, "acquisitions");
  check_positive(reps, "reps");
  const std::vector<int> cpus = allowed_cpus();
  check_threads(threads, cpus, "lock");
  auto locks = std::make_unique<Locks>();
  auto counter = std::make_unique<Word>();   // the protected data, in a line of its own
  std::vector<Sample> samples;
  uint64_t final_count = 0;
  {
    py::gil_scoped_release nogil;
    for (int r = -1; r < reps; ++r) {  // r = -1: the untimed warm-up
      for (Word* w : {&locks->flag, &locks->next, &locks->serving}) w->v.store(0);
      counter->v.store(0);
      const Sample x = timed_parallel(threads, cpus, [&](int) {
        for (long k = 0; k < acquisitions; ++k) {
          uint64_t ticket = 0;
          acquire(kind, *locks, &ticket);
          // The critical section: a read-modify-write that loses updates without the lock.
          counter->v.store(counter->v.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
          release(kind, *locks, ticket);
        }
      });
      if (r >= 0) samples.push_back(x);
      final_count = counter->v.load();
    }
  }
  py::dict d;
  d["lock"] = kind;
  d["threads"] = threads;
  d["acquisitions"] = acquisitions;
  d["reps"] = reps;
  put_samples(d, samples);
  d["acquisitions_per_second"] = double(acquisitions) * threads / d["seconds_median"].cast<double>();
  d["counter"] = final_count;  // of the last repetition
  d["cpus"] = std::vector<int>(cpus.begin(), cpus.begin() + threads);
  return d;
}

}  // namespace

PYBIND11_MODULE(_coherence, m) {
  m.doc() = "Cache-coherence microbenchmarks on this CPU: false sharing, line ping-pong, spin locks";
  m.def("line_bytes", &line_bytes, "The L1 data cache line size in bytes (64 when the OS does not say).");
  m.def("allowed_cpus", &allowed_cpus, "The CPUs this process may run on.");
  m.def("false_sharing", &false_sharing, py::arg("threads"), py::arg("iterations"), py::arg("layout"),
        py::arg("increment") = "plain", py::arg("reps") = 3);
  m.def("ping_pong", &ping_pong, py::arg("round_trips"), py::arg("batch") = 100,
        py::arg("pair") = std::vector<int>{}, py::arg("warmup") = 0);
  m.def("lock", &lock, py::arg("kind"), py::arg("threads"), py::arg("acquisitions"), py::arg("reps") = 3);
}
