// kernels.cuh -- the bodies of the CUDA AES kernels, written once as __host__ __device__ code.
//
// Every kernel in this backend is split in two:
//   * a *fill* step that copies the lookup tables into shared memory (the only part that needs
//     __syncthreads), and
//   * a *body* that one thread runs: given (blockIdx, threadIdx, blockDim, gridDim) it encrypts the
//     16-byte blocks that belong to it.
// The __global__ wrappers (k_*.cu) call fill, sync, body. The host emulator (emulate.cu) runs the
// very same fill and body functions on the CPU for every (block, thread) of the launch, against a
// host array that stands in for shared memory. That lets the exact kernel code -- table layouts,
// index arithmetic, counter carries, tails -- be checked against OpenSSL on a machine without a GPU.
//
// Word convention (differs from key_schedule.h on purpose): a state column is the *little-endian*
// uint32 of its four bytes, so a 16-byte block is one uint4 load with no byte swapping. Byte r of a
// column word (bits 8r..8r+7) is row r of the AES state. In this convention
//     T0[x] = (2s) | (s << 8) | (s << 16) | (3s << 24),   s = S[x]     and  Tt = rotl(T0, 8t),
// i.e. the byte-swapped Te tables of key_schedule.h; likewise Td, and the round keys are the
// byte-swapped FIPS-197 words. One encryption round for output column j (indices mod 4):
//     e_j = T0[b0(w_j)] ^ T1[b1(w_{j+1})] ^ T2[b2(w_{j+2})] ^ T3[b3(w_{j+3})] ^ rk[4r+j]
// and decryption (equivalent inverse cipher) takes row r from column j-r instead of j+r.
#ifndef S2MC_GPU_KERNELS_CUH
#define S2MC_GPU_KERNELS_CUH

#include <cstdint>
#include <cuda_runtime.h>

#define S2_HD __host__ __device__ __forceinline__

namespace s2mc {
namespace gpu {

using u32 = uint32_t;
using u64 = uint64_t;

// What a launch computes.
enum class Op : int {
  EcbEnc = 0,     // out = E_k(in)
  EcbDec = 1,     // out = D_k(in)
  Ctr = 2,        // out = in ^ E_k(iv + block), the 128-bit big-endian counter of SP 800-38A
  Keystream = 3,  // no input: every thread XOR-folds the keystream blocks it makes and writes one
                  // uint4 (its fold) to out[global thread id]; pure cipher throughput, no data traffic
};

// Everything a kernel needs, passed by value (it lands in the constant bank: with the rounds
// unrolled, every round-key access is an immediate constant-bank operand).
struct KParams {
  u32 rk[68];        // AES: round keys, little-endian column words (encryption or equivalent-
                     // inverse), 60 at most; Camellia: the 68 subkey words (cam_kernels.cuh)
  u64 iv_hi, iv_lo;  // the initial counter block as a 128-bit big-endian number
  u64 blk_off;       // counter offset of block 0 of this launch (chunked streams)
  u64 nblocks;       // 16-byte blocks to process (a CTR tail counts as one whole block: the buffers
                     // are padded to 16 bytes and only the valid bytes are copied back)
  const uint4* in;
  uint4* out;
  const u32* base;   // the base tables below (device memory; host memory in the emulator)
  u32 ext_blocks;    // extended kernel: blocks per thread (E)
  Op op;             // a run-time switch (uniform across the grid) outside the rounds; only
                     // decryption changes the tables, so kernels are templates on DEC, not on op
};

// ------------------------------------------------------------------------------------------------
// Small helpers with identical host and device behaviour.
// ------------------------------------------------------------------------------------------------

S2_HD u32 bswap32(u32 x) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, 0, 0x0123);
#else
  return __builtin_bswap32(x);
#endif
}

S2_HD u32 rotl32(u32 x, int n) {
#ifdef __CUDA_ARCH__
  return __funnelshift_l(x, x, n);
#else
  n &= 31;
  return n == 0 ? x : (x << n) | (x >> (32 - n));
#endif
}

