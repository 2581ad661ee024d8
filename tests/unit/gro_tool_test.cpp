// `ofld gro` library side (tools::run_gro_pcap) on the link types the reader accepts.
//
// QA: the README reads Ethernet, Linux cooked (SLL, SLL2) and raw IP captures, but `ofld gro`
// passed every non-Ethernet frame through untouched ("packets in 0" for
// pcapplusplus_four_ipv6_http_streams.pcap, LINKTYPE_RAW), saying so only in the JSON's
// "non_ethernet". Now the same traffic merges the same way whatever the link type, and every
// output frame carries the capture's own link header.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/gro_tool.hpp"

using namespace ofld;

namespace {

using Bytes = std::vector<std::uint8_t>;

// The capture's Ethernet frames re-framed for `link` (the Ethernet source address becomes the
// SLL/SLL2 link address; raw IP drops the link header).
Bytes reframe(const Bytes& e, io::CaptureLink link) {
  const Bytes mac(e.begin() + 6, e.begin() + 12), body(e.begin() + 14, e.end());
  Bytes h;
  switch (link) {
    case io::CaptureLink::LinuxSll:
      h = {0, 0, 0, 1, 0, 6};
      h.insert(h.end(), mac.begin(), mac.end());
      h.insert(h.end(), {0, 0, e[12], e[13]});
      break;
    case io::CaptureLink::LinuxSll2:
      h = {e[12], e[13], 0, 0, 0, 0, 0, 2, 0, 1, 0, 6};
      h.insert(h.end(), mac.begin(), mac.end());
      h.insert(h.end(), {0, 0});
      break;
    default: break;
  }
  h.insert(h.end(), body.begin(), body.end());
  return h;
}

std::size_t link_len(io::CaptureLink link) {
  return link == io::CaptureLink::LinuxSll ? 16 : link == io::CaptureLink::LinuxSll2 ? 20 : 0;
}

void write_capture(const std::string& path, io::CaptureLink link, const io::PcapFile& src) {
  io::PcapWriter w(path, link);
  for (const auto& r : src.records) {
    io::PcapRecord o = r;
    o.data = reframe(r.data, link);
    o.caplen = std::uint32_t(o.data.size());
    o.len = r.len - std::uint32_t(r.data.size()) + o.caplen;
    w.write(o);
  }
  w.close();
}

}  // namespace

TEST(GroTool, CookedAndRawIpCapturesMergeLikeEthernet) {
  // A single IPv6 bulk flow, 2007 frames (MANIFEST.tsv: 1222 × 1408 B coalescable segments).
  const std::string in = std::string(OFLD_PCAP_DIR) + "/suricata_http-body-hook-01.pcap";
  const std::string out_eth = "/tmp/ofld_gro_tool_eth.pcap";
  tools::GroPcapOptions o;
  auto ref = tools::run_gro_pcap(in, out_eth, o);
  ASSERT_GT(ref.counters.merged, 0u);
  const auto ref_out = io::read_pcap(out_eth);
  const auto src = io::read_pcap(in);
  for (auto link : {io::CaptureLink::LinuxSll, io::CaptureLink::LinuxSll2, io::CaptureLink::RawIp,
                    io::CaptureLink::Ipv6}) {
    SCOPED_TRACE(io::capture_link_name(link));
    const std::string cin = "/tmp/ofld_gro_tool_in.pcap", cout = "/tmp/ofld_gro_tool_out.pcap";
    write_capture(cin, link, src);
    auto r = tools::run_gro_pcap(cin, cout, o);
    EXPECT_EQ(r.non_ethernet, 0u);
    EXPECT_EQ(r.frames_in, ref.frames_in);
    EXPECT_EQ(r.frames_out, ref.frames_out);
    EXPECT_EQ(r.counters.packets_in, ref.counters.packets_in);
    EXPECT_EQ(r.counters.merged, ref.counters.merged);
    EXPECT_EQ(r.counters.aggregates, ref.counters.aggregates);
    const auto got = io::read_pcap(cout);
    EXPECT_EQ(got.link, link);
    ASSERT_EQ(got.records.size(), ref_out.records.size());
    for (std::size_t i = 0; i < got.records.size(); ++i) {
      ASSERT_EQ(got.records[i].data, reframe(ref_out.records[i].data, link)) << "frame " << i;
      ASSERT_EQ(got.records[i].data.size(), ref_out.records[i].data.size() - 14 + link_len(link));
    }
    std::remove(cin.c_str());
    std::remove(cout.c_str());
  }
  std::remove(out_eth.c_str());
}

