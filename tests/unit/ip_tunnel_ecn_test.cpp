// RFC 6040 ECN at the tunnel and udp6zerocsumrx (a zero IPv6 UDP checksum
// enforced in the library) for the GUE and GRE / ip6gre modes: gue_decap / gre_decap and the
// Endpoint. Expected values come from RFC 6040 §4.2 Figure 4 (decapsulation) and §4.1
// (normal-mode encapsulation: CE → ECT(0)), and RFC 6935 §5 / RFC 8200 §8.1 (a zero UDP
// checksum over IPv6 is dropped unless the tunnel agreed to it); IPv4 header checksums are
// verified with an RFC 1071 loop written here.
#include <gtest/gtest.h>

#include "ofld/daemon/config.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/wire/virtio_net.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using tunnel::Drop;

std::uint16_t rfc1071(const std::uint8_t* p, std::size_t n) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < n; i += 2) sum += std::uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += std::uint32_t(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return std::uint16_t(sum);
}

/// An IPv4/IPv6 TCP packet with dsfield `ds` (IPv4 header checksum recomputed, RFC 1071).
std::vector<std::uint8_t> ip_packet(bool v6, std::uint8_t ds) {
  auto f = tunnel_test::tcp_frame(40, v6, false);
  std::vector<std::uint8_t> p(f.begin() + 14, f.end());
  if (v6) {
    p[0] = std::uint8_t(0x60 | (ds >> 4));
    p[1] = std::uint8_t((p[1] & 0x0f) | (ds << 4));
  } else {
    p[1] = ds;
    p[10] = p[11] = 0;
    const std::uint16_t c = std::uint16_t(~rfc1071(p.data(), 20));
    p[10] = std::uint8_t(c >> 8);
    p[11] = std::uint8_t(c);
  }
  return p;
}
std::uint8_t dsfield(const std::uint8_t* ip) {
  return (ip[0] >> 4) == 6 ? std::uint8_t((ip[0] << 4) | (ip[1] >> 4)) : ip[1];
}

tunnel::TunnelConfig cfg_of(std::vector<std::string> w) {
  daemon::DaemonConfig c;
  auto e = daemon::parse_tunnel_words(w, c);
  EXPECT_FALSE(e) << *e;
  return c.tunnel;
}
/// gue_decap or gre_decap, by the configuration's encapsulation (outer UDP checksum present).
tunnel::DecapResult decap_l3(const std::vector<std::uint8_t>& b, const tunnel::TunnelConfig& cfg,
                             tunnel::Counters& c, int otos = -1) {
  if (const auto* g = cfg.get<tunnel::GueConfig>())
    return tunnel::gue_decap(b, *g, tunnel::OuterCsum::Present, c, otos);
  return tunnel::gre_decap(b, *cfg.get<tunnel::GreConfig>(), c, otos);
}
tunnel::IpAddr& remote_of(tunnel::TunnelConfig& cfg) {
  if (auto* g = cfg.get<tunnel::GueConfig>()) return g->remote;
  return cfg.get<tunnel::GreConfig>()->remote;
}
struct Mode {
  const char* name;
  std::vector<std::string> words;
};
std::vector<Mode> modes() {
  return {{"gue", {"gue", "local", "10.0.0.1", "remote", "10.0.0.2", "port", "5555"}},
          {"gue6", {"gue", "local", "fd00::1", "remote", "fd00::2", "port", "5555"}},
          {"gre", {"gre", "local", "10.0.0.1", "remote", "10.0.0.2", "key", "7", "csum"}},
          {"ip6gre", {"ip6gre", "local", "fd00::1", "remote", "fd00::2"}}};
}

/// The tunnel payload (GUE header + packet, or GRE header (+ checksum) + packet).
std::vector<std::uint8_t> encap(const tunnel::TunnelConfig& tc, const std::vector<std::uint8_t>& ip) {
  std::vector<std::uint8_t> b;
  const bool v6 = (ip[0] >> 4) == 6;
  const tunnel::GreConfig* gre = tc.get<tunnel::GreConfig>();
  const tunnel::GreConfig& cfg = gre ? *gre : tunnel::GreConfig{};
  if (!gre) {
    b = {0x00, std::uint8_t(v6 ? 41 : 4), 0, 0};  // V-6: version 0, hlen 0, proto
  } else {
    b = {0, 0, std::uint8_t(v6 ? 0x86 : 0x08), std::uint8_t(v6 ? 0xDD : 0x00)};
    if (cfg.icsum) b[0] |= 0x80, b.insert(b.end(), {0, 0, 0, 0});
    if (cfg.ikey) {
      b[0] |= 0x20;
      const std::uint32_t k = *cfg.ikey;
      b.insert(b.end(), {std::uint8_t(k >> 24), std::uint8_t(k >> 16), std::uint8_t(k >> 8), std::uint8_t(k)});
    }
  }
  b.insert(b.end(), ip.begin(), ip.end());
  if (gre && cfg.icsum) {
    const std::uint16_t c = std::uint16_t(~rfc1071(b.data(), b.size()));
    b[4] = std::uint8_t(c >> 8), b[5] = std::uint8_t(c);
  }
  return b;
}