// __byte_perm: result byte i = byte (s >> 4i) & 7 of the 8-byte value {y:x} (x bytes 0-3, y 4-7).
S2_HD u32 prmt(u32 x, u32 y, u32 s) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, y, s);
#else
  const u64 v = (u64(y) << 32) | x;
  u32 r = 0;
  for (int i = 0; i < 4; ++i) r |= u32((v >> (8 * ((s >> (4 * i)) & 7))) & 0xff) << (8 * i);
  return r;
#endif
}

S2_HD u32 byte_of(u32 w, int r) { return (w >> (8 * r)) & 0xffu; }

S2_HD uint4 ld_stream(const uint4* p) {
#ifdef __CUDA_ARCH__
  return __ldcs(p);
#else
  return *p;
#endif
}

S2_HD void st_stream(uint4* p, uint4 v) {
#ifdef __CUDA_ARCH__
  __stcs(p, v);
#else
  *p = v;
#endif
}

S2_HD uint4 xor4(uint4 a, uint4 b) {
  return make_uint4(a.x ^ b.x, a.y ^ b.y, a.z ^ b.z, a.w ^ b.w);
}

// The counter block of global block g as four big-endian words (w[0] the most significant),
// computed in registers: a 128-bit add of (blk_off + g) to the IV, with the carry into the high half.
// Camellia works on these words as they are.
S2_HD void counter_be_words(const KParams& p, u64 g, u32 w[4]) {
  const u64 n = p.blk_off + g;
  const u64 lo = p.iv_lo + n;
  const u64 hi = p.iv_hi + (lo < n ? 1u : 0u);
  w[0] = u32(hi >> 32);
  w[1] = u32(hi);
  w[2] = u32(lo >> 32);
  w[3] = u32(lo);
}

// The same counter block as four little-endian column words (what AES loads from memory).
S2_HD void counter_words(const KParams& p, u64 g, u32 w[4]) {
  u32 be[4];
  counter_be_words(p, g, be);
  w[0] = bswap32(be[0]);
  w[1] = bswap32(be[1]);
  w[2] = bswap32(be[2]);
  w[3] = bswap32(be[3]);
}

// The coarse-grain loop (seeds 000 and 002, AES and Camellia): a persistent grid whose threads go
// back for the next block -- block g is handled by thread g mod (grid size); block(g) returns its
// result. Keystream: each thread XOR-folds its keystream blocks into out[its id].
template <typename Block>
S2_HD void coarse_loop(const KParams& p, u32 tid, u32 bid, u32 nthr, u32 ngrid, bool ks, Block&& block) {
  const u64 gtid = u64(bid) * nthr + tid;
  const u64 stride = u64(ngrid) * nthr;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (u64 g = gtid; g < p.nblocks; g += stride) {
    const uint4 o = block(g);
    if (ks)
      acc = xor4(acc, o);
    else
      st_stream(p.out + g, o);
  }
  if (ks) p.out[gtid] = acc;
}

// Column that supplies row r of output column j: j+r for encryption (ShiftRows), j-r for
// decryption (InvShiftRows).
template <bool DEC>
S2_HD constexpr int src_col(int j, int r) {
  return DEC ? (j - r + 4) & 3 : (j + r) & 3;
}

// Base tables (little-endian words), the content the fills replicate:
//   base[0..255]   T0 for encryption (Te0 byte-swapped)
//   base[256..511] T0 for decryption (Td0 byte-swapped)
//   base[512..767] inverse S-box, value in the low byte
//   base[768..1791] Camellia's SP-tables (cam_kernels.cuh)
constexpr int kAesBaseWords = 768;
constexpr int kBaseWords = kAesBaseWords + 1024;

// ------------------------------------------------------------------------------------------------
// Kernel family 1 and 2: the seeds' T-tables in shared memory (4 x 256 words, one copy).
// Shared layout (words): [0,1024) T0..T3 of the direction; [1024,1280) inverse S-box (decryption);
// then the round keys (60 words), which the seeds also keep in shared memory.
// ------------------------------------------------------------------------------------------------

constexpr int kSeedTableWords = 1024 + 256 + 60;

