// `ofld tunnel` as a service (docs/service.md), with real endpoints (root; own namespaces,
// named svc*, and addresses; skipped otherwise): the systemd unit checked by systemd-analyze,
// the sd_notify protocol against a datagram socket in NOTIFY_SOCKET (no systemd as PID 1 here),
// the privilege drop (`--user`: uid, capabilities, forwarding still works) and a persistent TAP
// created for an unprivileged user, used by an endpoint that never had root.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include <nlohmann/json.hpp>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;

const char* kUa = "10.82.0.1";
const char* kUb = "10.82.0.2";
const char* kOa = "192.168.82.1";
const char* kOb = "192.168.82.2";

bool have(const std::string& prog) {
  return io::run_command({"sh", "-c", "command -v " + prog}).ok() &&
         io::run_command({"sh", "-c", "command -v " + prog}).value().exit_code == 0;
}

/// A field of /proc/PID/status ("Uid", "CapEff", ...), the text after the colon, trimmed.
std::string proc_status(pid_t pid, const std::string& field) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(field + ":", 0) == 0) {
      auto v = line.substr(field.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "";
}

using Lab = ktest::Lab;

/// Two namespaces joined by a veth (veth0: kUa / kUb); a scratch directory every user may
/// write (control sockets of unprivileged endpoints). "" or a reason (skipped: a skip).
std::string make_lab(Lab& l, bool& skipped) {
  return ktest::make_lab(
      l, {.prefix = "svc", .addr_a = std::string(kUa) + "/24", .addr_b = std::string(kUb) + "/24", .disable_ipv6 = true},
      skipped, /*world_writable=*/true);
}

#define LAB_OR_SKIP(l) KTEST_LAB_OR_SKIP(Lab, l, make_lab)

/// Start `prefix... ofld tunnel --control CTL WORDS` in `ns`; waits until the control socket
/// answers. Returns the pid (of `ip netns exec`, which execs the rest) or -1 (log in `why`).
pid_t start(Lab& l, const io::Netns& ns, const std::string& tag, const std::vector<std::string>& prefix,
            const std::vector<std::string>& words, std::string& ctl, std::string& why,
            const std::vector<std::string>& env = {}) {
  ctl = l.dir + "/" + tag + ".sock";
  const std::string log = l.dir + "/" + tag + ".log";
  std::vector<std::string> cmd = {"env"};
  cmd.insert(cmd.end(), env.begin(), env.end());
  for (auto s : {"ip", "netns", "exec"}) cmd.push_back(s);
  cmd.push_back(ns.name());
  cmd.insert(cmd.end(), prefix.begin(), prefix.end());
  for (auto s : {OFLD_CLI_PATH, "tunnel", "--control"}) cmd.push_back(s);
  cmd.push_back(ctl);
  cmd.insert(cmd.end(), words.begin(), words.end());
  pid_t pid = spawn(cmd, log);
  l.pids.push_back(pid);
  for (int i = 0; i < 100; ++i) {
    if (daemon::query_stats(ctl).ok()) return pid;
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      l.pids.back() = -1;
      why = "ofld tunnel exited: " + slurp(log);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  why = "ofld tunnel did not come up: " + slurp(log);
  return -1;
}

std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to, const std::string& dst,
                                             int mb, int seed) {
  return ktest::hashed_transfer(from, to, dst, {.port = 5082, .mib = mb, .seed = seed});
}

void transfer_both_ways(Lab& l) {
  auto [c1, s1] = transfer(*l.A, *l.B, kOb, 2, 7);
  EXPECT_EQ(c1, s1) << "a -> b";
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(*l.B, *l.A, kOa, 2, 8);
  EXPECT_EQ(c2, s2) << "b -> a";
  EXPECT_NE(s2, "");
}

std::vector<std::string> vxlan_words(const char* local, const char* remote, const char* ovl) {
  return {"--address", std::string(ovl) + "/24", "vxlan", "id", "42", "local", local, "remote", remote};
}

/// A copy of the unit whose ExecStart runs the built command (systemd-analyze verify checks
/// that the program exists).
std::string unit_copy(const std::string& dir) {
  std::string u = slurp(std::string(OFLD_SOURCE_DIR) + "/packaging/systemd/ofld-tunnel@.service");
  u = std::regex_replace(u, std::regex("/usr/bin/ofld"), OFLD_CLI_PATH);
  const std::string path = dir + "/ofld-tunnel@svctest.service";
  std::ofstream(path) << u;
  return path;
}

}  // namespace

