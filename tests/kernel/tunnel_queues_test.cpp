// `ofld tunnel --queues 2` (root; own namespaces and addresses only; skipped otherwise): a
// multi-queue TAP (IFF_MULTI_QUEUE) with one worker per queue, each with its own UDP socket
// in the SO_REUSEPORT group of the VXLAN port. Two ofld endpoints, and ofld against the
// kernel VXLAN device, carry several parallel TCP streams each way; every stream's bytes are
// compared by SHA-256 at both ends. The kernel's own view is checked too: the TAP has two
// queues in sysfs (rx-0, rx-1, tx-0, tx-1), SIGTERM ends all workers with exit 0, and the
// TAP is gone afterwards. Which flow lands on which queue is the kernel's hash (not
// guaranteed to spread a given set of flows), so the per-queue counters are only checked to
// add up to the totals; the spread is printed. Without --queues (auto, the default) a VXLAN
// endpoint opens two queues where two CPUs are allowed, and follows a TAP that already
// exists: its single or multi-queue kind (the kernel refuses a TUNSETIFF of the other kind).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "ofld/daemon/config.hpp"
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

constexpr int kStreams = 6;
constexpr int kMiB = 3;

struct Endpoint {
  pid_t pid = -1;
  bool scatter = false;
  std::string ctl, log;
};

struct Setup {
  std::optional<io::Netns> A, B;
  Endpoint ea, eb;  // eb unused with a kernel peer
  ~Setup() {
    stop(ea.pid);
    stop(eb.pid);
  }
};

// scatter: recorded only (there is one train representation; OFLD_TX_PIECES is gone).
// mode: "vxlan", "gue" or "gre" (the L3 modes use a multi-queue TUN instead of a TAP).
// queues: "--queues" value, or "" for none (auto).
std::string start_ofld(const io::Netns& ns, Endpoint& e, const std::string& local,
                       const std::string& remote, const std::string& ovl, bool scatter,
                       const std::string& mode = "vxlan", const std::string& queues = "2") {
  e.scatter = scatter;
  e.ctl = "/run/ofld/tq-" + std::to_string(::getpid()) + "-" + ns.name() + ".sock";
  e.log = "/tmp/ofld-tq-" + ns.name() + ".log";
  std::vector<std::string> argv = {"--dev", "ofld0", "--address", ovl};
  if (!queues.empty()) argv.insert(argv.begin(), {"--queues", queues});
  if (mode == "vxlan") argv.insert(argv.end(), {"vxlan", "id", "42", "local", local, "remote", remote, "udpcsum"});
  else if (mode == "gue") argv.insert(argv.end(), {"gue", "local", local, "remote", remote, "port", "5555"});
  else argv.insert(argv.end(), {"gre", "local", local, "remote", remote, "key", "42", "csum"});
  return ktest::start_tunnel(ns, e.ctl, e.log, argv, e.pid);
}

// A and B joined by a veth (10.78.0.1/.2); ofld with two queues in A; in B a second ofld
// (kernel_peer false) or the kernel VXLAN device. Overlay 192.168.78.1 (A) / .2 (B).
std::string setup(Setup& s, bool kernel_peer, bool& skipped, const std::string& mode = "vxlan",
                  const std::string& queues = "2") {
  if (auto why = ktest::make_veth_pair(s.A, s.B,
                                       {.prefix = "ofld-tq", .addr_a = "10.78.0.1/24", .addr_b = "10.78.0.2/24"},
                                       skipped);
      !why.empty())
    return why;
  auto& A = *s.A;
  auto& B = *s.B;
  if (kernel_peer) {
    // As in tunnel_interop_test: the kernel side finishes its checksums before the veth.
    if (auto st = B.exec({"ethtool", "-K", "veth0", "tx", "off"}); !st.ok()) return st.message();
    if (auto st = B.ip({"link", "add", "vx0", "type", "vxlan", "id", "42", "local", "10.78.0.2",
                        "remote", "10.78.0.1", "dstport", "4789", "udpcsum"});
        !st.ok())
      return st.message();
    if (auto st = B.ip({"link", "set", "vx0", "mtu", "1450", "up"}); !st.ok()) return st.message();
    if (auto st = B.ip({"addr", "add", "192.168.78.2/24", "dev", "vx0"}); !st.ok()) return st.message();
  } else if (auto e = start_ofld(B, s.eb, "10.78.0.2", "10.78.0.1", "192.168.78.2/24", true, mode, queues);
             !e.empty()) {
    return e;
  }
  return start_ofld(A, s.ea, "10.78.0.1", "10.78.0.2", "192.168.78.1/24", kernel_peer, mode, queues);
}

