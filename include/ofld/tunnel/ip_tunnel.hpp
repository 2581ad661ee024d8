// ofld/tunnel/ip_tunnel.hpp — the L3 tunnel modes of `ofld tunnel`: GUE (IP over UDP with
// the Generic UDP Encapsulation header, optionally with remote checksum offload) and GRE /
// ip6gre (IP over GRE over IPv4 / IPv6, optional key and checksum). Like Linux's `ipip/sit
// encap gue` and `gre`/`ip6gre` devices these carry IP packets (no inner Ethernet): the
// endpoint's local side is a TUN device.
//
// Configuration, counters and the per-packet encapsulation / decapsulation without I/O:
//   GUE: draft-ietf-intarea-gue + Linux include/net/gue.h, net/ipv4/fou_core.c
//        (__gue_build_header, gue_udp_recv, gue_remcsum): spec V-6..V-10, W-25, W-27, C-33, K-2.
//   GRE: RFC 2784 / RFC 2890 + Linux net/ipv4/ip_gre.c, net/ipv4/gre_demux.c, ip_tunnel.c
//        (gre_parse_header, ip_tunnel_rcv flag checks): spec V-12, V-13, X-33.
// The outer IP header (both) and the outer UDP header (GUE) are built by the kernel: we send
// through a UDP socket (GUE) or a raw IP socket of protocol 47 (GRE), so an "encapsulated
// packet" here starts at the GUE or GRE header.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/common_config.hpp"
#include "ofld/tunnel/types.hpp"
#include "ofld/tunnel/vxlan.hpp"  // OuterCsum

namespace ofld::tunnel {

struct EncapKind;  // ofld/tunnel/encap_kind.hpp

/// Settings of a GUE endpoint (`ipip/sit ... encap gue`): the common and UDP settings in the
/// bases (TUN MTU: bytes of inner IP).
struct GueConfig : UdpTunnelSettings {
  IpAddr remote;                ///< `remote ADDR` (same family as local)
  std::uint16_t port = 0;       ///< `port P`: UDP port (both ends); GUE has no IANA port → required
  /// Bytes added on the underlay: outer IP + UDP + GUE (4, + 8 when remcsumtx: the Linux
  /// header-room estimate counts the RCO option, V-10).
  int overhead() const noexcept;
  /// "gue".
  std::string_view name() const noexcept { return "gue"; }
  /// Its description for the configuration and reload (ofld/tunnel/encap_kind.hpp; defined in
  /// its src/tunnel/encap_*.cpp).
  static const EncapKind& kind();
};

/// Settings of a GRE (IPv4 underlay) or ip6gre (IPv6 underlay) endpoint: the common settings
/// in the base (TUN MTU: bytes of inner IP).
struct GreConfig : TunnelCommon {
  IpAddr remote;                            ///< `remote ADDR` (same family as local)
  std::optional<std::uint32_t> ikey, okey;  ///< `key K` (both), `ikey K`, `okey K`
  bool icsum = false, ocsum = false;        ///< `csum` (both), `icsum`, `ocsum`
  /// Bytes added on the underlay: outer IP + GRE (4 + C + K; V-13).
  int overhead() const noexcept;
  /// "gre" or "ip6gre".
  std::string_view name() const noexcept { return ipv6() ? "ip6gre" : "gre"; }
  /// Its description for the configuration and reload (ofld/tunnel/encap_kind.hpp; defined in
  /// its src/tunnel/encap_*.cpp).
  static const EncapKind& kind();
};

/// Check a configuration; the error names the bad setting.
std::optional<std::string> validate(const GueConfig& cfg);
std::optional<std::string> validate(const GreConfig& cfg);

// Drop reasons, counters and the decapsulation result are the endpoint's one set
// (ofld/tunnel/types.hpp: Drop, Counters, DecapResult).

// ---- GUE (src/tunnel/gue.cpp) ----------------------------------------------------------------

/// GUE header for one inner IP packet (`inner`, data() at the IP header, not GSO or GSO):
/// bare 4-byte header with proto 4 / 41, or — when cfg.remcsum_tx, an outer checksum and a
/// CHECKSUM_PARTIAL inner — the private-flags word + RCO option (start = csum_start from the
/// inner IP header, offset = start + csum_offset; W-27, V-8). Writes the header into `out`
/// (≥ 12 bytes) and returns its length; 0 when the inner packet is not IPv4/IPv6.
std::size_t gue_build_header(const core::Packet& inner, const GueConfig& cfg,
                             std::span<std::uint8_t> out, bool& rco);

/// gue_udp_recv for one UDP payload: V-9 checks (version 0, no control message, known
/// flags, options inside hlen), version 1 = direct IP (V-7), proto IPIP/IPv6 matching the
/// packet's version nibble, the inner IP lengths (check_inner_ip: rx_inner_too_small,
/// rx_inner_hdr_error; padding trimmed), RCO (C-33/W-25) with the checksum field inside the
/// packet: partial mode marks the inner checksum PARTIAL and sums nothing; remcsum_nopartial
/// computes and writes it. RCO needs remcsumrx and an outer checksum not known to be 0 (K-2).
/// IPv6 underlay: `outer` Zero without udp6_zero_csum_rx → RxUdp6ZeroCsum (RFC 6935 §5,
/// as the kernel's udpv6 receive without UDP_NO_CHECK6_RX). `outer_tos`: the outer IPv4 TOS /
/// IPv6 traffic class (0..255) or -1 when unknown; known → RFC 6040 §4.2 on the inner header
/// (ecn_decap_ip; Not-ECT under CE → RxEcnNotEct). Counts drops into `c`.
DecapResult gue_decap(std::span<const std::uint8_t> payload, const GueConfig& cfg,
                        OuterCsum outer, Counters& c, int outer_tos = -1);

// ---- GRE (src/tunnel/gre.cpp) ----------------------------------------------------------------

/// GRE header for an inner packet of ethertype `proto`: C (checksum 0, to be filled) when
/// cfg.ocsum, K when cfg.okey. Writes into `out` (≥ 12 bytes); returns its length.
std::size_t gre_build_header(std::uint16_t proto, const GreConfig& cfg,
                             std::span<std::uint8_t> out);
/// Write the GRE checksum (V-13: over the GRE header and payload, field zero, no pseudo
/// header) into the GRE packet `pkt` (starting at its GRE header) when C is set.
void gre_fill_checksum(std::span<std::uint8_t> pkt) noexcept;

/// GRE receive for one GRE packet (from the GRE header): version 0, no routing, C bit equal to
/// icsum (ip_tunnel_rcv), checksum verified (the inner packet is then CHECKSUM_COMPLETE with
/// its known sum), key presence and value equal to ikey, protocol IPv4/IPv6, the inner IP
/// lengths (check_inner_ip; padding trimmed, the sum adjusted). Sequence numbers are ignored
/// (no iseq). `outer_tos` as gue_decap (RFC 6040 §4.2; ipgre_rcv → ip_tunnel_rcv →
/// IP_ECN_decapsulate). Counts drops into `c`.
DecapResult gre_decap(std::span<const std::uint8_t> payload, const GreConfig& cfg,
                        Counters& c, int outer_tos = -1);

/// The outer TOS / traffic class for the inner IP packet `ip` (data() at the IP header), as
/// ip_tunnel_xmit / ip6gre: the configured tos (or the inner dsfield with tos_inherit), ECN
/// bits from the inner header per INET_ECN_encapsulate (RFC 6040 §4.1: CE → ECT(0)).
std::uint8_t ip_outer_tos(const TunnelCommon& cfg, std::span<const std::uint8_t> ip) noexcept;

}  // namespace ofld::tunnel
