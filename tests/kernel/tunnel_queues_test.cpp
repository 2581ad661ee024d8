// `ofld tunnel --queues 2` (root; own namespaces and addresses only; skipped otherwise): a
// multi-queue TAP (IFF_MULTI_QUEUE) with one worker per queue, each with its own UDP socket
// in the SO_REUSEPORT group of the VXLAN port. Two ofld endpoints, and ofld against the
// kernel VXLAN device, carry several parallel TCP streams each way; every stream's bytes are
// compared by SHA-256 at both ends. The kernel's own view is checked too: the TAP has two
// queues in sysfs (rx-0, rx-1, tx-0, tx-1), SIGTERM ends all workers with exit 0, and the
// TAP is gone afterwards. Which flow lands on which queue is the kernel's hash (not
// guaranteed to spread a given set of flows), so the per-queue counters are only checked to
// add up to the totals; the spread is printed.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

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
std::string start_ofld(const io::Netns& ns, Endpoint& e, const std::string& local,
                       const std::string& remote, const std::string& ovl, bool scatter,
                       const std::string& mode = "vxlan") {
  e.scatter = scatter;
  e.ctl = "/run/ofld/tq-" + std::to_string(::getpid()) + "-" + ns.name() + ".sock";
  e.log = "/tmp/ofld-tq-" + ns.name() + ".log";
  std::vector<std::string> argv = {"--queues", "2", "--dev", "ofld0", "--address", ovl};
  if (mode == "vxlan") argv.insert(argv.end(), {"vxlan", "id", "42", "local", local, "remote", remote, "udpcsum"});
  else if (mode == "gue") argv.insert(argv.end(), {"gue", "local", local, "remote", remote, "port", "5555"});
  else argv.insert(argv.end(), {"gre", "local", local, "remote", remote, "key", "42", "csum"});
  return ktest::start_tunnel(ns, e.ctl, e.log, argv, e.pid);
}

// A and B joined by a veth (10.78.0.1/.2); ofld with two queues in A; in B a second ofld
// (kernel_peer false) or the kernel VXLAN device. Overlay 192.168.78.1 (A) / .2 (B).
std::string setup(Setup& s, bool kernel_peer, bool& skipped, const std::string& mode = "vxlan") {
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
  } else if (auto e = start_ofld(B, s.eb, "10.78.0.2", "10.78.0.1", "192.168.78.2/24", true, mode); !e.empty()) {
    return e;
  }
  return start_ofld(A, s.ea, "10.78.0.1", "10.78.0.2", "192.168.78.1/24", kernel_peer, mode);
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

void check_endpoint(const io::Netns& ns, Endpoint& e, const char* name,
                    const std::string& mode = "vxlan") {
  // The kernel's view: a TAP with two queues.
  auto q = ns.exec({"ls", "/sys/class/net/ofld0/queues"});
  ASSERT_TRUE(q.ok()) << q.message();
  EXPECT_EQ(q.value().out, "rx-0\nrx-1\ntx-0\ntx-1\n") << name;
  auto st = daemon::query_stats(e.ctl);
  ASSERT_TRUE(st.ok()) << st.message();
  const auto& j = st.value();
  EXPECT_EQ(j["queues"].get<unsigned>(), 2u);
  if (mode == "vxlan") {
    EXPECT_TRUE(j["tap"]["multi_queue"].get<bool>());
  } else {
    EXPECT_TRUE(j["tun"]["multi_queue"].get<bool>());
  }
  if (mode == "gre") {  // raw IP sockets all see every packet: only queue 0 receives
    EXPECT_EQ(j["per_queue"][1]["rx"]["datagrams"].get<std::uint64_t>(), 0u);
  }
  ASSERT_EQ(j["per_queue"].size(), 2u);
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

void run(bool kernel_peer, const std::string& mode = "vxlan") {
  Setup s;
  bool skipped = false;
  std::string why = setup(s, kernel_peer, skipped, mode);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto [c1, s1] = transfer(*s.A, *s.B, "192.168.78.2", 11);  // A → B
  EXPECT_EQ(c1, s1) << "A -> B\n" << slurp(s.ea.log);
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(*s.B, *s.A, "192.168.78.1", 23);  // B → A
  EXPECT_EQ(c2, s2) << "B -> A\n" << slurp(s.ea.log);
  EXPECT_NE(s2, "");
  check_endpoint(*s.A, s.ea, "A", mode);
  if (!kernel_peer) check_endpoint(*s.B, s.eb, "B", mode);
}

TEST(TunnelQueues, TwoOfldEndpointsTwoQueuesParallelStreams) { run(false); }
TEST(TunnelQueues, OfldTwoQueuesAgainstKernelVxlan) { run(true); }
TEST(TunnelQueues, GueTwoQueuesParallelStreams) { run(false, "gue"); }
TEST(TunnelQueues, GreTwoQueuesParallelStreams) { run(false, "gre"); }

}  // namespace
