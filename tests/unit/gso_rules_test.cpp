// GSO rules not isolated elsewhere (spec §4.2): X-13, the MAX_SKB_FRAGS limit per segment.
// skb_segment with SG builds each segment from references to the original's fragments; a
// segment that would need more than 17 (kMaxSkbFrags) is refused with -EINVAL. Without SG the
// payload is copied and no such limit applies, so the same packet segments fine.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"
#include "ofld/gso/gso.hpp"

namespace {

using namespace gso_test;
using namespace ofld;

// A TCPv4 super-packet as a socket would hand it: headers linear, payload in fragments of
// `frag` bytes, CHECKSUM_PARTIAL with the pseudo-header seed in the TCP checksum field.
core::Packet fragmented(std::size_t payload, std::size_t frag, std::uint16_t mss) {
  TcpSpec s;
  s.payload = payload;
  Bytes f = tcp_frame(s);
  put16(f, 34 + 16, pseudo_only(&f[14], false, 20 + payload, 6));
  core::Packet p = core::Packet::from_bytes_frags(f, 54, frag);
  p.mac_header = 0;
  p.network_header = 14;
  p.transport_header = 34;
  p.protocol = 0x0800;
  p.csum = core::CsumPartial{34, 16, false};
  p.gso = {mss, 0, core::skb_gso::TCPV4};
  return p;
}

}  // namespace

TEST(GsoRules, X13_SegmentNeedingMoreThanMaxSkbFragsIsRefused) {
  namespace nf = core::netif_f;
  // 5-byte fragments, mss 100: every segment needs 20 fragment references > 17.
  auto sg = gso::gso_segment(fragmented(1000, 5, 100), nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM));
  EXPECT_FALSE(sg.ok());
  EXPECT_EQ(sg.reason, offload::GsoReason::TooManyFrags);

  // 10-byte fragments, mss 100: 10 per segment (aligned), within the limit.
  auto ok = gso::gso_segment(fragmented(1000, 10, 100), nf::SG | nf::HW_CSUM, device(nf::SG | nf::HW_CSUM));
  ASSERT_TRUE(ok.ok()) << offload::to_string(ok.reason);
  EXPECT_EQ(ok.segs.size(), 10u);
  for (auto& s : ok.segs) EXPECT_LE(s.nr_frags(), core::kMaxSkbFrags);

  // No SG: the 5-byte fragments are copied, no fragment limit; every checksum finished.
  auto cp = gso::gso_segment(fragmented(1000, 5, 100), core::Features{}, device(core::Features{}));
  ASSERT_TRUE(cp.ok()) << offload::to_string(cp.reason);
  ASSERT_EQ(cp.segs.size(), 10u);
  for (auto& s : cp.segs) {
    Bytes b = s.to_bytes();
    ASSERT_EQ(b.size(), 14u + 20 + 20 + 100);
    EXPECT_TRUE(l4_valid(&b[14], false, &b[34], 120, 6));
  }
}

// A segment whose IPv4 total length (or IPv6 payload length) would exceed 65535 — a gso_size
// that with the headers does not fit 16 bits, as on a BIG TCP super-packet (tot_len 0) given a
// huge mss — is refused with SegmentTooLong instead of being written with a wrapped length
// (found by a fresh-user run: tot_len 11 after `ofld gso --mss 65495` on a BIG TCP capture).
// 20 + 20 + 65495 = 65535 still fits; one byte more does not.
TEST(GsoRules, SegmentLengthFieldsNeverWrap) {
  namespace nf = core::netif_f;
  auto big = [](std::uint16_t mss) {
    core::Packet p = fragmented(70000, 4096, mss);
    std::uint8_t* ip = p.data() + 14;
    ip[2] = ip[3] = 0;  // BIG TCP: tot_len 0, the length is the frame's
    ip[10] = ip[11] = 0;
    const std::uint16_t c = csum::ip_compute_csum(ip, 20);
    ip[10] = std::uint8_t(c >> 8);
    ip[11] = std::uint8_t(c);
    return p;
  };
  for (core::Features f : {core::Features{}, nf::SG | nf::HW_CSUM}) {
    auto fits = gso::gso_segment(big(65495), f, device(f));
    ASSERT_TRUE(fits.ok()) << offload::to_string(fits.reason);
    ASSERT_EQ(fits.segs.size(), 2u);
    Bytes b = fits.segs[0].to_bytes();
    EXPECT_EQ(b.size(), 14u + 65535);
    EXPECT_EQ(ofld::wire::load_be16(&b[16]), 65535u);
    auto over = gso::gso_segment(big(65496), f, device(f));
    EXPECT_FALSE(over.ok());
    EXPECT_EQ(over.reason, offload::GsoReason::SegmentTooLong);
  }
}
