// The one-pass reading of a TCP stream's inner frame that VXLAN
// decap uses (src/tunnel/rx_inner.hpp) must say what the three general functions say —
// check_inner_frame (ip_rcv_core lengths, spec V-/K-9 callers), inner_header_len and
// seed_partial_ip (K-9) — or decline. Expected values: the frame's construction (header sizes
// of RFC 791 / RFC 9293, the builder's own seed) and the general functions, which parse each
// header separately. Plus the endpoint checks after decap (loop drop, snoop).
#include <gtest/gtest.h>

#include <initializer_list>

#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/inner_ip.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "tunnel_test_util.hpp"

#include "../../src/tunnel/rx_inner.hpp"

namespace {

using namespace tunnel_test;
using ofld::tunnel::detail::fast_inner_tcp4;
using Bytes = std::vector<std::uint8_t>;

std::span<const std::uint8_t> sp(const Bytes& b) { return {b.data(), b.size()}; }

// Ethernet 14 + IPv4 20 + TCP 20 (the builder's frame has no options).
constexpr std::size_t kHdrs = 14 + 20 + 20;

TEST(TunnelRxInner, TcpStreamFrameIsReadInOnePass) {
  for (bool seed : {false, true}) {
    for (std::size_t payload : {std::size_t(0), std::size_t(1), std::size_t(1398)}) {
      const Bytes f = tcp_frame(payload, false, seed);
      const auto r = fast_inner_tcp4(sp(f));
      ASSERT_TRUE(r.has_value()) << "payload " << payload;
      EXPECT_EQ(r->len, kHdrs + payload);
      EXPECT_EQ(r->hdr_len, kHdrs);
      EXPECT_EQ(r->seed, seed) << "payload " << payload;
      // Ethernet padding after the IP packet is not part of it (pskb_trim_rcsum).
      Bytes padded = f;
      padded.resize(f.size() + 10, 0);
      const auto p = fast_inner_tcp4(sp(padded));
      ASSERT_TRUE(p.has_value());
      EXPECT_EQ(p->len, kHdrs + payload);
      EXPECT_EQ(p->seed, seed);
    }
  }
  // TCP timestamps (data offset 8 = 32 bytes): the head ends after the options.
  Bytes ts = tcp_frame(100, false, false);
  ts[14 + 20 + 12] = 0x80;
  const auto r = fast_inner_tcp4(sp(ts));
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->hdr_len, 14u + 20 + 32);
}

TEST(TunnelRxInner, DeclinesEveryOtherFrame) {
  const Bytes f = tcp_frame(100, false, false);
  auto with = [&](std::size_t at, std::uint8_t v) {
    Bytes g = f;
    g[at] = v;
    return g;
  };
  EXPECT_FALSE(fast_inner_tcp4(sp(tcp_frame(100, true, false))));  // IPv6
  EXPECT_FALSE(fast_inner_tcp4(sp(with(12, 0x81))));                 // 802.1Q tag (0x8100)
  EXPECT_FALSE(fast_inner_tcp4(sp(with(14, 0x46))));                 // IPv4 options (IHL 6)
  EXPECT_FALSE(fast_inner_tcp4(sp(with(14, 0x44))));                 // IHL 4: a header error
  EXPECT_FALSE(fast_inner_tcp4(sp(with(23, 17))));                   // UDP
  EXPECT_FALSE(fast_inner_tcp4(sp(with(20, 0x60))));                 // DF + MF: a fragment
  EXPECT_FALSE(fast_inner_tcp4(sp(with(21, 0x01))));                 // fragment offset 8
  EXPECT_FALSE(fast_inner_tcp4(sp(with(16, 0x01))));                 // tot_len 256+ > bytes
  Bytes small = f;
  small[16] = 0, small[17] = 19;  // tot_len 19 < 20: a header error for ip_rcv_core
  EXPECT_FALSE(fast_inner_tcp4(sp(small)));
  EXPECT_FALSE(fast_inner_tcp4(sp(Bytes(f.begin(), f.begin() + 33))));  // IPv4 header cut
}

