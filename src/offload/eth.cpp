// The Ethernet offload module (net/ethernet/eth.c, net/core/gso.c): eth_gro_receive,
// eth_gro_complete and the MAC-level GSO walk.
//
// Ethernet GRO (net/ethernet/eth.c: eth_gro_receive / eth_gro_complete): the inner Ethernet
// header of Ethernet-carrying tunnels (VXLAN, GRE/TEB, W-17). The outermost Ethernet header is
// compared by the engine (G-2, gro_list_prepare) before the first L3 hook runs.
#include <cstring>

#include "gro_protos.hpp"
#include "gro_rules.hpp"
#include "gso_hooks.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gro_hooks {

namespace eth = wire::eth;

void eth_gro_receive(GroContext& ctx) {
  const std::size_t off = ctx.data_offset;
  const std::uint8_t* eh = gro_header(ctx, off, eth::kHdrLen);
  if (!eh) {
    ctx.flush_skb(GroReason::Truncated);
    return;
  }
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    if (std::memcmp(eh, held_header(*p, off), eth::kHdrLen) != 0) p->same_flow = false;
  }
  const std::uint16_t type = wire::load_be16(eh + eth::kTypeOffset);
  const ProtocolOffload* po = ctx.reg->find(Key::Ethertype, type);
  if (!po || !po->gro_receive || type == wire::ethertype::kTeb) {
    ctx.flush_skb(GroReason::NoHandler);
    return;
  }
  ctx.data_offset += eth::kHdrLen;
  gro_postpull_rcsum(ctx, off, eth::kHdrLen);
  po->gro_receive(ctx);
}

int eth_gro_complete(GroContext& ctx, std::uint32_t nhoff) {
  core::Packet& p = ctx.cp->pkt;
  const std::uint16_t type = wire::load_be16(p.data() + nhoff + eth::kTypeOffset);
  if (p.encapsulation) p.set_inner_mac_header(int(nhoff));
  return gro_call_complete(ctx, Key::Ethertype, type, nhoff + eth::kHdrLen);
}

}  // namespace ofld::offload::gro_hooks

// Ethernet (and 802.1Q/802.1ad tags) at the MAC level of GSO: skb_mac_gso_segment with
// skb_network_protocol (net/core/gso.c, net/core/dev.c). Spec X-3, X-5 (TEB replaced by the
// inner Ethernet type).

namespace ofld::offload::gso_hooks {

namespace eth = wire::eth;

int eth_segment(GsoContext& ctx) {
  core::Packet& skb = *ctx.skb;
  std::size_t hl = eth::kHdrLen;
  if (!skb.may_pull(hl)) return ctx.fail(GsoReason::HeaderTruncated);
  std::uint16_t type = wire::load_be16(skb.data() + eth::kTypeOffset);
  for (std::size_t tags = 0; type == wire::ethertype::kVlan || type == wire::ethertype::kQinQ ||
                             type == wire::ethertype::kQinQ9100;
       ++tags) {
    if (tags == wire::kMaxVlanTags || !skb.may_pull(hl + wire::vlan::kHdrLen))
      return ctx.fail(GsoReason::HeaderTruncated);
    type = wire::load_be16(skb.data() + hl + wire::vlan::kTypeOffset);
    hl += wire::vlan::kHdrLen;
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

// The link layer under the GRO chain (dev_gro_receive's use of eth_type_trans and
// gro_list_prepare's MAC comparison; napi_gro_complete's dispatch).
namespace ofld::offload {

namespace eth = wire::eth;

namespace {
constexpr std::size_t link_hlen(GroLink link) noexcept {
  return link == GroLink::Ethernet ? eth::kHdrLen : 0;
}
std::uint16_t link_protocol(const std::uint8_t* d, GroLink link) noexcept {
  if (link == GroLink::Ethernet) return wire::load_be16(d + eth::kTypeOffset);
  return wire::ip_version(d) == 6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4;
}
}  // namespace

bool gro_link_prepare(GroContext& ctx, GroLink link) noexcept {
  core::Packet& pkt = *ctx.skb;
  const std::size_t l2 = link_hlen(link);
  ctx.data_offset = std::uint32_t(l2);
  if (!pkt.may_pull(l2 + 1)) {
    for (GroHeld* p : ctx.candidates) p->same_flow = false;
    ctx.flush_skb(GroReason::Truncated);
    return false;
  }
  const std::uint8_t* mac = pkt.data();
  ctx.protocol = link_protocol(mac, link);
  // Ethernet's MAC header holds the ethertype (the L3 family); a raw-IP link has none, so
  // the family is the version nibble (G-2, and the dispatch).
  for (GroHeld* p : ctx.candidates) {
    if (!p->same_flow) continue;
    p->same_flow = link == GroLink::Ethernet
                       ? std::memcmp(mac, p->pkt.data(), eth::kHdrLen) == 0
                       : wire::ip_version(mac) == wire::ip_version(p->pkt.data());
  }
  return true;
}

void gro_link_receive(GroContext& ctx, GroLink link) noexcept {
  core::Packet& pkt = *ctx.skb;
  const std::size_t l2 = link_hlen(link);
  if (ctx.csum_valid && l2 && pkt.headlen() >= l2)  // G-5: CHECKSUM_COMPLETE from L3 on
    ctx.csum = csum::csum_sub(ctx.csum, csum::csum_partial(pkt.data(), l2, 0));
  gro_call_receive(ctx, Key::Ethertype, ctx.protocol);  // G-3, G-6
}

int gro_link_complete(GroContext& ctx, GroLink link) noexcept {
  core::Packet& p = ctx.cp->pkt;
  const std::uint16_t type = link_protocol(p.data(), link);
  p.protocol = type;
  if (link == GroLink::Ethernet) p.set_mac_header(0);
  return gro_call_complete(ctx, Key::Ethertype, type, std::uint32_t(link_hlen(link)));
}

}  // namespace ofld::offload
