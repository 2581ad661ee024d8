// The UDP offload module (net/ipv4/udp_offload.c, net/ipv6/udp_offload.c): the GRO receive /
// complete hooks and the GSO segment hook (USO, UDP tunnels).
//
// UDP GRO for IPv4 and IPv6 (net/ipv4/udp_offload.c, net/ipv6/udp_offload.c; U-1..U-12):
// segment mode for forwarding (GRO_UDP_FWD) and for local UDP_GRO sockets, and the UDP tunnel
// socket path that hands the payload to the tunnel's hook (VXLAN, GUE) through the registry.
#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/offload/registry.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"

namespace ofld::offload::gro_hooks {

namespace udp = wire::udp;

namespace cs = ofld::csum;
namespace sg = core::skb_gso;

namespace {
cs::wsum pseudo(const std::uint8_t* l3, std::uint32_t len) noexcept {
  constexpr std::uint8_t kUdp = wire::ipproto::kUdp;
  if (gro_rules::ip_version(l3) == 6)
    return cs::csum_ipv6_nofold(l3 + wire::ipv6::kSaddrOffset, l3 + wire::ipv6::kDaddrOffset, len,
                                kUdp, 0);
  return cs::csum_tcpudp_nofold(l3 + wire::ipv4::kSaddrOffset, l3 + wire::ipv4::kDaddrOffset, len,
                                kUdp, 0);
}

// udp_gro_receive_segment (U-5..U-11).
void receive_segment(GroContext& ctx, const std::uint8_t* uh) {
  if (wire_load16(uh + udp::kCheckOffset) == 0) return ctx.flush_skb(GroReason::UdpZeroCsum);
  const std::size_t ulen = wire_load16(uh + udp::kLenOffset);
  if (ulen <= 8 || ulen != ctx.gro_len()) return ctx.flush_skb(GroReason::UdpLength);
  const std::size_t off = ctx.data_offset;
  ctx.data_offset += 8;
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* uh2 = held_header(*p, off);
    if (wire_load32(uh + udp::kSourceOffset) != wire_load32(uh2 + udp::kSourceOffset)) {  // ports
      p->same_flow = false;
      continue;
    }
    if (ctx.is_flist != p->is_flist) {  // U-8
      ctx.flush_skb(GroReason::FraglistMode);
      ctx.complete_p(p, GroReason::FraglistMode);
      return;
    }
    const std::size_t ulen2 = wire_load16(uh2 + udp::kLenOffset);
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
  const std::uint8_t* uh = gro_header(ctx, off, udp::kHdrLen);
  if (!uh) return ctx.flush_skb(GroReason::Truncated);
  const std::uint16_t check = wire_load16(uh + udp::kCheckOffset);
  if (!ctx.flush) {  // U-1
    const std::size_t l3off = ctx.network_offsets[ctx.encap_mark ? 1 : 0];
    const std::uint8_t* l3 = ctx.skb->data() + l3off;  // pulled by the L3 hook
    const cs::wsum psum = pseudo(l3, std::uint32_t(ctx.gro_len()));
    if (gro_checksum_validate(ctx, true, check, psum) != 0)
      return ctx.flush_skb(GroReason::Checksum);
    if (check) gro_checksum_try_convert(ctx, psum);
  }
  uh = gro_header(ctx, off, udp::kHdrLen);
  const std::uint16_t dport = wire_load16(uh + udp::kDestOffset);
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
    if (wire_load32(uh + udp::kSourceOffset) != wire_load32(uh2 + udp::kSourceOffset) ||
        (check == 0) != (wire_load16(uh2 + udp::kCheckOffset) == 0))
      p->same_flow = false;
  }
  ctx.data_offset += 8;
  gro_postpull_rcsum(ctx, off, udp::kHdrLen);
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
    wire_store16(uh + udp::kLenOffset, std::uint16_t(newlen));
    p.gso.type |= sg::FRAGLIST | sg::UDP_L4;
    p.gso.segs = ctx.cp->count;
    core::incr_checksum_unnecessary(p);
    p.set_transport_header(int(nhoff));
    return 0;
  }
  const std::uint16_t check = wire_load16(uh + udp::kCheckOffset);
  if (check) wire_store16(uh + udp::kCheckOffset, cs::csum_fold16(pseudo(l3, std::uint32_t(newlen))));
  wire_store16(uh + udp::kLenOffset, std::uint16_t(newlen));
  const GroUdpTunnel* tun = ctx.cfg->tunnel(wire_load16(uh + udp::kDestOffset));
  const ProtocolOffload* po =
      tun ? ctx.reg->find(Key::UdpPort, tun->registry_port) : nullptr;
  int err = 0;
  if (po && po->gro_complete) {  // U-12 tunnel socket
    p.gso.type = check ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL;
    p.encapsulation = true;
    ctx.udp_tunnel = tun;
    err = po->gro_complete(ctx, nhoff + std::uint32_t(udp::kHdrLen));
  } else {  // udp_gro_complete_segment
    p.set_partial(int(nhoff), udp::kCheckOffset);
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

// UDP level of GSO: udp4_ufo_fragment / udp6_ufo_fragment entry and __udp_gso_segment
// (net/ipv4/udp_offload.c, net/ipv6/udp_offload.c). Spec X-28 (incl. the fraglist branch),
// X-29; GSO-partial outputs. A UDP tunnel
// (encapsulation + UDP_TUNNEL bits) is handed to the hook registered for the destination
// port (VXLAN, GUE), or to the generic X-31 path using the packet's inner_protocol_type.

namespace ofld::offload::gso_hooks {

namespace udp = wire::udp;

namespace {

// csum16_add / csum16_sub (include/net/checksum.h): 16-bit ones'-complement arithmetic.
std::uint16_t csum16_add(std::uint16_t c, std::uint16_t a) noexcept {
  std::uint16_t r = std::uint16_t(c + a);
  return std::uint16_t(r + (r < a));
}
std::uint16_t csum16_sub(std::uint16_t c, std::uint16_t a) noexcept {
  return csum16_add(c, std::uint16_t(~a));
}

int uso_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  const std::uint32_t mss = skb.gso.size;
  if (skb.len() <= 8 + mss) return ctx.fail(GsoReason::NothingToSegment);
  const core::pos_t uh_pos = skb.data_pos();
  skb.transport_header = uh_pos;
  const bool fraglist = (skb.gso.type & core::skb_gso::FRAGLIST) != 0;
  if (skb.ip_summed() == core::IpSummed::Partial && skb.csum_start_offset() != 0 && !fraglist)
    return ctx.fail(GsoReason::CsumStartMismatch);
  core::Features features = ctx.features;
  if (skb.ip_summed() != core::IpSummed::Partial)  // full software checksum
    features = features.without(core::netif_f::GSO_UDP_L4 | core::netif_f::CSUM_MASK);
  if (core::gso_ok(skb, features | core::netif_f::GSO_ROBUST)) {  // header verification only
    skb.gso.segs = std::uint16_t((skb.len() - 8 + mss - 1) / mss);
    ctx.hw_segments = true;
    return 0;
  }
  if (fraglist) {  // X-28 fraglist branch
    std::size_t own = skb.len();
    for (const auto& m : skb.frag_list()) own -= m.len();
    if (own - 8 == mss && !(skb.gso.type & core::skb_gso::DODGY)) {
      skb.pull(8);  // building blocks take data() at the payload
      int rc = core::skb_segment_list(ctx);
      if (rc != 0) return rc;
      // The head's UDP length is one member's again (GRO wrote the aggregate's); its
      // checksum, still the one that came in, is valid for that length.
      const int uhoff = ctx.seg_off(uh_pos);
      std::uint8_t* uh = ctx.segs[0].pkt.at_pos(uhoff, udp::kHdrLen);
      if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
      wire::store_be16(uh + udp::kLenOffset, std::uint16_t(udp::kHdrLen + mss));
      return core::segment_list_nat_fixup(ctx, ctx.seg_off(ctx.l3_pos), uhoff, 6, /*udp=*/true);
    }
    // Geometry changed: one linear packet, PARTIAL with a fresh seed for the whole length.
    skb.linearize();
    wire::store_be16(skb.data() + udp::kCheckOffset, core::pseudo_seed(skb, ctx.l3_pos, std::uint32_t(skb.len()),
                                                      wire::ipproto::kUdp));
    skb.csum = core::CsumPartial{uh_pos, 6, false};
  }
  const std::uint8_t* uh0 = skb.data();
  const std::uint16_t old_len = wire::load_be16(uh0 + udp::kLenOffset);
  const std::uint16_t old_check = wire::load_be16(uh0 + udp::kCheckOffset);
  skb.pull(8);
  const core::Features saved = ctx.features;
  ctx.features = features;
  int rc = core::segment_payload(ctx);
  ctx.features = saved;
  if (rc != 0) return rc;

  const int uhoff = ctx.seg_off(uh_pos);
  // GSO-partial outputs hold gso_segs × mss of payload each (__udp_gso_segment).
  std::uint32_t step = mss;
  if (ctx.segs[0].pkt.is_gso()) step *= ctx.segs[0].pkt.gso.segs;
  const std::uint16_t newlen = std::uint16_t(8 + step);
  const std::uint16_t check_mss = csum16_add(csum16_sub(old_check, old_len), newlen);
  const std::size_t n = ctx.segs.size();
  for (std::size_t i = 0; i < n; ++i) {
    auto& s = ctx.segs[i];
    std::uint8_t* uh = s.pkt.at_pos(uhoff, udp::kHdrLen);
    if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
    s.pkt.transport_header = uhoff;
    std::uint16_t len = newlen, check = check_mss;
    if (i + 1 == n) {  // the last one carries its own length (equal tail included)
      len = std::uint16_t(s.pkt.len() - std::size_t(uhoff));
      check = csum16_add(csum16_sub(old_check, old_len), len);
    }
    wire::store_be16(uh + udp::kLenOffset, len);
    wire::store_be16(uh + udp::kCheckOffset, check);
    if (s.pkt.ip_summed() == core::IpSummed::Partial) {
      core::gso_reset_checksum(s, ~std::uint32_t(check));
    } else {  // computed in software; C-14 0 → 0xFFFF
      wire::store_be16(uh + udp::kCheckOffset, csum::udp_csum_mangle(core::gso_make_checksum(s, ~std::uint32_t(check))));
    }
  }
  // NONE on the original becomes UNNECESSARY (the kernel does it to keep its
  // bad-offload warning quiet).
  if (skb.ip_summed() == core::IpSummed::None) skb.csum = core::CsumUnnecessary{};
  return 0;
}

}  // namespace

int udp_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(8)) return ctx.fail(GsoReason::HeaderTruncated);
  const std::uint32_t t = skb.gso.type;
  if (skb.encapsulation && (t & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM))) {
    const std::uint16_t dport = wire::load_be16(skb.data() + udp::kDestOffset);
    const auto* e = ctx.reg->find(Key::UdpPort, dport);
    if (e && e->segment) return e->segment(ctx);
    // An unknown UDP tunnel: its length unknown. An ethertype-typed inner with no link header
    // (inner MAC header = inner network header, e.g. Geneve carrying IPv4 on another port) is
    // that IP packet, as skb_mac_gso_segment with mac_len 0 dispatches on skb->inner_protocol.
    if (skb.inner_protocol_type == core::InnerProtoType::Ether &&
        skb.inner_mac_header == skb.inner_network_header &&
        (skb.inner_protocol == wire::ethertype::kIpv4 || skb.inner_protocol == wire::ethertype::kIpv6))
      return udp_tunnel_segment_ethertype(ctx, skb.inner_protocol, /*own_hlen=*/-1);
    return udp_tunnel_segment(ctx, skb.inner_protocol_type == core::InnerProtoType::Ether,
                              /*own_hlen=*/-1);
  }
  // Inside a tunnel's inner call (encapsulation cleared) a UDP packet whose gso_type asks
  // for a UDP tunnel and not for USO is a second tunnel level (X-31: one level per pass).
  if (ctx.tunnel_inner && (t & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM)) &&
      !(t & core::skb_gso::UDP_L4))
    return ctx.fail(GsoReason::NestedTunnel);
  if (t & core::skb_gso::UDP_L4) return uso_segment(ctx);
  if (t & core::skb_gso::UDP) return ctx.fail(GsoReason::UfoUnsupported);
  return ctx.fail(GsoReason::BadGsoType);
}

}  // namespace ofld::offload::gso_hooks
