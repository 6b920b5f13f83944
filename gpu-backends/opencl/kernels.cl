// kernels.cl -- the portable AES and Camellia kernels of s2mc's OpenCL backend: one
// OpenCL C 1.2 source for NVIDIA, AMD, Intel GPUs and CPUs (PoCL). The host (driver.cpp) builds it
// once per device and process; the source is embedded into the module at build time.
//
// Every kernel has the same arguments:
//   in, out       the segment's bytes in two device buffers
//   nbytes        the segment's length (ECB: a multiple of 16; CTR: any length, the tail is cut)
//   ctr_hi/lo     CTR: the segment's first counter block, the 128-bit big-endian counter of
//                 NIST SP 800-38A as two 64-bit halves; block i uses (ctr_hi:ctr_lo) + i mod 2^128
//   tables        the cipher's tables (AES: Te or Td and the inverse S-box; Camellia: SP-tables)
//   keys          the round keys (AES: 32-bit words; Camellia: 64-bit subkeys)
//   rounds        AES: Nr (10/12/14); Camellia: 18 or 24
// Tables and keys are copied into __local memory by each work-group (seed 002's shared-memory
// tables; the CUDA backend's coarse kernel); each work-item then goes round a grid-stride loop, so
// that a work-group fills its tables once for many blocks. A work-item takes two adjacent 16-byte
// blocks per turn (blocks 2j and 2j+1), and the encryptions interleave their
// rounds: two independent chains of table lookups (ILP, like the CUDA optimised kernel's blocks per
// thread); on PoCL, CTR on 16 MiB, this measured 1.2x faster for AES and 1.5x for Camellia than one
// block per turn (three A/B alternations on the shared host). ECB decryption does its two in turn.
// With S2MC_GLOBAL_TABLES=1 (the host sets it for CPU devices) the kernels read the tables from
// __global memory instead: on a CPU __local is ordinary cached memory, so the copy and the barrier
// only cost (about 30 % under PoCL), and without a barrier PoCL need not split the work-item loop.
//
// Words are big-endian (byte 0 in bits 31..24), as in workloads/cipher_host/include/s2mc_cipher/
// key_schedule.h, whose tables the host uploads unchanged: bytes are assembled one by one, so the
// kernels do not depend on the device's byte order.

#define AES_TABLE_WORDS 1024    // four 256-word T-tables
#define AES_INV_SBOX_WORDS 64   // the inverse S-box, 256 bytes packed big-endian into words
#define AES_MAX_RK 60           // 4 * (14 + 1)
#define CAM_TABLE_WORDS 1024    // SP1110, SP0222, SP3033, SP4404
#define CAM_MAX_SK 34           // kw1, kw2, k1..k24, ke1..ke6, kw3, kw4

#ifndef S2MC_GLOBAL_TABLES
#define S2MC_GLOBAL_TABLES 0
#endif
#if S2MC_GLOBAL_TABLES
#define TSPACE __global     // the tables and AES round keys
#define SKSPACE __private   // Camellia's 64-bit subkeys, assembled per work-item
#else
#define TSPACE __local
#define SKSPACE __local
#endif

inline uint be32(const uchar16 v, const int i) {
  switch (i) {  // unrolled by the compiler: i is a constant at every call
    case 0: return ((uint)v.s0 << 24) | ((uint)v.s1 << 16) | ((uint)v.s2 << 8) | (uint)v.s3;
    case 1: return ((uint)v.s4 << 24) | ((uint)v.s5 << 16) | ((uint)v.s6 << 8) | (uint)v.s7;
    case 2: return ((uint)v.s8 << 24) | ((uint)v.s9 << 16) | ((uint)v.sa << 8) | (uint)v.sb;
    default: return ((uint)v.sc << 24) | ((uint)v.sd << 16) | ((uint)v.se << 8) | (uint)v.sf;
  }
}

inline uint4 load_block(__global const uchar* p) {
  const uchar16 v = vload16(0, p);
  return (uint4)(be32(v, 0), be32(v, 1), be32(v, 2), be32(v, 3));
}

inline uchar16 block_bytes(const uint4 s) {
  return (uchar16)((uchar)(s.x >> 24), (uchar)(s.x >> 16), (uchar)(s.x >> 8), (uchar)s.x,
                   (uchar)(s.y >> 24), (uchar)(s.y >> 16), (uchar)(s.y >> 8), (uchar)s.y,
                   (uchar)(s.z >> 24), (uchar)(s.z >> 16), (uchar)(s.z >> 8), (uchar)s.z,
                   (uchar)(s.w >> 24), (uchar)(s.w >> 16), (uchar)(s.w >> 8), (uchar)s.w);
}

