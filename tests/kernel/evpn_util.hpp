// BGP EVPN test helpers (docs/evpn.md): hosts (namespaces) on one bridged underlay (the bridge in its own
// namespace, default settings), each with an `ofld tunnel` (VXLAN or Geneve id 42, no remotes unless
// given) and optionally gobgpd; ping through the overlay; `ofld fdb --json` of a host.
// Addresses: underlay 10.88.0.(i+1)/24 on veth0, overlay 192.168.88.(i+1)/24.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ofld/daemon/config.hpp"
#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "proc_util.hpp"

namespace ofld::evpntest {

inline std::string icmp_echo_py(const std::string& dst) {
  return "import socket,struct,select\n"
         "def ck(b):\n"
         "  s=sum(struct.unpack('!%dH'%(len(b)//2),b));s=(s>>16)+(s&0xffff);s+=s>>16;return ~s&0xffff\n"
         "p=struct.pack('!BBHHH',8,0,0,0x77,1)+b'ofld'*8\n"
         "p=p[:2]+struct.pack('!H',ck(p))+p[4:]\n"
         "s=socket.socket(socket.AF_INET,socket.SOCK_RAW,socket.IPPROTO_ICMP)\n"
         "ok=False\n"
         "for i in range(20):\n"
         "  s.sendto(p,('" + dst + "',0))\n"
         "  if select.select([s],[],[],0.5)[0]:\n"
         "    d,a=s.recvfrom(2000)\n"
         "    if a[0]=='" + dst + "' and d[20]==0: ok=True;break\n"
         "print('reply' if ok else 'none')\n";
}

/// "reply" when an ICMP echo from `ns` to `dst` was answered within ~10 s, else "none" or an error.
inline std::string ping(const io::Netns& ns, const std::string& dst) {
  auto r = ns.exec({"python3", "-c", icmp_echo_py(dst)}, std::chrono::seconds(20));
  if (!r.ok()) return "error: " + r.message();
  std::string o = r.value().out;
  while (!o.empty() && o.back() == '\n') o.pop_back();
  return o;
}

struct Underlay {
  std::optional<io::Netns> U;            // the bridge
  std::vector<std::optional<io::Netns>> H;
  std::vector<pid_t> ofld, bgp;
  std::vector<std::string> ctls, logs_, bgplogs;

  ~Underlay() {
    for (auto& p : ofld) ktest::stop(p);
    for (auto& p : bgp) ktest::stop(p);
    for (auto& c : ctls) ::unlink(c.c_str());
  }
  io::Netns& host(int i) { return *H[std::size_t(i)]; }
  std::string underlay_addr(int i) const { return "10.88.0." + std::to_string(i + 1); }
  std::string overlay_addr(int i) const { return "192.168.88." + std::to_string(i + 1); }
  const std::string& ctl(int i) const { return ctls[std::size_t(i)]; }

  bool create(int n, bool& skipped, std::string& why) {
    skipped = false;
    if (auto s = io::netns_available(); !s.ok()) {
      skipped = true;
      why = s.message();
      return false;
    }
    auto u = io::Netns::create("ofld-ev");
    if (!u.ok()) {
      skipped = u.is_skipped();
      why = u.message();
      return false;
    }
    U.emplace(std::move(u.value()));
    U->ip({"link", "set", "lo", "up"});
    if (auto s = U->ip({"link", "add", "br0", "type", "bridge"}); !s.ok()) return why = s.message(), false;
    U->ip({"link", "set", "br0", "up"});
    for (int i = 0; i < n; ++i) {
      auto h = io::Netns::create("ofld-ev");
      if (!h.ok()) return why = h.message(), false;
      H.emplace_back(std::move(h.value()));
      auto& N = host(i);
      N.ip({"link", "set", "lo", "up"});
      const std::string port = "vh" + std::to_string(i);
      if (auto s = U->ip({"link", "add", port, "type", "veth", "peer", "name", "veth0", "netns", N.name()}); !s.ok())
        return why = s.message(), false;
      U->ip({"link", "set", port, "master", "br0"});
      U->ip({"link", "set", port, "up"});
      if (auto s = N.ip({"addr", "add", underlay_addr(i) + "/24", "dev", "veth0"}); !s.ok()) return why = s.message(), false;
      N.ip({"link", "set", "veth0", "up"});
      ofld.push_back(-1);
      bgp.push_back(-1);
      ctls.push_back("/run/ofld/ev-" + std::to_string(::getpid()) + "-" + N.name() + ".sock");
      logs_.push_back("/tmp/ofld-ev-" + N.name() + ".log");
      bgplogs.push_back("/tmp/ofld-ev-bgp-" + N.name() + ".log");
    }
    return true;
  }

