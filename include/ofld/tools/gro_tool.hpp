// ofld/tools/gro_tool.hpp — library logic behind `ofld gro`: GRO over a capture (the CLI only
// parses options and prints). `ofld conformance gro` and `ofld bench gro` are lab code:
// ofld/lab/gro_conformance.hpp, ofld/lab/bench.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/gro/engine.hpp"

namespace ofld::tools {

// ---- `ofld gro`: GRO over a capture -------------------------------------------------------

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
nlohmann::json to_json(const gro::Counters& c);

}  // namespace ofld::tools
