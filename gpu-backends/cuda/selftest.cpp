// selftest.cpp -- `s2mc-gpu-selftest`: verifies every CUDA kernel without Python.
//
// The oracle is the portable reference in s2mc_cipher/key_schedule.h (encrypt_block/decrypt_block,
// big-endian words: independent of the kernels' little-endian tables), itself anchored to the
// FIPS-197 and SP 800-38A known-answer vectors. Every kernel x mode x key size x direction, CTR
// tails, counter carries, empty input, inputs of many chunks over 1 and 3 streams, the keystream
// op, and GPU == emulator. Camellia the same way against s2mc_cipher/camellia.h's
// encrypt_block, itself anchored to the RFC 3713 Appendix A vectors. Prints "N passed, M failed"; exit status 1 on any failure, 2 when no GPU
// (unless --emulate-only: then the same checks run through the CPU emulator).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "api.h"
#include "s2mc_cipher/camellia.h"
#include "s2mc_cipher/key_schedule.h"

using namespace s2mc;
using Bytes = std::vector<uint8_t>;

namespace {

int passed = 0, failed = 0;

void expect(bool ok, const std::string& what) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    std::printf("FAIL %s\n", what.c_str());
  }
}

Bytes hex(const char* h) {
  Bytes b;
  for (size_t i = 0; h[i] && h[i + 1]; i += 2) b.push_back(uint8_t(std::stoul(std::string(h + i, 2), nullptr, 16)));
  return b;
}

Bytes random_bytes(size_t n, uint32_t seed) {
  std::mt19937 g(seed);
  Bytes b(n);
  for (auto& x : b) x = uint8_t(g());
  return b;
}

// --- the reference ------------------------------------------------------------------------------

struct RefKey {
  int nr = 0;
  uint32_t rk[aes::kMaxRoundKeyWords], drk[aes::kMaxRoundKeyWords];
};

const uint32_t* te() {
  static uint32_t t[aes::kTableWords];
  static bool done = false;
  if (!done) aes::build_te_tables(t), done = true;
  return t;
}
const uint32_t* td() {
  static uint32_t t[aes::kTableWords];
  static bool done = false;
  if (!done) aes::build_td_tables(t), done = true;
  return t;
}

RefKey ref_key(const Bytes& key) {
  RefKey k;
  k.nr = aes::expand_key(key.data(), int(key.size() * 8), k.rk);
  aes::inverse_key_schedule(k.rk, k.nr, k.drk);
  return k;
}

// ECB or CTR over `in` with one cipher's block functions enc(in, out) and dec(in, out), 16 bytes
// at a time; CTR uses cipher_host's counter (iv + block index).
template <typename Enc, typename Dec>
Bytes reference_mode(const std::string& op, const Bytes& iv, const Bytes& in, Enc&& enc, Dec&& dec) {
  Bytes out(in.size());
  for (size_t off = 0; off < in.size(); off += 16) {
    const size_t len = std::min<size_t>(16, in.size() - off);
    uint8_t blk[16] = {0}, res[16];
    if (op == "ctr") {
      aes::counter_add(iv.data(), off / 16, blk);
      enc(blk, res);
      for (size_t i = 0; i < len; ++i) out[off + i] = in[off + i] ^ res[i];
    } else {
      std::memcpy(blk, &in[off], 16);
      if (op == "ecb-enc")
        enc(blk, res);
      else
        dec(blk, res);
      std::memcpy(&out[off], res, 16);
    }
  }
  return out;
}

Bytes reference(const std::string& op, const Bytes& key, const Bytes& iv, const Bytes& in) {
  const RefKey k = ref_key(key);
  return reference_mode(
      op, iv, in, [&](const uint8_t* b, uint8_t* r) { aes::encrypt_block(te(), k.rk, k.nr, b, r); },
      [&](const uint8_t* b, uint8_t* r) { aes::decrypt_block(td(), aes::kInvSbox, k.drk, k.nr, b, r); });
}

