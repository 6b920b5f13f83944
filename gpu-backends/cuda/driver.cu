// driver.cu -- the host driver: devices, keys, the chunked multi-stream pipeline (seed 002 methods B
// and C), the CPU emulator entry, and the benchmarks.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "api.h"
#include "kernels.h"
#include "s2mc_cipher/camellia.h"
#include "s2mc_cipher/fd_ring.h"
#include "s2mc_cipher/key_schedule.h"

namespace s2mc {
namespace gpu {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear a sticky-free error so the next call starts clean
    throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
  }
}

// ------------------------------------------------------------------------------------------------
// Kernel specs
// ------------------------------------------------------------------------------------------------

int threads_of(const KernelSpec& k) {
  return k.family == Family::Optimised ? opt_configs().at(size_t(k.opt)).threads : k.threads;
}

std::string kernel_name(const KernelSpec& k) {
  switch (k.family) {
    case Family::Coarse: return "coarse";
    case Family::Extended: return "extended-" + std::to_string(k.ext_blocks * 16);
    case Family::Optimised: return std::string("optimised-") + opt_configs().at(size_t(k.opt)).name;
  }
  return "?";
}

FuncAttrs func_attrs(const void* fn, int threads, size_t dynamic_smem) {
  cudaFuncAttributes fa{};
  check(cudaFuncGetAttributes(&fa, fn), "cudaFuncGetAttributes");
  FuncAttrs a;
  a.regs = fa.numRegs;
  a.static_smem = fa.sharedSizeBytes;
  a.dynamic_smem = dynamic_smem;
  a.local_bytes = fa.localSizeBytes;
  a.max_threads = fa.maxThreadsPerBlock;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&a.per_sm, fn, threads, dynamic_smem),
        "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return a;
}

unsigned plan_grid(const KernelSpec& k, Op op, int nr, uint64_t nblocks, int device) {
  if (k.camellia) return plan_grid_cam(k, nr, nblocks, device);
  return k.family == Family::Optimised ? plan_grid_opt(k, op, nr, nblocks, device)
                                       : plan_grid_seed(k, op, nr, nblocks, device);
}

void launch(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid, cudaStream_t s) {
  if (k.camellia)
    launch_cam(k, nr, p, grid, s);
  else if (k.family == Family::Optimised)
    launch_opt(k, op, nr, p, grid, s);
  else
    launch_seed(k, op, nr, p, grid, s);
}

void emulate(const KernelSpec& k, Op op, int nr, const KParams& p, unsigned grid) {
  if (k.camellia)
    emulate_cam(k, nr, p, grid);
  else if (k.family == Family::Optimised)
    emulate_opt(k, op, nr, p, grid);
  else
    emulate_seed(k, op, nr, p, grid);
}

std::vector<std::string> optimised_configs() {
  std::vector<std::string> v;
  for (const auto& c : opt_configs()) v.push_back(c.name);
  return v;
}

std::string optimised_default() { return opt_configs().at(size_t(opt_default())).name; }

