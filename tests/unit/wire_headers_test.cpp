// Golden-byte, round-trip and truncation tests for the link / IP / L4 header views.
// Every golden frame is written by hand from the RFC layouts; the derivation is in comments.
#include <gtest/gtest.h>

#include "ofld/wire/ethernet.hpp"
#include "ofld/wire/ip.hpp"
#include "ofld/wire/l4.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::expect_truncation_errors;
using wire_test::hex;

namespace {

// Ethernet II (IEEE 802.3 §3.2.3 order: destination, source, type).
const Bytes kEth = hex("02 00 00 00 00 01  02 00 00 00 00 02  08 00");

// IPv4 (RFC 791 §3.1) with one 4-byte option (Router Alert, RFC 2113: 94 04 00 00):
//   45+1 → ver 4, ihl 6 (24 bytes); tos 0x10; total length 0x0038 = 56 = 24 + 32 (TCP);
//   id 0x1234; 0x4000 = DF, offset 0; ttl 64; proto 6; check 0xbeef (not verified here);
//   saddr 192.168.0.1, daddr 192.168.0.2.
const Bytes kIpv4 = hex("46 10 00 38  12 34 40 00  40 06 be ef  c0 a8 00 01  c0 a8 00 02"
                        "94 04 00 00");

// TCP (RFC 9293 §3.1): sport 12345 (0x3039), dport 80, seq 0x01020304, ack 0x0a0b0c0d,
//   doff 8 (0x80: 32 bytes), flags 0x18 = PSH|ACK, window 0xfaf0, check 0xabcd, urg 0;
//   options NOP NOP TS(kind 8, len 10, TSval 100, TSecr 200) (RFC 7323 Appendix A layout).
const Bytes kTcp = hex("30 39 00 50  01 02 03 04  0a 0b 0c 0d  80 18 fa f0  ab cd 00 00"
                       "01 01 08 0a 00 00 00 64 00 00 00 c8");

// IPv6 (RFC 8200 §3): 6b 8a bc de → version 6, traffic class 0xb8 (EF), flow 0xabcde;
//   payload length 8, next header 17 (UDP), hop limit 64, 2001:db8::1 → 2001:db8::2.
const Bytes kIpv6 = hex("6b 8a bc de  00 08 11 40"
                        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01"
                        "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 02");

// UDP (RFC 768): sport 53, dport 4789, length 8, checksum 0.
const Bytes kUdp = hex("00 35 12 b5 00 08 00 00");

}  // namespace

TEST(WireEthernet, GoldenParse) {
  auto e = EthernetHeader<>::parse(kEth);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->dst(), (MacAddr{2, 0, 0, 0, 0, 1}));
  EXPECT_EQ(e->src(), (MacAddr{2, 0, 0, 0, 0, 2}));
  EXPECT_EQ(e->ethertype(), 0x0800);
  EXPECT_EQ(e->header_len(), 14u);
}

TEST(WireEthernet, RoundTripAndTruncation) {
  Bytes b = kEth;
  auto m = EthernetHeader<std::uint8_t>::parse(std::span<std::uint8_t>(b));
  ASSERT_TRUE(m.ok());
  m->set_ethertype(0x86DD);
  m->set_src(MacAddr{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff});
  EXPECT_EQ(b, hex("02 00 00 00 00 01  aa bb cc dd ee ff  86 dd"));
  auto r = EthernetHeader<>::parse(b);
  EXPECT_EQ(r->ethertype(), 0x86DD);
  expect_truncation_errors(kEth, 14, [](auto s) { return EthernetHeader<>::parse(s); });
}

TEST(WireVlan, GoldenTciFields) {
  // TCI 0xa07b = PCP 5 (101), DEI 0, VID 0x07b = 123; then ethertype 0x0800 (IEEE 802.1Q §9.6).
  const Bytes b = hex("a0 7b 08 00");
  auto t = VlanTag<>::parse(b);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->pcp(), 5);
  EXPECT_FALSE(t->dei());
  EXPECT_EQ(t->vid(), 123);
  EXPECT_EQ(t->ethertype(), 0x0800);
  EXPECT_TRUE(is_vlan_tpid(0x8100));
  EXPECT_TRUE(is_vlan_tpid(0x88A8));
  EXPECT_FALSE(is_vlan_tpid(0x0800));
  Bytes w = b;
  VlanTag<std::uint8_t>::parse(std::span<std::uint8_t>(w))->set_tci(0x1fff);  // DEI + VID 4095
  auto t2 = VlanTag<>::parse(w);
  EXPECT_TRUE(t2->dei());
  EXPECT_EQ(t2->vid(), 4095);
  expect_truncation_errors(b, 4, [](auto s) { return VlanTag<>::parse(s); });
}

