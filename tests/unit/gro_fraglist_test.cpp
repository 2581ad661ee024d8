// Fraglist GRO (NETIF_F_GRO_FRAGLIST): T-4 (mode decision), T-13 (extra merge conditions),
// T-21 / §5.6 "TCP fraglist" (completion state), G-21 (list merge, fixed 65536 cap), U-3 /
// U-10 / U-12 / §5.6 "UDP fraglist". Frames are the selftest's (spec §13.1 template, see
// gro_test_util.hpp); expected payload lists are derived in each test from the rules, and the
// byte-level expectation "headers not rewritten" is checked against the input frames. The last
// tests close the loop with X-32: GSO of a fraglist aggregate (skb_segment_list) gives back
// the original frames.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"
#include "ofld/gso/gso.hpp"

using namespace ofld;
using namespace ofld::grotest;
namespace gso_bits = core::skb_gso;

namespace {

gro::EngineOptions flist() {
  gro::EngineOptions o;
  o.config.gro_fraglist = true;
  return o;
}

std::vector<std::size_t> payloads(const std::vector<core::Packet>& out) {
  std::vector<std::size_t> v;
  for (const auto& p : out) v.push_back(tcp_payload(p));
  return v;
}

std::vector<std::vector<std::uint8_t>> stream(int n, std::size_t len, bool v6 = false) {
  std::vector<std::vector<std::uint8_t>> fr;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.v6 = v6;
    t.payload = len;
    t.seq_off = std::uint32_t(i) * std::uint32_t(len);
    t.ip_id = std::uint16_t(i);
    fr.push_back(tcp_frame(t));
  }
  return fr;
}

}  // namespace

// T-4 + T-21: no local socket → fraglist flow. The aggregate keeps the first frame's TCP
// header byte for byte (checksum field included: no pseudo seed), carries the other members on
// frag_list, gso_type FRAGLIST|TCPV4 (§5.6), gso_segs = count, and the checksum state one
// level above what validation left (NONE → UNNECESSARY 0 by G-13, +1 by T-21 → level 1).
TEST(GroFraglist, T4_T21_NoSocketTcpFraglistAggregate) {
  for (bool v6 : {false, true}) {
    auto fr = stream(3, 100, v6);
    auto out = run(fr, flist());
    ASSERT_EQ(out.size(), 1u) << "v6 " << v6;
    const auto& p = out[0];
    EXPECT_EQ(p.gso.type, (v6 ? gso_bits::TCPV6 : gso_bits::TCPV4) | gso_bits::FRAGLIST);
    EXPECT_EQ(p.gso.segs, 3u);
    EXPECT_EQ(p.gso.size, 100u);
    EXPECT_EQ(p.frag_list().size(), 2u);
    const auto* u = std::get_if<core::CsumUnnecessary>(&p.csum);
    ASSERT_NE(u, nullptr);
    EXPECT_EQ(u->level.value(), 1u);
    auto b = p.to_bytes();
    const std::size_t th = tcp_offset(fr[0]);
    ASSERT_EQ(b.size(), fr[0].size() + 200);
    EXPECT_TRUE(std::equal(fr[0].begin() + long(th), fr[0].end(), b.begin() + long(th)))
        << "TCP header and first payload untouched (T-21)";
    // L3 length covers the whole aggregate (N-5 / N-11 run for fraglist flows too).
    const std::size_t l3len = v6 ? get16(b.data() + 18) + 40u : get16(b.data() + 16);
    EXPECT_EQ(14 + l3len, b.size());
  }
}

// T-4: an established local socket on the destination port → normal GRO (PARTIAL + seed).
TEST(GroFraglist, T4_LocalSocketKeepsNormalGro) {
  auto o = flist();
  o.config.tcp_established_ports = {8000};
  auto out = run(stream(3, 100), o);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type & gso_bits::FRAGLIST, 0u);
  EXPECT_NE(out[0].gso.type & gso_bits::TCPV4, 0u);
  EXPECT_TRUE(std::holds_alternative<core::CsumPartial>(out[0].csum));
  EXPECT_TRUE(out[0].frag_list().empty());
}

