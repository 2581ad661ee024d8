// Private: the GRO hooks of each protocol module (src/offload/*_gro.cpp), listed in the
// protocol table (protocols.cpp). Byte-order loads are wire/bytes.hpp's.
#pragma once

#include <cstdint>

#include "ofld/offload/gro_context.hpp"
#include "ofld/wire/numbers.hpp"

namespace ofld::offload {

/// Registry UdpPort number under which the GUE hooks are found (a GroUdpTunnel maps any
/// local port to it, as the kernel's fou socket carries its own gro hooks). 6080 is the port
/// the kernel's FOU/GUE examples use; protocols.cpp lists GUE on it (and on 5555).
inline constexpr std::uint16_t kGueRegistryPort = wire::udpport::kGue;

namespace gro_hooks {
void eth_gro_receive(GroContext& ctx);
int eth_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void inet_gro_receive(GroContext& ctx);
int inet_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void ipip_gro_receive(GroContext& ctx);
int ipip_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void ipv6_gro_receive(GroContext& ctx);
int ipv6_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void sit_gro_receive(GroContext& ctx);
int sit_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void tcp_gro_receive(GroContext& ctx);
int tcp_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void udp_gro_receive(GroContext& ctx);
int udp_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void gre_gro_receive(GroContext& ctx);
int gre_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void vxlan_gro_receive(GroContext& ctx);
int vxlan_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void gue_gro_receive(GroContext& ctx);
int gue_gro_complete(GroContext& ctx, std::uint32_t nhoff);
void geneve_gro_receive(GroContext& ctx);
int geneve_gro_complete(GroContext& ctx, std::uint32_t nhoff);
}  // namespace gro_hooks

}  // namespace ofld::offload
