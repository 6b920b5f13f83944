// s2mc_cipher/camellia.h -- header-only, dependency-free Camellia (RFC 3713) core.
//
// Written from RFC 3713, "A Description of the Camellia Encryption Algorithm" (Matsui, Nakajima,
// Moriai, April 2004): §2.2 key scheduling, §2.3 data randomizing, §2.4 the F, FL, FL^-1 functions
// and the S-box SBOX1 of §2.4.4. The SP-table form of F is the 32-bit implementation of the
// Camellia designers' specification (SP1110, SP0222, SP3033, SP4404), built here from SBOX1 at
// compile time. Test vectors: RFC 3713 Appendix A (selftest() below).
//
// Lives in workloads/cipher_host/ beside key_schedule.h because every backend uses it -- the native
// CPU library (workloads/native), the CUDA kernels (gpu-backends/cuda) and, as a reference, the
// OpenCL port -- and none of them may depend on another. The API below is STABLE: add, never
// change or remove.
//
// Conventions
//   * A block is 16 bytes, read as a 128-bit big-endian integer split into two 64-bit halves
//     D1 (bytes 0..7) and D2 (bytes 8..15); load_be64 / store_be64 convert.
//   * expand_key(key, key_bits, &ks) fills a Subkeys (flat, plain-old-data, copyable to a device
//     with one memcpy) and returns the number of rounds, 18 (128-bit keys) or 24 (192/256-bit), or
//     0 for another key_bits (nothing is written then). Layout, RFC names minus one:
//        kw[0..3] = kw1..kw4 (whitening), k[0..23] = k1..k24 (round keys; k[18..23] unused with 18
//        rounds), ke[0..5] = ke1..ke6 (FL/FL^-1 keys; ke[4..5] unused with 18 rounds).
//   * decryption_subkeys(enc, &dec): decryption is the same encrypt_block with the subkeys
//     reordered (RFC 3713 §2.3.3): kw1<->kw3, kw2<->kw4, k_i<->k_{R+1-i}, ke_i<->ke_{N+1-i} with R the
//     rounds and N the FL keys in use (4 for 18 rounds, 6 for 24).
//   * SP tables: one array sp[4*256] of uint32_t, sp[t*256 + x], t = 0: SP1110, 1: SP0222,
//     2: SP3033, 3: SP4404 (bytes, most significant first: SP1110[x] = (s1, s1, s1, 0) with
//     s1 = SBOX1[x]; SP0222 = (0, s2, s2, s2); SP3033 = (s3, 0, s3, s3); SP4404 = (s4, s4, 0, s4)).
//     kSpTables.v is the host copy; build_sp_tables(out) writes the same 4 KB anywhere (CUDA
//     shared memory, a constant buffer, an OpenCL buffer).
//   * Block and round functions take the table pointer as an argument (like key_schedule.h's
//     T-table functions) so that a kernel can pass shared or constant memory; they are plain code
//     (no library calls), inline, and __host__ __device__ under nvcc. The key schedule is host code.
//
// Everything is C++17 with no dependency beyond <cstdint>.
#ifndef S2MC_AES_CAMELLIA_H
#define S2MC_AES_CAMELLIA_H

#include <cstdint>

#if defined(__CUDACC__)
#define S2MC_CAM_HD __host__ __device__
#else
#define S2MC_CAM_HD
#endif

