// VXLAN encapsulation / decapsulation (spec V-1..V-4, W-25, W-26, C-33, K-1, K-2).
#include <gtest/gtest.h>

#include <array>

#include "ofld/tunnel/encapsulation.hpp"
#include "ofld/tunnel/inner_csum.hpp"
#include "ofld/tunnel/vxlan.hpp"
#include "tunnel_test_util.hpp"

namespace {

using namespace ofld;
using namespace tunnel_test;
using tunnel::Drop;

tunnel::VxlanConfig cfg4() {
  tunnel::VxlanConfig c;
  c.vni = 42;
  c.local = *tunnel::IpAddr::parse("10.0.0.1");
  c.remotes = {*tunnel::IpAddr::parse("10.0.0.2")};
  return c;
}

/// A CHECKSUM_PARTIAL packet for a frame whose TCP field holds the seed (as a TAP read with
/// NEEDS_CSUM delivers it).
core::Packet partial_packet(const std::vector<std::uint8_t>& f, bool v6) {
  auto p = core::Packet::from_bytes(f);
  p.set_partial(v6 ? 54 : 34, 16);
  return p;
}

/// The datagram the endpoint sends for one segment `p`, made as Endpoint::transmit makes it:
/// the one inner-checksum decision (inner_csum_plan over the VXLAN plug-in's rco_tx /
/// rco_encodable), the checksum finished in software when it says so (csum_sw), then the
/// plug-in's 8-byte header followed by the segment's bytes.
tunnel::EncapInfo encap_datagram(core::Packet& p, const tunnel::VxlanConfig& c, std::vector<std::uint8_t>& out) {
  const auto enc = tunnel::make_encapsulation(c);
  tunnel::InnerCsumFacts f;
  f.partial = p.ip_summed() == core::IpSummed::Partial;
  f.rco_tx = enc->rco_tx();
  if (f.partial) {
    f.inet = !std::get<core::CsumPartial>(p.csum).not_inet;
    f.start_known = p.csum_start_offset() >= 0;
    f.rco_encodable = f.rco_tx && f.start_known && enc->rco_encodable(p);
  }
  const auto how = tunnel::inner_csum_plan(f);
  bool summed = false;
  if (how == tunnel::InnerCsum::SumInTrain || how == tunnel::InnerCsum::SumInEncap) {
    if (core::checksum_help(p) != core::PacketError::Ok) return {};
    summed = true;
  }
  std::array<std::uint8_t, tunnel::kMaxTunnelHdr> h{};
  auto info = enc->encap(p, how == tunnel::InnerCsum::Rco, h);
  if (!info.ok) return info;
  info.csum_sw = summed;
  out.assign(h.begin(), h.begin() + std::ptrdiff_t(info.hdr_len));
  const auto b = p.to_bytes();
  out.insert(out.end(), b.begin(), b.end());
  return info;
}

TEST(TunnelVxlan, V1_V3_W26_RcoHeaderForTcpOverIpv4) {
  auto c = cfg4();
  c.remcsum_tx = true;
  auto f = tcp_frame(100, false, true);
  auto p = partial_packet(f, false);
  std::vector<std::uint8_t> out;
  auto info = encap_datagram(p, c, out);
  ASSERT_TRUE(info.ok);
  EXPECT_TRUE(info.rco);
  // V-1: flags word 0x08200000 (I + RCO; as the kernel sends it, K-1); V-3: start 34 → 34/2 =
  // 0x11, TCP (bit 7 clear); VNI 42 = 00 00 2a.
  std::vector<std::uint8_t> hdr(out.begin(), out.begin() + 8);
  EXPECT_EQ(hdr, (std::vector<std::uint8_t>{0x08, 0x20, 0x00, 0x00, 0x00, 0x00, 0x2a, 0x11}));
  // W-26: the inner frame is sent unchanged, its TCP field keeps the pseudo-header seed.
  EXPECT_EQ(std::vector<std::uint8_t>(out.begin() + 8, out.end()), f);
}

TEST(TunnelVxlan, V3_W26_RcoHeaderForTcpOverIpv6) {
  auto c = cfg4();
  c.remcsum_tx = true;
  auto f = tcp_frame(64, true, true);
  auto p = partial_packet(f, true);
  std::vector<std::uint8_t> out;
  ASSERT_TRUE(encap_datagram(p, c, out).rco);
  EXPECT_EQ(out[7], 0x1b);  // start 14 + 40 = 54 → 27
}

TEST(TunnelVxlan, W26_NoRcoWithoutRemcsumTxFinishesChecksum) {
  auto c = cfg4();
  auto f = tcp_frame(333, false, true);
  auto p = partial_packet(f, false);
  std::vector<std::uint8_t> out;
  auto info = encap_datagram(p, c, out);
  ASSERT_TRUE(info.ok);
  EXPECT_FALSE(info.rco);
  EXPECT_TRUE(info.csum_sw);
  EXPECT_EQ(std::vector<std::uint8_t>(out.begin(), out.begin() + 8),
            (std::vector<std::uint8_t>{0x08, 0, 0, 0, 0, 0, 0x2a, 0}));  // RFC 7348 §5
  EXPECT_TRUE(tcp_csum_ok(out.data() + 8, out.size() - 8));
}

TEST(TunnelVxlan, W26_OddCsumStartIsNotEncodable) {
  auto c = cfg4();
  c.remcsum_tx = true;
  // Prepend one byte so that csum_start becomes odd (35): RCO cannot express it (V-2).
  auto f = tcp_frame(50, false, true);
  auto p = core::Packet::from_bytes(f);
  p.set_partial(34, 16);
  p.push(1)[0] = 0;
  std::vector<std::uint8_t> out;
  auto info = encap_datagram(p, c, out);
  ASSERT_TRUE(info.ok);
  EXPECT_FALSE(info.rco);
  EXPECT_EQ(out[1], 0x00);
  EXPECT_EQ(out[7], 0x00);
}

TEST(TunnelVxlan, BugF4_W26_CsumStartAbove254IsNotEncodable) {
  auto c = cfg4();
  c.remcsum_tx = true;
  // 7 bits of start/2 reach 254 at most (V-2). Put 222 bytes in front: csum_start = 256.
  auto f = tcp_frame(50, false, true);
  auto p = core::Packet::from_bytes(f);
  p.set_partial(34, 16);
  std::uint8_t* front = p.push(222);
  std::fill(front, front + 222, 0);
  std::vector<std::uint8_t> out;
  auto info = encap_datagram(p, c, out);
  ASSERT_TRUE(info.ok);
  EXPECT_FALSE(info.rco);
  EXPECT_TRUE(info.csum_sw);
  EXPECT_EQ(out[1], 0x00);
  EXPECT_TRUE(tcp_csum_ok(out.data() + 8 + 222, out.size() - 8 - 222));
  // 254 itself is encodable: 220 bytes in front → start 254 → RCO byte 0x7f.
  auto q = core::Packet::from_bytes(f);
  q.set_partial(34, 16);
  std::uint8_t* fr2 = q.push(220);
  std::fill(fr2, fr2 + 220, 0);
  out.clear();
  ASSERT_TRUE(encap_datagram(q, c, out).rco);
  EXPECT_EQ(out[7], 0x7f);
}

TEST(TunnelVxlan, K2_RcoTxWithoutOuterChecksumIsRefused) {
  auto c = cfg4();
  c.remcsum_tx = true;
  c.udp_csum = false;
  auto e = tunnel::validate(c);
  ASSERT_TRUE(e.has_value());
  EXPECT_NE(e->find("remcsumtx"), std::string::npos);
  EXPECT_NE(e->find("K-2"), std::string::npos);
  EXPECT_NE(e->find("noudpcsum"), std::string::npos);
  auto c6 = c;
  c6.udp_csum = true;
  c6.local = *tunnel::IpAddr::parse("fd00::1");
  c6.remotes = {*tunnel::IpAddr::parse("fd00::2")};
  c6.udp6_zero_csum_tx = true;
  auto e6 = tunnel::validate(c6);
  ASSERT_TRUE(e6.has_value());
  EXPECT_NE(e6->find("udp6zerocsumtx"), std::string::npos);
  c.udp_csum = true;
  EXPECT_FALSE(tunnel::validate(c).has_value());
}

std::vector<std::uint8_t> vxlan_payload(std::vector<std::uint8_t> hdr, const std::vector<std::uint8_t>& f) {
  hdr.insert(hdr.end(), f.begin(), f.end());
  return hdr;
}

TEST(TunnelVxlan, V4_DecapHeaderChecks) {
  auto c = cfg4();
  auto f = tcp_frame(10);
  tunnel::Counters ctr;
  auto dec = [&](std::vector<std::uint8_t> h) {
    return tunnel::decap(vxlan_payload(h, f), c, tunnel::OuterCsum::Unknown, ctr);
  };
  EXPECT_TRUE(dec({0x08, 0, 0, 0, 0, 0, 42, 0}).ok);
  EXPECT_EQ(dec({0x00, 0, 0, 0, 0, 0, 42, 0}).reason, Drop::RxNoVniFlag);
  EXPECT_EQ(dec({0x08, 0x20, 0, 0, 0, 0, 42, 0x11}).reason, Drop::RxRcoNotEnabled);  // V-4
  EXPECT_EQ(dec({0x0c, 0, 0, 0, 0, 0, 42, 0}).reason, Drop::RxBadFlags);   // unknown flag
  EXPECT_EQ(dec({0x08, 0, 0, 0, 0, 0, 42, 0x01}).reason, Drop::RxBadFlags);  // reserved byte
  EXPECT_EQ(dec({0x08, 0, 0, 0, 0, 0, 43, 0}).reason, Drop::RxWrongVni);
  EXPECT_EQ(tunnel::decap(std::vector<std::uint8_t>{0x08, 0, 0, 0, 0, 0, 42, 0, 1, 2}, c,
                          tunnel::OuterCsum::Unknown, ctr)
                .reason,
            Drop::RxTruncated);
  EXPECT_EQ(ctr.drops_total(), 6u);
  EXPECT_EQ(ctr.drops[std::size_t(Drop::RxBadFlags)], 2u);
}

TEST(TunnelVxlan, C33_W25_RcoReceivePartialMode) {
  auto c = cfg4();
  c.remcsum_rx = true;
  auto f = tcp_frame(200, false, true);  // inner field = seed, as the kernel's RCO TX sends it
  tunnel::Counters ctr;
  auto r = tunnel::decap(vxlan_payload({0x08, 0x20, 0, 0, 0, 0, 42, 0x11}, f), c,
                         tunnel::OuterCsum::Unknown, ctr);
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(r.rco);
  ASSERT_EQ(r.pkt.ip_summed(), core::IpSummed::Partial);
  EXPECT_EQ(r.pkt.csum_start_offset(), 34);  // start = 0x11 << 1 (V-3)
  EXPECT_EQ(std::get<core::CsumPartial>(r.pkt.csum).csum_offset, 16);
  EXPECT_EQ(r.pkt.to_bytes(), f);  // C-33 partial: no packet modification
  EXPECT_EQ(ctr.rx_rco, 1u);
  EXPECT_EQ(ctr.rx_csum_skipped, 1u);
}

TEST(TunnelVxlan, C33_RcoReceiveNopartialWritesChecksum) {
  auto c = cfg4();
  c.remcsum_rx = true;
  c.remcsum_nopartial = true;
  auto f = tcp_frame(201, false, true);
  ASSERT_FALSE(tcp_csum_ok(f.data(), f.size()));
  tunnel::Counters ctr;
  auto r = tunnel::decap(vxlan_payload({0x08, 0x20, 0, 0, 0, 0, 42, 0x11}, f), c,
                         tunnel::OuterCsum::Present, ctr);
  ASSERT_TRUE(r.ok);
  auto b = r.pkt.to_bytes();
  EXPECT_TRUE(tcp_csum_ok(b.data(), b.size()));
  // The only bytes that change are the two of the TCP checksum field (offset 34 + 16).
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i != 50 && i != 51) {
      ASSERT_EQ(b[i], f[i]) << i;
    }
  }
}

