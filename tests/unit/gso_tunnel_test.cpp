// Tunnel GSO: UDP tunnels (X-31; VXLAN and GUE, inner Ethernet or inner IP, outer UDP
// checksum on/off, RCO W-26..W-28) and GRE over IPv4/IPv6. Public bugs E4, E5, E14.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
using wire::load_be16;

namespace {

struct Geo {
  std::size_t oip = 14, ol4, iip, il4;
  bool ov6, iv6;
};

std::vector<core::Packet> seg(const Bytes& f, std::uint16_t mss, core::Features feat,
                              gso::GsoReason* why = nullptr) {
  auto dev = device(feat);
  auto r = gso::gso_segment(prepare(f, mss, 6080), feat, dev);
  if (why) *why = r.reason;
  EXPECT_TRUE(r.ok()) << offload::to_string(r.reason);
  return std::move(r.segs);
}

// Check every header of every segment: lengths, IPv4 checksums, IDs, inner TCP checksum
// valid, payload continuity.
void check_train(const Bytes& f, const std::vector<core::Packet>& segs, const Geo& g,
                 std::size_t mss, std::size_t payload, bool outer_udp_csum, bool is_gre,
                 bool gre_csum = false) {
  const std::size_t pay_off = g.il4 + 20;
  std::size_t off = 0;
  ASSERT_EQ(segs.size(), (payload + mss - 1) / mss);
  for (std::size_t i = 0; i < segs.size(); ++i) {
    Bytes b = segs[i].to_bytes();
    const std::size_t pl = std::min(mss, payload - off);
    ASSERT_EQ(b.size(), pay_off + pl);
    // outer IP
    if (!g.ov6) {
      EXPECT_EQ(load_be16(&b[g.oip + 2]), b.size() - g.oip);
      EXPECT_EQ(load_be16(&b[g.oip + 4]), 0x4000 + i) << "outer ID advances (X-24, 6.12)";
      EXPECT_EQ(csum::ip_compute_csum(&b[g.oip], 20), 0);
    } else {
      EXPECT_EQ(load_be16(&b[g.oip + 4]), b.size() - g.oip - 40);
    }
    // inner IP
    if (!g.iv6) {
      EXPECT_EQ(load_be16(&b[g.iip + 2]), b.size() - g.iip);
      EXPECT_EQ(load_be16(&b[g.iip + 4]), 1000 + i);
      EXPECT_EQ(csum::ip_compute_csum(&b[g.iip], 20), 0);
    } else {
      EXPECT_EQ(load_be16(&b[g.iip + 4]), b.size() - g.iip - 40);
    }
    EXPECT_TRUE(l4_valid(&b[g.iip], g.iv6, &b[g.il4], b.size() - g.il4, 6)) << "inner TCP " << i;
    if (!is_gre) {
      EXPECT_EQ(load_be16(&b[g.ol4 + 4]), b.size() - g.ol4) << "outer UDP length";
      if (outer_udp_csum)
        EXPECT_TRUE(l4_valid(&b[g.oip], g.ov6, &b[g.ol4], b.size() - g.ol4, 17)) << "outer UDP " << i;
      else
        EXPECT_EQ(load_be16(&b[g.ol4 + 6]), 0);
    } else if (gre_csum) {
      EXPECT_EQ(csum::ip_compute_csum(&b[g.ol4], b.size() - g.ol4), 0) << "GRE checksum " << i;
    }
    EXPECT_TRUE(std::equal(b.begin() + pay_off, b.end(), f.begin() + pay_off + off));
    off += pl;
  }
}

}  // namespace

// E4: every outer × inner family combination of VXLAN, with and without the outer checksum.
TEST(GsoTunnel, X31_E4_VxlanAllFamilyCombinations) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (bool ucs : {false, true}) {
        TcpSpec s;
        s.v6 = iv6;
        Bytes f = encap(tcp_frame(s), Outer::Vxlan, ov6, ucs);
        Geo g;
        g.ov6 = ov6, g.iv6 = iv6;
        g.ol4 = 14 + (ov6 ? 40 : 20);
        g.iip = g.ol4 + 16 + 14;
        g.il4 = g.iip + (iv6 ? 40 : 20);
        SCOPED_TRACE(testing::Message() << "outer v6 " << ov6 << " inner v6 " << iv6 << " udpcsum " << ucs);
        check_train(f, seg(f, 1400, core::Features{}), g, 1400, 3000, ucs, false);
        check_train(f, seg(f, 1400, nf::SG), g, 1400, 3000, ucs, false);
      }
}

