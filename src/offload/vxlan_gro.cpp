// VXLAN GRO (drivers/net/vxlan/vxlan_core.c: vxlan_gro_receive / vxlan_gro_complete;
// W-15..W-18, RCO W-22/W-23, V-1..V-5). The flow key is the flags word and the VNI word, so
// the RCO byte (low byte of the VNI word) is part of it.
#include "gro_protos.hpp"

namespace ofld::offload::gro_hooks {

void vxlan_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  GroRemcsum grc;
  bool flush = true;
  const std::uint8_t* vh = gro_header(ctx, off, 8);
  if (!vh) {
    ctx.note_skb(GroReason::Truncated);
  } else {
    gro_postpull_rcsum(ctx, off, 8);
    const std::uint32_t flags = wire_load32(vh);
    const std::uint32_t vni = wire_load32(vh + 4);
    bool ok = true;
    const GroUdpTunnel* tun = ctx.udp_tunnel;
    if ((flags & 0x00200000u) && tun && tun->remcsum_rx && !ctx.skb->remcsum_offload) {
      if (!ctx.csum_valid) {  // W-15
        ctx.note_skb(GroReason::RcoNoCsum);
        ok = false;
      } else {
        const std::size_t start = std::size_t(vni & 0x7F) << 1;  // V-3
        const std::size_t offset = start + ((vni & 0x80) ? 6 : 16);
        if (!gro_remcsum_process(ctx, off, 8, start, offset, grc, tun->remcsum_nopartial)) {
          ctx.note_skb(GroReason::Truncated);
          ok = false;
        }
        ctx.skb->remcsum_offload = true;
      }
    }
    if (ok) {
      ctx.data_offset += 8;
      for (GroHeld* p : ctx.candidates) {  // W-16
        if (!p->same_flow) continue;
        const std::uint8_t* vh2 = held_header(*p, off);
        if (wire_load32(vh2) != flags || wire_load32(vh2 + 4) != vni) p->same_flow = false;
      }
      gro_call_receive(ctx, Key::Ethertype, 0x6558);  // W-17: inner Ethernet
      flush = false;
    }
  }
  gro_flush_final_remcsum(ctx, flush, grc);
}

int vxlan_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  return gro_call_complete(ctx, Key::Ethertype, 0x6558, nhoff + 8);  // W-18
}

}  // namespace ofld::offload::gro_hooks