// T-13: the flag word must be identical, PSH included. gro.c's flags_psh input (5 × 100,
// PSH on #2) then a FIN: normal GRO gives [300, 200] (§13.1); fraglist refuses #2 (flags
// differ) and completes the flow [200], #2 is delivered alone (T-17) [100], #3 + #4 form a
// new flow [200] that the FIN (flags differ) completes.
TEST(GroFraglist, T13_FlagWordExactPsh) {
  std::vector<std::vector<std::uint8_t>> fr;
  for (int i = 0; i < 5; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    if (i == 2) t.flags |= 0x08;
    fr.push_back(tcp_frame(t));
  }
  Tcp f;
  f.payload = 0;
  f.seq_off = 100000;
  f.flags = 0x11;
  fr.push_back(tcp_frame(f));
  EXPECT_EQ(payloads(run(fr, flist())), (std::vector<std::size_t>{200, 100, 200, 0}));
  EXPECT_EQ(payloads(run(fr)), (std::vector<std::size_t>{300, 200, 0}));  // §13.1 flags_psh
}

// T-13: at most 64 segments per fraglist flow: 70 × 10 bytes → 64 + 6 (normal GRO: one 700).
TEST(GroFraglist, T13_CountMax64) {
  auto fr = stream(70, 10);
  auto out = run(fr, flist());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gso.segs, 64u);
  EXPECT_EQ(tcp_payload(out[0]), 640u);
  EXPECT_EQ(out[1].gso.segs, 6u);
  EXPECT_EQ(payloads(run(fr)), (std::vector<std::size_t>{700}));
}

// T-13: a member needs the flow's checksum state. #1 arrives as CHECKSUM_UNNECESSARY level 1
// (two checksums verified by the device): after T-1 consumes one level its state is still
// UNNECESSARY level 1, the held #0 (NONE, validated → level 0, G-13) differs → not merged:
// the flow completes [100] and #1 starts a new one, which #2 (NONE → level 0) cannot join.
TEST(GroFraglist, T13_ChecksumLevelMustMatch) {
  auto fr = stream(3, 100);
  gro::Engine e([] {
    auto o = flist();
    o.batch = 1000;
    return o;
  }());
  for (int i = 0; i < 3; ++i) {
    auto p = core::Packet::from_bytes(fr[std::size_t(i)]);
    if (i == 1) p.csum = core::CsumUnnecessary{core::CsumLevel(1)};
    e.receive(std::move(p));
  }
  e.flush_all();
  EXPECT_EQ(payloads(e.take_output()), (std::vector<std::size_t>{100, 100, 100}));
  EXPECT_EQ(e.counters().not_merged[std::size_t(offload::GroReason::FraglistCsum)], 2u);
}

// G-21: the fraglist cap is a fixed 65536, not gro_ipv4_max_size. With gro_ipv4_max_size
// 3000 normal GRO merges while IP length + payload stays below it: 1500 + 1460 = 2960 → two
// segments per aggregate (G-16), 5 × 1460 → [2920, 2920, 1460]; fraglist takes all five.
TEST(GroFraglist, G21_FixedCapNotGroMaxSize) {
  auto fr = stream(5, 1460);
  auto o = flist();
  o.config.gro_ipv4_max_size = 3000;
  auto out = run(fr, o);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 5u);
  o.config.gro_fraglist = false;
  EXPECT_EQ(payloads(run(fr, o)), (std::vector<std::size_t>{2920, 2920, 1460}));
}

// G-21 with the default size: members count with their full length from the network header
// (1500 each, the head too): c segments merge while 1500·c + 1460… stays < 65536 —
// the 44th member is the last one (1500 + 42·1460 + 1500 = 64320 < 65536; one more gives
// 65780), so 45 × 1460 splits 44 + 1, the same split as normal GRO (K-7).
TEST(GroFraglist, G21_SizeCap45x1460) {
  auto out = run(stream(45, 1460), flist());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gso.segs, 44u);
  EXPECT_TRUE(out[1].frag_list().empty());
}

// T-4: a GSO skb never starts a fraglist flow and turns a fraglist flow of count 1 into a
// normal one (then merges normally: T-10 gso_size equal).
TEST(GroFraglist, T4_GsoSkbConvertsSingleFlow) {
  auto fr = stream(3, 100);
  gro::Engine e([] {
    auto o = flist();
    o.batch = 1000;
    return o;
  }());
  e.receive(core::Packet::from_bytes(fr[0]));
  // #1+#2 as one GSO skb (200 bytes, gso_size 100, 2 segments), as a device's LRO gives it.
  Tcp t;
  t.payload = 200;
  t.seq_off = 100;
  t.ip_id = 1;
  auto g = core::Packet::from_bytes(tcp_frame(t));
  g.gso = {100, 2, gso_bits::TCPV4};
  e.receive(std::move(g));
  e.flush_all();
  auto out = e.take_output();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type & gso_bits::FRAGLIST, 0u);
  EXPECT_EQ(out[0].gso.segs, 3u);
  EXPECT_EQ(tcp_payload(out[0]), 300u);
}