namespace s2mc {
namespace camellia {

constexpr int kBlockBytes = 16;
constexpr int kSpWords = 4 * 256;  // the four SP tables, 4 KB

// RFC 3713 §2.4.4, SBOX1.
inline constexpr uint8_t kSbox1[256] = {
    112, 130, 44,  236, 179, 39,  192, 229, 228, 133, 87,  53,  234, 12,  174, 65,
    35,  239, 107, 147, 69,  25,  165, 33,  237, 14,  79,  78,  29,  101, 146, 189,
    134, 184, 175, 143, 124, 235, 31,  206, 62,  48,  220, 95,  94,  197, 11,  26,
    166, 225, 57,  202, 213, 71,  93,  61,  217, 1,   90,  214, 81,  86,  108, 77,
    139, 13,  154, 102, 251, 204, 176, 45,  116, 18,  43,  32,  240, 177, 132, 153,
    223, 76,  203, 194, 52,  126, 118, 5,   109, 183, 169, 49,  209, 23,  4,   215,
    20,  88,  58,  97,  222, 27,  17,  28,  50,  15,  156, 22,  83,  24,  242, 34,
    254, 68,  207, 178, 195, 181, 122, 145, 36,  8,   232, 168, 96,  252, 105, 80,
    170, 208, 160, 125, 161, 137, 98,  151, 84,  91,  30,  149, 224, 255, 100, 210,
    16,  196, 0,   72,  163, 247, 117, 219, 138, 3,   230, 218, 9,   63,  221, 148,
    135, 92,  131, 2,   205, 74,  144, 51,  115, 103, 246, 243, 157, 127, 191, 226,
    82,  155, 216, 38,  200, 55,  198, 59,  129, 150, 111, 75,  19,  190, 99,  46,
    233, 121, 167, 140, 159, 110, 188, 142, 41,  245, 249, 182, 47,  253, 180, 89,
    120, 152, 6,   106, 231, 70,  113, 186, 212, 37,  171, 66,  136, 162, 141, 250,
    114, 7,   185, 85,  248, 238, 172, 10,  54,  73,  42,  104, 60,  56,  241, 164,
    64,  40,  211, 123, 187, 201, 67,  193, 21,  227, 173, 244, 119, 199, 128, 158,
};

// RFC 3713 §2.2: the key schedule constants Sigma1..Sigma6.
inline constexpr uint64_t kSigma[6] = {
    0xA09E667F3BCC908Bull, 0xB67AE8584CAA73B2ull, 0xC6EF372FE94F82BEull,
    0x54FF53A5F1D36F1Cull, 0x10E527FADE682D1Dull, 0xB05688C2B3E6C1FDull,
};

S2MC_CAM_HD constexpr uint8_t rotl8(uint8_t x, int n) {
  return static_cast<uint8_t>((x << n) | (x >> (8 - n)));
}
S2MC_CAM_HD constexpr uint32_t rotl32(uint32_t x, int n) {
  return n == 0 ? x : ((x << n) | (x >> (32 - n)));
}
S2MC_CAM_HD constexpr uint32_t rotr32(uint32_t x, int n) {
  return n == 0 ? x : ((x >> n) | (x << (32 - n)));
}

// RFC 3713 §2.4.4: SBOX2[x] = SBOX1[x] <<< 1, SBOX3[x] = SBOX1[x] <<< 7, SBOX4[x] = SBOX1[x <<< 1].
constexpr uint8_t sbox1(uint8_t x) { return kSbox1[x]; }
constexpr uint8_t sbox2(uint8_t x) { return rotl8(kSbox1[x], 1); }
constexpr uint8_t sbox3(uint8_t x) { return rotl8(kSbox1[x], 7); }
constexpr uint8_t sbox4(uint8_t x) { return kSbox1[rotl8(x, 1)]; }

constexpr uint32_t bytes4(uint8_t a, uint8_t b, uint8_t c, uint8_t d) {
  return (uint32_t(a) << 24) | (uint32_t(b) << 16) | (uint32_t(c) << 8) | uint32_t(d);
}

// The four SP tables, generated from SBOX1 so they can never disagree with it.
struct alignas(64) SpTables {  // one 4 KB table set on 64 cache-line-aligned bytes
  uint32_t v[kSpWords];
  constexpr SpTables() : v() {
    for (int x = 0; x < 256; ++x) {
      const uint8_t s1 = sbox1(uint8_t(x)), s2 = sbox2(uint8_t(x));
      const uint8_t s3 = sbox3(uint8_t(x)), s4 = sbox4(uint8_t(x));
      v[0 * 256 + x] = bytes4(s1, s1, s1, 0);
      v[1 * 256 + x] = bytes4(0, s2, s2, s2);
      v[2 * 256 + x] = bytes4(s3, 0, s3, s3);
      v[3 * 256 + x] = bytes4(s4, s4, 0, s4);
    }
  }
};
inline constexpr SpTables kSpTables{};

inline void build_sp_tables(uint32_t* sp) {
  for (int i = 0; i < kSpWords; ++i) sp[i] = kSpTables.v[i];
}

S2MC_CAM_HD inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | p[i];
  return v;
}
S2MC_CAM_HD inline void store_be64(uint8_t* p, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    p[i] = uint8_t(v);
    v >>= 8;
  }
}

