// ofld/tunnel/common_config.hpp — the settings every encapsulation has (underlay address,
// TTL, TOS, device MTU) and those the UDP encapsulations share (VXLAN and GUE: the outer UDP
// checksum and remote checksum offload). Each encapsulation's own configuration type derives
// from one of these (VxlanConfig, GueConfig: UdpTunnelSettings; GreConfig: TunnelCommon), so
// a setting common to several is declared once; ofld/tunnel/tunnel_config.hpp holds the one
// TunnelConfig of an endpoint.
#pragma once

#include <cstdint>

#include "ofld/tunnel/types.hpp"

namespace ofld::tunnel {

/// The outer IPv4 DF bit (iproute2 `df unset|set|inherit`, IFLA_VXLAN_DF / IFLA_GENEVE_DF; VXLAN
/// and Geneve only, and only over IPv4: an IPv6 outer header has no DF, as in the kernel).
enum class OuterDf : std::uint8_t {
  Unset,    ///< the kernel's default: DF clear, an outer packet above the path MTU is fragmented
  Set,      ///< DF set; an outer packet above the path MTU is dropped (EMSGSIZE, counted)
  Inherit,  ///< DF when the inner frame is IPv6, or IPv4 with DF (vxlan_xmit_one, geneve_xmit_skb)
};

/// Settings of every encapsulation (iproute2 names).
struct TunnelCommon {
  IpAddr local;               ///< `local ADDR`: underlay source address (decides IPv4 vs IPv6)
  std::uint8_t ttl = 0;       ///< `ttl N`; 0 (`ttl auto`) = kernel default (route / sysctl)
  std::uint8_t tos = 0;       ///< `tos N`: outer DSCP (its ECN bits come from the inner packet)
  bool tos_inherit = false;   ///< `tos inherit`: outer DSCP from the inner IP header
  bool ttl_inherit = false;   ///< `ttl inherit` (VXLAN, Geneve): outer TTL from the inner IP header
  OuterDf df = OuterDf::Unset;  ///< `df unset|set|inherit` (VXLAN, Geneve over IPv4)
  int mtu = 0;                ///< device MTU (bytes of inner L3); 0 = 1500 − overhead

  bool ipv6() const noexcept { return local.is_v6(); }
  /// Copy the outer-header settings a reload may change (ttl, tos, ttl/tos inherit, df).
  void set_outer(const TunnelCommon& o) noexcept {
    ttl = o.ttl, tos = o.tos, tos_inherit = o.tos_inherit, ttl_inherit = o.ttl_inherit, df = o.df;
  }
};

/// Settings of the encapsulations over UDP (VXLAN, GUE): the outer UDP checksum (RFC 768,
/// RFC 6935 for IPv6 zero checksums) and remote checksum offload (W-25..W-27, K-2).
struct UdpTunnelSettings : TunnelCommon {
  bool udp_csum = true;            ///< IPv4 outer UDP checksum (`udpcsum` / `noudpcsum`)
  bool udp6_zero_csum_tx = false;  ///< IPv6: send outer UDP checksum 0 (RFC 6935)
  bool udp6_zero_csum_rx = false;  ///< IPv6: accept outer UDP checksum 0
  bool remcsum_tx = false;         ///< `remcsumtx`: send RCO (VXLAN W-26, GUE W-27)
  bool remcsum_rx = false;         ///< `remcsumrx`: accept RCO (W-25)
  bool remcsum_nopartial = false;  ///< `remcsum-nopartial`: write the inner checksum on receive

  /// True when transmitted datagrams carry an outer UDP checksum.
  bool tx_outer_csum() const noexcept { return ipv6() ? !udp6_zero_csum_tx : udp_csum; }
};

}  // namespace ofld::tunnel
