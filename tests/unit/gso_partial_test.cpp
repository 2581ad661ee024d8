// GSO_PARTIAL (spec GSO-partial branch, X-21, X-25, X-27, X-31, X-33, X-35):
// software splits into chunks of partial_segs × mss that are themselves GSO skbs, writes
// every header except the innermost L4 as for ONE mss-sized packet, and the device does plain
// TSO on the innermost TCP. Expected values are the spec's formulas written out here with
// the header sizes of RFC 791/768/7348/2784, and a device emulation of X-35 (plain TSO on
// the inner TCP, headers replicated) whose every output must be a valid packet.
#include <gtest/gtest.h>

#include "gso_test_util.hpp"

using namespace gso_test;
using namespace ofld;
namespace nf = core::netif_f;
namespace sg = core::skb_gso;
using wire::load_be16;
using wire::load_be32;

namespace {

constexpr std::size_t kOip = 14, kOl4 = 34;

// X-35 device: plain TSO on the innermost TCP of a GSO-partial segment. Headers (all bytes in
// front of the TCP payload) are replicated; the inner IPv4 ID advances and its checksum is
// redone, TCP seq advances by mss and the TCP checksum is computed; the outer IPv4 ID
// advances (the driver's job, X-35) with its checksum. Nothing else is touched.
std::vector<Bytes> device_tso(const Bytes& b, std::size_t iip, bool iv6, std::size_t il4,
                              std::size_t mss, bool outer_v4) {
  const std::size_t thl = std::size_t(b[il4 + 12] >> 4) * 4;
  const std::size_t hl = il4 + thl;
  std::vector<Bytes> out;
  for (std::size_t off = 0, k = 0; hl + off < b.size(); off += mss, ++k) {
    const std::size_t n = std::min(mss, b.size() - hl - off);
    Bytes f(b.begin(), b.begin() + std::ptrdiff_t(hl));
    f.insert(f.end(), b.begin() + std::ptrdiff_t(hl + off), b.begin() + std::ptrdiff_t(hl + off + n));
    if (outer_v4) {
      put16(f, kOip + 4, std::uint16_t(load_be16(&f[kOip + 4]) + k));
      put16(f, kOip + 10, 0);
      put16(f, kOip + 10, csum::ip_compute_csum(&f[kOip], 20));
    }
    if (!iv6) {
      put16(f, iip + 4, std::uint16_t(load_be16(&f[iip + 4]) + k));
      put16(f, iip + 10, 0);
      put16(f, iip + 10, csum::ip_compute_csum(&f[iip], 20));
    }
    wire::store_be32(&f[il4 + 4], load_be32(&f[il4 + 4]) + std::uint32_t(off));
    put16(f, il4 + 16, 0);
    put16(f, il4 + 16, l4_checksum(&f[iip], iv6, &f[il4], f.size() - il4, 6));
    out.push_back(std::move(f));
  }
  return out;
}

core::Device vxlan_csum_partial_device() {
  return partial_device(
      nf::SG | nf::HW_CSUM | nf::TSO | nf::TSO6 | nf::TSO_ECN | nf::GSO_UDP_TUNNEL,
      nf::GSO_UDP_TUNNEL_CSUM);
}

}  // namespace

