// Camellia with AES-NI: 16 blocks byte-sliced in 16 xmm registers, the S-boxes computed with
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

// --- the byte-sliced cipher -------------------------------------------------------------------------

#define S2MC_CAM_TARGET __attribute__((target("aes,ssse3,sse4.1")))
#define S2MC_CAM_INLINE S2MC_CAM_TARGET __attribute__((always_inline)) inline

constexpr int kBlocks = 16;

struct Tables {  // the filters as registers, and the ShiftRows undo
  __m128i pre_lo[2], pre_hi[2], post_lo[3], post_hi[3], unshift, m0f, one;
};

S2MC_CAM_INLINE __m128i filt(__m128i x, __m128i lo, __m128i hi, __m128i m0f) {
  const __m128i l = _mm_and_si128(x, m0f), h = _mm_and_si128(_mm_srli_epi16(x, 4), m0f);
  return _mm_xor_si128(_mm_shuffle_epi8(lo, l), _mm_shuffle_epi8(hi, h));
}

// One of Camellia's S-boxes on 16 bytes (one byte of each of 16 blocks).
S2MC_CAM_INLINE __m128i sbox(const Tables& T, __m128i x, int pre, int post) {
  __m128i y = filt(x, T.pre_lo[pre], T.pre_hi[pre], T.m0f);
  y = _mm_aesenclast_si128(y, _mm_setzero_si128());  // SubBytes(ShiftRows(y))
  y = _mm_shuffle_epi8(y, T.unshift);                // every byte back in its block's lane
  return filt(y, T.post_lo[post], T.post_hi[post], T.m0f);
}

// out ^= F(in, key): RFC 3713 §2.4.1 on byte-sliced halves (in[0] = the most significant byte).
S2MC_CAM_INLINE void f_xor(const Tables& T, const __m128i* in, const __m128i* key, __m128i* out) {
  __m128i x[8];
  for (int i = 0; i < 8; ++i) x[i] = _mm_xor_si128(in[i], key[i]);
  const __m128i t1 = sbox(T, x[0], 0, 0), t2 = sbox(T, x[1], 0, 1), t3 = sbox(T, x[2], 0, 2);
  const __m128i t4 = sbox(T, x[3], 1, 0), t5 = sbox(T, x[4], 0, 1), t6 = sbox(T, x[5], 0, 2);
  const __m128i t7 = sbox(T, x[6], 1, 0), t8 = sbox(T, x[7], 0, 0);
#define X(a, b) _mm_xor_si128(a, b)
  const __m128i t18 = X(t1, t8), t27 = X(t2, t7), t36 = X(t3, t6), t45 = X(t4, t5);
  out[0] = X(out[0], X(X(t18, t36), X(t4, t7)));  // y1 = t1^t3^t4^t6^t7^t8
  out[1] = X(out[1], X(X(t18, t27), X(t4, t5)));  // y2 = t1^t2^t4^t5^t7^t8
  out[2] = X(out[2], X(X(t18, t36), X(t2, t5)));  // y3 = t1^t2^t3^t5^t6^t8
  out[3] = X(out[3], X(X(t27, t36), t45));        // y4 = t2^t3^t4^t5^t6^t7
  out[4] = X(out[4], X(X(t18, t27), t6));         // y5 = t1^t2^t6^t7^t8
  out[5] = X(out[5], X(X(t27, t8), X(t3, t5)));   // y6 = t2^t3^t5^t7^t8
  out[6] = X(out[6], X(X(t36, t45), t8));         // y7 = t3^t4^t5^t6^t8
  out[7] = X(out[7], X(X(t1, t7), X(t45, t6)));   // y8 = t1^t4^t5^t6^t7
#undef X
}

// (a0..a3) <<< 1 as a 32-bit word, a0 the most significant byte.
S2MC_CAM_INLINE void rotl1(const Tables& T, const __m128i* a, __m128i* r) {
  __m128i msb[4];
  for (int j = 0; j < 4; ++j) msb[j] = _mm_and_si128(_mm_srli_epi16(a[j], 7), T.one);
  for (int j = 0; j < 4; ++j) r[j] = _mm_or_si128(_mm_add_epi8(a[j], a[j]), msb[(j + 1) & 3]);
}

