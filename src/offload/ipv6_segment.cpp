// IPv6 level of GSO: ipv6_gso_segment (net/ipv6/ip6_offload.c). Spec X-27, K-8: hop-by-hop,
// routing and destination-options headers (the GSO_EXTHDR set) are skipped here and copied
// into every segment with the other headers; payload_len is rewritten per segment. A
// fragment header (not in that set) has no segment hook → UnknownIpProto, as in the kernel.
// BIG-TCP jumbo HBH stripping is not done (ofld keeps GSO within 64 KB).
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

int ipv6_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(40)) return ctx.fail(GsoReason::HeaderTruncated);
  if ((skb.data()[0] >> 4) != 6) return ctx.fail(GsoReason::BadIpHeader);
  std::uint8_t nexthdr = skb.data()[6];
  std::size_t hl = 40;
  for (int n = 0; nexthdr == wire::ipproto::kHopOpts || nexthdr == wire::ipproto::kRouting ||
                  nexthdr == wire::ipproto::kDstOpts;
       ++n) {
    if (n == int(wire::kMaxIpv6ExtHeaders) || !skb.may_pull(hl + 8))
      return ctx.fail(GsoReason::HeaderTruncated);
    const std::uint8_t* eh = skb.data() + hl;
    const std::size_t elen = (std::size_t(eh[1]) + 1) * 8;
    nexthdr = eh[0];
    hl += elen;
    if (!skb.may_pull(hl)) return ctx.fail(GsoReason::HeaderTruncated);
  }
  const core::pos_t nh = skb.data_pos();
  skb.network_header = nh;
  skb.pull(hl);
  const core::Features saved_features = ctx.features;
  const bool encap = ctx.encap_level > 0;
  if (encap) ctx.features &= ctx.dev->hw_enc_features;
  ctx.encap_level += int(hl);
  skb.transport_header = skb.data_pos();

  const core::pos_t saved_l3 = ctx.l3_pos;
  const std::uint16_t saved_l3p = ctx.l3_proto;
  ctx.l3_pos = nh;
  ctx.l3_proto = wire::ethertype::kIpv6;
  int rc = ipproto_gso_segment(ctx, nexthdr);
  ctx.l3_pos = saved_l3;
  ctx.l3_proto = saved_l3p;
  ctx.features = saved_features;
  if (rc != 0 || ctx.hw_segments) {
    skb.network_header = nh;
    return rc;
  }
  const int nhoff = ctx.seg_off(nh);
  if (length_overflows(ctx, nhoff, 40)) return ctx.fail(GsoReason::SegmentTooLong);
  if (ctx.seg_fast && !ctx.gso_partial && core::fast_path()) {
    // X-27, headers in every head; all segments but the last have the same length (seg_fast)
    const std::uint16_t pl_full = std::uint16_t(ctx.out.front().len() - std::size_t(nhoff + 40));
    const std::uint16_t pl_last = std::uint16_t(ctx.out.back().len() - std::size_t(nhoff + 40));
    const std::size_t n = ctx.segs.size();
    for (std::size_t i = 0; i < n; ++i) {
      GsoSeg& s = ctx.segs[i];
      core::Packet& p = s.pkt;
      wire::store_be16(p.data() + nhoff + 4, i + 1 == n ? pl_last : pl_full);
      if (encap) {
        p.inner_network_header = nhoff;
        p.inner_transport_header = p.transport_header;
      }
      p.network_header = nhoff;
    }
    return 0;
  }
  for (auto& s : ctx.segs) {
    std::uint8_t* ip = s.pkt.at_pos(nhoff, 40);
    if (!ip) return ctx.fail(GsoReason::HeaderTruncated);
    // payload_len (for one mss when the segment is a GSO-partial output)
    wire::store_be16(ip + 4, std::uint16_t(core::one_mss_len(ctx, s, nhoff + 40)));
    if (encap) {  // skb_reset_inner_headers
      s.pkt.inner_network_header = nhoff;
      s.pkt.inner_transport_header = s.pkt.transport_header;
    }
    s.pkt.network_header = nhoff;
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
