// The IP-in-IP offload module (IPIP / IP4IP6 and SIT / IP6IP6; net/ipv4/af_inet.c,
// net/ipv6/ip6_offload.c): the GSO segment hooks and the GRO receive / complete hooks.
//
// IP-in-IP GSO: ipip_gso_segment / sit_gso_segment (net/ipv4/af_inet.c, net/ipv6/ip6_offload.c)
// and their IPv6-outer twins ip4ip6_gso_segment / ip6ip6_gso_segment. Spec X-34: the gso_type
// must name the OUTER family's IP-in-IP bit (IPXIP4 for an IPv4 outer header, IPXIP6 for an
// IPv6 one); the inner header is then handled by the ordinary L3 hook (X-23..X-25 / X-27),
// which sees encap_level > 0, narrows the features to hw_enc_features and evaluates FIXEDID.
// The outer L3 hook rewrites the outer ID / tot_len / payload_len afterwards, as for any
// packet.
//
// The kernel keeps one table per outer family (inet_offloads / inet6_offloads); ofld has one
// IP-protocol table, so the hook picks the bit from ctx.l3_proto (the enclosing IP header).
//
// GUE/FOU carrying IP reach these hooks from the UDP tunnel path. The kernel's ipip/sit
// devices always add IPXIP4/IPXIP6 before the FOU header (iptunnel_handle_offloads), and
// prepare_frame() does the same; a UDP-tunnel packet built without the bit (older ofld
// callers) is still accepted here so that the UDP tunnel bits alone identify it.
#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

namespace {

bool ipxip_type_ok(const GsoContext& ctx) noexcept {
  const std::uint32_t t = ctx.skb->gso.type;
  const std::uint32_t need = ctx.l3_proto == wire::ethertype::kIpv6 ? core::skb_gso::IPXIP6
                                                                      : core::skb_gso::IPXIP4;
  if (t & need) return true;
  return (t & (core::skb_gso::UDP_TUNNEL | core::skb_gso::UDP_TUNNEL_CSUM)) != 0;
}

}  // namespace

int ipip_segment(GsoContext& ctx) {
  if (!ipxip_type_ok(ctx)) return ctx.fail(GsoReason::BadGsoType);
  return ipv4_segment(ctx);
}

int sit_segment(GsoContext& ctx) {
  if (!ipxip_type_ok(ctx)) return ctx.fail(GsoReason::BadGsoType);
  return ipv6_segment(ctx);
}

}  // namespace ofld::offload::gso_hooks

// IP-in-IP GRO (W-1, W-4): the tunnel layer is the inner IP header itself, parsed by the
// ordinary IPv4 / IPv6 receive hook once the encapsulation mark is set.

namespace ofld::offload::gro_hooks {

// IPv4 inside IPv4 or IPv6 (IPIP / IP4IP6): one tunnel layer per pass (W-1, W-4).
void ipip_gro_receive(GroContext& ctx) {
  if (ctx.encap_mark) return ctx.flush_skb(GroReason::TunnelNested);
  ctx.encap_mark = true;
  inet_gro_receive(ctx);
}

int ipip_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  p.encapsulation = true;
  p.gso.type |= ctx.l3_v6 ? core::skb_gso::IPXIP6 : core::skb_gso::IPXIP4;
  return inet_gro_complete(ctx, nhoff);
}

// IPv6 inside IPv4 (SIT) or IPv6 (IP6IP6) (W-4).
void sit_gro_receive(GroContext& ctx) {
  if (ctx.encap_mark) return ctx.flush_skb(GroReason::TunnelNested);
  ctx.encap_mark = true;
  ipv6_gro_receive(ctx);
}

int sit_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  p.encapsulation = true;
  p.gso.type |= ctx.l3_v6 ? core::skb_gso::IPXIP6 : core::skb_gso::IPXIP4;
  return ipv6_gro_complete(ctx, nhoff);
}

}  // namespace ofld::offload::gro_hooks