namespace {

KernelSpec parse_kernel(const Request& r) {
  KernelSpec k;
  if (r.threads < 32 || r.threads > 1024 || r.threads % 32 != 0)
    throw std::invalid_argument("threads per CTA must be a multiple of 32 in 32..1024, not " +
                                std::to_string(r.threads));
  k.threads = r.threads;
  if (r.cipher == "camellia") {
    // coarse: seed 002's design; optimised: its launch shape is AES's t4b2 (k_cam.cu), whose name
    // (4 replicated tables, 2 blocks per thread) it takes.
    k.camellia = true;
    const auto& cs = opt_configs();
    const int t4b2 = int(std::find_if(cs.begin(), cs.end(), [](const OptConfig& c) {
                           return std::string(c.name) == "t4b2";
                         }) - cs.begin());
    if (r.kernel == "coarse") {
      k.family = Family::Coarse;
    } else if (r.kernel == "optimised" || r.kernel == "optimised-t4b2") {
      k.family = Family::Optimised;
      k.opt = t4b2;
    } else {
      throw std::invalid_argument("unknown Camellia kernel '" + r.kernel +
                                  "' (Camellia has coarse and optimised)");
    }
    return k;
  }
  if (r.cipher != "aes")
    throw std::invalid_argument("unknown cipher '" + r.cipher + "' (expected aes or camellia)");
  if (r.kernel == "coarse") {
    k.family = Family::Coarse;
  } else if (r.kernel == "extended") {
    k.family = Family::Extended;
    if (r.ext_bytes < 16 || r.ext_bytes % 16 != 0)
      throw std::invalid_argument("extended block size must be a positive multiple of 16 bytes, not " +
                                  std::to_string(r.ext_bytes));
    k.ext_blocks = r.ext_bytes / 16;
  } else if (r.kernel == "optimised") {
    k.family = Family::Optimised;
    k.opt = opt_default();
  } else if (r.kernel.rfind("optimised-", 0) == 0) {
    k.family = Family::Optimised;
    const std::string cfg = r.kernel.substr(10);
    const auto& cs = opt_configs();
    auto it = std::find_if(cs.begin(), cs.end(), [&](const OptConfig& c) { return cfg == c.name; });
    if (it == cs.end()) {
      std::string names;
      for (const auto& c : cs) names += std::string(names.empty() ? "" : ", ") + "optimised-" + c.name;
      throw std::invalid_argument("unknown kernel '" + r.kernel + "' (optimised configurations: " +
                                  names + ")");
    }
    k.opt = int(it - cs.begin());
  } else {
    throw std::invalid_argument("unknown kernel '" + r.kernel +
                                "' (expected coarse, extended, optimised or optimised-<config>)");
  }
  return k;
}

Op parse_op(const std::string& s) {
  if (s == "ecb-enc") return Op::EcbEnc;
  if (s == "ecb-dec") return Op::EcbDec;
  if (s == "ctr") return Op::Ctr;
  if (s == "keystream") return Op::Keystream;
  throw std::invalid_argument("unknown op '" + s + "' (expected ecb-enc, ecb-dec, ctr, keystream)");
}

// Camellia's subkeys as the kernel walks them (cam_kernels.cuh): pre-whitening, six rounds, FL
// pair, six rounds, ..., post-whitening; each 64-bit subkey as (hi, lo). Decryption walks the
// decryption subkeys (RFC 3713 §2.3.3), so one kernel does both directions.
int camellia_params(Op op, const uint8_t* key, int key_bits, u32* w) {
  camellia::Subkeys enc, ks;
  const int nr = camellia::expand_key(key, key_bits, &enc);
  if (nr == 0)
    throw std::invalid_argument("key must be 128, 192 or 256 bits, not " + std::to_string(key_bits));
  if (op == Op::EcbDec)
    camellia::decryption_subkeys(enc, &ks);
  else
    ks = enc;
  int n = 0;
  auto put = [&](uint64_t v) {
    w[n++] = u32(v >> 32);
    w[n++] = u32(v);
  };
  put(ks.kw[0]);
  put(ks.kw[1]);
  for (int g = 0; g < nr / 6; ++g) {
    if (g > 0) {
      put(ks.ke[2 * g - 2]);
      put(ks.ke[2 * g - 1]);
    }
    for (int i = 0; i < 6; ++i) put(ks.k[6 * g + i]);
  }
  put(ks.kw[2]);
  put(ks.kw[3]);
  return nr;
}

// Round keys (little-endian column words), base tables, counter: everything KParams needs that
// does not depend on the buffers.
KParams make_params(Op op, bool cam, const uint8_t* key, int key_bits, const uint8_t* iv,
                    int* nr_out) {
  KParams p{};
  if (cam) {
    *nr_out = camellia_params(op, key, key_bits, p.rk);
  } else {
    uint32_t rk[aes::kMaxRoundKeyWords];
    const int nr = aes::expand_key(key, key_bits, rk);
    if (nr == 0)
      throw std::invalid_argument("key must be 128, 192 or 256 bits, not " + std::to_string(key_bits));
    uint32_t use[aes::kMaxRoundKeyWords];
    if (op == Op::EcbDec)
      aes::inverse_key_schedule(rk, nr, use);
    else
      std::memcpy(use, rk, sizeof(use));
    for (int i = 0; i < 4 * (nr + 1); ++i) p.rk[i] = __builtin_bswap32(use[i]);
    *nr_out = nr;
  }
  if (iv) {
    for (int i = 0; i < 8; ++i) p.iv_hi = (p.iv_hi << 8) | iv[i];
    for (int i = 8; i < 16; ++i) p.iv_lo = (p.iv_lo << 8) | iv[i];
  }
  p.op = op;
  return p;
}

void host_base_tables(u32* base) {
  uint32_t te[aes::kTableWords], td[aes::kTableWords];
  aes::build_te_tables(te);
  aes::build_td_tables(td);
  for (int x = 0; x < 256; ++x) {
    base[x] = __builtin_bswap32(te[x]);
    base[256 + x] = __builtin_bswap32(td[x]);
    base[512 + x] = aes::kInvSbox[x];
  }
  camellia::build_sp_tables(base + kAesBaseWords);
}

const u32* host_base() {
  static u32 base[kBaseWords];
  static std::once_flag once;
  std::call_once(once, [] { host_base_tables(base); });
  return base;
}

uint64_t blocks_for(size_t n) { return (uint64_t(n) + 15) / 16; }

void check_length(Op op, size_t n) {
  if ((op == Op::EcbEnc || op == Op::EcbDec) && n % 16 != 0)
    throw std::invalid_argument("ECB needs a whole number of 16-byte blocks, got " +
                                std::to_string(n) + " bytes");
}

// --- RAII for CUDA resources ------------------------------------------------------------------

struct DevBuf {
  void* p = nullptr;
  size_t n = 0;
  DevBuf() = default;
  explicit DevBuf(size_t bytes) : n(bytes) {
    if (bytes) check(cudaMalloc(&p, bytes), "cudaMalloc");
  }
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(p); }
};