// FL (RFC 3713 §2.4.2) on x[0..7]; k: the 8 key bytes (k1 = k[0..3], k2 = k[4..7]).
S2MC_CAM_INLINE void fl(const Tables& T, __m128i* x, const __m128i* k) {
  __m128i a[4], r[4];
  for (int j = 0; j < 4; ++j) a[j] = _mm_and_si128(x[j], k[j]);
  rotl1(T, a, r);
  for (int j = 0; j < 4; ++j) x[4 + j] = _mm_xor_si128(x[4 + j], r[j]);
  for (int j = 0; j < 4; ++j) x[j] = _mm_xor_si128(x[j], _mm_or_si128(x[4 + j], k[4 + j]));
}

// FL^-1 (RFC 3713 §2.4.3).
S2MC_CAM_INLINE void flinv(const Tables& T, __m128i* y, const __m128i* k) {
  __m128i a[4], r[4];
  for (int j = 0; j < 4; ++j) y[j] = _mm_xor_si128(y[j], _mm_or_si128(y[4 + j], k[4 + j]));
  for (int j = 0; j < 4; ++j) a[j] = _mm_and_si128(y[j], k[j]);
  rotl1(T, a, r);
  for (int j = 0; j < 4; ++j) y[4 + j] = _mm_xor_si128(y[4 + j], r[j]);
}

// The subkeys as broadcast bytes: sk[i][j] = byte j (most significant first) of 64-bit subkey i,
// in the order kw1..kw4, k1..k24, ke1..ke6.
struct alignas(16) SlicedKeys {
  __m128i kw[4][8], k[24][8], ke[6][8];
  int rounds;
};

S2MC_CAM_TARGET void slice_keys(const Subkeys& s, SlicedKeys* o) {
  auto put = [](uint64_t v, __m128i* out) {
    for (int j = 0; j < 8; ++j) out[j] = _mm_set1_epi8(char(uint8_t(v >> (56 - 8 * j))));
  };
  for (int i = 0; i < 4; ++i) put(s.kw[i], o->kw[i]);
  for (int i = 0; i < 24; ++i) put(s.k[i], o->k[i]);
  for (int i = 0; i < 6; ++i) put(s.ke[i], o->ke[i]);
  o->rounds = s.rounds;
}

S2MC_CAM_TARGET void load_tables(Tables* T) {
  const Filters& f = filters();
  for (int v = 0; v < 2; ++v) {
    T->pre_lo[v] = _mm_load_si128(reinterpret_cast<const __m128i*>(f.pre_lo[v]));
    T->pre_hi[v] = _mm_load_si128(reinterpret_cast<const __m128i*>(f.pre_hi[v]));
  }
  for (int v = 0; v < 3; ++v) {
    T->post_lo[v] = _mm_load_si128(reinterpret_cast<const __m128i*>(f.post_lo[v]));
    T->post_hi[v] = _mm_load_si128(reinterpret_cast<const __m128i*>(f.post_hi[v]));
  }
  // AESENCLAST's ShiftRows moves input byte SR[i] to position i (FIPS-197 §5.1.2, column-major
  // state): SR = 0,5,10,15,4,9,14,3,8,13,2,7,12,1,6,11. The shuffle puts byte i back at SR[i].
  T->unshift = _mm_setr_epi8(0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3);
  T->m0f = _mm_set1_epi8(0x0f);
  T->one = _mm_set1_epi8(1);
}

// 16x16 byte transpose (its own inverse): v[r] holds row r; afterwards v[k] holds byte k of every
// row. Four rounds of unpacks: bytes, then 16-, 32- and 64-bit pairs.
S2MC_CAM_INLINE void transpose16(__m128i* v) {
  __m128i a[16], b[16], c[16];
  for (int p = 0; p < 8; ++p) {  // a[2p + h]: rows 2p, 2p+1 interleaved, bytes 8h..8h+7
    a[2 * p] = _mm_unpacklo_epi8(v[2 * p], v[2 * p + 1]);
    a[2 * p + 1] = _mm_unpackhi_epi8(v[2 * p], v[2 * p + 1]);
  }
  for (int q = 0; q < 4; ++q)    // b[4q + 2h + l]: rows 4q..4q+3, bytes 8h+4l..+3
    for (int h = 0; h < 2; ++h) {
      b[4 * q + 2 * h] = _mm_unpacklo_epi16(a[4 * q + h], a[4 * q + 2 + h]);
      b[4 * q + 2 * h + 1] = _mm_unpackhi_epi16(a[4 * q + h], a[4 * q + 2 + h]);
    }
  for (int o = 0; o < 2; ++o)    // c[8o + 2hl + m]: rows 8o..8o+7, bytes 8h+4l+2m..+1
    for (int hl = 0; hl < 4; ++hl) {
      c[8 * o + 2 * hl] = _mm_unpacklo_epi32(b[8 * o + hl], b[8 * o + 4 + hl]);
      c[8 * o + 2 * hl + 1] = _mm_unpackhi_epi32(b[8 * o + hl], b[8 * o + 4 + hl]);
    }
  for (int hlm = 0; hlm < 8; ++hlm) {  // byte 2hlm + n of all 16 rows
    v[2 * hlm] = _mm_unpacklo_epi64(c[hlm], c[8 + hlm]);
    v[2 * hlm + 1] = _mm_unpackhi_epi64(c[hlm], c[8 + hlm]);
  }
}

