// Issue 15, integrity mode in the endpoint (no I/O): toward a peer whose session advertised
// the capability, the inner checksum is left as the pseudo-header seed (C-12, as RCO does,
// W-26) and GSO copies without summing (X-8: HW_CSUM|SG, no CopySum segments); the receiver
// takes the seed as CHECKSUM_PARTIAL and writes NEEDS_CSUM (S-8) without summing. Toward a
// peer without it (I-7): full inner checksums, verified by the RFC 793 sum.
#include <gtest/gtest.h>

#include <cstring>

#include "ofld/core/skb_segment.hpp"
#include "ofld/tunnel/endpoint.hpp"
#include "ofld/tunnel/peer.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;
namespace wv = wire::virtio_net;

const tunnel::IpAddr kA = *tunnel::IpAddr::parse("10.0.0.1");
const tunnel::IpAddr kB = *tunnel::IpAddr::parse("10.0.0.2");

tunnel::VxlanConfig cfg(const tunnel::IpAddr& local, const tunnel::IpAddr& remote) {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = local;
  c.remotes = {remote};
  return c;
}

wv::Hdr tso_hdr(std::uint16_t gso_size) {
  wv::Hdr h;
  h.flags = wv::kFlagNeedsCsum;
  h.gso_type = wv::kGsoTcpv4;
  h.gso_size = gso_size;
  h.csum_start = 34;
  h.csum_offset = 16;
  return h;
}

struct Side {
  std::shared_ptr<tunnel::PeerTable> t;
  std::unique_ptr<tunnel::Endpoint> ep;
  Side(const tunnel::IpAddr& self, const tunnel::IpAddr& other, bool integrity, std::uint32_t epoch) {
    tunnel::PeerOptions o;
    o.integrity = integrity;
    o.epoch = epoch;
    t = std::make_shared<tunnel::PeerTable>(o);
    t->add(other);
    tunnel::EndpointOptions eo;
    eo.peer_sessions = t;
    ep = std::make_unique<tunnel::Endpoint>(cfg(self, other), eo);
  }
};

/// HELLOs of `a` through b's endpoint (as received datagrams), b's ACKs back.
void handshake(Side& a, const tunnel::IpAddr& a_addr, Side& b, const tunnel::IpAddr& b_addr,
               std::uint64_t now) {
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(now, true, msgs);
  ASSERT_EQ(msgs.size(), 1u);
  EXPECT_EQ(msgs[0].remote, b_addr);
  EXPECT_EQ(msgs[0].src_port, 4789);
  for (auto& m : msgs) b.ep->receive(m.buf, a_addr, tunnel::OuterCsum::Present, now);
  msgs.clear();
  b.ep->control_out(now, false, msgs);
  ASSERT_EQ(msgs.size(), 1u);
  for (auto& m : msgs) a.ep->receive(m.buf, b_addr, tunnel::OuterCsum::Present, now + 1);
  // control messages are not data
  EXPECT_EQ(a.ep->counters().rx_datagrams, 0u);
  EXPECT_EQ(b.ep->counters().rx_datagrams, 0u);
  EXPECT_EQ(a.ep->counters().drops_total(), 0u);
  EXPECT_EQ(b.ep->counters().drops_total(), 0u);
}

std::vector<tunnel::TapFrame> deliver(const tunnel::TxTrain& t, Side& to, const tunnel::IpAddr& from) {
  to.ep->receive_train(t.buf, t.seg_size, from, tunnel::OuterCsum::Present, 10);
  std::vector<tunnel::TapFrame> frames;
  to.ep->rx_flush(11, frames);
  return frames;
}

}  // namespace

