// pybind11 module s2mc.workloads.native._native: the C++ library to Python. Work runs with the GIL released.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <omp.h>
#include <x86intrin.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>
#include <tuple>
#include <vector>

#include "bench_timing.h"
#include "py_buffers.h"
#include "s2mc_aes/aes.h"

namespace py = pybind11;
using namespace s2mc::aes;
using s2mc_py::View;
using s2mc_py::read_view;
using s2mc_py::run_into;

namespace {

Key key_from(const py::bytes& key, Cipher cipher) {
  const std::string k = key;
  if (k.size() != 16 && k.size() != 24 && k.size() != 32)
    throw std::invalid_argument(std::string(cipher == Cipher::Aes ? "AES" : "Camellia") +
                                " key must be 16, 24 or 32 bytes (got " + std::to_string(k.size()) + ")");
  return make_key(reinterpret_cast<const uint8_t*>(k.data()), int(k.size()) * 8, cipher);
}

std::string iv_from(const py::bytes& iv) {
  std::string s = iv;
  if (s.size() != 16) throw std::invalid_argument("IV/counter must be 16 bytes (got " + std::to_string(s.size()) + ")");
  return s;
}

RunConfig config(const std::string& impl, Cipher cipher, const std::string& strategy, int threads,
                 size_t block_bytes) {
  RunConfig cfg;
  cfg.impl = find_impl(impl, cipher);
  cfg.strategy = parse_strategy(strategy);
  if (threads < 1) throw std::invalid_argument("threads must be >= 1 (got " + std::to_string(threads) + ")");
  cfg.threads = threads;
  if (block_bytes < 16 || block_bytes % 16 != 0)
    throw std::invalid_argument("block_bytes must be a positive multiple of 16 (got " + std::to_string(block_bytes) + ")");
  cfg.block_bytes = block_bytes;
  return cfg;
}

// The work `s2mc native` times: CTR in place on an nbytes buffer, set up once and run by
// Bench::sample. split: one buffer shared by `threads` threads (the strategy decides who does
// what). multi: every thread encrypts its own buffer with one thread's worth of work, like
// `openssl speed -multi N`; one run is a round of all buffers.
s2mc_bench::Bench make_bench(int key_bits, size_t nbytes, const std::string& engine, const std::string& impl,
                             const std::string& strategy, int threads, size_t block_bytes, bool multi,
                             const std::string& cipher_s) {
  const Cipher cipher = parse_cipher(cipher_s);
  const bool openssl = engine == "openssl";
  if (!openssl && engine != "ours") throw std::invalid_argument("engine must be 'ours' or 'openssl'");
  if (rounds_for_key_bits(key_bits) == 0) throw std::invalid_argument("key_bits must be 128, 192 or 256");
  struct State {
    RunConfig cfg, one;
    std::vector<uint8_t> key, iv;
    Key k;
    std::vector<std::vector<uint8_t>> bufs;
    std::vector<std::unique_ptr<OpensslCtr>> ossl;
  };
  auto st = std::make_shared<State>();
  st->cfg = config(openssl ? "auto" : impl, cipher, strategy, threads, block_bytes);
  st->key.resize(size_t(key_bits / 8));
  st->iv.resize(16);
  for (size_t i = 0; i < st->key.size(); ++i) st->key[i] = uint8_t(i * 7 + 1);
  for (size_t i = 0; i < 16; ++i) st->iv[i] = uint8_t(0xf0 + i);
  st->k = make_key(st->key.data(), key_bits, cipher);
  const int nbuf = multi ? threads : 1;
  st->bufs.assign(static_cast<size_t>(nbuf), std::vector<uint8_t>(nbytes, 0));
  for (auto& b : st->bufs)
    for (size_t i = 0; i < nbytes; ++i) b[i] = uint8_t(i * 131 + 7);
  if (openssl)
    for (int i = 0; i < nbuf; ++i)
      st->ossl.push_back(std::make_unique<OpensslCtr>(multi ? 1 : threads, st->key.data(), key_bits, cipher));
  st->one = st->cfg;
  st->one.threads = 1;
  st->one.strategy = Strategy::Contiguous;
  s2mc_bench::Bench b;
  b.engine = openssl ? "openssl" : st->cfg.impl->name;
  b.bytes = nbytes;
  b.total_bytes = nbytes * size_t(nbuf);
  b.run = [st, openssl, multi, threads, nbytes](long reps) {
    auto run_buf = [&](int i, const RunConfig& c) {
      uint8_t* p = st->bufs[size_t(i)].data();
      if (openssl)
        st->ossl[size_t(i)]->run(st->iv.data(), p, p, nbytes);
      else
        ctr_parallel(c, st->k, st->iv.data(), p, p, nbytes);
    };
    if (!multi || threads == 1) {
      for (long r = 0; r < reps; ++r) run_buf(0, multi ? st->one : st->cfg);
      return;
    }
#pragma omp parallel num_threads(threads)
    {
      const int id = omp_get_thread_num();
      for (long r = 0; r < reps; ++r) run_buf(id, st->one);
    }
  };
  return b;
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22  // Linux 5.14
#endif

// The file pipeline's fast path: bytes [offset, offset + length) of in_fd are transformed into a
// buffer and written at the same offset of out_fd (pwrite), by `threads` threads that each take the
// next chunk from a shared counter, each with its own reusable buffer (so a chunk is encrypted and
// written while it is in that core's cache, and reading, encrypting and writing overlap across
// threads). The input is mapped (read-only) and each chunk's pages are populated with
// MADV_POPULATE_READ, which fails cleanly (instead of SIGBUS) when the file has shrunk: the cipher
// reads the page cache directly, saving the copy pread would make (half the cost of reading from
// tmpfs). Where mapping or populating is not supported, pread fills the buffer instead. CTR: counter iv + position/16 (offset and chunk_bytes are multiples of 16); ECB: whole
// blocks. Returns (bytes, errno, stage): stage is "" on success, "read", "write" or "eof" (the input
// ended before offset + length) with the first error's errno.
std::tuple<size_t, int, std::string> crypt_fds(const py::bytes& key, const py::bytes& iv, const std::string& mode,
                                               bool decrypt, int in_fd, int out_fd, size_t offset, size_t length,
                                               const std::string& impl, int threads, size_t chunk_bytes,
                                               const std::string& cipher) {
  const Key k = key_from(key, parse_cipher(cipher));
  const bool ctr = mode == "ctr";
  if (!ctr && mode != "ecb") throw std::invalid_argument("mode must be 'ctr' or 'ecb'");
  std::string c(16, '\0');
  if (ctr) c = iv_from(iv);
  if (chunk_bytes < 16 || chunk_bytes % 16 != 0 || offset % 16 != 0)
    throw std::invalid_argument("chunk_bytes and offset must be multiples of 16");
  if (!ctr && length % 16 != 0) throw std::invalid_argument("ECB length must be a multiple of 16 bytes");
  if (threads < 1) throw std::invalid_argument("threads must be >= 1");
  RunConfig cfg = config(impl, k.cipher, "contiguous", 1, 1024);
  const size_t nchunks = (length + chunk_bytes - 1) / chunk_bytes;
  const int nthreads = int(std::min<size_t>(size_t(threads), std::max<size_t>(nchunks, 1)));
  // Map the pages holding [offset, offset + length).
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  const size_t map_off = offset / page * page;
  const size_t map_len = offset + length - map_off;
  const uint8_t* map = nullptr;
  if (length > 0) {
    void* p = ::mmap(nullptr, map_len, PROT_READ, MAP_SHARED, in_fd, off_t(map_off));
    if (p != MAP_FAILED) {
      map = static_cast<const uint8_t*>(p);
      ::madvise(p, map_len, MADV_SEQUENTIAL);
    }
  }
  std::atomic<bool> use_map{map != nullptr};
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  int err = 0;
  std::string stage;
  std::atomic_flag err_lock = ATOMIC_FLAG_INIT;
  auto fail = [&](int e, const char* s) {
    if (!failed.exchange(true)) {
      while (err_lock.test_and_set()) {}
      err = e;
      stage = s;
      err_lock.clear();
    }
  };
  auto worker = [&]() {
    uint8_t* buf = static_cast<uint8_t*>(std::aligned_alloc(64, (chunk_bytes + 63) / 64 * 64));
    if (!buf) { fail(ENOMEM, "alloc"); return; }
    uint8_t ctrblk[16];
    for (size_t i; !failed.load(std::memory_order_relaxed) && (i = next.fetch_add(1)) < nchunks;) {
      const size_t pos = offset + i * chunk_bytes;
      const size_t n = std::min(chunk_bytes, offset + length - pos);
      const uint8_t* src = buf;
      if (use_map.load(std::memory_order_relaxed)) {
        const size_t a = (pos - map_off) / page * page;  // page-aligned start, relative to the map
        if (::madvise(const_cast<uint8_t*>(map) + a, pos + n - map_off - a, MADV_POPULATE_READ) == 0) {
          src = map + (pos - map_off);
        } else if (errno == EINVAL || errno == ENOSYS) {  // kernel without MADV_POPULATE_READ
          use_map = false;
        } else {
          fail(errno == EFAULT ? 0 : errno, errno == EFAULT ? "eof" : "read");
          break;
        }
      }
      size_t got = src == buf ? 0 : n;
      while (got < n) {
        const ssize_t r = ::pread(in_fd, buf + got, n - got, off_t(pos + got));
        if (r < 0) { if (errno == EINTR) continue; fail(errno, "read"); break; }
        if (r == 0) { fail(0, "eof"); break; }
        got += size_t(r);
      }
      if (got < n) break;
      if (ctr) {
        counter_add(reinterpret_cast<const uint8_t*>(c.data()), pos / 16, ctrblk);
        ctr_parallel(cfg, k, ctrblk, src, buf, n);
      } else {
        ecb_parallel(cfg, k, decrypt, src, buf, n);
      }
      size_t put = 0;
      while (put < n) {
        const ssize_t w = ::pwrite(out_fd, buf + put, n - put, off_t(pos + put));
        if (w < 0) { if (errno == EINTR) continue; fail(errno, "write"); break; }
        if (w == 0) { fail(EIO, "write"); break; }
        put += size_t(w);
      }
    }
    std::free(buf);
  };
  {
    py::gil_scoped_release nogil;
    std::vector<std::thread> pool;
    for (int t = 1; t < nthreads; ++t) pool.emplace_back(worker);
    worker();
    for (auto& th : pool) th.join();
    if (map) ::munmap(const_cast<uint8_t*>(map), map_len);
  }
  return {failed ? 0 : length, err, stage};
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "Native CPU AES (T-table, AES-NI, VAES) and Camellia (SP tables, AES-NI, VAES) with OpenMP strategies, and OpenSSL EVP for comparison";

  m.def("impls", [](const std::string& cipher) {
    py::list out;
    for (const Impl* impl : all_impls(parse_cipher(cipher))) {
      py::dict d;
      d["name"] = impl->name;
      d["supported"] = impl->supported();
      out.append(d);
    }
    return out;
  }, py::arg("cipher") = "aes", "Every compiled implementation of a cipher, best first, with whether this CPU can run it.");
  m.def("best_impl", [](const std::string& cipher) { return std::string(find_impl("auto", parse_cipher(cipher))->name); },
        py::arg("cipher") = "aes", "The implementation 'auto' selects.");
  m.def("cpu_model", &cpu_model);
  m.def("cpu_features", &cpu_features);
  m.def("openssl_version", &openssl_version);
  m.def("max_threads", []() { return omp_get_max_threads(); });
  m.def("camellia_selftest", []() { return s2mc::camellia::selftest(); },
        "RFC 3713 Appendix A vectors through the header-only core (s2mc_cipher/camellia.h).");
  m.def("resolve_impl", [](const std::string& name, const std::string& cipher) {
    return std::string(find_impl(name, parse_cipher(cipher))->name);
  }, py::arg("name"), py::arg("cipher") = "aes", "The concrete implementation a name selects (checks the CPU can run it).");

  m.def("ctr", [](const py::bytes& key, const py::bytes& iv, const py::buffer& data, const std::string& impl,
                  const std::string& strategy, int threads, size_t block_bytes, const py::object& out,
                  const std::string& cipher) {
    const Key k = key_from(key, parse_cipher(cipher));
    const std::string c = iv_from(iv);
    const RunConfig cfg = config(impl, k.cipher, strategy, threads, block_bytes);
    const View in = read_view(data, "data");
    return run_into(in, out, [&](const uint8_t* src, uint8_t* dst, size_t n) {
      ctr_parallel(cfg, k, reinterpret_cast<const uint8_t*>(c.data()), src, dst, n);
    });
  }, py::arg("key"), py::arg("iv"), py::arg("data"), py::arg("impl") = "auto", py::arg("strategy") = "contiguous",
     py::arg("threads") = 1, py::arg("block_bytes") = 1024, py::arg("out") = py::none(), py::arg("cipher") = "aes",
     "CTR (encrypt = decrypt) with a 128-bit big-endian counter starting at iv; cipher 'aes' or 'camellia'.");

  m.def("ecb", [](const py::bytes& key, const py::buffer& data, bool decrypt, const std::string& impl,
                  const std::string& strategy, int threads, size_t block_bytes, const py::object& out,
                  const std::string& cipher) {
    const Key k = key_from(key, parse_cipher(cipher));
    const RunConfig cfg = config(impl, k.cipher, strategy, threads, block_bytes);
    const View in = read_view(data, "data");
    if (in.len % 16 != 0) throw std::invalid_argument("ECB data length must be a multiple of 16 bytes");
    return run_into(in, out, [&](const uint8_t* src, uint8_t* dst, size_t n) {
      ecb_parallel(cfg, k, decrypt, src, dst, n);
    });
  }, py::arg("key"), py::arg("data"), py::arg("decrypt") = false, py::arg("impl") = "auto",
     py::arg("strategy") = "contiguous", py::arg("threads") = 1, py::arg("block_bytes") = 1024,
     py::arg("out") = py::none(), py::arg("cipher") = "aes", "ECB over whole 16-byte blocks.");

  m.def("openssl_ctr", [](const py::bytes& key, const py::bytes& iv, const py::buffer& data, int threads,
                          const py::object& out, const std::string& cipher_s) {
    const Cipher cipher = parse_cipher(cipher_s);
    const std::string k = key;
    if (k.size() != 16 && k.size() != 24 && k.size() != 32)
      throw std::invalid_argument(std::string(cipher == Cipher::Aes ? "AES" : "Camellia") + " key must be 16, 24 or 32 bytes");
    const std::string c = iv_from(iv);
    if (threads < 1) throw std::invalid_argument("threads must be >= 1");
    const View in = read_view(data, "data");
    return run_into(in, out, [&](const uint8_t* src, uint8_t* dst, size_t n) {
      openssl_ctr(threads, reinterpret_cast<const uint8_t*>(k.data()), int(k.size()) * 8,
                  reinterpret_cast<const uint8_t*>(c.data()), src, dst, n, cipher);
    });
  }, py::arg("key"), py::arg("iv"), py::arg("data"), py::arg("threads") = 1, py::arg("out") = py::none(),
     py::arg("cipher") = "aes", "OpenSSL EVP aes-*-ctr / camellia-*-ctr on the same buffer layout (for comparison and tests).");

  m.def("crypt_fds", &crypt_fds, py::arg("key"), py::arg("iv"), py::arg("mode"), py::arg("decrypt"),
        py::arg("in_fd"), py::arg("out_fd"), py::arg("offset"), py::arg("length"), py::arg("impl") = "auto",
        py::arg("threads") = 1, py::arg("chunk_bytes") = 1 << 20, py::arg("cipher") = "aes",
        "Transform bytes [offset, offset+length) of in_fd into the same range of out_fd (pread, in place, "
        "pwrite) with `threads` threads taking chunks in turn; returns (bytes, errno, stage).");
  s2mc_bench::register_bench(m);
  m.def("make_bench", &make_bench, py::arg("key_bits"), py::arg("nbytes"), py::arg("engine") = "ours",
        py::arg("impl") = "auto", py::arg("strategy") = "contiguous", py::arg("threads") = 1,
        py::arg("block_bytes") = 1024, py::arg("multi") = false, py::arg("cipher") = "aes",
        "CTR in place on an nbytes buffer (multi: one buffer per thread), set up for timing: a Bench.");
}
