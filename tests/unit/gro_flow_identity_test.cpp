// GRO never compares or merges packets of different L3 families or L4
// protocols, on every link type and at every tunnel level.
//
// The kernel's rule: each layer's gro_receive marks a held packet as another flow when its own
// header differs — inet_gro_receive compares the protocol and addresses (spec N-3),
// ipv6_gro_receive the first word with the version, nexthdr and addresses (N-8), each tunnel
// hook its own header (GRE W-9, VXLAN W-16, GUE W-21, inner Ethernet W-17), the engine the MAC
// header (G-2). A held packet of another family must never be read as this layer's header.
//
// Collisions are forced with the engine's test seam (EngineOptions::flow_hash_mask = 0: every
// packet gets the same hash and bucket), so that only the per-layer comparisons keep flows
// apart; the tunnel cases also run with the real hash (both flows have the same outer headers,
// so they collide anyway). The cross-family pairs are built so that the held IPv6 packet's bytes,
// read as IPv4 + TCP at the same offsets, match the IPv4 packet in every field the IPv4 and TCP
// rules compare — the shape of a deliberate attack. Expected result: both packets come out
// exactly as they went in, nothing merged. A positive control (a real continuation of the held
// flow) shows that each wrapper builds packets that do merge.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>

#include "gro_test_util.hpp"
#include "ofld/wire/bytes.hpp"

namespace {

using namespace ofld;
using grotest::put16;
using grotest::put32;
using Bytes = std::vector<std::uint8_t>;

// ---- inner packets (RFC 791 / 8200 / 9293 / 768 layouts, valid checksums) ------------------

Bytes tcp_hdr(std::uint16_t sp, std::uint16_t dp, std::uint32_t seq, std::uint32_t ack,
              std::uint16_t win, std::size_t payload, char fill) {
  Bytes t(20 + payload, std::uint8_t(fill));
  put16(t, 0, sp);
  put16(t, 2, dp);
  put32(t, 4, seq);
  put32(t, 8, ack);
  t[12] = 0x50;
  t[13] = 0x10;  // ACK
  put16(t, 14, win);
  put16(t, 16, 0);
  put16(t, 18, 0);
  return t;
}

Bytes udp_hdr(std::uint16_t sp, std::uint16_t dp, std::size_t payload, char fill) {
  Bytes u(8 + payload, std::uint8_t(fill));
  put16(u, 0, sp);
  put16(u, 2, dp);
  put16(u, 4, std::uint16_t(8 + payload));
  put16(u, 6, 0);
  return u;
}

void finish_l4(Bytes& ip, std::size_t l4, bool v6, std::uint8_t proto) {
  const std::size_t n = ip.size() - l4;
  const csum::wsum ps =
      v6 ? csum::csum_ipv6_nofold(ip.data() + 8, ip.data() + 24, std::uint32_t(n), proto, 0)
         : csum::csum_tcpudp_nofold(ip.data() + 12, ip.data() + 16, std::uint32_t(n), proto, 0);
  std::uint16_t c = csum::csum_fold(csum::csum_partial(ip.data() + l4, n, ps));
  if (proto == 17 && c == 0) c = 0xFFFF;
  put16(ip, l4 + (proto == 6 ? 16 : 6), c);
}

struct V4 {
  std::array<std::uint8_t, 4> s{10, 1, 1, 1}, d{10, 1, 1, 2};
  std::uint8_t ttl = 64, tos = 0;
  std::uint16_t id = 0, frag = 0x4000;
};
// IP header from the frame builder (tests/common/frame_builder.hpp), then the L4 checksum.
Bytes ipv4(const V4& h, std::uint8_t proto, const Bytes& l4) {
  wire::Ipv4Repr r;
  r.tos = h.tos;
  r.id = h.id;
  r.frag_off = h.frag;
  r.ttl = h.ttl;
  r.saddr = wire::load_be32(h.s.data());
  r.daddr = wire::load_be32(h.d.data());
  fb::Frame f;
  f.ipv4(r).raw(l4, proto);
  Bytes ip = f.build();
  finish_l4(ip, 20, false, proto);
  return ip;
}

struct V6 {
  std::array<std::uint8_t, 16> s{0xfd, 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  std::array<std::uint8_t, 16> d{0xfd, 0xaa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  std::uint8_t hop = 64;
};
Bytes ipv6(const V6& h, std::uint8_t proto, const Bytes& l4) {
  wire::Ipv6Repr r;
  r.hop_limit = h.hop;
  r.saddr = h.s;
  r.daddr = h.d;
  fb::Frame f;
  f.ipv6(r).raw(l4, proto);
  Bytes ip = f.build();
  finish_l4(ip, 40, true, proto);
  return ip;
}

/// A held packet and a next packet (inner L3 bytes, no link header).
struct Pair {
  std::string name;
  Bytes held, next;
  bool should_merge = false;  // the positive control
};

// Held TCPv6 whose bytes, read as IPv4 + TCP, are the IPv4 flow of `next` one segment earlier:
// IPv4 TTL/protocol/addresses/ports inside the IPv6 source address, seq/ack/flags/window inside
// the destination; the IPv4 "ID" is the IPv6 payload length, the "fragment word" (next header
// 6, hop limit 64) has DF clear.
Pair tcp4_into_tcp6() {
  V6 h6;
  h6.s = {64, 6, 0, 0, 10, 1, 1, 1, 10, 1, 1, 2, 0x12, 0x34, 0x56, 0x78};
  h6.d = {0, 0, 0x03, 0xE8, 0, 0, 0x07, 0xD0, 0x50, 0x10, 0x20, 0x00, 0, 0, 0, 9};
  Pair p;
  p.name = "tcp4 into held tcp6";
  p.held = ipv6(h6, 6, tcp_hdr(40000, 80, 1, 1, 512, 100, 'h'));
  V4 h4;
  h4.ttl = 64;
  h4.id = std::uint16_t(20 + 100 + 1);  // the held "ID" (payload_len 120) + 1
  h4.frag = 0;                          // DF as in the held "fragment word" 0x0640
  p.next = ipv4(h4, 6, tcp_hdr(0x1234, 0x5678, 1000 + 100, 2000, 0x2000, 100, 'n'));
  return p;
}

Pair tcp6_into_tcp4() {
  Pair p;
  p.name = "tcp6 into held tcp4";
  V4 h4;
  p.held = ipv4(h4, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'h'));
  V6 h6;
  p.next = ipv6(h6, 6, tcp_hdr(1500, 8000, 200, 7, 512, 100, 'n'));
  return p;
}

// Same family, same addresses and ports, other L4 protocol.
Pair tcp_into_udp(bool v6) {
  Pair p;
  p.name = v6 ? "tcp6 into held udp6" : "tcp4 into held udp4";
  if (v6) {
    V6 h;
    p.held = ipv6(h, 17, udp_hdr(1500, 8000, 100, 'h'));
    p.next = ipv6(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'n'));
  } else {
    V4 h;
    p.held = ipv4(h, 17, udp_hdr(1500, 8000, 100, 'h'));
    h.id = 1;
    p.next = ipv4(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'n'));
  }
  return p;
}