struct HostBuf {  // pinned
  void* p = nullptr;
  explicit HostBuf(size_t bytes) {
    if (bytes) check(cudaMallocHost(&p, bytes), "cudaMallocHost (pinned)");
  }
  ~HostBuf() {
    if (p) cudaFreeHost(p);
  }
  HostBuf(const HostBuf&) = delete;
  HostBuf& operator=(const HostBuf&) = delete;
  uint8_t* bytes() const { return static_cast<uint8_t*>(p); }
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() {
    if (e) cudaEventDestroy(e);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
};

// How a host thread waits for the GPU: S2MC_CUDA_SYNC = auto (the runtime's choice: spin while
// there are fewer active contexts than CPUs), spin, yield or blocking. A benchmark knob: the
// host-serial times of small inputs are mostly waiting, and the mode decides how long a wake-up
// takes (docs/gpu.md, "The 1 MB host-serial oddity").
unsigned sync_flag() {
  const char* env = std::getenv("S2MC_CUDA_SYNC");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto") return cudaDeviceScheduleAuto;
  if (v == "spin") return cudaDeviceScheduleSpin;
  if (v == "yield") return cudaDeviceScheduleYield;
  if (v == "blocking") return cudaDeviceScheduleBlockingSync;
  throw std::runtime_error("S2MC_CUDA_SYNC=" + v + ": expected auto, spin, yield or blocking");
}

// The device this process uses, with the base tables uploaded once.
struct Device {
  int index = 0;
  u32* base = nullptr;
};

Device& device() {
  static Device d;
  static std::once_flag once;
  static std::string error;
  std::call_once(once, [] {
    try {
      std::string reason;
      if (device_count(&reason) == 0) throw std::runtime_error("CUDA: no GPU: " + reason);
      d.index = current_device();
      check(cudaSetDevice(d.index), "cudaSetDevice");
      check(cudaSetDeviceFlags(sync_flag()), "cudaSetDeviceFlags (S2MC_CUDA_SYNC)");
      check(cudaMalloc(&d.base, kBaseWords * sizeof(u32)), "cudaMalloc (tables)");
      check(cudaMemcpy(d.base, host_base(), kBaseWords * sizeof(u32), cudaMemcpyHostToDevice),
            "cudaMemcpy (tables)");
    } catch (const std::exception& e) {
      error = e.what();
    }
  });
  if (!error.empty()) throw std::runtime_error(error);
  check(cudaSetDevice(d.index), "cudaSetDevice");  // per host thread
  return d;
}

size_t round16(size_t n) { return (n + 15) & ~size_t(15); }

constexpr int kMaxReps = 10000;  // a typo guard (gpu.MAX_REPS says the same to Python)

unsigned emu_grid(const KernelSpec& k, uint64_t nblocks, unsigned max_grid) {
  const uint64_t thr = uint64_t(threads_of(k));
  uint64_t g;
  if (k.family == Family::Extended) {
    const uint64_t threads_needed = (nblocks + k.ext_blocks - 1) / k.ext_blocks;
    return unsigned(std::max<uint64_t>(1, (threads_needed + thr - 1) / thr));  // exact, no stride loop
  } else if (k.family == Family::Optimised) {
    const uint64_t tile = thr * uint64_t(opt_configs().at(size_t(k.opt)).bpt);
    g = (nblocks + tile - 1) / tile;
  } else {
    g = (nblocks + thr - 1) / thr;
  }
  if (max_grid) g = std::min<uint64_t>(g, max_grid);
  return unsigned(std::max<uint64_t>(1, g));
}

// Where a pipeline runs: on the GPU (GpuExec) or on the CPU through the kernel emulator (EmuExec).
// The pipeline logic -- chunking, stream lanes, staging buffers, counter offsets -- is the same
// code either way, so the emulator tests it too.
struct Exec {
  virtual ~Exec() = default;
  virtual void* dev_alloc(size_t n) = 0;
  virtual void dev_free(void* p) = 0;
  virtual void* pinned_alloc(size_t n) = 0;
  virtual void pinned_free(void* p) = 0;
  virtual void* stream_create() = 0;
  virtual void stream_destroy(void* s) = 0;
  virtual void h2d(void* dst, const void* src, size_t n, void* s) = 0;
  virtual void d2h(void* dst, const void* src, size_t n, void* s) = 0;
  virtual void launch(const KernelSpec& k, Op op, int nr, const KParams& p, void* s) = 0;
  virtual void sync(void* s) = 0;
  // Events mark where a stream's work ends, so another host thread can wait for it.
  virtual void* event_create() = 0;
  virtual void event_destroy(void* e) = 0;
  virtual void record(void* e, void* s) = 0;
  virtual void event_sync(void* e) = 0;
  virtual const u32* base() = 0;
  virtual size_t free_mem() = 0;
  // Make the device current for the calling host thread, which may not be the one that made
  // this (s2mc.gpu.startup makes a FileCipher on a thread of its own).
  virtual void bind() {}
};

struct GpuExec final : Exec {
  Device& d;
  unsigned grid = 0;
  uint64_t grid_nblocks = ~uint64_t(0);
  Op grid_op = Op::Ctr;
  int grid_nr = 0;
  GpuExec() : d(device()) {}
  void* dev_alloc(size_t n) override {
    void* p = nullptr;
    check(cudaMalloc(&p, n), "cudaMalloc");
    return p;
  }
  void dev_free(void* p) override { cudaFree(p); }
  void* pinned_alloc(size_t n) override {
    void* p = nullptr;
    check(cudaMallocHost(&p, n), "cudaMallocHost (pinned)");
    return p;
  }
  void pinned_free(void* p) override { cudaFreeHost(p); }
  void* stream_create() override {
    cudaStream_t s = nullptr;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    return s;
  }
  void stream_destroy(void* s) override { cudaStreamDestroy(static_cast<cudaStream_t>(s)); }
  void h2d(void* dst, const void* src, size_t n, void* s) override {
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, static_cast<cudaStream_t>(s)),
          "cudaMemcpyAsync H2D");
  }
  void d2h(void* dst, const void* src, size_t n, void* s) override {
    check(cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, static_cast<cudaStream_t>(s)),
          "cudaMemcpyAsync D2H");
  }
  void launch(const KernelSpec& k, Op op, int nr, const KParams& p, void* s) override {
    if (p.nblocks != grid_nblocks || op != grid_op || nr != grid_nr) {  // plan once per shape
      grid = plan_grid(k, op, nr, p.nblocks, d.index);
      grid_nblocks = p.nblocks;
      grid_op = op;
      grid_nr = nr;
    }
    gpu::launch(k, op, nr, p, grid, static_cast<cudaStream_t>(s));
  }
  void sync(void* s) override {
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(s)), "cudaStreamSynchronize");
  }
  void* event_create() override {
    cudaEvent_t e = nullptr;
    check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  void event_destroy(void* e) override { cudaEventDestroy(static_cast<cudaEvent_t>(e)); }
  void record(void* e, void* s) override {
    check(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)), "cudaEventRecord");
  }
  void bind() override { check(cudaSetDevice(d.index), "cudaSetDevice"); }
  void event_sync(void* e) override {
    check(cudaSetDevice(d.index), "cudaSetDevice");  // the writer thread's first CUDA call
    check(cudaEventSynchronize(static_cast<cudaEvent_t>(e)), "cudaEventSynchronize");
  }
  const u32* base() override { return d.base; }
  size_t free_mem() override {
    size_t free_b = 0, total_b = 0;
    check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    return free_b;
  }
};

