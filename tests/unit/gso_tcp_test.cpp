// TCP GSO over IPv4/IPv6: the worked example of spec §4.9b, the per-segment rules,
// the three construction modes X-7..X-9, IPv6 extension headers (X-27, K-8), errors X-19,
// Expected values come from the spec text and the RFC checksum definition.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"
#include "ofld/gso/gso.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
using wire::load_be16;
using wire::load_be32;

namespace {

struct Seg {
  Bytes b;
  core::IpSummed summed;
};

std::vector<Seg> run(core::Packet p, core::Features f, gso::GsoCounters* c = nullptr,
                     gso::GsoResult* out = nullptr) {
  auto dev = device(f);
  gso::GsoResult r = gso::gso_segment(std::move(p), f, dev, c);
  std::vector<Seg> v;
  for (auto& s : r.segs) v.push_back({s.to_bytes(), s.ip_summed()});
  if (out) *out = std::move(r);
  return v;
}

constexpr std::size_t kIp = 14, kTcp = 34;

}  // namespace

// §4.9b: IPv4 ID 1000, DF, ACK|PSH|CWR, payload 3000, gso_size 1448, device SG+HW_CSUM.
TEST(GsoTcp, X21_X25_WorkedExample_SgHwCsum) {
  TcpSpec s;
  s.flags = 0x10 | 0x08 | 0x80;
  Bytes f = tcp_frame(s);
  auto segs = run(prepare(f, 1448), nf::SG | nf::HW_CSUM);
  ASSERT_EQ(segs.size(), 3u);
  const std::size_t pay[3] = {1448, 1448, 104};
  const std::uint16_t tot[3] = {1488, 1488, 144};
  for (int i = 0; i < 3; ++i) {
    const Bytes& b = segs[i].b;
    ASSERT_EQ(b.size(), kTcp + 20 + pay[i]);
    EXPECT_EQ(load_be16(&b[kIp + 2]), tot[i]);
    EXPECT_EQ(load_be16(&b[kIp + 4]), 1000 + i);
    EXPECT_EQ(load_be32(&b[kTcp + 4]), s.seq + 1448u * i);
    const std::uint8_t fl = b[kTcp + 13];
    EXPECT_EQ((fl & 0x80) != 0, i == 0) << "CWR only on #1";
    EXPECT_EQ((fl & 0x08) != 0, i == 2) << "PSH only on #3";
    EXPECT_TRUE(fl & 0x10);
    // each TCP field holds the pseudo seed for its own length and stays PARTIAL
    EXPECT_EQ(load_be16(&b[kTcp + 16]), pseudo_only(&b[kIp], false, 20 + pay[i], 6));
    EXPECT_EQ(segs[i].summed, core::IpSummed::Partial);
    EXPECT_EQ(csum::ip_compute_csum(&b[kIp], 20), 0) << "IPv4 header checksum valid";
    // payload bytes are the original's, in order
    EXPECT_TRUE(std::equal(b.begin() + kTcp + 20, b.end(), f.begin() + kTcp + 20 + 1448 * i));
  }
}

TEST(GsoTcp, X24_WorkedExample_FixedId) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  core::Packet p = prepare(f, 1448);
  p.gso.type |= core::skb_gso::TCP_FIXEDID;
  auto segs = run(std::move(p), nf::SG | nf::HW_CSUM);
  ASSERT_EQ(segs.size(), 3u);
  for (auto& sg : segs) EXPECT_EQ(load_be16(&sg.b[kIp + 4]), 1000);
}

// §4.9b last sentence: without IPv4 checksum support every TCP checksum is finished.
TEST(GsoTcp, X9_X15_NoCsumFeature_ChecksumsFinishedStateNone) {
  TcpSpec s;
  s.flags = 0x10 | 0x08 | 0x01;
  Bytes f = tcp_frame(s);
  auto segs = run(prepare(f, 1448), nf::SG);
  ASSERT_EQ(segs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const Bytes& b = segs[i].b;
    EXPECT_EQ(segs[i].summed, core::IpSummed::None);
    EXPECT_TRUE(l4_valid(&b[kIp], false, &b[kTcp], b.size() - kTcp, 6)) << i;
    EXPECT_EQ((b[kTcp + 13] & 0x01) != 0, i == 2) << "FIN only on the last";
  }
}

// X-24 [newer] (spec §1.2, §4.5; 6.18 is the judge, K-rules): DF clear no longer makes
// TCP_FIXEDID an error; every segment keeps the super-packet's ID (spec §4.9b: "all 1000 if
// TCP_FIXEDID").
TEST(GsoTcp, X24_FixedIdWithoutDfKeepsTheId) {
  TcpSpec s;
  s.df = false;
  const Bytes f = tcp_frame(s);
  const std::uint16_t id0 = std::uint16_t(f[kIp + 4] << 8 | f[kIp + 5]);
  core::Packet p = prepare(f, 1448);
  p.gso.type |= core::skb_gso::TCP_FIXEDID;
  gso::GsoCounters c;
  gso::GsoResult r;
  run(std::move(p), nf::SG, &c, &r);
  ASSERT_TRUE(r.ok()) << offload::to_string(r.reason);
  ASSERT_GE(r.segs.size(), 2u);
  for (const auto& seg : r.segs) {
    const Bytes b = seg.to_bytes();
    EXPECT_EQ(std::uint16_t(b[kIp + 4] << 8 | b[kIp + 5]), id0);
    EXPECT_EQ(b[kIp + 6] & 0x40, 0) << "DF stays clear";
  }
  EXPECT_EQ(c.errors[std::size_t(gso::GsoReason::FixedIdWithoutDf)], 0u);
}

