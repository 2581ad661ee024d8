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

}  // namespace ofld::tunnel