// The unit is valid for systemd (systemd-analyze verify: no message at all), and hardened:
// systemd-analyze security rates its exposure (0 = best .. 10) at most 3.0 ("OK").
TEST(TunnelService, UnitVerifiesAndIsHardened) {
  if (!have("systemd-analyze")) GTEST_SKIP() << "systemd-analyze is not installed";
  char tmpl[] = "/tmp/ofld-svc-unit-XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string dir = tmpl;
  const std::string unit = unit_copy(dir);
  auto v = io::run_command({"systemd-analyze", "verify", "--man=no", unit});
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(v.value().exit_code, 0) << v.value().err;
  EXPECT_EQ(v.value().err + v.value().out, "");
  auto s = io::run_command({"systemd-analyze", "security", "--offline=true", "--no-pager", unit});
  io::run_command({"rm", "-rf", dir});
  ASSERT_TRUE(s.ok()) << s.message();
  std::smatch m;
  const std::string out = s.value().out;
  if (!std::regex_search(out, m, std::regex("Overall exposure level for [^:]*: ([0-9.]+)")))
    GTEST_SKIP() << "systemd-analyze security --offline gave no score here: " << out << s.value().err;
  const double score = std::stod(m[1]);
  std::printf("systemd-analyze security: exposure %.1f\n", score);
  EXPECT_LE(score, 3.0) << out;
  // what the unit promises (docs/service.md)
  const std::string u = slurp(std::string(OFLD_SOURCE_DIR) + "/packaging/systemd/ofld-tunnel@.service");
  for (const char* k : {"Type=notify", "ExecStart=/usr/bin/ofld tunnel --config /etc/ofld/%i.toml",
                        "CapabilityBoundingSet=CAP_NET_ADMIN CAP_NET_RAW", "NoNewPrivileges=yes",
                        "ProtectSystem=strict"})
    EXPECT_NE(u.find(k), std::string::npos) << k;
}

