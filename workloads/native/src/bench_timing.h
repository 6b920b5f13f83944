// The timing loop both native modules' bench_ctr share (AES/Camellia in _native, the CRYPTREC ciphers
// in _cryptrec), so every cipher's Gbit/s are measured the same way.
#pragma once
#include <pybind11/pybind11.h>
#include <x86intrin.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

namespace s2mc_bench {

// Calls sample(reps) with the GIL released: a warm-up (page faults, thread pool start, caches), then
// samples until min_reps and min_seconds are both met. With `amortise` each sample repeats enough
// rounds to last ~1 ms (amortises OpenMP fork/join for tiny per-thread buffers). Returns the dict
// bench_ctr reports: seconds best/median per round, TSC cycles of the best round, rounds run.
template <typename Sample>
pybind11::dict time_rounds(Sample&& sample, bool amortise, int min_reps, double min_seconds, const std::string& engine,
                           size_t nbytes, size_t nbuf) {
  std::vector<double> secs, cycles;
  long inner = 1;
  {
    pybind11::gil_scoped_release nogil;
    auto timed = [&](long reps, double* s, double* c) {
      const auto t0 = std::chrono::steady_clock::now();
      const uint64_t c0 = __rdtsc();
      sample(reps);
      const uint64_t c1 = __rdtsc();
      *s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      *c = double(c1 - c0);
    };
    double s0, c0;
    timed(1, &s0, &c0);
    if (amortise) {
      timed(1, &s0, &c0);
      inner = std::max(1L, long(0.001 / std::max(s0, 1e-9)));
    }
    double total = 0;
    while (int(secs.size()) < min_reps || total < min_seconds) {
      double s, c;
      timed(inner, &s, &c);
      secs.push_back(s / double(inner));
      cycles.push_back(c / double(inner));
      total += s;
      if (secs.size() >= 2000000) break;
    }
  }
  std::vector<double> sorted = secs;
  std::sort(sorted.begin(), sorted.end());
  const size_t best = size_t(std::min_element(secs.begin(), secs.end()) - secs.begin());
  pybind11::dict d;
  d["engine"] = engine;
  d["bytes"] = nbytes;
  d["total_bytes"] = nbytes * nbuf;  // processed per timed round
  d["reps"] = secs.size() * size_t(inner);
  d["seconds_best"] = sorted.front();
  d["seconds_median"] = sorted[sorted.size() / 2];
  d["tsc_cycles_best"] = cycles[best];
  return d;
}

}  // namespace s2mc_bench