struct EmuExec final : Exec {
  unsigned max_grid;
  explicit EmuExec(unsigned mg) : max_grid(mg) {}
  void* dev_alloc(size_t n) override {
    void* p = ::operator new(n);
    std::memset(p, 0xA5, n);  // garbage, as device memory would hold
    return p;
  }
  void dev_free(void* p) override { ::operator delete(p); }
  void* pinned_alloc(size_t n) override { return dev_alloc(n); }
  void pinned_free(void* p) override { dev_free(p); }
  void* stream_create() override { return new int(0); }
  void stream_destroy(void* s) override { delete static_cast<int*>(s); }
  void h2d(void* dst, const void* src, size_t n, void*) override { std::memcpy(dst, src, n); }
  void d2h(void* dst, const void* src, size_t n, void*) override { std::memcpy(dst, src, n); }
  void launch(const KernelSpec& k, Op op, int nr, const KParams& p, void*) override {
    gpu::emulate(k, op, nr, p, emu_grid(k, p.nblocks, max_grid));
  }
  void sync(void*) override {}
  // Every emulated copy and kernel is done when its call returns: an event has nothing to wait for.
  void* event_create() override { return new int(0); }
  void event_destroy(void* e) override { delete static_cast<int*>(e); }
  void record(void*, void*) override {}
  void event_sync(void*) override {}
  const u32* base() override { return host_base(); }
  size_t free_mem() override { return size_t(1) << 40; }
};

// The host-to-host pipeline. Chunk c goes to stream lane c mod S: H2D, kernel, D2H, all
// asynchronous, so with S >= 2 the copies of one chunk overlap the kernel of another (seed 002
// method B); S = 1 is the non-overlapped method C. With `staged`, in/out are ordinary (pageable)
// memory and each lane copies through its own pinned buffers; otherwise in/out must be pinned.
// Inputs larger than the GPU are fine: only S x 2 chunks live in device memory.
class Pipeline {
 public:
  Pipeline(Exec& ex, const KernelSpec& k, int streams, size_t chunk, size_t n, bool staged)
      : ex_(ex), k_(k), staged_(staged) {
    if (streams < 1 || streams > 64)
      throw std::invalid_argument("streams must be in 1..64, not " + std::to_string(streams));
    if (chunk == 0) {  // automatic: about 4 chunks per stream, 1..64 MiB
      chunk = n / (size_t(streams) * 4);
      chunk = std::min<size_t>(std::max<size_t>(chunk, size_t(1) << 20), size_t(64) << 20);
    }
    chunk = round16(std::max<size_t>(chunk, 16));
    // Never ask for more than ~70% of the free device memory.
    const size_t budget = ex.free_mem() / 10 * 7;
    const size_t per_chunk = 2 * size_t(streams);
    if (chunk * per_chunk > budget)
      chunk = std::max<size_t>(16, (budget / per_chunk) & ~size_t(0xfffff));
    if (n > 0) chunk = std::min(chunk, round16(n));
    chunk_ = chunk;
    for (int i = 0; i < streams; ++i) {
      lanes_.emplace_back(new Lane(ex));
      Lane& l = *lanes_.back();
      l.st = ex.stream_create();
      l.din = ex.dev_alloc(chunk);
      l.dout = ex.dev_alloc(chunk);
      if (staged) {
        l.hin = static_cast<uint8_t*>(ex.pinned_alloc(chunk));
        l.hout = static_cast<uint8_t*>(ex.pinned_alloc(chunk));
      }
    }
  }

  size_t chunk() const { return chunk_; }
  int streams() const { return int(lanes_.size()); }

  // Benchmarks only: called with each chunk's stream before its H2D (0), after it (1), after the
  // kernel (2) and after the D2H (3); the host's seconds inside sync add up in sync_seconds.
  std::function<void(int, void*)> mark;
  double sync_seconds = 0;

