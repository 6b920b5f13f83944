// k_cam.cu -- the Camellia kernel (seed 002: SP-tables and subkeys in shared memory, 16 bytes per
// thread, persistent grid; see cam_kernels.cuh). One template per round count (18: 128-bit keys,
// 24: 192/256-bit keys); both directions and every op are the same code (the subkeys decide).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cam_kernels.cuh"
#include "dispatch.h"
#include "kernels.h"

namespace s2mc {
namespace gpu {

template <int NR>
__global__ void __launch_bounds__(1024) k_cam_coarse(KParams p) {
  __shared__ u32 sm[kCamSmemWords];
  cam_fill(p.base, p, sm, threadIdx.x, blockDim.x);
  __syncthreads();
  cam_coarse_body<NR>(p, sm, threadIdx.x, blockIdx.x, blockDim.x, gridDim.x);
}

namespace {

template <class F>
void by_rounds(int nr, F&& f) {
  if (nr == 18) {
    f(IntC<18>{});
    return;
  }
  if (nr == 24) {
    f(IntC<24>{});
    return;
  }
  throw std::invalid_argument("Camellia rounds must be 18 or 24, not " + std::to_string(nr));
}

}  // namespace

const void* cam_func(int nr) {
  const void* fn = nullptr;
  by_rounds(nr, [&](auto nrc) { fn = reinterpret_cast<const void*>(&k_cam_coarse<decltype(nrc)::value>); });
  return fn;
}

FuncAttrs attrs_cam(const KernelSpec& k, int nr) { return func_attrs(cam_func(nr), k.threads, 0); }

unsigned plan_grid_cam(const KernelSpec& k, int nr, uint64_t nblocks, int device) {
  int per_sm = 0, sms = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, cam_func(nr), k.threads, 0),
        "occupancy (camellia)");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "multiprocessor count");
  const uint64_t thr = uint64_t(k.threads);
  const uint64_t resident = uint64_t(std::max(1, per_sm)) * uint64_t(sms);
  return unsigned(std::max<uint64_t>(1, std::min(resident, (nblocks + thr - 1) / thr)));
}

void launch_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid, cudaStream_t s) {
  by_rounds(nr, [&](auto nrc) { k_cam_coarse<decltype(nrc)::value><<<grid, k.threads, 0, s>>>(p); });
  check(cudaGetLastError(), "launch (camellia coarse)");
}

void emulate_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid) {
  std::vector<u32> sm(kCamSmemWords);
  const u32 nthr = u32(k.threads);
  by_rounds(nr, [&](auto nrc) {
    constexpr int NR = decltype(nrc)::value;
    for (u32 bid = 0; bid < grid; ++bid) {
      for (u32 tid = 0; tid < nthr; ++tid) cam_fill(p.base, p, sm.data(), tid, nthr);
      for (u32 tid = 0; tid < nthr; ++tid) cam_coarse_body<NR>(p, sm.data(), tid, bid, nthr, grid);
    }
  });
}

}  // namespace gpu
}  // namespace s2mc
