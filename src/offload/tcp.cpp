// The TCP offload module (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c): the GSO segment
// hook and the GRO receive / complete hooks, for both address families.
//
// TCP GRO for IPv4 and IPv6 (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c; T-1..T-20).
// One module serves both families: the pseudo header is taken from the L3 header in front.
#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro {

namespace cs = ofld::csum;
namespace gso = core::skb_gso;

namespace {
constexpr std::uint32_t kFin = 0x00010000, kSyn = 0x00020000, kRst = 0x00040000,
                        kPsh = 0x00080000, kUrg = 0x00200000, kCwr = 0x00800000;

// Pseudo-header sum for `len` bytes of protocol `proto` after the L3 header at `l3`.
cs::wsum pseudo(const std::uint8_t* l3, std::uint32_t len, std::uint8_t proto) noexcept {
  if ((l3[0] >> 4) == 6) return cs::csum_ipv6_nofold(l3 + 8, l3 + 24, len, proto, 0);
  return cs::csum_tcpudp_nofold(l3 + 12, l3 + 16, len, proto, 0);
}
}  // namespace

void tcp_gro_receive(GroContext& ctx) {
  const std::size_t l3off = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
  // T-1: validate unless already flushing.
  if (!ctx.flush) {
    const std::uint8_t* l3 = gro_header(ctx, l3off, 1);
    if (!l3) return ctx.flush_skb(GroReason::Truncated);
    l3 = gro_header(ctx, l3off, (l3[0] >> 4) == 6 ? 40 : 20);
    if (!l3 || gro_checksum_validate(ctx, false, 0,
                                     pseudo(l3, std::uint32_t(ctx.gro_len()), 6)) != 0)
      return ctx.flush_skb(GroReason::Checksum);
  }
  // T-2: tcp_gro_pull_header.
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* th = gro_header(ctx, off, 20);
  if (!th) return ctx.flush_skb(GroReason::TcpHeader);
  const std::size_t thlen = std::size_t(th[12] >> 4) * 4;
  if (thlen < 20) return ctx.flush_skb(GroReason::TcpHeader);
  th = gro_header(ctx, off, thlen);
  if (!th) return ctx.flush_skb(GroReason::TcpHeader);
  ctx.data_offset += std::uint32_t(thlen);

  const std::size_t len = ctx.gro_len();
  const std::uint32_t flags = wire_load32(th + 12);
  const std::uint16_t dport = wire_load16(th + 2);
  // The skb may be moved onto a fraglist (G-21): what out_check_final needs is read now.
  const bool skb_gso = ctx.skb->is_gso();
  const std::uint16_t skb_gso_size = ctx.skb->gso.size;

  // T-3: tcp_gro_lookup.
  GroHeld* p = nullptr;
  for (GroHeld* c : ctx.candidates) {
    if (!c->same_flow) continue;
    if (wire_load32(th) != wire_load32(held_header(*c, off))) {
      c->same_flow = false;
      continue;
    }
    p = c;
    break;
  }

  // T-4 fraglist decision (NETIF_F_GRO_FRAGLIST; not inside a tunnel, see gro_context.hpp).
  if (ctx.cfg->gro_fraglist && !ctx.encap_mark) {
    if (p) {
      if (p->is_flist && skb_gso && p->count == 1) p->is_flist = false;  // back to normal GRO
      ctx.is_flist = p->is_flist;
    } else {
      ctx.is_flist = !ctx.cfg->tcp_established(dport) && !skb_gso;
    }
  }

  std::size_t mss = 1;
  GroReason why = GroReason::None;
  if (p) {
    std::uint8_t* th2 = p->pkt.data() + off;
    const std::uint32_t flags2 = wire_load32(th2 + 12);
    // Observed on 6.18 (ofld conformance gro, flags_cwr → [100, 100, 100, 200]): a segment
    // with CWR never joins a held flow (T-5), and CWR is part of the compared flag word, only
    // FIN and PSH are masked (T-6 [newer]) — so a CWR head is completed by the next segment.
    if (flags & kCwr)
      why = GroReason::Flags;
    else if ((flags ^ flags2) & ~(kFin | kPsh))
      why = GroReason::Flags;
    else if (wire_load32(th + 8) != wire_load32(th2 + 8))
      why = GroReason::Ack;
    else {
      for (std::size_t i = 20; i < thlen; i += 4)
        if (wire_load32(th + i) != wire_load32(th2 + i)) {
          why = GroReason::Options;
          break;
        }
    }
    if (why == GroReason::None) why = gro_network_flush(ctx, *p, off);  // T-9
    mss = p->pkt.gso.size;
    if (why == GroReason::None) {  // T-10
      if (skb_gso ? mss != skb_gso_size : (len - 1) >= mss) why = GroReason::Size;
    }
    if (why == GroReason::None) {  // T-11
      const std::uint32_t plen = std::uint32_t(p->pkt.len() - p->data_offset);
      if (wire_load32(th2 + 4) + plen != wire_load32(th + 4)) why = GroReason::SeqGap;
    }
    if (p->is_flist) {
      // T-13: exact flag word, same checksum state, fewer than 64 segments, no GSO member;
      // G-21 list merge; p's header is left alone (no T-15).
      if (why == GroReason::None && flags != flags2) why = GroReason::Flags;
      if (why == GroReason::None && skb_gso) why = GroReason::GsoInput;
      if (why == GroReason::None && !gro_flist_csum_match(*ctx.skb, p->pkt))
        why = GroReason::FraglistCsum;
      if (why == GroReason::None && p->count >= 64) why = GroReason::FraglistCount;
      if (why == GroReason::None && !gro_merge_list(ctx, *p))
        why = ctx.flush ? (ctx.skb_reason != GroReason::None ? ctx.skb_reason : GroReason::Size)
                        : GroReason::SizeLimit;
      if (why != GroReason::None) mss = 1;
    } else {
      if (why == GroReason::None && !gro_merge(ctx, *p))  // T-14
        why = ctx.flush ? (ctx.skb_reason != GroReason::None ? ctx.skb_reason : GroReason::Size)
                        : GroReason::SizeLimit;
      if (why != GroReason::None) {
        mss = 1;
      } else {
        th2[13] |= std::uint8_t((flags & (kFin | kPsh)) >> 16);  // T-15
      }
    }
  }

  // T-16..T-19 out_check_final.
  GroReason fin = GroReason::None;
  if (skb_gso) {
    if (len != std::size_t(ctx.count) * skb_gso_size) fin = GroReason::Size;
  } else if (len < mss) {
    fin = p && why == GroReason::None ? GroReason::ShortSegment : GroReason::Size;
  }
  if (flags & (kUrg | kPsh | kRst | kSyn | kFin)) fin = GroReason::FinalFlags;

  if (p && (!ctx.same_flow || fin != GroReason::None))
    ctx.complete_p(p, why != GroReason::None ? why : fin);
  if (!ctx.same_flow && why != GroReason::None) ctx.note_skb(why);
  if (fin != GroReason::None) ctx.flush_skb(fin);
}