TEST(TunnelVxlan, K2_RcoFrameWithoutOuterChecksumCountedAndDropped) {
  auto c = cfg4();
  c.remcsum_rx = true;
  auto f = tcp_frame(20, false, true);
  tunnel::Counters ctr;
  auto r = tunnel::decap(vxlan_payload({0x08, 0x20, 0, 0, 0, 0, 42, 0x11}, f), c,
                         tunnel::OuterCsum::Zero, ctr);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.reason, Drop::RxRcoNoOuterCsum);
  EXPECT_EQ(ctr.rx_rco_nocsum, 1u);
}

TEST(TunnelVxlan, C33_RcoOffsetBeyondFrameIsDropped) {
  auto c = cfg4();
  c.remcsum_rx = true;
  auto f = tcp_frame(0);
  f.resize(40);  // start 254 + 16 is far beyond 40 bytes
  tunnel::Counters ctr;
  auto r = tunnel::decap(vxlan_payload({0x08, 0x20, 0, 0, 0, 0, 42, 0x7f}, f), c,
                         tunnel::OuterCsum::Unknown, ctr);
  EXPECT_EQ(r.reason, Drop::RxRcoBadOffset);
}

TEST(TunnelVxlan, FlowSrcPortKernelFormula) {
  // udp_flow_src_port: hash ^= hash << 16; ((u64)hash * (max - min)) >> 32) + min.
  // 0x12345678 ^ 0x56780000 = 0x444c5678; 0x444c5678 * 28231 >> 32 = 7531 → 40299.
  EXPECT_EQ(tunnel::flow_src_port(0x12345678, 32768, 60999), 40299);
  // 0xffffffff ^ 0xffff0000 = 0x0000ffff: 65535 * 1000 >> 32 = 0 → 1000.
  EXPECT_EQ(tunnel::flow_src_port(0xffffffff, 1000, 2000), 1000);
  for (std::uint32_t h : {0u, 1u, 0x80000000u, 0xdeadbeefu}) {
    auto p = tunnel::flow_src_port(h, 1000, 1010);
    EXPECT_GE(p, 1000);
    EXPECT_LT(p, 1010);
  }
}

}  // namespace

