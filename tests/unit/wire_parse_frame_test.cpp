// parse_frame(): synthetic frames built from hand-written headers (RFC layouts; lengths are
// computed by the small builders below from the byte counts, never from the parser).
#include <gtest/gtest.h>

#include "ofld/wire/layout.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::cat;
using wire_test::hex;

namespace {

Bytes eth(std::uint16_t type) {
  Bytes b = hex("02 00 00 00 00 01 02 00 00 00 00 02");
  b.push_back(std::uint8_t(type >> 8));
  b.push_back(std::uint8_t(type));
  return b;
}
// 4-byte VLAN tag body: TCI then the next ethertype.
Bytes tag(std::uint16_t tci, std::uint16_t next) {
  return {std::uint8_t(tci >> 8), std::uint8_t(tci), std::uint8_t(next >> 8), std::uint8_t(next)};
}
// IPv4 header (ihl 5, DF, ttl 64, 10.0.0.1 → 10.0.0.2) + payload; tot_len = 20 + payload,
// unless `tot` is given. frag = raw flags/offset word.
Bytes ipv4(std::uint8_t proto, const Bytes& payload, int tot = -1, std::uint16_t frag = 0x4000) {
  std::size_t t = tot < 0 ? 20 + payload.size() : std::size_t(tot);
  Bytes b = {0x45, 0, std::uint8_t(t >> 8), std::uint8_t(t), 0, 1,
             std::uint8_t(frag >> 8), std::uint8_t(frag), 64, proto, 0, 0,
             10, 0, 0, 1, 10, 0, 0, 2};
  return cat({b, payload});
}
// IPv6 fixed header (2001:db8::1 → 2001:db8::2), payload_len = payload size unless given.
Bytes ipv6(std::uint8_t nh, const Bytes& payload, int plen = -1) {
  std::size_t p = plen < 0 ? payload.size() : std::size_t(plen);
  Bytes b = {0x60, 0, 0, 0, std::uint8_t(p >> 8), std::uint8_t(p), nh, 64};
  Bytes s = hex("20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01");
  Bytes d = hex("20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02");
  return cat({b, s, d, payload});
}
Bytes udp(std::uint16_t sport, std::uint16_t dport, const Bytes& payload, int len = -1) {
  std::size_t l = len < 0 ? 8 + payload.size() : std::size_t(len);
  Bytes b = {std::uint8_t(sport >> 8), std::uint8_t(sport), std::uint8_t(dport >> 8),
             std::uint8_t(dport), std::uint8_t(l >> 8), std::uint8_t(l), 0, 0};
  return cat({b, payload});
}
// 20-byte TCP header, ACK, doff 5.
Bytes tcp(const Bytes& payload) {
  return cat({hex("30 39 00 50 00 00 00 01 00 00 00 00 50 10 ff ff 00 00 00 00"), payload});
}
Bytes vxlan(std::uint32_t vni, std::uint8_t flags1 = 0, std::uint8_t low = 0) {
  return {0x08, flags1, 0, 0, std::uint8_t(vni >> 16), std::uint8_t(vni >> 8), std::uint8_t(vni),
          low};
}

std::vector<HeaderKind> kinds(const Layout& l) {
  std::vector<HeaderKind> k;
  for (const auto& h : l.headers()) k.push_back(h.kind);
  return k;
}

Layout parse_ok(const Bytes& f, LinkType lt = LinkType::Ethernet, const ParseOptions& o = {}) {
  auto r = parse_frame(f, lt, o);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
  return r.ok() ? r.value() : Layout{};
}

using K = HeaderKind;

}  // namespace

TEST(WireParseFrame, EthIpv4TcpSummary) {
  const Bytes f = cat({eth(0x0800), ipv4(6, tcp(hex("aa bb")))});
  Layout l = parse_ok(f);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv4, K::Tcp}));
  EXPECT_EQ(l.mac_header, 0u);
  EXPECT_EQ(l.network_header, 14u);
  EXPECT_EQ(l.transport_header, 34u);
  EXPECT_EQ(l.inner_network_header, kNoOffset);
  EXPECT_EQ(l.protocol, 0x0800);
  EXPECT_EQ(l.l4_proto, 6);
  EXPECT_FALSE(l.encapsulation);
  EXPECT_EQ(l.stop, StopReason::EndOfHeaders);
  EXPECT_EQ(l.stop_offset, 54u);
  EXPECT_EQ(l.payload_offset(), 54u);
  const HeaderRef* ip = l.find(K::Ipv4);
  ASSERT_NE(ip, nullptr);
  EXPECT_EQ(ip->end, 56u);
  EXPECT_EQ(ip->aux, 6);
  EXPECT_EQ(ip->pseudo_daddr, 14u + 16);
  EXPECT_EQ(l.ip_of(*l.inner_l4()), ip);
  EXPECT_EQ(describe(l), "ethernet ipv4 tcp");
}

