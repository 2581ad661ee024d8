// tests/common/frame_builder.hpp — the one test frame builder, built on wire's emit().
//
// A frame is described as a stack of layers, outermost first, then a payload:
//
//   fb::Frame f;
//   f.eth(dst, src).ipv4({.id = 7, .frag_off = wire::ipv4::kDF, .saddr = a, .daddr = b})
//    .tcp({.source = 40000, .dest = 5201, .flags = wire::tcp_flag::kAck}).payload(bytes);
//   Bytes b = f.build();
//
// Each header is written by its wire::*Repr::emit(). build() then fills, innermost layer
// first (so inner checksums are final before outer ones cover them), whatever the layer
// leaves to it (Fill bits, all on by default):
//   * ethertype / IP protocol / next header: from the layer that follows;
//   * lengths: IPv4 total_len, IPv6 payload_len, UDP len — from the bytes that follow
//     (padding added with pad_to() is not counted);
//   * checksums: IPv4 header (RFC 791), TCP/UDP (RFC 9293 / RFC 768 / RFC 8200 §8.1, under
//     the nearest enclosing IP header; L4Csum picks full / CHECKSUM_PARTIAL seed / zero /
//     as given, plus a delta for deliberately wrong ones), GRE (RFC 2784 §2.1, when C).
// Layers can also be raw bytes (extension headers or odd headers a test writes itself).
// The presets below (namespaces gro, gso, tunnel) are the frames the GRO, GSO and tunnel
// tests use; their field values are the ones those tests were written against.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <variant>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/wire/bytes.hpp"
#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "ofld/wire/numbers.hpp"
#include "ofld/wire/tunnel.hpp"

namespace ofld::fb {

using Bytes = std::vector<std::uint8_t>;

/// What build() fills in a layer (bit mask).
namespace fill {
inline constexpr unsigned kType = 1;  ///< ethertype / protocol / next header from the next layer
inline constexpr unsigned kLen = 2;   ///< length field from the bytes that follow
inline constexpr unsigned kCsum = 4;  ///< checksum (IPv4 header, GRE when C)
inline constexpr unsigned kAll = 7;
}  // namespace fill

/// TCP/UDP checksum mode.
enum class L4Csum : std::uint8_t {
  Full,     ///< complete checksum (UDP: a computed 0 is sent as 0xFFFF, RFC 768)
  Partial,  ///< folded pseudo-header seed (CHECKSUM_PARTIAL, C-6/C-12)
  Zero,     ///< 0 (UDP: no checksum)
  Given,    ///< the Repr's check value as is
};

/// Payload i*7 + seed + (i >> 8) (the GSO tests' pattern).
inline Bytes pattern(std::size_t n, std::uint8_t seed) {
  Bytes p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::uint8_t(i * 7 + seed + (i >> 8));
  return p;
}
/// Payload i*7 + add, modulo 256 (the tunnel tests' pattern).
inline Bytes pattern7(std::size_t n, std::uint8_t add) {
  Bytes p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::uint8_t(i * 7 + add);
  return p;
}
/// 6-byte MAC 02:00:00:00:00:<last>.
inline wire::MacAddr mac(std::uint8_t last) { return {0x02, 0, 0, 0, 0, last}; }
/// IPv4 a.b.c.d as a host-order number.
constexpr std::uint32_t ip4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) {
  return (std::uint32_t(a) << 24) | (std::uint32_t(b) << 16) | (std::uint32_t(c) << 8) | d;
}
/// IPv6 address with first two bytes hi0 hi1 and last byte `last` (fdaa::2, fd00::1, ...).
inline wire::Ipv6Addr ip6(std::uint8_t hi0, std::uint8_t hi1, std::uint8_t last) {
  wire::Ipv6Addr a{};
  a[0] = hi0;
  a[1] = hi1;
  a[15] = last;
  return a;
}

