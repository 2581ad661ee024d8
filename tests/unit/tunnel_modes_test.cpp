// GUE and GRE/ip6gre modes of `ofld tunnel`: configuration (words and TOML; every bad setting
// gets an error naming it), wire layouts (GUE V-6..V-10, W-27; GRE V-12, V-13), receive checks
// (V-7, V-9, W-21, W-25, C-33, K-2, ip_tunnel_rcv key/csum rules), and the transmit GSO through
// the tunnel hooks (X-31, W-28, X-33) looped back into a receiving datapath.
// Expected bytes are derived by hand from the spec's layouts (derivations in comments);
// checksums are verified with an RFC 1071 loop written here (rfc1071 below), not our library.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/daemon/config.hpp"
#include "../common/tunnel_config_of.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/wire/virtio_net.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace ofld::daemon;
using tunnel::Drop;
using tunnel_test::get16;

bool has(const std::optional<std::string>& e, const char* what) {
  return e && e->find(what) != std::string::npos;
}
std::optional<std::string> words(std::vector<std::string> w, DaemonConfig* out = nullptr) {
  DaemonConfig c;
  auto e = parse_tunnel_words(w, c);
  if (out) *out = c;
  return e;
}
std::string toml_err(const std::string& text) {
  auto p = parse_toml(text);
  return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string();
}

/// RFC 1071 one's-complement sum of 16-bit words (odd byte padded), folded; 0xFFFF = valid.
std::uint16_t rfc1071(const std::uint8_t* p, std::size_t n, std::uint32_t sum = 0) {
  for (std::size_t i = 0; i + 1 < n; i += 2) sum += std::uint32_t(p[i] << 8 | p[i + 1]);
  if (n & 1) sum += std::uint32_t(p[n - 1] << 8);
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return std::uint16_t(sum);
}
/// TCP checksum check of a raw IPv4/IPv6 packet with an RFC 1071 loop (pseudo header per
/// RFC 793 §3.1 / RFC 8200 §8.1).
bool tcp_ok_raw(const std::uint8_t* ip, std::size_t n) {
  const bool v6 = (ip[0] >> 4) == 6;
  const std::size_t l3 = v6 ? 40 : std::size_t(ip[0] & 0xf) * 4;
  const std::size_t l4 = v6 ? get16(ip + 4) : std::size_t(get16(ip + 2)) - l3;
  if (l3 + l4 > n) return false;
  std::uint32_t s = 0;
  const std::uint8_t* a = ip + (v6 ? 8 : 12);
  const std::size_t alen = v6 ? 32 : 8;
  for (std::size_t i = 0; i < alen; i += 2) s += std::uint32_t(a[i] << 8 | a[i + 1]);
  s += 6 + std::uint32_t(l4 & 0xffff) + std::uint32_t(l4 >> 16);
  return rfc1071(ip + l3, l4, s) == 0xFFFF;
}

/// An IPv4/IPv6 TCP packet (tunnel_test::tcp_frame without its Ethernet header).
std::vector<std::uint8_t> tcp_packet(std::size_t len, bool v6, bool seed, std::uint32_t seq = 1000) {
  auto f = tunnel_test::tcp_frame(len, v6, seed, seq);
  return std::vector<std::uint8_t>(f.begin() + 14, f.end());
}

tunnel::GueConfig gue_cfg(bool v6 = false, bool rco = false) {
  DaemonConfig c;
  std::vector<std::string> w = {"gue", "local", v6 ? "fd00::1" : "10.0.0.1", "remote",
                                v6 ? "fd00::2" : "10.0.0.2", "port", "5555"};
  if (rco) w.insert(w.end(), {"remcsumtx", "remcsumrx"});
  EXPECT_FALSE(parse_tunnel_words(w, c));
  return tunnel_test::gue_of(c);
}
tunnel::GreConfig gre_cfg(bool v6 = false, bool key = true, bool csum = true) {
  DaemonConfig c;
  std::vector<std::string> w = {v6 ? "ip6gre" : "gre", "local", v6 ? "fd00::1" : "10.0.0.1",
                                "remote", v6 ? "fd00::2" : "10.0.0.2"};
  if (key) w.insert(w.end(), {"key", "42"});
  if (csum) w.push_back("csum");
  EXPECT_FALSE(parse_tunnel_words(w, c));
  return tunnel_test::gre_of(c);
}
tunnel::IpAddr addr(const char* s) { return *tunnel::IpAddr::parse(s); }

