// UDP GRO (U-3..U-12), tunnel GRO (W-1..W-23, V-5), engine rules (G-7, G-8), gro_cells (W-12)
// and the virtio_net_hdr view of aggregates (S-7, S-8). Expected values come from the rules
// (gso types, offsets from header lengths, seeds per C-12) — never from ofld output.
#include <gtest/gtest.h>

#include <algorithm>

#include "gro_test_util.hpp"
#include "ofld/gro/gro_cells.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace {

using namespace ofld::grotest;
using ofld::core::Packet;
namespace sg = ofld::core::skb_gso;
using Frames = std::vector<std::vector<std::uint8_t>>;

ofld::gro::EngineOptions fwd() {
  ofld::gro::EngineOptions o;
  o.config.udp_gro_fwd = true;
  return o;
}

std::uint16_t field16(const Packet& p, std::size_t off) {
  auto b = p.to_bytes();
  return get16(b.data() + off);
}

// ---- UDP ---------------------------------------------------------------------------------

TEST(GroUdp, U9_U11_U12_SegmentModeShortLastCompletes) {
  for (bool v6 : {false, true}) {
    Frames f;
    for (int i = 0; i < 3; ++i) f.push_back(udp_frame(v6, 1000, false, 1500, 8000, 'u', std::uint16_t(i)));
    f.push_back(udp_frame(v6, 500, false, 1500, 8000, 'u', 3));
    auto out = run(f, fwd());
    ASSERT_EQ(out.size(), 1u) << v6;
    const Packet& p = out[0];
    EXPECT_EQ(p.gso.type, sg::UDP_L4);
    EXPECT_EQ(p.gso.size, 1000);
    EXPECT_EQ(p.gso.segs, 4);
    const std::size_t uoff = 14 + (v6 ? 40 : 20);
    EXPECT_EQ(field16(p, uoff + 4), 8 + 3500);  // U-12: UDP len = total
    // C-12 seed: folded, uncomplemented pseudo-header sum for the total length (D6).
    auto ipb = p.to_bytes();
    const ofld::csum::wsum ps =
        v6 ? ofld::csum::csum_ipv6_nofold(ipb.data() + 22, ipb.data() + 38, 3508, 17, 0)
           : ofld::csum::csum_tcpudp_nofold(ipb.data() + 26, ipb.data() + 30, 3508, 17, 0);
    EXPECT_EQ(field16(p, uoff + 6), ofld::csum::csum_fold16(ps));
    const auto* part = std::get_if<ofld::core::CsumPartial>(&p.csum);
    ASSERT_NE(part, nullptr);
    EXPECT_EQ(part->csum_start - p.data_pos(), int(uoff));
    EXPECT_EQ(part->csum_offset, 6);
  }
}

TEST(GroUdp, U9_LongerDatagramStartsNewFlow) {
  auto out = run({udp_frame(false, 500), udp_frame(false, 1000, false, 1500, 8000, 'u', 1)}, fwd());
  EXPECT_EQ(out.size(), 2u);
}

TEST(GroUdp, U11_CountMax64) {
  Frames f;
  for (int i = 0; i < 70; ++i) f.push_back(udp_frame(false, 100, false, 1500, 8000, 'u', std::uint16_t(i)));
  auto out = run(f, fwd());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].gso.segs, 64);
  EXPECT_EQ(out[1].gso.segs, 6);
}

TEST(GroUdp, U5_ZeroChecksumNeverMerged) {
  ofld::gro::Engine e(fwd());
  auto a = udp_frame(false, 100, true), b = udp_frame(false, 100, true, 1500, 8000, 'u', 1);
  e.receive(Packet::from_bytes(a));
  e.receive(Packet::from_bytes(b));
  e.flush_all();
  ASSERT_EQ(e.output().size(), 2u);
  EXPECT_EQ(e.output()[0].to_bytes(), a);
  EXPECT_EQ(e.output()[1].to_bytes(), b);
  EXPECT_EQ(e.counters().not_merged[std::size_t(ofld::offload::GroReason::UdpZeroCsum)], 2u);
}

TEST(GroUdp, U6_PaddedDatagramNotMerged) {
  auto a = udp_frame(false, 10), b = udp_frame(false, 10, false, 1500, 8000, 'u', 1);
  b.resize(80, 0);  // Ethernet padding: IP/UDP lengths shorter than the frame
  auto out = run({a, b}, fwd());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].to_bytes(), b);  // flushed at once, untouched (N-2)
}

