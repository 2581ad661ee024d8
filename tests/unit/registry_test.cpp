#include <gtest/gtest.h>

#include <vector>

#include "gso_test_util.hpp"
#include "ofld/gro/engine.hpp"
#include "ofld/gso/gso.hpp"
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

// One protocol table for both engines. Every built-in protocol carries all
// three hooks, as each has .gso_segment and .gro_receive/.gro_complete in the kernel
// (packet_offload for IPv4, IPv6, TEB; inet_offloads/inet6_offloads for TCP, UDP, GRE, IPIP,
// SIT; the UDP tunnels' gro hooks per socket, their GSO through skb_udp_tunnel_segment), and
// the UDP tunnel ports are the same list for GSO and GRO: VXLAN on the IANA port 4789
// (RFC 7348 §5) and the Linux driver's default 8472; GUE, which has no IANA port, on the two
// ports ip-fou(8) examples use (5555, 6080).
TEST(Registry, GsoAndGroListsAgree) {
  struct Row {
    Key key;
    std::uint16_t number;
  };
  const Row rows[] = {{Key::Ethertype, 0x0800}, {Key::Ethertype, 0x86DD}, {Key::Ethertype, 0x6558},
                      {Key::IpProto, 6},        {Key::IpProto, 17},       {Key::IpProto, 47},
                      {Key::IpProto, 4},        {Key::IpProto, 41},       {Key::UdpPort, 4789},
                      {Key::UdpPort, 8472},     {Key::UdpPort, 5555},     {Key::UdpPort, 6080}};
  const Registry& r = builtin_registry();
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

// The engines dispatch through the table they are handed. With no entry
// for the frame's ethertype, skb_mac_gso_segment finds no handler (X-3: -EPROTONOSUPPORT,
// counted here as UnknownEthertype); without the TCP row inet_gso_segment finds none for
// IPPROTO_TCP (UnknownIpProto); with the built-in rows the frame is segmented.
TEST(Registry, GsoEngineUsesTheTableItIsHanded) {
  gso_test::TcpSpec s;
  s.payload = 3000;
  const gso_test::Bytes f = gso_test::tcp_frame(s);
  const ofld::core::Device dev = gso_test::device({});

  const Registry empty;
  auto r0 = ofld::gso::gso_segment(gso_test::prepare(f, 1000), {}, dev, nullptr,
                                   ofld::gso::GsoOptions{.registry = &empty});
  EXPECT_EQ(r0.reason, GsoReason::UnknownEthertype);

  std::vector<ProtocolEntry> rows;
  for (const ProtocolEntry& e : builtin_protocols())
    if (!(e.key == Key::IpProto && e.number == 6)) rows.push_back(e);
  const Registry no_tcp = make_registry(rows);
  auto r1 = ofld::gso::gso_segment(gso_test::prepare(f, 1000), {}, dev, nullptr,
                                   ofld::gso::GsoOptions{.registry = &no_tcp});
  EXPECT_EQ(r1.reason, GsoReason::UnknownIpProto);

  auto r2 = ofld::gso::gso_segment(gso_test::prepare(f, 1000), {}, dev, nullptr,
                                   ofld::gso::GsoOptions{.registry = &builtin_registry()});
  ASSERT_TRUE(r2.ok()) << to_string(r2.reason);
  EXPECT_EQ(r2.segs.size(), 3u);  // ceil(3000 / 1000)
}

// The GRO engine likewise: two in-order segments of one TCP flow merge (T-rules) with the
// built-in table, and pass unmerged through an engine whose table has no TCP row.
TEST(Registry, GroEngineUsesTheTableItIsHanded) {
  auto run = [](const Registry& reg) {
    ofld::gro::EngineOptions o;
    o.fast_path = false;  // the chain through the registry
    ofld::gro::Engine e(o, reg);
    std::vector<ofld::core::Packet> out;
    for (std::uint32_t i = 0; i < 2; ++i) {
      gso_test::TcpSpec s;
      s.payload = 1000;
      s.seq = 1000 + i * 1000;
      s.ip_id = std::uint16_t(7 + i);
      s.flags = 0x10;  // ACK
      e.receive(ofld::core::Packet::from_bytes(gso_test::tcp_frame(s)));
    }
    e.flush_all();
    for (auto& p : e.take_output()) out.push_back(std::move(p));
    return out;
  };
  std::vector<ProtocolEntry> rows;
  for (const ProtocolEntry& e : builtin_protocols())
    if (!(e.key == Key::IpProto && e.number == 6)) rows.push_back(e);
  const Registry no_tcp = make_registry(rows);
  EXPECT_EQ(run(builtin_registry()).size(), 1u);
  EXPECT_EQ(run(no_tcp).size(), 2u);
}

// The table itself: one row per (key, number) — a duplicate would silently merge two
// protocols' hooks — and every row of it is what builtin_registry() finds.
TEST(Registry, BuiltinTableHasOneRowPerNumber) {
  const auto rows = builtin_protocols();
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (std::size_t j = i + 1; j < rows.size(); ++j)
      EXPECT_FALSE(rows[i].key == rows[j].key && rows[i].number == rows[j].number)
          << rows[i].hooks.name << " and " << rows[j].hooks.name << " share " << rows[i].number;
  for (const ProtocolEntry& e : rows) {
    const ProtocolOffload* p = builtin_registry().find(e.key, e.number);
    ASSERT_NE(p, nullptr) << e.hooks.name;
    EXPECT_EQ(p->segment, e.hooks.segment);
    EXPECT_EQ(p->gro_receive, e.hooks.gro_receive);
    EXPECT_EQ(p->gro_complete, e.hooks.gro_complete);
  }
}
