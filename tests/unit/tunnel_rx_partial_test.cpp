// VXLAN decapsulation: the receive meaning of CHECKSUM_PARTIAL (an inner checksum field
// holding exactly its pseudo-header seed, spec K-9, C-6, DESIGN "Receive"),
// udp6zerocsumrx (enforced by the library, RFC 6935 §5 / the kernel's
// UDP_NO_CHECK6_RX) and ECN (an RFC 6040 §4.2 decapsulation as the kernel's
// INET_ECN_decapsulate, and RFC 6040 §4.1 / INET_ECN_encapsulate + `tos inherit` on transmit
// as vxlan_xmit_one). Expected values come from those texts, not from ofld's output.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;
using tunnel::Drop;
using tunnel::OuterCsum;
namespace wv = wire::virtio_net;

tunnel::VxlanConfig cfg(bool v6 = false) { return vxlan_cfg(v6); }

/// `f` with `bytes` inserted at `at` (built by copies: GCC 12 warns falsely on vector::insert).
std::vector<std::uint8_t> splice(const std::vector<std::uint8_t>& f, std::size_t at,
                                 const std::vector<std::uint8_t>& bytes) {
  std::vector<std::uint8_t> p(f.size() + bytes.size());
  std::memcpy(p.data(), f.data(), at);
  std::memcpy(p.data() + at, bytes.data(), bytes.size());
  std::memcpy(p.data() + at + bytes.size(), f.data() + at, f.size() - at);
  return p;
}

/// VXLAN payload (I flag, VNI 42) carrying frame `f`.
std::vector<std::uint8_t> vx(const std::vector<std::uint8_t>& f) {
  return splice(f, 0, {0x08, 0, 0, 0, 0, 0, 42, 0});
}

/// Offset of the IP header of an Ethernet frame (after up to two VLAN tags).
std::size_t l3_of(const std::vector<std::uint8_t>& f) {
  std::size_t o = 12;
  while (get16(f.data() + o) == 0x8100 || get16(f.data() + o) == 0x88A8) o += 4;
  return o + 2;
}

/// The pseudo-header seed (C-6: folded, not complemented) of the L4 header at `l4` with
/// `len` bytes, protocol `proto`, addresses from the IP header at `l3`.
std::uint16_t seed_of(const std::vector<std::uint8_t>& f, std::size_t l3, std::uint32_t len,
                      std::uint8_t proto) {
  const std::uint8_t* ip = f.data() + l3;
  if ((ip[0] >> 4) == 6) return csum::csum_fold16(csum::csum_ipv6_nofold(ip + 8, ip + 24, len, proto, 0));
  return csum::csum_fold16(csum::csum_tcpudp_nofold(ip + 12, ip + 16, len, proto, 0));
}

/// Ethernet + IPv4/IPv6 + UDP (40000 → 7000) + `len` payload bytes; checksum field = the
/// pseudo-header seed when `seed`, else the complete checksum.
std::vector<std::uint8_t> udp_frame(std::size_t len, bool v6, bool seed) {
  auto f = tcp_frame(len + 12, v6, false);  // same L2/L3 layout, 20-byte TCP → 8-byte UDP
  const std::size_t l3 = 14, l4 = 14 + (v6 ? 40 : 20);
  f.resize(l4 + 8 + len);
  if (v6) {
    put16(f, l3 + 4, std::uint16_t(8 + len));
    f[l3 + 6] = 17;
  } else {
    put16(f, l3 + 2, std::uint16_t(20 + 8 + len));
    f[l3 + 9] = 17;
    put16(f, l3 + 10, 0);
    put16(f, l3 + 10, csum::ip_compute_csum(f.data() + l3, 20));
  }
  put16(f, l4, 40000);
  put16(f, l4 + 2, 7000);
  put16(f, l4 + 4, std::uint16_t(8 + len));
  for (std::size_t i = 0; i < len; ++i) f[l4 + 8 + i] = std::uint8_t(i * 3 + 1);
  const std::uint16_t s = seed_of(f, l3, std::uint32_t(8 + len), 17);
  put16(f, l4 + 6, 0);
  if (seed) {
    put16(f, l4 + 6, s);
  } else {
    const std::uint8_t* ip = f.data() + l3;
    auto sum = csum::csum_partial(f.data() + l4, 8 + len, 0);
    put16(f, l4 + 6, csum::udp_csum_mangle(
                         v6 ? csum::csum_ipv6_magic(ip + 8, ip + 24, std::uint32_t(8 + len), 17, sum)
                            : csum::csum_tcpudp_magic(ip + 12, ip + 16, std::uint32_t(8 + len), 17, sum)));
  }
  return f;
}