TEST(GroUdp, U3_NoGroWithoutSocketOrForwarding) {
  auto out = run({udp_frame(false, 100), udp_frame(false, 100, false, 1500, 8000, 'u', 1)});
  EXPECT_EQ(out.size(), 2u);
  ofld::gro::EngineOptions o;
  o.config.udp_gro_socks = {8000};  // local UDP_GRO socket (U-3, U-13)
  EXPECT_EQ(run({udp_frame(false, 100), udp_frame(false, 100, false, 1500, 8000, 'u', 1)}, o).size(), 1u);
}

// ---- VXLAN ---------------------------------------------------------------------------------

ofld::gro::EngineOptions vx(bool rco = false, bool nopartial = false) {
  ofld::gro::EngineOptions o;
  o.config.udp_tunnels.push_back({4789, 4789, rco, nopartial});
  return o;
}

Frames vxlan_stream(bool ov6, bool iv6, int n, bool csum = true, std::uint32_t vni = 42) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.v6 = iv6;
    t.seq_off = 100u * unsigned(i);
    f.push_back(vxlan(ov6, tcp_frame(t), vni, csum, std::uint16_t(i)));
  }
  return f;
}

TEST(GroTunnel, U12_W3_W18_VxlanAggregateRecordsTunnelTypeAndOffsets) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (bool csum : {true, false}) {
        auto out = run(vxlan_stream(ov6, iv6, 3, csum), vx());
        ASSERT_EQ(out.size(), 1u) << ov6 << iv6 << csum;
        const Packet& p = out[0];
        const std::uint32_t want = (csum ? sg::UDP_TUNNEL_CSUM : sg::UDP_TUNNEL) |
                                   (iv6 ? sg::TCPV6 : sg::TCPV4);
        EXPECT_EQ(p.gso.type & ~(sg::TCP_FIXEDID | sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID_INNER), want);
        EXPECT_EQ(p.gso.segs, 3);
        EXPECT_EQ(p.gso.size, 100);
        EXPECT_TRUE(p.encapsulation);
        const int inner_mac = 14 + (ov6 ? 40 : 20) + 8 + 8;
        EXPECT_EQ(p.inner_mac_header - p.data_pos(), inner_mac);
        EXPECT_EQ(p.inner_network_header - p.data_pos(), inner_mac + 14);
        EXPECT_EQ(p.inner_transport_header - p.data_pos(), inner_mac + 14 + (iv6 ? 40 : 20));
        EXPECT_EQ(p.transport_header - p.data_pos(), 14 + (ov6 ? 40 : 20));
        const auto* part = std::get_if<ofld::core::CsumPartial>(&p.csum);
        ASSERT_NE(part, nullptr);
        EXPECT_EQ(part->csum_start, p.inner_transport_header);
        EXPECT_EQ(part->csum_offset, 16);
      }
}

TEST(GroTunnel, W16_V5_VniAndRcoByteAreFlowKeys) {
  Tcp a, b;
  b.seq_off = 100;
  EXPECT_EQ(run({vxlan(false, tcp_frame(a), 42, true, 0), vxlan(false, tcp_frame(b), 43, true, 1)}, vx()).size(), 2u);
  // Same VNI, RCO bytes differ (receiver without remcsum_rx: the byte is only a key).
  EXPECT_EQ(run({vxlan(false, tcp_frame(a), 42, true, 0, 0x11), vxlan(false, tcp_frame(b), 42, true, 1, 0x12)}, vx()).size(), 2u);
  EXPECT_EQ(run({vxlan(false, tcp_frame(a), 42, true, 0, 0x11), vxlan(false, tcp_frame(b), 42, true, 1, 0x11)}, vx()).size(), 1u);
}

TEST(GroTunnel, W1_NoTunnelSocketMeansNoInnerGro) {
  // Without a VXLAN socket the datagrams are plain UDP without UDP_GRO: not merged (U-3).
  EXPECT_EQ(run(vxlan_stream(false, false, 3)).size(), 3u);
}

// RCO frames as a VXLAN RCO sender builds them (V-1..V-3): inner TCP field = pseudo seed.
Frames rco_stream(int n) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    auto in = tcp_frame(t);
    const std::uint32_t tcplen = std::uint32_t(in.size() - 34);
    put16(in, 34 + 16, ofld::csum::csum_fold16(ofld::csum::csum_tcpudp_nofold(in.data() + 26, in.data() + 30, tcplen, 6, 0)));
    f.push_back(vxlan(false, in, 42, true, std::uint16_t(i), 34 / 2, true));
  }
  return f;
}

TEST(GroTunnel, W22_RcoPartialModeTreatsInnerChecksumVerified) {
  auto out = run(rco_stream(3), vx(true, false));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 3);
  // W-24: TUNNEL_REMCSUM is not set on GRO-built aggregates.
  EXPECT_EQ(out[0].gso.type & sg::TUNNEL_REMCSUM, 0u);
}