TEST(WireParseFrame, A8_EthernetPaddingExcludedFromDatagram) {
  // 60-byte minimum frame: 14 + IPv4 (20 + TCP 20 + 1 payload byte = 41) = 55, then 5 bytes
  // of non-zero padding. The datagram (and the L4 length) must end at 55.
  Bytes f = cat({eth(0x0800), ipv4(6, tcp(hex("01"))), hex("de ad be ef 99")});
  ASSERT_EQ(f.size(), 60u);
  Layout l = parse_ok(f);
  const HeaderRef* ip = l.find(K::Ipv4);
  EXPECT_EQ(ip->end, 55u);
  EXPECT_TRUE(ip->flags & layer_flag::kTrailer);
  EXPECT_EQ(l.find(K::Tcp)->end, 55u);
}

TEST(WireParseFrame, QinQAndVlanDepthLimit) {
  // 802.1ad S-tag (VID 100) then 802.1Q C-tag (VID 200), then IPv4/UDP.
  const Bytes f = cat({eth(0x88A8), tag(100, 0x8100), tag(200, 0x0800),
                       ipv4(17, udp(1000, 2000, hex("00")))});
  Layout l = parse_ok(f);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::QinQ, K::Vlan, K::Ipv4, K::Udp}));
  EXPECT_EQ(l.network_header, 22u);
  EXPECT_EQ(l.protocol, 0x0800);
  // kMaxVlanTags + 1 stacked tags → TooDeep error naming the vlan layer
  Bytes deep = eth(0x8100);
  for (std::size_t i = 0; i <= kMaxVlanTags; ++i) deep = cat({deep, tag(1, 0x8100)});
  auto r = parse_frame(deep, LinkType::Ethernet);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::TooDeep);
  EXPECT_EQ(r.error().layer, K::Vlan);
}

TEST(WireParseFrame, UnknownEthertypeStopsWithoutError) {
  Layout l = parse_ok(cat({eth(0x0806), Bytes(28, 0)}));  // ARP
  EXPECT_EQ(l.stop, StopReason::UnknownEthertype);
  EXPECT_EQ(l.stop_value, 0x0806u);
  EXPECT_EQ(l.stop_offset, 14u);
  EXPECT_EQ(l.protocol, 0x0806);
}

TEST(WireParseFrame, Ipv4LengthRules) {
  // total length 0 (TSO / BIG TCP capture): length from the frame, flagged.
  Layout z = parse_ok(cat({eth(0x0800), ipv4(6, tcp(Bytes(100, 1)), 0)}));
  EXPECT_TRUE(z.find(K::Ipv4)->flags & layer_flag::kLenFromFrame);
  EXPECT_EQ(z.find(K::Ipv4)->end, 14u + 20 + 20 + 100);
  // total length < ihl*4
  auto r = parse_frame(cat({eth(0x0800), ipv4(6, tcp({}), 19)}), LinkType::Ethernet);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::BadTotalLen);
  // total length past the frame: error, or clamped with allow_clipped
  Bytes big = cat({eth(0x0800), ipv4(6, tcp({}), 1500)});
  r = parse_frame(big, LinkType::Ethernet);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().to_string(), "ipv4: length field 1500 past end (40 available) at offset 14");
  ParseOptions o;
  o.allow_clipped = true;
  Layout c = parse_ok(big, LinkType::Ethernet, o);
  EXPECT_TRUE(c.find(K::Ipv4)->flags & layer_flag::kClipped);
}