// kStreams parallel streams from `from` to `to` (server at dst): {client list, server list}.
std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to, const std::string& dst,
                                             int seed) {
  return ktest::hashed_transfer(from, to, dst,
                                {.port = 5002, .mib = kMiB, .seed = seed, .streams = kStreams, .timeout_s = 90});
}

// The per-queue counters add up to the totals; returns how many queues carried `dir.key`.
int check_queue_sums(const nlohmann::json& st, const char* dir, const char* key) {
  std::uint64_t sum = 0;
  int used = 0;
  for (const auto& q : st["per_queue"]) {
    auto v = q[dir][key].get<std::uint64_t>();
    sum += v;
    used += v > 0;
  }
  EXPECT_EQ(sum, st[dir][key].get<std::uint64_t>()) << dir << "." << key;
  return used;
}

// The kernel's view of ofld0: its queues in sysfs, "rx-0\n...tx-0\n...".
std::string sysfs_queues(const io::Netns& ns, const std::string& dev = "ofld0") {
  auto q = ns.exec({"ls", "/sys/class/net/" + dev + "/queues"});
  return q.ok() ? q.value().out : q.message();
}
std::string queue_list(unsigned n) {
  std::string rx, tx;
  for (unsigned i = 0; i < n; ++i) rx += "rx-" + std::to_string(i) + "\n", tx += "tx-" + std::to_string(i) + "\n";
  return rx + tx;
}

void check_endpoint(const io::Netns& ns, Endpoint& e, const char* name,
                    const std::string& mode = "vxlan", unsigned queues = 2) {
  // The kernel's view: a TAP with `queues` queues.
  EXPECT_EQ(sysfs_queues(ns), queue_list(queues)) << name;
  auto st = daemon::query_stats(e.ctl);
  ASSERT_TRUE(st.ok()) << st.message();
  const auto& j = st.value();
  EXPECT_EQ(j["queues"].get<unsigned>(), queues);
  if (mode == "vxlan") {
    EXPECT_EQ(j["tap"]["multi_queue"].get<bool>(), queues > 1);
  } else {
    EXPECT_EQ(j["tun"]["multi_queue"].get<bool>(), queues > 1);
  }
  if (queues == 1) {  // one worker: no per-queue breakdown
    EXPECT_FALSE(j.contains("per_queue"));
    EXPECT_EQ(stop(e.pid), 0) << slurp(e.log);
    return;
  }
  if (mode == "gre") {  // raw IP sockets all see every packet: only queue 0 receives
    EXPECT_EQ(j["per_queue"][1]["rx"]["datagrams"].get<std::uint64_t>(), 0u);
  }
  ASSERT_EQ(j["per_queue"].size(), queues);
  int rxq = check_queue_sums(j, "rx", "datagrams");
  int txq = check_queue_sums(j, "tx", "frames");
  check_queue_sums(j, "rx", "bytes");
  check_queue_sums(j, "tx", "datagrams");
  EXPECT_GE(rxq, 1);
  EXPECT_GE(txq, 1);
  std::cout << "[ info ] " << name << ": traffic received on " << rxq << " queue(s), sent from "
            << txq << " queue(s) (the kernel's flow hash decides)\n";
  EXPECT_EQ(stop(e.pid), 0) << slurp(e.log);  // SIGTERM: every worker ends, exit 0
  auto link = ns.exec({"ip", "link", "show", "ofld0"});
  EXPECT_FALSE(link.ok()) << "TAP still present after SIGTERM";
}

void run(bool kernel_peer, const std::string& mode = "vxlan", const std::string& queues = "2",
         unsigned expect_queues = 2) {
  Setup s;
  bool skipped = false;
  std::string why = setup(s, kernel_peer, skipped, mode, queues);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto [c1, s1] = transfer(*s.A, *s.B, "192.168.78.2", 11);  // A → B
  EXPECT_EQ(c1, s1) << "A -> B\n" << slurp(s.ea.log);
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(*s.B, *s.A, "192.168.78.1", 23);  // B → A
  EXPECT_EQ(c2, s2) << "B -> A\n" << slurp(s.ea.log);
  EXPECT_NE(s2, "");
  check_endpoint(*s.A, s.ea, "A", mode, expect_queues);
  if (!kernel_peer) check_endpoint(*s.B, s.eb, "B", mode, expect_queues);
}

