// UDP level of GSO: udp4_ufo_fragment / udp6_ufo_fragment entry and __udp_gso_segment
// (net/ipv4/udp_offload.c, net/ipv6/udp_offload.c). Spec X-28 (incl. the fraglist branch),
// X-29; GSO-partial outputs. A UDP tunnel
// (encapsulation + UDP_TUNNEL bits) is handed to the hook registered for the destination
// port (VXLAN, GUE), or to the generic X-31 path using the packet's inner_protocol_type.
#include "gso_hooks.hpp"
#include "ofld/offload/registry.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::offload::gso_hooks {

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
      std::uint8_t* uh = ctx.segs[0].pkt.at_pos(uhoff, 8);
      if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
      wire::store_be16(uh + 4, std::uint16_t(8 + mss));
      return core::segment_list_nat_fixup(ctx, ctx.seg_off(ctx.l3_pos), uhoff, 6, /*udp=*/true);
    }
    // Geometry changed: one linear packet, PARTIAL with a fresh seed for the whole length.
    skb.linearize();
    wire::store_be16(skb.data() + 6, core::pseudo_seed(skb, ctx.l3_pos, std::uint32_t(skb.len()),
                                                      wire::ipproto::kUdp));
    skb.csum = core::CsumPartial{uh_pos, 6, false};
  }
  const std::uint8_t* uh0 = skb.data();
  const std::uint16_t old_len = wire::load_be16(uh0 + 4);
  const std::uint16_t old_check = wire::load_be16(uh0 + 6);
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
    std::uint8_t* uh = s.pkt.at_pos(uhoff, 8);
    if (!uh) return ctx.fail(GsoReason::HeaderTruncated);
    s.pkt.transport_header = uhoff;
    std::uint16_t len = newlen, check = check_mss;
    if (i + 1 == n) {  // the last one carries its own length (equal tail included)
      len = std::uint16_t(s.pkt.len() - std::size_t(uhoff));
      check = csum16_add(csum16_sub(old_check, old_len), len);
    }
    wire::store_be16(uh + 4, len);
    wire::store_be16(uh + 6, check);
    if (s.pkt.ip_summed() == core::IpSummed::Partial) {
      core::gso_reset_checksum(s, ~std::uint32_t(check));
    } else {  // computed in software; C-14 0 → 0xFFFF
      wire::store_be16(uh + 6, csum::udp_csum_mangle(core::gso_make_checksum(s, ~std::uint32_t(check))));
    }
  }
  // NONE on the original becomes UNNECESSARY (bad-offload check, X-4).
  if (skb.ip_summed() == core::IpSummed::None) skb.csum = core::CsumUnnecessary{};
  return 0;
}

}  // namespace

int udp_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(8)) return ctx.fail(GsoReason::HeaderTruncated);
  const std::uint32_t t = skb.gso.type;
  if (skb.encapsulation && (t & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM))) {
    const std::uint16_t dport = wire::load_be16(skb.data() + 2);
    const auto* e = ctx.reg->find(Key::UdpPort, dport);
    if (e && e->segment) return e->segment(ctx);
    return udp_tunnel_segment(ctx, skb.inner_protocol_type == core::InnerProtoType::Ether,
                              /*own_hlen=*/-1);  // an unknown UDP tunnel: its length unknown
  }
  // Inside a tunnel's inner call (encapsulation cleared) a UDP packet whose gso_type asks
  // for a UDP tunnel and not for USO is a second tunnel level (issue 11 item 4).
  if (ctx.tunnel_inner && (t & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM)) &&
      !(t & core::skb_gso::UDP_L4))
    return ctx.fail(GsoReason::NestedTunnel);
  if (t & core::skb_gso::UDP_L4) return uso_segment(ctx);
  if (t & core::skb_gso::UDP) return ctx.fail(GsoReason::UfoUnsupported);
  return ctx.fail(GsoReason::BadGsoType);
}

}  // namespace ofld::offload::gso_hooks
