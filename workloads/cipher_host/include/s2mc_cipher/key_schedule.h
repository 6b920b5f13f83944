// s2mc_cipher/key_schedule.h -- header-only, dependency-free AES (FIPS-197) key schedule and T-tables.
//
// Lives in workloads/cipher_host/ because both AES backends use it -- the native CPU library
// (workloads/native) and the CUDA backend (gpu-backends/cuda) -- and neither may depend on the other.
// The API below is STABLE: add to it, never change or remove what is here.
//
// Conventions
//   * A "word" is a uint32_t holding four AES bytes big-endian: byte 0 of the column in bits 31..24.
//     load_be32/store_be32 convert between bytes and words.
//   * expand_key(key, key_bits, rk) writes the FIPS-197 key schedule w[0 .. 4*(Nr+1)-1] as words and
//     returns Nr (10, 12 or 14), or 0 when key_bits is not 128/192/256 (nothing is written then).
//     Round r uses rk[4r .. 4r+3]. kMaxRoundKeyWords (60) words always suffice.
//   * inverse_key_schedule(rk, Nr, drk) builds the "equivalent inverse cipher" schedule
//     (FIPS-197 §5.3.5): round keys in reverse order, with InvMixColumns applied to rounds 1..Nr-1,
//     so decryption has the same structure as encryption and can use the Td tables.
//   * T-tables, each 4 x 256 words laid out as T[t*256 + x] (t = 0..3):
//       Te0[x] = (2s, s, s, 3s) with s = S[x];       Te_t = rotr(Te0, 8t)
//       Td0[x] = (e i, 9 i, d i, b i) with i = S^-1[x];  Td_t = rotr(Td0, 8t)
//     One encryption round for output column j (indices mod 4):
//       t_j = Te0[s_j>>24] ^ Te1[(s_{j+1}>>16)&255] ^ Te2[(s_{j+2}>>8)&255] ^ Te3[s_{j+3}&255] ^ rk
//     Decryption uses Td with columns j, j+3, j+2, j+1 (i.e. j-1, j-2, j-3).
//   * encrypt_block / decrypt_block are portable reference implementations on top of the tables
//     (host and, when compiled by nvcc, device code). They are the seeds' T-table algorithm.
//
// Everything is constexpr-friendly C++17 with no library dependency beyond <cstdint>.
#ifndef S2MC_AES_KEY_SCHEDULE_H
#define S2MC_AES_KEY_SCHEDULE_H

#include <cstdint>

#if defined(__CUDACC__)
#define S2MC_AES_HD __host__ __device__
#else
#define S2MC_AES_HD
#endif

