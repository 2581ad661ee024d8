// The kernel tests' two-namespace set-up (see netns_pair.hpp).
#include "netns_pair.hpp"

#include <sys/wait.h>

#include <chrono>
#include <thread>
#include <utility>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "proc_util.hpp"

namespace ofld::ktest {

std::string make_veth_pair(std::optional<io::Netns>& a, std::optional<io::Netns>& b,
                           const VethPairOptions& o, bool& skipped) {
  skipped = false;
  if (auto s = io::netns_available(); !s.ok()) {
    skipped = true;
    return s.message();
  }
  auto na = io::Netns::create(o.prefix);
  auto nb = io::Netns::create(o.prefix);
  if (!na.ok() || !nb.ok()) {
    skipped = na.is_skipped() || nb.is_skipped();
    return na.ok() ? nb.message() : na.message();
  }
  a.emplace(std::move(na.value()));
  b.emplace(std::move(nb.value()));
  for (auto* ns : {&*a, &*b}) {
    ns->ip({"link", "set", "lo", "up"});
    if (o.disable_ipv6) ns->sysctl("net.ipv6.conf.default.disable_ipv6", "1");
  }
  if (auto s = a->ip({"link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", b->name()});
      !s.ok())
    return s.message();
  for (auto [ns, addr] : {std::pair{&*a, &o.addr_a}, std::pair{&*b, &o.addr_b}}) {
    std::vector<std::string> add = {"addr", "add", *addr, "dev", "veth0"};
    if (o.nodad) add.push_back("nodad");
    if (auto s = ns->ip(add); !s.ok()) return s.message();
    if (o.tx_off)
      if (auto s = ns->exec({"ethtool", "-K", "veth0", "tx", "off"}); !s.ok()) return s.message();
    if (auto s = ns->ip({"link", "set", "veth0", "up"}); !s.ok()) return s.message();
  }
  return "";
}

std::string start_tunnel(const io::Netns& ns, const std::string& ctl, const std::string& log,
                         const std::vector<std::string>& args, pid_t& pid, int wait_s) {
  std::vector<std::string> cmd = {"ip", "netns", "exec", ns.name(), OFLD_CLI_PATH, "tunnel", "--control", ctl};
  cmd.insert(cmd.end(), args.begin(), args.end());
  pid = spawn(cmd, log);
  for (int i = 0; i < wait_s * 20; ++i) {
    if (daemon::query_stats(ctl).ok()) return "";
    if (::waitpid(pid, nullptr, WNOHANG) == pid) {
      pid = -1;
      return "ofld tunnel exited: " + slurp(log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "ofld tunnel did not come up: " + slurp(log);
}

// 20 TCP round trips of 100 bytes from A to an echo server on B's overlay address `dst`
// (this machine has no ping): at least 20 frames each way through the endpoints. "" or why not.
std::string echo20(const io::Netns& from, const io::Netns& to, const std::string& dst, const std::string& logdir) {
  const std::string srv_py =
      "import socket\n"
      "s=socket.socket();s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
      "s.bind(('" + dst + "',5083));s.listen(1);s.settimeout(20)\n"
      "c,_=s.accept();c.settimeout(20)\n"
      "while True:\n"
      "  d=c.recv(100)\n"
      "  if not d: break\n"
      "  c.sendall(d)\n";
  const std::string cli_py =
      "import socket,time\n"
      "for i in range(100):\n"
      "  try:\n"
      "    s=socket.create_connection(('" + dst + "',5083),timeout=20);break\n"
      "  except OSError: time.sleep(0.1)\n"
      "s.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
      "for i in range(20):\n"
      "  s.sendall(b'x'*100);n=0\n"
      "  while n<100: n+=len(s.recv(100))\n"
      "s.close();print('ok')\n";
  pid_t srv = spawn({"ip", "netns", "exec", to.name(), "python3", "-c", srv_py}, logdir + "/echo-srv.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto c = from.exec({"python3", "-c", cli_py}, std::chrono::seconds(30));
  stop(srv);
  if (!c.ok()) return c.message();
  if (c.value().out != "ok\n") return "echo client: " + c.value().out + c.value().err;
  return "";
}

}  // namespace ofld::ktest