// sd_notify(3) against a datagram socket in NOTIFY_SOCKET: the first message carries READY=1
// and arrives only when the control socket already answers; SIGTERM brings STOPPING=1 and
// a clean exit (0).
TEST(TunnelService, NotifyReadyWhenControlAnswersStoppingAtSigterm) {
  LAB_OR_SKIP(l);
  const std::string nsock = l.dir + "/notify";
  int fd = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un sa{};
  sa.sun_family = AF_UNIX;
  std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", nsock.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
  timeval tv{15, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string ctl = l.dir + "/n.sock", log = l.dir + "/n.log";
  pid_t pid = spawn({"env", "NOTIFY_SOCKET=" + nsock, "ip", "netns", "exec", l.A->name(), OFLD_CLI_PATH,
                     "tunnel", "--control", ctl, "vxlan", "id", "42", "local", kUa, "remote", kUb},
                    log);
  l.pids.push_back(pid);
  char buf[512];
  ssize_t n = ::recv(fd, buf, sizeof buf - 1, 0);
  ASSERT_GT(n, 0) << "no notification: " << slurp(log);
  // at the moment READY=1 is read, the control socket must already answer
  const bool answers = daemon::query_stats(ctl).ok();
  const std::string first(buf, std::size_t(n));
  EXPECT_NE(first.find("READY=1"), std::string::npos) << first;
  EXPECT_TRUE(answers) << "READY=1 before the control socket answered";
  ::kill(pid, SIGTERM);
  n = ::recv(fd, buf, sizeof buf - 1, 0);
  ASSERT_GT(n, 0) << "no STOPPING=1: " << slurp(log);
  EXPECT_NE(std::string(buf, std::size_t(n)).find("STOPPING=1"), std::string::npos);
  EXPECT_EQ(stop(l.pids.back()), 0) << slurp(log);
  ::close(fd);
}

// `--user nobody`: after set-up the VXLAN endpoints run as uid/gid 65534 with only
// CAP_NET_ADMIN (permitted, effective and bounding: transmit sockets opened per source port
// later use SO_SNDBUFFORCE), no_new_privs set; TCP both ways through them stays intact.
TEST(TunnelService, UserNobodyVxlanForwardsWithOnlyNetAdmin) {
  LAB_OR_SKIP(l);
  std::string ca, cb, why;
  pid_t a = start(l, *l.A, "ua", {}, [] {
    auto w = vxlan_words(kUa, kUb, kOa);
    w.insert(w.begin(), {"--user", "nobody"});
    return w;
  }(), ca, why);
  ASSERT_GT(a, 0) << why;
  pid_t b = start(l, *l.B, "ub", {}, [] {
    auto w = vxlan_words(kUb, kUa, kOb);
    w.insert(w.begin(), {"--user", "nobody"});
    return w;
  }(), cb, why);
  ASSERT_GT(b, 0) << why;
  for (pid_t p : {a, b}) {
    EXPECT_EQ(proc_status(p, "Uid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(proc_status(p, "Gid").substr(0, 5), "65534");
    EXPECT_EQ(proc_status(p, "CapEff"), "0000000000001000");  // CAP_NET_ADMIN (12) only
    EXPECT_EQ(proc_status(p, "CapPrm"), "0000000000001000");
    EXPECT_EQ(proc_status(p, "CapBnd"), "0000000000001000");
    EXPECT_EQ(proc_status(p, "NoNewPrivs"), "1");
  }
  transfer_both_ways(l);
  auto st = daemon::query_stats(cb);
  ASSERT_TRUE(st.ok());
  EXPECT_EQ(st.value()["drops_total"].get<std::uint64_t>(), 0u) << st.value().dump();
}

// GUE opens every socket at start: `--user nobody` leaves it no capability at all, and it
// still carries TCP both ways intact.
TEST(TunnelService, UserNobodyGueKeepsNoCapability) {
  LAB_OR_SKIP(l);
  std::string ca, cb, why;
  auto words = [](const char* lo, const char* re, const char* ovl) {
    return std::vector<std::string>{"--user", "nobody", "--address", std::string(ovl) + "/24", "gue",
                                    "local", lo, "remote", re, "port", "5555"};
  };
  pid_t a = start(l, *l.A, "ga", {}, words(kUa, kUb, kOa), ca, why);
  ASSERT_GT(a, 0) << why;
  pid_t b = start(l, *l.B, "gb", {}, words(kUb, kUa, kOb), cb, why);
  ASSERT_GT(b, 0) << why;
  for (pid_t p : {a, b}) {
    EXPECT_EQ(proc_status(p, "Uid"), "65534\t65534\t65534\t65534");
    EXPECT_EQ(proc_status(p, "CapEff"), "0000000000000000");
    EXPECT_EQ(proc_status(p, "CapPrm"), "0000000000000000");
  }
  transfer_both_ways(l);
}

// A persistent TAP made for uid 65534 (`ip tuntap add ... user 65534`, MTU, address and link
// state set by the administrator): an endpoint started as that user with no capability at all
// (setpriv: fork, setresuid, empty sets) opens it, skips what is already set, and forwards
// TCP both ways intact to a root endpoint.
TEST(TunnelService, PersistentTapForUserUsedWithoutAnyPrivilege) {
  if (!have("setpriv")) GTEST_SKIP() << "setpriv (util-linux) is not installed";
  LAB_OR_SKIP(l);
  ASSERT_TRUE(l.A->ip({"tuntap", "add", "dev", "svctap0", "mode", "tap", "user", "65534"}).ok());
  ASSERT_TRUE(l.A->ip({"link", "set", "svctap0", "mtu", "1450"}).ok());
  ASSERT_TRUE(l.A->ip({"addr", "add", std::string(kOa) + "/24", "dev", "svctap0"}).ok());
  ASSERT_TRUE(l.A->ip({"link", "set", "svctap0", "up"}).ok());
  std::string ca, cb, why;
  const std::vector<std::string> unpriv = {"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                           "--inh-caps=-all", "--bounding-set=-all", "--no-new-privs"};
  auto wa = vxlan_words(kUa, kUb, kOa);
  wa.insert(wa.begin(), {"--dev", "svctap0"});
  pid_t a = start(l, *l.A, "pa", unpriv, wa, ca, why);
  ASSERT_GT(a, 0) << why;
  EXPECT_EQ(proc_status(a, "Uid"), "65534\t65534\t65534\t65534");
  EXPECT_EQ(proc_status(a, "CapEff"), "0000000000000000");
  EXPECT_EQ(proc_status(a, "CapBnd"), "0000000000000000");
  pid_t b = start(l, *l.B, "pb", {}, vxlan_words(kUb, kUa, kOb), cb, why);
  ASSERT_GT(b, 0) << why;
  transfer_both_ways(l);
  // the device outlives the endpoint (persistent) and keeps the administrator's settings
  stop(l.pids[0]);
  auto r = l.A->exec({"ip", "-o", "addr", "show", "dev", "svctap0"});
  ASSERT_TRUE(r.ok());
  EXPECT_NE(r.value().out.find(kOa), std::string::npos);
}
