// `ofld bench csum [--json] [--reps N] [--sizes B...] [--offset N]`: checksum kernel
// throughput (bench::run_csum_bench).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "runners/bench_csum.hpp"
#include "registry.hpp"

namespace {

struct Args {
  bool json = false;
  int reps = 9;
  std::vector<std::size_t> sizes{64, 1448, 1500, 9000, 65536};
  std::size_t offset = 0;
};

nlohmann::json to_json(const ofld::bench::CsumBenchResults& r) {
  nlohmann::json j;
  j["cpu"] = r.cpu;
  j["best_kernel"] = r.best_kernel;
  j["read_isa"] = r.read_isa;  // widest read loop; "memread" is the fastest read variant
  j["have_dpdk"] = r.have_dpdk;
  j["offset"] = r.offset;  // bytes past a 64-byte boundary where every buffer starts
  j["unit"] = "GB/s";
  for (const auto& s : r.sizes) {
    nlohmann::json js;
    js["size"] = s.size;
    for (const auto& e : s.entries)
      js["entries"].push_back(
          {{"name", e.name}, {"median", e.median_gbps}, {"min", e.min_gbps}, {"max", e.max_gbps}});
    js["ratio"]["best_over_read"] = s.best_over_read;
    js["ratio"]["copy_over_memcpy"] = s.copy_over_memcpy;
    if (r.have_dpdk) js["ratio"]["best_over_dpdk"] = s.best_over_dpdk;
    j["sizes"].push_back(js);
  }
  return j;
}

void print_table(const ofld::bench::CsumBenchResults& r) {
  // Like `openssl speed`: one row per operation, one column per size (median GB/s).
  std::printf("cpu: %s\nkernel chosen (csum_partial, inline up to 64 B): %s; memread = fastest read loop "
              "(widest: %s); buffers start %zu B past a 64-byte boundary; GB/s, median of reps "
              "[min..max]\n",
              r.cpu.c_str(), r.best_kernel.c_str(), r.read_isa.c_str(), r.offset);
  std::printf("%-22s", "operation");
  for (const auto& s : r.sizes) std::printf(" %22zu B", s.size);
  std::printf("\n");
  if (r.sizes.empty()) return;
  for (std::size_t i = 0; i < r.sizes[0].entries.size(); ++i) {
    std::printf("%-22s", r.sizes[0].entries[i].name.c_str());
    for (const auto& s : r.sizes) {
      const auto& e = s.entries[i];
      std::printf(" %7.2f [%6.2f..%6.2f]", e.median_gbps, e.min_gbps, e.max_gbps);
    }
    std::printf("\n");
  }
  auto ratio_row = [&](const char* name, double ofld::bench::CsumBenchSize::*f) {
    std::printf("%-22s", name);
    for (const auto& s : r.sizes) std::printf(" %24.2f", s.*f);
    std::printf("\n");
  };
  ratio_row("csum_partial/memread", &ofld::bench::CsumBenchSize::best_over_read);
  ratio_row("copy+csum/memcpy", &ofld::bench::CsumBenchSize::copy_over_memcpy);
  if (r.have_dpdk) ratio_row("csum_partial/dpdk", &ofld::bench::CsumBenchSize::best_over_dpdk);
}

ofld::cli::Registrar reg{[](CLI::App& root) {
  auto& bench = ofld::cli::group(root, "bench", "benchmarks");
  auto args = std::make_shared<Args>();
  auto* c = bench.add_subcommand("csum", "checksum kernels vs memory read / memcpy (GB/s)");
  c->add_flag("--json", args->json, "print JSON instead of a table");
  c->add_option("--reps", args->reps, "repetitions per measurement (median reported)")
      ->check(CLI::Range(1, 1000));
  // 1 B .. 256 MiB: PositiveNumber printed a 300-digit upper bound for 0, and a size beyond
  // memory ended as "ofld: error: std::bad_alloc".
  c->add_option("--sizes", args->sizes, "buffer sizes in bytes (1 to 268435456)")
      ->check(CLI::Range(std::size_t(1), std::size_t(1) << 28));
  c->add_option("--offset", args->offset,
                "every buffer starts this many bytes past a 64-byte boundary (0 to 63; default 0)")
      ->check(CLI::Range(std::size_t(0), std::size_t(63)));
  c->callback([args] {
    ofld::bench::CsumBenchOptions opt;
    opt.offset = args->offset;
    opt.reps = args->reps;
    opt.sizes = args->sizes;
    auto res = ofld::bench::run_csum_bench(opt);
    if (args->json)
      std::printf("%s\n", to_json(res).dump(2).c_str());
    else
      print_table(res);
  });
}};

}  // namespace
