// Frame builders for the tunnel tests. Header layouts from RFC 791 / RFC 8200 / RFC 793;
// checksums from the csum library (tested against the kernel and public captures elsewhere).
#pragma once

#include <cstdint>
#include <vector>

#include "ofld/core/csum.hpp"

namespace old_tunnel_test {

inline void put16(std::vector<std::uint8_t>& f, std::size_t at, std::uint16_t v) {
  f[at] = std::uint8_t(v >> 8);
  f[at + 1] = std::uint8_t(v);
}
inline std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

/// Ethernet (02:..:02 ← 02:..:01) + IPv4 (192.168.1.1 → .2, DF, TTL 64) or IPv6 (fd00::1 → ::2)
/// + TCP (40000 → 5201, ACK|PSH, doff 5) + `len` payload bytes (i*7+3).
/// `seed` true: TCP field holds the pseudo-header seed (CHECKSUM_PARTIAL convention, C-6);
/// false: a complete, valid checksum.
inline std::vector<std::uint8_t> tcp_frame(std::size_t len, bool v6 = false, bool seed = false,
                                           std::uint32_t seq = 1000,
                                           std::uint8_t src_last = 1) {
  std::size_t l3 = v6 ? 40 : 20;
  std::vector<std::uint8_t> f(14 + l3 + 20 + len, 0);
  for (int i = 0; i < 6; ++i) f[i] = i == 0 ? 0x02 : 0, f[6 + i] = i == 0 ? 0x02 : 0;
  f[5] = 0x02;
  f[11] = src_last;
  put16(f, 12, v6 ? 0x86DD : 0x0800);
  std::uint8_t* ip = f.data() + 14;
  std::uint8_t *sa, *da;
  if (!v6) {
    ip[0] = 0x45;
    put16(f, 14 + 2, std::uint16_t(20 + 20 + len));
    put16(f, 14 + 4, 0x1234);
    put16(f, 14 + 6, 0x4000);
    ip[8] = 64;
    ip[9] = 6;
    std::uint8_t a[4] = {192, 168, 1, 1}, b[4] = {192, 168, 1, 2};
    std::copy(a, a + 4, ip + 12);
    std::copy(b, b + 4, ip + 16);
    put16(f, 14 + 10, ofld::csum::ip_compute_csum(ip, 20));
    sa = ip + 12;
    da = ip + 16;
  } else {
    ip[0] = 0x60;
    put16(f, 14 + 4, std::uint16_t(20 + len));
    ip[6] = 6;
    ip[7] = 64;
    ip[8] = 0xfd, ip[23] = 1;
    ip[24] = 0xfd, ip[39] = 2;
    sa = ip + 8;
    da = ip + 24;
  }
  std::size_t t = 14 + l3;
  put16(f, t, 40000);
  put16(f, t + 2, 5201);
  f[t + 4] = std::uint8_t(seq >> 24), f[t + 5] = std::uint8_t(seq >> 16);
  f[t + 6] = std::uint8_t(seq >> 8), f[t + 7] = std::uint8_t(seq);
  f[t + 11] = 1;  // ack 1
  f[t + 12] = 0x50;
  f[t + 13] = 0x18;
  put16(f, t + 14, 0xffff);
  for (std::size_t i = 0; i < len; ++i) f[t + 20 + i] = std::uint8_t(i * 7 + 3);
  std::uint32_t l4 = std::uint32_t(20 + len);
  ofld::csum::wsum ph = v6 ? ofld::csum::csum_ipv6_nofold(sa, da, l4, 6, 0)
                           : ofld::csum::csum_tcpudp_nofold(sa, da, l4, 6, 0);
  if (seed) {
    put16(f, t + 16, ofld::csum::csum_fold16(ph));
  } else {
    put16(f, t + 16, ofld::csum::csum_fold(ofld::csum::csum_partial(f.data() + t, l4, ph)));
  }
  return f;
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

}  // namespace old_tunnel_test
