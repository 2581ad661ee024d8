// Frame builders for the GRO tests: Ethernet + IPv4/IPv6 + TCP/UDP with valid checksums,
// shaped like the packets of tools/testing/selftests/net/gro.c (spec §13.1): 192.168.1.200 →
// 192.168.1.100 (fdaa::2 → fdaa::1), sport 1500, dport 8000, seq = 100 + offset, ack 100,
// ACK, window 65535, TTL 8, DF, payload of 'a'. Checksums are computed with RFC 1071
// arithmetic (ofld::csum); the tests' expected values come from the spec tables.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/core/packet.hpp"
#include "ofld/gro/engine.hpp"
#include "packet_compare.hpp"

namespace ofld::old_grotest {

struct Tcp {
  bool v6 = false;
  std::size_t payload = 100;
  std::uint32_t seq_off = 0;
  std::uint32_t ack = 100;
  std::uint8_t flags = 0x10;           // ACK
  std::uint16_t window = 65535;
  std::vector<std::uint8_t> options;   // multiple of 4
  std::uint8_t ttl = 8;
  std::uint8_t tos = 0;                // IPv4 TOS / IPv6 traffic class
  std::uint16_t ip_id = 0;
  bool df = true;
  bool mf = false;
  std::vector<std::uint8_t> ip_options;  // IPv4 options (multiple of 4)
  std::vector<std::uint8_t> v6_ext;      // one IPv6 extension header (raw, nexthdr patched)
  std::uint8_t v6_ext_type = 60;         // its type (60 dest opts, 0 HBH, 44 fragment)
  std::uint32_t flow_label = 0;
  bool bad_csum = false;                 // TCP checksum − 1 (selftest tcp_csum)
  std::size_t eth_pad_to = 0;            // pad the frame to this many bytes (C1)
  std::uint16_t sport = 1500, dport = 8000;
  std::uint8_t src_last = 200, dst_last = 100;  // last address byte (flows)
  char fill = 'a';
};

inline void put16(std::vector<std::uint8_t>& v, std::size_t at, std::uint16_t x) {
  v[at] = std::uint8_t(x >> 8);
  v[at + 1] = std::uint8_t(x);
}
inline void put32(std::vector<std::uint8_t>& v, std::size_t at, std::uint32_t x) {
  put16(v, at, std::uint16_t(x >> 16));
  put16(v, at + 2, std::uint16_t(x));
}
inline std::uint16_t get16(const std::uint8_t* p) { return std::uint16_t(p[0] << 8 | p[1]); }

inline std::vector<std::uint8_t> eth_header(std::uint16_t type) {
  std::vector<std::uint8_t> f{0x02, 0, 0, 0, 0, 0x01, 0x02, 0, 0, 0, 0, 0x02, 0, 0};
  put16(f, 12, type);
  return f;
}

/// IPv4/IPv6 header with `l4len` bytes of L4 after it (and options / ext header).
inline std::vector<std::uint8_t> ip_header(bool v6, std::uint8_t proto, std::size_t l4len,
                                           const Tcp& t) {
  std::vector<std::uint8_t> h;
  if (!v6) {
    const std::size_t ihl = 20 + t.ip_options.size();
    h.assign(ihl, 0);
    h[0] = std::uint8_t(0x40 | (ihl / 4));
    h[1] = t.tos;
    put16(h, 2, std::uint16_t(ihl + l4len));
    put16(h, 4, t.ip_id);
    put16(h, 6, std::uint16_t((t.df ? 0x4000 : 0) | (t.mf ? 0x2000 : 0)));
    h[8] = t.ttl;
    h[9] = proto;
    const std::uint8_t s[4] = {192, 168, 1, t.src_last}, d[4] = {192, 168, 1, t.dst_last};
    std::copy(s, s + 4, h.begin() + 12);
    std::copy(d, d + 4, h.begin() + 16);
    std::copy(t.ip_options.begin(), t.ip_options.end(), h.begin() + 20);
    put16(h, 10, csum::ip_compute_csum(h.data(), ihl));
  } else {
    h.assign(40, 0);
    put32(h, 0, 0x60000000u | (std::uint32_t(t.tos) << 20) | (t.flow_label & 0xFFFFF));
    put16(h, 4, std::uint16_t(l4len + t.v6_ext.size()));
    h[6] = t.v6_ext.empty() ? proto : t.v6_ext_type;
    h[7] = t.ttl;
    h[8] = 0xfd; h[9] = 0xaa; h[23] = t.src_last == 200 ? 2 : t.src_last;
    h[24] = 0xfd; h[25] = 0xaa; h[39] = t.dst_last == 100 ? 1 : t.dst_last;
    if (!t.v6_ext.empty()) {
      std::vector<std::uint8_t> e = t.v6_ext;
      e[0] = proto;
      h.insert(h.end(), e.begin(), e.end());
    }
  }
  return h;
}

inline csum::wsum pseudo_of(const std::vector<std::uint8_t>& ip, bool v6, std::size_t len,
                            std::uint8_t proto) {
  if (v6) return csum::csum_ipv6_nofold(ip.data() + 8, ip.data() + 24, std::uint32_t(len), proto, 0);
  return csum::csum_tcpudp_nofold(ip.data() + 12, ip.data() + 16, std::uint32_t(len), proto, 0);
}

/// L3+TCP bytes (no Ethernet).
inline std::vector<std::uint8_t> tcp_l3(const Tcp& t) {
  const std::size_t thlen = 20 + t.options.size();
  std::vector<std::uint8_t> th(thlen + t.payload, std::uint8_t(t.fill));
  put16(th, 0, t.sport);
  put16(th, 2, t.dport);
  put32(th, 4, 100 + t.seq_off);
  put32(th, 8, t.ack);
  th[12] = std::uint8_t((thlen / 4) << 4);
  th[13] = t.flags;
  put16(th, 14, t.window);
  put16(th, 16, 0);
  put16(th, 18, 0);
  std::copy(t.options.begin(), t.options.end(), th.begin() + 20);
  auto ip = ip_header(t.v6, 6, th.size(), t);
  std::uint16_t c = csum::csum_fold(csum::csum_partial(th.data(), th.size(), pseudo_of(ip, t.v6, th.size(), 6)));
  if (t.bad_csum) c = std::uint16_t(c - 1);
  put16(th, 16, c);
  ip.insert(ip.end(), th.begin(), th.end());
  return ip;
}

/// One packet to feed a GRO engine: its bytes and the layout and metadata a driver would
/// have given it.
struct PacketSpec {
  std::vector<std::uint8_t> bytes;
  std::size_t headlen = 0;    ///< bytes in the head; 0 (or >= size) = linear
  std::size_t frag_size = 0;  ///< fragment size for the rest (0 = one fragment)
  core::CsumState csum{core::CsumNone{}};
  bool vlan = false;          ///< hw-accelerated VLAN tag (802.1Q)
  std::uint16_t tci = 0;
  core::GsoInfo gso{};
  std::vector<std::uint8_t> frag_list;  ///< non-empty: appended as one frag_list member
};

inline core::Packet make_packet(const PacketSpec& in) {
  core::Packet p = in.headlen == 0 || in.headlen >= in.bytes.size()
                       ? core::Packet::from_bytes(in.bytes)
                       : core::Packet::from_bytes_frags(in.bytes, in.headlen, in.frag_size);
  p.csum = in.csum;
  p.vlan_present = in.vlan;
  p.vlan_tci = in.tci;
  if (in.vlan) p.vlan_proto = 0x8100;
  p.gso = in.gso;
  if (!in.frag_list.empty()) p.add_to_frag_list(core::Packet::from_bytes(in.frag_list));
  return p;
}

/// A full ACK segment of the default flow at sequence offset `seq_off`.
inline Tcp tcp_seg(bool v6, std::uint32_t seq_off, std::size_t payload = 100) {
  Tcp t;
  t.v6 = v6;
  t.seq_off = seq_off;
  t.payload = payload;
  return t;
}

inline std::vector<std::uint8_t> tcp_frame(const Tcp& t) {
  auto f = eth_header(t.v6 ? 0x86DD : 0x0800);
  auto l3 = tcp_l3(t);
  f.insert(f.end(), l3.begin(), l3.end());
  if (f.size() < t.eth_pad_to) f.resize(t.eth_pad_to, 0);
  return f;
}

/// UDP datagram frame with a valid (or zero) checksum.
inline std::vector<std::uint8_t> udp_frame(bool v6, std::size_t payload, bool zero_csum = false,
                                           std::uint16_t sport = 1500, std::uint16_t dport = 8000,
                                           char fill = 'u', std::uint16_t ip_id = 0) {
  Tcp t;
  t.v6 = v6;
  t.ip_id = ip_id;
  std::vector<std::uint8_t> uh(8 + payload, std::uint8_t(fill));
  put16(uh, 0, sport);
  put16(uh, 2, dport);
  put16(uh, 4, std::uint16_t(8 + payload));
  put16(uh, 6, 0);
  auto ip = ip_header(v6, 17, uh.size(), t);
  if (!zero_csum) {
    std::uint16_t c = csum::csum_fold(csum::csum_partial(uh.data(), uh.size(), pseudo_of(ip, v6, uh.size(), 17)));
    put16(uh, 6, c == 0 ? 0xFFFF : c);
  }
  auto f = eth_header(v6 ? 0x86DD : 0x0800);
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), uh.begin(), uh.end());
  return f;
}

