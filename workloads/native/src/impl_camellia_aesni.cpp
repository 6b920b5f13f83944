// Camellia with AES-NI (16 blocks byte-sliced in 16 xmm registers) and VAES (32 blocks in ymm
// registers, 16 per 128-bit lane; the same code, camellia_sliced_body.hpp), the S-boxes computed with
// AESENCLAST. Camellia's SBOX1 and AES's S-box are both inversion in GF(2^8) between affine maps
// (RFC 3713 §2.4.4 says SBOX1 is an inversion; FIPS-197 §5.1.1 that AES's is), so
//   SBOX1(x) = Lpost(SubBytes(L1 x ^ k)) ^ c
// for linear maps L1, Lpost and constants k, c. They are not written down here: derive() finds
// them at start-up from SBOX1 alone (a guess-and-determine search for the linear equivalence
// between x -> SBOX1(x ^ 0xc5) ^ 0x6e and the inversion, which maps 0 to 0) and checks the result
// on all 256 inputs; if anything failed the implementation reports itself unsupported.
// SBOX2/3 are SBOX1 rotated (folded into Lpost), SBOX4(x) = SBOX1(x <<< 1) (folded into L1).
// Each affine map of a byte is two 16-entry nibble lookups (PSHUFB).
#include <immintrin.h>

#include <cstring>
#include <vector>

#include "s2mc_aes/aes.h"

