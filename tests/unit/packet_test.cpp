// Tests for core/Packet: storage operations and checksum bookkeeping (spec §1, §2 C-*).
// Every expected checksum is computed in this file by an independent reference summation
// (ref16 below: plain big-endian 16-bit word sum, RFC 1071 §4.1) — never by the code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "ofld/core/packet.hpp"
#include "ref_ones_sum.hpp"

using namespace ofld::core;
using Bytes = std::vector<std::uint8_t>;

namespace {

// RFC 1071 ones'-complement sum of bytes, folded to 16 bits (not complemented).
std::uint16_t ref16(const std::uint8_t* b, std::size_t n, std::uint32_t seed = 0) {
  return ofld::testutil::ref_ones_sum(b, n, seed);
}
std::uint16_t ref16(const Bytes& v, std::size_t from = 0, std::size_t to = SIZE_MAX) {
  to = std::min(to, v.size());
  return ref16(v.data() + from, to - from);
}
// fold of a wsum, by hand
std::uint16_t fold(std::uint32_t w) {
  std::uint64_t a = w;
  while (a >> 16) a = (a & 0xffff) + (a >> 16);
  return std::uint16_t(a);
}
// ones'-complement equality (+0 == -0)
bool ones_eq(std::uint16_t a, std::uint16_t b) {
  auto n = [](std::uint16_t x) { return x == 0xffff ? 0 : x; };
  return n(a) == n(b);
}
Bytes pattern(std::size_t n, unsigned seed = 1) {
  Bytes b(n);
  std::mt19937 rng(seed);
  for (auto& x : b) x = std::uint8_t(rng());
  return b;
}
std::uint32_t complete_of(const Packet& p) { return std::get<CsumComplete>(p.csum).csum; }

// An IPv4/TCP packet (no Ethernet): 20-byte IPv4 header, 20-byte TCP header, payload.
Bytes ipv4_tcp(std::size_t payload, unsigned seed = 7) {
  Bytes b(40 + payload, 0);
  b[0] = 0x45;
  b[2] = std::uint8_t((40 + payload) >> 8);
  b[3] = std::uint8_t(40 + payload);
  b[6] = 0x40;  // DF
  b[8] = 64;
  b[9] = 6;
  std::uint8_t src[4] = {192, 0, 2, 1}, dst[4] = {198, 51, 100, 7};
  std::copy(src, src + 4, b.begin() + 12);
  std::copy(dst, dst + 4, b.begin() + 16);
  b[20] = 0x30; b[21] = 0x39; b[22] = 0x00; b[23] = 0x50;  // ports 12345 → 80
  b[32] = 0x50;                                            // data offset 5
  b[33] = 0x18;
  auto pl = pattern(payload, seed);
  std::copy(pl.begin(), pl.end(), b.begin() + 40);
  return b;
}
// IPv4 pseudo-header sum (RFC 793 §3.1) for a segment of `l4len` bytes, by hand.
std::uint16_t pseudo4(const Bytes& ip, std::size_t l4len) {
  Bytes ph(12);
  std::copy(ip.begin() + 12, ip.begin() + 20, ph.begin());
  ph[9] = ip[9];
  ph[10] = std::uint8_t(l4len >> 8);
  ph[11] = std::uint8_t(l4len);
  return ref16(ph);
}
// Is the TCP checksum of an IPv4/TCP packet valid? (sum over pseudo + segment == 0xFFFF)
bool tcp4_valid(const Bytes& b) {
  std::size_t l4 = b.size() - 20;
  return fold(std::uint32_t(pseudo4(b, l4)) + ref16(b, 20)) == 0xffff;
}

}  // namespace

// ---- storage --------------------------------------------------------------------------------

