// ofld/tools/gso_tool.hpp — library side of `ofld gso`: software GSO over a capture (the CLI
// file only parses arguments and prints). `ofld conformance gso` and `ofld bench gso` are lab
// code: ofld/lab/gso_conformance.hpp, bench/runners/bench.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/io/tap.hpp"
#include "ofld/offload/virtio_net.hpp"
#include "ofld/wire/numbers.hpp"

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
  /// UDP destination port carrying Geneve (RFC 8926: 6081; 0: none). Frames to another port
  /// are segmented as the kernel's generic UDP tunnel path would (GN-6, docs/geneve.md).
  std::uint16_t geneve_port = wire::udpport::kGeneve;
  /// The device's GSO size limits (core::Device::gso_max_size / gso_ipv4_max_size, bytes):
  /// a super-packet of at least this many bytes is segmented in software even when the
  /// features include TSO (F-10). 65536 by default; up to core::kGsoMaxSize for BIG TCP.
  std::uint32_t gso_max_size = core::kGsoLegacyMaxSize;
  std::uint32_t gso_ipv4_max_size = core::kGsoLegacyMaxSize;
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
  /// "nested tunnels (not supported)"). Counted in `passed` too.
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

}  // namespace ofld::tools