TEST(TunnelIntegrity, Issue15_BothSidesNoInnerChecksumComputed) {
  Side a(kA, kB, true, 0x1111), b(kB, kA, true, 0x2222);
  handshake(a, kA, b, kB, 1);
  auto f = tcp_frame(3000, false, true);  // field holds the seed, as a TAP read gives it
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].count, 3u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i) {
    const std::uint8_t* seg = out[0].buf.data() + i * dgram + 8;
    EXPECT_EQ(out[0].buf[i * dgram], 0x08);  // a plain VXLAN data header: no RCO
    EXPECT_EQ(out[0].buf[i * dgram + 1], 0x00);
    EXPECT_EQ(get16(seg + 14 + 20 + 16), tcp_seed(seg, 1020)) << i;  // C-12 seed, not summed
  }
  // Sender: nothing summed (no software checksum, no copy-and-sum GSO segment).
  EXPECT_EQ(a.ep->counters().tx_csum_sw, 0u);
  EXPECT_EQ(a.ep->gso_counters().seg_mode[std::size_t(core::SegMode::CopySum)], 0u);
  EXPECT_EQ(a.ep->counters().tx_csum_skipped, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_elided, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 0u);

  auto frames = deliver(out[0], b, kA);
  ASSERT_EQ(frames.size(), 1u);
  // Receiver: NEEDS_CSUM at the inner TCP header (S-8), taken from the seed, not summed.
  EXPECT_EQ(frames[0].vnet.flags, wv::kFlagNeedsCsum);
  EXPECT_EQ(frames[0].vnet.csum_start, 34);
  EXPECT_EQ(frames[0].vnet.csum_offset, 16);
  EXPECT_EQ(b.ep->counters().rx_csum_partial_seed, 3u);
  EXPECT_EQ(b.ep->peer(kA)->ctr.rx_csum_seed, 3u);
  EXPECT_EQ(b.ep->counters().drops_total(), 0u);
  ASSERT_EQ(frames[0].data.size(), f.size());
  const auto& got = frames[0].data;
  EXPECT_EQ(0, std::memcmp(got.data() + 54, f.data() + 54, 3000));  // payload intact
}

TEST(TunnelIntegrity, Issue15_I7_PeerWithoutCapabilityGetsFullChecksums) {
  Side a(kA, kB, true, 0x1111), b(kB, kA, false, 0x2222);
  handshake(a, kA, b, kB, 1);
  auto f = tcp_frame(3000, false, true);
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(tcp_csum_ok(out[0].buf.data() + i * dgram + 8, dgram - 8)) << i;  // RFC 793
  EXPECT_EQ(a.ep->counters().tx_csum_sw, 3u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_elided, 0u);
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 3u);
}

TEST(TunnelIntegrity, Issue15_NoSessionNoElision) {
  // Integrity on, but the peer never answered (a kernel VXLAN device): full checksums.
  Side a(kA, kB, true, 0x1111);
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(1, true, msgs);  // the HELLO goes unanswered
  auto f = tcp_frame(3000, false, true);
  std::vector<tunnel::TxTrain> out;
  a.ep->transmit(tso_hdr(1000), f, 5, out);
  ASSERT_EQ(out.size(), 1u);
  const std::size_t dgram = 8 + 14 + 20 + 20 + 1000;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(tcp_csum_ok(out[0].buf.data() + i * dgram + 8, dgram - 8));
  EXPECT_EQ(a.ep->peer(kB)->ctr.tx_csum_full, 3u);
}

TEST(TunnelIntegrity, Issue15_MalformedControlCountedNotDelivered) {
  Side a(kA, kB, true, 0x1111);
  std::vector<tunnel::TxTrain> msgs;
  a.ep->control_out(1, true, msgs);
  auto bad = msgs[0].buf;
  bad[8 + 4] = 7;  // version
  a.ep->receive(bad, kB, tunnel::OuterCsum::Present, 2);
  a.ep->receive(msgs[0].buf, *tunnel::IpAddr::parse("10.0.0.77"), tunnel::OuterCsum::Present, 2);
  std::vector<tunnel::TapFrame> frames;
  a.ep->rx_flush(3, frames);
  EXPECT_TRUE(frames.empty());
  EXPECT_EQ(a.t->malformed_total(), 1u);
  EXPECT_EQ(a.t->unknown_source(), 1u);
  // Without sessions (an endpoint of an older kind) the same datagram is a counted VXLAN drop.
  tunnel::Endpoint old(cfg(kB, kA), {});
  old.receive(msgs[0].buf, kA, tunnel::OuterCsum::Present, 2);
  EXPECT_EQ(old.counters().drops[std::size_t(tunnel::Drop::RxNoVniFlag)], 1u);
}