TEST(Packet, FromBytesRoundTrip) {
  Bytes b = pattern(300);
  Packet p = Packet::from_bytes(b);
  EXPECT_EQ(p.len(), 300u);
  EXPECT_EQ(p.headlen(), 300u);
  EXPECT_EQ(p.headroom(), kDefaultHeadroom);
  EXPECT_EQ(p.to_bytes(), b);
  Packet q = Packet::from_bytes_frags(b, 50, 64);
  EXPECT_EQ(q.headlen(), 50u);
  EXPECT_EQ(q.nr_frags(), 4u);  // 250 = 64+64+64+58
  EXPECT_EQ(q.len(), 300u);
  EXPECT_EQ(q.to_bytes(), b);
}

TEST(Packet, PushBeyondHeadroomKeepsPositions) {
  Bytes b = pattern(60);
  Packet p = Packet::from_bytes(b, 16);
  p.set_network_header(0);
  p.set_transport_header(20);
  std::uint8_t* d = p.push(200);  // more than the 16 bytes of headroom
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(p.len(), 260u);
  EXPECT_EQ(p.network_offset(), 200);
  EXPECT_EQ(p.transport_offset(), 220);
  EXPECT_EQ(p.data_pos(), -200);
  // bytes at the network position unchanged
  EXPECT_EQ(0, std::memcmp(p.at_pos(p.network_header, 60), b.data(), 60));
  EXPECT_NE(p.pull(200), nullptr);
  EXPECT_EQ(p.to_bytes(), b);
  EXPECT_EQ(p.pull(61), nullptr);  // beyond the head: refused, no change
  EXPECT_EQ(p.len(), 60u);
}

TEST(Packet, PullAcrossFragsAndMayPull) {
  Bytes b = pattern(200);
  Packet p = Packet::from_bytes_frags(b, 10, 30);
  EXPECT_EQ(p.pull(11), nullptr);
  EXPECT_TRUE(p.may_pull(45));
  EXPECT_GE(p.headlen(), 45u);
  EXPECT_EQ(p.to_bytes(), b);
  EXPECT_FALSE(p.may_pull(201));
  ASSERT_NE(p.pskb_pull(100), nullptr);
  EXPECT_EQ(p.to_bytes(), Bytes(b.begin() + 100, b.end()));
  EXPECT_EQ(p.pskb_pull(101), nullptr);
}

TEST(Packet, HeaderLinearizesOnDemand) {
  Bytes b = pattern(120);
  Packet p = Packet::from_bytes_frags(b, 4, 8);
  auto h = p.header(6, 20);  // straddles several fragments
  ASSERT_EQ(h.size(), 20u);
  EXPECT_TRUE(std::equal(h.begin(), h.end(), b.begin() + 6));
  EXPECT_TRUE(p.header(100, 21).empty());
  EXPECT_EQ(p.to_bytes(), b);
}

TEST(Packet, CopyBitsOverHeadFragsAndFragList) {
  Bytes a = pattern(50, 1), c = pattern(70, 2);
  Packet p = Packet::from_bytes_frags(a, 20, 7);
  p.add_to_frag_list(Packet::from_bytes_frags(c, 10, 25));
  EXPECT_EQ(p.len(), 120u);
  Bytes all = a;
  all.insert(all.end(), c.begin(), c.end());
  Bytes out(33);
  ASSERT_EQ(p.copy_bits(40, out), PacketError::Ok);
  EXPECT_TRUE(std::equal(out.begin(), out.end(), all.begin() + 40));
  Bytes big(2);
  EXPECT_EQ(p.copy_bits(119, big), PacketError::OutOfRange);
  EXPECT_EQ(p.to_bytes(), all);
  p.linearize();
  EXPECT_TRUE(p.is_linear());
  EXPECT_EQ(p.to_bytes(), all);
}

TEST(Packet, TrimIntoFragsAndHead) {
  Bytes b = pattern(100);
  Packet p = Packet::from_bytes_frags(b, 30, 20);
  p.trim(65);
  EXPECT_EQ(p.len(), 65u);
  EXPECT_EQ(p.to_bytes(), Bytes(b.begin(), b.begin() + 65));
  p.trim(12);
  EXPECT_EQ(p.len(), 12u);
  EXPECT_EQ(p.nr_frags(), 0u);
  EXPECT_EQ(p.to_bytes(), Bytes(b.begin(), b.begin() + 12));
  p.trim(500);  // no-op
  EXPECT_EQ(p.len(), 12u);
}