TEST(GsoTunnel, X31_GueInnerIp) {
  for (bool iv6 : {false, true}) {
    TcpSpec s;
    s.v6 = iv6;
    Bytes f = encap(tcp_frame(s), Outer::Gue, false, true);
    Geo g;
    g.ov6 = false, g.iv6 = iv6;
    g.ol4 = 34;
    g.iip = 34 + 12;
    g.il4 = g.iip + (iv6 ? 40 : 20);
    check_train(f, seg(f, 1000, core::Features{}), g, 1000, 3000, true, false);
  }
}

// X-33 / E5: GRE over IPv4 and IPv6, inner IPv4 or IPv6 (GREv4 carrying TCPv6), with and
// without the GRE checksum, inner Ethernet (TEB) or inner IP.
TEST(GsoTunnel, X33_E5_GreFamiliesAndChecksum) {
  for (bool ov6 : {false, true})
    for (bool iv6 : {false, true})
      for (bool teb : {false, true})
        for (bool gcs : {false, true}) {
          TcpSpec s;
          s.v6 = iv6;
          Bytes f = encap(tcp_frame(s), Outer::Gre, ov6, false, gcs, teb);
          Geo g;
          g.ov6 = ov6, g.iv6 = iv6;
          g.ol4 = 14 + (ov6 ? 40 : 20);
          g.iip = g.ol4 + (gcs ? 8 : 4) + (teb ? 14 : 0);
          g.il4 = g.iip + (iv6 ? 40 : 20);
          SCOPED_TRACE(testing::Message() << ov6 << iv6 << teb << gcs);
          check_train(f, seg(f, 1200, core::Features{}), g, 1200, 3000, false, true, gcs);
        }
}

// X-31 with a device that has HW_CSUM: inner TCP stays PARTIAL (seeds), the outer UDP
// checksum is computed in software over the outer header plus the inner region's known sum
// (encapsulation set → gso_make_checksum), so the wire bytes of the outer are valid once the
// inner is finished. Checked by finishing the inner with checksum_help and verifying both.
TEST(GsoTunnel, X31_InnerPartialOuterLco) {
  TcpSpec s;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
  auto segs = seg(f, 1400, nf::SG | nf::HW_CSUM);
  ASSERT_EQ(segs.size(), 3u);
  for (auto& p : segs) {
    ASSERT_EQ(p.ip_summed(), core::IpSummed::Partial);
    EXPECT_TRUE(p.encapsulation);
    EXPECT_EQ(p.csum_start_offset(), 34 + 16 + 14 + 20);
    p.linearize();
    ASSERT_EQ(core::checksum_help(p), core::PacketError::Ok);
    Bytes b = p.to_bytes();
    EXPECT_TRUE(l4_valid(&b[14], false, &b[34], b.size() - 34, 17)) << "outer UDP (LCO)";
    EXPECT_TRUE(l4_valid(&b[64], false, &b[84], b.size() - 84, 6));
  }
}

// W-26..W-28: RCO keeps the inner checksum as the pseudo seed; the outer checksum covers it.
TEST(GsoTunnel, W28_RcoInnerSeedKept) {
  TcpSpec s;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true, false, true, /*rco=*/true);
  for (core::Features feat : {core::Features{}, nf::SG | nf::HW_CSUM}) {
    auto segs = seg(f, 1400, feat);
    ASSERT_EQ(segs.size(), 3u);
    for (auto& p : segs) {
      Bytes b = p.to_bytes();
      EXPECT_EQ(load_be16(&b[84 + 16]), pseudo_only(&b[64], false, b.size() - 84, 6))
          << "inner field = seed for its own length";
      if (p.ip_summed() == core::IpSummed::Partial) {  // device finishes the outer UDP
        EXPECT_EQ(p.csum_start_offset(), 34);
        EXPECT_EQ(std::get<core::CsumPartial>(p.csum).csum_offset, 6);
      } else {
        EXPECT_TRUE(l4_valid(&b[14], false, &b[34], b.size() - 34, 17));
      }
      EXPECT_EQ(wire::load_be32(&b[42]), 0x08200000u) << "RCO flag kept (V-1)";
    }
  }
}

