// The IPv6 offload module (net/ipv6/ip6_offload.c): ipv6_gro_receive, ipv6_gro_complete,
// ipv6_gso_segment.
//
// IPv6 GRO (net/ipv6/ip6_offload.c: ipv6_gro_receive / ipv6_gro_complete, N-6..N-11); the
// IPv6-inner IP-in-IP hooks (sit / ip6ip6, W-4) are in ipip.cpp.
#include <cstring>

#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro_hooks {

namespace v6 = wire::ipv6;
/// The version nibble in the first 32-bit word (RFC 8200 §3).
constexpr std::uint32_t kVersionMask = 0xF0000000u;

namespace {
// Extension headers registered with INET6_PROTO_GSO_EXTHDR: Hop-by-Hop, Routing, Dest-Opts
// (N-7). The Fragment header (44) is not among them.
bool gso_exthdr(std::uint8_t nh) noexcept {
  namespace ip = wire::ipproto;
  return nh == ip::kHopOpts || nh == ip::kRouting || nh == ip::kDstOpts;
}
}  // namespace

void ipv6_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* iph = gro_header(ctx, off, v6::kHdrLen);
  if (!iph) return ctx.flush_skb(GroReason::Truncated);
  ctx.network_offsets[ctx.encap_mark ? 1 : 0] = std::uint16_t(off);
  const bool len_bad = !gro_rules::ipv6_len_ok(iph, ctx.skb->len() - (off + v6::kHdrLen));  // N-6

  std::uint8_t proto = iph[v6::kNextHeaderOffset];
  std::size_t hoff = off + v6::kHdrLen;
  const ProtocolOffload* po = ctx.reg->find(Key::IpProto, proto);
  if (!po || !po->gro_receive) {  // N-7: walk the GSO extension headers
    while (gso_exthdr(proto)) {
      const std::uint8_t* oh = gro_header(ctx, hoff, 2);
      if (!oh) break;
      // Both bytes are read before the next gro_header, which may pull into a new head
      // block and free the one `oh` points into.
      const std::uint8_t next = oh[v6::kExtNextOffset];
      const std::size_t optlen = (std::size_t(oh[v6::kExtLenOffset]) + 1) * v6::kExtUnit;
      if (!gro_header(ctx, hoff, optlen)) break;
      proto = next;
      hoff += optlen;
    }
    po = ctx.reg->find(Key::IpProto, proto);
    if (!po || !po->gro_receive)
      return ctx.flush_skb(proto == wire::ipproto::kFragment ? GroReason::IpFragment
                                                             : GroReason::NoHandler);
    iph = gro_header(ctx, off, hoff - off);
  }
  ctx.data_offset = std::uint32_t(hoff);
  ctx.transport_offset = std::uint16_t(hoff);
  ctx.proto = proto;
  const std::size_t nlen = hoff - off;

  // N-8; the masked first word includes the version nibble, tested first, so that a held
  // packet of another family is never read further as IPv6.
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* iph2 = held_header(*p, off);
    if (((wire::load_be32(iph) ^ wire::load_be32(iph2)) & (kVersionMask | v6::kFlowLabelMask)) ||
        std::memcmp(iph + v6::kSaddrOffset, iph2 + v6::kSaddrOffset, 2 * v6::kAddrLen) != 0 ||
        iph[v6::kNextHeaderOffset] != iph2[v6::kNextHeaderOffset] ||
        (nlen > v6::kHdrLen &&
         std::memcmp(iph + v6::kHdrLen, iph2 + v6::kHdrLen, nlen - v6::kHdrLen) != 0))
      p->same_flow = false;
  }
  if (len_bad) ctx.flush_skb(GroReason::IpLength);
  ctx.is_ipv6 = true;
  gro_postpull_rcsum(ctx, off, nlen);  // N-9
  po->gro_receive(ctx);
}