class Frame {
 public:
  Frame& eth(const wire::MacAddr& dst, const wire::MacAddr& src, std::uint16_t type = 0,
             unsigned f = fill::kAll) {
    return push({Kind::Eth, f, wire::EthernetRepr{dst, src, type}});
  }
  /// 802.1Q tag body (TCI, inner ethertype); the TPID is the previous layer's type.
  Frame& vlan(std::uint16_t tci, std::uint16_t tpid = wire::ethertype::kVlan,
              unsigned f = fill::kAll) {
    Layer l{Kind::Vlan, f, wire::VlanRepr{tci, 0}};
    l.own_type = tpid;
    return push(std::move(l));
  }
  Frame& ipv4(const wire::Ipv4Repr& r, unsigned f = fill::kAll, Bytes options = {}) {
    Layer l{Kind::Ip4, f, r};
    l.bytes = std::move(options);
    return push(std::move(l));
  }
  Frame& ipv6(const wire::Ipv6Repr& r, unsigned f = fill::kAll) {
    return push({Kind::Ip6, f, r});
  }
  /// Raw header bytes. `proto`: the number the previous layer names it by (ethertype or IP
  /// protocol); `next_at0`: its byte 0 is a next-header field build() fills (IPv6 ext headers).
  Frame& raw(Bytes b, std::uint16_t proto, bool next_at0 = false) {
    Layer l{Kind::Raw, next_at0 ? fill::kType : 0u, std::monostate{}};
    l.bytes = std::move(b);
    l.own_type = proto;
    return push(std::move(l));
  }
  Frame& tcp(const wire::TcpRepr& r, L4Csum c = L4Csum::Full, int delta = 0, Bytes options = {}) {
    Layer l{Kind::Tcp, fill::kAll, r};
    l.csum = c;
    l.delta = delta;
    l.bytes = std::move(options);
    return push(std::move(l));
  }
  Frame& udp(const wire::UdpRepr& r, L4Csum c = L4Csum::Full, unsigned f = fill::kAll) {
    Layer l{Kind::Udp, f, r};
    l.csum = c;
    return push(std::move(l));
  }
  Frame& vxlan(const wire::VxlanRepr& r) { return push({Kind::Vxlan, 0, r}); }
  Frame& gue(const wire::GueRepr& r) { return push({Kind::Gue, fill::kType, r}); }
  Frame& geneve(const wire::GeneveRepr& r) { return push({Kind::Geneve, 0, r}); }
  /// GRE; with r.checksum set the field is computed (fill::kCsum) unless f says otherwise.
  Frame& gre(const wire::GreRepr& r, unsigned f = fill::kAll) { return push({Kind::Gre, f, r}); }
  Frame& payload(Bytes p) {
    payload_.insert(payload_.end(), p.begin(), p.end());
    return *this;
  }
  /// Append zero bytes up to `n` after everything else (Ethernet padding, not in any length).
  Frame& pad_to(std::size_t n) {
    pad_to_ = n;
    return *this;
  }

  Bytes build() const;

 private:
  enum class Kind : std::uint8_t { Eth, Vlan, Ip4, Ip6, Raw, Tcp, Udp, Vxlan, Gue, Gre, Geneve };
  using Repr = std::variant<std::monostate, wire::EthernetRepr, wire::VlanRepr, wire::Ipv4Repr,
                            wire::Ipv6Repr, wire::TcpRepr, wire::UdpRepr, wire::VxlanRepr,
                            wire::GueRepr, wire::GreRepr, wire::GeneveRepr>;
  struct Layer {
    Layer(Kind k, unsigned f, Repr r) : kind(k), fill(f), repr(std::move(r)) {}
    Kind kind;
    unsigned fill = 0;
    Repr repr;
    Bytes bytes;              // Raw: the header; Ip4/Tcp: options
    std::uint16_t own_type = 0;
    L4Csum csum = L4Csum::Full;
    int delta = 0;
    std::size_t off = 0, len = 0;
  };
  Frame& push(Layer l) {
    layers_.push_back(std::move(l));
    return *this;
  }
  /// The number the previous layer uses for layer i (ethertype for L2 users, else IP proto).
  static std::uint16_t type_of(const Layer& l, bool as_ethertype) {
    switch (l.kind) {
      case Kind::Eth: return wire::ethertype::kTeb;
      case Kind::Vlan: return l.own_type;
      case Kind::Ip4: return as_ethertype ? wire::ethertype::kIpv4 : wire::ipproto::kIpip;
      case Kind::Ip6: return as_ethertype ? wire::ethertype::kIpv6 : wire::ipproto::kIpv6;
      case Kind::Raw: return l.own_type;
      case Kind::Tcp: return wire::ipproto::kTcp;
      case Kind::Udp: return wire::ipproto::kUdp;
      case Kind::Gre: return wire::ipproto::kGre;
      default: return 0;
    }
  }
  std::vector<Layer> layers_;
  Bytes payload_;
  std::size_t pad_to_ = 0;
};