// CPUs the endpoints may run on (they inherit this test's affinity).
unsigned allowed_cpu_count() {
  return unsigned(daemon::allowed_cpus().size());
}

TEST(TunnelQueues, TwoOfldEndpointsTwoQueuesParallelStreams) { run(false); }
TEST(TunnelQueues, OfldTwoQueuesAgainstKernelVxlan) { run(true); }
TEST(TunnelQueues, GueTwoQueuesParallelStreams) { run(false, "gue"); }
TEST(TunnelQueues, GreTwoQueuesParallelStreams) { run(false, "gre"); }

}  // namespace

// One namespace with 10.79.0.1 on its loopback (an endpoint's local address; no traffic
// leaves it): "" or why not (skipped: namespaces are not available here).
std::string one_host(std::optional<io::Netns>& ns, const char* prefix, bool& skipped) {
  skipped = false;
  if (auto s = io::netns_available(); !s.ok()) {
    skipped = true;
    return s.message();
  }
  auto n = io::Netns::create(prefix);
  if (!n.ok()) {
    skipped = n.is_skipped();
    return n.message();
  }
  ns.emplace(std::move(n.value()));
  if (auto s = ns->ip({"link", "set", "lo", "up"}); !s.ok()) return s.message();
  if (auto s = ns->ip({"addr", "add", "10.79.0.1/32", "dev", "lo"}); !s.ok()) return s.message();
  return "";
}

// The default (auto): two queues for VXLAN where two CPUs are allowed, one on one CPU; one
// for GUE, whose every flow arrives on one 4-tuple (one SO_REUSEPORT socket would take it).
TEST(TunnelQueues, DefaultAutoVxlanOpensTwoQueuesWhereTwoCpusAreAllowed) {
  const unsigned n = std::min(allowed_cpu_count(), daemon::kAutoQueuesMax);
  std::cout << "[ info ] " << allowed_cpu_count() << " CPUs allowed: expecting " << n << " queue(s)\n";
  run(false, "vxlan", "", n);
}
TEST(TunnelQueues, DefaultAutoGueOpensOneQueue) { run(false, "gue", "", 1); }