int ipv6_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* iph = p.data() + nhoff;
  // Re-walk the GSO extension headers (N-11).
  std::uint8_t proto = iph[v6::kNextHeaderOffset];
  std::uint32_t hoff = nhoff + v6::kHdrLen;
  while (gso_exthdr(proto) && hoff + 2 <= p.headlen()) {
    const std::uint8_t* oh = p.data() + hoff;
    proto = oh[v6::kExtNextOffset];
    hoff += (std::uint32_t(oh[v6::kExtLenOffset]) + 1) * v6::kExtUnit;
  }
  if (p.encapsulation) {
    p.inner_protocol = wire::ethertype::kIpv6;
    p.inner_protocol_type = core::InnerProtoType::Ether;
    p.set_inner_network_header(int(nhoff));
  } else {
    p.set_network_header(int(nhoff));
    p.set_transport_header(int(hoff));
  }
  const std::size_t payload = p.len() - nhoff - v6::kHdrLen;
  // BIG TCP (GroConfig::ipv6_big_tcp): payload > 65535 is written as 0, without a Jumbo
  // hop-by-hop header (the form of kernels with BIG TCP without HBH; N-11 without the HBH).
  wire::store_be16(iph + v6::kPayloadLenOffset, payload > 65535 ? 0 : std::uint16_t(payload));
  ctx.l3_off = nhoff;
  ctx.l3_v6 = true;
  return gro_call_complete(ctx, Key::IpProto, proto, hoff);
}

}  // namespace ofld::offload::gro_hooks

// IPv6 level of GSO: ipv6_gso_segment (net/ipv6/ip6_offload.c). Spec X-27, K-8: hop-by-hop,
// routing and destination-options headers (the GSO_EXTHDR set) are skipped here and copied
// into every segment with the other headers; payload_len is rewritten per segment. A
// fragment header (not in that set) has no segment hook → UnknownIpProto, as in the kernel.
// BIG TCP: a super-packet with payload length 0 needs nothing special (every segment gets
// its own payload length); one in the older form, with the 8-byte Jumbo hop-by-hop header
// in front of TCP (RFC 2675 option), has that header removed first (ipv6_hopopt_jumbo_remove),
// so the segments carry none.