TEST(Packet, PutAppendAddFrag) {
  Packet p = Packet::from_bytes(Bytes{1, 2, 3});
  std::uint8_t* t = p.put(2);
  ASSERT_NE(t, nullptr);
  t[0] = 4; t[1] = 5;
  auto buf = Buffer::make(Bytes{9, 9, 6, 7, 9});
  EXPECT_EQ(p.add_frag(buf, 2, 2), PacketError::Ok);
  EXPECT_EQ(p.add_frag(buf, 4, 2), PacketError::OutOfRange);
  EXPECT_EQ(p.add_frag(nullptr, 0, 0), PacketError::BadArgument);
  EXPECT_EQ(p.put(1), nullptr);  // has frags
  p.append(Bytes{8});
  EXPECT_EQ(p.to_bytes(), (Bytes{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(Packet, CloneSharesFragsCopyDoesNot) {
  Bytes b = pattern(80);
  Packet p = Packet::from_bytes_frags(b, 20, 30);
  EXPECT_FALSE(p.frags_shared());
  p.csum = CsumPartial{20, 16, false};
  p.gso = GsoInfo{1000, 3, skb_gso::TCPV4};
  Packet c = p.clone();
  EXPECT_TRUE(p.frags_shared());
  EXPECT_TRUE(c.frags_shared());
  EXPECT_EQ(c.csum, p.csum);
  EXPECT_EQ(c.gso.type, skb_gso::TCPV4);
  c.frags()[0].mutable_bytes()[0] ^= 0xff;  // visible through p: shared buffer
  EXPECT_NE(p.to_bytes(), b);
  c.frags()[0].mutable_bytes()[0] ^= 0xff;
  Packet d = p.copy();
  Packet e = std::move(c);  // drop the clone's references
  { Packet gone = std::move(e); }
  EXPECT_FALSE(p.frags_shared());
  EXPECT_FALSE(d.frags_shared());
  EXPECT_EQ(d.to_bytes(), b);
}

TEST(Packet, CsumLevelCannotExceedThree) {
  EXPECT_EQ(CsumLevel(7).value(), 3);
  EXPECT_EQ(CsumLevel(2).value(), 2);
  EXPECT_EQ(ip_summed_of(CsumState{CsumPartial{}}), IpSummed::Partial);
  EXPECT_EQ(int(IpSummed::Complete), 2);  // spec §1.1 numeric order
}

TEST(Packet, GsoTypeBitsMatchSpecTable) {
  // spec §1.2 table
  EXPECT_EQ(skb_gso::TCPV6, 1u << 4);
  EXPECT_EQ(skb_gso::UDP_TUNNEL_CSUM, 1u << 11);
  EXPECT_EQ(skb_gso::FRAGLIST, 1u << 18);
  EXPECT_EQ(skb_gso::TCP_ACCECN, 1u << 19);
  EXPECT_EQ(skb_gso::TCP_FIXEDID_INNER, 1u << 31);
  EXPECT_EQ(skb_gso::name(skb_gso::PARTIAL), "PARTIAL");
  Packet p;
  EXPECT_FALSE(p.is_gso());
  p.gso.size = kGsoByFrags;
  EXPECT_TRUE(p.is_gso());
}

// ---- checksum bookkeeping ---------------------------------------------------------------------

TEST(PacketCsum, C16_C19_PullRcsumKeepsComplete) {
  Bytes b = pattern(301, 3);
  Packet p = Packet::from_bytes_frags(b, 40, 64);
  p.csum = CsumComplete{ref16(b)};
  ASSERT_NE(pull_rcsum(p, 14), nullptr);
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(b, 14)));
  ASSERT_NE(pull_rcsum(p, 40), nullptr);  // crosses into fragments
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(b, 54)));
  ASSERT_NE(pull_rcsum(p, 7), nullptr);   // odd length
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(b, 61)));
  EXPECT_EQ(pull_rcsum(p, 1000), nullptr);
}