/// A TCP segment whose checksum field is its seed, flags ACK only (PSH would make GRO deliver
/// it at once, T-rules), for the GRO tests.
std::vector<std::uint8_t> seed_seg(std::size_t len, bool v6, std::uint32_t seq) {
  auto f = tcp_frame(len, v6, true, seq);
  f[14 + (v6 ? 40 : 20) + 13] = 0x10;
  return f;
}

/// Complete a NEEDS_CSUM frame as a device would (C-6): fold the sum from csum_start to the
/// end, field included, and store its complement.
void complete(std::vector<std::uint8_t>& f, std::size_t start, std::size_t off) {
  const std::uint16_t v = csum::csum_fold(csum::csum_partial(f.data() + start, f.size() - start, 0));
  put16(f, start + off, v);
}

// ---- K-9: the seed as receive PARTIAL -------------------------------------------------------------------

struct SeedCase {
  bool v6;
  bool udp;
};

class TunnelRxPartialSeed : public ::testing::TestWithParam<SeedCase> {};

// A seed-valued inner field (what a kernel VXLAN peer sends across veth with tx-checksumming
// on, K-9) is CHECKSUM_PARTIAL at the L4 header: csum_offset 16 for TCP, 6 for UDP (C-6), the
// bytes untouched, counted. With the outer checksum present or unknown.
TEST_P(TunnelRxPartialSeed, K9_SeedFieldIsReceivePartial) {
  const auto [v6, udp] = GetParam();
  auto f = udp ? udp_frame(300, v6, true) : tcp_frame(300, v6, true);
  const int l4 = v6 ? 54 : 34;
  for (auto oc : {OuterCsum::Present, OuterCsum::Unknown}) {
    tunnel::Counters ctr;
    auto r = tunnel::decap(vx(f), cfg(), oc, ctr);
    ASSERT_TRUE(r.ok);
    ASSERT_EQ(r.pkt.ip_summed(), core::IpSummed::Partial);
    EXPECT_EQ(r.pkt.csum_start_offset(), l4);
    EXPECT_EQ(std::get<core::CsumPartial>(r.pkt.csum).csum_offset, udp ? 6 : 16);
    EXPECT_EQ(r.pkt.to_bytes(), f);
    EXPECT_EQ(ctr.rx_csum_partial_seed, 1u);
    EXPECT_EQ(ctr.drops_total(), 0u);
  }
}

INSTANTIATE_TEST_SUITE_P(Inner, TunnelRxPartialSeed,
                         ::testing::Values(SeedCase{false, false}, SeedCase{true, false},
                                           SeedCase{false, true}, SeedCase{true, true}),
                         [](const auto& i) {
                           return std::string(i.param.v6 ? "Ipv6" : "Ipv4") + (i.param.udp ? "Udp" : "Tcp");
                         });

// Only the exact seed of the packet counts: a complete checksum, a seed for another length
// (e.g. a GSO super-packet's), a UDP checksum of 0 and an IPv4 fragment stay NONE.
TEST(TunnelRxPartial, K9_OnlyTheExactSeedIsPartial) {
  tunnel::Counters ctr;
  auto none = [&](const std::vector<std::uint8_t>& f) {
    auto r = tunnel::decap(vx(f), cfg(), OuterCsum::Present, ctr);
    return r.ok && r.pkt.ip_summed() == core::IpSummed::None;
  };
  EXPECT_TRUE(none(tcp_frame(300, false, false)));
  EXPECT_TRUE(none(tcp_frame(300, true, false)));
  EXPECT_TRUE(none(udp_frame(300, false, false)));
  auto other = tcp_frame(300, false, true);
  put16(other, 34 + 16, seed_of(other, 14, 320 + 1448, 6));
  EXPECT_TRUE(none(other));
  auto zero = udp_frame(300, false, true);
  put16(zero, 34 + 6, 0);
  EXPECT_TRUE(none(zero));
  auto frag = tcp_frame(300, false, true);
  frag[14 + 6] |= 0x20;  // MF: the L4 header is only the first fragment's
  put16(frag, 14 + 10, 0);
  put16(frag, 14 + 10, csum::ip_compute_csum(frag.data() + 14, 20));
  EXPECT_TRUE(none(frag));
  EXPECT_EQ(ctr.rx_csum_partial_seed, 0u);
}