TEST(WireParseFrame, Ipv4Fragments) {
  // First fragment: MF, offset 0; UDP length 3008 covers more than this fragment → allowed.
  Layout f1 = parse_ok(cat({eth(0x0800), ipv4(17, udp(1, 2, Bytes(32, 0), 3008), -1, 0x2000)}));
  EXPECT_EQ(f1.frag, FragStatus::First);
  EXPECT_TRUE(f1.find(K::Ipv4)->flags & layer_flag::kFirstFragment);
  ASSERT_NE(f1.find(K::Udp), nullptr);
  EXPECT_TRUE(f1.find(K::Udp)->flags & layer_flag::kClipped);
  // Later fragment: offset 185 (1480 bytes): no L4 header.
  Layout f2 = parse_ok(cat({eth(0x0800), ipv4(17, Bytes(40, 0), -1, 0x20b9)}));
  EXPECT_EQ(f2.frag, FragStatus::Later);
  EXPECT_EQ(f2.find(K::Udp), nullptr);
  EXPECT_EQ(f2.stop, StopReason::LaterFragment);
  EXPECT_EQ(f2.stop_value, 1480u);
  EXPECT_EQ(f2.transport_header, kNoOffset);
}

// QA: a tunnel packet cut by outer IPv4 fragmentation (zeek_erspan.pcap: GRE/TEB in a first
// fragment). The inner IPv4 header says "not a fragment", but the inner datagram is
// incomplete: the frame's status must stay First (it used to be reset to None by the inner
// header, and `ofld gso` then segmented the fragment into new fragments with invented IDs).
TEST(WireParseFrame, InnerDatagramOfOuterFirstFragmentIsAFragment) {
  const Bytes inner = cat({eth(0x0800), ipv4(6, tcp(Bytes(64, 7)), 1500)});
  const Bytes gre = cat({hex("00 00 65 58"), inner});
  Layout l = parse_ok(cat({eth(0x0800), ipv4(47, gre, -1, 0x2000)}));
  EXPECT_EQ(l.frag, FragStatus::First);
  ASSERT_NE(l.inner_l4(), nullptr);
  EXPECT_EQ(l.inner_l4()->kind, K::Tcp);
  // IPv6 inside an IPv4 first fragment (an atomic fragment header inside stays First too).
  const Bytes fh = {6, 0, 0, 0, 0, 0, 0, 9};
  Layout s = parse_ok(cat({eth(0x0800), ipv4(41, ipv6(44, cat({fh, tcp(Bytes(64, 7))}), 1400), -1,
                                             0x2000)}));
  EXPECT_EQ(s.frag, FragStatus::First);
  // Unfragmented outer: the inner header's own status.
  Layout n = parse_ok(cat({eth(0x0800), ipv4(47, cat({hex("00 00 65 58"),
                                                       cat({eth(0x0800), ipv4(6, tcp({}))})}))}));
  EXPECT_EQ(n.frag, FragStatus::None);
}

TEST(WireParseFrame, Ipv6RoutingType0PseudoHeaderDestination) {
  // RH0 (next 17, len 4 → 40 bytes, type 0, segments left 1, 2 addresses) then UDP.
  const Bytes rh = hex("11 04 00 01 00 00 00 00"
                       "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 0a"
                       "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 0b");
  const Bytes f = cat({eth(0x86DD), ipv6(43, cat({rh, udp(1, 2, hex("00 00"))}))});
  Layout l = parse_ok(f);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv6, K::Ipv6Routing, K::Udp}));
  const HeaderRef* ip = l.find(K::Ipv6);
  EXPECT_TRUE(ip->flags & layer_flag::kRoutedDst);
  // last address = 14 (eth) + 40 (ipv6) + 8 + 16
  EXPECT_EQ(ip->pseudo_daddr, 14u + 40 + 8 + 16);
  EXPECT_EQ(f[ip->pseudo_daddr + 15], 0x0b);
  EXPECT_EQ(ip->aux, 17);  // upper-layer protocol for the pseudo-header
  EXPECT_EQ(l.transport_header, 14u + 40 + 40);
}

TEST(WireParseFrame, Ipv6ZeroPayloadLengthAndJumbo) {
  // payload_len 0, no HBH jumbo: BIG TCP as seen by taps → length from frame, for TCP/UDP in
  // a packet over 65535 bytes only (tcpdump's rule); a small one is malformed (ZeroLength).
  Layout b = parse_ok(cat({eth(0x86DD), ipv6(6, tcp(Bytes(65500, 2)), 0)}));
  ASSERT_NE(b.find(K::Ipv6), nullptr);
  EXPECT_TRUE(b.find(K::Ipv6)->flags & layer_flag::kLenFromFrame);
  EXPECT_EQ(b.find(K::Ipv6)->end, 14u + 40 + 20 + 65500);
  auto small = parse_frame(cat({eth(0x86DD), ipv6(6, tcp(Bytes(64, 2)), 0)}), LinkType::Ethernet);
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().code, Errc::ZeroLength);
  // RFC 2675 jumbogram: HBH jumbo option carries the length (8 HBH + 20 TCP + 4 = 32).
  const Bytes hbh = hex("06 00 c2 04 00 00 00 20");
  Layout j = parse_ok(cat({eth(0x86DD), ipv6(0, cat({hbh, tcp(Bytes(4, 0))}), 0)}));
  ASSERT_NE(j.find(K::Ipv6), nullptr);
  EXPECT_TRUE(j.find(K::Ipv6)->flags & layer_flag::kJumbo);
  EXPECT_EQ(j.find(K::Ipv6)->end, 14u + 40 + 32);
}

