// `ofld tunnel geneve`: configuration (words and TOML, errors naming the setting), the header
// it writes (RFC 8926 §3.4/§3.5 layouts; expected bytes derived by hand in comments, and the
// same datagram dissected by tshark as an independent witness), decapsulation (GN-7 receive
// policy and GN-9..GN-11: version, protocol type, VNI, option bounds, O bit, critical options)
// and the transmit GSO looped back into a receiving endpoint (GN-12, X-31; GRO after
// decapsulation).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "../common/frame_builder.hpp"
#include "ofld/daemon/config.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/geneve.hpp"
#include "ofld/wire/virtio_net.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace ofld::daemon;
using tunnel::Drop;
using tunnel::GeneveConfig;
using tunnel_test::get16;
using Bytes = std::vector<std::uint8_t>;

bool has(const std::optional<std::string>& e, const char* what) {
  return e && e->find(what) != std::string::npos;
}

std::optional<std::string> words(std::vector<std::string> w, DaemonConfig* out = nullptr) {
  DaemonConfig c;
  auto e = parse_tunnel_words(w, c);
  if (out) *out = c;
  return e;
}

GeneveConfig geneve_cfg(bool v6 = false, std::vector<std::string> extra = {}) {
  DaemonConfig c;
  std::vector<std::string> w = {"geneve", "id", "42", "local", v6 ? "fd00::1" : "10.0.0.1",
                                "remote", v6 ? "fd00::2" : "10.0.0.2"};
  w.insert(w.end(), extra.begin(), extra.end());
  EXPECT_FALSE(parse_tunnel_words(w, c)) << *parse_tunnel_words(w, c);
  return std::get<GeneveConfig>(c.tunnel.encap);
}

/// Drops of reason d.
std::uint64_t drops(const tunnel::Counters& c, Drop d) { return c.drops[std::size_t(d)]; }

/// An inner Ethernet/IPv4/TCP frame with a valid checksum (the one frame builder).
Bytes inner_frame(std::size_t payload = 100) {
  return ofld::fb::tunnel::tcp_frame(payload, false, false);
}

/// A Geneve datagram: the 8-byte base header (version 0, given Opt Len, flags, protocol,
/// VNI 42) + `opts` + `inner`. Written by hand from RFC 8926 §3.4, not by the code under test.
Bytes datagram(const Bytes& opts, std::uint8_t flags = 0, std::uint16_t proto = 0x6558,
               std::uint32_t vni = 42, const Bytes& inner = inner_frame(), unsigned ver = 0,
               int opt_len_words = -1) {
  Bytes d = {std::uint8_t(ver << 6 | (opt_len_words >= 0 ? unsigned(opt_len_words) : opts.size() / 4)),
             flags,
             std::uint8_t(proto >> 8),
             std::uint8_t(proto),
             std::uint8_t(vni >> 16),
             std::uint8_t(vni >> 8),
             std::uint8_t(vni),
             0};
  d.insert(d.end(), opts.begin(), opts.end());
  d.insert(d.end(), inner.begin(), inner.end());
  return d;
}

/// One option (RFC 8926 §3.5): class, type, R=0, length in words, data of 4·words bytes.
Bytes option(std::uint16_t cls, std::uint8_t type, std::size_t words, std::uint8_t fill = 0xab) {
  Bytes o = {std::uint8_t(cls >> 8), std::uint8_t(cls), type, std::uint8_t(words)};
  o.insert(o.end(), words * 4, fill);
  return o;
}

// ---- configuration ------------------------------------------------------------------------------