// Frames whose link headers differ (here: two source addresses alternating in one flow) merge
// exactly as the same frames over Ethernet with two alternating source MACs do (GRO compares
// the MAC header), and each aggregate keeps its own link header.
TEST(GroTool, DifferentLinkHeadersMergeAsDifferentMacHeaders) {
  const std::string in = std::string(OFLD_PCAP_DIR) + "/suricata_http-body-hook-01.pcap";
  auto src = io::read_pcap(in);
  src.records.resize(300);
  for (std::size_t i = 0; i < src.records.size(); ++i)
    src.records[i].data[11] ^= std::uint8_t((i / 3) & 1);  // source MAC: 3 frames A, 3 frames B
  const std::string ein = "/tmp/ofld_gro_tool_in2e.pcap", eout = "/tmp/ofld_gro_tool_out2e.pcap";
  const std::string cin = "/tmp/ofld_gro_tool_in2.pcap", cout = "/tmp/ofld_gro_tool_out2.pcap";
  write_capture(cin, io::CaptureLink::LinuxSll, src);
  {
    io::PcapWriter w(ein, io::CaptureLink::Ethernet);
    for (const auto& r : src.records) w.write(r);
  }
  tools::GroPcapOptions o;
  auto e = tools::run_gro_pcap(ein, eout, o);
  auto r = tools::run_gro_pcap(cin, cout, o);
  EXPECT_GT(e.counters.merged, 0u);
  EXPECT_EQ(r.counters.merged, e.counters.merged);
  EXPECT_EQ(r.frames_out, e.frames_out);
  const auto got = io::read_pcap(cout), want = io::read_pcap(eout);
  ASSERT_EQ(got.records.size(), want.records.size());
  for (std::size_t i = 0; i < got.records.size(); ++i)
    EXPECT_EQ(got.records[i].data, reframe(want.records[i].data, io::CaptureLink::LinuxSll)) << i;
  for (const auto& f : {ein, eout, cin, cout}) std::remove(f.c_str());
}

namespace {

// Key of a TCP segment in an Ethernet/IPv4|IPv6 (no extension headers) frame: addresses, ports,
// sequence and acknowledgment numbers, and whether it carries data (a pure ACK shares its seq
// with the next data segment); empty for anything else.
std::string tcp_seq_key(const Bytes& f) {
  if (f.size() < 14) return {};
  const unsigned type = unsigned(f[12]) << 8 | f[13];
  std::size_t ip = 14, l4 = 0, a = 0, alen = 0;
  if (type == 0x0800 && f.size() >= 34 && f[23] == 6) l4 = ip + std::size_t(f[ip] & 0xF) * 4, a = ip + 12, alen = 8;
  else if (type == 0x86DD && f.size() >= 54 && f[20] == 6) l4 = ip + 40, a = ip + 8, alen = 32;
  if (!l4 || f.size() < l4 + 8) return {};
  std::string k(f.begin() + long(a), f.begin() + long(a + alen));
  if (f.size() < l4 + 20) return {};
  k.append(f.begin() + long(l4), f.begin() + long(l4 + 12));  // ports, seq, ack
  const std::size_t end = type == 0x0800 ? ip + (std::size_t(f[16]) << 8 | f[17])
                                         : ip + 40 + (std::size_t(f[18]) << 8 | f[19]);
  k.push_back(end > l4 + std::size_t(f[l4 + 12] >> 4) * 4 ? 'd' : 'a');
  return k;
}

}  // namespace

// Each output frame carries the capture time of its own first frame (skb->tstamp; the README
// and gro_tool.hpp promise "timestamps of the aggregate's first frame"); it used to carry the
// time of the frame whose arrival flushed it (found by the fresh-user run).
TEST(GroTool, OutputCarriesTheFirstFramesTimestamp) {
  const std::string in = std::string(OFLD_PCAP_DIR) + "/suricata_http-body-hook-01.pcap";
  const std::string out = "/tmp/ofld_gro_tool_ts.pcap";
  auto r = tools::run_gro_pcap(in, out, {});
  ASSERT_GT(r.counters.aggregates, 0u);
  // Times of every input frame by key (a retransmission repeats a key with a later time).
  std::map<std::string, std::vector<std::pair<std::int64_t, std::uint32_t>>> seen;
  for (const auto& rec : io::read_pcap(in).records)
    if (auto k = tcp_seq_key(rec.data); !k.empty()) seen[k].push_back({rec.ts_sec, rec.ts_nsec});
  std::size_t checked = 0, aggregates_checked = 0;
  for (const auto& rec : io::read_pcap(out).records) {
    auto k = tcp_seq_key(rec.data);
    auto it = seen.find(k);
    if (k.empty() || it == seen.end()) continue;
    const std::pair<std::int64_t, std::uint32_t> ts{rec.ts_sec, rec.ts_nsec};
    EXPECT_NE(std::find(it->second.begin(), it->second.end(), ts), it->second.end())
        << "output frame (" << rec.data.size() << " B) stamped " << rec.ts_sec << "." << rec.ts_nsec
        << ", not when its first frame arrived";
    ++checked;
    aggregates_checked += rec.data.size() > 1600;
  }
  EXPECT_GT(checked, 100u);
  EXPECT_GT(aggregates_checked, 10u);
  std::remove(out.c_str());
}
