// `ofld gso IN -o OUT --mss N [--features LIST] [--csum-partial] [--json]`,
// `ofld conformance gso [--case NAME] [--mss N] [--csum-partial] [FILE...] [--json]`,
// `ofld bench gso [--json] [--reps N]`. Thin: all logic is in ofld/tools/gso_tool.hpp
// (product) and ofld/lab/gso_conformance.hpp, bench/runners/bench.hpp (lab).
#include <cstdio>
#include <iostream>

#include "runners/bench.hpp"
#include "ofld/lab/gso_conformance.hpp"
#include "ofld/tools/gso_tool.hpp"
#include "registry.hpp"

namespace {

struct GsoArgs {
  ofld::tools::GsoToolOptions o;
  bool json = false;
};
struct ConfArgs {
  std::string only;
  std::vector<std::string> files;
  int mss = 1448;
  bool csum_partial = false;
  bool json = false;
};
struct BenchArgs {
  bool json = false;
  int reps = 15;
};

ofld::cli::Registrar reg{[](CLI::App& root) {
  auto ga = std::make_shared<GsoArgs>();
  auto* g = root.add_subcommand("gso", "segment GSO super-packets in a capture (software GSO)");
  g->add_option("input", ga->o.in, "input pcap/pcapng")->required();
  g->add_option("-o,--output", ga->o.out, "output pcap")->required();
  g->add_option("--mss", ga->o.mss, "gso_size: L4 payload bytes per segment")->required();
  g->add_option("--features", ga->o.features,
                "device features (ethtool names, comma separated); default: none, so every "
                "checksum is completed")
      ->each([ga](const std::string&) { ga->o.have_features = true; });
  g->add_flag("--csum-partial", ga->o.csum_partial,
              "input L4 checksum fields hold pseudo-header seeds (capture from a host with offloads)");
  g->add_option("--gue-port", ga->o.gue_port, "UDP port carrying GUE");
  g->add_option("--geneve-port", ga->o.geneve_port, "UDP port carrying Geneve (default 6081; 0: none)");
  g->add_option("--gso-max-size", ga->o.gso_max_size,
                "device gso_max_size (IPv6 and others): a super-packet of this many bytes or "
                "more is segmented in software even with TSO (default 65536; BIG TCP: up to "
                "524280)")
      ->check(CLI::Range(1u, 524280u));
  g->add_option("--gso-ipv4-max-size", ga->o.gso_ipv4_max_size,
                "device gso_ipv4_max_size, the same for IPv4 (default 65536)")
      ->check(CLI::Range(1u, 524280u));
  g->add_flag("--json", ga->json, "JSON summary");
  g->callback([ga] {
    try {
      auto s = ofld::tools::run_gso_pcap(ga->o);
      std::fputs((ga->json ? ofld::tools::gso_summary_json(s) + "\n"
                           : ofld::tools::gso_summary_text(s)).c_str(),
                 ofld::cli::report_file(ga->o.out));
      ofld::cli::exit_code() = s.dropped ? 1 : 0;
      if (!s.cut_short.empty()) {  // output holds every complete record; say so, exit 1
        std::fprintf(stderr, "ofld gso: warning: input %s\n", s.cut_short.c_str());
        ofld::cli::exit_code() = 1;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofld gso: %s\n", e.what());
      ofld::cli::exit_code() = 2;
    }
  });

  auto ca = std::make_shared<ConfArgs>();
  auto& conf = ofld::cli::group(root, "conformance", "compare ofld with the running kernel");
  auto* c = conf.add_subcommand("gso", "replay GSO cases through the kernel (TAP, root) and ofld");
  c->add_option("files", ca->files, "captures with super-packets to replay as extra cases");
  c->add_option("--case", ca->only, "run only the built-in case with this name");
  c->add_option("--mss", ca->mss, "gso_size for frames from captures")->check(CLI::Range(8, 65534));
  c->add_flag("--csum-partial", ca->csum_partial, "capture L4 fields hold seeds");
  c->add_flag("--json", ca->json, "JSON report");
  c->callback([ca] {
    try {
      std::vector<ofld::lab::GsoCase> cases;
      for (auto& k : ofld::lab::builtin_gso_cases())
        if (ca->only.empty() || k.name == ca->only) cases.push_back(std::move(k));
      for (auto& f : ca->files)
        for (auto& k : ofld::lab::gso_cases_from_pcap(f, std::uint16_t(ca->mss), ca->csum_partial))
          cases.push_back(std::move(k));
      if (cases.empty()) throw std::runtime_error("no cases selected");
      auto r = ofld::lab::run_gso_conformance(cases);
      std::fputs((ca->json ? ofld::lab::gso_conformance_json(r) + "\n"
                           : ofld::lab::gso_conformance_text(r)).c_str(), stdout);
      ofld::cli::exit_code() = r.skipped ? 77 : (r.all_agree() ? 0 : 1);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofld conformance gso: %s\n", e.what());
      ofld::cli::exit_code() = 2;
    }
  });

  auto ba = std::make_shared<BenchArgs>();
  auto& bench = ofld::cli::group(root, "bench", "benchmarks");
  auto* b = bench.add_subcommand("gso", "GSO ns/segment per construction mode, beside DPDK");
  b->add_flag("--json", ba->json, "JSON output");
  b->add_option("--reps", ba->reps, "repetitions (median reported)")->check(CLI::Range(1, 1000));
  b->callback([ba] {
    auto r = ofld::bench::run_gso_bench(ba->reps);
    std::fputs((ba->json ? ofld::bench::gso_bench_json(r) + "\n" : ofld::bench::gso_bench_text(r)).c_str(),
               stdout);
  });
}};

}  // namespace
