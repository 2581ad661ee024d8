// `ofld tunnel` configuration: iproute2-style words and TOML; every error names the setting.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <optional>

#include "ofld/daemon/config.hpp"
#include "../common/tunnel_config_of.hpp"

namespace {

using namespace ofld::daemon;

std::optional<std::string> words(std::vector<std::string> w, DaemonConfig* out = nullptr) {
  DaemonConfig c;
  auto e = parse_vxlan_words(w, c);
  if (out) *out = c;
  return e;
}

TEST(TunnelConfig, WordsFullSet) {
  DaemonConfig c;
  auto e = words({"id", "42", "local", "10.0.0.1", "remote", "10.0.0.2", "remote", "10.0.0.3",
                  "dstport", "8472", "srcport", "1000", "2000", "udpcsum", "remcsumtx",
                  "remcsumrx", "remcsum-nopartial", "ttl", "32", "tos", "10", "mtu", "1400",
                  "ageing", "60", "fdb", "02:00:00:00:00:01", "10.0.0.3"},
                 &c);
  ASSERT_FALSE(e) << *e;
  EXPECT_EQ(tunnel_test::vxlan_of(c).vni, 42u);
  EXPECT_EQ(tunnel_test::vxlan_of(c).remotes.size(), 2u);
  EXPECT_EQ(tunnel_test::vxlan_of(c).dstport, 8472);
  EXPECT_EQ(tunnel_test::vxlan_of(c).src_min(), 1000);
  EXPECT_EQ(tunnel_test::vxlan_of(c).src_max(), 2000);
  EXPECT_TRUE(tunnel_test::vxlan_of(c).remcsum_tx && tunnel_test::vxlan_of(c).remcsum_rx && tunnel_test::vxlan_of(c).remcsum_nopartial);
  EXPECT_EQ(tunnel_test::vxlan_of(c).ttl, 32);
  EXPECT_EQ(tunnel_test::vxlan_of(c).tos, 0x10);  // iproute2 reads tos in hexadecimal
  EXPECT_EQ(tunnel_test::vxlan_of(c).mtu, 1400);
  EXPECT_EQ(tunnel_test::vxlan_of(c).ageing_s, 60u);
  ASSERT_EQ(c.static_fdb.size(), 1u);
}

// iproute2's `tos inherit` (the kernel's tos 1, vxlan_xmit_one: outer DSCP
// from the inner header), in words and TOML; a number keeps working; anything else is an error
// naming `tos`.
TEST(TunnelConfig, TosInherit) {
  DaemonConfig c;
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "tos", "inherit"}, &c));
  EXPECT_TRUE(tunnel_test::vxlan_of(c).tos_inherit);
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "tos", "1"}, &c));
  EXPECT_TRUE(tunnel_test::vxlan_of(c).tos_inherit);
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "tos", "b8"}, &c));
  EXPECT_FALSE(tunnel_test::vxlan_of(c).tos_inherit);
  EXPECT_EQ(tunnel_test::vxlan_of(c).tos, 0xb8);
  auto e = words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "tos", "inherited"});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("tos"), std::string::npos);
  auto p = parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\ntos = \"inherit\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p));
  EXPECT_TRUE(tunnel_test::vxlan_of(std::get<DaemonConfig>(p)).tos_inherit);
}

TEST(TunnelConfig, ErrorsNameTheSetting) {
  auto has = [](const std::optional<std::string>& e, const char* what) {
    return e && e->find(what) != std::string::npos;
  };
  EXPECT_TRUE(has(words({"id", "42", "local", "10.0.0.1", "remote", "10.0.0.2", "dstport", "x"}), "dstport"));
  EXPECT_TRUE(has(words({"id", "16777216", "local", "10.0.0.1", "remote", "10.0.0.2"}), "id"));
  EXPECT_TRUE(has(words({"local", "10.0.0.1", "remote", "10.0.0.2"}), "id"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.300", "remote", "10.0.0.2"}), "local"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1"}), "remote"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "fd00::2"}), "remote"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "srcport", "2000", "1000"}), "srcport"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "ttl", "256"}), "ttl"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "mtu"}), "mtu"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "bogus"}), "bogus"));
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "udp6zerocsumtx"}), "udp6zerocsumtx"));
  // K-2
  EXPECT_TRUE(has(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "noudpcsum", "remcsumtx"}), "remcsumtx"));
}

TEST(TunnelConfig, TomlValid) {
  auto p = parse_toml(R"(
dev = "vx0"
address = "192.168.5.1/24"
gro = false
[vxlan]
id = 7
local = "fd00::1"
remote = ["fd00::2", "fd00::3"]
srcport = [40000, 41000]
udp6zerocsumrx = true
remcsumrx = true
[[fdb]]
mac = "02:00:00:00:00:09"
remote = "fd00::3"
)");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  const auto& c = std::get<DaemonConfig>(p);
  EXPECT_EQ(c.dev, "vx0");
  EXPECT_FALSE(c.gro);
  EXPECT_EQ(tunnel_test::vxlan_of(c).vni, 7u);
  EXPECT_TRUE(tunnel_test::vxlan_of(c).ipv6());
  EXPECT_EQ(tunnel_test::vxlan_of(c).remotes.size(), 2u);
  EXPECT_EQ(tunnel_test::vxlan_of(c).src_min(), 40000);
  EXPECT_TRUE(tunnel_test::vxlan_of(c).udp6_zero_csum_rx);
  EXPECT_TRUE(tunnel_test::vxlan_of(c).remcsum_rx);
  EXPECT_EQ(c.static_fdb.size(), 1u);
}