inline Bytes Frame::build() const {
  using namespace wire;
  std::vector<Layer> ls = layers_;
  Bytes b;
  // 1. emit every header (type/length/checksum fields as given; fixed below)
  for (auto& l : ls) {
    l.off = b.size();
    Bytes h(128 + l.bytes.size(), 0);
    std::size_t n = 0;
    switch (l.kind) {
      case Kind::Eth: n = std::get<EthernetRepr>(l.repr).emit(h); break;
      case Kind::Vlan: n = std::get<VlanRepr>(l.repr).emit(h); break;
      case Kind::Ip4: {
        auto r = std::get<Ipv4Repr>(l.repr);
        r.options = l.bytes;
        if (l.fill & fill::kCsum) r.check.reset();
        n = r.emit(h);
        break;
      }
      case Kind::Ip6: n = std::get<Ipv6Repr>(l.repr).emit(h); break;
      case Kind::Raw: n = l.bytes.size(); std::copy(l.bytes.begin(), l.bytes.end(), h.begin()); break;
      case Kind::Tcp: {
        auto r = std::get<TcpRepr>(l.repr);
        r.options = l.bytes;
        n = r.emit(h);
        break;
      }
      case Kind::Udp: n = std::get<UdpRepr>(l.repr).emit(h); break;
      case Kind::Vxlan: n = std::get<VxlanRepr>(l.repr).emit(h); break;
      case Kind::Gue: n = std::get<GueRepr>(l.repr).emit(h); break;
      case Kind::Gre: n = std::get<GreRepr>(l.repr).emit(h); break;
      case Kind::Geneve: n = std::get<GeneveRepr>(l.repr).emit(h); break;
    }
    l.len = n;
    b.insert(b.end(), h.begin(), h.begin() + std::ptrdiff_t(n));
  }
  b.insert(b.end(), payload_.begin(), payload_.end());
  const std::size_t end = b.size();
  // 2. fill, innermost first
  for (std::size_t i = ls.size(); i-- > 0;) {
    Layer& l = ls[i];
    std::uint8_t* p = b.data() + l.off;
    const Layer* next = i + 1 < ls.size() ? &ls[i + 1] : nullptr;
    const std::size_t after = end - l.off;  // this header + everything after it
    switch (l.kind) {
      case Kind::Eth:
        if ((l.fill & fill::kType) && next) store_be16(p + eth::kTypeOffset, type_of(*next, true));
        break;
      case Kind::Vlan:
        if ((l.fill & fill::kType) && next) store_be16(p + vlan::kTypeOffset, type_of(*next, true));
        break;
      case Kind::Ip4:
        if ((l.fill & fill::kType) && next) p[ipv4::kProtocolOffset] = std::uint8_t(type_of(*next, false));
        if (l.fill & fill::kLen) store_be16(p + ipv4::kTotLenOffset, std::uint16_t(after));
        if (l.fill & fill::kCsum) {
          store_be16(p + ipv4::kCheckOffset, 0);
          store_be16(p + ipv4::kCheckOffset, csum::ip_compute_csum(p, l.len));
        }
        break;
      case Kind::Ip6:
        if ((l.fill & fill::kType) && next) p[ipv6::kNextHeaderOffset] = std::uint8_t(type_of(*next, false));
        if (l.fill & fill::kLen) store_be16(p + ipv6::kPayloadLenOffset, std::uint16_t(after - l.len));
        break;
      case Kind::Raw:
        if ((l.fill & fill::kType) && next) p[0] = std::uint8_t(type_of(*next, false));
        break;
      case Kind::Gue:
        if ((l.fill & fill::kType) && next) p[gue::kProtoOffset] = std::uint8_t(type_of(*next, false));
        break;
      case Kind::Gre: {
        const auto& r = std::get<GreRepr>(l.repr);
        if ((l.fill & fill::kType) && next) store_be16(p + gre::kProtoOffset, type_of(*next, true));
        if (r.checksum && (l.fill & fill::kCsum)) {
          store_be16(p + gre::kCsumOffset, 0);
          store_be16(p + gre::kCsumOffset, csum::ip_compute_csum(p, after));
        }
        break;
      }
      case Kind::Tcp:
      case Kind::Udp: {
        const bool udp_l = l.kind == Kind::Udp;
        const std::size_t co = udp_l ? udp::kCheckOffset : tcp::kCheckOffset;
        if (udp_l && (l.fill & fill::kLen)) store_be16(p + udp::kLenOffset, std::uint16_t(after));
        const std::uint8_t proto = udp_l ? ipproto::kUdp : ipproto::kTcp;
        const Layer* ip = nullptr;
        for (std::size_t j = i; j-- > 0;)
          if (ls[j].kind == Kind::Ip4 || ls[j].kind == Kind::Ip6) { ip = &ls[j]; break; }
        std::uint16_t c = 0;
        const std::span<const std::uint8_t> seg(p, after);
        if (l.csum == L4Csum::Given) break;
        store_be16(p + co, 0);
        if (l.csum == L4Csum::Zero || !ip) break;
        const std::uint8_t* ipp = b.data() + ip->off;
        const bool v6 = ip->kind == Kind::Ip6;
        if (l.csum == L4Csum::Partial) {
          c = v6 ? csum::csum_fold16(csum::csum_ipv6_nofold(ipp + ipv6::kSaddrOffset, ipp + ipv6::kDaddrOffset, std::uint32_t(after), proto))
                 : csum::csum_fold16(csum::csum_tcpudp_nofold(ipp + ipv4::kSaddrOffset, ipp + ipv4::kDaddrOffset, std::uint32_t(after), proto));
        } else {
          const csum::wsum s = csum::csum_partial(seg);
          c = v6 ? csum::csum_ipv6_magic(ipp + ipv6::kSaddrOffset, ipp + ipv6::kDaddrOffset, std::uint32_t(after), proto, s)
                 : csum::csum_tcpudp_magic(ipp + ipv4::kSaddrOffset, ipp + ipv4::kDaddrOffset, std::uint32_t(after), proto, s);
          if (udp_l) c = csum::udp_csum_mangle(c);
        }
        store_be16(p + co, std::uint16_t(c + l.delta));
        break;
      }
      case Kind::Vxlan:
      case Kind::Geneve: break;
    }
  }
  if (b.size() < pad_to_) b.resize(pad_to_, 0);
  return b;
}

}  // namespace ofld::fb

