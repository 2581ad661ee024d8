// `ofld gro IN -o OUT [--batch N] [--flush-timeout-us N] [--keep-partial] [--json]`,
// `ofld conformance gro [--case NAME] [FILE...] [--json]`, `ofld bench gro [--json]`.
// Thin: tools::run_gro_pcap / run_gro_conformance / bench::run_gro_bench do the work.
#include <cstdio>
#include <memory>

#include "ofld/offload/gro_context.hpp"
#include "ofld/core/csum.hpp"
#include "ofld/wire/numbers.hpp"
#include "runners/bench.hpp"
#include "runners/bench_csum.hpp"
#include "ofld/lab/gro_conformance.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "registry.hpp"

namespace {

void print_counters(std::FILE* f, const ofld::gro::Counters& c) {
  std::fprintf(f, "packets in %llu, merged %llu, held %llu, delivered at once %llu\n",
              (unsigned long long)c.packets_in, (unsigned long long)c.merged,
              (unsigned long long)c.held, (unsigned long long)c.delivered_now);
  std::fprintf(f, "aggregates %llu (count > 1), singles %llu, segments out %llu\n",
              (unsigned long long)c.aggregates, (unsigned long long)c.singles,
              (unsigned long long)c.segments_out);
  std::fprintf(f, "not merged by reason:\n");
  for (std::size_t i = 1; i < ofld::offload::kGroReasonCount; ++i)
    if (c.not_merged[i])
      std::fprintf(f, "  %-16s %llu\n", std::string(ofld::offload::to_string(ofld::offload::GroReason(i))).c_str(),
                  (unsigned long long)c.not_merged[i]);
  std::fprintf(f, "completed by reason:\n");
  for (std::size_t i = 1; i < ofld::offload::kGroReasonCount; ++i)
    if (c.completed[i])
      std::fprintf(f, "  %-16s %llu\n", std::string(ofld::offload::to_string(ofld::offload::GroReason(i))).c_str(),
                  (unsigned long long)c.completed[i]);
}

struct GroArgs {
  std::string in, out;
  std::size_t batch = 64;
  std::uint64_t timeout_us = 0;
  bool keep_partial = false, json = false, udp_fwd = false;
  std::string features;
  bool have_features = false;
  std::vector<std::uint16_t> vxlan_ports;
  std::vector<std::uint16_t> geneve_ports;
  std::uint32_t gro_max_size = 65536, gro_ipv4_max_size = 65536;
  bool ipv6_big_tcp = false;
};

struct ConfArgs {
  std::vector<std::string> cases, files;
  bool json = false;
};

ofld::cli::Registrar reg{[](CLI::App& root) {
  auto a = std::make_shared<GroArgs>();
  auto* g = root.add_subcommand("gro", "GRO over a capture (merges per the kernel's rules)");
  g->add_option("IN", a->in, "input pcap/pcapng")->required();
  g->add_option("-o,--output", a->out, "output pcap")->required();
  g->add_option("--batch", a->batch, "frames per poll; each poll ends with a flush")
      ->check(CLI::Range(1, 1 << 20));
  g->add_option("--flush-timeout-us", a->timeout_us, "gro_flush_timeout (µs of capture time)")
      ->check(CLI::Range(0, 60000000));  // up to 60 s
  g->add_flag("--keep-partial", a->keep_partial,
              "leave merged TCP/UDP checksums as the pseudo-header seed (CHECKSUM_PARTIAL)");
  g->add_option("--features", a->features,
                "receiving device features (ethtool names, comma separated: rx-gro, "
                "rx-gro-list, rx-udp-gro-forwarding, ...; \"none\"); default: rx-gro only, "
                "the netdev default")
      ->each([a](const std::string&) { a->have_features = true; });
  g->add_flag("--udp-gro-fwd", a->udp_fwd,
              "alias: adds rx-udp-gro-forwarding (NETIF_F_GRO_UDP_FWD) to the features");
  g->add_option("--vxlan-port", a->vxlan_ports, "UDP port(s) with a VXLAN socket (tunnel GRO)");
  g->add_option("--geneve-port", a->geneve_ports,
                "UDP port(s) with a Geneve socket (tunnel GRO; the IANA port is 6081)");
  g->add_option("--gro-max-size", a->gro_max_size,
                "receiving device's gro_max_size (IPv6), bytes; an aggregate stays below it "
                "(default 65536; BIG TCP: up to 524280)")
      ->check(CLI::Range(1u, 524280u));
  g->add_option("--gro-ipv4-max-size", a->gro_ipv4_max_size,
                "gro_ipv4_max_size: the same for IPv4 (default 65536); plain TCP over IPv4 then "
                "aggregates past 65535 bytes with IPv4 total length 0")
      ->check(CLI::Range(1u, 524280u));
  g->add_flag("--ipv6-big-tcp", a->ipv6_big_tcp,
              "IPv6 TCP aggregates past 65535 bytes up to --gro-max-size, with payload length 0 "
              "and no hop-by-hop header (kernels with BIG TCP without HBH); without it IPv6 "
              "aggregates stay below 65536 bytes, as the 6.18 kernel was measured to do");
  g->add_flag("--json", a->json, "print JSON");
  g->callback([a] {
    ofld::tools::GroPcapOptions o;
    o.batch = a->batch;
    o.flush_timeout_ns = a->timeout_us * 1000;
    o.keep_partial = a->keep_partial;
    for (auto p : a->vxlan_ports) o.config.udp_tunnels.push_back({p, 4789, false, false});
    for (auto p : a->geneve_ports)
      o.config.udp_tunnels.push_back({p, ofld::wire::udpport::kGeneve, false, false});
    o.config.gro_max_size = a->gro_max_size;
    o.config.gro_ipv4_max_size = a->gro_ipv4_max_size;
    o.config.ipv6_big_tcp = a->ipv6_big_tcp;
    try {
      if (a->have_features) ofld::tools::apply_gro_features(a->features, o.config);
      if (a->udp_fwd) o.config.udp_gro_fwd = true;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofld gro: %s\n", e.what());
      ofld::cli::exit_code() = 2;
      return;
    }
    try {
      auto r = ofld::tools::run_gro_pcap(a->in, a->out, o);
      std::FILE* rep = ofld::cli::report_file(a->out);
      if (a->json) {
        nlohmann::json j = ofld::tools::to_json(r.counters);
        j["frames_in"] = r.frames_in;
        j["frames_out"] = r.frames_out;
        j["non_ethernet"] = r.non_ethernet;
        j["partial_kept"] = r.partial_kept;
        j["features"] = ofld::tools::gro_feature_names(o.config);
        if (!r.cut_short.empty()) j["input_cut_short"] = r.cut_short;
        std::fprintf(rep, "%s\n", j.dump(2).c_str());
      } else {
        std::fprintf(rep, "%s: %llu frames in, %llu frames out -> %s%s\n", a->in.c_str(),
                    (unsigned long long)r.frames_in, (unsigned long long)r.frames_out,
                    a->out.c_str(), a->keep_partial ? " (checksums left partial)" : "");
        std::string feats;
        for (const auto& n : ofld::tools::gro_feature_names(o.config))
          feats += (feats.empty() ? "" : ",") + n;
        std::fprintf(rep, "features: %s\n", feats.empty() ? "none (no GRO)" : feats.c_str());
        print_counters(rep, r.counters);
        if (r.non_ethernet)
          std::fprintf(rep, "passed through without GRO (no ethertype in the link header): %llu\n",
                       (unsigned long long)r.non_ethernet);
      }
      if (!r.cut_short.empty()) {  // output holds every complete record; say so, exit 1
        std::fprintf(stderr, "ofld gro: warning: input %s\n", r.cut_short.c_str());
        ofld::cli::exit_code() = 1;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofld gro: %s\n", e.what());
      ofld::cli::exit_code() = 2;
    }
  });

  auto c = std::make_shared<ConfArgs>();
  auto& conf = ofld::cli::group(root, "conformance", "compare ofld with the running kernel");
  auto* cg = conf.add_subcommand("gro", "GRO: built-in cases and captures, ofld vs kernel veth GRO and kernel VXLAN receive (root)");
  cg->add_option("--case", c->cases, "run only these built-in cases (e.g. ipv4/data_same)");
  cg->add_option("FILE", c->files, "captures to replay (Ethernet)");
  cg->add_flag("--json", c->json, "print JSON");
  cg->callback([c] {
    std::vector<ofld::lab::GroCase> cases;
    if (c->files.empty() || !c->cases.empty()) {
      auto all = ofld::lab::builtin_gro_cases();
      for (auto& k : ofld::lab::builtin_vxlan_rx_cases()) all.push_back(std::move(k));
      for (auto& k : all)
        if (c->cases.empty() || std::find(c->cases.begin(), c->cases.end(), k.name) != c->cases.end())
          cases.push_back(std::move(k));
      for (const auto& want : c->cases) {
        bool found = false;
        for (const auto& k : cases) found = found || k.name == want;
        if (!found) throw std::runtime_error("no built-in GRO case named '" + want + "'");
      }
    }
    try {
      auto more = ofld::lab::gro_cases_from_pcaps(c->files);
      for (auto& k : more) cases.push_back(std::move(k));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "ofld conformance gro: %s\n", e.what());
      ofld::cli::exit_code() = 2;
      return;
    }
    auto r = ofld::lab::run_gro_conformance(cases);
    if (c->json) {
      std::printf("%s\n", ofld::lab::to_json(r).dump(2).c_str());
    } else {
      for (const auto& k : r.cases) {
        if (k.skipped) {
          std::printf("SKIP %-28s %s\n", k.name.c_str(), k.message.c_str());
          continue;
        }
        std::printf("%s %-28s ofld %zu frames, kernel %zu%s\n", k.pass ? "PASS" : "FAIL",
                    k.name.c_str(), k.ours, k.kernel,
                    k.order_differs ? " (same per flow; interleaving differs)" : "");
        if (!k.pass)
          for (std::size_t i = 0; i < k.frames.size(); ++i)
            if (!k.frames[i].agree) std::printf("     frame %zu: %s\n", i, k.frames[i].detail.c_str());
      }
      std::printf("passed %zu, failed %zu, skipped %zu\n", r.passed, r.failed, r.skipped);
    }
    if (r.failed) ofld::cli::exit_code() = 1;
  });

  auto bj = std::make_shared<bool>(false);
  auto& bench = ofld::cli::group(root, "bench", "benchmarks");
  auto* bg = bench.add_subcommand("gro", "GRO ns/packet: ofld (pre-validated, validated) vs DPDK");
  bg->add_flag("--json", *bj, "print JSON");
  bg->callback([bj] {
    auto r = ofld::bench::run_gro_bench();
    if (*bj) {
      std::printf("%s\n", ofld::bench::to_json(r).dump(2).c_str());
      return;
    }
    std::printf("cpu: %s; checksum kernel: %s\nns/packet, median of reps [min..max]\n",
                ofld::bench::cpu_model().c_str(),
                std::string(ofld::csum::kernel_name(ofld::csum::best_kernel())).c_str());
    for (const auto& e : r.entries)
      std::printf("%-26s %8.1f [%6.1f..%6.1f]\n", e.name.c_str(), e.median_ns, e.min_ns, e.max_ns);
    if (r.have_dpdk)
      std::printf("prevalidated/dpdk %.2f   validated/dpdk %.2f   checksum_only/dpdk %.2f\n",
                  r.prevalidated_over_dpdk, r.validated_over_dpdk, r.csum_only_over_dpdk);
    std::printf("big_tcp 185k/64k aggregates (per byte) %.2f\n", r.big_over_64k);
    std::printf("clock reads per batch (subtracted): %.0f ns\n", r.clock_overhead_ns);
    std::printf("%s\n", r.note.c_str());
  });
}};

}  // namespace
