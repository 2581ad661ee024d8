// The VXLAN offload module: GRO receive / complete (drivers/net/vxlan) and the GSO hook.
//
// VXLAN GRO (drivers/net/vxlan/vxlan_core.c: vxlan_gro_receive / vxlan_gro_complete;
// W-15..W-18, RCO W-22/W-23, V-1..V-5). The flow key is the flags word and the VNI word, so
// the RCO byte (low byte of the VNI word) is part of it.
#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::offload::gro_hooks {

namespace vxlan = wire::vxlan;

void vxlan_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  GroRemcsum grc;
  bool flush = true;
  const std::uint8_t* vh = gro_header(ctx, off, vxlan::kLen);
  if (!vh) {
    ctx.note_skb(GroReason::Truncated);
  } else {
    gro_postpull_rcsum(ctx, off, vxlan::kLen);
    const auto v = wire::VxlanHeader<const std::uint8_t>::unchecked(vh);
    const std::uint32_t flags = v.word0();
    const std::uint32_t vni = v.word1();  // VNI and the low (RCO) byte
    bool ok = true;
    const GroUdpTunnel* tun = ctx.udp_tunnel;
    if ((flags & vxlan::kFlagRco) && tun && tun->remcsum_rx && !ctx.skb->remcsum_offload) {
      if (!ctx.csum_valid) {  // W-15
        ctx.note_skb(GroReason::RcoNoCsum);
        ok = false;
      } else {
        const vxlan::Rco rco = v.rco_data();  // V-3
        const std::size_t start = rco.start, offset = rco.field();
        if (!gro_remcsum_process(ctx, off, vxlan::kLen, start, offset, grc, tun->remcsum_nopartial)) {
          ctx.note_skb(GroReason::Truncated);
          ok = false;
        }
        ctx.skb->remcsum_offload = true;
      }
    }
    if (ok) {
      ctx.data_offset += vxlan::kLen;
      for (GroHeld* p : ctx.candidates) {  // W-16
        if (!p->same_flow) continue;
        const std::uint8_t* vh2 = held_header(*p, off);
        const auto v2 = wire::VxlanHeader<const std::uint8_t>::unchecked(vh2);
        if (v2.word0() != flags || v2.word1() != vni) p->same_flow = false;
      }
      gro_call_receive(ctx, Key::Ethertype, wire::ethertype::kTeb);  // W-17: inner Ethernet
      flush = false;
    }
  }
  gro_flush_final_remcsum(ctx, flush, grc);
}

int vxlan_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  return gro_call_complete(ctx, Key::Ethertype, wire::ethertype::kTeb,
                           nhoff + std::uint32_t(vxlan::kLen));  // W-18
}

}  // namespace ofld::offload::gro_hooks

// VXLAN GSO hook (registered on UDP ports 4789 and 8472). The kernel VXLAN driver marks its
// packets inner_protocol_type ETHER with inner_protocol TEB and leaves segmentation to the
// generic UDP tunnel path; this hook checks the 8-byte VXLAN header (I flag, RFC 7348;
// RCO flag V-1 only together with TUNNEL_REMCSUM, W-26) and hands over with an Ethernet inner.

namespace ofld::offload::gso_hooks {

namespace vxlan = wire::vxlan;

int vxlan_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(vxlan::kHlen)) return ctx.fail(GsoReason::BadTunnel);
  const auto v = wire::VxlanHeader<const std::uint8_t>::unchecked(skb.data() + wire::udp::kHdrLen);
  if (!v.vni_valid()) return ctx.fail(GsoReason::BadTunnel);
  const bool rco = v.rco();
  if (rco != ((skb.gso.type & core::skb_gso::TUNNEL_REMCSUM) != 0))
    return ctx.fail(GsoReason::BadTunnel);
  return udp_tunnel_segment(ctx, /*inner_ether=*/true, int(vxlan::kHlen));  // UDP + VXLAN
}

}  // namespace ofld::offload::gso_hooks
