// bindings.cpp -- the pybind11 module s2mc.gpu._cuda. Importing it never touches the GPU: a
// machine without a driver or a device imports it fine and device_count() says why there is none.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstring>
#include <stdexcept>
#include <string>

#include "api.h"

namespace py = pybind11;
using namespace s2mc::gpu;

namespace {

struct Bytes {
  const uint8_t* p;
  size_t n;
};

Bytes view(const py::buffer& b, py::buffer_info& info) {
  info = b.request();
  return Bytes{static_cast<const uint8_t*>(info.ptr), size_t(info.size) * size_t(info.itemsize)};
}

void check_key_iv(const std::string& key, const std::string& iv, const std::string& op) {
  if (key.size() != 16 && key.size() != 24 && key.size() != 32)
    throw std::invalid_argument("key must be 16, 24 or 32 bytes, not " + std::to_string(key.size()));
  if (op.rfind("ecb", 0) != 0 && iv.size() != 16)
    throw std::invalid_argument("iv must be 16 bytes, not " + std::to_string(iv.size()));
}

Request make_request(const std::string& cipher, const std::string& kernel, const std::string& op,
                     int ext_bytes, int threads, int streams, size_t chunk_bytes) {
  Request r;
  r.cipher = cipher;
  r.kernel = kernel;
  r.op = op;
  r.ext_bytes = ext_bytes;
  r.threads = threads;
  r.streams = streams;
  r.chunk_bytes = chunk_bytes;
  return r;
}

const uint8_t* iv_ptr(const std::string& iv) {
  static const uint8_t zero[16] = {0};
  return iv.size() == 16 ? reinterpret_cast<const uint8_t*>(iv.data()) : zero;
}

py::bytes run(bool emulated, const py::buffer& data, const std::string& key, const std::string& iv,
              const std::string& cipher, const std::string& kernel, const std::string& op, int ext_bytes, int threads,
              int streams, size_t chunk_bytes, unsigned max_grid) {
  check_key_iv(key, iv, op);
  py::buffer_info info;
  const Bytes in = view(data, info);
  PyObject* obj = PyBytes_FromStringAndSize(nullptr, Py_ssize_t(in.n));
  if (!obj) throw py::error_already_set();
  py::bytes out = py::reinterpret_steal<py::bytes>(obj);
  uint8_t* dst = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(obj));
  const Request r = make_request(cipher, kernel, op, ext_bytes, threads, streams, chunk_bytes);
  const auto* k = reinterpret_cast<const uint8_t*>(key.data());
  const int bits = int(key.size() * 8);
  {
    py::gil_scoped_release nogil;
    if (emulated)
      emulate(r, k, bits, iv_ptr(iv), in.p, dst, in.n, max_grid);
    else
      crypt(r, k, bits, iv_ptr(iv), in.p, dst, in.n);
  }
  return out;
}

}  // namespace

