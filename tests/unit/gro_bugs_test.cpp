// Public faults (docs/public-bugs.md, GRO entries of sections C, D, E, F), each a
// test named after the entry ID covering the fault's kind. Expected values come from the
// entries' "Expect" lines and the spec rules they cite.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace {

using namespace ofld::grotest;
using ofld::core::Packet;
namespace sg = ofld::core::skb_gso;
using Frames = std::vector<std::vector<std::uint8_t>>;
using ofld::offload::GroReason;

std::uint32_t seq_of(const Packet& p) {
  auto b = p.to_bytes();
  const std::size_t o = tcp_offset(b);
  return std::uint32_t(b[o + 4]) << 24 | std::uint32_t(b[o + 5]) << 16 | std::uint32_t(b[o + 6]) << 8 | b[o + 7];
}

// C1: a padded 1-byte segment is never merged as 1 + padding; it is delivered with its padding
// (K-7, N-2) and the held 100 bytes stay exactly 100 — for IPv4 and IPv6, several pad sizes.
TEST(GroBugs, BugC1_EthernetPaddingNeverMergedAsPayload) {
  for (bool v6 : {false, true})
    for (std::size_t pad : {60u, 64u, 80u}) {
      Tcp a, b;
      a.v6 = b.v6 = v6;
      b.payload = 1;
      b.seq_off = 100;
      b.eth_pad_to = pad;
      auto fb = tcp_frame(b);
      if (fb.size() <= tcp_frame([&] { Tcp t; t.v6 = b.v6; t.payload = 1; return t; }()).size()) continue;  // no padding at this size
      auto out = run({tcp_frame(a), fb});
      ASSERT_EQ(out.size(), 2u);
      std::size_t total = 0;
      for (auto& p : out) total += tcp_payload(p);
      EXPECT_EQ(total, 101u);
      EXPECT_EQ(out[1].to_bytes(), fb);  // after the completed held flow, untouched
    }
}

// C3: a PSH or FIN segment never overtakes held data of its flow: outputs in sequence order.
TEST(GroBugs, BugC3_SpecialFlagSegmentDoesNotOvertakeHeldData) {
  for (std::uint8_t fl : {std::uint8_t(0x08), std::uint8_t(0x01), std::uint8_t(0x20), std::uint8_t(0x04)}) {
    Frames f;
    for (int i = 0; i < 4; ++i) {
      Tcp t;
      t.seq_off = 100u * unsigned(i);
      if (i == 3) t.flags |= fl;
      f.push_back(tcp_frame(t));
    }
    auto out = run(f);
    std::uint32_t last = 0;
    std::size_t total = 0;
    for (auto& p : out) {
      EXPECT_GE(seq_of(p), last);
      last = seq_of(p);
      total += tcp_payload(p);
    }
    EXPECT_EQ(total, 400u);
  }
}

// C5: short or malformed headers: every truncation of valid frames, doff 4 and doff 15 in a
// short frame → never merged, passed through untouched, no over-read (run under ASan).
TEST(GroBugs, BugC5_ShortOrMalformedHeadersPassThrough) {
  for (bool v6 : {false, true}) {
    Tcp a;
    a.v6 = v6;
    auto full = tcp_frame(a);
    for (std::size_t n = 0; n < full.size(); ++n) {
      std::vector<std::uint8_t> cut(full.begin(), full.begin() + long(n));
      auto out = run({cut, cut});
      ASSERT_EQ(out.size(), 2u) << n;
      EXPECT_EQ(out[0].to_bytes(), cut);
    }
    for (std::uint8_t doff : {4, 15}) {
      auto f = tcp_frame(a);
      f[tcp_offset(f) + 12] = std::uint8_t(doff << 4);
      auto out = run({f, f});
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].to_bytes(), f);
    }
  }
}

// C7: hop-limit / traffic-class changes flush instead of splitting flows → no reordering.
TEST(GroBugs, BugC7_HopLimitOrEcnChangeFlushesInOrder) {
  for (int kind = 0; kind < 2; ++kind) {
    Frames f;
    for (int i = 0; i < 8; ++i) {
      Tcp t;
      t.v6 = true;
      t.seq_off = 100u * unsigned(i);
      if (kind == 0) t.ttl = (i & 1) ? 63 : 64;
      else t.tos = i >= 4 ? 0x03 : 0x02;  // ECT → CE mid-stream
      f.push_back(tcp_frame(t));
    }
    auto out = run(f);
    std::uint32_t last = 0;
    for (auto& p : out) {
      EXPECT_GE(seq_of(p), last);
      last = seq_of(p);
    }
    EXPECT_EQ(out.size(), kind == 0 ? 8u : 2u);
  }
}

