// GUE GSO hook (V-6..V-10). Linux FOU/GUE sets inner_protocol_type IPPROTO with the GUE
// header's protocol (IPIP 4, IPv6 41) and segments through the generic UDP tunnel path
// this hook reads the GUE header (version 0: proto field; version 1: the IP version
// nibble, V-7) so that the inner protocol comes from the packet itself, then hands over.
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

int gue_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  if (!skb.may_pull(12)) return ctx.fail(GsoReason::BadTunnel);
  const std::uint8_t b0 = skb.data()[8];
  std::uint8_t proto;
  int hlen;  // UDP + GUE header (V-6: 4 bytes + hlen words of options; version 1: none)
  switch (b0 >> 6) {
    case 0:
      if (b0 & 0x20) return ctx.fail(GsoReason::BadTunnel);  // control message
      proto = skb.data()[9];
      hlen = 8 + 4 + 4 * (b0 & 0x1F);
      break;
    case 1:
      proto = ((b0 >> 4) == 4) ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
      hlen = 8;
      break;
    default:
      return ctx.fail(GsoReason::BadTunnel);
  }
  if (proto != wire::ipproto::kIpip && proto != wire::ipproto::kIpv6)
    return ctx.fail(GsoReason::BadTunnel);
  skb.inner_protocol_type = core::InnerProtoType::IpProto;
  skb.inner_ipproto = proto;
  return udp_tunnel_segment(ctx, /*inner_ether=*/false, hlen);
}

}  // namespace ofld::offload::gso_hooks