// An existing TAP (`ip tuntap add`, persistent, as an operator or a VM manager makes it): the
// default follows its kind, an explicit count that cannot fit it is refused with the reason,
// and `--queues 1` attaches to a multi-queue TAP (the kernel refuses both mismatches with
// EINVAL alone); a TUN or a veth of that name is named as what it is.
TEST(TunnelQueues, DefaultAutoFollowsAnExistingTapAndAMismatchIsNamed) {
  std::optional<io::Netns> ns;
  bool skipped = false;
  const std::string why = one_host(ns, "ofld-tqx", skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto& N = *ns;
  ASSERT_TRUE(N.ip({"tuntap", "add", "mode", "tap", "name", "single0"}).ok());
  ASSERT_TRUE(N.ip({"tuntap", "add", "mode", "tap", "name", "multi0", "multi_queue"}).ok());
  ASSERT_TRUE(N.ip({"tuntap", "add", "mode", "tun", "name", "tun0"}).ok());
  ASSERT_TRUE(N.ip({"link", "add", "veth9", "type", "veth", "peer", "name", "veth8"}).ok());
  const unsigned two = std::min(allowed_cpu_count(), daemon::kAutoQueuesMax);
  struct Case {
    std::string dev, queues;
    bool starts;
    unsigned expect;       // queues in sysfs while it runs
    std::string message;   // in the log when it does not start
  };
  for (const Case& c : std::vector<Case>{
           {"single0", "", true, 1, ""},
           {"single0", "2", false, 0, "needs a multi-queue device"},
           {"single0", "1", true, 1, ""},
           {"multi0", "", true, two, ""},
           {"multi0", "1", true, 1, ""},
           {"multi0", "2", true, 2, ""},
           // a device of the wrong kind is named (the kernel answers TUNSETIFF with EINVAL)
           {"tun0", "", false, 0, "dev tun0: exists as a TUN; vxlan needs a TAP"},
           {"veth9", "", false, 0, "dev veth9: exists and is a veth device; vxlan needs a TAP"},
       }) {
    Endpoint e;
    e.ctl = "/run/ofld/tqx-" + std::to_string(::getpid()) + ".sock";
    e.log = "/tmp/ofld-tqx-" + N.name() + ".log";
    std::vector<std::string> argv = {"--dev", c.dev, "vxlan", "id", "42", "local", "10.79.0.1", "remote", "10.79.0.2"};
    if (!c.queues.empty()) argv.insert(argv.begin(), {"--queues", c.queues});
    const std::string what = c.dev + " --queues " + (c.queues.empty() ? "(auto)" : c.queues);
    const std::string err = ktest::start_tunnel(N, e.ctl, e.log, argv, e.pid, 10);
    if (!c.starts) {
      EXPECT_NE(err, "") << what << ": started";
      EXPECT_NE(err.find(c.message), std::string::npos) << what << ": " << err;
      stop(e.pid);
      continue;
    }
    ASSERT_EQ(err, "") << what;
    EXPECT_EQ(sysfs_queues(N, c.dev), queue_list(c.expect)) << what;
    auto st = daemon::query_stats(e.ctl);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(st.value()["queues"].get<unsigned>(), c.expect) << what;
    EXPECT_EQ(st.value()["tap"]["multi_queue"].get<bool>(), c.dev == "multi0") << what;
    EXPECT_EQ(stop(e.pid), 0) << what << "\n" << slurp(e.log);
    // A persistent TAP outlives the endpoint, with its kind.
    EXPECT_TRUE(N.ip({"link", "show", c.dev}).ok()) << what;
  }
}

// A second endpoint while one runs with two queues: on the same multi-queue TAP (another
// control socket), attaching would succeed and take part of the first one's frames; on the
// same UDP port (another TAP), its SO_REUSEPORT sockets would join the first one's group and
// take part of its flows. Both are refused with the reason, and the first keeps its queues.
TEST(TunnelQueues, SecondEndpointOnTheSameTapOrPortIsRefused) {
  std::optional<io::Netns> ns;
  bool skipped = false;
  const std::string why = one_host(ns, "ofld-tq2", skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto& N = *ns;
  const unsigned n = std::min(allowed_cpu_count(), daemon::kAutoQueuesMax);
  const std::string tag = std::to_string(::getpid()) + "-" + N.name();
  auto args = [](const std::string& dev) {
    return std::vector<std::string>{"--dev", dev, "vxlan", "id", "42", "local", "10.79.0.1", "remote", "10.79.0.2"};
  };
  Endpoint first;
  first.ctl = "/run/ofld/tq2-a-" + tag + ".sock";
  first.log = "/tmp/ofld-tq2-a-" + tag + ".log";
  ASSERT_EQ(ktest::start_tunnel(N, first.ctl, first.log, args("ofld0"), first.pid, 10), "");
  ASSERT_EQ(sysfs_queues(N, "ofld0"), queue_list(n));
  struct Case {
    const char* what;
    std::string dev;
    std::string message;  // with two queues; one queue: the kernel's own refusal
  };
  for (const Case& c : std::vector<Case>{
           {"same TAP, another control socket", "ofld0", n > 1 ? "dev ofld0: in use" : "busy"},
           {"another TAP, same port", "ofld1", n > 1 ? "dstport 4789: in use by another socket" : "in use"},
       }) {
    Endpoint e;
    e.ctl = "/run/ofld/tq2-b-" + tag + ".sock";
    e.log = "/tmp/ofld-tq2-b-" + tag + ".log";
    const std::string err = ktest::start_tunnel(N, e.ctl, e.log, args(c.dev), e.pid, 10);
    stop(e.pid);
    EXPECT_NE(err.find(c.message), std::string::npos) << c.what << ": " << err;
    EXPECT_EQ(sysfs_queues(N, "ofld0"), queue_list(n)) << c.what;
    auto st = daemon::query_stats(first.ctl);
    ASSERT_TRUE(st.ok()) << c.what << ": the first endpoint: " << st.message();
    EXPECT_EQ(st.value()["queues"].get<unsigned>(), n);
  }
  EXPECT_EQ(stop(first.pid), 0) << slurp(first.log);
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  f.flush();
  return bool(f);
}

// A cgroup v1 cpu hierarchy's mount point and this thread's cgroup in it, or "" (cgroup v2
// moves whole processes only, and this test moves one thread).
std::pair<std::string, std::string> v1_cpu_cgroup() {
  std::string mount;
  std::istringstream mi(read_file("/proc/self/mountinfo"));
  for (std::string line; std::getline(mi, line);) {
    const auto dash = line.find(" - cgroup ");
    if (dash == std::string::npos) continue;
    const std::string opts = "," + line.substr(line.rfind(' ') + 1) + ",";
    if (opts.find(",cpu,") == std::string::npos) continue;
    std::istringstream f(line.substr(0, dash));
    std::string x;
    for (int i = 0; i < 5 && f >> x; ++i) mount = x;
    break;
  }
  std::istringstream cg(read_file("/proc/thread-self/cgroup"));
  for (std::string line; std::getline(cg, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string ctl = "," + line.substr(a + 1, b - a - 1) + ",";
    if (ctl.find(",cpu,") != std::string::npos) return {mount, line.substr(b + 1)};
  }
  return {"", ""};
}

}  // namespace

// `queues auto` under a cgroup CPU limit (a container's --cpus, systemd's CPUQuota=): with
// two CPUs in the affinity mask but one CPU's worth of time, one queue. The limit is the
// kernel's own cpu controller (v1 cpu.cfs_quota_us = cpu.cfs_period_us); the endpoint
// inherits it from the thread that starts it, and runs with the host's mounts (nsenter --net:
// under `ip netns exec` /sys is a new sysfs without /sys/fs/cgroup, and no limit can be read).
TEST(TunnelQueues, DefaultAutoFollowsACgroupCpuLimit) {
  if (allowed_cpu_count() < 2) GTEST_SKIP() << "one CPU allowed: auto gives one queue anyway";
  const auto [mount, own] = v1_cpu_cgroup();
  if (mount.empty() || own.empty())
    GTEST_SKIP() << "no cgroup v1 cpu hierarchy here (the v2 layouts are in the unit tests)";
  const std::string parent = mount + (own == "/" ? "" : own);
  const std::string dir = parent + "/ofld-tq-" + std::to_string(::getpid());
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
    GTEST_SKIP() << "cannot make a cpu cgroup under " << parent << ": " << std::strerror(errno);
  struct Rm {
    std::string d;
    ~Rm() { ::rmdir(d.c_str()); }
  } rm{dir};
  ASSERT_TRUE(write_file(dir + "/cpu.cfs_period_us", "100000"));
  ASSERT_TRUE(write_file(dir + "/cpu.cfs_quota_us", "100000"));
  EXPECT_EQ(daemon::cgroup_cpu_limit(), std::nullopt) << "a limit before the move";

  std::optional<io::Netns> ns;
  bool skipped = false;
  const std::string why = one_host(ns, "ofld-tqc", skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  Endpoint e;
  e.ctl = "/run/ofld/tqc-" + std::to_string(::getpid()) + ".sock";
  e.log = "/tmp/ofld-tqc-" + ns->name() + ".log";
  const std::string tid = std::to_string(::gettid());
  ASSERT_TRUE(write_file(dir + "/tasks", tid)) << "moving this thread into " << dir;
  const auto limit = daemon::cgroup_cpu_limit();
  const std::string err = ktest::start_tunnel(
      *ns, e.ctl, e.log, {"--dev", "ofld0", "vxlan", "id", "42", "local", "10.79.0.1", "remote", "10.79.0.2"},
      e.pid, 10, /*host_mounts=*/true);
  EXPECT_TRUE(write_file(parent + "/tasks", tid)) << "moving this thread back";
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 1.0);
  ASSERT_EQ(err, "");
  EXPECT_NE(read_file(dir + "/cgroup.procs").find(std::to_string(e.pid)), std::string::npos)
      << "the endpoint is not in the limited cgroup";
  EXPECT_EQ(sysfs_queues(*ns, "ofld0"), queue_list(1));
  const std::string log = slurp(e.log);
  EXPECT_NE(log.find("the cgroup allows 1.00 CPUs"), std::string::npos) << log;
  EXPECT_EQ(stop(e.pid), 0) << slurp(e.log);
}
