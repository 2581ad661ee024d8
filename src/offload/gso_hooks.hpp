// Private declarations of the protocol segment hooks (src/offload/*_segment.cpp), listed in
// the protocol table (protocols.cpp). Each mirrors one kernel .gso_segment callback; see the
// spec rule named in each file.
#pragma once

#include <cstdint>

#include "ofld/core/features.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/core/skb_segment.hpp"
#include "ofld/offload/gso_context.hpp"
#include "ofld/offload/registry.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::gso_hooks {

int eth_segment(GsoContext& ctx);   // skb_mac_gso_segment's Ethernet/VLAN walk
int ipv4_segment(GsoContext& ctx);  // inet_gso_segment (X-23..X-25)
int ipv6_segment(GsoContext& ctx);  // ipv6_gso_segment
int tcp_segment(GsoContext& ctx);   // tcp4/tcp6_gso_segment + tcp_gso_segment (X-16..X-21)
int udp_segment(GsoContext& ctx);   // udp4/udp6 gso: tunnels or USO
int vxlan_segment(GsoContext& ctx); // VXLAN: inner Ethernet, then X-31
int gue_segment(GsoContext& ctx);   // GUE: inner IP protocol, then X-31
int geneve_segment(GsoContext& ctx); // Geneve: inner ethertype from the header, then X-31 (GN-6)
int gre_segment(GsoContext& ctx);   // gre_gso_segment
int ipip_segment(GsoContext& ctx);  // ipip / ip4ip6 gso: IPXIP4/6 check, then IPv4
int sit_segment(GsoContext& ctx);   // sit / ip6ip6 gso: IPXIP4/6 check, then IPv6

/// __skb_udp_tunnel_segment. data() at the outer UDP header. `inner_ether`: the
/// payload is an Ethernet frame (inner protocol TEB, MAC-level GSO); otherwise it is the IP
/// protocol skb->inner_ipproto (the protocol hook is called directly). `own_hlen`: UDP plus
/// this tunnel's header in bytes (VXLAN 16, GUE 8 + its header), the whole distance to the
/// inner headers for one tunnel level (NestedTunnel otherwise); < 0 for an unknown tunnel.
int udp_tunnel_segment(GsoContext& ctx, bool inner_ether, int own_hlen);
/// The same with an ethertype-typed inner (ENCAP_TYPE_ETHER with skb->inner_protocol, as
/// skb_udp_tunnel_segment): `inner_ethertype` 0x6558 (TEB) = an Ethernet frame, MAC-level
/// GSO; 0x0800 / 0x86DD = a bare IP packet right after the tunnel header, handed to that
/// ethertype's hook (Geneve with a protocol type other than TEB, GN-6).
int udp_tunnel_segment_ethertype(GsoContext& ctx, std::uint16_t inner_ethertype, int own_hlen);

/// The L3 hooks' call of the IP-protocol hook (inet_gso_segment / ipv6_gso_segment calling
/// ops->callbacks.gso_segment): ctx.l3_pos / l3_proto name this level's IP header at `nh`
/// during the call and are restored after it, as are the features (`saved_features`, the
/// level's features before the hook narrowed them for an encapsulated level).
inline int ip_level_gso_segment(GsoContext& ctx, core::pos_t nh, std::uint16_t l3_proto,
                                std::uint8_t proto, const core::Features& saved_features) {
  const core::pos_t saved_l3 = ctx.l3_pos;
  const std::uint16_t saved_l3p = ctx.l3_proto;
  ctx.l3_pos = nh;
  ctx.l3_proto = l3_proto;
  const int rc = ipproto_gso_segment(ctx, proto);
  ctx.l3_pos = saved_l3;
  ctx.l3_proto = saved_l3p;
  ctx.features = saved_features;
  return rc;
}

/// True when a plain (non-GSO) segment's length field at this level would not fit 16 bits:
/// len − nhoff − fixed > 65535 (IPv4 tot_len: fixed 0; IPv6 payload_len: fixed 40). The first
/// segment is the longest; fraglist members and GSO-partial outputs may differ, so all are
/// looked at unless the segments come from skb_segment's fast loop (seg_fast: the first is
/// the longest, and none is GSO).
inline bool length_overflows(const GsoContext& ctx, int nhoff, std::size_t fixed) noexcept {
  if (ctx.batch_used) return ctx.batch->len(0) > std::size_t(nhoff) + fixed + 65535;
  if (ctx.seg_fast && !ctx.gso_partial)
    return !ctx.out.empty() && ctx.out.front().len() > std::size_t(nhoff) + fixed + 65535;
  for (const auto& s : ctx.segs)
    if (!s.pkt.is_gso() && s.pkt.len() > std::size_t(nhoff) + fixed + 65535) return true;
  return false;
}

/// The segments of skb_segment's fast loop (ctx.seg_fast, not GSO-partial outputs) in either
/// form it builds them: packets in ctx.out (Slab false), or the header slab of ctx.batch
/// (ctx.batch_used, Slab true), where one metadata template stands for every segment.
/// The hooks' rewrite loops are written once over this and instantiated for both.
template <bool Slab>
struct FastSegs {
  core::GsoSeg* segs;   ///< packet form
  std::uint8_t* slab;   ///< slab form: segment i's first byte at slab + i * stride
  std::size_t stride;
  std::size_t n;
  explicit FastSegs(GsoContext& ctx) noexcept
      : segs(Slab ? nullptr : ctx.segs.data()),
        slab(Slab ? core::detail::SlabBuilder::slab(*ctx.batch) : nullptr),
        stride(Slab ? ctx.batch->header_len() : 0),
        n(Slab ? ctx.batch->size() : ctx.segs.size()) {}
  /// Segment i's first byte (its headers follow).
  [[gnu::always_inline]] std::uint8_t* head(std::size_t i) const noexcept {
    if constexpr (Slab) return slab + i * stride;
    else return segs[i].pkt.data();
  }
};
/// Bytes in fast-loop segment i (either form).
inline std::size_t fast_seg_len(const GsoContext& ctx, std::size_t i) noexcept {
  return ctx.batch_used ? ctx.batch->len(i) : ctx.out[i].len();
}

}  // namespace ofld::offload::gso_hooks