TEST(WireParseFrame, Ipv6FragmentAtomicFirstLater) {
  auto fh = [](std::uint16_t offm) {
    return Bytes{17, 0, std::uint8_t(offm >> 8), std::uint8_t(offm), 0, 0, 0, 9};
  };
  Layout a = parse_ok(cat({eth(0x86DD), ipv6(44, cat({fh(0x0000), udp(1, 2, {})}))}));
  EXPECT_EQ(a.frag, FragStatus::Atomic);
  EXPECT_NE(a.find(K::Udp), nullptr);
  Layout f = parse_ok(cat({eth(0x86DD), ipv6(44, cat({fh(0x0001), udp(1, 2, {}, 500)}))}));
  EXPECT_EQ(f.frag, FragStatus::First);
  Layout l = parse_ok(cat({eth(0x86DD), ipv6(44, cat({fh(0x0079), Bytes(16, 0)}))}));
  EXPECT_EQ(l.frag, FragStatus::Later);
  EXPECT_EQ(l.stop, StopReason::LaterFragment);
  EXPECT_EQ(l.stop_value, 0x78u);
}

TEST(WireParseFrame, VxlanInnerOffsetsAndTruncationAtEveryByte) {
  const Bytes inner = cat({eth(0x0800), ipv4(17, udp(53, 53, hex("01 02 03 04")))});
  const Bytes f = cat({eth(0x0800), ipv4(17, udp(40000, 4789, cat({vxlan(0x123456), inner})))});
  Layout l = parse_ok(f);
  EXPECT_EQ(kinds(l), (std::vector<K>{K::Ethernet, K::Ipv4, K::Udp, K::Vxlan, K::Ethernet,
                                      K::Ipv4, K::Udp}));
  EXPECT_TRUE(l.encapsulation);
  EXPECT_EQ(l.tunnel, TunnelKind::Vxlan);
  EXPECT_EQ(l.tunnel_depth, 1);
  EXPECT_EQ(l.transport_header, 34u);
  EXPECT_EQ(l.inner_mac_header, 50u);  // 14 + 20 + 8 + 8
  EXPECT_EQ(l.inner_network_header, 64u);
  EXPECT_EQ(l.inner_transport_header, 84u);
  EXPECT_EQ(l.inner_protocol, 0x6558);
  EXPECT_EQ(l.find(K::Ethernet, 1)->level, 1);
  EXPECT_EQ(l.ip_of(*l.inner_l4()), l.find(K::Ipv4, 1));
  // Every strict prefix: an error value (the outer IPv4 length covers the whole frame), and
  // no over-read (each prefix is its own exactly sized heap buffer).
  for (std::size_t n = 0; n < f.size(); ++n) {
    Bytes cut(f.begin(), f.begin() + n);
    EXPECT_FALSE(parse_frame(cut, LinkType::Ethernet).ok()) << n;
  }
  // With clipping allowed (snaplen), a prefix cut inside the VXLAN header names it.
  ParseOptions o;
  o.allow_clipped = true;
  Bytes cut(f.begin(), f.begin() + 47);
  auto r = parse_frame(cut, LinkType::Ethernet, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().to_string(),
            "vxlan: truncated at vxlan header (8 bytes needed, 5 available) at offset 42");
}