// RFC 6040 §4.2 Figure 4, indexed [inner][outer] with 0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE
// (the codepoint values); -1 = drop.
constexpr int kFig4[4][4] = {
    /* inner Not-ECT */ {0, 0, 0, -1},
    /* inner ECT(1)  */ {1, 1, 1, 3},
    /* inner ECT(0)  */ {2, 1, 2, 3},
    /* inner CE      */ {3, 3, 3, 3},
};

TEST(IpTunnelEcnRfc6040, GueGreDecapFollowsRfc6040Figure4) {
  for (const auto& m : modes()) {
    const auto cfg = cfg_of(m.words);
    for (bool v6in : {false, true}) {
      for (int in = 0; in < 4; ++in) {
        for (int out = 0; out < 4; ++out) {
          SCOPED_TRACE(std::string(m.name) + (v6in ? " inner v6" : " inner v4") +
                       " inner ecn " + std::to_string(in) + " outer ecn " + std::to_string(out));
          const std::uint8_t dscp = 0xA0;  // DSCP 40: must survive untouched
          const auto b = encap(cfg, ip_packet(v6in, std::uint8_t(dscp | in)));
          tunnel::Counters c;
          const int otos = 0x48 | out;  // outer DSCP is not copied inward (RFC 6040 §4.2)
          auto d = decap_l3(b, cfg, c, otos);
          const int want = kFig4[in][out];
          if (want < 0) {
            EXPECT_FALSE(d.ok);
            EXPECT_EQ(d.reason, Drop::RxEcnNotEct);
            EXPECT_EQ(c.drops[std::size_t(Drop::RxEcnNotEct)], 1u);
            continue;
          }
          ASSERT_TRUE(d.ok) << to_string(d.reason);
          const auto bytes = d.pkt.to_bytes();
          EXPECT_EQ(dsfield(bytes.data()), std::uint8_t(dscp | want));
          if (!v6in) { EXPECT_EQ(rfc1071(bytes.data(), 20), 0xFFFF) << "IPv4 header checksum"; }
          EXPECT_EQ(c.rx_ecn_ce, (want == 3 && in != 3) ? 1u : 0u);
          EXPECT_EQ(c.rx_ecn_bogus, (in == 0 && (out == 1 || out == 2)) ? 1u : 0u);
          EXPECT_EQ(c.drops_total(), 0u);
          // No outer TOS known: nothing changes.
          tunnel::Counters c2;
          auto u = decap_l3(b, cfg, c2);
          ASSERT_TRUE(u.ok);
          EXPECT_EQ(dsfield(u.pkt.to_bytes().data()), std::uint8_t(dscp | in));
        }
      }
    }
  }
}

TEST(IpTunnelEcnRfc6040, IpDatapathReceiveMarksCeAndDropsNotEct) {
  for (const auto& m : modes()) {
    SCOPED_TRACE(m.name);
    auto cfg = cfg_of(m.words);
    std::swap(cfg.common().local, remote_of(cfg));
    const auto from = remote_of(cfg);
    tunnel::Endpoint dp(cfg, {});
    std::swap(cfg.common().local, remote_of(cfg));  // encap() reads ikey/icsum only
    // CE outer over ECT(0) inner → inner CE, header checksum valid.
    dp.receive(encap(cfg, ip_packet(false, 0x02)), from, tunnel::OuterCsum::Present, 1, 0x03);
    // CE outer over Not-ECT inner → dropped, counted.
    dp.receive(encap(cfg, ip_packet(false, 0x00)), from, tunnel::OuterCsum::Present, 1, 0x03);
    std::vector<tunnel::TapFrame> out;
    dp.rx_flush(2, out);
    ASSERT_EQ(out.size(), 1u);
    const auto b0 = out[0].pkt->to_bytes();
    EXPECT_EQ(b0[1], 0x03);
    EXPECT_EQ(rfc1071(b0.data(), 20), 0xFFFF);
    EXPECT_EQ(dp.counters().drops[std::size_t(Drop::RxEcnNotEct)], 1u);
    EXPECT_EQ(to_string(Drop::RxEcnNotEct), "rx_ecn_not_ect");
    EXPECT_EQ(dp.counters().rx_ecn_ce, 1u);
  }
}