TEST(TunnelGeneveConfig, WordsAsIproute2SpellsThem) {
  DaemonConfig c;
  ASSERT_FALSE(words({"geneve", "id", "4242", "local", "10.0.0.1", "remote", "10.0.0.2", "ttl", "9",
                      "tos", "inherit", "noudpcsum", "srcport", "4000", "5000", "options",
                      "0102:80:00c0ffee,ffff:1:", "options", "3:7f:0000000100000002"},
                     &c));
  const auto& g = std::get<GeneveConfig>(c.tunnel.encap);
  EXPECT_EQ(g.vni, 4242u);
  EXPECT_EQ(g.dstport, 6081);  // RFC 8926 §3.3, the kernel's default
  ASSERT_EQ(g.remotes.size(), 1u);
  EXPECT_EQ(g.remotes[0].to_string(), "10.0.0.2");
  EXPECT_FALSE(g.learning);  // GN-13: the classic device learns nothing
  EXPECT_EQ(g.ttl, 9);
  EXPECT_TRUE(g.tos_inherit);
  EXPECT_FALSE(g.udp_csum);
  EXPECT_EQ(g.port_min, 4000);
  EXPECT_EQ(g.port_max, 5000);
  ASSERT_EQ(g.options.size(), 3u);
  EXPECT_EQ(g.options[0], (tunnel::GeneveOption{0x0102, 0x80, {0x00, 0xc0, 0xff, 0xee}}));
  EXPECT_EQ(g.options[1], (tunnel::GeneveOption{0xffff, 0x01, {}}));
  EXPECT_EQ(g.options[2].data.size(), 8u);
  EXPECT_EQ(g.options_len(), 8u + 4u + 12u);
  EXPECT_EQ(tunnel::geneve_options_text(g.options), "0102:80:00c0ffee,ffff:01:,0003:7f:0000000100000002");
  EXPECT_EQ(c.tunnel.name(), "geneve");
  // outer IPv4 20 + UDP 8 + Geneve 8 + options 24 + inner Ethernet 14
  EXPECT_EQ(c.tunnel.overhead(), 74);
  EXPECT_EQ(c.tunnel.device_mtu(), 1500 - 74);
  EXPECT_EQ(tunnel::make_encapsulation(c.tunnel)->link(), wire::LinkType::Ethernet);
  EXPECT_EQ(tunnel::make_encapsulation(c.tunnel)->dst_port(), 6081);
}

TEST(TunnelGeneveConfig, ErrorsNameTheSetting) {
  EXPECT_TRUE(has(words({"geneve", "local", "10.0.0.1", "remote", "10.0.0.2"}), "id:"));
  EXPECT_TRUE(has(words({"geneve", "id", "16777216", "local", "10.0.0.1", "remote", "10.0.0.2"}), "id:"));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1"}), "remote:"));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "remote",
                         "10.0.0.2"}),
                  "given twice"));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "fd00::2"}), "remote:"));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "udp6zerocsumtx"}),
                  "udp6zerocsumtx"));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "remcsumtx"}),
                  "remcsumtx: not a geneve setting"));
  for (const char* bad : {"0102:80", "0102:80:00c0ff", "10000:1:", "1:100:", "x:1:", "1:1:0000000g", "1:1:,"}) {
    SCOPED_TRACE(bad);
    EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "options", bad}),
                    "options:"));
  }
  // 124 bytes of data is the most one option holds (Length: 5 bits of words)
  EXPECT_FALSE(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "options",
                      "1:1:" + std::string(248, '0')}));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "options",
                         "1:1:" + std::string(256, '0')}),
                  "options:"));
  // the list: 252 bytes fit (Opt Len 63), 256 do not
  const std::string o128 = "1:1:" + std::string(248, '0'), o124 = "2:2:" + std::string(240, '0');
  EXPECT_FALSE(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "options", o128 + "," + o124}));
  EXPECT_TRUE(has(words({"geneve", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "options",
                         o128, "options", o128}),
                  "252"));
}

