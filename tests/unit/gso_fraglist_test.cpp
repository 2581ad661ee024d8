// Fraglist GSO (spec X-11 GSO_BY_FRAGS, X-18, X-22, X-28 fraglist branch, X-32
// skb_segment_list). Input: an aggregate built the way fraglist GRO leaves it — the first
// frame as the head (its IP/UDP lengths rewritten to the aggregate's, CHECKSUM_UNNECESSARY),
// every further frame a frag_list member with data() at its payload and its own IP and L4
// headers still in front. Expected: the members become packets again; since each keeps its
// own headers and the L3 hooks rewrite lengths and IDs from the head, a stream
// of consecutive frames comes back byte for byte, with valid checksums (RFC 1071).
#include <gtest/gtest.h>

#include "gso_test_util.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
namespace sg = core::skb_gso;
using wire::load_be16;

namespace {

// Consecutive TCP frames of one flow: payloads `sizes`, seq and IPv4 ID advancing.
std::vector<Bytes> tcp_stream(bool v6, const std::vector<std::size_t>& sizes) {
  std::vector<Bytes> v;
  std::uint32_t seq = 0x01000000;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    TcpSpec s;
    s.v6 = v6;
    s.payload = sizes[i];
    s.seq = seq;
    s.ip_id = std::uint16_t(1000 + i);
    s.fill_seed = std::uint8_t(i * 31 + 5);
    v.push_back(tcp_frame(s));
    seq += std::uint32_t(sizes[i]);
  }
  return v;
}

std::vector<Bytes> udp_stream(bool v6, const std::vector<std::size_t>& sizes) {
  std::vector<Bytes> v;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    Bytes f = udp_frame(v6, sizes[i], std::uint8_t(i * 17 + 1));
    if (!v6) {  // IDs advance as a sender's would
      put16(f, 14 + 4, std::uint16_t(7 + i));
      put16(f, 14 + 10, 0);
      put16(f, 14 + 10, csum::ip_compute_csum(&f[14], 20));
    }
    v.push_back(std::move(f));
  }
  return v;
}

// The fraglist GRO aggregate of `frames` (all with the same header length).
core::Packet aggregate(const std::vector<Bytes>& frames, bool v6, bool udp, std::uint16_t mss,
                       std::uint32_t extra_type = 0) {
  const std::size_t iphl = v6 ? 40 : 20, l4hl = udp ? 8 : 20, hl = 14 + iphl + l4hl;
  Bytes h = frames[0];
  std::size_t total = h.size();
  for (std::size_t i = 1; i < frames.size(); ++i) total += frames[i].size() - hl;
  // GRO complete: the head's IP (and UDP) lengths describe the aggregate.
  if (v6) {
    put16(h, 14 + 4, std::uint16_t(total - 54));
  } else {
    put16(h, 14 + 2, std::uint16_t(total - 14));
    put16(h, 14 + 10, 0);
    put16(h, 14 + 10, csum::ip_compute_csum(&h[14], 20));
  }
  if (udp) put16(h, 14 + iphl + 4, std::uint16_t(total - 14 - iphl));
  core::Packet head = core::Packet::from_bytes(h);
  head.mac_header = 0;
  head.network_header = 14;
  head.transport_header = core::pos_t(14 + iphl);
  head.protocol = v6 ? 0x86DD : 0x0800;
  head.csum = core::CsumUnnecessary{};
  for (std::size_t i = 1; i < frames.size(); ++i) {
    core::Packet m = core::Packet::from_bytes(frames[i]);
    m.network_header = 14;
    m.transport_header = core::pos_t(14 + iphl);
    m.pull(hl);
    head.add_to_frag_list(std::move(m));
  }
  head.gso.size = mss;
  head.gso.segs = std::uint16_t(frames.size());
  head.gso.type = (udp ? sg::UDP_L4 : (v6 ? sg::TCPV6 : sg::TCPV4)) | sg::FRAGLIST | extra_type;
  return head;
}

gso::TxResult run(core::Packet p, core::Features f, gso::GsoCounters* c = nullptr) {
  return gso::tx_prepare(std::move(p), device(f), c);
}

}  // namespace

