// Seed 002's other CRYPTREC ciphers: SC2000 (here), Hierocrypt-3 (hierocrypt3.cpp);
// ECB and CTR, OpenMP chunks.
//
// SC2000 is written from its specification:
//   [FSE]  T. Shimoyama, H. Yanami, K. Yokoyama, M. Takenaka, K. Itoh, J. Yajima, N. Torii,
//          H. Tanaka, "The Block Cipher SC2000", FSE 2001, LNCS 2355, pp. 312-327 (Fujitsu).
//   [SPEC] Fujitsu, "SC2000 specification", CRYPTREC cipher list,
//          https://www.cryptrec.go.jp/cryptrec_03_spec_cypherlist_files/PDF/09_01jspec.pdf
// The constants below (S6, S5, S4, the 32x32 matrix M, the Order and Index tables of the key
// schedule) are the specification's. Test vectors (tests/test_cryptrec_ciphers.py): [SPEC]'s worked
// example and Fujitsu's NESSIE submission (testvectors128/192/256.txt in
// https://www.cosic.esat.kuleuven.be/nessie/workshop/submissions/sc2000.zip) and NESSIE's
// https://www.cosic.esat.kuleuven.be/nessie/testvectors/bc/sc2000/SC2000-*-128.test-vectors
//
// Words are big-endian, bit 0 of a word in the specification is its most significant bit.
#include "s2mc_cryptrec/cryptrec.h"
#include "s2mc_cipher/key_schedule.h"  // load_be32, store_be32, counter_add

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace s2mc {
namespace cryptrec {

namespace {

using s2mc::aes::counter_add;
using s2mc::aes::load_be32;
using s2mc::aes::store_be32;

// [SPEC] 2.x: the 6-bit and 5-bit S-boxes of the S function.
constexpr uint8_t kS6[64] = {
    47, 59, 25, 42, 15, 23, 28, 39, 26, 38, 36, 19, 60, 24, 29, 56,
    37, 63, 20, 61, 55, 2,  30, 44, 9,  10, 6,  22, 53, 48, 51, 11,
    62, 52, 35, 18, 14, 46, 0,  54, 17, 40, 27, 4,  31, 8,  5,  12,
    3,  16, 41, 34, 33, 7,  45, 49, 50, 58, 1,  21, 43, 57, 32, 13};
constexpr uint8_t kS5[32] = {20, 26, 7, 31, 19, 12, 10, 15, 22, 30, 13, 14, 4, 24, 9, 18,
                             27, 11, 1, 21, 6,  16, 2,  28, 23, 5,  8,  3,  0, 17, 29, 25};
// The 4-bit S-box of the B function (applied bit-sliced across the four words) and its inverse.
constexpr uint8_t kS4[16] = {2, 5, 10, 12, 7, 15, 1, 11, 13, 6, 0, 9, 4, 8, 3, 14};
// Row j of M is added (XOR) to the output when bit j (0 = most significant) of the input is set.
constexpr uint32_t kM[32] = {
    0xd0c19225, 0xa5a2240a, 0x1b84d250, 0xb728a4a1, 0x6a704902, 0x85dddbe6, 0x766ff4a4, 0xecdfe128,
    0xafd13e94, 0xdf837d09, 0xbb27fa52, 0x695059ac, 0x52a1bb58, 0xcc322f1d, 0x1844565b, 0xb4a8acf6,
    0x34235438, 0x6847a851, 0xe48c0cbb, 0xcd181136, 0x9a112a0c, 0x43ec6d0e, 0x87d8d27d, 0x487dc995,
    0x90fb9b4b, 0xa1f63697, 0xfc513ed9, 0x78a37d93, 0x8d16c5df, 0x9e0c8bbe, 0x3c381f7c, 0xe9fb0779};
// Key schedule: which intermediate-key branch (a, b, c, d = 0..3) and which of its three words
// feed X, Y, Z, W of extended-key word n (Order row (n + n/36) mod 12, Index row n mod 9).
constexpr uint8_t kOrder[12][4] = {{0, 1, 2, 3}, {1, 0, 3, 2}, {2, 3, 0, 1}, {3, 2, 1, 0},
                                   {0, 2, 3, 1}, {1, 3, 2, 0}, {2, 0, 1, 3}, {3, 1, 0, 2},
                                   {0, 3, 1, 2}, {1, 2, 0, 3}, {2, 1, 3, 0}, {3, 0, 2, 1}};
constexpr uint8_t kIndex[9][4] = {{0, 0, 0, 0}, {1, 1, 1, 1}, {2, 2, 2, 2}, {0, 1, 0, 1}, {1, 2, 1, 2},
                                  {2, 0, 2, 0}, {0, 2, 0, 2}, {1, 0, 1, 0}, {2, 1, 2, 1}};
constexpr uint32_t kMask5 = 0x55555555u, kMask3 = 0x33333333u;

constexpr uint32_t rotl(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

uint32_t matrix_m(uint32_t x) {
  uint32_t y = 0;
  for (int j = 0; j < 32; ++j)
    if ((x >> (31 - j)) & 1u) y ^= kM[j];
  return y;
}

// M is linear, so M(S(x)) is the XOR of M applied to each S-box output in its field: six tables
// (the software form of the F function's S and M layers, as the SP tables of Camellia). Adjacent
// fields can share one table indexed by both (seed 002 §3.7): (6,5,5,5,5,6) = six lookups in 1 KB,
// (6,10,10,6) = four in 8.5 KB, (11,10,11) = three in 20 KB. The implementation names say which.
enum class MsLayout { Six, Four, Three };
struct MsTables {
  uint32_t hi6[64], mid[4][32], lo6[64];  // (6,5,5,5,5,6)
  uint32_t m10[2][1024];                  // (6,10,10,6): the two middle pairs of 5-bit fields
  uint32_t e11[2][2048], c10[1024];       // (11,10,11): 6+5 bits, 5+5, 5+6
  MsTables() {
    for (uint32_t v = 0; v < 64; ++v) {
      hi6[v] = matrix_m(uint32_t(kS6[v]) << 26);
      lo6[v] = matrix_m(uint32_t(kS6[v]));
    }
    for (int f = 0; f < 4; ++f)  // the 5-bit fields at bits 21, 16, 11, 6 (from the least significant)
      for (uint32_t v = 0; v < 32; ++v) mid[f][v] = matrix_m(uint32_t(kS5[v]) << (21 - 5 * f));
    for (uint32_t v = 0; v < 1024; ++v) {
      m10[0][v] = mid[0][v >> 5] ^ mid[1][v & 31];
      m10[1][v] = mid[2][v >> 5] ^ mid[3][v & 31];
      c10[v] = mid[1][v >> 5] ^ mid[2][v & 31];
    }
    for (uint32_t v = 0; v < 2048; ++v) {
      e11[0][v] = hi6[v >> 5] ^ mid[0][v & 31];
      e11[1][v] = mid[3][v >> 6] ^ lo6[v & 63];
    }
  }
};
const MsTables kMs;

template <MsLayout L>
inline uint32_t ms(uint32_t x) {
  if constexpr (L == MsLayout::Three)
    return kMs.e11[0][x >> 21] ^ kMs.c10[(x >> 11) & 1023] ^ kMs.e11[1][x & 2047];
  else if constexpr (L == MsLayout::Four)
    return kMs.hi6[x >> 26] ^ kMs.m10[0][(x >> 16) & 1023] ^ kMs.m10[1][(x >> 6) & 1023] ^ kMs.lo6[x & 63];
  else
    return kMs.hi6[x >> 26] ^ kMs.mid[0][(x >> 21) & 31] ^ kMs.mid[1][(x >> 16) & 31] ^
           kMs.mid[2][(x >> 11) & 31] ^ kMs.mid[3][(x >> 6) & 31] ^ kMs.lo6[x & 63];
}

// The B function bit-sliced: output bit k of the 4-bit S-box as a polynomial over GF(2) in its
// inputs (algebraic normal form, by the Moebius transform of the table), evaluated on whole words.
// Nibble of bit position i = a_i b_i c_i d_i (a most significant); monomial m's bit 3 is a ... bit 0 d.
struct Anf {
  uint16_t coef[4] = {};  // coef[k] bit m: monomial m is in output bit k (k = 3 is the e word)
};
constexpr Anf make_anf(const uint8_t (&s)[16]) {
  Anf r{};
  for (int k = 0; k < 4; ++k) {
    uint8_t t[16] = {};
    for (int x = 0; x < 16; ++x) t[x] = (s[x] >> k) & 1;
    for (int bit = 1; bit < 16; bit <<= 1)
      for (int x = 0; x < 16; ++x)
        if (x & bit) t[x] ^= t[x ^ bit];
    for (int m = 0; m < 16; ++m)
      if (t[m]) r.coef[k] = uint16_t(r.coef[k] | (1u << m));
  }
  return r;
}
constexpr uint8_t invert4(const uint8_t (&s)[16], int y) {
  for (int x = 0; x < 16; ++x)
    if (s[x] == y) return uint8_t(x);
  return 0;
}
struct Inv4 {
  uint8_t t[16] = {};
};
constexpr Inv4 make_inv4() {
  Inv4 r{};
  for (int y = 0; y < 16; ++y) r.t[y] = invert4(kS4, y);
  return r;
}
constexpr Inv4 kS4InvHolder = make_inv4();
constexpr Anf kAnfB = make_anf(kS4);
constexpr Anf kAnfBInv = make_anf(kS4InvHolder.t);

template <const Anf& A>
inline void bfunc(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d) {
  uint32_t mono[16];
  mono[0] = 0xffffffffu;
#pragma GCC unroll 16
  for (int m = 1; m < 16; ++m) {
    const int low = m & -m;  // build each monomial from a smaller one times one variable
    const uint32_t v = low == 8 ? a : low == 4 ? b : low == 2 ? c : d;
    mono[m] = mono[m ^ low] & v;
  }
  uint32_t o[4] = {0, 0, 0, 0};
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k)
#pragma GCC unroll 16
    for (int m = 0; m < 16; ++m)
      if ((A.coef[k] >> m) & 1u) o[k] ^= mono[m];
  a = o[3];
  b = o[2];
  c = o[1];
  d = o[0];
}

// F(x, y) = L(M(S(x)), M(S(y))); R xor-s it into (a, b). A pair R x R with the cross connection
// (a,b,c,d) -> (c,d,a,b) in between is its own inverse, so decryption uses it unchanged.
template <MsLayout L>
inline void rpair(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d, uint32_t mask) {
  uint32_t s = ms<L>(c), t = ms<L>(d);
  a ^= (s & mask) ^ t;
  b ^= (t & ~mask) ^ s;
  s = ms<L>(a);
  t = ms<L>(b);
  c ^= (s & mask) ^ t;
  d ^= (t & ~mask) ^ s;
  std::swap(a, c);
  std::swap(b, d);
}

inline void ifunc(uint32_t& a, uint32_t& b, uint32_t& c, uint32_t& d, const uint32_t* k) {
  a ^= k[0];
  b ^= k[1];
  c ^= k[2];
  d ^= k[3];
}

}  // namespace

Sc2000Key sc2000_make_key(const uint8_t* key, int key_bits) {
  if (key_bits != 128 && key_bits != 192 && key_bits != 256)
    throw std::invalid_argument("SC2000 key must be 16, 24 or 32 bytes (got " + std::to_string(key_bits / 8) + ")");
  Sc2000Key k;
  k.key_bits = key_bits;
  k.rounds = key_bits == 128 ? 6 : 7;
  // [SPEC] key schedule: a 128-bit key is repeated to 256 bits, a 192-bit key gets its first 64 bits again.
  uint32_t uk[8];
  const int words = key_bits / 32;
  for (int i = 0; i < words; ++i) uk[i] = load_be32(key + 4 * i);
  for (int i = words; i < 8; ++i) uk[i] = uk[i - words];
  uint32_t im[4][3];  // intermediate keys a_i, b_i, c_i, d_i
  for (int j = 0; j < 4; ++j) {
    const uint32_t x = ms<MsLayout::Six>(uk[2 * j]), y = ms<MsLayout::Six>(uk[2 * j + 1]);
    for (int i = 0; i < 3; ++i)
      im[j][i] = ms<MsLayout::Six>((x + ms<MsLayout::Six>(uint32_t(4 * i + j))) ^ (y * uint32_t(i + 1)));
  }
  const int nek = 8 * k.rounds + 8;
  for (int n = 0; n < nek; ++n) {
    const uint8_t* o = kOrder[(n + n / 36) % 12];
    const uint8_t* s = kIndex[n % 9];
    const uint32_t X = im[o[0]][s[0]], Y = im[o[1]][s[1]], Z = im[o[2]][s[2]], W = im[o[3]][s[3]];
    k.ek[n] = (rotl(X, 1) + Y) ^ rotl(rotl(Z, 1) - W, 1);
  }
  return k;
}

// N blocks at once: each step's N chains of table lookups are independent, so the core overlaps
// them (one block alone is a chain of dependent loads).
template <int N, MsLayout L>
inline void encrypt_n(const Sc2000Key& k, const uint8_t* in, uint8_t* out) {
  uint32_t a[N], b[N], c[N], d[N];
  for (int j = 0; j < N; ++j) {
    a[j] = load_be32(in + 16 * j);
    b[j] = load_be32(in + 16 * j + 4);
    c[j] = load_be32(in + 16 * j + 8);
    d[j] = load_be32(in + 16 * j + 12);
  }
  const uint32_t* ek = k.ek;
  for (int r = 0; r < k.rounds; ++r, ek += 8) {
    const uint32_t mask = (r & 1) ? kMask3 : kMask5;
    for (int j = 0; j < N; ++j) {
      ifunc(a[j], b[j], c[j], d[j], ek);
      bfunc<kAnfB>(a[j], b[j], c[j], d[j]);
      ifunc(a[j], b[j], c[j], d[j], ek + 4);
    }
    for (int j = 0; j < N; ++j) rpair<L>(a[j], b[j], c[j], d[j], mask);
  }
  for (int j = 0; j < N; ++j) {
    ifunc(a[j], b[j], c[j], d[j], ek);
    bfunc<kAnfB>(a[j], b[j], c[j], d[j]);
    ifunc(a[j], b[j], c[j], d[j], ek + 4);
    store_be32(out + 16 * j, a[j]);
    store_be32(out + 16 * j + 4, b[j]);
    store_be32(out + 16 * j + 8, c[j]);
    store_be32(out + 16 * j + 12, d[j]);
  }
}
constexpr int kLanes = 4;

template <MsLayout L>
void decrypt_one(const Sc2000Key& k, const uint8_t in[16], uint8_t out[16]) {
  uint32_t a = load_be32(in), b = load_be32(in + 4), c = load_be32(in + 8), d = load_be32(in + 12);
  const uint32_t* ek = k.ek + 8 * k.rounds;
  ifunc(a, b, c, d, ek + 4);
  bfunc<kAnfBInv>(a, b, c, d);
  ifunc(a, b, c, d, ek);
  for (int r = k.rounds - 1; r >= 0; --r) {
    ek -= 8;
    rpair<L>(a, b, c, d, (r & 1) ? kMask3 : kMask5);
    ifunc(a, b, c, d, ek + 4);
    bfunc<kAnfBInv>(a, b, c, d);
    ifunc(a, b, c, d, ek);
  }
  store_be32(out, a);
  store_be32(out + 4, b);
  store_be32(out + 8, c);
  store_be32(out + 12, d);
}

void sc2000_encrypt_block(const Sc2000Key& k, const uint8_t in[16], uint8_t out[16]) {
  encrypt_n<1, MsLayout::Six>(k, in, out);
}
void sc2000_decrypt_block(const Sc2000Key& k, const uint8_t in[16], uint8_t out[16]) {
  decrypt_one<MsLayout::Six>(k, in, out);
}

namespace {
// ECB / CTR over SC2000 with one table layout.
template <MsLayout L>
void sc2000_ecb(const Sc2000Key& k, bool decrypt, const uint8_t* in, uint8_t* out, size_t nblocks) {
  size_t i = 0;
  if (!decrypt)
    for (; i + kLanes <= nblocks; i += kLanes) encrypt_n<kLanes, L>(k, in + 16 * i, out + 16 * i);
  for (; i < nblocks; ++i) {
    if (decrypt)
      decrypt_one<L>(k, in + 16 * i, out + 16 * i);
    else
      encrypt_n<1, L>(k, in + 16 * i, out + 16 * i);
  }
}
}  // namespace

const std::vector<std::string>& impl_names(const std::string& cipher) {
  static const std::vector<std::string> sc = {"table-11-10-11", "table-6-10-10-6", "table-6-5-5-5-5-6"};
  static const std::vector<std::string> hc = {"table"};
  static const std::vector<std::string> none;
  return cipher == "sc2000" ? sc : cipher == "hierocrypt3" ? hc : none;
}

const std::vector<std::string>& cipher_names() {
  static const std::vector<std::string> names = {"sc2000", "hierocrypt3"};
  return names;
}

Cipher::Cipher(const std::string& name, const uint8_t* key, size_t key_len, const std::string& impl)
    : name_(name) {
  if (name != "sc2000" && name != "hierocrypt3")
    throw std::invalid_argument("unknown cipher '" + name + "' (known: sc2000, hierocrypt3)");
  const auto& impls = impl_names(name);
  impl_ = impl == "auto" ? impls.front() : impl;
  const auto it = std::find(impls.begin(), impls.end(), impl_);
  if (it == impls.end()) {
    std::string known;
    for (const auto& i : impls) known += (known.empty() ? "" : ", ") + i;
    throw std::invalid_argument("unknown implementation '" + impl + "' of " + name + " (known: auto, " + known + ")");
  }
  layout_ = int(it - impls.begin());
  if (key_len != 16 && key_len != 24 && key_len != 32)
    throw std::invalid_argument(name + " key must be 16, 24 or 32 bytes (got " + std::to_string(key_len) + ")");
  key_bits_ = int(key_len) * 8;
  if (name == "sc2000")
    sc2000_ = sc2000_make_key(key, key_bits_);
  else
    hc3_ = hc3_make_key(key, key_bits_);
}

void Cipher::ecb(bool decrypt, const uint8_t* in, uint8_t* out, size_t nblocks) const {
  if (name_ == "hierocrypt3") {
    for (size_t i = 0; i < nblocks; ++i) {
      if (decrypt)
        hc3_decrypt_block(hc3_, in + 16 * i, out + 16 * i);
      else
        hc3_encrypt_block(hc3_, in + 16 * i, out + 16 * i);
    }
    return;
  }
  if (layout_ == 0)
    sc2000_ecb<MsLayout::Three>(sc2000_, decrypt, in, out, nblocks);
  else if (layout_ == 1)
    sc2000_ecb<MsLayout::Four>(sc2000_, decrypt, in, out, nblocks);
  else
    sc2000_ecb<MsLayout::Six>(sc2000_, decrypt, in, out, nblocks);
}

void Cipher::ctr(const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) const {
  uint8_t ctr[kLanes * 16], ks[kLanes * 16];
  std::memcpy(ctr, counter, 16);
  for (size_t off = 0; off < nbytes; off += kLanes * 16) {
    for (int j = 1; j < kLanes; ++j) {  // the next counters: the previous one plus 1 (mod 2^128)
      std::memcpy(ctr + 16 * j, ctr + 16 * (j - 1), 16);
      for (int i = 15; i >= 0 && ++ctr[16 * j + i] == 0; --i) {
      }
    }
    if (name_ == "hierocrypt3")
      for (int j = 0; j < kLanes; ++j) hc3_encrypt_block(hc3_, ctr + 16 * j, ks + 16 * j);
    else if (layout_ == 0)
      encrypt_n<kLanes, MsLayout::Three>(sc2000_, ctr, ks);
    else if (layout_ == 1)
      encrypt_n<kLanes, MsLayout::Four>(sc2000_, ctr, ks);
    else
      encrypt_n<kLanes, MsLayout::Six>(sc2000_, ctr, ks);
    const size_t n = std::min<size_t>(kLanes * 16, nbytes - off);
    for (size_t i = 0; i < n; ++i) out[off + i] = uint8_t(in[off + i] ^ ks[i]);
    std::memcpy(ctr, ctr + 16 * (kLanes - 1), 16);
    for (int i = 15; i >= 0 && ++ctr[i] == 0; --i) {
    }
  }
}

namespace {

// Splits nblocks whole blocks into min(threads, nblocks) contiguous chunks, one per OpenMP thread,
// and calls chunk(first block, block count) for each.
template <typename Chunk>
void for_each_chunk(size_t nblocks, int threads, Chunk&& chunk) {
  if (threads < 1) throw std::invalid_argument("threads must be >= 1 (got " + std::to_string(threads) + ")");
  if (nblocks == 0) return;
  const int t = int(std::min<size_t>(size_t(threads), nblocks));
  const size_t per = (nblocks + size_t(t) - 1) / size_t(t);
#pragma omp parallel for schedule(static) num_threads(t)
  for (int i = 0; i < t; ++i) {
    const size_t b0 = size_t(i) * per;
    if (b0 < nblocks) chunk(b0, std::min(per, nblocks - b0));
  }
}

}  // namespace

void ecb_parallel(const Cipher& c, bool decrypt, const uint8_t* in, uint8_t* out, size_t nbytes, int threads) {
  if (nbytes % 16 != 0) throw std::invalid_argument("ECB data length must be a multiple of 16 bytes");
  for_each_chunk(nbytes / 16, threads,
                 [&](size_t b0, size_t nb) { c.ecb(decrypt, in + 16 * b0, out + 16 * b0, nb); });
}

void ctr_parallel(const Cipher& c, const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t nbytes,
                  int threads) {
  for_each_chunk((nbytes + 15) / 16, threads, [&](size_t b0, size_t nb) {
    uint8_t ctr[16];
    counter_add(iv, uint64_t(b0), ctr);
    const size_t off = 16 * b0;
    c.ctr(ctr, in + off, out + off, std::min(16 * nb, nbytes - off));
  });
}

}  // namespace cryptrec
}  // namespace s2mc