namespace {
// Golden header lengths, derived by hand: Ethernet 14 + IPv4 IHL*4 + TCP doff*4, or
// Ethernet 14 + IPv6 40 + TCP doff*4; anything else stays whole (linear).
std::vector<std::uint8_t> eth_frame(std::uint16_t et, std::size_t n) {
  std::vector<std::uint8_t> f(n, 0);
  f[12] = std::uint8_t(et >> 8), f[13] = std::uint8_t(et);
  return f;
}
}  // namespace

TEST(TunnelVxlan, InnerHeaderLenForZeroCopyReceive) {
  auto v4 = eth_frame(0x0800, 200);
  v4[14] = 0x46;  // IPv4, IHL 6 (24 bytes)
  v4[23] = 6;     // TCP
  v4[14 + 24 + 12] = 0x80;  // doff 8 (32 bytes)
  EXPECT_EQ(tunnel::inner_header_len(v4), 14u + 24 + 32);
  auto frag = v4;
  frag[20] = 0x20;  // MF
  EXPECT_EQ(tunnel::inner_header_len(frag), frag.size());
  auto udp = v4;
  udp[23] = 17;
  EXPECT_EQ(tunnel::inner_header_len(udp), udp.size());
  auto v6 = eth_frame(0x86DD, 200);
  v6[14] = 0x60;
  v6[20] = 6;  // next header TCP
  v6[14 + 40 + 12] = 0x50;  // doff 5
  EXPECT_EQ(tunnel::inner_header_len(v6), 14u + 40 + 20);
  auto ext = v6;
  ext[20] = 0;  // hop-by-hop first: not parsed, stays whole
  EXPECT_EQ(tunnel::inner_header_len(ext), ext.size());
  auto arp = eth_frame(0x0806, 60);
  EXPECT_EQ(tunnel::inner_header_len(arp), arp.size());
  auto bad = v4;
  bad[14 + 24 + 12] = 0xF0;  // doff 60 runs past a 64-byte frame
  bad.resize(14 + 24 + 26);
  EXPECT_EQ(tunnel::inner_header_len(bad), bad.size());
}

