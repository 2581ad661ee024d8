// The short cells of the `ofld tunnel` fault matrix (README "Fault matrix"; the long ones are
// bench/faults). Each runs bench/faultlab.py (root; its own namespaces flt<pid>{a,r,b}): two
// VXLAN endpoints whose underlay passes through a relay namespace that injects the fault,
// 2 MiB of seeded random data both ways at once over TCP, SHA-256 checked. Judged by: no byte
// corrupted (hashes), no crash or hang (both endpoints answer their control sockets; the
// transfers end), every loss explained by a counter (per direction: datagrams the endpoint
// sent = received by the relay; relayed = received by the other endpoint + its kernel's UDP
// checksum and receive-queue errors; endpoint drops by reason). Skipped without root,
// namespaces, python3 or nftables (corruption cells).
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "ofld/io/netns.hpp"

namespace {

using json = nlohmann::json;

/// Peer-session messages (HELLO/ACK) may be in flight when the counters are read: at most
/// this many datagrams per direction are left unexplained.
constexpr long kInFlight = 2;

json run_cell(const std::string& name, std::string& skip) {
  if (auto s = ofld::io::netns_available(); !s.ok()) {
    skip = s.message();
    return {};
  }
  const std::string tag = "flt" + std::to_string(::getpid() % 100000);
  auto r = ofld::io::run_command({"python3", std::string(OFLD_SOURCE_DIR) + "/bench/faultlab.py", "cell", name,
                                  "--size", "2", "--ofld", OFLD_CLI_PATH, "--tag", tag},
                                 std::chrono::seconds(150));
  if (!r.ok()) {
    skip = "python3: " + r.message();
    return {};
  }
  std::string out = r.value().out;  // the last line is the cell's JSON object
  while (!out.empty() && out.back() == '\n') out.pop_back();
  const auto nl = out.rfind('\n');
  auto j = json::parse(nl == std::string::npos ? out : out.substr(nl + 1), nullptr, false);
  if (j.is_discarded()) {
    ADD_FAILURE() << "faultlab " << name << " failed: " << out << r.value().err;
    return {};
  }
  std::printf("%s\n", j.dump().c_str());
  return j;
}

/// Judge a cell: intact, alive, accounted for.
void judge(const json& j, bool accounting = true) {
  ASSERT_FALSE(j.empty());
  EXPECT_TRUE(j["intact"].get<bool>()) << "a transfer was corrupted or did not complete: " << j["transfers"].dump();
  EXPECT_TRUE(j["alive"].get<bool>()) << "an endpoint exited or stopped answering";
  if (!accounting) return;
  for (const char* d : {"ab", "ba"}) {
    ASSERT_TRUE(j["accounting"].contains(d)) << j.dump();
    const auto& a = j["accounting"][d];
    EXPECT_LE(std::labs(a["unexplained_in"].get<long>()), kInFlight) << d << ": " << a.dump();
    EXPECT_LE(std::labs(a["unexplained_out"].get<long>()), kInFlight) << d << ": " << a.dump();
  }
}

long sum(const json& o) {
  long n = 0;
  for (const auto& v : o) n += v.get<long>();
  return n;
}

#define CELL(name, j)                      \
  std::string skip;                        \
  json j = run_cell(name, skip);           \
  if (!skip.empty()) GTEST_SKIP() << skip;

}  // namespace

// 10 % of the underlay datagrams lost each way: TCP retransmits, nothing corrupted; each lost
// datagram is the relay's `dropped`.
TEST(TunnelFault, UnderlayLoss10Percent) {
  CELL("loss10", j);
  judge(j);
  EXPECT_GT(j["relay"]["ab"]["dropped"].get<long>(), 0);
  EXPECT_GT(j["tcp_retrans"].get<long>(), 0);
}

// 5 % of the datagrams overtaken by the next one.
TEST(TunnelFault, UnderlayReordering) {
  CELL("reorder", j);
  judge(j);
  EXPECT_GT(j["relay"]["ab"]["reordered"].get<long>(), 0);
}