// X-32 + X-18: intact geometry (head payload == gso_size) → one packet per member; a
// consecutive stream comes back byte for byte, for TCPv4 and TCPv6, with and without SG.
TEST(GsoFraglist, X32_X18_TcpMembersBecomeTheOriginalFrames) {
  for (bool v6 : {false, true})
    for (core::Features f : {core::Features{}, nf::SG}) {
      SCOPED_TRACE(testing::Message() << "v6 " << v6 << " features " << f.bits);
      auto frames = tcp_stream(v6, {1000, 1000, 1000, 500});
      gso::GsoCounters c;
      gso::TxResult tx = run(aggregate(frames, v6, false, 1000), f, &c);
      ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
      EXPECT_TRUE(tx.action.software_gso) << "F-18: no FRAGLIST/TSO on the device";
      EXPECT_EQ(c.packets_fraglist, 1u);
      ASSERT_EQ(tx.out.size(), frames.size());
      for (std::size_t i = 0; i < frames.size(); ++i)
        EXPECT_EQ(tx.out[i].to_bytes(), frames[i]) << "frame " << i;
    }
}

// X-28 fraglist branch + X-32 for UDP: the head's UDP length goes back to 8 + gso_size (its
// checksum, the original, is valid again for it); members keep theirs.
TEST(GsoFraglist, X28_UdpMembersBecomeTheOriginalDatagrams) {
  for (bool v6 : {false, true}) {
    auto frames = udp_stream(v6, {1200, 1200, 300});
    gso::TxResult tx = run(aggregate(frames, v6, true, 1200), nf::SG);
    ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
    ASSERT_EQ(tx.out.size(), 3u);
    for (std::size_t i = 0; i < frames.size(); ++i)
      EXPECT_EQ(tx.out[i].to_bytes(), frames[i]) << "v6 " << v6 << " datagram " << i;
  }
}

// the aggregate's head was rewritten (NAT) but its members were not: the second
// member differs from the head → every later packet gets the head's addresses and ports,
// its TCP checksum patched (still valid per RFC 1071) and its IPv4 header checksum redone.
TEST(GsoFraglist, X22_NatOnHeadAppliedToAllMembers) {
  for (bool v6 : {false, true}) {
    auto frames = tcp_stream(v6, {800, 800, 800});
    // NAT on the head: new source address and source port, checksums kept valid.
    Bytes& h = frames[0];
    const std::size_t ip = 14, l4 = v6 ? 54 : 34;
    h[ip + (v6 ? 23 : 15)] = 99;
    put16(h, l4, 61000);
    if (!v6) {
      put16(h, ip + 10, 0);
      put16(h, ip + 10, csum::ip_compute_csum(&h[ip], 20));
    }
    put16(h, l4 + 16, 0);
    put16(h, l4 + 16, l4_checksum(&h[ip], v6, &h[l4], h.size() - l4, 6));
    gso::TxResult tx = run(aggregate(frames, v6, false, 800), nf::SG);
    ASSERT_FALSE(tx.dropped());
    ASSERT_EQ(tx.out.size(), 3u);
    for (auto& p : tx.out) {
      Bytes b = p.to_bytes();
      EXPECT_EQ(b[ip + (v6 ? 23 : 15)], 99);
      EXPECT_EQ(load_be16(&b[l4]), 61000);
      if (!v6) {
        EXPECT_EQ(csum::ip_compute_csum(&b[ip], 20), 0);
      }
      EXPECT_TRUE(l4_valid(&b[ip], v6, &b[l4], b.size() - l4, 6));
    }
  }
}

// only the SECOND segment is compared with the head. If it matches, later members are
// left as they are even when they differ (kernel behaviour, spec text).
TEST(GsoFraglist, X22_OnlySecondSegmentCompared) {
  auto frames = tcp_stream(false, {800, 800, 800});
  Bytes& third = frames[2];
  third[14 + 15] = 77;  // a different source address on the third member only
  put16(third, 14 + 10, 0);
  put16(third, 14 + 10, csum::ip_compute_csum(&third[14], 20));
  put16(third, 34 + 16, 0);
  put16(third, 34 + 16, l4_checksum(&third[14], false, &third[34], third.size() - 34, 6));
  gso::TxResult tx = run(aggregate(frames, false, false, 800), nf::SG);
  ASSERT_FALSE(tx.dropped());
  ASSERT_EQ(tx.out.size(), 3u);
  EXPECT_EQ(tx.out[2].to_bytes()[14 + 15], 77);
}

