// Our own route withdrawn when the MAC moves away, until gobgpd's RIB agrees (RFC 7432
// §15.1: of two routes for a MAC with equal MAC Mobility sequence numbers the lower VTEP
// address wins, and the PE that loses the MAC withdraws its route). Against a real gobgpd
// (3.10 runs its MAC Mobility check on withdrawals too and refused ours while they carried
// the community): the endpoint (VTEP 10.50.0.1) learns the TAP's MAC from an ARP request
// and advertises it; a BGP speaker advertises the same MAC from VTEP 10.100.0.1 with
// sequence number 0 (ours, the lower VTEP, keeps it), then moves it to 10.100.0.2 with
// sequence number 1 (RFC 7432 §7.7), which takes it. The FDB must point at 10.100.0.2, and
// gobgpd must end up with no type-2 route of ours for the MAC (nothing left pending, no
// reconnection) although its best route then has the higher sequence number. Root, gobgpd and
// an EVPN-enabled build needed; skipped otherwise.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "proc_util.hpp"

namespace {

using namespace ofld;
using ktest::wait_for;

/// Polls of gobgpd state: every 100 ms.
constexpr std::chrono::milliseconds kSlowPoll{100};

constexpr const char* kMac = "02:00:00:00:00:00";  // bgp_speaker.py's MAC 0
constexpr const char* kOurs = "10.50.0.1";

// Type-2 paths in gobgpd's global RIB for kMac with next hop `nh`.
int mac_paths(io::Netns& ns, const std::string& nh) {
  auto r = ns.exec({"gobgp", "-p", "50074", "global", "rib", "-a", "evpn"}, std::chrono::seconds(20));
  if (!r.ok()) return -1;
  int n = 0;
  std::size_t at = 0;
  const std::string& o = r.value().out;
  while (at < o.size()) {
    const std::size_t end = o.find('\n', at);
    const std::string line = o.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (line.find("macadv") != std::string::npos && line.find(kMac) != std::string::npos &&
        line.find(" " + nh + " ") != std::string::npos)
      ++n;
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return n;
}

TEST(EvpnOwnRoutes, Rfc7432_15_1_LocalMacTakenByAHigherSequenceIsWithdrawnFromGobgpd) {
  if (!io::run_command({"gobgpd", "--version"}).ok()) GTEST_SKIP() << "gobgpd not installed (scripts/deps.sh)";
  if (auto s = io::netns_available(); !s.ok()) GTEST_SKIP() << s.message();
  auto n = io::Netns::create("ofld-evo");
  if (!n.ok()) GTEST_SKIP() << n.message();
  io::Netns ns = std::move(n.value());
  ns.ip({"link", "set", "lo", "up"});
  for (const char* a : {"10.95.0.1/32", "10.95.0.2/32", "10.50.0.1/32"}) ns.ip({"addr", "add", a, "dev", "lo"});
  const std::string tag = std::to_string(::getpid());
  const std::string conf = "/tmp/ofld-evo-" + tag + ".toml", blog = "/tmp/ofld-evo-bgp-" + tag + ".log",
                    olog = "/tmp/ofld-evo-" + tag + ".log", slog = "/tmp/ofld-evo-spk-" + tag + ".log",
                    ctl = "/run/ofld/evo-" + tag + ".sock";
  {
    FILE* f = std::fopen(conf.c_str(), "w");
    ASSERT_TRUE(f);
    std::fputs("[global.config]\n  as = 65000\n  router-id = \"10.95.0.1\"\n  local-address-list = [\"10.95.0.1\"]\n"
               "[[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"10.95.0.2\"\n    peer-as = 65000\n"
               "  [neighbors.transport.config]\n    passive-mode = true\n    local-address = \"10.95.0.1\"\n"
               "  [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n      afi-safi-name = \"l2vpn-evpn\"\n",
               f);
    std::fclose(f);
  }
  pid_t bgp = ktest::spawn({"ip", "netns", "exec", ns.name(), "gobgpd", "-f", conf, "-p", "--api-hosts",
                            "127.0.0.1:50074", "--pprof-disable", "-l", "warn"},
                           blog);
  pid_t spk = -1, ofld = -1;
  struct Cleanup {
    pid_t *a, *b, *c;
    std::string ctl, conf;
    ~Cleanup() {
      ktest::stop(*c);
      ktest::stop(*b);
      ktest::stop(*a);
      ::unlink(ctl.c_str());
      ::unlink(conf.c_str());
    }
  } cleanup{&bgp, &spk, &ofld, ctl, conf};
  ofld = ktest::spawn({"ip", "netns", "exec", ns.name(), OFLD_CLI_PATH, "tunnel", "--dev", "evo0", "--control", ctl,
                       "vxlan", "id", "100", "local", kOurs, "evpn-server", "127.0.0.1:50074"},
                      olog);
  auto evpn = [&] {
    auto j = daemon::query_control(ctl, "fdb mac 02:00:00:00:00:00");
    return j.ok() && j.value().contains("evpn") ? j.value() : nlohmann::json::object();
  };
  ASSERT_TRUE(wait_for([&] { return evpn().contains("evpn") && evpn()["evpn"].value("connected", false); },
                       std::chrono::seconds(30), kSlowPoll))
      << ktest::slurp(olog);
  // The TAP's MAC is kMac; an ARP request from it makes it a local MAC, advertised.
  ns.ip({"link", "set", "evo0", "address", kMac});
  ns.ip({"addr", "add", "192.168.95.1/24", "dev", "evo0"});
  ns.ip({"link", "set", "evo0", "up"});
  ASSERT_TRUE(wait_for(
      [&] {
        (void)ns.exec({"ping", "-c", "1", "-W", "1", "192.168.95.2"}, std::chrono::seconds(3));
        return mac_paths(ns, kOurs) == 1;
      },
      std::chrono::seconds(30), kSlowPoll))
      << "our route for the TAP's MAC never reached gobgpd: " << evpn().dump() << "\n" << ktest::slurp(olog);

  // A higher VTEP with the same sequence number: ours keeps the MAC (RFC 7432 §15.1).
  const std::string fifo = "/tmp/ofld-evo-" + tag + ".fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  spk = ktest::spawn({"sh", "-c",
                      "exec ip netns exec " + ns.name() + " python3 " + std::string(OFLD_SOURCE_DIR) +
                          "/bench/evpn/bgp_speaker.py 10.95.0.1 179 65000 1 2 100 10.95.0.2 < " + fifo},
                     slog);
  const int cmd = ::open(fifo.c_str(), O_WRONLY);  // the speaker's stdin
  ::unlink(fifo.c_str());
  ASSERT_GE(cmd, 0);
  ASSERT_TRUE(wait_for([&] { return mac_paths(ns, "10.100.0.1") == 1; }, std::chrono::seconds(30), kSlowPoll))
      << ktest::slurp(slog);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(evpn()["local"].empty()) << "equal sequence numbers: the lower VTEP (ours) keeps the MAC";
  EXPECT_EQ(mac_paths(ns, kOurs), 1);

