// The byte-sliced Camellia of impl_camellia_aesni.cpp, written once for any vector width (not a normal header: that file
// includes it once per instruction set, inside a namespace, with these macros defined:
//   V, kLanes (128-bit lanes per V), S2MC_CAM_TARGET (the function target attribute), and the
//   operations VXOR VAND VOR VADD8 VSRLI16 VSHUF8 VAESLAST VZERO VSET1_8 VUNPACK{LO,HI}{8,16,32,64},
//   VBCAST16(p) (16 bytes into every lane), VLOADROW(in, r) / VSTOREROW(out, r, v) (block r of every
//   lane's 16 blocks).
// It uses filters(), tail_ecb(), get_be64() and put_be64() from the including file.

#define S2MC_CAM_INLINE S2MC_CAM_TARGET __attribute__((always_inline)) inline

constexpr int kBlocks = 16 * kLanes;   // 16 blocks per 128-bit lane

struct Tables {  // the filters as registers, and the ShiftRows undo
  V pre_lo[2], pre_hi[2], post_lo[3], post_hi[3], unshift, m0f, one;
};

S2MC_CAM_INLINE V filt(V x, V lo, V hi, V m0f) {
  const V l = VAND(x, m0f), h = VAND(VSRLI16(x, 4), m0f);
  return VXOR(VSHUF8(lo, l), VSHUF8(hi, h));
}

// One of Camellia's S-boxes on one byte of each block (AESENCLAST works per 128-bit lane).
S2MC_CAM_INLINE V sbox(const Tables& T, V x, int pre, int post) {
  V y = filt(x, T.pre_lo[pre], T.pre_hi[pre], T.m0f);
  y = VAESLAST(y, VZERO());  // SubBytes(ShiftRows(y))
  y = VSHUF8(y, T.unshift);                // every byte back in its block's lane
  return filt(y, T.post_lo[post], T.post_hi[post], T.m0f);
}

