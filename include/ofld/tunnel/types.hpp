// ofld/tunnel/endpoint.hpp — underlay addresses (IPv4/IPv6 + UDP port) and tunnel counters.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ofld::tunnel {

/// An underlay IP address (IPv4 or IPv6), bytes in network order.
struct IpAddr {
  std::uint8_t family = 0;  ///< 4 or 6; 0 = unset
  std::array<std::uint8_t, 16> bytes{};
  bool is_v6() const noexcept { return family == 6; }
  bool empty() const noexcept { return family == 0; }
  /// Parse dotted-quad or RFC 4291 text (inet_pton). nullopt when neither.
  static std::optional<IpAddr> parse(std::string_view text);
  std::string to_string() const;
  friend bool operator==(const IpAddr&, const IpAddr&) = default;
  friend auto operator<=>(const IpAddr&, const IpAddr&) = default;
};

/// Why the tunnel dropped a frame (every drop has one). Names via to_string().
enum class Drop : std::uint8_t {
  // receive (decapsulation)
  RxTruncated,        ///< datagram shorter than VXLAN header + Ethernet header
  RxNoVniFlag,        ///< I flag clear (RFC 7348 §5)
  RxBadFlags,         ///< unknown flag bits or non-zero reserved bits (V-4: Linux drops these)
  RxRcoNotEnabled,    ///< RCO flag set but remcsumrx not configured (V-4)
  RxRcoNoOuterCsum,   ///< RCO frame whose outer UDP checksum is 0 (K-2)
  RxRcoBadOffset,     ///< RCO start/offset outside the inner frame (C-33)
  RxWrongVni,         ///< VNI is not ours
  RxInnerCsumBad,     ///< inner L4 checksum does not verify (not RCO)
  RxLoop,             ///< inner source MAC is our own TAP's address
  RxUdp6ZeroCsum,     ///< IPv6 datagram with UDP checksum 0 and no udp6zerocsumrx (RFC 6935)
  RxEcnNotEct,        ///< outer CE over a Not-ECT inner packet (RFC 6040 §4.2, INET_ECN_decapsulate)
  /// inner IPv4/IPv6 packet shorter than its header, or than the length its header claims
  /// (IHL past the end, tot_len / payload_len + 40 > bytes present): pskb_inet_may_pull in
  /// vxlan_rcv (rx_length_errors), ip_rcv_core / ip6_rcv_core (SKB_DROP_REASON_PKT_TOO_SMALL)
  RxInnerTooSmall,
  /// inner IP header invalid (version not that of the ethertype, IHL < 5, tot_len < IHL·4):
  /// ip_rcv_core / ip6_rcv_core inhdr_error (SKB_DROP_REASON_IP_INHDR)
  RxInnerHdrError,
  // transmit (encapsulation)
  TxNotEthernet,      ///< TAP frame shorter than an Ethernet header
  TxVnetRejected,     ///< virtio_net_hdr refused (S-1..S-4; public bugs B1, B2, B5)
  TxGsoFailed,        ///< GSO engine refused the super-packet
  TxCsumFailed,       ///< software checksum could not be finished (checksum_help error)
  TxNoRemote,         ///< no remote known for the destination and none to flood to
  TxTooBig,           ///< a segment does not fit in a UDP datagram
  TxSendFailed,       ///< sendmsg failed even after the fallbacks
  RxTapWriteFailed,   ///< TAP write refused
  kCount
};
std::string_view to_string(Drop d) noexcept;
inline constexpr std::size_t kDropCount = std::size_t(Drop::kCount);

/// Counters of one tunnel endpoint (single-threaded; one instance per worker).
struct Counters {
  std::uint64_t tx_frames = 0, tx_bytes = 0;          ///< TAP frames read, bytes
  std::uint64_t tx_datagrams = 0, tx_dgram_bytes = 0; ///< UDP datagrams sent (VXLAN payload bytes)
  std::uint64_t tx_trains = 0;                        ///< sendmsg calls with UDP_SEGMENT
  std::uint64_t tx_gso_super = 0;                     ///< TAP super-packets segmented by GSO
  std::uint64_t tx_rco = 0;                           ///< datagrams sent with an RCO header
  std::uint64_t tx_csum_sw = 0;                       ///< inner checksums computed in software
  std::uint64_t tx_csum_skipped = 0;                  ///< inner checksums left as a seed (RCO)
  std::uint64_t tx_flooded = 0;                       ///< frames flooded to every remote
  std::uint64_t rx_datagrams = 0, rx_dgram_bytes = 0; ///< UDP datagrams received
  std::uint64_t rx_gro_trains = 0;                    ///< recvmsg results carrying UDP_GRO gso_size
  std::uint64_t rx_rco = 0;                           ///< RCO frames accepted (C-33)
  std::uint64_t rx_rco_nocsum = 0;                    ///< RCO frames whose outer UDP checksum was 0 (K-2)
  std::uint64_t rx_csum_validated = 0;                ///< inner checksums verified in software
  std::uint64_t rx_csum_skipped = 0;                  ///< inner checksums not summed (RCO partial)
  /// Inner TCP/UDP checksum fields holding exactly their pseudo-header seed, taken as
  /// CHECKSUM_PARTIAL (a kernel peer over veth, spec K-9) and written NEEDS_CSUM.
  std::uint64_t rx_csum_partial_seed = 0;
  /// Such seeds in datagrams whose outer UDP checksum is known to be 0: not trusted (left
  /// CHECKSUM_NONE, so GRO / the local stack verify them like any other checksum).
  std::uint64_t rx_csum_seed_nocsum = 0;
  std::uint64_t rx_ecn_ce = 0;                        ///< inner packets marked CE from the outer header
  std::uint64_t rx_ecn_bogus = 0;                     ///< Not-ECT inner under ECT outer (RFC 6040 "!!!"; delivered)
  std::uint64_t rx_frames = 0, rx_bytes = 0;          ///< frames written to the TAP
  std::uint64_t rx_gro_merged = 0;                    ///< frames merged by GRO after decap
  std::uint64_t rx_gro_aggregates = 0;                ///< GRO aggregates written
  std::uint64_t fdb_learned = 0;                      ///< FDB entries learned or moved
  std::uint64_t fdb_aged = 0;                         ///< FDB entries aged out
  std::uint64_t gso_fallbacks = 0;                    ///< runtime EINVAL/EIO → GSO path turned off
  std::array<std::uint64_t, kDropCount> drops{};
  void drop(Drop d) noexcept { ++drops[std::size_t(d)]; }
  std::uint64_t drops_total() const noexcept;
  Counters& operator+=(const Counters& o) noexcept;
};

}  // namespace ofld::tunnel
