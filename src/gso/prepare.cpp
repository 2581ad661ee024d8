// prepare_frame: turn a captured or synthesised frame into the packet the kernel stack would
// hand to GSO (metadata of tcp_v4_send_check / udp_set_csum / vxlan_build_skb /
// gre_build_header / fou_build_header: offsets, gso_type, seeds).
#include <algorithm>

#include "ofld/gso/gso.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::gso {

using core::Packet;
namespace sg = core::skb_gso;

namespace {

Prepared pass(std::span<const std::uint8_t> frame, std::string why) {
  Prepared r;
  r.pkt = Packet::from_bytes(frame);
  r.status = PrepareStatus::PassThrough;
  r.why = std::move(why);
  return r;
}

}  // namespace

Prepared prepare_frame(std::span<const std::uint8_t> frame, const wire::Layout& l,
                       const PrepareOptions& opt) {
  using wire::HeaderKind;
  const wire::HeaderRef* l4 = l.inner_l4();
  if (!l4 || (l4->kind != HeaderKind::Tcp && l4->kind != HeaderKind::Udp))
    return pass(frame, "no TCP/UDP");
  const wire::HeaderRef* ip = l.ip_of(*l4);
  if (!ip) return pass(frame, "no IP header");
  if (l.frag != wire::FragStatus::None && l.frag != wire::FragStatus::Atomic)
    return pass(frame, "IP fragment");
  // Outermost IP datagram end: Ethernet padding / trailers are not part of the packet.
  std::uint32_t end = std::uint32_t(frame.size());
  for (const auto& h : l.headers()) {
    if (h.kind == HeaderKind::Ipv4 || h.kind == HeaderKind::Ipv6) {
      end = std::min(end, h.end);
      break;
    }
  }
  if (l4->end > end || l4->header_end() > end) return pass(frame, "L4 beyond datagram");
  const bool tcp = l4->kind == HeaderKind::Tcp;
  const std::uint32_t l4len = l4->end - l4->offset;
  const std::uint32_t payload = l4->end - l4->header_end();

  // Tunnels the engine segments: one level of VXLAN, Geneve, GUE, GRE or IP-in-IP (IPIP/SIT,
  // IP4IP6/IP6IP6). Any other tunnel is passed through under a reason naming it — when the
  // frame would have needed segmenting (oversize); otherwise it simply fits.
  const bool tunnel = l.encapsulation;
  const bool ipxip = l.tunnel == wire::TunnelKind::Ipip || l.tunnel == wire::TunnelKind::Sit;
  if (tunnel && (l.tunnel_depth != 1 || (l.tunnel != wire::TunnelKind::Vxlan &&
                                        l.tunnel != wire::TunnelKind::Geneve &&
                                        l.tunnel != wire::TunnelKind::Gue &&
                                        l.tunnel != wire::TunnelKind::Gre && !ipxip))) {
    if (opt.gso_size == 0 || payload <= opt.gso_size) return pass(frame, "payload fits in one segment");
    Prepared r = pass(frame, l.tunnel_depth != 1 ? "nested tunnels (not supported)"
                                                 : std::string(wire::to_string(l.tunnel)) +
                                                       " (not supported)");
    r.oversize = true;
    return r;
  }

  Prepared r;
  r.pkt = opt.frag_size ? Packet::from_bytes_frags(frame.first(end), l4->header_end(), opt.frag_size)
                        : Packet::from_bytes(frame.first(end));
  Packet& p = r.pkt;
  p.network_header = core::pos_t(l.network_header);
  p.mac_header = l.mac_header == wire::kNoOffset ? p.network_header : core::pos_t(l.mac_header);
  p.protocol = l.protocol;
  const wire::HeaderRef* oip = nullptr;
  for (const auto& h : l.headers())
    if (h.kind == HeaderKind::Ipv4 || h.kind == HeaderKind::Ipv6) { oip = &h; break; }
  p.transport_header = core::pos_t(l.transport_header);

  std::uint32_t type = 0;
  const std::uint8_t* b = p.data();
  if (tunnel) {
    p.encapsulation = true;
    p.inner_network_header = core::pos_t(l.inner_network_header);
    p.inner_transport_header = core::pos_t(l4->offset);
    p.inner_mac_header = l.inner_mac_header != wire::kNoOffset ? core::pos_t(l.inner_mac_header)
                                                               : p.inner_network_header;
    const std::uint32_t t4 = l.transport_header;
    // The IP-in-IP bit names the outer family; the kernel's ipip/sit/ip6tnl devices
    // set it before any FOU/GUE header is added (iptunnel_handle_offloads).
    const std::uint32_t ipxip_bit = (oip && oip->kind == HeaderKind::Ipv6) ? sg::IPXIP6 : sg::IPXIP4;
    if (ipxip) {
      p.inner_mac_header = p.inner_network_header;  // no inner link header
      p.transport_header = p.inner_network_header;  // inet_gso_segment: after the outer IP
      p.inner_protocol_type = core::InnerProtoType::IpProto;
      p.inner_ipproto = ip->kind == HeaderKind::Ipv4 ? wire::ipproto::kIpip : wire::ipproto::kIpv6;
      p.inner_protocol = ip->kind == HeaderKind::Ipv4 ? wire::ethertype::kIpv4
                                                      : wire::ethertype::kIpv6;
      type |= ipxip_bit;
    } else if (l.tunnel == wire::TunnelKind::Gre) {
      p.inner_protocol_type = core::InnerProtoType::Ether;
      p.inner_protocol = wire::load_be16(b + t4 + wire::gre::kProtoOffset);
      type |= (wire::load_be16(b + t4 + wire::gre::kFlagsOffset) & wire::gre::kCsum)
                  ? (sg::GRE | sg::GRE_CSUM)
                  : sg::GRE;
    } else {
      const bool udp_csum = wire::load_be16(b + t4 + wire::udp::kCheckOffset) != 0;
      type |= udp_csum ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL;
      if (l.tunnel == wire::TunnelKind::Vxlan) {
        p.inner_protocol_type = core::InnerProtoType::Ether;
        p.inner_protocol = wire::ethertype::kTeb;
        if (wire::load_be32(b + t4 + wire::udp::kHdrLen + wire::vxlan::kFlagsOffset) & wire::vxlan::kFlagRco)
          type |= sg::TUNNEL_REMCSUM;
      } else if (l.tunnel == wire::TunnelKind::Geneve) {
        // geneve_xmit_skb: inner protocol TEB, or the payload's ethertype (inner_proto_inherit).
        p.inner_protocol_type = core::InnerProtoType::Ether;
        p.inner_protocol = wire::load_be16(b + t4 + wire::udp::kHdrLen + 2);  // protocol type
      } else {
        p.inner_protocol_type = core::InnerProtoType::IpProto;
        p.inner_ipproto = ip->kind == HeaderKind::Ipv4 ? wire::ipproto::kIpip
                                                       : wire::ipproto::kIpv6;
        type |= ipxip_bit;
        p.inner_protocol = ip->kind == HeaderKind::Ipv4 ? wire::ethertype::kIpv4
                                                        : wire::ethertype::kIpv6;
      }
    }
  }
  if (tcp) {
    type |= ip->kind == HeaderKind::Ipv4 ? sg::TCPV4 : sg::TCPV6;
    if (b[l4->offset + wire::tcp::kFlagsOffset] & wire::tcp_flag::kCwr) type |= sg::TCP_ECN;
  } else {
    type |= sg::UDP_L4;
  }

  // The innermost L4 checksum: PARTIAL with the pseudo-header seed (C-12).
  const std::uint16_t coff = tcp ? wire::tcp::kCheckOffset : wire::udp::kCheckOffset;
  std::uint8_t* field = p.data() + l4->offset + coff;
  if (opt.input == InputCsum::Complete) {
    wire::store_be16(field, pseudo_seed(p, core::pos_t(ip->offset), l4len, tcp ? wire::ipproto::kTcp : wire::ipproto::kUdp));
  }
  p.csum = core::CsumPartial{core::pos_t(l4->offset), coff, false};
  // Outer UDP checksum of a tunnel with UDP_TUNNEL_CSUM: the stack stores the outer pseudo
  // seed for GSO packets (udp_set_csum GSO case, C-30).
  if ((type & sg::UDP_TUNNEL_CSUM) && opt.input == InputCsum::Complete && oip) {
    const std::uint32_t t4 = l.transport_header;
    const std::uint32_t ulen = end - t4;
    wire::store_be16(p.data() + t4 + wire::udp::kCheckOffset,
                     pseudo_seed(p, core::pos_t(oip->offset), ulen, wire::ipproto::kUdp));
  }
  if (opt.gso_size != 0 && payload > opt.gso_size) {
    p.gso.size = opt.gso_size;
    p.gso.type = type;
    r.status = PrepareStatus::Gso;
    return r;
  }
  // Not a GSO packet. With seed input the checksum must still be finished (Partial, no GSO).
  if (opt.input == InputCsum::Seeds) {
    r.status = PrepareStatus::Finish;  // tx_prepare finishes the checksum (checksum_help)
    r.why = "payload fits in one segment";
    return r;
  }
  return pass(frame, "payload fits in one segment");
}

}  // namespace ofld::gso
