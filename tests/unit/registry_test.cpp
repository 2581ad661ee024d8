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

// Issue 13 item 3: one protocol table for both engines. Every built-in protocol carries all
// three hooks, as each has .gso_segment and .gro_receive/.gro_complete in the kernel
// (packet_offload for IPv4, IPv6, TEB; inet_offloads/inet6_offloads for TCP, UDP, GRE, IPIP,
// SIT; the UDP tunnels' gro hooks per socket, their GSO through skb_udp_tunnel_segment), and
// the UDP tunnel ports are the same list for GSO and GRO: VXLAN on the IANA port 4789
// (RFC 7348 §5) and the Linux driver's default 8472; GUE, which has no IANA port, on the two
// ports ip-fou(8) examples use (5555, 6080).
TEST(Registry, Issue13Item3_GsoAndGroListsAgree) {
  struct Row {
    Key key;
    std::uint16_t number;
  };
  const Row rows[] = {{Key::Ethertype, 0x0800}, {Key::Ethertype, 0x86DD}, {Key::Ethertype, 0x6558},
                      {Key::IpProto, 6},        {Key::IpProto, 17},       {Key::IpProto, 47},
                      {Key::IpProto, 4},        {Key::IpProto, 41},       {Key::UdpPort, 4789},
                      {Key::UdpPort, 8472},     {Key::UdpPort, 5555},     {Key::UdpPort, 6080}};
  const Registry& r = registry();
  for (const Row& row : rows) {
    SCOPED_TRACE(testing::Message() << "key " << int(row.key) << " number " << row.number);
    const ProtocolOffload* p = r.find(row.key, row.number);
    ASSERT_NE(p, nullptr);
    EXPECT_NE(p->segment, nullptr);
    EXPECT_NE(p->gro_receive, nullptr);
    EXPECT_NE(p->gro_complete, nullptr);
  }
  // Both tunnel ports of one protocol reach the same hooks.
  EXPECT_EQ(r.find(Key::UdpPort, 4789)->segment, r.find(Key::UdpPort, 8472)->segment);
  EXPECT_EQ(r.find(Key::UdpPort, 4789)->gro_receive, r.find(Key::UdpPort, 8472)->gro_receive);
  EXPECT_EQ(r.find(Key::UdpPort, 5555)->segment, r.find(Key::UdpPort, 6080)->segment);
  EXPECT_EQ(r.find(Key::UdpPort, 5555)->gro_receive, r.find(Key::UdpPort, 6080)->gro_receive);
}
