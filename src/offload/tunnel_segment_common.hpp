// The inner-packet switch shared by the tunnel segment hooks (gre.cpp,
// udp_tunnel_segment.cpp): what __skb_udp_tunnel_segment and gre_gso_segment both do around
// the call into the inner protocol (spec ).
#pragma once

#include "gso_hooks.hpp"

namespace ofld::offload::gso_hooks {

/// The outer level's state, saved while the inner packet is segmented.
class TunnelSwitch {
 public:
  /// Switch ctx.skb to the inner packet: encapsulation cleared, encap_level 0, `tnl_hlen`
  /// bytes pulled (data() at the inner MAC header), mac_header there, network_header the
  /// inner network header. `outer_l4` = the tunnel header position (transport_header).
  /// The caller has checked that tnl_hlen bytes can be pulled.
  TunnelSwitch(GsoContext& ctx, core::pos_t outer_l4, int tnl_hlen) noexcept;

  /// After the inner call: restore ctx.features (to `saved_features`), ctx.protocol,
  /// ctx.l3_pos/l3_proto, ctx.encap_level and skb->protocol. On failure or when the device
  /// segments also restore the outer headers (skb_gso_error_unwind) and, for the
  /// latter, push the tunnel header back. Returns rc.
  int leave(int rc, core::Features saved_features) noexcept;

  /// Per output segment: a segment whose (inner) checksum is still PARTIAL gets its inner_*
  /// headers set from the current ones and encapsulation = 1 (else 0); protocol and the
  /// outer mac/network/transport positions are put back (segment offsets).
  /// The same on a metadata template (a slab's one PacketMeta for every segment).
  void restore_segment(core::PacketMeta& p) const noexcept;

  std::uint16_t skb_protocol() const noexcept { return skb_protocol_; }
  int outer_l4_off() const noexcept { return ctx_.seg_off(outer_l4_); }

 private:
  GsoContext& ctx_;
  core::pos_t mac_, nh_, outer_l4_;
  int tnl_hlen_;
  std::uint16_t protocol_, skb_protocol_;
  core::pos_t l3_pos_;
  std::uint16_t l3_proto_;
  int encap_level_;
  bool tunnel_inner_;
};

/// One tunnel level (as the kernel segments): the tunnel header at
/// transport_header is exactly `own_hlen` bytes up to inner_mac_header (own_hlen < 0: unknown
/// tunnel, not checked), and the inner network header follows the inner MAC header directly
/// (an Ethernet header and its VLAN tags when `inner_ether`, else nothing). Anything between
/// would be a second tunnel level copied as opaque header with the super-packet's lengths.
/// Returns false when that is not so (the caller fails with NestedTunnel).
bool one_tunnel_level(const core::Packet& skb, core::pos_t tunnel_pos, int own_hlen,
                      bool inner_ether) noexcept;

}  // namespace ofld::offload::gso_hooks