PYBIND11_MODULE(_cuda, m) {
  m.doc() = "CUDA AES kernels (coarse, extended, optimised), the Camellia kernels (coarse, optimised) and their host driver";

  m.def("device_count", [] {
    std::string reason;
    const int n = device_count(&reason);
    return py::make_tuple(n, reason);
  }, "(number of usable GPUs, reason when there is none)");

  m.def("devices", [] {
    py::list out;
    for (const DeviceInfo& d : devices()) {
      py::dict x;
      x["index"] = d.index;
      x["name"] = d.name;
      x["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
      x["sms"] = d.sms;
      x["global_mem_bytes"] = d.global_mem;
      x["smem_per_sm_bytes"] = d.smem_per_sm;
      x["l2_bytes"] = d.l2_bytes;
      x["sm_clock_mhz"] = d.clock_khz / 1000.0;
      x["mem_clock_mhz"] = d.mem_clock_khz / 1000.0;
      x["mem_bus_bits"] = d.mem_bus_bits;
      x["pci_bus_id"] = d.pci_bus_id;
      out.append(x);
    }
    return out;
  });
  m.def("runtime_version", &runtime_version);
  m.def("driver_version", &driver_version);
  m.def("current_device", &current_device);
  m.def("start", [] {
    py::gil_scoped_release nogil;
    start();
  }, "Create the context and upload the tables now (what the first call does), the GIL released");
  m.def("optimised_configs", &optimised_configs);
  m.def("optimised_default", &optimised_default);

  m.def("crypt",
        [](const py::buffer& data, const std::string& key, const std::string& iv,
           const std::string& kernel, const std::string& op, int ext_bytes, int threads,
           int streams, size_t chunk_bytes, const std::string& cipher) {
          return run(false, data, key, iv, cipher, kernel, op, ext_bytes, threads, streams,
                     chunk_bytes, 0);
        },
        py::arg("data"), py::arg("key"), py::arg("iv") = std::string(),
        py::arg("kernel") = "optimised", py::arg("op") = "ctr", py::arg("ext_bytes") = 4096,
        py::arg("threads") = 256, py::arg("streams") = 4, py::arg("chunk_bytes") = 0,
        py::arg("cipher") = "aes",
        "Host-to-host through the GPU: returns the output bytes");

  m.def("emulate",
        [](const py::buffer& data, const std::string& key, const std::string& iv,
           const std::string& kernel, const std::string& op, int ext_bytes, int threads,
           int streams, size_t chunk_bytes, unsigned max_grid, const std::string& cipher) {
          return run(true, data, key, iv, cipher, kernel, op, ext_bytes, threads, streams,
                     chunk_bytes, max_grid);
        },
        py::arg("data"), py::arg("key"), py::arg("iv") = std::string(),
        py::arg("kernel") = "optimised", py::arg("op") = "ctr", py::arg("ext_bytes") = 4096,
        py::arg("threads") = 256, py::arg("streams") = 2, py::arg("chunk_bytes") = 0,
        py::arg("max_grid") = 3, py::arg("cipher") = "aes",
        "Run the kernel bodies on the CPU (no GPU needed): returns the output bytes");

  py::class_<FileCipher>(m, "FileCipher",
                         "CTR over a file with reading, encrypting and writing overlapped: pinned "
                         "buffers and device buffers allocated once, a reader and a writer thread")
      .def(py::init([](const std::string& key, const std::string& iv, const std::string& cipher,
                       const std::string& kernel, int ext_bytes, int threads, int streams,
                       size_t slot_bytes, int slots, bool emulated, unsigned max_grid) {
             check_key_iv(key, iv, "ctr");
             const Request r = make_request(cipher, kernel, "ctr", ext_bytes, threads, streams, 0);
             py::gil_scoped_release nogil;
             return new FileCipher(r, reinterpret_cast<const uint8_t*>(key.data()), int(key.size() * 8),
                                   iv_ptr(iv), slot_bytes, slots, emulated, max_grid);
           }),
           py::arg("key"), py::arg("iv"), py::arg("cipher") = "aes", py::arg("kernel") = "optimised",
           py::arg("ext_bytes") = 4096, py::arg("threads") = 256, py::arg("streams") = 4,
           py::arg("slot_bytes") = size_t(16) << 20, py::arg("slots") = 8, py::arg("emulated") = false,
           py::arg("max_grid") = 3)
      .def("crypt_fds",
           [](FileCipher& f, int in_fd, int out_fd, uint64_t offset, uint64_t length) {
             FileResult r;
             {
               py::gil_scoped_release nogil;
               r = f.crypt_fds(in_fd, out_fd, offset, length);
             }
             return py::make_tuple(r.bytes, r.err, r.stage, r.message, r.first_read);
           },
           py::arg("in_fd"), py::arg("out_fd"), py::arg("offset"), py::arg("length"),
           "(bytes written, errno, stage, message, first_read): stage '' when done, else "
           "read/write/eof/device; first_read: CLOCK_MONOTONIC seconds when the first piece was in")
      .def("crypt_buffer",
           [](FileCipher& f, const py::buffer& data, uint64_t offset) {
             py::buffer_info info = data.request(true);
             if (info.readonly) throw std::invalid_argument("crypt_buffer needs a writable buffer");
             uint8_t* p = static_cast<uint8_t*>(info.ptr);
             const size_t n = size_t(info.size) * size_t(info.itemsize);
             py::gil_scoped_release nogil;
             f.crypt_buffer(p, n, offset);
           },
           py::arg("data"), py::arg("offset"), "data (at stream byte offset) in place")
      .def_property_readonly("slot_bytes", &FileCipher::slot_bytes)
      .def_property_readonly("slots", &FileCipher::slots)
      .def_property_readonly("streams", &FileCipher::streams);

  m.def("keystream_fold",
        [](const std::string& key, const std::string& iv, size_t nbytes, const std::string& kernel,
           int ext_bytes, int threads, bool emulated, unsigned max_grid, const std::string& cipher) {
          check_key_iv(key, iv, "ctr");
          const Request r = make_request(cipher, kernel, "keystream", ext_bytes, threads, 1, 0);
          std::array<uint8_t, 16> f;
          {
            py::gil_scoped_release nogil;
            f = keystream_fold(r, reinterpret_cast<const uint8_t*>(key.data()), int(key.size() * 8),
                               reinterpret_cast<const uint8_t*>(iv.data()), nbytes, emulated, max_grid);
          }
          return py::bytes(reinterpret_cast<const char*>(f.data()), f.size());
        },
        py::arg("key"), py::arg("iv"), py::arg("nbytes"), py::arg("kernel") = "optimised",
        py::arg("ext_bytes") = 4096, py::arg("threads") = 256, py::arg("emulated") = false,
        py::arg("max_grid") = 3, py::arg("cipher") = "aes",
        "XOR of all keystream blocks the kernel's keystream op makes for nbytes");

  m.def("bench",
        [](const std::string& kernel, const std::string& measure, int key_bits, size_t nbytes,
           int reps, const std::string& op, int ext_bytes, int threads, int streams,
           size_t chunk_bytes, const std::string& cipher, int warmup, double min_seconds) {
          const Request r = make_request(cipher, kernel, op, ext_bytes, threads, streams, chunk_bytes);
          BenchResult b;
          {
            py::gil_scoped_release nogil;
            b = bench(r, measure, key_bits, nbytes, reps, warmup, min_seconds);
          }
          py::dict x;
          x["kernel"] = b.kernel;
          x["op"] = b.op;
          x["measure"] = b.measure;
          x["bytes"] = b.bytes;
          x["reps"] = b.reps;
          x["seconds"] = b.seconds;
          x["best_seconds"] = b.best_seconds;
          x["grid"] = b.grid;
          x["threads"] = b.threads;
          x["streams"] = b.streams;
          x["chunk_bytes"] = b.chunk_bytes;
          x["timer"] = b.timer;
          x["warmup"] = b.warmup;
          x["min_seconds"] = b.min_seconds;
          x["times"] = b.times;
          if (!b.stage_wall.empty()) {
            py::dict st;
            st["wall"] = b.stage_wall;
            st["h2d"] = b.stage_h2d;
            st["kernel"] = b.stage_kernel;
            st["d2h"] = b.stage_d2h;
            st["sync"] = b.stage_sync;
            x["stages"] = st;
          }
          return x;
        },
        py::arg("kernel"), py::arg("measure"), py::arg("key_bits") = 128, py::arg("nbytes"),
        py::arg("reps") = 5, py::arg("op") = "ctr", py::arg("ext_bytes") = 4096,
        py::arg("threads") = 256, py::arg("streams") = 4, py::arg("chunk_bytes") = 0,
        py::arg("cipher") = "aes", py::arg("warmup") = 1, py::arg("min_seconds") = 0.0,
        "Time one kernel: measure = keystream | device | host");

  m.def("kernel_info",
        [](const std::string& cipher, int key_bits, int threads) {
          std::vector<KernelInfo> v;
          {
            py::gil_scoped_release nogil;
            v = kernel_info(cipher, key_bits, threads);
          }
          py::list out;
          for (const KernelInfo& k : v) {
            py::dict x;
            x["kernel"] = k.kernel;
            x["cipher"] = k.cipher;
            x["direction"] = k.direction;
            x["key_bits"] = k.key_bits;
            x["rounds"] = k.rounds;
            x["threads"] = k.threads;
            x["registers"] = k.regs;
            x["static_smem_bytes"] = k.static_smem;
            x["dynamic_smem_bytes"] = k.dynamic_smem;
            x["local_bytes"] = k.local_bytes;
            x["ctas_per_sm"] = k.per_sm;
            x["sms"] = k.sms;
            x["max_threads_per_sm"] = k.max_threads_per_sm;
            x["grid"] = k.grid;
            x["occupancy"] = k.occupancy;
            out.append(x);
          }
          return out;
        },
        py::arg("cipher") = "aes", py::arg("key_bits") = 128, py::arg("threads") = 256,
        "Registers, shared memory and occupancy of every kernel (seed 002 Table 2); needs a GPU");
}
