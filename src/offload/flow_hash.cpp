// The GRO flow hash (gro_flow_hash, ofld/offload/gro_context.hpp): the device RSS hash
// analogue the engine buckets flows by.
#include "flow_hash.hpp"
#include "gro_rules.hpp"

#include "ofld/offload/gro_context.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload {

std::uint32_t gro_flow_hash(std::span<const std::uint8_t> f, GroLink link,
                            std::uint64_t key) noexcept {
  using namespace flowhash;
  namespace et = wire::ethertype;
  namespace ip = wire::ipproto;
  std::size_t off = 0;
  std::uint16_t type;
  if (link == GroLink::Ethernet) {
    if (f.size() < wire::eth::kHdrLen) return fold(seed(key, 0, 0));
    type = wire::EthernetHeader<const std::uint8_t>::unchecked(f.data()).ethertype();
    off = wire::eth::kHdrLen;
  } else {
    if (f.empty()) return fold(seed(key, 0, 0));
    type = wire::ip_version(f.data()) == 6 ? et::kIpv6 : et::kIpv4;
  }
  std::uint64_t h;
  std::uint8_t proto = 0;
  std::size_t l4 = 0;
  if (type == et::kIpv4 && f.size() >= off + wire::ipv4::kMinLen) {
    const auto iph = wire::Ipv4Header<const std::uint8_t>::unchecked(f.data() + off);
    proto = iph.protocol();
    // both addresses in one word
    h = ipv4_addrs(seed(key, type, proto), f.data() + off + wire::ipv4::kSaddrOffset);
    if (!iph.is_fragment()) l4 = off + std::size_t(iph.ihl()) * 4;
  } else if (type == et::kIpv6 && f.size() >= off + wire::ipv6::kHdrLen) {
    const auto iph = wire::Ipv6Header<const std::uint8_t>::unchecked(f.data() + off);
    proto = iph.next_header();
    h = ipv6_addrs(seed(key, type, proto), f.data() + off + wire::ipv6::kSaddrOffset);
    l4 = off + wire::ipv6::kHdrLen;
  } else {
    return fold(seed(key, type, 0));
  }
  // the ports: the first word of TCP and UDP alike
  if (l4 && (proto == ip::kTcp || proto == ip::kUdp) && f.size() >= l4 + 4) h = ports(h, f.data() + l4);
  return fold(h);
}

}  // namespace ofld::offload