// ============================== presets ========================================================

/// GRO tests: packets shaped like tools/testing/selftests/net/gro.c (spec §13.1):
/// 192.168.1.200 → 192.168.1.100 (fdaa::2 → fdaa::1), sport 1500, dport 8000,
/// seq = 100 + offset, ack 100, ACK, window 65535, TTL 8, DF, payload of 'a';
/// MACs 02::01 ← 02::02.
namespace ofld::fb::gro {

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
  std::vector<std::uint8_t> v6_ext;      // one IPv6 extension header (raw, nexthdr filled)
  std::uint8_t v6_ext_type = 60;         // its type (60 dest opts, 0 HBH, 44 fragment)
  std::uint32_t flow_label = 0;
  bool bad_csum = false;                 // TCP checksum − 1 (selftest tcp_csum)
  std::size_t eth_pad_to = 0;            // pad the frame to this many bytes (C1)
  std::uint16_t sport = 1500, dport = 8000;
  std::uint8_t src_last = 200, dst_last = 100;  // last address byte (flows)
  char fill = 'a';
};

/// Ethernet + IP layers of the GRO flow `t` (no L4 yet).
inline Frame l3(const Tcp& t, bool with_eth = true) {
  Frame f;
  if (with_eth) f.eth(mac(1), mac(2));
  if (!t.v6) {
    wire::Ipv4Repr r;
    r.tos = t.tos;
    r.id = t.ip_id;
    r.frag_off = std::uint16_t((t.df ? wire::ipv4::kDF : 0) | (t.mf ? wire::ipv4::kMF : 0));
    r.ttl = t.ttl;
    r.saddr = ip4(192, 168, 1, t.src_last);
    r.daddr = ip4(192, 168, 1, t.dst_last);
    f.ipv4(r, fill::kAll, t.ip_options);
  } else {
    wire::Ipv6Repr r;
    r.traffic_class = t.tos;
    r.flow_label = t.flow_label;
    r.hop_limit = t.ttl;
    r.saddr = ip6(0xfd, 0xaa, t.src_last == 200 ? 2 : t.src_last);
    r.daddr = ip6(0xfd, 0xaa, t.dst_last == 100 ? 1 : t.dst_last);
    f.ipv6(r);
    if (!t.v6_ext.empty()) f.raw(t.v6_ext, t.v6_ext_type, true);
  }
  return f;
}