  // proto: keys, counter, op (its blk_off is the counter offset of in[0]).
  void run(Op op, int nr, const KParams& proto, const uint8_t* in, uint8_t* out, size_t n) {
    const size_t nchunks = (n + chunk_ - 1) / chunk_;
    for (size_t c = 0; c < nchunks; ++c) {
      Lane& l = *lanes_[c % lanes_.size()];
      if (l.pending) finish(l, out);
      const size_t off = c * chunk_;
      const size_t len = std::min(chunk_, n - off);
      const uint8_t* src = in + off;
      if (staged_) {
        std::memcpy(l.hin, src, len);
        src = l.hin;
      }
      if (mark) mark(0, l.st);
      ex_.h2d(l.din, src, len, l.st);
      if (mark) mark(1, l.st);
      KParams p = proto;
      p.in = static_cast<const uint4*>(l.din);
      p.out = static_cast<uint4*>(l.dout);
      p.nblocks = blocks_for(len);
      p.blk_off = proto.blk_off + off / 16;
      p.base = ex_.base();
      p.ext_blocks = u32(k_.ext_blocks);
      ex_.launch(k_, op, nr, p, l.st);
      if (mark) mark(2, l.st);
      ex_.d2h(staged_ ? l.hout : out + off, l.dout, len, l.st);
      if (mark) mark(3, l.st);
      l.pending = true;
      l.off = off;
      l.len = len;
    }
    for (auto& l : lanes_)
      if (l->pending) finish(*l, out);
  }

 private:
  struct Lane {
    Exec& ex;
    void* st = nullptr;
    void* din = nullptr;
    void* dout = nullptr;
    uint8_t* hin = nullptr;
    uint8_t* hout = nullptr;
    bool pending = false;
    size_t off = 0, len = 0;
    explicit Lane(Exec& e) : ex(e) {}
    ~Lane() {
      try {
        if (st) ex.sync(st);
      } catch (...) {  // already failing: free what we can
      }
      if (din) ex.dev_free(din);
      if (dout) ex.dev_free(dout);
      if (hin) ex.pinned_free(hin);
      if (hout) ex.pinned_free(hout);
      if (st) ex.stream_destroy(st);
    }
  };

  // Wait for the lane's chunk; with staging, copy its output to its place.
  void finish(Lane& l, uint8_t* out) {
    if (mark) {
      const auto t0 = std::chrono::steady_clock::now();
      ex_.sync(l.st);
      sync_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    } else {
      ex_.sync(l.st);
    }
    if (staged_) std::memcpy(out + l.off, l.hout, l.len);
    l.pending = false;
  }

  Exec& ex_;
  KernelSpec k_;
  bool staged_;
  size_t chunk_ = 0;
  std::vector<std::unique_ptr<Lane>> lanes_;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

}  // namespace

void start() { device(); }

// ------------------------------------------------------------------------------------------------
// Devices
// ------------------------------------------------------------------------------------------------

int device_count(std::string* reason) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (reason) *reason = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && reason) *reason = "no CUDA device found";
  return n;
}

int runtime_version() {
  int v = 0;
  cudaRuntimeGetVersion(&v);
  return v;
}

int driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return v;
}

int current_device() {
  const char* env = std::getenv("S2MC_CUDA_DEVICE");
  return env && *env ? std::atoi(env) : 0;
}

std::vector<DeviceInfo> devices() {
  std::vector<DeviceInfo> out;
  const int n = device_count(nullptr);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, i), "cudaGetDeviceProperties");
    DeviceInfo d;
    d.index = i;
    d.name = prop.name;
    d.cc_major = prop.major;
    d.cc_minor = prop.minor;
    d.sms = prop.multiProcessorCount;
    d.global_mem = prop.totalGlobalMem;
    d.smem_per_sm = prop.sharedMemPerMultiprocessor;
    d.l2_bytes = prop.l2CacheSize;
    cudaDeviceGetAttribute(&d.clock_khz, cudaDevAttrClockRate, i);
    cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, i);
    cudaDeviceGetAttribute(&d.mem_bus_bits, cudaDevAttrGlobalMemoryBusWidth, i);
    char bus[64] = {0};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), i) == cudaSuccess) d.pci_bus_id = bus;
    cudaGetLastError();
    out.push_back(d);
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Encryption
// ------------------------------------------------------------------------------------------------

namespace {

void run_pipeline(Exec& ex, const Request& r, const uint8_t* key, int key_bits, const uint8_t* iv,
                  const uint8_t* in, uint8_t* out, size_t n) {
  const KernelSpec k = parse_kernel(r);
  const Op op = parse_op(r.op);
  if (op == Op::Keystream) throw std::invalid_argument("use keystream_fold for the keystream op");
  check_length(op, n);
  int nr = 0;
  const KParams proto = make_params(op, k.camellia, key, key_bits, iv, &nr);
  if (n == 0) return;
  Pipeline pipe(ex, k, r.streams, r.chunk_bytes, n, /*staged=*/true);
  pipe.run(op, nr, proto, in, out, n);
}

}  // namespace

void crypt(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
           const uint8_t* in, uint8_t* out, size_t n) {
  parse_kernel(r);  // argument errors before any GPU error
  GpuExec ex;
  run_pipeline(ex, r, key, key_bits, iv, in, out, n);
}