TEST(PacketCsum, C16_PostpullOddOffsetBlock) {
  // COMPLETE over region R; remove the contribution of a 5-byte block at odd offset 3.
  // Expected: the sum of R with those bytes zeroed (independent computation).
  Bytes r = pattern(64, 4);
  Packet p = Packet::from_bytes(r);
  p.csum = CsumComplete{ref16(r)};
  postpull_rcsum(p, std::span(r).subspan(3, 5), 3);
  Bytes z = r;
  std::fill(z.begin() + 3, z.begin() + 8, 0);
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(z)));
}

TEST(PacketCsum, C17_PartialDowngradedWhenStartPulledPast) {
  Bytes b = pattern(100);
  Packet p = Packet::from_bytes(b);
  p.set_partial(14, 16);
  ASSERT_NE(pull_rcsum(p, 14), nullptr);  // start offset now 0: still PARTIAL
  EXPECT_EQ(p.ip_summed(), IpSummed::Partial);
  EXPECT_TRUE(csum_unnecessary(p));  // C-5
  ASSERT_NE(pull_rcsum(p, 2), nullptr);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
}

TEST(PacketCsum, C18_PushRcsumAddsPushedBytes) {
  Bytes b = pattern(200, 5);
  Packet p = Packet::from_bytes(Bytes(b.begin() + 14, b.end()));
  p.csum = CsumComplete{ref16(b, 14)};
  push_rcsum(p, std::span(b).first(14));
  EXPECT_EQ(p.to_bytes(), b);
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(b)));
  // odd push
  Packet q = Packet::from_bytes(Bytes(b.begin() + 3, b.end()));
  q.csum = CsumComplete{ref16(b, 3)};
  push_rcsum(q, std::span(b).first(3));
  EXPECT_TRUE(ones_eq(fold(complete_of(q)), ref16(b)));
  // postpush at an odd block offset: add a block that sits at offset 1 of the region
  Bytes r = pattern(30, 6);
  Bytes z = r;
  std::fill(z.begin() + 1, z.begin() + 4, 0);
  Packet s = Packet::from_bytes(r);
  s.csum = CsumComplete{ref16(z)};
  postpush_rcsum(s, std::span(r).subspan(1, 3), 1);
  EXPECT_TRUE(ones_eq(fold(complete_of(s)), ref16(r)));
}

TEST(PacketCsum, C20_TrimRcsumComplete) {
  Bytes b = pattern(257, 8);
  for (std::size_t keep : {200u, 133u, 60u, 7u}) {
    Packet p = Packet::from_bytes_frags(b, 50, 40);
    p.csum = CsumComplete{ref16(b)};
    ASSERT_EQ(trim_rcsum(p, keep), PacketError::Ok);
    EXPECT_EQ(p.len(), keep);
    EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(b, 0, keep))) << keep;
  }
}

TEST(PacketCsum, C20_TrimRcsumPartialFieldOutside) {
  Bytes b = pattern(100);
  Packet p = Packet::from_bytes(b);
  p.set_partial(40, 16);  // field at [56, 58)
  EXPECT_EQ(trim_rcsum(p, 57), PacketError::NotInHead);
  EXPECT_EQ(p.len(), 100u);
  EXPECT_EQ(trim_rcsum(p, 58), PacketError::Ok);
  EXPECT_EQ(p.len(), 58u);
  // field in a fragment (not in the linear part) → fails too
  Packet q = Packet::from_bytes_frags(b, 50, 0);
  q.set_partial(40, 16);
  EXPECT_EQ(trim_rcsum(q, 80), PacketError::NotInHead);
}

