// The kernel tests' two-namespace set-up: namespaces A and B joined by a veth pair (`veth0` on
// both sides) with one underlay address each, and `ofld tunnel` started inside a namespace
// and waited for. One copy for the tunnel, control-socket, metrics, reload, service, peer,
// queue and TAP-write kernel tests; each test names its namespaces with a prefix of its own
// (io::Netns::create adds the pid and a counter), so that tests running at the same time on
// one machine never meet.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ofld/io/netns.hpp"

namespace ofld::ktest {

/// How make_veth_pair builds the pair.
struct VethPairOptions {
  std::string prefix;  ///< namespace name prefix, specific to the test ("ofld-tm", "svr", ...)
  std::string addr_a;  ///< A's veth0 address with its prefix length ("10.78.0.1/24")
  std::string addr_b;  ///< B's veth0 address with its prefix length
  /// IPv6 underlay addresses: added with `nodad` (usable at once, no duplicate detection).
  bool nodad = false;
  /// net.ipv6.conf.default.disable_ipv6=1 in both namespaces before the veth exists (no
  /// IPv6 link-local traffic on it: counters see only what the test sends).
  bool disable_ipv6 = false;
  /// `ethtool -K veth0 tx off` on both sides before the link is up: the kernel finishes its
  /// checksums before the veth, as a device without checksum offload does.
  bool tx_off = false;
};

/// Creates A and B (lo up in both) and the veth between them, addresses and links up.
/// Returns "" when made; otherwise the reason, with `skipped` true when namespaces cannot be
/// made here (not root, no `ip netns`): the caller then skips. A and B are set as soon as
/// they exist, so whatever was made is deleted with them.
std::string make_veth_pair(std::optional<io::Netns>& a, std::optional<io::Netns>& b,
                           const VethPairOptions& o, bool& skipped);

/// `ip netns exec NS ofld tunnel --control CTL ARGS...`, output to `log`; waits (up to
/// `wait_s` seconds) until the control socket answers `ofld stats`. Returns "" when it
/// answers; otherwise why not (the program exited: its log; or it did not come up in time).
/// `pid` is the child's pid while it runs, -1 when it has exited. `host_mounts`: started with
/// `nsenter --net` instead, which enters only the network namespace: `ip netns exec` also
/// mounts a sysfs of its own over /sys, hiding the mounts below it (/sys/fs/cgroup).
std::string start_tunnel(const io::Netns& ns, const std::string& ctl, const std::string& log,
                         const std::vector<std::string>& args, pid_t& pid, int wait_s = 5,
                         bool host_mounts = false);

/// 20 TCP round trips of 100 bytes from `from` to an echo server (python3) on `dst`, port
/// 5083, in `to`: at least 20 frames each way through whatever joins them (this machine has
/// no ping). "" or why not; the server's log goes to `logdir`/echo-srv.log.
std::string echo20(const io::Netns& from, const io::Netns& to, const std::string& dst, const std::string& logdir);

/// Namespaces A and B (make_veth_pair), a scratch directory and the processes started for a
/// test: on destruction the processes are stopped (SIGTERM) and the directory removed. Tests
/// derive their own lab from it to add what they keep (control sockets, a config file).
struct Lab {
  std::optional<io::Netns> A, B;
  std::vector<pid_t> pids;  ///< stopped by ~Lab (-1 once one has exited)
  std::string dir;          ///< scratch directory (sockets, logs, configs)
  Lab() = default;
  Lab(const Lab&) = delete;
  Lab& operator=(const Lab&) = delete;
  ~Lab();
  /// start_tunnel in `ns` with the control socket DIR/TAG.sock (its path into `ctl`) and the
  /// log DIR/TAG.log. Returns the pid (kept in `pids`), or -1 with the reason in `why`.
  pid_t start(const io::Netns& ns, const std::string& tag, const std::vector<std::string>& args,
              std::string& ctl, std::string& why);
};

/// make_veth_pair into l.A and l.B, then the scratch directory /tmp/ofld-PREFIX-XXXXXX, mode
/// 0777 when `world_writable` (control sockets of unprivileged endpoints). "" or the reason,
/// `skipped` as make_veth_pair's.
std::string make_lab(Lab& l, const VethPairOptions& o, bool& skipped, bool world_writable = false);

/// `Type l;` made by `make(l, skipped)`: the test is skipped when the lab cannot be made here
/// and fails when it could but was not.
#define KTEST_LAB_OR_SKIP(Type, l, make)    \
  Type l;                                   \
  {                                         \
    bool skipped = false;                   \
    std::string why = make(l, skipped);     \
    if (skipped) GTEST_SKIP() << why;       \
    ASSERT_EQ(why, "");                     \
  }

/// Two `ofld tunnel` endpoints across a veth pair (make_veth_pair + start_tunnel), the unit of
/// the tunnel-mode tests: what start_tunnel_pair made, stopped and removed on destruction
/// (the capture with SIGINT, the endpoints with SIGTERM; the capture file is kept when
/// OFLD_TEST_KEEP_PCAP is set).
struct TunnelPair {
  std::optional<io::Netns> A, B;
  pid_t ea = -1, eb = -1, cap = -1;          ///< endpoint in A, in B; tcpdump in A
  std::string ctl_a, ctl_b, log_a, log_b, pcap;
  TunnelPair() = default;
  TunnelPair(const TunnelPair&) = delete;
  TunnelPair& operator=(const TunnelPair&) = delete;
  ~TunnelPair();
};

/// How start_tunnel_pair builds the pair.
struct TunnelPairOptions {
  std::string prefix;  ///< namespace, socket, log and capture name prefix ("ofld-gnv")
  bool v6 = false;     ///< underlay fd00:NET::1/64 and ::2 (nodad) instead of 10.NET.0.1/24 and .2
  int net = 79;        ///< NET in the underlay addresses; the overlay is 192.168.NET.1/24 and .2
  bool tx_off = true;  ///< as VethPairOptions::tx_off (captured frames carry finished checksums)
  bool capture = true; ///< tcpdump of A's veth0 (first 3000 frames) into `pcap`, started first
  /// The tunnel words of one side from its underlay address and the other's ("geneve id 1
  /// local L remote R …"). A is started with `--dev ofld0 --address OVL` before the words,
  /// B after them (the command line takes options anywhere).
  std::function<std::vector<std::string>(const std::string& local, const std::string& remote)> words;
};

/// Builds the pair: namespaces and veth, the capture, the endpoint in A then the one in B,
/// each waited for. "" when up; otherwise why not, with `skipped` as make_veth_pair's.
std::string start_tunnel_pair(TunnelPair& p, const TunnelPairOptions& o, bool& skipped);

}  // namespace ofld::ktest
