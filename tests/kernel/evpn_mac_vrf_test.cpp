// A route of another MAC-VRF does not touch our FDB (RFC 8365 §5.1.2-5.1.3: a VXLAN EVI's
// routes carry its VNI in the label and the route target AS:VNI; RFC 7432 §9.2.1: a PE
// imports only the routes whose route target its MAC-VRF takes). Against a real gobgpd: two
// BGP speakers (bench/evpn/bgp_speaker.py) advertise the same 200 MACs, one for our VNI 100
// from 40 VTEPs, one for VNI 200 (label and route target 200) from 10, lower, VTEPs.
// Our FDB must hold exactly the VNI-100 mapping before, while and after the VNI-200 routes are
// present and when they are withdrawn (their session closed, RFC 4271 §6); the other
// MAC-VRF's routes are counted as ignored ("other-vni"). Root, gobgpd and an EVPN-enabled
// build needed; skipped otherwise.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "proc_util.hpp"

namespace {

using namespace ofld;
using ktest::wait_for;

constexpr int kRoutes = 200;

long rib_paths(io::Netns& ns) {
  auto r = ns.exec({"gobgp", "-p", "50073", "global", "rib", "-a", "evpn", "summary"}, std::chrono::seconds(20));
  if (!r.ok()) return -1;
  const auto& o = r.value().out;
  const auto at = o.find("Path:");
  return at == std::string::npos ? -1 : std::atol(o.c_str() + at + 5);
}

// bgp_speaker.py's MAC i (02:00 then i in 4 bytes) and the VTEP of route i when `per_vtep`
// routes share one (its vtep(): 10.100.X.Y).
std::string speaker_mac(int i) {
  char b[32];
  std::snprintf(b, sizeof b, "02:00:%02x:%02x:%02x:%02x", (i >> 24) & 255, (i >> 16) & 255, (i >> 8) & 255, i & 255);
  return b;
}
std::string speaker_vtep(int i, int per_vtep) {
  const int v = i / per_vtep;
  return "10.100." + std::to_string(v / 250) + "." + std::to_string(v % 250 + 1);
}

// MAC → remote of the EVPN entries in `ofld fdb`'s document.
std::map<std::string, std::string> evpn_entries(const nlohmann::json& j) {
  std::map<std::string, std::string> m;
  if (!j.contains("entries")) return m;  // not answering yet
  for (const auto& e : j["entries"])
    if (e.value("source", "") == "evpn") m[e.value("mac", "")] = e.value("remote", "");
  return m;
}

TEST(EvpnMacVrf, Rfc8365_5_1_RoutesOfAnotherVniDoNotTouchOurFdb) {
  if (!io::run_command({"gobgpd", "--version"}).ok()) GTEST_SKIP() << "gobgpd not installed (scripts/deps.sh)";
  if (auto s = io::netns_available(); !s.ok()) GTEST_SKIP() << s.message();
  auto n = io::Netns::create("ofld-evv");
  if (!n.ok()) GTEST_SKIP() << n.message();
  io::Netns ns = std::move(n.value());
  ns.ip({"link", "set", "lo", "up"});
  for (const char* a : {"10.96.0.1/32", "10.96.0.2/32", "10.96.0.3/32"}) ns.ip({"addr", "add", a, "dev", "lo"});
  const std::string tag = std::to_string(::getpid());
  const std::string conf = "/tmp/ofld-evv-" + tag + ".toml", blog = "/tmp/ofld-evv-bgp-" + tag + ".log",
                    olog = "/tmp/ofld-evv-" + tag + ".log", alog = "/tmp/ofld-evv-a-" + tag + ".log",
                    zlog = "/tmp/ofld-evv-z-" + tag + ".log", ctl = "/run/ofld/evv-" + tag + ".sock";
  {
    FILE* f = std::fopen(conf.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("[global.config]\n  as = 65000\n  router-id = \"10.96.0.1\"\n  local-address-list = [\"10.96.0.1\"]\n", f);
    for (const char* peer : {"10.96.0.2", "10.96.0.3"})
      std::fprintf(f,
                   "[[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"%s\"\n    peer-as = 65000\n"
                   "  [neighbors.transport.config]\n    passive-mode = true\n    local-address = \"10.96.0.1\"\n"
                   "  [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"l2vpn-evpn\"\n",
                   peer);
    std::fclose(f);
  }
  auto speaker = [&](const char* id, int vteps, int vni, const std::string& log) {
    return ktest::spawn({"ip", "netns", "exec", ns.name(), "python3",
                         std::string(OFLD_SOURCE_DIR) + "/bench/evpn/bgp_speaker.py", "10.96.0.1", "179", "65000",
                         std::to_string(kRoutes), std::to_string(vteps), std::to_string(vni), id},
                        log);
  };
  pid_t bgp = ktest::spawn({"ip", "netns", "exec", ns.name(), "gobgpd", "-f", conf, "-p", "--api-hosts",
                            "127.0.0.1:50073", "--pprof-disable", "-l", "warn"},
                           blog);
  pid_t ours = speaker("10.96.0.2", 40, 100, alog), other = -1, ofld = -1;
  struct Cleanup {
    pid_t *a, *b, *c, *d;
    std::string ctl, conf;
    ~Cleanup() {
      ktest::stop(*d);
      ktest::stop(*c);
      ktest::stop(*b);
      ktest::stop(*a);
      ::unlink(ctl.c_str());
      ::unlink(conf.c_str());
    }
  } cleanup{&bgp, &ours, &other, &ofld, ctl, conf};
  ASSERT_TRUE(wait_for([&] { return rib_paths(ns) >= kRoutes; }, std::chrono::seconds(60)))
      << "gobgpd never held our VNI's routes: " << ktest::slurp(alog) << ktest::slurp(blog);

  ofld = ktest::spawn({"ip", "netns", "exec", ns.name(), OFLD_CLI_PATH, "tunnel", "--dev", "evv0", "--control", ctl,
                       "vxlan", "id", "100", "local", "10.96.0.1", "evpn-server", "127.0.0.1:50073"},
                      olog);
  std::map<std::string, std::string> expected;  // the VNI-100 speaker's mapping: 5 MACs a VTEP
  for (int i = 0; i < kRoutes; ++i) expected[speaker_mac(i)] = speaker_vtep(i, kRoutes / 40);
  auto fdb = [&] {
    auto j = daemon::query_control(ctl, "fdb");
    return j.ok() ? j.value() : nlohmann::json::object();
  };
  ASSERT_TRUE(wait_for([&] { return evpn_entries(fdb()) == expected; }, std::chrono::seconds(30)))
      << fdb().dump().substr(0, 2000) << "\n" << ktest::slurp(olog);

  // The other MAC-VRF: the same MACs at other VTEPs (20 a VTEP: for most MACs a lower address
  // than ours with the same sequence number 0, so that each would win by RFC 7432 §15.1 if
  // it were taken), VNI 200.
  // Ours and the endpoint's own routes: its type-3 route, and a type-2 route for the TAP's own
  // MAC once the kernel sends its first frame on the new link (IPv6 DAD, router or MLD
  // solicitations, in the link's first seconds): read once the count has held still.
  long held = rib_paths(ns);
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const long now = rib_paths(ns);
    if (now == held) break;
    held = now;
  }
  other = speaker("10.96.0.3", 10, 200, zlog);
  ASSERT_TRUE(wait_for([&] { return rib_paths(ns) >= held + kRoutes; }, std::chrono::seconds(60)))
      << "gobgpd never held the VNI-200 routes: " << ktest::slurp(zlog);
  auto ignored = [&] {
    auto j = daemon::query_control(ctl, "fdb vtep 192.0.2.1");  // no entries: the counters
    return j.ok() ? j.value()["evpn"]["ignored"].value("other-vni", 0) : 0;
  };
  EXPECT_TRUE(wait_for([&] { return ignored() >= kRoutes; }, std::chrono::seconds(20)))
      << "other-vni ignored: " << ignored();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto j = fdb();
  EXPECT_EQ(evpn_entries(j), expected) << "the VNI-200 routes changed our FDB";
  EXPECT_EQ(j["evpn"].value("mac_routes", 0), kRoutes);
  EXPECT_EQ(j["evpn"].value("connects", 0), 1);

  // Their withdrawal (the session closed) does not touch it either.
  const long all = rib_paths(ns);
  ktest::stop(other);
  ASSERT_TRUE(wait_for([&] { return rib_paths(ns) == all - kRoutes; }, std::chrono::seconds(30)))
      << "gobgpd paths after the VNI-200 session ended: " << rib_paths(ns) << " (before: " << all
      << ", held before it began: " << held << ")\n" << ktest::slurp(zlog);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(evpn_entries(fdb()), expected) << "the VNI-200 withdrawal changed our FDB";
  EXPECT_EQ(fdb()["evpn"].value("mac_routes", 0), kRoutes);
}

}  // namespace
