// `ofld gso` library side on public captures (tests/data/pcaps): super-packets with partial
// checksums (--csum-partial) → every output frame parses and every checksum is complete.
// Expected counts from MANIFEST.tsv (gso-ipv4: 7240 B payload = 5 × 1448).
#include <gtest/gtest.h>

#include <cstdio>

#include "gso_test_util.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/tools/gso_tool.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

using namespace ofld;

namespace {

// Verify every IPv4 header checksum and every TCP/UDP checksum of every frame.
void all_checksums_valid(const std::string& path, std::size_t expect_frames) {
  auto f = io::read_pcap(path);
  ASSERT_EQ(f.records.size(), expect_frames);
  for (auto& r : f.records) {
    auto l = wire::parse_frame(r.bytes(), io::to_wire_link(f.link), {});
    ASSERT_TRUE(l);
    for (const auto& h : l.value().headers()) {
      if (h.kind == wire::HeaderKind::Ipv4) {
        EXPECT_EQ(csum::ip_compute_csum(&r.data[h.offset], h.length), 0);
      }
      if (h.kind == wire::HeaderKind::Tcp || h.kind == wire::HeaderKind::Udp) {
        const auto* ip = l.value().ip_of(h);
        ASSERT_NE(ip, nullptr);
        const bool v6 = ip->kind == wire::HeaderKind::Ipv6;
        const std::uint8_t proto = h.kind == wire::HeaderKind::Tcp ? 6 : 17;
        if (proto == 17 && wire::load_be16(&r.data[h.offset + 6]) == 0 && !v6) continue;
        EXPECT_TRUE(gso_test::l4_valid(&r.data[ip->offset], v6, &r.data[h.offset], h.end - h.offset, proto))
            << path << " frame L4 at " << h.offset;
      }
    }
  }
}

}  // namespace

TEST(GsoTool, PublicCapturesSegmentToValidCaptures) {
  struct C {
    const char* file;
    std::size_t frames;
  } cases[] = {{"tcpdump_gso-ipv4.pcap", 5},
               {"tcpdump_gso-ipv6.pcap", 5},
               {"tcpdump_gso-ipv4-vxlan-ipv4.pcap", 0},
               {"tcpdump_gso-ipv6-vxlan-ipv4.pcap", 0}};
  for (auto& c : cases) {
    tools::GsoToolOptions o;
    o.in = std::string(OFLD_PCAP_DIR) + "/" + c.file;
    o.out = "/tmp/ofld_gso_tool_test.pcap";
    o.mss = 1448;
    o.csum_partial = true;
    auto s = tools::run_gso_pcap(o);
    EXPECT_EQ(s.dropped, 0u) << c.file;
    EXPECT_EQ(s.gso_frames, 1u) << c.file;
    EXPECT_EQ(s.counters.seg_mode[std::size_t(gso::SegMode::CopySum)], s.segments);
    if (c.frames) {
      EXPECT_EQ(s.segments, c.frames) << c.file;
    }
    all_checksums_valid(o.out, s.frames_out);
    std::remove(o.out.c_str());
  }
}

// --features: a device with SG and HW checksum gets seeds (PARTIAL), not finished sums.
TEST(GsoTool, FeaturesLeaveSeedsForTheDevice) {
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/tcpdump_gso-ipv4.pcap";
  o.out = "/tmp/ofld_gso_tool_test2.pcap";
  o.mss = 1448;
  o.csum_partial = true;
  o.have_features = true;
  o.features = "tx-scatter-gather,tx-checksum-ip-generic";
  auto s = tools::run_gso_pcap(o);
  EXPECT_EQ(s.counters.seg_mode[std::size_t(gso::SegMode::SgRef)], 5u);
  auto f = io::read_pcap(o.out);
  for (auto& r : f.records) {
    auto l = wire::parse_frame(r.bytes(), io::to_wire_link(f.link), {});
    ASSERT_TRUE(l);
    const auto* tcp = l.value().inner_l4();
    const auto* ip = l.value().ip_of(*tcp);
    EXPECT_EQ(wire::load_be16(&r.data[tcp->offset + 16]),
              gso_test::pseudo_only(&r.data[ip->offset], false, tcp->end - tcp->offset, 6));
  }
  std::remove(o.out.c_str());
  o.features = "no-such-feature";
  EXPECT_THROW(tools::run_gso_pcap(o), std::runtime_error);
}

