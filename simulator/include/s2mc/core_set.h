// A set of cores, one bit each, for every core count the machine allows (params::CORES_MAX): the
// caches' "cores that ever held this line", the directory's sharers, the breakpoints' cores.
// Fixed words, no allocation, so that a set is as cheap to copy and clear as the 64-bit mask it
// replaces; the operations loop over CORES_MAX / 64 words, which the compiler unrolls.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "s2_params.h"  // generated from simulator/params.toml: the most cores

namespace s2 {

class CoreSet {
 public:
  static constexpr int WORDS = static_cast<int>((params::CORES_MAX + 63) / 64);

  bool test(int core) const { return (w_[core >> 6] >> (core & 63)) & 1; }
  void set(int core) { w_[core >> 6] |= uint64_t{1} << (core & 63); }
  void reset(int core) { w_[core >> 6] &= ~(uint64_t{1} << (core & 63)); }
  void clear() {
    for (uint64_t& w : w_) w = 0;
  }
  bool any() const {
    uint64_t a = 0;
    for (uint64_t w : w_) a |= w;
    return a != 0;
  }
  int count() const {
    int n = 0;
    for (uint64_t w : w_) n += __builtin_popcountll(w);
    return n;
  }
  // f(core) for each core in the set, lowest first.
  template <class F> void each(F&& f) const {
    for (int i = 0; i < WORDS; ++i)
      for (uint64_t w = w_[i]; w; w &= w - 1) f(i * 64 + __builtin_ctzll(w));
  }

  // The breakpoint table `brk` (a set per pc of a program of `size` words) with the cores at pc
  // replaced by `cores` of a machine of `machine_cores` (both engines' set_break).
  static void set_break(std::vector<CoreSet>& brk, uint32_t pc, size_t size, const std::vector<int>& cores,
                        int machine_cores) {
    if (pc >= size) throw std::out_of_range("breakpoint outside the program");
    for (int k : cores)
      if (k < 0 || k >= machine_cores) throw std::out_of_range("breakpoint for a core that does not exist");
    brk.resize(size);
    brk[pc].clear();
    for (int k : cores) brk[pc].set(k);
  }

 private:
  uint64_t w_[WORDS] = {};
};

}  // namespace s2
