// The lab's model of the kernel's VXLAN receive path (lab::vxlan_rx_gro: underlay GRO with a
// VXLAN socket, vxlan_rcv's decapsulation, the device's gro_cells). Expected values from the
// kernel's decapsulation helper (net/ipv4/ip_tunnel_core.c __iptunnel_pull_header,
// iptunnel_pull_offloads; spec W-3c), not from ofld's output.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "gro_test_util.hpp"
#include "ofld/lab/gro_conformance.hpp"

namespace {

using namespace ofld::grotest;
namespace sg = ofld::core::skb_gso;

// W-3c: decapsulating an underlay aggregate pulls the outer headers and leaves the inner
// frame with its inner GSO type, but without the tunnel GSO bits and without encapsulation;
// its payload is the three segments' 300 bytes behind the inner headers.
TEST(VxlanRxDecap, W3c_PullStripsTunnelGsoBitsAndEncapsulation) {
  std::vector<std::vector<std::uint8_t>> frames;
  for (int i = 0; i < 3; ++i) {
    Tcp t;
    t.seq_off = 100u * unsigned(i);
    frames.push_back(vxlan(false, tcp_frame(t), 42, true, std::uint16_t(i)));
  }
  const auto out = ofld::lab::vxlan_rx_gro(frames, 42);
  ASSERT_EQ(out.size(), 1u);
  const auto& p = out[0];
  EXPECT_FALSE(p.encapsulation);
  EXPECT_EQ(p.gso.type & sg::ENCAP_ALL, 0u) << "tunnel GSO bits removed";
  EXPECT_NE(p.gso.type & sg::TCPV4, 0u) << "inner GSO type kept";
  EXPECT_EQ(p.gso.segs, 3);
  const auto b = p.to_bytes();
  const auto inner = tcp_frame(Tcp{});
  ASSERT_EQ(b.size(), 14u + 20 + 20 + 300);
  EXPECT_TRUE(std::equal(inner.begin(), inner.begin() + 14, b.begin())) << "inner Ethernet first";
  EXPECT_EQ(tcp_payload(p), 300u);
  // Another VNI is not this device's: dropped.
  EXPECT_TRUE(ofld::lab::vxlan_rx_gro(frames, 43).empty());
}

}  // namespace
