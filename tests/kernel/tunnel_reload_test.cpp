// Live reload of `ofld tunnel` (SIGHUP and `ofld reload`; ofld/daemon/reload.hpp) on real
// endpoints (root; own namespaces named svr*, their own addresses; skipped otherwise): a
// SHA-256-checked TCP transfer through the endpoint across 20 reloads loses nothing and is not
// reset; a reload that would need a new device or socket is refused naming the setting, and
// the running configuration keeps forwarding.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using json = nlohmann::json;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;

const char* kUa = "10.84.0.1";
const char* kUb = "10.84.0.2";
const char* kUb2 = "10.84.0.3";  // a second address of B: an extra remote some reloads add
const char* kOa = "192.168.84.1";
const char* kOb = "192.168.84.2";

struct Lab : ktest::Lab {
  std::string conf, ctl_a, ctl_b;
  pid_t ofld_a = -1;
};

/// A's configuration file: the fixed part, then what a variant adds.
std::string conf_text(const std::string& tunnel_extra, const std::string& top_extra = "") {
  return "address = \"" + std::string(kOa) + "/24\"\n" + top_extra + "[vxlan]\nid = 42\nlocal = \"" + kUa +
         "\"\n" + tunnel_extra;
}
// Two variants a reload alternates between: other remotes, a static FDB entry, ttl, tos, log level.
std::string variant(int i) {
  if (i % 2 == 0) return conf_text("remote = \"" + std::string(kUb) + "\"\nttl = 64\n");
  return conf_text("remote = [\"" + std::string(kUb) + "\", \"" + kUb2 + "\"]\nttl = 32\ntos = 32\n"
                   "[[fdb]]\nmac = \"02:00:00:84:00:01\"\nremote = \"" + kUb2 + "\"\n",
                   "log_level = \"debug\"\n");
}

std::string make_lab(Lab& l, bool& skipped) {
  if (auto why = ktest::make_lab(
          l, {.prefix = "svr", .addr_a = std::string(kUa) + "/24", .addr_b = std::string(kUb) + "/24", .disable_ipv6 = true},
          skipped);
      !why.empty())
    return why;
  l.B->ip({"addr", "add", std::string(kUb2) + "/24", "dev", "veth0"});
  l.conf = l.dir + "/a.toml";
  std::ofstream(l.conf) << variant(0);
  std::string why;
  l.ofld_a = l.start(*l.A, "a", {"--config", l.conf}, l.ctl_a, why);
  if (l.ofld_a < 0) return why;
  l.start(*l.B, "b", {"--address", std::string(kOb) + "/24", "vxlan", "id", "42", "local", kUb, "remote", kUa},
          l.ctl_b, why);
  return why;
}

#define LAB_OR_SKIP(l) KTEST_LAB_OR_SKIP(Lab, l, make_lab)


/// `ofld reload --control CTL`: {exit code, stdout + stderr}.
std::pair<int, std::string> reload_cmd(const std::string& ctl) {
  auto r = io::run_command({OFLD_CLI_PATH, "reload", "--control", ctl});
  if (!r.ok()) return {-1, r.message()};
  return {r.value().exit_code, r.value().out + r.value().err};
}

