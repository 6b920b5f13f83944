// cam_kernels.cuh -- the CUDA Camellia kernel, written once as __host__ __device__ code
// like the AES kernels (kernels.cuh): a *fill* that copies the tables and subkeys into shared
// memory and a *body* that one thread runs, so the CPU emulator runs the very same code.
//
// Seed 002's design (§5, Table 2): the four SP-tables and the extended key in shared memory, 16
// bytes (one block) per thread, a persistent grid whose threads go back for the next block.
//
// Camellia is big-endian throughout (RFC 3713): the state is D1 = (d0, d1), D2 = (d2, d3) as
// big-endian 32-bit words, so a block is one uint4 load followed by four byte swaps.
//
// The F-function with SP-tables (derived from RFC 3713 §2.4.3-2.4.4; the tables merge the S-function
// with the P-function). With x = F_IN ^ k split into bytes b1..b8 (b1 the most significant),
//     D = SP1110[b1] ^ SP0222[b2] ^ SP3033[b3] ^ SP4404[b4]
//     U = SP1110[b8] ^ SP0222[b5] ^ SP3033[b6] ^ SP4404[b7]
//     y_hi = D ^ U,   y_lo = y_hi ^ rotr(D, 8)
// where SPabcd[x] holds SBOXa..d[x] in bytes y1..y4 (digit 0: zero byte), e.g.
// SP1110[x] = s1 s1 s1 00 and SP3033[x] = s3 00 s3 s3 with s1 = SBOX1[x], s3 = SBOX3[x].
// Proof sketch: in P, byte t5 (right half) reaches y2,y3,y4 and y6,y7,y8 -- the same pattern 0111
// in both halves -- and likewise t6..t8; left-half byte t1 reaches 1110 on the left and
// 1001 = 1110 ^ 0111 = pattern ^ rotr(pattern, 8) on the right, and likewise t2..t4.
#ifndef S2MC_GPU_CAM_KERNELS_CUH
#define S2MC_GPU_CAM_KERNELS_CUH

#include "kernels.cuh"

