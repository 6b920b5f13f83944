// Portable T-table AES (the seeds' algorithm): four 1 KB tables, one block at a time.
#include <cstring>

#include "s2mc_aes/aes.h"

namespace s2mc {
namespace aes {
namespace {

struct Tables {
  alignas(64) uint32_t te[kTableWords];
  alignas(64) uint32_t td[kTableWords];
  Tables() {
    build_te_tables(te);
    build_td_tables(td);
  }
};
const Tables& tables() {
  static const Tables t;
  return t;
}

bool supported() { return true; }

void ecb_encrypt(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  const uint32_t* te = tables().te;
  for (size_t i = 0; i < nblocks; ++i) encrypt_block(te, k.ek, k.rounds, in + 16 * i, out + 16 * i);
}

void ecb_decrypt(const Key& k, const uint8_t* in, uint8_t* out, size_t nblocks) {
  const uint32_t* td = tables().td;
  for (size_t i = 0; i < nblocks; ++i)
    decrypt_block(td, kInvSbox, k.dk, k.rounds, in + 16 * i, out + 16 * i);
}

void ctr(const Key& k, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  const uint32_t* te = tables().te;
  uint8_t c[16], ks[16];
  std::memcpy(c, counter, 16);
  while (nbytes > 0) {
    encrypt_block(te, k.ek, k.rounds, c, ks);
    const size_t n = nbytes < 16 ? nbytes : 16;
    for (size_t j = 0; j < n; ++j) out[j] = in[j] ^ ks[j];
    in += n;
    out += n;
    nbytes -= n;
    for (int j = 15; j >= 0 && ++c[j] == 0; --j) {
    }
  }
}

}  // namespace

extern const Impl kImplTtable = {"ttable", supported, ecb_encrypt, ecb_decrypt, ctr};

}  // namespace aes
}  // namespace s2mc
