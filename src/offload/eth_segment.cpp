// Ethernet (and 802.1Q/802.1ad tags) at the MAC level of GSO: skb_mac_gso_segment with
// skb_network_protocol (net/core/gso.c, net/core/dev.c). Spec X-3, X-5 (TEB replaced by the
// inner Ethernet type).
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

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
  int rc = mac_gso_segment(ctx, type);
  ctx.protocol = saved;
  return rc;
}

}  // namespace ofld::offload::gso_hooks