namespace s2mc {
namespace gpu {

// Base tables (KParams::base) hold the four SP-tables after the AES ones.
constexpr int kCamBaseOffset = kAesBaseWords;
constexpr int kCamSubkeyWords = 68;  // 24-round schedule: kw1..4, k1..24, ke1..6 = 34 x 64 bits

// Shared layout (words): [0,1024) SP1110, SP0222, SP3033, SP4404; then the subkeys in the order
// the rounds use them (see cam_subkey_order in driver.cu): kw(pre) 2, k1..k6, ke 2, k7..k12, ke 2,
// k13..k18, [ke 2, k19..k24], kw(post) 2, each 64-bit subkey as (hi, lo) words. Decryption is the
// same walk with the decryption order (RFC 3713 §2.3.3), so one kernel does both directions.
constexpr int kCamSmemWords = 1024 + kCamSubkeyWords;

S2_HD void cam_fill(const u32* base, const KParams& p, u32* sm, u32 tid, u32 nthr) {
  for (u32 i = tid; i < 1024; i += nthr) sm[i] = base[kCamBaseOffset + i];
  for (u32 i = tid; i < u32(kCamSubkeyWords); i += nthr) sm[1024 + i] = p.rk[i];
}

// F(x, k) with the SP-tables (see the header comment): y = (yh, yl) for x = (xh, xl), k = k[0..1].
S2_HD void cam_f(const u32* sp, u32 xh, u32 xl, const u32* k, u32& yh, u32& yl) {
  const u32 a = xh ^ k[0];
  const u32 b = xl ^ k[1];
  const u32 d = sp[a >> 24] ^ sp[256 + ((a >> 16) & 0xffu)] ^ sp[512 + ((a >> 8) & 0xffu)] ^
                sp[768 + (a & 0xffu)];
  const u32 u = sp[b & 0xffu] ^ sp[256 + (b >> 24)] ^ sp[512 + ((b >> 16) & 0xffu)] ^
                sp[768 + ((b >> 8) & 0xffu)];
  yh = d ^ u;
  yl = yh ^ rotl32(d, 24);  // rotr(d, 8)
}

// FL and FL^-1 (RFC 3713 §2.4.2, §2.4.3) on one 64-bit half (h, l) with subkey k[0..1].
S2_HD void cam_fl(u32& h, u32& l, const u32* k) {
  l ^= rotl32(h & k[0], 1);
  h ^= (l | k[1]);
}
S2_HD void cam_flinv(u32& h, u32& l, const u32* k) {
  h ^= (l | k[1]);
  l ^= rotl32(h & k[0], 1);
}

// One block through the cipher: s = (D1 hi, D1 lo, D2 hi, D2 lo) big-endian words; NR = 18 or 24.
template <int NR>
S2_HD void cam_rounds(const u32* sm, u32 s[4]) {
  const u32* sp = sm;
  const u32* k = sm + 1024;
  s[0] ^= k[0]; s[1] ^= k[1]; s[2] ^= k[2]; s[3] ^= k[3];
  k += 4;
#pragma unroll
  for (int g = 0; g < NR / 6; ++g) {
    if (g > 0) {  // FL / FL^-1 between groups of six rounds
      cam_fl(s[0], s[1], k);
      cam_flinv(s[2], s[3], k + 2);
      k += 4;
    }
#pragma unroll
    for (int r = 0; r < 3; ++r) {  // two Feistel rounds
      u32 yh, yl;
      cam_f(sp, s[0], s[1], k, yh, yl);
      s[2] ^= yh; s[3] ^= yl;
      cam_f(sp, s[2], s[3], k + 2, yh, yl);
      s[0] ^= yh; s[1] ^= yl;
      k += 4;
    }
  }
  // Output D2 ^ kw3 || D1 ^ kw4 (the post-whitening pair in its place in the walk).
  const u32 o0 = s[2] ^ k[0], o1 = s[3] ^ k[1], o2 = s[0] ^ k[2], o3 = s[1] ^ k[3];
  s[0] = o0; s[1] = o1; s[2] = o2; s[3] = o3;
}

// Global block g: ECB (either direction: the subkeys decide) or the CTR/keystream block.
template <int NR>
S2_HD uint4 cam_block(const KParams& p, const u32* sm, u64 g) {
  u32 s[4];
  const bool ecb = p.op == Op::EcbEnc || p.op == Op::EcbDec;
  if (ecb) {
    const uint4 v = ld_stream(p.in + g);
    s[0] = bswap32(v.x); s[1] = bswap32(v.y); s[2] = bswap32(v.z); s[3] = bswap32(v.w);
  } else {  // the same 128-bit big-endian counter as AES (iv + blk_off + g), already big-endian
    counter_be_words(p, g, s);
  }
  cam_rounds<NR>(sm, s);
  uint4 o = make_uint4(bswap32(s[0]), bswap32(s[1]), bswap32(s[2]), bswap32(s[3]));
  if (p.op == Op::Ctr) o = xor4(o, ld_stream(p.in + g));
  return o;
}

// Seed 002 §5.4.1: 16 bytes per thread, the AES coarse kernel's persistent grid (coarse_loop).
template <int NR>
S2_HD void cam_coarse_body(const KParams& p, const u32* sm, u32 tid, u32 bid, u32 nthr, u32 ngrid) {
  coarse_loop(p, tid, bid, nthr, ngrid, p.op == Op::Keystream, [&](u64 g) { return cam_block<NR>(p, sm, g); });
}

// ------------------------------------------------------------------------------------------------
// The optimised Camellia kernel: the AES optimised kernel's techniques (kernels.cuh, family 3) on
// seed 002's algorithm. Replicated, bank-conflict-free SP-tables (entry x of table t at word
// t*8192 + x*32 + lane: lane L always reads bank L; 128 KB), several independent blocks per thread
// in coalesced tiles, the CTR counter in registers, the subkeys from the kernel parameters
// (constant bank; every subkey operand is uniform once the rounds are unrolled).
// ------------------------------------------------------------------------------------------------

constexpr u32 kCamOptSmemBytes = 4 * kRepBytes;

S2_HD void cam_opt_fill(const u32* base, u32* sm, u32 tid, u32 nthr) {
  for (u32 i = tid; i < 4 * kRepWords; i += nthr)
    sm[i] = base[kCamBaseOffset + (i / kRepWords) * 256 + ((i / 32) & 255)];
}

// F with the replicated tables: byte r of a word (bits 8r..8r+7) is looked up at rep_off(w, r).
S2_HD void cam_opt_f(const u32* sm, u32 xh, u32 xl, u32 k0, u32 k1, u32 lane4, u32& yh, u32& yl) {
  const u32 a = xh ^ k0;
  const u32 b = xl ^ k1;
  const u32 d = rep_ld(sm, 0, rep_off(a, 3, lane4)) ^ rep_ld(sm, 1, rep_off(a, 2, lane4)) ^
                rep_ld(sm, 2, rep_off(a, 1, lane4)) ^ rep_ld(sm, 3, rep_off(a, 0, lane4));
  const u32 u = rep_ld(sm, 0, rep_off(b, 0, lane4)) ^ rep_ld(sm, 1, rep_off(b, 3, lane4)) ^
                rep_ld(sm, 2, rep_off(b, 2, lane4)) ^ rep_ld(sm, 3, rep_off(b, 1, lane4));
  yh = d ^ u;
  yl = yh ^ rotl32(d, 24);
}

template <int NR, int BPT>
S2_HD void cam_opt_body(const KParams& p, const u32* sm, u32 tid, u32 bid, u32 nthr, u32 ngrid) {
  const bool ks = p.op == Op::Keystream;
  const bool ctr = p.op == Op::Ctr;
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
        counter_be_words(p, g, s[b]);
      } else {
        uint4 v = make_uint4(0, 0, 0, 0);
        if (g < p.nblocks) v = ld_stream(p.in + g);
        s[b][0] = bswap32(v.x); s[b][1] = bswap32(v.y); s[b][2] = bswap32(v.z); s[b][3] = bswap32(v.w);
      }
#pragma unroll
      for (int j = 0; j < 4; ++j) s[b][j] ^= p.rk[j];
    }
    // The subkey walk of cam_rounds, with compile-time indices into p.rk.
#pragma unroll
    for (int grp = 0; grp < NR / 6; ++grp) {
      const int base = 4 + grp * 16;  // pre-whitening 4 words, then 12 round words + 4 FL words per group
      if (grp > 0) {
#pragma unroll
        for (int b = 0; b < BPT; ++b) {
          cam_fl(s[b][0], s[b][1], p.rk + base - 4);
          cam_flinv(s[b][2], s[b][3], p.rk + base - 2);
        }
      }
#pragma unroll
      for (int r = 0; r < 3; ++r) {
        const int k = base + 4 * r;
#pragma unroll
        for (int b = 0; b < BPT; ++b) {
          u32 yh, yl;
          cam_opt_f(sm, s[b][0], s[b][1], p.rk[k], p.rk[k + 1], lane4, yh, yl);
          s[b][2] ^= yh; s[b][3] ^= yl;
          cam_opt_f(sm, s[b][2], s[b][3], p.rk[k + 2], p.rk[k + 3], lane4, yh, yl);
          s[b][0] ^= yh; s[b][1] ^= yl;
        }
      }
    }
    constexpr int post = 4 + (NR / 6) * 16 - 4;  // kw3, kw4
#pragma unroll
    for (int b = 0; b < BPT; ++b) {
      uint4 o = make_uint4(bswap32(s[b][2] ^ p.rk[post]), bswap32(s[b][3] ^ p.rk[post + 1]),
                           bswap32(s[b][0] ^ p.rk[post + 2]), bswap32(s[b][1] ^ p.rk[post + 3]));
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

#endif  // S2MC_GPU_CAM_KERNELS_CUH
