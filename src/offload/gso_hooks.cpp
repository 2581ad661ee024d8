// The GSO side of the offload registry: one line per protocol module (docs/ARCHITECTURE.md:
// offload).
#include "gso_hooks.hpp"

#include "ofld/offload/registry.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload::detail {

void register_gso_hooks(Registry& r) {
  using namespace gso_hooks;
  namespace et = wire::ethertype;
  namespace ip = wire::ipproto;
  r.add(Key::Ethertype, et::kTeb, {"eth", eth_segment});
  r.add(Key::Ethertype, et::kIpv4, {"ipv4", ipv4_segment});
  r.add(Key::Ethertype, et::kIpv6, {"ipv6", ipv6_segment});
  // IP-in-IP: IPIP / IP4IP6 and SIT / IP6IP6; also the IP-protocol inner of GUE/FOU.
  r.add(Key::IpProto, ip::kIpip, {"ipip", ipip_segment});
  r.add(Key::IpProto, ip::kIpv6, {"sit", sit_segment});
  r.add(Key::IpProto, ip::kTcp, {"tcp", tcp_segment});
  r.add(Key::IpProto, ip::kUdp, {"udp", udp_segment});
  r.add(Key::IpProto, ip::kGre, {"gre", gre_segment});
  r.add(Key::UdpPort, wire::udpport::kVxlan, {"vxlan", vxlan_segment});
  r.add(Key::UdpPort, wire::udpport::kVxlanLinux, {"vxlan", vxlan_segment});
  // GUE has no IANA port; these are the ports Linux's ip-fou(8) and docs use as examples.
  r.add(Key::UdpPort, 5555, {"gue", gue_segment});
  r.add(Key::UdpPort, 6080, {"gue", gue_segment});
}

}  // namespace ofld::offload::detail

namespace ofld::offload::detail {
// Referenced from the GSO engine so that a static link pulls this object (and with it the
// strong register_gso_hooks above, which overrides registry.cpp's weak default).
void gso_hooks_anchor() {}
}  // namespace ofld::offload::detail
