// Key objects, the implementation registry, CPU detection and the OpenMP strategy drivers.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "s2mc_aes/aes.h"

namespace s2mc {
namespace aes {

extern const Impl kImplTtable;
extern const Impl kImplAesni;
extern const Impl kImplVaes;
extern const Impl kImplVaes512;
extern const Impl kImplCamelliaSp;
extern const Impl kImplCamelliaAesni;
extern const Impl kImplCamelliaVaes;

Cipher parse_cipher(const std::string& name) {
  if (name == "aes") return Cipher::Aes;
  if (name == "camellia") return Cipher::Camellia;
  throw std::invalid_argument("unknown cipher '" + name + "' (known: aes, camellia)");
}

const char* cipher_name(Cipher c) { return c == Cipher::Camellia ? "camellia" : "aes"; }

Key make_key(const uint8_t* key, int key_bits, Cipher cipher) {
  Key k;
  k.cipher = cipher;
  if (cipher == Cipher::Camellia) {
    k.rounds = camellia::expand_key(key, key_bits, &k.cam_ek);
    if (k.rounds == 0) throw std::invalid_argument("Camellia key must be 128, 192 or 256 bits");
    camellia::decryption_subkeys(k.cam_ek, &k.cam_dk);
    k.key_bits = key_bits;
    return k;
  }
  k.rounds = expand_key(key, key_bits, k.ek);
  if (k.rounds == 0) throw std::invalid_argument("AES key must be 128, 192 or 256 bits");
  k.key_bits = key_bits;
  inverse_key_schedule(k.ek, k.rounds, k.dk);
  for (int r = 0; r <= k.rounds; ++r) {
    for (int c = 0; c < 4; ++c) {
      store_be32(&k.ek_bytes[r][4 * c], k.ek[4 * r + c]);
      store_be32(&k.dk_bytes[r][4 * c], k.dk[4 * r + c]);
    }
  }
  return k;
}

const std::vector<const Impl*>& all_impls(Cipher cipher) {
  static const std::vector<const Impl*> aes = {&kImplVaes512, &kImplVaes, &kImplAesni, &kImplTtable};
  static const std::vector<const Impl*> camellia = {&kImplCamelliaVaes, &kImplCamelliaAesni, &kImplCamelliaSp};
  return cipher == Cipher::Camellia ? camellia : aes;
}

const Impl* find_impl(const std::string& name, Cipher cipher) {
  if (name == "auto") {
    for (const Impl* impl : all_impls(cipher))
      if (impl->supported()) return impl;
  }
  for (const Impl* impl : all_impls(cipher)) {
    if (name == impl->name) {
      if (!impl->supported())
        throw std::runtime_error("implementation '" + name + "' is not supported by this CPU");
      return impl;
    }
  }
  std::string known = "auto";
  for (const Impl* impl : all_impls(cipher)) known += std::string(", ") + impl->name;
  throw std::invalid_argument("unknown implementation '" + name + "'" +
                              (cipher == Cipher::Aes ? "" : std::string(" of ") + cipher_name(cipher)) +
                              " (known: " + known + ")");
}

Strategy parse_strategy(const std::string& name) {
  if (name == "coarse") return Strategy::Coarse;
  if (name == "extended") return Strategy::Extended;
  if (name == "contiguous") return Strategy::Contiguous;
  throw std::invalid_argument("unknown strategy '" + name + "' (known: coarse, extended, contiguous)");
}

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::Coarse: return "coarse";
    case Strategy::Extended: return "extended";
    case Strategy::Contiguous: return "contiguous";
  }
  return "?";
}

static void check_config(const RunConfig& cfg, const Key& key) {
  if (cfg.impl == nullptr) throw std::invalid_argument("no implementation selected");
  if (cfg.impl->cipher != key.cipher)
    throw std::invalid_argument(std::string("a ") + cipher_name(key.cipher) + " key given to the " +
                                cipher_name(cfg.impl->cipher) + " implementation '" + cfg.impl->name + "'");
  if (cfg.threads < 1) throw std::invalid_argument("threads must be >= 1");
  if (cfg.strategy == Strategy::Extended && (cfg.block_bytes < 16 || cfg.block_bytes % 16 != 0))
    throw std::invalid_argument("block_bytes must be a positive multiple of 16");
}