// The counter block for block i of the segment: (hi:lo) + i mod 2^128 (SP 800-38A, B.1 with the
// whole block as the counter, as openssl enc -*-ctr does).
inline uint4 counter_block(const ulong hi, const ulong lo, const ulong i) {
  const ulong l = lo + i;
  const ulong h = hi + (l < lo ? 1UL : 0UL);
  return (uint4)((uint)(h >> 32), (uint)h, (uint)(l >> 32), (uint)l);
}

// Output of block i: the whole block, or for a CTR tail only its first `valid` bytes.
inline void store_block(__global uchar* out, const ulong i, const uchar16 v, const ulong nbytes) {
  const ulong at = i * 16;
  if (at + 16 <= nbytes) {
    vstore16(v, 0, out + at);
  } else {
    uchar b[16];
    vstore16(v, 0, b);
    for (ulong j = 0; at + j < nbytes; ++j) out[at + j] = b[j];
  }
}

inline uchar16 load_tail(__global const uchar* in, const ulong i, const ulong nbytes) {
  const ulong at = i * 16;
  if (at + 16 <= nbytes) return vload16(0, in + at);
  uchar b[16];
  for (int j = 0; j < 16; ++j) b[j] = at + j < nbytes ? in[at + j] : 0;
  return vload16(0, b);
}

// Copy n words from global to local memory, the work-group together.
inline void fill_local(__local uint* dst, __global const uint* src, const int n) {
  for (int i = (int)get_local_id(0); i < n; i += (int)get_local_size(0)) dst[i] = src[i];
}

// ---------------------------------------------------------------------------------------------
// AES (FIPS-197), T-table rounds as in key_schedule.h's encrypt_block / decrypt_block.

#define TE(t, x) T[(t) * 256 + (x)]

// Encryption of two blocks at once, their rounds interleaved (two independent dependency chains).
// The last round has no MixColumns: Te2's top byte, Te3's second, Te0's third and Te1's low byte are
// S[x].
#define AES_LAST(s, j0, j1, j2, j3, kk)                                                         \
  ((TE(2, s.j0 >> 24) & 0xff000000u) ^ (TE(3, (s.j1 >> 16) & 255) & 0x00ff0000u) ^            \
   (TE(0, (s.j2 >> 8) & 255) & 0x0000ff00u) ^ (TE(1, s.j3 & 255) & 0x000000ffu) ^ (kk))
#define AES_COL(s, j0, j1, j2, j3, kk)                                                          \
  (TE(0, s.j0 >> 24) ^ TE(1, (s.j1 >> 16) & 255) ^ TE(2, (s.j2 >> 8) & 255) ^ TE(3, s.j3 & 255) ^ (kk))

inline void aes_encrypt2(uint4* pa, uint4* pb, TSPACE const uint* T, TSPACE const uint* rk, const int rounds) {
  const uint4 k0 = (uint4)(rk[0], rk[1], rk[2], rk[3]);
  uint4 s = *pa ^ k0, u = *pb ^ k0;
  for (int r = 1; r < rounds; ++r) {
    TSPACE const uint* k = rk + 4 * r;
    const uint t0 = AES_COL(s, x, y, z, w, k[0]), v0 = AES_COL(u, x, y, z, w, k[0]);
    const uint t1 = AES_COL(s, y, z, w, x, k[1]), v1 = AES_COL(u, y, z, w, x, k[1]);
    const uint t2 = AES_COL(s, z, w, x, y, k[2]), v2 = AES_COL(u, z, w, x, y, k[2]);
    const uint t3 = AES_COL(s, w, x, y, z, k[3]), v3 = AES_COL(u, w, x, y, z, k[3]);
    s = (uint4)(t0, t1, t2, t3);
    u = (uint4)(v0, v1, v2, v3);
  }
  TSPACE const uint* k = rk + 4 * rounds;
  *pa = (uint4)(AES_LAST(s, x, y, z, w, k[0]), AES_LAST(s, y, z, w, x, k[1]), AES_LAST(s, z, w, x, y, k[2]),
                AES_LAST(s, w, x, y, z, k[3]));
  *pb = (uint4)(AES_LAST(u, x, y, z, w, k[0]), AES_LAST(u, y, z, w, x, k[1]), AES_LAST(u, z, w, x, y, k[2]),
                AES_LAST(u, w, x, y, z, k[3]));
}