  /// Start `ofld tunnel` on host i with `extra` words after `vxlan id 42 local ADDR`; waits
  /// for its control socket. "" or the reason.
  std::string start_ofld(int i, const std::vector<std::string>& extra) { return start_ofld_as(i, "vxlan", extra); }
  /// start_ofld with another Ethernet encapsulation (`mode`: vxlan or geneve).
  std::string start_ofld_as(int i, const std::string& mode, const std::vector<std::string>& extra) {
    std::vector<std::string> cmd = {"ip", "netns", "exec", host(i).name(), OFLD_CLI_PATH, "tunnel",
                                    "--dev", "ofld0", "--address", overlay_addr(i) + "/24",
                                    "--control", ctl(i), mode, "id", "42", "local", underlay_addr(i)};
    cmd.insert(cmd.end(), extra.begin(), extra.end());
    auto& pid = ofld[std::size_t(i)];
    pid = ktest::spawn(cmd, logs_[std::size_t(i)]);
    for (int k = 0; k < 100; ++k) {
      if (daemon::query_stats(ctl(i)).ok()) return "";
      if (::waitpid(pid, nullptr, WNOHANG) == pid) {
        pid = -1;
        return "ofld tunnel exited: " + ktest::slurp(logs_[std::size_t(i)]);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return "ofld tunnel did not come up: " + ktest::slurp(logs_[std::size_t(i)]);
  }
  int stop_ofld(int i) { return ktest::stop(ofld[std::size_t(i)]); }

  /// gobgpd on host i: AS 65000, iBGP full mesh with every other of the n hosts, l2vpn-evpn,
  /// short timers (connect-retry 1 s, hold 9 s); gRPC on 127.0.0.1:50051 of its namespace.
  std::string start_gobgpd(int i, int n) {
    const std::string conf = "/tmp/ofld-ev-gobgpd-" + host(i).name() + ".toml";
    std::string t = "[global.config]\n  as = 65000\n  router-id = \"" + underlay_addr(i) + "\"\n"
                    "  local-address-list = [\"" + underlay_addr(i) + "\"]\n";
    for (int o = 0; o < n; ++o) {
      if (o == i) continue;
      t += "[[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"" + underlay_addr(o) +
           "\"\n    peer-as = 65000\n  [neighbors.timers.config]\n    connect-retry = 1\n"
           "    hold-time = 9\n    keepalive-interval = 3\n  [neighbors.transport.config]\n"
           "    local-address = \"" + underlay_addr(i) + "\"\n  [[neighbors.afi-safis]]\n"
           "    [neighbors.afi-safis.config]\n      afi-safi-name = \"l2vpn-evpn\"\n";
    }
    FILE* f = std::fopen(conf.c_str(), "w");
    if (!f) return "cannot write " + conf;
    std::fputs(t.c_str(), f);
    std::fclose(f);
    bgp[std::size_t(i)] = ktest::spawn({"ip", "netns", "exec", host(i).name(), "gobgpd", "-f", conf,
                                        "-p", "--api-hosts", "127.0.0.1:50051", "--pprof-disable"},
                                       bgplogs[std::size_t(i)]);
    return "";
  }
  int stop_gobgpd(int i, int sig = SIGTERM) { return ktest::stop(bgp[std::size_t(i)], sig); }
  std::string bgplog(int i) const { return ktest::slurp(bgplogs[std::size_t(i)]); }
  std::string log(int i) const { return ktest::slurp(logs_[std::size_t(i)]); }

  std::string logs() const {
    std::string s;
    for (std::size_t i = 0; i < logs_.size(); ++i)
      s += "--- ofld " + std::to_string(i) + ":\n" + ktest::slurp(logs_[i]);
    for (std::size_t i = 0; i < bgplogs.size(); ++i)
      if (bgp[i] > 0) s += "--- gobgpd " + std::to_string(i) + " (tail):\n" + tail(ktest::slurp(bgplogs[i]));
    return s;
  }
  static std::string tail(const std::string& s) { return s.size() > 2000 ? s.substr(s.size() - 2000) : s; }
};

/// `ofld fdb --json` of host i (the CLI), parsed; {"error": ...} when it failed.
inline nlohmann::json fdb_json(Underlay& u, int i) {
  auto r = io::run_command({OFLD_CLI_PATH, "fdb", "--json", "--control", u.ctl(i)});
  if (!r.ok()) return nlohmann::json{{"error", r.message()}};
  auto j = nlohmann::json::parse(r.value().out, nullptr, false);
  if (j.is_discarded()) return nlohmann::json{{"error", "not JSON: " + r.value().out}};
  return j;
}

using ktest::wait_for;

/// Create `u` with `hosts` hosts, or end the current test: skipped when the machine cannot
/// (no privileges, a tool missing), failed otherwise. In a TEST body:
///   ASSERT_NO_FATAL_FAILURE(create_underlay(u, 3));
///   if (IsSkipped()) return;
inline void create_underlay(Underlay& u, int hosts) {
  std::string why;
  bool skipped = false;
  if (u.create(hosts, skipped, why)) return;
  if (skipped) GTEST_SKIP() << why;
  FAIL() << why;
}

/// Host i's flood list as "remote/source" strings (`ofld fdb --json`'s "flood").
inline std::set<std::string> flood(Underlay& u, int i) {
  std::set<std::string> r;
  auto f = fdb_json(u, i);
  if (f.contains("flood"))
    for (const auto& e : f["flood"]) r.insert(e["remote"].get<std::string>() + "/" + e["source"].get<std::string>());
  return r;
}

}  // namespace ofld::evpntest