namespace {

// A GRE-in-UDP (RFC 8086, UDP 4754) super-packet: outer Eth/IPv4/UDP + 4-byte GRE header
// (no flags, protocol TEB 0x6558) + inner Eth/IPv4/TCP, 3000 B payload. ofld segments no
// GRE-in-UDP.
gso_test::Bytes gre_in_udp_frame() {
  namespace fb = ofld::fb;
  fb::Frame f;
  fb::gso::eth(f);
  fb::gso::ipv4(f, 0x4000, false, 11, 12);
  f.udp({33333, ofld::wire::udpport::kGreInUdp, 0, 0}, fb::L4Csum::Zero);
  f.raw({0x00, 0x00, 0x65, 0x58}, 0);
  f.payload(gso_test::tcp_frame(gso_test::TcpSpec{}));
  return f.build();
}

void write_pcap(const std::string& path, const std::vector<gso_test::Bytes>& frames) {
  io::PcapWriter w(path, io::CaptureLink::Ethernet);
  for (auto& f : frames) {
    io::PcapRecord r;
    r.data = f;
    r.caplen = r.len = std::uint32_t(f.size());
    w.write(r);
  }
  w.close();
}

}  // namespace

// User report (a): a super-packet of a tunnel ofld does not segment (GRE-in-UDP; Geneve was
// this example until ofld segmented it, tests/unit/gso_geneve_test.cpp) is passed through
// unsegmented and the summary says why, under a named reason, in text and JSON; a small frame
// that needs no segmenting is counted apart ("payload fits").
TEST(GsoTool, UnsupportedTunnelPassedThroughUnderNamedReason) {
  const std::string in = "/tmp/ofld_gso_tool_greudp_in.pcap", out = "/tmp/ofld_gso_tool_greudp_out.pcap";
  gso_test::TcpSpec small;
  small.payload = 100;
  write_pcap(in, {gre_in_udp_frame(), gso_test::tcp_frame(small)});
  tools::GsoToolOptions o;
  o.in = in;
  o.out = out;
  o.mss = 1448;
  auto s = tools::run_gso_pcap(o);
  EXPECT_EQ(s.frames_in, 2u);
  EXPECT_EQ(s.frames_out, 2u);
  EXPECT_EQ(s.passed, 2u);
  EXPECT_EQ(s.unsegmented_reasons["gre-in-udp (not supported)"], 1u);
  EXPECT_EQ(s.pass_reasons["payload fits in one segment"], 1u);
  const std::string text = tools::gso_summary_text(s);
  EXPECT_NE(text.find("passed through unsegmented: gre-in-udp (not supported): 1"), std::string::npos)
      << text;
  auto j = nlohmann::json::parse(tools::gso_summary_json(s));
  EXPECT_EQ(j["unsegmented_reasons"]["gre-in-udp (not supported)"], 1);
  EXPECT_EQ(io::read_pcap(out).records[0].data, gre_in_udp_frame()) << "frame unchanged";
  std::remove(in.c_str());
  std::remove(out.c_str());
}

// User report (b): with SG the summary must not claim payload copies next to "sg-ref". Header
// bytes are counted apart; with SG the payload (in page fragments, as a socket builds it) is
// referenced, not copied; without features it is copied. Expected header bytes = segments ×
// the capture's header length (Ethernet + IPv4 + TCP, from the parsed frame); payload 7240 B
// (MANIFEST.tsv: 5 × 1448).
TEST(GsoTool, SummarySeparatesHeaderAndPayloadBytes) {
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/tcpdump_gso-ipv4.pcap";
  o.out = "/tmp/ofld_gso_tool_test3.pcap";
  o.mss = 1448;
  o.csum_partial = true;
  auto rec = io::read_pcap(o.in);
  std::size_t hdr = 0;
  for (auto& r : rec.records) {
    auto l = wire::parse_frame(r.bytes(), io::to_wire_link(rec.link), {});
    ASSERT_TRUE(l);
    if (r.data.size() - l.value().payload_offset() > 1448) hdr = l.value().payload_offset();
  }
  ASSERT_GT(hdr, 0u);
  for (bool sgf : {false, true}) {
    o.have_features = sgf;
    o.features = sgf ? "tx-scatter-gather,tx-checksum-ip-generic" : "";
    auto s = tools::run_gso_pcap(o);
    ASSERT_EQ(s.segments, 5u);
    EXPECT_EQ(s.counters.header_bytes_copied, 5 * hdr);
    EXPECT_EQ(s.counters.payload_bytes_copied, sgf ? 0u : 7240u);
    EXPECT_EQ(s.counters.payload_bytes_referenced, sgf ? 7240u : 0u);
    const std::string text = tools::gso_summary_text(s);
    EXPECT_NE(text.find(fmt::format("headers copied {}", 5 * hdr)), std::string::npos) << text;
    auto j = nlohmann::json::parse(tools::gso_summary_json(s));
    EXPECT_EQ(j["header_bytes"]["copied"], 5 * hdr);
  }
  std::remove(o.out.c_str());
}

