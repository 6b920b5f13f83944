// k_seed.cu -- the seeds' kernels: coarse grain (16 bytes per thread) and extended blocks (E blocks
// per thread), both with the four T-tables and the round keys in shared memory.
#include <algorithm>
#include <vector>

#include "dispatch.h"
#include "kernels.h"

namespace s2mc {
namespace gpu {

template <int NR, bool DEC>
__global__ void __launch_bounds__(1024) k_coarse(KParams p) {
  __shared__ u32 sm[kSeedTableWords];
  seed_fill<DEC>(p.base, p, sm, threadIdx.x, blockDim.x);
  __syncthreads();
  coarse_body<NR, DEC>(p, sm, threadIdx.x, blockIdx.x, blockDim.x, gridDim.x);
}

template <int NR, bool DEC>
__global__ void __launch_bounds__(1024) k_extended(KParams p) {
  __shared__ u32 sm[kSeedTableWords];
  seed_fill<DEC>(p.base, p, sm, threadIdx.x, blockDim.x);
  __syncthreads();
  extended_body<NR, DEC>(p, sm, threadIdx.x, blockIdx.x, blockDim.x, gridDim.x);
}

namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

int sm_count(int device) {
  int n = 0;
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "multiprocessor count");
  return n;
}

}  // namespace

unsigned plan_grid_seed(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device) {
  const uint64_t thr = uint64_t(k.threads);
  if (k.family == Family::Extended) {
    const uint64_t threads_needed = ceil_div(nblocks, uint64_t(k.ext_blocks));
    return unsigned(std::max<uint64_t>(1, ceil_div(threads_needed, thr)));
  }
  // Coarse: a persistent grid (seed 002 §5.4.1), as many CTAs as are resident at once.
  int per_sm = 0;
  dispatch(nr, op == Op::EcbDec, [&](auto nrc, auto opc) {
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k_coarse<decltype(nrc)::value, decltype(opc)::value>,
                                                        k.threads, 0),
          "occupancy (coarse)");
  });
  const uint64_t resident = uint64_t(std::max(1, per_sm)) * uint64_t(sm_count(device));
  return unsigned(std::max<uint64_t>(1, std::min(resident, ceil_div(nblocks, thr))));
}

void launch_seed(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid,
                 cudaStream_t s) {
  dispatch(nr, op == Op::EcbDec, [&](auto nrc, auto opc) {
    if (k.family == Family::Extended)
      k_extended<decltype(nrc)::value, decltype(opc)::value><<<grid, k.threads, 0, s>>>(p);
    else
      k_coarse<decltype(nrc)::value, decltype(opc)::value><<<grid, k.threads, 0, s>>>(p);
  });
  check(cudaGetLastError(), k.family == Family::Extended ? "launch (extended)" : "launch (coarse)");
}

FuncAttrs attrs_seed(const KernelSpec& k, Op op, int nr) {
  FuncAttrs a;
  dispatch(nr, op == Op::EcbDec, [&](auto nrc, auto opc) {
    constexpr int NR = decltype(nrc)::value;
    constexpr bool DEC = decltype(opc)::value;
    const void* fn = k.family == Family::Extended ? reinterpret_cast<const void*>(&k_extended<NR, DEC>)
                                                  : reinterpret_cast<const void*>(&k_coarse<NR, DEC>);
    a = func_attrs(fn, k.threads, 0);
  });
  return a;
}

void emulate_seed(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid) {
  std::vector<u32> sm(kSeedTableWords);
  const u32 nthr = u32(k.threads);
  dispatch(nr, op == Op::EcbDec, [&](auto nrc, auto opc) {
    constexpr int NR = decltype(nrc)::value;
    constexpr bool DEC = decltype(opc)::value;
    for (u32 bid = 0; bid < grid; ++bid) {
      for (u32 tid = 0; tid < nthr; ++tid) seed_fill<DEC>(p.base, p, sm.data(), tid, nthr);
      for (u32 tid = 0; tid < nthr; ++tid) {
        if (k.family == Family::Extended)
          extended_body<NR, DEC>(p, sm.data(), tid, bid, nthr, grid);
        else
          coarse_body<NR, DEC>(p, sm.data(), tid, bid, nthr, grid);
      }
    }
  });
}

}  // namespace gpu
}  // namespace s2mc
