// ofld/tunnel/vxlan.hpp — VXLAN endpoint logic without I/O: configuration (the iproute2
// `ip link add type vxlan` knobs), encapsulation of inner Ethernet frames into VXLAN UDP
// payloads, decapsulation with RCO, and the UDP source-port choice.
//
// The outer IP and UDP headers are built by the kernel (we send through a UDP socket), so an
// "encapsulated frame" here is the UDP payload: 8-byte VXLAN header + inner Ethernet frame.
// Sources: RFC 7348 §5; draft-herbert-vxlan-rco; Linux drivers/net/vxlan/vxlan_core.c
// (vxlan_build_skb, vxlan_rcv, vxlan_remcsum); spec W-25, W-26, C-33, V-1..V-4, K-2.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/common_config.hpp"
#include "ofld/tunnel/ecn.hpp"
#include "ofld/tunnel/fdb.hpp"
#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

struct EncapKind;  // ofld/tunnel/encap_kind.hpp

/// VXLAN device configuration (IFLA_VXLAN_* equivalents); the common and UDP settings
/// (local, ttl, tos, mtu — the TAP MTU, bytes of inner L3 —, udpcsum, RCO) in the bases.
struct VxlanConfig : UdpTunnelSettings {
  std::uint32_t vni = 0;        ///< 24-bit VXLAN network identifier
  std::vector<IpAddr> remotes;  ///< default destinations (flood list); ≥ 1
  std::uint16_t dstport = 4789; ///< IANA VXLAN port (V-4)
  std::uint16_t port_min = 0;   ///< srcport range; 0/0 = the kernel's default local port range
  std::uint16_t port_max = 0;
  std::uint32_t ageing_s = 300; ///< FDB ageing (seconds)
  bool learning = true;         ///< learn MAC → remote from received frames
  /// Learning bounds (`maxaddress N`, `maxaddress-per-remote N`, `learning-from
  /// remotes|any`, `local-maxaddress N`; 0 = unbounded). See FdbLimits for the defaults.
  FdbLimits fdb_limits;

  /// Bytes the encapsulation adds on the underlay: outer IP + UDP + VXLAN + inner Ethernet
  /// (what the TAP MTU must leave room for; the kernel's VXLAN_HEADROOM / VXLAN6_HEADROOM).
  int overhead() const noexcept { return (ipv6() ? 40 : 20) + 8 + 8 + 14; }
  /// "vxlan".
  std::string_view name() const noexcept { return "vxlan"; }
  /// Its description for the configuration and reload (ofld/tunnel/encap_kind.hpp; defined in
  /// its src/tunnel/encap_*.cpp).
  static const EncapKind& kind();
  /// Effective source-port range (kernel default: inet local port range 32768..60999).
  std::uint16_t src_min() const noexcept { return port_min || port_max ? port_min : 32768; }
  std::uint16_t src_max() const noexcept { return port_min || port_max ? port_max : 60999; }
};

// EcnDecap, ecn_decapsulate, ecn_encapsulate: ofld/tunnel/ecn.hpp.

/// The dsfield (IPv4 TOS / IPv6 traffic class) of an Ethernet frame's IP header, skipping up
/// to two VLAN tags (802.1Q / 802.1ad); 0 for a non-IP or truncated frame (the kernel's
/// ip_tunnel_get_dsfield).
std::uint8_t inner_dsfield(std::span<const std::uint8_t> frame) noexcept;

/// The outer TOS / traffic class of a datagram carrying the Ethernet `frame`, as
/// vxlan_xmit_one and geneve_xmit_skb: the configured tos (or the inner dsfield with
/// tos_inherit), then ip_tunnel_ecn_encap.
std::uint8_t outer_tos(const TunnelCommon& cfg, std::span<const std::uint8_t> frame) noexcept;

/// Outer TTL / hop limit and IPv4 DF of one datagram (TxTrain::ttl, TxTrain::df).
struct OuterTtlDf {
  std::uint8_t ttl = 0;  ///< 0: the socket's default (the route's hop limit / sysctl ip_default_ttl)
  std::int8_t df = -1;   ///< 1 set, 0 clear, -1 the socket's own setting (IPv6, GUE, GRE)
};

/// Outer TTL and DF of a datagram carrying the Ethernet `frame` (VXLAN, Geneve), as
/// vxlan_xmit_one and geneve_xmit_skb decide them: `ttl inherit` takes the inner IPv4 TTL or
/// IPv6 hop limit (ip_tunnel_get_ttl), and for another EtherType 0, which the kernel replaces
/// by the route's hop limit as for `ttl auto`; otherwise the configured ttl. DF over IPv4:
/// `df set` 1, `df unset` 0, `df inherit` 1 when the frame's EtherType is IPv6 or IPv4 with DF
/// in the inner header, else 0. Both read the frame's own EtherType (eth->h_proto /
/// skb->protocol): a VLAN-tagged frame counts as not IP. Over IPv6, df is -1.
OuterTtlDf outer_ttl_df(const TunnelCommon& cfg, std::span<const std::uint8_t> frame) noexcept;

/// Check a configuration. Returns an error naming the bad setting, e.g.
/// "remcsumtx: needs an outer UDP checksum (spec K-2); drop noudpcsum/udp6zerocsumtx".
/// need_remote false: no `remote` is required (the flood list comes from a multicast group
/// or from BGP EVPN type-3 routes).
std::optional<std::string> validate(const VxlanConfig& cfg, bool need_remote = true);