// F with the SP tables (RFC 3713 §2.4.1's S then P). With x = F_IN ^ KE split into bytes
// t1..t8 (most significant first), the left half's bytes contribute
//   U = SP1110[t1] ^ SP0222[t2] ^ SP3033[t3] ^ SP4404[t4]
// to output bytes y1..y4, the right half's
//   V = SP1110[t8] ^ SP0222[t5] ^ SP3033[t6] ^ SP4404[t7]
// to both y1..y4 and y5..y8, and P's remaining terms of t1..t4 in y5..y8 are U rotated right by
// one byte:  F = (U ^ V) : (U ^ V ^ (U >>> 8)).
S2MC_CAM_HD inline uint64_t f_sp(const uint32_t* sp, uint64_t in, uint64_t ke) {
  const uint64_t x = in ^ ke;
  const uint32_t l = uint32_t(x >> 32), r = uint32_t(x);
  const uint32_t u = sp[l >> 24] ^ sp[256 + ((l >> 16) & 255)] ^ sp[512 + ((l >> 8) & 255)] ^
                     sp[768 + (l & 255)];
  const uint32_t v = sp[r & 255] ^ sp[256 + (r >> 24)] ^ sp[512 + ((r >> 16) & 255)] ^
                     sp[768 + ((r >> 8) & 255)];
  const uint32_t d = u ^ v;
  return (uint64_t(d) << 32) | uint32_t(d ^ rotr32(u, 8));
}

// F exactly as RFC 3713 §2.4.1 writes it (S-boxes, then P byte by byte): the reference the
// selftest compares f_sp against, and the form a byte-oriented port starts from. Host only.
inline uint64_t f_reference(uint64_t in, uint64_t ke) {
  const uint64_t x = in ^ ke;
  const uint8_t t1 = sbox1(uint8_t(x >> 56)), t2 = sbox2(uint8_t(x >> 48));
  const uint8_t t3 = sbox3(uint8_t(x >> 40)), t4 = sbox4(uint8_t(x >> 32));
  const uint8_t t5 = sbox2(uint8_t(x >> 24)), t6 = sbox3(uint8_t(x >> 16));
  const uint8_t t7 = sbox4(uint8_t(x >> 8)), t8 = sbox1(uint8_t(x));
  const uint8_t y1 = t1 ^ t3 ^ t4 ^ t6 ^ t7 ^ t8, y2 = t1 ^ t2 ^ t4 ^ t5 ^ t7 ^ t8;
  const uint8_t y3 = t1 ^ t2 ^ t3 ^ t5 ^ t6 ^ t8, y4 = t2 ^ t3 ^ t4 ^ t5 ^ t6 ^ t7;
  const uint8_t y5 = t1 ^ t2 ^ t6 ^ t7 ^ t8, y6 = t2 ^ t3 ^ t5 ^ t7 ^ t8;
  const uint8_t y7 = t3 ^ t4 ^ t5 ^ t6 ^ t8, y8 = t1 ^ t4 ^ t5 ^ t6 ^ t7;
  return (uint64_t(bytes4(y1, y2, y3, y4)) << 32) | bytes4(y5, y6, y7, y8);
}

// RFC 3713 §2.4.2 FL and §2.4.3 FL^-1.
S2MC_CAM_HD inline uint64_t fl(uint64_t in, uint64_t ke) {
  uint32_t x1 = uint32_t(in >> 32), x2 = uint32_t(in);
  const uint32_t k1 = uint32_t(ke >> 32), k2 = uint32_t(ke);
  x2 ^= rotl32(x1 & k1, 1);
  x1 ^= (x2 | k2);
  return (uint64_t(x1) << 32) | x2;
}
S2MC_CAM_HD inline uint64_t flinv(uint64_t in, uint64_t ke) {
  uint32_t y1 = uint32_t(in >> 32), y2 = uint32_t(in);
  const uint32_t k1 = uint32_t(ke >> 32), k2 = uint32_t(ke);
  y1 ^= (y2 | k2);
  y2 ^= rotl32(y1 & k1, 1);
  return (uint64_t(y1) << 32) | y2;
}

// The subkeys of one key (layout in the header comment). Plain old data.
struct Subkeys {
  uint64_t kw[4];
  uint64_t k[24];
  uint64_t ke[6];
  int rounds;  // 18 or 24
};

// A 128-bit value as two 64-bit halves, and its left rotation (RFC 3713's "<<<").
struct U128 {
  uint64_t hi, lo;
};
inline U128 rotl128(U128 v, int n) {
  n &= 127;
  if (n >= 64) {
    const uint64_t t = v.hi;
    v.hi = v.lo;
    v.lo = t;
    n -= 64;
  }
  if (n == 0) return v;
  return U128{(v.hi << n) | (v.lo >> (64 - n)), (v.lo << n) | (v.hi >> (64 - n))};
}

