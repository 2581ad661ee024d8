// ofld/tools/gro_tool.hpp — library logic behind `ofld gro`, `ofld conformance gro` and
// `ofld bench gro` (the CLI only parses options and prints).
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
nlohmann::json to_json(const gro::Counters& c);

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
};
/// The gro.c table cases for IPv4 and IPv6 (names "ipv4/data_same", ...), K-7 cases and a few
/// multi-flow / UDP cases. Frames use the selftest's addresses and ports; Ethernet addresses
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

// ---- `ofld bench gro` ----------------------------------------------------------------------

struct GroBenchStat {
  std::string name;
  double median_ns = 0, min_ns = 0, max_ns = 0;  ///< per packet
};
struct GroBenchResult {
  std::vector<GroBenchStat> entries;  ///< prevalidated, validated, dpdk (when available), checksum_only
  bool have_dpdk = false;
  double prevalidated_over_dpdk = 0, validated_over_dpdk = 0;
  double csum_only_over_dpdk = 0;  ///< the validation's checksum alone over DPDK's GRO
  std::string note;
};
/// One flow of 1448-byte TCPv4 segments in batches of 64 (header in the head, payload in a
/// fragment, as a NIC's header split delivers them); ofld with CHECKSUM_UNNECESSARY input
/// (pre-validated) and with CHECKSUM_NONE (software validation, G-12), and DPDK's
/// rte_gro_reassemble + rte_gro_timeout_flush on the same frames when built with DPDK
/// (DPDK GRO does no checksum work); and `checksum_only`, the software checksum of each
/// segment without GRO (the floor under the validated figure). ns per packet, median of `reps` runs.
GroBenchResult run_gro_bench(int reps = 11);
nlohmann::json to_json(const GroBenchResult& r);

}  // namespace ofld::tools