TEST(TunnelGeneveConfig, TomlTable) {
  auto p = parse_toml(
      "[geneve]\nid = 7\nlocal = \"fd00::1\"\nremote = \"fd00::2\"\ndstport = 6082\n"
      "udp6zerocsumrx = true\noptions = [\"0102:80:00c0ffee\", \"0103:01:\"]\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  const auto& g = std::get<GeneveConfig>(std::get<DaemonConfig>(p).tunnel.encap);
  EXPECT_EQ(g.vni, 7u);
  EXPECT_EQ(g.dstport, 6082);
  EXPECT_TRUE(g.udp6_zero_csum_rx);
  EXPECT_EQ(g.options.size(), 2u);
  auto e = parse_toml("[geneve]\nid = 7\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\noptions = \"zz\"\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(e));
  EXPECT_NE(std::get<std::string>(e).find("geneve.options:"), std::string::npos) << std::get<std::string>(e);
}

// ---- header -------------------------------------------------------------------------------------

TEST(TunnelGeneve, GN1_GN12_HeaderBytesFromRfc8926) {
  auto g = geneve_cfg(false, {"options", "0102:80:00c0ffee,0103:01:"});
  g.vni = 0x123456;
  std::array<std::uint8_t, tunnel::kMaxTunnelHdr> h{};
  ASSERT_EQ(tunnel::geneve_build_header(g, h), 20u);
  // Ver 0 | Opt Len 3 (8 + 4 bytes of options = 3 words) ; O 0, C 1 (0102:80 is critical:
  // type bit 7, §3.5.1) ; protocol 0x6558 ; VNI 0x123456 ; reserved 0 ;
  // option 1: class 0x0102, type 0x80, R 0 | length 1 word, data 00 c0 ff ee ;
  // option 2: class 0x0103, type 0x01, length 0.
  const Bytes want = {0x03, 0x40, 0x65, 0x58, 0x12, 0x34, 0x56, 0x00, 0x01, 0x02,
                      0x80, 0x01, 0x00, 0xc0, 0xff, 0xee, 0x01, 0x03, 0x01, 0x00};
  EXPECT_EQ(Bytes(h.begin(), h.begin() + 20), want);
  // no option critical: C clear; no options: the 8-byte base header alone
  auto plain = geneve_cfg(false, {"options", "0103:01:00000001"});
  ASSERT_EQ(tunnel::geneve_build_header(plain, h), 16u);
  EXPECT_EQ(h[0], 0x02);
  EXPECT_EQ(h[1], 0x00);
  auto none = geneve_cfg();
  ASSERT_EQ(tunnel::geneve_build_header(none, h), 8u);
  EXPECT_EQ(Bytes(h.begin(), h.begin() + 8), (Bytes{0x00, 0x00, 0x65, 0x58, 0x00, 0x00, 0x2a, 0x00}));
}

TEST(TunnelGeneve, GN1_OptionsOfEveryLengthRoundTrip) {
  // Every option data length 0..124 bytes, alone and followed by a second option filling
  // the list to 252 bytes (Opt Len 63, a 260-byte header): the encapsulation writes them,
  // the decapsulation of the same endpoint configuration takes them (none critical).
  for (std::size_t words = 0; words <= 31; ++words) {
    for (bool fill : {false, true}) {
      SCOPED_TRACE("option words " + std::to_string(words) + (fill ? " + filler" : ""));
      std::string o = "0a0b:0c:" + std::string(words * 8, '5');
      std::size_t rest = 252 - (4 + words * 4);  // bytes left in the list
      while (fill && rest >= 4) {  // fillers of ≤ 124 bytes of data up to Opt Len 63
        const std::size_t d = std::min<std::size_t>(rest - 4, 124);
        o += ",0a0b:0d:" + std::string(d * 2, 'a');
        rest -= 4 + d;
      }
      auto g = geneve_cfg(false, {"options", o});
      tunnel::Endpoint ep(g, {});
      std::array<std::uint8_t, tunnel::kMaxTunnelHdr> h{};
      const Bytes in = inner_frame();
      core::Packet p = core::Packet::from_bytes(in);
      const auto info = ep.encapsulation().encap(p, false, h);
      ASSERT_TRUE(info.ok);
      ASSERT_EQ(info.hdr_len, 8 + g.options_len());
      EXPECT_EQ(h[0] & 0x3f, g.options_len() / 4);
      EXPECT_EQ(h[12 - 1], words);  // first option's Length field (R bits 0)
      Bytes d(h.begin(), h.begin() + long(info.hdr_len));
      d.insert(d.end(), in.begin(), in.end());
      tunnel::Counters c;
      auto r = ep.encapsulation().decap(d, tunnel::OuterCsum::Present, c, nullptr, -1);
      ASSERT_TRUE(r.ok) << to_string(r.reason);
      EXPECT_EQ(r.pkt.to_bytes(), in);
    }
  }
}

// ---- decapsulation ------------------------------------------------------------------------------

TEST(TunnelGeneve, GN7_GN9_GN11_ReceiveChecks) {
  const auto g = geneve_cfg();
  auto run = [&](const Bytes& d, tunnel::OuterCsum o = tunnel::OuterCsum::Present) {
    tunnel::Counters c;
    auto r = tunnel::geneve_decap(d, g, o, c);
    EXPECT_EQ(c.drops_total(), r.ok ? 0u : 1u);
    return r.ok ? std::optional<Drop>{} : std::optional<Drop>{r.reason};
  };
  const Bytes in = inner_frame();
  EXPECT_EQ(run(datagram({})), std::nullopt);
  // a non-critical option this endpoint does not know is skipped (§3.5.1)
  EXPECT_EQ(run(datagram(option(0x0103, 0x01, 2))), std::nullopt);
  EXPECT_EQ(run(Bytes(5, 0)), Drop::RxTruncated);
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 42, {}, 1)), Drop::RxBadHeader);       // version 1
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 42, {}, 3)), Drop::RxBadHeader);       // version 3
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 42, Bytes(8, 0), 0, 4)), Drop::RxTruncated);  // Opt Len past the end
  EXPECT_EQ(run(datagram({}, 0, 0x0800)), Drop::RxBadProtocol);  // IPv4 protocol type: TEB only
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 43)), Drop::RxWrongVni);
  // an option whose Length runs past Opt Len: option 1 word of header claiming 2 of data
  Bytes bad = option(0x0103, 0x01, 2);
  EXPECT_EQ(run(datagram(bad, 0, 0x6558, 42, in, 0, 2)), Drop::RxBadHeader);
  EXPECT_EQ(run(datagram({}, 0x80)), Drop::RxOam);  // O bit: a control packet (§3.4)
  EXPECT_EQ(run(datagram(option(0x0103, 0x01, 1), 0x80)), Drop::RxOam);
  // the reserved flag bits are ignored on receive (§3.4: "MUST be ignored")
  EXPECT_EQ(run(datagram({}, 0x3f)), std::nullopt);
  // inner Ethernet frame missing or its IP lengths wrong: as VXLAN's receive
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 42, Bytes(10, 0))), Drop::RxTruncated);
  Bytes shortip = in;
  shortip.resize(40);
  EXPECT_EQ(run(datagram({}, 0, 0x6558, 42, shortip)), Drop::RxInnerTooSmall);
  // IPv6 underlay: a zero outer checksum needs udp6zerocsumrx (RFC 6935)
  const auto g6 = geneve_cfg(true);
  tunnel::Counters c6;
  EXPECT_EQ(tunnel::geneve_decap(datagram({}), g6, tunnel::OuterCsum::Zero, c6).reason, Drop::RxUdp6ZeroCsum);
  const auto g6z = geneve_cfg(true, {"udp6zerocsumrx"});
  EXPECT_TRUE(tunnel::geneve_decap(datagram({}), g6z, tunnel::OuterCsum::Zero, c6).ok);
}

