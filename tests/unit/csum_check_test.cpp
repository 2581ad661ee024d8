// tools/csum_check on hand-made frames. Expected checksum values are derived by hand in the
// comments (RFC 1071 arithmetic: 16-bit big-endian words, end-around carry, complement).
#include "ofld/tools/csum_check.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace ofld;
using tools::CsumKind;
using tools::Verdict;
using Bytes = std::vector<std::uint8_t>;

namespace {
// Ethernet (dst 02:..:02, src 02:..:01, type 0x0800) + IPv4 10.0.0.1 → 10.0.0.2, DF, TTL 64,
// id 0, given protocol and total length, IPv4 checksum field `ipck`.
Bytes eth_ipv4(std::uint8_t proto, std::uint16_t tot_len, std::uint16_t ipck) {
  return {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00,
          0x45, 0x00, std::uint8_t(tot_len >> 8), std::uint8_t(tot_len), 0x00, 0x00, 0x40, 0x00,
          0x40, proto, std::uint8_t(ipck >> 8), std::uint8_t(ipck),
          10, 0, 0, 1, 10, 0, 0, 2};
}
// TCP 0x1000 → 0x2000, seq 1, ack 1, doff 5, PSH|ACK, window 0x1000, checksum `ck`, urg 0.
void add_tcp(Bytes& b, std::uint16_t ck) {
  const std::uint8_t t[] = {0x10, 0x00, 0x20, 0x00, 0, 0, 0, 1, 0, 0, 0, 1, 0x50, 0x18,
                            0x10, 0x00, std::uint8_t(ck >> 8), std::uint8_t(ck), 0, 0};
  b.insert(b.end(), t, t + sizeof t);
}
std::uint16_t field(const Bytes& b, std::size_t off) { return std::uint16_t(b[off] << 8 | b[off + 1]); }
tools::FrameReport verify(const Bytes& b, std::uint32_t len = 0) {
  return tools::verify_frame(b, wire::LinkType::Ethernet, len ? len : std::uint32_t(b.size()));
}
constexpr std::size_t kIpCk = 14 + 10, kTcpCk = 34 + 16, kUdpCk = 34 + 6;
}  // namespace

// IPv4 header, tot_len 40 (TCP, no payload): words 4500 0028 0000 4000 4006 [0000] 0a00 0001
// 0a00 0002 sum to 0xD931 → checksum ~0xD931 = 0x26CE.
// TCP pseudo-header: 0a00+0001+0a00+0002+0006+0014 = 0x141D (this is the PARTIAL seed, C-12).
// TCP header words: 1000 2000 0000 0001 0000 0001 5018 1000 [0000] 0000 = 0x901A;
// + 0x141D = 0xA437 → checksum 0x5BC8.
TEST(CsumCheck, GoodBadPartialVerdicts) {
  Bytes good = eth_ipv4(6, 40, 0x26CE);
  add_tcp(good, 0x5BC8);
  auto r = verify(good);
  ASSERT_EQ(r.fields.size(), 2u);
  EXPECT_EQ(r.fields[0].kind, CsumKind::Ipv4Header);
  EXPECT_EQ(r.fields[0].verdict, Verdict::Good);
  EXPECT_EQ(r.fields[1].kind, CsumKind::Tcp);
  EXPECT_EQ(r.fields[1].verdict, Verdict::Good);

  Bytes bad = good;
  bad[kTcpCk + 1] ^= 1;
  r = verify(bad);
  EXPECT_EQ(r.fields[1].verdict, Verdict::Bad);
  EXPECT_EQ(r.fields[1].expected, 0x5BC8);

  Bytes partial = good;
  partial[kTcpCk] = 0x14;
  partial[kTcpCk + 1] = 0x1D;  // C-12 seed
  r = verify(partial);
  EXPECT_EQ(r.fields[1].verdict, Verdict::Partial);
  EXPECT_EQ(r.fields[1].seed, 0x141D);

  auto fx = tools::fix_frame(partial, wire::LinkType::Ethernet, std::uint32_t(partial.size()));
  EXPECT_EQ(fx.after.rewritten, 1u);
  EXPECT_EQ(field(partial, kTcpCk), 0x5BC8);
  EXPECT_EQ(fx.after.count(Verdict::Good), 2u);
}