TEST(GroTunnel, W22_W23_F1_RcoNoPartialLeavesForwardedPacketByteIdentical) {
  auto f = rco_stream(2);
  auto out = run({f[0]}, vx(true, true));  // held alone, delivered (forwarded) untouched
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_bytes(), f[0]);
  auto agg = run(f, vx(true, true));
  ASSERT_EQ(agg.size(), 1u);
  EXPECT_EQ(agg[0].gso.segs, 2);
}

TEST(GroTunnel, BugF3_RcoWithHeadersSplitAtEveryBoundary) {
  auto f = rco_stream(2);
  for (std::size_t split = 1; split < 50 + 34 + 18; ++split) {
    for (bool nopartial : {false, true}) {
      ofld::gro::EngineOptions o = vx(true, nopartial);
      o.batch = 1000;
      ofld::gro::Engine e(o);
      e.receive(Packet::from_bytes_frags(f[0], split));
      e.flush_all();
      ASSERT_EQ(e.output().size(), 1u);
      EXPECT_EQ(e.output()[0].to_bytes(), f[0]) << split;
      ofld::gro::Engine e2(o);
      e2.receive(Packet::from_bytes_frags(f[0], split));
      e2.receive(Packet::from_bytes_frags(f[1], split));
      e2.flush_all();
      ASSERT_EQ(e2.output().size(), 1u) << split;
      EXPECT_EQ(e2.output()[0].gso.segs, 2) << split;
    }
  }
}

// ---- GRE, GUE, IP-in-IP --------------------------------------------------------------------

Frames gre_stream(bool ov6, std::uint16_t flags, int n) {
  Frames f;
  for (int i = 0; i < n; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    f.push_back(gre(ov6, flags, 0x0800, ip_only(t), 7, std::uint16_t(i)));
  }
  return f;
}

TEST(GroTunnel, W5_W9_W11_GreKeyAndCsumAcceptedSeqRefused) {
  for (bool ov6 : {false, true}) {
    for (std::uint16_t fl : {0x0000, 0x2000, 0x8000, 0xA000}) {
      auto out = run(gre_stream(ov6, fl, 3));
      ASSERT_EQ(out.size(), 1u) << ov6 << " " << fl;
      EXPECT_EQ(out[0].gso.type & ~(sg::TCP_FIXEDID | sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID_INNER),
                sg::GRE | sg::TCPV4);  // never GRE_CSUM (W-11)
      EXPECT_TRUE(out[0].encapsulation);
    }
    EXPECT_EQ(run(gre_stream(ov6, 0x1000, 3)).size(), 3u);  // S
    EXPECT_EQ(run(gre_stream(ov6, 0x4000, 3)).size(), 3u);  // R
  }
  // Different keys → different flows.
  Tcp a, b;
  b.seq_off = 100;
  EXPECT_EQ(run({gre(false, 0x2000, 0x0800, ip_only(a), 1, 0), gre(false, 0x2000, 0x0800, ip_only(b), 2, 1)}).size(), 2u);
}

TEST(GroTunnel, W1_NestedTunnelNotMerged) {
  // VXLAN inside GRE: the second tunnel layer is refused in the same pass.
  Frames f;
  for (int i = 0; i < 3; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    auto v = vxlan(false, tcp_frame(t), 42, true, std::uint16_t(i));
    f.push_back(gre(false, 0, 0x0800, {v.begin() + 14, v.end()}, 0, std::uint16_t(i)));
  }
  ofld::gro::Engine e(vx());
  for (auto& x : f) e.receive(Packet::from_bytes(x));
  e.flush_all();
  EXPECT_EQ(e.output().size(), 3u);
  EXPECT_EQ(e.counters().not_merged[std::size_t(ofld::offload::GroReason::TunnelNested)], 3u);
}

std::vector<std::uint8_t> gue_frame(const std::vector<std::uint8_t>& inner_ip, std::uint16_t id,
                                    std::vector<std::uint8_t> opts = {}, std::uint16_t flags = 0) {
  std::vector<std::uint8_t> g(4);
  g[0] = std::uint8_t(opts.size() / 4);
  g[1] = 4;  // IPIP
  put16(g, 2, flags);
  g.insert(g.end(), opts.begin(), opts.end());
  g.insert(g.end(), inner_ip.begin(), inner_ip.end());
  return outer(false, 17, udp_l4(false, 40000, 6080, g, true), id);
}