TEST(TunnelConfig, TomlErrorsNameTheSetting) {
  auto err = [](const char* text) {
    auto p = parse_toml(text);
    return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string();
  };
  EXPECT_NE(err("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\ndstport = \"abc\"\n").find("dstport"), std::string::npos);
  EXPECT_NE(err("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nwhat = true\n").find("what"), std::string::npos);
  EXPECT_NE(err("colour = 1\n").find("colour"), std::string::npos);
  EXPECT_NE(err("gro = 3\n").find("gro"), std::string::npos);
  EXPECT_NE(err("[vxlan\n").find("line"), std::string::npos);  // syntax error with a position
  EXPECT_NE(err("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nudpcsum = false\nremcsumtx = true\n").find("K-2"), std::string::npos);
}

// --queues N|auto / TOML queues = N or "auto": 1..256 (the kernel's MAX_TAP_QUEUES in
// drivers/net/tun.c) or auto, the default.
TEST(TunnelConfig, QueuesParsedAndDefaultAuto) {
  EXPECT_EQ(DaemonConfig{}.queues, kQueuesAuto);
  EXPECT_EQ(std::get<unsigned>(parse_queues("auto")), kQueuesAuto);
  EXPECT_EQ(queues_text(kQueuesAuto), "auto");
  EXPECT_EQ(queues_text(3), "3");
  auto q = parse_queues("2");
  ASSERT_TRUE(std::holds_alternative<unsigned>(q));
  EXPECT_EQ(std::get<unsigned>(q), 2u);
  EXPECT_EQ(std::get<unsigned>(parse_queues("256")), 256u);
  auto p = parse_toml("queues = 4\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_EQ(std::get<DaemonConfig>(p).queues, 4u);
  auto d = parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(d));
  EXPECT_EQ(std::get<DaemonConfig>(d).queues, kQueuesAuto);
  auto s = parse_toml("queues = \"auto\"\n[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(s)) << std::get<std::string>(s);
  EXPECT_EQ(std::get<DaemonConfig>(s).queues, kQueuesAuto);
}

// plan_queues: what a start opens. The kernel refuses TUNSETIFF with IFF_MULTI_QUEUE on an
// existing single-queue device and without it on a multi-queue one (EINVAL, tun_set_iff in
// drivers/net/tun.c), so the plan follows an existing device; auto takes two queues only
// where the underlay spreads flows over the SO_REUSEPORT sockets and two CPUs are allowed.
TEST(TunnelConfig, QueuePlanAutoAndExistingDevices) {
  auto plan = [](unsigned q, unsigned cpus, bool spread, std::optional<bool> mq) {
    auto p = plan_queues(q, cpus, spread, mq);
    EXPECT_TRUE(std::holds_alternative<QueuePlan>(p)) << std::get<std::string>(p);
    return std::holds_alternative<QueuePlan>(p) ? std::get<QueuePlan>(p) : QueuePlan{0, false, ""};
  };
  struct Case { unsigned q, cpus; bool spread; std::optional<bool> mq; unsigned count; bool multi; };
  for (const Case& c : std::vector<Case>{
           {kQueuesAuto, 2, true, std::nullopt, 2, true},   // VXLAN/Geneve, new device, 2 CPUs
           {kQueuesAuto, 64, true, std::nullopt, kAutoQueuesMax, true},
           {kQueuesAuto, 1, true, std::nullopt, 1, false},  // one CPU
           {kQueuesAuto, 2, false, std::nullopt, 1, false}, // GUE, GRE
           {kQueuesAuto, 2, true, false, 1, false},         // existing single-queue TAP
           {kQueuesAuto, 1, true, true, 1, true},           // existing multi-queue TAP, one CPU
           {kQueuesAuto, 2, false, true, 1, true},          // existing multi-queue TUN, GRE
           {kQueuesAuto, 4, true, true, 2, true},
           {1, 8, true, std::nullopt, 1, false},
           {1, 8, true, true, 1, true},                     // queues 1 on a multi-queue device
           {4, 1, false, std::nullopt, 4, true},            // explicit: as given
       }) {
    const QueuePlan p = plan(c.q, c.cpus, c.spread, c.mq);
    EXPECT_EQ(p.count, c.count) << c.q << " " << c.cpus << " " << c.spread;
    EXPECT_EQ(p.multi_queue, c.multi) << c.q << " " << c.cpus << " " << c.spread;
    EXPECT_EQ(p.why.empty(), c.q != kQueuesAuto);
  }
  // The CPUs auto counts: a `cpus` list's leading distinct run (worker i takes cpus[i % n]).
  EXPECT_EQ(auto_queue_cpus({}, 2), 2u);
  EXPECT_EQ(auto_queue_cpus({}, 1), 1u);
  EXPECT_EQ(auto_queue_cpus({0, 1}, 1), 2u);
  EXPECT_EQ(auto_queue_cpus({1, 1, 0}, 2), 1u);
  EXPECT_EQ(auto_queue_cpus({0, 0}, 2), 1u);
  EXPECT_EQ(auto_queue_cpus({3, 1, 2, 1}, 4), 3u);
  auto refused = plan_queues(2, 2, true, false);
  ASSERT_TRUE(std::holds_alternative<std::string>(refused));
  EXPECT_NE(std::get<std::string>(refused).find("queues: 2"), std::string::npos);
  EXPECT_NE(std::get<std::string>(refused).find("multi_queue"), std::string::npos);
}

TEST(TunnelConfig, QueuesOutOfRangeNamesTheSetting) {
  for (const char* bad : {"0", "257", "-1", "two", "", "1.5", "99999999999999999999", "Auto", "auto2"}) {
    auto q = parse_queues(bad);
    ASSERT_TRUE(std::holds_alternative<std::string>(q)) << bad;
    EXPECT_NE(std::get<std::string>(q).find("queues"), std::string::npos) << bad;
  }
  auto err = [](const std::string& text) {
    auto p = parse_toml(text);
    return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string();
  };
  const std::string vx = "[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  EXPECT_NE(err("queues = 0\n" + vx).find("queues"), std::string::npos);
  EXPECT_NE(err("queues = 1000\n" + vx).find("queues"), std::string::npos);
  EXPECT_NE(err("queues = \"two\"\n" + vx).find("queues"), std::string::npos);
  EXPECT_NE(err("queues = true\n" + vx).find("queues"), std::string::npos);
}

}  // namespace

