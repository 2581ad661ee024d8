// USO (X-28, X-29; public bugs D1, D2, D6) and virtio_net_hdr → packet (S-1..S-6; public
// bugs B1, B2, B5; K-6).
#include <gtest/gtest.h>

#include "gso_test_util.hpp"
#include "ofld/offload/virtio_net.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
using wire::load_be16;

namespace {

std::vector<Bytes> uso(const Bytes& f, std::uint16_t mss, core::Features feat,
                       gso::GsoReason* why = nullptr, std::vector<core::IpSummed>* st = nullptr) {
  auto dev = device(feat);
  auto r = gso::gso_segment(prepare(f, mss), feat, dev);
  if (why) *why = r.reason;
  std::vector<Bytes> v;
  for (auto& s : r.segs) {
    v.push_back(s.to_bytes());
    if (st) st->push_back(s.ip_summed());
  }
  return v;
}

void expect_udp_train(const Bytes& f, bool v6, std::size_t payload, std::uint16_t mss,
                      core::Features feat) {
  const std::size_t ip = 14, l4 = v6 ? 54 : 34;
  auto segs = uso(f, mss, feat);
  const std::size_t n = (payload + mss - 1) / mss;
  ASSERT_EQ(segs.size(), n) << "payload " << payload;
  std::size_t off = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Bytes& b = segs[i];
    const std::size_t pl = std::min<std::size_t>(mss, payload - off);
    ASSERT_EQ(b.size(), l4 + 8 + pl);
    EXPECT_EQ(load_be16(&b[l4 + 4]), 8 + pl) << "UDP length = 8 + its payload (seg " << i << ")";
    EXPECT_TRUE(l4_valid(&b[ip], v6, &b[l4], 8 + pl, 17)) << "seg " << i;
    EXPECT_NE(load_be16(&b[l4 + 6]), 0);
    EXPECT_TRUE(std::equal(b.begin() + l4 + 8, b.end(), f.begin() + l4 + 8 + off));
    if (!v6) EXPECT_EQ(load_be16(&b[ip + 2]), 20 + 8 + pl);
    else EXPECT_EQ(load_be16(&b[ip + 4]), 8 + pl);
    off += pl;
  }
}

}  // namespace

// X-29 / D1: payload an exact multiple of gso_size (no short tail), k = 1..64 → every
// datagram has UDP length 8 + payload and a valid checksum; with and without a tail.
TEST(GsoUdp, D1_EqualTailEveryKBothFamilies) {
  for (bool v6 : {false, true}) {
    for (std::size_t k : {2u, 3u, 17u, 64u}) {
      expect_udp_train(udp_frame(v6, k * 100), v6, k * 100, 100, core::Features{});
      expect_udp_train(udp_frame(v6, k * 100 + 1), v6, k * 100 + 1, 100, core::Features{});
      expect_udp_train(udp_frame(v6, k * 100 + 37), v6, k * 100 + 37, 100, nf::SG);
    }
  }
}

TEST(GsoUdp, X29_OneByteTail) {
  expect_udp_train(udp_frame(false, 1201), false, 1201, 1200, core::Features{});
  expect_udp_train(udp_frame(true, 1201), true, 1201, 1200, core::Features{});
}

// D2 / X-28: a single segment's worth of payload is not GSO (nothing to segment).
TEST(GsoUdp, D2_SingleSegmentIsNotGso) {
  Bytes f = udp_frame(false, 1400);
  ofld::gso::PrepareOptions o;
  o.gso_size = 1400;
  auto l = wire::parse_frame(f, wire::LinkType::Ethernet, {});
  auto p = gso::prepare_frame(f, l.value(), o);
  EXPECT_EQ(p.status, gso::PrepareStatus::PassThrough);
  EXPECT_FALSE(p.pkt.is_gso());
  // and forcing GSO metadata on it is refused by the USO handler
  core::Packet q = prepare(udp_frame(false, 1500), 1400);
  q.gso.size = 1400;
  q.trim(q.len() - 100);
  gso::GsoResult r = gso::gso_segment(std::move(q), {}, device({}));
  EXPECT_EQ(r.reason, gso::GsoReason::NothingToSegment);
}

// D6 / X-29: PARTIAL segments carry the UNcomplemented folded pseudo-header sum.
TEST(GsoUdp, D6_PartialSeedNotComplemented) {
  Bytes f = udp_frame(false, 3000);
  std::vector<core::IpSummed> st;
  auto segs = uso(f, 1400, nf::SG | nf::HW_CSUM, nullptr, &st);
  ASSERT_EQ(segs.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(st[i], core::IpSummed::Partial);
    const std::size_t l4len = segs[i].size() - 34;
    EXPECT_EQ(load_be16(&segs[i][34 + 6]), pseudo_only(&segs[i][14], false, l4len, 17));
  }
}

