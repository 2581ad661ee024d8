// TCP level of GSO: tcp4_gso_segment / tcp6_gso_segment + tcp_gso_segment
// (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c). Spec X-16..X-21, §4.9b; fraglist
// and GSO-partial outputs through the core:: building blocks
// (ofld/core/skb_segment.hpp).
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

namespace {
constexpr std::uint8_t kFin = 0x01, kPsh = 0x08, kCwr = 0x80;
}

int tcp_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  const bool v6 = ctx.l3_proto == wire::ethertype::kIpv6;
  // the gso_type must name TCP over this IP version.
  if (!(skb.gso.type & (v6 ? core::skb_gso::TCPV6 : core::skb_gso::TCPV4)))
    return ctx.fail(GsoReason::BadGsoType);
  if (!skb.may_pull(20)) return ctx.fail(GsoReason::HeaderTruncated);
  const std::size_t thlen = std::size_t(skb.data()[12] >> 4) * 4;
  if (thlen < 20) return ctx.fail(GsoReason::BadTcpHeader);
  if (!skb.may_pull(thlen)) return ctx.fail(GsoReason::HeaderTruncated);
  const core::pos_t th_pos = skb.data_pos();
  skb.transport_header = th_pos;

  // a fraglist aggregate whose geometry is intact is split at its members;
  // otherwise the checksum is redone from scratch below (NONE → X-17) and mss segmentation
  // runs over head and members alike.
  if (skb.gso.type & core::skb_gso::FRAGLIST) {
    std::size_t own = skb.len();
    for (const auto& m : skb.frag_list()) own -= m.len();
    if (own - thlen == skb.gso.size && !(skb.gso.type & core::skb_gso::DODGY)) {
      skb.pull(thlen);  // building blocks take data() at the payload
      int rc = core::skb_segment_list(ctx);
      if (rc != 0) return rc;
      return core::segment_list_nat_fixup(ctx, ctx.seg_off(ctx.l3_pos), ctx.seg_off(th_pos), 16,
                                         /*udp=*/false);
    }
    skb.csum = core::CsumNone{};
  }

  // not PARTIAL → zero the field, seed the pseudo header, make it PARTIAL.
  if (skb.ip_summed() != core::IpSummed::Partial) {
    wire::store_be16(skb.data() + 16, 0);
    wire::store_be16(skb.data() + 16,
                     core::pseudo_seed(skb, ctx.l3_pos, std::uint32_t(skb.len()), 6));
    skb.csum = core::CsumPartial{th_pos, 16, false};
  }
  if (skb.csum_start_offset() != 0) return ctx.fail(GsoReason::CsumStartMismatch);

  const std::uint32_t oldlen = ~std::uint32_t(skb.len());
  skb.pull(thlen);
  const std::uint32_t mss = skb.gso.size;
  if (skb.len() <= mss) return ctx.fail(GsoReason::NothingToSegment);
  if (core::gso_ok(skb, ctx.features | core::netif_f::GSO_ROBUST)) {
    skb.gso.segs = std::uint16_t((skb.len() + mss - 1) / mss);
    ctx.hw_segments = true;
    return 0;
  }
  const std::uint8_t* th0 = skb.at_pos(th_pos, thlen);
  const std::uint16_t seed = wire::load_be16(th0 + 16);
  std::uint32_t seq = wire::load_be32(th0 + 4);

  int rc = core::segment_payload(ctx);
  if (rc != 0) return rc;
  // GSO-partial outputs carry gso_segs × mss each: seq and the length in the
  // checksum advance by that much.
  std::uint32_t step = mss;
  if (ctx.segs[0].pkt.is_gso()) step *= ctx.segs[0].pkt.gso.segs;
  // newcheck = seed adjusted from the super-packet's L4 length to thlen + step.
  const std::uint16_t newcheck =
      csum::csum_fold16(csum::csum_add(seed, oldlen + std::uint32_t(thlen + step)));

  const int thoff = ctx.seg_off(th_pos);
  const std::size_t n = ctx.segs.size();
  const auto* cp0 = n ? std::get_if<core::CsumPartial>(&ctx.out.front().csum) : nullptr;
  if (ctx.seg_fast && !ctx.gso_partial && cp0 && core::fast_path()) {
    // Segments from skb_segment's fast path: the TCP header is in every head at thoff, and
    // every segment has the template's checksum state, PARTIAL (SG + csum: nothing was
    // summed) — the same X-21 rewrite, and X-14 gso_reset_checksum unless remcsum_offload.
    const std::uint32_t last_l4 = std::uint32_t(ctx.out.back().len() - std::size_t(thoff));
    const std::uint16_t lastcheck = csum::csum_fold16(csum::csum_add(seed, oldlen + last_l4));
    const bool reset_cb = !ctx.out.front().remcsum_offload;
    const core::pos_t cb_start = cp0->csum_start;
    for (std::size_t i = 0; i < n; ++i) {
      auto& s = ctx.segs[i];
      std::uint8_t* th = s.pkt.data() + thoff;
      s.pkt.transport_header = thoff;
      wire::store_be32(th + 4, seq);
      seq += step;
      std::uint8_t fl = th[13];
      if (i > 0) fl &= std::uint8_t(~kCwr);
      const bool last = i + 1 == n;
      if (!last) fl &= std::uint8_t(~(kFin | kPsh));
      th[13] = fl;
      const std::uint16_t check = last ? lastcheck : newcheck;
      wire::store_be16(th + 16, check);
      if (reset_cb) {  // gso_reset_checksum, inline
        s.cb_csum = ~std::uint32_t(check);
        s.cb_csum_start = cb_start;
      }
    }
    return 0;
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = ctx.segs[i];
    std::uint8_t* th = s.pkt.at_pos(thoff, thlen);
    if (!th) return ctx.fail(GsoReason::HeaderTruncated);
    s.pkt.transport_header = thoff;
    wire::store_be32(th + 4, seq);
    seq += step;
    if (i > 0) th[13] &= std::uint8_t(~kCwr);  // CWR only on the first segment
    std::uint16_t check;
    if (i + 1 < n) {
      th[13] &= std::uint8_t(~(kFin | kPsh));  // FIN/PSH only on the last segment
      check = newcheck;
    } else {  // last: the original seed adjusted for its own length
      const std::uint32_t l4len = std::uint32_t(s.pkt.len() - std::size_t(thoff));
      check = csum::csum_fold16(csum::csum_add(seed, oldlen + l4len));
    }
    wire::store_be16(th + 16, check);
    if (s.pkt.ip_summed() == core::IpSummed::Partial) {
      core::gso_reset_checksum(s, ~std::uint32_t(check));  // device finishes it
    } else {
      wire::store_be16(th + 16, core::gso_make_checksum(s, ~std::uint32_t(check)));
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
