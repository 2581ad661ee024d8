// BGP EVPN with Geneve (docs/evpn.md, docs/geneve.md GN-13..GN-15): three hosts (namespaces)
// on one bridged underlay, each with gobgpd (iBGP full mesh, l2vpn-evpn); hosts 0 and 1 run
// `ofld tunnel geneve id 42 local A evpn`, host 2 `ofld tunnel vxlan id 42 local C evpn` —
// a mixed fabric, one VNI. Expected from RFC 8365 §5.1.3 (the BGP Encapsulation extended
// community names the encapsulation a route uses) and RFC 9012 / IANA (tunnel type 8 VXLAN,
// 19 Geneve): the two Geneve hosts take each other's type-3 and type-2 routes (flood list and
// MACs) and carry TCP (SHA-256 compared end to end); neither takes the VXLAN host's routes,
// and the VXLAN host takes none of theirs (each side counts them as "other-encapsulation"),
// so the VXLAN host reaches neither. Root, gobgpd and an EVPN-enabled build needed; skipped
// otherwise.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "evpn_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using namespace ofld::evpntest;

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

/// TCP transfer of `mb` MiB from host a to host b's overlay address; {client "N sha", server "N sha"}.
std::pair<std::string, std::string> transfer(Underlay& u, int a, int b, int mb) {
  return ktest::hashed_transfer(u.host(a), u.host(b), u.overlay_addr(b), {.mib = mb, .seed = 28, .timeout_s = 40});
}

std::string tap_mac(Underlay& u, int i) {
  auto r = u.host(i).exec({"cat", "/sys/class/net/ofld0/address"});
  return r.ok() ? trim(r.value().out) : "";
}

/// Remotes of host i's FDB entries for `mac` (any source).
std::set<std::string> entries_of(Underlay& u, int i, const std::string& mac) {
  std::set<std::string> r;
  auto f = fdb_json(u, i);
  if (f.contains("entries"))
    for (const auto& e : f["entries"])
      if (e["mac"] == mac) r.insert(e["remote"].get<std::string>() + "/" + e["source"].get<std::string>());
  return r;
}

/// Routes host i skipped for naming another encapsulation (evpn.ignored of `ofld fdb`).
std::uint64_t other_encap(Underlay& u, int i) {
  auto f = fdb_json(u, i);
  const auto p = nlohmann::json::json_pointer("/evpn/ignored/other-encapsulation");
  return f.contains(p) ? f[p].get<std::uint64_t>() : 0;
}

TEST(EvpnGeneve, GN13_GN14_GN15_TwoGeneveHostsAndAVxlanHostShareAFabric) {
  if (!io::run_command({"gobgpd", "--version"}).ok()) GTEST_SKIP() << "gobgpd not installed (scripts/deps.sh)";
  Underlay u;
  ASSERT_NO_FATAL_FAILURE(create_underlay(u, 3));
  if (IsSkipped()) return;
  for (int i = 0; i < 3; ++i) ASSERT_EQ(u.start_gobgpd(i, 3), "");
  for (int i = 0; i < 3; ++i) {
    auto e = u.start_ofld_as(i, i < 2 ? "geneve" : "vxlan", {"evpn"});
    if (e.find("built without the gRPC client") != std::string::npos) GTEST_SKIP() << e;
    ASSERT_EQ(e, "") << e;
  }
  // type-3: each Geneve host floods to the other Geneve host only
  for (int i = 0; i < 2; ++i) {
    const std::set<std::string> want = {u.underlay_addr(1 - i) + "/evpn"};
    EXPECT_TRUE(wait_for([&] { return flood(u, i) == want; }, std::chrono::seconds(30)))
        << "host " << i << " flood list " << fdb_json(u, i).dump() << "\n" << u.logs();
  }
  // ping and TCP both ways between the Geneve hosts (their TAP MACs become type-2 routes)
  EXPECT_EQ(ping(u.host(0), u.overlay_addr(1)), "reply") << u.logs();
  for (auto [a, b] : {std::pair{0, 1}, std::pair{1, 0}}) {
    auto [c, s] = transfer(u, a, b, 4);
    EXPECT_EQ(c, s) << a << " -> " << b;
    EXPECT_NE(s, "") << a << " -> " << b;
  }
  const std::string mac0 = tap_mac(u, 0), mac1 = tap_mac(u, 1), mac2 = tap_mac(u, 2);
  ASSERT_FALSE(mac0.empty() || mac1.empty() || mac2.empty());
  EXPECT_TRUE(wait_for([&] { return entries_of(u, 0, mac1) == std::set<std::string>{u.underlay_addr(1) + "/evpn"}; },
                       std::chrono::seconds(5)))
      << fdb_json(u, 0).dump();
  EXPECT_TRUE(wait_for([&] { return entries_of(u, 1, mac0) == std::set<std::string>{u.underlay_addr(0) + "/evpn"}; },
                       std::chrono::seconds(5)))
      << fdb_json(u, 1).dump();

  // the VXLAN host: its pings (ARP) make its TAP MAC a type-2 route too, which the Geneve
  // hosts skip; it installs neither Geneve host's type-3 nor type-2 routes
  EXPECT_EQ(ping(u.host(2), u.overlay_addr(0)), "none") << "VXLAN reached a Geneve host\n" << u.logs();
  EXPECT_TRUE(flood(u, 2).empty()) << fdb_json(u, 2).dump();
  EXPECT_TRUE(entries_of(u, 2, mac0).empty() && entries_of(u, 2, mac1).empty()) << fdb_json(u, 2).dump();
  EXPECT_GE(other_encap(u, 2), 2u) << "the Geneve hosts' type-3 routes: " << fdb_json(u, 2).dump();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(entries_of(u, i, mac2).empty()) << fdb_json(u, i).dump();
    EXPECT_EQ(flood(u, i).count(u.underlay_addr(2) + "/evpn"), 0u) << fdb_json(u, i).dump();
    EXPECT_GE(other_encap(u, i), 1u) << "the VXLAN host's type-3 route: " << fdb_json(u, i).dump();
    EXPECT_NE(u.log(i).find("skipped (we take only tunnel type 19)"), std::string::npos) << u.log(i);
  }
  // `ofld fdb` of a Geneve endpoint names its VNI
  EXPECT_EQ(fdb_json(u, 0).value("vni", 0), 42);
}

}  // namespace