// RFC 3713 §2.2 key schedule. Returns the rounds (18 or 24), or 0 (writing nothing) when key_bits
// is not 128, 192 or 256.
inline int expand_key(const uint8_t* key, int key_bits, Subkeys* out) {
  if (key_bits != 128 && key_bits != 192 && key_bits != 256) return 0;
  const uint32_t* sp = kSpTables.v;
  const U128 kl{load_be64(key), load_be64(key + 8)};
  U128 kr{0, 0};
  if (key_bits == 192) {
    kr.hi = load_be64(key + 16);
    kr.lo = ~kr.hi;
  } else if (key_bits == 256) {
    kr = U128{load_be64(key + 16), load_be64(key + 24)};
  }
  uint64_t d1 = kl.hi ^ kr.hi, d2 = kl.lo ^ kr.lo;
  d2 ^= f_sp(sp, d1, kSigma[0]);
  d1 ^= f_sp(sp, d2, kSigma[1]);
  d1 ^= kl.hi;
  d2 ^= kl.lo;
  d2 ^= f_sp(sp, d1, kSigma[2]);
  d1 ^= f_sp(sp, d2, kSigma[3]);
  const U128 ka{d1, d2};
  d1 = ka.hi ^ kr.hi;
  d2 = ka.lo ^ kr.lo;
  d2 ^= f_sp(sp, d1, kSigma[4]);
  d1 ^= f_sp(sp, d2, kSigma[5]);
  const U128 kb{d1, d2};

  Subkeys s{};
  // Each row: the two 64-bit halves of (X <<< n) go to the two named subkeys.
  auto put = [](U128 x, int n, uint64_t* hi, uint64_t* lo) {
    const U128 r = rotl128(x, n);
    if (hi) *hi = r.hi;
    if (lo) *lo = r.lo;
  };
  if (key_bits == 128) {
    s.rounds = 18;
    put(kl, 0, &s.kw[0], &s.kw[1]);
    put(ka, 0, &s.k[0], &s.k[1]);
    put(kl, 15, &s.k[2], &s.k[3]);
    put(ka, 15, &s.k[4], &s.k[5]);
    put(ka, 30, &s.ke[0], &s.ke[1]);
    put(kl, 45, &s.k[6], &s.k[7]);
    put(ka, 45, &s.k[8], nullptr);
    put(kl, 60, nullptr, &s.k[9]);
    put(ka, 60, &s.k[10], &s.k[11]);
    put(kl, 77, &s.ke[2], &s.ke[3]);
    put(kl, 94, &s.k[12], &s.k[13]);
    put(ka, 94, &s.k[14], &s.k[15]);
    put(kl, 111, &s.k[16], &s.k[17]);
    put(ka, 111, &s.kw[2], &s.kw[3]);
  } else {
    s.rounds = 24;
    put(kl, 0, &s.kw[0], &s.kw[1]);
    put(kb, 0, &s.k[0], &s.k[1]);
    put(kr, 15, &s.k[2], &s.k[3]);
    put(ka, 15, &s.k[4], &s.k[5]);
    put(kr, 30, &s.ke[0], &s.ke[1]);
    put(kb, 30, &s.k[6], &s.k[7]);
    put(kl, 45, &s.k[8], &s.k[9]);
    put(ka, 45, &s.k[10], &s.k[11]);
    put(kl, 60, &s.ke[2], &s.ke[3]);
    put(kr, 60, &s.k[12], &s.k[13]);
    put(kb, 60, &s.k[14], &s.k[15]);
    put(kl, 77, &s.k[16], &s.k[17]);
    put(ka, 77, &s.ke[4], &s.ke[5]);
    put(kr, 94, &s.k[18], &s.k[19]);
    put(ka, 94, &s.k[20], &s.k[21]);
    put(kl, 111, &s.k[22], &s.k[23]);
    put(kb, 111, &s.kw[2], &s.kw[3]);
  }
  *out = s;
  return s.rounds;
}

// RFC 3713 §2.3.3: decryption is encryption with the subkeys in reverse order.
inline void decryption_subkeys(const Subkeys& enc, Subkeys* dec) {
  Subkeys d{};
  d.rounds = enc.rounds;
  d.kw[0] = enc.kw[2];
  d.kw[1] = enc.kw[3];
  d.kw[2] = enc.kw[0];
  d.kw[3] = enc.kw[1];
  for (int i = 0; i < enc.rounds; ++i) d.k[i] = enc.k[enc.rounds - 1 - i];
  const int nke = enc.rounds == 18 ? 4 : 6;
  for (int i = 0; i < nke; ++i) d.ke[i] = enc.ke[nke - 1 - i];
  *dec = d;
}

