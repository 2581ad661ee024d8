// The underlay multicast group (`group ADDR dev IF`, as the kernel VXLAN device):
// three endpoints on one bridged underlay (bridge in its own namespace, default settings:
// multicast snooping on, no querier), no remotes configured anywhere — two `ofld tunnel`
// with `group 239.1.1.1 dev veth0` and, as witness, the kernel VXLAN device with the same
// group. Flooding (ARP requests: broadcast) must reach every member, so all-pairs ping works
// and each end learns the others (vxlan_snoop) from the replies. Root, own namespaces and
// addresses only; skipped otherwise.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "evpn_util.hpp"

namespace {

using namespace ofld;
using namespace ofld::evpntest;

TEST(EvpnGroup, ThreeEndpointsInOneGroupFloodingReachesAll) {
  Underlay u;
  ASSERT_NO_FATAL_FAILURE(create_underlay(u, 3));
  if (IsSkipped()) return;
  // host 0, 1: ofld; host 2: the kernel VXLAN device
  for (int i = 0; i < 2; ++i) {
    auto e = u.start_ofld(i, {"group", "239.1.1.1", "dev", "veth0"});
    ASSERT_EQ(e, "") << e;
  }
  auto& K = u.host(2);
  ASSERT_TRUE(K.ip({"link", "add", "vx0", "type", "vxlan", "id", "42", "local", u.underlay_addr(2),
                    "group", "239.1.1.1", "dev", "veth0", "dstport", "4789"}).ok());
  ASSERT_TRUE(K.ip({"link", "set", "vx0", "mtu", "1450"}).ok());
  ASSERT_TRUE(K.ip({"link", "set", "vx0", "up"}).ok());
  ASSERT_TRUE(K.ip({"addr", "add", u.overlay_addr(2) + "/24", "dev", "vx0"}).ok());

  // all pairs, both directions (each first ping needs a flooded ARP request)
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      if (a == b) continue;
      EXPECT_EQ(ping(u.host(a), u.overlay_addr(b)), "reply") << a << " -> " << b << "\n" << u.logs();
    }
  // the floods went to the group (one datagram per flooded frame, not one per member)
  for (int i = 0; i < 2; ++i) {
    auto st = daemon::query_stats(u.ctl(i));
    ASSERT_TRUE(st.ok()) << st.message();
    const auto& peers = st.value()["peers"];
    ASSERT_TRUE(peers.contains("239.1.1.1")) << peers.dump();
    EXPECT_GT(peers["239.1.1.1"]["tx_datagrams"].get<std::uint64_t>(), 0u);
    // ofld fdb: the group is the flood list; the other two ends were learned
    auto f = fdb_json(u, i);
    ASSERT_TRUE(f.contains("flood")) << f.dump();
    ASSERT_EQ(f["flood"].size(), 1u) << f.dump();
    EXPECT_EQ(f["flood"][0]["remote"], "239.1.1.1");
    EXPECT_EQ(f["flood"][0]["source"], "group");
    std::set<std::string> learned_from;
    for (const auto& e : f["entries"])
      if (e["source"] == "learned") learned_from.insert(e["remote"].get<std::string>());
    for (int o = 0; o < 3; ++o)
      if (o != i) {
        EXPECT_TRUE(learned_from.count(u.underlay_addr(o))) << i << " did not learn " << o << ": " << f.dump();
      }
  }
}

// The words are checked: a unicast group, or dev without group, is refused with the setting named.
TEST(EvpnGroup, GroupWordsAreChecked) {
  daemon::DaemonConfig c;
  auto e = daemon::parse_vxlan_words({"id", "1", "local", "10.0.0.1", "group", "10.0.0.9"}, c);
  ASSERT_TRUE(e);
  EXPECT_NE(e->find("group: 10.0.0.9 is not a multicast address"), std::string::npos) << *e;
  daemon::DaemonConfig c2;
  e = daemon::parse_vxlan_words({"id", "1", "local", "10.0.0.1", "dev", "eth0"}, c2);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rfind("dev:", 0), 0u) << *e;
  daemon::DaemonConfig c3;  // no remote needed with a group
  e = daemon::parse_vxlan_words({"id", "1", "local", "10.0.0.1", "group", "239.1.1.1", "dev", "eth0"}, c3);
  EXPECT_FALSE(e) << *e;
  EXPECT_EQ(c3.group.to_string(), "239.1.1.1");
  EXPECT_EQ(c3.group_dev, "eth0");
  auto t = daemon::parse_toml("[vxlan]\nid = 1\nlocal = \"10.0.0.1\"\ngroup = \"239.1.1.1\"\ndev = \"eth0\"\n");
  ASSERT_TRUE(std::holds_alternative<daemon::DaemonConfig>(t)) << std::get<std::string>(t);
  EXPECT_EQ(std::get<daemon::DaemonConfig>(t).group_dev, "eth0");
  daemon::DaemonConfig c4;  // still: a remote, a group or evpn
  e = daemon::parse_vxlan_words({"id", "1", "local", "10.0.0.1"}, c4);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->rfind("remote:", 0), 0u) << *e;
}

}  // namespace
