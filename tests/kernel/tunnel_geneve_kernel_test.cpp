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
#include "netns_pair.hpp"
#include "proc_util.hpp"
#include "traffic.hpp"

namespace {

using namespace ofld;
using ktest::slurp;
using ktest::spawn;
using ktest::stop;

struct Variant {
  bool v6;                        // underlay
  std::vector<std::string> extra; // words after id/local/remote (both sides)
};

using Pair = ktest::TunnelPair;

std::string setup(Pair& p, const Variant& v, bool& skipped) {
  return ktest::start_tunnel_pair(
      p,
      {.prefix = "ofld-gnv",
       .v6 = v.v6,
       .net = 79,
       .words =
           [&](const std::string& local, const std::string& remote) {
             std::vector<std::string> w = {"geneve", "id", "4242", "local", local, "remote", remote};
             w.insert(w.end(), v.extra.begin(), v.extra.end());
             return w;
           }},
      skipped);
}

void run_geneve(const Variant& v, const std::string& want_options) {
  if (!io::check_command({"tshark", "-v"}).ok()) GTEST_SKIP() << "tshark not installed";
  Pair p;
  bool skipped = false;
  const std::string why = setup(p, v, skipped);
  if (skipped) GTEST_SKIP() << why;
  ASSERT_EQ(why, "");
  if (!ktest::expect_echo_and_transfers(p, 79)) return;
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
  auto lines = ktest::tshark_fields(p.pcap, "udp.port == 6081 && !icmp && !(icmpv6.type < 128)",
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
