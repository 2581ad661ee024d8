// tools/csum_check and local checksum offload (LCO).
//
// QA: `ofld gso IN --features tx-checksum-ip-generic` on a VXLAN super-packet emits what such
// a device is handed: the inner TCP checksum left as the seed (CHECKSUM_PARTIAL) and the outer
// UDP checksum computed by LCO over the packet as it will be once the device has filled the
// inner field (lco_csum). `ofld csum verify` called that outer checksum "bad" (exit 1), and
// `ofld csum fix --keep-partial` "repaired" it into one that is wrong once the device fills
// the inner field. The outer field is good by LCO; a real error in it is still bad.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "ofld/io/pcap.hpp"
#include "ofld/tools/csum_check.hpp"
#include "ofld/tools/gso_tool.hpp"
#include "ofld/wire/bytes.hpp"

using namespace ofld;
using tools::CsumKind;
using tools::Verdict;

namespace {

io::PcapFile device_frames() {
  tools::GsoToolOptions o;
  o.in = std::string(OFLD_PCAP_DIR) + "/tcpdump_gso-ipv4-vxlan-ipv4.pcap";
  o.out = "/tmp/ofld_csum_lco_test.pcap";
  o.mss = 1400;
  o.csum_partial = true;
  o.have_features = true;
  o.features = "tx-checksum-ip-generic";
  tools::run_gso_pcap(o);
  auto f = io::read_pcap(o.out);
  std::remove(o.out.c_str());
  return f;
}

const tools::CsumField* find(const tools::FrameReport& r, CsumKind k, std::uint8_t level) {
  for (const auto& f : r.fields)
    if (f.kind == k && f.level == level) return &f;
  return nullptr;
}

}  // namespace

TEST(CsumLco, OuterUdpOverPartialInnerIsGoodByLco) {
  auto cap = device_frames();
  ASSERT_EQ(cap.records.size(), 5u);  // as `ofld gso --mss 1400` prints for this capture
  const auto link = io::to_wire_link(cap.link);
  for (auto& r : cap.records) {
    auto rep = tools::verify_frame(r.bytes(), link, r.len);
    const auto* udp = find(rep, CsumKind::Udp, 0);
    const auto* tcp = find(rep, CsumKind::Tcp, 1);
    ASSERT_NE(udp, nullptr);
    ASSERT_NE(tcp, nullptr);
    EXPECT_EQ(tcp->verdict, Verdict::Partial);
    EXPECT_EQ(udp->verdict, Verdict::Good);
    EXPECT_TRUE(udp->lco);
    EXPECT_FALSE(rep.any(Verdict::Bad));
    EXPECT_NE(tools::describe(*udp).find("LCO"), std::string::npos) << tools::describe(*udp);

    // --keep-partial: nothing to rewrite, the device's packet is left as it is.
    tools::FixOptions keep;
    keep.fix_partial = false;
    auto copy = r.data;
    auto fx = tools::fix_frame(std::span<std::uint8_t>(copy.data(), copy.size()), link, r.len, keep);
    EXPECT_EQ(fx.after.rewritten, 0u);
    EXPECT_EQ(copy, r.data);

    // Completing the inner field (what the device does) leaves the outer field as it is and
    // makes it plainly good.
    tools::FixOptions full;
    copy = r.data;
    fx = tools::fix_frame(std::span<std::uint8_t>(copy.data(), copy.size()), link, r.len, full);
    EXPECT_EQ(fx.after.rewritten, 1u);
    EXPECT_EQ(wire::load_be16(&copy[udp->field_offset]), udp->found);
    const auto* udp2 = find(fx.after, CsumKind::Udp, 0);
    ASSERT_NE(udp2, nullptr);
    EXPECT_EQ(udp2->verdict, Verdict::Good);
    EXPECT_FALSE(udp2->lco);

    // A wrong outer field is still bad.
    auto bad = r.data;
    bad[udp->field_offset] ^= 0x01;
    auto rb = tools::verify_frame(bad, link, r.len);
    EXPECT_EQ(find(rb, CsumKind::Udp, 0)->verdict, Verdict::Bad);
    EXPECT_FALSE(find(rb, CsumKind::Udp, 0)->lco);
  }
}
