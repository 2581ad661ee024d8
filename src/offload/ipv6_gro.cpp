// IPv6 GRO (net/ipv6/ip6_offload.c: ipv6_gro_receive / ipv6_gro_complete, N-6..N-11) and the
// IPv6-inner IP-in-IP hooks (sit / ip6ip6, W-4).
#include <cstring>

#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace {
// Extension headers registered with INET6_PROTO_GSO_EXTHDR: Hop-by-Hop, Routing, Dest-Opts
// (N-7). The Fragment header (44) is not among them.
bool gso_exthdr(std::uint8_t nh) noexcept { return nh == 0 || nh == 43 || nh == 60; }
}  // namespace

void ipv6_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* iph = gro_header(ctx, off, 40);
  if (!iph) return ctx.flush_skb(GroReason::Truncated);
  ctx.network_offsets[ctx.encap_mark ? 1 : 0] = std::uint16_t(off);
  const bool len_bad = wire_load16(iph + 4) != ctx.skb->len() - (off + 40);  // N-6

  std::uint8_t proto = iph[6];
  std::size_t hoff = off + 40;
  const ProtocolOffload* po = ctx.reg->find(Key::IpProto, proto);
  if (!po || !po->gro_receive) {  // N-7: walk the GSO extension headers
    while (gso_exthdr(proto)) {
      const std::uint8_t* oh = gro_header(ctx, hoff, 2);
      if (!oh) break;
      // Both bytes are read before the next gro_header, which may pull into a new head
      // block and free the one `oh` points into.
      const std::uint8_t next = oh[0];
      const std::size_t optlen = (std::size_t(oh[1]) + 1) * 8;
      if (!gro_header(ctx, hoff, optlen)) break;
      proto = next;
      hoff += optlen;
    }
    po = ctx.reg->find(Key::IpProto, proto);
    if (!po || !po->gro_receive)
      return ctx.flush_skb(proto == 44 ? GroReason::IpFragment : GroReason::NoHandler);
    iph = gro_header(ctx, off, hoff - off);
  }
  ctx.data_offset = std::uint32_t(hoff);
  ctx.transport_offset = std::uint16_t(hoff);
  ctx.proto = proto;
  const std::size_t nlen = hoff - off;

  // N-8; the masked first word includes the version nibble, tested first, so that a held
  // packet of another family is never read further as IPv6.
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* iph2 = held_header(*p, off);
    if (((wire_load32(iph) ^ wire_load32(iph2)) & 0xF00FFFFFu) ||
        std::memcmp(iph + 8, iph2 + 8, 32) != 0 || iph[6] != iph2[6] ||
        (nlen > 40 && std::memcmp(iph + 40, iph2 + 40, nlen - 40) != 0))
      p->same_flow = false;
  }
  if (len_bad) ctx.flush_skb(GroReason::IpLength);
  ctx.is_ipv6 = true;
  gro_postpull_rcsum(ctx, off, nlen);  // N-9
  po->gro_receive(ctx);
}

int ipv6_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  std::uint8_t* iph = p.data() + nhoff;
  // Re-walk the GSO extension headers (N-11).
  std::uint8_t proto = iph[6];
  std::uint32_t hoff = nhoff + 40;
  while (gso_exthdr(proto) && hoff + 2 <= p.headlen()) {
    const std::uint8_t* oh = p.data() + hoff;
    proto = oh[0];
    hoff += (std::uint32_t(oh[1]) + 1) * 8;
  }
  if (p.encapsulation) {
    p.inner_protocol = 0x86DD;
    p.inner_protocol_type = core::InnerProtoType::Ether;
    p.set_inner_network_header(int(nhoff));
  } else {
    p.set_network_header(int(nhoff));
    p.set_transport_header(int(hoff));
  }
  const std::size_t payload = p.len() - nhoff - 40;
  // BIG TCP (payload > 65535, jumbo HBH) is unreachable: gro_max_size is 65536 (G-16/G-17).
  wire_store16(iph + 4, payload > 65535 ? 0 : std::uint16_t(payload));
  ctx.l3_off = nhoff;
  ctx.l3_v6 = true;
  return gro_call_complete(ctx, Key::IpProto, proto, hoff);
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