TEST(PacketCsum, C21_ForwardCsumDropsComplete) {
  Packet p = Packet::from_bytes(pattern(10));
  p.csum = CsumComplete{0x1234};
  forward_csum(p);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
  p.csum = CsumUnnecessary{CsumLevel(1)};
  forward_csum(p);
  EXPECT_EQ(p.ip_summed(), IpSummed::Unnecessary);
}

TEST(PacketCsum, C26_IncrSaturatesAndC23Decr) {
  Packet p = Packet::from_bytes(pattern(10));
  incr_checksum_unnecessary(p);
  EXPECT_EQ(p.csum, CsumState{CsumUnnecessary{CsumLevel(0)}});
  for (int i = 0; i < 5; ++i) incr_checksum_unnecessary(p);
  EXPECT_EQ(std::get<CsumUnnecessary>(p.csum).level.value(), 3);
  decr_checksum_unnecessary(p);
  EXPECT_EQ(std::get<CsumUnnecessary>(p.csum).level.value(), 2);
  p.csum = CsumUnnecessary{CsumLevel(0)};
  decr_checksum_unnecessary(p);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
  p.csum = CsumComplete{5};
  incr_checksum_unnecessary(p);  // COMPLETE untouched
  EXPECT_EQ(p.ip_summed(), IpSummed::Complete);
}

TEST(PacketCsum, C3_LevelWalkIpv6UdpGreIpv4Tcp) {
  // Spec C-2/C-3: IPv6|UDP|GRE(C)|IPv4|TCP, all three checksums verified by the device → level 2.
  // Each layer's validation consumes one level (C-23); after TCP the state is NONE.
  Packet p = Packet::from_bytes(pattern(200));
  p.csum = CsumUnnecessary{CsumLevel(2)};
  EXPECT_EQ(checksum_validate(p, 0, true), 0);  // UDP
  EXPECT_TRUE(p.csum_valid);
  EXPECT_EQ(std::get<CsumUnnecessary>(p.csum).level.value(), 1);
  EXPECT_EQ(checksum_validate(p, 0, true), 0);  // GRE (C bit)
  EXPECT_EQ(std::get<CsumUnnecessary>(p.csum).level.value(), 0);
  EXPECT_EQ(checksum_validate(p, 0, true), 0);  // TCP
  EXPECT_TRUE(p.csum_valid);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
  // Chain broken at GRE (only UDP verified → level 0): TCP must be computed in software.
  Bytes b = ipv4_tcp(100);
  Packet q = Packet::from_bytes(b);
  q.csum = CsumUnnecessary{CsumLevel(0)};
  EXPECT_EQ(checksum_validate(q, 0, true), 0);  // UDP consumes the only level
  EXPECT_EQ(q.ip_summed(), IpSummed::None);
  // the TCP validation now really sums: the packet's TCP checksum field is 0 (not valid)
  q.pull(20);
  std::uint16_t ps = pseudo4(b, b.size() - 20);
  EXPECT_NE(checksum_validate(q, ps, true), 0);
  EXPECT_FALSE(q.csum_valid);
}

TEST(PacketCsum, C23_ZeroOkayCheck) {
  Packet p = Packet::from_bytes(pattern(100));
  EXPECT_EQ(checksum_validate(p, 0x1234, true, /*zero_okay=*/true, /*check=*/0), 0);
  EXPECT_TRUE(p.csum_valid);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
}