Pair udp_into_tcp(bool v6) {
  Pair p;
  p.name = v6 ? "udp6 into held tcp6" : "udp4 into held tcp4";
  if (v6) {
    V6 h;
    p.held = ipv6(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'h'));
    p.next = ipv6(h, 17, udp_hdr(1500, 8000, 100, 'n'));
  } else {
    V4 h;
    p.held = ipv4(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'h'));
    h.id = 1;
    p.next = ipv4(h, 17, udp_hdr(1500, 8000, 100, 'n'));
  }
  return p;
}

Pair control(bool v6) {
  Pair p;
  p.name = v6 ? "control tcp6 continuation" : "control tcp4 continuation";
  p.should_merge = true;
  if (v6) {
    V6 h;
    p.held = ipv6(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'h'));
    p.next = ipv6(h, 6, tcp_hdr(1500, 8000, 200, 7, 512, 100, 'n'));
  } else {
    V4 h;
    p.held = ipv4(h, 6, tcp_hdr(1500, 8000, 100, 7, 512, 100, 'h'));
    h.id = 1;
    p.next = ipv4(h, 6, tcp_hdr(1500, 8000, 200, 7, 512, 100, 'n'));
  }
  return p;
}

std::vector<Pair> pairs() {
  return {tcp4_into_tcp6(), tcp6_into_tcp4(), tcp_into_udp(false), tcp_into_udp(true),
          udp_into_tcp(false), udp_into_tcp(true), control(false), control(true)};
}

// ---- link types and tunnels --------------------------------------------------------------

enum class Wrap { Ethernet, RawIp, GueV0, GueV1, Gre, Vxlan };
const char* name(Wrap w) {
  switch (w) {
    case Wrap::Ethernet: return "ethernet";
    case Wrap::RawIp: return "raw-ip";
    case Wrap::GueV0: return "gue-v0";
    case Wrap::GueV1: return "gue-v1";
    case Wrap::Gre: return "gre";
    case Wrap::Vxlan: return "vxlan";
  }
  return "?";
}
constexpr std::uint16_t kGuePort = 6080;

Bytes eth(std::uint16_t type) { return grotest::eth_header(type); }
std::uint16_t type_of(const Bytes& ip) { return (ip[0] >> 4) == 6 ? 0x86DD : 0x0800; }