namespace {

using ofld::daemon::DaemonConfig;

std::string gre_err(std::vector<std::string> w, bool ip6 = false) {
  DaemonConfig c;
  auto e = ofld::daemon::parse_gre_words(w, ip6, c);
  return e ? *e : std::string();
}
std::string vx_err(std::vector<std::string> w) {
  DaemonConfig c;
  auto e = ofld::daemon::parse_vxlan_words(w, c);
  return e ? *e : std::string();
}

// A setting given twice, or both sides of a pair, is an error that names it — not a silent
// "last one wins" (found by a fresh-user run: `udpcsum noudpcsum`, `id 1 id 2`, `key 1 ikey 2`).
TEST(TunnelConfig, RepeatedOrConflictingWordsAreNamed) {
  const std::vector<std::string> base = {"local", "10.0.0.1", "remote", "10.0.0.2"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> w = {"id", "1"};
    w.insert(w.end(), base.begin(), base.end());
    w.insert(w.end(), extra.begin(), extra.end());
    return vx_err(w);
  };
  EXPECT_NE(with({"udpcsum", "noudpcsum"}).find("noudpcsum"), std::string::npos);
  EXPECT_NE(with({"id", "2"}).find("id"), std::string::npos);
  EXPECT_NE(with({"vni", "2"}).find("vni"), std::string::npos);
  EXPECT_NE(with({"ttl", "3", "ttl", "4"}).find("ttl"), std::string::npos);
  EXPECT_NE(with({"learning", "nolearning"}).find("nolearning"), std::string::npos);
  EXPECT_NE(with({"remote", "10.0.0.2"}).find("twice"), std::string::npos);
  EXPECT_EQ(with({"remote", "10.0.0.3"}), "");  // several remotes stay fine
  EXPECT_NE(gre_err({"local", "10.0.0.1", "remote", "10.0.0.2", "key", "1", "ikey", "2"}).find("ikey"),
            std::string::npos);
  EXPECT_EQ(gre_err({"local", "10.0.0.1", "remote", "10.0.0.2", "ikey", "1", "okey", "2"}), "");
  EXPECT_NE(gre_err({"local", "10.0.0.1", "local", "10.0.0.3", "remote", "10.0.0.2"}).find("local"),
            std::string::npos);
}

// Remotes must be unicast and not the local address.
TEST(TunnelConfig, RemoteMustBeAnotherUnicastAddress) {
  EXPECT_NE(vx_err({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.1"}).find("remote"), std::string::npos);
  EXPECT_NE(vx_err({"id", "1", "local", "10.0.0.1", "remote", "224.0.0.1"}).find("unicast"), std::string::npos);
  EXPECT_NE(vx_err({"id", "1", "local", "10.0.0.1", "remote", "255.255.255.255"}).find("unicast"), std::string::npos);
  EXPECT_NE(vx_err({"id", "1", "local", "10.0.0.1", "remote", "0.0.0.0"}).find("unicast"), std::string::npos);
  EXPECT_NE(vx_err({"id", "1", "local", "fd00::1", "remote", "ff02::1"}).find("unicast"), std::string::npos);
  EXPECT_NE(gre_err({"local", "fd00::1", "remote", "fd00::1"}, true).find("local address"), std::string::npos);
}

// --dev and --address are checked before anything is created.
TEST(TunnelConfig, DevAndAddressValidated) {
  DaemonConfig c;
  EXPECT_FALSE(ofld::daemon::validate_local(c));
  for (const char* bad : {"", "a/b", "has space", "sixteen-chars-xx", "a:b"}) {
    c.dev = bad;
    auto e = ofld::daemon::validate_local(c);
    ASSERT_TRUE(e) << bad;
    EXPECT_EQ(e->rfind("dev:", 0), 0u) << *e;
  }
  c.dev = "ofld0";
  for (const char* ok : {"192.0.2.1/24", "192.0.2.1", "fd00::1/64"}) {
    c.address = ok;
    EXPECT_FALSE(ofld::daemon::validate_local(c)) << ok;
  }
  for (const char* bad : {"notacidr", "192.0.2.1/33", "fd00::1/129", "192.0.2.1/", "192.0.2.1/x"}) {
    c.address = bad;
    auto e = ofld::daemon::validate_local(c);
    ASSERT_TRUE(e) << bad;
    EXPECT_EQ(e->rfind("address:", 0), 0u) << *e;
  }
}

// TOML errors read "table.key: ..." (an unknown key printed as "vxlan.unknown setting 'bogus'").
TEST(TunnelConfig, TomlUnknownKeyMessage) {
  auto p = ofld::daemon::parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nbogus = 1\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(p));
  EXPECT_EQ(std::get<std::string>(p), "vxlan.bogus: unknown setting");
  auto g = ofld::daemon::parse_toml("[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 1\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(g));
  EXPECT_EQ(std::get<std::string>(g).rfind("gre.port:", 0), 0u) << std::get<std::string>(g);
  auto t = ofld::daemon::parse_toml("colour = 1\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(t));
  EXPECT_EQ(std::get<std::string>(t), "colour: unknown setting");
}

}  // namespace

namespace {

using ofld::daemon::DaemonConfig;
using ofld::daemon::Parsed;

// Every field of a configuration, for comparing what two front ends produced.
std::string dump(const DaemonConfig& c) {
  std::string s = "mode=" + std::string(c.tunnel.name()) + " dev=" + c.dev + " address=" + c.address +
                  " control=" + c.control + " offload=" + std::to_string(c.offload) +
                  " gro=" + std::to_string(c.gro) + " queues=" + std::to_string(c.queues);
  const auto& k = c.tunnel.common();
  s += " | local=" + k.local.to_string() + " ttl=" + std::to_string(k.ttl) +
       " tos=" + std::to_string(k.tos) + " inh=" + std::to_string(k.tos_inherit) +
       " mtu=" + std::to_string(k.mtu);
  if (const auto* u = c.tunnel.udp())
    s += " udpcsum=" + std::to_string(u->udp_csum) + " z6tx=" + std::to_string(u->udp6_zero_csum_tx) +
         " z6rx=" + std::to_string(u->udp6_zero_csum_rx) + " rtx=" + std::to_string(u->remcsum_tx) +
         " rrx=" + std::to_string(u->remcsum_rx) + " rnp=" + std::to_string(u->remcsum_nopartial);
  if (const auto* v = c.tunnel.get<ofld::tunnel::VxlanConfig>()) {
    s += " | vni=" + std::to_string(v->vni) + " remotes=";
    for (const auto& r : v->remotes) s += r.to_string() + ",";
    s += " dstport=" + std::to_string(v->dstport) + " sport=" + std::to_string(v->port_min) + "-" +
         std::to_string(v->port_max) + " ageing=" + std::to_string(v->ageing_s) +
         " learning=" + std::to_string(v->learning) + " fdb=";
    for (const auto& [m, a] : c.static_fdb) s += std::to_string(m[5]) + "@" + a.to_string() + ",";
  }
  if (const auto* g = c.tunnel.get<ofld::tunnel::GueConfig>())
    s += " | remote=" + g->remote.to_string() + " port=" + std::to_string(g->port);
  if (const auto* i = c.tunnel.get<ofld::tunnel::GreConfig>())
    s += " | remote=" + i->remote.to_string() + " ikey=" + (i->ikey ? std::to_string(*i->ikey) : "-") +
         " okey=" + (i->okey ? std::to_string(*i->okey) : "-") + " icsum=" + std::to_string(i->icsum) +
         " ocsum=" + std::to_string(i->ocsum);
  return s;
}

std::string toml_error(const std::string& text) {
  auto p = ofld::daemon::parse_toml(text);
  return std::holds_alternative<std::string>(p) ? std::get<std::string>(p) : std::string();
}

// One configuration parser. The command words and the equivalent TOML table give
// the same configuration, field for field, in every mode and for every setting (flags on and
// off, numbers, addresses, lists, pairs, keys, tos inherit, static FDB entries).
TEST(TunnelConfig, WordsAndTomlGiveTheSameConfig) {
  struct Case {
    std::vector<std::string> words;
    std::string toml;
  };
  const std::vector<Case> cases = {
      {{"vxlan", "id", "42", "local", "10.0.0.1", "remote", "10.0.0.2", "remote", "10.0.0.3",
        "dstport", "8472", "srcport", "1000", "2000", "noudpcsum", "ttl", "9", "tos", "inherit",
        "mtu", "1400", "ageing", "60", "nolearning", "fdb", "02:00:00:00:00:07", "10.0.0.3"},
       "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\n"
       "dstport = 8472\nsrcport = [1000, 2000]\nudpcsum = false\nttl = 9\ntos = \"inherit\"\n"
       "mtu = 1400\nageing = 60\nlearning = false\n"
       "[[fdb]]\nmac = \"02:00:00:00:00:07\"\nremote = \"10.0.0.3\"\n"},
      {{"vxlan", "vni", "7", "local", "fd00::1", "remote", "fd00::2", "udp6zerocsumtx",
        "udp6zerocsumrx", "remcsumrx", "remcsum-nopartial", "tos", "b8"},
       "[vxlan]\nvni = 7\nlocal = \"fd00::1\"\nremote = \"fd00::2\"\nudp6zerocsumtx = true\n"
       "udp6zerocsumrx = true\nremcsumrx = true\nremcsum_nopartial = true\ntos = 184\n"},
      {{"gue", "local", "10.0.0.1", "remote", "10.0.0.2", "port", "5555", "udpcsum", "remcsumtx",
        "remcsumrx", "ttl", "3", "mtu", "1300"},
       "[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5555\nudpcsum = true\n"
       "remcsumtx = true\nremcsumrx = true\nttl = 3\nmtu = 1300\n"},
      // a list with one element is the same remote as the single string
      {{"gue", "local", "fd00::1", "remote", "fd00::2", "port", "6000", "udp6zerocsumrx"},
       "[gue]\nlocal = \"fd00::1\"\nremote = [\"fd00::2\"]\nport = 6000\nudp6zerocsumrx = true\n"},
      {{"gre", "local", "10.0.0.1", "remote", "10.0.0.2", "ikey", "1.2.3.4", "okey", "9", "csum",
        "tos", "inherit"},
       "[gre]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nikey = \"1.2.3.4\"\nokey = 9\n"
       "csum = true\ntos = \"inherit\"\n"},
      {{"ip6gre", "local", "fd00::1", "remote", "fd00::2", "key", "77", "ocsum"},
       "[ip6gre]\nlocal = \"fd00::1\"\nremote = \"fd00::2\"\nkey = 77\nocsum = true\nicsum = false\n"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.toml);
    DaemonConfig w;
    auto e = ofld::daemon::parse_tunnel_words(c.words, w);
    ASSERT_FALSE(e) << *e;
    auto t = ofld::daemon::parse_toml(c.toml);
    ASSERT_TRUE(std::holds_alternative<DaemonConfig>(t)) << std::get<std::string>(t);
    EXPECT_EQ(dump(w), dump(std::get<DaemonConfig>(t)));
  }
}

// The TOML front end names the setting ("table.key: ...") for every kind of wrong
// value, as the words do — a flag given a number, a value setting given a boolean, a list
// where one value goes — and checks the host settings (dev, address) with the same rules and
// messages as --dev/--address (validate_local).
TEST(TunnelConfig, TomlErrorsNameTheSettingLikeTheWords) {
  const std::string vx = "[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  EXPECT_EQ(toml_error(vx + "remcsumtx = 1\n").rfind("vxlan.remcsumtx:", 0), 0u) << toml_error(vx + "remcsumtx = 1\n");
  EXPECT_EQ(toml_error(vx + "udpcsum = \"yes\"\n").rfind("vxlan.udpcsum:", 0), 0u) << toml_error(vx + "udpcsum = \"yes\"\n");
  EXPECT_EQ(toml_error(vx + "learning = 0\n").rfind("vxlan.learning:", 0), 0u) << toml_error(vx + "learning = 0\n");
  EXPECT_EQ(toml_error(vx + "ttl = true\n").rfind("vxlan.ttl:", 0), 0u) << toml_error(vx + "ttl = true\n");
  EXPECT_EQ(toml_error(vx + "dstport = [1, 2]\n").rfind("vxlan.dstport:", 0), 0u) << toml_error(vx + "dstport = [1, 2]\n");
  // the host settings: same rule and message as --dev / --address
  for (const std::string dev : {"a/b", "has space", "a:b"}) {
    DaemonConfig c;
    c.dev = dev;
    const auto want = ofld::daemon::validate_local(c);
    ASSERT_TRUE(want);
    EXPECT_EQ(toml_error("dev = \"" + dev + "\"\n" + vx), *want);
  }
  DaemonConfig c;
  c.address = "192.0.2.1/33";
  const auto want = ofld::daemon::validate_local(c);
  ASSERT_TRUE(want);
  EXPECT_EQ(toml_error("address = \"192.0.2.1/33\"\n" + vx), *want);
}

}  // namespace

namespace {

// The command-line options (--dev, --address, --control, --queues, --no-offload,
// --no-gro) are the TOML file's top-level settings: same result, same message.
TEST(TunnelConfig, OptionsAreTheTopLevelSettings) {
  using ofld::daemon::apply_setting;
  const std::string vx = "[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  auto toml_cfg = [&](const std::string& top) {
    auto p = ofld::daemon::parse_toml(top + vx);
    EXPECT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
    return std::holds_alternative<DaemonConfig>(p) ? std::get<DaemonConfig>(p) : DaemonConfig{};
  };
  DaemonConfig w;
  ASSERT_FALSE(ofld::daemon::parse_tunnel_words({"vxlan", "id", "1", "local", "10.0.0.1", "remote", "10.0.0.2"}, w));
  for (auto [name, values] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"dev", {"vx9"}}, {"address", {"192.0.2.1/24"}}, {"control", {"/tmp/x.sock"}},
           {"queues", {"4"}}, {"no-offload", {}}, {"no-gro", {}}}) {
    auto e = apply_setting(w, name, values);
    ASSERT_FALSE(e) << *e;
  }
  EXPECT_EQ(dump(w), dump(toml_cfg("dev = \"vx9\"\naddress = \"192.0.2.1/24\"\ncontrol = \"/tmp/x.sock\"\n"
                                   "queues = 4\noffload = false\ngro = false\n")));
  // the same wrong value, the same message
  DaemonConfig c;
  EXPECT_EQ(apply_setting(c, "queues", {"0"}).value_or(""), toml_error("queues = 0\n" + vx));
  EXPECT_EQ(apply_setting(c, "dev", {"a/b"}).value_or(""), toml_error("dev = \"a/b\"\n" + vx));
  EXPECT_EQ(apply_setting(c, "address", {"x"}).value_or(""), toml_error("address = \"x\"\n" + vx));
  EXPECT_NE(apply_setting(c, "colour", {"1"}).value_or("").find("colour"), std::string::npos);
}

}  // namespace

// Integrity mode: `integrity` (word) and `integrity = true` (TOML) give the same configuration;
// without the outer UDP checksum in both directions it is refused, naming the setting that
// removes the protection.
TEST(TunnelConfig, IntegrityWordTomlAndOuterChecksumRequired) {
  DaemonConfig c;
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "integrity"}, &c));
  EXPECT_TRUE(c.integrity);
  auto p = parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nintegrity = true\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p));
  EXPECT_TRUE(std::get<DaemonConfig>(p).integrity);
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2"}, &c));
  EXPECT_FALSE(c.integrity);
  auto e = words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "noudpcsum", "integrity"});
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rfind("integrity: needs the outer UDP checksum", 0), 0u) << *e;
  EXPECT_NE(e->find("noudpcsum"), std::string::npos) << *e;
  e = words({"id", "1", "local", "fd00::1", "remote", "fd00::2", "udp6zerocsumrx", "integrity"});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("udp6zerocsumrx"), std::string::npos) << *e;
  auto t = parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nudpcsum = false\nintegrity = true\n");
  ASSERT_TRUE(std::holds_alternative<std::string>(t));
  EXPECT_NE(std::get<std::string>(t).find("integrity: needs the outer UDP checksum"), std::string::npos);
}

