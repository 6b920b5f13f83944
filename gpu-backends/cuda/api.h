// api.h -- the CUDA AES backend as the Python binding (and any C++ caller) sees it. Plain C++ types
// only; everything CUDA stays in the .cu files.
//
// Ciphers: "aes" (every kernel below) and "camellia" (RFC 3713, 128/192/256-bit keys; the kernels
// "coarse", seed 002's SP-tables and subkeys in shared memory, 16 bytes per thread, and
// "optimised" = "optimised-t4b2", replicated SP-tables, 2 blocks per thread).
// Kernels are named by strings:
//   "coarse"            T-tables in shared memory, 16 bytes per thread (seeds 000, 002)
//   "extended"          E blocks per thread, E = ext_bytes / 16 (seed 000); default 4096 bytes
//   "optimised"         the default optimised configuration; "optimised-<cfg>" names one of
//                       optimised_configs() (replicated tables t1/t2/t4, blocks per thread b2/b4)
// Ops: "ecb-enc", "ecb-dec", "ctr" (encryption = decryption), "keystream".
// Errors: std::invalid_argument for bad arguments, std::runtime_error("CUDA: ...") for the GPU.
#ifndef S2MC_GPU_API_H
#define S2MC_GPU_API_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace s2mc {
namespace cipher_host {
struct RingOps;  // s2mc_cipher/fd_ring.h
}
namespace gpu {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  size_t global_mem = 0;
  size_t smem_per_sm = 0;
  int l2_bytes = 0;
  int clock_khz = 0;       // peak SM clock
  int mem_clock_khz = 0;   // peak memory clock
  int mem_bus_bits = 0;
  std::string pci_bus_id;
};

// Number of usable GPUs; 0 with `reason` set when there is none (no driver, no device, ...).
int device_count(std::string* reason);
std::vector<DeviceInfo> devices();
int runtime_version();  // e.g. 13000
int driver_version();   // 0 without a driver
int current_device();   // S2MC_CUDA_DEVICE, default 0
// Create this process's context on the device and upload the tables now, as the first call would:
// a command starts it on a thread while the interpreter is still importing (s2mc.cli.main).
void start();

std::vector<std::string> optimised_configs();  // e.g. {"t1b4", "t2b4", "t4b2", "t4b4"}
std::string optimised_default();

struct Request {
  std::string cipher = "aes";  // "aes" or "camellia"
  std::string kernel = "optimised";
  std::string op = "ctr";
  int ext_bytes = 4096;   // extended kernel only (multiple of 16)
  int threads = 256;      // coarse/extended threads per CTA
  int streams = 4;        // host-to-host: CUDA streams (1 = no overlap, seed 002 method C)
  size_t chunk_bytes = 0; // host-to-host: bytes per chunk (0 = automatic); also caps device memory
};

// Host-to-host: in -> GPU -> out through pinned staging buffers, chunked, overlapped over
// `streams`. `in` and `out` may be the same buffer. CTR: any n; ECB: n % 16 == 0.
void crypt(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
           const uint8_t* in, uint8_t* out, size_t n);

// The same on the CPU: the same pipeline (chunks, stream lanes, staging buffers) with host memory
// for device memory and the kernel bodies run by the emulator (no GPU needed). max_grid caps the
// CTAs of the persistent kernels so that their grid-stride loops run several rounds (0 = no cap).
void emulate(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
             const uint8_t* in, uint8_t* out, size_t n, unsigned max_grid);

// A file through the GPU in CTR mode with reading, encrypting and writing overlapped (the file
// path of `s2mc encrypt --backend cuda`). The constructor allocates everything once per file:
// `slots` pinned buffers of `slot_bytes` (a multiple of 16) and, per stream, its device buffers. A
// reader thread preads into free buffers, the calling thread queues H2D, kernel and D2H back into
// the same buffer on stream (piece mod streams), a writer thread waits for each piece in order and
// pwrites it (s2mc_cipher/fd_ring.h); every slot can be in flight. emulated: the same code with
// the kernel emulator for the GPU (tests, no GPU needed).
struct FileResult {
  int err = 0;             // errno of a failed read or write
  std::string stage;       // "" = done; "read", "write", "eof" (input shorter than the range), "device"
  std::string message;     // the GPU's error for stage "device"
  uint64_t bytes = 0;
  double first_read = 0;  // the ring's RingResult::first_read
};

