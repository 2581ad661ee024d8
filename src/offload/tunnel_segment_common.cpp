// See tunnel_segment_common.hpp.
#include "tunnel_segment_common.hpp"

#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

TunnelSwitch::TunnelSwitch(GsoContext& ctx, core::pos_t outer_l4, int tnl_hlen) noexcept
    : ctx_(ctx),
      mac_(ctx.skb->mac_header),
      nh_(ctx.skb->network_header),
      outer_l4_(outer_l4),
      tnl_hlen_(tnl_hlen),
      protocol_(ctx.protocol),
      skb_protocol_(ctx.skb->protocol),
      l3_pos_(ctx.l3_pos),
      l3_proto_(ctx.l3_proto),
      encap_level_(ctx.encap_level),
      tunnel_inner_(ctx.tunnel_inner) {
  core::Packet& skb = *ctx.skb;
  skb.encapsulation = false;
  ctx.encap_level = 0;
  ctx.tunnel_inner = true;
  skb.pull(std::size_t(tnl_hlen));
  skb.mac_header = skb.data_pos();
  skb.network_header = skb.inner_network_header;
}

int TunnelSwitch::leave(int rc, core::Features saved_features) noexcept {
  core::Packet& skb = *ctx_.skb;
  ctx_.features = saved_features;
  ctx_.protocol = protocol_;
  ctx_.l3_pos = l3_pos_;
  ctx_.l3_proto = l3_proto_;
  ctx_.encap_level = encap_level_;
  ctx_.tunnel_inner = tunnel_inner_;
  skb.protocol = skb_protocol_;
  if (rc != 0 || ctx_.hw_segments) {  // skb_gso_error_unwind
    skb.mac_header = mac_;
    skb.network_header = nh_;
    skb.transport_header = outer_l4_;
    skb.encapsulation = true;
    if (ctx_.hw_segments) skb.push(std::size_t(tnl_hlen_));
  }
  return rc;
}

void TunnelSwitch::restore_segment(core::PacketMeta& p) const noexcept {
  if (core::ip_summed_of(p.csum) == core::IpSummed::Partial) {  // inner checksum offloaded: inner_* valid
    p.inner_mac_header = p.mac_header;
    p.inner_network_header = p.network_header;
    p.inner_transport_header = p.transport_header;
    p.encapsulation = true;
  } else {
    p.encapsulation = false;
  }
  p.protocol = skb_protocol_;
  p.mac_header = ctx_.seg_off(mac_);
  p.network_header = ctx_.seg_off(nh_);
  p.transport_header = ctx_.seg_off(outer_l4_);
}

bool one_tunnel_level(const core::Packet& skb, core::pos_t tunnel_pos, int own_hlen,
                      bool inner_ether) noexcept {
  if (own_hlen >= 0 && skb.inner_mac_header - tunnel_pos != own_hlen) return false;
  core::pos_t l3 = skb.inner_mac_header;
  if (inner_ether) {
    core::Packet& p = const_cast<core::Packet&>(skb);
    const std::uint8_t* eh = p.at_pos(l3, wire::eth::kHdrLen);
    if (!eh) return false;
    std::uint16_t type = wire::load_be16(eh + wire::eth::kTypeOffset);
    l3 += wire::eth::kHdrLen;
    for (int tags = 0; (type == wire::ethertype::kVlan || type == wire::ethertype::kQinQ ||
                         type == wire::ethertype::kQinQ9100) && tags < 2; ++tags) {
      const std::uint8_t* tag = p.at_pos(l3, wire::vlan::kHdrLen);
      if (!tag) return false;
      type = wire::load_be16(tag + wire::vlan::kTypeOffset);
      l3 += wire::vlan::kHdrLen;
    }
  }
  return skb.inner_network_header == l3;
}

}  // namespace ofld::offload::gso_hooks
