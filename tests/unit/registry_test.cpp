#include <gtest/gtest.h>
#include "ofld/offload/registry.hpp"

using namespace ofld::offload;

static void seg_stub(GsoContext&) {}
static int seg(GsoContext& c) { seg_stub(c); return 0; }
static void rcv(GroContext&) {}

// A protocol's GSO and GRO hooks come from different engines and must merge into one entry;
// the same number under different keys (e.g. 6 as IP protocol vs UDP port) stays separate.
TEST(Registry, HooksFromBothEnginesMergeByKey) {
  Registry r;
  ASSERT_TRUE(r.add(Key::IpProto, 6, {"tcp", seg, nullptr, nullptr}));
  ASSERT_TRUE(r.add(Key::IpProto, 6, {"", nullptr, rcv, nullptr}));
  const ProtocolOffload* p = r.find(Key::IpProto, 6);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->name, "tcp");
  EXPECT_EQ(p->segment, &seg);
  EXPECT_EQ(p->gro_receive, &rcv);
  EXPECT_EQ(r.find(Key::UdpPort, 6), nullptr);
  EXPECT_EQ(r.find(Key::Ethertype, 0x0800), nullptr);
}

TEST(Registry, FullTableRefusesMore) {
  Registry r;
  for (std::uint16_t i = 0; i < Registry::kMaxEntries; ++i) ASSERT_TRUE(r.add(Key::UdpPort, i, {"x"}));
  EXPECT_FALSE(r.add(Key::UdpPort, 9999, {"y"}));
  EXPECT_NE(r.find(Key::UdpPort, 63), nullptr);
}