// Six Feistel rounds starting at round key k[first] (RFC 3713 §2.3.2).
S2MC_CAM_HD inline void six_rounds(const uint32_t* sp, const uint64_t* k, uint64_t& d1, uint64_t& d2) {
  d2 ^= f_sp(sp, d1, k[0]);
  d1 ^= f_sp(sp, d2, k[1]);
  d2 ^= f_sp(sp, d1, k[2]);
  d1 ^= f_sp(sp, d2, k[3]);
  d2 ^= f_sp(sp, d1, k[4]);
  d1 ^= f_sp(sp, d2, k[5]);
}

// One 16-byte block (RFC 3713 §2.3.2 for 18 rounds, §2.3.3 for 24). With decryption_subkeys'
// output it decrypts. sp: kSpTables.v or a copy; in and out may alias.
S2MC_CAM_HD inline void encrypt_block(const uint32_t* sp, const Subkeys& ks, const uint8_t* in,
                                      uint8_t* out) {
  uint64_t d1 = load_be64(in) ^ ks.kw[0], d2 = load_be64(in + 8) ^ ks.kw[1];
  six_rounds(sp, ks.k, d1, d2);
  d1 = fl(d1, ks.ke[0]);
  d2 = flinv(d2, ks.ke[1]);
  six_rounds(sp, ks.k + 6, d1, d2);
  d1 = fl(d1, ks.ke[2]);
  d2 = flinv(d2, ks.ke[3]);
  six_rounds(sp, ks.k + 12, d1, d2);
  if (ks.rounds == 24) {
    d1 = fl(d1, ks.ke[4]);
    d2 = flinv(d2, ks.ke[5]);
    six_rounds(sp, ks.k + 18, d1, d2);
  }
  d2 ^= ks.kw[2];
  d1 ^= ks.kw[3];
  store_be64(out, d2);
  store_be64(out + 8, d1);
}

// Decrypts one block with the ENCRYPTION subkeys (reorders them on every call: for bulk work
// call decryption_subkeys once and encrypt_block with its result). Host only.
inline void decrypt_block(const uint32_t* sp, const Subkeys& enc, const uint8_t* in, uint8_t* out) {
  Subkeys dec;
  decryption_subkeys(enc, &dec);
  encrypt_block(sp, dec, in, out);
}

// RFC 3713 Appendix A: the three test vectors (key 0123..3210 [0011..ff], plaintext 0123..3210),
// both directions, plus f_sp == f_reference on a spread of inputs. Returns true when all pass.
inline bool selftest() {
  static const uint8_t key[32] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe, 0xdc, 0xba,
                                  0x98, 0x76, 0x54, 0x32, 0x10, 0x00, 0x11, 0x22, 0x33, 0x44, 0x55,
                                  0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  static const uint8_t expect[3][16] = {
      {0x67, 0x67, 0x31, 0x38, 0x54, 0x96, 0x69, 0x73, 0x08, 0x57, 0x06, 0x56, 0x48, 0xea, 0xbe, 0x43},
      {0xb4, 0x99, 0x34, 0x01, 0xb3, 0xe9, 0x96, 0xf8, 0x4e, 0xe5, 0xce, 0xe7, 0xd7, 0x9b, 0x09, 0xb9},
      {0x9a, 0xcc, 0x23, 0x7d, 0xff, 0x16, 0xd7, 0x6c, 0x20, 0xef, 0x7c, 0x91, 0x9e, 0x3a, 0x75, 0x09},
  };
  const int bits[3] = {128, 192, 256};
  for (int v = 0; v < 3; ++v) {
    Subkeys ks;
    if (expand_key(key, bits[v], &ks) != (bits[v] == 128 ? 18 : 24)) return false;
    uint8_t c[16], p[16];
    encrypt_block(kSpTables.v, ks, key, c);  // the plaintext is the key's first 16 bytes
    for (int i = 0; i < 16; ++i)
      if (c[i] != expect[v][i]) return false;
    decrypt_block(kSpTables.v, ks, c, p);
    for (int i = 0; i < 16; ++i)
      if (p[i] != key[i]) return false;
  }
  uint64_t x = 0x0123456789abcdefull, k = 0xfedcba9876543210ull;
  for (int i = 0; i < 4096; ++i) {
    if (f_sp(kSpTables.v, x, k) != f_reference(x, k)) return false;
    x = x * 6364136223846793005ull + 1442695040888963407ull;  // any sequence that varies every byte
    k ^= x >> 7;
  }
  Subkeys ks;
  return expand_key(key, 64, &ks) == 0;
}

}  // namespace camellia
}  // namespace s2mc

#endif  // S2MC_AES_CAMELLIA_H