void emulate(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
             const uint8_t* in, uint8_t* out, size_t n, unsigned max_grid) {
  EmuExec ex(max_grid);
  run_pipeline(ex, r, key, key_bits, iv, in, out, n);
}

// ------------------------------------------------------------------------------------------------
// Files: the ring of pinned buffers (s2mc_cipher/fd_ring.h) over the stream lanes
// ------------------------------------------------------------------------------------------------

struct FileCipher::Impl {
  std::unique_ptr<Exec> ex;
  KernelSpec k;
  int nr = 0;
  KParams proto{};
  size_t slot_bytes = 0;
  std::vector<uint8_t*> bufs;    // pinned, one per slot
  std::vector<void*> events;     // per slot: where its D2H ends
  struct Lane {
    void* st = nullptr;
    void* din = nullptr;
    void* dout = nullptr;
  };
  std::vector<Lane> lanes;
  uint64_t seq = 0;              // pieces submitted: piece i runs on lane i mod streams

  ~Impl() {
    for (auto& l : lanes) {
      if (l.st) {
        try {
          ex->sync(l.st);
        } catch (...) {  // already failing: free what we can
        }
      }
      if (l.din) ex->dev_free(l.din);
      if (l.dout) ex->dev_free(l.dout);
      if (l.st) ex->stream_destroy(l.st);
    }
    for (void* e : events) ex->event_destroy(e);
    for (uint8_t* b : bufs) ex->pinned_free(b);
  }

  // H2D, kernel, D2H back into the slot's buffer, then the slot's event; all queued on one lane.
  // A lane's device buffers are reused only by later work on the same stream, which runs after.
  void submit(size_t slot, uint64_t offset, size_t len) {
    Lane& l = lanes[seq++ % lanes.size()];
    ex->h2d(l.din, bufs[slot], len, l.st);
    KParams p = proto;
    p.in = static_cast<const uint4*>(l.din);
    p.out = static_cast<uint4*>(l.dout);
    p.nblocks = blocks_for(len);
    p.blk_off = offset / 16;
    p.base = ex->base();
    p.ext_blocks = u32(k.ext_blocks);
    ex->launch(k, Op::Ctr, nr, p, l.st);
    ex->d2h(bufs[slot], l.dout, len, l.st);
    ex->record(events[slot], l.st);
  }
};

FileCipher::FileCipher(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
                       size_t slot_bytes, int slots, bool emulated, unsigned max_grid)
    : impl_(new Impl) {
  Impl& m = *impl_;
  m.k = parse_kernel(r);
  if (parse_op(r.op) != Op::Ctr) throw std::invalid_argument("the file path does CTR only");
  if (slot_bytes < 16 || slot_bytes % 16)
    throw std::invalid_argument("slot size must be a positive multiple of 16 bytes, not " +
                                std::to_string(slot_bytes));
  if (slots < 1 || slots > 256)
    throw std::invalid_argument("slots must be in 1..256, not " + std::to_string(slots));
  if (r.streams < 1 || r.streams > 64)
    throw std::invalid_argument("streams must be in 1..64, not " + std::to_string(r.streams));
  m.proto = make_params(Op::Ctr, m.k.camellia, key, key_bits, iv, &m.nr);
  m.ex.reset(emulated ? static_cast<Exec*>(new EmuExec(max_grid)) : new GpuExec());
  m.slot_bytes = slot_bytes;
  for (int i = 0; i < slots; ++i) {
    m.bufs.push_back(static_cast<uint8_t*>(m.ex->pinned_alloc(slot_bytes)));
    m.events.push_back(m.ex->event_create());
  }
  for (int i = 0; i < std::min(r.streams, slots); ++i) {  // more lanes than slots would idle
    m.lanes.emplace_back();
    Impl::Lane& l = m.lanes.back();
    l.st = m.ex->stream_create();
    l.din = m.ex->dev_alloc(slot_bytes);
    l.dout = m.ex->dev_alloc(slot_bytes);
  }
}

FileCipher::~FileCipher() = default;

size_t FileCipher::slot_bytes() const { return impl_->slot_bytes; }
int FileCipher::slots() const { return int(impl_->bufs.size()); }
int FileCipher::streams() const { return int(impl_->lanes.size()); }

// What the ring calls: submit a slot's piece to the device, wait for it.
cipher_host::RingOps FileCipher::ops() {
  Impl& m = *impl_;
  cipher_host::RingOps ops;
  ops.submit = [&m](size_t slot, uint64_t off, size_t len) { m.submit(slot, off, len); };
  ops.wait = [&m](size_t slot) { m.ex->event_sync(m.events[slot]); };
  return ops;
}

FileResult FileCipher::crypt_fds(int in_fd, int out_fd, uint64_t offset, uint64_t length) {
  if (offset % 16) throw std::invalid_argument("file range offset must be a multiple of 16");
  Impl& m = *impl_;
  m.ex->bind();  // submit runs on this thread
  const cipher_host::RingResult rr =
      cipher_host::ring_run(in_fd, out_fd, offset, length, m.bufs, m.slot_bytes, ops());
  FileResult fr;
  fr.err = rr.err;
  fr.stage = rr.stage;
  fr.message = rr.message;
  fr.bytes = rr.bytes;
  fr.first_read = rr.first_read;
  return fr;
}

