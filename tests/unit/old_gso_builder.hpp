// Frame builders for the GSO tests. Frames are built byte by byte from the RFC layouts
// (RFC 791, 8200, 9293, 768, 7348, 2784) with complete, valid checksums; tests then check
// outputs against the spec's rules and against the RFC checksum definition (the sum over
// pseudo-header + L4 region must fold to 0xFFFF).
#pragma once

#include <cstdint>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/layout.hpp"

namespace old_gso_test {

using Bytes = std::vector<std::uint8_t>;

struct TcpSpec {
  bool v6 = false;
  std::size_t payload = 3000;
  std::uint8_t flags = 0x10;  // ACK
  std::uint32_t seq = 0x11223344;
  std::uint32_t ack = 0x55667788;
  std::uint16_t ip_id = 1000;
  bool df = true;
  Bytes tcp_options;  // multiple of 4
  Bytes v6_ext;       // IPv6 extension headers (first one's type in v6_ext_type)
  std::uint8_t v6_ext_type = 0;
  std::uint8_t fill_seed = 1;
};

inline void put16(Bytes& b, std::size_t o, std::uint16_t v) { ofld::wire::store_be16(&b[o], v); }

inline Bytes payload_bytes(std::size_t n, std::uint8_t seed) {
  Bytes p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::uint8_t(i * 7 + seed + (i >> 8));
  return p;
}

// L4 checksum per RFC 793/768/8200: ~fold(pseudo + sum(L4 region with field zero)).
inline std::uint16_t l4_checksum(const std::uint8_t* ip, bool v6, const std::uint8_t* l4,
                                 std::size_t l4len, std::uint8_t proto) {
  using namespace ofld::csum;
  wsum s = csum_partial(l4, l4len, 0);
  return v6 ? csum_ipv6_magic(ip + 8, ip + 24, std::uint32_t(l4len), proto, s)
            : csum_tcpudp_magic(ip + 12, ip + 16, std::uint32_t(l4len), proto, s);
}

// True when the L4 checksum of the L4 region is valid (RFC 1071: sum incl. field == 0xFFFF).
inline bool l4_valid(const std::uint8_t* ip, bool v6, const std::uint8_t* l4, std::size_t l4len,
                     std::uint8_t proto) {
  using namespace ofld::csum;
  wsum s = csum_partial(l4, l4len, 0);
  wsum ps = v6 ? csum_ipv6_nofold(ip + 8, ip + 24, std::uint32_t(l4len), proto, s)
               : csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(l4len), proto, s);
  return csum_fold16(ps) == 0xffff;
}

inline std::uint16_t pseudo_only(const std::uint8_t* ip, bool v6, std::size_t l4len,
                                 std::uint8_t proto) {
  using namespace ofld::csum;
  return v6 ? csum_fold16(csum_ipv6_nofold(ip + 8, ip + 24, std::uint32_t(l4len), proto))
            : csum_fold16(csum_tcpudp_nofold(ip + 12, ip + 16, std::uint32_t(l4len), proto));
}

inline void ipv4_header(Bytes& f, std::size_t o, std::size_t tot, std::uint16_t id, bool df,
                        std::uint8_t proto, std::uint8_t src_last = 1, std::uint8_t dst_last = 2) {
  f[o] = 0x45;
  put16(f, o + 2, std::uint16_t(tot));
  put16(f, o + 4, id);
  f[o + 6] = df ? 0x40 : 0;
  f[o + 8] = 64;
  f[o + 9] = proto;
  const std::uint8_t s[4] = {10, 0, 0, src_last}, d[4] = {10, 0, 0, dst_last};
  std::copy(s, s + 4, &f[o + 12]);
  std::copy(d, d + 4, &f[o + 16]);
  put16(f, o + 10, ofld::csum::ip_compute_csum(&f[o], 20));
}

inline void ipv6_header(Bytes& f, std::size_t o, std::size_t plen, std::uint8_t nh,
                        std::uint8_t src_last = 1, std::uint8_t dst_last = 2) {
  f[o] = 0x60;
  put16(f, o + 4, std::uint16_t(plen));
  f[o + 6] = nh;
  f[o + 7] = 64;
  f[o + 8] = 0xfd;
  f[o + 23] = src_last;
  f[o + 24] = 0xfd;
  f[o + 39] = dst_last;
}