template <bool DEC>
S2_HD void seed_fill(const u32* base, const KParams& p, u32* sm, u32 tid, u32 nthr) {
  const u32* t0 = base + (DEC ? 256 : 0);
  for (u32 i = tid; i < 1024; i += nthr) sm[i] = rotl32(t0[i & 255], 8 * int(i >> 8));
  if (DEC)
    for (u32 i = tid; i < 256; i += nthr) sm[1024 + i] = base[512 + i];
  for (u32 i = tid; i < 60; i += nthr) sm[1280 + i] = p.rk[i];
}

// One block through the cipher with the 4 plain tables. s: the state after the first AddRoundKey.
template <int NR, bool DEC>
S2_HD void seed_rounds(const u32* sm, u32 s[4]) {
  const u32* T = sm;
  const u32* rk = sm + 1280;
#pragma unroll
  for (int r = 1; r < NR; ++r) {
    u32 t[4];
#pragma unroll
    for (int j = 0; j < 4; ++j)
      t[j] = T[byte_of(s[j], 0)] ^ T[256 + byte_of(s[src_col<DEC>(j, 1)], 1)] ^
             T[512 + byte_of(s[src_col<DEC>(j, 2)], 2)] ^
             T[768 + byte_of(s[src_col<DEC>(j, 3)], 3)] ^ rk[4 * r + j];
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j] = t[j];
  }
  u32 o[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    if (DEC) {
      const u32* I = sm + 1024;
      o[j] = I[byte_of(s[j], 0)] | (I[byte_of(s[src_col<DEC>(j, 1)], 1)] << 8) |
             (I[byte_of(s[src_col<DEC>(j, 2)], 2)] << 16) |
             (I[byte_of(s[src_col<DEC>(j, 3)], 3)] << 24);
    } else {
      // The table whose byte r holds 1*S[x]: T3 for row 0, T0 for row 1, T1 for row 2, T2 for row 3.
      o[j] = (T[768 + byte_of(s[j], 0)] & 0x000000ffu) ^
             (T[byte_of(s[src_col<DEC>(j, 1)], 1)] & 0x0000ff00u) ^
             (T[256 + byte_of(s[src_col<DEC>(j, 2)], 2)] & 0x00ff0000u) ^
             (T[512 + byte_of(s[src_col<DEC>(j, 3)], 3)] & 0xff000000u);
    }
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) s[j] = o[j] ^ rk[4 * NR + j];
}

// Encrypt/decrypt global block g with the seed tables; returns the output block (for Keystream,
// the keystream block).
template <int NR, bool DEC>
S2_HD uint4 seed_block(const KParams& p, const u32* sm, u64 g) {
  const u32* rk = sm + 1280;
  u32 s[4];
  if (!DEC && p.op != Op::EcbEnc) {
    counter_words(p, g, s);
  } else {
    const uint4 v = ld_stream(p.in + g);
    s[0] = v.x; s[1] = v.y; s[2] = v.z; s[3] = v.w;
  }
#pragma unroll
  for (int j = 0; j < 4; ++j) s[j] ^= rk[j];
  seed_rounds<NR, DEC>(sm, s);
  uint4 o = make_uint4(s[0], s[1], s[2], s[3]);
  if (!DEC && p.op == Op::Ctr) o = xor4(o, ld_stream(p.in + g));
  return o;
}

// Coarse grain (seeds 000 and 002): 16 bytes per thread at a time; a persistent grid whose threads
// go back for the next block (seed 002 §5.4.1) -- block g is handled by thread g mod (grid size).
template <int NR, bool DEC>
S2_HD void coarse_body(const KParams& p, const u32* sm, u32 tid, u32 bid, u32 nthr, u32 ngrid) {
  coarse_loop(p, tid, bid, nthr, ngrid, !DEC && p.op == Op::Keystream,
              [&](u64 g) { return seed_block<NR, DEC>(p, sm, g); });
}

// Extended blocks (seed 000 §5): thread t encrypts the E consecutive blocks [tE, tE+E) one after
// the other (an extended block of E x 16 bytes).
template <int NR, bool DEC>
S2_HD void extended_body(const KParams& p, const u32* sm, u32 tid, u32 bid, u32 nthr, u32) {
  const u64 gtid = u64(bid) * nthr + tid;
  const u64 first = gtid * p.ext_blocks;
  u64 last = first + p.ext_blocks;
  if (last > p.nblocks) last = p.nblocks;
  const bool ks = !DEC && p.op == Op::Keystream;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (u64 g = first; g < last; ++g) {
    const uint4 o = seed_block<NR, DEC>(p, sm, g);
    if (ks)
      acc = xor4(acc, o);
    else
      p.out[g] = o;
  }
  if (ks) p.out[gtid] = acc;
}