inline Frame tcp_builder(const Tcp& t, bool with_eth) {
  Frame f = l3(t, with_eth);
  wire::TcpRepr r;
  r.source = t.sport;
  r.dest = t.dport;
  r.seq = 100 + t.seq_off;
  r.ack_seq = t.ack;
  r.flags = t.flags;
  r.window = t.window;
  f.tcp(r, L4Csum::Full, t.bad_csum ? -1 : 0, t.options);
  f.payload(Bytes(t.payload, std::uint8_t(t.fill)));
  if (with_eth) f.pad_to(t.eth_pad_to);
  return f;
}

/// L3+TCP bytes (no Ethernet).
inline Bytes tcp_l3(const Tcp& t) { return tcp_builder(t, false).build(); }

/// A full ACK segment of the default flow at sequence offset `seq_off`.
inline Tcp tcp_seg(bool v6, std::uint32_t seq_off, std::size_t payload = 100) {
  Tcp t;
  t.v6 = v6;
  t.seq_off = seq_off;
  t.payload = payload;
  return t;
}

inline Bytes tcp_frame(const Tcp& t) { return tcp_builder(t, true).build(); }

/// Ethernet header alone (02::01 ← 02::02, the given type).
inline Bytes eth_header(std::uint16_t type) {
  Frame f;
  f.eth(mac(1), mac(2), type, 0);
  return f.build();
}

/// UDP datagram frame with a valid (or zero) checksum.
inline Bytes udp_frame(bool v6, std::size_t payload, bool zero_csum = false,
                       std::uint16_t sport = 1500, std::uint16_t dport = 8000, char fill = 'u',
                       std::uint16_t ip_id = 0) {
  Tcp t;
  t.v6 = v6;
  t.ip_id = ip_id;
  Frame f = l3(t);
  f.udp({sport, dport, 0, 0}, zero_csum ? L4Csum::Zero : L4Csum::Full);
  f.payload(Bytes(payload, std::uint8_t(fill)));
  return f.build();
}

/// Inner IP packet (no Ethernet) of tcp_frame(t).
inline Bytes ip_only(const Tcp& t) {
  Bytes f = tcp_frame(t);
  return Bytes(f.begin() + wire::eth::kHdrLen, f.end());
}