TEST(IpTunnelEcnRfc6040, IpDatapathTransmitOuterTosPerRfc6040) {
  // RFC 6040 §4.1 normal mode: the outer ECN is the inner's, except CE → ECT(0).
  const int enc[4] = {0, 1, 2, 2};
  for (const auto& m : modes()) {
    for (int tosmode = 0; tosmode < 3; ++tosmode) {  // default, tos 28 (hexadecimal: 0x28), tos inherit
      auto w = m.words;
      if (tosmode == 1) w.insert(w.end(), {"tos", "28"});
      if (tosmode == 2) w.insert(w.end(), {"tos", "inherit"});
      const auto cfg = cfg_of(w);
      for (bool v6in : {false, true}) {
        for (int in = 0; in < 4; ++in) {
          SCOPED_TRACE(std::string(m.name) + " tosmode " + std::to_string(tosmode) + " v6in " +
                       std::to_string(v6in) + " inner ecn " + std::to_string(in));
          tunnel::Endpoint dp(cfg, {});
          std::vector<tunnel::TxTrain> tr;
          dp.transmit(wire::virtio_net::Hdr{}, ip_packet(v6in, std::uint8_t(0xB8 | in)), 0, tr);
          ASSERT_EQ(tr.size(), 1u);
          const int dscp = tosmode == 0 ? 0 : tosmode == 1 ? 0x28 : 0xB8;
          EXPECT_EQ(tr[0].tos, std::uint8_t(dscp | enc[in]));
        }
      }
    }
  }
}

TEST(IpTunnelEcnRfc6040, TosInheritAcceptedForGueAndGre) {
  for (const auto& m : modes()) {
    auto w = m.words;
    w.insert(w.end(), {"tos", "inherit"});
    daemon::DaemonConfig c;
    EXPECT_FALSE(daemon::parse_tunnel_words(w, c)) << m.name;
    EXPECT_TRUE(c.tunnel.common().tos_inherit) << m.name;
  }
}

TEST(TunnelUdp6ZeroCsum, GueIpv6ZeroUdpChecksumNeedsUdp6zerocsumrx) {
  const auto v6 = *cfg_of(modes()[1].words).get<tunnel::GueConfig>();
  auto v6rx = *cfg_of({"gue", "local", "fd00::1", "remote", "fd00::2", "port", "5555", "udp6zerocsumrx"})
                   .get<tunnel::GueConfig>();
  const auto v4 = *cfg_of(modes()[0].words).get<tunnel::GueConfig>();
  const auto b4 = encap(v4, ip_packet(false, 0));
  tunnel::Counters c;
  auto d = tunnel::gue_decap(b4, v6, tunnel::OuterCsum::Zero, c);
  EXPECT_FALSE(d.ok);
  EXPECT_EQ(d.reason, Drop::RxUdp6ZeroCsum);
  EXPECT_EQ(c.drops[std::size_t(Drop::RxUdp6ZeroCsum)], 1u);
  EXPECT_EQ(to_string(Drop::RxUdp6ZeroCsum), "rx_udp6_zero_csum");
  EXPECT_TRUE(tunnel::gue_decap(b4, v6rx, tunnel::OuterCsum::Zero, c).ok);
  EXPECT_TRUE(tunnel::gue_decap(b4, v6, tunnel::OuterCsum::Present, c).ok);
  EXPECT_TRUE(tunnel::gue_decap(b4, v6, tunnel::OuterCsum::Unknown, c).ok);
  EXPECT_TRUE(tunnel::gue_decap(b4, v4, tunnel::OuterCsum::Zero, c).ok);  // IPv4: 0 = none
  EXPECT_EQ(c.drops_total(), 1u);
  // Through the datapath: counted, nothing reaches the TUN.
  std::swap(v6rx.local, v6rx.remote);
  auto v6r = v6rx;
  v6r.udp6_zero_csum_rx = false;
  tunnel::Endpoint dp(v6r, {});
  dp.receive(b4, v6r.remote, tunnel::OuterCsum::Zero, 1);
  std::vector<tunnel::TapFrame> out;
  dp.rx_flush(2, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(dp.counters().drops[std::size_t(Drop::RxUdp6ZeroCsum)], 1u);
}

}  // namespace