// C8 (GRO side, classic mode as on 6.18): a CWR segment flushes the held flow.
TEST(GroBugs, BugC8_CwrSegmentFlushes) {
  Tcp a, b;
  b.seq_off = 100;
  b.flags |= 0x80;
  auto out = run({tcp_frame(a), tcp_frame(b)});
  EXPECT_EQ(out.size(), 2u);
}

// C9: IPv4 fragments (first and non-first; TCP and UDP) are never GRO candidates and never
// L4-checksum-checked: delivered unchanged, counted as ip_fragment, not as checksum.
TEST(GroBugs, BugC9_Ipv4FragmentsNeverGroCandidates) {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  Frames f;
  for (int kind = 0; kind < 4; ++kind) {
    auto fr = kind < 2 ? tcp_frame(Tcp{}) : udp_frame(false, 100);
    if (kind & 1) {
      put16(fr, 14 + 6, 0x0000 | 10);  // offset 80 bytes, not first
    } else {
      put16(fr, 14 + 6, 0x2000);  // MF, first fragment
    }
    put16(fr, 14 + 10, 0);
    put16(fr, 14 + 10, ofld::csum::ip_compute_csum(fr.data() + 14, 20));
    f.push_back(fr);
    f.push_back(fr);
  }
  ofld::gro::Engine e(o);
  for (auto& x : f) e.receive(Packet::from_bytes(x));
  e.flush_all();
  ASSERT_EQ(e.output().size(), f.size());
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(e.output()[i].to_bytes(), f[i]);
  EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::IpFragment)], f.size());
  EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::Checksum)], 0u);
}

// C11: with the default limits no aggregate exceeds a 65535-byte IP datagram: plain IPv4/IPv6,
// and encapsulated (SIT, VXLAN) flows.
TEST(GroBugs, BugC11_AggregatesStayWithin64K) {
  auto check = [](const std::vector<Packet>& out, std::size_t l3) {
    for (auto& p : out) EXPECT_LE(p.len() - l3, 65535u);
  };
  for (bool v6 : {false, true}) {
    Frames f;
    for (int i = 0; i < 60; ++i) {
      Tcp t;
      t.v6 = v6;
      t.payload = 1448;
      t.seq_off = 1448u * unsigned(i);
      t.ip_id = std::uint16_t(i);
      f.push_back(tcp_frame(t));
    }
    check(run(f), 14);
  }
  Frames s;
  for (int i = 0; i < 60; ++i) {
    Tcp t;
    t.v6 = true;
    t.payload = 1400;
    t.seq_off = 1400u * unsigned(i);
    s.push_back(outer(false, 41, ip_only(t), std::uint16_t(i)));
  }
  auto out = run(s);
  EXPECT_GT(out.size(), 1u);
  check(out, 14);
}

// D6: the UDP aggregate's NEEDS_CSUM header and checksum field follow the PARTIAL convention:
// field = uncomplemented folded pseudo-header sum, csum_offset 6.
TEST(GroBugs, D6_UdpAggregateSeedIsUncomplemented) {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  auto out = run({udp_frame(false, 200), udp_frame(false, 200, false, 1500, 8000, 'u', 1)}, o);
  ASSERT_EQ(out.size(), 1u);
  auto b = out[0].to_bytes();
  const auto ps = ofld::csum::csum_tcpudp_nofold(b.data() + 26, b.data() + 30, 408, 17, 0);  // UDP length 8 + 2 × 200
  EXPECT_EQ(get16(b.data() + 34 + 6), ofld::csum::csum_fold16(ps));
  auto h = ofld::offload::virtio::from_packet(out[0]);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->flags, 1);
  EXPECT_EQ(h->gso_type, 5);  // UDP_L4
  EXPECT_EQ(h->csum_start, 34);
  EXPECT_EQ(h->csum_offset, 6);
}