namespace s2mc {
namespace aes {

constexpr int kBlockBytes = 16;
constexpr int kMaxRounds = 14;
constexpr int kMaxRoundKeyWords = 4 * (kMaxRounds + 1);  // 60
constexpr int kTableWords = 4 * 256;                       // one Te or Td set

inline constexpr uint8_t kSbox[256] = {
    0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5, 0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76,
    0xca, 0x82, 0xc9, 0x7d, 0xfa, 0x59, 0x47, 0xf0, 0xad, 0xd4, 0xa2, 0xaf, 0x9c, 0xa4, 0x72, 0xc0,
    0xb7, 0xfd, 0x93, 0x26, 0x36, 0x3f, 0xf7, 0xcc, 0x34, 0xa5, 0xe5, 0xf1, 0x71, 0xd8, 0x31, 0x15,
    0x04, 0xc7, 0x23, 0xc3, 0x18, 0x96, 0x05, 0x9a, 0x07, 0x12, 0x80, 0xe2, 0xeb, 0x27, 0xb2, 0x75,
    0x09, 0x83, 0x2c, 0x1a, 0x1b, 0x6e, 0x5a, 0xa0, 0x52, 0x3b, 0xd6, 0xb3, 0x29, 0xe3, 0x2f, 0x84,
    0x53, 0xd1, 0x00, 0xed, 0x20, 0xfc, 0xb1, 0x5b, 0x6a, 0xcb, 0xbe, 0x39, 0x4a, 0x4c, 0x58, 0xcf,
    0xd0, 0xef, 0xaa, 0xfb, 0x43, 0x4d, 0x33, 0x85, 0x45, 0xf9, 0x02, 0x7f, 0x50, 0x3c, 0x9f, 0xa8,
    0x51, 0xa3, 0x40, 0x8f, 0x92, 0x9d, 0x38, 0xf5, 0xbc, 0xb6, 0xda, 0x21, 0x10, 0xff, 0xf3, 0xd2,
    0xcd, 0x0c, 0x13, 0xec, 0x5f, 0x97, 0x44, 0x17, 0xc4, 0xa7, 0x7e, 0x3d, 0x64, 0x5d, 0x19, 0x73,
    0x60, 0x81, 0x4f, 0xdc, 0x22, 0x2a, 0x90, 0x88, 0x46, 0xee, 0xb8, 0x14, 0xde, 0x5e, 0x0b, 0xdb,
    0xe0, 0x32, 0x3a, 0x0a, 0x49, 0x06, 0x24, 0x5c, 0xc2, 0xd3, 0xac, 0x62, 0x91, 0x95, 0xe4, 0x79,
    0xe7, 0xc8, 0x37, 0x6d, 0x8d, 0xd5, 0x4e, 0xa9, 0x6c, 0x56, 0xf4, 0xea, 0x65, 0x7a, 0xae, 0x08,
    0xba, 0x78, 0x25, 0x2e, 0x1c, 0xa6, 0xb4, 0xc6, 0xe8, 0xdd, 0x74, 0x1f, 0x4b, 0xbd, 0x8b, 0x8a,
    0x70, 0x3e, 0xb5, 0x66, 0x48, 0x03, 0xf6, 0x0e, 0x61, 0x35, 0x57, 0xb9, 0x86, 0xc1, 0x1d, 0x9e,
    0xe1, 0xf8, 0x98, 0x11, 0x69, 0xd9, 0x8e, 0x94, 0x9b, 0x1e, 0x87, 0xe9, 0xce, 0x55, 0x28, 0xdf,
    0x8c, 0xa1, 0x89, 0x0d, 0xbf, 0xe6, 0x42, 0x68, 0x41, 0x99, 0x2d, 0x0f, 0xb0, 0x54, 0xbb, 0x16,
};

// The inverse S-box, computed from kSbox at compile time so the two can never disagree.
struct InvSboxTable {
  uint8_t v[256];
  constexpr InvSboxTable() : v() {
    for (int i = 0; i < 256; ++i) v[kSbox[i]] = static_cast<uint8_t>(i);
  }
};
inline constexpr InvSboxTable kInvSboxTable{};
inline constexpr const uint8_t* kInvSbox = kInvSboxTable.v;

// GF(2^8) arithmetic modulo x^8 + x^4 + x^3 + x + 1.
S2MC_AES_HD constexpr uint8_t xtime(uint8_t a) {
  return static_cast<uint8_t>((a << 1) ^ ((a & 0x80) ? 0x1b : 0x00));
}
S2MC_AES_HD constexpr uint8_t gmul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (int i = 0; i < 8; ++i) {
    if (b & 1) r ^= a;
    a = xtime(a);
    b >>= 1;
  }
  return r;
}

S2MC_AES_HD constexpr uint32_t rotr32(uint32_t x, int n) {
  return n == 0 ? x : ((x >> n) | (x << (32 - n)));
}
S2MC_AES_HD inline uint32_t load_be32(const uint8_t* p) {
  return (uint32_t(p[0]) << 24) | (uint32_t(p[1]) << 16) | (uint32_t(p[2]) << 8) | uint32_t(p[3]);
}
S2MC_AES_HD inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
}

// The CTR counter block of block n: counter + n (mod 2^128), big-endian (NIST SP 800-38A), as every
// backend's host code and reference computes it. out may alias counter.
inline void counter_add(const uint8_t counter[16], uint64_t n, uint8_t out[16]) {
  uint64_t carry = n;
  for (int i = 15; i >= 0; --i) {
    const uint64_t v = uint64_t(counter[i]) + (carry & 0xff);
    out[i] = uint8_t(v);
    carry = (carry >> 8) + (v >> 8);
  }
}

// Rounds for a key size in bits (10/12/14), or 0 for an unsupported size.
constexpr int rounds_for_key_bits(int key_bits) {
  return key_bits == 128 ? 10 : key_bits == 192 ? 12 : key_bits == 256 ? 14 : 0;
}

inline uint32_t sub_word(uint32_t w) {
  return (uint32_t(kSbox[w >> 24]) << 24) | (uint32_t(kSbox[(w >> 16) & 255]) << 16) |
         (uint32_t(kSbox[(w >> 8) & 255]) << 8) | uint32_t(kSbox[w & 255]);
}

// FIPS-197 §5.2 KeyExpansion. Returns Nr, or 0 (writing nothing) for a bad key_bits.
inline int expand_key(const uint8_t* key, int key_bits, uint32_t* round_keys_out) {
  const int nr = rounds_for_key_bits(key_bits);
  if (nr == 0) return 0;
  const int nk = key_bits / 32;
  const int total = 4 * (nr + 1);
  for (int i = 0; i < nk; ++i) round_keys_out[i] = load_be32(key + 4 * i);
  uint32_t rcon = 0x01;
  for (int i = nk; i < total; ++i) {
    uint32_t t = round_keys_out[i - 1];
    if (i % nk == 0) {
      t = sub_word((t << 8) | (t >> 24)) ^ (rcon << 24);
      rcon = xtime(static_cast<uint8_t>(rcon));
    } else if (nk > 6 && i % nk == 4) {
      t = sub_word(t);
    }
    round_keys_out[i] = round_keys_out[i - nk] ^ t;
  }
  return nr;
}