namespace ofld::offload::gso_hooks {

namespace v6 = wire::ipv6;

namespace {

/// the Jumbo hop-by-hop header BIG TCP used to insert (next header TCP, length 0,
/// option type 0xC2 first) is removed from an IPv6 packet (skb->protocol IPv6, header in the
/// linear head): the link-layer and IPv6 headers move 8 bytes towards the payload and the IPv6
/// next header becomes TCP. The payload length (0) is rewritten per segment later.
bool remove_jumbo_hbh(core::Packet& skb) noexcept {
  constexpr std::size_t kHbh = 8;
  if (skb.protocol != wire::ethertype::kIpv6 || skb.headlen() < v6::kHdrLen + kHbh) return false;
  std::uint8_t* ip = skb.data();
  const std::uint8_t* hbh = ip + v6::kHdrLen;
  if (ip[v6::kNextHeaderOffset] != wire::ipproto::kHopOpts || hbh[0] != wire::ipproto::kTcp ||
      hbh[1] != 0 || hbh[2] != 0xC2)
    return false;
  const bool has_mac = skb.mac_header != core::kNoHeader && skb.mac_header <= skb.data_pos();
  const std::size_t mac_len = has_mac ? std::size_t(skb.data_pos() - skb.mac_header) : 0;
  std::uint8_t* from = ip - mac_len;
  std::memmove(from + kHbh, from, mac_len + v6::kHdrLen);
  skb.pull(kHbh);
  if (has_mac) skb.mac_header += core::pos_t(kHbh);
  skb.data()[v6::kNextHeaderOffset] = wire::ipproto::kTcp;
  return true;
}

}  // namespace

int ipv6_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(40)) return ctx.fail(GsoReason::HeaderTruncated);
  // The segments' headers start at the moved link-layer header (skb_segment copies from
  // skb_mac_header).
  if (ctx.encap_level == 0 && remove_jumbo_hbh(skb)) ctx.frame_start += core::pos_t(8);
  const auto v = wire::Ipv6Header<const std::uint8_t>::unchecked(skb.data());  // 40 pulled
  if (v.version() != 6) return ctx.fail(GsoReason::BadIpHeader);
  std::uint8_t nexthdr = v.next_header();
  std::size_t hl = v6::kHdrLen;
  for (int n = 0; nexthdr == wire::ipproto::kHopOpts || nexthdr == wire::ipproto::kRouting ||
                  nexthdr == wire::ipproto::kDstOpts;
       ++n) {
    if (n == int(wire::kMaxIpv6ExtHeaders) || !skb.may_pull(hl + v6::kExtUnit))
      return ctx.fail(GsoReason::HeaderTruncated);
    const std::uint8_t* eh = skb.data() + hl;
    const std::size_t elen = (std::size_t(eh[v6::kExtLenOffset]) + 1) * v6::kExtUnit;
    nexthdr = eh[v6::kExtNextOffset];
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

  int rc = ip_level_gso_segment(ctx, nh, wire::ethertype::kIpv6, nexthdr, saved_features);
  if (rc != 0 || ctx.hw_segments) {
    skb.network_header = nh;
    return rc;
  }
  const int nhoff = ctx.seg_off(nh);
  if (length_overflows(ctx, nhoff, v6::kHdrLen)) return ctx.fail(GsoReason::SegmentTooLong);
  if (ctx.seg_fast && !ctx.gso_partial) {
    // X-27, headers in every head; all segments but the last have the same length (seg_fast)
    const std::size_t l4off = std::size_t(nhoff) + v6::kHdrLen;
    const std::size_t nsegs = ctx.batch_used ? ctx.batch->size() : ctx.segs.size();
    const std::uint16_t pl_full = std::uint16_t(fast_seg_len(ctx, 0) - l4off);
    const std::uint16_t pl_last = std::uint16_t(fast_seg_len(ctx, nsegs - 1) - l4off);
    // For either form of the segments (FastSegs).
    auto rewrite = [&]<bool Slab>(const FastSegs<Slab> segs) {
      const std::size_t n = segs.n;
      for (std::size_t i = 0; i < n; ++i) {
        wire::store_be16(segs.head(i) + nhoff + v6::kPayloadLenOffset,
                         i + 1 == n ? pl_last : pl_full);
        if constexpr (!Slab) {
          core::Packet& p = segs.segs[i].pkt;
          if (encap) {
            p.inner_network_header = nhoff;
            p.inner_transport_header = p.transport_header;
          }
          p.network_header = nhoff;
        }
      }
      if constexpr (Slab) {  // the template: as each packet above
        core::PacketMeta& m = core::detail::SlabBuilder::meta(*ctx.batch);
        if (encap) {
          m.inner_network_header = nhoff;
          m.inner_transport_header = m.transport_header;
        }
        m.network_header = nhoff;
      }
    };
    if (ctx.batch_used) rewrite(FastSegs<true>(ctx));
    else rewrite(FastSegs<false>(ctx));
    return 0;
  }
  for (auto& s : ctx.segs) {
    std::uint8_t* ip = s.pkt.at_pos(nhoff, v6::kHdrLen);
    if (!ip) return ctx.fail(GsoReason::HeaderTruncated);
    // payload_len (for one mss when the segment is a GSO-partial output)
    wire::store_be16(ip + v6::kPayloadLenOffset,
                     std::uint16_t(core::one_mss_len(ctx, s, nhoff + int(v6::kHdrLen))));
    if (encap) {  // skb_reset_inner_headers
      s.pkt.inner_network_header = nhoff;
      s.pkt.inner_transport_header = s.pkt.transport_header;
    }
    s.pkt.network_header = nhoff;
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
