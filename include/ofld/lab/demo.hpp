// ofld/lab/demo.hpp — `ofld demo`: two network namespaces joined by a veth pair, an
// `ofld tunnel` endpoint in each, a TCP stream through the overlay (iperf3), throughput,
// CPU time of each endpoint and both endpoints' counters; everything made is removed.
// Addresses exist only inside the namespaces (underlay 10.231.0.0/24 or fd00:231::/64,
// overlay 192.168.231.0/24).
//
// LAB code (target ofld_lab): used by the ofld command and the tests; not part of libofld,
// not installed, no stable API.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/io/netns.hpp"

namespace ofld::daemon {

struct DemoOptions {
  int seconds = 5;              ///< iperf3 duration
  int streams = 1;              ///< iperf3 -P
  bool ipv6_underlay = false;
  bool offload = true;          ///< endpoints with offloads (--no-offload passes through)
  bool gro = true;              ///< GRO after decapsulation
  bool rco = false;             ///< remcsumtx + remcsumrx on both endpoints
  bool kernel_peer = false;     ///< side B is the kernel's VXLAN device, not ofld
  bool kernel_both = false;     ///< both sides kernel VXLAN (reference for benchmarks)
  unsigned queues = 1;          ///< ofld endpoints' --queues (TAP queues / worker threads)
  bool latency = false;          ///< sockperf TCP ping-pong (64 B) instead of the iperf3 stream
  std::string self_exe;         ///< path of the ofld binary ("" = /proc/self/exe)
};

/// Combinations refused before anything is made (e.g. --rco with a kernel VXLAN endpoint,
/// spec K-1); nullopt when the options are acceptable.
std::optional<std::string> demo_refusal(const DemoOptions& o);

/// Run the demo (with `latency`: "latency_us" {avg, p50, p90, p99, p99_9, max} instead of
/// throughput; skipped when sockperf is missing). Errors: demo_refusal(). A SIGINT/SIGTERM during the run ends it early,
/// removes everything made and sets "interrupted" (the signal number) and "error". Result JSON: {"gbit_per_s", "seconds", "bytes", "cpu_s" {a,b},
/// "cpu_s_per_gb" {a,b}, "stats" {a,b}, "config"}. Skipped when not root.
io::Result<nlohmann::json> run_demo(const DemoOptions& o);

}  // namespace ofld::daemon
