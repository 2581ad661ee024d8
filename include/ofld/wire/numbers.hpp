// ofld/wire/numbers.hpp — well-known numbers: ethertypes, IP protocol numbers, UDP ports.
//
// The one home of these constants: other layers name them instead of typing
// literals. Values are host-order numbers; store them with wire::store_be16 / compare with
// wire::load_be16. The kernel's name of each constant is given beside it (ETH_P_* from
// include/uapi/linux/if_ether.h, IPPROTO_* from include/uapi/linux/in.h / in6.h); the macros
// themselves are not used so that this header never clashes with the system headers.
// No dependencies: cheap to include from any layer.
#pragma once

#include <cstdint>

namespace ofld::wire {

/// Ethertypes (IEEE 802 numbers, IANA "ieee-802-numbers" registry).
namespace ethertype {
inline constexpr std::uint16_t kIpv4 = 0x0800;      ///< ETH_P_IP
inline constexpr std::uint16_t kArp = 0x0806;       ///< ETH_P_ARP
inline constexpr std::uint16_t kVlan = 0x8100;      ///< ETH_P_8021Q (802.1Q C-tag TPID)
inline constexpr std::uint16_t kQinQ = 0x88A8;      ///< ETH_P_8021AD (802.1ad S-tag TPID)
inline constexpr std::uint16_t kQinQ9100 = 0x9100;  ///< ETH_P_QINQ1 (pre-standard QinQ)
inline constexpr std::uint16_t kIpv6 = 0x86DD;      ///< ETH_P_IPV6
inline constexpr std::uint16_t kTeb = 0x6558;       ///< ETH_P_TEB (transparent Ethernet bridging)
inline constexpr std::uint16_t kErspanII = 0x88BE;  ///< ETH_P_ERSPAN (ERSPAN type I/II)
inline constexpr std::uint16_t kErspanIII = 0x22EB; ///< ETH_P_ERSPAN2 (ERSPAN type III)
inline constexpr std::uint16_t kMpls = 0x8847;      ///< ETH_P_MPLS_UC
inline constexpr std::uint16_t kAll = 0x0003;       ///< ETH_P_ALL (packet sockets only)
/// Smallest value that is an ethertype (IEEE 802.3 §3.2.6: below it, a length).
inline constexpr std::uint16_t kMin = 0x0600;       ///< ETH_P_802_3_MIN
}  // namespace ethertype

/// IP protocol / IPv6 next-header numbers (IANA "protocol-numbers").
namespace ipproto {
inline constexpr std::uint8_t kHopOpts = 0;    ///< IPPROTO_HOPOPTS (RFC 8200 §4.3)
inline constexpr std::uint8_t kIcmp = 1;       ///< IPPROTO_ICMP
inline constexpr std::uint8_t kIpip = 4;       ///< IPPROTO_IPIP (IPv4 in IP)
inline constexpr std::uint8_t kTcp = 6;        ///< IPPROTO_TCP
inline constexpr std::uint8_t kUdp = 17;       ///< IPPROTO_UDP
inline constexpr std::uint8_t kIpv6 = 41;      ///< IPPROTO_IPV6 (IPv6 in IP, SIT)
inline constexpr std::uint8_t kRouting = 43;   ///< IPPROTO_ROUTING (RFC 8200 §4.4)
inline constexpr std::uint8_t kFragment = 44;  ///< IPPROTO_FRAGMENT (RFC 8200 §4.5)
inline constexpr std::uint8_t kGre = 47;       ///< IPPROTO_GRE
inline constexpr std::uint8_t kEsp = 50;       ///< IPPROTO_ESP
inline constexpr std::uint8_t kAh = 51;        ///< IPPROTO_AH (RFC 4302)
inline constexpr std::uint8_t kIcmpv6 = 58;    ///< IPPROTO_ICMPV6
inline constexpr std::uint8_t kNone = 59;      ///< IPPROTO_NONE (no next header)
inline constexpr std::uint8_t kDstOpts = 60;   ///< IPPROTO_DSTOPTS (RFC 8200 §4.6)
inline constexpr std::uint8_t kUdpLite = 136;  ///< IPPROTO_UDPLITE
}  // namespace ipproto

/// UDP destination ports of the tunnels (host order).
namespace udpport {
inline constexpr std::uint16_t kVxlan = 4789;       ///< IANA VXLAN (RFC 7348 §5)
inline constexpr std::uint16_t kVxlanLinux = 8472;  ///< Linux's legacy VXLAN default
inline constexpr std::uint16_t kVxlanGpe = 4790;    ///< VXLAN-GPE
inline constexpr std::uint16_t kGeneve = 6081;      ///< IANA Geneve (RFC 8926 §3.3)
inline constexpr std::uint16_t kGreInUdp = 4754;    ///< IANA GRE-in-UDP (RFC 8086 §3)
/// GUE/FOU have no IANA port and Linux no default (`ip fou add port N gue`). ofld's
/// registries use the ports of the kernel/iproute2 examples: 6080 and 5555.
inline constexpr std::uint16_t kGue = 6080;
inline constexpr std::uint16_t kGueAlt = 5555;
}  // namespace udpport

}  // namespace ofld::wire