// ---- configuration ---------------------------------------------------------------------------

TEST(TunnelModesConfig, GueWords) {
  DaemonConfig c;
  ASSERT_FALSE(words({"gue", "local", "10.0.0.1", "remote", "10.0.0.2", "port", "6080", "remcsumtx",
                      "remcsumrx", "remcsum-nopartial", "ttl", "9", "tos", "4", "mtu", "1400"},
                     &c));
  EXPECT_EQ(c.tunnel.name(), "gue");
  EXPECT_TRUE(c.tunnel.get<tunnel::GueConfig>());
  EXPECT_EQ(tunnel_test::gue_of(c).port, 6080);
  EXPECT_TRUE(tunnel_test::gue_of(c).remcsum_tx && tunnel_test::gue_of(c).remcsum_rx && tunnel_test::gue_of(c).remcsum_nopartial);
  EXPECT_EQ(tunnel_test::gue_of(c).ttl, 9);
  EXPECT_EQ(tunnel_test::gue_of(c).tos, 4);
  EXPECT_EQ(tunnel_test::gue_of(c).mtu, 1400);
  // V-10: IPv4 20 + UDP 8 + GUE 4 + RCO (private flags 4 + option 4) = 40.
  EXPECT_EQ(tunnel_test::gue_of(c).overhead(), 40);
  EXPECT_EQ(tunnel_test::gue_of(c).name(), "gue");
}

TEST(TunnelModesConfig, GreWordsKeyAndCsum) {
  DaemonConfig c;
  ASSERT_FALSE(words({"gre", "local", "10.0.0.1", "remote", "10.0.0.2", "key", "1.2.3.4", "csum"}, &c));
  EXPECT_TRUE(c.tunnel.get<tunnel::GreConfig>());
  EXPECT_EQ(tunnel_test::gre_of(c).ikey, 0x01020304u);  // iproute2: a dotted-quad key is the 32 bits in order
  EXPECT_EQ(tunnel_test::gre_of(c).okey, 0x01020304u);
  EXPECT_TRUE(tunnel_test::gre_of(c).icsum && tunnel_test::gre_of(c).ocsum);
  EXPECT_EQ(tunnel_test::gre_of(c).overhead(), 20 + 4 + 4 + 4);  // V-13: base + checksum section + key section
  EXPECT_EQ(tunnel_test::gre_of(c).name(), "gre");
  ASSERT_FALSE(words({"ip6gre", "local", "fd00::1", "remote", "fd00::2", "ikey", "7", "ocsum"}, &c));
  EXPECT_EQ(tunnel_test::gre_of(c).ikey, 7u);
  EXPECT_FALSE(tunnel_test::gre_of(c).okey);
  EXPECT_FALSE(tunnel_test::gre_of(c).icsum);
  EXPECT_TRUE(tunnel_test::gre_of(c).ocsum);
  EXPECT_EQ(tunnel_test::gre_of(c).name(), "ip6gre");
  EXPECT_EQ(tunnel_test::gre_of(c).overhead(), 40 + 4 + 4);
}

