// Ethernet GRO (net/ethernet/eth.c: eth_gro_receive / eth_gro_complete): the inner Ethernet
// header of Ethernet-carrying tunnels (VXLAN, GRE/TEB, W-17). The outermost Ethernet header is
// compared by the engine (G-2, gro_list_prepare) before the first L3 hook runs.
#include <cstring>

#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

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

}  // namespace ofld::offload::gro_hooks