/// Outer flow of the tunnel frames: src .1 / ::1, dst .2 / ::2, given IPv4 id.
inline Tcp outer_flow(bool v6, std::uint16_t id, std::uint8_t src_last = 1) {
  Tcp t;
  t.v6 = v6;
  t.ip_id = id;
  t.src_last = src_last;
  t.dst_last = 2;
  return t;
}

/// Outer Ethernet + IPv4/IPv6 header (proto, DF, id) around `l4` bytes (already complete).
inline Bytes outer(bool v6, std::uint8_t proto, const Bytes& l4, std::uint16_t id = 0,
                   std::uint8_t src_last = 1) {
  Frame f = l3(outer_flow(v6, id, src_last));
  f.raw(l4, proto);
  return f.build();
}

/// UDP header + payload with a valid checksum (or zero) for the outer addresses of outer().
inline Bytes udp_l4(bool v6, std::uint16_t sport, std::uint16_t dport, const Bytes& payload,
                    bool csum) {
  Frame f = l3(outer_flow(v6, 0), false);
  f.udp({sport, dport, 0, 0}, csum ? L4Csum::Full : L4Csum::Zero);
  f.payload(payload);
  Bytes b = f.build();
  return Bytes(b.begin() + (v6 ? 40 : 20), b.end());
}

/// VXLAN frame: outer (v6?) / UDP 4789 / VXLAN(vni, rco byte) / inner Ethernet frame.
inline Bytes vxlan(bool outer_v6, const Bytes& inner, std::uint32_t vni = 42, bool udp_csum = true,
                   std::uint16_t id = 0, std::uint8_t rco = 0, bool rco_flag = false,
                   std::uint16_t sport = 40000) {
  Frame f = l3(outer_flow(outer_v6, id));
  f.udp({sport, wire::udpport::kVxlan, 0, 0}, udp_csum ? L4Csum::Full : L4Csum::Zero);
  if (rco_flag || rco == 0) {
    wire::VxlanRepr r{vni, std::nullopt};
    if (rco_flag) r.rco = wire::vxlan::rco_decode(rco);
    f.vxlan(r);
  } else {  // reserved low byte set without the RCO flag: not a VxlanRepr, written raw
    Bytes h(wire::vxlan::kLen);
    wire::store_be32(h.data(), wire::vxlan::kWord0Vni);
    wire::store_be32(h.data() + 4, (vni << 8) | rco);
    f.raw(h, 0);
  }
  f.payload(inner);
  return f.build();
}

/// GRE frame: outer / GRE(flags, proto, key, csum; S → seq 1) / inner (Ethernet for 0x6558,
/// else IP).
inline Bytes gre(bool outer_v6, std::uint16_t flags, std::uint16_t proto, const Bytes& inner,
                 std::uint32_t key = 7, std::uint16_t id = 0) {
  Frame f = l3(outer_flow(outer_v6, id));
  constexpr std::uint16_t kCks = wire::gre::kCsum | wire::gre::kKey | wire::gre::kSeq;
  if ((flags & ~kCks) == 0) {
    wire::GreRepr r;
    r.protocol = proto;
    if (flags & wire::gre::kCsum) r.checksum = 0;
    if (flags & wire::gre::kKey) r.key = key;
    if (flags & wire::gre::kSeq) r.seq = 1;
    f.gre(r, fill::kCsum);
  } else {  // bits a GreRepr does not express (R, version, reserved): written raw
    Bytes h(4);
    wire::store_be16(h.data(), flags);
    wire::store_be16(h.data() + 2, proto);
    if (flags & wire::gre::kCsum) h.insert(h.end(), {0, 0, 0, 0});
    if (flags & wire::gre::kKey) {
      h.insert(h.end(), 4, 0);
      wire::store_be32(h.data() + h.size() - 4, key);
    }
    if (flags & wire::gre::kSeq) h.insert(h.end(), {0, 0, 0, 1});
    Bytes g = h;
    g.insert(g.end(), inner.begin(), inner.end());
    if (flags & wire::gre::kCsum) wire::store_be16(g.data() + 4, csum::ip_compute_csum(g.data(), g.size()));
    f.raw(g, wire::ipproto::kGre);
    return f.build();
  }
  f.raw(inner, proto);
  return f.build();
}

}  // namespace ofld::fb::gro

