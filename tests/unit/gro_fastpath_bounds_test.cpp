// The GRO TCP fast path reads only bytes of the packet's head (Packet::headlen()): an IPv6
// packet whose head ends right after the IPv6 header (a header split at L3, the TCP header in
// a fragment) must not have its TCP data-offset byte read past the head. The head block is
// made exactly headroom + headlen bytes (256, the smallest head block), so the ASan build
// reports any read past it. Expected outcome (from the general chain, G-2/G-7): the packet is
// simply held as a new flow, and a linear packet of the same flow then merges with it.
#include <gtest/gtest.h>

#include "gro_test_util.hpp"

using namespace ofld;
using namespace ofld::grotest;

namespace {

void run_split_at_l3(gro::LinkLayer link) {
  const bool eth = link == gro::LinkLayer::Ethernet;
  const std::size_t l2 = eth ? 14 : 0, head = l2 + 40;
  Tcp t = tcp_seg(true, 0, 1000);
  const std::vector<std::uint8_t> f0 = eth ? tcp_frame(t) : tcp_l3(t);
  t.seq_off = 1000;
  const std::vector<std::uint8_t> f1 = eth ? tcp_frame(t) : tcp_l3(t);
  for (bool fast : {true, false}) {
    gro::EngineOptions o;
    o.link = link;
    o.batch = 1000;
    o.fast_path = fast;
    gro::Engine e(o);
    // headroom + headlen = 256: the head block ends where the IPv6 header ends.
    e.receive(core::Packet::from_bytes_frags(f0, head, 0, 256 - head));
    EXPECT_EQ(e.counters().held, 1u) << "fast " << fast;
    e.receive(core::Packet::from_bytes(f1));
    e.flush_all();
    auto out = e.take_output();
    ASSERT_EQ(out.size(), 1u) << "fast " << fast;
    EXPECT_EQ(out[0].gso.segs, 2u) << "fast " << fast;
  }
}

}  // namespace

TEST(GroFastPathBounds, Ipv6HeadEndingAtTheIpHeaderEthernet) { run_split_at_l3(gro::LinkLayer::Ethernet); }
TEST(GroFastPathBounds, Ipv6HeadEndingAtTheIpHeaderRawIp) { run_split_at_l3(gro::LinkLayer::RawIp); }
