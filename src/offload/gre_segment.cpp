// GRE GSO over IPv4 and IPv6: gre_gso_segment (net/ipv4/gre_offload.c). Spec X-33, V-12,
// V-13: with GRE_CSUM the checksum field is zeroed and then either computed in software over
// the GRE header and everything after it (no pseudo header; the inner region contributes its
// known sum, C-30) or left PARTIAL at GRE+4 when the device has HW_CSUM.
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::offload::gso_hooks {

int gre_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.encapsulation || skb.inner_mac_header == core::kNoHeader ||
      skb.inner_network_header == core::kNoHeader)
    return ctx.fail(GsoReason::BadTunnel);
  const core::pos_t gre_pos = skb.data_pos();
  skb.transport_header = gre_pos;
  const int tnl_hlen = int(skb.inner_mac_header - gre_pos);
  if (tnl_hlen < 4 || !skb.may_pull(std::size_t(tnl_hlen))) return ctx.fail(GsoReason::BadTunnel);
  const bool c_bit = (skb.data()[0] & 0x80) != 0;

  const core::pos_t mac = skb.mac_header, nh = skb.network_header;
  const std::uint16_t protocol = ctx.protocol, skb_protocol = skb.protocol;
  const core::pos_t l3_pos = ctx.l3_pos;
  const std::uint16_t l3_proto = ctx.l3_proto;
  const int encap_level = ctx.encap_level;
  skb.encapsulation = false;
  ctx.encap_level = 0;
  skb.pull(std::size_t(tnl_hlen));
  skb.mac_header = skb.data_pos();
  skb.network_header = skb.inner_network_header;
  skb.protocol = skb.inner_protocol;

  const bool need_csum = (skb.gso.type & core::skb_gso::GRE_CSUM) != 0;
  if (need_csum && !c_bit) {
    skb.protocol = skb_protocol;
    return ctx.fail(GsoReason::BadTunnel);
  }
  skb.encap_hdr_csum = need_csum;
  const core::Features saved = ctx.features;
  ctx.features &= ctx.dev->hw_enc_features;
  if (need_csum) ctx.features = ctx.features.without(core::netif_f::SCTP_CRC);
  const bool offload_csum = need_csum && ctx.dev->features.has(core::netif_f::HW_CSUM);

  ctx.protocol = skb.inner_protocol;
  int rc = gso::mac_gso_segment(ctx, skb.inner_protocol);
  ctx.features = saved;
  ctx.protocol = protocol;
  ctx.l3_pos = l3_pos;
  ctx.l3_proto = l3_proto;
  ctx.encap_level = encap_level;
  skb.protocol = skb_protocol;
  if (rc != 0 || ctx.hw_segments) {
    skb.mac_header = mac;
    skb.network_header = nh;
    skb.transport_header = gre_pos;
    skb.encapsulation = true;
    if (ctx.hw_segments) skb.push(std::size_t(tnl_hlen));
    return rc;
  }
  const int mac_off = ctx.seg_off(mac), nh_off = ctx.seg_off(nh), gre_off = ctx.seg_off(gre_pos);
  for (auto& s : ctx.segs) {
    core::Packet& p = s.pkt;
    if (p.ip_summed() == core::IpSummed::Partial) {
      p.inner_mac_header = p.mac_header;
      p.inner_network_header = p.network_header;
      p.inner_transport_header = p.transport_header;
      p.encapsulation = true;
    } else {
      p.encapsulation = false;
    }
    p.protocol = skb_protocol;
    p.mac_header = mac_off;
    p.network_header = nh_off;
    p.transport_header = gre_off;
    if (!need_csum) continue;
    std::uint8_t* greh = p.at_pos(gre_off, 8);
    if (!greh) return ctx.fail(GsoReason::HeaderTruncated);
    wire::store_be16(greh + 4, 0);
    wire::store_be16(greh + 6, 0);
    if (p.encapsulation || !offload_csum) {
      wire::store_be16(greh + 4, gso::gso_make_checksum(s, 0));
    } else {
      p.csum = core::CsumPartial{gre_off, 4, false};
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