// `--features sg,tx` (ethtool -K's short names) means scatter-gather + tx-checksumming, as
// in ethtool; SG then gives sg-ref construction with the payload referenced.
TEST(GsoTool, EthtoolShortNamesAccepted) {
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/tcpdump_gso-ipv4.pcap";
  o.out = "/tmp/ofld_gso_tool_test4.pcap";
  o.mss = 1448;
  o.csum_partial = true;
  o.have_features = true;
  o.features = "sg,tx";
  auto s = tools::run_gso_pcap(o);
  EXPECT_TRUE(s.features.has(core::netif_f::SG | core::netif_f::HW_CSUM));
  EXPECT_EQ(s.counters.seg_mode[std::size_t(gso::SegMode::SgRef)], 5u);
  EXPECT_EQ(s.counters.payload_bytes_copied, 0u);
  std::remove(o.out.c_str());
}

// QA: zeek_erspan.pcap carries GRE/TEB packets whose outer IPv4 datagram is fragmented (16
// first fragments holding an inner TCP header, MANIFEST.tsv "gre,ip-fragments"). A fragment
// is not a GSO packet: every first fragment must pass through unchanged under "IP fragment",
// never be segmented (which produced new fragments with invented IP IDs). --mss 500 is below
// the inner TCP payload of those fragments, so the bug would segment them.
TEST(GsoTool, OuterIpFragmentsOfTunnelPacketsPassThrough) {
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/zeek_erspan.pcap";
  o.out = "/tmp/ofld_gso_tool_frag.pcap";
  o.mss = 500;
  auto in = io::read_pcap(o.in);
  std::size_t first_frags = 0;
  std::vector<std::vector<std::uint8_t>> expect_unchanged;
  for (auto& r : in.records) {
    auto l = wire::parse_frame(r.bytes(), io::to_wire_link(in.link), {});
    if (!l) continue;
    const auto* ip = l.value().find(wire::HeaderKind::Ipv4);
    if (ip && (ip->flags & wire::layer_flag::kFirstFragment) && l.value().inner_l4()) {
      ++first_frags;
      expect_unchanged.push_back(r.data);
    }
  }
  ASSERT_EQ(first_frags, 16u);
  auto s = tools::run_gso_pcap(o);
  EXPECT_EQ(s.pass_reasons["IP fragment"], first_frags);
  auto out = io::read_pcap(o.out);
  for (const auto& f : expect_unchanged) {
    std::size_t found = 0;
    for (auto& r : out.records) found += r.data == f ? 1 : 0;
    EXPECT_EQ(found, 1u) << "a first fragment was not copied unchanged";
  }
  std::remove(o.out.c_str());
}

// QA: BIG TCP captures (80000 B payload) with an --mss so large that a segment's IPv4 total
// length / IPv6 payload length passes 65535: the segments came out with the length modulo
// 65536 (IPv4 total length 11, IPv6 payload length 26; tshark and `csum verify` could not
// parse them). Such frames now pass through unsegmented under a named reason; the largest
// --mss that fits still segments; --mss 65535 (GSO_BY_FRAGS) is refused up front.
TEST(GsoTool, SegmentsThatWouldOverflowLengthFieldsPassThrough) {
  struct C {
    const char* file;
    std::uint16_t mss;
    bool fits;
  } cases[] = {{"tcpdump_bigtcp-ipv4.pcap", 65495, false},
               {"tcpdump_bigtcp-ipv4.pcap", 65000, true},
               {"tcpdump_bigtcp-ipv6.pcap", 65530, false},
               {"tcpdump_bigtcp-ipv6.pcap", 65000, true},
               {"tcpdump_bigtcp-ipv6-vxlan-ipv6.pcap", 65450, false}};
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.file) + " --mss " + std::to_string(c.mss));
    tools::GsoToolOptions o;
    o.in = std::string(OFLD_PCAP_DIR) + "/" + c.file;
    o.out = "/tmp/ofld_gso_tool_overflow.pcap";
    o.mss = c.mss;
    o.csum_partial = true;
    auto s = tools::run_gso_pcap(o);
    EXPECT_EQ(s.dropped, 0u);
    auto out = io::read_pcap(o.out);
    if (c.fits) {
      EXPECT_EQ(s.segments, 2u);
      for (auto& r : out.records) {
        auto l = wire::parse_frame(r.bytes(), io::to_wire_link(out.link), {});
        EXPECT_TRUE(l) << (l ? "" : l.error().to_string());
      }
    } else {
      EXPECT_EQ(s.segments, 0u);
      EXPECT_EQ(s.passed, 1u);
      ASSERT_EQ(s.unsegmented_reasons.size(), 1u);
      EXPECT_NE(s.unsegmented_reasons.begin()->first.find("65535"), std::string::npos);
      ASSERT_EQ(out.records.size(), 1u);
      EXPECT_EQ(out.records[0].data, io::read_pcap(o.in).records[0].data);
    }
    std::remove(o.out.c_str());
  }
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/tcpdump_bigtcp-ipv4.pcap";
  o.out = "/tmp/ofld_gso_tool_overflow.pcap";
  o.mss = 65535;
  try {
    tools::run_gso_pcap(o);
    ADD_FAILURE() << "--mss 65535 accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("GSO_BY_FRAGS"), std::string::npos) << e.what();
  }
  std::remove(o.out.c_str());
}
