// Interoperability of `ofld tunnel geneve` with Open vSwitch's userspace Geneve port (root;
// own namespaces "ofld-gnvovs*"; skipped when ovs-vswitchd, ovsdb-server or tshark is missing).
// Namespace A runs ofld (TAP ofld0, 192.168.81.1) over a veth; namespace B runs ovsdb-server
// and ovs-vswitchd with the userspace datapath only (--disable-system): bridge br-phy holds
// the veth and the underlay address (IPv4 or IPv6), bridge br-int a Geneve port (remote_ip, key 42,
// csum=true) and the overlay address 192.168.81.2 on its internal port. A TCP transfer each
// way, SHA-256 compared; then tshark on a capture of the underlay in A: every Geneve datagram
// (both directions) is version 0 with VNI 42, a good outer UDP checksum and a good inner TCP
// checksum, and ofld's carry the configured options. Non-critical options, which OVS skips
// (RFC 8926 §3.5.1), on and off (GN-1, GN-9, GN-12).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "proc_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;


/// The OVS daemons of namespace B, stopped by their pids.
struct Ovs {
  std::string dir;
  ~Ovs() {
    for (const char* f : {"/vsd.pid", "/ovsdb.pid"}) {
      std::ifstream in(dir + f);
      pid_t pid = 0;
      if (in >> pid && pid > 0) ::kill(pid, SIGTERM);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
  }
};

std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to, const std::string& dst,
                                             int seed) {
  return ktest::hashed_transfer(from, to, dst, {.mib = 4, .seed = seed});
}