// The class, not the instance: a VLAN-tagged inner frame and an IPv6 packet with a
// hop-by-hop options header before TCP (RFC 8200 §8.1: the pseudo-header's next header is
// the upper-layer protocol, its length the upper-layer length).
TEST(TunnelRxPartial, K9_SeedBehindVlanTagAndIpv6Options) {
  auto f = tcp_frame(200, false, true);
  f = splice(f, 12, {0x81, 0x00, 0x00, 0x05});  // 802.1Q, VID 5
  tunnel::Counters ctr;
  auto r = tunnel::decap(vx(f), cfg(), OuterCsum::Present, ctr);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.pkt.ip_summed(), core::IpSummed::Partial);
  EXPECT_EQ(r.pkt.csum_start_offset(), 38);

  auto g = tcp_frame(200, true, true);  // seed covers the 220-byte TCP segment
  g = splice(g, 54, {6, 0, 1, 4, 0, 0, 0, 0});  // hop-by-hop: next TCP, PadN
  g[14 + 6] = 0;  // next header: hop-by-hop
  put16(g, 14 + 4, std::uint16_t(8 + 220));
  r = tunnel::decap(vx(g), cfg(), OuterCsum::Present, ctr);
  ASSERT_TRUE(r.ok);
  ASSERT_EQ(r.pkt.ip_summed(), core::IpSummed::Partial);
  EXPECT_EQ(r.pkt.csum_start_offset(), 62);
  EXPECT_EQ(ctr.rx_csum_partial_seed, 2u);
}

// Outer UDP checksum known to be zero: nothing protects the inner bytes, so a seed is not
// trusted — the frame stays NONE, GRO verifies it (it fails) and writes it alone without
// NEEDS_CSUM or DATA_VALID, so the local stack checks it too (public bug E2: "decapsulation
// must validate the inner checksum instead"). Counted in rx_csum_seed_nocsum.
TEST(TunnelRxPartial, K9_ZeroOuterChecksumSeedIsNotTrusted) {
  tunnel::Counters ctr;
  auto f = tcp_frame(300, false, true);
  auto r = tunnel::decap(vx(f), cfg(), OuterCsum::Zero, ctr);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.pkt.ip_summed(), core::IpSummed::None);
  EXPECT_EQ(ctr.rx_csum_seed_nocsum, 1u);
  EXPECT_EQ(ctr.rx_csum_partial_seed, 0u);

  tunnel::Endpoint dp(cfg(), {});
  dp.receive(vx(f), *tunnel::IpAddr::parse("10.0.0.2"), OuterCsum::Zero, 1);
  std::vector<tunnel::TapFrame> out;
  dp.rx_flush(2, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].vnet.flags, 0);
  EXPECT_EQ(dp.counters().rx_csum_seed_nocsum, 1u);
}