void FileCipher::crypt_buffer(uint8_t* data, size_t n, uint64_t offset) {
  if (offset % 16) throw std::invalid_argument("stream offset must be a multiple of 16");
  impl_->ex->bind();  // submit runs on this thread
  cipher_host::ring_buffer(data, n, offset, impl_->bufs, impl_->slot_bytes, ops());
}

std::array<uint8_t, 16> keystream_fold(const Request& r, const uint8_t* key, int key_bits,
                                       const uint8_t iv[16], size_t n, bool emulated,
                                       unsigned max_grid) {
  const KernelSpec k = parse_kernel(r);
  int nr = 0;
  KParams p = make_params(Op::Keystream, k.camellia, key, key_bits, iv, &nr);
  p.nblocks = blocks_for(n);
  p.ext_blocks = u32(k.ext_blocks);
  std::vector<uint4> folds;
  if (emulated) {
    const unsigned grid = emu_grid(k, p.nblocks, max_grid);
    folds.assign(size_t(grid) * threads_of(k), make_uint4(0, 0, 0, 0));
    p.base = host_base();
    p.out = folds.data();
    emulate(k, Op::Keystream, nr, p, grid);
  } else {
    Device& d = device();
    const unsigned grid = plan_grid(k, Op::Keystream, nr, p.nblocks, d.index);
    const size_t nout = size_t(grid) * threads_of(k);
    DevBuf dout(nout * sizeof(uint4));
    p.base = d.base;
    p.out = dout.as<uint4>();
    launch(k, Op::Keystream, nr, p, grid, nullptr);
    folds.resize(nout);
    check(cudaMemcpy(folds.data(), dout.p, nout * sizeof(uint4), cudaMemcpyDeviceToHost),
          "cudaMemcpy (folds)");
  }
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (const uint4& f : folds) acc = xor4(acc, f);
  std::array<uint8_t, 16> outb{};
  std::memcpy(outb.data(), &acc, 16);
  return outb;
}

// ------------------------------------------------------------------------------------------------
// Kernel attributes and occupancy (seed 002's Table 2)
// ------------------------------------------------------------------------------------------------

std::vector<KernelInfo> kernel_info(const std::string& cipher, int key_bits, int threads) {
  if (key_bits != 128 && key_bits != 192 && key_bits != 256)
    throw std::invalid_argument("key must be 128, 192 or 256 bits, not " + std::to_string(key_bits));
  Request r;
  r.cipher = cipher;
  r.threads = threads;
  std::vector<std::pair<std::string, Op>> runs;  // (kernel, op)
  if (cipher == "camellia") {
    runs = {{"coarse", Op::Ctr}, {"optimised", Op::Ctr}};
  } else {
    std::vector<std::string> names = {"coarse", "extended"};
    for (const auto& c : opt_configs()) names.push_back(std::string("optimised-") + c.name);
    for (const auto& n : names) {
      runs.push_back({n, Op::Ctr});
      runs.push_back({n, Op::EcbDec});
    }
  }
  Device& d = device();
  int sms = 0, max_thr = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, d.index), "multiprocessor count");
  check(cudaDeviceGetAttribute(&max_thr, cudaDevAttrMaxThreadsPerMultiProcessor, d.index),
        "max threads per multiprocessor");
  std::vector<KernelInfo> out;
  for (const auto& [name, op] : runs) {
    r.kernel = name;
    const KernelSpec k = parse_kernel(r);
    const int nr = k.camellia ? (key_bits == 128 ? 18 : 24) : (key_bits / 32 + 6);
    const FuncAttrs a = k.camellia ? attrs_cam(k, nr)
                        : k.family == Family::Optimised ? attrs_opt(k, op, nr)
                                                        : attrs_seed(k, op, nr);
    KernelInfo x;
    x.kernel = kernel_name(k);
    x.cipher = cipher;
    x.direction = k.camellia ? "enc/dec" : op == Op::EcbDec ? "dec" : "enc";
    x.key_bits = key_bits;
    x.rounds = nr;
    x.threads = threads_of(k);
    x.regs = a.regs;
    x.per_sm = a.per_sm;
    x.sms = sms;
    x.max_threads_per_sm = max_thr;
    x.static_smem = a.static_smem;
    x.dynamic_smem = a.dynamic_smem;
    x.local_bytes = a.local_bytes;
    // The extended kernel's grid follows the input (one thread per extended block); the others
    // are persistent grids of what is resident at once.
    x.grid = k.family == Family::Extended ? 0 : unsigned(a.per_sm * sms);
    x.occupancy = max_thr ? double(a.per_sm) * x.threads / max_thr : 0;
    out.push_back(x);
  }
  return out;
}

// ------------------------------------------------------------------------------------------------
// Benchmarks
// ------------------------------------------------------------------------------------------------