// `peer-key FILE` (word) and `peer-key = "FILE"` (TOML) name the key file of authenticated
// peer sessions in every mode (docs/peer-protocol.md); the file is read at start, not here.
TEST(TunnelConfig, PeerKeyWordAndToml) {
  DaemonConfig c;
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "peer-key", "/etc/ofld/k"}, &c));
  EXPECT_EQ(c.peer_key, "/etc/ofld/k");
  auto p = parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\npeer-key = \"/etc/ofld/k\"\n");
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
  EXPECT_EQ(std::get<DaemonConfig>(p).peer_key, "/etc/ofld/k");
  DaemonConfig g;
  auto e = parse_tunnel_words({"gue", "local", "10.0.0.1", "remote", "10.0.0.2", "port", "5555", "peer-key", "/k"}, g);
  EXPECT_FALSE(e) << e.value_or("");
  EXPECT_EQ(g.peer_key, "/k");
  ASSERT_FALSE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2"}, &c));
  EXPECT_EQ(c.peer_key, "");
  EXPECT_TRUE(words({"id", "1", "local", "10.0.0.1", "remote", "10.0.0.2", "peer-key"}));
}

// `cpus LIST` (worker i pinned to LIST[i % n]): numbers and ranges as taskset -c writes them,
// in the order given; the same setting from the command line and from TOML (an array, or the
// list as a string); every wrong list is an error naming `cpus`.
namespace {

using ofld::daemon::DaemonConfig;
using ofld::daemon::parse_cpus;

std::vector<unsigned> cpus_ok(const std::string& s, const std::vector<unsigned>& allowed) {
  auto r = parse_cpus(s, allowed);
  if (auto* e = std::get_if<std::string>(&r)) ADD_FAILURE() << s << ": " << *e;
  return std::holds_alternative<std::vector<unsigned>>(r) ? std::get<std::vector<unsigned>>(r) : std::vector<unsigned>{};
}
std::string cpus_err(const std::string& s, const std::vector<unsigned>& allowed) {
  auto r = parse_cpus(s, allowed);
  return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
}

TEST(TunnelConfig, CpusListsAndRangesInTheOrderGiven) {
  const std::vector<unsigned> all = {0, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(cpus_ok("0", all), (std::vector<unsigned>{0}));
  EXPECT_EQ(cpus_ok("1,0", all), (std::vector<unsigned>{1, 0}));
  EXPECT_EQ(cpus_ok("0-3", all), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(cpus_ok("6,0-2,2", all), (std::vector<unsigned>{6, 0, 1, 2, 2}));
  EXPECT_EQ(cpus_ok("5-5", all), (std::vector<unsigned>{5}));
  EXPECT_TRUE(DaemonConfig{}.cpus.empty());  // default: no pinning
  EXPECT_EQ(ofld::daemon::cpus_text({1, 0, 3}), "1,0,3");
}

TEST(TunnelConfig, CpusErrorsNameTheSetting) {
  const std::vector<unsigned> two = {0, 1};
  // empty list or element
  EXPECT_EQ(cpus_err("", two), "cpus: expected a list of CPU numbers (0,1 or 0-3)");
  for (const char* s : {",", "0,", ",1", "0,,1"})
    EXPECT_NE(cpus_err(s, two).find("cpus: '" + std::string(s) + "' has an empty element"), std::string::npos) << s;
  // not numbers
  EXPECT_EQ(cpus_err("x", two), "cpus: 'x' is not a number (CPU 0..1023)");
  EXPECT_EQ(cpus_err("0,one", two), "cpus: 'one' is not a number (CPU 0..1023)");
  EXPECT_EQ(cpus_err("-1", two), "cpus: '-1' is not a number (CPU 0..1023)");
  EXPECT_EQ(cpus_err("1.5", two), "cpus: '1.5' is not a number (CPU 0..1023)");
  EXPECT_EQ(cpus_err(" 1", two), "cpus: ' 1' is not a number (CPU 0..1023)");
  EXPECT_EQ(cpus_err("0-", two), "cpus: '0-' is not a number (CPU 0..1023)");
  // out of range (CPU_SETSIZE 1024) and backwards ranges
  EXPECT_EQ(cpus_err("1024", two), "cpus: '1024' is not a CPU number in 0..1023");
  EXPECT_EQ(cpus_err("0-99999999999999999999", two), "cpus: '99999999999999999999' is not a CPU number in 0..1023");
  EXPECT_EQ(cpus_err("3-1", two), "cpus: range '3-1' runs backwards");
  // a CPU outside the process's allowed set
  EXPECT_EQ(cpus_err("0,2", two), "cpus: CPU 2 is not one this process may run on (allowed: 0-1)");
  EXPECT_EQ(cpus_err("4", {0, 1, 2, 5, 7, 8}), "cpus: CPU 4 is not one this process may run on (allowed: 0-2,5,7-8)");
  EXPECT_EQ(cpus_err("0-2", {1, 2}), "cpus: CPU 0 is not one this process may run on (allowed: 1-2)");
}

TEST(TunnelConfig, CpusFromOptionAndTomlAreTheSame) {
  // The real process's allowed set: a CPU of it is accepted, one past it is not.
  const auto allowed = ofld::daemon::allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const std::string c0 = std::to_string(allowed.front());
  const std::string vx = "[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  DaemonConfig w;
  ASSERT_FALSE(ofld::daemon::apply_setting(w, "cpus", {c0 + "," + c0}));
  EXPECT_EQ(w.cpus, (std::vector<unsigned>{allowed.front(), allowed.front()}));
  for (const std::string& top : {"cpus = [" + c0 + ", " + c0 + "]\n", "cpus = \"" + c0 + "," + c0 + "\"\n"}) {
    auto p = ofld::daemon::parse_toml(top + vx);
    ASSERT_TRUE(std::holds_alternative<DaemonConfig>(p)) << std::get<std::string>(p);
    EXPECT_EQ(std::get<DaemonConfig>(p).cpus, w.cpus) << top;
  }
  auto one = ofld::daemon::parse_toml("cpus = " + c0 + "\n" + vx);
  ASSERT_TRUE(std::holds_alternative<DaemonConfig>(one)) << std::get<std::string>(one);
  EXPECT_EQ(std::get<DaemonConfig>(one).cpus, (std::vector<unsigned>{allowed.front()}));
  // the same wrong value, the same message
  const std::string past = std::to_string(allowed.back() + 1);
  DaemonConfig c;
  const auto e = ofld::daemon::apply_setting(c, "cpus", {past});
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("cpus: CPU " + past + " is not one this process may run on"), std::string::npos) << *e;
  EXPECT_EQ(*e, toml_error("cpus = [" + past + "]\n" + vx));
  EXPECT_EQ(toml_error("cpus = []\n" + vx), "cpus: expected a list of CPU numbers (0,1 or 0-3)");
  EXPECT_EQ(toml_error("cpus = true\n" + vx), "cpus: expected an integer or a string");
  EXPECT_EQ(toml_error("cpus = [0, true]\n" + vx), "cpus: expected an integer or a string");
  EXPECT_EQ(toml_error("cpus = [-1]\n" + vx), "cpus: '-1' is not a number (CPU 0..1023)");
  EXPECT_EQ(ofld::daemon::apply_setting(c, "cpus", {"a"}).value_or(""), toml_error("cpus = \"a\"\n" + vx));
}

}  // namespace

// `queues auto` and a cgroup CPU limit (cgroup_cpu_limit): fake /proc and /sys trees in the
// layouts the kernel documents — cgroup v2 `cpu.max` "$MAX $PERIOD" with "max" for no limit
// (Documentation/admin-guide/cgroup-v2.rst), v1 `cpu.cfs_quota_us` with -1 for no limit and
// `cpu.cfs_period_us` (Documentation/scheduler/sched-bwc.rst), /proc/<pid>/cgroup
// "hierarchy:controllers:path" and /proc/<pid>/mountinfo (proc(5)).
namespace {

namespace fs = std::filesystem;

struct FakeRoot {
  fs::path root;
  FakeRoot() {
    char tmpl[] = "/tmp/ofld-cgroup-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~FakeRoot() { fs::remove_all(root); }
  void put(const std::string& rel, const std::string& text) const {
    const fs::path p = root / fs::path(rel).relative_path();
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::optional<double> limit() const { return ofld::daemon::cgroup_cpu_limit(root.string()); }
};

constexpr const char* kV1Mounts =
    "25 1 254:1 / / rw,relatime - ext4 /dev/vda rw\n"
    "30 25 0:26 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
    "31 30 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "32 30 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
    "33 30 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";

}  // namespace

TEST(TunnelConfig, CgroupV1CpuQuotaSmallestOverTheAncestors) {
  FakeRoot t;
  t.put("/proc/thread-self/cgroup", "4:memory:/ofld/a\n3:cpu,cpuacct:/ofld/a\n0::/\n");
  t.put("/proc/self/mountinfo", kV1Mounts);
  const std::string base = "/sys/fs/cgroup/cpu,cpuacct";
  t.put(base + "/cpu.cfs_quota_us", "-1\n");
  t.put(base + "/cpu.cfs_period_us", "100000\n");
  t.put(base + "/ofld/cpu.cfs_quota_us", "150000\n");  // 1.5 CPUs on the parent
  t.put(base + "/ofld/cpu.cfs_period_us", "100000\n");
  t.put(base + "/ofld/a/cpu.cfs_quota_us", "-1\n");  // none on the thread's own cgroup
  t.put(base + "/ofld/a/cpu.cfs_period_us", "100000\n");
  ASSERT_TRUE(t.limit().has_value());
  EXPECT_DOUBLE_EQ(*t.limit(), 1.5);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(*t.limit()), 1u);  // whole CPUs only: two workers would share 1.5
  t.put(base + "/ofld/a/cpu.cfs_quota_us", "50000\n");  // 0.5 below it: the smaller one
  EXPECT_DOUBLE_EQ(*t.limit(), 0.5);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(*t.limit()), 1u);  // at least one
  t.put(base + "/ofld/a/cpu.cfs_quota_us", "-1\n");
  t.put(base + "/ofld/cpu.cfs_quota_us", "-1\n");
  EXPECT_FALSE(t.limit().has_value());  // no level has a limit
}

TEST(TunnelConfig, CgroupV2CpuMaxAndAContainersOwnMount) {
  FakeRoot t;
  t.put("/proc/thread-self/cgroup", "0::/system.slice/ofld.service\n");
  t.put("/proc/self/mountinfo",
        "25 1 254:1 / / rw - ext4 /dev/vda rw\n"
        "30 25 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  t.put("/sys/fs/cgroup/system.slice/ofld.service/cpu.max", "max 100000\n");
  t.put("/sys/fs/cgroup/system.slice/cpu.max", "300000 100000\n");  // CPUQuota=300%
  ASSERT_TRUE(t.limit().has_value());
  EXPECT_DOUBLE_EQ(*t.limit(), 3.0);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(*t.limit()), 3u);
  t.put("/sys/fs/cgroup/system.slice/cpu.max", "max 100000\n");
  EXPECT_FALSE(t.limit().has_value());

  // A container: its cgroup namespace's root is mounted; /proc shows the path from the
  // hierarchy's root, which starts with the mount's own root.
  FakeRoot c;
  c.put("/proc/thread-self/cgroup", "0::/docker/abc\n");
  c.put("/proc/self/mountinfo", "40 30 0:26 /docker/abc /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n");
  c.put("/sys/fs/cgroup/cpu.max", "100000 100000\n");  // docker --cpus 1
  ASSERT_TRUE(c.limit().has_value());
  EXPECT_DOUBLE_EQ(*c.limit(), 1.0);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(*c.limit()), 1u);
}

TEST(TunnelConfig, CgroupCpuLimitUnreadableOrMalformedIsNoLimit) {
  FakeRoot t;
  EXPECT_FALSE(t.limit().has_value());  // no /proc at all
  t.put("/proc/thread-self/cgroup", "0::/x\n");
  EXPECT_FALSE(t.limit().has_value());  // no mountinfo
  t.put("/proc/self/mountinfo", "30 25 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
  EXPECT_FALSE(t.limit().has_value());  // no cpu.max (the controller is not enabled there)
  for (const char* bad : {"", "100000", "abc 100000", "100000 0", "-5 100000", "100000 100000 7",
                          "1e5 100000", "100000 max"}) {
    t.put("/sys/fs/cgroup/x/cpu.max", bad);
    EXPECT_FALSE(t.limit().has_value()) << "'" << bad << "'";
  }
  t.put("/proc/thread-self/cgroup", "garbage\n:::\n0::relative\n");
  EXPECT_FALSE(t.limit().has_value());
  EXPECT_EQ(ofld::daemon::cpus_of_limit(0.0), 1u);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(2.99), 2u);
  EXPECT_EQ(ofld::daemon::cpus_of_limit(1e9), ofld::daemon::kMaxQueues);
}