// U-3 + U-12 + §5.6 UDP fraglist: GRO_FRAGLIST and no UDP_GRO socket → fraglist even without
// GRO_UDP_FWD. UDP length = whole aggregate, checksum field untouched, FRAGLIST|UDP_L4,
// gso_segs = count, UNNECESSARY raised one level.
TEST(GroFraglist, U3_U12_UdpFraglistAggregate) {
  std::vector<std::vector<std::uint8_t>> fr;
  for (int i = 0; i < 4; ++i) fr.push_back(udp_frame(false, 300, false, 1500, 8000, 'u', std::uint16_t(i)));
  auto out = run(fr, flist());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type, gso_bits::FRAGLIST | gso_bits::UDP_L4);
  EXPECT_EQ(out[0].gso.segs, 4u);
  auto b = out[0].to_bytes();
  // UDP length from the head's UDP header to the end: 8 + 300 + 3 × 300 (members pulled).
  EXPECT_EQ(get16(b.data() + 34 + 4), 8u + 4u * 300u);
  EXPECT_EQ(b.size(), 34u + 8u + 4u * 300u);
  EXPECT_EQ(get16(b.data() + 34 + 6), get16(fr[0].data() + 34 + 6)) << "checksum untouched";
  const auto* u = std::get_if<core::CsumUnnecessary>(&out[0].csum);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->level.value(), 1u);
  // Without GRO_FRAGLIST and without GRO_UDP_FWD there is no UDP GRO at all (U-3).
  EXPECT_EQ(run(fr).size(), 4u);
  // A UDP_GRO socket on the port → segment mode, not fraglist (is_flist needs no UDP_GRO).
  auto o = flist();
  o.config.udp_gro_socks = {8000};
  auto seg = run(fr, o);
  ASSERT_EQ(seg.size(), 1u);
  EXPECT_EQ(seg[0].gso.type, gso_bits::UDP_L4);
}

// U-10: a UDP fraglist member with another checksum level is flushed alone (the flow stays).
TEST(GroFraglist, U10_UdpCsumLevelMismatchFlushesSkbOnly) {
  // IPv4 IDs 0, 1, 1: #1 passes the network flush (U-9 comes first, N-14) and is refused by
  // U-10; the flow still has count 1 when #2 (ID 1) joins it.
  std::vector<std::vector<std::uint8_t>> fr;
  for (std::uint16_t id : {0, 1, 1}) fr.push_back(udp_frame(false, 300, false, 1500, 8000, 'u', id));
  auto o = flist();
  o.batch = 1000;
  gro::Engine e(o);
  for (int i = 0; i < 3; ++i) {
    auto p = core::Packet::from_bytes(fr[std::size_t(i)]);
    if (i == 1) p.csum = core::CsumUnnecessary{core::CsumLevel(1)};
    e.receive(std::move(p));
  }
  e.flush_all();
  auto out = e.take_output();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].to_bytes(), fr[1]) << "#1 delivered at once, untouched";
  EXPECT_EQ(out[1].gso.segs, 2u) << "#0 and #2 merged";
}

// GSO (skb_segment_list, X-18 / X-28 list branches) of TCP and UDP fraglist
// aggregates gives back the original frames byte for byte.
TEST(GroFraglist, X32_X36_FraglistAggregateSegmentsBackToOriginals) {
  std::vector<std::vector<std::vector<std::uint8_t>>> inputs;
  inputs.push_back(stream(5, 700));
  inputs.push_back(stream(4, 1000, true));
  {
    auto s = stream(3, 500);
    Tcp t;
    t.payload = 123;
    t.seq_off = 1500;
    t.ip_id = 3;
    s.push_back(tcp_frame(t));  // short last segment (T-16)
    inputs.push_back(s);
  }
  {
    std::vector<std::vector<std::uint8_t>> u;
    for (int i = 0; i < 4; ++i) u.push_back(udp_frame(false, 400, false, 1500, 8000, 'u', std::uint16_t(i)));
    inputs.push_back(u);
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    auto out = run(inputs[k], flist());
    ASSERT_EQ(out.size(), 1u) << k;
    ASSERT_NE(out[0].gso.type & gso_bits::FRAGLIST, 0u) << k;
    core::Device dev;
    auto g = gso::gso_segment(std::move(out[0]), dev.features, dev);
    ASSERT_TRUE(g.ok()) << k << ": " << int(g.reason);
    ASSERT_EQ(g.segs.size(), inputs[k].size()) << k;
    for (std::size_t i = 0; i < g.segs.size(); ++i)
      EXPECT_EQ(g.segs[i].to_bytes(), inputs[k][i]) << "input " << k << " frame " << i;
  }
}
