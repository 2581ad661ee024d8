// ofld/core/gso_info.hpp — a packet's GSO metadata (skb_shared_info gso_size / gso_segs /
// gso_type) and the SKB_GSO_* type bits (spec §1.2; include/linux/skbuff.h, 6.12 values).
#pragma once

#include <cstdint>
#include <string_view>

namespace ofld::core {

/// gso_size value meaning "segment at frag_list boundaries" (GSO_BY_FRAGS).
inline constexpr std::uint16_t kGsoByFrags = 0xFFFF;

namespace skb_gso {
inline constexpr std::uint32_t TCPV4 = 1u << 0;
inline constexpr std::uint32_t DODGY = 1u << 1;
inline constexpr std::uint32_t TCP_ECN = 1u << 2;
inline constexpr std::uint32_t TCP_FIXEDID = 1u << 3;  ///< 6.12 name; [newer] __SKB_GSO_TCP_FIXEDID
inline constexpr std::uint32_t TCPV6 = 1u << 4;
inline constexpr std::uint32_t FCOE = 1u << 5;
inline constexpr std::uint32_t GRE = 1u << 6;
inline constexpr std::uint32_t GRE_CSUM = 1u << 7;
inline constexpr std::uint32_t IPXIP4 = 1u << 8;
inline constexpr std::uint32_t IPXIP6 = 1u << 9;
inline constexpr std::uint32_t UDP_TUNNEL = 1u << 10;
inline constexpr std::uint32_t UDP_TUNNEL_CSUM = 1u << 11;
inline constexpr std::uint32_t PARTIAL = 1u << 12;
inline constexpr std::uint32_t TUNNEL_REMCSUM = 1u << 13;
inline constexpr std::uint32_t SCTP = 1u << 14;
inline constexpr std::uint32_t ESP = 1u << 15;
inline constexpr std::uint32_t UDP = 1u << 16;
inline constexpr std::uint32_t UDP_L4 = 1u << 17;
inline constexpr std::uint32_t FRAGLIST = 1u << 18;
/// [newer] AccECN segmentation (no device-feature twin in 6.12; see features.hpp).
inline constexpr std::uint32_t TCP_ACCECN = 1u << 19;
/// [newer] software-only fixed-ID bits (outer / inner); both map to TSO_MANGLEID.
inline constexpr std::uint32_t TCP_FIXEDID_OUTER = 1u << 30;
inline constexpr std::uint32_t TCP_FIXEDID_INNER = 1u << 31;
/// The tunnel ("encap") bits that tunnel decap strips (iptunnel_pull_offloads, C-19).
inline constexpr std::uint32_t ENCAP_ALL =
    GRE | GRE_CSUM | IPXIP4 | IPXIP6 | UDP_TUNNEL | UDP_TUNNEL_CSUM | TUNNEL_REMCSUM;
/// Name of a single bit ("TCPV4", ...); "" for an unnamed bit or a multi-bit mask.
std::string_view name(std::uint32_t bit) noexcept;
}  // namespace skb_gso

/// skb_shared_info GSO fields.
struct GsoInfo {
  std::uint16_t size = 0;  ///< gso_size: payload bytes per segment; 0 = not GSO; kGsoByFrags
  std::uint16_t segs = 0;  ///< gso_segs
  std::uint32_t type = 0;  ///< gso_type: skb_gso:: bits
};

}  // namespace ofld::core