// Camellia: camellia.h's portable encrypt_block (RFC 3713), the same CTR counter.
Bytes cam_reference(const std::string& op, const Bytes& key, const Bytes& iv, const Bytes& in) {
  camellia::Subkeys enc, dec;
  camellia::expand_key(key.data(), int(key.size() * 8), &enc);
  camellia::decryption_subkeys(enc, &dec);
  return reference_mode(
      op, iv, in, [&](const uint8_t* b, uint8_t* r) { camellia::encrypt_block(camellia::kSpTables.v, enc, b, r); },
      [&](const uint8_t* b, uint8_t* r) { camellia::encrypt_block(camellia::kSpTables.v, dec, b, r); });
}

Bytes reference_of(const std::string& cipher, const std::string& op, const Bytes& key, const Bytes& iv,
                   const Bytes& in) {
  return cipher == "camellia" ? cam_reference(op, key, iv, in) : reference(op, key, iv, in);
}

Bytes reference_fold(const Bytes& key, const Bytes& iv, size_t n, const std::string& cipher = "aes") {
  const Bytes ks = reference_of(cipher, "ctr", key, iv, Bytes((n + 15) / 16 * 16, 0));
  Bytes acc(16, 0);
  for (size_t i = 0; i < ks.size(); ++i) acc[i % 16] ^= ks[i];
  return acc;
}

// --- the kernels ---------------------------------------------------------------------------------

bool use_gpu = true;

Bytes run(const std::string& kernel, const std::string& op, const Bytes& key, const Bytes& iv,
          const Bytes& in, int streams = 4, size_t chunk = 0, const std::string& cipher = "aes") {
  gpu::Request r;
  r.cipher = cipher;
  r.kernel = kernel;
  r.op = op;
  r.ext_bytes = 1024;
  r.streams = streams;
  r.chunk_bytes = chunk;
  Bytes out(in.size());
  static const uint8_t zero[16] = {0};
  const uint8_t* ivp = iv.size() == 16 ? iv.data() : zero;
  if (use_gpu)
    gpu::crypt(r, key.data(), int(key.size() * 8), ivp, in.data(), out.data(), in.size());
  else
    gpu::emulate(r, key.data(), int(key.size() * 8), ivp, in.data(), out.data(), in.size(), 3);
  return out;
}

std::string name(const std::string& kernel, const std::string& op, size_t keylen, size_t n,
                 const std::string& extra = "", const std::string& cipher = "AES") {
  return kernel + " " + op + " " + cipher + "-" + std::to_string(keylen * 8) + " " + std::to_string(n) + " B" +
         (extra.empty() ? "" : " " + extra);
}

}  // namespace

