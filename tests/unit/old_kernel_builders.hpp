// TEMPORARY copy of the frame builders of tests/kernel/oracle_test.cpp and
// tests/kernel/gso_kernel_test.cpp before they moved onto tests/common/frame_builder.hpp,
// for fb_equivalence_test.cpp. Deleted with it.
#pragma once
#include <array>
#include <cstdint>
#include <vector>
#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"
namespace old_kernel_builders {
using Bytes = std::vector<std::uint8_t>;
using Mac = std::array<std::uint8_t, 6>;
namespace wire = ofld::wire;
namespace csum = ofld::csum;
// ---- plain RFC 1071 arithmetic ------------------------------------------------------------
std::uint32_t sum16(const std::uint8_t* p, std::size_t n, std::uint32_t acc = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) acc += std::uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) acc += std::uint32_t(p[n - 1] << 8);
  return acc;
}
std::uint16_t fold(std::uint32_t acc) {
  while (acc >> 16) acc = (acc & 0xffff) + (acc >> 16);
  return std::uint16_t(acc);
}
std::uint16_t be16(const Bytes& b, std::size_t o) { return std::uint16_t(b[o] << 8 | b[o + 1]); }
std::uint32_t be32(const Bytes& b, std::size_t o) {
  return std::uint32_t(b[o]) << 24 | std::uint32_t(b[o + 1]) << 16 | std::uint32_t(b[o + 2]) << 8 | b[o + 3];
}
void put16(Bytes& b, std::size_t o, std::uint16_t v) {
  b[o] = std::uint8_t(v >> 8);
  b[o + 1] = std::uint8_t(v);
}
void put32(Bytes& b, std::size_t o, std::uint32_t v) {
  put16(b, o, std::uint16_t(v >> 16));
  put16(b, o + 2, std::uint16_t(v));
}
/// IPv4 pseudo-header sum (RFC 793 §3.1 / RFC 768): src, dst, zero+proto, L4 length.
std::uint32_t pseudo4(const Bytes& f, std::size_t ip, std::uint8_t proto, std::size_t l4len) {
  std::uint32_t acc = sum16(&f[ip + 12], 8);
  return acc + proto + std::uint32_t(l4len);
}
/// True if the IPv4 header at `ip` sums to 0xffff (RFC 791 header checksum valid).
bool ipv4_csum_ok(const Bytes& f, std::size_t ip) {
  return fold(sum16(&f[ip], std::size_t(f[ip] & 0xf) * 4)) == 0xffff;
}
/// True if the L4 segment at `l4` (through `end`) has a valid checksum over the pseudo header.
bool l4_csum_ok(const Bytes& f, std::size_t ip, std::size_t l4, std::size_t end, std::uint8_t proto) {
  return fold(sum16(&f[l4], end - l4, pseudo4(f, ip, proto, end - l4))) == 0xffff;
}

// ---- frame builders ------------------------------------------------------------------------
constexpr Mac kSrcMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x01};
constexpr Mac kDstMac{0x02, 0x00, 0x00, 0x00, 0x00, 0x02};

struct V4Spec {
  Mac dst = kDstMac, src = kSrcMac;
  std::uint8_t saddr[4] = {192, 168, 1, 200}, daddr[4] = {192, 168, 1, 100};
  std::uint16_t id = 0;
  bool df = true;
  std::uint8_t ttl = 64, tos = 0;
};

/// Ethernet + IPv4 (20) + L4 header bytes + payload of 'a'; IP header checksum filled.
Bytes build_v4(const V4Spec& s, std::uint8_t proto, const Bytes& l4hdr, std::size_t payload) {
  Bytes f(14 + 20 + l4hdr.size() + payload, 'a');
  std::copy(s.dst.begin(), s.dst.end(), f.begin());
  std::copy(s.src.begin(), s.src.end(), f.begin() + 6);
  put16(f, 12, 0x0800);
  f[14] = 0x45;
  f[15] = s.tos;
  put16(f, 16, std::uint16_t(20 + l4hdr.size() + payload));
  put16(f, 18, s.id);
  put16(f, 20, s.df ? 0x4000 : 0);
  f[22] = s.ttl;
  f[23] = proto;
  put16(f, 24, 0);
  std::copy(s.saddr, s.saddr + 4, f.begin() + 26);
  std::copy(s.daddr, s.daddr + 4, f.begin() + 30);
  put16(f, 24, std::uint16_t(~fold(sum16(&f[14], 20))));
  std::copy(l4hdr.begin(), l4hdr.end(), f.begin() + 34);
  return f;
}

constexpr std::uint8_t kFin = 0x01, kSyn = 0x02, kPsh = 0x08, kAck = 0x10, kCwr = 0x80;

