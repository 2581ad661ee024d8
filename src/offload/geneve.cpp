// The Geneve offload module (RFC 8926; drivers/net/geneve.c): GRO receive / complete and the
// GSO hook. Rules GN-1..GN-8 in docs/geneve.md.
//
// Geneve GRO (geneve_gro_receive / geneve_gro_complete, 6.12): a packet of another version or
// with the O (OAM) bit is not aggregated (GN-2); the flow key is the whole Geneve header —
// option length, flags byte (C bit and reserved bits included), protocol type, VNI, reserved
// byte and every option byte (GN-3); the payload is dispatched on the protocol type through
// the ethertype table (GN-4: TEB = inner Ethernet, or IPv4 / IPv6 directly). Geneve carries no
// remote checksum offload in Linux, so nothing here touches the inner checksum.
#include <cstring>

#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::offload::gro_hooks {

namespace geneve = wire::geneve;
using GeneveView = wire::GeneveHeader<const std::uint8_t>;

void geneve_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* gh = gro_header(ctx, off, geneve::kBaseLen);
  if (!gh) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  if (GeneveView::unchecked(gh).version() != geneve::kVersion ||
      GeneveView::unchecked(gh).oam()) {  // GN-2
    ctx.flush_skb(GroReason::GeneveVerOam);
    return;
  }
  const std::size_t hlen = GeneveView::unchecked(gh).header_len();
  gh = gro_header(ctx, off, hlen);
  if (!gh) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  // GN-3: a held flow is this packet's flow only with the same option length and the same
  // header bytes. A held packet's headers are linear up to its own payload; one shorter than
  // this header here is another flow (never read past it).
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    if (p->pkt.headlen() < off + geneve::kBaseLen) {
      p->same_flow = false;
      continue;
    }
    const std::uint8_t* gh2 = held_header(*p, off);
    if (GeneveView::unchecked(gh2).opt_len() != GeneveView::unchecked(gh).opt_len() ||
        p->pkt.headlen() < off + hlen ||
        std::memcmp(gh, gh2, hlen) != 0)
      p->same_flow = false;
  }
  const std::uint16_t type = GeneveView::unchecked(gh).protocol();
  const ProtocolOffload* po = ctx.reg ? ctx.reg->find(Key::Ethertype, type) : nullptr;
  if (!po || !po->gro_receive) {  // GN-4: no GRO handler for the payload's ethertype
    ctx.flush_skb(GroReason::NoHandler);
    return;
  }
  gro_postpull_rcsum(ctx, off, hlen);  // G-15 over the whole header, options included
  ctx.data_offset += std::uint32_t(hlen);
  gro_call_receive(ctx, Key::Ethertype, type);
}

int geneve_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  // held: linear through the inner headers
  const auto g = GeneveView::unchecked(p.data() + nhoff);
  const std::uint32_t inner = nhoff + std::uint32_t(g.header_len());
  const int err = gro_call_complete(ctx, Key::Ethertype, g.protocol(), inner);  // GN-5
  p.set_inner_mac_header(int(inner));
  return err;
}

}  // namespace ofld::offload::gro_hooks

// Geneve GSO hook (registered on UDP 6081). The kernel has no Geneve segment callback: the
// driver marks its packets inner_protocol_type ETHER with inner_protocol TEB (or, with
// inner_proto_inherit, the payload's ethertype) and segmentation takes the generic UDP tunnel
// path. This hook reads the Geneve header (version 0, option length, protocol type) so
// that the tunnel header length and the inner protocol come from the packet itself, then hands
// over (GN-6). The header, options included, is copied unchanged into every segment.

namespace ofld::offload::gso_hooks {

namespace geneve = wire::geneve;
using GeneveView = wire::GeneveHeader<const std::uint8_t>;

int geneve_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  constexpr std::size_t kUdp = wire::udp::kHdrLen;
  if (!skb.may_pull(kUdp + geneve::kBaseLen)) return ctx.fail(GsoReason::BadTunnel);
  if (GeneveView::unchecked(skb.data() + kUdp).version() != geneve::kVersion)
    return ctx.fail(GsoReason::BadTunnel);
  const std::size_t hlen = GeneveView::unchecked(skb.data() + kUdp).header_len();
  if (!skb.may_pull(kUdp + hlen)) return ctx.fail(GsoReason::BadTunnel);
  // Linux has no remote checksum offload for Geneve: a TUNNEL_REMCSUM request is malformed.
  if (skb.gso.type & core::skb_gso::TUNNEL_REMCSUM) return ctx.fail(GsoReason::BadTunnel);
  const std::uint16_t type = GeneveView::unchecked(skb.data() + kUdp).protocol();
  if (type != wire::ethertype::kTeb && type != wire::ethertype::kIpv4 &&
      type != wire::ethertype::kIpv6)
    return ctx.fail(GsoReason::BadTunnel);
  return udp_tunnel_segment_ethertype(ctx, type, int(kUdp + hlen));
}

}  // namespace ofld::offload::gso_hooks
