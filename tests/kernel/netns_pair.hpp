// The kernel tests' two-namespace set-up: namespaces A and B joined by a veth pair (`veth0` on
// both sides) with one underlay address each, and `ofld tunnel` started inside a namespace
// and waited for. One copy for the tunnel, control-socket, metrics, reload, service, peer,
// queue and TAP-write kernel tests; each test names its namespaces with a prefix of its own
// (io::Netns::create adds the pid and a counter), so that tests running at the same time on
// one machine never meet.
#pragma once

#include <sys/types.h>

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
/// `pid` is the child's pid while it runs, -1 when it has exited.
std::string start_tunnel(const io::Netns& ns, const std::string& ctl, const std::string& log,
                         const std::vector<std::string>& args, pid_t& pid, int wait_s = 5);

/// 20 TCP round trips of 100 bytes from `from` to an echo server (python3) on `dst`, port
/// 5083, in `to`: at least 20 frames each way through whatever joins them (this machine has
/// no ping). "" or why not; the server's log goes to `logdir`/echo-srv.log.
std::string echo20(const io::Netns& from, const io::Netns& to, const std::string& dst, const std::string& logdir);

}  // namespace ofld::ktest
