// ofld/tools/gro_tool.hpp — library logic behind `ofld gro`: GRO over a capture (the CLI only
// parses options and prints). `ofld conformance gro` and `ofld bench gro` are lab code:
// ofld/lab/gro_conformance.hpp, bench/runners/bench.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/gro/engine.hpp"

namespace ofld::tools {

// ---- `ofld gro`: GRO over a capture -------------------------------------------------------

/// The flow hash key `ofld gro` uses when GroPcapOptions::config sets none: a fixed key, so
/// that the same capture and options always give the same output (order of different flows'
/// aggregates included, GroConfig::flow_hash_key). Built-in conformance replays use it too.
inline constexpr std::uint64_t kGroPcapFlowHashKey = 0x6f666c642d67726fULL;  // "ofld-gro"

struct GroPcapOptions {
  std::size_t batch = 64;             ///< frames per NAPI-style poll; each ends in a flush
  std::uint64_t flush_timeout_ns = 0; ///< with a timeout only aged flows complete at poll end
  bool keep_partial = false;          ///< leave the pseudo seed in merged frames (K-4)
  offload::GroConfig config{};
};
struct GroPcapResult {
  gro::Counters counters;
  std::uint64_t frames_in = 0, frames_out = 0;
  std::uint64_t non_ethernet = 0;     ///< frames with no ethertype (SLL non-IP), passed through
  std::uint64_t partial_kept = 0;     ///< merged frames written with the seed (--keep-partial)
  std::string cut_short;  ///< input ended inside a record (io::PcapReader::cut_short)
};
/// Read `in` (any link type the reader accepts: SLL, SLL2 and raw IP frames get a stand-in
/// Ethernet header for the engine and their own link header back), run GRO over its frames
/// in file order (capture timestamps are the clock), write `out`: merged frames with completed checksums (unless keep_partial), timestamps of the
/// aggregate's first frame. Throws io::PcapError on file errors.
GroPcapResult run_gro_pcap(const std::string& in, const std::string& out, const GroPcapOptions& o);
/// `ofld gro --features LIST`: the receiving device's features as ethtool names (or ethtool -K
/// aliases, group names, "none"), as `ofld gso --features`. Sets GroConfig::gro from rx-gro
/// (NETIF_F_GRO, G-1), udp_gro_fwd from rx-udp-gro-forwarding (NETIF_F_GRO_UDP_FWD, U-3) and
/// gro_fraglist from rx-gro-list (NETIF_F_GRO_FRAGLIST, T-4); other names are valid but do
/// not change software GRO over a capture. Throws std::invalid_argument naming an unknown name.
void apply_gro_features(const std::string& list, offload::GroConfig& c);
/// The GRO features in effect in `c`, as ethtool names in bit order (rx-gro, rx-gro-list,
/// rx-udp-gro-forwarding).
std::vector<std::string> gro_feature_names(const offload::GroConfig& c);
nlohmann::json to_json(const gro::Counters& c);

}  // namespace ofld::tools