TEST(TunnelGeneve, GN10_CriticalOptionsUnknownAreDropped) {
  const auto g = geneve_cfg();  // no options configured: no option is understood
  auto reason = [&](const GeneveConfig& cfg, const Bytes& d) {
    tunnel::Counters c;
    auto r = tunnel::geneve_decap(d, cfg, tunnel::OuterCsum::Present, c);
    return r.ok ? std::optional<Drop>{} : std::optional<Drop>{r.reason};
  };
  // C set with a critical option (type bit 7): the kernel's classic device drops every one
  EXPECT_EQ(reason(g, datagram(option(0x0102, 0x80, 1), 0x40)), Drop::RxCriticalOption);
  // C set and no critical option: the header claims one the endpoint cannot find
  EXPECT_EQ(reason(g, datagram({}, 0x40)), Drop::RxCriticalOption);
  EXPECT_EQ(reason(g, datagram(option(0x0102, 0x01, 1), 0x40)), Drop::RxCriticalOption);
  // a critical option with C clear (a sender that broke §3.4): still not understood
  EXPECT_EQ(reason(g, datagram(option(0x0102, 0xff, 0), 0)), Drop::RxCriticalOption);
  // a critical option behind non-critical ones, every data length
  for (std::size_t w = 0; w <= 31; ++w) {
    Bytes o = option(0x0103, 0x01, w);
    const Bytes crit = option(0x0104, 0x81, 0);
    o.insert(o.end(), crit.begin(), crit.end());
    EXPECT_EQ(reason(g, datagram(o, 0x40)), Drop::RxCriticalOption) << w;
  }
  // configured with 0102:80: that class and type are understood, others still are not
  const auto known = geneve_cfg(false, {"options", "0102:80:00000000"});
  EXPECT_EQ(reason(known, datagram(option(0x0102, 0x80, 3), 0x40)), std::nullopt);
  EXPECT_EQ(reason(known, datagram(option(0x0102, 0x81, 1), 0x40)), Drop::RxCriticalOption);
  EXPECT_EQ(reason(known, datagram(option(0x0201, 0x80, 1), 0x40)), Drop::RxCriticalOption);
  tunnel::Counters c;
  (void)tunnel::geneve_decap(datagram({}, 0x40), g, tunnel::OuterCsum::Present, c);
  EXPECT_EQ(drops(c, Drop::RxCriticalOption), 1u);
  EXPECT_EQ(tunnel::to_string(Drop::RxCriticalOption), "rx_critical_option");
  EXPECT_EQ(tunnel::to_string(Drop::RxOam), "rx_oam");
}

