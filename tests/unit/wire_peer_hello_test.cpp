// Issue 15: the peer session codec (HELLO / HELLO-ACK, docs/peer-protocol.md). Golden bytes
// written from the documented layout; the prefixes are checked against what the kernel's
// receivers drop: VXLAN I flag clear (RFC 7348 §5, vxlan_rcv "VNI flag always required"),
// GUE C bit (draft-ietf-intarea-gue §3.2.1, gue_udp_recv → gue_control_message), GRE
// protocol type of an EtherType no kernel handler registers.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "ofld/core/csum.hpp"
#include "ofld/wire/peer_hello.hpp"
#include "ofld/wire/tunnel.hpp"
#include "wire_test_util.hpp"

using namespace ofld::wire;
using wire_test::Bytes;
using wire_test::hex;

namespace {
peer::Msg sample() {
  peer::Msg m;
  m.type = peer::MsgType::HelloAck;
  m.epoch = 0x01020304;
  m.peer_epoch = 0xa0b0c0d0;
  m.seq = 7;
  m.caps = peer::kCapIntegrity | peer::kCapRcoRx;
  m.gso_size = 65535;
  m.mtu = 1450;
  return m;
}
Bytes encode(const peer::Msg& m, peer::Encap e) {
  Bytes b(peer::kMaxMsgLen);
  b.resize(peer::encode(m, e, b));
  return b;
}
}  // namespace

TEST(WirePeerHello, Issue15_GoldenVxlan) {
  const Bytes b = encode(sample(), peer::Encap::Vxlan);
  EXPECT_EQ(b, hex("00 00 00 00 00 00 00 00"            // VXLAN word0/word1, I flag clear
                   "6f 66 6c 64 01 02 00 1c"            // "ofld", v1, ACK, length 28
                   "01 02 03 04 a0 b0 c0 d0 00 00 00 07"  // epoch, peer_epoch, seq
                   "00 00 00 03 ff ff 05 aa"));         // caps, gso_size, mtu
  // RFC 7348 §5: the I flag must be set for a valid VNI; vxlan_rcv drops a datagram without it.
  EXPECT_EQ(b[0] & 0x08, 0);
  auto p = peer::parse(b, peer::Encap::Vxlan);
  ASSERT_EQ(p.verdict, peer::Verdict::Ok);
  EXPECT_EQ(p.msg, sample());
}

TEST(WirePeerHello, Issue15_GoldenGueAndGre) {
  const Bytes g = encode(sample(), peer::Encap::Gue);
  ASSERT_EQ(g.size(), 4 + peer::kBodyLen);
  // GUE variant 0: version bits 00, C bit (0x20) set, hlen 0; ctype 0x6f; flags 0.
  EXPECT_EQ(Bytes(g.begin(), g.begin() + 4), hex("20 6f 00 00"));
  EXPECT_EQ(peer::parse(g, peer::Encap::Gue).msg, sample());
  const Bytes r = encode(sample(), peer::Encap::Gre);
  // GRE (RFC 2784): no C/K/S bits, version 0, protocol type 0x88b5.
  EXPECT_EQ(Bytes(r.begin(), r.begin() + 4), hex("00 00 88 b5"));
  EXPECT_EQ(peer::parse(r, peer::Encap::Gre).msg, sample());
  // A prefix of one encapsulation is not a message of another.
  EXPECT_EQ(peer::parse(g, peer::Encap::Vxlan).verdict, peer::Verdict::NotControl);
  EXPECT_EQ(peer::parse(r, peer::Encap::Gue).verdict, peer::Verdict::NotControl);
}

TEST(WirePeerHello, Issue15_GreCarriesTheTunnelsChecksumAndKey) {
  // RFC 2784/2890: C (0x80) and K (0x20) bits, checksum + reserved1, then the key (42).
  Bytes b(peer::kMaxMsgLen);
  b.resize(peer::encode(sample(), peer::Encap::Gre, b, peer::GreOptions{true, 42}));
  ASSERT_EQ(b.size(), 12 + peer::kBodyLen);
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 4), hex("a0 00 88 b5"));
  EXPECT_EQ(Bytes(b.begin() + 6, b.begin() + 12), hex("00 00 00 00 00 2a"));
  // RFC 2784 §2.5: the checksum covers the GRE header and payload; the whole sums to 0.
  EXPECT_EQ(ofld::csum::ip_compute_csum(b.data(), b.size()), 0);
  auto p = peer::parse(b, peer::Encap::Gre);
  ASSERT_EQ(p.verdict, peer::Verdict::Ok);
  EXPECT_EQ(p.msg, sample());
  Bytes bad = b;
  bad[20] ^= 1;
  EXPECT_EQ(peer::parse(bad, peer::Encap::Gre).verdict, peer::Verdict::BadChecksum);
  // Key only; sequence (S) or routing (R) bits: not ours.
  b.assign(peer::kMaxMsgLen, 0);
  b.resize(peer::encode(sample(), peer::Encap::Gre, b, peer::GreOptions{false, 7}));
  EXPECT_EQ(Bytes(b.begin(), b.begin() + 8), hex("20 00 88 b5 00 00 00 07"));
  EXPECT_EQ(peer::parse(b, peer::Encap::Gre).verdict, peer::Verdict::Ok);
  b[0] |= 0x10;
  EXPECT_EQ(peer::parse(b, peer::Encap::Gre).verdict, peer::Verdict::NotControl);
}