// F-19 (tx_prepare hands out the segments) + X-2 + X-10 + X-21 + X-25 + X-31: VXLAN with outer UDP checksum on a device that offers
// GSO_PARTIAL with UDP_TUNNEL_CSUM among gso_partial_features. payload 3000, mss 1400 →
// partial_segs = ⌊3000/1400⌋ = 2: one GSO skb of 2800 bytes (gso_size 1400, gso_segs 2,
// type |= PARTIAL) and a 200-byte plain tail.
TEST(GsoPartial, X10_X31_VxlanCsumTwoMssChunkAndTail) {
  TcpSpec s;
  s.flags = 0x10 | 0x80;  // ACK CWR
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
  core::Device dev = vxlan_csum_partial_device();
  gso::GsoCounters c;
  gso::TxResult tx = gso::tx_prepare(prepare(f, 1400), dev, &c);
  ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
  EXPECT_TRUE(tx.action.software_gso) << "F-11: UDP_TUNNEL_CSUM only for PARTIAL packets";
  ASSERT_EQ(tx.out.size(), 2u);
  EXPECT_EQ(c.packets_partial, 1u);
  const std::size_t iip = 64, il4 = 84, pay = 104;
  const core::Packet& p0 = tx.out[0];
  const core::Packet& p1 = tx.out[1];
  EXPECT_EQ(p0.gso.size, 1400);
  EXPECT_EQ(p0.gso.segs, 2);
  EXPECT_EQ(p0.gso.type, sg::TCPV4 | sg::TCP_ECN | sg::UDP_TUNNEL_CSUM | sg::PARTIAL);
  EXPECT_FALSE(p1.is_gso()) << "tail payload 200 <= gso_size → gso_size 0 (X-10)";
  Bytes b0 = p0.to_bytes(), b1 = p1.to_bytes();
  ASSERT_EQ(b0.size(), pay + 2800);
  ASSERT_EQ(b1.size(), pay + 200);
  // tot_len for ONE mss on the GSO skb; the running ID advances by its gso_segs.
  EXPECT_EQ(load_be16(&b0[kOip + 2]), 20 + 8 + 8 + 14 + 20 + 20 + 1400);  // IP UDP VXLAN Eth IP TCP
  EXPECT_EQ(load_be16(&b0[kOip + 4]), 0x4000);
  EXPECT_EQ(load_be16(&b1[kOip + 2]), b1.size() - kOip);
  EXPECT_EQ(load_be16(&b1[kOip + 4]), 0x4000 + 2);
  EXPECT_EQ(load_be16(&b0[iip + 2]), 20 + 20 + 1400);
  EXPECT_EQ(load_be16(&b0[iip + 4]), 1000);
  EXPECT_EQ(load_be16(&b1[iip + 2]), b1.size() - iip);
  EXPECT_EQ(load_be16(&b1[iip + 4]), 1002);
  for (const Bytes* b : {&b0, &b1}) {
    EXPECT_EQ(csum::ip_compute_csum(&(*b)[kOip], 20), 0);
    EXPECT_EQ(csum::ip_compute_csum(&(*b)[iip], 20), 0);
  }
  // uh->len for one mss on the GSO skb, actual on the tail.
  EXPECT_EQ(load_be16(&b0[kOl4 + 4]), 8 + 8 + 14 + 20 + 20 + 1400);
  EXPECT_EQ(load_be16(&b1[kOl4 + 4]), b1.size() - kOl4);
  // seq advances by mss × gso_segs; the TCP seed counts the chunk's real length.
  EXPECT_EQ(load_be32(&b0[il4 + 4]), s.seq);
  EXPECT_EQ(load_be32(&b1[il4 + 4]), s.seq + 2800);
  EXPECT_EQ(load_be16(&b0[il4 + 16]), pseudo_only(&b0[iip], false, 20 + 2800, 6));
  EXPECT_EQ(load_be16(&b1[il4 + 16]), pseudo_only(&b1[iip], false, 20 + 200, 6));
  EXPECT_TRUE(b0[il4 + 13] & 0x80) << "CWR stays on the first chunk (the device clears it after)";
  EXPECT_FALSE(b1[il4 + 13] & 0x80);
  // Payload order.
  EXPECT_TRUE(std::equal(b0.begin() + pay, b0.end(), f.begin() + pay));
  EXPECT_TRUE(std::equal(b1.begin() + pay, b1.end(), f.begin() + pay + 2800));
  // the outer seed used the REAL UDP length; the outer checksum was computed in
  // software over the outer header plus the inner region's sum (inner still PARTIAL). Check:
  // with the inner TCP finished, pseudo(real length) + the UDP region sums to 0xFFFF.
  for (const core::Packet* p : {&p0, &p1}) {
    core::Packet q = p->copy();
    q.gso = {};
    q.linearize();
    ASSERT_EQ(q.ip_summed(), core::IpSummed::Partial);
    ASSERT_EQ(core::checksum_help(q), core::PacketError::Ok);
    Bytes qb = q.to_bytes();
    csum::wsum sum = csum::csum_partial(&qb[kOl4], qb.size() - kOl4, 0);
    sum = csum::csum_tcpudp_nofold(&qb[kOip + 12], &qb[kOip + 16],
                                   std::uint32_t(qb.size() - kOl4), 17, sum);
    EXPECT_EQ(csum::csum_fold16(sum), 0xffff) << "outer UDP over the real length";
  }
  // the device's plain TSO on the chunk gives packets whose headers fit exactly.
  for (const Bytes& fr : device_tso(b0, iip, false, il4, 1400, true)) {
    EXPECT_EQ(load_be16(&fr[kOip + 2]), fr.size() - kOip);
    EXPECT_EQ(load_be16(&fr[kOl4 + 4]), fr.size() - kOl4);
    EXPECT_EQ(load_be16(&fr[iip + 2]), fr.size() - iip);
    EXPECT_TRUE(l4_valid(&fr[iip], false, &fr[il4], fr.size() - il4, 6));
  }
}

