// k_cam.cu -- the Camellia kernels (see cam_kernels.cuh): `coarse`, seed 002's design (SP-tables and
// subkeys in shared memory, 16 bytes per thread, persistent grid), and `optimised` (the AES optimised
// kernel's techniques: replicated SP-tables, CAM_BPT blocks per thread in coalesced tiles, subkeys in
// the constant bank; its launch shape is the AES configuration t4b2's, whose name it takes). One
// template per round count (18: 128-bit keys, 24: 192/256-bit keys); both directions and every op
// are the same code (the subkeys decide).
#include <atomic>
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

constexpr int kCamBpt = 2, kCamThr = 1024;

template <int NR>
__global__ void __launch_bounds__(kCamThr) k_cam_opt(KParams p) {
  extern __shared__ __align__(16) u32 sm_dyn[];
  cam_opt_fill(p.base, sm_dyn, threadIdx.x, kCamThr);
  __syncthreads();
  cam_opt_body<NR, kCamBpt>(p, sm_dyn, threadIdx.x, blockIdx.x, kCamThr, gridDim.x);
}

namespace {

template <int NR>
void cam_opt_prepare() {
  static std::atomic<bool> done{false};
  if (!done.load()) {
    check(cudaFuncSetAttribute(k_cam_opt<NR>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(kCamOptSmemBytes)),
          "shared-memory size (camellia optimised)");
    done = true;
  }
}

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

const void* cam_opt_func(int nr) {
  const void* fn = nullptr;
  by_rounds(nr, [&](auto nrc) {
    cam_opt_prepare<decltype(nrc)::value>();
    fn = reinterpret_cast<const void*>(&k_cam_opt<decltype(nrc)::value>);
  });
  return fn;
}

FuncAttrs attrs_cam(const KernelSpec& k, int nr) {
  if (k.family == Family::Optimised) return func_attrs(cam_opt_func(nr), kCamThr, kCamOptSmemBytes);
  return func_attrs(cam_func(nr), k.threads, 0);
}

unsigned plan_grid_cam(const KernelSpec& k, int nr, uint64_t nblocks, int device) {
  const bool opt = k.family == Family::Optimised;
  int per_sm = 0, sms = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, opt ? cam_opt_func(nr) : cam_func(nr),
                                                      opt ? kCamThr : k.threads,
                                                      opt ? kCamOptSmemBytes : 0),
        "occupancy (camellia)");
  if (opt && per_sm < 1)
    throw std::runtime_error("CUDA: the optimised Camellia kernel does not fit on this GPU (shared memory)");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "multiprocessor count");
  const uint64_t thr = opt ? uint64_t(kCamThr) * kCamBpt : uint64_t(k.threads);  // blocks per CTA tile
  const uint64_t resident = uint64_t(std::max(1, per_sm)) * uint64_t(sms);
  return unsigned(std::max<uint64_t>(1, std::min(resident, (nblocks + thr - 1) / thr)));
}

void launch_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid, cudaStream_t s) {
  if (k.family == Family::Optimised) {
    by_rounds(nr, [&](auto nrc) {
      constexpr int NR = decltype(nrc)::value;
      cam_opt_prepare<NR>();
      k_cam_opt<NR><<<grid, kCamThr, kCamOptSmemBytes, s>>>(p);
    });
    check(cudaGetLastError(), "launch (camellia optimised)");
    return;
  }
  by_rounds(nr, [&](auto nrc) { k_cam_coarse<decltype(nrc)::value><<<grid, k.threads, 0, s>>>(p); });
  check(cudaGetLastError(), "launch (camellia coarse)");
}

void emulate_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid) {
  if (k.family == Family::Optimised) {
    std::vector<u32> sm(kCamOptSmemBytes / 4);
    by_rounds(nr, [&](auto nrc) {
      constexpr int NR = decltype(nrc)::value;
      for (u32 bid = 0; bid < grid; ++bid) {
        for (u32 tid = 0; tid < u32(kCamThr); ++tid) cam_opt_fill(p.base, sm.data(), tid, kCamThr);
        for (u32 tid = 0; tid < u32(kCamThr); ++tid)
          cam_opt_body<NR, kCamBpt>(p, sm.data(), tid, bid, kCamThr, grid);
      }
    });
    return;
  }
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
