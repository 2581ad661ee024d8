// GRE GSO over IPv4 and IPv6: gre_gso_segment (net/ipv4/gre_offload.c). Spec X-33, V-12,
// V-13: with GRE_CSUM the checksum field is zeroed (GSO-partial: pre-adjusted) and then
// either computed in software over the GRE header and everything after it (no pseudo
// header; the inner region contributes its known sum, C-30) or left PARTIAL at GRE+4 when
// the device has HW_CSUM.
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"
#include "tunnel_segment_common.hpp"

namespace ofld::offload::gso_hooks {

int gre_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (ctx.tunnel_inner) return ctx.fail(GsoReason::NestedTunnel);  // GRE inside a tunnel
  if (!skb.encapsulation || skb.inner_mac_header == core::kNoHeader ||
      skb.inner_network_header == core::kNoHeader)
    return ctx.fail(GsoReason::BadTunnel);
  const core::pos_t gre_pos = skb.data_pos();
  skb.transport_header = gre_pos;
  const int tnl_hlen = int(skb.inner_mac_header - gre_pos);
  if (tnl_hlen < 4 || !skb.may_pull(std::size_t(tnl_hlen))) return ctx.fail(GsoReason::BadTunnel);
  const bool c_bit = (skb.data()[0] & 0x80) != 0;
  // RFC 2784/2890: 4 bytes, + 4 for each of C (checksum), K (key), S (sequence number).
  const std::uint8_t gf = skb.data()[0];
  const int own_hlen = 4 + ((gf & 0x80) ? 4 : 0) + ((gf & 0x20) ? 4 : 0) + ((gf & 0x10) ? 4 : 0);
  const bool inner_ether = wire::load_be16(skb.data() + 2) == wire::ethertype::kTeb;
  if (!one_tunnel_level(skb, gre_pos, own_hlen, inner_ether))
    return ctx.fail(GsoReason::NestedTunnel);
  const bool need_csum = (skb.gso.type & core::skb_gso::GRE_CSUM) != 0;
  const core::Features saved = ctx.features;

  TunnelSwitch sw(ctx, gre_pos, tnl_hlen);
  if (need_csum && !c_bit) return sw.leave(ctx.fail(GsoReason::BadTunnel), saved);
  skb.protocol = skb.inner_protocol;
  skb.encap_hdr_csum = need_csum;
  ctx.features &= ctx.dev->hw_enc_features;
  if (need_csum) ctx.features = ctx.features.without(core::netif_f::SCTP_CRC);
  const bool offload_csum = need_csum && ctx.dev->features.has(core::netif_f::HW_CSUM);

  ctx.protocol = skb.inner_protocol;
  int rc = sw.leave(mac_gso_segment(ctx, skb.inner_protocol), saved);
  if (rc != 0 || ctx.hw_segments) return rc;

  const int gre_off = sw.outer_l4_off();
  for (auto& s : ctx.segs) {
    core::Packet& p = s.pkt;
    sw.restore_segment(p);
    if (!need_csum) continue;
    std::uint8_t* greh = p.at_pos(gre_off, 8);
    if (!greh) return ctx.fail(GsoReason::HeaderTruncated);
    // zero, or for a GSO-partial output pre-adjusted by (payload − gso_size): the
    // inner checksum seed counts the real length, the headers one mss.
    std::uint16_t pre = 0;
    if (ctx.gso_partial && p.is_gso())
      pre = csum::csum_fold16(csum::wsum(p.len() - std::size_t(ctx.data_offset) - p.gso.size));
    wire::store_be16(greh + 4, pre);
    wire::store_be16(greh + 6, 0);
    if (p.encapsulation || !offload_csum) {
      wire::store_be16(greh + 4, core::gso_make_checksum(s, 0));
    } else {
      p.csum = core::CsumPartial{gre_off, 4, false};
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
