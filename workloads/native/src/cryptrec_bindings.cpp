// pybind11 module s2mc.workloads.native._cryptrec: seed 002's other CRYPTREC ciphers.
// Work runs with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <omp.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "py_buffers.h"
#include "s2mc_cryptrec/cryptrec.h"

namespace py = pybind11;
using namespace s2mc::cryptrec;
using s2mc_py::View;
using s2mc_py::read_view;
using s2mc_py::run_into;

namespace {

Cipher make_cipher(const std::string& name, const py::bytes& key, const std::string& impl) {
  const std::string k = key;
  return Cipher(name, reinterpret_cast<const uint8_t*>(k.data()), k.size(), impl);
}

// CTR in place on a buffer (split over `threads`, or with `multi` one buffer per thread, like
// `openssl speed -multi`), set up once for Bench::sample to time.
s2mc_bench::Bench make_bench(const std::string& name, int key_bits, size_t nbytes, int threads, bool multi,
                             const std::string& impl) {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1");
  if (key_bits != 128 && key_bits != 192 && key_bits != 256) throw std::invalid_argument("key_bits must be 128, 192 or 256");
  std::vector<uint8_t> key(size_t(key_bits / 8));
  for (size_t i = 0; i < key.size(); ++i) key[i] = uint8_t(i * 7 + 1);
  struct State {
    Cipher c;
    std::vector<uint8_t> iv;
    std::vector<std::vector<uint8_t>> bufs;
  };
  auto st = std::make_shared<State>(State{Cipher(name, key.data(), key.size(), impl), std::vector<uint8_t>(16), {}});
  for (size_t i = 0; i < 16; ++i) st->iv[i] = uint8_t(0xf0 + i);
  const int nbuf = multi ? threads : 1;
  st->bufs.assign(static_cast<size_t>(nbuf), std::vector<uint8_t>(nbytes));
  for (auto& b : st->bufs)
    for (size_t i = 0; i < nbytes; ++i) b[i] = uint8_t(i * 131 + 7);
  s2mc_bench::Bench b;
  b.engine = st->c.impl();  // the implementation (the cipher is the caller's workload)
  b.bytes = nbytes;
  b.total_bytes = nbytes * size_t(nbuf);
  b.run = [st, multi, threads, nbytes](long reps) {
    if (!multi || threads == 1) {
      uint8_t* p = st->bufs[0].data();
      for (long r = 0; r < reps; ++r) ctr_parallel(st->c, st->iv.data(), p, p, nbytes, multi ? 1 : threads);
      return;
    }
#pragma omp parallel num_threads(threads)
    {
      uint8_t* p = st->bufs[size_t(omp_get_thread_num())].data();
      for (long r = 0; r < reps; ++r) st->c.ctr(st->iv.data(), p, p, nbytes);
    }
  };
  return b;
}

}  // namespace

PYBIND11_MODULE(_cryptrec, m) {
  m.doc() = "Seed 002's other CRYPTREC block ciphers (SC2000, Hierocrypt-3): ECB and CTR with OpenMP";
  m.def("ciphers", [] { return cipher_names(); });
  m.def("impls", [](const std::string& cipher) { return impl_names(cipher); });
  m.def("hierocrypt3_sbox", [] {
    uint8_t s[256];
    hc3_sbox(s);
    return py::bytes(reinterpret_cast<const char*>(s), 256);
  });
  m.def(
      "ecb",
      [](const std::string& name, const py::bytes& key, const py::buffer& data, bool decrypt, int threads,
         const py::object& out, const std::string& impl) {
        const Cipher c = make_cipher(name, key, impl);
        const View in = read_view(data, "data");
        if (in.len % 16 != 0)
          throw std::invalid_argument("ECB data length must be a multiple of 16 bytes (got " + std::to_string(in.len) + ")");
        if (threads < 1) throw std::invalid_argument("threads must be >= 1 (got " + std::to_string(threads) + ")");
        return run_into(in, out, [&](const uint8_t* s, uint8_t* d, size_t n) { ecb_parallel(c, decrypt, s, d, n, threads); });
      },
      py::arg("cipher"), py::arg("key"), py::arg("data"), py::arg("decrypt") = false, py::arg("threads") = 1,
      py::arg("out") = py::none(), py::arg("impl") = "auto");
  m.def(
      "ctr",
      [](const std::string& name, const py::bytes& key, const py::bytes& iv, const py::buffer& data, int threads,
         const py::object& out, const std::string& impl) {
        const Cipher c = make_cipher(name, key, impl);
        const std::string v = iv;
        if (v.size() != 16) throw std::invalid_argument("IV/counter must be 16 bytes (got " + std::to_string(v.size()) + ")");
        if (threads < 1) throw std::invalid_argument("threads must be >= 1 (got " + std::to_string(threads) + ")");
        const View in = read_view(data, "data");
        return run_into(in, out, [&](const uint8_t* s, uint8_t* d, size_t n) {
          ctr_parallel(c, reinterpret_cast<const uint8_t*>(v.data()), s, d, n, threads);
        });
      },
      py::arg("cipher"), py::arg("key"), py::arg("iv"), py::arg("data"), py::arg("threads") = 1,
      py::arg("out") = py::none(), py::arg("impl") = "auto");
  s2mc_bench::register_bench(m);
  m.def("make_bench", &make_bench, py::arg("cipher"), py::arg("key_bits"), py::arg("nbytes"), py::arg("threads"),
        py::arg("multi") = false, py::arg("impl") = "auto");
}