inline void eth_header(Bytes& f, std::uint16_t type) {
  const std::uint8_t dst[6] = {0x02, 0, 0, 0, 0, 0x02}, src[6] = {0x02, 0, 0, 0, 0, 0x01};
  std::copy(dst, dst + 6, &f[0]);
  std::copy(src, src + 6, &f[6]);
  put16(f, 12, type);
}

/// Ethernet + IPv4/IPv6 (+ext) + TCP (+options) + payload, all checksums valid.
inline Bytes tcp_frame(const TcpSpec& s) {
  const std::size_t iphl = s.v6 ? 40 + s.v6_ext.size() : 20;
  const std::size_t thl = 20 + s.tcp_options.size();
  Bytes f(14 + iphl + thl + s.payload);
  eth_header(f, s.v6 ? 0x86DD : 0x0800);
  const std::size_t l4 = 14 + iphl;
  if (s.v6) {
    ipv6_header(f, 14, s.v6_ext.size() + thl + s.payload, s.v6_ext.empty() ? 6 : s.v6_ext_type);
    std::copy(s.v6_ext.begin(), s.v6_ext.end(), f.begin() + 54);
  } else {
    ipv4_header(f, 14, 20 + thl + s.payload, s.ip_id, s.df, 6);
  }
  ofld::wire::store_be16(&f[l4], 40000);
  ofld::wire::store_be16(&f[l4 + 2], 5201);
  ofld::wire::store_be32(&f[l4 + 4], s.seq);
  ofld::wire::store_be32(&f[l4 + 8], s.ack);
  f[l4 + 12] = std::uint8_t((thl / 4) << 4);
  f[l4 + 13] = s.flags;
  put16(f, l4 + 14, 502);
  std::copy(s.tcp_options.begin(), s.tcp_options.end(), f.begin() + l4 + 20);
  Bytes pl = payload_bytes(s.payload, s.fill_seed);
  std::copy(pl.begin(), pl.end(), f.begin() + l4 + thl);
  put16(f, l4 + 16, l4_checksum(&f[14], s.v6, &f[l4], thl + s.payload, 6));
  return f;
}

/// Ethernet + IPv4/IPv6 + UDP + payload, checksum valid (0 → 0xFFFF).
inline Bytes udp_frame(bool v6, std::size_t payload, std::uint8_t seed = 3) {
  const std::size_t iphl = v6 ? 40 : 20;
  Bytes f(14 + iphl + 8 + payload);
  eth_header(f, v6 ? 0x86DD : 0x0800);
  if (v6) ipv6_header(f, 14, 8 + payload, 17);
  else ipv4_header(f, 14, 20 + 8 + payload, 7, true, 17);
  const std::size_t l4 = 14 + iphl;
  put16(f, l4, 50000);
  put16(f, l4 + 2, 443);
  put16(f, l4 + 4, std::uint16_t(8 + payload));
  Bytes pl = payload_bytes(payload, seed);
  std::copy(pl.begin(), pl.end(), f.begin() + l4 + 8);
  put16(f, l4 + 6, ofld::csum::udp_csum_mangle(l4_checksum(&f[14], v6, &f[l4], 8 + payload, 17)));
  return f;
}

/// Parse + prepare for GSO (PARTIAL with seed), as the stack would hand it.
inline ofld::core::Packet prepare(const Bytes& f, std::uint16_t mss,
                                  std::uint16_t gue_port = 0) {
  ofld::wire::ParseOptions po;
  po.gue_port = gue_port;
  auto l = ofld::wire::parse_frame(f, ofld::wire::LinkType::Ethernet, po);
  if (!l) return ofld::core::Packet::from_bytes(f);
  ofld::gso::PrepareOptions o;
  o.gso_size = mss;
  return ofld::gso::prepare_frame(f, l.value(), o).pkt;
}

/// A device with exactly these features (and the same for encapsulated packets).
inline ofld::core::Device device(ofld::core::Features f) {
  ofld::core::Device d;
  d.features = f;
  d.hw_enc_features = f;
  return d;
}

}  // namespace old_gso_test