// E14: outer checksum left PARTIAL → the field holds the folded outer pseudo-header seed and
// the outer IPv4 checksum is valid. (Inner finished in software: device has HW_CSUM for the
// outer only via offload_csum, inner features from hw_enc_features without checksums.)
TEST(GsoTunnel, E14_OuterUdpPartialCarriesSeed) {
  TcpSpec s;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
  core::Device dev;
  dev.features = nf::SG | nf::HW_CSUM;
  dev.hw_enc_features = nf::SG;  // inner checksums not offloadable for encapsulated packets
  auto r = gso::gso_segment(prepare(f, 1400), dev.features, dev);
  ASSERT_TRUE(r.ok());
  for (auto& p : r.segs) {
    ASSERT_EQ(p.ip_summed(), core::IpSummed::Partial);
    EXPECT_EQ(p.csum_start_offset(), 34);
    Bytes b = p.to_bytes();
    EXPECT_EQ(load_be16(&b[34 + 6]), pseudo_only(&b[14], false, b.size() - 34, 17));
    EXPECT_EQ(csum::ip_compute_csum(&b[14], 20), 0);
    EXPECT_TRUE(l4_valid(&b[64], false, &b[84], b.size() - 84, 6)) << "inner finished";
  }
}

// X-15 / C-30: the sum over transport header .. CB.csum_start, given (gso_make_checksum_summed)
// or read from the bytes (gso_make_checksum), gives the same field and the same CB update.
// Expected values from RFC 1071 §3: words 0001 f203 f4f5 f6f7 sum to 0xddf2, checksum 0x220d.
// The UDP tunnel hook reuses one segment's sum for the next only because an IPv4 header with
// a valid checksum sums to 0xffff whatever its ID (RFC 1071 §1, RFC 791 §3.1): checked too.
TEST(GsoMakeChecksum, X15_C30_SummedRegionEqualsBytes) {
  const std::vector<std::uint8_t> rfc = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0xaa, 0xbb};
  for (const bool summed : {false, true}) {
    core::Packet p = core::Packet::from_bytes(rfc);
    p.transport_header = 0;
    core::GsoSeg s{p, 0, 8};
    std::uint16_t v;
    if (summed) {
      std::size_t len = 0;
      const csum::wsum r = core::gso_checksum_region(s, len);
      EXPECT_EQ(len, 8u);
      EXPECT_EQ(csum::csum_fold16(r), 0xddf2);
      v = core::gso_make_checksum_summed(s, 0x1234, r);
    } else {
      v = core::gso_make_checksum(s, 0x1234);
    }
    EXPECT_EQ(v, 0x220d) << summed;
    EXPECT_EQ(s.cb_csum, 0x1234u);
    EXPECT_EQ(s.cb_csum_start, 0);
  }
  // Two IPv4 headers that differ in ID (and so in checksum): the same region sum.
  auto ipv4 = [](std::uint16_t id) {
    std::vector<std::uint8_t> h = {0x45, 0, 0x05, 0xdc, 0, 0, 0x40, 0, 64, 6, 0, 0,
                                   10, 0, 0, 1, 10, 0, 0, 2, 0xde, 0xad};
    h[4] = std::uint8_t(id >> 8), h[5] = std::uint8_t(id);
    const std::uint16_t c = csum::ip_compute_csum(h.data(), 20);
    h[10] = std::uint8_t(c >> 8), h[11] = std::uint8_t(c);
    return h;
  };
  std::uint16_t fields[2];
  int k = 0;
  for (const std::uint16_t id : {std::uint16_t(1), std::uint16_t(0x1234)}) {
    core::Packet p = core::Packet::from_bytes(ipv4(id));
    p.transport_header = 0;
    core::GsoSeg s{p, 0x5555, 20};
    std::size_t len = 0;
    const csum::wsum r = core::gso_checksum_region(s, len);
    EXPECT_EQ(len, 20u);
    EXPECT_EQ(csum::csum_fold16(r), 0xffff) << "a valid IPv4 header sums to 0xffff";
    fields[k++] = core::gso_make_checksum_summed(s, 0, r);
  }
  EXPECT_EQ(fields[0], fields[1]);
  EXPECT_EQ(fields[0], csum::csum_fold(csum::csum_add(0xffff, 0x5555)));
}
