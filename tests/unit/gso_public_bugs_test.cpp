// Public faults (../shared/cases/public-bugs.md), GSO side: tests named after the entry ID.
// Entries also covered elsewhere: B1/B2/B5 (gso_udp_test S-2/S-4), D1/D2/D6 (gso_udp_test),
// E4/E5/E14 (gso_tunnel_test).
#include <gtest/gtest.h>

#include "gso_test_util.hpp"
#include "ofld/offload/virtio_net.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
using wire::load_be16;

// C8 (a): a TSO super-packet with CWR under RFC 3168: segment 1 has CWR, 2..n do not; the
// virtio header for such a frame carries GSO_ECN (S-7), and a TCP_ECN-typed packet keeps the
// rule for every length and both families.
TEST(GsoPublicBugs, C8_CwrOnlyOnFirstSegment) {
  for (bool v6 : {false, true})
    for (std::size_t payload : {2001u, 4000u, 9000u}) {
      TcpSpec s;
      s.v6 = v6;
      s.payload = payload;
      s.flags = 0x10 | 0x80 | 0x40;  // ACK CWR ECE
      core::Packet p = prepare(tcp_frame(s), 1000);
      EXPECT_TRUE(p.gso.type & core::skb_gso::TCP_ECN);
      auto vh = offload::virtio::from_packet(p);
      ASSERT_TRUE(vh);
      EXPECT_TRUE(vh->gso_type & wire::virtio_net::kGsoEcn);
      auto r = gso::gso_segment(std::move(p), {}, device({}));
      ASSERT_TRUE(r.ok());
      const std::size_t l4 = v6 ? 54 : 34;
      for (std::size_t i = 0; i < r.segs.size(); ++i) {
        Bytes b = r.segs[i].to_bytes();
        EXPECT_EQ((b[l4 + 13] & 0x80) != 0, i == 0) << "CWR seg " << i;
        EXPECT_TRUE(b[l4 + 13] & 0x40) << "ECE stays on every segment";
      }
    }
}

// C10: a host-GRO'd TCP packet (MSS 1414, DF) forwarded to an egress without TSO and MTU
// 1466 must be segmented at egress, every segment fitting the MTU.
TEST(GsoPublicBugs, C10_ForwardedSuperPacketSegmentedToMtu) {
  for (std::size_t payload : {2868u - 40u, 20076u - 40u}) {
    TcpSpec s;
    s.payload = payload;
    core::Packet p = prepare(tcp_frame(s), 1414);
    core::Device dev = device(nf::SG | nf::HW_CSUM);  // no TSO
    gso::TxResult tx = gso::tx_prepare(std::move(p), dev);
    ASSERT_FALSE(tx.dropped());
    EXPECT_TRUE(tx.action.software_gso);
    ASSERT_EQ(tx.out.size(), (payload + 1413) / 1414);
    for (auto& seg : tx.out) EXPECT_LE(seg.len() - 14, 1466u);
  }
}

// D5: GSO via IP fragmentation (UFO) — ofld never produces UFO; a UFO request is refused
// with a counted reason instead of fragmenting with an offset that is not a multiple of 8.
TEST(GsoPublicBugs, D5_UfoRefusedWithReason) {
  core::Packet p = prepare(udp_frame(false, 4000), 1500);
  p.gso.type = core::skb_gso::UDP;
  gso::GsoCounters c;
  auto r = gso::gso_segment(std::move(p), {}, device({}), &c);
  EXPECT_EQ(r.reason, gso::GsoReason::UfoUnsupported);
  EXPECT_EQ(c.errors[std::size_t(gso::GsoReason::UfoUnsupported)], 1u);
}

// E6: IPv6 with an extension header (destination options, as ip6gre's encapsulation limit)
// on a device with only IPV6_CSUM/TSO6: features are masked (F-11), GSO runs in software and
// every checksum is finished — for TCP and for UDP (USO).
TEST(GsoPublicBugs, E6_Ipv6ExtHeaderWithOnlyIpv6CsumSoftware) {
  TcpSpec s;
  s.v6 = true;
  s.v6_ext_type = 60;                     // destination options
  s.v6_ext = {6, 0, 4, 1, 4, 0, 1, 0};   // next TCP; tunnel encap limit option (4), PadN
  Bytes f = tcp_frame(s);
  core::Device dev = device(nf::SG | nf::IPV6_CSUM | nf::TSO6 | nf::GSO_UDP_L4);
  gso::TxResult tx = gso::tx_prepare(prepare(f, 1400), dev);
  ASSERT_FALSE(tx.dropped());
  EXPECT_TRUE(tx.action.software_gso);
  EXPECT_FALSE(tx.action.gso_features.any(nf::IPV6_CSUM | nf::TSO6));
  ASSERT_EQ(tx.out.size(), 3u);
  for (auto& p : tx.out) {
    Bytes b = p.to_bytes();
    EXPECT_NE(p.ip_summed(), core::IpSummed::Partial);
    EXPECT_TRUE(l4_valid(&b[14], true, &b[62], b.size() - 62, 6));
  }
}

// E11 (6.12 semantics, X-24/X-36): GSO writes incrementing IDs for the inner header unless
// FIXEDID was recorded; with FIXEDID (DF set) every inner ID equals the original. The outer
// IDs of a tunnel always advance in 6.12 ([newer] restoring them is not implemented).
TEST(GsoPublicBugs, E11_InnerFixedIdRestored) {
  TcpSpec s;
  s.ip_id = 0;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
  core::Packet p = prepare(f, 1400);
  p.gso.type |= core::skb_gso::TCP_FIXEDID;
  auto r = gso::gso_segment(std::move(p), {}, device({}));
  ASSERT_TRUE(r.ok());
  for (std::size_t i = 0; i < r.segs.size(); ++i) {
    Bytes b = r.segs[i].to_bytes();
    EXPECT_EQ(load_be16(&b[64 + 4]), 0) << "inner ID fixed";
    EXPECT_EQ(load_be16(&b[14 + 4]), 0x4000 + i) << "outer ID advances (6.12)";
  }
}
