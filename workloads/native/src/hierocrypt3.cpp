// Hierocrypt-3 (Toshiba), 128/192/256-bit keys: 6.5/7.5/8.5 rounds.
//
// Specification: Toshiba Corporation, "Specification on a Block Cipher: Hierocrypt-3" (NESSIE
// submission, 2000; CRYPTREC cipher list, 2002),
//   https://www.cryptrec.go.jp/en/cryptrec_03_spec_cypherlist_files/PDF/08_02espec.pdf
// Test vectors (tests/test_cryptrec_ciphers.py): the specification's test data (256-bit key) and
// NESSIE's verified vectors for 128/192/256-bit keys,
//   https://www.cosic.esat.kuleuven.be/nessie/testvectors/bc/hierocrypt/Hierocrypt-3-*.verified.test-vectors
//
// Structure (nested SPN, big-endian throughout):
//   rho(X, K)  = MDSH(XS(X, K_lo, K_hi))                 rounds 1..T-1
//   XS(X,a,b)  = S(MDSL(S(X ^ a)) ^ b)                   S: the 8-bit S-box on every byte,
//                                                        MDSL: mdsL on each 32-bit column
//   C          = XS(X, K[T]) ^ K[T+1]_lo                 the last half round
//   mdsL       = circulant 4x4 matrix over GF(2^8), p(z) = z^8+z^6+z^5+z+1 (0x163), row (c4 65 c8 8b)
//   MDSH       = 4x4 matrix over GF(2^4) acting on the four 32-bit columns, where "times 2" maps the
//                column's bytes (x0,x1,x2,x3) to (x1, x2, x3^x0, x0) and higher elements are sums
//                of its powers; M5E / MB3 of the key schedule are the same algebra (x5 | x14 and
//                x11 | x3 on the two halves of 64 bits).
#include "s2mc_cryptrec/cryptrec.h"
#include "s2mc_cipher/key_schedule.h"  // load_be32, store_be32

#include <cstring>
#include <stdexcept>

