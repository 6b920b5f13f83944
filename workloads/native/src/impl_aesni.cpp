// AES-NI (128-bit) implementation: 8 blocks interleaved per iteration to hide aesenc latency.
// Compiled with a function-level target attribute, so the library builds for any x86-64 and this
// path only runs when the CPU reports AES-NI.
#include <immintrin.h>

#include <cstring>

#include "s2mc_aes/aes.h"

#define S2MC_TGT_AESNI __attribute__((target("aes,sse2,ssse3,sse4.1")))
#define S2MC_INLINE_AESNI __attribute__((always_inline, target("aes,sse2,ssse3,sse4.1"))) inline

namespace s2mc {
namespace aes {
namespace {

constexpr int W = 8;  // blocks in flight

bool supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") && __builtin_cpu_supports("sse4.1");
}

uint64_t load_be64(const uint8_t* p) {
  return (uint64_t(load_be32(p)) << 32) | load_be32(p + 4);
}

S2MC_INLINE_AESNI __m128i bswap128(__m128i x) {
  return _mm_shuffle_epi8(x, _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0));
}

S2MC_INLINE_AESNI void load_keys(const uint8_t (*src)[16], int rounds, __m128i* rk) {
  for (int r = 0; r <= rounds; ++r) rk[r] = _mm_load_si128(reinterpret_cast<const __m128i*>(src[r]));
}

S2MC_INLINE_AESNI void enc_w(__m128i* b, const __m128i* rk, int rounds) {
  for (int j = 0; j < W; ++j) b[j] = _mm_xor_si128(b[j], rk[0]);
  for (int r = 1; r < rounds; ++r)
    for (int j = 0; j < W; ++j) b[j] = _mm_aesenc_si128(b[j], rk[r]);
  for (int j = 0; j < W; ++j) b[j] = _mm_aesenclast_si128(b[j], rk[rounds]);
}

S2MC_INLINE_AESNI __m128i enc1(__m128i b, const __m128i* rk, int rounds) {
  b = _mm_xor_si128(b, rk[0]);
  for (int r = 1; r < rounds; ++r) b = _mm_aesenc_si128(b, rk[r]);
  return _mm_aesenclast_si128(b, rk[rounds]);
}

S2MC_INLINE_AESNI __m128i dec1(__m128i b, const __m128i* rk, int rounds) {
  b = _mm_xor_si128(b, rk[0]);
  for (int r = 1; r < rounds; ++r) b = _mm_aesdec_si128(b, rk[r]);
  return _mm_aesdeclast_si128(b, rk[rounds]);
}

S2MC_TGT_AESNI void ecb_encrypt(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  __m128i rk[kMaxRounds + 1];
  load_keys(k.ek_bytes, k.rounds, rk);
  size_t i = 0;
  for (; i + W <= nblocks; i += W) {
    __m128i b[W];
    for (int j = 0; j < W; ++j) b[j] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * (i + j)));
    enc_w(b, rk, k.rounds);
    for (int j = 0; j < W; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * (i + j)), b[j]);
  }
  for (; i < nblocks; ++i) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * i), enc1(b, rk, k.rounds));
  }
}

S2MC_TGT_AESNI void ecb_decrypt(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  __m128i rk[kMaxRounds + 1];
  load_keys(k.dk_bytes, k.rounds, rk);
  size_t i = 0;
  for (; i + W <= nblocks; i += W) {
    __m128i b[W];
    for (int j = 0; j < W; ++j) {
      b[j] = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * (i + j))), rk[0]);
    }
    for (int r = 1; r < k.rounds; ++r)
      for (int j = 0; j < W; ++j) b[j] = _mm_aesdec_si128(b[j], rk[r]);
    for (int j = 0; j < W; ++j) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * (i + j)), _mm_aesdeclast_si128(b[j], rk[k.rounds]));
    }
  }
  for (; i < nblocks; ++i) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * i), dec1(b, rk, k.rounds));
  }
}

S2MC_TGT_AESNI void ctr(const Key& k, const uint8_t counter[16], const uint8_t* in, uint8_t* out,
                        size_t nbytes) {
  __m128i rk[kMaxRounds + 1];
  load_keys(k.ek_bytes, k.rounds, rk);
  // The counter as a 128-bit integer in two native halves; blocks are made by byte-reversal.
  uint64_t hi = load_be64(counter), lo = load_be64(counter + 8);
  while (nbytes >= 16 * W) {
    __m128i b[W];
    if (lo <= ~uint64_t(0) - (W - 1)) {  // no carry out of the low half inside this batch
      const __m128i base = _mm_set_epi64x(int64_t(hi), int64_t(lo));
      for (int j = 0; j < W; ++j) b[j] = bswap128(_mm_add_epi64(base, _mm_set_epi64x(0, j)));
    } else {
      for (int j = 0; j < W; ++j) {
        const uint64_t l = lo + uint64_t(j), h = hi + (l < lo ? 1 : 0);
        b[j] = bswap128(_mm_set_epi64x(int64_t(h), int64_t(l)));
      }
    }
    enc_w(b, rk, k.rounds);
    for (int j = 0; j < W; ++j) {
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * j));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * j), _mm_xor_si128(d, b[j]));
    }
    const uint64_t old = lo;
    lo += W;
    if (lo < old) ++hi;
    in += 16 * W;
    out += 16 * W;
    nbytes -= 16 * W;
  }
  while (nbytes > 0) {
    const __m128i ks = enc1(bswap128(_mm_set_epi64x(int64_t(hi), int64_t(lo))), rk, k.rounds);
    if (++lo == 0) ++hi;
    if (nbytes >= 16) {
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm_xor_si128(d, ks));
      in += 16;
      out += 16;
      nbytes -= 16;
    } else {
      alignas(16) uint8_t buf[16];
      _mm_store_si128(reinterpret_cast<__m128i*>(buf), ks);
      for (size_t j = 0; j < nbytes; ++j) out[j] = in[j] ^ buf[j];
      nbytes = 0;
    }
  }
}

}  // namespace

extern const Impl kImplAesni = {"aesni", supported, ecb_encrypt, ecb_decrypt, ctr};

}  // namespace aes
}  // namespace s2mc