TEST(TunnelModesConfig, ErrorsNameTheSetting) {
  const std::vector<std::string> g4 = {"gue", "local", "10.0.0.1", "remote", "10.0.0.2"};
  auto gue = [&](std::vector<std::string> extra) {
    auto w = g4;
    w.insert(w.end(), extra.begin(), extra.end());
    return words(w);
  };
  auto gre = [](std::vector<std::string> extra, const char* mode = "gre") {
    std::vector<std::string> w = {mode, "local", "10.0.0.1", "remote", "10.0.0.2"};
    w.insert(w.end(), extra.begin(), extra.end());
    return words(w);
  };
  // GUE: no default port, and the message says the port is required.
  auto e = gue({});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("port"), std::string::npos);
  EXPECT_NE(e->find("no default port"), std::string::npos);
  EXPECT_TRUE(has(gue({"port", "0"}), "port"));
  EXPECT_TRUE(has(gue({"port", "70000"}), "port"));
  EXPECT_TRUE(has(gue({"port"}), "port"));
  EXPECT_TRUE(has(gue({"port", "5555", "noudpcsum", "remcsumtx"}), "K-2"));  // spec K-2
  EXPECT_TRUE(has(gue({"port", "5555", "noudpcsum", "remcsumtx"}), "remcsumtx"));
  EXPECT_TRUE(has(gue({"port", "5555", "udp6zerocsumtx"}), "udp6zerocsumtx"));
  EXPECT_TRUE(has(gue({"port", "5555", "remcsum-nopartial"}), "remcsum-nopartial"));
  EXPECT_TRUE(has(gue({"port", "5555", "key", "5"}), "key"));
  EXPECT_TRUE(has(gue({"port", "5555", "csum"}), "csum"));
  EXPECT_TRUE(has(gue({"port", "5555", "id", "5"}), "id"));
  EXPECT_TRUE(has(gue({"port", "5555", "ttl", "0"}), "ttl"));
  EXPECT_TRUE(has(gue({"port", "5555", "tos", "256"}), "tos"));
  EXPECT_TRUE(has(gue({"port", "5555", "mtu", "10"}), "mtu"));
  EXPECT_TRUE(has(gue({"port", "5555", "mtu", "65530"}), "mtu"));
  EXPECT_TRUE(has(gue({"port", "5555", "frobnicate"}), "frobnicate"));
  EXPECT_TRUE(has(gue({"port", "5555", "remote", "10.0.0.3"}), "remote"));
  EXPECT_TRUE(has(words({"gue", "remote", "10.0.0.2", "port", "5555"}), "local"));
  EXPECT_TRUE(has(words({"gue", "local", "10.0.0.1", "port", "5555"}), "remote"));
  EXPECT_TRUE(has(words({"gue", "local", "10.0.0.1", "remote", "fd00::2", "port", "5555"}), "remote"));
  EXPECT_TRUE(has(words({"gue", "local", "10.0.0.x", "remote", "10.0.0.2", "port", "5555"}), "local"));
  // GRE
  EXPECT_TRUE(has(gre({"key", "x"}), "key"));
  EXPECT_TRUE(has(gre({"key", "4294967296"}), "key"));
  EXPECT_TRUE(has(gre({"ikey"}), "ikey"));
  EXPECT_TRUE(has(gre({"okey", "1.2.3"}), "okey"));
  EXPECT_TRUE(has(gre({"port", "5555"}), "port"));
  EXPECT_TRUE(has(gre({"remcsumtx"}), "remcsumtx"));
  EXPECT_TRUE(has(gre({"noudpcsum"}), "noudpcsum"));
  EXPECT_TRUE(has(gre({"ttl", "300"}), "ttl"));
  EXPECT_TRUE(has(gre({"bogus"}), "bogus"));
  EXPECT_TRUE(has(gre({}, "ip6gre"), "local"));  // IPv4 addresses given to ip6gre
  EXPECT_TRUE(has(words({"gre", "local", "fd00::1", "remote", "fd00::2"}), "local"));
  // modes
  EXPECT_TRUE(has(words({"bareudp", "id", "1"}), "bareudp"));  // no such mode
  EXPECT_TRUE(has(words({"geneve", "id", "1"}), "local"));      // a mode: its settings checked
  EXPECT_TRUE(has(words({}), "mode"));
}

TEST(TunnelModesConfig, VxlanStillParsesThroughTheModeWord) {
  DaemonConfig c;
  ASSERT_FALSE(words({"vxlan", "id", "5", "local", "10.0.0.1", "remote", "10.0.0.2"}, &c));
  EXPECT_EQ(c.tunnel.name(), "vxlan");
  EXPECT_EQ(tunnel_test::vxlan_of(c).vni, 5u);
}

