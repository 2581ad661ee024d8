// IP-in-IP GSO (spec X-34): IPIP and SIT over IPv4 (SKB_GSO_IPXIP4), IP4IP6 and IP6IP6 over
// IPv6 (SKB_GSO_IPXIP6). Expected values: outer/inner lengths and IDs by X-25/X-27 (outer IDs
// always advance in 6.12, X-24), checksums by the RFC definition (RFC 791 header checksum,
// RFC 9293/8200 pseudo header), feature rules X-5 (IP-protocol inner: the checksum feature is
// judged on the OUTER ethertype) and X-23 (nested header: hw_enc_features).
#include <gtest/gtest.h>

#include "gso_test_util.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
namespace sg = core::skb_gso;
using wire::load_be16;
using wire::load_be32;

namespace {

struct IpipGeo {
  bool ov6, iv6;
  std::size_t iip() const { return 14 + (ov6 ? 40 : 20); }
  std::size_t il4() const { return iip() + (iv6 ? 40 : 20); }
  std::size_t pay() const { return il4() + 20; }
};

// Every rule-derived property of one IP-in-IP segment train.
void check_ipip_train(const Bytes& f, const std::vector<core::Packet>& segs, const IpipGeo& g,
                      std::size_t mss, std::size_t payload, std::uint32_t seq0,
                      bool inner_fixed_id = false) {
  ASSERT_EQ(segs.size(), (payload + mss - 1) / mss);
  std::size_t off = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "segment " << i);
    Bytes b = segs[i].to_bytes();
    const std::size_t pl = std::min(mss, payload - off);
    ASSERT_EQ(b.size(), g.pay() + pl);
    if (!g.ov6) {  // X-25 outer: tot_len actual, ID original + i (X-24: outer always advances)
      EXPECT_EQ(load_be16(&b[14 + 2]), b.size() - 14);
      EXPECT_EQ(load_be16(&b[14 + 4]), 0x4000 + i);
      EXPECT_EQ(csum::ip_compute_csum(&b[14], 20), 0);
      EXPECT_EQ(b[14 + 9], g.iv6 ? 41 : 4);
    } else {  // X-27 outer payload_len
      EXPECT_EQ(load_be16(&b[14 + 4]), b.size() - 54);
      EXPECT_EQ(b[14 + 6], g.iv6 ? 41 : 4);
    }
    if (!g.iv6) {
      EXPECT_EQ(load_be16(&b[g.iip() + 2]), b.size() - g.iip());
      EXPECT_EQ(load_be16(&b[g.iip() + 4]), inner_fixed_id ? 1000 : 1000 + i);
      EXPECT_EQ(csum::ip_compute_csum(&b[g.iip()], 20), 0);
    } else {
      EXPECT_EQ(load_be16(&b[g.iip() + 4]), b.size() - g.iip() - 40);
    }
    EXPECT_EQ(load_be32(&b[g.il4() + 4]), seq0 + std::uint32_t(mss * i));
    EXPECT_TRUE(l4_valid(&b[g.iip()], g.iv6, &b[g.il4()], b.size() - g.il4(), 6)) << "inner TCP";
    EXPECT_TRUE(std::equal(b.begin() + std::ptrdiff_t(g.pay()), b.end(),
                           f.begin() + std::ptrdiff_t(g.pay() + off)));
    off += pl;
  }
}

}  // namespace

// all four families — IPIP (4 in 4), SIT (6 in 4), IP4IP6 (4 in 6), IP6IP6 (6 in 6) —
// in every construction mode; gso_type carries the outer family's bit.
TEST(GsoIpip, X34_AllFamiliesAllModes) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (core::Features feat : {core::Features{}, nf::SG, nf::SG | nf::HW_CSUM}) {
        SCOPED_TRACE(testing::Message() << "outer v6 " << ov6 << " inner v6 " << iv6
                                        << " features " << feat.bits);
        TcpSpec s;
        s.v6 = iv6;
        s.payload = 4000;
        Bytes f = ipip_encap(tcp_frame(s), ov6);
        core::Packet p = prepare(f, 1400);
        ASSERT_TRUE(p.is_gso());
        EXPECT_EQ(p.gso.type & (sg::IPXIP4 | sg::IPXIP6), ov6 ? sg::IPXIP6 : sg::IPXIP4);
        EXPECT_TRUE(p.encapsulation);
        auto r = gso::gso_segment(std::move(p), feat, device(feat));
        ASSERT_TRUE(r.ok()) << offload::to_string(r.reason);
        // With HW_CSUM the inner TCP stays PARTIAL (seed): finish it as the device would.
        for (auto& seg : r.segs) {
          if (seg.ip_summed() == core::IpSummed::Partial) {
            seg.linearize();
            ASSERT_EQ(core::checksum_help(seg), core::PacketError::Ok);
          }
        }
        check_ipip_train(f, r.segs, {ov6, iv6}, 1400, 4000, s.seq);
      }
}