// Through the data path: a single seed frame reaches the TAP as NEEDS_CSUM with the L4
// offsets (S-8) — with GRO and without — and consecutive seed segments of one flow are merged
// by GRO after decapsulation (the kernel's skb_csum_unnecessary takes PARTIAL as verified,
// G-11) into one aggregate, NEEDS_CSUM + TCPV4/6 with gso_size (S-7, T-20) whose checksum,
// completed from the seed as a device would (C-6), verifies (RFC 793 §3.1).
TEST(TunnelRxPartial, K9_DatapathDeliversNeedsCsumAndGroMerges) {
  for (bool v6 : {false, true}) {
    const std::uint16_t l4 = v6 ? 54 : 34;
    for (bool gro : {true, false}) {
      tunnel::EndpointOptions o;
      o.gro = gro;
      tunnel::Endpoint dp(cfg(), o);
      dp.receive(vx(tcp_frame(500, v6, true)), *tunnel::IpAddr::parse("10.0.0.2"),
                 OuterCsum::Present, 1);
      std::vector<tunnel::TapFrame> out;
      dp.rx_flush(2, out);
      ASSERT_EQ(out.size(), 1u);
      EXPECT_EQ(out[0].vnet.flags, wv::kFlagNeedsCsum) << "gro " << gro;
      EXPECT_EQ(out[0].vnet.csum_start, l4);
      EXPECT_EQ(out[0].vnet.csum_offset, 16);
      EXPECT_EQ(out[0].vnet.gso_type, wv::kGsoNone);
    }
    tunnel::Endpoint dp(cfg(), {});
    const std::size_t mss = 1000;
    for (std::uint32_t i = 0; i < 4; ++i)
      dp.receive(vx(seed_seg(mss, v6, 1000 + i * std::uint32_t(mss))),
                 *tunnel::IpAddr::parse("10.0.0.2"), OuterCsum::Present, 1);
    std::vector<tunnel::TapFrame> out;
    dp.rx_flush(2, out);
    ASSERT_EQ(out.size(), 1u) << (v6 ? "v6" : "v4");
    const auto& a = out[0];
    EXPECT_EQ(a.vnet.flags, wv::kFlagNeedsCsum);
    EXPECT_EQ(a.vnet.gso_type, v6 ? wv::kGsoTcpv6 : wv::kGsoTcpv4);
    EXPECT_EQ(a.vnet.gso_size, mss);
    EXPECT_EQ(a.vnet.csum_start, l4);
    EXPECT_EQ(a.vnet.csum_offset, 16);
    auto bytes = a.pkt->to_bytes();
    ASSERT_EQ(bytes.size(), std::size_t(l4) + 20 + 4 * mss);
    complete(bytes, a.vnet.csum_start, a.vnet.csum_offset);
    EXPECT_TRUE(tcp_csum_ok(bytes.data(), bytes.size()));
    EXPECT_EQ(dp.counters().rx_csum_partial_seed, 4u);
  }
}

// ---- udp6zerocsumrx --------------------------------------------------------------------------

// RFC 6935 §5 / udp(7) UDP_NO_CHECK6_RX: an IPv6 datagram with UDP checksum 0 is dropped
// unless udp6zerocsumrx is configured; counted with a named reason. IPv4 may carry 0 (RFC 768).
TEST(TunnelUdp6ZeroCsum, Udp6ZeroChecksumNeedsUdp6ZeroCsumRx) {
  auto f = tcp_frame(100, false, false);
  tunnel::Counters ctr;
  auto c6 = cfg(true);
  auto r = tunnel::decap(vx(f), c6, OuterCsum::Zero, ctr);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, Drop::RxUdp6ZeroCsum);
  EXPECT_EQ(ctr.drops[std::size_t(Drop::RxUdp6ZeroCsum)], 1u);
  EXPECT_EQ(tunnel::to_string(Drop::RxUdp6ZeroCsum), "rx_udp6_zero_csum");
  EXPECT_TRUE(tunnel::decap(vx(f), c6, OuterCsum::Present, ctr).ok);
  EXPECT_TRUE(tunnel::decap(vx(f), c6, OuterCsum::Unknown, ctr).ok);
  c6.udp6_zero_csum_rx = true;
  EXPECT_TRUE(tunnel::decap(vx(f), c6, OuterCsum::Zero, ctr).ok);
  EXPECT_TRUE(tunnel::decap(vx(f), cfg(false), OuterCsum::Zero, ctr).ok);
  EXPECT_EQ(ctr.drops_total(), 1u);
  // Through the data path: nothing reaches the TAP.
  tunnel::Endpoint dp(cfg(true), {});
  dp.receive(vx(f), *tunnel::IpAddr::parse("fd00::2"), OuterCsum::Zero, 1);
  std::vector<tunnel::TapFrame> out;
  dp.rx_flush(2, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(dp.counters().drops[std::size_t(Drop::RxUdp6ZeroCsum)], 1u);
}

// ---- ECN (RFC 6040) -----------------------------------------------------------------------

enum : std::uint8_t { kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3 };

