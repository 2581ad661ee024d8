// ofld/lab/gro_conformance.hpp — LAB code (target ofld_lab, not installed, no stable API):
// `ofld conformance gro`, the built-in GRO cases (the gro.c selftest table, K-7, VXLAN
// receive) and their replay through the running kernel (KernelGro, KernelVxlanGro) beside the
// matching ofld pipeline.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ofld/core/packet.hpp"

namespace ofld::lab {

// ---- built-in cases (gro.c table and more), as Ethernet frames ------------------------------

/// Which kernel path a case goes through (and which ofld pipeline mirrors it).
enum class GroPath : std::uint8_t {
  Veth,     ///< KernelGro: veth GRO (K-3); ofld: Engine, batches of 64
  VxlanRx,  ///< KernelVxlanGro: VXLAN frames into a veth, kernel vxlan device behind it;
            ///< ofld: vxlan_rx_gro()
};

struct GroCase {
  std::string name;
  std::vector<std::vector<std::uint8_t>> frames;
  std::vector<std::size_t> expect_payloads;  ///< spec §13.1 value (empty: no table value)
  GroPath path = GroPath::Veth;
  /// BIG TCP (G-16, G-17): the receiving veth's gro_max_size / gro_ipv4_max_size, and
  /// ofld's GroConfig the same; 0 = the default (65536).
  std::uint32_t gro_max_size = 0, gro_ipv4_max_size = 0;
};
/// The gro.c table cases for IPv4 and IPv6 (names "ipv4/data_same", ...), K-7 cases, a few
/// multi-flow / UDP cases, and BIG TCP ("big_tcp/...": 8000-byte segments with the GRO
/// limits raised, and the same frames with the defaults). Frames use the selftest's addresses and ports; Ethernet addresses
/// are KernelGro's veth0 → veth1.
std::vector<GroCase> builtin_gro_cases();

// ---- VXLAN receive side (kernel: veth GRO with the VXLAN socket's gro_receive, then
// vxlan_rcv and the vxlan device's gro_cells) -------------------------------------------------

/// The kernel's VXLAN receive path over outer Ethernet / IPv4 / UDP / VXLAN frames, in ofld:
///  1. underlay GRO (Engine, VXLAN socket on UDP 4789: U-4, W-15..W-18) in NAPI polls of 64
///     frames (K-3), each poll ending with a flush of every held flow (G-9);
///  2. every frame a poll delivers is decapsulated as vxlan_rcv does it (V-4 header checks,
///     VNI `vni`; outer headers pulled, tunnel GSO bits and encapsulation cleared —
///     iptunnel_pull_offloads, W-3c), frames of another VNI or not VXLAN are dropped;
///  3. after each underlay poll the decapsulated frames go through gro_cells (W-12, W-19):
///     a second GRO pass in which already-aggregated TCP frames may merge again (G-4, T-10).
/// Returns the inner frames in delivery order.
std::vector<core::Packet> vxlan_rx_gro(const std::vector<std::vector<std::uint8_t>>& frames,
                                       std::uint32_t vni = 42);
/// Built-in VXLAN receive cases ("vxlan-rx/..."): outer frames addressed as KernelVxlanGro
/// expects (kSenderMac/kSenderIp → kReceiverMac/kReceiverIp, UDP 4789, VNI 42), inner frames
/// to the vxlan device's MAC.
std::vector<GroCase> builtin_vxlan_rx_cases();

// ---- `ofld conformance gro`: ofld vs the running kernel --------------------------------------

struct GroFrameCheck {
  bool agree = false;
  std::string detail;  ///< what differs (bytes at offset, gso_type, gso_size, flags)
};
struct GroCaseReport {
  std::string name;
  bool skipped = false;
  std::string message;  ///< skip/error reason
  std::size_t ours = 0, kernel = 0;
  std::vector<GroFrameCheck> frames;
  bool pass = false;
  bool order_differs = false;  ///< per-flow sequences equal, interleaving differs (buckets)
};
struct GroConformanceReport {
  std::vector<GroCaseReport> cases;
  std::size_t passed = 0, failed = 0, skipped = 0;
};
/// Run `cases` through the kernel (KernelGro for GroPath::Veth, KernelVxlanGro for VxlanRx)
/// and through the matching ofld pipeline (the engine in batches of 64, or vxlan_rx_gro) and compare
/// frame by frame: bytes (TCP checksum field raw: both hold the seed for aggregates) and
/// virtio_net_hdr gso_type / gso_size / flags / csum_start / csum_offset. Not root or no
/// kernel support → every case skipped with the reason.
GroConformanceReport run_gro_conformance(const std::vector<GroCase>& cases);
/// Cases from capture files: Ethernet frames of each file in order, one case per file.
std::vector<GroCase> gro_cases_from_pcaps(const std::vector<std::string>& files);
nlohmann::json to_json(const GroConformanceReport& r);

}  // namespace ofld::lab