TEST(WireParseFrame, V4_VxlanRcoDecodedOnlyWithRemcsumRx) {
  // RCO byte 0x91: UDP, start 34 → checksum at inner + 40 (V-3).
  const Bytes inner = cat({eth(0x0800), ipv4(17, udp(1, 2, Bytes(8, 0)))});
  const Bytes f =
      cat({eth(0x0800), ipv4(17, udp(1, 4789, cat({vxlan(7, 0x20, 0x91), inner})))});
  Layout off = parse_ok(f);
  EXPECT_TRUE(off.find(K::Vxlan)->flags & layer_flag::kRco);
  EXPECT_EQ(off.rco_start, kNoOffset);
  ParseOptions o;
  o.vxlan_remcsum_rx = true;
  Layout on = parse_ok(f, LinkType::Ethernet, o);
  EXPECT_EQ(on.rco_start, 50u + 34);
  EXPECT_EQ(on.rco_offset, 50u + 40);
  // Linux-strict mode without REMCSUM_RX drops the RCO-flagged header (V-4).
  o.vxlan_remcsum_rx = false;
  o.vxlan_strict = true;
  auto r = parse_frame(f, LinkType::Ethernet, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().layer, K::Vxlan);
  EXPECT_EQ(r.error().code, Errc::BadFlags);
}

TEST(WireParseFrame, VxlanLegacyPortAndPortKnobs) {
  const Bytes inner = cat({eth(0x0800), ipv4(17, udp(1, 2, {}))});
  const Bytes f = cat({eth(0x0800), ipv4(17, udp(1, 8472, cat({vxlan(1), inner})))});
  EXPECT_EQ(parse_ok(f).tunnel, TunnelKind::Vxlan);
  ParseOptions o;
  o.vxlan_legacy_port = 0;
  Layout l = parse_ok(f, LinkType::Ethernet, o);
  EXPECT_FALSE(l.encapsulation);
  EXPECT_EQ(l.stop_offset, 42u);
  o = {};
  o.follow_tunnels = false;
  EXPECT_EQ(parse_ok(f, LinkType::Ethernet, o).stop, StopReason::TunnelsDisabled);
}

TEST(WireParseFrame, NestedTunnelDepthLimit) {
  Bytes pkt = cat({eth(0x0800), ipv4(17, udp(5, 6, hex("00")))});
  for (std::size_t i = 0; i < kMaxTunnelDepth + 1; ++i)
    pkt = cat({eth(0x0800), ipv4(17, udp(1, 4789, cat({vxlan(std::uint32_t(i)), pkt})))});
  Layout l = parse_ok(pkt);
  EXPECT_EQ(l.tunnel_depth, kMaxTunnelDepth);
  EXPECT_EQ(l.stop, StopReason::TunnelDepth);
  EXPECT_EQ(l.stop_value, kMaxTunnelDepth);
}

TEST(WireParseFrame, GueOnConfiguredPortWithRco) {
  // No default GUE port: the same bytes on 6080 are plain UDP.
  const Bytes innerip = ipv4(6, tcp({}));
  const Bytes gue = hex("02 04 00 01 80 00 00 00 00 14 00 24");  // RCO start 20, offset 36
  const Bytes f = cat({eth(0x0800), ipv4(17, udp(1, 6080, cat({gue, innerip})))});
  EXPECT_FALSE(parse_ok(f).encapsulation);
  ParseOptions o;
  o.gue_port = 6080;
  Layout l = parse_ok(f, LinkType::Ethernet, o);
  EXPECT_EQ(l.tunnel, TunnelKind::Gue);
  EXPECT_EQ(l.inner_network_header, 42u + 12);
  EXPECT_EQ(l.inner_transport_header, 42u + 12 + 20);
  EXPECT_EQ(l.inner_protocol, 0x0800);
  EXPECT_EQ(l.rco_start, 54u + 20);
  EXPECT_EQ(l.rco_offset, 54u + 36);
  // V-9 violation surfaces as an error with the GUE layer
  Bytes bad = cat({eth(0x0800), ipv4(17, udp(1, 6080, cat({hex("00 04 80 00"), innerip})))});
  auto r = parse_frame(bad, LinkType::Ethernet, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().layer, K::Gue);
  // V-7: version 1 = the UDP payload is the IPv4 packet itself
  Layout v1 = parse_ok(cat({eth(0x0800), ipv4(17, udp(1, 6080, innerip))}), LinkType::Ethernet, o);
  EXPECT_EQ(v1.tunnel, TunnelKind::Gue);
  EXPECT_EQ(v1.find(K::Gue), nullptr);
  EXPECT_EQ(v1.inner_network_header, 42u);
}

