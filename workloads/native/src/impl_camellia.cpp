// Camellia (RFC 3713) on the CPU with the SP tables of s2mc_cipher/camellia.h (seed 002's table
// approach: eight lookups into four 1 KB tables per F-function). The block state is kept as two
// native 64-bit halves, so CTR makes its counter blocks with 64-bit adds and no byte shuffling.
// kLanes blocks go through the rounds together: one block's Feistel rounds are a serial chain of
// dependent table lookups, and interleaving independent blocks lets the core overlap them.
#include <cstring>

#include "s2mc_aes/aes.h"

namespace s2mc {
namespace aes {
namespace {

using camellia::Subkeys;
constexpr int kLanes = 4;

inline uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}
inline void store64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

// N blocks through the whole cipher; d1/d2 hold the halves (RFC 3713 §2.3.2 / §2.3.3) and receive
// the output halves in output order (C = out1 : out2).
template <int N>
inline void crypt_n(const Subkeys& ks, uint64_t* d1, uint64_t* d2) {
  const uint32_t* sp = camellia::kSpTables.v;
  for (int j = 0; j < N; ++j) {
    d1[j] ^= ks.kw[0];
    d2[j] ^= ks.kw[1];
  }
  const int groups = ks.rounds / 6;
  for (int g = 0; g < groups; ++g) {
    if (g > 0) {
      for (int j = 0; j < N; ++j) {
        d1[j] = camellia::fl(d1[j], ks.ke[2 * g - 2]);
        d2[j] = camellia::flinv(d2[j], ks.ke[2 * g - 1]);
      }
    }
    const uint64_t* k = ks.k + 6 * g;
    for (int r = 0; r < 6; r += 2) {
      for (int j = 0; j < N; ++j) d2[j] ^= camellia::f_sp(sp, d1[j], k[r]);
      for (int j = 0; j < N; ++j) d1[j] ^= camellia::f_sp(sp, d2[j], k[r + 1]);
    }
  }
  for (int j = 0; j < N; ++j) {
    const uint64_t a = d2[j] ^ ks.kw[2], b = d1[j] ^ ks.kw[3];
    d1[j] = a;
    d2[j] = b;
  }
}

bool supported() { return true; }

template <bool Decrypt>
void ecb(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  const Subkeys& ks = Decrypt ? k.cam_dk : k.cam_ek;
  uint64_t d1[kLanes], d2[kLanes];
  size_t i = 0;
  for (; i + kLanes <= nblocks; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) {
      d1[j] = load64(in + 16 * (i + j));
      d2[j] = load64(in + 16 * (i + j) + 8);
    }
    crypt_n<kLanes>(ks, d1, d2);
    for (int j = 0; j < kLanes; ++j) {
      store64(out + 16 * (i + j), d1[j]);
      store64(out + 16 * (i + j) + 8, d2[j]);
    }
  }
  for (; i < nblocks; ++i) {
    d1[0] = load64(in + 16 * i);
    d2[0] = load64(in + 16 * i + 8);
    crypt_n<1>(ks, d1, d2);
    store64(out + 16 * i, d1[0]);
    store64(out + 16 * i + 8, d2[0]);
  }
}

// CTR: the counter is a 128-bit big-endian integer (hi:lo), incremented with a carry from lo.
void ctr(const Key& k, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  uint64_t hi = load64(counter), lo = load64(counter + 8);
  uint64_t d1[kLanes], d2[kLanes];
  while (nbytes >= 16 * size_t(kLanes)) {
    for (int j = 0; j < kLanes; ++j) {
      d1[j] = hi;
      d2[j] = lo;
      if (++lo == 0) ++hi;
    }
    crypt_n<kLanes>(k.cam_ek, d1, d2);
    for (int j = 0; j < kLanes; ++j) {
      store64(out + 16 * j, load64(in + 16 * j) ^ d1[j]);
      store64(out + 16 * j + 8, load64(in + 16 * j + 8) ^ d2[j]);
    }
    in += 16 * kLanes;
    out += 16 * kLanes;
    nbytes -= 16 * kLanes;
  }
  while (nbytes > 0) {
    d1[0] = hi;
    d2[0] = lo;
    if (++lo == 0) ++hi;
    crypt_n<1>(k.cam_ek, d1, d2);
    uint8_t ks[16];
    store64(ks, d1[0]);
    store64(ks + 8, d2[0]);
    const size_t n = nbytes < 16 ? nbytes : 16;
    for (size_t j = 0; j < n; ++j) out[j] = in[j] ^ ks[j];
    in += n;
    out += n;
    nbytes -= n;
  }
}

}  // namespace

extern const Impl kImplCamelliaSp = {"sptable", supported, ecb<false>, ecb<true>, ctr, Cipher::Camellia};

}  // namespace aes
}  // namespace s2mc