// C-14 / X-29: a UDP checksum that computes to 0 is sent as 0xFFFF. Derivation: the last
// segment's payload ends in two bytes W; a checksum field value C satisfies
// ~fold(pseudo + sum(hdr with C=0) + sum(payload)) = C. We pick W so that the sum of
// everything else plus W folds to 0xFFFF, i.e. W = ~fold(rest) — then the computed checksum
// is ~0xFFFF = 0 and must be written as 0xFFFF.
TEST(GsoUdp, C14_ZeroChecksumBecomesFfff) {
  const std::size_t payload = 250, mss = 200;
  Bytes f = udp_frame(false, payload);
  // last segment: payload bytes [200, 250); its last two bytes are frame[end-2..end)
  const std::size_t l4 = 34, seg_pl = 50;
  Bytes seg(l4 + 8 + seg_pl);
  std::copy(f.begin(), f.begin() + l4 + 8, seg.begin());
  std::copy(f.begin() + l4 + 8 + 200, f.end(), seg.begin() + l4 + 8);
  wire::store_be16(&seg[l4 + 4], std::uint16_t(8 + seg_pl));
  wire::store_be16(&seg[l4 + 6], 0);
  wire::store_be16(&seg[seg.size() - 2], 0);
  using namespace csum;
  wsum rest = csum_tcpudp_nofold(&seg[26], &seg[30], 8 + seg_pl, 17,
                                 csum_partial(&seg[l4], 8 + seg_pl, 0));
  const std::uint16_t w = std::uint16_t(~csum_fold16(rest));
  wire::store_be16(&f[f.size() - 2], w);
  auto segs = uso(f, mss, core::Features{});
  ASSERT_EQ(segs.size(), 2u);
  EXPECT_EQ(load_be16(&segs[1][l4 + 6]), 0xFFFF);
  EXPECT_TRUE(l4_valid(&segs[1][14], false, &segs[1][l4], 8 + seg_pl, 17));
}

// ---- virtio_net_hdr → packet (S-1..S-6) ------------------------------------------------------

namespace {
using offload::virtio::VnetReject;
offload::virtio::VnetHdr tcp4_hdr(std::uint16_t mss) {
  offload::virtio::VnetHdr h;
  h.flags = wire::virtio_net::kFlagNeedsCsum;
  h.gso_type = wire::virtio_net::kGsoTcpv4;
  h.gso_size = mss;
  h.csum_start = 34;
  h.csum_offset = 16;
  h.hdr_len = 54;
  return h;
}
VnetReject reject_of(const offload::virtio::VnetHdr& h, const Bytes& f,
                     offload::virtio::VnetCounters* c = nullptr) {
  return offload::virtio::to_packet(h, f, wire::LinkType::Ethernet, c).reason;
}
}  // namespace

TEST(GsoVirtio, S1_UnknownGsoTypeAndZeroSize) {
  Bytes f = tcp_frame({});
  auto h = tcp4_hdr(1448);
  h.gso_type = 2;
  EXPECT_EQ(reject_of(h, f), VnetReject::UnknownGsoType);
  h = tcp4_hdr(0);
  EXPECT_EQ(reject_of(h, f), VnetReject::GsoSizeZero);
}

TEST(GsoVirtio, S2_B1_CsumStartBeyondFrame) {
  Bytes f = tcp_frame({});
  offload::virtio::VnetCounters c;
  auto h = tcp4_hdr(1448);
  h.csum_start = std::uint16_t(f.size() + 10);
  EXPECT_EQ(reject_of(h, f, &c), VnetReject::CsumOutsideFrame);
  h = tcp4_hdr(1448);
  h.gso_type = 0;
  h.csum_start = std::uint16_t(f.size() - 2);
  h.csum_offset = 1;  // start + offset + 2 > len
  EXPECT_EQ(reject_of(h, f, &c), VnetReject::CsumOutsideFrame);
  h.csum_offset = 0xffff;
  h.csum_start = 0xffff;
  EXPECT_EQ(reject_of(h, f, &c), VnetReject::CsumOutsideFrame);
  EXPECT_EQ(c.rejected[std::size_t(VnetReject::CsumOutsideFrame)], 3u);
}

TEST(GsoVirtio, S2_B2c_CsumStartInsideNetworkHeader) {
  Bytes f = tcp_frame({});
  auto h = tcp4_hdr(1448);
  h.csum_start = 14;  // < 20 from the frame start
  EXPECT_EQ(reject_of(h, f), VnetReject::CsumStartTooSmall);
  TcpSpec s6;
  s6.v6 = true;
  Bytes f6 = tcp_frame(s6);
  h.gso_type = wire::virtio_net::kGsoTcpv6;
  h.csum_start = 30;  // < 40 for TCPV6
  EXPECT_EQ(reject_of(h, f6), VnetReject::CsumStartTooSmall);
}

TEST(GsoVirtio, S4_B2a_TcpCsumOffsetMustBe16) {
  Bytes f = tcp_frame({});
  auto h = tcp4_hdr(1448);
  h.csum_offset = 6;
  EXPECT_EQ(reject_of(h, f), VnetReject::TcpBadCsumOffset);
}

