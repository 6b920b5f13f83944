// s2mc_cryptrec/cryptrec.h -- seed 002's other CRYPTREC 128-bit block ciphers on the CPU:
// a block cipher interface, ECB and CTR (128-bit big-endian counter, as for AES: NIST SP 800-38A),
// split over OpenMP threads in one contiguous chunk each: SC2000 and Hierocrypt-3; the docs
// (docs/native.md, "Seed 002's other ciphers") say why not CIPHERUNICORN-A.
#ifndef S2MC_CRYPTREC_CRYPTREC_H
#define S2MC_CRYPTREC_CRYPTREC_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace s2mc {
namespace cryptrec {

// SC2000 (Fujitsu): 128-bit block, 128/192/256-bit key; 6.5 rounds (56 extended-key words) for a
// 128-bit key, 7.5 rounds (64 words) for 192/256.
struct Sc2000Key {
  int key_bits = 0;
  int rounds = 0;       // full rounds (I-B-I then R x R); one more I-B-I closes the cipher
  uint32_t ek[64] = {};
};

// Throws std::invalid_argument when key_bits is not 128/192/256.
Sc2000Key sc2000_make_key(const uint8_t* key, int key_bits);
void sc2000_encrypt_block(const Sc2000Key& k, const uint8_t in[16], uint8_t out[16]);
void sc2000_decrypt_block(const Sc2000Key& k, const uint8_t in[16], uint8_t out[16]);

// Hierocrypt-3 (Toshiba), 128/192/256-bit keys: 6.5/7.5/8.5 rounds (rounds = 6/7/8 full ones).
// ek[t] = round key t+1 as 8 big-endian words (the XS function's two 128-bit halves), ek[rounds]
// the final whitening (first 4 words used); dk the same with the second half passed through
// mdsL^-1 (decryption's order of operations).
struct Hc3Key {
  int key_bits = 0;
  int rounds = 0;
  uint32_t ek[9][8] = {};
  uint32_t dk[9][8] = {};
};

// Throws std::invalid_argument when key_bits is not 128/192/256.
Hc3Key hc3_make_key(const uint8_t* key, int key_bits);
void hc3_encrypt_block(const Hc3Key& k, const uint8_t in[16], uint8_t out[16]);
void hc3_decrypt_block(const Hc3Key& k, const uint8_t in[16], uint8_t out[16]);
void hc3_sbox(uint8_t out[256]);  // the S-box table, for the test that derives it independently

// The cipher names this library knows ("sc2000", "hierocrypt3").
const std::vector<std::string>& cipher_names();

// The implementations of a cipher, best first ("auto" = the first). SC2000: its F function's
// tables by how the 32-bit input is split ("table-11-10-11", "table-6-10-10-6",
// "table-6-5-5-5-5-6"); Hierocrypt-3: "table". Empty for an unknown cipher.
const std::vector<std::string>& impl_names(const std::string& cipher);

// A keyed cipher by name and implementation; throws std::invalid_argument for an unknown name or
// implementation or a bad key length.
class Cipher {
 public:
  Cipher(const std::string& name, const uint8_t* key, size_t key_len, const std::string& impl = "auto");
  const std::string& name() const { return name_; }
  const std::string& impl() const { return impl_; }  // the implementation "auto" resolved to
  int key_bits() const { return key_bits_; }
  // Whole blocks; in and out may be the same buffer.
  void ecb(bool decrypt, const uint8_t* in, uint8_t* out, size_t nblocks) const;
  // Any byte count; counter = the first block's counter block; a partial last block uses the first
  // bytes of its keystream block. Encryption and decryption are the same operation.
  void ctr(const uint8_t counter[16], const uint8_t* in, uint8_t* out, size_t nbytes) const;

 private:
  std::string name_, impl_;
  int layout_ = 0;  // SC2000: index into impl_names("sc2000")
  int key_bits_ = 0;
  Sc2000Key sc2000_;
  Hc3Key hc3_;
};

// OpenMP drivers: `threads` contiguous chunks (one per thread, static split of whole blocks). Each
// chunk derives its own first counter from its offset, so the output never depends on `threads`.
void ecb_parallel(const Cipher& c, bool decrypt, const uint8_t* in, uint8_t* out, size_t nbytes, int threads);
void ctr_parallel(const Cipher& c, const uint8_t iv[16], const uint8_t* in, uint8_t* out, size_t nbytes,
                  int threads);

}  // namespace cryptrec
}  // namespace s2mc

#endif