// ------------------------------------------------------------------------------------------------
// Kernel family 3: the optimised kernel.
//   * Replicated tables, bank-conflict free: entry x of a table is stored 32 times, at word
//     x*32 + lane, so lane L always reads bank L whatever x is (32 KB per table).
//     TBL = 1: T0 only, T1..T3 by rotation (3 rotations per column);
//     TBL = 2: T0 and T2; T1/T3 by one rotation of (T0[b] ^ T2[d]) (1 rotation per column);
//     TBL = 4: T0..T3 (no rotations, 128 KB, one CTA per SM).
//     Decryption adds one replicated inverse S-box (value in the low byte).
//   * The byte-offset of a lookup is ((w >> (8r-7)) & 0x7f80) | lane*4: two integer operations,
//     the table's base is the LDS immediate.
//   * BPT independent blocks per thread (instruction-level parallelism), coalesced: in a tile of
//     blockDim*BPT blocks, thread t takes blocks t, t+blockDim, ..., so a warp reads 512
//     contiguous bytes per uint4 load.
//   * The CTR counter is computed in registers from the block index (no counter array in memory).
//   * Round keys come from the kernel parameters (constant bank), fully unrolled rounds.
// ------------------------------------------------------------------------------------------------

constexpr u32 kRepWords = 256 * 32;      // one replicated table, in words
constexpr u32 kRepBytes = kRepWords * 4; // 32 KB

template <int TBL, bool DEC>
constexpr u32 opt_smem_bytes() {
  return (TBL + (DEC ? 1 : 0)) * kRepBytes;
}

template <int TBL, bool DEC>
S2_HD void opt_fill(const u32* base, u32* sm, u32 tid, u32 nthr) {
  const u32* t0 = base + (DEC ? 256 : 0);
  constexpr u32 total = (TBL + (DEC ? 1 : 0)) * kRepWords;
  for (u32 i = tid; i < total; i += nthr) {
    const u32 t = i / kRepWords;  // which table
    const u32 x = (i / 32) & 255; // which entry (lanes of a warp share x: broadcast reads)
    u32 v;
    if (t == TBL)
      v = base[512 + x];  // decryption: the inverse S-box
    else
      v = rotl32(t0[x], int(8 * (TBL == 2 ? 2 * t : t)));  // TBL=2 stores T0 and T2
    sm[i] = v;
  }
}

// Byte offset (inside one replicated table) of entry byte r of w, for this lane.
S2_HD u32 rep_off(u32 w, int r, u32 lane4) {
  const u32 sh = r == 0 ? (w << 7) : (w >> (8 * r - 7));
  return (sh & 0x7f80u) | lane4;
}

S2_HD u32 rep_ld(const u32* sm, u32 table, u32 off) {
  return *reinterpret_cast<const u32*>(reinterpret_cast<const char*>(sm) + table * kRepBytes + off);
}

// One full round (SubBytes, ShiftRows, MixColumns, AddRoundKey) for output column j.
template <int TBL, bool DEC>
S2_HD u32 opt_column(const u32* sm, const u32 s[4], int j, u32 lane4, u32 k) {
  const u32 a = s[j];
  const u32 b = s[src_col<DEC>(j, 1)];
  const u32 c = s[src_col<DEC>(j, 2)];
  const u32 d = s[src_col<DEC>(j, 3)];
  if (TBL == 4) {
    return rep_ld(sm, 0, rep_off(a, 0, lane4)) ^ rep_ld(sm, 1, rep_off(b, 1, lane4)) ^
           rep_ld(sm, 2, rep_off(c, 2, lane4)) ^ rep_ld(sm, 3, rep_off(d, 3, lane4)) ^ k;
  } else if (TBL == 2) {
    // T1[x] = rotl(T0[x], 8) and T3[x] = rotl(T2[x], 8): one rotation for both.
    const u32 bd = rep_ld(sm, 0, rep_off(b, 1, lane4)) ^ rep_ld(sm, 1, rep_off(d, 3, lane4));
    return rep_ld(sm, 0, rep_off(a, 0, lane4)) ^ rep_ld(sm, 1, rep_off(c, 2, lane4)) ^
           rotl32(bd, 8) ^ k;
  } else {
    return rep_ld(sm, 0, rep_off(a, 0, lane4)) ^ rotl32(rep_ld(sm, 0, rep_off(b, 1, lane4)), 8) ^
           rotl32(rep_ld(sm, 0, rep_off(c, 2, lane4)), 16) ^
           rotl32(rep_ld(sm, 0, rep_off(d, 3, lane4)), 24) ^ k;
  }
}