namespace s2mc {
namespace cryptrec {

namespace {

using s2mc::aes::load_be32;
using s2mc::aes::store_be32;

// The S-box (specification, the s-function table). tests/test_cryptrec_ciphers.py derives it
// independently from its algebraic definition (a bit permutation, x^247 in GF(2^8), + 0x07).
constexpr uint8_t kS[256] = {
    0x07, 0xfc, 0x55, 0x70, 0x98, 0x8e, 0x84, 0x4e, 0xbc, 0x75, 0xce, 0x18, 0x02, 0xe9, 0x5d, 0x80,
    0x1c, 0x60, 0x78, 0x42, 0x9d, 0x2e, 0xf5, 0xe8, 0xc6, 0x7a, 0x2f, 0xa4, 0xb2, 0x5f, 0x19, 0x87,
    0x0b, 0x9b, 0x9c, 0xd3, 0xc3, 0x77, 0x3d, 0x6f, 0xb9, 0x2d, 0x4d, 0xf7, 0x8c, 0xa7, 0xac, 0x17,
    0x3c, 0x5a, 0x41, 0xc9, 0x29, 0xed, 0xde, 0x27, 0x69, 0x30, 0x72, 0xa8, 0x95, 0x3e, 0xf9, 0xd8,
    0x21, 0x8b, 0x44, 0xd7, 0x11, 0x0d, 0x48, 0xfd, 0x6a, 0x01, 0x57, 0xe5, 0xbd, 0x85, 0xec, 0x1e,
    0x37, 0x9f, 0xb5, 0x9a, 0x7c, 0x09, 0xf1, 0xb1, 0x94, 0x81, 0x82, 0x08, 0xfb, 0xc0, 0x51, 0x0f,
    0x61, 0x7f, 0x1a, 0x56, 0x96, 0x13, 0xc1, 0x67, 0x99, 0x03, 0x5e, 0xb6, 0xca, 0xfa, 0x9e, 0xdf,
    0xd6, 0x83, 0xcc, 0xa2, 0x12, 0x23, 0xb7, 0x65, 0xd0, 0x39, 0x7d, 0x3b, 0xd5, 0xb0, 0xaf, 0x1f,
    0x06, 0xc8, 0x34, 0xc5, 0x1b, 0x79, 0x4b, 0x66, 0xbf, 0x88, 0x4a, 0xc4, 0xef, 0x58, 0x3f, 0x0a,
    0x2c, 0x73, 0xd1, 0xf8, 0x6b, 0xe6, 0x20, 0xb8, 0x22, 0x43, 0xb3, 0x33, 0xe7, 0xf0, 0x71, 0x7e,
    0x52, 0x89, 0x47, 0x63, 0x0e, 0x6d, 0xe3, 0xbe, 0x59, 0x64, 0xee, 0xf6, 0x38, 0x5c, 0xf4, 0x5b,
    0x49, 0xd4, 0xe0, 0xf3, 0xbb, 0x54, 0x26, 0x2b, 0x00, 0x86, 0x90, 0xff, 0xfe, 0xa6, 0x7b, 0x05,
    0xad, 0x68, 0xa1, 0x10, 0xeb, 0xc7, 0xe2, 0xf2, 0x46, 0x8a, 0x6c, 0x14, 0x6e, 0xcf, 0x35, 0x45,
    0x50, 0xd2, 0x92, 0x74, 0x93, 0xe1, 0xda, 0xae, 0xa9, 0x53, 0xe4, 0x40, 0xcd, 0xba, 0x97, 0xa3,
    0x91, 0x31, 0x25, 0x76, 0x36, 0x32, 0x28, 0x3a, 0x24, 0x4c, 0xdb, 0xd9, 0x8d, 0xdc, 0x62, 0x2a,
    0xea, 0x15, 0xdd, 0xc2, 0xa5, 0x0c, 0x04, 0x1d, 0x8f, 0xcb, 0xb4, 0x4f, 0x16, 0xab, 0xaa, 0xa0};
// mdsL's first row and its inverse's (the specification's mdsL and mdsL^-1).
constexpr uint8_t kMdsL[4] = {0xc4, 0x65, 0xc8, 0x8b};
constexpr uint8_t kMdsLInv[4] = {0x82, 0xc4, 0x34, 0xf6};
// MDSH and its inverse: elements of GF(2^4) (bit k = "times 2^k").
constexpr uint8_t kMdsH[4][4] = {{5, 5, 10, 14}, {14, 5, 5, 10}, {10, 14, 5, 5}, {5, 10, 14, 5}};
constexpr uint8_t kMdsHInv[4][4] = {{11, 14, 14, 6}, {6, 11, 14, 14}, {14, 6, 11, 14}, {14, 14, 6, 11}};
// The key schedule's constants: H0..H3 = the first 32 fraction bits of sqrt(2)/4, sqrt(3)/4,
// sqrt(5)/4, sqrt(10)/4; G(i) pairs two of them as a 64-bit value. Step 0 (pre-whitening) uses G(5);
// steps 1..T+1 use the key length's sequence.
constexpr uint32_t kH[4] = {0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6};
constexpr uint8_t kGPair[6][2] = {{3, 0}, {2, 1}, {1, 3}, {0, 2}, {2, 3}, {1, 0}};
constexpr uint8_t kGSeq128[7] = {0, 1, 2, 3, 3, 2, 1};
constexpr uint8_t kGSeq192[8] = {1, 0, 3, 2, 2, 3, 0, 1};
constexpr uint8_t kGSeq256[9] = {4, 0, 2, 1, 3, 3, 1, 2, 0};

uint8_t gmul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b; b >>= 1) {
    if (b & 1) r ^= a;
    a = uint8_t((a << 1) ^ ((a & 0x80) ? 0x63 : 0));  // 0x163 without the z^8 bit
  }
  return r;
}

// "times 2" of the GF(2^4) algebra on a 32-bit column (x0 the most significant byte).
inline uint32_t h2(uint32_t w) { return ((w << 8) | (w >> 24)) ^ ((w >> 16) & 0xff00u); }
inline uint32_t hmul(uint8_t e, uint32_t w) {
  uint32_t r = 0;
  for (int k = 0; k < 4; ++k, w = h2(w))
    if ((e >> k) & 1) r ^= w;
  return r;
}

struct Tables {
  uint8_t s_inv[256];
  uint32_t te[4][256];  // column byte j = v: mdsL(s(v) in position j), as a column word
  uint32_t td[4][256];  // the same with s^-1 and mdsL^-1
  Tables() {
    for (int v = 0; v < 256; ++v) s_inv[kS[v]] = uint8_t(v);
    for (int j = 0; j < 4; ++j)
      for (int v = 0; v < 256; ++v) {
        uint32_t e = 0, d = 0;
        for (int r = 0; r < 4; ++r) {  // y_r = sum_c row[(c - r) mod 4] x_c, here c = j
          e |= uint32_t(gmul(kMdsL[(j - r) & 3], kS[v])) << (24 - 8 * r);
          d |= uint32_t(gmul(kMdsLInv[(j - r) & 3], s_inv[v])) << (24 - 8 * r);
        }
        te[j][v] = e;
        td[j][v] = d;
      }
  }
};
const Tables kT;

inline uint32_t sub_word(uint32_t w) {
  return (uint32_t(kS[w >> 24]) << 24) | (uint32_t(kS[(w >> 16) & 255]) << 16) |
         (uint32_t(kS[(w >> 8) & 255]) << 8) | kS[w & 255];
}
inline uint32_t sub_inv_word(uint32_t w) {
  return (uint32_t(kT.s_inv[w >> 24]) << 24) | (uint32_t(kT.s_inv[(w >> 16) & 255]) << 16) |
         (uint32_t(kT.s_inv[(w >> 8) & 255]) << 8) | kT.s_inv[w & 255];
}
uint32_t mdsl_word(const uint8_t row[4], uint32_t w) {
  uint32_t y = 0;
  for (int r = 0; r < 4; ++r) {
    uint8_t acc = 0;
    for (int c = 0; c < 4; ++c) acc ^= gmul(row[(c - r) & 3], uint8_t(w >> (24 - 8 * c)));
    y |= uint32_t(acc) << (24 - 8 * r);
  }
  return y;
}
// Each column's "times 1, 2, 4, 8" once, then every output column is the XOR the matrix selects
// (the matrix is a compile-time constant, so the selection folds away).
template <const uint8_t (&M)[4][4]>
inline void mdsh(uint32_t x[4]) {
  uint32_t p[4][4];
#pragma GCC unroll 4
  for (int c = 0; c < 4; ++c) {
    p[c][0] = x[c];
    p[c][1] = h2(p[c][0]);
    p[c][2] = h2(p[c][1]);
    p[c][3] = h2(p[c][2]);
  }
#pragma GCC unroll 4
  for (int r = 0; r < 4; ++r) {
    uint32_t y = 0;
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c)
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k)
        if ((M[r][c] >> k) & 1) y ^= p[c][k];
    x[r] = y;
  }
}

