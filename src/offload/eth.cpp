// The Ethernet offload module (net/ethernet/eth.c, net/core/gso.c): eth_gro_receive,
// eth_gro_complete and the MAC-level GSO walk.
//
// Ethernet GRO (net/ethernet/eth.c: eth_gro_receive / eth_gro_complete): the inner Ethernet
// header of Ethernet-carrying tunnels (VXLAN, GRE/TEB, W-17). The outermost Ethernet header is
// compared by the engine (G-2, gro_list_prepare) before the first L3 hook runs.
#include <cstring>

#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro {

void eth_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* eh = gro_header(ctx, off, 14);
  if (!eh) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    if (std::memcmp(eh, held_header(*p, off), 14) != 0) p->same_flow = false;
  }
  const std::uint16_t type = wire_load16(eh + 12);
  const ProtocolOffload* po = ctx.reg->find(Key::Ethertype, type);
  if (!po || !po->gro_receive || type == 0x6558) {
    ctx.flush_skb(GroReason::NoHandler);
    return;
  }
  ctx.data_offset += 14;
  gro_postpull_rcsum(ctx, off, 14);
  po->gro_receive(ctx);
}

int eth_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  const std::uint16_t type = wire_load16(p.data() + nhoff + 12);
  if (p.encapsulation) p.set_inner_mac_header(int(nhoff));
  return gro_call_complete(ctx, Key::Ethertype, type, nhoff + 14);
}

}  // namespace ofld::offload::gro

// Ethernet (and 802.1Q/802.1ad tags) at the MAC level of GSO: skb_mac_gso_segment with
// skb_network_protocol (net/core/gso.c, net/core/dev.c). Spec X-3, X-5 (TEB replaced by the
// inner Ethernet type).

namespace ofld::offload::gso_hooks {

int eth_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  std::size_t hl = 14;
  if (!skb.may_pull(hl)) return ctx.fail(GsoReason::HeaderTruncated);
  std::uint16_t type = wire::load_be16(skb.data() + 12);
  for (std::size_t tags = 0; type == wire::ethertype::kVlan || type == wire::ethertype::kQinQ ||
                             type == wire::ethertype::kQinQ9100;
       ++tags) {
    if (tags == wire::kMaxVlanTags || !skb.may_pull(hl + 4))
      return ctx.fail(GsoReason::HeaderTruncated);
    type = wire::load_be16(skb.data() + hl + 2);
    hl += 4;
  }
  skb.mac_header = skb.data_pos();
  skb.pull(hl);
  skb.network_header = skb.data_pos();
  const std::uint16_t saved = ctx.protocol;
  ctx.protocol = type;  // the L3 protocol this level's checksum feature is judged on
  int rc = gso::mac_gso_segment(ctx, type);
  ctx.protocol = saved;
  return rc;
}

}  // namespace ofld::offload::gso_hooks