TEST(WirePeerHello, Issue15_DataDatagramsAreNotControl) {
  // A VXLAN data header (I flag, VNI 42) and GUE/GRE data headers carrying IPv4.
  const Bytes vx = hex("08 00 00 00 00 00 2a 00 6f 66 6c 64 01 01 00 1c");
  EXPECT_FALSE(peer::maybe_control(vx, peer::Encap::Vxlan));
  EXPECT_EQ(peer::parse(vx, peer::Encap::Vxlan).verdict, peer::Verdict::NotControl);
  const Bytes gue = hex("00 04 00 00 45 00 00 14");
  EXPECT_FALSE(peer::maybe_control(gue, peer::Encap::Gue));
  EXPECT_EQ(peer::parse(gue, peer::Encap::Gue).verdict, peer::Verdict::NotControl);
  const Bytes gre = hex("00 00 08 00 45 00 00 14");
  EXPECT_FALSE(peer::maybe_control(gre, peer::Encap::Gre));
  EXPECT_EQ(peer::parse(gre, peer::Encap::Gre).verdict, peer::Verdict::NotControl);
  // Another GUE control message (other ctype) is not ours either.
  Bytes other = encode(sample(), peer::Encap::Gue);
  other[1] = 0x01;
  EXPECT_EQ(peer::parse(other, peer::Encap::Gue).verdict, peer::Verdict::NotControl);
}

TEST(WirePeerHello, Issue15_MalformedNamed) {
  const Bytes good = encode(sample(), peer::Encap::Vxlan);
  for (std::size_t n = 12; n < good.size(); ++n) {  // prefix + magic present, body cut
    Bytes cut(good.begin(), good.begin() + long(n));
    EXPECT_EQ(peer::parse(cut, peer::Encap::Vxlan).verdict, peer::Verdict::Truncated) << n;
  }
  for (std::size_t n = 0; n < 12; ++n) {  // not even the magic: not ours
    Bytes cut(good.begin(), good.begin() + long(n));
    EXPECT_EQ(peer::parse(cut, peer::Encap::Vxlan).verdict, peer::Verdict::NotControl) << n;
  }
  Bytes b = good;
  b[8 + 4] = 2;
  EXPECT_EQ(peer::parse(b, peer::Encap::Vxlan).verdict, peer::Verdict::BadVersion);
  b = good;
  b[8 + 5] = 3;
  EXPECT_EQ(peer::parse(b, peer::Encap::Vxlan).verdict, peer::Verdict::BadType);
  b = good;
  b[8 + 7] = 27;
  EXPECT_EQ(peer::parse(b, peer::Encap::Vxlan).verdict, peer::Verdict::BadLength);
  b = good;
  b[8 + 7] = 29;  // claims one byte more than present
  EXPECT_EQ(peer::parse(b, peer::Encap::Vxlan).verdict, peer::Verdict::Truncated);
  b = good;
  b[8 + 8] = b[8 + 9] = b[8 + 10] = b[8 + 11] = 0;
  EXPECT_EQ(peer::parse(b, peer::Encap::Vxlan).verdict, peer::Verdict::ZeroEpoch);
}

TEST(WirePeerHello, Issue15_LaterVersionsExtendTheBody) {
  // A longer body (length field > 28) parses; the extra bytes are ignored. Reserved cap bits
  // are ignored on receive.
  Bytes b = encode(sample(), peer::Encap::Gre);
  b[4 + 7] = 32;
  b.insert(b.end(), {1, 2, 3, 4});
  b[4 + 20] = 0xff;
  auto p = peer::parse(b, peer::Encap::Gre);
  ASSERT_EQ(p.verdict, peer::Verdict::Ok);
  EXPECT_EQ(p.msg.caps, peer::kCapsKnown);
}

TEST(WirePeerHello, Issue15_EncodeRefusesZeroEpochAndShortBuffer) {
  peer::Msg m = sample();
  std::array<std::uint8_t, peer::kMaxMsgLen> out{};
  EXPECT_EQ(peer::encode(m, peer::Encap::Vxlan, std::span<std::uint8_t>(out.data(), 35)), 0u);
  EXPECT_EQ(peer::encode(m, peer::Encap::Gre, std::span<std::uint8_t>(out.data(), 39), {true, 1}), 0u);
  EXPECT_EQ(peer::encode(m, peer::Encap::Gre, out, {true, 1}), 40u);
  EXPECT_EQ(peer::encode(m, peer::Encap::Vxlan, out), 36u);
  m.epoch = 0;
  EXPECT_EQ(peer::encode(m, peer::Encap::Vxlan, out), 0u);
}