// 5 % of the datagrams delivered twice: each copy is decapsulated (the inner TCP discards the
// duplicate), none is dropped by the endpoint.
TEST(TunnelFault, UnderlayDuplication) {
  CELL("dup", j);
  judge(j);
  EXPECT_GT(j["relay"]["ab"]["duplicated"].get<long>(), 0);
  EXPECT_EQ(sum(j["drops"]["b"]), 0);
}

// 50 ms one-way delay each way (100 ms RTT).
TEST(TunnelFault, UnderlayDelay50ms) {
  CELL("delay50", j);
  judge(j);
}

// Bit corruption on the wire with the outer UDP checksum (udpcsum): every mangled datagram is
// caught by the receiving kernel (Udp InCsumErrors) before the endpoint sees it.
TEST(TunnelFault, UnderlayCorruptionCaughtByOuterUdpChecksum) {
  CELL("corrupt", j);
  judge(j);
  ASSERT_TRUE(j.contains("mangled"));
  EXPECT_GT(j["mangled"].get<long>(), 0);
  EXPECT_EQ(j["kernel_udp"]["b"]["InCsumErrors"].get<long>(), j["mangled"].get<long>());
}

// Without the outer checksum (noudpcsum) nothing on the underlay catches it: the mangled
// datagrams reach the endpoint, which decapsulates them; the inner TCP checksum is what
// refuses the damaged segments (checked by the receiving kernel: the endpoint hands frames
// to the TAP without vouching for a checksum it did not verify), so the data stays intact.
TEST(TunnelFault, UnderlayCorruptionWithoutOuterChecksumCaughtByInnerTcp) {
  CELL("corrupt_nocsum", j);
  judge(j);
  EXPECT_GT(j["mangled"].get<long>(), 0);
  EXPECT_EQ(j["kernel_udp"]["b"]["InCsumErrors"].get<long>(), 0);
  EXPECT_EQ(j["tcp_in_csum_errors"]["b"].get<long>(), j["mangled"].get<long>());
}

// The endpoint in A killed (SIGKILL) 1.5 s into the transfers and restarted 0.5 s later on its
// persistent TAP: both TCP transfers resume and complete intact. (Its counters restart, so
// datagram accounting does not apply.)
TEST(TunnelFault, EndpointKilledAndRestartedMidTransfer) {
  CELL("kill_restart", j);
  judge(j, false);
  EXPECT_TRUE(j.contains("killed_at_s"));
}

// A's TAP set down for 1 s mid-transfer: the frames decapsulated meanwhile cannot be written
// and are counted (drops rx_dev_write_failed = tap_write.failed); TCP resumes.
TEST(TunnelFault, TapLinkDownAndUp) {
  CELL("link_flap", j);
  judge(j);
  EXPECT_EQ(j["drops"]["a"].value("rx_dev_write_failed", 0L), j["tap_write_failed"]["a"].get<long>());
}

// The A-R link MTU lowered to 1400, below the 1500-byte outer packets: as the kernel VXLAN
// device with its default (df unset), the outer packets leave without DF and the underlay
// fragments them (IP fragments created in A, reassembled in R); nothing is lost.
TEST(TunnelFault, UnderlayMtuBelowOuterPacketFragments) {
  CELL("mtu_low", j);
  judge(j);
  EXPECT_GT(j["frag"]["a_FragCreates"].get<long>(), 0);
  EXPECT_GT(j["frag"]["r_ReasmOKs"].get<long>(), 0);
}

// 10,000 malformed datagrams per second for 4 s to B's port while it carries the transfers:
// every one is dropped and counted by reason (rx_truncated, rx_no_vni_flag, rx_wrong_vni),
// none disturbs the data.
TEST(TunnelFault, MalformedFloodWhileCarryingTraffic) {
  CELL("malformed", j);
  judge(j);
  const long sent = j["flood_sent"].get<long>();
  EXPECT_GT(sent, 30000);
  EXPECT_EQ(sum(j["drops"]["b"]) + j["kernel_udp"]["b"]["RcvbufErrors"].get<long>(), sent) << j["drops"].dump();
}
