// ofld/lab/gso_conformance.hpp — LAB code (target ofld_lab, not installed, no stable API):
// `ofld conformance gso`, the built-in GSO cases and their replay through the running kernel
// (KernelGso, spec K-3b) beside ofld's tx_prepare, frame by frame.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/io/tap.hpp"

namespace ofld::lab {

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

}  // namespace ofld::lab