TEST(TunnelReload, TransferAcross20ReloadsLosesNothingAndIsNotReset) {
  LAB_OR_SKIP(l);
  auto st0 = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st0.ok());
  // 12 MiB from B to A in 64 KiB pieces, paced so that it spans the reloads; SHA-256 both ends
  const std::string srv_py =
      "import socket,hashlib\n"
      "s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
      "s.bind(('" + std::string(kOa) + "',5084));s.listen(1);s.settimeout(60)\n"
      "c,_=s.accept();c.settimeout(60);h=hashlib.sha256();n=0\n"
      "while True:\n"
      "  d=c.recv(1<<16)\n"
      "  if not d: break\n"
      "  h.update(d);n+=len(d)\n"
      "print(n,h.hexdigest(),flush=True)\n";
  const std::string cli_py =
      "import socket,hashlib,random,time\n"
      "data=random.Random(84).randbytes(12<<20)\n"
      "for i in range(100):\n"
      "  try:\n"
      "    s=socket.create_connection(('" + std::string(kOa) + "',5084),timeout=60);break\n"
      "  except OSError: time.sleep(0.1)\n"
      "for o in range(0,len(data),1<<16):\n"
      "  s.sendall(data[o:o+(1<<16)]);time.sleep(0.02)\n"
      "s.shutdown(socket.SHUT_WR);s.recv(1);s.close()\n"
      "print(len(data),hashlib.sha256(data).hexdigest(),flush=True)\n";
  pid_t srv = spawn({"ip", "netns", "exec", l.A->name(), "python3", "-c", srv_py}, l.dir + "/srv.log");
  l.pids.push_back(srv);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  pid_t cli = spawn({"ip", "netns", "exec", l.B->name(), "python3", "-c", cli_py}, l.dir + "/cli.log");
  l.pids.push_back(cli);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int ok = 0;
  for (int i = 1; i <= 20; ++i) {
    std::ofstream(l.conf) << variant(i);
    if (i % 2) {  // SIGHUP and `ofld reload` in turn
      ::kill(l.ofld_a, SIGHUP);
      ++ok;  // checked below through the log
    } else {
      auto [code, out] = reload_cmd(l.ctl_a);
      EXPECT_EQ(code, 0) << out;
      if (code == 0) ++ok;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  int st = 0;
  for (int i = 0; i < 600 && ::waitpid(cli, &st, WNOHANG) != cli; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  l.pids[l.pids.size() - 1] = -1;
  for (int i = 0; i < 100 && ::waitpid(srv, &st, WNOHANG) != srv; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  l.pids[l.pids.size() - 2] = -1;
  std::string c = slurp(l.dir + "/cli.log"), s = slurp(l.dir + "/srv.log");
  EXPECT_EQ(c, s) << "sender: " << c << " receiver: " << s;  // a reset would be a traceback here
  EXPECT_EQ(c.rfind(std::to_string(12 << 20) + " ", 0), 0u) << c;
  EXPECT_EQ(ok, 20);
  // every reload was applied (10 by SIGHUP, 10 by the control socket), none refused
  const std::string log = slurp(l.dir + "/a.log");
  std::size_t by = 0, refused = 0;
  for (const char* k : {"by=SIGHUP", "by=control"})
    for (std::size_t p = 0; (p = log.find(k, p)) != std::string::npos; ++p) ++by;
  for (std::size_t p = 0; (p = log.find("reload refused", p)) != std::string::npos; ++p) ++refused;
  EXPECT_EQ(by - refused, 20u) << log;
  EXPECT_EQ(refused, 0u);
  // nothing dropped by the endpoint meanwhile (the last variant, 20, is variant 0 again)
  auto st1 = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st1.ok());
  EXPECT_EQ(st1.value()["drops_total"], st0.value()["drops_total"]) << st1.value()["drops"].dump();
  EXPECT_FALSE(st1.value()["peer_sessions"]["sessions"].contains(kUb2));  // removed with its remote
}

TEST(TunnelReload, ChangeNeedingNewSocketIsRefusedNamingItAndForwardingGoesOn) {
  LAB_OR_SKIP(l);
  struct Case {
    std::string text, name;
  };
  const std::string r = "remote = \"" + std::string(kUb) + "\"\nttl = 64\n";
  const std::vector<Case> cases = {
      {"address = \"" + std::string(kOa) + "/24\"\n[vxlan]\nid = 43\nlocal = \"" + kUa + "\"\n" + r, "id: 42 -> 43"},
      {conf_text(r + "dstport = 8472\n"), "dstport: 4789 -> 8472"},
      {"address = \"" + std::string(kOa) + "/24\"\n[vxlan]\nid = 42\nlocal = \"10.84.0.7\"\n" + r, "local: " + std::string(kUa) + " -> 10.84.0.7"},
      {"address = \"" + std::string(kOa) + "/24\"\n[gue]\nlocal = \"" + kUa + "\"\nremote = \"" + kUb + "\"\nport = 5555\n",
       "encapsulation: vxlan -> gue"},
      {conf_text(r + "mtu = 1400\n"), "mtu: 0 -> 1400"},
      {conf_text(r + "bogus = 1\n"), "bogus"},  // not even a configuration: refused too
  };
  for (const auto& c : cases) {
    std::ofstream(l.conf) << c.text;
    auto [code, out] = reload_cmd(l.ctl_a);
    EXPECT_EQ(code, 1) << out;
    EXPECT_NE(out.find(c.name), std::string::npos) << out;
    EXPECT_NE(out.find("running configuration kept"), std::string::npos) << out;
  }
  // still VNI 42 on port 4789, and forwarding
  auto st = daemon::query_stats(l.ctl_a);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value()["vni"], 42);
  EXPECT_EQ(ktest::echo20(*l.A, *l.B, kOb, l.dir), "");
  // a reload that is allowed after the refused ones applies
  std::ofstream(l.conf) << conf_text("remote = \"" + std::string(kUb) + "\"\nttl = 9\n");
  auto [code, out] = reload_cmd(l.ctl_a);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("ttl 64 -> 9"), std::string::npos) << out;
}