// ---- the endpoint: transmit looped into receive ------------------------------------------------

TEST(TunnelGeneveDatapath, GN12_X31_SuperPacketSegmentsCarryTheHeaderAndAggregateBack) {
  for (bool v6 : {false, true}) {
    SCOPED_TRACE(v6 ? "IPv6 underlay" : "IPv4 underlay");
    auto a = geneve_cfg(v6, {"options", "0102:01:00c0ffee"});
    auto b = a;
    std::swap(b.local, b.remotes[0]);
    tunnel::Endpoint tx(a, {});
    tunnel::Endpoint rx(b, {});
    const std::size_t payload = 20000;
    const std::uint16_t mss = 1400;
    Bytes frame = ofld::fb::tunnel::tcp_frame(payload, false, true);  // seed in the TCP field
    wire::virtio_net::Hdr h{};
    h.flags = wire::virtio_net::kFlagNeedsCsum;
    h.gso_type = wire::virtio_net::kGsoTcpv4;
    h.gso_size = mss;
    h.csum_start = 14 + 20;
    h.csum_offset = 16;
    h.hdr_len = 14 + 20 + 20;
    std::vector<tunnel::TxTrain> trains;
    tx.transmit(h, frame, 0, trains);
    EXPECT_EQ(tx.counters().drops_total(), 0u);
    std::size_t n = 0;
    Bytes sent_payload;
    for (auto& t : trains) {
      EXPECT_EQ(t.remote, a.remotes[0]);
      for (std::size_t off = 0; off < t.buf.size(); off += t.seg_size, ++n) {
        const std::size_t len = std::min<std::size_t>(t.seg_size, t.buf.size() - off);
        const std::uint8_t* d = t.buf.data() + off;
        // 16-byte header: Opt Len 2, C 0, TEB, VNI 42, option 0102:01 length 1 00c0ffee
        const Bytes want = {0x02, 0x00, 0x65, 0x58, 0x00, 0x00, 0x2a, 0x00,
                            0x01, 0x02, 0x01, 0x01, 0x00, 0xc0, 0xff, 0xee};
        ASSERT_GE(len, 16u + 54u);
        EXPECT_EQ(Bytes(d, d + 16), want);
        EXPECT_TRUE(tunnel_test::tcp_csum_ok(d + 16, len - 16));  // inner summed
        const std::size_t l = 16 + 14 + 20 + 20;
        sent_payload.insert(sent_payload.end(), d + l, d + len);
      }
      rx.receive_train(t.buf, t.count > 1 ? t.seg_size : 0, a.local, tunnel::OuterCsum::Present, 1);
    }
    EXPECT_EQ(n, (payload + mss - 1) / mss);
    EXPECT_EQ(sent_payload, Bytes(frame.begin() + 54, frame.end()));
    std::vector<tunnel::TapFrame> frames;
    rx.rx_flush(2, frames);
    EXPECT_EQ(rx.counters().drops_total(), 0u);
    EXPECT_LT(frames.size(), n);  // GRO after decapsulation merged them
    Bytes back;
    for (auto& f : frames) {
      const auto fb = f.pkt->to_bytes();
      back.insert(back.end(), fb.begin() + 54, fb.end());
    }
    EXPECT_EQ(back, Bytes(frame.begin() + 54, frame.end()));
  }
}