void run_ovs(bool v6, const std::vector<std::string>& ofld_options, const std::string& want_options) {
  const std::string ua = v6 ? "fd00:81::1" : "10.81.0.1", ub = v6 ? "fd00:81::2" : "10.81.0.2",
                    pl = v6 ? "/64" : "/24";
  for (const char* tool : {"ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-vsctl", "tshark", "tcpdump"})
    if (!io::check_command({"sh", "-c", std::string("command -v ") + tool}).ok())
      GTEST_SKIP() << tool << " not installed";
  const std::string schema = "/usr/share/openvswitch/vswitch.ovsschema";
  if (::access(schema.c_str(), R_OK) != 0) GTEST_SKIP() << schema << " missing";
  if (auto s = io::netns_available(); !s.ok()) GTEST_SKIP() << s.message();
  auto a = io::Netns::create("ofld-gnvovs");
  auto b = io::Netns::create("ofld-gnvovs");
  if (!a.ok() || !b.ok()) GTEST_SKIP() << (a.ok() ? b.message() : a.message());
  io::Netns A = std::move(a.value()), B = std::move(b.value());
  const std::string tag = std::to_string(::getpid()) + "-" + A.name();
  Ovs ovs;
  ovs.dir = "/tmp/ofld-gnvovs-" + tag;
  const std::string& D = ovs.dir;
  ASSERT_EQ(std::system(("mkdir -p '" + D + "'").c_str()), 0);
  auto ok = [](const io::Status& s) { return s.ok() ? std::string() : s.message(); };
  auto run = [](const io::Netns& ns, const std::vector<std::string>& argv) {
    auto r = ns.exec(argv, std::chrono::seconds(30));
    return r.ok() ? std::string() : r.message();
  };
  for (auto* ns : {&A, &B}) ASSERT_EQ(ok(ns->ip({"link", "set", "lo", "up"})), "");
  ASSERT_EQ(ok(A.ip({"link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", B.name()})), "");
  std::vector<std::string> addr_a = {"addr", "add", ua + pl, "dev", "veth0"};
  if (v6) addr_a.push_back("nodad");
  ASSERT_EQ(ok(A.ip(addr_a)), "");
  for (auto* ns : {&A, &B}) {
    ASSERT_EQ(run(*ns, {"ethtool", "-K", "veth0", "tx", "off"}), "");
    ASSERT_EQ(ok(ns->ip({"link", "set", "veth0", "up"})), "");
  }
  // OVS in B: its own database and run directory, the userspace datapath only.
  const std::string db = "unix:" + D + "/db.sock";
  ASSERT_EQ(run(B, {"ovsdb-tool", "create", D + "/conf.db", schema}), "");
  ASSERT_EQ(run(B, {"ovsdb-server", D + "/conf.db", "--remote=punix:" + D + "/db.sock", "--pidfile=" + D + "/ovsdb.pid",
                    "--unixctl=" + D + "/ovsdb.ctl", "--detach", "--log-file=" + D + "/ovsdb.log"}),
            "");
  auto vsctl = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"ovs-vsctl", "--timeout=20", "--db=" + db});
    return run(B, args);
  };
  ASSERT_EQ(vsctl({"--no-wait", "init"}), "");
  ASSERT_EQ(run(B, {"env", "OVS_RUNDIR=" + D, "ovs-vswitchd", db, "--pidfile=" + D + "/vsd.pid",
                    "--unixctl=" + D + "/vsd.ctl", "--detach", "--log-file=" + D + "/vsd.log", "--disable-system"}),
            "");
  ASSERT_EQ(vsctl({"add-br", "br-phy", "--", "set", "bridge", "br-phy", "datapath_type=netdev"}), "");
  ASSERT_EQ(vsctl({"add-port", "br-phy", "veth0"}), "");
  std::vector<std::string> addr_b = {"addr", "add", ub + pl, "dev", "br-phy"};
  if (v6) addr_b.push_back("nodad");
  ASSERT_EQ(ok(B.ip(addr_b)), "");
  ASSERT_EQ(ok(B.ip({"link", "set", "br-phy", "up"})), "");
  ASSERT_EQ(vsctl({"add-br", "br-int", "--", "set", "bridge", "br-int", "datapath_type=netdev"}), "");
  ASSERT_EQ(vsctl({"add-port", "br-int", "gnv0", "--", "set", "interface", "gnv0", "type=geneve",
                   "options:remote_ip=" + ua, "options:key=42", "options:csum=true"}),
            "");
  ASSERT_EQ(ok(B.ip({"addr", "add", "192.168.81.2/24", "dev", "br-int"})), "");
  ASSERT_EQ(ok(B.ip({"link", "set", "br-int", "up"})), "");
  run(B, {"ethtool", "-K", "br-int", "tx", "off"});  // the internal port: finished checksums
  // ofld in A, the underlay captured there.
  const std::string ctl = "/run/ofld/gnvovs-" + tag + ".sock", log = "/tmp/ofld-gnvovs-" + tag + ".log",
                    pcap = "/tmp/ofld-gnvovs-" + tag + ".pcap";
  std::vector<std::string> cmd = {"ip", "netns", "exec", A.name(), OFLD_CLI_PATH, "tunnel", "--dev", "ofld0",
                                  "--address", "192.168.81.1/24", "--control", ctl, "geneve", "id", "42",
                                  "local", ua, "remote", ub};
  cmd.insert(cmd.end(), ofld_options.begin(), ofld_options.end());
  pid_t cap = spawn({"ip", "netns", "exec", A.name(), "tcpdump", "-i", "veth0", "-n", "-U", "-c", "3000", "-w", pcap},
                    "/dev/null");
  pid_t ep = spawn(cmd, log);
  bool up = false;
  for (int i = 0; i < 100 && !up; ++i) {
    up = daemon::query_stats(ctl).ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(up) << slurp(log);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto [c1, s1] = transfer(A, B, "192.168.81.2", 7);
  EXPECT_EQ(c1, s1) << "ofld -> OVS; ovs log:\n" << slurp(D + "/vsd.log");
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(B, A, "192.168.81.1", 11);
  EXPECT_EQ(c2, s2) << "OVS -> ofld";
  EXPECT_NE(s2, "");
  auto st = daemon::query_stats(ctl);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(st.value()["drops_total"].get<std::uint64_t>(), 0u) << st.value().dump();
  EXPECT_GT(st.value()["rx"]["gro_aggregates"].get<std::uint64_t>(), 0u);
  stop(cap, SIGINT);
  EXPECT_EQ(stop(ep), 0) << slurp(log);
  ::unlink(log.c_str());
  // tshark: every Geneve datagram of either side (not the ICMP errors quoting one: a
  // datagram OVS floods before ofld's socket is open draws a port unreachable: ICMP, or an
  // ICMPv6 error, types 1..127 (RFC 4443 §2.1); the MLD reports inside Geneve stay)
  auto r = io::run_command({"tshark", "-n", "-r", pcap, "-o", "udp.check_checksum:TRUE", "-o",
                            "tcp.check_checksum:TRUE", "-Y", "udp.port == 6081 && !icmp && !(icmpv6.type < 128)", "-T", "fields", "-e",
                            v6 ? "ipv6.src" : "ip.src", "-e", "geneve.version", "-e", "geneve.vni", "-e", "geneve.options",
                            "-e", "udp.checksum.status", "-e", "tcp.checksum.status", "-e", "tcp.checksum",
                            "-e", "tcp.checksum_calculated"},
                           std::chrono::seconds(60));
  ASSERT_TRUE(r.ok()) << r.message();
  std::istringstream in(r.value().out);
  std::size_t from_ofld = 0, from_ovs = 0, hello = 0, tcp = 0;
  std::string bad;
  for (std::string l; std::getline(in, l);) {
    std::istringstream f(l);
    std::string src, ver, vni, opts, udp, t, field, calc;
    for (auto* s : {&src, &ver, &vni, &opts, &udp, &t, &field, &calc}) std::getline(f, *s, '\t');
    src = src.substr(0, src.find(','));  // the outer source
    if (ver == "1" && vni == "0x000000" && udp == "1" && src == ua) {
      ++hello;  // ofld's peer-session HELLO (version 1), which OVS drops unanswered
      continue;
    }
    // tshark calls a TCP 0xFFFF "bad" with calculated 0x0000: the same value (C-14/C-29)
    const bool tcp_ok = t.empty() || t == "1" || (t == "0" && field == "0xffff" && calc == "0x0000");
    const bool ours = src == ua;
    const bool good = ver == "0" && vni == "0x00002a" && udp == "1" && tcp_ok &&
                      (!ours || opts == want_options);
    from_ofld += ours, from_ovs += !ours, tcp += !t.empty();
    if (!good) bad += l + "\n";
  }
  EXPECT_EQ(bad, "") << "capture " << pcap;
  if (bad.empty()) ::unlink(pcap.c_str());
  EXPECT_GT(from_ofld, 100u);
  EXPECT_GT(from_ovs, 100u);
  EXPECT_GT(tcp, 200u);
  EXPECT_LT(hello, 50u);
}

}  // namespace

TEST(TunnelGeneveOvs, GN9_GN12_TcpBothWaysIpv4) { run_ovs(false, {}, ""); }
TEST(TunnelGeneveOvs, GN9_GN12_TcpBothWaysIpv6) { run_ovs(true, {}, ""); }
TEST(TunnelGeneveOvs, GN1_GN12_TcpBothWaysIpv6WithOptions) {
  run_ovs(true, {"options", "0102:01:00c0ffee"}, "0102010100c0ffee");
}
TEST(TunnelGeneveOvs, GN1_GN12_TcpBothWaysIpv4WithOptions) {
  run_ovs(false, {"options", "0102:01:00c0ffee,ffff:02:0000000100000002"}, "0102010100c0ffeeffff02020000000100000002");
}