TEST(GsoTcp, X19_PayloadNotAboveMssRejected) {
  TcpSpec s;
  s.payload = 1448;
  core::Packet p = prepare(tcp_frame(s), 1000);
  p.gso.size = 1448;  // payload == mss
  gso::GsoResult r;
  run(std::move(p), nf::SG, nullptr, &r);
  EXPECT_EQ(r.reason, gso::GsoReason::NothingToSegment);
}

TEST(GsoTcp, X20_DeviceWithTsoOnlyVerifiesHeaders) {
  TcpSpec s;
  core::Packet p = prepare(tcp_frame(s), 1448);
  gso::GsoResult r;
  auto segs = run(std::move(p), nf::SG | nf::HW_CSUM | nf::TSO, nullptr, &r);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.hw);
  ASSERT_EQ(r.segs.size(), 1u);
  EXPECT_EQ(r.segs[0].gso.segs, 3);  // ceil(3000/1448)
  EXPECT_EQ(r.segs[0].len(), 14u + 20 + 20 + 3000);
}

// X-7..X-9: the three construction modes, visible in counters; SG references the buffer.
TEST(GsoTcp, X7_SgModeReferencesOriginalBuffers) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  wire::ParseOptions po;
  auto l = wire::parse_frame(f, wire::LinkType::Ethernet, po);
  ASSERT_TRUE(l);
  gso::PrepareOptions o;
  o.gso_size = 1448;
  o.frag_size = 4096;
  core::Packet p = gso::prepare_frame(f, l.value(), o).pkt;
  ASSERT_EQ(p.nr_frags(), 1u);
  const core::Buffer* orig = p.frags()[0].buf.get();
  auto dev = device(nf::SG | nf::HW_CSUM);
  gso::GsoCounters c;
  auto r = gso::gso_segment(std::move(p), dev.features, dev, &c);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r.segs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(r.segs[i].nr_frags(), 1u);
    EXPECT_EQ(r.segs[i].frags()[0].buf.get(), orig) << "payload is referenced, not copied";
    EXPECT_EQ(r.segs[i].frags()[0].off, 1448u * i);
    EXPECT_EQ(r.segs[i].headlen(), 54u);
  }
  EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::SgRef)], 3u);
  EXPECT_EQ(c.payload_bytes_referenced, 3000u);
  EXPECT_EQ(c.payload_bytes_copied, 0u);
  EXPECT_EQ(c.sg_sum, 0u);
}

TEST(GsoTcp, X8_NoSgWithCsumPlainCopyStaysPartial) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  gso::GsoCounters c;
  auto segs = run(prepare(f, 1448), nf::HW_CSUM, &c);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::Copy)], 3u);
  EXPECT_EQ(c.payload_bytes_copied, 3000u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(segs[i].summed, core::IpSummed::Partial) << "Kishore rule: no sum computed";
    const Bytes& b = segs[i].b;
    EXPECT_EQ(load_be16(&b[kTcp + 16]), pseudo_only(&b[kIp], false, b.size() - kTcp, 6));
  }
}

TEST(GsoTcp, X8_NeitherSgNorCsumCopyAndSum) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  gso::GsoCounters c;
  auto segs = run(prepare(f, 1448), core::Features{}, &c);
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::CopySum)], 3u);
  for (auto& sg : segs) {
    EXPECT_EQ(sg.summed, core::IpSummed::None);
    EXPECT_TRUE(l4_valid(&sg.b[kIp], false, &sg.b[kTcp], sg.b.size() - kTcp, 6));
  }
}

TEST(GsoTcp, X9_SgWithoutCsumSumsAfterReferencing) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  auto l = wire::parse_frame(f, wire::LinkType::Ethernet, {});
  gso::PrepareOptions o;
  o.gso_size = 1448;
  o.frag_size = 1000;  // odd boundaries inside segments
  core::Packet p = gso::prepare_frame(f, l.value(), o).pkt;
  auto dev = device(nf::SG);
  gso::GsoCounters c;
  auto r = gso::gso_segment(std::move(p), dev.features, dev, &c);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(c.sg_sum, 3u);
  for (auto& sg : r.segs) {
    Bytes b = sg.to_bytes();
    EXPECT_EQ(sg.ip_summed(), core::IpSummed::None);
    EXPECT_TRUE(l4_valid(&b[kIp], false, &b[kTcp], b.size() - kTcp, 6));
  }
}

