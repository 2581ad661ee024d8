// The kernel tests' two-namespace set-up (see netns_pair.hpp).
#include "netns_pair.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
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
                         const std::vector<std::string>& args, pid_t& pid, int wait_s,
                         bool host_mounts) {
  std::vector<std::string> cmd = {"ip", "netns", "exec", ns.name()};
  if (host_mounts) cmd = {"nsenter", "--net=/run/netns/" + ns.name()};
  cmd.insert(cmd.end(), {OFLD_CLI_PATH, "tunnel", "--control", ctl});
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

Lab::~Lab() {
  for (auto& p : pids) stop(p);
  if (!dir.empty()) io::run_command({"rm", "-rf", dir});
}

pid_t Lab::start(const io::Netns& ns, const std::string& tag, const std::vector<std::string>& args,
                 std::string& ctl, std::string& why) {
  ctl = dir + "/" + tag + ".sock";
  pid_t pid = -1;
  why = start_tunnel(ns, ctl, dir + "/" + tag + ".log", args, pid);
  pids.push_back(pid);
  return why.empty() ? pid : -1;
}

std::string make_lab(Lab& l, const VethPairOptions& o, bool& skipped, bool world_writable) {
  if (auto why = make_veth_pair(l.A, l.B, o, skipped); !why.empty()) return why;
  std::string tmpl = "/tmp/ofld-" + o.prefix + "-XXXXXX";
  if (!::mkdtemp(tmpl.data())) return "mkdtemp failed";
  l.dir = tmpl;
  if (world_writable) ::chmod(l.dir.c_str(), 0777);
  return "";
}

TunnelPair::~TunnelPair() {
  stop(cap, SIGINT);
  stop(ea);
  stop(eb);
  if (!pcap.empty() && !std::getenv("OFLD_TEST_KEEP_PCAP")) ::unlink(pcap.c_str());
  for (const auto* l : {&log_a, &log_b})
    if (!l->empty()) ::unlink(l->c_str());
}

std::string start_tunnel_pair(TunnelPair& p, const TunnelPairOptions& o, bool& skipped) {
  const std::string net = std::to_string(o.net);
  const std::string ua = o.v6 ? "fd00:" + net + "::1" : "10." + net + ".0.1";
  const std::string ub = o.v6 ? "fd00:" + net + "::2" : "10." + net + ".0.2";
  const std::string pl = o.v6 ? "/64" : "/24";
  if (auto why = make_veth_pair(
          p.A, p.B, {.prefix = o.prefix, .addr_a = ua + pl, .addr_b = ub + pl, .nodad = o.v6, .tx_off = o.tx_off},
          skipped);
      !why.empty())
    return why;
  const std::string tag = o.prefix + "-" + std::to_string(::getpid()) + "-" + p.A->name();
  p.ctl_a = "/run/ofld/" + tag + "-a.sock";
  p.ctl_b = "/run/ofld/" + tag + "-b.sock";
  p.log_a = "/tmp/" + tag + "-a.log";
  p.log_b = "/tmp/" + tag + "-b.log";
  std::vector<std::string> wa = {"--dev", "ofld0", "--address", "192.168." + net + ".1/24"};
  for (auto& w : o.words(ua, ub)) wa.push_back(w);
  auto wb = o.words(ub, ua);
  wb.insert(wb.end(), {"--dev", "ofld0", "--address", "192.168." + net + ".2/24"});
  if (o.capture) {
    p.pcap = "/tmp/" + tag + ".pcap";
    p.cap = spawn({"ip", "netns", "exec", p.A->name(), "tcpdump", "-i", "veth0", "-n", "-U", "-c", "3000",
                   "-w", p.pcap},
                  "/dev/null");
  }
  if (auto e = start_tunnel(*p.A, p.ctl_a, p.log_a, wa, p.ea); !e.empty()) return e;
  if (auto e = start_tunnel(*p.B, p.ctl_b, p.log_b, wb, p.eb); !e.empty()) return e;
  if (o.capture) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // tcpdump up
  return "";
}

}  // namespace ofld::ktest