// the gso_type must name IP-in-IP for the OUTER family: none, or the other family's
// bit, is refused with a counted reason (the kernel's -EINVAL).
TEST(GsoIpip, X34_WrongOrMissingIpxipBitRefused) {
  for (bool ov6 : {false, true}) {
    TcpSpec s;
    Bytes f = ipip_encap(tcp_frame(s), ov6);
    for (std::uint32_t bit : {0u, ov6 ? sg::IPXIP4 : sg::IPXIP6}) {
      core::Packet p = prepare(f, 1400);
      p.gso.type = (p.gso.type & ~(sg::IPXIP4 | sg::IPXIP6)) | bit;
      gso::GsoCounters c;
      auto r = gso::gso_segment(std::move(p), {}, device({}), &c);
      EXPECT_EQ(r.reason, gso::GsoReason::BadGsoType);
      EXPECT_EQ(c.errors[std::size_t(gso::GsoReason::BadGsoType)], 1u);
    }
  }
}

// FIXEDID applies to the inner header only (DF set there); outer IDs still advance.
TEST(GsoIpip, X24_InnerFixedIdOuterAdvances) {
  TcpSpec s;
  Bytes f = ipip_encap(tcp_frame(s), false);
  core::Packet p = prepare(f, 1000);
  p.gso.type |= sg::TCP_FIXEDID;
  auto r = gso::gso_segment(std::move(p), {}, device({}));
  ASSERT_TRUE(r.ok());
  check_ipip_train(f, r.segs, {false, false}, 1000, 3000, s.seq, /*inner_fixed_id=*/true);
}

// X-5 for an IP-protocol inner: skb->protocol stays the outer ethertype, so the checksum
// feature is judged on the OUTER family. SIT (outer IPv4) on a device whose
// hw_enc_features has only IP_CSUM: "csum" holds → plain copy, inner TCPv6 left PARTIAL
// (X-8 Kishore rule). IP6IP6 on the same device: no IPv6 checksum → copy-and-sum, finished.
TEST(GsoIpip, X5_OuterEthertypeDecidesCsumForIpInner) {
  core::Device dev;
  dev.features = nf::IP_CSUM;
  dev.hw_enc_features = nf::IP_CSUM;
  TcpSpec s;
  s.v6 = true;
  {
    gso::GsoCounters c;
    auto r = gso::gso_segment(prepare(ipip_encap(tcp_frame(s), false), 1400), dev.features, dev, &c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::Copy)], 3u);
    for (auto& seg : r.segs) EXPECT_EQ(seg.ip_summed(), core::IpSummed::Partial);
  }
  {
    gso::GsoCounters c;
    auto r = gso::gso_segment(prepare(ipip_encap(tcp_frame(s), true), 1400), dev.features, dev, &c);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::CopySum)], 3u);
    for (auto& seg : r.segs) EXPECT_NE(seg.ip_summed(), core::IpSummed::Partial);
  }
}

// the inner header is nested (encap_level > 0) → features &= hw_enc_features. A device
// with HW_CSUM in features but not in hw_enc_features gets finished inner checksums.
TEST(GsoIpip, X23_InnerLevelUsesHwEncFeatures) {
  core::Device dev;
  dev.features = nf::SG | nf::HW_CSUM;
  dev.hw_enc_features = nf::SG;
  TcpSpec s;
  Bytes f = ipip_encap(tcp_frame(s), false);
  auto r = gso::gso_segment(prepare(f, 1400), dev.features, dev);
  ASSERT_TRUE(r.ok());
  for (auto& seg : r.segs) EXPECT_NE(seg.ip_summed(), core::IpSummed::Partial);
  check_ipip_train(f, r.segs, {false, false}, 1400, 3000, s.seq);
}

// X-20 / F-18: a device with TSO and GSO_IPXIP4 segments itself: the packet comes back whole
// with gso_segs = ceil(payload / mss).
TEST(GsoIpip, X20_DeviceWithIpxipSegmentsItself) {
  TcpSpec s;
  s.payload = 4001;
  const core::Features f = nf::SG | nf::HW_CSUM | nf::TSO | nf::GSO_IPXIP4;
  auto r = gso::gso_segment(prepare(ipip_encap(tcp_frame(s), false), 1000), f, device(f));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.hw);
  ASSERT_EQ(r.segs.size(), 1u);
  EXPECT_EQ(r.segs[0].gso.segs, 5);
}

// GUE carrying IP reaches the same hooks through the UDP tunnel path (X-31 → X-34): the
// prepared packet carries the outer family's IPXIP bit as the kernel's ipip/sit devices set.
TEST(GsoIpip, X34_GueInnerIpCarriesIpxipBit) {
  for (bool ov6 : {false, true}) {
    TcpSpec s;
    core::Packet p = prepare(encap(tcp_frame(s), Outer::Gue, ov6, true), 1000, 6080);
    EXPECT_TRUE(p.gso.type & (ov6 ? sg::IPXIP6 : sg::IPXIP4));
    auto r = gso::gso_segment(std::move(p), {}, device({}));
    EXPECT_TRUE(r.ok()) << offload::to_string(r.reason);
    EXPECT_EQ(r.segs.size(), 3u);
  }
}
