// ofld/tunnel/types.hpp — underlay addresses, the tunnel endpoint's drop reasons and counters
// (one set for every encapsulation: VXLAN, GUE, GRE, ip6gre) and the decapsulation result.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "ofld/core/packet.hpp"
#include "ofld/wire/ip_addr.hpp"

namespace ofld::tunnel {

/// An underlay IP address (IPv4 or IPv6): the wire-layer value (ofld/wire/ip_addr.hpp).
using wire::IpAddr;

/// Why the tunnel endpoint dropped a frame or datagram (every drop has one; one list for all
/// encapsulations — a reason that cannot happen in a mode stays 0 there). Names via to_string().
enum class Drop : std::uint8_t {
  // receive (decapsulation)
  RxTruncated,        ///< shorter than the tunnel header (+ Ethernet header for VXLAN), or nothing after it
  RxNoVniFlag,        ///< VXLAN: I flag clear (RFC 7348 §5)
  RxBadFlags,         ///< VXLAN: unknown flag bits or non-zero reserved bits (V-4: Linux drops these)
  RxBadHeader,        ///< GUE: version ≠ 0, control message, V-9 flags/options; GRE: version ≠ 0, R
  RxNotIp,            ///< GUE/GRE: inner protocol neither IPv4 nor IPv6 (or disagrees with the packet)
  RxRcoNotEnabled,    ///< RCO flag/option set but remcsumrx not configured (V-4, W-25)
  RxRcoNoOuterCsum,   ///< RCO datagram whose outer UDP checksum is 0 (K-2)
  RxRcoBadOffset,     ///< RCO start/offset outside the inner frame (C-33)
  RxWrongVni,         ///< VXLAN: VNI is not ours
  RxKeyMismatch,      ///< GRE: key absent/present/different from ikey (ip_tunnel_lookup)
  RxCsumFlagMismatch, ///< GRE: C bit differs from icsum (ip_tunnel_rcv)
  RxGreCsumBad,       ///< GRE: checksum does not verify (V-13)
  RxWrongSource,      ///< GUE/GRE: outer source is not the configured remote
  RxInnerCsumBad,     ///< inner L4 checksum does not verify (not RCO)
  RxLoop,             ///< VXLAN: inner source MAC is our own TAP's address
  RxUdp6ZeroCsum,     ///< IPv6 datagram with UDP checksum 0 and no udp6zerocsumrx (RFC 6935)
  RxEcnNotEct,        ///< outer CE over a Not-ECT inner packet (RFC 6040 §4.2, INET_ECN_decapsulate)
  /// inner IPv4/IPv6 packet shorter than its header, or than the length its header claims
  /// (IHL past the end, tot_len / payload_len + 40 > bytes present): pskb_inet_may_pull in
  /// vxlan_rcv (rx_length_errors), ip_rcv_core / ip6_rcv_core (SKB_DROP_REASON_PKT_TOO_SMALL)
  RxInnerTooSmall,
  /// inner IP header invalid (version not that of the ethertype, IHL < 5, tot_len < IHL·4):
  /// ip_rcv_core / ip6_rcv_core inhdr_error (SKB_DROP_REASON_IP_INHDR)
  RxInnerHdrError,
  /// gro_cells_receive refused the frame: device down or backlog over netdev_max_backlog
  /// (W-12; dev_core_stats_rx_dropped_inc)
  RxGroCellsDropped,
  RxDevWriteFailed,   ///< TAP/TUN write refused (after io::VnetWriter's fallbacks)
  // transmit (encapsulation)
  TxNotEthernet,      ///< VXLAN: TAP frame shorter than an Ethernet header
  TxNotIp,            ///< GUE/GRE: TUN packet that is not IPv4/IPv6
  TxVnetRejected,     ///< virtio_net_hdr refused (S-1..S-4; public bugs B1, B2, B5)
  TxGsoFailed,        ///< GSO engine refused the super-packet
  TxCsumFailed,       ///< software checksum could not be finished (checksum_help error)
  TxNoRemote,         ///< no remote known for the destination and none to flood to
  TxTooBig,           ///< a frame or segment does not fit (B4, or a datagram over 65535)
  TxSendFailed,       ///< sendmsg failed even after the fallbacks
  kCount
};
std::string_view to_string(Drop d) noexcept;
inline constexpr std::size_t kDropCount = std::size_t(Drop::kCount);

/// Counters of one tunnel endpoint (single-threaded; one instance per worker; summed with +=).
/// "frames" are what the device side (TAP or TUN) carries: Ethernet frames or IP packets;
/// "datagrams" are encapsulated packets from the tunnel header on (VXLAN/GUE UDP payloads,
/// GRE packets).
struct Counters {
  std::uint64_t tx_frames = 0, tx_bytes = 0;          ///< device frames read, bytes
  std::uint64_t tx_datagrams = 0, tx_dgram_bytes = 0; ///< datagrams sent (bytes from the tunnel header)
  std::uint64_t tx_trains = 0;                        ///< sendmsg calls with UDP_SEGMENT
  std::uint64_t tx_gso_super = 0;                     ///< device super-packets segmented by GSO
  std::uint64_t tx_rco = 0;                           ///< datagrams sent with an RCO header/option
  std::uint64_t tx_csum_sw = 0;                       ///< inner checksums computed in software
  /// Inner checksums left as the pseudo-header seed: RCO (the receiver completes them) and
  /// integrity mode toward a peer that has it (per peer in PeerCounters).
  std::uint64_t tx_csum_skipped = 0;
  std::uint64_t tx_gre_csum = 0;                      ///< GRE checksums written
  std::uint64_t tx_flooded = 0;                       ///< frames flooded to every remote (VXLAN)
  std::uint64_t rx_datagrams = 0, rx_dgram_bytes = 0; ///< datagrams received
  std::uint64_t rx_gro_trains = 0;                    ///< recvmsg results carrying UDP_GRO gso_size
  std::uint64_t rx_rco = 0;                           ///< RCO frames accepted (C-33)
  std::uint64_t rx_rco_nocsum = 0;                    ///< RCO frames whose outer UDP checksum was 0 (K-2)
  std::uint64_t rx_gre_csum_ok = 0;                   ///< GRE checksums verified
  /// Frames written to the device as verified: CHECKSUM_UNNECESSARY, GRO aggregates (whose
  /// segments GRO verified, or took as PARTIAL — see rx_csum_partial_seed / the peers'
  /// rx_csum_seed), and PARTIAL frames completed in software for a device without a vnet header.
  std::uint64_t rx_csum_validated = 0;
  std::uint64_t rx_csum_skipped = 0;                  ///< inner checksums not summed (RCO partial)
  /// Inner TCP/UDP checksum fields holding exactly their pseudo-header seed, taken as
  /// CHECKSUM_PARTIAL (a kernel peer over veth, spec K-9) and written NEEDS_CSUM.
  std::uint64_t rx_csum_partial_seed = 0;
  /// Such seeds in datagrams whose outer UDP checksum is known to be 0: not trusted (left
  /// CHECKSUM_NONE, so GRO / the local stack verify them like any other checksum).
  std::uint64_t rx_csum_seed_nocsum = 0;
  std::uint64_t rx_ecn_ce = 0;                        ///< inner packets marked CE from the outer header
  std::uint64_t rx_ecn_bogus = 0;                     ///< Not-ECT inner under ECT outer (RFC 6040 "!!!"; delivered)
  std::uint64_t rx_frames = 0, rx_bytes = 0;          ///< frames written to the device
  std::uint64_t rx_gro_merged = 0;                    ///< frames merged by GRO after decap
  std::uint64_t rx_gro_aggregates = 0;                ///< GRO aggregates written
  std::uint64_t fdb_learned = 0;                      ///< FDB entries learned or moved (VXLAN)
  std::uint64_t fdb_aged = 0;                         ///< FDB entries aged out (VXLAN)
  /// Learning refused (VXLAN; the frame is still delivered): `maxaddress` reached, the
  /// source's `maxaddress-per-remote` reached, a source `learning-from remotes` does not
  /// know, the interned-remote table full; a new local MAC past `local-maxaddress`.
  std::uint64_t fdb_refused_maxaddress = 0, fdb_refused_per_remote = 0,
                fdb_refused_unknown_source = 0, fdb_refused_remote_table = 0,
                fdb_local_refused = 0;
  std::uint64_t gso_fallbacks = 0;                    ///< runtime EINVAL/EIO → GSO path turned off
  std::array<std::uint64_t, kDropCount> drops{};
  void drop(Drop d) noexcept { ++drops[std::size_t(d)]; }
  std::uint64_t drops_total() const noexcept;
  Counters& operator+=(const Counters& o) noexcept;
};

/// A decapsulated frame: the inner Ethernet frame (VXLAN) or inner IP packet (GUE, GRE) as a
/// Packet, data() at its first header.
struct DecapResult {
  DecapResult() = default;
  /// A result (not yet ok) whose packet is the one `make()` returns, built in place: no
  /// default packet (whose head is allocated) replaced by a move.
  template <class F>
  DecapResult(std::in_place_t, F&& make) : pkt(make()) {}
  bool ok = false;
  Drop reason = Drop::RxTruncated;  ///< when !ok
  bool rco = false;                 ///< RCO processed (C-33)
  core::Packet pkt;
};

}  // namespace ofld::tunnel