// GN-12 outer TOS, as the kernel's geneve_get_dsfield + ip_tunnel_ecn_encap: DSCP 0 by default,
// the configured `tos N`, or the inner packet's (`tos inherit`, iproute2's word), and the ECN
// field by RFC 6040 §4.1 normal mode: the inner's, except CE which goes out as ECT(0).
TEST(TunnelGeneveDatapath, GN12_OuterTosAndTosInheritPerRfc6040) {
  const std::uint8_t enc[4] = {0x00, 0x01, 0x02, 0x02};  // Not-ECT, ECT(1), ECT(0), CE → ECT(0)
  for (int tosmode = 0; tosmode < 3; ++tosmode) {          // default, tos 28 (hexadecimal: 0x28), tos inherit
    std::vector<std::string> extra;
    if (tosmode == 1) extra = {"tos", "28"};
    if (tosmode == 2) extra = {"tos", "inherit"};
    const auto cfg = geneve_cfg(false, extra);
    EXPECT_EQ(cfg.tos_inherit, tosmode == 2);
    for (bool v6in : {false, true}) {
      for (std::uint8_t ecn = 0; ecn < 4; ++ecn) {
        SCOPED_TRACE("tosmode " + std::to_string(tosmode) + (v6in ? " inner IPv6" : " inner IPv4") +
                     " ecn " + std::to_string(ecn));
        const std::uint8_t inner_ds = std::uint8_t(0xB8 | ecn);  // DSCP 46 (EF, RFC 3246)
        Bytes frame = ofld::fb::tunnel::tcp_frame(100, v6in, false);
        if (!v6in) {
          frame[15] = inner_ds;  // IPv4 TOS byte; the header checksum written again (RFC 1071)
          frame[24] = frame[25] = 0;
          std::uint32_t sum = 0;
          for (std::size_t i = 14; i < 34; i += 2) sum += std::uint32_t(frame[i] << 8 | frame[i + 1]);
          while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
          frame[24] = std::uint8_t(~sum >> 8), frame[25] = std::uint8_t(~sum);
        } else {  // IPv6 traffic class: the low 4 bits of byte 0 and the high 4 of byte 1
          frame[14] = std::uint8_t(0x60 | inner_ds >> 4);
          frame[15] = std::uint8_t((inner_ds & 0x0F) << 4 | (frame[15] & 0x0F));
        }
        tunnel::Endpoint dp(cfg, {});
        std::vector<tunnel::TxTrain> tr;
        dp.transmit(wire::virtio_net::Hdr{}, frame, 0, tr);
        ASSERT_EQ(tr.size(), 1u) << dp.counters().drops_total();
        const std::uint8_t dscp = tosmode == 0 ? 0x00 : tosmode == 1 ? 0x28 : 0xB8;
        EXPECT_EQ(tr[0].tos, std::uint8_t(dscp | enc[ecn]));
      }
    }
  }
}

TEST(TunnelGeneveDatapath, GN9_OnlyTheRemoteIsAcceptedAndOwnFramesAreLoops) {
  auto a = geneve_cfg();
  auto b = a;
  std::swap(b.local, b.remotes[0]);
  tunnel::EndpointOptions o;
  o.own_mac = {0x02, 0, 0, 0, 0, 0x01};  // the inner frame's source MAC (tcp_frame's src_last 1)
  tunnel::Endpoint rx(b, o);
  Bytes d = datagram({});
  rx.receive_train(d, 0, *tunnel::IpAddr::parse("10.0.0.9"), tunnel::OuterCsum::Present, 1);
  EXPECT_EQ(drops(rx.counters(), Drop::RxWrongSource), 1u);  // geneve_lookup: remote + VNI
  rx.receive_train(d, 0, a.local, tunnel::OuterCsum::Present, 1);
  std::vector<tunnel::TapFrame> frames;
  rx.rx_flush(2, frames);
  EXPECT_EQ(drops(rx.counters(), Drop::RxLoop), 1u) << "frame from our own MAC";
  EXPECT_TRUE(frames.empty());
}