TEST(WireParseFrame, FouAndIpipAndSit) {
  ParseOptions o;
  o.fou_port = 5555;
  o.fou_proto = 41;
  Layout f = parse_ok(cat({eth(0x0800), ipv4(17, udp(1, 5555, ipv6(17, udp(1, 2, {}))))}),
                      LinkType::Ethernet, o);
  EXPECT_EQ(f.tunnel, TunnelKind::Fou);
  EXPECT_EQ(f.inner_protocol, 0x86DD);
  Layout i = parse_ok(cat({eth(0x0800), ipv4(4, ipv4(6, tcp({})))}));
  EXPECT_EQ(i.tunnel, TunnelKind::Ipip);
  EXPECT_EQ(i.inner_network_header, 34u);
  EXPECT_EQ(i.inner_transport_header, 54u);
  Layout s = parse_ok(cat({eth(0x0800), ipv4(41, ipv6(6, tcp({})))}));
  EXPECT_EQ(s.tunnel, TunnelKind::Sit);
}

TEST(WireParseFrame, V13_GreFlagsTebAndRoutingRefused) {
  // GRE K (0x2000) proto 0x6558 (TEB), key 1 → inner Ethernet.
  const Bytes inner = cat({eth(0x0800), ipv4(1, hex("08 00 00 00"))});
  Layout t = parse_ok(cat({eth(0x0800), ipv4(47, cat({hex("20 00 65 58 00 00 00 01"), inner}))}));
  EXPECT_EQ(t.tunnel, TunnelKind::Gre);
  EXPECT_EQ(t.inner_protocol, 0x6558);
  EXPECT_EQ(t.inner_mac_header, 42u);
  EXPECT_EQ(t.transport_header, 34u);  // GRE header is the outer transport header
  EXPECT_EQ(t.find(K::Icmp)->level, 1);
  // R bit → recorded, flagged, parsing stops.
  Layout r = parse_ok(cat({eth(0x0800), ipv4(47, cat({hex("40 00 08 00 00 00 00 00"), inner}))}));
  EXPECT_EQ(r.stop, StopReason::GreRouting);
  EXPECT_TRUE(r.find(K::Gre)->flags & layer_flag::kGreRouting);
  EXPECT_FALSE(r.encapsulation);
}

TEST(WireParseFrame, V14_ErspanTypeIAndII) {
  const Bytes inner = cat({eth(0x0800), ipv4(1, hex("08 00 00 00"))});
  // Type I: GRE 0x88be without S → Ethernet directly.
  Layout a = parse_ok(cat({eth(0x0800), ipv4(47, cat({hex("00 00 88 be"), inner}))}));
  EXPECT_EQ(a.tunnel, TunnelKind::Erspan);
  EXPECT_EQ(a.inner_mac_header, 38u);
  // Type II: GRE S + seq, then the 8-byte ERSPAN II header (V-15).
  Layout b = parse_ok(cat({eth(0x0800),
                           ipv4(47, cat({hex("10 00 88 be 00 00 00 01"),
                                         hex("10 0a 00 05 00 00 00 09"), inner}))}));
  EXPECT_EQ(kinds(b), (std::vector<K>{K::Ethernet, K::Ipv4, K::Gre, K::ErspanII, K::Ethernet,
                                      K::Ipv4, K::Icmp}));
  EXPECT_EQ(b.inner_mac_header, 14u + 20 + 8 + 8);
}

TEST(WireParseFrame, LinkTypes) {
  const Bytes ip = ipv4(17, udp(1, 2, {}));
  EXPECT_EQ(kinds(parse_ok(ip, LinkType::RawIp)), (std::vector<K>{K::Ipv4, K::Udp}));
  EXPECT_EQ(parse_ok(ip, LinkType::RawIp).mac_header, kNoOffset);
  const Bytes sll = cat({hex("00 00 00 01 00 06 02 00 00 00 00 01 00 00 08 00"), ip});
  Layout s = parse_ok(sll, LinkType::LinuxSll);
  EXPECT_EQ(s.network_header, 16u);
  const Bytes sll2 = cat({hex("08 00 00 00 00 00 00 03 00 01 04 06 02 00 00 00 00 01 00 00"), ip});
  EXPECT_EQ(parse_ok(sll2, LinkType::LinuxSll2).network_header, 20u);
  auto r = parse_frame(hex("50 00"), LinkType::RawIp);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::BadVersion);
  EXPECT_FALSE(parse_frame(Bytes{}, LinkType::RawIp).ok());
  EXPECT_FALSE(parse_frame(Bytes{}, LinkType::Ethernet).ok());
}