// a payload that is an exact multiple of mss gives ONE output, a GSO skb with
// gso_segs = payload / mss (no tail). 4200 = 3 × 1400.
TEST(GsoPartial, X10_ExactMultipleIsOneGsoSkb) {
  for (bool iv6 : {false, true}) {
    TcpSpec s;
    s.v6 = iv6;
    s.payload = 4200;
    Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
    gso::TxResult tx = gso::tx_prepare(prepare(f, 1400), vxlan_csum_partial_device());
    ASSERT_FALSE(tx.dropped());
    ASSERT_EQ(tx.out.size(), 1u);
    EXPECT_EQ(tx.out[0].gso.size, 1400);
    EXPECT_EQ(tx.out[0].gso.segs, 3);
    EXPECT_TRUE(tx.out[0].gso.type & sg::PARTIAL);
    Bytes b = tx.out[0].to_bytes();
    ASSERT_EQ(b.size(), f.size());
    const std::size_t iip = 64, il4 = iip + (iv6 ? 40 : 20);
    EXPECT_EQ(load_be16(&b[kOl4 + 4]), (il4 - kOl4) + 20 + 1400);
    if (iv6) {
      EXPECT_EQ(load_be16(&b[iip + 4]), 20 + 1400);
    } else {
      EXPECT_EQ(load_be16(&b[iip + 2]), 20 + 20 + 1400);
    }
    EXPECT_TRUE(std::equal(b.begin() + std::ptrdiff_t(il4 + 20), b.end(),
                           f.begin() + std::ptrdiff_t(il4 + 20)));
    for (const Bytes& fr : device_tso(b, iip, iv6, il4, 1400, true)) {
      EXPECT_EQ(load_be16(&fr[kOl4 + 4]), fr.size() - kOl4);
      if (iv6) {
        EXPECT_EQ(load_be16(&fr[iip + 4]), fr.size() - iip - 40);
      } else {
        EXPECT_EQ(load_be16(&fr[iip + 2]), fr.size() - iip);
      }
    }
  }
}

