// BGP EVPN interop with the reference: one host runs FRR (zebra + bgpd, `advertise-all-vni`)
// with the kernel VXLAN device in a bridge and a VM (namespace) behind it; two hosts run
// gobgpd + `ofld tunnel ... evpn`; all on one bridged underlay, iBGP full mesh (AS 65000).
// Expected (RFC 7432 / RFC 8365, and what FRR does with the kernel): FRR's type-2 route for
// the VM's MAC and its type-3 route reach ofld (evpn FDB entry, flood member 10.88.0.3);
// ofld's type-2/type-3 routes reach FRR, which installs them in the kernel VXLAN device's
// FDB (`bridge fdb`: MAC dst VTEP extern_learn; 00:00:00:00:00:00 dst VTEP, the flood list).
// Traffic both ways: ping and TCP checked by SHA-256. Root, gobgpd, FRR and an EVPN-enabled
// build needed; skipped otherwise.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "evpn_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using namespace ofld::evpntest;

/// Polls of gobgpd / FRR state: every 100 ms.
constexpr std::chrono::milliseconds kSlowPoll{100};

const char* kZebra = "/usr/lib/frr/zebra";
const char* kBgpd = "/usr/lib/frr/bgpd";


std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to, const std::string& dst,
                                             int mb) {
  return ktest::hashed_transfer(from, to, dst, {.mib = mb, .seed = 18, .timeout_s = 40});
}

/// zebra + bgpd started in a namespace (daemonised; stopped by the pids they wrote).
struct Frr {
  std::string dir;
  ~Frr() {
    for (const char* d : {"bgpd", "zebra"}) {
      std::ifstream f(dir + "/" + d + ".pid");
      pid_t p = 0;
      if (f >> p && p > 0) ::kill(p, SIGTERM);
    }
  }
  std::string log() const { return ktest::slurp(dir + "/bgpd.log") + ktest::slurp(dir + "/zebra.log"); }
};