  // The MAC moves to 10.100.0.2 with sequence number 1: it is theirs now, ours is withdrawn.
  ns.ip({"link", "set", "evo0", "down"});  // no more frames from the MAC here
  const std::string moves = "moves 1 1.5\n";  // one move, after 1 s
  ASSERT_EQ(::write(cmd, moves.data(), moves.size()), ssize_t(moves.size()));
  EXPECT_TRUE(wait_for(
      [&] {
        auto j = evpn();
        return j.contains("entries") && j["entries"].size() == 1 && j["entries"][0].value("remote", "") == "10.100.0.2";
      },
      std::chrono::seconds(30)))
      << evpn().dump() << "\n" << ktest::slurp(slog);
  EXPECT_TRUE(wait_for([&] { return mac_paths(ns, kOurs) == 0; }, std::chrono::seconds(30), kSlowPoll))
      << "gobgpd still holds our route for the MAC: " << evpn().dump() << "\n" << ktest::slurp(olog);
  const auto j = evpn();
  ASSERT_TRUE(j.contains("evpn"));
  EXPECT_EQ(j["evpn"].value("withdraw_pending", -1), 0);
  EXPECT_EQ(j["evpn"].value("connects", 0), 1) << "a refused call is not a lost connection";
  EXPECT_TRUE(j["local"].empty());
  EXPECT_EQ(mac_paths(ns, "10.100.0.2"), 1);
  ::close(cmd);
}

}  // namespace