// out ^= F(in, key): RFC 3713 §2.4.1 on byte-sliced halves (in[0] = the most significant byte).
S2MC_CAM_INLINE void f_xor(const Tables& T, const V* in, const V* key, V* out) {
  V x[8];
  for (int i = 0; i < 8; ++i) x[i] = VXOR(in[i], key[i]);
  const V t1 = sbox(T, x[0], 0, 0), t2 = sbox(T, x[1], 0, 1), t3 = sbox(T, x[2], 0, 2);
  const V t4 = sbox(T, x[3], 1, 0), t5 = sbox(T, x[4], 0, 1), t6 = sbox(T, x[5], 0, 2);
  const V t7 = sbox(T, x[6], 1, 0), t8 = sbox(T, x[7], 0, 0);
#define X(a, b) VXOR(a, b)
  const V t18 = X(t1, t8), t27 = X(t2, t7), t36 = X(t3, t6), t45 = X(t4, t5);
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
S2MC_CAM_INLINE void rotl1(const Tables& T, const V* a, V* r) {
  V msb[4];
  for (int j = 0; j < 4; ++j) msb[j] = VAND(VSRLI16(a[j], 7), T.one);
  for (int j = 0; j < 4; ++j) r[j] = VOR(VADD8(a[j], a[j]), msb[(j + 1) & 3]);
}

// FL (RFC 3713 §2.4.2) on x[0..7]; k: the 8 key bytes (k1 = k[0..3], k2 = k[4..7]).
S2MC_CAM_INLINE void fl(const Tables& T, V* x, const V* k) {
  V a[4], r[4];
  for (int j = 0; j < 4; ++j) a[j] = VAND(x[j], k[j]);
  rotl1(T, a, r);
  for (int j = 0; j < 4; ++j) x[4 + j] = VXOR(x[4 + j], r[j]);
  for (int j = 0; j < 4; ++j) x[j] = VXOR(x[j], VOR(x[4 + j], k[4 + j]));
}

// FL^-1 (RFC 3713 §2.4.3).
S2MC_CAM_INLINE void flinv(const Tables& T, V* y, const V* k) {
  V a[4], r[4];
  for (int j = 0; j < 4; ++j) y[j] = VXOR(y[j], VOR(y[4 + j], k[4 + j]));
  for (int j = 0; j < 4; ++j) a[j] = VAND(y[j], k[j]);
  rotl1(T, a, r);
  for (int j = 0; j < 4; ++j) y[4 + j] = VXOR(y[4 + j], r[j]);
}

// The subkeys as broadcast bytes: sk[i][j] = byte j (most significant first) of 64-bit subkey i,
// in the order kw1..kw4, k1..k24, ke1..ke6.
struct alignas(32) SlicedKeys {
  V kw[4][8], k[24][8], ke[6][8];
  int rounds;
};

S2MC_CAM_INLINE void slice_key(uint64_t v, V* out) {
  for (int j = 0; j < 8; ++j) out[j] = VSET1_8(char(uint8_t(v >> (56 - 8 * j))));
}

S2MC_CAM_TARGET void slice_keys(const Subkeys& s, SlicedKeys* o) {
  for (int i = 0; i < 4; ++i) slice_key(s.kw[i], o->kw[i]);
  for (int i = 0; i < 24; ++i) slice_key(s.k[i], o->k[i]);
  for (int i = 0; i < 6; ++i) slice_key(s.ke[i], o->ke[i]);
  o->rounds = s.rounds;
}

S2MC_CAM_TARGET void load_tables(Tables* T) {
  const Filters& f = filters();
  for (int v = 0; v < 2; ++v) {
    T->pre_lo[v] = VBCAST16(f.pre_lo[v]);
    T->pre_hi[v] = VBCAST16(f.pre_hi[v]);
  }
  for (int v = 0; v < 3; ++v) {
    T->post_lo[v] = VBCAST16(f.post_lo[v]);
    T->post_hi[v] = VBCAST16(f.post_hi[v]);
  }
  // AESENCLAST's ShiftRows moves input byte SR[i] to position i (FIPS-197 §5.1.2, column-major
  // state): SR = 0,5,10,15,4,9,14,3,8,13,2,7,12,1,6,11. The shuffle puts byte i back at SR[i].
  alignas(16) static const uint8_t unshift[16] = {0, 13, 10, 7, 4, 1, 14, 11, 8, 5, 2, 15, 12, 9, 6, 3};
  T->unshift = VBCAST16(unshift);
  T->m0f = VSET1_8(0x0f);
  T->one = VSET1_8(1);
}

// 16x16 byte transpose (its own inverse): v[r] holds row r; afterwards v[k] holds byte k of every
// row. Four rounds of unpacks: bytes, then 16-, 32- and 64-bit pairs.
S2MC_CAM_INLINE void transpose16(V* v) {
  V a[16], b[16], c[16];
  for (int p = 0; p < 8; ++p) {  // a[2p + h]: rows 2p, 2p+1 interleaved, bytes 8h..8h+7
    a[2 * p] = VUNPACKLO8(v[2 * p], v[2 * p + 1]);
    a[2 * p + 1] = VUNPACKHI8(v[2 * p], v[2 * p + 1]);
  }
  for (int q = 0; q < 4; ++q)    // b[4q + 2h + l]: rows 4q..4q+3, bytes 8h+4l..+3
    for (int h = 0; h < 2; ++h) {
      b[4 * q + 2 * h] = VUNPACKLO16(a[4 * q + h], a[4 * q + 2 + h]);
      b[4 * q + 2 * h + 1] = VUNPACKHI16(a[4 * q + h], a[4 * q + 2 + h]);
    }
  for (int o = 0; o < 2; ++o)    // c[8o + 2hl + m]: rows 8o..8o+7, bytes 8h+4l+2m..+1
    for (int hl = 0; hl < 4; ++hl) {
      c[8 * o + 2 * hl] = VUNPACKLO32(b[8 * o + hl], b[8 * o + 4 + hl]);
      c[8 * o + 2 * hl + 1] = VUNPACKHI32(b[8 * o + hl], b[8 * o + 4 + hl]);
    }
  for (int hlm = 0; hlm < 8; ++hlm) {  // byte 2hlm + n of all 16 rows
    v[2 * hlm] = VUNPACKLO64(c[hlm], c[8 + hlm]);
    v[2 * hlm + 1] = VUNPACKHI64(c[hlm], c[8 + hlm]);
  }
}

// kBlocks blocks: in[b*16 + j] -> out[b*16 + j] (in and out may be the same). Row r of the
// transpose holds block r in every 128-bit lane l, of the blocks 16l..16l+15.
S2MC_CAM_TARGET void crypt_batch(const Tables& T, const SlicedKeys& K, const uint8_t* in, uint8_t* out) {
  V v[16];
  for (int b = 0; b < 16; ++b) v[b] = VLOADROW(in, b);
  transpose16(v);
  V L[8], R[8];
  for (int j = 0; j < 8; ++j) {
    L[j] = VXOR(v[j], K.kw[0][j]);
    R[j] = VXOR(v[8 + j], K.kw[1][j]);
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
    v[j] = VXOR(R[j], K.kw[2][j]);
    v[8 + j] = VXOR(L[j], K.kw[3][j]);
  }
  transpose16(v);
  for (int b = 0; b < 16; ++b) VSTOREROW(out, b, v[b]);
}


template <bool Decrypt>
S2MC_CAM_TARGET void ecb(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  const Subkeys& ks = Decrypt ? k.cam_dk : k.cam_ek;
  Tables T;
  load_tables(&T);
  SlicedKeys K;
  slice_keys(ks, &K);
  size_t i = 0;
  for (; i + kBlocks <= nblocks; i += kBlocks) crypt_batch(T, K, in + 16 * i, out + 16 * i);
  tail_ecb(ks, in + 16 * i, out + 16 * i, nblocks - i);
}

S2MC_CAM_TARGET void ctr(const Key& k, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  Tables T;
  load_tables(&T);
  SlicedKeys K;
  slice_keys(k.cam_ek, &K);
  uint64_t hi = get_be64(counter), lo = get_be64(counter + 8);
  alignas(32) uint8_t blocks[16 * kBlocks];
  while (nbytes > 0) {
    const size_t n = nbytes < sizeof blocks ? nbytes : sizeof blocks;
    const size_t nb = (n + 15) / 16;
    for (size_t b = 0; b < nb; ++b) {  // 128-bit big-endian counter: carry from the low half
      put_be64(blocks + 16 * b, hi);
      put_be64(blocks + 16 * b + 8, lo);
      if (++lo == 0) ++hi;
    }
    if (nb == kBlocks)
      crypt_batch(T, K, blocks, blocks);
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

// Each width defines these before including this file; clear them for the next one.
#undef V
#undef S2MC_CAM_TARGET
#undef S2MC_CAM_INLINE
#undef VXOR
#undef VAND
#undef VOR
#undef VADD8
#undef VSRLI16
#undef VSHUF8
#undef VAESLAST
#undef VZERO
#undef VSET1_8
#undef VUNPACKLO8
#undef VUNPACKHI8
#undef VUNPACKLO16
#undef VUNPACKHI16
#undef VUNPACKLO32
#undef VUNPACKHI32
#undef VUNPACKLO64
#undef VUNPACKHI64
#undef VBCAST16
#undef VLOADROW
#undef VSTOREROW