// options copied unchanged to every segment; ack/window unchanged.
TEST(GsoTcp, X21_OptionsAckWindowCopied) {
  TcpSpec s;
  s.tcp_options = {1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 9};  // NOP NOP TS(5, 9)
  s.payload = 5000;
  Bytes f = tcp_frame(s);
  auto segs = run(prepare(f, 1000), core::Features{});
  ASSERT_EQ(segs.size(), 5u);
  for (auto& sg : segs) {
    EXPECT_EQ((sg.b[kTcp + 12] >> 4) * 4, 32);
    EXPECT_TRUE(std::equal(s.tcp_options.begin(), s.tcp_options.end(), sg.b.begin() + kTcp + 20));
    EXPECT_EQ(load_be32(&sg.b[kTcp + 8]), s.ack);
    EXPECT_EQ(load_be16(&sg.b[kTcp + 14]), 502);
    EXPECT_TRUE(l4_valid(&sg.b[kIp], false, &sg.b[kTcp], sg.b.size() - kTcp, 6));
  }
}

TEST(GsoTcp, X25_IdWrapsAt65535) {
  TcpSpec s;
  s.ip_id = 65535;
  auto segs = run(prepare(tcp_frame(s), 1448), core::Features{});
  ASSERT_EQ(segs.size(), 3u);
  EXPECT_EQ(load_be16(&segs[0].b[kIp + 4]), 65535);
  EXPECT_EQ(load_be16(&segs[1].b[kIp + 4]), 0);
  EXPECT_EQ(load_be16(&segs[2].b[kIp + 4]), 1);
}

TEST(GsoTcp, X27_Ipv6PayloadLengthAndChecksums) {
  TcpSpec s;
  s.v6 = true;
  s.flags = 0x10 | 0x08;
  auto segs = run(prepare(tcp_frame(s), 1448), core::Features{});
  ASSERT_EQ(segs.size(), 3u);
  const std::size_t t6 = 54;
  const std::size_t pay[3] = {1448, 1448, 104};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(load_be16(&segs[i].b[kIp + 4]), 20 + pay[i]);
    EXPECT_TRUE(l4_valid(&segs[i].b[kIp], true, &segs[i].b[t6], 20 + pay[i], 6));
    EXPECT_EQ(load_be32(&segs[i].b[t6 + 4]), s.seq + 1448u * i);
  }
}

// K-8: an IPv6 hop-by-hop header is copied into every segment.
TEST(GsoTcp, K8_Ipv6HopByHopCopiedIntoEverySegment) {
  TcpSpec s;
  s.v6 = true;
  s.v6_ext_type = 0;                             // HBH
  s.v6_ext = {6, 0, 1, 4, 0, 0, 0, 0};            // next TCP, len 0, PadN(4)
  Bytes f = tcp_frame(s);
  auto segs = run(prepare(f, 1448), core::Features{});
  ASSERT_EQ(segs.size(), 3u);
  for (auto& sg : segs) {
    EXPECT_EQ(sg.b[kIp + 6], 0) << "next header stays HBH";
    EXPECT_TRUE(std::equal(s.v6_ext.begin(), s.v6_ext.end(), sg.b.begin() + 54));
    const std::size_t t = 62;
    EXPECT_EQ(load_be16(&sg.b[kIp + 4]), sg.b.size() - 54);
    EXPECT_TRUE(l4_valid(&sg.b[kIp], true, &sg.b[t], sg.b.size() - t, 6));
  }
}

// csum_start must be the TCP header.
TEST(GsoTcp, X16_CsumStartNotTransportHeaderRejected) {
  TcpSpec s;
  core::Packet p = prepare(tcp_frame(s), 1448);
  p.csum = core::CsumPartial{core::pos_t(kTcp + 4), 16, false};
  gso::GsoResult r;
  run(std::move(p), core::Features{}, nullptr, &r);
  EXPECT_EQ(r.reason, gso::GsoReason::CsumStartMismatch);
}

// not PARTIAL on entry → seed computed (input checksum field ignored).
TEST(GsoTcp, X17_NotPartialIsReseeded) {
  TcpSpec s;
  Bytes f = tcp_frame(s);
  core::Packet p = prepare(f, 1448);
  p.csum = core::CsumNone{};
  wire::store_be16(p.data() + kTcp + 16, 0xdead);  // garbage
  auto segs = run(std::move(p), core::Features{});
  ASSERT_EQ(segs.size(), 3u);
  for (auto& sg : segs) EXPECT_TRUE(l4_valid(&sg.b[kIp], false, &sg.b[kTcp], sg.b.size() - kTcp, 6));
}

TEST(GsoTcp, X16_Tcpv6GsoTypeOnIpv4Rejected) {
  TcpSpec s;
  core::Packet p = prepare(tcp_frame(s), 1448);
  p.gso.type = core::skb_gso::TCPV6;
  gso::GsoResult r;
  run(std::move(p), core::Features{}, nullptr, &r);
  EXPECT_EQ(r.reason, gso::GsoReason::BadGsoType);
}