/// Run frames through a fresh engine (one batch, then flush) and return the output packets.
inline std::vector<core::Packet> run(const std::vector<std::vector<std::uint8_t>>& frames,
                                     gro::EngineOptions opt = {}) {
  if (opt.batch == 64) opt.batch = 100000;
  // A fixed key, so that the order of different flows' outputs is reproducible.
  if (!opt.config.flow_hash_key) opt.config.flow_hash_key = 0;
  gro::Engine e(opt);
  for (const auto& f : frames) e.receive(core::Packet::from_bytes(f));
  e.flush_all();
  return e.take_output();
}

/// Offset of the TCP header in an Ethernet + IPv4/IPv6 (+ext) frame.
inline std::size_t tcp_offset(const std::vector<std::uint8_t>& b) {
  std::size_t off = 14;
  if (get16(b.data() + 12) == 0x86DD) {
    std::uint8_t proto = b[off + 6];
    off += 40;
    while (proto == 0 || proto == 43 || proto == 60 || proto == 44) {
      std::uint8_t nh = b[off];
      off += proto == 44 ? 8 : (std::size_t(b[off + 1]) + 1) * 8;
      proto = nh;
    }
    return off;
  }
  return off + std::size_t(b[off] & 0x0F) * 4;
}

/// TCP payload length of an output frame (Ethernet + IPv4/IPv6 (+ext) + TCP).
inline std::size_t tcp_payload(const core::Packet& p) {
  auto b = p.to_bytes();
  std::size_t off = 14;
  std::uint8_t proto;
  std::size_t end;
  if (get16(b.data() + 12) == 0x86DD) {
    end = 14 + 40 + get16(b.data() + 18);
    proto = b[off + 6];
    off += 40;
    while (proto == 0 || proto == 43 || proto == 60 || proto == 44) {
      std::uint8_t nh = b[off];
      off += proto == 44 ? 8 : (std::size_t(b[off + 1]) + 1) * 8;
      proto = nh;
    }
  } else {
    end = 14 + std::size_t(get16(b.data() + 16));
    off += std::size_t(b[off] & 0x0F) * 4;
  }
  off += std::size_t(b[off + 12] >> 4) * 4;
  return end - off;
}

}  // namespace ofld::old_grotest