TEST(TunnelModesConfig, Toml) {
  auto p = parse_toml("dev = \"g0\"\n[gue]\nlocal = \"fd00::1\"\nremote = \"fd00::2\"\nport = 5555\n"
                      "remcsumtx = true\nremcsumrx = true\nudpcsum = true\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  const auto& c = std::get<DaemonConfig>(p);
  EXPECT_EQ(c.dev, "g0");
  EXPECT_EQ(c.tunnel.name(), "gue");
  EXPECT_EQ(tunnel_test::gue_of(c).port, 5555);
  EXPECT_TRUE(tunnel_test::gue_of(c).ipv6() && tunnel_test::gue_of(c).remcsum_tx && tunnel_test::gue_of(c).remcsum_rx);
  auto q = parse_toml("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nkey = 9\ncsum = true\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(q)) << std::get<std::string>(q);
  EXPECT_EQ(tunnel_test::gre_of(std::get<DaemonConfig>(q)).okey, 9u);
  EXPECT_TRUE(tunnel_test::gre_of(std::get<DaemonConfig>(q)).ocsum);
  auto r = parse_toml("[ip6gre]\nlocal = \"fd00::1\"\nremote = \"fd00::2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(r)) << std::get<std::string>(r);
  EXPECT_EQ(tunnel_test::gre_of(std::get<DaemonConfig>(r)).name(), "ip6gre");
}

TEST(TunnelModesConfig, TomlErrorsNameTheSetting) {
  const std::string g = "[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  EXPECT_NE(toml_err(g).find("gue.port"), std::string::npos);
  EXPECT_NE(toml_err(g + "port = \"x\"\n").find("port"), std::string::npos);
  EXPECT_NE(toml_err(g + "port = 5555\nremcsumtx = 1\n").find("gue.remcsumtx"), std::string::npos);
  EXPECT_NE(toml_err(g + "port = 5555\nwhat = true\n").find("gue.what"), std::string::npos);
  EXPECT_NE(toml_err(g + "port = 5555\nremote2 = [1]\n").find("gue.remote2"), std::string::npos);
  EXPECT_NE(toml_err(g + "port = 5555\nudpcsum = false\nremcsumtx = true\n").find("K-2"), std::string::npos);
  const std::string r = "[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  EXPECT_NE(toml_err(r + "key = \"z\"\n").find("key"), std::string::npos);
  EXPECT_NE(toml_err(r + "csum = 1\n").find("gre.csum"), std::string::npos);
  EXPECT_NE(toml_err(r + "port = 1\n").find("port"), std::string::npos);
  EXPECT_NE(toml_err(r + "[gue]\nport = 1\n").find("one tunnel"), std::string::npos);
  EXPECT_NE(toml_err(r + "[vxlan]\nid = 1\n").find("one tunnel"), std::string::npos);
  EXPECT_NE(toml_err("gre = 1\n").find("gre"), std::string::npos);
}

// ---- GUE wire format ---------------------------------------------------------------------------

TEST(TunnelGue, V6_V10_BareHeaderWithoutRco) {
  auto cfg = gue_cfg(false, false);
  auto pkt = core::Packet::from_bytes(tcp_packet(100, false, false));
  std::uint8_t h[16];
  bool rco = true;
  // V-6: ver 0, C 0, hlen 0 → byte 0 = 0x00; proto IPIP = 4; flags 0.
  ASSERT_EQ(tunnel::gue_build_header(pkt, cfg, h, rco), 4u);
  EXPECT_FALSE(rco);
  EXPECT_EQ(std::vector<std::uint8_t>(h, h + 4), (std::vector<std::uint8_t>{0x00, 0x04, 0x00, 0x00}));
  auto pkt6 = core::Packet::from_bytes(tcp_packet(100, true, false));
  ASSERT_EQ(tunnel::gue_build_header(pkt6, cfg, h, rco), 4u);  // proto IPv6 = 41 = 0x29
  EXPECT_EQ(std::vector<std::uint8_t>(h, h + 4), (std::vector<std::uint8_t>{0x00, 0x29, 0x00, 0x00}));
}

TEST(TunnelGue, V8_W27_RcoHeaderForPartialInner) {
  auto cfg = gue_cfg(false, true);
  auto pkt = core::Packet::from_bytes(tcp_packet(100, false, true));
  pkt.set_partial(20, 16);  // TCP after a 20-byte IPv4 header
  std::uint8_t h[16];
  bool rco = false;
  // V-8/W-27: hlen 2 (private flags + RCO option) → 0x02; proto 4; flags P = 0x0001;
  // private flags REMCSUM 0x80000000; start = 20 (0x0014); offset = 20 + 16 = 36 (0x0024).
  ASSERT_EQ(tunnel::gue_build_header(pkt, cfg, h, rco), 12u);
  EXPECT_TRUE(rco);
  EXPECT_EQ(std::vector<std::uint8_t>(h, h + 12),
            (std::vector<std::uint8_t>{0x02, 0x04, 0x00, 0x01, 0x80, 0, 0, 0, 0x00, 0x14, 0x00, 0x24}));
  // K-2: no RCO without an outer checksum (validate refuses the setting; the builder too).
  auto nocs = cfg;
  nocs.udp_csum = false;
  EXPECT_TRUE(has(tunnel::validate(nocs), "K-2"));
  ASSERT_EQ(tunnel::gue_build_header(pkt, nocs, h, rco), 4u);
  EXPECT_FALSE(rco);
}

TEST(TunnelGue, V7_Version1IsDirectIp) {
  tunnel::Counters c;
  auto p = tcp_packet(50, false, false);
  auto d = tunnel::gue_decap(p, gue_cfg(), tunnel::OuterCsum::Unknown, c);
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(d.pkt.len(), p.size());
}

TEST(TunnelGue, V9_W21_W25_K2_ReceiveChecks) {
  const auto inner = tcp_packet(50, false, true);
  auto with = [&](std::vector<std::uint8_t> hdr) {
    hdr.insert(hdr.end(), inner.begin(), inner.end());
    return hdr;
  };
  auto drop_of = [](const std::vector<std::uint8_t>& b, const tunnel::GueConfig& cfg,
                    tunnel::OuterCsum oc = tunnel::OuterCsum::Unknown) {
    tunnel::Counters c;
    auto d = tunnel::gue_decap(b, cfg, oc, c);
    EXPECT_EQ(c.drops_total(), d.ok ? 0u : 1u);
    return d.ok ? std::optional<Drop>() : std::optional<Drop>(d.reason);
  };
  const auto plain = gue_cfg(), rco = gue_cfg(false, true);
  EXPECT_EQ(drop_of(with({0x00, 0x04, 0, 0}), plain), std::nullopt);
  EXPECT_EQ(drop_of(with({0x20, 0x04, 0, 0}), plain), Drop::RxBadHeader);  // C=1 control (W-21)
  EXPECT_EQ(drop_of(with({0x00, 0x04, 0, 2}), plain), Drop::RxBadHeader);  // unknown flag (V-9)
  EXPECT_EQ(drop_of(with({0x80, 0x04, 0, 0}), plain), Drop::RxBadHeader);  // version 2
  EXPECT_EQ(drop_of(with({0x00, 0x29, 0, 0}), plain), Drop::RxNotIp);      // says IPv6, is IPv4
  EXPECT_EQ(drop_of(with({0x00, 0x11, 0, 0}), plain), Drop::RxNotIp);      // UDP: not IP-in-GUE
  EXPECT_EQ(drop_of({0x00, 0x04}, plain), Drop::RxTruncated);
  const std::vector<std::uint8_t> r = {0x02, 0x04, 0x00, 0x01, 0x80, 0, 0, 0, 0x00, 0x14, 0x00, 0x24};
  EXPECT_EQ(drop_of(with(r), plain), Drop::RxRcoNotEnabled);               // no remcsumrx
  EXPECT_EQ(drop_of(with(r), rco), std::nullopt);
  EXPECT_EQ(drop_of(with(r), rco, tunnel::OuterCsum::Zero), Drop::RxRcoNoOuterCsum);  // K-2
  auto far = r;
  far[11] = 0xF0;  // offset 240 + 2 > 70-byte inner packet
  EXPECT_EQ(drop_of(with(far), rco), Drop::RxRcoBadOffset);
  auto back = r;
  back[11] = 0x10;  // offset 16 < start 20 (V-9)
  EXPECT_EQ(drop_of(with(back), rco), Drop::RxBadHeader);
}

TEST(TunnelGue, C33_RcoPartialAndNopartial) {
  auto inner = tcp_packet(333, false, true);  // TCP field = pseudo-header seed
  std::vector<std::uint8_t> b = {0x02, 0x04, 0x00, 0x01, 0x80, 0, 0, 0, 0x00, 0x14, 0x00, 0x24};
  b.insert(b.end(), inner.begin(), inner.end());
  auto cfg = gue_cfg(false, true);
  tunnel::Counters c;
  auto d = tunnel::gue_decap(b, cfg, tunnel::OuterCsum::Unknown, c);
  ASSERT_TRUE(d.ok);
  ASSERT_EQ(d.pkt.ip_summed(), core::IpSummed::Partial);  // partial mode: nothing summed
  EXPECT_EQ(d.pkt.csum_start_offset(), 20);
  EXPECT_EQ(std::get<core::CsumPartial>(d.pkt.csum).csum_offset, 16);
  EXPECT_EQ(c.rx_csum_skipped, 1u);
  cfg.remcsum_nopartial = true;
  auto n = tunnel::gue_decap(b, cfg, tunnel::OuterCsum::Unknown, c);
  ASSERT_TRUE(n.ok);
  auto bytes = n.pkt.to_bytes();
  EXPECT_TRUE(tcp_ok_raw(bytes.data(), bytes.size()));  // field written: the packet verifies
}

// ---- GRE wire format ---------------------------------------------------------------------------

TEST(TunnelGre, V12_V13_HeaderLayoutAndChecksum) {
  auto cfg = gre_cfg(false, true, true);
  std::uint8_t h[16];
  // V-12: C 0x8000 | K 0x2000 = 0xA000; protocol 0x0800; V-13 order: checksum + reserved1, key.
  ASSERT_EQ(tunnel::gre_build_header(0x0800, cfg, h), 12u);
  EXPECT_EQ(std::vector<std::uint8_t>(h, h + 12),
            (std::vector<std::uint8_t>{0xA0, 0x00, 0x08, 0x00, 0, 0, 0, 0, 0, 0, 0, 42}));
  std::vector<std::uint8_t> pkt(h, h + 12);
  auto inner = tcp_packet(101, false, false);  // odd length: the RFC 1071 pad byte matters
  pkt.insert(pkt.end(), inner.begin(), inner.end());
  tunnel::gre_fill_checksum(pkt);
  EXPECT_NE(get16(pkt.data() + 4), 0);
  EXPECT_EQ(rfc1071(pkt.data(), pkt.size()), 0xFFFF);  // V-13: no pseudo header
  tunnel::Counters c;
  auto d = tunnel::gre_decap(pkt, cfg, c);
  ASSERT_TRUE(d.ok);
  EXPECT_EQ(c.rx_gre_csum_ok, 1u);
  EXPECT_EQ(d.pkt.to_bytes(), inner);
  // Plain GRE: 4 bytes, flags 0.
  auto bare = gre_cfg(false, false, false);
  ASSERT_EQ(tunnel::gre_build_header(0x86DD, bare, h), 4u);
  EXPECT_EQ(std::vector<std::uint8_t>(h, h + 4), (std::vector<std::uint8_t>{0, 0, 0x86, 0xDD}));
}

TEST(TunnelGre, ReceiveChecks) {
  const auto cfg = gre_cfg(false, true, true);
  auto build = [](std::vector<std::uint8_t> hdr, bool fill) {
    auto inner = tcp_packet(64, false, false);
    hdr.insert(hdr.end(), inner.begin(), inner.end());
    if (fill) tunnel::gre_fill_checksum(hdr);
    return hdr;
  };
  auto drop_of = [](const std::vector<std::uint8_t>& b, const tunnel::GreConfig& c) {
    tunnel::Counters ctr;
    auto d = tunnel::gre_decap(b, c, ctr);
    return d.ok ? std::optional<Drop>() : std::optional<Drop>(d.reason);
  };
  const std::vector<std::uint8_t> ck = {0xA0, 0, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 42};
  EXPECT_EQ(drop_of(build(ck, true), cfg), std::nullopt);
  auto bad = build(ck, true);
  bad.back() ^= 1;
  EXPECT_EQ(drop_of(bad, cfg), Drop::RxGreCsumBad);  // V-13
  auto other_key = ck;
  other_key[11] = 43;
  EXPECT_EQ(drop_of(build(other_key, true), cfg), Drop::RxKeyMismatch);
  // key absent while ikey is configured
  EXPECT_EQ(drop_of(build({0x80, 0, 0x08, 0, 0, 0, 0, 0}, true), cfg), Drop::RxKeyMismatch);
  // no checksum while icsum is configured, and a checksum while it is not (ip_tunnel_rcv)
  EXPECT_EQ(drop_of(build({0x20, 0, 0x08, 0, 0, 0, 0, 42}, false), cfg), Drop::RxCsumFlagMismatch);
  EXPECT_EQ(drop_of(build(ck, true), gre_cfg(false, true, false)), Drop::RxCsumFlagMismatch);
  EXPECT_EQ(drop_of(build({0x00, 0x01, 0x08, 0}, false), gre_cfg(false, false, false)),
            Drop::RxBadHeader);  // version 1
  EXPECT_EQ(drop_of(build({0x40, 0x00, 0x08, 0, 0, 0, 0, 0}, false), gre_cfg(false, false, false)),
            Drop::RxBadHeader);  // R (routing)
  EXPECT_EQ(drop_of(build({0x00, 0x00, 0x65, 0x58}, false), gre_cfg(false, false, false)),
            Drop::RxNotIp);  // TEB: an Ethernet inner is not for a gre (L3) device
  EXPECT_EQ(drop_of({0x00, 0x00}, gre_cfg(false, false, false)), Drop::RxTruncated);
  // a sequence number is accepted and ignored (no iseq)
  EXPECT_EQ(drop_of(build({0x10, 0, 0x08, 0, 0, 0, 0, 9}, false), gre_cfg(false, false, false)),
            std::nullopt);
}

// ---- transmit GSO through the tunnel hooks, looped back ---------------------------------------

struct Loop {
  std::vector<tunnel::TxTrain> trains;
  std::vector<std::vector<std::uint8_t>> datagrams;  // from the GUE/GRE header
  std::vector<tunnel::TapFrame> frames;
};

/// A TSO super-packet (gso_size `mss`, NEEDS_CSUM, seed in the TCP field) through A's
/// transmit, every datagram into B's receive.
template <class Cfg>  // GueConfig or GreConfig
Loop run_loop(const Cfg& a, bool v6_inner, std::size_t payload,
              std::uint16_t mss) {
  Loop L;
  tunnel::Endpoint tx(a, {});
  auto b = a;
  std::swap(b.local, b.remote);
  tunnel::Endpoint rx(b, {});
  auto pkt = tcp_packet(payload, v6_inner, true);
  wire::virtio_net::Hdr h{};
  h.flags = wire::virtio_net::kFlagNeedsCsum;
  h.gso_type = v6_inner ? wire::virtio_net::kGsoTcpv6 : wire::virtio_net::kGsoTcpv4;
  h.gso_size = mss;
  h.csum_start = v6_inner ? 40 : 20;
  h.csum_offset = 16;
  h.hdr_len = std::uint16_t(h.csum_start + 20);
  tx.transmit(h, pkt, 0, L.trains);
  EXPECT_EQ(tx.counters().drops_total(), 0u);
  for (auto& t : L.trains) {
    for (std::size_t off = 0; off < t.buf.size(); off += t.seg_size) {
      std::size_t n = std::min<std::size_t>(t.seg_size, t.buf.size() - off);
      L.datagrams.emplace_back(t.buf.begin() + off, t.buf.begin() + off + n);
    }
    rx.receive_train(t.buf, t.count > 1 ? t.seg_size : 0, a.local, tunnel::OuterCsum::Present, 1);
  }
  rx.rx_flush(2, L.frames);
  EXPECT_EQ(rx.counters().drops_total(), 0u);
  return L;
}

/// Concatenated TCP payload of raw IP/TCP packets.
std::vector<std::uint8_t> tcp_payload(const std::vector<std::uint8_t>& ip) {
  if (ip.size() < 40) {
    ADD_FAILURE() << "packet of " << ip.size() << " bytes";
    return {};
  }
  const bool v6 = (ip[0] >> 4) == 6;
  const std::size_t l3 = v6 ? 40 : std::size_t(ip[0] & 0xf) * 4;
  const std::size_t tot = v6 ? 40 + get16(&ip[4]) : get16(&ip[2]);
  if (tot > ip.size() || l3 + 20 > tot) {
    ADD_FAILURE() << "IP length " << tot << " vs " << ip.size() << " bytes";
    return {};
  }
  const std::size_t doff = std::size_t(ip[l3 + 12] >> 4) * 4;
  return std::vector<std::uint8_t>(ip.begin() + long(l3 + doff), ip.begin() + long(tot));
}

std::vector<std::uint8_t> expected_payload(std::size_t n) {
  std::vector<std::uint8_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = std::uint8_t(i * 7 + 3);  // tcp_frame's pattern
  return p;
}

TEST(TunnelModesDatapath, X31_GueSuperPacketSegmentsWithValidInnerChecksums) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "IPv6 underlay, IPv6 inner" : "IPv4 underlay, IPv4 inner");
    const std::size_t payload = 20000;
    const std::uint16_t mss = 1400;
    auto L = run_loop(gue_cfg(v6, false), v6, payload, mss);
    ASSERT_EQ(L.datagrams.size(), (payload + mss - 1) / mss);  // 15 segments
    std::vector<std::uint8_t> got;
    for (auto& d : L.datagrams) {
      ASSERT_GE(d.size(), 4u + 40u);
      EXPECT_EQ(d[0], 0x00);  // bare GUE header (V-10)
      EXPECT_EQ(d[1], v6 ? 41 : 4);
      std::vector<std::uint8_t> ip(d.begin() + 4, d.end());
      EXPECT_TRUE(tcp_ok_raw(ip.data(), ip.size()));  // inner summed while copying
      auto p = tcp_payload(ip);
      EXPECT_LE(p.size(), mss);
      got.insert(got.end(), p.begin(), p.end());
    }
    EXPECT_EQ(got, expected_payload(payload));
    // Receive side: GRO after decapsulation rebuilds one aggregate (or a few) with all bytes.
    std::vector<std::uint8_t> back;
    for (auto& f : L.frames) {
      auto p = tcp_payload(f.pkt->to_bytes());
      back.insert(back.end(), p.begin(), p.end());
    }
    EXPECT_EQ(back, expected_payload(payload));
    EXPECT_LT(L.frames.size(), L.datagrams.size());  // merged
  }
}