// 16 blocks: in[b*16 + j] -> out[b*16 + j] (in and out may be the same).
S2MC_CAM_TARGET void crypt16(const Tables& T, const SlicedKeys& K, const uint8_t* in, uint8_t* out) {
  __m128i v[16];
  for (int b = 0; b < kBlocks; ++b) v[b] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 16 * b));
  transpose16(v);
  __m128i L[8], R[8];
  for (int j = 0; j < 8; ++j) {
    L[j] = _mm_xor_si128(v[j], K.kw[0][j]);
    R[j] = _mm_xor_si128(v[8 + j], K.kw[1][j]);
  }
  const int groups = K.rounds / 6;
  for (int g = 0; g < groups; ++g) {
    if (g > 0) {
      fl(T, L, K.ke[2 * g - 2]);
      flinv(T, R, K.ke[2 * g - 1]);
    }
    for (int r = 0; r < 6; r += 2) {
      f_xor(T, L, K.k[6 * g + r], R);
      f_xor(T, R, K.k[6 * g + r + 1], L);
    }
  }
  for (int j = 0; j < 8; ++j) {
    v[j] = _mm_xor_si128(R[j], K.kw[2][j]);
    v[8 + j] = _mm_xor_si128(L[j], K.kw[3][j]);
  }
  transpose16(v);
  for (int b = 0; b < kBlocks; ++b) _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 16 * b), v[b]);
}

bool supported() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("aes") && __builtin_cpu_supports("ssse3") && __builtin_cpu_supports("sse4.1") &&
         filters().ok;
}

// The rest (fewer than 16 blocks, a partial block) goes through the portable SP-table core.
void tail_ecb(const Subkeys& ks, const uint8_t* in, uint8_t* out, size_t nblocks) {
  for (size_t i = 0; i < nblocks; ++i) camellia::encrypt_block(camellia::kSpTables.v, ks, in + 16 * i, out + 16 * i);
}

template <bool Decrypt>
S2MC_CAM_TARGET void ecb(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  const Subkeys& ks = Decrypt ? k.cam_dk : k.cam_ek;
  Tables T;
  load_tables(&T);
  SlicedKeys K;
  slice_keys(ks, &K);
  size_t i = 0;
  for (; i + kBlocks <= nblocks; i += kBlocks) crypt16(T, K, in + 16 * i, out + 16 * i);
  tail_ecb(ks, in + 16 * i, out + 16 * i, nblocks - i);
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

S2MC_CAM_TARGET void ctr(const Key& k, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  Tables T;
  load_tables(&T);
  SlicedKeys K;
  slice_keys(k.cam_ek, &K);
  uint64_t hi = get_be64(counter), lo = get_be64(counter + 8);
  alignas(16) uint8_t blocks[16 * kBlocks];
  while (nbytes > 0) {
    const size_t n = nbytes < sizeof blocks ? nbytes : sizeof blocks;
    const size_t nb = (n + 15) / 16;
    for (size_t b = 0; b < nb; ++b) {  // 128-bit big-endian counter: carry from the low half
      put_be64(blocks + 16 * b, hi);
      put_be64(blocks + 16 * b + 8, lo);
      if (++lo == 0) ++hi;
    }
    if (nb == kBlocks)
      crypt16(T, K, blocks, blocks);
    else
      tail_ecb(k.cam_ek, blocks, blocks, nb);
    size_t j = 0;
    for (; j + 16 <= n; j += 16)
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + j),
                       _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + j)),
                                     _mm_load_si128(reinterpret_cast<const __m128i*>(blocks + j))));
    for (; j < n; ++j) out[j] = in[j] ^ blocks[j];
    in += n;
    out += n;
    nbytes -= n;
  }
}

}  // namespace

extern const Impl kImplCamelliaAesni = {"aesni", supported, ecb<false>, ecb<true>, ctr, Cipher::Camellia};

}  // namespace aes
}  // namespace s2mc