// Final round (no MixColumns) for output column j: S-box bytes gathered with byte permutes.
// Encryption reads T0, whose byte 1 is S[x]; decryption reads the inverse S-box table (byte 0).
template <int TBL, bool DEC>
S2_HD u32 opt_last(const u32* sm, const u32 s[4], int j, u32 lane4, u32 k) {
  const u32 tab = DEC ? TBL : 0;
  const u32 v0 = rep_ld(sm, tab, rep_off(s[j], 0, lane4));
  const u32 v1 = rep_ld(sm, tab, rep_off(s[src_col<DEC>(j, 1)], 1, lane4));
  const u32 v2 = rep_ld(sm, tab, rep_off(s[src_col<DEC>(j, 2)], 2, lane4));
  const u32 v3 = rep_ld(sm, tab, rep_off(s[src_col<DEC>(j, 3)], 3, lane4));
  constexpr u32 p = DEC ? 0 : 1;  // byte position of the S-box value
  const u32 lo = prmt(v0, v1, p | ((4 + p) << 4));           // bytes 0,1
  const u32 hi = prmt(v2, v3, (p << 8) | ((4 + p) << 12));   // bytes 2,3
  return prmt(lo, hi, 0x7610) ^ k;
}

template <int NR, bool DEC, int TBL, int BPT>
S2_HD void opt_body(const KParams& p, const u32* sm, u32 tid, u32 bid, u32 nthr, u32 ngrid) {
  const bool ks = !DEC && p.op == Op::Keystream;
  const bool ctr = !DEC && p.op == Op::Ctr;
  const u32 lane4 = (tid & 31u) * 4u;
  const u64 tile_blocks = u64(nthr) * BPT;
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (u64 tile = bid; tile * tile_blocks < p.nblocks; tile += ngrid) {
    const u64 g0 = tile * tile_blocks + tid;
    u32 s[BPT][4];
#pragma unroll
    for (int b = 0; b < BPT; ++b) {
      const u64 g = g0 + u64(b) * nthr;
      if (ks || ctr) {
        counter_words(p, g, s[b]);
      } else {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (g < p.nblocks) v = ld_stream(p.in + g);
        s[b][0] = v.x; s[b][1] = v.y; s[b][2] = v.z; s[b][3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) s[b][j] ^= p.rk[j];
    }
#pragma unroll
    for (int r = 1; r < NR; ++r) {
#pragma unroll
      for (int b = 0; b < BPT; ++b) {
        u32 t[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) t[j] = opt_column<TBL, DEC>(sm, s[b], j, lane4, p.rk[4 * r + j]);
#pragma unroll
        for (int j = 0; j < 4; ++j) s[b][j] = t[j];
      }
    }
#pragma unroll
    for (int b = 0; b < BPT; ++b) {
      u32 t[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) t[j] = opt_last<TBL, DEC>(sm, s[b], j, lane4, p.rk[4 * NR + j]);
      uint4 o = make_uint4(t[0], t[1], t[2], t[3]);
      const u64 g = g0 + u64(b) * nthr;
      if (g < p.nblocks) {
        if (ks) {
          acc = xor4(acc, o);
        } else {
          if (ctr) o = xor4(o, ld_stream(p.in + g));
          st_stream(p.out + g, o);
        }
      }
    }
  }
  if (ks) p.out[u64(bid) * nthr + tid] = acc;
}

}  // namespace gpu
}  // namespace s2mc

#endif  // S2MC_GPU_KERNELS_CUH
