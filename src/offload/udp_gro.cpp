// UDP GRO for IPv4 and IPv6 (net/ipv4/udp_offload.c, net/ipv6/udp_offload.c; U-1..U-12):
// segment mode for forwarding (GRO_UDP_FWD) and for local UDP_GRO sockets, and the UDP tunnel
// socket path that hands the payload to the tunnel's hook (VXLAN, GUE) through the registry.
#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace cs = ofld::csum;
namespace sg = core::skb_gso;

namespace {
cs::wsum pseudo(const std::uint8_t* l3, std::uint32_t len) noexcept {
  if ((l3[0] >> 4) == 6) return cs::csum_ipv6_nofold(l3 + 8, l3 + 24, len, 17, 0);
  return cs::csum_tcpudp_nofold(l3 + 12, l3 + 16, len, 17, 0);
}

// udp_gro_receive_segment (U-5..U-11).
void receive_segment(GroContext& ctx, const std::uint8_t* uh) {
  if (wire_load16(uh + 6) == 0) return ctx.flush_skb(GroReason::UdpZeroCsum);
  const std::size_t ulen = wire_load16(uh + 4);
  if (ulen <= 8 || ulen != ctx.gro_len()) return ctx.flush_skb(GroReason::UdpLength);
  const std::size_t off = ctx.data_offset;
  ctx.data_offset += 8;
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* uh2 = held_header(*p, off);
    if (wire_load32(uh) != wire_load32(uh2)) {
      p->same_flow = false;
      continue;
    }
    if (ctx.is_flist != p->is_flist) {  // U-8
      ctx.flush_skb(GroReason::FraglistMode);
      ctx.complete_p(p, GroReason::FraglistMode);
      return;
    }
    const std::size_t ulen2 = wire_load16(uh2 + 4);
    GroReason why = gro_network_flush(ctx, *p, off);
    if (why == GroReason::None && ulen > ulen2) why = GroReason::UdpLonger;
    if (why != GroReason::None) {
      ctx.complete_p(p, why);
      ctx.note_skb(why);
      return;
    }
    // U-10: a fraglist member needs p's checksum state (else only the skb is flushed).
    if (p->is_flist && !gro_flist_csum_match(*ctx.skb, p->pkt))
      return ctx.flush_skb(GroReason::FraglistCsum);
    if (p->is_flist ? !gro_merge_list(ctx, *p) : !gro_merge(ctx, *p)) {
      ctx.note_skb(GroReason::SizeLimit);
      ctx.complete_p(p, GroReason::SizeLimit);
    } else if (ulen != ulen2) {
      ctx.complete_p(p, GroReason::ShortSegment);
    } else if (p->count >= kUdpGroCntMax) {
      ctx.complete_p(p, GroReason::UdpCountMax);
    }
    return;
  }
}
}  // namespace

void udp_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* uh = gro_header(ctx, off, 8);
  if (!uh) return ctx.flush_skb(GroReason::Truncated);
  const std::uint16_t check = wire_load16(uh + 6);
  if (!ctx.flush) {  // U-1
    const std::size_t l3off = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
    const std::uint8_t* l3 = ctx.skb->data() + l3off;  // pulled by the L3 hook
    const cs::wsum psum = pseudo(l3, std::uint32_t(ctx.gro_len()));
    if (gro_checksum_validate(ctx, true, check, psum) != 0)
      return ctx.flush_skb(GroReason::Checksum);
    if (check) gro_checksum_try_convert(ctx, psum);
  }
  uh = gro_header(ctx, off, 8);
  const std::uint16_t dport = wire_load16(uh + 2);
  const GroUdpTunnel* tun = ctx.cfg->tunnel(dport);
  const ProtocolOffload* po =
      tun ? ctx.reg->find(Key::UdpPort, tun->registry_port) : nullptr;
  if (!po || !po->gro_receive) {  // U-3
    if (ctx.skb->encapsulation) return ctx.flush_skb(GroReason::UdpEncapLocal);
    const bool sock = ctx.cfg->udp_gro_sock(dport);
    // is_flist: GRO_FRAGLIST and no UDP_GRO socket (not inside a tunnel, gro_context.hpp).
    ctx.is_flist = ctx.cfg->gro_fraglist && !sock && !ctx.encap_mark;
    if ((!sock && ctx.cfg->udp_gro_fwd) || sock || ctx.is_flist) return receive_segment(ctx, uh);
    return ctx.flush_skb(GroReason::UdpNoGro);
  }
  // U-4: tunnel socket.
  if (ctx.encap_mark) return ctx.flush_skb(GroReason::TunnelNested);
  if (check && !std::holds_alternative<core::CsumPartial>(ctx.skb->csum) && ctx.csum_cnt == 0 &&
      !ctx.csum_valid)
    return ctx.flush_skb(GroReason::TunnelCsum);
  ctx.encap_mark = true;
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* uh2 = held_header(*p, off);
    if (wire_load32(uh) != wire_load32(uh2) || (check == 0) != (wire_load16(uh2 + 6) == 0))
      p->same_flow = false;
  }
  ctx.data_offset += 8;
  gro_postpull_rcsum(ctx, off, 8);
  ctx.udp_tunnel = tun;
  if (++ctx.recursion >= kGroRecursionLimit) return ctx.flush_skb(GroReason::Recursion);
  po->gro_receive(ctx);
}

int udp_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* uh = p.data() + nhoff;
  const std::uint8_t* l3 = p.data() + ctx.l3_off;
  const std::size_t newlen = p.len() - nhoff;
  if (ctx.cp->is_flist && !p.encapsulation) {  // U-12 fraglist: length only, state raised
    wire_store16(uh + 4, std::uint16_t(newlen));
    p.gso.type |= sg::FRAGLIST | sg::UDP_L4;
    p.gso.segs = ctx.cp->count;
    core::incr_checksum_unnecessary(p);
    p.set_transport_header(int(nhoff));
    return 0;
  }
  const std::uint16_t check = wire_load16(uh + 6);
  if (check) wire_store16(uh + 6, cs::csum_fold16(pseudo(l3, std::uint32_t(newlen))));
  wire_store16(uh + 4, std::uint16_t(newlen));
  const GroUdpTunnel* tun = ctx.cfg->tunnel(wire_load16(uh + 2));
  const ProtocolOffload* po =
      tun ? ctx.reg->find(Key::UdpPort, tun->registry_port) : nullptr;
  int err = 0;
  if (po && po->gro_complete) {  // U-12 tunnel socket
    p.gso.type = check ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL;
    p.encapsulation = true;
    ctx.udp_tunnel = tun;
    err = po->gro_complete(ctx, nhoff + 8);
  } else {  // udp_gro_complete_segment
    p.set_partial(int(nhoff), 6);
    p.gso.segs = ctx.cp->count;
    p.gso.type |= sg::UDP_L4;
    if (p.encapsulation)
      p.set_inner_transport_header(int(nhoff));
    else
      p.set_transport_header(int(nhoff));
  }
  if (p.remcsum_offload) p.gso.type |= sg::TUNNEL_REMCSUM;  // never fires (W-24)
  return err;
}

}  // namespace ofld::offload::gro_hooks
