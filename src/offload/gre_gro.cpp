// GRE GRO for IPv4 and IPv6 outer headers (net/ipv4/gre_offload.c; W-5..W-11, V-12, V-13).
#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

namespace {
constexpr std::uint16_t kGreCsum = 0x8000, kGreKey = 0x2000;
}

void gre_gro_receive(GroContext& ctx) {
  if (ctx.encap_mark) return ctx.flush_skb(GroReason::TunnelNested);  // W-1
  ctx.encap_mark = true;
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* greh = gro_header(ctx, off, 4);
  if (!greh) return ctx.flush_skb(GroReason::Truncated);
  const std::uint16_t flags = wire_load16(greh);
  const std::uint16_t proto = wire_load16(greh + 2);
  // W-5: version 0, no flag other than K and C (S, R, routing, recursion... refused).
  if (flags & ~(kGreCsum | kGreKey)) return ctx.flush_skb(GroReason::GreFlags);
  if ((flags & kGreCsum) && ctx.is_fou) return ctx.flush_skb(GroReason::GreCsumFou);  // W-6
  const ProtocolOffload* po = ctx.reg->find(Key::Ethertype, proto);
  if (!po || !po->gro_receive) return ctx.flush_skb(GroReason::NoHandler);  // W-7
  const std::size_t grehlen = 4 + ((flags & kGreKey) ? 4 : 0) + ((flags & kGreCsum) ? 4 : 0);
  greh = gro_header(ctx, off, grehlen);
  if (!greh) return ctx.flush_skb(GroReason::Truncated);
  if ((flags & kGreCsum) && !ctx.flush) {  // W-8: no pseudo header
    if (gro_checksum_validate(ctx, false, 0, 0) != 0) return ctx.flush_skb(GroReason::Checksum);
    gro_checksum_try_convert(ctx, 0);
  }
  // W-9. The key sits after the checksum word when C is set. (The kernel compares the word
  // right after the base header, i.e. the checksum word when both C and K are set; we compare
  // the key itself, as the spec's rule states.)
  const std::size_t key_off = 4 + ((flags & kGreCsum) ? 4 : 0);
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    const std::uint8_t* greh2 = held_header(*p, off);
    if (wire_load32(greh2) != wire_load32(greh) ||
        ((flags & kGreKey) && wire_load32(greh2 + key_off) != wire_load32(greh + key_off)))
      p->same_flow = false;
  }
  ctx.data_offset += std::uint32_t(grehlen);
  gro_postpull_rcsum(ctx, off, grehlen);  // W-10
  if (++ctx.recursion >= kGroRecursionLimit) return ctx.flush_skb(GroReason::Recursion);
  po->gro_receive(ctx);
}

int gre_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  const std::uint8_t* greh = p.data() + nhoff;
  const std::uint16_t flags = wire_load16(greh);
  const std::uint16_t proto = wire_load16(greh + 2);
  p.encapsulation = true;
  p.gso.type = core::skb_gso::GRE;  // W-11: assigned, never GRE_CSUM (quirk)
  const std::uint32_t grehlen = 4 + ((flags & kGreKey) ? 4 : 0) + ((flags & kGreCsum) ? 4 : 0);
  const int err = gro_call_complete(ctx, Key::Ethertype, proto, nhoff + grehlen);
  p.set_inner_mac_header(int(nhoff + grehlen));
  return err;
}

}  // namespace ofld::offload::gro_hooks