TEST(WireIpv4, GoldenParseWithOptions) {
  auto h = Ipv4Header<>::parse(kIpv4);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->version(), 4);
  EXPECT_EQ(h->ihl(), 6);
  EXPECT_EQ(h->header_len(), 24u);
  EXPECT_EQ(h->tos(), 0x10);
  EXPECT_EQ(h->total_len(), 56);
  EXPECT_EQ(h->id(), 0x1234);
  EXPECT_TRUE(h->df());
  EXPECT_FALSE(h->mf());
  EXPECT_EQ(h->frag_offset(), 0u);
  EXPECT_FALSE(h->is_fragment());
  EXPECT_EQ(h->ttl(), 64);
  EXPECT_EQ(h->protocol(), 6);
  EXPECT_EQ(h->check(), 0xbeef);
  EXPECT_EQ(h->saddr(), 0xc0a80001u);
  EXPECT_EQ(h->daddr(), 0xc0a80002u);
  ASSERT_EQ(h->options().size(), 4u);
  EXPECT_EQ(h->options()[0], 0x94);
}

TEST(WireIpv4, RoundTripSetters) {
  Bytes b = kIpv4;
  auto m = Ipv4Header<std::uint8_t>::parse(std::span<std::uint8_t>(b));
  ASSERT_TRUE(m.ok());
  m->set_total_len(0x0100);
  m->set_check(0x1234);
  m->set_id(0xfffe);
  m->set_frag_off_field(Ipv4Header<>::kMF | 0x00b9);  // MF, offset 185*8 = 1480
  m->set_ttl(1);
  m->set_daddr(0x0a000001);
  EXPECT_EQ(b, hex("46 10 01 00  ff fe 20 b9  01 06 12 34  c0 a8 00 01  0a 00 00 01"
                   "94 04 00 00"));
  auto h = Ipv4Header<>::parse(b);
  EXPECT_TRUE(h->mf());
  EXPECT_EQ(h->frag_offset(), 1480u);
  EXPECT_TRUE(h->is_fragment());
}

TEST(WireIpv4, BadIhlAndVersionAndTruncation) {
  Bytes b = kIpv4;
  b[0] = 0x43;  // ihl 3
  auto r = Ipv4Header<>::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, Errc::BadHeaderLen);
  EXPECT_EQ(r.error().to_string(), "ipv4: ihl 3 < 5 at offset 0");
  b[0] = 0x55;
  EXPECT_EQ(Ipv4Header<>::parse(b).error().code, Errc::BadVersion);
  b[0] = 0x4f;  // ihl 15 = 60 bytes > 24 present
  EXPECT_EQ(Ipv4Header<>::parse(b).error().code, Errc::HeaderPastEnd);
  expect_truncation_errors(kIpv4, 24, [](auto s) { return Ipv4Header<>::parse(s); });
}

// RFC 791 §3.1 and RFC 8200 §3 both put the version in the upper nibble of byte 0.
TEST(WireIpVersion, UpperNibbleOfFirstByte) {
  const Bytes v4 = {0x45, 0x00};       // IPv4, IHL 5
  const Bytes v4opt = {0x4f};          // IPv4, IHL 15: the IHL nibble does not leak in
  const Bytes v6 = {0x6a, 0xbc};       // IPv6, traffic class 0xab...
  const Bytes other = {0x10};          // version 1: not IP, reported as is
  EXPECT_EQ(ip_version(std::span<const std::uint8_t>(v4)), 4u);
  EXPECT_EQ(ip_version(std::span<const std::uint8_t>(v4opt)), 4u);
  EXPECT_EQ(ip_version(std::span<const std::uint8_t>(v6)), 6u);
  EXPECT_EQ(ip_version(std::span<const std::uint8_t>(other)), 1u);
  EXPECT_EQ(ip_version(v6.data()), 6u);
  EXPECT_EQ(ip_version(std::span<const std::uint8_t>()), 0u);  // empty: no byte read
  static_assert(ip_version(std::span<const std::uint8_t>()) == 0);
}