class FileCipher {
 public:
  FileCipher(const Request& r, const uint8_t* key, int key_bits, const uint8_t iv[16],
             size_t slot_bytes, int slots, bool emulated, unsigned max_grid);
  ~FileCipher();
  FileCipher(const FileCipher&) = delete;
  FileCipher& operator=(const FileCipher&) = delete;
  // Bytes [offset, offset + length) of in_fd into the same range of out_fd (offset % 16 == 0).
  FileResult crypt_fds(int in_fd, int out_fd, uint64_t offset, uint64_t length);
  // data (n bytes at byte `offset` of the stream, offset % 16 == 0) in place, through the same
  // pinned buffers: for inputs that are not regular files (FIFOs, stdin).
  void crypt_buffer(uint8_t* data, size_t n, uint64_t offset);
  size_t slot_bytes() const;
  int slots() const;
  int streams() const;

 private:
  cipher_host::RingOps ops();  // the ring's submit and wait on this device
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// XOR of all keystream blocks for n bytes (rounded up to whole blocks) of counter iv, computed by
// the kernel's keystream op (on the GPU, or emulated).
std::array<uint8_t, 16> keystream_fold(const Request& r, const uint8_t* key, int key_bits,
                                       const uint8_t iv[16], size_t n, bool emulated,
                                       unsigned max_grid);

// Benchmarks. measure: "keystream" (no data traffic), "device" (device-resident: read input from
// and write output to GPU memory), "host" (host-to-host with pinned buffers, r.streams streams).
// Timing policy: `warmup` untimed runs first, then at least `reps` timed repetitions, more until
// they add up to `min_seconds` (at most 10000): every repetition's seconds are kept in order.
struct BenchResult {
  std::string kernel, op, measure;
  size_t bytes = 0;
  int reps = 0;            // timed repetitions made (>= the reps asked for with min_seconds)
  int warmup = 0;
  double min_seconds = 0;
  double seconds = 0;      // median over reps
  double best_seconds = 0;
  std::vector<double> times;  // every timed repetition, in order
  unsigned grid = 0;
  int threads = 0;
  int streams = 0;
  size_t chunk_bytes = 0;
  std::string timer;       // "cuda-events" or "host-clock"
  // "host" only: a breakdown from as many further repetitions (kept apart from `times`, since the
  // events add work): per repetition its wall seconds, the sums over its chunks of the H2D, kernel
  // and D2H times between CUDA events recorded on each chunk's stream, and the host's seconds
  // spent waiting in cudaStreamSynchronize.
  std::vector<double> stage_wall, stage_h2d, stage_kernel, stage_d2h, stage_sync;
};
BenchResult bench(const Request& r, const std::string& measure, int key_bits, size_t n, int reps,
                  int warmup = 1, double min_seconds = 0);

// Seed 002's Table 2 for our kernels: for every kernel of `cipher` (AES: coarse, extended, each
// optimised configuration, encryption and decryption; Camellia: coarse and optimised, one kernel
// each for both directions) with `key_bits` keys, what cudaFuncGetAttributes and
// cudaOccupancyMaxActiveBlocksPerMultiprocessor report on the current GPU. grid = the persistent
// grid the driver launches for a large input (CTAs per SM x SMs); occupancy = resident threads per
// SM / the SM's maximum. `threads`: coarse/extended threads per CTA. Needs a GPU.
struct KernelInfo {
  std::string kernel, cipher, direction;
  int key_bits = 0, rounds = 0, threads = 0, regs = 0, per_sm = 0, sms = 0, max_threads_per_sm = 0;
  size_t static_smem = 0, dynamic_smem = 0, local_bytes = 0;
  unsigned grid = 0;
  double occupancy = 0;
};
std::vector<KernelInfo> kernel_info(const std::string& cipher, int key_bits, int threads);

}  // namespace gpu
}  // namespace s2mc

#endif  // S2MC_GPU_API_H
