#include <pybind11/pybind11.h>
PYBIND11_MODULE(_fast, m) { m.def("hello", []() { return 42; }); }
