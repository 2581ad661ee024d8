// UDP tunnel GSO: __skb_udp_tunnel_segment (net/ipv4/udp_offload.c). Spec X-31, W-28 (RCO:
// inner checksum left as the seed), C-30 (outer checksum over the outer header plus the
// inner region's known sum, LCO).
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

int udp_tunnel_segment(GsoContext& ctx, bool inner_ether) {
  core::Packet& skb = *ctx.skb;
  if (skb.inner_mac_header == core::kNoHeader || skb.inner_network_header == core::kNoHeader)
    return ctx.fail(GsoReason::BadTunnel);
  const core::pos_t uh_pos = skb.data_pos();
  skb.transport_header = uh_pos;
  const int tnl_hlen = int(skb.inner_mac_header - uh_pos);
  if (tnl_hlen < 8 || !skb.may_pull(std::size_t(tnl_hlen))) return ctx.fail(GsoReason::BadTunnel);
  const bool is_ipv6 = ctx.l3_proto == wire::ethertype::kIpv6;

  // Take the super-packet's length out of the outer seed.
  const std::uint16_t uh_check = wire::load_be16(skb.data() + 6);
  const csum::wsum partial = csum::csum_sub(uh_check, csum::wsum(skb.len()));

  // Switch to the inner packet.
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
  skb.transport_header = skb.inner_transport_header;

  const std::uint32_t t = skb.gso.type;
  const bool need_csum = (t & core::skb_gso::UDP_TUNNEL_CSUM) != 0;
  skb.encap_hdr_csum = need_csum;
  const bool remcsum = (t & core::skb_gso::TUNNEL_REMCSUM) != 0;
  skb.remcsum_offload = remcsum;
  using namespace core::netif_f;
  const bool offload_csum =
      need_csum && ctx.dev->features.any(is_ipv6 ? (HW_CSUM | IPV6_CSUM) : (HW_CSUM | IP_CSUM));

  const core::Features saved = ctx.features;
  ctx.features &= ctx.dev->hw_enc_features;
  if (need_csum) ctx.features = ctx.features.without(SCTP_CRC);
  if (remcsum) {  // only the outer checksum can be offloaded; the inner stays a seed
    ctx.features = ctx.features.without(CSUM_MASK);
    if (!need_csum || offload_csum) ctx.features |= HW_CSUM;
  }
  int rc;
  if (inner_ether) {
    ctx.protocol = wire::ethertype::kTeb;
    rc = gso::mac_gso_segment(ctx, wire::ethertype::kTeb);
  } else {  // IP-protocol inner: skb->protocol stays the outer ethertype
    rc = gso::ipproto_gso_segment(ctx, skb.inner_ipproto);
  }
  ctx.features = saved;
  ctx.protocol = protocol;
  ctx.l3_pos = l3_pos;
  ctx.l3_proto = l3_proto;
  ctx.encap_level = encap_level;
  if (rc != 0 || ctx.hw_segments) {  // skb_gso_error_unwind
    skb.mac_header = mac;
    skb.network_header = nh;
    skb.transport_header = uh_pos;
    skb.encapsulation = true;
    if (ctx.hw_segments) skb.push(std::size_t(tnl_hlen));
    return rc;
  }

  const int mac_off = ctx.seg_off(mac), nh_off = ctx.seg_off(nh), uh_off = ctx.seg_off(uh_pos);
  for (auto& s : ctx.segs) {
    core::Packet& p = s.pkt;
    if (remcsum) p.csum = core::CsumNone{};
    if (p.ip_summed() == core::IpSummed::Partial) {  // inner checksum offloaded: inner_* valid
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
    p.transport_header = uh_off;
    std::uint8_t* uh = p.at_pos(uh_off, 8);
    if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
    const std::uint32_t len = std::uint32_t(p.len() - std::size_t(uh_off));
    wire::store_be16(uh + 4, std::uint16_t(len));
    if (!need_csum) continue;
    const std::uint16_t seed = csum::csum_fold16(csum::csum_add(partial, len));
    wire::store_be16(uh + 6, seed);
    if (p.encapsulation || !offload_csum) {
      wire::store_be16(uh + 6, csum::udp_csum_mangle(gso::gso_make_checksum(s, ~std::uint32_t(seed))));
    } else {
      p.csum = core::CsumPartial{uh_off, 6, false};
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
