// ofld tunnel geneve between two ofld endpoints (root; own namespaces "ofld-gnv*" and
// addresses only; skipped otherwise). The host has no geneve module, so both ends are ofld:
// two namespaces joined by a veth (checksum offload off, so that captured frames carry
// finished checksums), `ofld tunnel geneve` (the real binary, OFLD_CLI_PATH) in each. Checks:
// ICMP echo through the tunnel, a TCP transfer each way whose bytes are compared by SHA-256,
// the receiving stacks' TCP checksum error counters unchanged, counters showing that TSO from
// the TAP went through GSO and that GRO after decapsulation aggregated, a clean SIGTERM exit
// that removes the TAP — and tshark's dissection of a capture of the underlay as an independent
// witness: every datagram on UDP 6081 is Geneve version 0 with VNI 4242 (0x001092) and the configured
// options, its outer UDP checksum good (RFC 768) and its inner TCP checksum good. IPv4 and IPv6
// underlays, without and with options (GN-1, GN-9, GN-12, X-31, W-12).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "ofld/daemon/tunnel_daemon.hpp"
#include "ofld/io/netns.hpp"
#include "proc_util.hpp"
#include "snmp_util.hpp"

namespace {

using namespace ofld;
using ktest::slurp;
using ktest::spawn;
using ktest::snmp;
using ktest::stop;

std::string server(const std::string& bind) {
  return "import socket,hashlib\n"
         "s=socket.socket(socket.AF_INET,socket.SOCK_STREAM)\n"
         "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\n"
         "s.bind(('" + bind + "',5001));s.listen(1);s.settimeout(30)\n"
         "c,_=s.accept();c.settimeout(30);h=hashlib.sha256();n=0\n"
         "while True:\n"
         "  d=c.recv(1<<16)\n"
         "  if not d: break\n"
         "  h.update(d);n+=len(d)\n"
         "print(n,h.hexdigest(),flush=True)\n";
}

std::string client(const std::string& dst, int mb, int seed) {
  return "import socket,hashlib,random,time\n"
         "r=random.Random(" + std::to_string(seed) + ");data=r.randbytes(" + std::to_string(mb) + "<<20)\n"
         "for i in range(100):\n"
         "  try:\n"
         "    s=socket.create_connection(('" + dst + "',5001),timeout=30);break\n"
         "  except ConnectionRefusedError: time.sleep(0.1)\n"
         "s.sendall(data);s.shutdown(socket.SHUT_WR);s.recv(1);s.close()\n"
         "print(len(data),hashlib.sha256(data).hexdigest())\n";
}

std::string icmp_echo(const std::string& dst) {
  return "import socket,struct,select\n"
         "def ck(b):\n"
         "  s=sum(struct.unpack('!%dH'%(len(b)//2),b));s=(s>>16)+(s&0xffff);s+=s>>16;return ~s&0xffff\n"
         "p=struct.pack('!BBHHH',8,0,0,0x78,1)+b'ofld'*8\n"
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

struct Variant {
  bool v6;                        // underlay
  std::vector<std::string> extra; // words after id/local/remote (both sides)
};

struct Pair {
  std::optional<io::Netns> A, B;
  pid_t ea = -1, eb = -1, cap = -1;
  std::string ctl_a, ctl_b, log_a, log_b, pcap;
  ~Pair() {
    stop(cap, SIGINT);
    stop(ea);
    stop(eb);
    if (!pcap.empty() && !std::getenv("OFLD_TEST_KEEP_PCAP")) ::unlink(pcap.c_str());
    for (const auto* l : {&log_a, &log_b})
      if (!l->empty()) ::unlink(l->c_str());
  }
};

std::string setup(Pair& p, const Variant& v, bool& skipped) {
  skipped = false;
  if (auto s = io::netns_available(); !s.ok()) {
    skipped = true;
    return s.message();
  }
  auto a = io::Netns::create("ofld-gnv");
  auto b = io::Netns::create("ofld-gnv");
  if (!a.ok() || !b.ok()) {
    skipped = a.is_skipped() || b.is_skipped();
    return a.ok() ? b.message() : a.message();
  }
  p.A.emplace(std::move(a.value()));
  p.B.emplace(std::move(b.value()));
  auto& A = *p.A;
  auto& B = *p.B;
  const std::string ua = v.v6 ? "fd00:79::1" : "10.79.0.1", ub = v.v6 ? "fd00:79::2" : "10.79.0.2";
  const std::string pl = v.v6 ? "/64" : "/24";
  for (auto* ns : {&A, &B}) ns->ip({"link", "set", "lo", "up"});
  if (auto s = A.ip({"link", "add", "veth0", "type", "veth", "peer", "name", "veth0", "netns", B.name()}); !s.ok())
    return s.message();
  for (auto [ns, ad] : {std::pair{&A, ua}, std::pair{&B, ub}}) {
    std::vector<std::string> add = {"addr", "add", ad + pl, "dev", "veth0"};
    if (v.v6) add.push_back("nodad");
    if (auto s = ns->ip(add); !s.ok()) return s.message();
    if (auto s = ns->exec({"ethtool", "-K", "veth0", "tx", "off"}); !s.ok()) return s.message();
    if (auto s = ns->ip({"link", "set", "veth0", "up"}); !s.ok()) return s.message();
  }
  const std::string tag = std::to_string(::getpid()) + "-" + A.name();
  p.ctl_a = "/run/ofld/gnv-" + tag + "-a.sock";
  p.ctl_b = "/run/ofld/gnv-" + tag + "-b.sock";
  p.log_a = "/tmp/ofld-gnv-" + tag + "-a.log";
  p.log_b = "/tmp/ofld-gnv-" + tag + "-b.log";
  p.pcap = "/tmp/ofld-gnv-" + tag + ".pcap";
  auto words = [&](const std::string& local, const std::string& remote) {
    std::vector<std::string> w = {"geneve", "id", "4242", "local", local, "remote", remote};
    w.insert(w.end(), v.extra.begin(), v.extra.end());
    return w;
  };
  // A: options first; B: options after the words (CLI accepts options anywhere).
  std::vector<std::string> ca = {"ip", "netns", "exec", A.name(), OFLD_CLI_PATH, "tunnel", "--dev",
                                 "ofld0", "--address", "192.168.79.1/24", "--control", p.ctl_a};
  auto wa = words(ua, ub);
  ca.insert(ca.end(), wa.begin(), wa.end());
  std::vector<std::string> cb = {"ip", "netns", "exec", B.name(), OFLD_CLI_PATH, "tunnel"};
  auto wb = words(ub, ua);
  cb.insert(cb.end(), wb.begin(), wb.end());
  cb.insert(cb.end(), {"--dev", "ofld0", "--address", "192.168.79.2/24", "--control", p.ctl_b});
  // Capture the underlay (first 3000 frames) for tshark's verdicts.
  p.cap = spawn({"ip", "netns", "exec", A.name(), "tcpdump", "-i", "veth0", "-n", "-U", "-c", "3000",
                 "-w", p.pcap}, "/dev/null");
  p.ea = spawn(ca, p.log_a);
  p.eb = spawn(cb, p.log_b);
  for (int i = 0; i < 100; ++i) {
    if (daemon::query_stats(p.ctl_a).ok() && daemon::query_stats(p.ctl_b).ok()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));  // tcpdump up
      return "";
    }
    for (auto* e : {&p.ea, &p.eb})
      if (::waitpid(*e, nullptr, WNOHANG) == *e) {
        *e = -1;
        return "ofld tunnel exited: " + slurp(p.log_a) + slurp(p.log_b);
      }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "ofld tunnel did not come up: " + slurp(p.log_a) + slurp(p.log_b);
}

std::pair<std::string, std::string> transfer(const io::Netns& from, const io::Netns& to,
                                             const std::string& dst, int mb, int seed) {
  const std::string slog = "/tmp/ofld-gnv-srv-" + to.name() + ".log";
  pid_t srv = spawn({"ip", "netns", "exec", to.name(), "python3", "-c", server(dst)}, slog);
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto c = from.exec({"python3", "-c", client(dst, mb, seed)}, std::chrono::seconds(60));
  int st = 0;
  for (int i = 0; i < 500 && ::waitpid(srv, &st, WNOHANG) != srv; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  stop(srv);
  std::string s = slurp(slog), cl = c.ok() ? c.value().out : "client failed: " + c.message();
  ::unlink(slog.c_str());
  while (!s.empty() && s.back() == '\n') s.pop_back();
  while (!cl.empty() && cl.back() == '\n') cl.pop_back();
  return {cl, s};
}

/// tshark field values, one line per frame (fields tab-separated).
std::vector<std::string> tshark_fields(const std::string& pcap, const std::string& filter,
                                       const std::vector<std::string>& fields) {
  std::vector<std::string> argv = {"tshark", "-n", "-r", pcap, "-o", "udp.check_checksum:TRUE",
                                   "-o", "tcp.check_checksum:TRUE", "-o", "ip.check_checksum:TRUE",
                                   "-Y", filter, "-T", "fields"};
  for (auto& f : fields) argv.insert(argv.end(), {"-e", f});
  auto r = io::run_command(argv, std::chrono::seconds(60));
  std::vector<std::string> lines;
  if (!r.ok()) return lines;
  std::istringstream in(r.value().out);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

void run_geneve(const Variant& v, const std::string& want_options) {
  if (!io::check_command({"tshark", "-v"}).ok()) GTEST_SKIP() << "tshark not installed";
  Pair p;
  bool skipped = false;
  const std::string why = setup(p, v, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  auto ping = p.A->exec({"python3", "-c", icmp_echo("192.168.79.2")}, std::chrono::seconds(20));
  ASSERT_TRUE(ping.ok()) << ping.message();
  EXPECT_EQ(ping.value().out, "reply\n") << slurp(p.log_a) << slurp(p.log_b);
  const long csum_err_a = snmp(*p.A, "Tcp", "InCsumErrors"), csum_err_b = snmp(*p.B, "Tcp", "InCsumErrors");
  ASSERT_GE(csum_err_a, 0);
  ASSERT_GE(csum_err_b, 0);
  auto [c1, s1] = transfer(*p.A, *p.B, "192.168.79.2", 8, 7);
  EXPECT_EQ(c1, s1) << "A -> B";
  EXPECT_NE(s1, "");
  auto [c2, s2] = transfer(*p.B, *p.A, "192.168.79.1", 8, 11);
  EXPECT_EQ(c2, s2) << "B -> A";
  EXPECT_NE(s2, "");
  // The receiving stacks' own verdict on every inner segment ofld delivered (RFC 9293 §3.1).
  EXPECT_EQ(snmp(*p.A, "Tcp", "InCsumErrors"), csum_err_a) << "TCP checksum errors in A";
  EXPECT_EQ(snmp(*p.B, "Tcp", "InCsumErrors"), csum_err_b) << "TCP checksum errors in B";
  for (const auto& ctl : {p.ctl_a, p.ctl_b}) {
    auto st = daemon::query_stats(ctl);
    ASSERT_TRUE(st.ok()) << st.message();
    const auto& j = st.value();
    SCOPED_TRACE(j.dump());
    EXPECT_EQ(j["mode"], "geneve");
    EXPECT_EQ(j["drops_total"].get<std::uint64_t>(), 0u);
    EXPECT_GT(j["tx"]["gso_super_packets"].get<std::uint64_t>(), 0u);  // TSO from the TAP, GSO here
    EXPECT_GT(j["rx"]["gro_aggregates"].get<std::uint64_t>(), 0u);     // GRO after decap
  }
  stop(p.cap, SIGINT);
  EXPECT_EQ(stop(p.ea), 0) << slurp(p.log_a);
  EXPECT_EQ(stop(p.eb), 0) << slurp(p.log_b);
  EXPECT_FALSE(p.A->exec({"ip", "link", "show", "ofld0"}).ok()) << "TAP still present after SIGTERM";
  // tshark's dissection: every datagram on 6081 is Geneve 0 / VNI 4242 / our options, outer
  // UDP checksum good; inner TCP checksum good (status 1, or the 0xFFFF form of a folded 0
  // that tshark reports as bad with calculated 0x0000 — C-14/C-29, see tunnel_modes_kernel_test).
  auto lines = tshark_fields(p.pcap, "udp.port == 6081 && !icmp && !(icmpv6.type < 128)",
                             {"geneve.version", "geneve.vni", "geneve.options", "udp.checksum.status",
                              "tcp.checksum.status", "tcp.checksum", "tcp.checksum_calculated",
                              "frame.number"});
  ASSERT_GT(lines.size(), 100u);
  std::size_t good = 0, tcp = 0, good_tcp = 0, hello = 0;
  std::string bad;
  for (auto& l : lines) {
    std::istringstream in(l);
    std::string ver, vni, opts, udp, t, field, calc;
    for (auto* s : {&ver, &vni, &opts, &udp, &t, &field, &calc}) std::getline(in, *s, '\t');
    // the peer sessions' HELLO / HELLO-ACK: Geneve version 1, VNI 0 (wire/peer_hello.hpp), a
    // prefix every Geneve receiver drops; their outer checksum is checked all the same
    if (ver == "1" && vni == "0x000000" && udp == "1") {
      ++hello;
      continue;
    }
    const bool zero = t == "0" && field == "0xffff" && calc == "0x0000";
    const bool ok = ver == "0" && vni == "0x001092" && opts == want_options && udp == "1";
    good += ok;
    if (!t.empty()) ++tcp, good_tcp += t == "1" || zero;
    if (!ok || (!t.empty() && t != "1" && !zero)) bad += l + "\n";
  }
  if (!bad.empty()) {
    const std::string kept = p.pcap + ".failed";
    ::rename(p.pcap.c_str(), kept.c_str());
    ADD_FAILURE() << "frames failing (version, vni, options, udp status, tcp status, tcp checksum, "
                     "calculated, number), capture kept in "
                  << kept << ":\n" << bad.substr(0, 4000);
  }
  EXPECT_EQ(good + hello, lines.size());
  EXPECT_GT(hello, 0u) << "no peer-session messages seen";
  EXPECT_LT(hello, 50u);
  EXPECT_GT(tcp, 100u);
  EXPECT_EQ(good_tcp, tcp) << "inner TCP checksums not all good";
}

}  // namespace

TEST(TunnelGeneveKernel, GN9_GN12_TcpBothWaysIpv4) { run_geneve({false, {}}, ""); }
TEST(TunnelGeneveKernel, GN9_GN12_TcpBothWaysIpv6) { run_geneve({true, {}}, ""); }
// 0102:01 (not critical) with 4 bytes, ffff:02 with 8: Opt Len 5 words
TEST(TunnelGeneveKernel, GN1_GN12_TcpBothWaysIpv4WithOptions) {
  run_geneve({false, {"options", "0102:01:00c0ffee,ffff:02:0000000100000002"}},
             "0102010100c0ffeeffff02020000000100000002");
}
TEST(TunnelGeneveKernel, GN1_GN12_TcpBothWaysIpv6WithOptions) {
  run_geneve({true, {"options", "0102:01:00c0ffee"}}, "0102010100c0ffee");
}