// ---- tshark, an independent dissector -----------------------------------------------------------

bool have_tshark() { return std::system("tshark -v >/dev/null 2>&1") == 0; }

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(TunnelGeneveTshark, GN1_HeaderAsTsharkDissectsIt) {
  if (!have_tshark()) GTEST_SKIP() << "tshark not installed";
  // The endpoint's datagram (header with a critical and a plain option + inner frame), put
  // in an outer Ethernet/IPv4/UDP 6081 frame by the frame builder, written to a pcap.
  auto g = geneve_cfg(false, {"options", "0102:80:00c0ffee,0103:01:0000000100000002"});
  g.vni = 0xabcdef;
  tunnel::Endpoint ep(g, {});
  std::array<std::uint8_t, tunnel::kMaxTunnelHdr> h{};
  const Bytes in = inner_frame(64);
  core::Packet p = core::Packet::from_bytes(in);
  const auto info = ep.encapsulation().encap(p, false, h);
  ASSERT_TRUE(info.ok);
  Bytes udp_payload(h.begin(), h.begin() + long(info.hdr_len));
  udp_payload.insert(udp_payload.end(), in.begin(), in.end());
  ofld::fb::Frame f;  // lengths, types and checksums filled by the builder
  f.eth(ofld::fb::mac(0x11), ofld::fb::mac(0x12));
  wire::Ipv4Repr ip;
  ip.saddr = 0x0A000001;
  ip.daddr = 0x0A000002;
  ip.ttl = 64;
  f.ipv4(ip, ofld::fb::fill::kAll);
  f.udp({40000, 6081, 0, 0}, ofld::fb::L4Csum::Full);
  f.payload(udp_payload);
  const Bytes frame = f.build();
  const std::string path = ::testing::TempDir() + "ofld_geneve_tshark.pcap";
  {
    std::ofstream o(path, std::ios::binary);
    const std::uint32_t gh[6] = {0xa1b2c3d4, 0x00040002, 0, 0, 65535, 1};  // LE, v2.4, Ethernet
    o.write(reinterpret_cast<const char*>(gh), sizeof gh);
    const std::uint32_t rh[4] = {0, 0, std::uint32_t(frame.size()), std::uint32_t(frame.size())};
    o.write(reinterpret_cast<const char*>(rh), sizeof rh);
    o.write(reinterpret_cast<const char*>(frame.data()), long(frame.size()));
  }
  const std::string out =
      run("tshark -r '" + path +
          "' -o udp.check_checksum:TRUE -o tcp.check_checksum:TRUE -T fields -E separator=';' "
          "-e geneve.version -e geneve.options -e geneve.flags.oam -e geneve.flags.critical "
          "-e geneve.proto_type -e geneve.vni -e geneve.option.class -e geneve.option.type "
          "-e geneve.option.type.critical -e geneve.option.length -e udp.checksum.status "
          "-e tcp.checksum.status -e eth.src 2>/dev/null");
  std::remove(path.c_str());
  // Options: 20 bytes (Opt Len 5): 0102 80 01 | 00c0ffee | 0103 01 02 | 00000001 00000002.
  // tshark's option lengths are in bytes: the options' total (Opt Len × 4 = 20), then each
  // option with its 4-byte header (8, 12); booleans 0/1; per-option fields comma-separated;
  // checksum status 1 = good (Wireshark's PROTO_CHECKSUM_E_GOOD; the outer UDP, then the
  // inner TCP); two eth.src: outer, then the inner frame's.
  EXPECT_EQ(out,
            "0;0102800100c0ffee010301020000000100000002;0;1;0x6558;0xabcdef;0x0102,0x0103;"
            "0x80,0x01;1,0;20,8,12;1;1;02:00:00:00:00:12,02:00:00:00:00:01\n")
      << out;
}

}  // namespace