int tcp_gro_complete(GroContext& ctx, std::uint32_t thoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* th = p.data() + thoff;
  const std::uint8_t* l3 = p.data() + ctx.l3_off;
  if (ctx.cp->is_flist) {  // T-21: headers untouched, checksum state raised one level
    p.gso.type |= (ctx.l3_v6 ? gso::TCPV6 : gso::TCPV4) | gso::FRAGLIST;
    p.gso.segs = ctx.cp->count;
    core::incr_checksum_unnecessary(p);
    p.set_transport_header(int(thoff));
    return 0;
  }
  const std::uint32_t tcplen = std::uint32_t(p.len() - thoff);
  // T-20: check := ~tcp_v4/v6_check(len, saddr, daddr, 0) = folded pseudo sum (the seed).
  wire_store16(th + 16, cs::csum_fold16(pseudo(l3, tcplen, 6)));
  if (ctx.l3_v6) {
    p.gso.type |= gso::TCPV6;
  } else {
    p.gso.type |= gso::TCPV4;
    // N-15/N-17 as on 6.18: separate fixed-ID marks for the outer and the inner IPv4 header.
    // Bit 0 is the outer (or only) IPv4 header, bit 1 the inner one. The 6.12 bit
    // TCP_FIXEDID is also set when the header TCP segmentation rewrites (the innermost
    // IPv4 header) is fixed-ID, for a GSO engine that only knows 6.12's bit.
    const std::uint8_t f = ctx.cp->ip_fixedid;
    if (f & 1) p.gso.type |= p.encapsulation ? gso::TCP_FIXEDID_OUTER : gso::TCP_FIXEDID_OUTER | gso::TCP_FIXEDID;
    if (f & 2) p.gso.type |= gso::TCP_FIXEDID_INNER | gso::TCP_FIXEDID;
  }
  p.set_partial(int(thoff), 16);
  p.gso.segs = ctx.cp->count;
  if (th[13] & 0x80) p.gso.type |= gso::TCP_ACCECN;  // CWR in the first header ([newer])
  if (p.encapsulation)
    p.set_inner_transport_header(int(thoff));
  else
    p.set_transport_header(int(thoff));
  return 0;
}

}  // namespace ofld::offload::gro

// TCP level of GSO: tcp4_gso_segment / tcp6_gso_segment + tcp_gso_segment
// (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c). Spec X-16..X-21, §4.9b; fraglist
// and GSO-partial outputs through the gso:: building blocks.

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
      int rc = gso::skb_segment_list(ctx);
      if (rc != 0) return rc;
      return gso::segment_list_nat_fixup(ctx, ctx.seg_off(ctx.l3_pos), ctx.seg_off(th_pos), 16,
                                         /*udp=*/false);
    }
    skb.csum = core::CsumNone{};
  }

  // not PARTIAL → zero the field, seed the pseudo header, make it PARTIAL.
  if (skb.ip_summed() != core::IpSummed::Partial) {
    wire::store_be16(skb.data() + 16, 0);
    wire::store_be16(skb.data() + 16,
                     gso::pseudo_seed(skb, ctx.l3_pos, std::uint32_t(skb.len()), 6));
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

  int rc = gso::segment_payload(ctx);
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
  if (ctx.seg_fast && !ctx.gso_partial && cp0 && gso::fast_path()) {
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
      gso::gso_reset_checksum(s, ~std::uint32_t(check));  // device finishes it
    } else {
      wire::store_be16(th + 16, gso::gso_make_checksum(s, ~std::uint32_t(check)));
    }
  }
  return 0;
}

}  // namespace ofld::offload::gso_hooks
