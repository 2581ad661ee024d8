// Issue 15: per-remote peer sessions (tunnel::PeerTable). The rule under test is spec I-6/I-7
// carried over to the tunnel: a capability counts only when the peer advertised it at session
// setup; a peer that did not (or never answered) gets full checksums.
#include <gtest/gtest.h>

#include <vector>

#include "ofld/tunnel/peer.hpp"

using namespace ofld::tunnel;
namespace pw = ofld::wire::peer;

namespace {
constexpr std::uint64_t kS = 1'000'000'000ull;
const IpAddr kA = *IpAddr::parse("10.0.0.1");
const IpAddr kB = *IpAddr::parse("10.0.0.2");

PeerOptions opts(bool integrity, std::uint32_t epoch) {
  PeerOptions o;
  o.integrity = integrity;
  o.epoch = epoch;
  o.retry_ns = 1 * kS;
  o.refresh_ns = 8 * kS;
  o.gso_size = 65535;
  o.mtu = 1450;
  return o;
}

/// Deliver every message in `msgs` addressed to `to_addr` to `to` as coming from `from`.
void deliver(std::vector<PeerTable::Out>& msgs, PeerTable& to, const IpAddr& from, std::uint64_t now) {
  for (auto& m : msgs) ASSERT_TRUE(to.receive(m.bytes, from, now));
  msgs.clear();
}

/// One exchange: a's due HELLOs to b, b's ACKs back.
void exchange(PeerTable& a, PeerTable& b, std::uint64_t now) {
  std::vector<PeerTable::Out> m;
  a.due(now, m);
  deliver(m, b, kA, now);
  b.take_replies(m);
  deliver(m, a, kB, now + 1000);
}
}  // namespace

TEST(TunnelPeer, Issue15_I6_BothWithIntegrityElide) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  EXPECT_FALSE(a.elide(kB, 0));  // before any answer: full checksums (I-7)
  exchange(a, b, 1 * kS);
  EXPECT_TRUE(a.elide(kB, 1 * kS + 2000));
  EXPECT_TRUE(b.elide(kA, 1 * kS + 2000));  // b learned a's capability from its HELLO
  const auto i = a.session(kB, 1 * kS + 2000);
  EXPECT_EQ(i.state, SessionState::Established);
  EXPECT_EQ(i.peer_epoch, 0x2222u);
  EXPECT_EQ(i.caps, pw::kCapIntegrity);
  EXPECT_EQ(i.rtt_ns, 1000u);
  EXPECT_EQ(i.mtu, 1450);
  EXPECT_EQ(i.gso_size, 65535);
}

TEST(TunnelPeer, Issue15_I7_PeerWithoutCapabilityGetsFullChecksums) {
  PeerTable a(opts(true, 0x1111)), b(opts(false, 0x2222));
  a.add(kB);
  b.add(kA);
  exchange(a, b, 1 * kS);
  EXPECT_EQ(a.session(kB, 1 * kS + 2000).state, SessionState::Established);
  EXPECT_FALSE(a.elide(kB, 1 * kS + 2000));
  EXPECT_FALSE(b.elide(kA, 1 * kS + 2000));  // integrity off locally: never
}

TEST(TunnelPeer, Issue15_SilentPeerHasNoCapabilitiesAndBacksOff) {
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  std::vector<std::uint64_t> sent_at;
  for (std::uint64_t t = 0; t <= 40 * kS; t += kS / 10) {
    std::vector<PeerTable::Out> m;
    a.due(t, m);
    if (!m.empty()) sent_at.push_back(t);
  }
  // retry 1 s, doubling, capped at refresh (8 s): 0, 1, 3, 7, 15, 23, 31, 39
  const std::vector<std::uint64_t> want = {0, 1 * kS, 3 * kS, 7 * kS, 15 * kS, 23 * kS, 31 * kS, 39 * kS};
  EXPECT_EQ(sent_at, want);
  EXPECT_EQ(a.session(kB, 40 * kS).state, SessionState::Silent);
  EXPECT_FALSE(a.elide(kB, 40 * kS));
}

