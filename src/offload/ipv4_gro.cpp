// IPv4 GRO (net/ipv4/af_inet.c: inet_gro_receive / inet_gro_complete, N-1..N-5) and the
// IPv4-inner IP-in-IP hooks (ipip_gro_receive / ipip_gro_complete, W-4).
#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace cs = ofld::csum;

void inet_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* iph = gro_header(ctx, off, 20);
  if (!iph) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  const std::uint8_t proto = iph[9];
  const ProtocolOffload* po = ctx.reg->find(Key::IpProto, proto);
  // N-1 hard rejects: the skb is flushed, no held flow is completed.
  if (!po || !po->gro_receive) return ctx.flush_skb(GroReason::NoHandler);
  if (iph[0] != 0x45) return ctx.flush_skb(GroReason::IpOptions);
  const std::uint16_t frag = wire_load16(iph + 6);
  if (frag & 0x3FFF) return ctx.flush_skb(GroReason::IpFragment);
  if (cs::csum_fold(cs::csum_partial(iph, 20, 0)) != 0)
    return ctx.flush_skb(GroReason::IpHeaderCsum);

  ctx.proto = proto;
  // N-2 soft flush: L4 still runs so that a matching held flow is completed.
  const std::uint16_t tot_len = wire_load16(iph + 2);
  if (tot_len != std::uint16_t(ctx.gro_len())) ctx.flush_skb(GroReason::IpLength);
  if (frag & 0x8000) ctx.flush_skb(GroReason::IpReservedBit);

  for (GroHeld* p : ctx.candidates) {  // N-3, and the family: iph[0] is 0x45 (N-1)
    if (!p->same_flow) continue;
    const std::uint8_t* iph2 = held_header(*p, off);
    if (iph[0] != iph2[0] || iph[9] != iph2[9] || wire_load32(iph + 12) != wire_load32(iph2 + 12) ||
        wire_load32(iph + 16) != wire_load32(iph2 + 16))
      p->same_flow = false;
  }
  ctx.network_offsets[ctx.encap_mark ? 1 : 0] = std::uint16_t(off);
  ctx.is_ipv6 = false;
  ctx.data_offset += 20;
  ctx.transport_offset = std::uint16_t(ctx.data_offset);
  po->gro_receive(ctx);
}

int inet_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* iph = p.data() + nhoff;
  if (p.encapsulation) {
    p.inner_protocol = 0x0800;
    p.inner_protocol_type = core::InnerProtoType::Ether;
    p.set_inner_network_header(int(nhoff));
  } else {
    p.set_network_header(int(nhoff));
    p.set_transport_header(int(nhoff + 20));
  }
  const std::size_t total = p.len() - nhoff;
  const std::uint16_t newlen = total > 65535 ? 0 : std::uint16_t(total);  // N-5
  const std::uint16_t oldlen = wire_load16(iph + 2);
  wire_store16(iph + 10, cs::csum_replace2(wire_load16(iph + 10), oldlen, newlen));
  wire_store16(iph + 2, newlen);
  ctx.l3_off = nhoff;
  ctx.l3_v6 = false;
  return gro_call_complete(ctx, Key::IpProto, iph[9], nhoff + 20);
}

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

}  // namespace ofld::offload::gro_hooks