// GSO_PARTIAL is withdrawn when the device cannot take the packet's gso_type even with
// its partial-only features: here UDP_TUNNEL_CSUM is in neither set → plain mss segments.
TEST(GsoPartial, X2_WithdrawnWhenTypeNotCovered) {
  TcpSpec s;
  Bytes f = encap(tcp_frame(s), Outer::Vxlan, false, true);
  core::Device dev = partial_device(nf::SG | nf::HW_CSUM | nf::TSO | nf::GSO_UDP_TUNNEL,
                                    nf::GSO_GRE_CSUM);
  gso::GsoCounters c;
  gso::TxResult tx = gso::tx_prepare(prepare(f, 1400), dev, &c);
  ASSERT_FALSE(tx.dropped());
  ASSERT_EQ(tx.out.size(), 3u);
  EXPECT_EQ(c.packets_partial, 0u);
  for (auto& p : tx.out) EXPECT_FALSE(p.is_gso());
  // Likewise a TCP_ECN (CWR) packet on a device without TSO_ECN (F-18 needs it).
  TcpSpec e;
  e.flags = 0x10 | 0x80;
  core::Device no_ecn = partial_device(nf::SG | nf::HW_CSUM | nf::TSO | nf::GSO_UDP_TUNNEL,
                                       nf::GSO_UDP_TUNNEL_CSUM);
  gso::TxResult tx2 =
      gso::tx_prepare(prepare(encap(tcp_frame(e), Outer::Vxlan, false, true), 1400), no_ecn);
  ASSERT_FALSE(tx2.dropped());
  EXPECT_EQ(tx2.out.size(), 3u);
}

// GRE with checksum, GSO-partial: the GRE checksum field is pre-adjusted by
// (chunk payload − gso_size) before the software checksum, so that the checksum is right for
// every ONE-mss packet the device cuts. Verified on the device emulation's output:
// every frame's GRE checksum (RFC 2784: over GRE header and payload) is valid.
TEST(GsoPartial, X33_GreCsumPreAdjustedForOneMss) {
  for (bool iv6 : {false, true}) {
    TcpSpec s;
    s.v6 = iv6;
    s.payload = 5000;
    Bytes f = encap(tcp_frame(s), Outer::Gre, false, false, /*gre_csum=*/true, /*teb=*/false);
    core::Device dev = partial_device(nf::SG | nf::HW_CSUM | nf::TSO | nf::TSO6 | nf::GSO_GRE,
                                      nf::GSO_GRE_CSUM);
    gso::TxResult tx = gso::tx_prepare(prepare(f, 1200), dev);
    ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
    ASSERT_EQ(tx.out.size(), 2u);  // ⌊5000/1200⌋ = 4 → 4800 + 200
    EXPECT_EQ(tx.out[0].gso.segs, 4);
    const std::size_t iip = kOl4 + 8, il4 = iip + (iv6 ? 40 : 20);
    Bytes b0 = tx.out[0].to_bytes();
    auto frames = device_tso(b0, iip, iv6, il4, 1200, true);
    ASSERT_EQ(frames.size(), 4u);
    for (const Bytes& fr : frames) {
      EXPECT_EQ(load_be16(&fr[kOip + 2]), fr.size() - kOip);
      EXPECT_EQ(csum::ip_compute_csum(&fr[kOl4], fr.size() - kOl4), 0) << "GRE checksum";
    }
    // Plain tail: once the device has finished its inner TCP checksum (it is PARTIAL), the
    // GRE checksum over its own bytes is valid.
    core::Packet t = tx.out[1].copy();
    t.linearize();
    ASSERT_EQ(core::checksum_help(t), core::PacketError::Ok);
    Bytes b1 = t.to_bytes();
    EXPECT_EQ(csum::ip_compute_csum(&b1[kOl4], b1.size() - kOl4), 0);
  }
}