Frames vx_stream(int n, bool csum, std::vector<std::uint16_t> ids = {}) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    t.ip_id = std::uint16_t(i);
    f.push_back(vxlan(false, tcp_frame(t), 42, csum, ids.empty() ? std::uint16_t(i) : ids[std::size_t(i)]));
  }
  return f;
}

ofld::gro::EngineOptions vx_fwd() {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  o.config.udp_tunnels.push_back({4789, 4789, false, false});
  return o;
}

// E1: datagrams to a local UDP tunnel port are never coalesced as plain UDP (UDP_L4); they
// go through the tunnel's GRO (inner aggregation) instead.
TEST(GroBugs, E1_NoPlainUdpGroForLocalTunnelPort) {
  auto out = run(vx_stream(4, true), vx_fwd());
  for (auto& p : out) EXPECT_EQ(p.gso.type & sg::UDP_L4, 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].gso.type & sg::UDP_TUNNEL_CSUM, 0u);
}

// E2: outer UDP checksum 0 is valid ("not computed"): such VXLAN traffic coalesces.
TEST(GroBugs, E2_ZeroOuterUdpChecksumCoalesces) {
  auto out = run(vx_stream(4, false), vx_fwd());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(out[0].gso.type & sg::UDP_TUNNEL, 0u);
  EXPECT_EQ(out[0].gso.segs, 4);
}

// E8: a locally built tunnel packet (encapsulation set, inner checksum PARTIAL) is never GRO'd
// at the outer UDP level.
TEST(GroBugs, E8_LocallyEncapsulatedPacketNotUdpGroed) {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  ofld::gro::Engine e(o);
  auto f = vx_stream(3, true);
  for (auto& x : f) {
    auto p = Packet::from_bytes(x);
    p.encapsulation = true;
    p.set_partial(84, 16);
    e.receive(std::move(p));
  }
  e.flush_all();
  EXPECT_EQ(e.output().size(), 3u);
  EXPECT_EQ(e.counters().not_merged[std::size_t(GroReason::UdpEncapLocal)], 3u);
}

// E9: UDP carried in GRE: the UDP seed at complete uses the inner IP header (the one directly in
// front of that UDP header), not the outer one.
TEST(GroBugs, E9_InnerUdpSeedUsesInnerAddresses) {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  Frames f;
  for (int i = 0; i < 2; ++i) {
    auto u = udp_frame(false, 300, false, 1500, 8000, 'u', std::uint16_t(i));
    f.push_back(gre(false, 0, 0x0800, {u.begin() + 14, u.end()}, 0, std::uint16_t(i)));
  }
  auto out = run(f, o);
  ASSERT_EQ(out.size(), 1u);
  auto b = out[0].to_bytes();
  const std::size_t inner_ip = 14 + 20 + 4, uoff = inner_ip + 20;
  const auto ps = ofld::csum::csum_tcpudp_nofold(b.data() + inner_ip + 12, b.data() + inner_ip + 16, 608, 17, 0);  // 8 + 2 × 300
  EXPECT_EQ(get16(b.data() + uoff + 6), ofld::csum::csum_fold16(ps));
  EXPECT_EQ(out[0].gso.type, sg::GRE | sg::UDP_L4);
}

// E11: outer IPv4 IDs: random → no merge; fixed → merge and remember (FIXEDID outer);
// incrementing → merge. Inner IDs are checked separately.
TEST(GroBugs, E11_OuterIdsFixedOrIncrementingOnly) {
  EXPECT_EQ(run(vx_stream(4, true, {7, 9001, 33, 12000}), vx_fwd()).size(), 4u);
  auto fixed = run(vx_stream(4, true, {5, 5, 5, 5}), vx_fwd());
  ASSERT_EQ(fixed.size(), 1u);
  EXPECT_NE(fixed[0].gso.type & sg::TCP_FIXEDID_OUTER, 0u);
  EXPECT_EQ(fixed[0].gso.type & sg::TCP_FIXEDID_INNER, 0u);
  auto inc = run(vx_stream(4, true, {5, 6, 7, 8}), vx_fwd());
  ASSERT_EQ(inc.size(), 1u);
  EXPECT_EQ(inc[0].gso.type & sg::TCP_FIXEDID_OUTER, 0u);
}

}  // namespace