// InvMixColumns of one column word.
constexpr uint32_t inv_mix_column(uint32_t w) {
  const uint8_t a0 = uint8_t(w >> 24), a1 = uint8_t(w >> 16), a2 = uint8_t(w >> 8), a3 = uint8_t(w);
  const uint8_t b0 = gmul(a0, 14) ^ gmul(a1, 11) ^ gmul(a2, 13) ^ gmul(a3, 9);
  const uint8_t b1 = gmul(a0, 9) ^ gmul(a1, 14) ^ gmul(a2, 11) ^ gmul(a3, 13);
  const uint8_t b2 = gmul(a0, 13) ^ gmul(a1, 9) ^ gmul(a2, 14) ^ gmul(a3, 11);
  const uint8_t b3 = gmul(a0, 11) ^ gmul(a1, 13) ^ gmul(a2, 9) ^ gmul(a3, 14);
  return (uint32_t(b0) << 24) | (uint32_t(b1) << 16) | (uint32_t(b2) << 8) | uint32_t(b3);
}

// Equivalent inverse cipher key schedule (FIPS-197 §5.3.5) for T-table decryption.
// rk: output of expand_key with `rounds` rounds. drk: 4*(rounds+1) words (may not alias rk).
inline void inverse_key_schedule(const uint32_t* rk, int rounds, uint32_t* drk) {
  for (int r = 0; r <= rounds; ++r) {
    for (int c = 0; c < 4; ++c) {
      const uint32_t w = rk[4 * (rounds - r) + c];
      drk[4 * r + c] = (r == 0 || r == rounds) ? w : inv_mix_column(w);
    }
  }
}

// Encryption T-tables: te[t*256 + x], 1024 words.
inline void build_te_tables(uint32_t* te) {
  for (int x = 0; x < 256; ++x) {
    const uint8_t s = kSbox[x];
    const uint32_t w = (uint32_t(xtime(s)) << 24) | (uint32_t(s) << 16) | (uint32_t(s) << 8) |
                       uint32_t(uint8_t(xtime(s) ^ s));
    for (int t = 0; t < 4; ++t) te[t * 256 + x] = rotr32(w, 8 * t);
  }
}

// Decryption T-tables: td[t*256 + x], 1024 words.
inline void build_td_tables(uint32_t* td) {
  for (int x = 0; x < 256; ++x) {
    const uint8_t i = kInvSbox[x];
    const uint32_t w = (uint32_t(gmul(i, 14)) << 24) | (uint32_t(gmul(i, 9)) << 16) |
                       (uint32_t(gmul(i, 13)) << 8) | uint32_t(gmul(i, 11));
    for (int t = 0; t < 4; ++t) td[t * 256 + x] = rotr32(w, 8 * t);
  }
}

// Reference T-table block encryption. te: build_te_tables output; rk: expand_key output.
// in and out may alias.
S2MC_AES_HD inline void encrypt_block(const uint32_t* te, const uint32_t* rk, int rounds,
                                      const uint8_t* in, uint8_t* out) {
  uint32_t s0 = load_be32(in) ^ rk[0], s1 = load_be32(in + 4) ^ rk[1];
  uint32_t s2 = load_be32(in + 8) ^ rk[2], s3 = load_be32(in + 12) ^ rk[3];
  const uint32_t *T0 = te, *T1 = te + 256, *T2 = te + 512, *T3 = te + 768;
  for (int r = 1; r < rounds; ++r) {
    const uint32_t* k = rk + 4 * r;
    const uint32_t t0 = T0[s0 >> 24] ^ T1[(s1 >> 16) & 255] ^ T2[(s2 >> 8) & 255] ^ T3[s3 & 255] ^ k[0];
    const uint32_t t1 = T0[s1 >> 24] ^ T1[(s2 >> 16) & 255] ^ T2[(s3 >> 8) & 255] ^ T3[s0 & 255] ^ k[1];
    const uint32_t t2 = T0[s2 >> 24] ^ T1[(s3 >> 16) & 255] ^ T2[(s0 >> 8) & 255] ^ T3[s1 & 255] ^ k[2];
    const uint32_t t3 = T0[s3 >> 24] ^ T1[(s0 >> 16) & 255] ^ T2[(s1 >> 8) & 255] ^ T3[s2 & 255] ^ k[3];
    s0 = t0; s1 = t1; s2 = t2; s3 = t3;
  }
  // Final round (no MixColumns): pick the S-box byte out of the table whose lane holds 1*s.
  const uint32_t* k = rk + 4 * rounds;
  const uint32_t o0 = (T2[s0 >> 24] & 0xff000000u) ^ (T3[(s1 >> 16) & 255] & 0x00ff0000u) ^
                      (T0[(s2 >> 8) & 255] & 0x0000ff00u) ^ (T1[s3 & 255] & 0x000000ffu) ^ k[0];
  const uint32_t o1 = (T2[s1 >> 24] & 0xff000000u) ^ (T3[(s2 >> 16) & 255] & 0x00ff0000u) ^
                      (T0[(s3 >> 8) & 255] & 0x0000ff00u) ^ (T1[s0 & 255] & 0x000000ffu) ^ k[1];
  const uint32_t o2 = (T2[s2 >> 24] & 0xff000000u) ^ (T3[(s3 >> 16) & 255] & 0x00ff0000u) ^
                      (T0[(s0 >> 8) & 255] & 0x0000ff00u) ^ (T1[s1 & 255] & 0x000000ffu) ^ k[2];
  const uint32_t o3 = (T2[s3 >> 24] & 0xff000000u) ^ (T3[(s0 >> 16) & 255] & 0x00ff0000u) ^
                      (T0[(s1 >> 8) & 255] & 0x0000ff00u) ^ (T1[s2 & 255] & 0x000000ffu) ^ k[3];
  store_be32(out, o0); store_be32(out + 4, o1); store_be32(out + 8, o2); store_be32(out + 12, o3);
}

