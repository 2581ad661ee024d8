// The built-in protocol table (docs/ARCHITECTURE.md: offload): the one list of the protocols
// ofld offloads, each with its three hooks, from which the engines' Registry is built.
//
// One row per (key, number). Both engines use the same rows, so a protocol that segments
// also aggregates on the same numbers. UDP tunnels are keyed by their ports: the GSO engine
// finds a tunnel's hook from the outer destination port (a port not listed takes the generic
// UDP-tunnel path, as the kernel's skb_udp_tunnel_segment, which knows no ports); the GRO
// engine from the receiving socket's configuration (GroUdpTunnel::registry_port, as the
// kernel's udp_tunnel_sock), so any configured port maps onto one of these rows.
#include "gro_protos.hpp"
#include "gso_hooks.hpp"
#include "ofld/offload/registry.hpp"
#include "ofld/wire/layout.hpp"

namespace ofld::offload {

namespace {

namespace et = wire::ethertype;
namespace ip = wire::ipproto;
namespace port = wire::udpport;
namespace s = gso_hooks;
namespace g = gro_hooks;

// GUE has no IANA port and Linux no default: its ports are configured per fou socket
// (`ip fou add port N gue`). These two are the ports of the kernel's and iproute2's examples.
// They are wire::udpport::kGue and kGueAlt.

constexpr ProtocolEntry kBuiltin[] = {
    // L3 and Ethernet (packet_offload: net/ipv4/af_inet.c, net/ipv6/ip6_offload.c,
    // net/ethernet/eth.c for TEB).
    {Key::Ethertype, et::kIpv4,
     {"ipv4", s::ipv4_segment, g::inet_gro_receive, g::inet_gro_complete}},
    {Key::Ethertype, et::kIpv6,
     {"ipv6", s::ipv6_segment, g::ipv6_gro_receive, g::ipv6_gro_complete}},
    {Key::Ethertype, et::kTeb,
     {"eth", s::eth_segment, g::eth_gro_receive, g::eth_gro_complete}},
    // IP protocols (inet_offloads / inet6_offloads). IP-in-IP: IPIP / IP4IP6 and
    // SIT / IP6IP6; also the IP-protocol inner of GUE.
    {Key::IpProto, ip::kTcp,
     {"tcp", s::tcp_segment, g::tcp_gro_receive, g::tcp_gro_complete}},
    {Key::IpProto, ip::kUdp,
     {"udp", s::udp_segment, g::udp_gro_receive, g::udp_gro_complete}},
    {Key::IpProto, ip::kGre,
     {"gre", s::gre_segment, g::gre_gro_receive, g::gre_gro_complete}},
    {Key::IpProto, ip::kIpip,
     {"ipip", s::ipip_segment, g::ipip_gro_receive, g::ipip_gro_complete}},
    {Key::IpProto, ip::kIpv6,
     {"sit", s::sit_segment, g::sit_gro_receive, g::sit_gro_complete}},
    // UDP tunnels: VXLAN on the IANA port (RFC 7348 §5) and the Linux driver's default.
    {Key::UdpPort, port::kVxlan,
     {"vxlan", s::vxlan_segment, g::vxlan_gro_receive, g::vxlan_gro_complete}},
    {Key::UdpPort, port::kVxlanLinux,
     {"vxlan", s::vxlan_segment, g::vxlan_gro_receive, g::vxlan_gro_complete}},
    // Geneve on the IANA port (RFC 8926 §3.3), the Linux driver's default (docs/geneve.md).
    {Key::UdpPort, port::kGeneve,
     {"geneve", s::geneve_segment, g::geneve_gro_receive, g::geneve_gro_complete}},
    // GUE (see the ports' comment above).
    {Key::UdpPort, port::kGue,
     {"gue", s::gue_segment, g::gue_gro_receive, g::gue_gro_complete}},
    {Key::UdpPort, port::kGueAlt,
     {"gue", s::gue_segment, g::gue_gro_receive, g::gue_gro_complete}},
};

}  // namespace

std::span<const ProtocolEntry> builtin_protocols() noexcept { return kBuiltin; }

}  // namespace ofld::offload
