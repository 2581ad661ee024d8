// Issue 14: one tunnel::Endpoint for VXLAN, GUE, GRE and ip6gre — one transmit shape, one
// receive shape (decapsulate → gro_cells → virtio_net_hdr → device), one set of counters and
// drop reasons, one stats document, peers owned by the endpoint.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/gro/gro_cells.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;

/// Clear PSH in tcp_frame's IPv4 frame (ACK only; PSH ends a GRO aggregate in tcp_gro_receive)
/// and write the TCP checksum again (RFC 793 §3.1, RFC 1071 sum).
void ack_only(std::vector<std::uint8_t>& f) {
  constexpr std::size_t t = 14 + 20;
  f[t + 13] = 0x10;
  put16(f, t + 16, 0);
  const std::uint32_t l4 = std::uint32_t(f.size() - t);
  const auto ph = csum::csum_tcpudp_nofold(f.data() + 14 + 12, f.data() + 14 + 16, l4, 6, 0);
  put16(f, t + 16, csum::csum_fold(csum::csum_partial(f.data() + t, l4, ph)));
  ASSERT_TRUE(tcp_csum_ok(f.data(), f.size()));
}

// Spec W-12 (gro_cells_receive): only a device without GRO or a cloned skb (shared header
// data) bypasses GRO. Fragments that share a receive buffer are the normal case of a page-frag
// receive (the kernel's page_pool; ofld's zero-copy decapsulation keeps the inner payload in
// the recvmmsg slot), not a reason to skip GRO. Four consecutive segments of one flow whose
// payloads are fragments of one buffer must leave as one aggregate.
TEST(Issue14GroCells, W12_SharedReceiveBufferFragmentsAreAggregated) {
  constexpr std::size_t kPay = 1000, kHdr = 14 + 20 + 20;
  auto slot = core::Buffer::create(std::size_t(4 * (kHdr + kPay)));
  gro::GroCellsOptions o;
  o.engine.link = gro::LinkLayer::Ethernet;
  gro::GroCells cells(o);
  std::vector<core::Packet> keep;
  for (std::uint32_t i = 0; i < 4; ++i) {
    auto f = tcp_frame(kPay, false, false, 1000 + i * std::uint32_t(kPay));
    ack_only(f);
    const std::size_t at = i * (kHdr + kPay);
    std::memcpy(slot->bytes.data() + at, f.data(), f.size());
    auto p = core::Packet::from_bytes(std::span<const std::uint8_t>(f.data(), kHdr));
    ASSERT_EQ(p.add_frag(slot, std::uint32_t(at + kHdr), std::uint32_t(kPay)), core::PacketError::Ok);
    ASSERT_TRUE(p.frags_shared());  // the slot is referenced by the caller too
    EXPECT_TRUE(cells.receive(std::move(p)));
  }
  cells.poll(64);
  auto out = cells.take_output();
  EXPECT_EQ(cells.counters().bypassed, 0u);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].gso.segs, 4);
  EXPECT_EQ(out[0].len(), kHdr + 4 * kPay);
}

}  // namespace