TEST(WireIpv6, GoldenParseAndRoundTrip) {
  auto h = Ipv6Header<>::parse(kIpv6);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->version(), 6);
  EXPECT_EQ(h->traffic_class(), 0xb8);
  EXPECT_EQ(h->flow_label(), 0xabcdeu);
  EXPECT_EQ(h->payload_len(), 8);
  EXPECT_EQ(h->next_header(), 17);
  EXPECT_EQ(h->hop_limit(), 64);
  EXPECT_EQ(h->saddr()[15], 1);
  EXPECT_EQ(h->daddr()[15], 2);
  Bytes b = kIpv6;
  auto m = Ipv6Header<std::uint8_t>::parse(std::span<std::uint8_t>(b));
  m->set_payload_len(0x1234);
  m->set_traffic_class(0x01);
  m->set_flow_label(0x12345);
  m->set_next_header(6);
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 8), hex("60 11 23 45 12 34 06 40"));
  auto r = Ipv6Header<>::parse(b);
  EXPECT_EQ(r->traffic_class(), 0x01);
  EXPECT_EQ(r->flow_label(), 0x12345u);
  expect_truncation_errors(kIpv6, 40, [](auto s) { return Ipv6Header<>::parse(s); });
  b[0] = 0x40;
  EXPECT_EQ(Ipv6Header<>::parse(b).error().code, Errc::BadVersion);
}

TEST(WireIpv6, RoutingType0FinalDestination) {
  // RFC 2460 §4.4 type-0 routing header: next 6, hdr_ext_len 4 (2 addresses, 40 bytes),
  // type 0, segments left 2, reserved(4); addr[0] = 2001:db8::a, addr[1] = 2001:db8::b.
  // With segments left > 0 the pseudo-header uses the LAST address (RFC 8200 §8.1).
  const Bytes rh = hex("06 04 00 02 00 00 00 00"
                       "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 0a"
                       "20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 0b");
  auto x = Ipv6ExtHeader<>::parse(rh, HeaderKind::Ipv6Routing);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->header_len(), 40u);
  EXPECT_EQ(x->routing_type(), 0);
  EXPECT_EQ(x->segments_left(), 2);
  EXPECT_EQ(x->routing_addr_count(), 2u);
  EXPECT_EQ(x->final_dst_offset(), 24u);
  EXPECT_EQ(rh[x->final_dst_offset() + 15], 0x0b);
  Bytes z = rh;
  z[3] = 0;  // segments left 0: the fixed header's destination is final
  EXPECT_EQ(Ipv6ExtHeader<>::parse(z)->final_dst_offset(), Ipv6ExtHeader<>::kNoRoutedDst);
  expect_truncation_errors(rh, 40, [](auto s) { return Ipv6ExtHeader<>::parse(s); });
}

TEST(WireIpv6, HopByHopJumboOption) {
  // RFC 2675 §2: HBH next 6, len 0 (8 bytes), option C2 04 + 32-bit jumbo length 0x00012345.
  const Bytes hbh = hex("06 00 c2 04 00 01 23 45");
  auto x = Ipv6ExtHeader<>::parse(hbh, HeaderKind::Ipv6HopByHop);
  ASSERT_TRUE(x.ok());
  EXPECT_EQ(x->jumbo_payload_len(), 0x12345u);
  // PadN only: no jumbo
  EXPECT_EQ(Ipv6ExtHeader<>::parse(hex("06 00 01 04 00 00 00 00"))->jumbo_payload_len(), 0u);
}

TEST(WireIpv6, FragmentHeaderRoundTrip) {
  // RFC 8200 §4.5: next 17, reserved, offset 185 (×8 = 1480) << 3 | M=1 = 0x05c9, id 0xdeadbeef.
  Bytes f = hex("11 00 05 c9 de ad be ef");
  auto h = Ipv6FragHeader<>::parse(f);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->next_header(), 17);
  EXPECT_EQ(h->frag_offset(), 1480u);
  EXPECT_TRUE(h->more());
  EXPECT_EQ(h->identification(), 0xdeadbeefu);
  auto m = Ipv6FragHeader<std::uint8_t>::parse(std::span<std::uint8_t>(f));
  m->set_frag(0, false);
  EXPECT_EQ(f, hex("11 00 00 00 de ad be ef"));
  expect_truncation_errors(f, 8, [](auto s) { return Ipv6FragHeader<>::parse(s); });
}

TEST(WireIpv6, AhLength) {
  // RFC 4302 §2.2: payload len 4 → (4+2)*4 = 24 bytes (12 fixed + 12 ICV for HMAC-96).
  Bytes a = hex("06 04 00 00 00 00 01 00 00 00 00 07") ;
  a.resize(24, 0xaa);
  auto h = AhHeader<>::parse(a);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->header_len(), 24u);
  EXPECT_EQ(h->spi(), 0x100u);
  EXPECT_EQ(h->seq(), 7u);
  expect_truncation_errors(a, 24, [](auto s) { return AhHeader<>::parse(s); });
}

