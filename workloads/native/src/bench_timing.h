// The benchmark object both native modules return (AES/Camellia in _native, the CRYPTREC ciphers in
// _cryptrec): the work set up once (keys, buffers, OpenSSL contexts), and sample(loops), which runs
// it `loops` times with the GIL released and returns (steady-clock seconds, TSC ticks). Warm-up,
// calibration, interleaving and statistics are the one method of s2mc.common.measure, in Python.
#pragma once
#include <pybind11/pybind11.h>
#include <x86intrin.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace s2mc_bench {

struct Bench {
  std::function<void(long)> run;  // owns the state (a shared_ptr in its capture)
  std::string engine;
  size_t bytes = 0;
  size_t total_bytes = 0;  // processed per run: bytes x buffers

  std::pair<double, double> sample(long loops) {
    if (loops < 1) throw std::invalid_argument("loops must be >= 1 (got " + std::to_string(loops) + ")");
    pybind11::gil_scoped_release nogil;
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = __rdtsc();
    run(loops);
    const uint64_t c1 = __rdtsc();
    return {std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), double(c1 - c0)};
  }
};

// Registers Bench in module m (module-local: each extension has its own).
inline void register_bench(pybind11::module_& m) {
  pybind11::class_<Bench>(m, "Bench", pybind11::module_local())
      .def("sample", &Bench::sample, pybind11::arg("loops"),
           "Run the work `loops` times; returns (seconds, TSC ticks) of them all.")
      .def_readonly("engine", &Bench::engine)
      .def_readonly("bytes", &Bench::bytes)
      .def_readonly("total_bytes", &Bench::total_bytes);
}

}  // namespace s2mc_bench