// A1: IPv4 header whose sum with the field zeroed folds to 0xFFFF. Protocol 253 (experimental,
// no L4 parsed), tot_len 20, DF, saddr 10.0.0.1, daddr 47.236.0.1. Words:
// 4500+0014+0000+4000+40FD = 0xC611; + 0A00+0001 = 0xD012; + 2FEC = 0xFFFE; + 0001 = 0xFFFF.
// Checksum = ~0xFFFF = 0x0000 (a full computation never yields 0xFFFF).
TEST(CsumCheck, A1_Ipv4SumFoldingToFfffGivesZeroField) {
  Bytes b = eth_ipv4(253, 20, 0xABCD);
  b[30] = 0x2F; b[31] = 0xEC; b[32] = 0x00; b[33] = 0x01;  // daddr 47.236.0.1
  auto fx = tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()));
  EXPECT_EQ(field(b, kIpCk), 0x0000);  // never 0xFFFF
  ASSERT_EQ(fx.after.fields.size(), 1u);
  EXPECT_EQ(fx.after.fields[0].verdict, Verdict::Good);  // verifier accepts 0x0000
  EXPECT_EQ(fx.after.rewritten, 1u);
}

// A2: TCP whose computed checksum is 0 keeps 0; UDP writes 0xFFFF; UDP/IPv4 0 is "none".
// TCP with 2 payload bytes: pseudo 0x141D + 2 = 0x141F; header 0x901A; total 0xA439;
// payload word 0xFFFF - 0xA439 = 0x5BC6 makes the sum 0xFFFF → checksum 0x0000.
// IPv4 tot_len 42: header sum 0xD931 + 2 = 0xD933 → 0x26CC.
TEST(CsumCheck, A2_TcpZeroStaysZero) {
  Bytes b = eth_ipv4(6, 42, 0x26CC);
  add_tcp(b, 0xDEAD);
  b.push_back(0x5B);
  b.push_back(0xC6);
  auto fx = tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()));
  EXPECT_EQ(fx.before.fields[1].verdict, Verdict::Bad);
  EXPECT_EQ(field(b, kTcpCk), 0x0000);
  EXPECT_EQ(fx.after.fields[1].verdict, Verdict::Good);
}

// UDP 0x1000 → 0x2000, len 10, 2 payload bytes. Pseudo: 0a00+0001+0a00+0002+0011+000A =
// 0x141E; header 1000+2000+000A = 0x300A; total 0x4428; payload 0xFFFF-0x4428 = 0xBBD7 →
// computed 0 → written 0xFFFF (C-14). IPv4 tot_len 30, proto 17: 4500+001E+4000+4011+0A01+0A02
// = 0xD934 → 0x26CB.
TEST(CsumCheck, A2_C14_UdpZeroBecomesFfffAndReceivedZeroIsNone) {
  Bytes b = eth_ipv4(17, 30, 0x26CB);
  const std::uint8_t u[] = {0x10, 0x00, 0x20, 0x00, 0x00, 0x0A, 0x12, 0x34, 0xBB, 0xD7};
  b.insert(b.end(), u, u + sizeof u);
  auto fx = tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()));
  EXPECT_EQ(fx.before.fields[1].verdict, Verdict::Bad);
  EXPECT_EQ(field(b, kUdpCk), 0xFFFF);
  EXPECT_EQ(fx.after.fields[1].verdict, Verdict::Good);
  b[kUdpCk] = b[kUdpCk + 1] = 0;
  auto r = verify(b);
  EXPECT_EQ(r.fields[1].verdict, Verdict::None);
  auto fx2 = tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()));
  EXPECT_EQ(fx2.after.rewritten, 0u);  // "none" kept unless asked
  tools::FixOptions o;
  o.fill_udp4_zero = true;
  tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()), o);
  EXPECT_EQ(field(b, kUdpCk), 0xFFFF);
}