TEST(TunnelModesDatapath, W28_GueRcoSegmentsKeepTheSeed) {
  const std::size_t payload = 5000;
  const std::uint16_t mss = 1000;
  auto L = run_loop(gue_cfg(false, true), false, payload, mss);
  ASSERT_EQ(L.datagrams.size(), 5u);
  for (auto& d : L.datagrams) {
    ASSERT_GE(d.size(), 12u + 40u);
    // V-8/W-27 header: start 20, offset 36, the same for every segment.
    EXPECT_EQ(std::vector<std::uint8_t>(d.begin(), d.begin() + 12),
              (std::vector<std::uint8_t>{0x02, 0x04, 0x00, 0x01, 0x80, 0, 0, 0, 0x00, 0x14, 0x00, 0x24}));
    const std::uint8_t* ip = d.data() + 12;
    const std::uint32_t l4 = std::uint32_t(get16(ip + 2) - 20);
    // The TCP field holds this segment's pseudo-header seed (C-12: folded, not complemented):
    // sum of src, dst, proto 6 and the L4 length, computed here with the RFC 1071 loop.
    std::uint32_t s = 6 + l4;
    for (int i = 12; i < 20; i += 2) s += std::uint32_t(ip[i] << 8 | ip[i + 1]);
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    EXPECT_EQ(get16(ip + 20 + 16), s);
  }
  // Receiver (remcsumrx, partial mode): the frames go to the TUN with NEEDS_CSUM.
  std::vector<std::uint8_t> back;
  for (auto& f : L.frames) {
    EXPECT_TRUE(f.vnet.flags & wire::virtio_net::kFlagNeedsCsum);
    auto p = tcp_payload(f.pkt->to_bytes());
    back.insert(back.end(), p.begin(), p.end());
  }
  EXPECT_EQ(back, expected_payload(payload));
}

