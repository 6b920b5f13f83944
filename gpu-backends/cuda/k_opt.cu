// k_opt.cu -- the optimised kernel: bank-conflict-free replicated T-tables, several blocks per
// thread, counter in registers (see kernels.cuh, family 3). Several configurations are compiled in
// so that a GPU run can measure which one is best on that GPU (`s2mc gpu --kernel all`).
#include <algorithm>
#include <atomic>
#include <vector>

#include "dispatch.h"
#include "kernels.h"

namespace s2mc {
namespace gpu {

// name, replicated tables, blocks per thread, threads per CTA. Shared memory per CTA is 32 KB per
// table (+32 KB for decryption), so t4 runs one CTA per SM and t1 up to six.
#define S2MC_OPT_CONFIGS(X)     \
  X(0, "t1b4", 1, 4, 256)       \
  X(1, "t2b4", 2, 4, 256)       \
  X(2, "t4b2", 4, 2, 1024)      \
  X(3, "t4b4", 4, 4, 768)

const std::vector<OptConfig>& opt_configs() {
  static const std::vector<OptConfig> v = {
#define S2MC_X(i, name, tbl, bpt, thr) OptConfig{name, tbl, bpt, thr},
      S2MC_OPT_CONFIGS(S2MC_X)
#undef S2MC_X
  };
  return v;
}

int opt_default() { return 2; }  // t4b2: no rotations, 1024 threads per SM

template <int NR, bool DEC, int TBL, int BPT, int THR>
__global__ void __launch_bounds__(THR) k_opt(KParams p) {
  extern __shared__ __align__(16) u32 sm_dyn[];
  opt_fill<TBL, DEC>(p.base, sm_dyn, threadIdx.x, THR);
  __syncthreads();
  opt_body<NR, DEC, TBL, BPT>(p, sm_dyn, threadIdx.x, blockIdx.x, THR, gridDim.x);
}

namespace {

template <int NR, bool DEC, int TBL, int BPT, int THR>
struct OptKernel {
  static constexpr unsigned smem = opt_smem_bytes<TBL, DEC>();
  static void prepare() {
    static std::atomic<bool> done{false};
    if (!done.load()) {
      check(cudaFuncSetAttribute(k_opt<NR, DEC, TBL, BPT, THR>,
                                 cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
            "shared-memory size (optimised)");
      done = true;
    }
  }
  static int per_sm() {
    prepare();
    int n = 0;
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, k_opt<NR, DEC, TBL, BPT, THR>, THR, smem),
          "occupancy (optimised)");
    return n;
  }
  static FuncAttrs attrs() {
    prepare();
    return func_attrs(reinterpret_cast<const void*>(&k_opt<NR, DEC, TBL, BPT, THR>), THR, smem);
  }
  static void launch(const KParams& p, unsigned grid, cudaStream_t s) {
    prepare();
    k_opt<NR, DEC, TBL, BPT, THR><<<grid, THR, smem, s>>>(p);
  }
  static void emulate(const KParams& p, unsigned grid) {
    std::vector<u32> sm(smem / 4);
    for (u32 bid = 0; bid < grid; ++bid) {
      for (u32 tid = 0; tid < u32(THR); ++tid) opt_fill<TBL, DEC>(p.base, sm.data(), tid, THR);
      for (u32 tid = 0; tid < u32(THR); ++tid)
        opt_body<NR, DEC, TBL, BPT>(p, sm.data(), tid, bid, THR, grid);
    }
  }
};

template <class F>
void with_config(int cfg, int nr, Op op, F&& f) {
  dispatch(nr, op == Op::EcbDec, [&](auto nrc, auto decc) {
    constexpr int NR = decltype(nrc)::value;
    constexpr bool DEC = decltype(decc)::value;
    switch (cfg) {
#define S2MC_X(i, name, tbl, bpt, thr) \
  case i:                              \
    f(OptKernel<NR, DEC, tbl, bpt, thr>{}); \
    return;
      S2MC_OPT_CONFIGS(S2MC_X)
#undef S2MC_X
    }
    throw std::invalid_argument("unknown optimised configuration " + std::to_string(cfg));
  });
}

int sm_count(int device) {
  int n = 0;
  check(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device), "multiprocessor count");
  return n;
}

}  // namespace

unsigned plan_grid_opt(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device) {
  const OptConfig& c = opt_configs().at(size_t(k.opt));
  int per_sm = 0;
  with_config(k.opt, nr, op, [&](auto kern) { per_sm = decltype(kern)::per_sm(); });
  if (per_sm < 1)
    throw std::runtime_error(std::string("CUDA: optimised configuration ") + c.name +
                             " does not fit on this GPU (shared memory or registers)");
  const uint64_t tile = uint64_t(c.threads) * uint64_t(c.bpt);
  const uint64_t tiles = (nblocks + tile - 1) / tile;
  const uint64_t resident = uint64_t(per_sm) * uint64_t(sm_count(device));
  return unsigned(std::max<uint64_t>(1, std::min(resident, tiles)));
}

void launch_opt(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid,
                cudaStream_t s) {
  with_config(k.opt, nr, op, [&](auto kern) { decltype(kern)::launch(p, grid, s); });
  check(cudaGetLastError(), "launch (optimised)");
}

FuncAttrs attrs_opt(const KernelSpec& k, Op op, int nr) {
  FuncAttrs a;
  with_config(k.opt, nr, op, [&](auto kern) { a = decltype(kern)::attrs(); });
  return a;
}

void emulate_opt(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid) {
  with_config(k.opt, nr, op, [&](auto kern) { decltype(kern)::emulate(p, grid); });
}

}  // namespace gpu
}  // namespace s2mc
