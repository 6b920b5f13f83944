// s2mc_aes/aes.h -- the native CPU AES library: key objects, implementations chosen at run time,
// ECB and CTR (128-bit big-endian counter, SP 800-38A), and the OpenMP drivers of the seed
// strategies (coarse / extended / contiguous).
#ifndef S2MC_AES_AES_H
#define S2MC_AES_AES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "s2mc_cipher/camellia.h"
#include "s2mc_cipher/key_schedule.h"

namespace s2mc {
namespace aes {

// The block ciphers of this library (seed 002's Camellia beside AES). Both are 128-bit
// block ciphers with 128/192/256-bit keys, so the modes and the OpenMP strategies are shared.
enum class Cipher { Aes, Camellia };
Cipher parse_cipher(const std::string& name);  // "aes" or "camellia"; throws std::invalid_argument
const char* cipher_name(Cipher c);

// An expanded key in every form the implementations want.
struct alignas(64) Key {
  Cipher cipher = Cipher::Aes;
  int key_bits = 0;
  int rounds = 0;  // AES: 10/12/14; Camellia: 18/24
  uint32_t ek[kMaxRoundKeyWords] = {};  // encryption schedule, big-endian words (T-table)
  uint32_t dk[kMaxRoundKeyWords] = {};  // equivalent inverse schedule, words (T-table, aesdec)
  alignas(16) uint8_t ek_bytes[kMaxRounds + 1][16] = {};  // the same in memory byte order (AES-NI)
  alignas(16) uint8_t dk_bytes[kMaxRounds + 1][16] = {};
  camellia::Subkeys cam_ek = {};  // Camellia (RFC 3713): encryption subkeys
  camellia::Subkeys cam_dk = {};  // and the same reordered for decryption
};

// Throws std::invalid_argument when key_bits is not 128/192/256.
Key make_key(const uint8_t* key, int key_bits, Cipher cipher = Cipher::Aes);

// counter_add(counter, n, out): out = counter + n (mod 2^128) -- s2mc_cipher/key_schedule.h.

// One implementation: ECB over whole blocks, CTR over any byte count (a partial last block uses the
// first bytes of its keystream block). `counter` is the counter block of the first block.
// in and out may be the same buffer (in place) but must not otherwise overlap.
struct Impl {
  const char* name;
  bool (*supported)();
  void (*ecb_encrypt)(const Key&, const uint8_t* in, uint8_t* out, size_t nblocks);
  void (*ecb_decrypt)(const Key&, const uint8_t* in, uint8_t* out, size_t nblocks);
  void (*ctr)(const Key&, const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes);
  Cipher cipher = Cipher::Aes;  // the cipher whose keys it takes
};

// Every implementation of a cipher compiled in, in preference order (best first). AES: "vaes512",
// "vaes", "aesni", "ttable"; Camellia: "vaes", "aesni", "sptable". Whether the CPU can run one: impl->supported().
const std::vector<const Impl*>& all_impls(Cipher cipher = Cipher::Aes);
// By name; "auto" gives the best supported one. Throws std::invalid_argument for an unknown name and
// std::runtime_error for a known one the CPU cannot run.
const Impl* find_impl(const std::string& name, Cipher cipher = Cipher::Aes);

enum class Strategy { Coarse, Extended, Contiguous };
Strategy parse_strategy(const std::string& name);  // throws std::invalid_argument
const char* strategy_name(Strategy s);

struct RunConfig {
  const Impl* impl = nullptr;
  Strategy strategy = Strategy::Contiguous;
  int threads = 1;
  size_t block_bytes = 1024;  // extended: E x 16 bytes per task
};

// OpenMP drivers. CTR: any length. ECB: nbytes must be a multiple of 16.
void ctr_parallel(const RunConfig&, const Key&, const uint8_t iv[16], const uint8_t* in, uint8_t* out,
                  size_t nbytes);
void ecb_parallel(const RunConfig&, const Key&, bool decrypt, const uint8_t* in, uint8_t* out,
                  size_t nbytes);

// OpenSSL EVP aes-*-ctr (or camellia-*-ctr), the same split into `threads` contiguous chunks (one EVP context each).
// OpensslCtr keeps its contexts (keys expanded once) so repeated runs time only EVP_EncryptUpdate,
// as `openssl speed` does; openssl_ctr is the one-shot form.
class OpensslCtr {
 public:
  OpensslCtr(int threads, const uint8_t* key, int key_bits, Cipher cipher = Cipher::Aes);
  ~OpensslCtr();
  OpensslCtr(const OpensslCtr&) = delete;
  OpensslCtr& operator=(const OpensslCtr&) = delete;
  void run(const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t nbytes);

 private:
  int threads_;
  std::vector<void*> ctxs_;  // EVP_CIPHER_CTX*
};
void openssl_ctr(int threads, const uint8_t* key, int key_bits, const uint8_t iv[16], const uint8_t* in,
                 uint8_t* out, size_t nbytes, Cipher cipher = Cipher::Aes);
std::string openssl_version();

// CPU description for records and `s2mc info`.
std::string cpu_model();
std::vector<std::string> cpu_features();  // of aes, avx, avx2, vaes, avx512f, avx512bw, vpclmulqdq

}  // namespace aes
}  // namespace s2mc

#endif  // S2MC_AES_AES_H
