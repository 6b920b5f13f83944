// dispatch.h -- map run-time (rounds, op) onto the template instantiations.
#ifndef S2MC_GPU_DISPATCH_H
#define S2MC_GPU_DISPATCH_H

#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels.cuh"

namespace s2mc {
namespace gpu {

template <int V>
using IntC = std::integral_constant<int, V>;
template <bool V>
using BoolC = std::integral_constant<bool, V>;

// f(IntC<NR>{}, BoolC<DEC>{}) for the run-time rounds (10/12/14) and direction. The op (ECB,
// CTR, keystream) is a run-time field of KParams: only decryption needs other tables.
template <class F>
decltype(auto) dispatch(int nr, bool dec, F&& f) {
  auto by_dir = [&](auto nrc) -> decltype(auto) {
    if (dec) return f(nrc, BoolC<true>{});
    return f(nrc, BoolC<false>{});
  };
  switch (nr) {
    case 10: return by_dir(IntC<10>{});
    case 12: return by_dir(IntC<12>{});
    case 14: return by_dir(IntC<14>{});
  }
  throw std::invalid_argument("rounds must be 10, 12 or 14, not " + std::to_string(nr));
}

}  // namespace gpu
}  // namespace s2mc

#endif  // S2MC_GPU_DISPATCH_H
