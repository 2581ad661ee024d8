// What the encapsulations of IP packets (GUE, GRE/ip6gre) share: the transmit check of a TUN
// packet, the source check of ip_tunnel_lookup, and finishing a CHECKSUM_PARTIAL segment.
#pragma once

#include <span>

#include "ofld/core/packet.hpp"
#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/wire/ip.hpp"

namespace ofld::tunnel::detail {

/// IP version of a raw IP packet (the first header's version nibble; RFC 791 / RFC 8200).
inline unsigned ip_version(std::span<const std::uint8_t> p) { return p.empty() ? 0 : p[0] >> 4; }

/// A TUN packet long enough for an IPv4 header whose version is 4 or 6 (else TxNotIp).
inline bool is_ip(std::span<const std::uint8_t> p) {
  return p.size() >= wire::ipv4::kMinLen && (ip_version(p) == 4 || ip_version(p) == 6);
}

/// " local A remote B": the ends of a point-to-point tunnel for the log line.
inline std::string describe_ends(const IpAddr& local, const IpAddr& remote) {
  return " local " + local.to_string() + " remote " + remote.to_string();
}

}  // namespace ofld::tunnel::detail
