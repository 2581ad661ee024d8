// The GRE offload module (net/ipv4/gre_offload.c): gre_gso_segment, gre_gro_receive,
// gre_gro_complete.
//
// GRE GSO over IPv4 and IPv6: gre_gso_segment (net/ipv4/gre_offload.c). Spec X-33, V-12,
// V-13: with GRE_CSUM the checksum field is zeroed (GSO-partial: pre-adjusted) and then
// either computed in software over the GRE header and everything after it (no pseudo
// header; the inner region contributes its known sum, C-30) or left PARTIAL at GRE+4 when
// the device has HW_CSUM.
#include <cstring>

#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "tunnel_segment_common.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/tunnel.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

namespace gre = wire::gre;

int gre_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (ctx.tunnel_inner) return ctx.fail(GsoReason::NestedTunnel);  // GRE inside a tunnel
  if (!skb.encapsulation || skb.inner_mac_header == core::kNoHeader ||
      skb.inner_network_header == core::kNoHeader)
    return ctx.fail(GsoReason::BadTunnel);
  const core::pos_t gre_pos = skb.data_pos();
  skb.transport_header = gre_pos;
  const int tnl_hlen = int(skb.inner_mac_header - gre_pos);
  if (tnl_hlen < int(gre::kBaseLen) || !skb.may_pull(std::size_t(tnl_hlen)))
    return ctx.fail(GsoReason::BadTunnel);
  const std::uint16_t gf = wire::load_be16(skb.data() + gre::kFlagsOffset);
  const bool c_bit = (gf & gre::kCsum) != 0;
  // RFC 2784/2890: 4 bytes, + 4 for each of C (checksum), K (key), S (sequence number).
  const int own_hlen = int(gre::kBaseLen + ((gf & gre::kCsum) ? gre::kSectionLen : 0) +
                           ((gf & gre::kKey) ? gre::kSectionLen : 0) +
                           ((gf & gre::kSeq) ? gre::kSectionLen : 0));
  const bool inner_ether = wire::load_be16(skb.data() + gre::kProtoOffset) == wire::ethertype::kTeb;
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
  // This level rewrites packets only: no slab below it (gso_segment_batch offers one by the
  // gso_type, which a GRE packet may carry wrongly; gre_gso_segment does not look at it).
  core::SegmentBatch* const batch = ctx.batch;
  ctx.batch = nullptr;
  int rc = mac_gso_segment(ctx, skb.inner_protocol);
  ctx.batch = batch;
  rc = sw.leave(rc, saved);
  if (rc != 0 || ctx.hw_segments) return rc;

  const int gre_off = sw.outer_l4_off();
  for (auto& s : ctx.segs) {
    core::Packet& p = s.pkt;
    sw.restore_segment(p);
    if (!need_csum) continue;
    std::uint8_t* greh = p.at_pos(gre_off, gre::kBaseLen + gre::kSectionLen);
    if (!greh) return ctx.fail(GsoReason::HeaderTruncated);
    // zero, or for a GSO-partial output pre-adjusted by (payload − gso_size): the
    // inner checksum seed counts the real length, the headers one mss.
    std::uint16_t pre = 0;
    if (ctx.gso_partial && p.is_gso())
      pre = csum::csum_fold16(csum::wsum(p.len() - std::size_t(ctx.data_offset) - p.gso.size));
    wire::store_be16(greh + gre::kCsumOffset, pre);
    wire::store_be16(greh + gre::kCsumOffset + 2, 0);  // reserved1
    if (p.encapsulation || !offload_csum) {
      wire::store_be16(greh + gre::kCsumOffset, core::gso_make_checksum(s, 0));
    } else {
      p.csum = core::CsumPartial{gre_off, gre::kCsumOffset, false};
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks

// GRE GRO for IPv4 and IPv6 outer headers (net/ipv4/gre_offload.c; W-5..W-11, V-12, V-13).

namespace ofld::offload::gro_hooks {

namespace gre = wire::gre;

namespace {
constexpr std::uint16_t kGreCsum = gre::kCsum, kGreKey = gre::kKey;
// The header length from the flags: the base, the checksum word (C), the key (K).
std::size_t gre_hlen(std::uint16_t flags) noexcept {
  return gre::kBaseLen + ((flags & kGreKey) ? gre::kSectionLen : 0) +
         ((flags & kGreCsum) ? gre::kSectionLen : 0);
}
}  // namespace

void gre_gro_receive(GroContext& ctx) {
  if (ctx.encap_mark) return ctx.flush_skb(GroReason::TunnelNested);  // W-1
  ctx.encap_mark = true;
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* greh = gro_header(ctx, off, gre::kBaseLen);
  if (!greh) return ctx.flush_skb(GroReason::Truncated);
  const std::uint16_t flags = wire::load_be16(greh + gre::kFlagsOffset);
  const std::uint16_t proto = wire::load_be16(greh + gre::kProtoOffset);
  // W-5: version 0, no flag other than K and C (S, R, routing, recursion... refused).
  if (flags & ~(kGreCsum | kGreKey)) return ctx.flush_skb(GroReason::GreFlags);
  if ((flags & kGreCsum) && ctx.is_fou) return ctx.flush_skb(GroReason::GreCsumFou);  // W-6
  const ProtocolOffload* po = ctx.reg->find(Key::Ethertype, proto);
  if (!po || !po->gro_receive) return ctx.flush_skb(GroReason::NoHandler);  // W-7
  const std::size_t grehlen = gre_hlen(flags);
  greh = gro_header(ctx, off, grehlen);
  if (!greh) return ctx.flush_skb(GroReason::Truncated);
  if ((flags & kGreCsum) && !ctx.flush) {  // W-8: no pseudo header
    if (gro_checksum_validate(ctx, false, 0, 0) != 0) return ctx.flush_skb(GroReason::Checksum);
    gro_checksum_try_convert(ctx, 0);
  }
  // W-9. The key sits after the checksum word when C is set. (The kernel compares the word
  // right after the base header, i.e. the checksum word when both C and K are set; we compare
  // the key itself, as the spec's rule states.)
  const std::size_t key_off = gre::kBaseLen + ((flags & kGreCsum) ? gre::kSectionLen : 0);
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* greh2 = held_header(*p, off);
    if (std::memcmp(greh2, greh, gre::kBaseLen) != 0 ||  // flags, version, protocol
        ((flags & kGreKey) && wire::load_be32(greh2 + key_off) != wire::load_be32(greh + key_off)))
      p->same_flow = false;
  }
  ctx.data_offset += std::uint32_t(grehlen);
  gro_postpull_rcsum(ctx, off, grehlen);  // W-10
  if (++ctx.recursion >= kGroRecursionLimit) return ctx.flush_skb(GroReason::Recursion);
  po->gro_receive(ctx);
}

int gre_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  const std::uint8_t* greh = p.data() + nhoff;
  const std::uint16_t flags = wire::load_be16(greh + gre::kFlagsOffset);
  const std::uint16_t proto = wire::load_be16(greh + gre::kProtoOffset);
  p.encapsulation = true;
  p.gso.type = core::skb_gso::GRE;  // W-11: assigned, never GRE_CSUM (quirk)
  const std::uint32_t grehlen = std::uint32_t(gre_hlen(flags));
  const int err = gro_call_complete(ctx, Key::Ethertype, proto, nhoff + grehlen);
  p.set_inner_mac_header(int(nhoff + grehlen));
  return err;
}

}  // namespace ofld::offload::gro_hooks