ofld::gro::EngineOptions gue_cfg(bool nopartial = false) {
  ofld::gro::EngineOptions o;
  o.config.udp_tunnels.push_back({6080, 6080, true, nopartial});
  return o;
}

TEST(GroTunnel, W20_W21_GueMergesAndRecordsIpxip4) {
  Frames f;
  for (int i = 0; i < 3; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    f.push_back(gue_frame(ip_only(t), std::uint16_t(i)));
  }
  auto out = run(f, gue_cfg());
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type & ~(sg::TCP_FIXEDID | sg::TCP_FIXEDID_OUTER | sg::TCP_FIXEDID_INNER),
            sg::UDP_TUNNEL_CSUM | sg::IPXIP4 | sg::TCPV4);
  // V-9: an unknown standard flag → not merged.
  Frames bad;
  for (int i = 0; i < 3; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    bad.push_back(gue_frame(ip_only(t), std::uint16_t(i), {}, 0x0002));
  }
  EXPECT_EQ(run(bad, gue_cfg()).size(), 3u);
}

TEST(GroTunnel, W21_W22_GueRcoOption) {
  for (bool nopartial : {false, true}) {
    Frames f;
    for (int i = 0; i < 2; ++i) {
      Tcp t;
      t.seq_off = 100u * unsigned(i);
      auto ip = ip_only(t);
      put16(ip, 20 + 16, ofld::csum::csum_fold16(ofld::csum::csum_tcpudp_nofold(ip.data() + 12, ip.data() + 16, std::uint32_t(ip.size() - 20), 6, 0)));
      // private flags word (REMCSUM) + RCO option: start 20, offset 36 (V-8)
      f.push_back(gue_frame(ip, std::uint16_t(i), {0x80, 0, 0, 0, 0, 20, 0, 36}, 0x0001));
    }
    auto single = run({f[0]}, gue_cfg(nopartial));
    ASSERT_EQ(single.size(), 1u);
    EXPECT_EQ(single[0].to_bytes(), f[0]);  // W-23
    EXPECT_EQ(run(f, gue_cfg(nopartial)).size(), 1u) << nopartial;
  }
}

TEST(GroTunnel, W4_E12_SitInnerIpv6CoalescesWithFixedOuterId) {
  Frames f;
  for (int i = 0; i < 3; ++i) {
    Tcp t;
    t.v6 = true;
    t.seq_off = 100u * unsigned(i);
    f.push_back(outer(false, 41, ip_only(t), 0));  // outer ID fixed at 0
  }
  auto out = run(f);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type & (sg::IPXIP4 | sg::TCPV6), sg::IPXIP4 | sg::TCPV6);
  EXPECT_EQ(out[0].gso.segs, 3);
}

// ---- engine --------------------------------------------------------------------------------

TEST(GroEngine, G8_SingleHeldPacketDeliveredUntouched) {
  Tcp t;
  auto f = tcp_frame(t);
  auto out = run({f});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_bytes(), f);
  EXPECT_FALSE(out[0].is_gso());
}

TEST(GroEngine, G7_NinthFlowInBucketEvictsOldest) {
  std::vector<std::uint16_t> ports;
  std::uint32_t bucket = 99;
  for (std::uint16_t sp = 1000; ports.size() < 9; ++sp) {
    Tcp t;
    t.sport = sp;
    const auto fr = tcp_frame(t);
    const std::uint32_t b = ofld::gro::flow_hash(fr, ofld::gro::LinkLayer::Ethernet) & 7;
    if (bucket == 99) bucket = b;
    if (b == bucket) ports.push_back(sp);
  }
  ofld::gro::EngineOptions o;
  o.config.flow_hash_key = 0;  // the key flow_hash() used above (its default)
  ofld::gro::Engine e(o);
  for (auto sp : ports) {
    Tcp t;
    t.sport = sp;
    e.receive(Packet::from_bytes(tcp_frame(t)));
  }
  EXPECT_EQ(e.counters().completed[std::size_t(ofld::offload::GroReason::TableFull)], 1u);
  ASSERT_EQ(e.output().size(), 1u);
  Tcp first;
  first.sport = ports[0];
  EXPECT_EQ(e.output()[0].to_bytes(), tcp_frame(first));  // the oldest
}

TEST(GroEngine, G9_FlushTimeoutKeepsYoungFlows) {
  ofld::gro::EngineOptions o;
  o.flush_timeout_ns = 1000;
  o.batch = 2;
  ofld::gro::Engine e(o);
  Tcp a, b;
  b.seq_off = 100;
  e.receive(Packet::from_bytes(tcp_frame(a)), 0);
  e.receive(Packet::from_bytes(tcp_frame(b)), 10);  // poll end at t=10: flow is 10 ns old
  EXPECT_EQ(e.output().size(), 0u);
  e.tick(1000);
  ASSERT_EQ(e.output().size(), 1u);
  EXPECT_EQ(e.counters().completed[std::size_t(ofld::offload::GroReason::Timeout)], 1u);
}