TEST(WireTcp, GoldenParseAndTimestamps) {
  auto t = TcpHeader<>::parse(kTcp);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->source(), 12345);
  EXPECT_EQ(t->dest(), 80);
  EXPECT_EQ(t->seq(), 0x01020304u);
  EXPECT_EQ(t->ack_seq(), 0x0a0b0c0du);
  EXPECT_EQ(t->doff(), 8);
  EXPECT_EQ(t->header_len(), 32u);
  EXPECT_EQ(t->flags(), tcp_flag::kPsh | tcp_flag::kAck);
  EXPECT_EQ(t->window(), 0xfaf0);
  EXPECT_EQ(t->check(), 0xabcd);
  auto ts = t->timestamp();
  ASSERT_TRUE(ts.has_value());
  EXPECT_EQ(*ts, (TcpTimestamp{100, 200, 22}));
  int n = 0;
  EXPECT_TRUE(t->for_each_option([&](std::uint8_t, std::size_t, auto) { ++n; }));
  EXPECT_EQ(n, 3);  // NOP, NOP, TS
}

TEST(WireTcp, MalformedOptionsAndRoundTrip) {
  Bytes b = kTcp;
  b[23] = 0x0c;  // TS len 12 → past the 32-byte header: malformed, no timestamp
  auto t = TcpHeader<>::parse(b);
  EXPECT_FALSE(t->for_each_option([](auto, auto, auto) {}));
  EXPECT_FALSE(t->timestamp().has_value());
  b = kTcp;
  auto m = TcpHeader<std::uint8_t>::parse(std::span<std::uint8_t>(b));
  m->set_seq(0xfffffff0);
  m->set_flags(tcp_flag::kFin | tcp_flag::kAck);
  m->set_check(0);
  m->set_window(1);
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 20),
            hex("30 39 00 50  ff ff ff f0  0a 0b 0c 0d  80 11 00 01  00 00 00 00"));
}

TEST(WireTcp, DataOffsetErrorsAndTruncation) {
  Bytes b = kTcp;
  b[12] = 0x40;  // doff 4 → 16 bytes < 20
  auto r = TcpHeader<>::parse(b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().to_string(), "tcp: data offset 16 < 20 at offset 0");
  b[12] = 0xf0;  // doff 15 → 60 bytes > 32 present
  r = TcpHeader<>::parse(b);
  EXPECT_EQ(r.error().to_string(), "tcp: data offset 60 past end (32 available) at offset 0");
  expect_truncation_errors(kTcp, 32, [](auto s) { return TcpHeader<>::parse(s); });
}

TEST(WireUdp, GoldenRoundTripTruncation) {
  auto u = UdpHeader<>::parse(kUdp);
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->source(), 53);
  EXPECT_EQ(u->dest(), 4789);
  EXPECT_EQ(u->len(), 8);
  EXPECT_EQ(u->check(), 0);
  Bytes b = kUdp;
  auto m = UdpHeader<std::uint8_t>::parse(std::span<std::uint8_t>(b));
  m->set_len(0x05dc);
  m->set_check(0xffff);
  EXPECT_EQ(b, hex("00 35 12 b5 05 dc ff ff"));
  expect_truncation_errors(kUdp, 8, [](auto s) { return UdpHeader<>::parse(s); });
}

TEST(WireLink, SllAndSll2Fields) {
  // LINKTYPE_LINUX_SLL: pkttype 0 (host), hatype 1, halen 6, addr(8), protocol 0x86dd.
  const Bytes sll = hex("00 00 00 01 00 06 02 00 00 00 00 01 00 00 86 dd");
  auto s = SllHeader<>::parse(sll);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->hatype(), 1);
  EXPECT_EQ(s->halen(), 6);
  EXPECT_EQ(s->protocol(), 0x86dd);
  // LINKTYPE_LINUX_SLL2: protocol 0x0800, reserved, ifindex 3, hatype 1, pkttype 4 (outgoing),
  // halen 6, addr(8).
  const Bytes sll2 = hex("08 00 00 00 00 00 00 03 00 01 04 06 02 00 00 00 00 01 00 00");
  auto s2 = Sll2Header<>::parse(sll2);
  ASSERT_TRUE(s2.ok());
  EXPECT_EQ(s2->protocol(), 0x0800);
  EXPECT_EQ(s2->ifindex(), 3u);
  EXPECT_EQ(s2->pkttype(), 4);
  expect_truncation_errors(sll, 16, [](auto x) { return SllHeader<>::parse(x); });
  expect_truncation_errors(sll2, 20, [](auto x) { return Sll2Header<>::parse(x); });
}