Bytes tcp_hdr(std::uint16_t sport, std::uint16_t dport, std::uint32_t seq, std::uint32_t ack,
              std::uint8_t flags, std::uint16_t window) {
  Bytes t(20, 0);
  put16(t, 0, sport);
  put16(t, 2, dport);
  put32(t, 4, seq);
  put32(t, 8, ack);
  t[12] = 5 << 4;
  t[13] = flags;
  put16(t, 14, window);
  return t;
}

/// TCPv4 frame with a complete, valid TCP checksum.
Bytes tcp4_full(const V4Spec& s, std::uint32_t seq, std::uint8_t flags, std::size_t payload) {
  Bytes f = build_v4(s, 6, tcp_hdr(1500, 8000, seq, 100, flags, 65535), payload);
  put16(f, 34 + 16, std::uint16_t(~fold(sum16(&f[34], f.size() - 34, pseudo4(f, 14, 6, f.size() - 34)))));
  return f;
}

/// TCPv4 super-packet with the pseudo-header seed in the checksum field (CHECKSUM_PARTIAL:
/// the field holds the folded, uncomplemented pseudo-header sum for the whole TCP length).
Bytes tcp4_partial(const V4Spec& s, std::uint32_t seq, std::uint8_t flags, std::size_t payload) {
  Bytes f = build_v4(s, 6, tcp_hdr(40000, 5201, seq, 0x01020304, flags, 502), payload);
  put16(f, 34 + 16, fold(pseudo4(f, 14, 6, f.size() - 34)));
  return f;
}

Bytes udp4_partial(const V4Spec& s, std::size_t payload) {
  Bytes u(8, 0);
  put16(u, 0, 40001);
  put16(u, 2, 9000);
  put16(u, 4, std::uint16_t(8 + payload));
  Bytes f = build_v4(s, 17, u, payload);
  put16(f, 34 + 6, fold(pseudo4(f, 14, 17, f.size() - 34)));
  return f;
}

/// Ethernet + IPv6 (40, next header TCP, hop limit 8) + TCP (20) + payload 'a'.
/// full_csum: valid TCP checksum; else the pseudo-header seed (CHECKSUM_PARTIAL).
Bytes tcp6(Mac dst, Mac src, std::uint32_t seq, std::uint8_t flags, std::size_t payload, bool full_csum) {
  Bytes f(14 + 40 + 20 + payload, 'a');
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + 6);
  put16(f, 12, 0x86dd);
  std::fill(f.begin() + 14, f.begin() + 54, 0);
  f[14] = 0x60;
  put16(f, 18, std::uint16_t(20 + payload));
  f[20] = 6;
  f[21] = 8;
  f[22] = 0xfd, f[23] = 0xaa, f[37] = 2;  // src fdaa::2
  f[38] = 0xfd, f[39] = 0xaa, f[53] = 1;  // dst fdaa::1
  Bytes t = tcp_hdr(1500, 8000, seq, 100, flags, 65535);
  std::copy(t.begin(), t.end(), f.begin() + 54);
  // RFC 8200 §8.1 pseudo header: addresses, upper-layer length (32 bits), next header.
  std::uint32_t ph = sum16(&f[22], 32) + std::uint32_t(20 + payload) + 6;
  put16(f, 54 + 16, full_csum ? std::uint16_t(~fold(sum16(&f[54], 20 + payload, ph))) : fold(ph));
  return f;
}

// Inner TCPv4 super-frame (Ethernet) with the pseudo seed in the TCP field.
Bytes inner_tcp4(std::size_t payload) {
  Bytes f(54 + payload);
  const std::uint8_t dst[6] = {0x02, 0x6f, 0x66, 0x6c, 0x08, 0x02};
  const std::uint8_t src[6] = {0x02, 0x6f, 0x66, 0x6c, 0x08, 0x01};
  std::copy(dst, dst + 6, f.begin());
  std::copy(src, src + 6, f.begin() + 6);
  wire::store_be16(&f[12], 0x0800);
  f[14] = 0x45;
  wire::store_be16(&f[16], std::uint16_t(40 + payload));
  wire::store_be16(&f[18], 777);
  f[20] = 0x40, f[22] = 64, f[23] = 6;
  f[26] = 192, f[27] = 168, f[29] = 1, f[30] = 192, f[31] = 168, f[33] = 2;
  wire::store_be16(&f[24], csum::ip_compute_csum(&f[14], 20));
  wire::store_be16(&f[34], 41000);
  wire::store_be16(&f[36], 80);
  wire::store_be32(&f[38], 100);
  f[46] = 0x50, f[47] = 0x18;
  wire::store_be16(&f[48], 4096);
  for (std::size_t i = 0; i < payload; ++i) f[54 + i] = std::uint8_t(i * 3 + 5);
  wire::store_be16(&f[50], csum::csum_fold16(csum::csum_tcpudp_nofold(&f[26], &f[30],
                                                                      std::uint32_t(20 + payload), 6)));
  return f;
}
}  // namespace old_kernel_builders
