// UDP tunnel GSO: __skb_udp_tunnel_segment (net/ipv4/udp_offload.c). Spec X-31, W-28 (RCO:
// inner checksum left as the seed), C-30 (outer checksum over the outer header plus the
// inner region's known sum, LCO).
#include <algorithm>
#include <cstring>

#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "tunnel_segment_common.hpp"

namespace ofld::offload::gso_hooks {

namespace udp = wire::udp;

namespace {

// The outer UDP header of every segment of a slab (skb_segment's fast loop into a batch): the
// segments of the packet loop below, for the only state a slab has (gso_segment_batch offers
// one for a UDP tunnel without remcsum or GSO-partial): an inner checksum left PARTIAL to the
// device, so every segment is encapsulation = 1 and its outer checksum, when on, is LCO's
// (C-30) from the inner seed the TCP hook wrote. The bytes from the outer UDP header to the
// inner checksum's start are summed for the first and the last segment; a middle one's equal
// the first's but for the inner IPv4 ID and header checksum, whose sum a valid header keeps.
// A middle segment with the inner seed of the one before it has that one's outer fields.
int slab_rewrite(GsoContext& ctx, const TunnelSwitch& sw, int uh_off, bool need_csum,
                 csum::wsum partial) {
  core::SegmentBatch& b = *ctx.batch;
  core::PacketMeta& m = core::detail::SlabBuilder::meta(b);
  const auto* cp = std::get_if<core::CsumPartial>(&m.csum);
  const std::size_t hl = b.header_len();
  // The inner L4 header of a slab is TCP at csum_start (the TCP hook refuses any other start,
  // X-16), so the region ends before it. Its check field is what the hook wrote and what the
  // packet path's CB.csum holds (gso_reset_checksum, X-14), whatever csum_offset says: the
  // kernel's TCP GSO checks csum_start only.
  if (!cp || cp->csum_start < uh_off + int(udp::kHdrLen) ||
      std::size_t(cp->csum_start) + wire::tcp::kCheckOffset + 2 > hl)
    return ctx.fail(GsoReason::CsumStartMismatch);  // not reached: skb_segment builds no other
  const std::size_t inner_at = std::size_t(cp->csum_start) + wire::tcp::kCheckOffset;
  const std::size_t region_len = std::size_t(cp->csum_start - uh_off);
  sw.restore_segment(m);
  const FastSegs<true> segs(ctx);
  const std::size_t n = segs.n;
  if (n == 0) return 0;
  // Segment i's outer length, seed and checksum; `region`, when given, the sum of its bytes
  // from the outer UDP header to the inner checksum's start (else they are summed here).
  const auto put = [&](std::size_t i, std::uint16_t len, std::uint16_t seed,
                       const csum::wsum* given) {
    std::uint8_t* const seg = segs.head(i);
    std::uint8_t* const uh = seg + uh_off;
    wire::store_be16(uh + udp::kLenOffset, len);
    if (!need_csum) return csum::wsum(0);
    wire::store_be16(uh + udp::kCheckOffset, seed);
    const csum::wsum region = given ? *given : csum::csum_partial(uh, region_len, 0);
    // gso_make_checksum with CB.csum = ~inner check (gso_reset_checksum's, X-14)
    const std::uint32_t inner = ~std::uint32_t(wire::load_be16(seg + inner_at));
    wire::store_be16(uh + udp::kCheckOffset,
                     csum::udp_csum_mangle(csum::csum_fold(csum::csum_add(region, inner))));
    return region;
  };
  const auto seed_of = [&](std::uint32_t len) {
    return csum::csum_fold16(csum::csum_add(partial, len));
  };
  // All segments but the last have one length (the slab's geometry), so one seed; a middle
  // segment whose inner check equals the one before it gets that one's field.
  const std::uint32_t len_full = std::uint32_t(b.len(0) - std::size_t(uh_off));
  const std::uint16_t seed_full = seed_of(len_full);
  const csum::wsum region_full = put(0, std::uint16_t(len_full), seed_full, nullptr);
  for (std::size_t i = 1; i + 1 < n; ++i) {
    std::uint8_t* const uh = segs.head(i) + uh_off;
    if (need_csum && wire::load_be16(segs.head(i) + inner_at) == wire::load_be16(segs.head(i - 1) + inner_at)) {
      std::memcpy(uh + udp::kLenOffset, segs.head(i - 1) + uh_off + udp::kLenOffset, 4);  // len, check
      continue;
    }
    put(i, std::uint16_t(len_full), seed_full, &region_full);
  }
  if (n > 1) {
    const std::uint32_t len_last = std::uint32_t(b.len(n - 1) - std::size_t(uh_off));
    put(n - 1, std::uint16_t(len_last), seed_of(len_last), nullptr);
  }
  return 0;
}

// inner_ethertype: 0 = an IP-protocol inner (skb->inner_ipproto), else the ethertype of the
// payload after the tunnel header (TEB: an Ethernet frame).
int segment(GsoContext& ctx, std::uint16_t inner_ethertype, int own_hlen) {
  core::Packet& skb = *ctx.skb;
  const bool inner_ether = inner_ethertype == wire::ethertype::kTeb;
  if (ctx.tunnel_inner) return ctx.fail(GsoReason::NestedTunnel);
  if (skb.inner_mac_header == core::kNoHeader || skb.inner_network_header == core::kNoHeader)
    return ctx.fail(GsoReason::BadTunnel);
  const core::pos_t uh_pos = skb.data_pos();
  skb.transport_header = uh_pos;
  const int tnl_hlen = int(skb.inner_mac_header - uh_pos);
  if (tnl_hlen < int(udp::kHdrLen) || !skb.may_pull(std::size_t(tnl_hlen))) return ctx.fail(GsoReason::BadTunnel);
  if (!one_tunnel_level(skb, uh_pos, own_hlen, inner_ether)) return ctx.fail(GsoReason::NestedTunnel);
  const bool is_ipv6 = ctx.l3_proto == wire::ethertype::kIpv6;

  // Take the super-packet's length out of the outer seed: the skb length counted
  // from the outer UDP header, or — for a packet that is already a GSO_PARTIAL skb — the
  // value its uh->len holds (which then is a one-mss length).
  const std::uint16_t uh_check = wire::load_be16(skb.data() + udp::kCheckOffset);
  const csum::wsum old_len = (skb.gso.type & core::skb_gso::PARTIAL)
                                 ? csum::wsum(wire::load_be16(skb.data() + udp::kLenOffset))
                                 : csum::wsum(skb.len());
  const csum::wsum partial = csum::csum_sub(uh_check, old_len);

  const std::uint32_t t = skb.gso.type;
  const bool need_csum = (t & core::skb_gso::UDP_TUNNEL_CSUM) != 0;
  const bool remcsum = (t & core::skb_gso::TUNNEL_REMCSUM) != 0;
  const core::Features saved = ctx.features;

  TunnelSwitch sw(ctx, uh_pos, tnl_hlen);  // the inner packet from here on
  skb.transport_header = skb.inner_transport_header;
  skb.encap_hdr_csum = need_csum;
  skb.remcsum_offload = remcsum;
  using namespace core::netif_f;
  const bool offload_csum =
      need_csum && ctx.dev->features.any(is_ipv6 ? (HW_CSUM | IPV6_CSUM) : (HW_CSUM | IP_CSUM));

  ctx.features &= ctx.dev->hw_enc_features;
  if (need_csum) ctx.features = ctx.features.without(SCTP_CRC);
  if (remcsum) {  // only the outer checksum can be offloaded; the inner stays a seed
    ctx.features = ctx.features.without(CSUM_MASK);
    if (!need_csum || offload_csum) ctx.features |= HW_CSUM;
  }
  int rc;
  if (inner_ethertype != 0) {
    ctx.protocol = inner_ethertype;
    rc = mac_gso_segment(ctx, inner_ethertype);
  } else {  // IP-protocol inner: skb->protocol stays the outer ethertype
    rc = ipproto_gso_segment(ctx, skb.inner_ipproto);
  }
  rc = sw.leave(rc, saved);
  if (rc != 0 || ctx.hw_segments) return rc;

  const int uh_off = sw.outer_l4_off();
  if (ctx.batch_used) return slab_rewrite(ctx, sw, uh_off, need_csum, partial);
  // C-30: the outer checksum sums the bytes from the outer UDP header to the inner checksum's
  // start. Two segments of skb_segment's fast loop with the same length differ there only in
  // the inner IPv4 ID and header checksum, whose sum a valid header keeps (RFC 1071: it sums
  // to 0xffff whatever its ID), so the first segment's sum stands for every segment of its
  // length and region length; any other segment (the shorter last one) is summed itself.
  const bool same_region = ctx.seg_fast && !ctx.gso_partial;
  std::size_t region_seg_len = 0, region_len = 0;
  csum::wsum region = 0;
  for (auto& s : ctx.segs) {
    core::Packet& p = s.pkt;
    if (remcsum) p.csum = core::CsumNone{};
    const core::pos_t inner_th = p.transport_header;  // the inner L4 header, before the switch back
    sw.restore_segment(p);
    std::uint8_t* uh = p.at_pos(uh_off, udp::kHdrLen);
    if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
    const std::uint32_t len = std::uint32_t(p.len() - std::size_t(uh_off));
    // GSO-partial output: uh->len for one mss; the seed below still uses the real length.
    wire::store_be16(uh + udp::kLenOffset, std::uint16_t(core::one_mss_len(ctx, s, uh_off)));
    if (!need_csum) continue;
    const std::uint16_t seed = csum::csum_fold16(csum::csum_add(partial, len));
    wire::store_be16(uh + udp::kCheckOffset, seed);
    if (p.encapsulation || !offload_csum) {
      const std::size_t rlen = std::size_t(std::max(0, int(s.cb_csum_start - p.transport_header)));
      std::uint16_t v;
      // Only a region that ends before the inner L4 header (whose sequence numbers differ)
      // stands for another segment's.
      const bool reusable = same_region && rlen != 0 && s.cb_csum_start <= inner_th;
      if (reusable && region_seg_len == p.len() && region_len == rlen) {
        v = core::gso_make_checksum_summed(s, ~std::uint32_t(seed), region);
      } else {
        std::size_t got = 0;
        const csum::wsum r = core::gso_checksum_region(s, got);
        if (reusable && got == rlen) region_seg_len = p.len(), region_len = rlen, region = r;
        v = got == rlen ? core::gso_make_checksum_summed(s, ~std::uint32_t(seed), r)
                        : core::gso_make_checksum(s, ~std::uint32_t(seed));
      }
      wire::store_be16(uh + udp::kCheckOffset, csum::udp_csum_mangle(v));
    } else {
      p.csum = core::CsumPartial{uh_off, udp::kCheckOffset, false};
    }
  }
  return 0;
}

}  // namespace

int udp_tunnel_segment(GsoContext& ctx, bool inner_ether, int own_hlen) {
  return segment(ctx, inner_ether ? wire::ethertype::kTeb : 0, own_hlen);
}

int udp_tunnel_segment_ethertype(GsoContext& ctx, std::uint16_t inner_ethertype, int own_hlen) {
  if (inner_ethertype == 0) return ctx.fail(GsoReason::BadTunnel);
  return segment(ctx, inner_ethertype, own_hlen);
}

}  // namespace ofld::offload::gso_hooks