TEST(PacketCsum, C24_ValidateWithCompleteAndComputed) {
  // C-4: a valid TCP segment, its checksum filled by hand: ~fold(pseudo + segment, field 0).
  Bytes b = ipv4_tcp(120);
  std::size_t l4 = b.size() - 20;
  std::uint16_t c = std::uint16_t(~fold(std::uint32_t(pseudo4(b, l4)) + ref16(b, 20)));
  b[36] = std::uint8_t(c >> 8);
  b[37] = std::uint8_t(c);
  ASSERT_TRUE(tcp4_valid(b));
  std::uint16_t ps = pseudo4(b, l4);

  Packet p = Packet::from_bytes(b);
  p.pull(20);
  p.csum = CsumComplete{ref16(b, 20)};  // device COMPLETE over the TCP segment
  EXPECT_EQ(checksum_validate(p, ps, false), 0);
  EXPECT_TRUE(p.csum_valid);
  EXPECT_FALSE(p.csum_complete_sw);

  // No COMPLETE, long packet, complete=false → deferred; later checksum_complete finishes.
  Packet q = Packet::from_bytes(b);
  q.pull(20);
  EXPECT_EQ(checksum_validate(q, ps, false), 0);
  EXPECT_FALSE(q.csum_valid);
  EXPECT_EQ(q.pending_csum, ps);
  EXPECT_EQ(checksum_complete(q), 0);
  EXPECT_TRUE(q.csum_valid);
  EXPECT_TRUE(q.csum_complete_sw);
  EXPECT_TRUE(ones_eq(fold(complete_of(q)), ref16(b, 20)));

  // Bad checksum with a (wrong) COMPLETE value and complete=true → non-zero, software sum.
  Bytes bad = b;
  bad[45] ^= 0x10;
  Packet r = Packet::from_bytes(bad);
  r.pull(20);
  r.csum = CsumComplete{static_cast<ofld::csum::wsum>(ref16(bad, 20) + 1)};
  EXPECT_NE(checksum_validate(r, ps, true), 0);
  EXPECT_FALSE(r.csum_valid);
  EXPECT_TRUE(r.csum_complete_sw);
  EXPECT_TRUE(ones_eq(fold(complete_of(r)), ref16(bad, 20)));
}

TEST(PacketCsum, C24_ShortPacketSummedImmediately) {
  Bytes b = ipv4_tcp(10);  // 30-byte segment ≤ CHECKSUM_BREAK (76)
  Packet p = Packet::from_bytes(b);
  p.pull(20);
  EXPECT_NE(checksum_validate(p, pseudo4(b, 30), false), 0);  // field is 0: invalid
  EXPECT_TRUE(p.csum_complete_sw);
}

TEST(PacketCsum, C25_TryConvert) {
  Packet p = Packet::from_bytes(pattern(50));
  p.csum_valid = true;
  checksum_try_convert(p, 0x00012345);
  EXPECT_EQ(p.csum, CsumState{CsumComplete{~0x00012345u}});
  Packet q = Packet::from_bytes(pattern(50));  // not validated → unchanged
  checksum_try_convert(q, 1);
  EXPECT_EQ(q.ip_summed(), IpSummed::None);
}

TEST(PacketCsum, C28_C29_ChecksumHelpFinishesPartialOverFrags) {
  Bytes b = ipv4_tcp(333, 11);
  std::size_t l4 = b.size() - 20;
  std::uint16_t seed = pseudo4(b, l4);  // C-12: folded, not complemented
  b[36] = std::uint8_t(seed >> 8);
  b[37] = std::uint8_t(seed);
  Packet p = Packet::from_bytes_frags(b, 54, 100);
  p.set_partial(20, 16);
  ASSERT_EQ(checksum_help(p), PacketError::Ok);
  EXPECT_EQ(p.ip_summed(), IpSummed::None);
  EXPECT_TRUE(tcp4_valid(p.to_bytes()));
}

TEST(PacketCsum, C14_C29_ZeroResultWrittenAsFfff) {
  // Region [0,4): words 0xFFFF and the field (0x0000). Sum 0xFFFF → complement 0 → 0xFFFF.
  Packet p = Packet::from_bytes(Bytes{0xff, 0xff, 0x00, 0x00});
  p.set_partial(0, 2);
  ASSERT_EQ(checksum_help(p), PacketError::Ok);
  EXPECT_EQ(p.to_bytes(), (Bytes{0xff, 0xff, 0xff, 0xff}));
}