// CTR. Block i of the message uses counter iv + i. Each task derives its own first counter, so the
// tasks are independent and the output does not depend on the strategy or the thread count.
void ctr_parallel(const RunConfig& cfg, const Key& key, const uint8_t iv[16], const uint8_t* in,
                  uint8_t* out, size_t nbytes) {
  check_config(cfg, key);
  if (nbytes == 0) return;
  const Impl* impl = cfg.impl;
  const size_t nblocks = (nbytes + 15) / 16;
  const int threads = int(std::min<size_t>(size_t(cfg.threads), nblocks));
  switch (cfg.strategy) {
    case Strategy::Coarse: {
      // Seed 000 Fig. 7: the loop over 16-byte blocks is parallelised; one call per block.
      const long long n = static_cast<long long>(nblocks);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (long long i = 0; i < n; ++i) {
        uint8_t ctr[16];
        counter_add(iv, uint64_t(i), ctr);
        const size_t off = size_t(i) * 16;
        impl->ctr(key, ctr, in + off, out + off, std::min<size_t>(16, nbytes - off));
      }
      break;
    }
    case Strategy::Extended: {
      // Seed 000 Fig. 8-9: tasks of E x 16 bytes, distributed over the threads.
      const size_t task = cfg.block_bytes;
      const long long ntasks = static_cast<long long>((nbytes + task - 1) / task);
#pragma omp parallel for schedule(static) num_threads(threads)
      for (long long t = 0; t < ntasks; ++t) {
        uint8_t ctr[16];
        const size_t off = size_t(t) * task;
        counter_add(iv, uint64_t(off / 16), ctr);
        impl->ctr(key, ctr, in + off, out + off, std::min(task, nbytes - off));
      }
      break;
    }
    case Strategy::Contiguous: {
      if (threads == 1) {  // no parallel region at all: the single-thread baseline
        impl->ctr(key, iv, in, out, nbytes);
        break;
      }
#pragma omp parallel num_threads(threads)
      {
        const size_t nt = size_t(omp_get_num_threads()), id = size_t(omp_get_thread_num());
        const size_t b0 = nblocks * id / nt, b1 = nblocks * (id + 1) / nt;
        if (b1 > b0) {
          uint8_t ctr[16];
          counter_add(iv, uint64_t(b0), ctr);
          const size_t off = b0 * 16, end = std::min(b1 * 16, nbytes);
          impl->ctr(key, ctr, in + off, out + off, end - off);
        }
      }
      break;
    }
  }
}

void ecb_parallel(const RunConfig& cfg, const Key& key, bool decrypt, const uint8_t* in, uint8_t* out,
                  size_t nbytes) {
  check_config(cfg, key);
  if (nbytes % 16 != 0) throw std::invalid_argument("ECB data length must be a multiple of 16 bytes");
  if (nbytes == 0) return;
  const auto fn = decrypt ? cfg.impl->ecb_decrypt : cfg.impl->ecb_encrypt;
  const size_t nblocks = nbytes / 16;
  const int threads = int(std::min<size_t>(size_t(cfg.threads), nblocks));
  size_t per_task = 1;  // blocks per task
  if (cfg.strategy == Strategy::Extended) per_task = cfg.block_bytes / 16;
  if (cfg.strategy == Strategy::Contiguous) per_task = (nblocks + threads - 1) / threads;
  const long long ntasks = static_cast<long long>((nblocks + per_task - 1) / per_task);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (long long t = 0; t < ntasks; ++t) {
    const size_t b0 = size_t(t) * per_task, nb = std::min(per_task, nblocks - b0);
    fn(key, in + 16 * b0, out + 16 * b0, nb);
  }
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto p = line.find(':');
      if (p != std::string::npos) {
        auto s = line.substr(p + 1);
        s.erase(0, s.find_first_not_of(" \t"));
        return s;
      }
    }
  }
  return "unknown";
}

std::vector<std::string> cpu_features() {
  std::vector<std::string> out;
  __builtin_cpu_init();
#define S2MC_FEATURE(name) \
  if (__builtin_cpu_supports(name)) out.push_back(name);
  S2MC_FEATURE("sse4.1")
  S2MC_FEATURE("aes")
  S2MC_FEATURE("pclmul")
  S2MC_FEATURE("avx")
  S2MC_FEATURE("avx2")
  S2MC_FEATURE("vaes")
  S2MC_FEATURE("vpclmulqdq")
  S2MC_FEATURE("avx512f")
  S2MC_FEATURE("avx512bw")
  S2MC_FEATURE("avx512vl")
#undef S2MC_FEATURE
  return out;
}

}  // namespace aes
}  // namespace s2mc
