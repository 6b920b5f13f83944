// bindings.cpp -- the pybind11 module s2mc.gpu._opencl. Importing it touches no device: it only
// needs the OpenCL ICD loader (libOpenCL.so.1), and devices() says why there is no device.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "driver.h"

namespace py = pybind11;
using namespace s2mc::ocl;

namespace {

Request make_request(const std::string& cipher, const std::string& op, int device, size_t segment,
                     size_t local_size, size_t max_groups) {
  Request r;
  r.cipher = cipher;
  r.op = op;
  r.device = device;
  r.segment_bytes = segment;
  r.local_size = local_size;
  r.max_groups = max_groups;
  return r;
}

py::dict run_dict(const RunInfo& i) {
  py::dict x;
  x["seconds"] = i.seconds;
  x["kernel_seconds"] = i.kernel_seconds;
  x["segments"] = i.segments;
  x["segment_bytes"] = i.segment_bytes;
  x["global_size"] = i.global_size;
  x["local_size"] = i.local_size;
  x["device"] = i.device;
  return x;
}

}  // namespace

PYBIND11_MODULE(_opencl, m) {
  m.doc() = "OpenCL AES and Camellia kernels (ECB, CTR) and their host driver";
  py::register_exception<Error>(m, "OpenCLError", PyExc_RuntimeError);

  m.def("devices", [] {
    std::string why;
    py::list out;
    for (const DeviceInfo& d : devices(&why)) {
      py::dict x;
      x["index"] = d.index;
      x["platform"] = d.platform;
      x["vendor"] = d.vendor;
      x["name"] = d.name;
      x["type"] = d.type;
      x["version"] = d.version;
      x["driver"] = d.driver;
      x["opencl_c"] = d.c_version;
      x["compute_units"] = d.compute_units;
      x["global_mem_bytes"] = d.global_mem;
      x["local_mem_bytes"] = d.local_mem;
      x["max_alloc_bytes"] = d.max_alloc;
      x["max_work_group"] = d.max_work_group;
      out.append(x);
    }
    return py::make_tuple(out, why);
  }, "([device dicts], reason when there is none)");
  m.def("default_device", &default_device);
  m.def("kernel_source", [] { return std::string(kernel_source()); });

  m.def("crypt",
        [](const py::buffer& data, py::buffer out, const std::string& key, const std::string& iv,
           const std::string& cipher, const std::string& op, int device, size_t segment_bytes,
           size_t local_size, size_t max_groups) {
          py::buffer_info bi = data.request();
          py::buffer_info bo = out.request(true);
          const size_t n = size_t(bi.size) * size_t(bi.itemsize);
          if (size_t(bo.size) * size_t(bo.itemsize) != n)
            throw Error("output buffer is " + std::to_string(bo.size * bo.itemsize) + " bytes, input " +
                        std::to_string(n));
          if (op == "ctr" && iv.size() != 16)
            throw Error("iv must be 16 bytes for CTR, not " + std::to_string(iv.size()));
          const Request r = make_request(cipher, op, device, segment_bytes, local_size, max_groups);
          RunInfo info;
          {
            py::gil_scoped_release nogil;
            info = crypt(r, reinterpret_cast<const uint8_t*>(key.data()), key.size(),
                         reinterpret_cast<const uint8_t*>(iv.data()), static_cast<const uint8_t*>(bi.ptr),
                         static_cast<uint8_t*>(bo.ptr), n);
          }
          return run_dict(info);
        },
        py::arg("data"), py::arg("out"), py::arg("key"), py::arg("iv") = std::string(),
        py::arg("cipher") = "aes", py::arg("op") = "ctr", py::arg("device") = -1,
        py::arg("segment_bytes") = 0, py::arg("local_size") = 0, py::arg("max_groups") = 0,
        "data -> out (a writable buffer of the same length), segment by segment; returns timings");

  py::class_<FileRing>(m, "FileRing",
                       "A file through the device: host buffers and device buffers allocated once, "
                       "a reader and a writer thread, several queues")
      .def(py::init([](const std::string& key, const std::string& iv, const std::string& cipher,
                       const std::string& op, int device, size_t slot_bytes, int slots, int queues) {
             if (op == "ctr" && iv.size() != 16)
               throw Error("iv must be 16 bytes for CTR, not " + std::to_string(iv.size()));
             const Request r = make_request(cipher, op, device, 0, 0, 0);
             py::gil_scoped_release nogil;
             return new FileRing(r, reinterpret_cast<const uint8_t*>(key.data()), key.size(),
                                 reinterpret_cast<const uint8_t*>(iv.data()), slot_bytes, slots, queues);
           }),
           py::arg("key"), py::arg("iv") = std::string(), py::arg("cipher") = "aes", py::arg("op") = "ctr",
           py::arg("device") = -1, py::arg("slot_bytes") = size_t(16) << 20, py::arg("slots") = 8,
           py::arg("queues") = 2)
      .def("crypt_fds",
           [](FileRing& f, int in_fd, int out_fd, uint64_t offset, uint64_t length) {
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
           [](FileRing& f, py::buffer data, uint64_t offset) {
             py::buffer_info info = data.request(true);
             uint8_t* p = static_cast<uint8_t*>(info.ptr);
             const size_t n = size_t(info.size) * size_t(info.itemsize);
             py::gil_scoped_release nogil;
             f.crypt_buffer(p, n, offset);
           },
           py::arg("data"), py::arg("offset"), "data (at stream byte offset) in place")
      .def_property_readonly("slot_bytes", &FileRing::slot_bytes)
      .def_property_readonly("slots", &FileRing::slots)
      .def_property_readonly("queues", &FileRing::queues);

  m.def("bench_device",
        [](const std::string& cipher, const std::string& op, int key_bits, size_t nbytes, int reps,
           int device, size_t local_size, size_t max_groups) {
          const Request r = make_request(cipher, op, device, 0, local_size, max_groups);
          RunInfo info;
          std::vector<double> secs;
          {
            py::gil_scoped_release nogil;
            secs = bench_device(r, key_bits, nbytes, reps, &info);
          }
          py::dict x = run_dict(info);
          x["kernel_seconds_each"] = secs;
          return x;
        },
        py::arg("cipher"), py::arg("op"), py::arg("key_bits"), py::arg("nbytes"), py::arg("reps") = 5,
        py::arg("device") = -1, py::arg("local_size") = 0, py::arg("max_groups") = 0,
        "The kernel alone on data in device memory: per-launch seconds (profiling events)");
}
