// ofld tunnel ⇄ the Linux VXLAN device (root; own namespaces and addresses only; skipped
// otherwise). One namespace runs `ofld tunnel` (the real binary, OFLD_CLI_PATH), the other a
// kernel vxlan device; they share a veth underlay. Checks: ICMP echo, TCP transfers whose
// bytes are compared by SHA-256 in both directions, udpcsum / noudpcsum, IPv4 and IPv6
// underlay, the kernel's RCO frames (remcsumtx) received by ofld with remcsumrx (K-1: the
// kernel's own RCO receive is broken, so only this direction is judged), and ofld's RCO wire
// bytes compared with the kernel's for the same inner frames (V-1..V-3, W-26, K-1).
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <fstream>
#include <sstream>
#include <thread>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "netns_pair.hpp"
#include "proc_util.hpp"
#include "snmp_util.hpp"
#include "ofld/lab/kernel_oracle.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "../unit/tunnel_test_util.hpp"
#include "traffic.hpp"

#include <nlohmann/json.hpp>
#include <map>
#include <regex>

namespace {

using namespace ofld;
using ktest::slurp;
using ktest::spawn;
using ktest::snmp;
using ktest::stop;


struct Pair {
  std::optional<io::Netns> A, B;  // A: ofld, B: kernel vxlan
  pid_t ofld = -1;
  std::string ctl, log;
  ~Pair() { stop(ofld); }
};

struct Variant {
  bool v6 = false;
  bool udpcsum = true;
  bool kernel_remcsumtx = false;
  bool ofld_remcsumrx = false;
  /// The kernel side with tx-checksumming off on its veth, so it finishes its checksums
  /// before the veth (the variant the project started with). false: the kernel's default
  /// offloads (spec K-9).
  bool kernel_tx_off = true;
  /// Leave the kernel VXLAN device's MTU as the kernel sets it (1500 without `dev`), which
  /// differs from ofld's TAP MTU (underlay 1500 − overhead). false: set it to ofld's.
  bool kernel_mtu_default = false;
  /// `tos inherit` on both ends (outer DSCP from the inner header).
  bool tos_inherit = false;
  /// More words for both ends' outer header (`tos 10`, `ttl inherit`, `df set`, ...).
  std::vector<std::string> outer{};
};

/// Build the pair; returns "" or a reason (skip / failure is decided by the caller).
std::string setup(Pair& p, const Variant& v, bool& skipped) {
  std::string ua = v.v6 ? "fd00:77::1" : "10.77.0.1", ub = v.v6 ? "fd00:77::2" : "10.77.0.2";
  std::string pl = v.v6 ? "/64" : "/24";
  if (auto why = ktest::make_veth_pair(p.A, p.B,
                                       {.prefix = "ofld-ti", .addr_a = ua + pl, .addr_b = ub + pl,
                                        .nodad = v.v6},
                                       skipped);
      !why.empty())
    return why;
  auto& A = *p.A;
  auto& B = *p.B;
  std::vector<std::string> kv = {"link", "add", "vx0", "type", "vxlan", "id", "42", "local", ub,
                                 "remote", ua, "dstport", "4789"};
  if (v.v6) {
    if (!v.udpcsum) kv.insert(kv.end(), {"udp6zerocsumtx", "udp6zerocsumrx"});
  } else {
    kv.push_back(v.udpcsum ? "udpcsum" : "noudpcsum");
  }
  if (v.kernel_remcsumtx) kv.push_back("remcsumtx");
  if (v.tos_inherit) kv.insert(kv.end(), {"tos", "inherit"});
  kv.insert(kv.end(), v.outer.begin(), v.outer.end());
  // Over veth a CHECKSUM_PARTIAL skb crosses unchanged: with tx-checksumming on (the
  // default), the kernel VXLAN peer hands our UDP socket inner frames whose TCP/UDP checksum
  // was never finished (the bytes hold the pseudo-header seed; a NIC would have filled it),
  // spec K-9. The tx-off variant makes the kernel side finish its checksums before the veth,
  // as a device without checksum offload does.
  if (v.kernel_tx_off) {
    if (auto s = B.exec({"ethtool", "-K", "veth0", "tx", "off"}); !s.ok()) return s.message();
  }
  if (auto s = B.ip(kv); !s.ok()) return s.message();
  if (!v.kernel_mtu_default) {
    if (auto s = B.ip({"link", "set", "vx0", "mtu", v.v6 ? "1430" : "1450"}); !s.ok()) return s.message();
  }
  if (auto s = B.ip({"link", "set", "vx0", "up"}); !s.ok()) return s.message();
  if (auto s = B.ip({"addr", "add", "192.168.77.2/24", "dev", "vx0"}); !s.ok()) return s.message();
  p.ctl = "/run/ofld/ti-" + std::to_string(::getpid()) + "-" + A.name() + ".sock";
  p.log = "/tmp/ofld-ti-" + A.name() + ".log";
  std::vector<std::string> cmd = {"ip", "netns", "exec", A.name(), OFLD_CLI_PATH, "tunnel", "--dev",
                                  "ofld0", "--address", "192.168.77.1/24", "--control", p.ctl,
                                  "vxlan", "id", "42", "local", ua, "remote", ub};
  if (v.v6) {
    if (!v.udpcsum) cmd.insert(cmd.end(), {"udp6zerocsumtx", "udp6zerocsumrx"});
  } else {
    cmd.push_back(v.udpcsum ? "udpcsum" : "noudpcsum");
  }
  if (v.ofld_remcsumrx) cmd.push_back("remcsumrx");
  if (v.tos_inherit) cmd.insert(cmd.end(), {"tos", "inherit"});
  cmd.insert(cmd.end(), v.outer.begin(), v.outer.end());
  p.ofld = spawn(cmd, p.log);
  for (int i = 0; i < 100; ++i) {
    if (daemon::query_stats(p.ctl).ok()) return "";
    if (::waitpid(p.ofld, nullptr, WNOHANG) == p.ofld) {
      p.ofld = -1;
      return "ofld tunnel exited: " + slurp(p.log);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "ofld tunnel did not come up: " + slurp(p.log);
}

/// `mb` MiB from `from` to `dst` (a server in `to`), SHA-256 at both ends: {sender, receiver}.
std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to, const std::string& dst,
                                             int mb) {
  return ktest::hashed_transfer(from, to, dst, {.mib = mb, .seed = 7, .timeout_s = 40});
}

void run_variant(const Variant& v) {
  Pair p;
  bool skipped = false;
  std::string why = setup(p, v, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto ping = p.A->exec({"python3", "-c", ktest::icmp_echo_script("192.168.77.2")}, std::chrono::seconds(15));
  ASSERT_TRUE(ping.ok()) << ping.message();
  EXPECT_EQ(ping.value().out, "reply\n") << slurp(p.log);
  auto [c1, s1] = transfer(*p.A, *p.B, "192.168.77.2", 8);  // ofld → kernel
  EXPECT_EQ(c1, s1) << "ofld -> kernel";
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(*p.B, *p.A, "192.168.77.1", 8);  // kernel → ofld
  EXPECT_EQ(c2, s2) << "kernel -> ofld";
  EXPECT_NE(s2, "");
  auto st = daemon::query_stats(p.ctl);
  ASSERT_TRUE(st.ok());
  if (v.kernel_remcsumtx) {
    EXPECT_GT(st.value()["rx"]["rco"].get<std::uint64_t>(), 0u);
  }
  if (!v.kernel_tx_off && !v.kernel_remcsumtx) {
    // K-9: the kernel's inner checksums arrived as seeds and were taken as CHECKSUM_PARTIAL.
    EXPECT_GT(st.value()["rx"].value("csum_partial_seed", std::uint64_t(0)), 0u) << st.value().dump();
  }
  EXPECT_EQ(stop(p.ofld), 0) << slurp(p.log);  // SIGTERM: clean exit
  auto link = p.A->exec({"ip", "link", "show", "ofld0"});
  EXPECT_FALSE(link.ok()) << "TAP still present after SIGTERM";
}

// ---- G2 (public-bugs.md: gVisor #11198, ACKs lost with GSO when data exceeds one segment) ----
// Request/response rounds whose requests are just above one MSS (and up to three), over one TCP
// connection through the tunnel, in both directions (ofld's TAP → GSO → kernel VXLAN, and
// kernel VXLAN → ofld's GRO → TAP): every response must be the SHA-256 of its request, and
// neither TCP stack may have had to retransmit (RetransSegs in the namespace's /proc/net/snmp).
// The fault's kind (ACKs lost after every request above one MSS) retransmits in every one of the
// 120 rounds of a direction. A scheduler stall retransmits too: with two or more segments out, a
// tail loss probe fires 2 x SRTT + 2 ms after the last send when no ACK came (RFC 8985 §7.2;
// tcp_schedule_loss_probe, TCP_TIMEOUT_MIN_US; SRTT here is well under a millisecond), so
// a few ms of stall in ofld (the ASan build on a loaded 2-core machine) sends a probe whose
// original arrived; TCP cannot tell that from a lost ACK, only the rate can. Measured with the
// ASan build, per namespace: 0 on an idle machine, up to 4 beside two busy loops (CI failed at 3
// with the former tolerance of 2), up to 19 beside four. Tolerance: fewer than one retransmission
// in four rounds (30 per namespace), a quarter of what the fault's kind costs (120).
const char* kEchoServer =
    "import socket,hashlib,struct\n"
    "s=socket.socket(socket.AF_INET,socket.SOCK_STREAM)\n"
    "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
    "s.bind(('0.0.0.0',5002));s.listen(1);s.settimeout(20)\n"
    "c,_=s.accept();c.settimeout(20)\n"
    "def rd(n):\n"
    "  b=b''\n"
    "  while len(b)<n:\n"
    "    d=c.recv(n-len(b))\n"
    "    if not d: return None\n"
    "    b+=d\n"
    "  return b\n"
    "while True:\n"
    "  h=rd(4)\n"
    "  if h is None: break\n"
    "  d=rd(struct.unpack('!I',h)[0])\n"
    "  c.sendall(hashlib.sha256(d).digest())\n";

std::string rr_client(const std::string& dst) {
  return "import socket,hashlib,struct,random,time\n"
         "for i in range(100):\n"
         "  try:\n"
         "    s=socket.create_connection(('" + dst + "',5002),timeout=20);break\n"
         "  except ConnectionRefusedError: time.sleep(0.1)\n"
         "s.setsockopt(socket.IPPROTO_TCP,socket.TCP_NODELAY,1)\n"
         "mss=s.getsockopt(socket.IPPROTO_TCP,socket.TCP_MAXSEG)\n"
         "r=random.Random(2);ok=0\n"
         "for i in range(120):\n"
         "  d=r.randbytes(mss+1+(i*97)%(2*mss))\n"
         "  s.sendall(struct.pack('!I',len(d))+d)\n"
         "  a=b''\n"
         "  while len(a)<32:\n"
         "    x=s.recv(32-len(a))\n"
         "    if not x: break\n"
         "    a+=x\n"
         "  ok+=a==hashlib.sha256(d).digest()\n"
         "s.close();print('rounds',ok,'mss',mss)\n";
}

std::string request_response(const io::Netns& from, const io::Netns& to, const std::string& dst) {
  std::string slog = "/tmp/ofld-ti-rr-" + to.name() + ".log";
  pid_t srv = spawn({"ip", "netns", "exec", to.name(), "python3", "-c", kEchoServer}, slog);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto c = from.exec({"python3", "-c", rr_client(dst)}, std::chrono::seconds(60));
  stop(srv);
  ::unlink(slog.c_str());
  return c.ok() ? c.value().out : "client failed: " + c.message();
}

TEST(TunnelInterop, BugG2_RequestsJustAboveOneMssBothWaysNoRetransmits) {
  Pair p;
  bool skipped = false;
  std::string why = setup(p, {false, true, false, false}, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  const long a0 = snmp(*p.A, "Tcp", "RetransSegs"), b0 = snmp(*p.B, "Tcp", "RetransSegs");
  ASSERT_GE(a0, 0);
  ASSERT_GE(b0, 0);
  std::string out1 = request_response(*p.A, *p.B, "192.168.77.2");  // requests: ofld GSO side
  EXPECT_EQ(out1.substr(0, 11), "rounds 120 ") << out1 << slurp(p.log);
  std::string out2 = request_response(*p.B, *p.A, "192.168.77.1");  // requests: ofld GRO side
  EXPECT_EQ(out2.substr(0, 11), "rounds 120 ") << out2 << slurp(p.log);
  const long da = snmp(*p.A, "Tcp", "RetransSegs") - a0, db = snmp(*p.B, "Tcp", "RetransSegs") - b0;
  RecordProperty("retrans_ofld_ns", std::to_string(da));
  RecordProperty("retrans_kernel_ns", std::to_string(db));
  constexpr long kRounds = 120, kTolerance = kRounds / 4;
  EXPECT_LE(da, kTolerance) << "retransmissions in the ofld namespace";
  EXPECT_LE(db, kTolerance) << "retransmissions in the kernel-VXLAN namespace";
  auto st = daemon::query_stats(p.ctl);
  ASSERT_TRUE(st.ok());
  // The requests did take the GSO path: TSO super-packets came from the TAP.
  EXPECT_GT(st.value()["tx"]["gso_super_packets"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(stop(p.ofld), 0) << slurp(p.log);
}

// One train per TSO frame (not two UDP_SEGMENT trains per 64 KB frame): the TAP's gso_max_segs
// is what one train carries — udp(7): one UDP_SEGMENT send is at most 65,535 − 20 − 8 bytes
// of payload, and each datagram is the TAP MTU + 14 (inner Ethernet) + 8 (VXLAN) — so the
// kernel's TSO frames toward ofld leave in one send each: no more trains than GSO frames.
TEST(TunnelInterop, OneTsoFrameLeavesInOneTrain) {
  Pair p;
  bool skipped = false;
  std::string why = setup(p, {false, true, false, false}, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto [c1, s1] = transfer(*p.A, *p.B, "192.168.77.2", 8);  // ofld's TAP → GSO → kernel
  EXPECT_EQ(c1, s1);
  auto link = p.A->exec({"ip", "-d", "link", "show", "ofld0"});
  ASSERT_TRUE(link.ok()) << link.message();
  auto rd = [&](const std::string& attr) {  // "... mtu 1450 ..." / "... gso_max_segs 44 ..."
    std::smatch m;
    const std::string out = link.value().out;
    return std::regex_search(out, m, std::regex(" " + attr + " ([0-9]+)")) ? std::stol(m[1]) : -1L;
  };
  const long mtu = rd("mtu"), segs = rd("gso_max_segs");
  ASSERT_GT(mtu, 0);
  EXPECT_EQ(segs, (65535 - 20 - 8) / (mtu + 14 + 8));
  auto st = daemon::query_stats(p.ctl);
  ASSERT_TRUE(st.ok());
  const auto& tx = st.value()["tx"];
  const auto super = tx["gso_super_packets"].get<std::uint64_t>();
  EXPECT_GT(super, 100u);
  EXPECT_LE(tx["udp_segment_trains"].get<std::uint64_t>(), super) << st.value().dump();
  EXPECT_EQ(stop(p.ofld), 0) << slurp(p.log);
}

TEST(TunnelInterop, Ipv4Udpcsum) { run_variant({false, true, false, false}); }
TEST(TunnelInterop, Ipv4Noudpcsum) { run_variant({false, false, false, false}); }
TEST(TunnelInterop, Ipv6Udpcsum) { run_variant({true, true, false, false}); }
TEST(TunnelInterop, Ipv6ZeroCsum) { run_variant({true, false, false, false}); }
// Spec K-9: the kernel side as a user sets it up — veth with its default
// offloads (tx-checksumming on), VXLAN device MTU left as the kernel chooses (1500, ofld's
// TAP has underlay − overhead) — in both directions, IPv4 and IPv6 underlays, with and
// without outer UDP checksums. Expected: the transfers' SHA-256 match (the kernel delivers
// every byte to a kernel peer in this setup, so must we).
Variant kernel_defaults(bool v6, bool udpcsum) {
  Variant v{v6, udpcsum, false, false};
  v.kernel_tx_off = false;
  v.kernel_mtu_default = true;
  return v;
}
TEST(TunnelInterop, K9_KernelDefaults_Ipv4Udpcsum) { run_variant(kernel_defaults(false, true)); }
TEST(TunnelInterop, K9_KernelDefaults_Ipv4Noudpcsum) { run_variant(kernel_defaults(false, false)); }
TEST(TunnelInterop, K9_KernelDefaults_Ipv6Udpcsum) { run_variant(kernel_defaults(true, true)); }
TEST(TunnelInterop, K9_KernelDefaults_Ipv6ZeroCsum) { run_variant(kernel_defaults(true, false)); }
// Default offloads with the MTUs matched (separates the checksum fault from the MTU mismatch).
TEST(TunnelInterop, K9_KernelTxOnMtuMatched_Ipv4Udpcsum) {
  Variant v{false, true, false, false};
  v.kernel_tx_off = false;
  run_variant(v);
}
TEST(TunnelInterop, K1_KernelRcoFramesReceivedByOfld) { run_variant({false, true, true, true}); }

TEST(TunnelInterop, K1_V3_RcoWireBytesMatchKernel) {
  lab::KernelVxlan::Options ko;
  ko.remcsumtx = true;
  auto k = lab::KernelVxlan::create(ko);
  if (k.is_skipped()) GTEST_SKIP() << k.message();
  ASSERT_TRUE(k.ok()) << k.message();
  for (bool v6 : {false, true}) {
    auto f = tunnel_test::tcp_frame(4000, v6, true);
    io::VnetHdr kv;
    kv.flags = io::VnetHdr::kNeedsCsum;
    kv.gso_type = v6 ? io::VnetHdr::kGsoTcpv6 : io::VnetHdr::kGsoTcpv4;
    kv.gso_size = 1448;
    kv.hdr_len = std::uint16_t(v6 ? 74 : 54);
    kv.csum_start = v6 ? 54 : 34;
    kv.csum_offset = 16;
    auto kout = k.value().transmit(kv, f);
    ASSERT_TRUE(kout.ok()) << kout.message();
    tunnel::VxlanConfig c;
    c.vni = ko.vni;
    c.local = *tunnel::IpAddr::parse("10.200.0.1");
    c.remotes = {*tunnel::IpAddr::parse("10.200.0.2")};
    c.remcsum_tx = true;
    tunnel::Endpoint dp(c, {});
    wire::virtio_net::Hdr h{kv.flags, kv.gso_type, kv.hdr_len, kv.gso_size, kv.csum_start, kv.csum_offset};
    std::vector<tunnel::TxTrain> out;
    dp.transmit(h, f, 0, out);
    std::vector<std::vector<std::uint8_t>> ours;
    for (const auto& t : out)
      for (std::size_t off = 0; off < t.buf.size(); off += t.seg_size)
        ours.emplace_back(t.buf.begin() + off, t.buf.begin() + std::min(t.buf.size(), off + t.seg_size));
    ASSERT_EQ(ours.size(), kout.value().size()) << (v6 ? "v6" : "v4");
    for (std::size_t i = 0; i < ours.size(); ++i) {
      const auto& kf = kout.value()[i].data;
      std::size_t off = 14 + 20 + 8;  // outer Ethernet + IPv4 + UDP (kernel oracle underlay)
      ASSERT_GE(kf.size(), off);
      std::vector<std::uint8_t> kp(kf.begin() + off, kf.end());
      EXPECT_EQ(ours[i], kp) << (v6 ? "v6" : "v4") << " segment " << i;
    }
  }
}

// ---- ECN through the tunnel (RFC 6040) ----------------------------------------------------
// The kernel side in its default settings. A netfilter rule (nftables) in the receiving
// namespace plays a congested underlay router: it counts the outer ECN of every VXLAN
// datagram as the sender encapsulated it, then rewrites it to CE. The overlay sender sends
// three rounds of 20 UDP datagrams, inner ECT(0), Not-ECT and CE (IP_TOS set by the
// application). Expected, for ofld exactly as for the kernel:
//  - sender (RFC 6040 §4.1, INET_ECN_encapsulate): outer ECN = inner, CE → ECT(0);
//  - receiver (§4.2 Figure 4): ECT(0) inner under CE outer → CE delivered; Not-ECT inner
//    under CE → dropped (counted: ofld drops.rx_ecn_not_ect; kernel vx0 rx frame errors);
//    CE inner stays CE.
// Skipped when nft is not installed or the kernel lacks nf_tables.

const char* kEcnSender =
    "import socket,sys,time\n"
    "dst=sys.argv[1];tos=int(sys.argv[2]);port=int(sys.argv[3])\n"
    "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
    "s.setsockopt(socket.IPPROTO_IP,socket.IP_TOS,tos)\n"
    "for i in range(20):\n"
    "  s.sendto(bytes(200),(dst,port));time.sleep(0.005)\n";

io::Status nft_load(const io::Netns& ns, const std::string& rules) {
  const std::string path = "/tmp/ofld-ti-" + ns.name() + ".nft";
  {
    std::ofstream f(path);
    f << rules;
  }
  auto r = ns.exec({"nft", "-f", path});
  ::unlink(path.c_str());
  if (!r.ok()) return io::Status::error(r.message());
  return io::ok_status();
}

long nft_counter(const io::Netns& ns, const std::string& table, const std::string& name) {
  auto r = ns.exec({"nft", "list", "counter", table == "out6" ? "ip6" : "ip", "ofld" + table, name});
  if (!r.ok()) return -1;
  std::smatch m;
  if (!std::regex_search(r.value().out, m, std::regex("packets ([0-9]+)"))) return -1;
  return std::stol(m[1]);
}

/// Rules for the receiving namespace: table ofldout/ofldout6 (outer ECN counted, then set
/// to CE, on the underlay) and ofldin (inner ECN per port on overlay device `dev`).
std::string ecn_rules(bool v6, const std::string& dev) {
  const std::string e = v6 ? "ip6 ecn" : "ip ecn";
  std::string r = std::string("table ") + (v6 ? "ip6 ofldout6" : "ip ofldout") + " {\n";
  for (const char* c : {"not_ect", "ect0", "ect1", "ce", "ef"}) r += std::string("  counter ") + c + " {}\n";
  r += "  chain pre {\n    type filter hook prerouting priority -300;\n";
  // Outer datagrams counted only when they carry the test's inner datagrams: the inner UDP
  // destination port 6001-6004 at @th + 8 (UDP) + 8 (VXLAN, RFC 7348 §5) + 14 (Ethernet) +
  // 20 (inner IPv4) + 2 bytes = bit 416 (ARP, neighbour discovery and the rest pass uncounted).
  const std::string ours = "udp dport 4789 @th,416,16 6001-6004 ";
  r += "    " + ours + (v6 ? "ip6" : "ip") + " dscp ef counter name ef\n";
  for (auto [c, v] : {std::pair{"not_ect", "not-ect"}, std::pair{"ect0", "ect0"},
                      std::pair{"ect1", "ect1"}, std::pair{"ce", "ce"}})
    r += "    " + ours + e + " " + v + " counter name " + c + "\n";
  r += "    udp dport 4789 " + e + " set ce\n  }\n}\n";
  r += "table ip ofldin {\n";
  for (int p : {6001, 6002, 6003, 6004})
    r += "  counter p" + std::to_string(p) + " {}\n  counter p" + std::to_string(p) + "_ce {}\n";
  r += "  chain in {\n    type filter hook input priority 0;\n";
  for (int p : {6001, 6002, 6003, 6004}) {
    const std::string ps = std::to_string(p);
    r += "    iifname \"" + dev + "\" udp dport " + ps + " counter name p" + ps + "\n";
    r += "    iifname \"" + dev + "\" udp dport " + ps + " ip ecn ce counter name p" + ps + "_ce\n";
  }
  r += "    iifname \"" + dev + "\" udp dport 6001-6004 drop\n  }\n}\n";
  return r;
}

/// Poll `pred` every 50 ms until it holds or `limit` passes (the caller checks afterwards).
template <class P>
void wait_until(P pred, std::chrono::milliseconds limit = std::chrono::seconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (!pred() && std::chrono::steady_clock::now() < end)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
}

/// One direction: `snd` sends through the overlay to `dst`; `rcv` (device `dev`) has the rules.
void ecn_direction(Pair& p, bool v6, bool ofld_receives, bool inherit) {
  const io::Netns& snd = ofld_receives ? *p.B : *p.A;
  const io::Netns& rcv = ofld_receives ? *p.A : *p.B;
  const std::string dst = ofld_receives ? "192.168.77.1" : "192.168.77.2";
  const std::string dev = ofld_receives ? "ofld0" : "vx0";
  const std::string out = v6 ? "out6" : "out";
  // ARP both ways before the rules (the rewrite does not affect non-IP frames anyway).
  auto ping = snd.exec({"python3", "-c", ktest::icmp_echo_script(dst)}, std::chrono::seconds(15));
  ASSERT_TRUE(ping.ok()) << ping.message();
  ASSERT_EQ(ping.value().out, "reply\n") << slurp(p.log);
  if (auto s = nft_load(rcv, ecn_rules(v6, dev)); !s.ok()) GTEST_SKIP() << "nftables: " << s.message();
  // Every datagram decapsulated and delivered or dropped (Not-ECT inner under CE outer).
  auto not_ect_dropped = [&]() -> long {
    if (ofld_receives) {
      auto st = daemon::query_stats(p.ctl);
      return st.ok() ? long(st.value()["drops"].value("rx_ecn_not_ect", std::uint64_t(0))) : 0;
    }
    auto l = rcv.exec({"ip", "-j", "-s", "-s", "link", "show", "vx0"});
    if (!l.ok()) return 0;
    auto j = nlohmann::json::parse(l.value().out, nullptr, false);
    return j.is_array() && !j.empty() ? long(j[0]["stats64"]["rx"].value("frame_errors", 0)) : 0;
  };
  // The outer counters count skbs, not datagrams: datagrams that one ofld endpoint read in one
  // device batch leave in one UDP_SEGMENT send and cross the veth as one GSO skb (the sender's
  // 5 ms gaps make that rare, a loaded machine does it). So a round ends when its 20 inner
  // datagrams arrived (or were dropped), and its outer check is: the class the encapsulator
  // must use was counted, no other class was.
  struct Round {
    int tos, port;
    const char* outer;  // outer ECN counter the encapsulator must have used
  };
  const char* kClasses[] = {"not_ect", "ect0", "ect1", "ce"};
  for (const Round& r : {Round{0x02, 6001, "ect0"}, Round{0x00, 6002, "not_ect"},
                         Round{0x03, 6003, "ect0"}, Round{46 << 2 | 2, 6004, "ect0"}}) {
    SCOPED_TRACE("inner tos " + std::to_string(r.tos) + " to port " + std::to_string(r.port));
    std::map<std::string, long> before;
    for (const char* c : kClasses) before[c] = nft_counter(rcv, out, c);
    const long ef0 = nft_counter(rcv, out, "ef"), drop0 = not_ect_dropped();
    auto s = snd.exec({"python3", "-c", kEcnSender, dst, std::to_string(r.tos), std::to_string(r.port)},
                      std::chrono::seconds(15));
    ASSERT_TRUE(s.ok()) << s.message();
    // The 20 datagrams may still be inside the endpoints when the sender is done (ASan, a
    // loaded machine): wait for them rather than a fixed time.
    const std::string in = "p" + std::to_string(r.port);
    auto done = [&] { return r.port == 6002 ? not_ect_dropped() - drop0 >= 20 : nft_counter(rcv, "in", in) >= 20; };
    wait_until(done);
    EXPECT_TRUE(done()) << slurp(p.log);
    for (const char* c : kClasses) {
      const long d = nft_counter(rcv, out, c) - before[c];
      if (std::string(c) == r.outer) {
        EXPECT_GE(d, 1) << c << ": outer ECN as encapsulated (RFC 6040 §4.1)";
        EXPECT_LE(d, 20) << c;
      } else {
        EXPECT_EQ(d, 0) << c << " counted: outer ECN not as encapsulated (RFC 6040 §4.1)";
      }
    }
    // DSCP EF (46) from the application: the outer DSCP is EF only with tos inherit
    // (vxlan_xmit_one: tos 1 = ip_tunnel_get_dsfield), 0 (the configured tos) otherwise.
    const long ef = nft_counter(rcv, out, "ef") - ef0;
    if (inherit && r.port == 6004) {
      EXPECT_EQ(ef, nft_counter(rcv, out, r.outer) - before[r.outer]) << "tos inherit: outer DSCP from the inner";
    } else {
      EXPECT_EQ(ef, 0) << "tos 0 (or an inner DSCP of 0): outer DSCP 0";
    }
  }
  EXPECT_EQ(nft_counter(rcv, out, "ect1"), 0);
  EXPECT_EQ(nft_counter(rcv, out, "ce"), 0) << "an encapsulator never sends CE in the outer header";
  EXPECT_EQ(nft_counter(rcv, "in", "p6001"), 20);
  EXPECT_EQ(nft_counter(rcv, "in", "p6001_ce"), 20) << "ECT(0) inner under CE outer -> CE";
  EXPECT_EQ(nft_counter(rcv, "in", "p6002"), 0) << "Not-ECT inner under CE outer -> drop";
  EXPECT_EQ(nft_counter(rcv, "in", "p6003"), 20);
  EXPECT_EQ(nft_counter(rcv, "in", "p6003_ce"), 20);
  EXPECT_EQ(nft_counter(rcv, "in", "p6004"), 20);
  EXPECT_EQ(nft_counter(rcv, "in", "p6004_ce"), 20);
  if (ofld_receives) {
    auto st = daemon::query_stats(p.ctl);
    ASSERT_TRUE(st.ok());
    EXPECT_GE(st.value()["drops"].value("rx_ecn_not_ect", std::uint64_t(0)), 20u) << st.value().dump();
    EXPECT_GE(st.value()["rx"].value("ecn_ce", std::uint64_t(0)), 20u);
  } else {
    auto l = rcv.exec({"ip", "-j", "-s", "-s", "link", "show", "vx0"});
    ASSERT_TRUE(l.ok());
    auto j = nlohmann::json::parse(l.value().out, nullptr, false);
    ASSERT_TRUE(j.is_array() && !j.empty());
    EXPECT_GE(j[0]["stats64"]["rx"].value("frame_errors", 0), 20) << l.value().out;
  }
}

void ecn_variant(bool v6, bool ofld_receives, bool inherit = false) {
  if (!io::check_command({"nft", "--version"}).ok()) GTEST_SKIP() << "nft (nftables) not installed";
  Pair p;
  bool skipped = false;
  Variant v = kernel_defaults(v6, true);
  v.tos_inherit = inherit;
  std::string why = setup(p, v, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  ecn_direction(p, v6, ofld_receives, inherit);
  EXPECT_EQ(stop(p.ofld), 0) << slurp(p.log);
}

TEST(TunnelInterop, EcnCeOnUnderlay_KernelToOfld_Ipv4) { ecn_variant(false, true); }
TEST(TunnelInterop, EcnCeOnUnderlay_KernelToOfld_Ipv6) { ecn_variant(true, true); }
TEST(TunnelInterop, EcnCeOnUnderlay_OfldToKernel_Ipv4) { ecn_variant(false, false); }
TEST(TunnelInterop, EcnCeOnUnderlay_OfldToKernel_Ipv6) { ecn_variant(true, false); }
TEST(TunnelInterop, TosInherit_KernelToOfld_Ipv4) { ecn_variant(false, true, true); }
TEST(TunnelInterop, TosInherit_OfldToKernel_Ipv4) { ecn_variant(false, false, true); }
TEST(TunnelInterop, TosInherit_OfldToKernel_Ipv6) { ecn_variant(true, false, true); }

// ---- the outer header: tos, ttl, df as iproute2 spells them (K-10, K-11) ----------------------

/// Records every VXLAN datagram (UDP port 4789, IPv4, flags 0x08) crossing veth0 of the namespace it runs
/// in for argv[1] seconds, one JSON line each into argv[2]: the direction ("tx": sent by this
/// namespace's kernel VXLAN device, "rx": arriving from ofld), the outer TOS, TTL and DF, the
/// inner EtherType and, for an inner IPv4 UDP datagram, its TTL, DF and destination port; for
/// an inner IPv6 packet its hop limit.
const char* kOuterSniffer =
    "import socket,struct,sys,time,json\n"
    "s=socket.socket(socket.AF_PACKET,socket.SOCK_RAW,socket.htons(3))\n"
    "s.bind(('veth0',0));s.settimeout(0.1)\n"
    "out=open(sys.argv[2],'w',buffering=1);end=time.time()+float(sys.argv[1])\n"
    "print('up',flush=True)\n"
    "while time.time()<end:\n"
    "  try: d,a=s.recvfrom(65535)\n"
    "  except socket.timeout: continue\n"
    "  if d[12:14]!=b'\\x08\\x00': continue\n"
    "  ip=d[14:];h=(ip[0]&15)*4\n"
    "  if ip[9]!=17 or struct.unpack('!H',ip[h+2:h+4])[0]!=4789: continue\n"
    "  if ip[h+8]!=8: continue\n"  // not a VXLAN header (I flag alone): ofld's peer-session messages
    "  e=ip[h+16:];r={'dir':'tx' if a[2]==socket.PACKET_OUTGOING else 'rx','tos':ip[1],'ttl':ip[8],\n"
    "     'df':(ip[6]>>6)&1,'et':e[12:14].hex()}\n"
    "  i=e[14:]\n"
    "  if r['et']=='0800' and len(i)>=28:\n"
    "    ih=(i[0]&15)*4;r.update(ittl=i[8],idf=(i[6]>>6)&1)\n"
    "    if i[9]==17: r['port']=struct.unpack('!H',i[ih+2:ih+4])[0]\n"
    "  if r['et']=='86dd' and len(i)>=40: r['ittl']=i[7]\n"
    "  out.write(json.dumps(r)+'\\n')\n";

/// 20 UDP datagrams to argv[1]:argv[2] with IP_TTL argv[3] and DF (IP_PMTUDISC_DO) when argv[4]
/// is 1, else without (IP_PMTUDISC_DONT).
const char* kTtlDfSender =
    "import socket,sys,time\n"
    "s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)\n"
    "s.setsockopt(socket.IPPROTO_IP,socket.IP_TTL,int(sys.argv[3]))\n"
    "s.setsockopt(socket.IPPROTO_IP,10,2 if sys.argv[4]=='1' else 0)\n"
    "for i in range(20): s.sendto(b'outer header'*8,(sys.argv[1],int(sys.argv[2])));time.sleep(0.005)\n";

/// The kernel VXLAN device (B) and ofld (A) configured with the same outer-header words send
/// the same outer TOS, TTL and DF for the same inner packets: both directions of one capture
/// on B's veth, each datagram checked against the rule of vxlan_xmit_one (K-10 DF, K-11 TTL)
/// for its inner header. `want` gives, per inner packet, the expected outer TOS, TTL and DF.
struct OuterWant {
  std::function<int(const nlohmann::json&)> tos, ttl, df;
};
void outer_variant(const std::vector<std::string>& words, const OuterWant& want) {
  Pair p;
  bool skipped = false;
  Variant v = kernel_defaults(false, true);
  v.outer = words;
  std::string why = setup(p, v, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto& A = *p.A;
  auto& B = *p.B;
  const std::string cap = "/tmp/ofld-ti-outer-" + B.name() + ".jsonl", caplog = cap + ".log";
  pid_t sn = spawn({"ip", "netns", "exec", B.name(), "python3", "-c", kOuterSniffer, "12", cap}, caplog);
  for (int i = 0; i < 100 && slurp(caplog).find("up") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // ARP both ways (a non-IP inner frame), then inner IPv4 UDP with two TTL/DF pairs each way.
  auto ping = A.exec({"python3", "-c", ktest::icmp_echo_script("192.168.77.2")}, std::chrono::seconds(15));
  ASSERT_TRUE(ping.ok()) << ping.message();
  ASSERT_EQ(ping.value().out, "reply\n") << slurp(p.log);
  struct Send {
    const io::Netns* from;
    const char* dst;
    const char* port;
    const char* ttl;
    const char* df;
  };
  for (const Send& s : {Send{&A, "192.168.77.2", "7001", "33", "1"}, Send{&A, "192.168.77.2", "7002", "17", "0"},
                        Send{&B, "192.168.77.1", "7001", "33", "1"}, Send{&B, "192.168.77.1", "7002", "17", "0"}}) {
    auto r = s.from->exec({"python3", "-c", kTtlDfSender, s.dst, s.port, s.ttl, s.df}, std::chrono::seconds(15));
    ASSERT_TRUE(r.ok()) << r.message();
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  stop(sn);
  std::ifstream in(cap);
  std::map<std::string, int> seen;  // "rx/7001" ...: datagrams checked
  std::string line;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) continue;
    const std::string dir = j["dir"], key = dir + "/" + (j.contains("port") ? std::to_string(int(j["port"])) : j["et"].get<std::string>());
    SCOPED_TRACE(line + (dir == "rx" ? " (sent by ofld)" : " (sent by the kernel VXLAN device)"));
    ++seen[key];
    EXPECT_EQ(int(j["tos"]), want.tos(j));
    EXPECT_EQ(int(j["ttl"]), want.ttl(j));
    EXPECT_EQ(int(j["df"]), want.df(j));
  }
  ::unlink(cap.c_str());
  ::unlink(caplog.c_str());
  for (const char* k : {"rx/7001", "rx/7002", "tx/7001", "tx/7002"}) EXPECT_GE(seen[k], 1) << k << " not captured";
  EXPECT_GE(seen["rx/0806"], 1) << "ofld's ARP not captured";
  EXPECT_GE(seen["tx/0806"], 1) << "the kernel's ARP not captured";
  EXPECT_EQ(stop(p.ofld), 0) << slurp(p.log);
}

int inner_ttl(const nlohmann::json& j) { return j.contains("ittl") ? int(j["ittl"]) : -1; }
bool inner_ip(const nlohmann::json& j) { return j["et"] == "0800" || j["et"] == "86dd"; }

// Defaults on both ends: no DF (the kernel device's df unset; ofld's sockets IP_PMTUDISC_DONT),
// TTL 64 (the namespace's ip_default_ttl: ttl auto), TOS 0 (the senders' inner ECN is Not-ECT).
TEST(TunnelInterop, K10_OuterHeaderDefaultsMatchTheKernelDevice_Ipv4) {
  outer_variant({}, {[](const nlohmann::json&) { return 0; }, [](const nlohmann::json&) { return 64; },
                     [](const nlohmann::json&) { return 0; }});
}
// `tos 10` is 0x10 on both ends (iproute2 reads tos in hexadecimal), `ttl 9`, `df set`.
TEST(TunnelInterop, K10_TosHexTtlNineDfSet_Ipv4) {
  outer_variant({"tos", "10", "ttl", "9", "df", "set"},
                {[](const nlohmann::json&) { return 0x10; }, [](const nlohmann::json&) { return 9; },
                 [](const nlohmann::json&) { return 1; }});
}
// `ttl inherit` and `df inherit`: TTL from the inner IPv4 TTL / IPv6 hop limit (ARP: the
// route's default, 64); DF from the inner IPv4 DF, set for inner IPv6, clear for ARP.
TEST(TunnelInterop, K10_K11_TtlInheritDfInherit_Ipv4) {
  outer_variant({"ttl", "inherit", "df", "inherit"},
                {[](const nlohmann::json&) { return 0; },
                 [](const nlohmann::json& j) { return inner_ip(j) ? inner_ttl(j) : 64; },
                 [](const nlohmann::json& j) {
                   return j["et"] == "86dd" || (j["et"] == "0800" && j.value("idf", 0) == 1) ? 1 : 0;
                 }});
}

}  // namespace
