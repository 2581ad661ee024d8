// VXLAN GSO hook (registered on UDP ports 4789 and 8472). The kernel VXLAN driver marks its
// packets inner_protocol_type ETHER with inner_protocol TEB and leaves segmentation to the
// generic UDP tunnel path; this hook checks the 8-byte VXLAN header (I flag, RFC 7348;
// RCO flag V-1 only together with TUNNEL_REMCSUM, W-26) and hands over with an Ethernet inner.
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"

namespace ofld::offload::gso_hooks {

int vxlan_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(16)) return ctx.fail(GsoReason::BadTunnel);
  const std::uint32_t w0 = wire::load_be32(skb.data() + 8);
  if (!(w0 & 0x08000000u)) return ctx.fail(GsoReason::BadTunnel);
  const bool rco = (w0 & 0x00200000u) != 0;
  if (rco != ((skb.gso.type & core::skb_gso::TUNNEL_REMCSUM) != 0))
    return ctx.fail(GsoReason::BadTunnel);
  return udp_tunnel_segment(ctx, /*inner_ether=*/true, /*own_hlen=*/16);  // UDP + VXLAN
}

}  // namespace ofld::offload::gso_hooks