// `ip` as the link or the tunnel carries it. The outer headers are the same for every packet
// but the outer IPv4 ID (`seq`, incrementing as N-15 wants) and lengths; outer UDP checksum 0.
Bytes wrap(Wrap w, const Bytes& ip, std::uint16_t seq) {
  Bytes f;
  if (w == Wrap::RawIp) return ip;
  if (w == Wrap::Ethernet) {
    f = eth(type_of(ip));
    f.insert(f.end(), ip.begin(), ip.end());
    return f;
  }
  // Outer Ethernet + IPv4 (172.16.0.1 → .2, ID `seq`, DF clear) from the frame builder.
  wire::Ipv4Repr o;
  o.id = seq;
  o.saddr = fb::ip4(172, 16, 0, 1);
  o.daddr = fb::ip4(172, 16, 0, 2);
  fb::Frame fr;
  fr.eth(fb::mac(1), fb::mac(2)).ipv4(o);
  if (w == Wrap::Gre) {
    fr.gre({});
    fr.raw(ip, type_of(ip));
    return fr.build();
  }
  fr.udp({33333, w == Wrap::Vxlan ? wire::udpport::kVxlan : kGuePort, 0, 0}, fb::L4Csum::Zero);
  const bool v6 = type_of(ip) == wire::ethertype::kIpv6;
  if (w == Wrap::GueV0) {
    fr.gue({}).raw(ip, v6 ? wire::ipproto::kIpv6 : wire::ipproto::kIpip);
  } else if (w == Wrap::Vxlan) {
    fr.vxlan({42, std::nullopt}).eth(fb::mac(1), fb::mac(2)).raw(ip, type_of(ip));
  } else {
    fr.payload(ip);  // GUE version 1: the IP packet directly (V-7)
  }
  return fr.build();
}

gro::EngineOptions options(Wrap w, bool fast, bool collide) {
  gro::EngineOptions o;
  o.link = w == Wrap::RawIp ? gro::LinkLayer::RawIp : gro::LinkLayer::Ethernet;
  o.batch = 1000;
  o.fast_path = fast;
  o.config.udp_gro_fwd = true;  // UDP flows are held too (U-3), so they can be collided with
  o.config.udp_tunnels.push_back({4789, 4789, false, false});
  o.config.udp_tunnels.push_back({kGuePort, 6080, false, false});
  if (collide) o.flow_hash_mask = 0;
  return o;
}

void check(Wrap w, const Pair& pr, bool fast, bool collide) {
  SCOPED_TRACE(testing::Message() << name(w) << ": " << pr.name << (fast ? ", fast path" : ", general path")
                                  << (collide ? ", all flows in one bucket" : ", real hash"));
  const Bytes held = wrap(w, pr.held, 1), next = wrap(w, pr.next, 2);
  gro::Engine e(options(w, fast, collide));
  e.receive(core::Packet::from_bytes(held));
  e.receive(core::Packet::from_bytes(next));
  e.flush_all();
  const auto& out = e.output();
  if (pr.should_merge) {
    EXPECT_EQ(e.counters().merged, 1u) << "the control must merge, or the wrapper is broken";
    EXPECT_EQ(out.size(), 1u);
    return;
  }
  EXPECT_EQ(e.counters().merged, 0u);
  ASSERT_EQ(out.size(), 2u) << "both flows must come out";
  std::vector<Bytes> got{out[0].to_bytes(), out[1].to_bytes()};
  std::vector<Bytes> want{held, next};
  std::sort(got.begin(), got.end());
  std::sort(want.begin(), want.end());
  EXPECT_TRUE(got == want) << "a packet came out changed";
  EXPECT_EQ(out[0].gso.segs + out[1].gso.segs, 0u) << "no aggregate";
}

void run_all(Wrap w) {
  for (const Pair& pr : pairs())
    for (bool fast : {true, false})
      for (bool collide : {true, false}) {
        // Without forced collisions only the tunnels (same outer headers) put both packets
        // into one flow hash; on plain links the pair differs in the hashed key.
        if (!collide && !pr.should_merge && (w == Wrap::Ethernet || w == Wrap::RawIp)) continue;
        check(w, pr, fast, collide);
      }
}

}  // namespace

TEST(GroFlowIdentity, N3_G2_Ethernet_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::Ethernet); }
TEST(GroFlowIdentity, N3_N8_RawIp_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::RawIp); }
TEST(GroFlowIdentity, W21_GueV0_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::GueV0); }
TEST(GroFlowIdentity, W21_V7_GueV1DirectIp_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::GueV1); }
TEST(GroFlowIdentity, W9_Gre_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::Gre); }
TEST(GroFlowIdentity, W16_W17_Vxlan_NoCrossFamilyOrProtocolMerge) { run_all(Wrap::Vxlan); }