// The inverse S-box byte x, packed 4 to a word (byte 0 in bits 31..24).
#define INV_S(x) ((T[AES_TABLE_WORDS + ((x) >> 2)] >> (24 - 8 * ((x) & 3))) & 255u)

inline uint4 aes_decrypt(uint4 s, TSPACE const uint* T, TSPACE const uint* rk, const int rounds) {
  s ^= (uint4)(rk[0], rk[1], rk[2], rk[3]);
  for (int r = 1; r < rounds; ++r) {
    TSPACE const uint* k = rk + 4 * r;
    const uint t0 = TE(0, s.x >> 24) ^ TE(1, (s.w >> 16) & 255) ^ TE(2, (s.z >> 8) & 255) ^ TE(3, s.y & 255) ^ k[0];
    const uint t1 = TE(0, s.y >> 24) ^ TE(1, (s.x >> 16) & 255) ^ TE(2, (s.w >> 8) & 255) ^ TE(3, s.z & 255) ^ k[1];
    const uint t2 = TE(0, s.z >> 24) ^ TE(1, (s.y >> 16) & 255) ^ TE(2, (s.x >> 8) & 255) ^ TE(3, s.w & 255) ^ k[2];
    const uint t3 = TE(0, s.w >> 24) ^ TE(1, (s.z >> 16) & 255) ^ TE(2, (s.y >> 8) & 255) ^ TE(3, s.x & 255) ^ k[3];
    s = (uint4)(t0, t1, t2, t3);
  }
  TSPACE const uint* k = rk + 4 * rounds;
  return (uint4)(
      (INV_S(s.x >> 24) << 24) ^ (INV_S((s.w >> 16) & 255) << 16) ^ (INV_S((s.z >> 8) & 255) << 8) ^ INV_S(s.y & 255) ^ k[0],
      (INV_S(s.y >> 24) << 24) ^ (INV_S((s.x >> 16) & 255) << 16) ^ (INV_S((s.w >> 8) & 255) << 8) ^ INV_S(s.z & 255) ^ k[1],
      (INV_S(s.z >> 24) << 24) ^ (INV_S((s.y >> 16) & 255) << 16) ^ (INV_S((s.x >> 8) & 255) << 8) ^ INV_S(s.w & 255) ^ k[2],
      (INV_S(s.w >> 24) << 24) ^ (INV_S((s.z >> 16) & 255) << 16) ^ (INV_S((s.y >> 8) & 255) << 8) ^ INV_S(s.x & 255) ^ k[3]);
}

#if S2MC_GLOBAL_TABLES
#define AES_PROLOGUE(table_words)                                           \
  __global const uint* T = tables;                                          \
  __global const uint* rk = keys;                                           \
  const ulong nblocks = (nbytes + 15) / 16;
#else
#define AES_PROLOGUE(table_words)                                           \
  __local uint T[AES_TABLE_WORDS + AES_INV_SBOX_WORDS];                     \
  __local uint rk[AES_MAX_RK];                                              \
  fill_local(T, tables, table_words);                                      \
  fill_local(rk, keys, 4 * (rounds + 1));                                  \
  barrier(CLK_LOCAL_MEM_FENCE);                                            \
  const ulong nblocks = (nbytes + 15) / 16;
#endif

// Blocks 2j and 2j+1 per turn of work-item j's grid-stride loop.
#define FOR_PAIRS(i) for (ulong i = 2 * get_global_id(0); i < nblocks; i += 2 * get_global_size(0))
// The two loops of the AES and Camellia kernels: CRYPT2 is a call that encrypts (or decrypts) the
// blocks a and b in place. ECB: blocks i and i+1 of the input (a zero block past the end); CTR: the
// counter blocks i and i+1, XORed with the input, a partial last block cut to length.
#define ECB_PAIRS(CRYPT2)                                                                            \
  FOR_PAIRS(i) {                                                                                     \
    const bool two = i + 1 < nblocks;                                                                \
    uint4 a = load_block(in + 16 * i), b = two ? load_block(in + 16 * (i + 1)) : (uint4)(0);         \
    CRYPT2;                                                                                          \
    vstore16(block_bytes(a), 0, out + 16 * i);                                                       \
    if (two) vstore16(block_bytes(b), 0, out + 16 * (i + 1));                                        \
  }
