// Inner IP length checks on decapsulation (see inner_ip.hpp).
#include "ofld/tunnel/inner_ip.hpp"

#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
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
