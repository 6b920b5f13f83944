// driver.h -- the host side of s2mc's OpenCL backend: devices, one built program per
// device and process, and AES / Camellia in ECB and CTR over segments (seed 004's segments: each
// one copied to the device, processed and copied back on its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace s2mc {
namespace cipher_host {
struct RingOps;  // s2mc_cipher/fd_ring.h
}
namespace ocl {

// Every failure: one line saying what failed and the OpenCL error's name.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DeviceInfo {
  int index = 0;               // in the flat list over every platform
  std::string platform, vendor, name, type, version, driver, c_version;
  unsigned compute_units = 0;
  uint64_t global_mem = 0, local_mem = 0, max_alloc = 0;
  size_t max_work_group = 0;
  bool little_endian = true;
};

// Every device of every platform. Without a platform (no loader configuration, no ICD, or
// OCL_ICD_VENDORS pointing at an empty folder) the list is empty and *why says so.
std::vector<DeviceInfo> devices(std::string* why);

// The device a run uses when none is named: S2MC_OPENCL_DEVICE (an index) if set, else the first
// GPU, else device 0. Throws Error when there is none.
int default_device();

struct Request {
  std::string cipher = "aes";   // aes | camellia
  std::string op = "ctr";       // ctr | ecb-enc | ecb-dec
  int device = -1;              // -1: default_device()
  size_t segment_bytes = 0;     // a multiple of 16; 0: the whole input in one segment
  size_t local_size = 0;        // work-items per work-group; 0: 64 on CPUs, 256 on GPUs
  size_t max_groups = 0;        // work-groups per launch; 0: 4 per compute unit (CPU), 32 (GPU)
};

struct RunInfo {
  double seconds = 0;           // host clock around the whole run
  double kernel_seconds = 0;    // the sum of the kernels' profiled times
  size_t segments = 0, segment_bytes = 0, global_size = 0, local_size = 0;
  int device = 0;
};

// in -> out (n bytes). out may be in itself (the in-order queue copies segment k back before it
// reads segment k+1), not a partial overlap. key: 16/24/32 bytes; iv: 16 bytes for CTR (the first
// counter block), ignored for ECB. ECB needs n % 16 == 0.
RunInfo crypt(const Request& r, const uint8_t* key, size_t key_len, const uint8_t* iv,
              const uint8_t* in, uint8_t* out, size_t n);

// A file through the device with reading, processing and writing overlapped (the file path of
// `s2mc encrypt --backend opencl`): `slots` host buffers of `slot_bytes` (CL_MEM_ALLOC_HOST_PTR,
// mapped once: pinned where the platform pins) and, per queue, an input and an output buffer, all
// allocated once per file. A reader thread preads into free slots, the calling thread queues
// write, kernel and read back into the same slot on queue (piece mod queues), a writer thread
// waits for each piece's read event in file order and pwrites it (s2mc_cipher/fd_ring.h).
struct FileResult {
  int err = 0;
  std::string stage;    // "" done; "read", "write", "eof", "device"
  std::string message;  // the OpenCL error for "device"
  uint64_t bytes = 0;
  double first_read = 0;  // the ring's RingResult::first_read
};

class FileRing {
 public:
  FileRing(const Request& r, const uint8_t* key, size_t key_len, const uint8_t* iv, size_t slot_bytes,
           int slots, int queues);
  ~FileRing();
  FileRing(const FileRing&) = delete;
  FileRing& operator=(const FileRing&) = delete;
  // [offset, offset + length) of in_fd into out_fd (offset % 16 == 0).
  FileResult crypt_fds(int in_fd, int out_fd, uint64_t offset, uint64_t length);
  // data in place (n bytes at stream byte `offset`, offset % 16 == 0), through the same slots.
  void crypt_buffer(uint8_t* data, size_t n, uint64_t offset);
  size_t slot_bytes() const;
  int slots() const;
  int queues() const;

 private:
  cipher_host::RingOps ops();  // the ring's submit and wait on this device
  struct Impl;
  Impl* impl_;
};

// The kernel alone on n bytes already in device memory (seed 002's method A): one warm-up, then
// `reps` launches timed with profiling events; the per-launch seconds are returned.
std::vector<double> bench_device(const Request& r, int key_bits, size_t n, int reps, RunInfo* info);

// The embedded kernel source (kernels.cl).
const char* kernel_source();

}  // namespace ocl
}  // namespace s2mc