namespace ofld::old_grotest {

/// Outer Ethernet + IPv4/IPv6 header (proto, DF, id) around `l4` bytes (already complete).
inline std::vector<std::uint8_t> outer(bool v6, std::uint8_t proto, const std::vector<std::uint8_t>& l4,
                                       std::uint16_t id = 0, std::uint8_t src_last = 1) {
  Tcp t;
  t.v6 = v6;
  t.ip_id = id;
  t.src_last = src_last;
  t.dst_last = 2;
  auto ip = ip_header(v6, proto, l4.size(), t);
  auto f = eth_header(v6 ? 0x86DD : 0x0800);
  f.insert(f.end(), ip.begin(), ip.end());
  f.insert(f.end(), l4.begin(), l4.end());
  return f;
}

/// UDP header + payload with a valid checksum (or zero) for the outer addresses of outer().
inline std::vector<std::uint8_t> udp_l4(bool v6, std::uint16_t sport, std::uint16_t dport,
                                        const std::vector<std::uint8_t>& payload, bool csum) {
  std::vector<std::uint8_t> u(8);
  put16(u, 0, sport);
  put16(u, 2, dport);
  put16(u, 4, std::uint16_t(8 + payload.size()));
  u.insert(u.end(), payload.begin(), payload.end());
  if (csum) {
    Tcp t;
    t.v6 = v6;
    t.src_last = 1;
    t.dst_last = 2;
    auto ip = ip_header(v6, 17, u.size(), t);
    std::uint16_t c = csum::csum_fold(csum::csum_partial(u.data(), u.size(), pseudo_of(ip, v6, u.size(), 17)));
    put16(u, 6, c == 0 ? 0xFFFF : c);
  }
  return u;
}

/// VXLAN frame: outer (v6?) / UDP 4789 / VXLAN(vni, rco byte) / inner Ethernet frame.
inline std::vector<std::uint8_t> vxlan(bool outer_v6, const std::vector<std::uint8_t>& inner,
                                       std::uint32_t vni = 42, bool udp_csum = true,
                                       std::uint16_t id = 0, std::uint8_t rco = 0, bool rco_flag = false,
                                       std::uint16_t sport = 40000) {
  std::vector<std::uint8_t> vx(8, 0);
  put32(vx, 0, 0x08000000u | (rco_flag ? 0x00200000u : 0));
  put32(vx, 4, (vni << 8) | rco);
  vx.insert(vx.end(), inner.begin(), inner.end());
  return outer(outer_v6, 17, udp_l4(outer_v6, sport, 4789, vx, udp_csum), id);
}

/// GRE frame: outer / GRE(flags, proto, key, csum) / inner (Ethernet for 0x6558, else IP).
inline std::vector<std::uint8_t> gre(bool outer_v6, std::uint16_t flags, std::uint16_t proto,
                                     const std::vector<std::uint8_t>& inner, std::uint32_t key = 7,
                                     std::uint16_t id = 0) {
  std::vector<std::uint8_t> g(4);
  put16(g, 0, flags);
  put16(g, 2, proto);
  if (flags & 0x8000) g.insert(g.end(), {0, 0, 0, 0});
  if (flags & 0x2000) {
    g.insert(g.end(), 4, 0);
    put32(g, g.size() - 4, key);
  }
  if (flags & 0x1000) g.insert(g.end(), {0, 0, 0, 1});
  g.insert(g.end(), inner.begin(), inner.end());
  if (flags & 0x8000) put16(g, 4, csum::ip_compute_csum(g.data(), g.size()));
  return outer(outer_v6, 47, g, id);
}

/// Inner IP packet (no Ethernet) of tcp_frame(t).
inline std::vector<std::uint8_t> ip_only(const Tcp& t) {
  auto f = tcp_frame(t);
  return {f.begin() + 14, f.end()};
}

inline std::string describe(const core::Packet& p) {
  std::string s = "len=" + std::to_string(p.len()) + " headlen=" + std::to_string(p.headlen()) +
                  " frags=" + std::to_string(p.nr_frags()) +
                  " summed=" + std::to_string(int(p.ip_summed())) +
                  " gso=" + std::to_string(p.gso.size) + "/" + std::to_string(p.gso.segs) + "/" +
                  std::to_string(p.gso.type);
  return s;
}

/// Every byte, the head/fragment geometry and every metadata field of two packets (the
/// fast/general differential tests).
inline void expect_same(const core::Packet& a, const core::Packet& b, const std::string& where) {
  ASSERT_EQ(a.to_bytes(), b.to_bytes()) << where << " fast " << describe(a) << " general " << describe(b);
  EXPECT_EQ(a.len(), b.len()) << where;
  EXPECT_EQ(a.headlen(), b.headlen()) << where;
  EXPECT_EQ(a.nr_frags(), b.nr_frags()) << where;
  EXPECT_EQ(a.frag_list().size(), b.frag_list().size()) << where;
  EXPECT_EQ(a.data_pos(), b.data_pos()) << where;
  testutil::expect_same_meta(a, b, where + " fast " + describe(a) + " general " + describe(b));
}

}  // namespace ofld::old_grotest
