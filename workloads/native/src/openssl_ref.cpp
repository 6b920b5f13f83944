// OpenSSL EVP aes-*-ctr, linked from libcrypto, for the same-run comparison (`s2mc native
// --vs-openssl`) and as an oracle in tests. Multi-threaded runs split the buffer into contiguous
// chunks, one EVP context per thread (like `openssl speed -multi`).
#include <omp.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/opensslv.h>

#include <algorithm>
#include <climits>
#include <stdexcept>
#include <string>

#include "s2mc_aes/aes.h"

namespace s2mc {
namespace aes {
namespace {

const EVP_CIPHER* ctr_cipher(int key_bits, Cipher c) {
  if (c == Cipher::Camellia) {
    switch (key_bits) {
      case 128: return EVP_camellia_128_ctr();
      case 192: return EVP_camellia_192_ctr();
      case 256: return EVP_camellia_256_ctr();
    }
    throw std::invalid_argument("Camellia key must be 128, 192 or 256 bits");
  }
  switch (key_bits) {
    case 128: return EVP_aes_128_ctr();
    case 192: return EVP_aes_192_ctr();
    case 256: return EVP_aes_256_ctr();
  }
  throw std::invalid_argument("AES key must be 128, 192 or 256 bits");
}

// Returns false on an OpenSSL failure (exceptions must not leave an OpenMP region).
bool ctr_one(EVP_CIPHER_CTX* ctx, const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  // Only the IV changes: the key schedule set up in the constructor is kept.
  if (EVP_EncryptInit_ex(ctx, nullptr, nullptr, nullptr, iv) != 1) return false;
  while (nbytes > 0) {
    const int n = nbytes > size_t(INT_MAX / 2) ? INT_MAX / 2 : int(nbytes);  // EVP takes int lengths
    int outl = 0;
    if (EVP_EncryptUpdate(ctx, out, &outl, in, n) != 1 || outl != n) return false;
    in += n;
    out += n;
    nbytes -= size_t(n);
  }
  return true;
}

}  // namespace

OpensslCtr::OpensslCtr(int threads, const uint8_t* key, int key_bits, Cipher c) : threads_(threads) {
  const EVP_CIPHER* cipher = ctr_cipher(key_bits, c);
  if (threads < 1) throw std::invalid_argument("threads must be >= 1");
  for (int t = 0; t < threads; ++t) {
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    if (ctx) ctxs_.push_back(ctx);
    if (!ctx || EVP_EncryptInit_ex(ctx, cipher, nullptr, key, nullptr) != 1) {
      this->~OpensslCtr();
      throw std::runtime_error(std::string("OpenSSL EVP ") + cipher_name(c) + "-ctr initialisation failed");
    }
  }
}

OpensslCtr::~OpensslCtr() {
  for (void* c : ctxs_) EVP_CIPHER_CTX_free(static_cast<EVP_CIPHER_CTX*>(c));
  ctxs_.clear();
}

void OpensslCtr::run(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t nbytes) {
  if (nbytes == 0) return;
  const size_t nblocks = (nbytes + 15) / 16;
  bool ok = true;
  if (threads_ == 1) {
    ok = ctr_one(static_cast<EVP_CIPHER_CTX*>(ctxs_[0]), iv, in, out, nbytes);
  } else {
    const int threads = int(std::min<size_t>(size_t(threads_), nblocks));
#pragma omp parallel num_threads(threads) reduction(&& : ok)
    {
      const size_t nt = size_t(omp_get_num_threads()), id = size_t(omp_get_thread_num());
      const size_t b0 = nblocks * id / nt, b1 = nblocks * (id + 1) / nt;
      if (b1 > b0) {
        uint8_t c[16];
        counter_add(iv, uint64_t(b0), c);
        const size_t off = b0 * 16, end = b1 * 16 < nbytes ? b1 * 16 : nbytes;
        ok = ctr_one(static_cast<EVP_CIPHER_CTX*>(ctxs_[id]), c, in + off, out + off, end - off);
      }
    }
  }
  if (!ok) throw std::runtime_error("OpenSSL EVP ctr failed");
}

void openssl_ctr(int threads, const uint8_t* key, int key_bits, const uint8_t iv[16], const uint8_t* in,
                 uint8_t* out, size_t nbytes, Cipher c) {
  OpensslCtr ctx(threads, key, key_bits, c);
  ctx.run(iv, in, out, nbytes);
}

std::string openssl_version() { return OpenSSL_version(OPENSSL_VERSION); }

}  // namespace aes
}  // namespace s2mc