// Integrity mode and the peer key applied by a reload (tunnel::PeerTable::reconfigure), with
// B in integrity mode under key k1 throughout. A starts with integrity but no key: B refuses
// its unauthenticated messages, no session is proven, nothing is elided. A reload giving A the
// key k1 establishes the sessions and A elides toward B (B accepts: rx_csum_seed); one
// turning integrity off stops A's elision at once; one rotating the key in the same file (k2,
// B keeps k1) is read again and applied: A's session toward B goes back to probing and A
// elides nothing. Every transfer arrives intact throughout (SHA-256), since receiving elided
// checksums never depends on these settings.
TEST(TunnelReload, IntegrityAndPeerKeyAppliedRenegotiatesWithoutLoss) {
  Lab l;
  {
    bool skipped = false;
    std::string why = ktest::make_lab(
        l, {.prefix = "svi", .addr_a = std::string(kUa) + "/24", .addr_b = std::string(kUb) + "/24", .disable_ipv6 = true},
        skipped);
    if (skipped) GTEST_SKIP() << why;
    ASSERT_EQ(why, "");
  }
  const std::string key_a = l.dir + "/a.key", key_b = l.dir + "/b.key";
  const std::string k1 = "0123456789abcdef0123456789abcdef", k2 = "fedcba9876543210fedcba9876543210";
  std::ofstream(key_b) << k1 << "\n";
  std::ofstream(key_a) << k1 << "\n";
  l.conf = l.dir + "/a.toml";
  const std::string base = conf_text("remote = \"" + std::string(kUb) + "\"\nudpcsum = true\n");
  std::ofstream(l.conf) << base + "integrity = true\n";
  std::string why;
  l.ofld_a = l.start(*l.A, "a", {"--config", l.conf}, l.ctl_a, why);
  ASSERT_GE(l.ofld_a, 0) << why;
  ASSERT_GE(l.start(*l.B, "b",
                    {"--address", std::string(kOb) + "/24", "vxlan", "id", "42", "local", kUb, "remote", kUa,
                     "udpcsum", "integrity", "peer-key", key_b},
                    l.ctl_b, why),
            0)
      << why;
  auto stats = [](const std::string& ctl) {
    auto s = daemon::query_stats(ctl);
    return s.ok() ? s.value() : json::object();
  };
  auto elided = [&](const std::string& ctl, const char* peer) -> std::uint64_t {
    const auto s = stats(ctl);
    if (!s.contains("peers") || !s["peers"].contains(peer)) return 0;
    return s["peers"][peer].value("tx_csum_elided", std::uint64_t(0));
  };
  auto session = [&](const std::string& ctl, const char* peer) {
    const auto s = stats(ctl);
    if (!s.contains("peer_sessions")) return json::object();
    return s["peer_sessions"]["sessions"].value(peer, json::object());
  };
  auto wait_for = [](auto pred) {
    for (int i = 0; i < 100 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    return pred();
  };
  auto transfer_ok = [&](int seed) {
    auto [c, sv] = ktest::hashed_transfer(*l.A, *l.B, kOb, {.port = 5085, .mib = 2, .seed = seed});
    EXPECT_EQ(c, sv) << "a -> b";
    EXPECT_NE(sv, "");
  };
  // 1. no key at A: B refuses A's messages, nothing proven, nothing elided
  transfer_ok(1);
  EXPECT_NE(session(l.ctl_a, kUb).value("state", ""), "established") << session(l.ctl_a, kUb).dump();
  EXPECT_EQ(elided(l.ctl_a, kUb), 0u);
  EXPECT_GT(stats(l.ctl_b)["peer_sessions"].value("unauthenticated", 0), 0);
  // 2. reload: A gets k1 → sessions proven with integrity, A elides toward B
  std::ofstream(l.conf) << base + "integrity = true\npeer-key = \"" + key_a + "\"\n";
  auto [code, out] = reload_cmd(l.ctl_a);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("peer-key (none) -> " + key_a), std::string::npos) << out;
  EXPECT_TRUE(wait_for([&] { return session(l.ctl_a, kUb).value("integrity", false); }))
      << session(l.ctl_a, kUb).dump() << slurp(l.dir + "/a.log");
  EXPECT_EQ(stats(l.ctl_a)["peer_sessions"].value("authenticated", false), true);
  transfer_ok(2);
  const std::uint64_t e1 = elided(l.ctl_a, kUb);
  EXPECT_GT(e1, 100u);
  const auto sb = stats(l.ctl_b);
  EXPECT_GT(sb["peers"][kUa].value("rx_csum_seed", std::uint64_t(0)), 100u) << sb["peers"].dump();
  // 3. reload: integrity off at A → A elides nothing more, at once
  std::ofstream(l.conf) << base + "peer-key = \"" + key_a + "\"\n";
  std::tie(code, out) = reload_cmd(l.ctl_a);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("integrity on -> off"), std::string::npos) << out;
  transfer_ok(3);
  EXPECT_EQ(elided(l.ctl_a, kUb), e1);
  // 4. integrity on again, then the key rotated in the same file (B keeps k1): read again and
  // applied — A's session toward B is no longer proven, A elides nothing
  std::ofstream(l.conf) << base + "integrity = true\npeer-key = \"" + key_a + "\"\n";
  std::tie(code, out) = reload_cmd(l.ctl_a);
  ASSERT_EQ(code, 0) << out;
  EXPECT_TRUE(wait_for([&] { return session(l.ctl_a, kUb).value("integrity", false); }));
  std::ofstream(key_a) << k2 << "\n";
  std::tie(code, out) = reload_cmd(l.ctl_a);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("peer-key (new key in " + key_a + ")"), std::string::npos) << out;
  EXPECT_EQ(session(l.ctl_a, kUb).value("integrity", true), false);
  const std::uint64_t e2 = elided(l.ctl_a, kUb);
  transfer_ok(4);
  EXPECT_EQ(elided(l.ctl_a, kUb), e2);
  EXPECT_GT(stats(l.ctl_b)["peer_sessions"].value("bad_mac", 0), 0);  // A's messages under k2
  // 5. an unreadable key refuses the reload; the running configuration stays
  std::ofstream(l.conf) << base + "integrity = true\npeer-key = \"" + l.dir + "/missing.key\"\n";
  std::tie(code, out) = reload_cmd(l.ctl_a);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("running configuration kept"), std::string::npos) << out;
  EXPECT_EQ(ktest::echo20(*l.A, *l.B, kOb, l.dir), "");
}

}  // namespace