// a UDP member with checksum 0 (IPv4: none) keeps 0 when NAT is applied; a patched
// checksum that comes out 0 would be written 0xFFFF (RFC 768).
TEST(GsoFraglist, X28_UdpZeroChecksumLeftAlone) {
  auto frames = udp_stream(false, {600, 600});
  put16(frames[1], 34 + 6, 0);
  frames[0][14 + 15] = 42;  // NAT on the head
  put16(frames[0], 14 + 10, 0);
  put16(frames[0], 14 + 10, csum::ip_compute_csum(&frames[0][14], 20));
  put16(frames[0], 34 + 6, 0);
  put16(frames[0], 34 + 6, csum::udp_csum_mangle(l4_checksum(&frames[0][14], false, &frames[0][34], frames[0].size() - 34, 17)));
  gso::TxResult tx = run(aggregate(frames, false, true, 600), nf::SG);
  ASSERT_FALSE(tx.dropped());
  ASSERT_EQ(tx.out.size(), 2u);
  Bytes b = tx.out[1].to_bytes();
  EXPECT_EQ(b[14 + 15], 42);
  EXPECT_EQ(load_be16(&b[34 + 6]), 0);
  EXPECT_EQ(csum::ip_compute_csum(&b[14], 20), 0);
}

// changed geometry (head payload != gso_size) or DODGY → no list split: the
// checksum is redone and ordinary mss segmentation runs over head and members alike.
TEST(GsoFraglist, X18_X28_ChangedGeometryOrDodgyFallsBackToMss) {
  for (bool udp : {false, true})
    for (bool dodgy : {false, true}) {
      SCOPED_TRACE(testing::Message() << "udp " << udp << " dodgy " << dodgy);
      auto frames = udp ? udp_stream(false, {dodgy ? 1000u : 700u, 1000, 1000})
                        : tcp_stream(false, {dodgy ? 1000u : 700u, 1000, 1000});
      const std::size_t payload = (dodgy ? 1000 : 700) + 2000;
      core::Packet p = aggregate(frames, false, udp, 1000, dodgy ? sg::DODGY : 0u);
      core::Device dev = device({});
      dev.features = dev.hw_enc_features = {};
      gso::GsoCounters c;
      auto r = gso::gso_segment(std::move(p), {}, dev, &c);
      ASSERT_TRUE(r.ok()) << offload::to_string(r.reason);
      EXPECT_EQ(c.packets_fraglist, 0u);
      ASSERT_EQ(r.segs.size(), (payload + 999) / 1000);
      const std::size_t l4 = 34;
      std::size_t seen = 0;
      for (auto& s : r.segs) {
        Bytes b = s.to_bytes();
        EXPECT_EQ(load_be16(&b[14 + 2]), b.size() - 14);
        EXPECT_TRUE(l4_valid(&b[14], false, &b[l4], b.size() - l4, udp ? 17 : 6));
        seen += b.size() - l4 - (udp ? 8 : 20);
      }
      EXPECT_EQ(seen, payload);
    }
}

// X-11 GSO_BY_FRAGS: segment boundaries are the head's own payload and each frag_list
// member; every segment gets the headers [frame start, payload) copied.
TEST(GsoFraglist, X11_GsoByFragsSplitsAtMembers) {
  auto frames = udp_stream(false, {300, 500, 200});
  core::Packet head = aggregate(frames, false, true, core::kGsoByFrags);
  core::Device dev = device(nf::SG | nf::HW_CSUM);
  gso::GsoCounters c;
  gso::GsoContext ctx;
  ctx.skb = &head;
  ctx.features = dev.features;
  ctx.dev = &dev;
  ctx.counters = &c;
  ctx.frame_start = head.data_pos();
  ctx.protocol = 0x0800;
  head.pull(14 + 20 + 8);  // data() at the payload, as the L4 hook hands it on
  ASSERT_EQ(core::segment_payload(ctx), 0);
  ASSERT_EQ(ctx.segs.size(), 3u);
  const std::size_t sizes[3] = {300, 500, 200};
  for (std::size_t i = 0; i < 3; ++i) {
    Bytes b = ctx.segs[i].pkt.to_bytes();
    ASSERT_EQ(b.size(), 42 + sizes[i]);
    EXPECT_TRUE(std::equal(b.begin() + 42, b.end(), frames[i].begin() + 42)) << "run " << i;
    EXPECT_TRUE(std::equal(b.begin(), b.begin() + 14, frames[0].begin())) << "headers from the head";
  }
  EXPECT_EQ(c.packets_fraglist, 1u);
  EXPECT_EQ(c.seg_mode[std::size_t(gso::SegMode::SgRef)], 3u);
}