BenchResult bench(const Request& r, const std::string& measure, int key_bits, size_t n, int reps,
                  int warmup, double min_seconds) {
  const KernelSpec k = parse_kernel(r);
  Op op = parse_op(r.op);
  if (reps < 1 || reps > kMaxReps)
    throw std::invalid_argument("reps must be in 1.." + std::to_string(kMaxReps));
  if (warmup < 0 || warmup > kMaxReps)
    throw std::invalid_argument("warm-up runs must be in 0.." + std::to_string(kMaxReps));
  if (!(min_seconds >= 0) || min_seconds > 3600)
    throw std::invalid_argument("min_seconds must be in 0..3600");
  if (n < 16) throw std::invalid_argument("benchmark size must be at least 16 bytes");
  n &= ~size_t(15);
  if (measure == "keystream") op = Op::Keystream;
  else if (op == Op::Keystream) op = Op::Ctr;
  if (measure != "keystream" && measure != "device" && measure != "host")
    throw std::invalid_argument("unknown measure '" + measure + "' (expected keystream, device, host)");

  const uint8_t key[32] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6, 0xab, 0xf7, 0x15,
                           0x88, 0x09, 0xcf, 0x4f, 0x3c, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  const uint8_t iv[16] = {0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7,
                          0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff};
  int nr = 0;
  KParams p = make_params(op, k.camellia, key, key_bits, iv, &nr);
  p.ext_blocks = u32(k.ext_blocks);
  Device& d = device();
  p.base = d.base;
  p.nblocks = n / 16;

  BenchResult res;
  res.kernel = kernel_name(k);
  res.op = r.op;
  res.measure = measure;
  res.bytes = n;
  res.warmup = warmup;
  res.min_seconds = min_seconds;
  res.threads = threads_of(k);
  std::vector<double> times;
  double total = 0;
  // The repetition policy: at least `reps`, more until min_seconds is reached (bounded).
  auto more = [&] {
    return int(times.size()) < reps || (total < min_seconds && int(times.size()) < kMaxReps);
  };

  if (measure == "keystream" || measure == "device") {
    const unsigned grid = plan_grid(k, op, nr, p.nblocks, d.index);
    res.grid = grid;
    res.timer = "cuda-events";
    std::unique_ptr<DevBuf> din, dout;
    if (measure == "keystream") {
      dout.reset(new DevBuf(size_t(grid) * res.threads * sizeof(uint4)));
    } else {
      size_t free_b = 0, total_b = 0;
      check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
      if (2 * n > free_b / 10 * 9)
        throw std::invalid_argument("device-resident size " + std::to_string(n) +
                                    " B needs 2x that in GPU memory; " + std::to_string(free_b) +
                                    " B are free");
      din.reset(new DevBuf(n));
      dout.reset(new DevBuf(n));
      check(cudaMemset(din->p, 0x5a, n), "cudaMemset");
      p.in = din->as<const uint4>();
    }
    p.out = dout->as<uint4>();
    Event start, stop;
    for (int i = 0; i < warmup; ++i) launch(k, op, nr, p, grid, nullptr);  // also sets attributes
    check(cudaDeviceSynchronize(), "warm-up");
    while (more()) {
      check(cudaEventRecord(start.e, nullptr), "cudaEventRecord");
      launch(k, op, nr, p, grid, nullptr);
      check(cudaEventRecord(stop.e, nullptr), "cudaEventRecord");
      check(cudaEventSynchronize(stop.e), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start.e, stop.e), "cudaEventElapsedTime");
      times.push_back(ms * 1e-3);
      total += ms * 1e-3;
    }
  } else {
    res.timer = "host-clock";
    HostBuf hin(n), hout(n);
    std::memset(hin.p, 0x5a, n);
    std::memset(hout.p, 0, n);  // touch the pages before timing
    GpuExec ex;
    Pipeline pipe(ex, k, r.streams, r.chunk_bytes, n, /*staged=*/false);
    res.streams = pipe.streams();
    res.chunk_bytes = pipe.chunk();
    res.grid = plan_grid(k, op, nr, blocks_for(pipe.chunk()), d.index);
    for (int i = 0; i < warmup; ++i) pipe.run(op, nr, p, hin.bytes(), hout.bytes(), n);
    while (more()) {
      const auto t0 = std::chrono::steady_clock::now();
      pipe.run(op, nr, p, hin.bytes(), hout.bytes(), n);
      const auto t1 = std::chrono::steady_clock::now();
      times.push_back(std::chrono::duration<double>(t1 - t0).count());
      total += times.back();
    }
    // The breakdown: as many repetitions again, with four events per chunk.
    std::vector<std::unique_ptr<Event>> evs;
    size_t used = 0;
    pipe.mark = [&](int, void* s) {
      if (used == evs.size()) evs.emplace_back(new Event());
      check(cudaEventRecord(evs[used++]->e, static_cast<cudaStream_t>(s)), "cudaEventRecord");
    };
    auto span = [&](size_t a, size_t b) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, evs[a]->e, evs[b]->e), "cudaEventElapsedTime");
      return double(ms) * 1e-3;
    };
    for (size_t i = 0; i < times.size(); ++i) {
      used = 0;
      pipe.sync_seconds = 0;
      const auto t0 = std::chrono::steady_clock::now();
      pipe.run(op, nr, p, hin.bytes(), hout.bytes(), n);
      res.stage_wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      double h2d = 0, kern = 0, d2h = 0;
      for (size_t c = 0; c + 3 < used; c += 4) {
        h2d += span(c, c + 1);
        kern += span(c + 1, c + 2);
        d2h += span(c + 2, c + 3);
      }
      res.stage_h2d.push_back(h2d);
      res.stage_kernel.push_back(kern);
      res.stage_d2h.push_back(d2h);
      res.stage_sync.push_back(pipe.sync_seconds);
    }
    pipe.mark = nullptr;
  }
  res.reps = int(times.size());
  res.times = times;
  res.seconds = median(times);
  res.best_seconds = *std::min_element(times.begin(), times.end());
  return res;
}

}  // namespace gpu
}  // namespace s2mc