int main(int argc, char** argv) {
  bool emulate_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--emulate-only") emulate_only = true;
    else {
      std::fprintf(stderr, "usage: %s [--emulate-only]\n", argv[0]);
      return 2;
    }
  }
  std::string reason;
  const int ndev = gpu::device_count(&reason);
  if (emulate_only) {
    use_gpu = false;
  } else if (ndev == 0) {
    std::printf("s2mc-gpu-selftest: no GPU (%s)\n", reason.c_str());
    return 2;
  } else {
    const auto devs = gpu::devices();
    std::printf("GPU %d: %s, %d SMs, CUDA runtime %d, driver %d\n", gpu::current_device(),
                devs.at(size_t(gpu::current_device())).name.c_str(),
                devs.at(size_t(gpu::current_device())).sms, gpu::runtime_version(),
                gpu::driver_version());
  }
  std::printf("checking through the %s\n", use_gpu ? "GPU" : "CPU emulator");

  // The reference against the standards' known answers.
  {
    const Bytes k = hex("000102030405060708090a0b0c0d0e0f");
    expect(reference("ecb-enc", k, {}, hex("00112233445566778899aabbccddeeff")) ==
               hex("69c4e0d86a7b0430d8cdb78070b4c55a"), "reference FIPS-197 C.1");
    const Bytes k256 = hex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f");
    expect(reference("ecb-dec", k256, {}, hex("8ea2b7ca516745bfeafc49904b496089")) ==
               hex("00112233445566778899aabbccddeeff"), "reference FIPS-197 C.3 inverse");
    const Bytes ck = hex("2b7e151628aed2a6abf7158809cf4f3c");
    const Bytes civ = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");
    expect(reference("ctr", ck, civ, hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")) ==
               hex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"),
           "reference SP 800-38A F.5.1");
  }

  std::vector<std::string> kernels = {"coarse", "extended", "optimised"};
  for (const auto& c : gpu::optimised_configs()) kernels.push_back("optimised-" + c);
  const size_t key_lens[] = {16, 24, 32};
  const Bytes iv = hex("f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff");

  try {
    for (const auto& kernel : kernels) {
      // Standards' vectors through the kernel.
      const Bytes ck = hex("2b7e151628aed2a6abf7158809cf4f3c");
      expect(run(kernel, "ctr", ck, iv, hex("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51")) ==
                 hex("874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"),
             kernel + " SP 800-38A F.5.1");
      // Every mode x key size x direction.
      for (size_t kl : key_lens) {
        const Bytes key = random_bytes(kl, uint32_t(kl));
        for (const char* op : {"ctr", "ecb-enc", "ecb-dec"}) {
          for (size_t n : {size_t(16), size_t(4096), size_t(1) << 20}) {
            const Bytes in = random_bytes(n, uint32_t(n + kl));
            expect(run(kernel, op, key, iv, in) == reference(op, key, iv, in), name(kernel, op, kl, n));
          }
        }
        // Keystream-only op: XOR of all keystream blocks.
        gpu::Request r;
        r.kernel = kernel;
        r.ext_bytes = 1024;
        for (size_t n : {size_t(16), size_t(100000), size_t(4) << 20}) {
          const auto f = gpu::keystream_fold(r, key.data(), int(kl * 8), iv.data(), n, !use_gpu, 3);
          expect(Bytes(f.begin(), f.end()) == reference_fold(key, iv, n),
                 name(kernel, "keystream", kl, n));
        }
      }
      // CTR tails and the empty input.
      const Bytes key = random_bytes(16, 7);
      for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(17), size_t(1000), size_t(4097), size_t(1000003)}) {
        const Bytes in = random_bytes(n, uint32_t(n));
        expect(run(kernel, "ctr", key, iv, in) == reference("ctr", key, iv, in), name(kernel, "ctr", 16, n, "tail"));
      }
      // Counter carries (low word, 64-bit halves, 128-bit wrap).
      for (const char* h : {"00000000000000000ffffffffffffff0", "0000000000000000fffffffffffff000",
                            "fffffffffffffffffffffffffffff000"}) {
        const Bytes civ = hex(h);
        const Bytes in = random_bytes(300000, 9);
        expect(run(kernel, "ctr", key, civ, in) == reference("ctr", key, civ, in),
               name(kernel, "ctr", 16, in.size(), std::string("carry iv=") + h));
      }
      // Larger than one chunk: 64 KB chunks, 1 and 3 streams.
      for (int streams : {1, 3}) {
        for (const char* op : {"ctr", "ecb-enc", "ecb-dec"}) {
          const size_t n = 3 * (size_t(1) << 20) + (std::string(op) == "ctr" ? 12345 : 12336);
          const Bytes in = random_bytes(n, 12);
          const Bytes civ = hex("0000000000000000ffffffffffffff00");
          expect(run(kernel, op, key, civ, in, streams, 65536) == reference(op, key, civ, in),
                 name(kernel, op, 16, n, "chunks of 64 KB, " + std::to_string(streams) + " streams"));
        }
      }
      // The GPU and the emulator agree bit for bit.
      if (use_gpu) {
        const Bytes in = random_bytes(777777, 22);
        gpu::Request r;
        r.kernel = kernel;
        r.ext_bytes = 1024;
        Bytes emu(in.size());
        gpu::emulate(r, key.data(), 128, iv.data(), in.data(), emu.data(), in.size(), 0);
        expect(run(kernel, "ctr", key, iv, in) == emu, kernel + " GPU == emulator");
      }
    }
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    ++failed;
  }

  // Camellia: seed 002's coarse kernel and the optimised one, the same checks against
  // camellia.h.
  expect(camellia::selftest(), "reference camellia.h RFC 3713 Appendix A");
  for (const std::string K : {"coarse", "optimised"}) try {
    const std::string C = "camellia";
    const Bytes rfc = hex("0123456789abcdeffedcba987654321000112233445566778899aabbccddeeff");
    const char* rfc_ct[3] = {"67673138549669730857065648eabe43", "b4993401b3e996f84ee5cee7d79b09b9",
                             "9acc237dff16d76c20ef7c919e3a7509"};
    for (int v = 0; v < 3; ++v) {
      const Bytes key(rfc.begin(), rfc.begin() + 16 + 8 * v);
      const Bytes pt(rfc.begin(), rfc.begin() + 16);
      const Bytes ct = run(K, "ecb-enc", key, {}, pt, 4, 0, C);
      expect(ct == hex(rfc_ct[v]), name(K, "ecb-enc", key.size(), 16, "RFC 3713 A", "Camellia"));
      expect(run(K, "ecb-dec", key, {}, ct, 4, 0, C) == pt,
             name(K, "ecb-dec", key.size(), 16, "RFC 3713 A", "Camellia"));
    }
    for (size_t kl : key_lens) {
      const Bytes key = random_bytes(kl, uint32_t(kl + 50));
      for (const char* op : {"ctr", "ecb-enc", "ecb-dec"})
        for (size_t n : {size_t(16), size_t(4096), size_t(1) << 20}) {
          const Bytes in = random_bytes(n, uint32_t(n + kl));
          expect(run(K, op, key, iv, in, 4, 0, C) == cam_reference(op, key, iv, in),
                 name(K, op, kl, n, "", "Camellia"));
        }
      gpu::Request r;
      r.cipher = C;
      r.kernel = K;
      for (size_t n : {size_t(16), size_t(100000), size_t(4) << 20}) {
        const auto f = gpu::keystream_fold(r, key.data(), int(kl * 8), iv.data(), n, !use_gpu, 3);
        expect(Bytes(f.begin(), f.end()) == reference_fold(key, iv, n, C),
               name(K, "keystream", kl, n, "", "Camellia"));
      }
    }
    const Bytes key = random_bytes(16, 77);
    for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(17), size_t(4097), size_t(1000003)}) {
      const Bytes in = random_bytes(n, uint32_t(n));
      expect(run(K, "ctr", key, iv, in, 4, 0, C) == cam_reference("ctr", key, iv, in),
             name(K, "ctr", 16, n, "tail", "Camellia"));
    }
    for (const char* h : {"00000000000000000ffffffffffffff0", "fffffffffffffffffffffffffffff000"}) {
      const Bytes civ = hex(h);
      const Bytes in = random_bytes(300000, 9);
      expect(run(K, "ctr", key, civ, in, 4, 0, C) == cam_reference("ctr", key, civ, in),
             name(K, "ctr", 16, in.size(), std::string("carry iv=") + h, "Camellia"));
    }
    for (int streams : {1, 3})
      for (const char* op : {"ctr", "ecb-enc", "ecb-dec"}) {
        const size_t n = 3 * (size_t(1) << 20) + (std::string(op) == "ctr" ? 12345 : 12336);
        const Bytes in = random_bytes(n, 12);
        expect(run(K, op, key, iv, in, streams, 65536, C) == cam_reference(op, key, iv, in),
               name(K, op, 16, n, "chunks of 64 KB, " + std::to_string(streams) + " streams", "Camellia"));
      }
    if (use_gpu) {
      const Bytes in = random_bytes(777777, 22);
      gpu::Request r;
      r.cipher = C;
      r.kernel = K;
      Bytes emu(in.size());
      gpu::emulate(r, key.data(), 128, iv.data(), in.data(), emu.data(), in.size(), 0);
      expect(run(K, "ctr", key, iv, in, 4, 0, C) == emu, "camellia " + K + " GPU == emulator");
    }
  } catch (const std::exception& e) {
    std::printf("FAIL exception (camellia %s): %s\n", K.c_str(), e.what());
    ++failed;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