// for IP-in-IP under GSO_PARTIAL (X-34 + X-35): outer and inner lengths for one
// mss; the device's TSO output has consistent lengths in both headers.
TEST(GsoPartial, X25_X27_IpipOuterLengthsForOneMss) {
  for (bool ov6 : {false, true}) {
    TcpSpec s;
    s.payload = 3000;
    Bytes f = ipip_encap(tcp_frame(s), ov6);
    core::Device dev = partial_device(nf::SG | nf::HW_CSUM | nf::TSO,
                                      ov6 ? nf::GSO_IPXIP6 : nf::GSO_IPXIP4);
    gso::TxResult tx = gso::tx_prepare(prepare(f, 1000), dev);
    ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
    ASSERT_EQ(tx.out.size(), 1u);  // 3000 = 3 × 1000
    Bytes b = tx.out[0].to_bytes();
    const std::size_t iip = 14 + (ov6 ? 40 : 20), il4 = iip + 20;
    if (ov6) EXPECT_EQ(load_be16(&b[kOip + 4]), 20 + 20 + 1000);
    else EXPECT_EQ(load_be16(&b[kOip + 2]), 20 + 20 + 20 + 1000);
    for (const Bytes& fr : device_tso(b, iip, false, il4, 1000, !ov6)) {
      if (ov6) EXPECT_EQ(load_be16(&fr[kOip + 4]), fr.size() - kOip - 40);
      else EXPECT_EQ(load_be16(&fr[kOip + 2]), fr.size() - kOip);
      EXPECT_EQ(load_be16(&fr[iip + 2]), fr.size() - iip);
      EXPECT_TRUE(l4_valid(&fr[iip], false, &fr[il4], fr.size() - il4, 6));
    }
  }
}

// D1 under GSO_PARTIAL (public bug: the "equal tail" — payload an exact multiple of mss —
// got the wrong UDP length/checksum when the last output was itself a GSO skb). USO on a
// device offering GSO_PARTIAL with GSO_UDP_L4 as a partial-only feature, payload k × mss for
// k = 1..64, with and without a short tail. Expected (6.12, X-10/X-25/X-29): a chunk of
// ⌊payload/mss⌋ × mss that is a GSO skb (gso_segs = that count, unless it is 1: then plain
// segmentation), IPv4 tot_len for one mss, UDP length 8 + the chunk's payload and the pseudo
// seed for that length; a short tail is a plain datagram with its own length and seed. The
// device's cut of the chunk into mss datagrams carries the payload in order.
TEST(GsoPartial, D1_UsoEqualTailUnderGsoPartial) {
  core::Device dev = partial_device(nf::SG | nf::HW_CSUM, nf::GSO_UDP_L4);
  const std::size_t mss = 1000;
  for (std::size_t k = 1; k <= 64; ++k)
    for (std::size_t tail : {0u, 37u}) {
      const std::size_t payload = k * mss + tail;
      if (payload <= mss) continue;  // not GSO (D2)
      SCOPED_TRACE(testing::Message() << "k " << k << " tail " << tail);
      Bytes f = udp_frame(false, payload);
      gso::TxResult tx = gso::tx_prepare(prepare(f, std::uint16_t(mss)), dev);
      ASSERT_FALSE(tx.dropped()) << offload::to_string(tx.gso_reason);
      std::size_t seen = 0;
      for (auto& p : tx.out) {
        Bytes b = p.to_bytes();
        const std::size_t pl = b.size() - 42;
        EXPECT_EQ(load_be16(&b[34 + 4]), 8 + pl) << "UDP length = 8 + this output's payload";
        EXPECT_EQ(load_be16(&b[34 + 6]), pseudo_only(&b[14], false, 8 + pl, 17));
        if (p.is_gso()) {
          EXPECT_EQ(p.gso.segs, k);
          EXPECT_EQ(pl, k * mss);
          EXPECT_EQ(load_be16(&b[14 + 2]), 20 + 8 + mss) << "X-25: tot_len for one mss";
          // Device USO: mss datagrams cut from the chunk carry the payload in order.
          for (std::size_t off = 0; off < pl; off += mss)
            EXPECT_TRUE(std::equal(b.begin() + std::ptrdiff_t(42 + off),
                                   b.begin() + std::ptrdiff_t(42 + off + mss),
                                   f.begin() + std::ptrdiff_t(42 + seen + off)));
        } else {
          EXPECT_EQ(load_be16(&b[14 + 2]), b.size() - 14);
        }
        seen += pl;
      }
      EXPECT_EQ(seen, payload);
    }
}