#define CTR_PAIRS(CRYPT2)                                                                            \
  FOR_PAIRS(i) {                                                                                     \
    uint4 a = counter_block(ctr_hi, ctr_lo, i), b = counter_block(ctr_hi, ctr_lo, i + 1);            \
    CRYPT2;                                                                                          \
    store_block(out, i, load_tail(in, i, nbytes) ^ block_bytes(a), nbytes);                          \
    if (i + 1 < nblocks) store_block(out, i + 1, load_tail(in, i + 1, nbytes) ^ block_bytes(b), nbytes); \
  }

__kernel void aes_ecb_enc(__global const uchar* in, __global uchar* out, const ulong nbytes,
                          const ulong ctr_hi, const ulong ctr_lo, __global const uint* tables,
                          __global const uint* keys, const int rounds) {
  AES_PROLOGUE(AES_TABLE_WORDS)
  ECB_PAIRS(aes_encrypt2(&a, &b, T, rk, rounds))
}

__kernel void aes_ecb_dec(__global const uchar* in, __global uchar* out, const ulong nbytes,
                          const ulong ctr_hi, const ulong ctr_lo, __global const uint* tables,
                          __global const uint* keys, const int rounds) {
  AES_PROLOGUE(AES_TABLE_WORDS + AES_INV_SBOX_WORDS)
  FOR_PAIRS(i) {  // one block after the other (decryption has no interleaved form here)
    vstore16(block_bytes(aes_decrypt(load_block(in + 16 * i), T, rk, rounds)), 0, out + 16 * i);
    if (i + 1 < nblocks)
      vstore16(block_bytes(aes_decrypt(load_block(in + 16 * (i + 1)), T, rk, rounds)), 0, out + 16 * (i + 1));
  }
}

__kernel void aes_ctr(__global const uchar* in, __global uchar* out, const ulong nbytes,
                      const ulong ctr_hi, const ulong ctr_lo, __global const uint* tables,
                      __global const uint* keys, const int rounds) {
  AES_PROLOGUE(AES_TABLE_WORDS)
  CTR_PAIRS(aes_encrypt2(&a, &b, T, rk, rounds))
}

// ---------------------------------------------------------------------------------------------
// Camellia (RFC 3713), with SP-tables: SP1110[x] = (s1, s1, s1, 0), SP0222[x] = (0, s2, s2, s2),
// SP3033[x] = (s3, 0, s3, s3), SP4404[x] = (s4, s4, 0, s4) (bytes of a big-endian word).
//
// The F-function's P-layer from the SP-tables: with t1..t8 the input bytes, every y_i of
// RFC 3713 section 2.4.3 is an XOR of S-box outputs, and byte by byte
//   A  = SP1110[t1] ^ SP0222[t2] ^ SP3033[t3] ^ SP4404[t4]   (the left word's share of t1..t4)
//   B  = SP0222[t5] ^ SP3033[t6] ^ SP4404[t7] ^ SP1110[t8]   (t5..t8: the same pattern in both words)
//   (y1..y4) = A ^ B,   (y5..y8) = A ^ B ^ rotr(A, 8)
// because each of t1..t4 lands in the right word on the bytes of its left pattern XOR that
// pattern turned right by one byte (t1: 1110 ^ 0111 = 1001, t2: 0111 ^ 1011 = 1100, ...).

inline ulong cam_f(const ulong x, const ulong k, TSPACE const uint* SP) {
  const ulong d = x ^ k;
  const uint l = (uint)(d >> 32), r = (uint)d;
  const uint a = SP[l >> 24] ^ SP[256 + ((l >> 16) & 255)] ^ SP[512 + ((l >> 8) & 255)] ^ SP[768 + (l & 255)];
  const uint b = SP[256 + (r >> 24)] ^ SP[512 + ((r >> 16) & 255)] ^ SP[768 + ((r >> 8) & 255)] ^ SP[r & 255];
  const uint yl = a ^ b;
  return ((ulong)yl << 32) | (ulong)(yl ^ rotate(a, 24u));  // rotate left 24 = right 8
}

// FL and FL^-1 (RFC 3713 section 2.4.2).
inline ulong cam_fl(const ulong x, const ulong k) {
  uint x1 = (uint)(x >> 32), x2 = (uint)x;
  const uint k1 = (uint)(k >> 32), k2 = (uint)k;
  x2 ^= rotate(x1 & k1, 1u);
  x1 ^= x2 | k2;
  return ((ulong)x1 << 32) | x2;
}

