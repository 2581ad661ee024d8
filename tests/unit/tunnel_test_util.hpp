// Helpers for the tunnel tests. Frames come from the one test frame builder
// (tests/common/frame_builder.hpp, preset fb::tunnel); checks below use the csum library
// (tested against the kernel and public captures elsewhere).
#pragma once

#include <cstdint>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "../common/frame_builder.hpp"

namespace tunnel_test {

inline void put16(std::vector<std::uint8_t>& f, std::size_t at, std::uint16_t v) {
  f[at] = std::uint8_t(v >> 8);
  f[at + 1] = std::uint8_t(v);
}
inline std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

using ofld::fb::tunnel::tcp_frame;

/// VXLAN id 42 from 10.0.0.1 (fd00::1 when v6) to the one remote 10.0.0.2 (fd00::2), every
/// other setting at its default.
inline ofld::tunnel::VxlanConfig vxlan_cfg(bool v6 = false) {
  ofld::tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = *ofld::tunnel::IpAddr::parse(v6 ? "fd00::1" : "10.0.0.1");
  c.remotes = {*ofld::tunnel::IpAddr::parse(v6 ? "fd00::2" : "10.0.0.2")};
  return c;
}

/// True when the TCP checksum of an Ethernet/IPv4-or-IPv6/TCP frame verifies (RFC 793 §3.1).
inline bool tcp_csum_ok(const std::uint8_t* f, std::size_t n) {
  bool v6 = get16(f + 12) == 0x86DD;
  const std::uint8_t* ip = f + 14;
  std::size_t l3 = v6 ? 40 : std::size_t(ip[0] & 0xf) * 4;
  std::uint32_t l4 = v6 ? get16(ip + 4) : std::uint32_t(get16(ip + 2) - l3);
  if (14 + l3 + l4 > n) return false;
  auto s = ofld::csum::csum_partial(ip + l3, l4, 0);
  return (v6 ? ofld::csum::csum_ipv6_magic(ip + 8, ip + 24, l4, 6, s)
             : ofld::csum::csum_tcpudp_magic(ip + 12, ip + 16, l4, 6, s)) == 0;
}

/// The pseudo-header seed (C-12: folded, not complemented) an IPv4/IPv6 TCP segment with
/// `l4` bytes of TCP header + payload carries in CHECKSUM_PARTIAL.
inline std::uint16_t tcp_seed(const std::uint8_t* f, std::uint32_t l4) {
  bool v6 = get16(f + 12) == 0x86DD;
  const std::uint8_t* ip = f + 14;
  return ofld::csum::csum_fold16(v6 ? ofld::csum::csum_ipv6_nofold(ip + 8, ip + 24, l4, 6, 0)
                                    : ofld::csum::csum_tcpudp_nofold(ip + 12, ip + 16, l4, 6, 0));
}

}  // namespace tunnel_test