// Key schedule values: 64 bits as (hi, lo) 32-bit halves.
struct H64 {
  uint32_t hi, lo;
};
inline H64 operator^(H64 a, H64 b) { return {a.hi ^ b.hi, a.lo ^ b.lo}; }
inline H64 m5e(H64 x) { return {hmul(5, x.hi), hmul(14, x.lo)}; }
inline H64 mb3(H64 x) { return {hmul(11, x.hi), hmul(3, x.lo)}; }
// P(n) on four groups: (g1^g3, g2^g4, g2^g3^g4, g1^g3^g4), and its inverse.
template <typename T>
inline void pn(T& g1, T& g2, T& g3, T& g4) {
  const T a = g1 ^ g3, b = g2 ^ g4, c = g2 ^ g3 ^ g4, d = g1 ^ g3 ^ g4;
  g1 = a, g2 = b, g3 = c, g4 = d;
}
template <typename T>
inline void pn_inv(T& g1, T& g2, T& g3, T& g4) {
  const T a = g1 ^ g2 ^ g3, b = g1 ^ g2 ^ g4, c = g2 ^ g3, d = g1 ^ g4;
  g1 = a, g2 = b, g3 = c, g4 = d;
}
// F_sigma: the S-box on the 8 bytes, then P(16) over the four 16-bit groups.
inline H64 fsigma(H64 x) {
  const uint32_t h = sub_word(x.hi), l = sub_word(x.lo);
  uint32_t g1 = h >> 16, g2 = h & 0xffff, g3 = l >> 16, g4 = l & 0xffff;
  pn(g1, g2, g3, g4);
  return {(g1 << 16) | g2, (g3 << 16) | g4};
}
inline H64 g_pair(int i) { return {kH[kGPair[i][0]], kH[kGPair[i][1]]}; }

}  // namespace

