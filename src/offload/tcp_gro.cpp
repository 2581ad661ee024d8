// TCP GRO for IPv4 and IPv6 (net/ipv4/tcp_offload.c, net/ipv6/tcpv6_offload.c; T-1..T-20).
// One module serves both families: the pseudo header is taken from the L3 header in front.
#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace cs = ofld::csum;
namespace sg = core::skb_gso;

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
    p.gso.type |= (ctx.l3_v6 ? sg::TCPV6 : sg::TCPV4) | sg::FRAGLIST;
    p.gso.segs = ctx.cp->count;
    core::incr_checksum_unnecessary(p);
    p.set_transport_header(int(thoff));
    return 0;
  }
  const std::uint32_t tcplen = std::uint32_t(p.len() - thoff);
  // T-20: check := ~tcp_v4/v6_check(len, saddr, daddr, 0) = folded pseudo sum (the seed).
  wire_store16(th + 16, cs::csum_fold16(pseudo(l3, tcplen, 6)));
  if (ctx.l3_v6) {
    p.gso.type |= sg::TCPV6;
  } else {
    p.gso.type |= sg::TCPV4;
    // N-15/N-17 as on 6.18: separate fixed-ID marks for the outer and the inner IPv4 header.
    // Bit 0 is the outer (or only) IPv4 header, bit 1 the inner one. The 6.12 bit
    // TCP_FIXEDID is also set when the header TCP segmentation rewrites (the innermost
    // IPv4 header) is fixed-ID, for a GSO engine that only knows 6.12's bit.
    const std::uint8_t f = ctx.cp->ip_fixedid;
    if (f & 1) p.gso.type |= p.encapsulation ? sg::TCP_FIXEDID_OUTER : sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID;
    if (f & 2) p.gso.type |= sg::TCP_FIXEDID_INNER | sg::TCP_FIXEDID;
  }
  p.set_partial(int(thoff), 16);
  p.gso.segs = ctx.cp->count;
  if (th[13] & 0x80) p.gso.type |= sg::TCP_ACCECN;  // CWR in the first header ([newer])
  if (p.encapsulation)
    p.set_inner_transport_header(int(thoff));
  else
    p.set_transport_header(int(thoff));
  return 0;
}

}  // namespace ofld::offload::gro_hooks
