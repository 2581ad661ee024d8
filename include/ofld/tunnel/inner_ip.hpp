// ofld/tunnel/inner_ip.hpp — the length checks a receiver applies to the inner IP packet of a
// decapsulated frame, before it is handed on (to GRO and the TAP/TUN).
//
// Linux checks these in two places: the tunnel driver pulls the IP header
// (pskb_inet_may_pull / skb_vlan_inet_prepare in vxlan_rcv: rx_length_errors), and the
// receiving stack validates the lengths and trims link-layer padding (ip_rcv_core,
// ip6_rcv_core: SKB_DROP_REASON_PKT_TOO_SMALL, SKB_DROP_REASON_IP_INHDR, pskb_trim_rcsum).
// ofld does both at decapsulation, so that a frame the kernel would drop is counted here with
// its reason instead of being written to the TAP/TUN, and GRO never sees a header that is
// not there.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace ofld::tunnel {

enum class InnerIpVerdict : std::uint8_t {
  Ok,        ///< not IP, or an IP packet whose lengths hold
  TooSmall,  ///< fewer bytes than the IP header, its IHL, or tot_len / payload_len + 40 claim
  HdrError,  ///< version other than the ethertype's, IHL < 5, tot_len < IHL·4
};

struct InnerIpCheck {
  InnerIpVerdict verdict = InnerIpVerdict::Ok;
  /// Bytes to keep (Ok): the IP packet's own length (padding after it trimmed, as
  /// pskb_trim_rcsum does), or every byte when the packet is not IPv4/IPv6 or is an IPv6
  /// jumbogram (payload_len 0 with a hop-by-hop header: the length is in the option).
  std::size_t len = 0;
};

/// Check the IP packet `l3` (from its IP header to the end of the frame) carried with
/// `ethertype` (host order; 0x0800 IPv4, 0x86DD IPv6, anything else is not checked).
/// Mirrors ip_rcv_core (IPv4: 20-byte header, version 4, IHL ≥ 5 and inside the bytes,
/// tot_len ≥ IHL·4 and ≤ the bytes) and ip6_rcv_core (40-byte header, version 6,
/// payload_len + 40 ≤ the bytes). The header checksum is not checked.
InnerIpCheck check_inner_ip(std::span<const std::uint8_t> l3, std::uint16_t ethertype) noexcept;

/// The same for an inner Ethernet frame (VXLAN): the IP header after the Ethernet header and
/// up to two VLAN tags (802.1Q / 802.1ad, as the stack checks it again after untagging).
/// `len` counts from the start of the frame. A frame shorter than its link header, or not
/// IP, is Ok with every byte kept (the kernel's tunnel pulls nothing for it).
InnerIpCheck check_inner_frame(std::span<const std::uint8_t> frame) noexcept;

/// Where a TCP/UDP checksum field holds the pseudo-header seed, and which bytes it covers.
struct SeedAt {
  std::size_t l4 = 0;       ///< offset of the TCP/UDP header, from the start of the bytes given
  std::uint16_t off = 0;    ///< csum_offset: the field's offset inside that header (16 / 6)
};

/// The receive form of CHECKSUM_PARTIAL (spec K-9, C-6/C-12): whether the TCP or UDP checksum
/// field of the IPv4/IPv6 packet `ip` (from its IP header; version from the first nibble)
/// holds exactly its pseudo-header seed — the folded, uncomplemented sum of addresses,
/// protocol and L4 length (csum_tcpudp_nofold / csum_ipv6_nofold), what the kernel leaves in
/// a CHECKSUM_PARTIAL packet. nullopt otherwise, and for what cannot carry such a seed: an
/// IPv4 fragment (MF or offset), a UDP checksum of 0 ("none", RFC 768), IPv6 with a fragment
/// header or a routing header with segments left (another pseudo destination), a jumbogram,
/// lengths that disagree with the bytes. Only the headers are read; nothing is summed but
/// the pseudo-header. Whether a seed may be trusted (an outer checksum protects the bytes)
/// is the caller's decision.
std::optional<SeedAt> seed_partial_ip(std::span<const std::uint8_t> ip) noexcept;

}  // namespace ofld::tunnel