TEST(PacketCsum, C28_ChecksumHelpErrorsAndComplete) {
  Bytes b = ipv4_tcp(50);
  Packet g = Packet::from_bytes(b);
  g.set_partial(20, 16);
  g.gso = GsoInfo{10, 5, skb_gso::TCPV4};
  EXPECT_EQ(checksum_help(g), PacketError::IsGso);
  Packet s = Packet::from_bytes_frags(b, 30, 0);
  s.set_partial(31, 0);  // start beyond the head
  EXPECT_EQ(checksum_help(s), PacketError::NotInHead);
  Packet f = Packet::from_bytes_frags(b, 37, 0);
  f.set_partial(20, 16);  // field [36,38) not fully in the 37-byte head
  EXPECT_EQ(checksum_help(f), PacketError::NotInHead);
  EXPECT_EQ(f.ip_summed(), IpSummed::Partial);
  Packet c = Packet::from_bytes(b);
  c.csum = CsumComplete{1};
  EXPECT_EQ(checksum_help(c), PacketError::Ok);
  EXPECT_EQ(c.ip_summed(), IpSummed::None);
  EXPECT_EQ(c.to_bytes(), b);
}

// checksum_help on flat bytes (the train builder's sum after its copy): the same
// field value as checksum_help on the packet; RFC 1071 §3's example (words 0001 f203 f4f5 f6f7
// sum to 0xddf2, checksum 0x220d); C-29's 0 → 0xFFFF; a field outside the bytes refused.
TEST(PacketCsum, C28_C29_ChecksumHelpBytes) {
  Bytes r = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0x00, 0x00};
  ASSERT_EQ(checksum_help_bytes(r, 0, 8), PacketError::Ok);
  EXPECT_EQ(r[8], 0x22);
  EXPECT_EQ(r[9], 0x0d);
  Bytes z = {0xff, 0xff, 0x00, 0x00};
  ASSERT_EQ(checksum_help_bytes(z, 0, 2), PacketError::Ok);
  EXPECT_EQ(z, (Bytes{0xff, 0xff, 0xff, 0xff}));
  Bytes t = {0xff, 0xff, 0x00, 0x00};  // TCP segments (gso_make_checksum): 0 stays 0
  ASSERT_EQ(checksum_help_bytes(t, 0, 2, false), PacketError::Ok);
  EXPECT_EQ(t, (Bytes{0xff, 0xff, 0x00, 0x00}));
  Bytes b = ipv4_tcp(333, 11);
  const std::uint16_t seed = pseudo4(b, b.size() - 20);
  b[36] = std::uint8_t(seed >> 8);
  b[37] = std::uint8_t(seed);
  Bytes flat = b;
  ASSERT_EQ(checksum_help_bytes(flat, 20, 16), PacketError::Ok);
  EXPECT_TRUE(tcp4_valid(flat));
  Packet p = Packet::from_bytes(b);
  p.set_partial(20, 16);
  ASSERT_EQ(checksum_help(p), PacketError::Ok);
  EXPECT_EQ(p.to_bytes(), flat);
  Bytes s(10, 0);
  EXPECT_EQ(checksum_help_bytes(s, 10, 0), PacketError::OutOfRange);
  EXPECT_EQ(checksum_help_bytes(s, 4, 5), PacketError::OutOfRange);  // field [9,11)
  EXPECT_EQ(checksum_help_bytes(s, 4, 4), PacketError::Ok);          // field [8,10)
}

TEST(PacketCsum, C28_SharedFragsLinearizedFirst) {
  Bytes b = ipv4_tcp(200);
  std::uint16_t seed = pseudo4(b, b.size() - 20);
  b[36] = std::uint8_t(seed >> 8);
  b[37] = std::uint8_t(seed);
  Packet p = Packet::from_bytes_frags(b, 40, 64);
  p.set_partial(20, 16);
  Packet other = p.clone();
  ASSERT_TRUE(p.frags_shared());
  ASSERT_EQ(checksum_help(p), PacketError::Ok);
  EXPECT_EQ(p.nr_frags(), 0u);
  EXPECT_TRUE(tcp4_valid(p.to_bytes()));
}

