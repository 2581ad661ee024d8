// BIG TCP in the GRO engine (spec G-16, G-17, N-5, N-11) and GSO of BIG TCP super-packets
// (X-27, F-10). Expected aggregate sizes are the running kernel's (6.18.44, veth GRO with the
// limits raised: the conformance cases big_tcp/*, which `ofld conformance gro` replays
// through the kernel); header values come from the rules (IPv4 total length 0 past 65535,
// N-5; header checksum over the written length, RFC 791), never from ofld's own output.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ofld/core/features.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/lab/gro_conformance.hpp"
#include "ofld/tools/gro_tool.hpp"
#include "ofld/tools/gso_tool.hpp"

using namespace ofld;
using Bytes = std::vector<std::uint8_t>;

namespace {

const lab::GroCase& big_case(const std::string& name) {
  static const std::vector<lab::GroCase> cases = lab::builtin_gro_cases();
  for (const auto& c : cases)
    if (c.name == name) return c;
  ADD_FAILURE() << "no case " << name;
  return cases.front();
}

std::uint16_t be16(const Bytes& b, std::size_t at) { return std::uint16_t(b[at] << 8 | b[at + 1]); }

// RFC 1071 over an IPv4 header: 0 when the header checksum is right.
std::uint16_t ip_sum(const Bytes& f, std::size_t off, std::size_t len) {
  std::uint32_t s = 0;
  for (std::size_t i = 0; i < len; i += 2) s += be16(f, off + i);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return std::uint16_t(~s);
}

struct Out {
  std::vector<Bytes> frames;
  std::vector<std::size_t> payloads;  ///< TCP payload bytes per delivered frame
  std::vector<core::Packet> pkts;
};

Out run(const lab::GroCase& c, bool ipv6_big_tcp = false) {
  gro::EngineOptions eo;
  eo.batch = 64;
  eo.config.flow_hash_key = tools::kGroPcapFlowHashKey;
  if (c.gro_max_size) eo.config.gro_max_size = c.gro_max_size;
  if (c.gro_ipv4_max_size) eo.config.gro_ipv4_max_size = c.gro_ipv4_max_size;
  eo.config.ipv6_big_tcp = ipv6_big_tcp;
  gro::Engine e(eo);
  for (const auto& f : c.frames) e.receive(core::Packet::from_bytes(f));
  e.flush_all();
  Out o;
  o.pkts = e.take_output();
  for (auto& p : o.pkts) {
    Bytes b = p.to_bytes();
    const bool v6 = be16(b, 12) == 0x86DD;
    const std::size_t l4 = v6 ? 14 + 40 : 14 + std::size_t(b[14] & 0x0F) * 4;
    o.payloads.push_back(b.size() - l4 - std::size_t(b[l4 + 12] >> 4) * 4);
    o.frames.push_back(std::move(b));
  }
  return o;
}

}  // namespace

// G-16/G-17/N-5: with gro_ipv4_max_size 185000, twenty 8000-byte segments become one 160000-
// byte aggregate (as the kernel delivers it); its IPv4 total length is 0 (over 65535) and the
// header checksum is right for the length written; gso_size is the segment size.
TEST(GroBigTcp, G17_N5_Ipv4AggregatesPast64kWithTotalLengthZero) {
  const auto& c = big_case("big_tcp/ipv4");
  ASSERT_EQ(c.gro_ipv4_max_size, 185000u);
  Out o = run(c);
  EXPECT_EQ(o.payloads, c.expect_payloads);
  ASSERT_EQ(o.frames.size(), 1u);
  const Bytes& f = o.frames[0];
  EXPECT_EQ(f.size(), 14u + 20 + 20 + 160000);
  EXPECT_EQ(be16(f, 16), 0u);          // total length 0: BIG TCP
  EXPECT_EQ(ip_sum(f, 14, 20), 0u);    // header checksum over total length 0
  EXPECT_EQ(o.pkts[0].gso.size, 8000u);
  // the payload is the twenty segments' payload in order
  for (std::size_t i = 0; i < c.frames.size(); ++i)
    ASSERT_TRUE(std::equal(c.frames[i].begin() + 54, c.frames[i].end(),
                           f.begin() + long(54 + 8000 * i)))
        << i;
}