Hc3Key hc3_make_key(const uint8_t* key, int key_bits) {
  if (key_bits != 128 && key_bits != 192 && key_bits != 256)
    throw std::invalid_argument("hierocrypt3 key must be 16, 24 or 32 bytes (got " + std::to_string(key_bits / 8) + ")");
  Hc3Key k;
  k.key_bits = key_bits;
  k.rounds = key_bits == 128 ? 6 : key_bits == 192 ? 7 : 8;  // T; 6.5, 7.5, 8.5 rounds
  const int T = k.rounds, turn = (T + 2) / 2;                  // sigma steps 1..turn, then sigma^-1
  const uint8_t* gseq = key_bits == 128 ? kGSeq128 : key_bits == 192 ? kGSeq192 : kGSeq256;
  // The key as four 64-bit words: K1 K2 K1 H3|H2 (128), K1 K2 K3 H2|H3 (192), K1 K2 K3 K4 (256).
  H64 z[4];
  for (int i = 0; i < key_bits / 64; ++i) z[i] = {load_be32(key + 8 * i), load_be32(key + 8 * i + 4)};
  if (key_bits == 128) z[2] = z[0], z[3] = {kH[3], kH[2]};
  if (key_bits == 192) z[3] = {kH[2], kH[3]};
  // Step 0 (pre-whitening): the sigma step without the P(32) mixing.
  {
    const H64 z3 = m5e(z[2]) ^ g_pair(5), z4 = m5e(z[3]);
    const H64 z2 = z[0] ^ fsigma(z[1] ^ z3);
    z[0] = z[1], z[1] = z2, z[2] = z3, z[3] = z4;
  }
  H64 rk[10][4];
  for (int t = 1; t <= T + 1; ++t) {
    const H64 p1 = z[0], p2 = z[1], p3 = z[2], p4 = z[3], g = g_pair(gseq[t - 1]);
    if (t <= turn) {  // forward (sigma) steps
      uint32_t g1 = p3.hi, g2 = p3.lo, g3 = p4.hi, g4 = p4.lo;
      pn(g1, g2, g3, g4);
      const H64 z3 = m5e(H64{g1, g2}) ^ g, z4 = m5e(H64{g3, g4});
      const H64 v = fsigma(p2 ^ z3);
      z[0] = p2, z[1] = p1 ^ v, z[2] = z3, z[3] = z4;
      rk[t][0] = p1 ^ v, rk[t][1] = z3 ^ v, rk[t][2] = z4 ^ v, rk[t][3] = p2 ^ z4;
    } else {  // backward (sigma^-1) steps
      const H64 v = fsigma(p1 ^ p3);
      const H64 w1 = mb3(p3 ^ g), w2 = mb3(p4);
      uint32_t g1 = w1.hi, g2 = w1.lo, g3 = w2.hi, g4 = w2.lo;
      pn_inv(g1, g2, g3, g4);
      z[0] = p2 ^ v, z[1] = p1, z[2] = {g1, g2}, z[3] = {g3, g4};
      rk[t][0] = z[0] ^ p3, rk[t][1] = w1 ^ v, rk[t][2] = w2 ^ v, rk[t][3] = p1 ^ w2;
    }
  }
  for (int t = 1; t <= T + 1; ++t)
    for (int i = 0; i < 4; ++i) {
      k.ek[t - 1][2 * i] = rk[t][i].hi;
      k.ek[t - 1][2 * i + 1] = rk[t][i].lo;
    }
  // Decryption undoes MDSL after adding the round key's second half: mdsL^-1 of that half instead.
  for (int t = 0; t <= T; ++t)
    for (int i = 0; i < 8; ++i) k.dk[t][i] = i < 4 ? k.ek[t][i] : mdsl_word(kMdsLInv, k.ek[t][i]);
  return k;
}

// One block at a time: interleaving 2 or 4 blocks (as SC2000 does) measured slower here, the
// 16-word state of several blocks no longer fitting in registers.
void hc3_encrypt_block(const Hc3Key& k, const uint8_t in[16], uint8_t out[16]) {
  uint32_t x[4];
  for (int i = 0; i < 4; ++i) x[i] = load_be32(in + 4 * i);
  for (int t = 0; t < k.rounds; ++t) {
    const uint32_t* rk = k.ek[t];
    for (int i = 0; i < 4; ++i) {
      const uint32_t a = x[i] ^ rk[i];
      x[i] = sub_word(kT.te[0][a >> 24] ^ kT.te[1][(a >> 16) & 255] ^ kT.te[2][(a >> 8) & 255] ^ kT.te[3][a & 255] ^ rk[4 + i]);
    }
    if (t + 1 < k.rounds) mdsh<kMdsH>(x);
  }
  for (int i = 0; i < 4; ++i) store_be32(out + 4 * i, x[i] ^ k.ek[k.rounds][i]);
}

void hc3_decrypt_block(const Hc3Key& k, const uint8_t in[16], uint8_t out[16]) {
  uint32_t x[4];
  for (int i = 0; i < 4; ++i) x[i] = load_be32(in + 4 * i) ^ k.ek[k.rounds][i];
  for (int t = k.rounds - 1; t >= 0; --t) {
    if (t + 1 < k.rounds) mdsh<kMdsHInv>(x);
    const uint32_t* dk = k.dk[t];
    for (int i = 0; i < 4; ++i) {
      const uint32_t a = x[i];
      x[i] = sub_inv_word(kT.td[0][a >> 24] ^ kT.td[1][(a >> 16) & 255] ^ kT.td[2][(a >> 8) & 255] ^
                          kT.td[3][a & 255] ^ dk[4 + i]) ^ dk[i];
    }
  }
  for (int i = 0; i < 4; ++i) store_be32(out + 4 * i, x[i]);
}

void hc3_sbox(uint8_t out[256]) { std::memcpy(out, kS, 256); }

}  // namespace cryptrec
}  // namespace s2mc