TEST(TunnelPeer, Issue15_RestartWithoutCapabilityDowngradesAtOnce) {
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  {
    PeerTable b(opts(true, 0x2222));
    b.add(kA);
    exchange(a, b, 1 * kS);
    ASSERT_TRUE(a.elide(kB, 1 * kS + 2000));
  }
  // b restarts with a new epoch and without integrity; its first HELLO reaches a.
  PeerTable b2(opts(false, 0x3333));
  b2.add(kA);
  std::vector<PeerTable::Out> m;
  b2.due(2 * kS, m);
  deliver(m, a, kB, 2 * kS);
  EXPECT_FALSE(a.elide(kB, 2 * kS));
  const auto i = a.session(kB, 2 * kS);
  EXPECT_EQ(i.peer_epoch, 0x3333u);
  EXPECT_EQ(i.epoch_changes, 1u);
  EXPECT_EQ(i.downgrades, 1u);
  // a answered, and (b2 did not know a's epoch) its next HELLO is due at once.
  a.take_replies(m);
  ASSERT_EQ(m.size(), 1u);
  m.clear();
  a.due(2 * kS, m);
  EXPECT_EQ(m.size(), 1u);
}

TEST(TunnelPeer, Issue15_RestartNotHeardIsCaughtByRefresh) {
  // b restarts without integrity and does not send a HELLO of its own (e.g. a learned
  // remote): a's refresh HELLO gets an ACK of the new epoch — downgraded within one refresh.
  PeerTable a(opts(true, 0x1111));
  a.add(kB);
  {
    PeerTable b(opts(true, 0x2222));
    b.add(kA);
    exchange(a, b, 1 * kS);
  }
  PeerTable b2(opts(false, 0x4444));
  b2.add(kA);
  exchange(a, b2, 9 * kS);  // the refresh is due 8 s after the first HELLO
  EXPECT_FALSE(a.elide(kB, 9 * kS + 2000));
  EXPECT_EQ(a.session(kB, 9 * kS + 2000).peer_epoch, 0x4444u);
}

TEST(TunnelPeer, Issue15_StaleAnswerStopsElision) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  exchange(a, b, 1 * kS);
  ASSERT_TRUE(a.elide(kB, 2 * kS));
  // fresh = 3 × refresh + retry = 25 s; no answer since 1 s.
  EXPECT_TRUE(a.elide(kB, 26 * kS));
  EXPECT_FALSE(a.elide(kB, 26 * kS + 1001));
  EXPECT_EQ(a.session(kB, 27 * kS).state, SessionState::Stale);
  EXPECT_EQ(a.session(kB, 27 * kS).downgrades, 1u);
}

TEST(TunnelPeer, Issue15_MalformedAndUnknownCountedAndIgnored) {
  PeerTable a(opts(true, 0x1111)), b(opts(true, 0x2222));
  a.add(kB);
  b.add(kA);
  std::vector<PeerTable::Out> m;
  b.due(1 * kS, m);
  ASSERT_EQ(m.size(), 1u);
  auto bytes = m[0].bytes;
  m.clear();
  // from an address that is no configured remote
  EXPECT_TRUE(a.receive(bytes, *IpAddr::parse("10.0.0.99"), 1 * kS));
  EXPECT_EQ(a.unknown_source(), 1u);
  // malformed: bad version
  auto bad = bytes;
  bad[8 + 4] = 9;
  EXPECT_TRUE(a.receive(bad, kB, 1 * kS));
  // truncated
  bad = bytes;
  bad.resize(20);
  EXPECT_TRUE(a.receive(bad, kB, 1 * kS));
  EXPECT_EQ(a.malformed_total(), 2u);
  a.take_replies(m);
  EXPECT_TRUE(m.empty());  // nothing answered
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  // a data datagram is not consumed
  const std::vector<std::uint8_t> data = {0x08, 0, 0, 0, 0, 0, 42, 0, 1, 2, 3, 4};
  EXPECT_FALSE(a.receive(data, kB, 1 * kS));
  // an ACK for another epoch (not an answer to our HELLO) does not establish anything
  PeerTable c(opts(true, 0x5555));
  c.add(kB);
  std::vector<PeerTable::Out> hm;
  c.due(1 * kS, hm);
  ASSERT_TRUE(b.receive(hm[0].bytes, kA, 1 * kS));
  b.take_replies(m);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_TRUE(a.receive(m[0].bytes, kB, 1 * kS));  // ACK of c's epoch, delivered to a
  EXPECT_FALSE(a.elide(kB, 1 * kS));
  EXPECT_EQ(a.to_json(1 * kS)["stale_ack"], 1u);
}
