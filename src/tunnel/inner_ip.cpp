// Inner IP length checks on decapsulation (see inner_ip.hpp).
#include "ofld/tunnel/inner_ip.hpp"

#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::tunnel {

InnerIpCheck check_inner_ip(std::span<const std::uint8_t> l3, std::uint16_t ethertype) noexcept {
  using V = InnerIpVerdict;
  if (ethertype == wire::ethertype::kIpv4) {
    auto h = wire::Ipv4Header<>::parse(l3);
    if (!h) {
      const auto e = h.error().code;
      // Truncated: pskb_inet_may_pull; HeaderPastEnd: pskb_may_pull(ihl * 4).
      return {e == wire::Errc::Truncated || e == wire::Errc::HeaderPastEnd ? V::TooSmall : V::HdrError, 0};
    }
    const std::size_t tot = h.value().total_len();
    if (tot > l3.size()) return {V::TooSmall, 0};              // PKT_TOO_SMALL
    if (tot < std::size_t(h.value().ihl()) * 4) return {V::HdrError, 0};  // IP_INHDR
    return {V::Ok, tot};
  }
  if (ethertype == wire::ethertype::kIpv6) {
    auto h = wire::Ipv6Header<>::parse(l3);
    if (!h) return {h.error().code == wire::Errc::Truncated ? V::TooSmall : V::HdrError, 0};
    const std::size_t plen = h.value().payload_len();
    // ip6_rcv_core: payload_len 0 with a hop-by-hop header is a jumbogram (RFC 2675); the
    // length check is then the option's (not done here: such a frame passes whole).
    if (plen == 0 && h.value().next_header() == wire::ipproto::kHopOpts) return {V::Ok, l3.size()};
    if (plen + wire::Ipv6Header<>::kLen > l3.size()) return {V::TooSmall, 0};
    return {V::Ok, plen + wire::Ipv6Header<>::kLen};
  }
  return {V::Ok, l3.size()};
}

InnerIpCheck check_inner_frame(std::span<const std::uint8_t> frame) noexcept {
  auto eth = wire::EthernetHeader<>::parse(frame);
  if (!eth) return {InnerIpVerdict::Ok, frame.size()};
  std::uint16_t type = eth.value().ethertype();
  std::size_t off = wire::EthernetHeader<>::kLen;
  for (int tags = 0; tags < 2 && wire::is_vlan_tpid(type); ++tags) {
    auto tag = wire::VlanTag<>::parse(frame.subspan(off));
    if (!tag) return {InnerIpVerdict::Ok, frame.size()};
    type = tag.value().ethertype();
    off += wire::VlanTag<>::kLen;
  }
  InnerIpCheck c = check_inner_ip(frame.subspan(off), type);
  if (c.verdict == InnerIpVerdict::Ok) c.len += off;
  return c;
}

}  // namespace ofld::tunnel

namespace ofld::tunnel {

std::optional<SeedAt> seed_partial_ip(std::span<const std::uint8_t> ipb) noexcept {
  namespace ipp = wire::ipproto;
  using Ip4 = wire::Ipv4Header<>;
  using Ip6 = wire::Ipv6Header<>;
  if (ipb.empty()) return std::nullopt;
  std::size_t l4 = 0, end = 0;  // from the IP header
  std::uint8_t proto = 0;
  csum::wsum pseudo_part = 0;  // addresses only
  const unsigned ver = wire::ip_version(ipb);
  if (ver == 4) {
    auto p = Ip4::parse(ipb);
    if (!p.ok()) return std::nullopt;
    const Ip4 ip = p.value();
    const std::size_t hl = ip.header().size(), tot = ip.total_len();
    if (tot < hl || tot > ipb.size() || ip.is_fragment()) return std::nullopt;
    proto = ip.protocol();
    l4 = hl;
    end = tot;
    pseudo_part = csum::csum_partial(ipb.data() + Ip4::kSaddrOffset, 8, 0);  // saddr, daddr
  } else if (ver == 6) {
    auto p = Ip6::parse(ipb);
    if (!p.ok()) return std::nullopt;
    const Ip6 ip = p.value();
    end = Ip6::kLen + ip.payload_len();
    if (ip.payload_len() == 0 || end > ipb.size()) return std::nullopt;  // jumbogram / cut short
    proto = ip.next_header();
    l4 = Ip6::kLen;
    for (int n = 0; n < 8 && (proto == ipp::kHopOpts || proto == ipp::kDstOpts ||
                              proto == ipp::kRouting); ++n) {
      auto x = wire::Ipv6ExtHeader<>::parse(ipb.subspan(l4, end - l4));
      if (!x.ok()) return std::nullopt;
      if (proto == ipp::kRouting && x.value().segments_left() != 0) return std::nullopt;
      proto = x.value().next_header();
      l4 += x.value().header().size();
    }
    pseudo_part = csum::csum_partial(ipb.data() + 8, 32, 0);  // saddr, daddr
  } else {
    return std::nullopt;
  }
  const auto l4b = ipb.subspan(l4, end - l4);
  std::uint16_t off = 0, field = 0;
  if (proto == ipp::kTcp) {
    auto th = wire::TcpHeader<>::parse(l4b);
    if (!th.ok()) return std::nullopt;
    off = wire::TcpHeader<>::kCheckOffset;
    field = th.value().check();
  } else if (proto == ipp::kUdp) {
    auto uh = wire::UdpHeader<>::parse(l4b);
    if (!uh.ok() || uh.value().len() != l4b.size()) return std::nullopt;
    off = wire::UdpHeader<>::kCheckOffset;
    field = uh.value().check();
    if (field == 0) return std::nullopt;  // "no checksum" (RFC 768)
  } else {
    return std::nullopt;
  }
  // csum_tcpudp_nofold / csum_ipv6_nofold: addresses + protocol + L4 length.
  const std::uint32_t len = std::uint32_t(l4b.size());
  const std::uint8_t tail[8] = {std::uint8_t(len >> 24), std::uint8_t(len >> 16),
                                std::uint8_t(len >> 8), std::uint8_t(len), 0, 0, 0, proto};
  const csum::wsum ps = csum::csum_partial(tail, 8, pseudo_part);
  if (field != csum::csum_fold16(ps)) return std::nullopt;
  return SeedAt{l4, off};
}

}  // namespace ofld::tunnel
