// Live reload's decision (ofld/daemon/reload.hpp): what a reload applies (remotes, static FDB
// entries, ttl, tos, EVPN server, integrity, peer key, log level) and what it refuses, naming the setting, because
// it needs a new device or socket (encapsulation, VNI, local address, port, ...).
#include <gtest/gtest.h>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/reload.hpp"

namespace {

using namespace ofld::daemon;

DaemonConfig toml(const std::string& text) {
  auto p = parse_toml(text);
  if (auto* e = std::get_if<std::string>(&p)) ADD_FAILURE() << *e;
  return std::get_if<DaemonConfig>(&p) ? std::get<DaemonConfig>(p) : DaemonConfig{};
}

const std::string kBase =
    "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\nttl = 64\n"
    "[[fdb]]\nmac = \"02:00:00:00:00:01\"\nremote = \"10.0.0.2\"\n";

TEST(ReloadPlan, SameFileChangesNothing) {
  const auto p = plan_reload(toml(kBase), toml(kBase));
  EXPECT_EQ(p.refused, "");
  EXPECT_TRUE(p.changes.empty());
}

TEST(ReloadPlan, RemotesFdbTtlTosLogLevelAreApplied) {
  const auto next = toml(
      "log_level = \"debug\"\n"
      "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.4\"]\nttl = 32\ntos = \"inherit\"\n"
      "[[fdb]]\nmac = \"02:00:00:00:00:01\"\nremote = \"10.0.0.4\"\n"
      "[[fdb]]\nmac = \"02:00:00:00:00:02\"\nremote = \"10.0.0.2\"\n");
  const auto p = plan_reload(toml(kBase), next);
  ASSERT_EQ(p.refused, "");
  ASSERT_EQ(p.remotes_added.size(), 1u);
  EXPECT_EQ(p.remotes_added[0].to_string(), "10.0.0.4");
  ASSERT_EQ(p.remotes_removed.size(), 1u);
  EXPECT_EQ(p.remotes_removed[0].to_string(), "10.0.0.3");
  EXPECT_EQ(p.fdb_added.size(), 2u);  // one moved to 10.0.0.4, one new
  EXPECT_TRUE(p.fdb_removed.empty());
  EXPECT_TRUE(p.outer);
  EXPECT_TRUE(p.log_level);
  EXPECT_FALSE(p.evpn_server);
  const std::vector<std::string> want = {"remote +10.0.0.4", "remote -10.0.0.3", "fdb 02:00:00:00:00:01 10.0.0.4",
                                         "fdb 02:00:00:00:00:02 10.0.0.2", "ttl 64 -> 32", "tos 0 -> inherit",
                                         "log-level (none) -> debug"};
  EXPECT_EQ(p.changes, want);
}

TEST(ReloadPlan, StaticEntryRemovedAndEvpnServerMoved) {
  const auto a = toml("[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nevpn = true\nevpn_server = \"127.0.0.1:50051\"\n"
                      "[[fdb]]\nmac = \"02:00:00:00:00:01\"\nremote = \"10.0.0.2\"\n");
  const auto z = toml("[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nevpn = true\nevpn_server = \"127.0.0.1:50052\"\n");
  const auto p = plan_reload(a, z);
  ASSERT_EQ(p.refused, "");
  ASSERT_EQ(p.fdb_removed.size(), 1u);
  EXPECT_TRUE(p.evpn_server);
}

// Each setting that needs a new device or socket, or that the data path was built with, is
// refused with its name and both values; the plan then applies nothing.
TEST(ReloadPlan, RefusedSettingIsNamed) {
  struct Case {
    std::string next, name;
  };
  const std::string v = "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\nttl = 64\n";
  const std::vector<Case> cases = {
      {"[vxlan]\nid = 43\nlocal = \"10.0.0.1\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\nttl = 64\n", "id: 42 -> 43"},
      {"[vxlan]\nid = 42\nlocal = \"10.0.0.9\"\nremote = [\"10.0.0.2\", \"10.0.0.3\"]\nttl = 64\n", "local: 10.0.0.1 -> 10.0.0.9"},
      {v + "dstport = 8472\n", "dstport: 4789 -> 8472"},
      {v + "srcport = [1000, 2000]\n", "srcport:"},
      {v + "udpcsum = false\n", "udpcsum: on -> off"},
      {v + "mtu = 1400\n", "mtu: 0 -> 1400"},
      {v + "remcsumtx = true\n", "remcsumtx:"},
      {v + "learning = false\n", "learning:"},
      {"dev = \"other0\"\n" + v, "dev: ofld0 -> other0"},
      {"queues = 2\n" + v, "queues: auto -> 2"},
      {"offload = false\n" + v, "offload: on -> off"},
      {"metrics = 9100\n" + v, "metrics: (none) -> 9100"},
      {"[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5555\n", "encapsulation: vxlan -> gue"},
  };
  const auto running = toml(kBase);
  for (const auto& c : cases) {
    auto next = toml(c.next);
    next.static_fdb = running.static_fdb;
    const auto p = plan_reload(running, next);
    EXPECT_EQ(p.refused.rfind(c.name, 0), 0u) << c.next << " -> " << p.refused;
    EXPECT_NE(p.refused.find("restart the endpoint"), std::string::npos);
    EXPECT_TRUE(p.changes.empty());
  }
}

// Integrity mode and the peer key are applied: the peer sessions renegotiate
// (tunnel::PeerTable::reconfigure); the daemon reads the key file again on every reload.
TEST(ReloadPlan, IntegrityAndPeerKeyAreApplied) {
  const std::string v = "[vxlan]\nid = 42\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\n";
  const auto p = plan_reload(toml(v), toml(v + "integrity = true\npeer-key = \"/etc/ofld/k1\"\n"));
  EXPECT_EQ(p.refused, "");
  EXPECT_TRUE(p.peers);
  EXPECT_FALSE(p.outer);
  EXPECT_EQ(p.changes, (std::vector<std::string>{"integrity off -> on", "peer-key (none) -> /etc/ofld/k1"}));
  const auto back = plan_reload(toml(v + "integrity = true\n"), toml(v));
  EXPECT_EQ(back.refused, "");
  EXPECT_TRUE(back.peers);
  EXPECT_EQ(back.changes, (std::vector<std::string>{"integrity on -> off"}));
  EXPECT_FALSE(plan_reload(toml(v), toml(v)).peers);
}

TEST(ReloadPlan, L3ModesRefuseAnotherRemoteOrPortApplyTtl) {
  const std::string g = "[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5555\n";
  const auto a = toml(g);
  EXPECT_EQ(plan_reload(a, toml("[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.3\"\nport = 5555\n")).refused.rfind("remote: 10.0.0.2 -> 10.0.0.3", 0), 0u);
  EXPECT_EQ(plan_reload(a, toml("[gue]\nlocal = \"10.0.0.1\"\nremote = \"10.0.0.2\"\nport = 5556\n")).refused.rfind("port: 5555 -> 5556", 0), 0u);
  const auto p = plan_reload(a, toml(g + "ttl = 9\ntos = 32\n"));
  EXPECT_EQ(p.refused, "");
  EXPECT_TRUE(p.outer);
  EXPECT_EQ(p.changes, (std::vector<std::string>{"ttl 0 -> 9", "tos 0 -> 0x20"}));  // TOML 32 is 0x20
}

}  // namespace

namespace {

using namespace ofld::daemon;

// `cpus` is applied live (each worker re-pins its thread), both ways: set and cleared.
TEST(ReloadPlan, CpusAreApplied) {
  const auto allowed = allowed_cpus();
  ASSERT_FALSE(allowed.empty());
  const std::string c0 = std::to_string(allowed.front());
  const auto pinned = toml("cpus = [" + c0 + "]\n" + kBase);
  auto p = plan_reload(toml(kBase), pinned);
  ASSERT_EQ(p.refused, "");
  EXPECT_TRUE(p.cpus);
  ASSERT_EQ(p.changes.size(), 1u);
  EXPECT_EQ(p.changes[0], "cpus (none) -> " + c0);
  p = plan_reload(pinned, toml(kBase));
  ASSERT_EQ(p.refused, "");
  EXPECT_TRUE(p.cpus);
  EXPECT_EQ(p.changes.at(0), "cpus " + c0 + " -> (none)");
  EXPECT_FALSE(plan_reload(pinned, pinned).cpus);
}

}  // namespace