/// Set the dsfield (IPv4 TOS with a fresh header checksum / IPv6 traffic class).
void set_dsfield(std::vector<std::uint8_t>& f, std::uint8_t ds) {
  const std::size_t l3 = l3_of(f);
  if ((f[l3] >> 4) == 6) {
    f[l3] = std::uint8_t(0x60 | ds >> 4);
    f[l3 + 1] = std::uint8_t((f[l3 + 1] & 0x0F) | (ds & 0x0F) << 4);
  } else {
    f[l3 + 1] = ds;
    put16(f, l3 + 10, 0);
    put16(f, l3 + 10, csum::ip_compute_csum(f.data() + l3, 20));
  }
}
std::uint8_t dsfield(const std::vector<std::uint8_t>& f) {
  const std::size_t l3 = l3_of(f);
  if ((f[l3] >> 4) == 6) return std::uint8_t((f[l3] & 0x0F) << 4 | f[l3 + 1] >> 4);
  return f[l3 + 1];
}

// RFC 6040 §4.2 Figure 4 (rows: arriving inner; columns: arriving outer Not-ECT, ECT(0),
// ECT(1), CE). -1 = drop.
constexpr int kFig4[4][4] = {
    /* inner Not-ECT */ {kNotEct, kNotEct, kNotEct, -1},
    /* inner ECT(1)  */ {kEct1, kEct1, kEct1, kCe},
    /* inner ECT(0)  */ {kEct0, kEct0, kEct1, kCe},
    /* inner CE      */ {kCe, kCe, kCe, kCe},
};
constexpr std::uint8_t kOuterCol[4] = {kNotEct, kEct0, kEct1, kCe};

TEST(TunnelEcnRfc6040, Rfc6040DecapsulationTable) {
  for (bool v6 : {false, true}) {
    for (std::uint8_t in = 0; in < 4; ++in) {
      for (int col = 0; col < 4; ++col) {
        const std::uint8_t out_ecn = kOuterCol[col];
        auto f = tcp_frame(100, v6, false);
        set_dsfield(f, std::uint8_t(0x28 << 2 | in));  // DSCP AF11... (0x28) + inner ECN
        tunnel::Counters ctr;
        // Outer DSCP EF (46): never copied into the inner header on decapsulation.
        auto r = tunnel::decap(vx(f), cfg(), OuterCsum::Present, ctr, nullptr, 46 << 2 | out_ecn);
        const int want = kFig4[in][col];
        SCOPED_TRACE(::testing::Message() << (v6 ? "v6" : "v4") << " inner " << int(in)
                                          << " outer " << int(out_ecn));
        if (want < 0) {
          EXPECT_FALSE(r.ok);
          EXPECT_EQ(r.reason, Drop::RxEcnNotEct);
          EXPECT_EQ(ctr.drops[std::size_t(Drop::RxEcnNotEct)], 1u);
          continue;
        }
        ASSERT_TRUE(r.ok);
        auto b = r.pkt.to_bytes();
        EXPECT_EQ(dsfield(b), std::uint8_t(0x28 << 2 | want));
        if (!v6) {
          EXPECT_EQ(csum::ip_compute_csum(b.data() + 14, 20), 0);  // header checksum kept valid
        }
        EXPECT_TRUE(tcp_csum_ok(b.data(), b.size()));
        // Only the dsfield bytes (and the IPv4 header checksum) may change.
        for (std::size_t i = 0; i < b.size(); ++i) {
          if (i != 14 && i != 15 && i != 24 && i != 25) {
            ASSERT_EQ(b[i], f[i]) << i;
          }
        }
        EXPECT_EQ(ctr.rx_ecn_ce, (want == kCe && in != kCe) ? 1u : 0u);
        EXPECT_EQ(ctr.rx_ecn_bogus, (in == kNotEct && (out_ecn == kEct0 || out_ecn == kEct1)) ? 1u : 0u);
      }
    }
  }
}