// A7: the old IPv4 check field (garbage 0xABCD, 0x0000, 0xFFFF) does not influence the result.
TEST(CsumCheck, A7_StaleIpv4CheckIgnored) {
  for (std::uint16_t stale : {0xABCD, 0x0000, 0xFFFF, 0x26CE}) {
    Bytes b = eth_ipv4(6, 40, stale);
    add_tcp(b, 0x5BC8);
    tools::fix_frame(b, wire::LinkType::Ethernet, std::uint32_t(b.size()));
    EXPECT_EQ(field(b, kIpCk), 0x26CE) << std::hex << stale;
  }
}

// A8: 60-byte frames, TCP/IPv4 with 0..5 payload bytes and non-zero padding (0xAA). For n = 0
// the values are the ones derived above (0x26CE / 0x5BC8); the padding must not enter the sum.
TEST(CsumCheck, A8_EthernetPaddingNotSummed) {
  Bytes b = eth_ipv4(6, 40, 0x26CE);
  add_tcp(b, 0x5BC8);
  b.resize(60, 0xAA);
  auto r = verify(b);
  ASSERT_EQ(r.fields.size(), 2u);
  EXPECT_EQ(r.fields[1].verdict, Verdict::Good);
  EXPECT_EQ(r.fields[1].covered_len, 20u);
  Bytes broken = b;
  broken[kTcpCk] = 0;
  broken[kTcpCk + 1] = 0;
  tools::fix_frame(broken, wire::LinkType::Ethernet, 60);
  EXPECT_EQ(broken, b);  // rewritten to 0x5BC8, padding untouched
  // n = 1..5 payload bytes 0x01..: each payload word changes the sum; verdict after fix must be
  // good and the padding bytes unchanged.
  for (int n = 1; n <= 5; ++n) {
    Bytes f = eth_ipv4(6, std::uint16_t(40 + n), 0);
    add_tcp(f, 0);
    for (int i = 0; i < n; ++i) f.push_back(std::uint8_t(i + 1));
    f.resize(60, 0xAA);
    auto fx = tools::fix_frame(f, wire::LinkType::Ethernet, 60);
    EXPECT_EQ(fx.after.count(Verdict::Good), 2u) << n;
    for (std::size_t i = 54 + n; i < 60; ++i) EXPECT_EQ(f[i], 0xAA);
    EXPECT_EQ(fx.after.fields[1].covered_len, std::uint32_t(20 + n));
  }
}

TEST(CsumCheck, TruncatedAndFragmentAreSkippedAndNeverFixed) {
  Bytes b = eth_ipv4(6, 40, 0x26CE);
  add_tcp(b, 0x1111);
  auto r = verify(b, std::uint32_t(b.size() + 100));  // original length larger
  EXPECT_EQ(r.fields[0].verdict, Verdict::Good);
  // The datagram itself is complete here, so TCP stays verifiable (bad)...
  Bytes cut(b.begin(), b.end() - 4);  // ...but a capture cut inside the TCP header is not.
  r = verify(cut, std::uint32_t(b.size()));
  for (const auto& f : r.fields) {
    if (f.kind == CsumKind::Tcp) {
      EXPECT_EQ(f.verdict, Verdict::Skipped);
    }
  }
  Bytes frag = eth_ipv4(17, 30, 0);
  frag[20] = 0x20;  // MF
  const std::uint8_t u[] = {0x10, 0x00, 0x20, 0x00, 0x00, 0x0A, 0x12, 0x34, 0xBB, 0xD7};
  frag.insert(frag.end(), u, u + sizeof u);
  Bytes orig = frag;
  auto fx = tools::fix_frame(frag, wire::LinkType::Ethernet, std::uint32_t(frag.size()));
  EXPECT_EQ(fx.before.fields.back().verdict, Verdict::Skipped);
  EXPECT_EQ(fx.before.fields.back().reason, tools::SkipReason::Fragment);
  EXPECT_EQ(frag, orig);  // never touched
}