inline ulong cam_flinv(const ulong y, const ulong k) {
  uint y1 = (uint)(y >> 32), y2 = (uint)y;
  const uint k1 = (uint)(k >> 32), k2 = (uint)k;
  y1 ^= y2 | k2;
  y2 ^= rotate(y1 & k1, 1u);
  return ((ulong)y1 << 32) | y2;
}

// Two blocks at once, their rounds interleaved. sk: kw1, kw2, k1..k_rounds, ke1..ke_(2*(rounds/6-1)),
// kw3, kw4 (decryption: the same layout with the decryption subkeys of RFC 3713 section 2.3.3, made
// by the host). Six rounds, then FL/FL^-1, and so on.
inline void cam_crypt2(uint4* pa, uint4* pb, TSPACE const uint* SP, SKSPACE const ulong* sk, const int rounds) {
  ulong a1 = ((ulong)pa->x << 32 | pa->y) ^ sk[0], a2 = ((ulong)pa->z << 32 | pa->w) ^ sk[1];
  ulong b1 = ((ulong)pb->x << 32 | pb->y) ^ sk[0], b2 = ((ulong)pb->z << 32 | pb->w) ^ sk[1];
  SKSPACE const ulong* k = sk + 2;
  SKSPACE const ulong* ke = sk + 2 + rounds;
  for (int r = 0; r < rounds; r += 6) {
    if (r) {
      a1 = cam_fl(a1, ke[0]);
      b1 = cam_fl(b1, ke[0]);
      a2 = cam_flinv(a2, ke[1]);
      b2 = cam_flinv(b2, ke[1]);
      ke += 2;
    }
    for (int j = 0; j < 6; j += 2) {
      a2 ^= cam_f(a1, k[r + j], SP);
      b2 ^= cam_f(b1, k[r + j], SP);
      a1 ^= cam_f(a2, k[r + j + 1], SP);
      b1 ^= cam_f(b2, k[r + j + 1], SP);
    }
  }
  a2 ^= ke[0];
  b2 ^= ke[0];
  a1 ^= ke[1];
  b1 ^= ke[1];
  *pa = (uint4)((uint)(a2 >> 32), (uint)a2, (uint)(a1 >> 32), (uint)a1);
  *pb = (uint4)((uint)(b2 >> 32), (uint)b2, (uint)(b1 >> 32), (uint)b1);
}

#if S2MC_GLOBAL_TABLES
#define CAM_PROLOGUE                                                        \
  __global const uint* SP = tables;                                         \
  ulong sk[CAM_MAX_SK];                                                     \
  const int nsk = 2 + rounds + 2 * (rounds / 6 - 1) + 2;                    \
  for (int i = 0; i < nsk; ++i)                                             \
    sk[i] = ((ulong)keys[2 * i] << 32) | keys[2 * i + 1];                   \
  const ulong nblocks = (nbytes + 15) / 16;
#else
#define CAM_PROLOGUE                                                        \
  __local uint SP[CAM_TABLE_WORDS];                                         \
  __local ulong sk[CAM_MAX_SK];                                             \
  fill_local(SP, tables, CAM_TABLE_WORDS);                                  \
  const int nsk = 2 + rounds + 2 * (rounds / 6 - 1) + 2;                    \
  for (int i = (int)get_local_id(0); i < nsk; i += (int)get_local_size(0))  \
    sk[i] = ((ulong)keys[2 * i] << 32) | keys[2 * i + 1];                   \
  barrier(CLK_LOCAL_MEM_FENCE);                                            \
  const ulong nblocks = (nbytes + 15) / 16;
#endif

// ECB encryption and decryption alike (the host gives the decryption subkeys for decryption).
__kernel void camellia_ecb(__global const uchar* in, __global uchar* out, const ulong nbytes,
                           const ulong ctr_hi, const ulong ctr_lo, __global const uint* tables,
                           __global const uint* keys, const int rounds) {
  CAM_PROLOGUE
  ECB_PAIRS(cam_crypt2(&a, &b, SP, sk, rounds))
}

__kernel void camellia_ctr(__global const uchar* in, __global uchar* out, const ulong nbytes,
                           const ulong ctr_hi, const ulong ctr_lo, __global const uint* tables,
                           __global const uint* keys, const int rounds) {
  CAM_PROLOGUE
  CTR_PAIRS(cam_crypt2(&a, &b, SP, sk, rounds))
}