// The cases at the edges of each header check, with lengths derived from RFC 791 (IHL,
// MF/offset, DF), RFC 8200 (fixed 40-byte header, next header) and RFC 9293 (data offset).
TEST(TunnelVxlan, InnerHeaderLenHeaderEdges) {
  auto v4 = eth_frame(0x0800, 120);
  v4[14] = 0x4f;            // IPv4, IHL 15: 60 bytes of header (40 of options)
  v4[23] = 6;               // TCP
  v4[14 + 60 + 12] = 0x50;  // doff 5
  EXPECT_EQ(tunnel::inner_header_len(v4), 14u + 60 + 20);
  auto df = v4;
  df[20] = 0x40;  // DF alone is no fragment: still split
  EXPECT_EQ(tunnel::inner_header_len(df), 14u + 60 + 20);
  auto off = v4;
  off[21] = 0x01;  // fragment offset 8 bytes, MF clear: a last fragment stays whole
  EXPECT_EQ(tunnel::inner_header_len(off), off.size());
  auto ihl4 = v4;
  ihl4[14] = 0x44;  // IHL 4 < 5
  EXPECT_EQ(tunnel::inner_header_len(ihl4), ihl4.size());
  auto v6in4 = v4;
  v6in4[14] = 0x6f;  // ethertype IPv4 but version 6
  EXPECT_EQ(tunnel::inner_header_len(v6in4), v6in4.size());
  auto short_opts = v4;
  short_opts.resize(14 + 50);  // IHL says 60 header bytes, 50 present
  EXPECT_EQ(tunnel::inner_header_len(short_opts), short_opts.size());
  auto doff4 = v4;
  doff4[14 + 60 + 12] = 0x40;  // TCP doff 4 < 5
  EXPECT_EQ(tunnel::inner_header_len(doff4), doff4.size());
  auto exact = v4;
  exact.resize(14 + 60 + 20);  // headers only, no payload: the whole frame is headers
  EXPECT_EQ(tunnel::inner_header_len(exact), exact.size());

  auto v6 = eth_frame(0x86DD, 120);
  v6[14] = 0x40;  // ethertype IPv6 but version 4
  v6[20] = 6;
  v6[14 + 40 + 12] = 0x50;
  EXPECT_EQ(tunnel::inner_header_len(v6), v6.size());
  v6[14] = 0x60;
  EXPECT_EQ(tunnel::inner_header_len(v6), 14u + 40 + 20);
  auto v6short = v6;
  v6short.resize(14 + 40 + 19);  // one byte short of a TCP header
  EXPECT_EQ(tunnel::inner_header_len(v6short), v6short.size());

  auto vlan = eth_frame(0x8100, 120);  // tagged frames are not parsed: whole
  EXPECT_EQ(tunnel::inner_header_len(vlan), vlan.size());
  auto tiny = eth_frame(0x0800, 14 + 19);  // below Ethernet + a minimal IPv4 header
  EXPECT_EQ(tunnel::inner_header_len(tiny), tiny.size());
  EXPECT_EQ(tunnel::inner_header_len({}), 0u);
}
