// ofld/tools/gso_tool.hpp — library side of `ofld gso`, `ofld conformance gso` and
// `ofld bench gso` (the CLI files only parse arguments and print).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace ofld::tools {

// ---- ofld gso ---------------------------------------------------------------------------------

/// ethtool -K's short aliases (sg, tx, rx, tso, gso, gro, lro, rxvlan, txvlan, ntuple, rxhash)
/// expanded to the group names core::parse_features takes; other tokens pass unchanged.
std::string expand_ethtool_aliases(const std::string& list);

struct GsoToolOptions {
  std::string in, out;
  std::uint16_t mss = 0;
  /// ethtool feature names (core::parse_features); empty + !have_features → no features.
  std::string features;
  bool have_features = false;
  /// Input L4 checksum fields hold pseudo-header seeds (capture from a host with offloads).
  bool csum_partial = false;
  std::uint16_t gue_port = 0;  ///< UDP port carrying GUE (0: none)
};

struct GsoToolSummary {
  std::uint64_t frames_in = 0, frames_out = 0;
  std::uint64_t gso_frames = 0;       ///< frames segmented in software
  std::uint64_t hw_frames = 0;        ///< frames the device would segment (handed over whole)
  std::uint64_t segments = 0;         ///< segments written
  std::uint64_t finished = 0;         ///< non-GSO frames whose seed was finished
  std::uint64_t passed = 0;           ///< frames passed through unchanged
  std::uint64_t dropped = 0;          ///< frames refused (reasons below)
  std::map<std::string, std::uint64_t> drop_reasons;
  /// Frames passed through that need no segmenting (payload fits, not TCP/UDP, ...).
  std::map<std::string, std::uint64_t> pass_reasons;
  /// Frames passed through although their payload exceeds mss, by reason (e.g.
  /// "geneve (not supported)"). Counted in `passed` too.
  std::map<std::string, std::uint64_t> unsegmented_reasons;
  gso::GsoCounters counters;
  core::Features features{};
  /// Non-empty when the input ended inside a record (io::PcapReader::cut_short): the output
  /// holds everything before it.
  std::string cut_short;
};

/// Read `in`, segment every frame whose L4 payload exceeds mss, write `out`. Throws
/// std::runtime_error for an unknown feature name or mss 0; io::PcapError for file errors.
GsoToolSummary run_gso_pcap(const GsoToolOptions& o);
std::string gso_summary_text(const GsoToolSummary& s);
std::string gso_summary_json(const GsoToolSummary& s);

// ---- ofld conformance gso (K-3b) -----------------------------------------------------------

struct GsoCase {
  std::string name;
  io::VnetHdr vnet;
  std::vector<std::uint8_t> frame;
};
/// Built-in cases: TCPv4, TCPv6, USO v4/v6 (exact multiple, 1-byte tail), CWR/PSH/FIN
/// placement, TCP options, TCP without NEEDS_CSUM, IPv6 hop-by-hop (K-8).
std::vector<GsoCase> builtin_gso_cases();
/// Cases from a capture: every TCP/UDP frame whose payload exceeds mss, as a virtio request
/// (S-7/S-8 from the prepared packet).
std::vector<GsoCase> gso_cases_from_pcap(const std::string& path, std::uint16_t mss,
                                         bool csum_partial);

/// Our answer for a case: what a device with `sink_features` is handed (segments).
struct OursResult {
  std::vector<std::vector<std::uint8_t>> frames;
  std::string error;  ///< to_packet rejection or GSO drop reason, empty when ok
};
OursResult gso_ours(const GsoCase& c, core::Features sink_features);

struct GsoCaseResult {
  std::string name;
  bool agree = false;
  std::size_t kernel_frames = 0, our_frames = 0;
  std::string detail;  ///< first difference, or both sides' error
};
struct GsoConformance {
  bool skipped = false;
  std::string message;  ///< skip reason / set-up error
  std::vector<GsoCaseResult> cases;
  bool all_agree() const noexcept;
};
/// Replay `cases` through the running kernel (tools::KernelGso, needs root) and through ofld
/// (sink features SG|FRAGLIST like the kernel's offload-less TAP), frame by frame.
GsoConformance run_gso_conformance(const std::vector<GsoCase>& cases);
std::string gso_conformance_text(const GsoConformance& r);
std::string gso_conformance_json(const GsoConformance& r);

// ---- ofld bench gso --------------------------------------------------------------------------

struct GsoBenchRow {
  std::string name;
  double ns_per_segment_median = 0, ns_per_segment_min = 0, ns_per_segment_max = 0;
  std::size_t segments = 0;
  std::string note;
};
struct GsoBenchResults {
  std::size_t payload = 0, mss = 0, segments = 0, reps = 0;
  std::vector<GsoBenchRow> rows;
  bool have_dpdk = false;
  std::string dpdk_note;
  double sg_over_dpdk = 0;  ///< ours SG median / DPDK median
};
GsoBenchResults run_gso_bench(int reps = 15);
std::string gso_bench_text(const GsoBenchResults& r);
std::string gso_bench_json(const GsoBenchResults& r);

}  // namespace ofld::tools
