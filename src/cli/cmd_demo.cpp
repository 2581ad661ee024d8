// `ofld demo`: wiring of lab::run_demo and a printout.
#include <cctype>
#include <cstdio>
#include <iostream>

#include "ofld/daemon/config.hpp"
#include "ofld/lab/demo.hpp"
#include "registry.hpp"

namespace {

// "VXLAN", "Geneve", "GUE", "GRE", "ip6gre" (RFC 8926 spells Geneve so, iproute2 ip6gre in
// lower case).
std::string encap_label(const std::string& e) {
  if (e == "ip6gre") return e;
  if (e == "geneve") return "Geneve";
  std::string u = e;
  for (auto& c : u) c = char(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

ofld::cli::Registrar reg([](CLI::App& root) {
  auto o = std::make_shared<ofld::lab::DemoOptions>();
  auto json_out = std::make_shared<bool>(false);
  auto no_offload = std::make_shared<bool>(false);
  auto no_gro = std::make_shared<bool>(false);
  auto* d = root.add_subcommand("demo", "two namespaces, an ofld tunnel endpoint in each, a TCP "
                                        "stream through the overlay (root)");
  d->add_option("--encap", o->encap,
                "encapsulation: vxlan (TAP <-> UDP, default), geneve (TAP <-> UDP 6081), gue "
                "(TUN <-> UDP), gre or ip6gre (TUN <-> raw IP; ip6gre over an IPv6 underlay)")
      ->check(CLI::IsMember({"vxlan", "geneve", "gue", "gre", "ip6gre"}));
  d->add_option("--seconds", o->seconds, "iperf3 duration")->check(CLI::Range(1, 600));
  d->add_option("--streams", o->streams, "parallel TCP streams")->check(CLI::Range(1, 64));
  d->add_option_function<std::string>(
      "--queues",
      [o](const std::string& v) {
        auto q = ofld::daemon::parse_queues(v);
        if (auto* e = std::get_if<std::string>(&q)) throw CLI::ValidationError("--queues", *e);
        o->queues = std::get<unsigned>(q);
      },
      "TAP queues / worker threads per ofld endpoint: 1..256 or auto (default: the endpoint's "
      "own default, auto)");
  d->add_option("--cpus-a", o->cpus_a, "pin endpoint a's workers (its --cpus LIST: 0,1 or 0-3)");
  d->add_option("--cpus-b", o->cpus_b, "pin endpoint b's workers (its --cpus LIST)");
  d->add_flag("--ipv6", o->ipv6_underlay, "IPv6 underlay");
  d->add_flag("--rco", o->rco, "remote checksum offload (remcsumtx + remcsumrx)");
  auto integrity = std::make_shared<bool>(false);
  auto integrity_side = std::make_shared<std::string>();
  d->add_flag("--integrity", *integrity,
              "integrity mode on both endpoints: inner checksums elided toward a peer that has it "
              "too, the outer checksum protects the frame (UDP; gre/ip6gre: csum, turned on)");
  d->add_option("--integrity-side", *integrity_side,
                "integrity mode on endpoint a or b only (the benchmark matrix)")
      ->check(CLI::IsMember({"a", "b"}));
  d->add_flag("--no-offload", *no_offload, "endpoints without offloads");
  d->add_flag("--no-gro", *no_gro, "no GRO after decapsulation");
  d->add_flag("--kernel-peer", o->kernel_peer, "side B is the kernel VXLAN device");
  d->add_flag("--kernel-both", o->kernel_both, "both sides kernel VXLAN (reference)");
  d->add_flag("--latency", o->latency,
              "request/response latency (sockperf TCP ping-pong, 64 B) instead of throughput");
  d->add_option("--congestion", o->congestion,
                "TCP congestion control of the stream, e.g. cubic or bbr, set as the two namespaces' net.ipv4.tcp_congestion_control; default: the kernel's");
  d->add_option("--endpoint-binary", o->self_exe,
                "ofld binary that runs the two endpoints (default: this one; for A/B runs of two "
                "builds, e.g. bench/tunnel)");
  d->add_flag("--json", *json_out, "JSON output");
  d->callback([=] {
    o->offload = !*no_offload;
    o->gro = !*no_gro;
    o->integrity_a = *integrity || *integrity_side == "a";
    o->integrity_b = *integrity || *integrity_side == "b";
    if (auto why = ofld::lab::demo_refusal(*o)) {  // before anything is made
      std::cerr << "ofld demo: " << *why << "\n";
      ofld::cli::exit_code() = 2;
      return;
    }
    auto r = ofld::lab::run_demo(*o);
    if (!r.ok()) {
      std::cerr << "ofld demo: " << r.message() << "\n";
      ofld::cli::exit_code() = r.is_skipped() ? 1 : 2;
      return;
    }
    const auto& j = r.value();
    if (*json_out) {
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << "ofld demo: " << j["config"]["side_a"].get<std::string>() << " -> "
                << j["config"]["side_b"].get<std::string>() << ", " << encap_label(o->encap)
                << " over " << (j["config"].value("ipv6_underlay", false) ? "IPv6" : "IPv4") << ", " << o->streams << " TCP stream(s), "
                << o->seconds << " s\n";
      if (j.contains("error")) {
        std::cout << "  error: " << j["error"].get<std::string>() << "\n";
      } else if (j.contains("latency_us")) {
        const auto& l = j["latency_us"];
        std::cout << "  latency (sockperf TCP ping-pong, half round trip, us): avg " << l.value("avg", 0.0)
                  << ", p50 " << l.value("p50", 0.0) << ", p99 " << l.value("p99", 0.0) << ", p99.9 "
                  << l.value("p99_9", 0.0) << "\n";
      } else {
        std::cout << "  throughput: " << j["gbit_per_s"].get<double>() << " Gbit/s ("
                  << j["retransmits"] << " retransmits)\n";
        std::printf("  endpoint CPU: a %.2f s, b %.2f s\n", j["cpu_s"].value("a", 0.0),
                    j["cpu_s"].value("b", 0.0));
      }
      for (const char* side : {"a", "b"}) {
        if (!j["stats"].contains(side)) continue;
        const auto& s = j["stats"][side];
        std::cout << "  endpoint " << side << ": tx " << s["tx"]["frames"] << " frames -> "
                  << s["tx"]["datagrams"] << " datagrams in " << s["tx"]["udp_segment_trains"]
                  << " UDP_SEGMENT trains; rx " << s["rx"]["datagrams"] << " datagrams ("
                  << s["rx"]["udp_gro_trains"] << " UDP_GRO trains) -> " << s["rx"]["frames"]
                  << (s.contains("tun") ? " TUN writes, " : " TAP writes, ") << s["rx"]["gro_aggregates"] << " GRO aggregates; drops "
                  << s["drops"].dump();
        if (s.contains("socket") && s["socket"].contains("rx_queue_drops"))
          std::cout << "; socket receive-queue drops " << s["socket"]["rx_queue_drops"];
        std::cout << "\n";
      }
    }
    if (j.contains("interrupted")) {
      // Shell convention: 128 + signal number (130 SIGINT, 143 SIGTERM).
      int sig = j["interrupted"].get<int>();
      std::cerr << "ofld demo: interrupted by signal " << sig
                << "; namespaces, endpoints and processes were removed; no result\n";
      ofld::cli::exit_code() = 128 + sig;
      return;
    }
    ofld::cli::exit_code() = j.contains("error") ? 1 : 0;
  });
});

}  // namespace