namespace old_gso_test {

enum class Outer { Vxlan, Gue, Gre };

/// Encapsulate `inner` (an Ethernet frame for VXLAN / GRE-TEB; the frame's IP packet for GUE
/// and GRE-IP) in outer Ethernet + IPv4/IPv6 + UDP+VXLAN (RFC 7348) / UDP+GUE (V-6, port
/// 6080) / GRE (RFC 2784, C bit when gre_csum). Outer UDP checksum: a valid full checksum
/// when udp_csum, else 0. Outer IPv4: ID 0x4000, DF clear (as the kernel VXLAN, K-3b).
inline Bytes encap(const Bytes& inner_eth, Outer kind, bool outer_v6, bool udp_csum,
                   bool gre_csum = false, bool gre_teb = true, bool rco = false) {
  const bool ip_inner = kind == Outer::Gue || (kind == Outer::Gre && !gre_teb);
  Bytes in(ip_inner ? inner_eth.begin() + 14 : inner_eth.begin(), inner_eth.end());
  const std::size_t iphl = outer_v6 ? 40 : 20;
  const std::size_t th = kind == Outer::Vxlan ? 16 : kind == Outer::Gue ? 12 : (gre_csum ? 8 : 4);
  Bytes f(14 + iphl + th + in.size());
  eth_header(f, outer_v6 ? 0x86DD : 0x0800);
  const std::uint8_t proto = kind == Outer::Gre ? 47 : 17;
  if (outer_v6) ipv6_header(f, 14, th + in.size(), proto, 11, 12);
  else ipv4_header(f, 14, iphl + th + in.size(), 0x4000, false, proto, 11, 12);
  const std::size_t t = 14 + iphl;
  std::copy(in.begin(), in.end(), f.begin() + t + th);
  if (kind == Outer::Gre) {
    f[t] = gre_csum ? 0x80 : 0;
    put16(f, t + 2, gre_teb ? 0x6558 : (in[0] >> 4 == 6 ? 0x86DD : 0x0800));
    if (gre_csum) put16(f, t + 4, ofld::csum::ip_compute_csum(&f[t], f.size() - t));
    return f;
  }
  put16(f, t, 33333);
  put16(f, t + 2, kind == Outer::Vxlan ? 4789 : 6080);
  put16(f, t + 4, std::uint16_t(f.size() - t));
  if (kind == Outer::Vxlan) {
    ofld::wire::store_be32(&f[t + 8], rco ? 0x08200000u : 0x08000000u);
    ofld::wire::store_be32(&f[t + 12], (42u << 8) | (rco ? 0x11 : 0));  // §4.9c: 34>>1
  } else {
    f[t + 8] = 0;
    f[t + 9] = in[0] >> 4 == 6 ? 41 : 4;
  }
  if (udp_csum)
    put16(f, t + 6, ofld::csum::udp_csum_mangle(l4_checksum(&f[14], outer_v6, &f[t], f.size() - t, 17)));
  return f;
}

}  // namespace old_gso_test

namespace old_gso_test {

/// IP-in-IP (RFC 2003 / RFC 4213 / RFC 2473): outer Ethernet + outer IPv4 (protocol 4 or 41,
/// ID 0x4000, DF clear, as encap() uses) or IPv6 (next header 4 or 41), then the inner IP
/// packet of `inner_eth` (its Ethernet header dropped).
inline Bytes ipip_encap(const Bytes& inner_eth, bool outer_v6) {
  Bytes in(inner_eth.begin() + 14, inner_eth.end());
  const std::uint8_t proto = (in[0] >> 4) == 6 ? 41 : 4;
  const std::size_t iphl = outer_v6 ? 40 : 20;
  Bytes f(14 + iphl + in.size());
  eth_header(f, outer_v6 ? 0x86DD : 0x0800);
  if (outer_v6) ipv6_header(f, 14, in.size(), proto, 11, 12);
  else ipv4_header(f, 14, iphl + in.size(), 0x4000, false, proto, 11, 12);
  std::copy(in.begin(), in.end(), f.begin() + 14 + std::ptrdiff_t(iphl));
  return f;
}

/// A device for GSO_PARTIAL tests: `features` (GSO_PARTIAL added) with the tunnel bits in
/// `partial_only` usable only for GSO_PARTIAL packets (dev->gso_partial_features, F-6);
/// hw_enc_features = features (F-9 adds SG and GSO_PARTIAL).
inline ofld::core::Device partial_device(ofld::core::Features features,
                                         ofld::core::Features partial_only) {
  namespace nf = ofld::core::netif_f;
  ofld::core::Device d;
  d.features = features | partial_only | nf::GSO_PARTIAL;
  d.gso_partial_features = partial_only;
  d.hw_enc_features = features | partial_only | nf::GSO_PARTIAL | nf::SG;
  return d;
}

}  // namespace old_gso_test