// Every frame the fast reading accepts: the general functions' answers, over mutations of
// each header byte, truncations, and the TCP field rewritten to the seed.
TEST(TunnelRxInner, AgreesWithTheGeneralFunctions) {
  std::size_t taken = 0, seeds = 0, linear = 0;
  auto check = [&](const Bytes& g) {
    const auto r = fast_inner_tcp4(sp(g));
    if (!r) return;
    ++taken;
    const auto ip = ofld::tunnel::check_inner_frame(sp(g));
    ASSERT_EQ(ip.verdict, ofld::tunnel::InnerIpVerdict::Ok);
    ASSERT_EQ(r->len, ip.len);
    const auto t = sp(g).first(ip.len);
    EXPECT_EQ(r->hdr_len, ofld::tunnel::inner_header_len(t));
    const auto s = ofld::tunnel::seed_partial_ip(t.subspan(14));
    ASSERT_EQ(r->seed, s.has_value());
    if (s) {
      EXPECT_EQ(s->l4, 20u);
      EXPECT_EQ(s->off, 16u);
      ++seeds;
    }
    if (r->hdr_len == r->len) ++linear;
  };
  // The seed a CHECKSUM_PARTIAL sender leaves (the csum library's csum_tcpudp_nofold).
  auto reseed = [](Bytes g) {
    if (g.size() >= kHdrs && (g[14] & 0xF) == 5) {
      const std::uint16_t tot = get16(g.data() + 16);
      if (tot >= 40 && 14u + tot <= g.size())
        put16(g, 14 + 20 + 16, tcp_seed(g.data(), std::uint32_t(tot - 20)));
    }
    return g;
  };
  const std::uint8_t values[] = {0x00, 0x01, 0x05, 0x06, 0x11, 0x13, 0x14, 0x20, 0x28,
                                 0x40, 0x45, 0x46, 0x50, 0x60, 0x80, 0x86, 0xF0, 0xFF};
  for (bool seed : {false, true}) {
    for (std::size_t payload : {std::size_t(0), std::size_t(3), std::size_t(200)}) {
      const Bytes f = tcp_frame(payload, false, seed);
      for (std::size_t at = 12; at < kHdrs; ++at) {
        for (std::uint8_t v : values) {
          Bytes g = f;
          g[at] = v;
          check(g);
          check(reseed(g));
          g.resize(g.size() + 7, 0xAA);  // padding
          check(g);
        }
      }
      for (std::size_t n = 0; n <= f.size(); ++n) check(Bytes(f.begin(), f.begin() + long(n)));
      for (std::uint16_t tot : {std::uint16_t(20), std::uint16_t(39), std::uint16_t(40),
                                std::uint16_t(41), std::uint16_t(52)}) {
        Bytes g = f;
        put16(g, 16, tot);  // shorter IP packet than the frame: the rest is padding
        check(g);
        check(reseed(g));
      }
    }
  }
  // Not vacuous: frames with and without a seed, and frames kept linear, went the fast way.
  EXPECT_GT(taken, 1000u);
  EXPECT_GT(seeds, 100u);
  EXPECT_GT(linear, 10u);
}

}  // namespace

namespace {

ofld::tunnel::IpAddr addr(const char* s) { return *ofld::tunnel::IpAddr::parse(s); }

// The per-datagram checks after decap that the receive path made cheaper: vxlan_rcv drops a
// frame carrying the device's own source MAC (a loop; none is configured = nothing is
// dropped, even a zero source), and vxlan_snoop learns a new station and a station that
// moved to another remote at once, even within the snoop refresh interval.
TEST(TunnelRxInner, LoopDropAndSnoopAfterDecap) {
  namespace tn = ofld::tunnel;
  tn::VxlanConfig c;
  c.vni = 42;
  c.local = addr("10.0.0.2");
  c.remotes = {addr("10.0.0.1")};
  c.fdb_limits.from = tn::LearnFrom::Any;  // the station also moves to an unconfigured remote
  auto dgram = [](std::uint8_t src_last) {
    Bytes d = {0x08, 0, 0, 0, 0, 0, 42, 0};  // RFC 7348 §5: I flag, VNI 42
    const Bytes f = tcp_frame(100, false, false, 1000, src_last);  // source 02:00:00:00:00:xx
    d.insert(d.end(), f.begin(), f.end());
    return d;
  };
  tn::EndpointOptions o;
  o.own_mac = {0x02, 0, 0, 0, 0, 7};
  tn::Endpoint ep(c, o);
  const auto loop = std::size_t(tn::Drop::RxLoop);
  ep.receive(dgram(7), addr("10.0.0.1"), tn::OuterCsum::Present, 1);
  EXPECT_EQ(ep.counters().drops[loop], 1u);
  EXPECT_EQ(ep.counters().fdb_learned, 0u);
  ep.receive(dgram(8), addr("10.0.0.1"), tn::OuterCsum::Present, 2);
  EXPECT_EQ(ep.counters().fdb_learned, 1u);  // new station
  ep.receive(dgram(8), addr("10.0.0.1"), tn::OuterCsum::Present, 3);
  EXPECT_EQ(ep.counters().fdb_learned, 1u);  // same station, same remote
  ep.receive(dgram(8), addr("10.0.0.9"), tn::OuterCsum::Present, 4);
  EXPECT_EQ(ep.counters().fdb_learned, 2u);  // moved to 10.0.0.9, 2 ns later
  ep.receive(dgram(8), addr("10.0.0.1"), tn::OuterCsum::Present, 5);
  EXPECT_EQ(ep.counters().fdb_learned, 3u);  // and back
  EXPECT_EQ(ep.counters().drops[loop], 1u);
  EXPECT_EQ(ep.counters().drops_total(), 1u);

  tn::Endpoint none(c, {});  // no own MAC configured
  Bytes zero = dgram(8);
  for (std::size_t i = 8 + 6; i < 8 + 12; ++i) zero[i] = 0;  // source 00:00:00:00:00:00
  none.receive(zero, addr("10.0.0.1"), tn::OuterCsum::Present, 1);
  EXPECT_EQ(none.counters().drops_total(), 0u);
  EXPECT_EQ(none.counters().rx_datagrams, 1u);
}

}  // namespace