// G-16: the aggregate stays below gro_ipv4_max_size (80000: nine segments, 72040 bytes from
// the IP header; a tenth would make 80040), as the kernel does.
TEST(GroBigTcp, G16_Ipv4AggregateStopsBelowTheLimit) {
  const auto& c = big_case("big_tcp/ipv4_limit");
  Out o = run(c);
  EXPECT_EQ(o.payloads, c.expect_payloads);
  for (const auto& f : o.frames) EXPECT_EQ(be16(f, 16), 0u) << "72040 > 65535";
}

// Default limits (65536): both families stop below 64 KiB.
TEST(GroBigTcp, G16_DefaultLimitsKeepAggregatesBelow64k) {
  for (const char* n : {"big_tcp/ipv4_default", "big_tcp/ipv6_default"}) {
    SCOPED_TRACE(n);
    const auto& c = big_case(n);
    Out o = run(c);
    EXPECT_EQ(o.payloads, c.expect_payloads);
    for (const auto& f : o.frames) EXPECT_LE(f.size() - 14, 65535u);
  }
}

// IPv6: the 6.18 kernel stops IPv6 aggregates below 65536 bytes even with gro_max_size
// 185000 (case big_tcp/ipv6); ofld's default does the same. With ipv6_big_tcp the aggregate
// grows to the limit with payload length 0 and no hop-by-hop header (the form tcpdump's
// bigtcp-ipv6.pcap shows: next header TCP, length from the frame).
TEST(GroBigTcp, G17_N11_Ipv6PayloadLengthZeroOnlyWithIpv6BigTcp) {
  const auto& c = big_case("big_tcp/ipv6");
  Out o = run(c);
  EXPECT_EQ(o.payloads, c.expect_payloads);

  Out b = run(c, true);
  ASSERT_EQ(b.frames.size(), 1u);
  const Bytes& f = b.frames[0];
  EXPECT_EQ(b.payloads[0], 160000u);
  EXPECT_EQ(be16(f, 14 + 4), 0u);  // payload length 0
  EXPECT_EQ(f[14 + 6], 6u);        // next header TCP: no hop-by-hop header inserted
  EXPECT_EQ(f.size(), 14u + 40 + 20 + 160000);
  EXPECT_EQ(b.pkts[0].gso.size, 8000u);
}

// GSO of the kernel-shaped BIG TCP aggregate gives back the original segments: the
// 160000-byte IPv4 aggregate (total length 0) through `ofld gso --mss 8000`.
TEST(GroBigTcp, X36_GsoOfTheBigAggregateGivesTheSegmentsBack) {
  const auto& c = big_case("big_tcp/ipv4");
  Out o = run(c);
  ASSERT_EQ(o.frames.size(), 1u);
  const std::string in = ::testing::TempDir() + "gro_big_tcp_in.pcap";
  const std::string out = ::testing::TempDir() + "gro_big_tcp_out.pcap";
  {
    io::PcapWriter w(in, io::CaptureLink::Ethernet);
    io::PcapRecord r;
    r.data = o.frames[0];
    r.caplen = r.len = std::uint32_t(r.data.size());
    w.write(r);
  }
  tools::GsoToolOptions g;
  g.in = in;
  g.out = out;
  g.mss = 8000;
  g.csum_partial = true;  // the engine leaves the aggregate's TCP field as the seed (K-4)
  auto s = tools::run_gso_pcap(g);
  EXPECT_EQ(s.dropped, 0u);
  auto pf = io::read_pcap(out);
  ASSERT_EQ(pf.records.size(), c.frames.size());
  for (std::size_t i = 0; i < c.frames.size(); ++i) {
    const Bytes& seg = pf.records[i].data;
    const Bytes& orig = c.frames[i];
    ASSERT_EQ(seg.size(), orig.size()) << i;
    EXPECT_EQ(be16(seg, 16), 20u + 20 + 8000) << i;  // total length per segment
    EXPECT_EQ(ip_sum(seg, 14, 20), 0u) << i;
    // TCP header and payload equal the original's (sequence numbers, checksum included)
    EXPECT_TRUE(std::equal(seg.begin() + 34, seg.end(), orig.begin() + 34)) << i;
  }
}

