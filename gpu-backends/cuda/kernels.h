// kernels.h -- the kernel families as the host driver sees them: what can be launched, with which
// grid, and a CPU emulator that runs the same kernel bodies (see kernels.cuh).
#ifndef S2MC_GPU_KERNELS_H
#define S2MC_GPU_KERNELS_H

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "kernels.cuh"

namespace s2mc {
namespace gpu {

enum class Family : int { Coarse = 0, Extended = 1, Optimised = 2 };

// One optimised configuration compiled in (k_opt.cu). tbl: replicated tables; bpt: blocks per
// thread; threads: threads per CTA (a template parameter of the kernel).
struct OptConfig {
  const char* name;
  int tbl;
  int bpt;
  int threads;
};
const std::vector<OptConfig>& opt_configs();
int opt_default();  // index of the configuration "optimised" means when none is named

// A kernel as the user names it: "coarse", "extended" (with E = ext_blocks), "optimised"
// (configuration `opt`).
struct KernelSpec {
  Family family = Family::Optimised;
  bool camellia = false; // Camellia (k_cam.cu: coarse and optimised-t4b2) instead of AES
  int threads = 256;     // coarse/extended: threads per CTA (optimised: fixed by the config)
  int ext_blocks = 64;   // extended: blocks per thread (64 x 16 B = 1 KB, the seed's best CPU size)
  int opt = 0;           // optimised: index into opt_configs()
};

int threads_of(const KernelSpec& k);
std::string kernel_name(const KernelSpec& k);  // "coarse", "extended-1024", "optimised-t4b2", ...

// Grid a launch of `nblocks` blocks uses on `device` (persistent kernels: what fits on the GPU at
// once, never more than the work needs). Keystream launches write grid * threads uint4 folds.
unsigned plan_grid(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device);
void launch(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid, cudaStream_t s);

// Run the kernel on the CPU: every (CTA, thread) of a grid of `grid` CTAs, shared memory emulated,
// p's pointers are host pointers. Same results as the GPU, bit for bit.
void emulate(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid);

// Per-family entry points (k_seed.cu, k_opt.cu).
unsigned plan_grid_seed(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device);
void launch_seed(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid, cudaStream_t s);
void emulate_seed(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid);
unsigned plan_grid_opt(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device);
void launch_opt(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid, cudaStream_t s);
void emulate_opt(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid);

// Camellia (k_cam.cu): the coarse kernel only; nr = 18 or 24, both directions in one kernel.
unsigned plan_grid_cam(const KernelSpec& k, int nr, uint64_t nblocks, int device);
void launch_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid, cudaStream_t s);
void emulate_cam(const KernelSpec& k, int nr, const KParams& p, unsigned grid);

// What the compiler and the occupancy calculator say about one kernel instantiation (seed 002's
// Table 2 columns): registers, shared memory, local (spill) bytes, CTAs resident per SM at the
// kernel's threads per CTA. Needs a GPU.
struct FuncAttrs {
  int regs = 0;
  size_t static_smem = 0, dynamic_smem = 0, local_bytes = 0;
  int max_threads = 0;
  int per_sm = 0;
};
FuncAttrs func_attrs(const void* fn, int threads, size_t dynamic_smem);
FuncAttrs attrs_seed(const KernelSpec& k, Op op, int nr);
FuncAttrs attrs_opt(const KernelSpec& k, Op op, int nr);
FuncAttrs attrs_cam(const KernelSpec& k, int nr);

// Throws std::runtime_error("CUDA: <what>: <error string>") when e is not cudaSuccess.
void check(cudaError_t e, const char* what);

}  // namespace gpu
}  // namespace s2mc

#endif  // S2MC_GPU_KERNELS_H
