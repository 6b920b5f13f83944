// The buffer plumbing both native modules' bindings share (_native: AES/Camellia, _cryptrec: the
// CRYPTREC ciphers): read a contiguous input buffer, check a caller's output buffer, and run the work
// with the GIL released into that buffer or into a new bytes object.
#pragma once
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace s2mc_py {

struct View {
  const uint8_t* ptr;
  size_t len;
};

inline View read_view(const pybind11::buffer& b, const char* what) {
  pybind11::buffer_info info = b.request();
  if (info.ndim > 1 && info.strides.back() != info.itemsize)
    throw std::invalid_argument(std::string(what) + " must be a contiguous buffer");
  return {static_cast<const uint8_t*>(info.ptr), size_t(info.size) * size_t(info.itemsize)};
}

inline uint8_t* write_view(const pybind11::buffer& b, size_t need, const char* what) {
  pybind11::buffer_info info = b.request(true);
  const size_t len = size_t(info.size) * size_t(info.itemsize);
  if (len != need) throw std::invalid_argument(std::string(what) + " must have the same length as the input");
  return static_cast<uint8_t*>(info.ptr);
}

// Result buffer: either the caller's writable buffer (returns None) or a new bytes object.
// fn(src, dst, nbytes) runs with the GIL released.
template <typename F>
pybind11::object run_into(const View& in, const pybind11::object& out, F&& fn) {
  if (!out.is_none()) {
    uint8_t* dst = write_view(pybind11::reinterpret_borrow<pybind11::buffer>(out), in.len, "out");
    {
      pybind11::gil_scoped_release nogil;
      fn(in.ptr, dst, in.len);
    }
    return pybind11::none();
  }
  pybind11::object res =
      pybind11::reinterpret_steal<pybind11::object>(PyBytes_FromStringAndSize(nullptr, Py_ssize_t(in.len)));
  if (!res) throw pybind11::error_already_set();
  uint8_t* dst = reinterpret_cast<uint8_t*>(PyBytes_AS_STRING(res.ptr()));
  {
    pybind11::gil_scoped_release nogil;
    fn(in.ptr, dst, in.len);
  }
  return res;
}

}  // namespace s2mc_py
