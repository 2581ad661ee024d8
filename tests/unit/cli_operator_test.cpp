// Operator-facing behaviour of the `ofld` command found by a new user (runs the real binary,
// OFLD_CLI_PATH): options accepted after the tunnel words, `ofld demo --rco --kernel-peer`
// refused up front (spec K-1: kernel RCO receive is broken, the run could only time out).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "ofld/lab/demo.hpp"
#include "ofld/io/netns.hpp"
#include "ofld/io/pcap.hpp"

#include <nlohmann/json.hpp>

namespace {

using namespace ofld;

io::CmdResult run(std::vector<std::string> args) {
  args.insert(args.begin(), OFLD_CLI_PATH);
  auto r = io::run_command(args, std::chrono::seconds(20));
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value() : io::CmdResult{};
}

TEST(CliOperator, TunnelOptionsAfterTheWords) {
  // --dev after the words used to be refused by the command line parser; now the words are
  // parsed and the configuration error (GUE without a port) is what comes back.
  auto r = run({"tunnel", "gue", "local", "10.0.0.1", "remote", "10.0.0.2", "--dev", "t9",
                "--control", "/tmp/nonexistent.sock"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("port"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("not expected"), std::string::npos) << r.err;
  auto v = run({"tunnel", "vxlan", "id", "1", "local", "10.0.0.1", "--dev", "v9"});
  EXPECT_EQ(v.exit_code, 2);
  EXPECT_NE(v.err.find("remote"), std::string::npos) << v.err;  // reached the vxlan checks
}

TEST(CliOperator, K1_DemoRcoWithKernelPeerRefusedUpFront) {
  daemon::DemoOptions o;
  o.rco = true;
  o.kernel_peer = true;
  auto why = daemon::demo_refusal(o);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("K-1"), std::string::npos);
  o.kernel_peer = false;
  EXPECT_FALSE(daemon::demo_refusal(o));  // two ofld endpoints with RCO are fine
  o.kernel_both = true;
  EXPECT_TRUE(daemon::demo_refusal(o));
  auto r = run({"demo", "--rco", "--kernel-peer", "--seconds", "1"});
  EXPECT_EQ(r.exit_code, 2);  // a usage refusal, before any namespace is made (root or not)
  EXPECT_NE(r.err.find("--rco"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("K-1"), std::string::npos) << r.err;
}

// QA: `-o -` writes the capture to standard output (libpcap's name for stdout). The report
// used to go to stdout too: `csum fix` interleaved its per-frame lines and summary with the
// pcap bytes (tshark: "appears to be damaged or corrupt"), and `gso`/`gro` lost their summary
// (libpcap closes stdout with the capture). Now stdout is exactly the capture and the report
// is on stderr, for every command that writes one.
TEST(CliOperator, CaptureToStdoutKeepsTheReportOnStderr) {
  const std::string pcaps = std::string(OFLD_PCAP_DIR) + "/";
  struct C {
    std::vector<std::string> args;
    std::size_t frames;
    std::string report;
  } cases[] = {
      {{"csum", "fix", pcaps + "zeek_chksums_ip4-bad-chksum.pcap", "-o", "-"}, 1, "fix: 1 field"},
      {{"csum", "fix", pcaps + "zeek_chksums_ip4-bad-chksum.pcap", "-o", "-", "--json"}, 1,
       "\"fields_rewritten\": 1"},
      {{"gso", pcaps + "tcpdump_gso-ipv4.pcap", "-o", "-", "--mss", "1448", "--csum-partial"}, 5,
       "frames in 1, out 5"},
      {{"gro", pcaps + "tcpdump_vxlan.pcap", "-o", "-"}, 10, "10 frames in, 10 frames out"},
  };
  const std::string path = "/tmp/ofld_cli_stdout_test.pcap";
  for (const auto& c : cases) {
    auto r = run(c.args);
    EXPECT_EQ(r.exit_code, 0) << c.args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(c.report), std::string::npos) << c.args[0] << " stderr: " << r.err;
    {
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << r.out;
    }
    try {
      auto cap = io::read_pcap(path);  // throws on any byte after the last record
      EXPECT_EQ(cap.records.size(), c.frames) << c.args[0];
    } catch (const std::exception& e) {
      ADD_FAILURE() << c.args[0] << ": stdout is not a clean pcap: " << e.what();
    }
  }
  std::remove(path.c_str());
}

// QA: a capture cut short inside a record makes every command exit 1 with a warning on
// stderr; `gso --json` and `gro --json` also say so in the JSON ("input_cut_short"), but
// `csum verify --json` / `csum fix --json` did not, so a JSON reader saw exit 1 with no bad
// checksum and no reason. Same key now in all four.
TEST(CliOperator, CutShortCaptureNamedInEveryJsonReport) {
  const std::string src = std::string(OFLD_PCAP_DIR) + "/tcpdump_vxlan.pcap";
  const std::string cut = "/tmp/ofld_cli_cut_short.pcap", out = "/tmp/ofld_cli_cut_short_out.pcap";
  {
    std::ifstream i(src, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(i)), std::istreambuf_iterator<char>());
    ASSERT_GT(bytes.size(), 500u);
    std::ofstream o(cut, std::ios::binary | std::ios::trunc);
    o << bytes.substr(0, 500);  // ends inside record 4
  }
  const std::vector<std::vector<std::string>> cmds = {
      {"csum", "verify", cut, "--json"},
      {"csum", "fix", cut, "-o", out, "--json"},
      {"gso", cut, "-o", out, "--mss", "100", "--json"},
      {"gro", cut, "-o", out, "--json"},
  };
  for (const auto& c : cmds) {
    auto r = run(c);
    EXPECT_EQ(r.exit_code, 1) << c[0] << " " << c[1];
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << c[0] << " " << c[1] << ": " << r.out;
    ASSERT_TRUE(j.contains("input_cut_short")) << c[0] << " " << c[1];
    EXPECT_NE(j["input_cut_short"].get<std::string>().find("record 4"), std::string::npos);
  }
  std::remove(cut.c_str());
  std::remove(out.c_str());
}

// QA: `ofld bench csum --sizes 0` answered "Value 0 not in range 0.000000 to 1797693...
// (300 digits)", and `--sizes 99999999999999` ran out of memory ("ofld: error:
// std::bad_alloc"). Both are usage errors naming --sizes and its real range, before any work.
TEST(CliOperator, BenchCsumSizesOutOfRangeNamedUpFront) {
  for (const char* v : {"0", "99999999999999", "-1"}) {
    auto r = run({"bench", "csum", "--reps", "1", "--sizes", v});
    EXPECT_EQ(r.exit_code, 2) << v;
    EXPECT_NE(r.err.find("--sizes"), std::string::npos) << v << ": " << r.err;
    EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << v << ": " << r.err;
    EXPECT_LT(r.err.size(), 200u) << v << ": " << r.err;
  }
}

// `ofld csum verify` reassembles fragments and says which frames made each
// datagram, in the text and in the JSON. Expected frame lists are tshark's (ip.fragment /
// ipv6.fragment with ip.defragment / ipv6.defragment on) for the public captures.
TEST(CliOperator, CsumVerifyNamesTheFramesOfEachDatagram) {
  const std::string pcaps = std::string(OFLD_PCAP_DIR) + "/";
  struct C {
    std::string file;
    std::uint64_t frame;
    std::vector<std::uint64_t> frames;
    std::string kind;
  } cases[] = {
      {"pcapplusplus_ip4_fragments.pcap", 6, {1, 2, 3, 4, 5, 6}, "udp"},
      // tshark's list {43..50, 52, 53} holds 4 identical duplicates (44, 46, 48, 52 repeat
      // the offsets of 43, 45, 47, 50): ofld names them apart ("duplicates")
      {"pcapplusplus_ip4_fragments.pcap", 53, {43, 45, 47, 49, 50, 53}, "udp"},
      {"pcapplusplus_ip6_fragments.pcap", 7, {1, 2, 3, 4, 5, 6, 7}, "udp"},
      {"zeek_erspan.pcap", 155, {153, 154, 155}, "tcp"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file + " frame " + std::to_string(c.frame));
    auto r = run({"csum", "verify", pcaps + c.file, "--json"});
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.out.substr(0, 300);
    bool found = false;
    for (const auto& f : j["frames"]) {
      if (f["frame"].get<std::uint64_t>() != c.frame) continue;
      ASSERT_TRUE(f.contains("datagrams")) << f.dump();
      ASSERT_EQ(f["datagrams"].size(), 1u) << f.dump();
      const auto& d = f["datagrams"][0];
      EXPECT_EQ(d["frames"].get<std::vector<std::uint64_t>>(), c.frames);
      if (c.frame == 53) {
        EXPECT_EQ(d["duplicates"].get<std::vector<std::uint64_t>>(),
                  (std::vector<std::uint64_t>{44, 46, 48, 52}));
      }
      ASSERT_FALSE(d["fields"].empty());
      EXPECT_EQ(d["fields"].back()["kind"], c.kind);
      found = true;
    }
    EXPECT_TRUE(found);
    EXPECT_GT(j["summary"]["datagrams"].get<std::uint64_t>(), 0u);
    auto t = run({"csum", "verify", pcaps + c.file});
    std::string list;
    for (auto n : c.frames) list += (list.empty() ? "" : ",") + std::to_string(n);
    EXPECT_NE(t.out.find("frames " + list), std::string::npos) << t.out.substr(0, 600);
  }
}

// `ofld gro --features` takes ethtool names as `ofld gso` does; the old flag
// stays an alias. Without rx-gro (NETIF_F_GRO, spec G-1) nothing is merged; rx-udp-gro-
// forwarding is NETIF_F_GRO_UDP_FWD (U-3), rx-gro-list NETIF_F_GRO_FRAGLIST (T-4).
TEST(CliOperator, GroFeaturesTakesEthtoolNames) {
  const std::string pcaps = std::string(OFLD_PCAP_DIR) + "/";
  const std::string out = "/tmp/ofld_cli_gro_features_" + std::to_string(::getpid()) + ".pcap";
  auto gro = [&](const std::string& file, std::vector<std::string> extra) {
    std::vector<std::string> a = {"gro", pcaps + file, "-o", out, "--json"};
    a.insert(a.end(), extra.begin(), extra.end());
    auto r = run(a);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.out;
    return j;
  };
  const std::string quic = "zeek_quic_firefox-102.13.0esr-blog-cloudflare-com.pcap";
  const std::string tcp = "suricata_http-body-hook-01.pcap";
  // U-3: UDP GRO forwarding merges this QUIC capture; the alias and the ethtool name agree.
  auto fwd_alias = gro(quic, {"--udp-gro-fwd"});
  auto fwd_name = gro(quic, {"--features", "rx-gro,rx-udp-gro-forwarding"});
  auto plain = gro(quic, {"--features", "rx-gro"});
  EXPECT_GT(fwd_name["merged"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(plain["merged"].get<std::uint64_t>(), 0u);  // no socket, no forwarding: U-3
  EXPECT_EQ(fwd_alias["merged"], fwd_name["merged"]);
  EXPECT_EQ(fwd_alias["frames_out"], fwd_name["frames_out"]);
  // G-1: without rx-gro (ethtool group generic-receive-offload) nothing merges.
  for (const char* f : {"none", "rx-udp-gro-forwarding", "tx-checksum-ip-generic"}) {
    auto off = gro(tcp, {"--features", f});
    EXPECT_EQ(off["merged"].get<std::uint64_t>(), 0u) << f;
    EXPECT_EQ(off["frames_out"], off["frames_in"]) << f;
  }
  auto on = gro(tcp, {"--features", "generic-receive-offload"});
  auto dflt = gro(tcp, {});
  EXPECT_GT(on["merged"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(on["merged"], dflt["merged"]);  // the default device has rx-gro on (netdev default)
  // T-4: rx-gro-list makes these TCP flows (no local socket) fraglist aggregates.
  auto fl = gro(tcp, {"--features", "rx-gro,rx-gro-list"});
  EXPECT_NE(fl.dump(), on.dump());
  EXPECT_EQ(fl["features"], (std::vector<std::string>{"rx-gro", "rx-gro-list"}));
  // an unknown name is a usage error naming it
  auto bad = run({"gro", pcaps + tcp, "-o", out, "--features", "rx-gro,rx-frobnicate"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("rx-frobnicate"), std::string::npos) << bad.err;
  std::remove(out.c_str());
}

}  // namespace
