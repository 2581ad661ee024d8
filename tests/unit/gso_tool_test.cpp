// `ofld gso` library side on public captures (../shared/pcaps): super-packets with partial
// checksums (--csum-partial) → every output frame parses and every checksum is complete.
// Expected counts from MANIFEST.tsv (gso-ipv4: 7240 B payload = 5 × 1448).
#include <gtest/gtest.h>

#include <cstdio>

#include "gso_test_util.hpp"
#include "ofld/io/pcap.hpp"
#include "ofld/tools/gso_tool.hpp"

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
    o.in = std::string(OFLD_SHARED_DIR) + "/pcaps/" + c.file;
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
  o.in = std::string(OFLD_SHARED_DIR) + "/pcaps/tcpdump_gso-ipv4.pcap";
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