/// udp_flow_src_port(): map a flow hash into [min, max] (max exclusive as in the kernel's
/// `((u64)hash * (max - min)) >> 32` + min, after hash ^= hash << 16). Host order.
std::uint16_t flow_src_port(std::uint32_t hash, std::uint16_t min, std::uint16_t max) noexcept;
/// Flow hash of an inner Ethernet frame (addresses + ports), used for flow_src_port.
std::uint32_t inner_flow_hash(std::span<const std::uint8_t> frame) noexcept;

/// Outcome of encapsulating one frame.
struct EncapInfo {
  bool ok = false;
  Drop reason = Drop::TxCsumFailed;  ///< when !ok
  bool rco = false;                  ///< RCO header written (inner field left as a seed)
  bool csum_sw = false;              ///< inner checksum finished in software
  std::size_t hdr_len = 0;           ///< tunnel header bytes written (Encapsulation::encap)
};

/// Whether the outer UDP checksum of a received datagram is known to have been present.
enum class OuterCsum : std::uint8_t { Unknown, Present, Zero };

// DecapResult: ofld/tunnel/types.hpp.

/// vxlan_rcv for one UDP payload: V-4 header checks (I flag, no unknown flag or reserved
/// bits, RCO only with remcsum_rx), VNI match, the inner IP header and lengths
/// (check_inner_frame, as pskb_inet_may_pull and ip_rcv_core/ip6_rcv_core: drops
/// RxInnerTooSmall / RxInnerHdrError; padding after the IP packet trimmed), RCO per C-33/W-25
/// with the checksum field (start + offset, 2 bytes) inside the trimmed frame — partial mode: inner
/// csum PARTIAL at the encoded start, nothing summed; remcsum_nopartial: the inner checksum
/// is computed and written (the frame leaves COMPLETE). Without RCO the inner checksum state
/// is NONE (validated later by GRO or the local stack). An RCO frame whose outer checksum is
/// known to be zero carries no integrity and an unrecoverable inner checksum (K-2): counted
/// in rx_rco_nocsum and dropped (RxRcoNoOuterCsum).
///
/// Receive-side PARTIAL (spec K-9, DESIGN "Receive"): without RCO, an inner TCP/UDP checksum field
/// (Ethernet, up to two VLAN tags, IPv4 unfragmented or IPv6 with hop-by-hop/destination
/// options) that holds exactly the pseudo-header seed of its packet is the receive form of
/// CHECKSUM_PARTIAL — what a kernel peer sends across a veth with tx-checksumming on — and
/// the frame leaves PARTIAL at that L4 header (rx_csum_partial_seed). When `outer` is Zero
/// the seed is not trusted (nothing protects those bytes): the frame stays NONE and is
/// verified like any other (rx_csum_seed_nocsum). Present and Unknown trust it.
///
/// IPv6 underlay: `outer` Zero without udp6_zero_csum_rx → RxUdp6ZeroCsum (RFC 6935 §5,
/// the kernel's UDP_NO_CHECK6_RX).
///
/// `outer_tos`: the outer IPv4 TOS / IPv6 traffic class (0..255), or -1 when unknown (no ECN
/// processing). Known: RFC 6040 decapsulation (ecn_decapsulate) on an inner IPv4/IPv6
/// header — CE or ECT(1) copied in (IPv4 header checksum updated incrementally, a COMPLETE
/// sum adjusted for IPv6), Not-ECT under CE dropped (RxEcnNotEct).
///
/// `owner`: when given, `payload` lies inside owner->bytes and the frame is not copied whole:
/// its Ethernet/IP/TCP headers (inner_header_len) go to the packet's head and the rest stays
/// in `owner` as one fragment (the kernel's page-frag receive; GRO then steals the fragment
/// instead of copying). The caller must not reuse owner's bytes while such packets live.
DecapResult decap(std::span<const std::uint8_t> payload, const VxlanConfig& cfg, OuterCsum outer,
                  Counters& c, const core::BufferRef* owner = nullptr, int outer_tos = -1);

/// The inner Ethernet frame half of decap, shared by the Ethernet encapsulations (VXLAN
/// without RCO, Geneve): fewer than 14 bytes → RxTruncated; the inner IP header and lengths
/// (RxInnerTooSmall / RxInnerHdrError; padding trimmed), the packet (zero-copy with `owner`),
/// the K-9 seed (not trusted under a zero outer checksum) and RFC 6040 with `outer_tos`.
DecapResult decap_ethernet(std::span<const std::uint8_t> inner, OuterCsum outer, Counters& c,
                           const core::BufferRef* owner = nullptr, int outer_tos = -1);

/// Bytes of an inner Ethernet frame's headers that a receive path keeps linear: Ethernet +
/// IPv4 (IHL) or IPv6 (fixed 40) + TCP (data offset) when the frame is TCP over untagged
/// IPv4/IPv6 without fragmentation or IPv6 extension headers; otherwise the whole frame
/// (such packets are built linear). Never more than frame.size().
std::size_t inner_header_len(std::span<const std::uint8_t> frame) noexcept;

}  // namespace ofld::tunnel