// an IPv6 super-packet in the older BIG TCP form (tcpdump's bigtcp-ipv6-hbh.pcap:
// payload length 0, an 8-byte Jumbo hop-by-hop header before TCP) is segmented without the
// hop-by-hop header, as the kernel does (ipv6_gso_segment; `ofld conformance gso` on the
// capture agrees byte for byte); every segment's payload length is its own.
TEST(GsoBigTcp, X27_JumboHopByHopIsRemovedFromTheSegments) {
  const std::string in = std::string(OFLD_SOURCE_DIR) + "/tests/data/tcpdump/bigtcp-ipv6-hbh.pcap";
  const std::string out = ::testing::TempDir() + "gso_big_tcp_hbh.pcap";
  tools::GsoToolOptions g;
  g.in = in;
  g.out = out;
  g.mss = 1448;
  g.csum_partial = true;
  auto s = tools::run_gso_pcap(g);
  EXPECT_EQ(s.dropped, 0u);
  EXPECT_EQ(s.gso_frames, 1u);
  auto pf = io::read_pcap(out);
  // 80000 payload bytes / 1448 = 55 full segments and one of 360
  ASSERT_EQ(pf.records.size(), 56u);
  for (const auto& r : pf.records) {
    const Bytes& f = r.data;
    EXPECT_EQ(f[14 + 6], 6u);  // next header TCP
    EXPECT_EQ(be16(f, 14 + 4), f.size() - 14 - 40);
  }
  EXPECT_EQ(pf.records.front().data.size(), 14u + 40 + 32 + 1448);
  EXPECT_EQ(pf.records.back().data.size(), 14u + 40 + 32 + 80000 - 55 * 1448);
}

// F-10: a device with TSO takes a super-packet whole only below its gso_max_size /
// gso_ipv4_max_size; tcpdump's 80066-byte IPv4 BIG TCP packet is segmented in software with
// the default limit (65536) and handed over whole with gso_ipv4_max_size 185000.
TEST(GsoBigTcp, F10_GsoIpv4MaxSizeDecidesSoftwareSegmentation) {
  const std::string in = std::string(OFLD_SOURCE_DIR) + "/tests/data/tcpdump/bigtcp-ipv4.pcap";
  tools::GsoToolOptions g;
  g.in = in;
  g.out = ::testing::TempDir() + "gso_big_tcp_v4.pcap";
  g.mss = 1448;
  g.csum_partial = true;
  g.features = "tx-checksum-ip-generic,scatter-gather,tx-tcp-segmentation";
  g.have_features = true;
  auto a = tools::run_gso_pcap(g);
  EXPECT_EQ(a.gso_frames, 1u);
  EXPECT_EQ(a.hw_frames, 0u);
  g.gso_ipv4_max_size = 185000;
  auto b = tools::run_gso_pcap(g);
  EXPECT_EQ(b.gso_frames, 0u);
  EXPECT_EQ(b.hw_frames, 1u);
  EXPECT_EQ(b.frames_out, 1u);
}

// X-7 against X-8 on tcpdump's BIG TCP captures (IPv4 with total length 0, IPv6 with payload
// length 0, IPv6 with the Jumbo hop-by-hop header that segmentation removes, X-27): a device
// with scatter-gather and checksum offload gets its segments as one header slab plus slices
// of the payload pages (gso_segment_batch), one with checksum offload alone gets the payload
// copied; what reaches the capture is the same frames, byte for byte.
TEST(GsoBigTcp, X7_X8_X27_SgSlabAndCopyGiveTheSameFrames) {
  for (const char* name : {"bigtcp-ipv4.pcap", "bigtcp-ipv6.pcap", "bigtcp-ipv6-hbh.pcap"}) {
    std::vector<Bytes> frames[2];
    for (int sg = 0; sg < 2; ++sg) {
      tools::GsoToolOptions g;
      g.in = std::string(OFLD_SOURCE_DIR) + "/tests/data/tcpdump/" + name;
      g.out = ::testing::TempDir() + "gso_big_tcp_slab.pcap";
      g.mss = 1448;
      g.csum_partial = true;
      g.have_features = true;
      g.features = sg ? "tx-scatter-gather,tx-checksum-ip-generic" : "tx-checksum-ip-generic";
      auto s = tools::run_gso_pcap(g);
      EXPECT_EQ(s.dropped, 0u) << name;
      EXPECT_EQ(s.gso_frames, 1u) << name;
      EXPECT_EQ(s.counters.payload_bytes_referenced > 0, sg == 1) << name;
      for (auto& r : io::read_pcap(g.out).records) frames[sg].push_back(r.data);
    }
    ASSERT_GT(frames[0].size(), 50u) << name;
    EXPECT_EQ(frames[1], frames[0]) << name;
  }
}