TEST(PacketCsum, C31_C32_RemcsumAdjustAndUnadjust) {
  // ptr = start of an IPv4/TCP packet whose TCP field holds the pseudo seed (RCO sender).
  Bytes b = ipv4_tcp(90, 12);
  std::uint16_t seed = pseudo4(b, b.size() - 20);
  b[36] = std::uint8_t(seed >> 8);
  b[37] = std::uint8_t(seed);
  Bytes orig = b;
  std::uint32_t complete = ref16(b);  // COMPLETE from ptr
  std::uint32_t delta = remcsum_adjust(b, complete, 20, 36);
  // C-31: the field now holds ~fold(sum over [start, end) incl. the seed) → TCP verifies.
  std::uint16_t expect = std::uint16_t(~ref16(orig, 20));
  EXPECT_EQ((b[36] << 8) | b[37], expect);
  EXPECT_TRUE(tcp4_valid(b));
  // delta keeps COMPLETE consistent: old sum + delta ≡ new sum
  EXPECT_TRUE(ones_eq(fold(std::uint32_t(ref16(orig)) + fold(delta)), ref16(b)));
  // C-32: unadjust restores the original field
  remcsum_unadjust(b.data() + 36, delta);
  EXPECT_EQ(b, orig);
}

TEST(PacketCsum, C33_RemcsumProcessPartialMode) {
  Bytes outer = pattern(16, 13);  // stand-in for outer headers up to ptr
  Bytes inner = ipv4_tcp(64);
  Bytes b = outer;
  b.insert(b.end(), inner.begin(), inner.end());
  Packet p = Packet::from_bytes(b);
  ASSERT_EQ(remcsum_process(p, 16, 20, 36, /*nopartial=*/false), PacketError::Ok);
  ASSERT_EQ(p.ip_summed(), IpSummed::Partial);
  EXPECT_EQ(p.csum_start_offset(), 36);
  EXPECT_EQ(std::get<CsumPartial>(p.csum).csum_offset, 16);
  EXPECT_EQ(p.to_bytes(), b);  // packet not modified
}

TEST(PacketCsum, C33_RemcsumProcessNoPartialMode) {
  Bytes outer = pattern(16, 13);
  Bytes inner = ipv4_tcp(64);
  std::uint16_t seed = pseudo4(inner, inner.size() - 20);
  inner[36] = std::uint8_t(seed >> 8);
  inner[37] = std::uint8_t(seed);
  Bytes b = outer;
  b.insert(b.end(), inner.begin(), inner.end());
  Packet p = Packet::from_bytes(b);  // NONE: process computes COMPLETE first
  ASSERT_EQ(remcsum_process(p, 16, 20, 36, /*nopartial=*/true), PacketError::Ok);
  Bytes out = p.to_bytes();
  Bytes in_out(out.begin() + 16, out.end());
  EXPECT_TRUE(tcp4_valid(in_out));
  ASSERT_EQ(p.ip_summed(), IpSummed::Complete);
  // COMPLETE now covers [ptr, end) of the modified bytes (kernel: postpull to ptr)
  EXPECT_TRUE(ones_eq(fold(complete_of(p)), ref16(out, 16)));
  EXPECT_EQ(remcsum_process(p, 16, 20, 200, true), PacketError::NotInHead);
}

TEST(Packet, EmptyFragmentIgnoredAndLinearizeClears) {
  // found by fuzz/packet_ops_fuzz: a zero-length fragment must not keep the packet non-linear
  Packet p = Packet::from_bytes(Bytes{1, 2});
  EXPECT_EQ(p.add_frag(Buffer::make(Bytes{}), 0, 0), PacketError::Ok);
  EXPECT_TRUE(p.is_linear());
  EXPECT_EQ(p.add_frag(Buffer::make(Bytes{3, 4}), 1, 1), PacketError::Ok);
  p.linearize();
  EXPECT_TRUE(p.is_linear());
  EXPECT_EQ(p.to_bytes(), (Bytes{1, 2, 4}));
}