TEST(GroEngine, S7_S8_AggregateAsVirtioNetHdr) {
  for (bool v6 : {false, true}) {
    Tcp a, b;
    a.v6 = b.v6 = v6;
    b.seq_off = 100;
    auto out = run({tcp_frame(a), tcp_frame(b)});
    ASSERT_EQ(out.size(), 1u);
    auto h = ofld::offload::virtio::from_packet(out[0]);
    ASSERT_TRUE(h);
    EXPECT_EQ(h->gso_type, v6 ? 4 : 1);  // V-20
    EXPECT_EQ(h->gso_size, 100);
    EXPECT_EQ(h->flags, 1);  // NEEDS_CSUM
    EXPECT_EQ(h->csum_start, v6 ? 54 : 34);
    EXPECT_EQ(h->csum_offset, 16);
  }
}

TEST(GroEngine, W12_GroCellsAggregatesDecapsulatedIpv6GreInner) {
  // ip6gre: inner frames are IP packets (RawIp link).
  ofld::gro::GroCellsOptions o;
  o.engine.link = ofld::gro::LinkLayer::RawIp;
  ofld::gro::GroCells cells(o);
  for (int i = 0; i < 4; ++i) {
    Tcp t;
    t.v6 = true;
    t.seq_off = 100u * unsigned(i);
    EXPECT_TRUE(cells.receive(Packet::from_bytes(ip_only(t))));
  }
  EXPECT_EQ(cells.poll(), 4u);
  auto out = cells.take_output();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.type, sg::TCPV6);
  EXPECT_EQ(out[0].gso.segs, 4);
  cells.set_up(false);
  EXPECT_FALSE(cells.receive(Packet::from_bytes(ip_only(Tcp{}))));
  EXPECT_EQ(cells.counters().dropped_down, 1u);
}

// W-12 from inside the cell's NAPI context (receive_polled, what the endpoint uses): each
// frame through GRO at once gives what queueing and one poll give — the kernel's GRO flushes
// only at poll end — in the same order, with frames already waiting in the backlog first.
// Four segments of one flow, then one of a second flow, then a fifth of the first: two
// aggregates (five and one segments) either way; a frame while the device is down is dropped.
TEST(GroEngine, W12_GroCellsReceivePolledEqualsQueueThenPoll) {
  ofld::gro::GroCellsOptions o;
  o.engine.link = ofld::gro::LinkLayer::RawIp;
  auto frames = [] {
    std::vector<Packet> v;
    for (int i = 0; i < 6; ++i) {
      Tcp t;
      t.v6 = true;
      t.seq_off = 100u * unsigned(i < 4 ? i : i == 4 ? 0 : 4);
      if (i == 4) t.sport = 1234;  // another flow
      v.push_back(Packet::from_bytes(ip_only(t)));
    }
    return v;
  };
  ofld::gro::GroCells queued(o), polled(o);
  for (auto& p : frames()) EXPECT_TRUE(queued.receive(std::move(p)));
  queued.poll(SIZE_MAX);
  auto v = frames();
  EXPECT_TRUE(polled.receive(std::move(v[0])));  // one waits in the backlog: it goes first
  for (std::size_t i = 1; i < v.size(); ++i) EXPECT_TRUE(polled.receive_polled(std::move(v[i])));
  polled.poll(SIZE_MAX);
  // Within a flow the order is the arrival order; across flows the poll end flushes by hash
  // bucket, and each engine's flow hash is seeded on its own: compare the flows as a set.
  auto flows = [](const std::vector<Packet>& v) {
    std::vector<std::pair<int, std::vector<std::uint8_t>>> r;
    for (const auto& p : v) r.emplace_back(p.is_gso() ? int(p.gso.segs) : 1, p.to_bytes());
    std::sort(r.begin(), r.end());
    return r;
  };
  const auto a = flows(queued.output());
  const auto b = flows(polled.output());
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(b, a);
  EXPECT_EQ(a[0].first, 1);  // the second flow's one segment, alone
  EXPECT_EQ(a[1].first, 5);  // the first flow's five segments, merged
  EXPECT_EQ(polled.counters().queued, 6u);
  polled.set_up(false);
  EXPECT_FALSE(polled.receive_polled(Packet::from_bytes(ip_only(Tcp{}))));
  EXPECT_EQ(polled.counters().dropped_down, 1u);
}

}  // namespace
