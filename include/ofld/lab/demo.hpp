// ofld/lab/demo.hpp — `ofld demo`: two network namespaces joined by a veth pair, an
// `ofld tunnel` endpoint in each (VXLAN or Geneve over a TAP, or GUE, GRE or ip6gre over a TUN:
// DemoOptions::encap), a TCP stream through the overlay (iperf3), throughput, CPU time of
// each endpoint and both endpoints' counters, in the same format and JSON for every
// encapsulation; everything made is removed. Addresses exist only inside the namespaces
// (underlay 10.231.0.0/24 or fd00:231::/64, overlay 192.168.231.0/24).
//
// LAB code (target ofld_lab): used by the ofld command and the tests; not part of libofld,
// not installed, no stable API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/io/netns.hpp"

namespace ofld::lab {

/// The encapsulations `ofld demo --encap` runs (the `ofld tunnel` mode words).
inline constexpr const char* kDemoEncaps[] = {"vxlan", "geneve", "gue", "gre", "ip6gre"};

struct DemoOptions {
  /// vxlan (TAP, UDP 4789), geneve (TAP, UDP 6081, RFC 8926, VNI 42, no options), gue (TUN,
  /// UDP port 5555), gre (TUN, IPv4 raw IP protocol 47) or ip6gre (TUN, IPv6 underlay: implies
  /// ipv6_underlay).
  std::string encap = "vxlan";
  int seconds = 5;              ///< iperf3 duration
  int streams = 1;              ///< iperf3 -P
  bool ipv6_underlay = false;
  bool offload = true;          ///< endpoints with offloads (--no-offload passes through)
  bool gro = true;              ///< GRO after decapsulation
  bool rco = false;             ///< remcsumtx + remcsumrx on both endpoints
  /// Integrity mode (docs/peer-protocol.md, `integrity` word) on endpoint A / B (`--integrity`: both;
  /// `--integrity-side a|b`: one). Every encapsulation; gre/ip6gre endpoints then also get
  /// `csum` (both). The stream starts once the sessions answered.
  bool integrity_a = false, integrity_b = false;
  bool kernel_peer = false;     ///< side B is the kernel's VXLAN device, not ofld
  bool kernel_both = false;     ///< both sides kernel VXLAN (reference for benchmarks)
  unsigned queues = 0;          ///< ofld endpoints' --queues (TAP queues / worker threads); 0: not given (auto)
  /// `--cpus` of endpoint A / B (ofld tunnel `cpus`: worker i on LIST[i % n]); "" = not pinned.
  /// Checked by the endpoint (its error ends the demo).
  std::string cpus_a, cpus_b;
  bool latency = false;          ///< sockperf TCP ping-pong (64 B) instead of the iperf3 stream
  /// TCP congestion control of the iperf3 stream, e.g. "cubic" or "bbr", set as both
  /// namespaces' net.ipv4.tcp_congestion_control before any socket exists (the host's setting
  /// is untouched); "" = the kernel's default. The result's config says which one the stream's
  /// socket ran ("tcp_congestion", as iperf3 reads it back).
  std::string congestion;
  std::string self_exe;         ///< path of the ofld binary ("" = /proc/self/exe)
};

/// Combinations refused before anything is made, with the reason: an unknown encap; --rco with
/// a kernel VXLAN endpoint (spec K-1) or with gre/ip6gre/geneve (GRE has no RCO; Linux has none
/// for Geneve, docs/geneve.md GN-6); a kernel endpoint
/// with an encap other than vxlan (the kernel's geneve/fou/GRE modules are not used); gre with an
/// IPv6 underlay (that is ip6gre); a congestion control name that is not one (letters, digits,
/// '_', at most 15: TCP_CA_NAME_MAX). nullopt when the options are acceptable.
std::optional<std::string> demo_refusal(const DemoOptions& o);

/// Run the demo (with `latency`: "latency_us" {avg, p50, p90, p99, p99_9, max} instead of
/// throughput; skipped when sockperf is missing). Errors: demo_refusal(). A SIGINT/SIGTERM during the run ends it early,
/// removes everything made and sets "interrupted" (the signal number) and "error". Result JSON
/// (every encap): {"gbit_per_s", "bytes", "retransmits", "cpu_s" {a,b}, "cpu_s_per_gb" {a,b},
/// "wakeups_per_gb" {a,b} (the endpoint threads' voluntary context switches during the stream,
/// /proc/PID/task/*/status, per GB),
/// "stats" {a,b} (the endpoints' `ofld stats --json`), "endpoint_exit" {a,b}, "config"
/// {"encap", ..., "tcp_congestion"}}. Skipped when not root.
io::Result<nlohmann::json> run_demo(const DemoOptions& o);

}  // namespace ofld::lab