/// GSO tests: frames built from the RFC layouts with complete, valid checksums:
/// 10.0.0.1 → 10.0.0.2 (fd00::1 → fd00::2), TTL 64, ports 40000 → 5201 (TCP, window 502) or
/// 50000 → 443 (UDP); MACs 02::02 ← 02::01; payload fb::pattern().
namespace ofld::fb::gso {

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

inline void eth(Frame& f) { f.eth(mac(2), mac(1)); }
inline void ipv4(Frame& f, std::uint16_t id, bool df, std::uint8_t src_last = 1,
                 std::uint8_t dst_last = 2) {
  wire::Ipv4Repr r;
  r.id = id;
  r.frag_off = df ? wire::ipv4::kDF : 0;
  r.ttl = 64;
  r.saddr = ip4(10, 0, 0, src_last);
  r.daddr = ip4(10, 0, 0, dst_last);
  f.ipv4(r);
}
inline void ipv6(Frame& f, std::uint8_t src_last = 1, std::uint8_t dst_last = 2) {
  wire::Ipv6Repr r;
  r.hop_limit = 64;
  r.saddr = ip6(0xfd, 0, src_last);
  r.daddr = ip6(0xfd, 0, dst_last);
  f.ipv6(r);
}

/// Ethernet + IPv4/IPv6 (+ext) + TCP (+options) + payload, all checksums valid.
inline Bytes tcp_frame(const TcpSpec& s) {
  Frame f;
  eth(f);
  if (s.v6) {
    ipv6(f);
    if (!s.v6_ext.empty()) f.raw(s.v6_ext, s.v6_ext_type);
  } else {
    ipv4(f, s.ip_id, s.df);
  }
  wire::TcpRepr r;
  r.source = 40000;
  r.dest = 5201;
  r.seq = s.seq;
  r.ack_seq = s.ack;
  r.flags = s.flags;
  r.window = 502;
  f.tcp(r, L4Csum::Full, 0, s.tcp_options);
  f.payload(pattern(s.payload, s.fill_seed));
  return f.build();
}

/// Ethernet + IPv4/IPv6 + UDP + payload, checksum valid (0 → 0xFFFF).
inline Bytes udp_frame(bool v6, std::size_t payload, std::uint8_t seed = 3) {
  Frame f;
  eth(f);
  if (v6) ipv6(f);
  else ipv4(f, 7, true);
  f.udp({50000, 443, 0, 0});
  f.payload(pattern(payload, seed));
  return f.build();
}

enum class Outer { Vxlan, Gue, Gre };

/// Encapsulate `inner_eth` (an Ethernet frame; its IP packet for GUE and GRE-IP) in outer
/// Ethernet + IPv4/IPv6 (10.0.0.11 → .12 / fd00::11 → ::12; IPv4 ID 0x4000, DF clear, as the
/// kernel VXLAN, K-3b) + UDP 33333 → 4789 + VXLAN VNI 42 (RCO: start 34, TCP, §4.9c) /
/// UDP → 6080 + GUE (V-6) / GRE (RFC 2784, C bit when gre_csum). Outer UDP checksum: a
/// valid full checksum when udp_csum, else 0.
inline Bytes encap(const Bytes& inner_eth, Outer kind, bool outer_v6, bool udp_csum,
                   bool gre_csum = false, bool gre_teb = true, bool rco = false) {
  const bool ip_inner = kind == Outer::Gue || (kind == Outer::Gre && !gre_teb);
  Bytes in(ip_inner ? inner_eth.begin() + 14 : inner_eth.begin(), inner_eth.end());
  const bool in_v6 = ip_inner && (in[0] >> 4) == 6;
  Frame f;
  eth(f);
  if (outer_v6) ipv6(f, 11, 12);
  else ipv4(f, 0x4000, false, 11, 12);
  if (kind == Outer::Gre) {
    wire::GreRepr r;
    if (gre_csum) r.checksum = 0;
    f.gre(r);
    f.raw(in, gre_teb ? wire::ethertype::kTeb : in_v6 ? wire::ethertype::kIpv6 : wire::ethertype::kIpv4);
    return f.build();
  }
  f.udp({33333, kind == Outer::Vxlan ? wire::udpport::kVxlan : wire::udpport::kGue, 0, 0},
        udp_csum ? L4Csum::Full : L4Csum::Zero);
  if (kind == Outer::Vxlan) {
    wire::VxlanRepr v{42, std::nullopt};
    if (rco) v.rco = wire::vxlan::Rco{34, 16};  // §4.9c: 34 >> 1 = 0x11
    f.vxlan(v);
    f.raw(in, wire::ethertype::kTeb);
  } else {
    f.gue({});
    f.raw(in, in_v6 ? wire::ipproto::kIpv6 : wire::ipproto::kIpip);
  }
  return f.build();
}

/// IP-in-IP (RFC 2003 / RFC 4213 / RFC 2473): outer Ethernet + outer IPv4 (protocol 4 or 41,
/// ID 0x4000, DF clear, as encap() uses) or IPv6 (next header 4 or 41), then the inner IP
/// packet of `inner_eth` (its Ethernet header dropped).
inline Bytes ipip_encap(const Bytes& inner_eth, bool outer_v6) {
  Bytes in(inner_eth.begin() + 14, inner_eth.end());
  Frame f;
  eth(f);
  if (outer_v6) ipv6(f, 11, 12);
  else ipv4(f, 0x4000, false, 11, 12);
  f.raw(in, (in[0] >> 4) == 6 ? wire::ipproto::kIpv6 : wire::ipproto::kIpip);
  return f.build();
}

}  // namespace ofld::fb::gso