TEST(TunnelModesDatapath, X33_GreSuperPacketWithKeyAndChecksum) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "ip6gre" : "gre");
    const std::size_t payload = 9000;
    const std::uint16_t mss = 1300;
    auto L = run_loop(gre_cfg(v6, true, true), !v6, payload, mss);  // mixed inner/outer families
    ASSERT_EQ(L.datagrams.size(), (payload + mss - 1) / mss);
    std::vector<std::uint8_t> got;
    for (auto& d : L.datagrams) {
      ASSERT_GE(d.size(), 12u + 40u);
      EXPECT_EQ(d[0], 0xA0);                                 // C | K
      EXPECT_EQ(get16(&d[2]), v6 ? 0x0800 : 0x86DD);         // inner protocol
      EXPECT_EQ(d[11], 42);                                  // key
      EXPECT_EQ(rfc1071(d.data(), d.size()), 0xFFFF);        // GRE checksum valid (V-13)
      std::vector<std::uint8_t> ip(d.begin() + 12, d.end());
      EXPECT_TRUE(tcp_ok_raw(ip.data(), ip.size()));
      auto p = tcp_payload(ip);
      got.insert(got.end(), p.begin(), p.end());
    }
    EXPECT_EQ(got, expected_payload(payload));
    std::vector<std::uint8_t> back;
    for (auto& f : L.frames) {
      auto p = tcp_payload(f.pkt->to_bytes());
      back.insert(back.end(), p.begin(), p.end());
    }
    EXPECT_EQ(back, expected_payload(payload));
  }
}

TEST(TunnelModesDatapath, WrongSourceIsDropped) {
  tunnel::Endpoint rx(gre_cfg(false, false, false), {});
  std::vector<std::uint8_t> b = {0, 0, 0x08, 0};
  auto inner = tcp_packet(10, false, false);
  b.insert(b.end(), inner.begin(), inner.end());
  rx.receive(b, addr("10.0.0.9"), tunnel::OuterCsum::Unknown, 0);
  EXPECT_EQ(rx.counters().drops[std::size_t(Drop::RxWrongSource)], 1u);
}

}  // namespace