TEST(EvpnFrr, FrrInteropKernelVxlanAdvertiseAllVni) {
  if (!io::run_command({"gobgpd", "--version"}).ok()) GTEST_SKIP() << "gobgpd not installed (scripts/deps.sh)";
  if (::access(kZebra, X_OK) != 0 || ::access(kBgpd, X_OK) != 0) GTEST_SKIP() << "FRR not installed (scripts/deps.sh)";
  Underlay u;
  ASSERT_NO_FATAL_FAILURE(create_underlay(u, 3));
  if (IsSkipped()) return;
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(u.start_gobgpd(i, 3), "");
    auto e = u.start_ofld(i, {"evpn"});
    if (e.find("built without the gRPC client") != std::string::npos) GTEST_SKIP() << e;
    ASSERT_EQ(e, "") << e;
  }
  // host 2: bridge + kernel VXLAN (id 42, nolearning: FRR programs it) + a VM behind it
  auto& K = u.host(2);
  for (std::vector<std::string> c : std::vector<std::vector<std::string>>{
           {"link", "add", "br42", "type", "bridge"},
           {"link", "set", "br42", "up"},
           {"link", "add", "vxlan42", "type", "vxlan", "id", "42", "local", u.underlay_addr(2), "dstport", "4789", "nolearning"},
           {"link", "set", "vxlan42", "master", "br42"},
           {"link", "set", "vxlan42", "mtu", "1450"},
           {"link", "set", "vxlan42", "up"}})
    ASSERT_TRUE(K.ip(c).ok()) << c[1] << " " << c[2];
  auto vmr = io::Netns::create("ofld-ev");
  ASSERT_TRUE(vmr.ok()) << vmr.message();
  auto& vm = vmr.value();
  ASSERT_TRUE(K.ip({"link", "add", "vmp", "type", "veth", "peer", "name", "eth0", "netns", vm.name()}).ok());
  ASSERT_TRUE(K.ip({"link", "set", "vmp", "master", "br42"}).ok());
  K.ip({"link", "set", "vmp", "mtu", "1450"});
  K.ip({"link", "set", "vmp", "up"});
  vm.ip({"link", "set", "lo", "up"});
  vm.ip({"link", "set", "eth0", "mtu", "1450"});
  ASSERT_TRUE(vm.ip({"addr", "add", "192.168.88.3/24", "dev", "eth0"}).ok());
  vm.ip({"link", "set", "eth0", "up"});

  Frr frr;
  frr.dir = "/tmp/ofld-evf-" + K.name();
  ::mkdir(frr.dir.c_str(), 0777);
  ::chmod(frr.dir.c_str(), 0777);  // the daemons run as user frr
  {
    std::ofstream z(frr.dir + "/zebra.conf");
    z << "hostname zebra\n";
    std::ofstream b(frr.dir + "/bgpd.conf");
    b << "hostname bgpd\nrouter bgp 65000\n bgp router-id " << u.underlay_addr(2)
      << "\n no bgp default ipv4-unicast\n neighbor " << u.underlay_addr(0) << " remote-as 65000\n neighbor "
      << u.underlay_addr(1) << " remote-as 65000\n address-family l2vpn evpn\n  neighbor " << u.underlay_addr(0)
      << " activate\n  neighbor " << u.underlay_addr(1) << " activate\n  advertise-all-vni\n exit-address-family\n";
  }
  ::chmod((frr.dir + "/zebra.conf").c_str(), 0666);
  ::chmod((frr.dir + "/bgpd.conf").c_str(), 0666);
  auto common = [&](const char* d) {
    return std::vector<std::string>{"ip", "netns", "exec", K.name(), std::string(d == std::string("zebra") ? kZebra : kBgpd),
                                    "-d", "-u", "frr", "-g", "frr", "-i", frr.dir + "/" + d + ".pid", "-z",
                                    frr.dir + "/zserv.api", "--vty_socket", frr.dir, "-f",
                                    frr.dir + "/" + d + ".conf", "--log", "file:" + frr.dir + "/" + d + ".log"};
  };
  ASSERT_TRUE(io::check_command(common("zebra")).ok()) << frr.log();
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(io::check_command(common("bgpd")).ok()) << frr.log();

  // the VM speaks once, so the bridge (and FRR) know its MAC
  auto vm_mac = vm.exec({"cat", "/sys/class/net/eth0/address"});
  ASSERT_TRUE(vm_mac.ok());
  const std::string vmmac = trim(vm_mac.value().out);
  auto hello = [&] {
    vm.exec({"python3", "-c", "import socket;s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM);"
                              "s.sendto(b'x',('192.168.88.77',9))"});
  };
  // FRR → ofld: the VM's MAC (type-2) and VTEP 10.88.0.3 (type-3)
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(wait_for([&] {
      hello();
      auto f = fdb_json(u, i);
      bool mac = false, fl = false;
      for (const auto& e : f.value("entries", nlohmann::json::array()))
        mac |= e["mac"] == vmmac && e["source"] == "evpn" && e["remote"] == u.underlay_addr(2);
      for (const auto& e : f.value("flood", nlohmann::json::array()))
        fl |= e["remote"] == u.underlay_addr(2) && e["source"] == "evpn";
      return mac && fl;
    }, std::chrono::seconds(40), kSlowPoll)) << "ofld " << i << ": " << fdb_json(u, i).dump() << "\n" << frr.log() << u.logs();
  }
  // ofld → FRR → kernel: the TAP MACs (extern_learn) and the flood entries of both VTEPs
  for (int i = 0; i < 2; ++i) {
    auto tm = u.host(i).exec({"cat", "/sys/class/net/ofld0/address"});
    ASSERT_TRUE(tm.ok());
    const std::string mac = trim(tm.value().out);
    std::string fdb;
    EXPECT_TRUE(wait_for([&] {
      auto r = K.exec({"bridge", "fdb", "show", "dev", "vxlan42"});
      fdb = r.ok() ? r.value().out : r.message();
      return fdb.find(mac + " dst " + u.underlay_addr(i) + " self extern_learn") != std::string::npos &&
             fdb.find("00:00:00:00:00:00 dst " + u.underlay_addr(i) + " self permanent") != std::string::npos;
    }, std::chrono::seconds(20), kSlowPoll)) << "kernel VXLAN FDB:\n" << fdb << frr.log();
  }
  // traffic both ways
  EXPECT_EQ(ping(u.host(0), "192.168.88.3"), "reply") << u.logs();
  EXPECT_EQ(ping(vm, u.overlay_addr(1)), "reply") << u.logs();
  auto [c1, s1] = transfer(u.host(0), vm, "192.168.88.3", 4);  // ofld → kernel VXLAN
  EXPECT_EQ(c1, s1);
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(vm, u.host(1), u.overlay_addr(1), 4);  // kernel VXLAN → ofld
  EXPECT_EQ(c2, s2);
  EXPECT_NE(s2, "");
}

}  // namespace