namespace s2mc {
namespace aes {
namespace {

using camellia::Subkeys;

// --- the affine maps, derived from SBOX1 -----------------------------------------------------------

uint8_t gf_mul(uint8_t a, uint8_t b) {  // AES field, x^8 + x^4 + x^3 + x + 1
  uint8_t r = 0;
  while (b) {
    if (b & 1) r ^= a;
    a = uint8_t((a << 1) ^ ((a & 0x80) ? 0x1b : 0));
    b >>= 1;
  }
  return r;
}
uint8_t rotl8(uint8_t x, int n) { return uint8_t((x << n) | (x >> (8 - n))); }

struct Filters {
  // pre[v]: x -> L1 x ^ k (v = 0), x -> L1 (x <<< 1) ^ k (v = 1, SBOX4);
  // post[v]: z -> Lpost z ^ c, then <<< 0, 1, 7 (SBOX1/4, SBOX2, SBOX3). lo: low nibble, hi: high.
  alignas(16) uint8_t pre_lo[2][16], pre_hi[2][16], post_lo[3][16], post_hi[3][16];
  bool ok = false;
};

// A partial linear map on GF(2)^8 known on a subspace: set() adds a point and all its sums with
// the known ones, and fails on a contradiction.
struct Partial {
  int16_t v[256];
  std::vector<uint8_t> known;
  Partial() {
    for (auto& e : v) e = -1;
    v[0] = 0;
    known.push_back(0);
  }
  bool set(uint8_t x, uint8_t y) {
    if (v[x] >= 0) return v[x] == y;
    std::vector<uint8_t> add;
    for (uint8_t k : known) {
      const uint8_t a = uint8_t(x ^ k), b = uint8_t(y ^ v[k]);
      if (v[a] >= 0 && v[a] != b) return false;
      add.push_back(a);
      v[a] = b;
    }
    known.insert(known.end(), add.begin(), add.end());
    return true;
  }
};

Filters derive() {
  Filters f;
  uint8_t inv[256] = {0};
  for (int a = 1; a < 256; ++a)
    for (int b = 1; b < 256; ++b)
      if (gf_mul(uint8_t(a), uint8_t(b)) == 1) { inv[a] = uint8_t(b); break; }
  // t(x) = SBOX1(x ^ 0xc5) ^ 0x6e maps 0 to 0 (SBOX1[0xc5] = 0x6e): t = L2 o inv o L1.
  uint8_t t[256], t_inv[256];
  for (int x = 0; x < 256; ++x) t[x] = camellia::kSbox1[x ^ 0xc5] ^ 0x6e;
  for (int x = 0; x < 256; ++x) t_inv[t[x]] = uint8_t(x);
  if (t[0] != 0) return f;
  // inv(a x) = a^-1 inv(x): L1 can be scaled so that L1(1) = 1; then guess L1(2) and propagate.
  for (int guess = 2; guess < 256; ++guess) {
    Partial l1, l2i;  // L1 and L2^-1
    bool good = l1.set(1, 1) && l1.set(2, uint8_t(guess));
    for (bool changed = true; good && changed;) {
      changed = false;
      for (size_t i = 0; good && i < l1.known.size(); ++i) {  // L2^-1(t(x)) = inv(L1 x)
        const uint8_t x = l1.known[i], a = t[x], b = inv[l1.v[x]];
        if (l2i.v[a] < 0) changed = true;
        good = l2i.set(a, b);
      }
      for (size_t i = 0; good && i < l2i.known.size(); ++i) {  // L1(t^-1(a)) = inv(L2^-1 a)
        const uint8_t a = l2i.known[i], x = t_inv[a], y = inv[l2i.v[a]];
        if (l1.v[x] < 0) changed = true;
        good = l1.set(x, y);
      }
    }
    if (!good || l1.known.size() != 256 || l2i.known.size() != 256) continue;
    uint8_t L1[256], L2[256];
    bool bijective = true;
    bool seen[256] = {false};
    for (int x = 0; x < 256; ++x) {
      L1[x] = uint8_t(l1.v[x]);
      if (seen[l2i.v[x]]) bijective = false;
      seen[l2i.v[x]] = true;
      L2[l2i.v[x]] = uint8_t(x);
    }
    if (!bijective) continue;
    // AES: SubBytes(y) = M inv(y) ^ 0x63 (FIPS-197 §5.1.1), so inv(y) = M^-1(SubBytes(y) ^ 0x63) and
    // SBOX1(x) = L2 M^-1 (SubBytes(L1 x ^ L1 0xc5) ^ 0x63) ^ 0x6e.
    uint8_t m_inv[256];
    for (int b = 0; b < 256; ++b) {
      const uint8_t m = b ^ rotl8(uint8_t(b), 1) ^ rotl8(uint8_t(b), 2) ^ rotl8(uint8_t(b), 3) ^ rotl8(uint8_t(b), 4);
      m_inv[m] = uint8_t(b);
    }
    uint8_t lpost[256];
    for (int z = 0; z < 256; ++z) lpost[z] = L2[m_inv[z]];
    const uint8_t k = L1[0xc5], c = uint8_t(lpost[0x63] ^ 0x6e);
    bool all = true;
    for (int x = 0; x < 256 && all; ++x)
      all = uint8_t(lpost[kSbox[L1[x] ^ k]] ^ c) == camellia::kSbox1[x];
    if (!all) continue;
    for (int n = 0; n < 16; ++n) {
      f.pre_lo[0][n] = L1[n] ^ k;
      f.pre_hi[0][n] = L1[n << 4];
      f.pre_lo[1][n] = L1[rotl8(uint8_t(n), 1)] ^ k;
      f.pre_hi[1][n] = L1[rotl8(uint8_t(n << 4), 1)];
      const int rot[3] = {0, 1, 7};
      for (int v = 0; v < 3; ++v) {
        f.post_lo[v][n] = rot[v] ? rotl8(uint8_t(lpost[n] ^ c), rot[v]) : uint8_t(lpost[n] ^ c);
        f.post_hi[v][n] = rot[v] ? rotl8(lpost[n << 4], rot[v]) : lpost[n << 4];
      }
    }
    f.ok = true;
    return f;
  }
  return f;
}

const Filters& filters() {
  static const Filters f = derive();
  return f;
}

// --- the byte-sliced cipher, for xmm (AES-NI) and ymm (VAES) -------------------------------------

// The rest (fewer than a batch, a partial block) goes through the portable SP-table core.
void tail_ecb(const Subkeys& ks, const uint8_t* in, uint8_t* out, size_t nblocks) {
  for (size_t i = 0; i < nblocks; ++i) camellia::encrypt_block(camellia::kSpTables.v, ks, in + 16 * i, out + 16 * i);
}

inline void put_be64(uint8_t* p, uint64_t v) {
  v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}
inline uint64_t get_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return __builtin_bswap64(v);
}

namespace x128 {  // AES-NI: 16 blocks in xmm registers
#define V __m128i
constexpr int kLanes = 1;
#define S2MC_CAM_TARGET __attribute__((target("aes,ssse3,sse4.1")))
#define VXOR _mm_xor_si128
#define VAND _mm_and_si128
#define VOR _mm_or_si128
#define VADD8 _mm_add_epi8
#define VSRLI16 _mm_srli_epi16
#define VSHUF8 _mm_shuffle_epi8
#define VAESLAST _mm_aesenclast_si128
#define VZERO _mm_setzero_si128
#define VSET1_8 _mm_set1_epi8
#define VUNPACKLO8 _mm_unpacklo_epi8
#define VUNPACKHI8 _mm_unpackhi_epi8
#define VUNPACKLO16 _mm_unpacklo_epi16
#define VUNPACKHI16 _mm_unpackhi_epi16
#define VUNPACKLO32 _mm_unpacklo_epi32
#define VUNPACKHI32 _mm_unpackhi_epi32
#define VUNPACKLO64 _mm_unpacklo_epi64
#define VUNPACKHI64 _mm_unpackhi_epi64
#define VBCAST16(p) _mm_load_si128(reinterpret_cast<const __m128i*>(p))
#define VLOADROW(in, r) _mm_loadu_si128(reinterpret_cast<const __m128i*>((in) + 16 * (r)))
#define VSTOREROW(out, r, v) _mm_storeu_si128(reinterpret_cast<__m128i*>((out) + 16 * (r)), (v))
#include "camellia_sliced_body.hpp"  // it #undefs the macros above

bool supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") && __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
         filters().ok;
}
}  // namespace x128

namespace x256 {  // VAES + AVX2: 32 blocks in ymm registers, 16 per 128-bit lane
#define V __m256i
constexpr int kLanes = 2;
#define S2MC_CAM_TARGET __attribute__((target("aes,avx2,vaes")))
#define VXOR _mm256_xor_si256
#define VAND _mm256_and_si256
#define VOR _mm256_or_si256
#define VADD8 _mm256_add_epi8
#define VSRLI16 _mm256_srli_epi16
#define VSHUF8 _mm256_shuffle_epi8
#define VAESLAST _mm256_aesenclast_epi128
#define VZERO _mm256_setzero_si256
#define VSET1_8 _mm256_set1_epi8
#define VUNPACKLO8 _mm256_unpacklo_epi8
#define VUNPACKHI8 _mm256_unpackhi_epi8
#define VUNPACKLO16 _mm256_unpacklo_epi16
#define VUNPACKHI16 _mm256_unpackhi_epi16
#define VUNPACKLO32 _mm256_unpacklo_epi32
#define VUNPACKHI32 _mm256_unpackhi_epi32
#define VUNPACKLO64 _mm256_unpacklo_epi64
#define VUNPACKHI64 _mm256_unpackhi_epi64
#define VBCAST16(p) _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(p)))
#define VLOADROW(in, r)                                                        \
  _mm256_loadu2_m128i(reinterpret_cast<const __m128i*>((in) + 16 * ((r) + 16)), \
                      reinterpret_cast<const __m128i*>((in) + 16 * (r)))
#define VSTOREROW(out, r, v)                                                                          \
  _mm256_storeu2_m128i(reinterpret_cast<__m128i*>((out) + 16 * ((r) + 16)),                          \
                       reinterpret_cast<__m128i*>((out) + 16 * (r)), (v))
#include "camellia_sliced_body.hpp"  // it #undefs the macros above

bool supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("vaes") &&
         filters().ok;
}
}  // namespace x256

}  // namespace

extern const Impl kImplCamelliaVaes = {"vaes", x256::supported, x256::ecb<false>, x256::ecb<true>, x256::ctr,
                                      Cipher::Camellia};
extern const Impl kImplCamelliaAesni = {"aesni", x128::supported, x128::ecb<false>, x128::ecb<true>, x128::ctr,
                                       Cipher::Camellia};

}  // namespace aes
}  // namespace s2mc