// Unknown outer TOS (-1): nothing changes; a non-IP inner frame (ARP) passes whatever the
// outer ECN (the kernel's IP_ECN_decapsulate returns 0 for other protocols).
TEST(TunnelEcnRfc6040, EcnUnknownOuterAndNonIpInner) {
  auto f = tcp_frame(100, false, false);
  set_dsfield(f, kEct0);
  tunnel::Counters ctr;
  auto r = tunnel::decap(vx(f), cfg(), OuterCsum::Present, ctr, nullptr, -1);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.pkt.to_bytes(), f);
  std::vector<std::uint8_t> arp(14 + 28, 0);
  arp[0] = 0xff, arp[5] = 0xff, arp[6] = 0x02, arp[11] = 0x01;
  put16(arp, 12, 0x0806);
  r = tunnel::decap(vx(arp), cfg(), OuterCsum::Present, ctr, nullptr, kCe);
  ASSERT_TRUE(r.ok);
  EXPECT_EQ(r.pkt.to_bytes(), arp);
  EXPECT_EQ(ctr.drops_total(), 0u);
}

// CE propagated into a seed-valued (PARTIAL) frame and through GRO: the CE segment is not
// merged with the non-CE ones (N-12/N-10: TOS/traffic class differ) and keeps its mark.
TEST(TunnelEcnRfc6040, EcnCeReachesTheTapThroughGro) {
  tunnel::Endpoint dp(cfg(), {});
  for (std::uint32_t i = 0; i < 3; ++i) {
    auto f = seed_seg(1000, false, 1000 + 1000 * i);
    set_dsfield(f, kEct0);
    dp.receive(vx(f), *tunnel::IpAddr::parse("10.0.0.2"), OuterCsum::Present, 1,
               i == 2 ? kCe : kEct0);
  }
  std::vector<tunnel::TapFrame> out;
  dp.rx_flush(2, out);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(dsfield(out[0].pkt->to_bytes()) & 3, kEct0);
  EXPECT_EQ(out[0].vnet.gso_size, 1000);
  EXPECT_EQ(dsfield(out[1].pkt->to_bytes()) & 3, kCe);
  EXPECT_EQ(dp.counters().rx_ecn_ce, 1u);
}

// Transmit (RFC 6040 §4.1 normal mode = RFC 3168 §9.1.1 full functionality, the kernel's
// INET_ECN_encapsulate via ip_tunnel_ecn_encap in vxlan_xmit_one): outer ECN = inner ECN,
// except CE → ECT(0); outer DSCP = the configured tos (its ECN bits ignored), or the inner
// DSCP with `tos inherit`.
TEST(TunnelEcnRfc6040, EcnEncapsulationAndTosInherit) {
  const std::uint8_t kOuterFromInner[4] = {kNotEct, kEct1, kEct0, kEct0};
  for (bool v6 : {false, true}) {
    for (std::uint8_t in = 0; in < 4; ++in) {
      auto f = tcp_frame(100, v6, false);
      set_dsfield(f, std::uint8_t(0x0A << 2 | in));  // DSCP AF11 (10)
      for (int mode = 0; mode < 3; ++mode) {
        auto c = cfg(v6);
        if (mode == 1) c.tos = std::uint8_t(46 << 2 | kCe);  // EF; its ECN bits are not used
        if (mode == 2) c.tos_inherit = true;
        tunnel::Endpoint dp(c, {});
        std::vector<tunnel::TxTrain> out;
        dp.transmit(wv::Hdr{}, f, 0, out);
        ASSERT_EQ(out.size(), 1u);
        const std::uint8_t dscp = mode == 0 ? 0 : mode == 1 ? 46 : 0x0A;
        EXPECT_EQ(out[0].tos, std::uint8_t(dscp << 2 | kOuterFromInner[in]))
            << (v6 ? "v6" : "v4") << " inner ecn " << int(in) << " mode " << mode;
      }
    }
  }
  // A non-IP inner frame: the outer ECN is Not-ECT (the kernel reads dsfield 0).
  std::vector<std::uint8_t> arp(14 + 28, 0);
  arp[0] = 0xff, arp[5] = 0xff, arp[6] = 0x02, arp[11] = 0x01;
  put16(arp, 12, 0x0806);
  auto c = cfg();
  c.tos = 0x10;
  tunnel::Endpoint dp(c, {});
  std::vector<tunnel::TxTrain> out;
  dp.transmit(wv::Hdr{}, arp, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].tos, 0x10);
}

}  // namespace