// B2b: a GRO'd frame (no NEEDS_CSUM, or DATA_VALID) is legitimate: accepted, then GSO
// recomputes the checksum.
TEST(GsoVirtio, S3_B2b_GsoWithoutNeedsCsumAccepted) {
  Bytes f = tcp_frame({});
  auto h = tcp4_hdr(1448);
  for (std::uint8_t flags : {std::uint8_t(0), wire::virtio_net::kFlagDataValid}) {
    h.flags = flags;
    auto r = offload::virtio::to_packet(h, f);
    ASSERT_TRUE(r.ok()) << to_string(r.reason);
    EXPECT_TRUE(r.pkt.is_gso());
    EXPECT_TRUE(r.pkt.gso.type & core::skb_gso::DODGY);  // S-5
    EXPECT_EQ(r.pkt.ip_summed(), core::IpSummed::None);
    auto g = gso::gso_segment(std::move(r.pkt), {}, device({}));
    ASSERT_TRUE(g.ok());
    for (auto& s : g.segs) {
      Bytes b = s.to_bytes();
      EXPECT_TRUE(l4_valid(&b[14], false, &b[34], b.size() - 34, 6));
    }
  }
}

TEST(GsoVirtio, S3_L4ProtocolMustMatchGsoType) {
  Bytes f = udp_frame(false, 3000);
  auto h = tcp4_hdr(1448);
  h.flags = 0;
  EXPECT_EQ(reject_of(h, f), VnetReject::L4ProtoMismatch);
}

TEST(GsoVirtio, S4_K6_UsoRules) {
  Bytes f = udp_frame(false, 3000);
  offload::virtio::VnetHdr h;
  h.gso_type = wire::virtio_net::kGsoUdpL4;
  h.gso_size = 1000;
  h.csum_start = 34;
  h.csum_offset = 6;
  EXPECT_EQ(reject_of(h, f), VnetReject::UsoWithoutNeedsCsum);  // K-6
  h.flags = wire::virtio_net::kFlagNeedsCsum;
  h.csum_offset = 16;
  EXPECT_EQ(reject_of(h, f), VnetReject::UsoBadCsumOffset);
  h.csum_offset = 6;
  h.gso_type |= wire::virtio_net::kGsoEcn;
  EXPECT_EQ(reject_of(h, f), VnetReject::UsoWithEcn);
  h.gso_type = wire::virtio_net::kGsoUdpL4;
  h.gso_size = 20;  // 2992 > 20 * 128
  EXPECT_EQ(reject_of(h, f), VnetReject::UsoTooManySegments);
  h.gso_size = 1000;
  EXPECT_EQ(reject_of(h, f), VnetReject::Ok);
}

TEST(GsoVirtio, S4_GsoByFragsRejected) {
  Bytes f = tcp_frame({});
  EXPECT_EQ(reject_of(tcp4_hdr(0xffff), f), VnetReject::GsoByFrags);
}

// S-5: payload not above gso_size → not GSO at all.
TEST(GsoVirtio, S5_SmallPayloadNotGso) {
  TcpSpec s;
  s.payload = 1000;
  auto r = offload::virtio::to_packet(tcp4_hdr(1448), tcp_frame(s));
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r.pkt.is_gso());
  EXPECT_EQ(r.pkt.ip_summed(), core::IpSummed::Partial);
}

// B5: hdr_len is only a hint — a wrong hdr_len changes nothing.
TEST(GsoVirtio, B5_HdrLenIsOnlyAHint) {
  Bytes f = tcp_frame({});
  auto h = tcp4_hdr(1448);
  for (std::uint16_t hl : {std::uint16_t(0), std::uint16_t(1500), std::uint16_t(60000)}) {
    h.hdr_len = hl;
    auto r = offload::virtio::to_packet(h, f);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r.pkt.csum_start_offset(), 34);
    auto g = gso::gso_segment(std::move(r.pkt), {}, device({}));
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g.segs.size(), 3u);
  }
}

TEST(GsoVirtio, S7_S8_FromPacket) {
  Bytes f = tcp_frame({});
  auto r = offload::virtio::to_packet(tcp4_hdr(1448), f);
  ASSERT_TRUE(r.ok());
  r.pkt.gso.type |= core::skb_gso::TCP_ECN | core::skb_gso::UDP_TUNNEL;
  auto h = offload::virtio::from_packet(r.pkt);
  ASSERT_TRUE(h);
  EXPECT_EQ(h->gso_type, wire::virtio_net::kGsoTcpv4 | wire::virtio_net::kGsoEcn);
  EXPECT_EQ(h->flags, wire::virtio_net::kFlagNeedsCsum);
  EXPECT_EQ(h->csum_start, 34);
  EXPECT_EQ(h->csum_offset, 16);
  EXPECT_EQ(h->gso_size, 1448);
  r.pkt.gso.type = core::skb_gso::UDP;  // UFO alone → -EINVAL
  EXPECT_FALSE(offload::virtio::from_packet(r.pkt));
}
