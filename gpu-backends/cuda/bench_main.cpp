// bench_main.cpp -- `s2mc-gpu-bench`: the benchmark grid without Python (every kernel x measure x
// size), printed as a Markdown table of Gbps (1e9 bit/s) and as CSV lines for the records.
//
//   s2mc-gpu-bench [--sizes 1M,16M,256M,1G] [--reps 5] [--warmup 1] [--min-seconds 0]
//                  [--key-bits 128] [--streams 1,4]
//                  [--kernels all|coarse,extended,optimised,...] [--cipher aes|camellia]
//                  [--markdown FILE] [--csv FILE]
//       The CSV keeps every repetition's seconds (`times`, in order, ';'-separated) and, for the
//       host measures, the medians of the stage breakdown (H2D, kernel, D2H between CUDA events,
//       the host's wait in sync); the Markdown ends with that breakdown in microseconds.
//   s2mc-gpu-bench --occupancy [--cipher aes|camellia] [--key-bits 128] [--threads 256]
//       each kernel's registers, shared memory, CTAs per SM and occupancy (seed 002's Table 2)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "api.h"

using namespace s2mc;

namespace {

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t comma = s.find(',', start);
    const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

size_t parse_size(const std::string& s) {
  size_t pos = 0;
  const unsigned long long v = std::stoull(s, &pos);
  const std::string suf = s.substr(pos);
  if (suf.empty()) return v;
  if (suf == "K" || suf == "k") return v << 10;
  if (suf == "M" || suf == "m") return v << 20;
  if (suf == "G" || suf == "g") return v << 30;
  throw std::invalid_argument("bad size '" + s + "'");
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

std::string join(const std::vector<double>& v) {
  std::string out;
  char cell[32];
  for (double x : v) {
    std::snprintf(cell, sizeof cell, "%s%.6g", out.empty() ? "" : ";", x);
    out += cell;
  }
  return out;
}

std::string human(size_t n) {
  if (n >= (1u << 30) && n % (1u << 30) == 0) return std::to_string(n >> 30) + "GB";
  if (n >= (1u << 20) && n % (1u << 20) == 0) return std::to_string(n >> 20) + "MB";
  if (n >= (1u << 10) && n % (1u << 10) == 0) return std::to_string(n >> 10) + "KB";
  return std::to_string(n) + "B";
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {size_t(1) << 20, size_t(16) << 20, size_t(256) << 20, size_t(1) << 30};
  std::vector<std::string> kernels;
  std::vector<int> streams = {1, 4};
  int reps = 5, key_bits = 128, threads = 256, warmup = 1;
  double min_seconds = 0;
  bool occupancy = false;
  std::string md_path, csv_path, cipher = "aes";
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&]() -> std::string {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--sizes") {
        sizes.clear();
        for (const auto& s : split(next())) sizes.push_back(parse_size(s));
      } else if (a == "--reps") reps = std::stoi(next());
      else if (a == "--warmup") warmup = std::stoi(next());
      else if (a == "--min-seconds") min_seconds = std::stod(next());
      else if (a == "--key-bits") key_bits = std::stoi(next());
      else if (a == "--kernels") kernels = split(next());
      else if (a == "--streams") {
        streams.clear();
        for (const auto& s : split(next())) streams.push_back(std::stoi(s));
      } else if (a == "--markdown") md_path = next();
      else if (a == "--cipher") cipher = next();
      else if (a == "--threads") threads = std::stoi(next());
      else if (a == "--occupancy") occupancy = true;
      else if (a == "--csv") csv_path = next();
      else throw std::invalid_argument("unknown argument " + a);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "s2mc-gpu-bench: %s\n", e.what());
    return 2;
  }
  std::string reason;
  if (gpu::device_count(&reason) == 0) {
    std::fprintf(stderr, "s2mc-gpu-bench: no GPU (%s)\n", reason.c_str());
    return 2;
  }
  if (cipher != "aes" && cipher != "camellia") {
    std::fprintf(stderr, "s2mc-gpu-bench: unknown cipher '%s' (aes or camellia)\n", cipher.c_str());
    return 2;
  }
  const std::string cname = cipher == "aes" ? "AES" : "Camellia";
  if (occupancy) {
    try {
      std::string md = "| kernel | cipher | dir | key bits | thread blocks (grid) | threads per block | "
                       "registers per thread | shared memory per block | local bytes | CTAs per SM | occupancy |\n"
                       "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
      for (const auto& k : gpu::kernel_info(cipher, key_bits, threads)) {
        char line[512];
        std::snprintf(line, sizeof line, "| %s | %s | %s | %d | %s | %d | %d | %.2f KB | %zu | %d | %.2f |\n",
                      k.kernel.c_str(), k.cipher.c_str(), k.direction.c_str(), k.key_bits,
                      k.grid ? std::to_string(k.grid).c_str() : "input-sized", k.threads, k.regs,
                      double(k.static_smem + k.dynamic_smem) / 1024, k.local_bytes, k.per_sm, k.occupancy);
        md += line;
      }
      std::printf("%s", md.c_str());
      if (!md_path.empty())
        if (FILE* f = std::fopen(md_path.c_str(), "w")) {
          std::fputs(md.c_str(), f);
          std::fclose(f);
        }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "s2mc-gpu-bench: %s\n", e.what());
      return 1;
    }
    return 0;
  }
  if (cipher == "camellia" && (kernels.empty() || (kernels.size() == 1 && kernels[0] == "all"))) {
    kernels = {"coarse", "optimised"};  // Camellia: seed 002's kernel and the optimised one
  } else if (kernels.empty() || (kernels.size() == 1 && kernels[0] == "all")) {
    kernels = {"coarse", "extended"};
    for (const auto& c : gpu::optimised_configs()) kernels.push_back("optimised-" + c);
  }
  const auto dev = gpu::devices().at(size_t(gpu::current_device()));
  std::fprintf(stderr, "GPU: %s, %d SMs, peak SM clock %d MHz, memory clock %d MHz, %d-bit bus\n",
               dev.name.c_str(), dev.sms, dev.clock_khz / 1000, dev.mem_clock_khz / 1000,
               dev.mem_bus_bits);

  struct Row {
    std::string kernel, measure;
    std::map<size_t, double> gbps;
  };
  std::vector<Row> rows;
  FILE* csv = csv_path.empty() ? nullptr : std::fopen(csv_path.c_str(), "w");
  if (csv)
    std::fprintf(csv, "kernel,measure,bytes,seconds,best_seconds,gbps,grid,threads,streams,chunk_bytes,timer,"
                      "warmup,reps,times,stage_wall_s,stage_h2d_s,stage_kernel_s,stage_d2h_s,stage_sync_s\n");
  std::string stages_md;  // the host measures' breakdown, median microseconds
  char line[512];
  int errors = 0;
  for (const auto& kernel : kernels) {
    std::vector<std::pair<std::string, int>> measures = {{"keystream", 0}, {"device", 0}};
    for (int s : streams) measures.push_back({"host", s});
    for (const auto& [measure, s] : measures) {
      const std::string label = measure == "keystream" ? "keystream"
                                : measure == "device"  ? "device-resident"
                                : s > 1                ? "host-overlap-s" + std::to_string(s)
                                                       : "host-serial";
      Row row;
      for (size_t n : sizes) {
        if (measure == "device" && 2 * n > dev.global_mem / 100 * 85) continue;
        gpu::Request r;
        r.cipher = cipher;
        r.kernel = kernel;
        r.streams = std::max(1, s);
        try {
          const gpu::BenchResult b = gpu::bench(r, measure, key_bits, n, reps, warmup, min_seconds);
          const double g = double(b.bytes) * 8 / b.seconds / 1e9;
          row.kernel = b.kernel;
          row.gbps[n] = g;
          std::fprintf(stderr, "%-22s %-18s %6s %10.1f Gbps  (best %.1f, grid %u x %d)\n",
                       b.kernel.c_str(), label.c_str(), human(n).c_str(), g,
                       double(b.bytes) * 8 / b.best_seconds / 1e9, b.grid, b.threads);
          const double sw = median_of(b.stage_wall), sh = median_of(b.stage_h2d),
                       sk = median_of(b.stage_kernel), sd = median_of(b.stage_d2h), ss = median_of(b.stage_sync);
          if (csv)
            std::fprintf(csv, "%s,%s,%zu,%.9g,%.9g,%.6g,%u,%d,%d,%zu,%s,%d,%d,%s,%.6g,%.6g,%.6g,%.6g,%.6g\n",
                         b.kernel.c_str(), label.c_str(), b.bytes, b.seconds, b.best_seconds, g, b.grid,
                         b.threads, b.streams, b.chunk_bytes, b.timer.c_str(), b.warmup, b.reps,
                         join(b.times).c_str(), sw, sh, sk, sd, ss);
          if (!b.stage_wall.empty()) {
            std::snprintf(line, sizeof line, "| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f |\n",
                          b.kernel.c_str(), label.c_str(), human(n).c_str(), b.seconds * 1e6, sw * 1e6,
                          sh * 1e6, sk * 1e6, sd * 1e6, ss * 1e6);
            stages_md += line;
          }
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s %s %s: %s\n", kernel.c_str(), label.c_str(), human(n).c_str(), e.what());
          ++errors;
        }
      }
      if (row.kernel.empty()) row.kernel = kernel;
      row.measure = label;
      rows.push_back(row);
    }
  }
  if (csv) std::fclose(csv);

  std::string md = "| kernel | measure |";
  std::string sep = "|---|---|";
  for (size_t n : sizes) {
    md += " " + human(n) + " |";
    sep += "---:|";
  }
  md += "\n" + sep + "\n";
  for (const auto& row : rows) {
    md += "| " + row.kernel + " | " + row.measure + " |";
    for (size_t n : sizes) {
      char cell[32];
      auto it = row.gbps.find(n);
      if (it == row.gbps.end())
        std::snprintf(cell, sizeof cell, " – |");
      else
        std::snprintf(cell, sizeof cell, " %.1f |", it->second);
      md += cell;
    }
    md += "\n";
  }
  if (!stages_md.empty())
    md += "\nHost measures, median microseconds: the timed wall; then, from as many repetitions with CUDA "
          "events per chunk, their wall, H2D, kernel, D2H (summed over chunks) and the host's wait in "
          "sync (S2MC_CUDA_SYNC=" + std::string(std::getenv("S2MC_CUDA_SYNC") ? std::getenv("S2MC_CUDA_SYNC") : "auto") +
          ", warm-up " + std::to_string(warmup) + ")\n\n| kernel | measure | size | wall | staged wall | H2D | kernel | D2H | sync |\n"
          "|---|---|---|---:|---:|---:|---:|---:|---:|\n" + stages_md;
  std::printf("%s-%d, Gbps (1e9 bit/s); GPU %s\n\n%s", cname.c_str(), key_bits, dev.name.c_str(), md.c_str());
  if (!md_path.empty()) {
    FILE* f = std::fopen(md_path.c_str(), "w");
    if (f) {
      std::fprintf(f, "%s-%d, Gbps (1e9 bit/s); GPU %s\n\n%s", cname.c_str(), key_bits, dev.name.c_str(),
                   md.c_str());
      std::fclose(f);
    }
  }
  return errors ? 1 : 0;
}
