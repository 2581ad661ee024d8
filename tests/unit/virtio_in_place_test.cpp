// A TSO frame taken from the device's read buffer without copying its payload
// (offload::virtio::to_packet with the buffer's owner; tun_get_user builds such skbs with the
// payload in page frags). The head holds every header — TCP with its options, RFC 9293 §3.1
// data offset — and the payload is one fragment pointing into the buffer. GSO from it (a
// device without NETIF_F_SG or checksum offload: copy and sum, X-7/X-8) gives segments with
// valid TCP checksums (RFC 1071) that carry the payload in order, each MSS long.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"
#include "ofld/gso/gso.hpp"
#include "ofld/offload/virtio_net.hpp"

namespace {

using namespace gso_test;
using namespace ofld;
namespace wv = wire::virtio_net;

struct Case {
  bool v6;
  Bytes options;
};

TEST(VirtioInPlace, S1_TsoPayloadStaysInTheReadBufferHeadersInTheHead) {
  // NOP NOP TS(10): 12 bytes of options, data offset 8 words; and none (data offset 5).
  const Bytes ts = {1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2};
  for (const Case& c : {Case{false, ts}, Case{true, ts}, Case{false, {}}, Case{true, {}}}) {
    SCOPED_TRACE(std::string(c.v6 ? "IPv6" : "IPv4") + (c.options.empty() ? "" : ", TCP timestamps"));
    TcpSpec s;
    s.v6 = c.v6;
    s.payload = 9000;
    s.tcp_options = c.options;
    Bytes f = tcp_frame(s);
    const std::size_t l3 = c.v6 ? 40 : 20, thl = 20 + c.options.size();
    // NEEDS_CSUM: the field holds the pseudo-header seed (S-2, virtio 1.2 §5.1.6.2)
    put16(f, 14 + l3 + 16, pseudo_only(f.data() + 14, c.v6, f.size() - 14 - l3, 6));
    const std::size_t hdrs = 14 + l3 + thl;
    const std::uint16_t mss = 1000;
    // The frame 12 bytes into its read buffer (behind the virtio_net_hdr's place).
    Bytes rd(12, 0xEE);
    rd.insert(rd.end(), f.begin(), f.end());
    const auto owner = core::Buffer::make(rd);
    const std::span<const std::uint8_t> frame = std::span<const std::uint8_t>(owner->bytes).subspan(12);
    wv::Hdr h{};
    h.flags = wv::kFlagNeedsCsum;
    h.gso_type = c.v6 ? wv::kGsoTcpv6 : wv::kGsoTcpv4;
    h.gso_size = mss;
    h.csum_start = std::uint16_t(14 + l3);
    h.csum_offset = 16;
    h.hdr_len = std::uint16_t(hdrs);
    auto r = offload::virtio::to_packet(h, frame, wire::LinkType::Ethernet, nullptr, &owner);
    ASSERT_TRUE(r.ok()) << int(r.reason);
    core::Packet& p = r.pkt;
    EXPECT_EQ(p.headlen(), hdrs);  // every header, options included
    ASSERT_EQ(p.nr_frags(), 1u);
    EXPECT_EQ(p.frags()[0].bytes().data(), frame.data() + hdrs);  // no copy
    EXPECT_EQ(p.len(), f.size());
    EXPECT_EQ(p.to_bytes(), f);
    EXPECT_EQ(owner.use_count(), 2);

    auto g = gso::gso_segment(std::move(p), core::Features{}, device(core::Features{}));
    ASSERT_TRUE(g.ok());
    ASSERT_EQ(g.segs.size(), (s.payload + mss - 1) / mss);
    Bytes got;
    for (const auto& seg : g.segs) {
      const Bytes b = seg.to_bytes();
      ASSERT_GE(b.size(), hdrs);
      EXPECT_LE(b.size() - hdrs, mss);
      const std::uint8_t* ip = b.data() + 14;
      EXPECT_TRUE(l4_valid(ip, c.v6, ip + l3, b.size() - 14 - l3, 6));
      EXPECT_EQ(Bytes(ip + l3 + 20, ip + l3 + thl), c.options);  // options on every segment
      got.insert(got.end(), b.begin() + long(hdrs), b.end());
    }
    EXPECT_EQ(got, Bytes(f.begin() + long(hdrs), f.end()));
    g.segs.clear();
    r.pkt.discard();                  // what is left of the input (gso_segment reads it)
    EXPECT_EQ(owner.use_count(), 1);  // the segments were copies (no SG)
  }
}

// Without the owner, or for a frame that is not a GSO super-packet, every byte is copied.
TEST(VirtioInPlace, S1_WithoutOwnerOrGsoEverythingIsCopied) {
  TcpSpec s;
  s.payload = 500;
  const Bytes f = tcp_frame(s);
  const auto owner = core::Buffer::make(f);
  wv::Hdr h{};  // no GSO
  auto r = offload::virtio::to_packet(h, owner->bytes, wire::LinkType::Ethernet, nullptr, &owner);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.pkt.nr_frags(), 0u);
  EXPECT_EQ(r.pkt.to_bytes(), f);
  EXPECT_EQ(owner.use_count(), 1);
  // A span that is not inside the owner's buffer is copied too.
  TcpSpec big;
  big.payload = 3000;
  const Bytes g = tcp_frame(big);
  wv::Hdr t{};
  t.flags = wv::kFlagNeedsCsum;
  t.gso_type = wv::kGsoTcpv4;
  t.gso_size = 1000;
  t.csum_start = 14 + 20;
  t.csum_offset = 16;
  auto q = offload::virtio::to_packet(t, g, wire::LinkType::Ethernet, nullptr, &owner);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q.pkt.nr_frags(), 0u);
  EXPECT_EQ(q.pkt.to_bytes(), g);
  EXPECT_EQ(owner.use_count(), 1);
}

}  // namespace