// Reference T-table block decryption. td: build_td_tables output; drk: inverse_key_schedule output;
// inv_sbox: kInvSbox (or a device copy of it). in and out may alias.
S2MC_AES_HD inline void decrypt_block(const uint32_t* td, const uint8_t* inv_sbox, const uint32_t* drk,
                                      int rounds, const uint8_t* in, uint8_t* out) {
  uint32_t s0 = load_be32(in) ^ drk[0], s1 = load_be32(in + 4) ^ drk[1];
  uint32_t s2 = load_be32(in + 8) ^ drk[2], s3 = load_be32(in + 12) ^ drk[3];
  const uint32_t *T0 = td, *T1 = td + 256, *T2 = td + 512, *T3 = td + 768;
  for (int r = 1; r < rounds; ++r) {
    const uint32_t* k = drk + 4 * r;
    const uint32_t t0 = T0[s0 >> 24] ^ T1[(s3 >> 16) & 255] ^ T2[(s2 >> 8) & 255] ^ T3[s1 & 255] ^ k[0];
    const uint32_t t1 = T0[s1 >> 24] ^ T1[(s0 >> 16) & 255] ^ T2[(s3 >> 8) & 255] ^ T3[s2 & 255] ^ k[1];
    const uint32_t t2 = T0[s2 >> 24] ^ T1[(s1 >> 16) & 255] ^ T2[(s0 >> 8) & 255] ^ T3[s3 & 255] ^ k[2];
    const uint32_t t3 = T0[s3 >> 24] ^ T1[(s2 >> 16) & 255] ^ T2[(s1 >> 8) & 255] ^ T3[s0 & 255] ^ k[3];
    s0 = t0; s1 = t1; s2 = t2; s3 = t3;
  }
  const uint32_t* k = drk + 4 * rounds;
  const uint8_t* I = inv_sbox;
  const uint32_t o0 = (uint32_t(I[s0 >> 24]) << 24) ^ (uint32_t(I[(s3 >> 16) & 255]) << 16) ^
                      (uint32_t(I[(s2 >> 8) & 255]) << 8) ^ uint32_t(I[s1 & 255]) ^ k[0];
  const uint32_t o1 = (uint32_t(I[s1 >> 24]) << 24) ^ (uint32_t(I[(s0 >> 16) & 255]) << 16) ^
                      (uint32_t(I[(s3 >> 8) & 255]) << 8) ^ uint32_t(I[s2 & 255]) ^ k[1];
  const uint32_t o2 = (uint32_t(I[s2 >> 24]) << 24) ^ (uint32_t(I[(s1 >> 16) & 255]) << 16) ^
                      (uint32_t(I[(s0 >> 8) & 255]) << 8) ^ uint32_t(I[s3 & 255]) ^ k[2];
  const uint32_t o3 = (uint32_t(I[s3 >> 24]) << 24) ^ (uint32_t(I[(s2 >> 16) & 255]) << 16) ^
                      (uint32_t(I[(s1 >> 8) & 255]) << 8) ^ uint32_t(I[s0 & 255]) ^ k[3];
  store_be32(out, o0); store_be32(out + 4, o1); store_be32(out + 8, o2); store_be32(out + 12, o3);
}

}  // namespace aes
}  // namespace s2mc

#endif  // S2MC_AES_KEY_SCHEDULE_H
