// The outer IP header settings as iproute2 and the kernel have them: `tos` read in
// hexadecimal (rtnl_dsfield_a2n), `ttl N|auto|inherit` (get_unsigned base 0, IFLA_*_TTL_INHERIT),
// `df unset|set|inherit` (IFLA_VXLAN_DF / IFLA_GENEVE_DF). Expected values: iproute2 6.1's
// reading of the words (checked with `ip link add … type vxlan … tos 10` → `ip -d link` shows
// tos 0x10; `ttl 010` → ttl 8; `tos AF41` → 0x88, a name ofld does not read), and the kernel's
// vxlan_xmit_one / geneve_xmit_skb for the outer TTL and DF of each frame (K-10, K-11).
#include <gtest/gtest.h>

#include "../common/frame_builder.hpp"
#include "../common/tunnel_config_of.hpp"
#include "ofld/daemon/config.hpp"
#include "ofld/daemon/reload.hpp"
#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/endpoint.hpp"

namespace {

using namespace ofld;
using daemon::DaemonConfig;
namespace wv = wire::virtio_net;
using Bytes = std::vector<std::uint8_t>;

std::optional<std::string> words(std::vector<std::string> w, DaemonConfig* out = nullptr) {
  DaemonConfig c;
  auto e = daemon::parse_tunnel_words(w, c);
  if (out) *out = c;
  return e;
}
std::vector<std::string> base(const std::string& mode) {
  if (mode == "vxlan" || mode == "geneve") return {mode, "id", "7", "local", "10.0.0.1", "remote", "10.0.0.2"};
  if (mode == "gue") return {mode, "local", "10.0.0.1", "remote", "10.0.0.2", "port", "5555"};
  return {mode, "local", "10.0.0.1", "remote", "10.0.0.2"};
}
std::vector<std::string> with(std::vector<std::string> w, std::initializer_list<std::string> more) {
  w.insert(w.end(), more);
  return w;
}
bool names(const std::optional<std::string>& e, const char* what) {
  return e && e->find(what) != std::string::npos;
}

// `tos N` is hexadecimal in iproute2 (rtnl_dsfield_a2n: strtoul base 16, 0x optional, at most
// 255): `tos 10` is 0x10, `tos b8` 0xb8, `tos 100` an error; 1 is inherit (the kernel's tos 1).
// Every encapsulation reads it so. A TOML integer keeps its value; a TOML string is the word.
TEST(TunnelOuterConfig, TosIsHexadecimalAsIproute2ReadsIt) {
  struct Case {
    const char* word;
    int tos;  // -1: refused
  };
  for (const char* mode : {"vxlan", "geneve", "gue", "gre"}) {
    SCOPED_TRACE(mode);
    for (const Case& k : {Case{"10", 0x10}, Case{"0x10", 0x10}, Case{"b8", 0xb8}, Case{"B8", 0xb8},
                          Case{"0XfF", 0xff}, Case{"0", 0}, Case{"100", -1}, Case{"1g", -1},
                          Case{"-1", -1}, Case{"", -1}, Case{"0x", -1}, Case{"AF41", -1}}) {
      SCOPED_TRACE(k.word);
      DaemonConfig c;
      const auto e = words(with(base(mode), {"tos", k.word}), &c);
      if (k.tos < 0) {
        EXPECT_TRUE(names(e, "tos")) << (e ? *e : "accepted");
        continue;
      }
      ASSERT_FALSE(e) << *e;
      EXPECT_EQ(c.tunnel.common().tos, k.tos);
      EXPECT_FALSE(c.tunnel.common().tos_inherit);
    }
    DaemonConfig c;
    ASSERT_FALSE(words(with(base(mode), {"dsfield", "1"}), &c));  // iproute2's other spelling
    EXPECT_TRUE(c.tunnel.common().tos_inherit);
  }
  // TOML: an integer is its value (16 is 0x10), a string the command-line word ("10" is 0x10).
  for (const char* t : {"tos = 16\n", "tos = \"10\"\n", "tos = \"0x10\"\n"}) {
    SCOPED_TRACE(t);
    auto p = daemon::parse_toml(std::string("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n") + t);
    ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
    EXPECT_EQ(std::get<DaemonConfig>(p).tunnel.common().tos, 0x10);
  }
  auto p = daemon::parse_toml("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\ntos = 256\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(p));
  EXPECT_NE(std::get<std::string>(p).find("tos"), std::string::npos);
}

// `ttl N` (also `hoplimit`) as iproute2's vxlan and geneve read it: get_unsigned base 0 (010
// octal is 8, 0x10 is 16), at most 255; `auto` and 0 the route's default; `inherit` sets
// IFLA_VXLAN_TTL_INHERIT. GUE and GRE keep 1..255 (the kernel's gre reads 0 as inherit, which
// ofld does not do): 0, auto and inherit refused, naming the word.
TEST(TunnelOuterConfig, TtlAutoInheritAndNumbersAsIproute2) {
  struct Case {
    const char* word;
    int ttl;  // -1: refused
  };
  for (const char* mode : {"vxlan", "geneve", "gue", "gre"}) {
    SCOPED_TRACE(mode);
    for (const Case& k : {Case{"64", 64}, Case{"010", 8}, Case{"0x10", 16}, Case{"255", 255}, Case{"0", 0},
                          Case{"auto", 0}, Case{"256", -1}, Case{"09", -1}, Case{"x", -1}, Case{"-1", -1}}) {
      SCOPED_TRACE(k.word);
      DaemonConfig c;
      const auto e = words(with(base(mode), {"ttl", k.word}), &c);
      const bool ethernet = std::string(mode) == "vxlan" || std::string(mode) == "geneve";
      if (k.ttl < 0 || (!ethernet && k.ttl == 0)) {
        EXPECT_TRUE(names(e, "ttl")) << (e ? *e : "accepted");
        continue;
      }
      ASSERT_FALSE(e) << *e;
      EXPECT_EQ(c.tunnel.common().ttl, k.ttl);
      EXPECT_FALSE(c.tunnel.common().ttl_inherit);
    }
    DaemonConfig c;
    const auto e = words(with(base(mode), {"hoplimit", "inherit"}), &c);
    const bool ethernet = std::string(mode) == "vxlan" || std::string(mode) == "geneve";
    if (ethernet) {
      ASSERT_FALSE(e) << *e;
      EXPECT_TRUE(c.tunnel.common().ttl_inherit);
    } else {
      EXPECT_TRUE(names(e, "hoplimit")) << (e ? *e : "accepted");
    }
  }
  auto p = daemon::parse_toml("[geneve]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nttl = \"inherit\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_TRUE(std::get<DaemonConfig>(p).tunnel.common().ttl_inherit);
}

// `df unset|set|inherit` (iproute2 vxlan and geneve; the kernel's default is unset). GUE and
// GRE have no df word in ofld (ip link's gre has pmtudisc/nopmtudisc instead): refused.
TEST(TunnelOuterConfig, DfWordsForVxlanAndGeneve) {
  for (const char* mode : {"vxlan", "geneve"}) {
    SCOPED_TRACE(mode);
    DaemonConfig c;
    ASSERT_FALSE(words(base(mode), &c));
    EXPECT_EQ(c.tunnel.common().df, tunnel::OuterDf::Unset);
    ASSERT_FALSE(words(with(base(mode), {"df", "set"}), &c));
    EXPECT_EQ(c.tunnel.common().df, tunnel::OuterDf::Set);
    ASSERT_FALSE(words(with(base(mode), {"df", "inherit"}), &c));
    EXPECT_EQ(c.tunnel.common().df, tunnel::OuterDf::Inherit);
    ASSERT_FALSE(words(with(base(mode), {"df", "unset"}), &c));
    EXPECT_EQ(c.tunnel.common().df, tunnel::OuterDf::Unset);
    EXPECT_TRUE(names(words(with(base(mode), {"df", "on"})), "df"));
    EXPECT_TRUE(names(words(with(base(mode), {"df", "set", "df", "unset"})), "df"));  // given once
  }
  EXPECT_TRUE(names(words(with(base("gue"), {"df", "set"})), "df: not a gue setting"));
  EXPECT_TRUE(names(words(with(base("gre"), {"df", "set"})), "df: not a gre setting"));
  auto p = daemon::parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\ndf = \"inherit\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_EQ(std::get<DaemonConfig>(p).tunnel.common().df, tunnel::OuterDf::Inherit);
}

// A reload changes ttl, ttl inherit and df like ttl and tos (each train carries them; the
// sockets follow with a setsockopt when a train differs).
TEST(TunnelOuterConfig, ReloadAppliesTtlInheritAndDf) {
  auto cfg = [](const std::string& extra) {
    return std::get<DaemonConfig>(
        daemon::parse_toml("[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n" + extra));
  };
  const auto p = daemon::plan_reload(cfg(""), cfg("ttl = \"inherit\"\ndf = \"inherit\"\n"));
  EXPECT_EQ(p.refused, "");
  EXPECT_TRUE(p.outer);
  EXPECT_EQ(p.changes, (std::vector<std::string>{"ttl 0 -> inherit", "df unset -> inherit"}));
  const auto q = daemon::plan_reload(cfg("ttl = \"inherit\"\ndf = \"set\"\n"), cfg("ttl = 9\n"));
  EXPECT_EQ(q.refused, "");
  EXPECT_TRUE(q.outer);
  EXPECT_EQ(q.changes, (std::vector<std::string>{"ttl inherit -> 9", "df set -> unset"}));
}

// ---- the data path: each train's outer TTL and DF ------------------------------------------

struct Inner {
  const char* what;
  Bytes frame;
  int ttl;  // inner IPv4 TTL / IPv6 hop limit; -1 not IP (as the kernel reads the EtherType)
  bool ipv6, df;
};

std::vector<Inner> inners() {
  std::vector<Inner> v;
  fb::gro::Tcp t;
  t.ttl = 33, t.df = true;
  v.push_back({"IPv4 DF ttl 33", fb::gro::tcp_frame(t), 33, false, true});
  t.ttl = 17, t.df = false;
  v.push_back({"IPv4 no DF ttl 17", fb::gro::tcp_frame(t), 17, false, false});
  t.v6 = true, t.ttl = 9;
  v.push_back({"IPv6 hop limit 9", fb::gro::tcp_frame(t), 9, true, false});
  Bytes arp(14 + 28, 0);  // broadcast ARP request
  for (int i = 0; i < 6; ++i) arp[std::size_t(i)] = 0xff;
  arp[6] = 0x02, arp[11] = 0x01, arp[12] = 0x08, arp[13] = 0x06;
  v.push_back({"ARP", arp, -1, false, false});
  // An 802.1Q-tagged IPv4 frame: the kernel reads eth->h_proto / skb->protocol 0x8100, not IP.
  t.v6 = false, t.ttl = 33, t.df = true;
  Bytes tagged = fb::gro::tcp_frame(t);
  const std::uint8_t tag[4] = {0x81, 0x00, 0x00, 0x05};
  tagged.insert(tagged.begin() + 12, tag, tag + 4);
  v.push_back({"VLAN-tagged IPv4 DF ttl 33", tagged, -1, false, true});
  return v;
}

tunnel::TunnelConfig config_of(const std::vector<std::string>& w) {
  DaemonConfig c;
  const auto e = daemon::parse_tunnel_words(w, c);
  EXPECT_FALSE(e) << *e;
  return c.tunnel;
}

// vxlan_xmit_one and geneve_xmit_skb: outer TTL = the configured ttl, or with `ttl inherit`
// ip_tunnel_get_ttl (inner IPv4 TTL, IPv6 hop limit, 0 for another protocol: the route's
// default, TxTrain::ttl 0); outer DF over IPv4 = 0 (`df unset`, the default), 1 (`df set`),
// or with `df inherit` 1 for an IPv6 frame or an IPv4 one with DF; over IPv6 no DF (-1).
TEST(TunnelOuterHeader, K10_K11_TtlAndDfOfEachTrainAsTheKernelDevice) {
  for (const char* mode : {"vxlan", "geneve"}) {
    for (bool v6 : {false, true}) {
      for (const char* ttl : {"auto", "9", "inherit"}) {
        for (const char* df : {"unset", "set", "inherit"}) {
          auto w = base(mode);
          if (v6) w[4] = "fd00::1", w[6] = "fd00::2";
          w.insert(w.end(), {"ttl", ttl, "df", df});
          const auto cfg = config_of(w);
          for (const auto& in : inners()) {
            SCOPED_TRACE(std::string(mode) + (v6 ? " over IPv6" : " over IPv4") + " ttl " + ttl + " df " + df +
                         ": " + in.what);
            tunnel::Endpoint dp(cfg, {});
            std::vector<tunnel::TxTrain> out;
            dp.transmit(wv::Hdr{}, in.frame, 0, out);
            ASSERT_EQ(out.size(), 1u);
            const int want_ttl = std::string(ttl) == "9" ? 9 : std::string(ttl) == "auto" ? 0 : std::max(in.ttl, 0);
            EXPECT_EQ(out[0].ttl, want_ttl);
            const int want_df = v6 ? -1
                                : std::string(df) == "set"   ? 1
                                : std::string(df) == "unset" ? 0
                                                             : (in.ttl >= 0 && (in.ipv6 || in.df)) ? 1 : 0;
            EXPECT_EQ(out[0].df, want_df);
          }
        }
      }
    }
  }
}

// GUE and GRE carry an inner IP packet and have no df or ttl inherit in ofld: every train has
// the configured ttl and leaves DF to the socket (-1).
TEST(TunnelOuterHeader, IpEncapsulationsKeepTheSocketsTtlAndDf) {
  for (const char* mode : {"gue", "gre"}) {
    SCOPED_TRACE(mode);
    const auto cfg = config_of(with(base(mode), {"ttl", "12"}));
    fb::gro::Tcp t;
    t.ttl = 33;
    Bytes f = fb::gro::tcp_frame(t);
    f.erase(f.begin(), f.begin() + 14);  // the TUN side: the IP packet alone
    tunnel::Endpoint dp(cfg, {});
    std::vector<tunnel::TxTrain> out;
    dp.transmit(wv::Hdr{}, f, 0, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].ttl, 12);
    EXPECT_EQ(out[0].df, -1);
  }
}

// Frames whose outer TTL or DF differ never share a train (one send has one TTL and DF):
// the same two frames continue one train when nothing in the outer header differs.
TEST(TunnelOuterHeader, K10_K11_TrainsSplitWhereTheOuterTtlOrDfDiffers) {
  fb::gro::Tcp a, b;
  a.ttl = 33, b.ttl = 34;  // same size, same flow
  b.seq_off = 100;
  for (const char* setting : {"ttl", "df"}) {
    SCOPED_TRACE(setting);
    if (std::string(setting) == "df") b.ttl = 33, b.df = false;
    const Bytes fa = fb::gro::tcp_frame(a), fbb = fb::gro::tcp_frame(b);
    {
      tunnel::Endpoint dp(config_of(with(base("vxlan"), {setting, "inherit"})), {});
      std::vector<tunnel::TxTrain> out;
      dp.transmit(wv::Hdr{}, fa, 0, out);
      dp.transmit(wv::Hdr{}, fbb, 0, out);
      ASSERT_EQ(out.size(), 2u);
      EXPECT_EQ(out[0].count + out[1].count, 2u);
    }
    tunnel::Endpoint dp(config_of(base("vxlan")), {});
    std::vector<tunnel::TxTrain> out;
    dp.transmit(wv::Hdr{}, fa, 0, out);
    dp.transmit(wv::Hdr{}, fbb, 0, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].count, 2u);
  }
}

}  // namespace