/// Tunnel tests: Ethernet (02::02 ← 02::<src_last>) + IPv4 (192.168.1.1 → .2, ID 0x1234, DF,
/// TTL 64) or IPv6 (fd00::1 → ::2, hop limit 64) + TCP (40000 → 5201, ack 1, ACK|PSH, window
/// 65535) + payload i*7+3.
namespace ofld::fb::tunnel {

/// `seed` true: the TCP field holds the pseudo-header seed (CHECKSUM_PARTIAL convention,
/// C-6); false: a complete, valid checksum.
inline Bytes tcp_frame(std::size_t len, bool v6 = false, bool seed = false,
                       std::uint32_t seq = 1000, std::uint8_t src_last = 1) {
  Frame f;
  f.eth(mac(2), {0x02, 0, 0, 0, 0, src_last});
  if (!v6) {
    wire::Ipv4Repr r;
    r.id = 0x1234;
    r.frag_off = wire::ipv4::kDF;
    r.ttl = 64;
    r.saddr = ip4(192, 168, 1, 1);
    r.daddr = ip4(192, 168, 1, 2);
    f.ipv4(r);
  } else {
    wire::Ipv6Repr r;
    r.hop_limit = 64;
    r.saddr = ip6(0xfd, 0, 1);
    r.daddr = ip6(0xfd, 0, 2);
    f.ipv6(r);
  }
  wire::TcpRepr t;
  t.source = 40000;
  t.dest = 5201;
  t.seq = seq;
  t.ack_seq = 1;
  t.flags = wire::tcp_flag::kAck | wire::tcp_flag::kPsh;
  t.window = 0xffff;
  f.tcp(t, seed ? L4Csum::Partial : L4Csum::Full);
  f.payload(pattern7(len, 3));
  return f.build();
}

}  // namespace ofld::fb::tunnel
