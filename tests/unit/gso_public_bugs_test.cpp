// Public faults (docs/public-bugs.md), GSO side: tests named after the entry ID.
// Entries also covered elsewhere: B1/B2/B5 (gso_udp_test S-2/S-4), D1/D2/D6 (gso_udp_test),
// E4/E5/E14 (gso_tunnel_test). GRO-only entries (C1, C3, C5, C7, C9, E1, E8, E9, E12) are in
// the GRO tests; B8 also in tests/kernel/tunnel_udp_socket_test (socket fallback).
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
TEST(GsoPublicBugs, BugC8_CwrOnlyOnFirstSegment) {
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
TEST(GsoPublicBugs, BugC10_ForwardedSuperPacketSegmentedToMtu) {
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

namespace {

// RFC-level validity of the innermost L4 checksum of an Ethernet/IP/L4 frame (TCP or UDP),
// or — when the packet is still PARTIAL — that the field holds the pseudo seed for its own
// length (C-12) for the device to finish.
void expect_l4_ok(const core::Packet& p, bool v6, bool udp) {
  Bytes b = p.to_bytes();
  const std::size_t ip = 14, l4 = v6 ? 54 : 34;
  const std::uint8_t proto = udp ? 17 : 6;
  if (p.ip_summed() == core::IpSummed::Partial)
    EXPECT_EQ(load_be16(&b[l4 + (udp ? 6 : 16)]), pseudo_only(&b[ip], v6, b.size() - l4, proto));
  else
    EXPECT_TRUE(l4_valid(&b[ip], v6, &b[l4], b.size() - l4, proto));
  if (udp) {
    EXPECT_EQ(load_be16(&b[l4 + 4]), b.size() - l4) << "UDP length = 8 + payload";
  }
}

}  // namespace

// B4 (GSO side): a reader without virtio_net_hdr is a device without offloads — TUN's
// default SG|FRAGLIST, no checksum, no TSO (F-22 with TUNSETOFFLOAD(0)). Whatever super-packet
// the stack has, what it is handed is MTU-sized frames with finished checksums: TCPv4, TCPv6,
// USO v4/v6. Only a TUNSETOFFLOAD(CSUM|TSO4|TSO6) device (the vnet reader A set up) is handed
// the super-frame whole — the frame B then read as one over-MTU packet.
TEST(GsoPublicBugs, B4_NonVnetReaderNeverHandedSuperFrames) {
  auto none = core::tun_offload_features(0);
  ASSERT_TRUE(none);
  core::Device plain = device(*none | nf::SG | nf::FRAGLIST);
  const std::size_t mtu = 1500;
  for (bool v6 : {false, true})
    for (bool udp : {false, true}) {
      SCOPED_TRACE(testing::Message() << "v6 " << v6 << " udp " << udp);
      const std::uint16_t mss = std::uint16_t(mtu - (v6 ? 40 : 20) - (udp ? 8 : 20));
      Bytes f;
      if (udp) {
        f = udp_frame(v6, 60000);
      } else {
        TcpSpec s;
        s.v6 = v6;
        s.payload = 60000;
        f = tcp_frame(s);
      }
      gso::TxResult tx = gso::tx_prepare(prepare(f, mss), plain);
      ASSERT_FALSE(tx.dropped());
      ASSERT_EQ(tx.out.size(), (60000u + mss - 1) / mss);
      for (auto& p : tx.out) {
        EXPECT_LE(p.len(), 14 + mtu);
        EXPECT_FALSE(p.is_gso());
        EXPECT_NE(p.ip_summed(), core::IpSummed::Partial) << "no checksum offload: finished";
        expect_l4_ok(p, v6, udp);
      }
    }
  auto vnet = core::tun_offload_features(core::tun_f::CSUM | core::tun_f::TSO4 | core::tun_f::TSO6);
  ASSERT_TRUE(vnet);
  core::Device tso = device(*vnet | nf::SG | nf::FRAGLIST);
  TcpSpec s;
  s.payload = 60000;
  gso::TxResult tx = gso::tx_prepare(prepare(tcp_frame(s), 1460), tso);
  ASSERT_EQ(tx.out.size(), 1u);
  EXPECT_GT(tx.out[0].len(), 14 + mtu) << "the offloading device takes the super-frame whole";
}

// B8 (GSO side): a path without USO — no GSO_UDP_L4, or no checksum offload (F-8 drops
// GSO_UDP_L4 then) — is a capability signal, never a loss: the engine segments in software,
// every datagram has UDP length 8 + its payload and a finished checksum (or the seed for a
// device that checksums), for IPv4 and IPv6. A device with USO and checksum offload gets the
// packet whole.
TEST(GsoPublicBugs, B8_NoUsoPathStillDeliversEveryDatagram) {
  core::Device probe;
  EXPECT_FALSE(core::fix_features(nf::SG | nf::GSO_UDP_L4, probe).any(nf::GSO_UDP_L4)) << "F-8";
  const core::Features sets[] = {core::Features{}, nf::SG, nf::SG | nf::HW_CSUM,
                                 nf::SG | nf::IP_CSUM | nf::IPV6_CSUM,
                                 core::fix_features(nf::SG | nf::GSO_UDP_L4, probe)};
  for (bool v6 : {false, true})
    for (core::Features f : sets) {
      SCOPED_TRACE(testing::Message() << "v6 " << v6 << " features " << f.bits);
      gso::GsoCounters c;
      gso::TxResult tx = gso::tx_prepare(prepare(udp_frame(v6, 5000), 1200), device(f), &c);
      ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
      ASSERT_EQ(tx.out.size(), 5u);
      EXPECT_EQ(c.errors_total(), 0u);
      std::size_t total = 0;
      for (auto& p : tx.out) {
        expect_l4_ok(p, v6, true);
        total += p.len() - (v6 ? 62 : 42);
      }
      EXPECT_EQ(total, 5000u);
    }
  gso::TxResult hw = gso::tx_prepare(prepare(udp_frame(true, 5000), 1200),
                                     device(nf::SG | nf::HW_CSUM | nf::GSO_UDP_L4));
  ASSERT_EQ(hw.out.size(), 1u);
  EXPECT_TRUE(hw.out[0].is_gso());
}

// C11 (GSO side): beyond 64 KB. A device is handed at most gso_max_size / gso_ipv4_max_size
// bytes (§1.3 default 65536; F-11 removes the GSO features at or above it): a 100 000-byte
// IPv4 BIG-TCP super-packet (tot_len 0, as BIG TCP writes it) is segmented in software, each
// segment with its own tot_len, incrementing ID, seq and a valid checksum; with the limit
// raised (BIG TCP enabled) the same TSO device takes it whole. The same holds at exactly the
// limit (len == gso_ipv4_max_size, ">=" in F-11).
TEST(GsoPublicBugs, BugC11_SuperPacketsBeyond64KSegmentedInSoftware) {
  TcpSpec s;
  s.payload = 100000;
  Bytes f = tcp_frame(s);
  put16(f, 14 + 2, 0);  // BIG TCP: tot_len 0, length from the frame
  put16(f, 14 + 10, 0);
  put16(f, 14 + 10, csum::ip_compute_csum(&f[14], 20));
  core::Device dev = device(nf::SG | nf::TSO | nf::IP_CSUM);
  gso::TxResult tx = gso::tx_prepare(prepare(f, 1448), dev);
  ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
  EXPECT_TRUE(tx.action.software_gso);
  ASSERT_EQ(tx.out.size(), (100000u + 1447) / 1448);
  for (std::size_t i = 0; i < tx.out.size(); ++i) {
    Bytes b = tx.out[i].to_bytes();
    EXPECT_EQ(load_be16(&b[14 + 2]), b.size() - 14);
    EXPECT_EQ(load_be16(&b[14 + 4]), std::uint16_t(1000 + i));
    EXPECT_EQ(wire::load_be32(&b[34 + 4]), s.seq + std::uint32_t(1448 * i));
    EXPECT_LE(b.size(), 14u + 20 + 20 + 1448);
    expect_l4_ok(tx.out[i], false, false);
  }
  core::Device big = dev;
  big.gso_ipv4_max_size = 185000;
  gso::TxResult whole = gso::tx_prepare(prepare(f, 1448), big);
  ASSERT_EQ(whole.out.size(), 1u);
  EXPECT_TRUE(whole.out[0].is_gso());
  // Exactly at the limit: 65536 bytes from the Ethernet header are not handed over whole.
  TcpSpec e;
  e.payload = 65536 - 14 - 20 - 20;
  Bytes fe = tcp_frame(e);
  put16(fe, 14 + 2, 0);
  put16(fe, 14 + 10, 0);
  put16(fe, 14 + 10, csum::ip_compute_csum(&fe[14], 20));
  gso::TxResult at = gso::tx_prepare(prepare(fe, 1448), dev);
  ASSERT_FALSE(at.dropped());
  EXPECT_TRUE(at.action.software_gso);
  EXPECT_GT(at.out.size(), 1u);
}

// E2 (GSO side): VXLAN over IPv4 with outer UDP checksum 0 ("not computed", RFC 768) stays 0
// on every segment — never replaced by a computed value or treated as a bad checksum — and
// the inner TCP checksums are complete.
TEST(GsoPublicBugs, E2_ZeroOuterUdpChecksumStaysZero) {
  TcpSpec s;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, /*udp_csum=*/false);
  for (core::Features feat : {core::Features{}, nf::SG, nf::SG | nf::HW_CSUM}) {
    auto r = gso::gso_segment(prepare(f, 1400), feat, device(feat));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r.segs.size(), 3u);
    for (auto& p : r.segs) {
      EXPECT_FALSE(p.gso.type & core::skb_gso::UDP_TUNNEL_CSUM);
      Bytes b = p.to_bytes();
      EXPECT_EQ(load_be16(&b[34 + 6]), 0);
      if (p.ip_summed() != core::IpSummed::Partial) {
        EXPECT_TRUE(l4_valid(&b[64], false, &b[84], b.size() - 84, 6));
      }
    }
  }
}
